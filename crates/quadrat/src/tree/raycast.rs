//! Ray casts: the first item hit, and every item hit.

use super::{QuadTree, STACK};
use crate::geom::{Aabb, Ray, RayCast};
use crate::key::Key;

impl<T> QuadTree<T> {
    /// The first item whose box the ray hits within `max_dist`, with its
    /// Euclidean distance from the ray's origin (0 when the origin is inside
    /// the box). Ties are broken by key. `None` when nothing is hit, or for
    /// an invalid ray (non-finite, or zero direction) or a NaN or negative
    /// `max_dist`.
    ///
    /// ```
    /// use quadrat::{Aabb, QuadTree, Ray};
    /// let mut tree = QuadTree::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let near = tree.insert(Aabb::new([30.0, 0.0], [40.0, 10.0]), "crate");
    /// tree.insert(Aabb::new([60.0, 0.0], [70.0, 10.0]), "wall");
    /// let bullet = Ray::new([0.0, 5.0], [1.0, 0.0]);
    /// assert_eq!(tree.raycast(bullet, 1000.0), Some((near, 30.0)));
    /// assert_eq!(tree.raycast(bullet, 20.0), None);
    /// ```
    #[must_use]
    pub fn raycast(&self, ray: Ray, max_dist: f32) -> Option<(Key, f32)> {
        self.raycast_impl(ray, max_dist, None::<fn(Key, &T, Aabb) -> Option<f32>>)
    }

    /// The first hit by a test of your own, such as the exact shape inside
    /// each box: `hit(key, value, box)` returns the distance along the ray at
    /// which it hits the item, or `None` for a miss (or to skip the item).
    /// A distance less than the one at which the ray enters the item's box
    /// is raised to it, so a distance computed in `f32` that rounds a few
    /// units in the last place below the box's is still found, and
    /// `Some(0.0)` means "at the box" (the box's own entry distance, as
    /// [`raycast`](QuadTree::raycast) reports). A NaN distance is a miss,
    /// and `-0.0` is `0.0` (a tie broken by key like any other).
    ///
    /// ```
    /// use quadrat::{Aabb, QuadTree, Ray, Shape, Vec2};
    /// let mut tree = QuadTree::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let ball = Shape::Circle { radius: 5.0 };
    /// let at = Vec2::new(50.0, 10.0);
    /// let k = tree.insert(ball.aabb(at), (ball, at));
    /// let ray = Ray::new([0.0, 14.0], [1.0, 0.0]);
    /// let exact = |_, (s, p): &(Shape, Vec2), _| s.raycast(*p, ray, 1000.0).map(|h| h.dist);
    /// assert_eq!(tree.raycast(ray, 1000.0), Some((k, 45.0)));   // the box
    /// assert_eq!(tree.raycast_with(ray, 1000.0, exact), Some((k, 47.0))); // the disc
    /// ```
    pub fn raycast_with(
        &self,
        ray: Ray,
        max_dist: f32,
        hit: impl FnMut(Key, &T, Aabb) -> Option<f32>,
    ) -> Option<(Key, f32)> {
        self.raycast_impl(ray, max_dist, Some(hit))
    }

    /// The search behind both: by the box's entry distance when `hit` is
    /// `None` (without touching the values), else by `hit`. The best hit is
    /// kept as (distance, key) and ordered by (distance, slot index): slot
    /// order is key order among live items. The key comes from the entry,
    /// which holds its generation, so the answer reads nothing of the slab.
    fn raycast_impl<F: FnMut(Key, &T, Aabb) -> Option<f32>>(
        &self,
        ray: Ray,
        max_dist: f32,
        mut hit: Option<F>,
    ) -> Option<(Key, f32)> {
        // Boxes are searched up to the best hit so far (or `max_dist`), and
        // no farther: a hit is never nearer than its box's entry (a caller's
        // smaller distance is raised to it), so a box entered beyond the
        // best holds nothing better.
        let cast = RayCast::new(&ray, max_dist)?;
        // Where the ray enters a box, as the `f32` distance results report;
        // `None` beyond `max_dist`. Never less for a box inside another, so
        // bounds prune: a node entered beyond the best hit so far holds
        // nothing better (ties by key still count, so only "beyond" prunes).
        let enter = |b: &Aabb| cast.enter(b).map(|t| t as f32);
        let mut best: Option<(f32, Key)> = None;
        let limit = |best: &Option<(f32, Key)>| best.map_or(max_dist, |b| b.0);
        let ix = self.ix();
        let mut stack = [(0u32, 0f32); STACK];
        let mut top = 1;
        while top > 0 {
            top -= 1;
            let (n, entered) = stack[top];
            if entered > limit(&best) {
                continue;
            }
            let h = &ix.hot[n as usize];
            if h.len > 0 && enter(&ix.tight(n)).is_some_and(|t| t <= limit(&best)) {
                for e in ix.run(n) {
                    let Some(t0) = enter(&e.aabb).filter(|&t| t <= limit(&best)) else {
                        continue;
                    };
                    let idx = e.owner as usize;
                    let d = match hit.as_mut() {
                        None => t0,
                        Some(hit) => {
                            let Some(value) = self.slab.slots[idx].value() else {
                                continue;
                            };
                            let Some(d) = hit(self.slab.key_at(idx), value, e.aabb) else {
                                continue;
                            };
                            raised(d, t0)
                        }
                    };
                    if d.is_nan() || d > max_dist {
                        continue;
                    }
                    let owner = e.owner;
                    if best.is_none_or(|(bd, bk)| d < bd || (d == bd && owner < bk.index())) {
                        best = Some((d, e.key()));
                    }
                }
            }
            if !h.is_leaf() {
                let mut kids = [(0u32, f32::INFINITY); 4];
                let mut m = 0;
                for q in 0..4 {
                    let c = h.children + q;
                    let bounds = ix.hot[c as usize].sub;
                    if let Some(t0) = enter(&bounds).filter(|&t| t <= limit(&best)) {
                        kids[m] = (c, t0);
                        m += 1;
                        ix.warm(&ix.hot[c as usize]);
                    }
                }
                // Farthest first, so the nearest child is visited first.
                kids[..m].sort_unstable_by(|a, b| b.1.total_cmp(&a.1));
                for &kid in &kids[..m] {
                    stack[top] = kid;
                    top += 1;
                }
            }
        }
        best.map(|(d, key)| (key, d))
    }

    /// Every item whose box the ray hits within `max_dist`, as
    /// `(key, distance)` sorted by distance, then key. Empty for an invalid
    /// ray or `max_dist` (see [`raycast`](QuadTree::raycast)).
    ///
    /// ```
    /// use quadrat::{Aabb, QuadTree, Ray};
    /// let mut tree = QuadTree::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let a = tree.insert(Aabb::new([30.0, 0.0], [40.0, 10.0]), ());
    /// let b = tree.insert(Aabb::new([60.0, 0.0], [70.0, 10.0]), ());
    /// let hits = tree.raycast_all(quadrat::Ray::new([0.0, 5.0], [1.0, 0.0]), 1000.0);
    /// assert_eq!(hits, vec![(a, 30.0), (b, 60.0)]);
    /// ```
    #[must_use]
    pub fn raycast_all(&self, ray: Ray, max_dist: f32) -> Vec<(Key, f32)> {
        self.raycast_all_impl(ray, max_dist, |_, _, _| Some(0.0))
    }

    /// Every hit by a test of your own (see
    /// [`raycast_with`](QuadTree::raycast_with)), sorted by distance, then key.
    pub fn raycast_all_with(
        &self,
        ray: Ray,
        max_dist: f32,
        hit: impl FnMut(Key, &T, Aabb) -> Option<f32>,
    ) -> Vec<(Key, f32)> {
        self.raycast_all_impl(ray, max_dist, hit)
    }

    /// Both forms: boxes entered up to `max_dist`; a hit is never nearer
    /// than its box's entry.
    fn raycast_all_impl(
        &self,
        ray: Ray,
        max_dist: f32,
        mut hit: impl FnMut(Key, &T, Aabb) -> Option<f32>,
    ) -> Vec<(Key, f32)> {
        let mut out = Vec::new();
        let Some(cast) = RayCast::new(&ray, max_dist) else {
            return out;
        };
        let enter = |b: &Aabb| cast.enter(b).map(|t| t as f32);
        let ix = self.ix();
        let mut stack = [0u32; STACK];
        let mut top = 1;
        while top > 0 {
            top -= 1;
            let n = stack[top];
            let h = &ix.hot[n as usize];
            if h.len > 0 && enter(&ix.tight(n)).is_some() {
                for e in ix.run(n) {
                    let Some(t0) = enter(&e.aabb) else {
                        continue;
                    };
                    let idx = e.owner as usize;
                    let key = e.key();
                    let Some(value) = self.slab.slots[idx].value() else {
                        continue;
                    };
                    if let Some(d) = hit(key, value, e.aabb) {
                        let d = raised(d, t0);
                        if !d.is_nan() && d <= max_dist {
                            out.push((key, d));
                        }
                    }
                }
            }
            if !h.is_leaf() {
                for q in 0..4 {
                    let c = h.children + q;
                    if enter(&ix.hot[c as usize].sub).is_some() {
                        stack[top] = c;
                        top += 1;
                    }
                }
            }
        }
        out.sort_unstable_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
        out
    }
}

/// A caller's hit distance `d`, raised to the entry `t0` of the item's box:
/// NaN stays NaN (a miss, never the entry: `f32::max` would return `t0`),
/// and a zero is `+0.0`, so that a `-0.0` ties with `0.0` and is broken by
/// key, as every other tie is.
#[inline]
fn raised(d: f32, t0: f32) -> f32 {
    if d.is_nan() { d } else { d.max(t0) + 0.0 }
}
