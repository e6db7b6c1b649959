//! Moving and resizing items.

use super::{QuadTree, quadrant};
use crate::error::Error;
use crate::geom::Aabb;
use crate::key::Key;

impl<T> QuadTree<T> {
    /// Moves or resizes an item. Returns `false` for a stale or foreign key
    /// (and nothing changes).
    ///
    /// An item that stays in its node costs O(1); one that leaves it is
    /// taken out along its old path and put in along its new one.
    ///
    /// # Panics
    /// When `aabb` is not valid; the message says why. The tree is unchanged
    /// then. [`try_update`](QuadTree::try_update) returns the error instead.
    ///
    /// ```
    /// use quadrat::{Aabb, QuadTree};
    /// let mut tree = QuadTree::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let k = tree.insert(Aabb::new([1.0, 1.0], [2.0, 2.0]), ());
    /// assert!(tree.update(k, Aabb::new([50.0, 50.0], [51.0, 51.0])));
    /// assert_eq!(tree.query_point([50.5, 50.5]).count(), 1);
    /// tree.remove(k);
    /// assert!(!tree.update(k, Aabb::new([0.0, 0.0], [1.0, 1.0])));
    /// ```
    #[track_caller]
    pub fn update(&mut self, key: Key, aabb: Aabb) -> bool {
        match self.try_update(key, aabb) {
            Ok(()) => true,
            Err(Error::StaleKey) => false,
            Err(e) => panic!("quadrat: invalid box passed to QuadTree::update: {e}"),
        }
    }

    /// Moves or resizes an item, or says why not: [`Error::StaleKey`] for a
    /// stale or foreign key, or what is wrong with the box. On error nothing
    /// changes.
    ///
    /// ```
    /// use quadrat::{Aabb, Error, QuadTree};
    /// let mut tree = QuadTree::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let b = Aabb::new([1.0, 1.0], [2.0, 2.0]);
    /// let k = tree.insert(b, ());
    /// let err = tree.try_update(k, Aabb::new([0.0, 0.0], [f32::NAN, 1.0])).unwrap_err();
    /// assert_eq!(err.to_string(), "max.x is NaN");
    /// assert_eq!(tree.aabb(k), Some(b));
    /// ```
    pub fn try_update(&mut self, key: Key, aabb: Aabb) -> Result<(), Error> {
        aabb.validate()?;
        let idx = self.slab.index_of(key).ok_or(Error::StaleKey)?;
        let owner = idx as u32;
        let slot = &self.slab.slots[idx];
        let (n, pos) = (slot.node, slot.pos);
        if self.stays_in(n, &aabb) {
            let node = &self.nodes[n as usize];
            if node.is_leaf() {
                let old = self.entries[pos as usize].aabb;
                let was = self.leaf_wants_deeper(n, &old);
                let now = self.leaf_wants_deeper(n, &aabb);
                self.entries[pos as usize].aabb = aabb;
                let node = &mut self.nodes[n as usize];
                node.tight = node.tight.union(&aabb);
                self.resort_entry(n, pos);
                if was != now {
                    let node = &mut self.nodes[n as usize];
                    if now {
                        node.load += 1;
                        self.split_if_needed(n);
                    } else {
                        node.load -= 1;
                    }
                }
            } else {
                self.entries[pos as usize].aabb = aabb;
                let node = &mut self.nodes[n as usize];
                node.tight = node.tight.union(&aabb);
                self.resort_entry(n, pos);
            }
        } else {
            self.detach(owner);
            self.attach(owner, aabb);
        }
        self.maybe_compact();
        Ok(())
    }

    /// `true` when `b` would be stored in node `n`: its centre descends to
    /// `n`, `n`'s loose bounds (and so all its ancestors') contain it, and it
    /// does not fit the child of `n` it would descend into.
    fn stays_in(&self, n: u32, b: &Aabb) -> bool {
        let node = &self.nodes[n as usize];
        let c = b.center();
        if n != 0 && !(node.reaches(c) && node.loose.contains(b)) {
            return false;
        }
        node.is_leaf() || {
            let child = node.children + quadrant(&node.cell, c) as u32;
            !self.nodes[child as usize].loose.contains(b)
        }
    }
}
