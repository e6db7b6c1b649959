//! The k nearest items to a point.

use super::{QuadTree, STACK};
use crate::geom::{Aabb, Vec2, distance_from_gaps};
use crate::key::Key;
use std::collections::BinaryHeap;

/// A candidate result: distance and slot index, ordered by distance, then
/// slot index, which orders live items as their keys do (the heap's top is
/// the worst of the best `k` so far). Keys are made only for the results.
#[derive(Clone, Copy, PartialEq)]
struct Found(f32, u32);

impl Eq for Found {}

impl PartialOrd for Found {
    fn partial_cmp(&self, other: &Found) -> Option<core::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Found {
    fn cmp(&self, other: &Found) -> core::cmp::Ordering {
        self.0.total_cmp(&other.0).then(self.1.cmp(&other.1))
    }
}

impl<T> QuadTree<T> {
    /// The `k` items whose boxes are closest to `p`, as `(key, distance)`
    /// in ascending Euclidean distance from `p` to the box (0 when `p` is
    /// inside or on the edge), ties broken by key so the order is
    /// deterministic. Fewer than `k` when the tree holds fewer items; empty
    /// for `k = 0` or a non-finite `p`.
    ///
    /// ```
    /// use quadrat::{Aabb, QuadTree};
    /// let mut tree = QuadTree::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let a = tree.insert(Aabb::new([10.0, 10.0], [20.0, 20.0]), ());
    /// let b = tree.insert(Aabb::new([50.0, 10.0], [60.0, 20.0]), ());
    /// tree.insert(Aabb::new([90.0, 90.0], [95.0, 95.0]), ());
    /// assert_eq!(tree.nearest([25.0, 15.0], 2), vec![(a, 5.0), (b, 25.0)]);
    /// assert_eq!(tree.nearest([15.0, 15.0], 1), vec![(a, 0.0)]); // inside
    /// ```
    #[must_use]
    pub fn nearest(&self, p: impl Into<Vec2>, k: usize) -> Vec<(Key, f32)> {
        self.nearest_impl(p.into(), k, None::<fn(Key, &T, Aabb) -> Option<f32>>)
    }

    /// The `k` nearest items by a distance of your own, such as the exact
    /// distance to the shape inside each box: `dist(key, value, box)` returns
    /// an item's distance from `p`, or `None` to skip the item (a layer
    /// filter, say). It must never be less than the distance from `p` to the
    /// item's box (by more than a relative 2⁻²⁰, which covers a distance
    /// computed in `f32` rounding a few units in the last place below the
    /// box's), which is what lets whole subtrees be skipped. Results as for
    /// [`nearest`](QuadTree::nearest).
    ///
    /// ```
    /// use quadrat::{Aabb, Circle, QuadTree};
    /// let mut tree = QuadTree::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let disc = |c: Circle| (c.aabb(), c);
    /// let (b1, c1) = disc(Circle::new([10.0, 10.0], 5.0));
    /// let (b2, c2) = disc(Circle::new([22.0, 15.5], 5.0));
    /// let k1 = tree.insert(b1, c1);
    /// let k2 = tree.insert(b2, c2);
    /// // The corner of the first disc's box is nearer, but the second disc is.
    /// let p = [15.5, 15.5];
    /// let exact = |_, c: &Circle, _| Some(((c.center - p.into()).length() - c.radius).max(0.0));
    /// assert_eq!(tree.nearest(p, 1)[0].0, k1);
    /// assert_eq!(tree.nearest_with(p, 1, exact)[0].0, k2);
    /// ```
    pub fn nearest_with(
        &self,
        p: impl Into<Vec2>,
        k: usize,
        dist: impl FnMut(Key, &T, Aabb) -> Option<f32>,
    ) -> Vec<(Key, f32)> {
        self.nearest_impl(p.into(), k, Some(dist))
    }

    /// The search behind both: by box distance when `dist` is `None`
    /// (without touching the values), else by `dist`.
    fn nearest_impl<F: FnMut(Key, &T, Aabb) -> Option<f32>>(
        &self,
        p: Vec2,
        k: usize,
        mut dist: Option<F>,
    ) -> Vec<(Key, f32)> {
        let k = k.min(self.len());
        if k == 0 || !p.is_finite() {
            return Vec::new();
        }
        let mut best: BinaryHeap<Found> = BinaryHeap::with_capacity(k + 1);
        // How far past the k-th best distance boxes are still searched. By
        // box distance, exactly that far. A distance of the caller's,
        // computed another way, may round a few units in the last place
        // below its box's: a relative 2⁻²⁰ more keeps such items found.
        let reach = if dist.is_some() {
            1.0 + 1.0 / (1u32 << 20) as f32
        } else {
            1.0
        };
        let worst = |best: &BinaryHeap<Found>| {
            if best.len() < k {
                f32::INFINITY
            } else {
                best.peek().map_or(f32::INFINITY, |f| f.0 * reach)
            }
        };
        let ix = self.ix();
        let mut stack = [(0u32, 0f32); STACK];
        let mut top = 1;
        while top > 0 {
            top -= 1;
            let (n, bound) = stack[top];
            if bound > worst(&best) {
                continue;
            }
            let node = &ix.nodes[n as usize];
            if node.len > 0 && node.tight.distance_to_point(p) <= worst(&best) {
                for e in &ix.entries[node.start as usize..(node.start + node.len) as usize] {
                    let limit = worst(&best);
                    // Sorted by `min.x`: the rest of the run starts farther
                    // right, and a box is never nearer than its gap along
                    // x alone, measured the same way as the distance.
                    let gap = f64::from(e.aabb.min.x) - f64::from(p.x);
                    if distance_from_gaps(gap.max(0.0), 0.0) > limit {
                        break;
                    }
                    let bd = e.aabb.distance_to_point(p);
                    if bd > limit {
                        continue;
                    }
                    let idx = e.owner as usize;
                    let d = match dist.as_mut() {
                        None => bd,
                        Some(dist) => {
                            let Some(value) = self.slab.slots[idx].value.as_ref() else {
                                continue;
                            };
                            let Some(d) = dist(self.slab.key_at(idx), value, e.aabb) else {
                                continue;
                            };
                            d
                        }
                    };
                    if d.is_nan() {
                        continue;
                    }
                    let found = Found(d, e.owner);
                    if best.len() < k {
                        best.push(found);
                    } else if best.peek().is_some_and(|w| found < *w) {
                        best.pop();
                        best.push(found);
                    }
                }
            }
            if !node.is_leaf() {
                // Push the farthest child first so the nearest is visited first.
                let mut kids: [(u32, f32); 4] = core::array::from_fn(|q| {
                    let c = node.children + q as u32;
                    (
                        c,
                        ix.nodes[c as usize].subtree_bounds().distance_to_point(p),
                    )
                });
                kids.sort_unstable_by(|a, b| b.1.total_cmp(&a.1));
                for kid in kids {
                    if kid.1 <= worst(&best) {
                        stack[top] = kid;
                        top += 1;
                    }
                }
            }
        }
        best.into_sorted_vec()
            .into_iter()
            .map(|f| (self.slab.key_at(f.1 as usize), f.0))
            .collect()
    }
}
