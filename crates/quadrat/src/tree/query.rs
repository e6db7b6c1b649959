//! Area, circle and point queries.

use super::{Entry, Ix, NodeStack, QuadTree};
use crate::geom::{Aabb, Circle, Vec2};
use crate::key::Key;
use core::ops::ControlFlow;

/// A region of the plane a query can ask about.
///
/// The tree uses one test for both pruning nodes (against their loose
/// bounds) and selecting items (against their boxes), so a region only has
/// to say whether it shares a point with a closed box. Implemented for
/// [`Aabb`], [`Circle`] and [`Vec2`]; implement it for your own shapes
/// (a view frustum, a polygon) to query with them.
///
/// ```
/// use quadrat::{Aabb, QuadTree, Region};
/// /// Everything right of a vertical line.
/// struct RightOf(f32);
/// impl Region for RightOf {
///     fn intersects_aabb(&self, b: &Aabb) -> bool {
///         b.max.x >= self.0
///     }
/// }
/// let mut tree = QuadTree::new(Aabb::new([0.0, 0.0], [10.0, 10.0]));
/// tree.insert(Aabb::new([1.0, 1.0], [2.0, 2.0]), "left");
/// tree.insert(Aabb::new([8.0, 1.0], [9.0, 2.0]), "right");
/// let hits: Vec<_> = tree.query_region(RightOf(5.0)).map(|(_, v)| *v).collect();
/// assert_eq!(hits, ["right"]);
/// ```
pub trait Region {
    /// `true` when the region and the closed box `b` share at least one point.
    ///
    /// Must be conservative for pruning to be correct: if it is `false` for
    /// a box, it must be `false` for every box inside it.
    fn intersects_aabb(&self, b: &Aabb) -> bool;

    /// `true` when the region contains no point at all, so a query can stop
    /// before it starts. Asked once per query; the default is `false`.
    fn is_empty(&self) -> bool {
        false
    }

    /// The largest `x` of any point of the region, or more: no box starting
    /// right of it may pass [`intersects_aabb`](Region::intersects_aabb),
    /// rounding included. Each node's items are sorted by `min.x`, so a
    /// query stops scanning a node at the first item starting right of this.
    /// The default, infinity, never stops.
    fn max_x(&self) -> f32 {
        f32::INFINITY
    }
}

impl Region for Aabb {
    #[inline]
    fn intersects_aabb(&self, b: &Aabb) -> bool {
        self.intersects(b)
    }

    /// An inverted or NaN box is empty (the intersection test alone would
    /// let an inverted box match some boxes).
    fn is_empty(&self) -> bool {
        !(self.min.x <= self.max.x && self.min.y <= self.max.y)
    }

    fn max_x(&self) -> f32 {
        self.max.x
    }
}

impl Region for Circle {
    #[inline]
    fn intersects_aabb(&self, b: &Aabb) -> bool {
        Circle::intersects_aabb(self, b)
    }

    /// `center.x + radius`, rounded up with room to spare: the `f64` test
    /// rounds too, and may accept a box whose gap exceeds the radius by a
    /// few parts in 2⁵³, so the cut-off must not be tighter than it.
    fn max_x(&self) -> f32 {
        let (c, r) = (f64::from(self.center.x), f64::from(self.radius.max(0.0)));
        let reach = c + r + (c.abs() + r) * (1.0 / (1u64 << 48) as f64);
        let x = reach as f32;
        if f64::from(x) < reach { x.next_up() } else { x }
    }
}

impl Region for Vec2 {
    #[inline]
    fn intersects_aabb(&self, b: &Aabb) -> bool {
        b.contains_point(*self)
    }

    fn max_x(&self) -> f32 {
        self.x
    }
}

impl<R: Region + ?Sized> Region for &R {
    #[inline]
    fn intersects_aabb(&self, b: &Aabb) -> bool {
        (**self).intersects_aabb(b)
    }

    fn is_empty(&self) -> bool {
        (**self).is_empty()
    }

    fn max_x(&self) -> f32 {
        (**self).max_x()
    }
}

/// Iterator over the items whose boxes intersect a [`Region`], made by
/// [`QuadTree::query`] and its siblings. It walks the tree with a fixed
/// stack and allocates nothing.
#[derive(Clone)]
pub struct Query<'a, T, R = Aabb> {
    tree: &'a QuadTree<T>,
    /// The nodes and entries walked.
    ix: Ix<'a>,
    region: R,
    stack: NodeStack,
    next: u32,
    end: u32,
    /// The region's [`Region::max_x`], asked once.
    max_x: f32,
}

impl<'a, T, R: Region> Query<'a, T, R> {
    fn new(tree: &'a QuadTree<T>, region: R) -> Self {
        let stack = if region.is_empty() {
            NodeStack::new()
        } else {
            NodeStack::with_root()
        };
        let max_x = region.max_x();
        Query {
            tree,
            ix: tree.ix(),
            max_x,
            region,
            stack,
            next: 0,
            end: 0,
        }
    }

    /// The next entry position whose box intersects the region.
    #[inline]
    fn next_entry(&mut self) -> Option<usize> {
        let ix = self.ix;
        loop {
            while self.next < self.end {
                let p = self.next as usize;
                self.next += 1;
                let b = &ix.entries[p].aabb;
                if b.min.x > self.max_x {
                    // Sorted by `min.x`: nothing further in this run can hit.
                    self.next = self.end;
                    break;
                }
                if self.region.intersects_aabb(b) {
                    return Some(p);
                }
            }
            let n = self.stack.pop()?;
            // The search copy of the node (see `Hot`); the node itself only
            // for the `tight` box of an internal node's own run (a leaf's
            // is its subtree bounds).
            let h = &ix.hot[n as usize];
            if !h.is_leaf() {
                for q in 0..4 {
                    let child = h.children + q;
                    let c = &ix.hot[child as usize];
                    if self.region.intersects_aabb(&c.sub) {
                        self.stack.push(child);
                        ix.warm(c);
                    }
                }
            }
            // The root is always visited, so its far-away items are found;
            // its `tight` box covers them too.
            if h.len > 0 && self.region.intersects_aabb(&ix.tight(n)) {
                self.next = h.start;
                self.end = h.start + h.len;
            }
        }
    }
}

impl<'a, T, R: Region> Iterator for Query<'a, T, R> {
    type Item = (Key, &'a T);

    #[inline]
    fn next(&mut self) -> Option<(Key, &'a T)> {
        let p = self.next_entry()?;
        let e = &self.ix.entries[p];
        let slot = &self.tree.slab.slots[e.owner as usize];
        Some((e.key(), slot.value()?))
    }
}

impl<T> QuadTree<T> {
    /// The items whose boxes intersect `area` (touching counts), in no
    /// particular order. A NaN or inverted `area` intersects nothing.
    ///
    /// ```
    /// use quadrat::{Aabb, QuadTree};
    /// let mut tree = QuadTree::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let k = tree.insert(Aabb::new([10.0, 10.0], [20.0, 20.0]), ());
    /// tree.insert(Aabb::new([50.0, 50.0], [60.0, 60.0]), ());
    /// let hits: Vec<_> = tree.query(Aabb::new([0.0, 0.0], [10.0, 10.0])).map(|(k, _)| k).collect();
    /// assert_eq!(hits, vec![k]); // touching at a corner counts
    /// ```
    pub fn query(&self, area: Aabb) -> Query<'_, T> {
        Query::new(self, area)
    }

    /// The items whose boxes intersect the disc (touching counts). A circle
    /// with a NaN centre coordinate, or a negative or NaN radius, intersects
    /// nothing.
    ///
    /// ```
    /// use quadrat::{Aabb, Circle, QuadTree};
    /// let mut tree = QuadTree::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// tree.insert(Aabb::new([10.0, 10.0], [12.0, 12.0]), "near");
    /// tree.insert(Aabb::new([30.0, 30.0], [32.0, 32.0]), "far");
    /// let hits: Vec<_> = tree.query_circle(Circle::new([0.0, 0.0], 15.0)).map(|(_, v)| *v).collect();
    /// assert_eq!(hits, ["near"]);
    /// ```
    pub fn query_circle(&self, circle: Circle) -> Query<'_, T, Circle> {
        Query::new(self, circle)
    }

    /// The items whose boxes contain the point (edges included).
    ///
    /// ```
    /// use quadrat::{Aabb, QuadTree};
    /// let mut tree = QuadTree::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// tree.insert(Aabb::new([10.0, 10.0], [20.0, 20.0]), "button");
    /// assert_eq!(tree.query_point([20.0, 15.0]).count(), 1);
    /// assert_eq!(tree.query_point([20.5, 15.0]).count(), 0);
    /// ```
    pub fn query_point(&self, p: impl Into<Vec2>) -> Query<'_, T, Vec2> {
        Query::new(self, p.into())
    }

    /// The items whose boxes intersect any [`Region`].
    ///
    /// ```
    /// use quadrat::{Aabb, Circle, QuadTree};
    /// let mut tree = QuadTree::new(Aabb::new([0.0, 0.0], [10.0, 10.0]));
    /// tree.insert(Aabb::from_point([1.0, 1.0]), ());
    /// // A reference to a region is a region too.
    /// let blast = Circle::new([0.0, 0.0], 2.0);
    /// assert_eq!(tree.query_region(&blast).count(), 1);
    /// ```
    pub fn query_region<R: Region>(&self, region: R) -> Query<'_, T, R> {
        Query::new(self, region)
    }

    /// Calls `visit` for each item whose box intersects `region`, stopping
    /// early when it returns [`ControlFlow::Break`]; returns the break value.
    ///
    /// ```
    /// use core::ops::ControlFlow;
    /// use quadrat::{Aabb, QuadTree};
    /// let mut tree = QuadTree::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// tree.insert(Aabb::new([10.0, 10.0], [20.0, 20.0]), "wall");
    /// let any = tree.visit_region(Aabb::new([0.0, 0.0], [15.0, 15.0]), |_, v| ControlFlow::Break(*v));
    /// assert_eq!(any, Some("wall"));
    /// ```
    pub fn visit_region<R: Region, B>(
        &self,
        region: R,
        mut visit: impl FnMut(Key, &T) -> ControlFlow<B>,
    ) -> Option<B> {
        self.walk_region(&region, |e| {
            match self.slab.slots[e.owner as usize].value() {
                Some(v) => visit(e.key(), v),
                None => ControlFlow::Continue(()),
            }
        })
    }

    /// Appends the keys of the items whose boxes intersect `region` to `out`:
    /// the allocation-free form for hot loops that reuse one `Vec`.
    ///
    /// ```
    /// use quadrat::{Aabb, QuadTree};
    /// let mut tree = QuadTree::new(Aabb::new([0.0, 0.0], [100.0, 100.0]));
    /// let k = tree.insert(Aabb::new([10.0, 10.0], [20.0, 20.0]), ());
    /// let mut out = Vec::new();
    /// tree.query_keys_into(Aabb::new([0.0, 0.0], [15.0, 15.0]), &mut out);
    /// assert_eq!(out, vec![k]);
    /// ```
    pub fn query_keys_into<R: Region>(&self, region: R, out: &mut Vec<Key>) {
        let _ = self.walk_region(&region, |e| {
            out.push(e.key());
            ControlFlow::<()>::Continue(())
        });
    }

    /// Calls `f` with each entry whose box intersects `region`, stopping
    /// early when it returns [`ControlFlow::Break`]: the walk of [`Query`],
    /// as one loop, for the forms that do not hand out an iterator.
    #[inline]
    pub(crate) fn walk_region<R: Region, B>(
        &self,
        region: &R,
        mut f: impl FnMut(&Entry) -> ControlFlow<B>,
    ) -> Option<B> {
        if region.is_empty() {
            return None;
        }
        let ix = self.ix();
        let max_x = region.max_x();
        let mut stack = NodeStack::with_root();
        while let Some(n) = stack.pop() {
            let h = &ix.hot[n as usize];
            if !h.is_leaf() {
                for q in 0..4 {
                    let child = h.children + q;
                    let c = &ix.hot[child as usize];
                    if region.intersects_aabb(&c.sub) {
                        stack.push(child);
                        ix.warm(c);
                    }
                }
            }
            if h.len == 0 || !region.intersects_aabb(&ix.tight(n)) {
                continue;
            }
            for e in ix.run(n) {
                if e.aabb.min.x > max_x {
                    // Sorted by `min.x`: nothing further in this run can hit.
                    break;
                }
                if region.intersects_aabb(&e.aabb)
                    && let ControlFlow::Break(b) = f(e)
                {
                    return Some(b);
                }
            }
        }
        None
    }

    /// Calls `f` with the key and box of each item whose box intersects
    /// `area`.
    #[inline]
    pub(crate) fn for_each_entry_in(&self, area: Aabb, mut f: impl FnMut(Key, &Aabb)) {
        let _ = self.walk_region(&area, |e| {
            f(e.key(), &e.aabb);
            ControlFlow::<()>::Continue(())
        });
    }

    /// The node slot `idx`'s item is stored in ([`u32::MAX`] for a free
    /// slot). Only meaningful for a placed tree (see
    /// `QuadTree::undefer`, which callers run first): a deferred tree's
    /// places name no node (see `Place::node`).
    #[inline]
    pub(crate) fn node_of_slot(&self, idx: usize) -> u32 {
        match self.slab.slots.get(idx) {
            Some(s) if s.is_full() => self.slab.places[idx].node,
            _ => u32::MAX,
        }
    }

    /// The key of the item in slot `idx`, if that slot holds one.
    #[inline]
    pub(crate) fn live_key_at(&self, idx: usize) -> Option<Key> {
        let slot = self.slab.slots.get(idx)?;
        slot.value()?;
        Some(self.slab.key_at(idx))
    }
}
