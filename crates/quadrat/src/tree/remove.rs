//! Removal, and the collapse of quadrants that no longer need splitting.

use super::{NodeStack, QuadTree, quadrant};
use crate::key::Key;

impl<T> QuadTree<T> {
    /// Removes an item and returns its value; `None` for a stale or foreign
    /// key (and nothing changes).
    ///
    /// When the subtree above the item no longer holds enough items to need
    /// splitting, its quadrants are merged back into one node.
    ///
    /// ```
    /// use quadrat::{Aabb, QuadTree};
    /// let mut tree = QuadTree::new(Aabb::new([0.0, 0.0], [10.0, 10.0]));
    /// let k = tree.insert(Aabb::new([1.0, 1.0], [2.0, 2.0]), "crate");
    /// assert_eq!(tree.remove(k), Some("crate"));
    /// assert_eq!(tree.remove(k), None); // stale now, forever
    /// ```
    pub fn remove(&mut self, key: Key) -> Option<T> {
        let idx = self.slab.index_of(key)?;
        self.undefer();
        Some(self.remove_slot(idx))
    }

    /// Removes the item in occupied slot `idx`.
    pub(crate) fn remove_slot(&mut self, idx: usize) -> T {
        self.detach(idx as u32);
        let value = self.slab.remove_at(idx);
        self.maybe_compact();
        value
    }

    /// Takes slot `owner`'s item out of the tree (the slot stays occupied):
    /// un-counts it from the loads on its path and collapses the highest
    /// node on that path that no longer needs its children.
    pub(crate) fn detach(&mut self, owner: u32) {
        debug_assert!(!self.deferred, "detach from a deferred tree");
        let place = self.slab.places[owner as usize];
        let (target, pos) = (place.node, place.pos);
        let b = self.entries[pos as usize].aabb;
        let c = b.center();
        let mut collapse_at = None;
        let mut n = 0u32;
        while n != target {
            let node = &mut self.nodes[n as usize];
            // Never false in a valid tree. Checked in release builds too:
            // a leaf's `children` is `NONE`, and going on from it would
            // wrap around and walk the nodes forever.
            assert!(
                !node.is_leaf(),
                "quadrat: internal error: an item's node is not on its centre's path"
            );
            node.load -= 1;
            if collapse_at.is_none() && node.load <= self.max_items {
                collapse_at = Some(n);
            }
            n = node.children + quadrant(&self.geo[n as usize].cell, c) as u32;
        }
        if self.nodes[n as usize].is_leaf() && self.leaf_wants_deeper(n, &b) {
            self.nodes[n as usize].load -= 1;
        }
        self.remove_entry(n, pos);
        match collapse_at {
            Some(top) => {
                self.collapse(top);
                self.sync_node(top);
            }
            // The ancestors' bounds never shrink on removal: only `n`
            // changed.
            None => self.sync_node(n),
        }
    }

    /// Merges every item below node `n` into `n` and frees its descendants.
    /// Its load is unchanged: items from below are exactly those that would
    /// move into a child again.
    pub(crate) fn collapse(&mut self, n: u32) {
        let node = &mut self.nodes[n as usize];
        let first = node.children;
        node.children = super::NONE;
        node.below = super::EMPTY;
        let mut stack = NodeStack::new();
        for q in 0..4 {
            stack.push(first + q);
        }
        while let Some(d) = stack.pop() {
            let node = &self.nodes[d as usize];
            let (start, len, kids) = (node.start, node.len, node.children);
            for pos in start..start + len {
                let e = self.entries[pos as usize];
                self.append_entry(n, e);
            }
            self.release_run(d);
            if kids != super::NONE {
                for q in 0..4 {
                    stack.push(kids + q);
                }
                self.free_children(kids);
            }
        }
        self.free_children(first);
        self.sort_run(n);
    }
}
