//! The k nearest items to a point.

use super::{QuadTree, STACK};
use crate::geom::{Aabb, Vec2, distance_from_gaps, pack, unpack};
use crate::key::Key;
use std::collections::BinaryHeap;

/// Four values, largest first, by a sorting network of five branch-free
/// compare-exchanges.
#[inline]
fn sort4_descending(mut v: [u64; 4]) -> [u64; 4] {
    for (i, j) in [(0, 1), (2, 3), (0, 2), (1, 3), (1, 2)] {
        (v[i], v[j]) = (v[i].max(v[j]), v[i].min(v[j]));
    }
    v
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
    /// box's), which is what lets whole subtrees be skipped. A NaN distance
    /// skips the item, and `-0.0` is `0.0` (a tie broken by key). Results
    /// as for [`nearest`](QuadTree::nearest).
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
        // Each found item with its key, taken from its entry, so the answer
        // reads nothing of the slab; the packed word alone orders them (its
        // low half, the slot index, is unique).
        let mut best: BinaryHeap<(u64, Key)> = BinaryHeap::with_capacity(k);
        // How far past the k-th best distance boxes are still searched. By
        // box distance, exactly that far. A distance of the caller's,
        // computed another way, may round a few units in the last place
        // below its box's: a relative 2⁻²⁰ more keeps such items found.
        let reach = if dist.is_some() {
            1.0 + 1.0 / (1u32 << 20) as f32
        } else {
            1.0
        };
        // Boxes farther than `limit` are not searched: infinity until `k`
        // are found, then the k-th best distance times `reach`. `beyond`
        // is the square, in `f64`, of the next `f32` above `limit`: a box
        // whose squared distance exceeds it is certainly farther than
        // `limit` once rounded to `f32` (the square of an `f32` is exact in
        // `f64`, and a correctly rounded square root is monotone), so most
        // boxes are passed over without a square root. `beyond` is infinite
        // while `limit` is the largest finite `f32` or more, and then
        // nothing is passed over that way.
        let mut limit = f32::INFINITY;
        let mut beyond = f64::INFINITY;
        let ix = self.ix();
        let mut stack = [(0u32, 0f32); STACK];
        let mut top = 1;
        while top > 0 {
            top -= 1;
            let (n, bound) = stack[top];
            if bound > limit {
                continue;
            }
            let h = &ix.hot[n as usize];
            if h.len > 0 && ix.tight(n).distance_to_point(p) <= limit {
                for e in ix.run(n) {
                    // Sorted by `min.x`: the rest of the run starts farther
                    // right, and a box is never nearer than its gap along
                    // x alone (the distance of gaps (g, 0) is g rounded to
                    // `f32`: the square root of a square is exact).
                    let gap = f64::from(e.aabb.min.x) - f64::from(p.x);
                    if (gap.max(0.0) as f32) > limit {
                        break;
                    }
                    let (dx, dy) = e.aabb.gaps_to(p);
                    if dx * dx + dy * dy > beyond {
                        continue;
                    }
                    let bd = distance_from_gaps(dx, dy);
                    if bd > limit {
                        continue;
                    }
                    let idx = e.owner as usize;
                    let d = match dist.as_mut() {
                        None => bd,
                        Some(dist) => {
                            let Some(value) = self.slab.slots[idx].value() else {
                                continue;
                            };
                            let Some(d) = dist(self.slab.key_at(idx), value, e.aabb) else {
                                continue;
                            };
                            // `-0.0` is `0.0`, a tie broken by key: the
                            // packed order would put it first.
                            d + 0.0
                        }
                    };
                    if d.is_nan() {
                        continue;
                    }
                    // Ordered by (distance, slot index), which orders live
                    // items as their keys do; the heap's top is the worst.
                    let found = (pack(d, e.owner), e.key());
                    if best.len() < k {
                        best.push(found);
                        if best.len() < k {
                            continue;
                        }
                    } else {
                        match best.peek_mut() {
                            Some(mut worst) if found.0 < worst.0 => *worst = found,
                            _ => continue,
                        }
                    }
                    // The k-th best changed: so do the limits.
                    let kth = best.peek().map_or(f32::INFINITY, |w| unpack(w.0).0);
                    limit = kth * reach;
                    let next = f64::from(limit.next_up());
                    beyond = next * next;
                }
            }
            if !h.is_leaf() {
                // Push the farthest child first so the nearest is visited
                // first. Distances are never NaN. Packed with the child's
                // index inverted, children at equal distances are pushed
                // in quadrant order, so the last quadrant is visited first:
                // the order a stable sort by distance gives, which decides
                // the order of calls to a `dist` of the caller's.
                let kid = |c: u32| pack(ix.hot[c as usize].sub.distance_to_point(p), !c);
                let c = h.children;
                let kids = sort4_descending([kid(c), kid(c + 1), kid(c + 2), kid(c + 3)]);
                for kid in kids {
                    let (bound, c) = unpack(kid);
                    if bound <= limit {
                        stack[top] = (!c, bound);
                        top += 1;
                    }
                }
            }
        }
        best.into_sorted_vec()
            .into_iter()
            .map(|(packed, key)| (key, unpack(packed).0))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::sort4_descending;

    #[test]
    fn four_sort_largest_first() {
        // Every permutation of four values, with and without equal ones.
        for v in [[1u64, 2, 3, 4], [5, 5, 1, 9], [0, 0, 0, 0], [9, 1, 9, 1]] {
            let mut want = v;
            want.sort_unstable_by(|a, b| b.cmp(a));
            for i in 0..4 {
                for j in (0..4).filter(|&j| j != i) {
                    for k in (0..4).filter(|&k| k != i && k != j) {
                        let l = 6 - i - j - k;
                        let p = [v[i], v[j], v[k], v[l]];
                        assert_eq!(sort4_descending(p), want, "{p:?}");
                    }
                }
            }
        }
    }
}
