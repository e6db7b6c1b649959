//! The step: broad phase, layer filter, exact test, and the events between
//! consecutive steps.

use super::CollisionWorld;
use crate::key::Key;
use crate::shape::Contact;
use core::cmp::Ordering;

/// Two bodies that touch, `a < b`, and how: the [`Contact`]'s normal points
/// from `a` towards `b`.
///
/// ```
/// use quadrat::{Aabb, CollisionWorld, ContactPair, Shape, Vec2};
/// let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
/// let ball = Shape::Circle { radius: 1.0 };
/// let a = world.add(ball, [10.0, 10.0], 1, 1, ());
/// let b = world.add(ball, [10.0, 11.5], 1, 1, ());
/// let pair: ContactPair = world.step().contacts[0];
/// assert_eq!((pair.a, pair.b), (a, b));
/// assert_eq!(pair.contact.normal, Vec2::new(0.0, 1.0));
/// assert_eq!(pair.contact.depth, 0.5);
/// assert_eq!(pair.keys(), (a, b));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ContactPair {
    /// The smaller key.
    pub a: Key,
    /// The larger key.
    pub b: Key,
    /// Normal from `a` towards `b`, depth, and a point in the overlap.
    pub contact: Contact,
}

impl ContactPair {
    /// `(a, b)`.
    #[inline]
    #[must_use]
    pub fn keys(&self) -> (Key, Key) {
        (self.a, self.b)
    }
}

/// What a [`step`](CollisionWorld::step) found, borrowed from the world:
/// every list sorted by key pair, each pair with `a < b`.
///
/// ```
/// use quadrat::{Aabb, CollisionWorld, Shape};
/// let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
/// let box_ = Shape::Aabb { half_extents: [1.0, 1.0].into() };
/// let a = world.add(box_, [10.0, 10.0], 1, 1, ());
/// let b = world.add(box_, [12.0, 10.0], 1, 1, ()); // edges touch
/// let events = world.step();
/// assert_eq!(events.contacts.len(), 1);
/// assert_eq!(events.began.len(), 1);
/// assert!(events.ended.is_empty());
/// let events = world.step(); // nothing changed: still touching, nothing new
/// assert_eq!((events.contacts.len(), events.began.len(), events.ended.len()), (1, 0, 0));
/// world.remove(b);
/// assert_eq!(world.step().ended, &[(a, b)]);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Events<'a> {
    /// Every pair of interacting bodies that touch (depth 0 included).
    pub contacts: &'a [ContactPair],
    /// The pairs of `contacts` that did not touch at the previous step
    /// (or did not exist then).
    pub began: &'a [ContactPair],
    /// The pairs that touched at the previous step and no longer do: moved
    /// apart, reshaped, filtered out by a layer change, or one of the two
    /// bodies removed (its key may be stale).
    pub ended: &'a [(Key, Key)],
    /// How many pairs the broad phase reported: bodies whose boxes touch.
    pub candidates: usize,
    /// How many of those passed the layer filter and got the exact test.
    pub exact_tests: usize,
}

/// The last step's results, and the buffers the next one reuses.
#[derive(Clone, Debug, Default)]
pub(crate) struct StepBuffers {
    contacts: Vec<ContactPair>,
    previous: Vec<ContactPair>,
    began: Vec<ContactPair>,
    ended: Vec<(Key, Key)>,
    /// The pairs that passed the broad phase and the layer filter, and the
    /// scratch space of their sort: a buffer and a counter per slot.
    pairs: Vec<(Key, Key)>,
    sorted: Vec<(Key, Key)>,
    counts: Vec<u32>,
    candidates: usize,
    exact_tests: usize,
}

#[inline]
fn by_keys(x: &ContactPair, y: &ContactPair) -> Ordering {
    x.a.cmp(&y.a).then(x.b.cmp(&y.b))
}

/// Sorts `pairs` (with `a < b` each) by key pair, in time linear in their
/// number plus `slots` (one more than the largest key index): a counting
/// sort by `a`'s index into `scratch`, then each run of equal `a` (short) by
/// `b`'s index. Within one step every key is live and has its own index, so
/// indices order the keys as the keys do.
fn sort_pairs(
    pairs: &mut Vec<(Key, Key)>,
    scratch: &mut Vec<(Key, Key)>,
    counts: &mut Vec<u32>,
    slots: usize,
) {
    if pairs.len() < 64 {
        pairs.sort_unstable();
        return;
    }
    counts.clear();
    counts.resize(slots + 1, 0);
    for p in pairs.iter() {
        counts[p.0.index() as usize + 1] += 1;
    }
    let mut sum = 0;
    for c in counts.iter_mut() {
        sum += *c;
        *c = sum;
    }
    // `counts[i]` is now where the run of `a.index() == i` starts.
    scratch.clear();
    scratch.extend_from_slice(pairs);
    for p in pairs.iter() {
        let at = &mut counts[p.0.index() as usize];
        scratch[*at as usize] = *p;
        *at += 1;
    }
    // `counts[i]` is now where that run ends, and the next one starts.
    let mut start = 0;
    for &end in &counts[..slots] {
        let end = end as usize;
        if end - start > 1 {
            scratch[start..end].sort_unstable_by_key(|p| p.1.index());
        }
        start = end;
    }
    core::mem::swap(pairs, scratch);
}

impl<T> CollisionWorld<T> {
    /// Finds every touching pair of interacting bodies, and what changed
    /// since the previous step.
    ///
    /// 1. Broad phase: the tree reports each pair of bodies whose boxes
    ///    intersect, once.
    /// 2. Filter: a pair whose layers do not interact (see
    ///    [`CollisionWorld`]) is dropped right there, by two array reads.
    /// 3. The pairs left are sorted by key pair (a counting sort, linear
    ///    in their number).
    /// 4. Exact test: [`Shape::contact`](crate::Shape::contact) on each, in
    ///    that order, which gives the contacts sorted.
    /// 5. The contacts are compared with the previous step's, giving the
    ///    pairs that began and ended.
    ///
    /// The returned [`Events`] borrow the world mutably; to look bodies up
    /// while going through them, call [`events`](CollisionWorld::events)
    /// after the step, which borrows it shared (the results stay readable
    /// there until the next step). Allocates nothing once its buffers have
    /// grown to the working size.
    ///
    /// ```
    /// use quadrat::{Aabb, CollisionWorld, Shape};
    /// const PLAYER: u32 = 1;
    /// const WALL: u32 = 2;
    /// let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let wall = Shape::Aabb { half_extents: [1.0, 10.0].into() };
    /// let w1 = world.add(wall, [10.0, 10.0], WALL, PLAYER, "wall");
    /// let _w2 = world.add(wall, [11.0, 10.0], WALL, PLAYER, "wall"); // walls ignore walls
    /// let p = world.add(Shape::Circle { radius: 1.0 }, [8.5, 10.0], PLAYER, WALL, "player");
    /// let events = world.step();
    /// assert_eq!(events.contacts.len(), 1);
    /// assert_eq!(events.contacts[0].keys(), (w1, p));
    /// // The normal points from the wall (the smaller key) to the player.
    /// assert_eq!(events.contacts[0].contact.normal, quadrat::Vec2::new(-1.0, 0.0));
    /// // Two pairs of boxes touch; the layers let only wall against player
    /// // through to the exact test.
    /// assert_eq!((events.candidates, events.exact_tests), (2, 1));
    ///
    /// // Reading the world while going through the events:
    /// world.step();
    /// for pair in world.events().contacts {
    ///     assert_eq!((world[pair.a], world[pair.b]), ("wall", "player"));
    /// }
    /// ```
    pub fn step(&mut self) -> Events<'_> {
        let s = &mut self.steps;
        core::mem::swap(&mut s.contacts, &mut s.previous);
        s.contacts.clear();
        s.began.clear();
        s.ended.clear();

        // Broad phase and filter: the candidate pairs, sorted, so that the
        // exact tests read the bodies in order and give sorted contacts.
        let (placed, filters, pairs) = (&self.placed, &self.filters, &mut s.pairs);
        pairs.clear();
        let mut candidates = 0;
        self.tree.for_each_pair(|a, b| {
            candidates += 1;
            if filters[a.index() as usize].interacts(filters[b.index() as usize]) {
                pairs.push((a, b));
            }
        });
        sort_pairs(pairs, &mut s.sorted, &mut s.counts, placed.len());
        s.candidates = candidates;
        s.exact_tests = pairs.len();

        // Exact tests.
        for &(a, b) in pairs.iter() {
            let (sa, pa) = &placed[a.index() as usize];
            let (sb, pb) = &placed[b.index() as usize];
            if let Some(contact) = sa.contact(*pa, sb, *pb) {
                s.contacts.push(ContactPair { a, b, contact });
            }
        }

        // Merge the two sorted lists.
        let (now, then) = (&s.contacts, &s.previous);
        let (mut i, mut j) = (0, 0);
        while i < now.len() || j < then.len() {
            let order = match (now.get(i), then.get(j)) {
                (Some(x), Some(y)) => by_keys(x, y),
                (Some(_), None) => Ordering::Less,
                _ => Ordering::Greater,
            };
            match order {
                Ordering::Less => {
                    s.began.push(now[i]);
                    i += 1;
                }
                Ordering::Greater => {
                    s.ended.push(then[j].keys());
                    j += 1;
                }
                Ordering::Equal => {
                    i += 1;
                    j += 1;
                }
            }
        }
        self.events()
    }

    /// The results of the last [`step`](CollisionWorld::step) (all empty
    /// before the first). Bodies moved, added or removed since are not
    /// reflected until the next step.
    ///
    /// ```
    /// use quadrat::{Aabb, CollisionWorld, Shape};
    /// let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// world.add(Shape::Point, [1.0, 1.0], 1, 1, ());
    /// world.add(Shape::Point, [1.0, 1.0], 1, 1, ());
    /// assert!(world.events().contacts.is_empty());
    /// world.step();
    /// assert_eq!(world.events().contacts.len(), 1);
    /// ```
    #[must_use]
    pub fn events(&self) -> Events<'_> {
        let s = &self.steps;
        Events {
            contacts: &s.contacts,
            began: &s.began,
            ended: &s.ended,
            candidates: s.candidates,
            exact_tests: s.exact_tests,
        }
    }
}
