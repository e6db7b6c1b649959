//! The step: broad phase, layer filter, exact test, and the events between
//! consecutive steps.

use super::{CollisionWorld, Filter};
use crate::geom::Aabb;
use crate::key::Key;
use crate::shape::Contact;
use crate::tree::{NodeFilter, QuadTree, sort_pairs};
use core::cmp::Ordering;

/// The step takes the full pass over the tree when more than one body in
/// `FULL_PASS` changed since the last step; otherwise it asks the tree
/// about each changed body. A query costs several times a body's share of
/// the full pass, so past this share the full pass is the cheaper one.
const FULL_PASS: usize = 8;

/// Two bodies that touch, `a < b`, and how: the [`Contact`]'s normal points
/// from `a` towards `b`.
///
/// ```
/// use quadrat::{Aabb, CollisionWorld, ContactPair, Filter, Shape, Vec2};
/// let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
/// let ball = Shape::Circle { radius: 1.0 };
/// let a = world.add(ball, [10.0, 10.0], Filter::ALL, ());
/// let b = world.add(ball, [10.0, 11.5], Filter::ALL, ());
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
/// use quadrat::{Aabb, CollisionWorld, Filter, Shape};
/// let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
/// let box_ = Shape::Aabb { half_extents: [1.0, 1.0].into() };
/// let a = world.add(box_, [10.0, 10.0], Filter::ALL, ());
/// let b = world.add(box_, [12.0, 10.0], Filter::ALL, ()); // edges touch
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
    /// How many pairs the broad phase examined at this step: pairs of
    /// bodies whose boxes touch, at least one of which changed since the
    /// last step (or every such pair not skipped by the layer unions, when
    /// the step took the full pass). Pairs of two unchanged bodies are
    /// carried over and not counted.
    pub candidates: usize,
    /// How many of those passed the layer filter and got the exact test.
    pub exact_tests: usize,
    /// How many slots had changed since the last step: a body added,
    /// moved, reshaped, re-layered or removed marks its slot once, so a
    /// body removed and another added into the slot it freed count as
    /// one. After [`clear`](CollisionWorld::clear), the number of bodies
    /// the world holds at this step (the bodies the clear removed are not
    /// counted).
    pub changed: usize,
    /// `true` when the step took the full pass over the tree rather than
    /// one query per changed body (see [`step`](CollisionWorld::step)).
    pub full_pass: bool,
}

/// The last step's results, and the buffers the next one reuses.
#[derive(Debug, Default)]
pub(crate) struct StepBuffers {
    pub(crate) contacts: Vec<ContactPair>,
    previous: Vec<ContactPair>,
    pub(crate) began: Vec<ContactPair>,
    pub(crate) ended: Vec<(Key, Key)>,
    /// The pairs that passed the broad phase and the layer filter, and the
    /// scratch space of their sort: a buffer and a counter per slot.
    pairs: Vec<(Key, Key)>,
    sorted: Vec<(Key, Key)>,
    counts: Vec<u32>,
    /// The incremental step's scratch: the exact tests' contacts, and the
    /// previous contacts that involve a changed body.
    fresh: Vec<ContactPair>,
    dropped: Vec<ContactPair>,
    /// The full pass's scratch: each node's layer unions.
    unions: Vec<NodeFilter>,
    /// The incremental step's scratch: the changed bodies stored in one
    /// node (slot, key, box), and the boxes that touch their union.
    group: Vec<(u32, Key, Aabb)>,
    /// The changed slots as `node << 32 | slot`, sorted.
    order: Vec<u64>,
    found: Vec<(Key, Aabb)>,
    /// Positions in `found` of the boxes that touch one changed body's.
    hits: Vec<u32>,
    pub(crate) candidates: usize,
    pub(crate) exact_tests: usize,
    pub(crate) changed: usize,
    pub(crate) full_pass: bool,
}

impl Clone for StepBuffers {
    /// The last step's events and figures, without the scratch (as
    /// [`shrink_to_fit`](StepBuffers::shrink_to_fit) leaves them). Every
    /// field is named, as there.
    fn clone(&self) -> StepBuffers {
        let StepBuffers {
            contacts,
            previous: _,
            began,
            ended,
            pairs: _,
            sorted: _,
            counts: _,
            fresh: _,
            dropped: _,
            unions: _,
            group: _,
            order: _,
            found: _,
            hits: _,
            candidates,
            exact_tests,
            changed,
            full_pass,
        } = self;
        StepBuffers {
            contacts: contacts.clone(),
            began: began.clone(),
            ended: ended.clone(),
            candidates: *candidates,
            exact_tests: *exact_tests,
            changed: *changed,
            full_pass: *full_pass,
            ..StepBuffers::default()
        }
    }
}

impl StepBuffers {
    /// Keeps the last step's events, with no room to spare, and frees the
    /// scratch: every step clears each scratch buffer before it fills it.
    /// Every field is named, so a field added later must be sorted into
    /// one kind or the other here.
    pub(crate) fn shrink_to_fit(&mut self) {
        let StepBuffers {
            contacts,
            previous,
            began,
            ended,
            pairs,
            sorted,
            counts,
            fresh,
            dropped,
            unions,
            group,
            order,
            found,
            hits,
            candidates: _,
            exact_tests: _,
            changed: _,
            full_pass: _,
        } = self;
        contacts.shrink_to_fit();
        began.shrink_to_fit();
        ended.shrink_to_fit();
        *previous = Vec::new();
        *pairs = Vec::new();
        *sorted = Vec::new();
        *counts = Vec::new();
        *fresh = Vec::new();
        *dropped = Vec::new();
        *unions = Vec::new();
        *group = Vec::new();
        *order = Vec::new();
        *found = Vec::new();
        *hits = Vec::new();
    }
}

#[inline]
fn by_keys(x: &ContactPair, y: &ContactPair) -> Ordering {
    x.a.cmp(&y.a).then(x.b.cmp(&y.b))
}

/// The incremental step's questions: a group of changed bodies asks the
/// tree for the boxes that touch the union of theirs, and each body is
/// tested against those boxes, keeping the pairs that pass the layer rule.
struct Meet<'a, T> {
    tree: &'a QuadTree<T>,
    filters: &'a [Filter],
    marked: &'a [bool],
    pairs: &'a mut Vec<(Key, Key)>,
    /// The boxes that touch the group's union.
    found: &'a mut Vec<(Key, Aabb)>,
    /// Positions in `found` of those that touch one body's.
    hits: &'a mut Vec<u32>,
    /// The pairs of touching boxes examined.
    candidates: usize,
}

impl<T> Meet<'_, T> {
    /// The group's bodies as `(slot, key, box)`, and the union of their
    /// boxes.
    fn ask(&mut self, group: &[(u32, Key, Aabb)], area: Aabb) {
        let found = &mut *self.found;
        found.clear();
        self.tree
            .for_each_entry_in(area, |k, b| found.push((k, *b)));
        let found = &*self.found;
        let hits = &mut *self.hits;
        hits.clear();
        hits.resize(found.len(), 0);
        for &(idx, key, b) in group {
            let filter = self.filters[idx as usize];
            // The box tests, without a branch: most boxes found for a group
            // miss each of its bodies, and which ones is a coin toss. The
            // positions of those that touch this body go to `hits`.
            let mut n = 0;
            for (j, (_, ob)) in found.iter().enumerate() {
                hits[n] = j as u32;
                n += usize::from(ob.touches(&b));
            }
            for &j in &hits[..n] {
                let other = found[j as usize].0;
                let o = other.index();
                // A pair of two changed bodies is taken from the one with
                // the smaller slot.
                if o == idx || (self.marked[o as usize] && o < idx) {
                    continue;
                }
                self.candidates += 1;
                if filter.interacts(self.filters[o as usize]) {
                    self.pairs.push(if key < other {
                        (key, other)
                    } else {
                        (other, key)
                    });
                }
            }
        }
    }
}

impl<T> CollisionWorld<T> {
    /// Finds every touching pair of interacting bodies, and what changed
    /// since the previous step.
    ///
    /// The cost follows what changed since the last step: bodies added,
    /// moved, reshaped, re-layered or removed (a `set_position` to where a
    /// body already is, or a filter, layer or mask set to its current
    /// value, is no change). A body that never changes costs nothing per step, and a pair
    /// of two unchanged bodies is carried over from the last step as it
    /// was, neither found nor tested again.
    ///
    /// 1. Broad phase. When at most one body in 8 changed, each changed
    ///    body asks the tree for the boxes that touch its own (the
    ///    **incremental** step); otherwise the tree reports every pair of
    ///    touching boxes in one walk (the **full pass**), skipping every run
    ///    and subtree whose or-ed layers and masks cannot interact.
    /// 2. Filter: a pair whose layers do not interact (see
    ///    [`CollisionWorld`]) is dropped right there, by two array reads.
    /// 3. The pairs left are sorted by key pair (a counting sort, linear
    ///    in their number).
    /// 4. Exact test: [`Shape::contact`](crate::Shape::contact) on each, in
    ///    that order, which gives the contacts sorted.
    /// 5. The contacts are compared with the previous step's, giving the
    ///    pairs that began and ended. In the incremental step only the pairs
    ///    of changed bodies are compared, and the carried pairs are merged
    ///    in, so the whole step is linear in the changed bodies, their
    ///    pairs, and the number of contacts (which it returns).
    ///
    /// Both forms give exactly the same contacts and events, in the same
    /// order; [`Events::full_pass`] says which one ran, and
    /// [`Events::candidates`] counts only the pairs it examined.
    ///
    /// The returned [`Events`] borrow the world mutably; to look bodies up
    /// while going through them, call [`events`](CollisionWorld::events)
    /// after the step, which borrows it shared (the results stay readable
    /// there until the next step). Allocates nothing once its buffers have
    /// grown to the working size.
    ///
    /// ```
    /// use quadrat::{Aabb, CollisionWorld, Filter, Layers, Shape};
    /// const PLAYER: Layers = Layers::bit(0);
    /// const WALL: Layers = Layers::bit(1);
    /// let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let wall = Shape::Aabb { half_extents: [1.0, 10.0].into() };
    /// let walls = Filter::on(WALL).colliding_with(PLAYER);
    /// let w1 = world.add(wall, [10.0, 10.0], walls, "wall");
    /// let _w2 = world.add(wall, [11.0, 10.0], walls, "wall"); // walls ignore walls
    /// let player = Filter::on(PLAYER).colliding_with(WALL);
    /// let p = world.add(Shape::Circle { radius: 1.0 }, [8.5, 10.0], player, "player");
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
        s.changed = if self.all_changed {
            self.tree.len()
        } else {
            self.changed.len()
        };
        s.full_pass = self.all_changed || self.changed.len() * FULL_PASS > self.tree.len();
        if s.full_pass {
            self.full_pass();
        } else {
            self.incremental();
        }
        for &idx in &self.changed {
            self.marked[idx as usize] = false;
        }
        self.changed.clear();
        self.all_changed = false;
        self.events()
    }

    /// The full pass: every pair of touching boxes whose layers may
    /// interact, tested, then compared with the previous contacts.
    fn full_pass(&mut self) {
        let s = &mut self.steps;
        // Broad phase and filter: the candidate pairs, sorted, so that the
        // exact tests read the bodies in order and give sorted contacts.
        let (placed, filters, pairs) = (&self.placed, &self.filters, &mut s.pairs);
        pairs.clear();
        let mut candidates = 0;
        self.tree
            .for_each_pair_filtered(filters, &mut s.unions, |a, b| {
                candidates += 1;
                if filters[a.index() as usize].interacts(filters[b.index() as usize]) {
                    pairs.push((a, b));
                }
            });
        sort_pairs(pairs, &mut s.sorted, &mut s.counts, placed.len());
        s.candidates = candidates;
        s.exact_tests = pairs.len();
        exact_tests(placed, pairs, &mut s.contacts);
        began_and_ended(&s.contacts, &s.previous, &mut s.began, &mut s.ended);
    }

    /// The incremental step: the previous contacts between two unchanged
    /// bodies carry over as they are (nothing about them changed), and
    /// each changed body asks the tree for its touching boxes. The events
    /// come only from the pairs of changed bodies.
    fn incremental(&mut self) {
        // Bodies are grouped by the node that stores them: a tree whose
        // inserts are still deferred is placed first.
        self.tree.undefer();
        let s = &mut self.steps;
        let (placed, filters, marked) = (&self.placed, &self.filters, &self.marked);
        let (tree, pairs) = (&self.tree, &mut s.pairs);
        pairs.clear();
        // The changed bodies in node order: those stored in one node ask the
        // tree once, with the union of their boxes, and each then tests the
        // boxes found against its own. Removed bodies come last.
        let order = &mut s.order;
        order.clear();
        order.extend(
            self.changed
                .iter()
                .map(|&i| (u64::from(tree.node_of_slot(i as usize)) << 32) | u64::from(i)),
        );
        order.sort_unstable();
        let group = &mut s.group;
        let mut meet = Meet {
            tree,
            filters,
            marked,
            pairs,
            found: &mut s.found,
            hits: &mut s.hits,
            candidates: 0,
        };
        let mut rest = &order[..];
        while let Some(&first) = rest.first() {
            let node = first >> 32;
            if node == u64::from(u32::MAX) {
                break; // the removed bodies
            }
            let len = rest
                .iter()
                .position(|&o| o >> 32 != node)
                .unwrap_or(rest.len());
            // The bodies of a node lie inside its loose bounds, twice its
            // cell across, except at the root, which keeps every body that
            // fits in no child: more than a quarter of the world across, or
            // outside it, perhaps all around it. There each body asks alone:
            // joined, bodies scattered around the world would ask for a box
            // over all of it, and each would be tested against every box in
            // the tree.
            let alone = node == 0;
            group.clear();
            let mut area = crate::tree::EMPTY;
            for &o in &rest[..len] {
                let idx = o as u32;
                let key = tree.live_key_at(idx as usize).expect("stored in a node");
                let b = tree.aabb(key).expect("a live key has a box");
                if alone {
                    meet.ask(&[(idx, key, b)], b);
                } else {
                    area = area.join(&b);
                    group.push((idx, key, b));
                }
            }
            rest = &rest[len..];
            if !group.is_empty() {
                meet.ask(group, area);
            }
        }
        let candidates = meet.candidates;
        sort_pairs(pairs, &mut s.sorted, &mut s.counts, placed.len());
        s.candidates = candidates;
        s.exact_tests = pairs.len();
        exact_tests(placed, pairs, &mut s.fresh);

        // The previous contacts split into those carried over (both bodies
        // unchanged) and those dropped; merged with the fresh ones, the
        // carried ones give this step's contacts, in order.
        let changed =
            |c: &ContactPair| marked[c.a.index() as usize] || marked[c.b.index() as usize];
        s.dropped.clear();
        let mut fresh = s.fresh.iter().peekable();
        for c in &s.previous {
            if changed(c) {
                s.dropped.push(*c);
                continue;
            }
            while let Some(f) = fresh.next_if(|f| by_keys(f, c) == Ordering::Less) {
                s.contacts.push(*f);
            }
            s.contacts.push(*c);
        }
        s.contacts.extend(fresh);
        began_and_ended(&s.fresh, &s.dropped, &mut s.began, &mut s.ended);
    }

    /// The results of the last [`step`](CollisionWorld::step) (all empty
    /// before the first). Bodies moved, added or removed since are not
    /// reflected until the next step.
    ///
    /// ```
    /// use quadrat::{Aabb, CollisionWorld, Filter, Shape};
    /// let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// world.add(Shape::Point, [1.0, 1.0], Filter::ALL, ());
    /// world.add(Shape::Point, [1.0, 1.0], Filter::ALL, ());
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
            changed: s.changed,
            full_pass: s.full_pass,
        }
    }
}

/// The exact test of each pair (sorted), appending the contacts, in order,
/// to `out` (cleared first).
fn exact_tests(
    placed: &[(crate::shape::Shape, crate::geom::Vec2)],
    pairs: &[(Key, Key)],
    out: &mut Vec<ContactPair>,
) {
    out.clear();
    for &(a, b) in pairs {
        let (sa, pa) = &placed[a.index() as usize];
        let (sb, pb) = &placed[b.index() as usize];
        if let Some(contact) = sa.contact(*pa, sb, *pb) {
            out.push(ContactPair { a, b, contact });
        }
    }
}

/// Merges two sorted contact lists: the pairs of `now` missing from `then`
/// have begun, those of `then` missing from `now` have ended.
fn began_and_ended(
    now: &[ContactPair],
    then: &[ContactPair],
    began: &mut Vec<ContactPair>,
    ended: &mut Vec<(Key, Key)>,
) {
    let (mut i, mut j) = (0, 0);
    while i < now.len() || j < then.len() {
        let order = match (now.get(i), then.get(j)) {
            (Some(x), Some(y)) => by_keys(x, y),
            (Some(_), None) => Ordering::Less,
            _ => Ordering::Greater,
        };
        match order {
            Ordering::Less => {
                began.push(now[i]);
                i += 1;
            }
            Ordering::Greater => {
                ended.push(then[j].keys());
                j += 1;
            }
            Ordering::Equal => {
                i += 1;
                j += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::{Aabb, CollisionWorld, Filter, Key, Shape};

    /// The events of a step, owned.
    type Owned = (
        Vec<super::ContactPair>,
        Vec<super::ContactPair>,
        Vec<(Key, Key)>,
    );

    fn step(world: &mut CollisionWorld<u32>) -> Owned {
        let e = world.step();
        (e.contacts.to_vec(), e.began.to_vec(), e.ended.to_vec())
    }

    /// A copy of a world that has stepped, by full passes and incremental
    /// steps, with moves pending, holds none of the scratch of its steps
    /// or of its batch moves, and steps as the original does: the same
    /// contacts, and the same pairs begun and ended against the last
    /// step's contacts, in steps that change few bodies (incremental) and
    /// all of them (a full pass).
    #[test]
    fn a_copy_holds_no_scratch_and_steps_the_same() {
        let mut world = CollisionWorld::new(Aabb::new([0.0, 0.0], [200.0, 200.0]));
        let at = |i: usize, t: f32| {
            let (x, y) = ((i % 20) as f32 * 10.0, (i / 20) as f32 * 10.0);
            [
                x + 3.0 * (t + i as f32).sin(),
                y + 3.0 * (1.7 * t + i as f32).cos(),
            ]
        };
        let keys: Vec<Key> = (0..400)
            .map(|i| {
                world.add(
                    Shape::Circle { radius: 5.5 },
                    at(i, 0.0),
                    Filter::ALL,
                    i as u32,
                )
            })
            .collect();
        // All bodies, or every 16th (25 of 400, below the eighth of the
        // bodies from which a step is a full pass).
        let moves = |t: f32, every: usize| {
            keys.iter()
                .enumerate()
                .step_by(every)
                .map(move |(i, &k)| (k, at(i, t)))
        };
        step(&mut world);
        world.set_positions(moves(1.0, 1));
        let (contacts, _, _) = step(&mut world);
        assert!(!contacts.is_empty());
        world.set_positions(moves(1.5, 16));
        step(&mut world);
        assert!(world.steps.found.capacity() > 0, "an incremental step");
        // Changes pending when the copy is made.
        world.set_positions(moves(2.0, 16));
        world.remove(keys[7]);
        let mut copy = world.clone();
        assert!(world.moves.capacity() > 0 && world.steps.pairs.capacity() > 0);
        let s = &copy.steps;
        for scratch in [
            copy.moves.capacity(),
            s.previous.capacity(),
            s.pairs.capacity(),
            s.sorted.capacity(),
            s.counts.capacity(),
            s.fresh.capacity(),
            s.dropped.capacity(),
            s.unions.capacity(),
            s.group.capacity(),
            s.order.capacity(),
            s.found.capacity(),
            s.hits.capacity(),
        ] {
            assert_eq!(scratch, 0);
        }
        assert_eq!(s.contacts, world.steps.contacts);
        let (mut began, mut ended, mut full) = (0, 0, Vec::new());
        for (t, every) in [(3.0, 16), (4.0, 1), (5.0, 16), (6.0, 16)] {
            let a = step(&mut world);
            let b = step(&mut copy);
            assert_eq!(a, b, "the steps after the copy");
            assert_eq!(world.steps.full_pass, copy.steps.full_pass);
            full.push(world.steps.full_pass);
            began += a.1.len();
            ended += a.2.len();
            world.set_positions(moves(t, every));
            copy.set_positions(moves(t, every));
        }
        assert!(began > 0 && ended > 0, "pairs begin and end");
        assert_eq!(
            full,
            [false, false, true, false],
            "which steps were full passes"
        );
        world.tree.validate().unwrap();
        copy.tree.validate().unwrap();
    }
}
