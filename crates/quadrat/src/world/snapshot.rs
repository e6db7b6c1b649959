//! Snapshots of a collision world (feature `serde`): the tree, every body,
//! the bodies changed since the last step, and that step's results, so
//! that a restored world's next step (incremental or full) and its events
//! are exactly the original's. A snapshot is checked in full before it is
//! trusted, including the contacts the next step would carry over.

use serde::de::Error as _;
use serde::ser::SerializeStruct;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::step::StepBuffers;
use super::{CollisionWorld, ContactPair, Filter, broad_box, check_body};
use crate::geom::Vec2;
use crate::key::Key;
use crate::shape::Shape;
use crate::tree::QuadTree;

/// Serializes the whole world: its tree (values, keys and layout), each
/// slot's shape, position and filter, the bodies changed since the last
/// step, and the last step's contacts, began and ended pairs and counts.
/// Scratch memory is left out.
impl<T: Serialize> Serialize for CollisionWorld<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let st = &self.steps;
        let mut w = s.serialize_struct("CollisionWorld", 11)?;
        w.serialize_field("tree", &self.tree)?;
        w.serialize_field("placed", &self.placed)?;
        w.serialize_field("filters", &self.filters)?;
        w.serialize_field("changed", &self.changed)?;
        w.serialize_field("all_changed", &self.all_changed)?;
        w.serialize_field("contacts", &st.contacts)?;
        w.serialize_field("began", &st.began)?;
        w.serialize_field("ended", &st.ended)?;
        w.serialize_field("candidates", &st.candidates)?;
        w.serialize_field("exact_tests", &st.exact_tests)?;
        w.serialize_field("step_changed", &st.changed)?;
        w.serialize_field("full_pass", &st.full_pass)?;
        w.end()
    }
}

/// A world's snapshot as read, before it is checked.
#[derive(Deserialize)]
#[serde(rename = "CollisionWorld")]
struct Raw<T> {
    tree: QuadTree<T>,
    placed: Vec<(Shape, Vec2)>,
    filters: Vec<Filter>,
    changed: Vec<u32>,
    all_changed: bool,
    contacts: Vec<ContactPair>,
    began: Vec<ContactPair>,
    ended: Vec<(Key, Key)>,
    candidates: usize,
    exact_tests: usize,
    step_changed: usize,
    full_pass: bool,
}

/// Restores a world from its snapshot. The tree is checked as
/// [`QuadTree`]'s snapshots are; then every live body must be valid and
/// stored in the tree under exactly the box its shape and position give,
/// the changed list must name each slot at most once, the event lists must
/// be sorted pairs of keys, and the contacts between bodies that did not
/// change since the last step must be exactly what the exact test gives
/// now, none missing, since the next incremental step carries them over
/// unchecked. Anything else is refused with an error naming what is
/// wrong: a damaged or forged snapshot never yields a world that panics or
/// reports wrong contacts later. Checking the contacts costs about one full
/// step.
impl<'de, T: Deserialize<'de>> Deserialize<'de> for CollisionWorld<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<CollisionWorld<T>, D::Error> {
        let raw = Raw::<T>::deserialize(d)?;
        CollisionWorld::from_raw(raw).map_err(D::Error::custom)
    }
}

/// Keys in increasing order, each pair `a < b`: the order of every event
/// list.
fn sorted_pairs(pairs: impl Iterator<Item = (Key, Key)>) -> bool {
    let mut last: Option<(Key, Key)> = None;
    for p in pairs {
        if p.0 >= p.1 || last.is_some_and(|l| l >= p) {
            return false;
        }
        last = Some(p);
    }
    true
}

impl<T> CollisionWorld<T> {
    fn from_raw(raw: Raw<T>) -> Result<CollisionWorld<T>, String> {
        let err = |what: &str| format!("invalid quadrat snapshot: {what}");
        let tree = raw.tree;
        let slots = raw.placed.len();
        if raw.filters.len() != slots {
            return Err(err("as many filters as bodies' places are needed"));
        }
        if tree.slab.slots.len() > slots {
            return Err(err("a key's slot has no body"));
        }
        for (key, stored, _) in tree.iter() {
            let (shape, pos) = &raw.placed[key.index() as usize];
            check_body(shape, *pos).map_err(|e| err(&format!("body {key:?}: {e}")))?;
            let expected = broad_box(shape, *pos);
            let same = |a: f32, b: f32| a.to_bits() == b.to_bits();
            if !(same(stored.min.x, expected.min.x)
                && same(stored.min.y, expected.min.y)
                && same(stored.max.x, expected.max.x)
                && same(stored.max.y, expected.max.y))
            {
                return Err(err(&format!(
                    "body {key:?} is stored under a box its shape and position do not give"
                )));
            }
        }
        let mut marked = vec![false; slots];
        for &idx in &raw.changed {
            let Some(m) = marked.get_mut(idx as usize) else {
                return Err(err("a changed slot is out of range"));
            };
            if core::mem::replace(m, true) {
                return Err(err("a changed slot is listed twice"));
            }
        }
        if !sorted_pairs(raw.contacts.iter().map(ContactPair::keys))
            || !sorted_pairs(raw.began.iter().map(ContactPair::keys))
            || !sorted_pairs(raw.ended.iter().copied())
        {
            return Err(err(
                "contacts, began and ended must be sorted pairs of keys, each a < b",
            ));
        }
        // The contacts the next incremental step keeps as they are: those
        // of two live bodies, neither changed. They must be exactly what
        // the exact test gives now, and all of them must be there. A
        // pair with a changed or removed body is recomputed by the next
        // step, and only its keys matter. After `clear` the next step is a
        // full pass, which recomputes everything.
        // Every contact names two slots the world has; a body gone since
        // the last step (removed, or its slot reused) must be listed as
        // changed, or the next step would carry its contact over.
        for c in &raw.contacts {
            for k in [c.a, c.b] {
                let Some(&changed) = marked.get(k.index() as usize) else {
                    return Err(err(&format!(
                        "the contact {:?} names a slot out of range",
                        c.keys()
                    )));
                };
                if !raw.all_changed && !changed && !tree.contains_key(k) {
                    return Err(err(&format!(
                        "the contact {:?} names a body gone but not listed as changed",
                        c.keys()
                    )));
                }
            }
        }
        if !raw.all_changed {
            let kept = |k: Key| tree.contains_key(k) && !marked[k.index() as usize];
            let (placed, filters) = (&raw.placed, &raw.filters);
            let mut expected: Vec<ContactPair> = Vec::new();
            tree.for_each_pair(|a, b| {
                let (ia, ib) = (a.index() as usize, b.index() as usize);
                if kept(a) && kept(b) && filters[ia].interacts(filters[ib]) {
                    let ((sa, pa), (sb, pb)) = (&placed[ia], &placed[ib]);
                    if let Some(contact) = sa.contact(*pa, sb, *pb) {
                        expected.push(ContactPair { a, b, contact });
                    }
                }
            });
            expected.sort_unstable_by_key(ContactPair::keys);
            let mut have = raw.contacts.iter().filter(|c| kept(c.a) && kept(c.b));
            let mut want = expected.iter();
            loop {
                match (have.next(), want.next()) {
                    (None, None) => break,
                    (Some(h), Some(w)) if same_contact(h, w) => {}
                    (Some(h), _) => {
                        return Err(err(&format!(
                            "the contact {:?} of unchanged bodies is not what they give",
                            h.keys()
                        )));
                    }
                    (None, Some(w)) => {
                        return Err(err(&format!(
                            "the contact {:?} of unchanged bodies is missing",
                            w.keys()
                        )));
                    }
                }
            }
        }
        let mut steps = StepBuffers::default();
        steps.contacts = raw.contacts;
        steps.began = raw.began;
        steps.ended = raw.ended;
        steps.candidates = raw.candidates;
        steps.exact_tests = raw.exact_tests;
        steps.changed = raw.step_changed;
        steps.full_pass = raw.full_pass;
        Ok(CollisionWorld {
            tree,
            placed: raw.placed,
            filters: raw.filters,
            steps,
            changed: raw.changed,
            marked,
            all_changed: raw.all_changed,
            moves: Vec::new(),
        })
    }
}

/// The same contact, bit for bit.
fn same_contact(x: &ContactPair, y: &ContactPair) -> bool {
    let c = |p: &ContactPair| {
        let k = &p.contact;
        (
            p.keys(),
            [
                k.normal.x.to_bits(),
                k.normal.y.to_bits(),
                k.depth.to_bits(),
                k.point.x.to_bits(),
                k.point.y.to_bits(),
            ],
        )
    };
    c(x) == c(y)
}
