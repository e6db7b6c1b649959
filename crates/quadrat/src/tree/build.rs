//! Bulk building: many items at once, and rebuilding in place.

use super::{Entry, Node, QuadTree, quadrant};
use crate::error::Error;
use crate::geom::Aabb;
use crate::key::Key;

/// Which part of a node's range an entry goes to while building: a
/// quadrant `0..4`, or [`STAYS`] in the node itself.
const STAYS: usize = 4;

impl<T> QuadTree<T> {
    /// Inserts many items at once and returns their keys, in order.
    ///
    /// When the batch is large compared with the tree, the whole tree is
    /// rebuilt from scratch with one partition pass per level (see
    /// [`rebuild`](QuadTree::rebuild)), which is much faster than inserting
    /// one by one; otherwise the items are inserted one by one. The result
    /// is the same tree either way.
    ///
    /// # Panics
    /// When a box is invalid; the message names it. Nothing is inserted
    /// then. [`try_insert_many`](QuadTree::try_insert_many) returns the
    /// error instead.
    ///
    /// ```
    /// use quadrat::{Aabb, QuadTree};
    /// let mut tree = QuadTree::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let keys = tree.insert_many((0..1000).map(|i| {
    ///     let x = (i % 100) as f32;
    ///     (Aabb::new([x, x], [x + 0.5, x + 0.5]), i)
    /// }));
    /// assert_eq!(keys.len(), 1000);
    /// assert_eq!(tree[keys[7]], 7);
    /// ```
    #[track_caller]
    pub fn insert_many(&mut self, items: impl IntoIterator<Item = (Aabb, T)>) -> Vec<Key> {
        match self.try_insert_many(items) {
            Ok(keys) => keys,
            Err(e) => panic!("quadrat: invalid box passed to QuadTree::insert_many: {e}"),
        }
    }

    /// Inserts many items at once, or says why a box is refused; then
    /// nothing is inserted (the values are dropped).
    ///
    /// ```
    /// use quadrat::{Aabb, QuadTree};
    /// let mut tree = QuadTree::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let items = vec![
    ///     (Aabb::new([1.0, 1.0], [2.0, 2.0]), 'a'),
    ///     (Aabb::new([1.0, 1.0], [f32::NAN, 2.0]), 'b'),
    /// ];
    /// assert!(tree.try_insert_many(items).is_err());
    /// assert!(tree.is_empty());
    /// ```
    pub fn try_insert_many(
        &mut self,
        items: impl IntoIterator<Item = (Aabb, T)>,
    ) -> Result<Vec<Key>, Error> {
        let items = items.into_iter();
        let expected = items.size_hint().0;
        // A batch at least half the tree's size is built in bulk; a smaller
        // one (or an iterator that does not know its length) goes one by one
        // until it turns out to be large.
        let bulk = expected > 64 && expected >= self.len() / 2;
        let mut keys = Vec::with_capacity(expected);
        if bulk {
            self.pack();
            self.entries.reserve(expected);
            self.slab.reserve(expected);
            let packed = self.entries.len();
            for (b, v) in items {
                if let Err(e) = b.validate() {
                    // Take back what this call added and build the tree
                    // again from the entries it had: the same tree as before.
                    for entry in self.entries.drain(packed..) {
                        drop(self.slab.remove_at(entry.owner as usize));
                    }
                    self.build_all();
                    return Err(e);
                }
                let (key, idx) = self.slab.insert(v, 0, 0);
                self.entries.push(Entry {
                    aabb: b,
                    owner: idx as u32,
                });
                keys.push(key);
            }
            self.presort();
            self.build_all();
        } else {
            let items: Vec<(Aabb, T)> = items.collect();
            for (b, _) in &items {
                b.validate()?;
            }
            for (b, v) in items {
                let (key, idx) = self.slab.insert(v, super::NONE, super::NONE);
                self.attach(idx as u32, b);
                keys.push(key);
            }
            self.maybe_compact();
        }
        Ok(keys)
    }

    /// Rebuilds the whole tree from its items' current boxes, reusing its
    /// allocations: the nodes are made again top-down with one in-place
    /// partition pass per level, and every node's items end up contiguous,
    /// in depth-first order. Keys, values and boxes are unchanged, and so is
    /// the tree's shape, which depends only on the items.
    ///
    /// Queries and pairs are fastest right after a rebuild. Starting from
    /// the previous order, items that moved little are already nearly in
    /// place, so a rebuild every frame after moving everything is cheap.
    ///
    /// ```
    /// use quadrat::{Aabb, QuadTree};
    /// let mut tree = QuadTree::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// for i in 0..100 {
    ///     tree.insert(Aabb::from_point([i as f32, (i * 7 % 100) as f32]), i);
    /// }
    /// let before: Vec<_> = tree.nodes().collect();
    /// tree.rebuild();
    /// assert_eq!(tree.nodes().collect::<Vec<_>>(), before);
    /// ```
    pub fn rebuild(&mut self) {
        self.pack();
        self.build_all();
    }

    /// Makes the entry array hold exactly the live entries, run after run in
    /// depth-first order. Free when it already does (as after a build
    /// followed by in-place updates); otherwise one gathering copy. Leaves
    /// the nodes' runs and the slots' positions stale: `build_all` must
    /// follow.
    fn pack(&mut self) {
        let mut packed = self.garbage == 0 && self.entries.len() == self.len();
        let mut w = 0u32;
        let mut stack = super::NodeStack::with_root();
        while packed && let Some(n) = stack.pop() {
            let node = &self.nodes[n as usize];
            packed = node.start == w || node.len == 0;
            w += node.len;
            if !node.is_leaf() {
                for q in (0..4).rev() {
                    stack.push(node.children + q);
                }
            }
        }
        if packed {
            return;
        }
        let mut entries = Vec::with_capacity(self.len());
        let mut stack = super::NodeStack::with_root();
        while let Some(n) = stack.pop() {
            let node = &self.nodes[n as usize];
            let (start, len) = (node.start as usize, node.len as usize);
            entries.extend_from_slice(&self.entries[start..start + len]);
            if !node.is_leaf() {
                for q in (0..4).rev() {
                    stack.push(node.children + q);
                }
            }
        }
        self.entries = entries;
        self.garbage = 0;
    }

    /// Orders the entries along a Morton (Z-order) curve of their centres,
    /// by a radix sort, so that the top-down partition finds nearly every
    /// entry in its bucket already. The codes only approximate the tree's
    /// exact placement; the partition that follows is exact either way.
    fn presort(&mut self) {
        let n = self.entries.len();
        if n < 1024 {
            return;
        }
        let w = self.world;
        let sx = 65535.0 / w.width();
        let sy = 65535.0 / w.height();
        let quantize = |v: f32, lo: f32, s: f32| ((v - lo) * s).clamp(0.0, 65535.0) as u32;
        let mut keys: Vec<u64> = self
            .entries
            .iter()
            .enumerate()
            .map(|(i, e)| {
                let c = e.aabb.center();
                let code =
                    spread(quantize(c.x, w.min.x, sx)) | (spread(quantize(c.y, w.min.y, sy)) << 1);
                (u64::from(code) << 32) | i as u64
            })
            .collect();
        let mut spare = vec![0u64; n];
        for pass in 0..4 {
            let shift = 32 + 8 * pass;
            let mut offsets = [0usize; 256];
            for k in &keys {
                offsets[((k >> shift) & 0xFF) as usize] += 1;
            }
            let mut sum = 0;
            for o in offsets.iter_mut() {
                let c = *o;
                *o = sum;
                sum += c;
            }
            for &k in &keys {
                let b = ((k >> shift) & 0xFF) as usize;
                spare[offsets[b]] = k;
                offsets[b] += 1;
            }
            core::mem::swap(&mut keys, &mut spare);
        }
        let sorted: Vec<Entry> = keys
            .iter()
            .map(|&k| self.entries[(k & 0xFFFF_FFFF) as usize])
            .collect();
        self.entries = sorted;
    }

    /// Builds the nodes afresh over the whole (packed) entry array.
    fn build_all(&mut self) {
        self.cats.clear();
        self.cats.resize(self.entries.len(), 0);
        self.nodes.truncate(1);
        self.free_blocks.clear();
        self.nodes[0] = Node::root(self.world);
        self.garbage = 0;
        self.build_node(0, 0, self.entries.len());
        self.refit_below_all();
    }

    /// Makes node `n` from the entries in `lo..hi`: a leaf holding them all
    /// when no more than `max_items` would move into a child (or at
    /// `max_depth`), else partitions them into its own items and its four
    /// quadrants' and recurses. Recursion depth is bounded by `max_depth`.
    fn build_node(&mut self, n: u32, lo: usize, hi: usize) {
        let node = &self.nodes[n as usize];
        let at_max = node.depth >= self.config.max_depth;
        let cell = node.cell;
        let kids = node.children_loose();
        let mut counts = [0usize; 5];
        if !at_max {
            // One pass computes every entry's destination and remembers it.
            let cats = &mut self.cats[lo..hi];
            for (e, cat) in self.entries[lo..hi].iter().zip(cats.iter_mut()) {
                let q = quadrant(&cell, e.aabb.center());
                let c = if kids[q].contains(&e.aabb) { q } else { STAYS };
                *cat = c as u8;
                counts[c] += 1;
            }
        }
        let load = (hi - lo) - counts[STAYS];
        if at_max || load <= self.config.max_items {
            let node = &mut self.nodes[n as usize];
            node.start = lo as u32;
            node.len = (hi - lo) as u32;
            node.cap = node.len;
            node.load = if at_max { 0 } else { load as u32 };
            self.sort_run(n);
            return;
        }
        // Partition in place (American flag sort) into
        // [stays | q0 | q1 | q2 | q3], moving each entry's category with it.
        let order = [STAYS, 0, 1, 2, 3];
        let mut begin = [0usize; 5];
        let mut at = lo;
        for &c in &order {
            begin[c] = at;
            at += counts[c];
        }
        let end: [usize; 5] = core::array::from_fn(|c| begin[c] + counts[c]);
        let mut next = begin;
        for &c in &order {
            while next[c] < end[c] {
                let i = next[c];
                let ec = self.cats[i] as usize;
                if ec == c {
                    next[c] += 1;
                    continue;
                }
                // Swap the entry into its bucket; look again at what came back.
                let j = next[ec];
                next[ec] += 1;
                self.entries.swap(i, j);
                self.cats.swap(i, j);
            }
        }
        let node = &mut self.nodes[n as usize];
        node.start = lo as u32;
        node.len = counts[STAYS] as u32;
        node.cap = node.len;
        node.load = load as u32;
        self.sort_run(n);
        let first = self.alloc_children(n);
        for q in 0..4 {
            self.build_node(first + q as u32, begin[q], end[q]);
        }
    }
}

/// Spreads the 16 low bits of `v` to the even bits of the result.
#[inline]
fn spread(v: u32) -> u32 {
    let mut v = v & 0xFFFF;
    v = (v | (v << 8)) & 0x00FF_00FF;
    v = (v | (v << 4)) & 0x0F0F_0F0F;
    v = (v | (v << 2)) & 0x3333_3333;
    (v | (v << 1)) & 0x5555_5555
}

impl<T> FromIterator<(Aabb, T)> for QuadTree<T> {
    /// Builds a tree whose world is the bounding box of the items, with the
    /// default [`Config`](crate::Config). Keys are handed out in order, so
    /// `tree.keys()` lists them as the items came.
    ///
    /// # Panics
    /// When a box is invalid.
    ///
    /// ```
    /// use quadrat::{Aabb, QuadTree};
    /// let tree: QuadTree<usize> = (0..100)
    ///     .map(|i| (Aabb::from_point([i as f32, 0.0]), i))
    ///     .collect();
    /// assert_eq!(tree.len(), 100);
    /// assert_eq!(tree.world(), Aabb::new([0.0, 0.0], [99.0, 0.0]));
    /// ```
    fn from_iter<I: IntoIterator<Item = (Aabb, T)>>(iter: I) -> QuadTree<T> {
        let items: Vec<(Aabb, T)> = iter.into_iter().collect();
        for (b, _) in &items {
            if let Err(e) = b.validate() {
                panic!("quadrat: invalid box passed to QuadTree::from_iter: {e}");
            }
        }
        let world = items
            .iter()
            .map(|(b, _)| *b)
            .reduce(|a, b| a.union(&b))
            .unwrap_or_default();
        let mut tree = QuadTree::new(world);
        tree.insert_many(items);
        tree
    }
}
