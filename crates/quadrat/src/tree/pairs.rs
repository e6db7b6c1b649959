//! Every intersecting pair of items, each exactly once.

use super::{NodeStack, QuadTree};
use crate::key::Key;

impl<T> QuadTree<T> {
    /// Calls `f(a, b)` once for every pair of items whose boxes intersect
    /// (touching counts), with `a < b`. No item is paired with itself.
    ///
    /// Each item is stored in exactly one node. A pair whose items sit in
    /// different nodes is found from the node later in the order
    /// (shallower first, then by index), by visiting the earlier nodes whose
    /// loose bounds meet its own; a pair in one node is found there. So no
    /// pair is reported twice and no hash set is needed. Allocates nothing.
    ///
    /// ```
    /// use quadrat::{Aabb, QuadTree};
    /// let mut tree = QuadTree::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let a = tree.insert(Aabb::new([0.0, 0.0], [10.0, 10.0]), ());
    /// let b = tree.insert(Aabb::new([10.0, 0.0], [20.0, 10.0]), ()); // touches a
    /// tree.insert(Aabb::new([50.0, 50.0], [60.0, 60.0]), ());
    /// let mut found = Vec::new();
    /// tree.for_each_pair(|x, y| found.push((x, y)));
    /// assert_eq!(found, vec![(a, b)]);
    /// ```
    pub fn for_each_pair(&self, mut f: impl FnMut(Key, Key)) {
        let mut emit = |pa: usize, pb: usize| {
            let (ka, kb) = (self.key_of_entry(pa), self.key_of_entry(pb));
            if ka < kb { f(ka, kb) } else { f(kb, ka) }
        };
        let mut walk = NodeStack::with_root();
        while let Some(n) = walk.pop() {
            let node = &self.nodes[n as usize];
            if !node.is_leaf() {
                for q in 0..4 {
                    walk.push(node.children + q);
                }
            }
            if node.len == 0 {
                continue;
            }
            let (start, end) = (node.start as usize, (node.start + node.len) as usize);
            let own = &self.boxes[start..end];
            // Pairs within the node.
            for i in 0..own.len() {
                let a = own[i];
                for (j, b) in own.iter().enumerate().skip(i + 1) {
                    if a.intersects(b) {
                        emit(start + i, start + j);
                    }
                }
            }
            if n == 0 {
                continue;
            }
            // Pairs with items of earlier nodes whose loose bounds meet ours.
            let reach = node.loose;
            let depth = node.depth;
            let mut others = NodeStack::with_root();
            while let Some(m) = others.pop() {
                let other = &self.nodes[m as usize];
                if other.depth < depth {
                    if !other.is_leaf() {
                        for q in 0..4 {
                            let c = other.children + q;
                            let child = &self.nodes[c as usize];
                            if child.loose.intersects(&reach) && (child.depth < depth || c < n) {
                                others.push(c);
                            }
                        }
                    }
                } else if m >= n {
                    continue;
                }
                let o_start = other.start as usize;
                for (j, b) in self.boxes[o_start..o_start + other.len as usize]
                    .iter()
                    .enumerate()
                {
                    if !b.intersects(&reach) {
                        continue;
                    }
                    for (i, a) in own.iter().enumerate() {
                        if a.intersects(b) {
                            emit(start + i, o_start + j);
                        }
                    }
                }
            }
        }
    }

    /// Every intersecting pair `(a, b)` with `a < b`, each exactly once,
    /// sorted.
    ///
    /// ```
    /// use quadrat::{Aabb, QuadTree};
    /// let mut tree = QuadTree::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let a = tree.insert(Aabb::new([0.0, 0.0], [10.0, 10.0]), ());
    /// let b = tree.insert(Aabb::new([5.0, 5.0], [15.0, 15.0]), ());
    /// let c = tree.insert(Aabb::new([9.0, 9.0], [9.0, 9.0]), ()); // a point inside both
    /// assert_eq!(tree.pairs(), vec![(a, b), (a, c), (b, c)]);
    /// ```
    #[must_use]
    pub fn pairs(&self) -> Vec<(Key, Key)> {
        let mut out = Vec::new();
        self.for_each_pair(|a, b| out.push((a, b)));
        out.sort_unstable();
        out
    }
}
