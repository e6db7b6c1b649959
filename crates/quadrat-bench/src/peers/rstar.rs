//! [`rstar`]'s R*-tree, bulk loaded.
//!
//! Envelope intersection in rstar is closed (`lower <= other.upper` and
//! `upper >= other.lower` on both axes) and computed in `f32`, so candidates
//! are exact and no filtering is needed.
//!
//! All pairs join the tree with itself through
//! `intersection_candidates_with_other_tree`, keeping `(a, b)` with `a < b`
//! (the join yields both orders and each box with itself). One
//! `locate_in_envelope_intersecting_int` query per box, keeping hits with a
//! larger index, gives the same pairs about 5% slower (2.27 against 2.17 ms at
//! 10k boxes, 24.7 against 23.4 ms at 100k).
//!
//! Point queries use `locate_all_at_point_int`, whose test (the closed box
//! contains the point) is exact in `f32`.
//!
//! # Distances
//!
//! quadrat measures the distance from a point to a box in `f64`
//! ([`Aabb::distance_squared_to_point`], and its square root rounded to `f32`
//! by [`Aabb::distance_to_point`]); rstar's own `AABB::distance_2` squares
//! and sums `f32` gaps, which differs in the last bits, overflows above about
//! 1.8e19 and underflows below about 1e-19. So the adapter gives rstar, as
//! each leaf's [`PointDistance::distance_2`], quadrat's squared distance
//! rounded to `f32`: rstar then ranks the boxes as quadrat does, except
//! where that rounding (or its overflow and underflow) merges distances.
//! Its nodes keep rstar's own `AABB::distance_2`, which can exceed the
//! leaf value of a box inside by a few ulps. Both are at most
//! [`key_limit`]`(d)` for a box at quadrat distance `d`, a bound with a wide
//! margin (relative 2⁻²⁰ against four roundings of 2⁻²⁴).
//!
//! - The k nearest boxes come from `nearest_neighbor_iter_with_distance_2`,
//!   rstar's best-first iterator. The adapter takes its first `k` boxes,
//!   measures each with [`Aabb::distance_to_point`], and then keeps taking
//!   boxes while rstar's value for them is at most [`key_limit`] of the
//!   largest of those `k` distances. A box not yet yielded is in rstar's
//!   queue, or under a node in it, with a value at least that of the last
//!   box yielded and at most [`key_limit`] of the box's own distance, so
//!   once a value passes the limit no box left is nearer. Usually that
//!   takes one more box, which shows that rstar's first `k` are the
//!   nearest; at a near tie it takes a few more, and the `k` nearest of
//!   them by quadrat's distance are kept, in rstar's order among equal
//!   distances (a stable sort). So the answer is quadrat's, with quadrat's
//!   distances, except that boxes at exactly the same distance come in no
//!   particular order.
//! - Circle queries use `locate_within_distance` with the squared radius
//!   raised to [`key_limit`] of the radius, which every box the disc
//!   touches stays within, and filter the candidates with
//!   [`Circle::intersects_aabb`], quadrat's test.
//!
//! So each query pays for one extra box from the iterator and a distance
//! per box reported (nearest), or an exact test per candidate (circles),
//! beyond rstar's own search.

use core::ops::ControlFlow;

use ::rstar::{AABB, Envelope, PointDistance, RTree, RTreeObject};
use quadrat::{Aabb, Circle};

use super::{Bbox, BroadPhase};

/// A box as stored in the tree.
#[derive(Clone, Copy, Debug)]
struct Entry {
    envelope: AABB<[f32; 2]>,
    id: u32,
}

impl Entry {
    /// The box, as quadrat measures it.
    fn aabb(&self) -> Aabb {
        Aabb::new(self.envelope.lower(), self.envelope.upper())
    }
}

impl RTreeObject for Entry {
    type Envelope = AABB<[f32; 2]>;

    fn envelope(&self) -> Self::Envelope {
        self.envelope
    }
}

impl PointDistance for Entry {
    /// quadrat's squared distance from `point` to the closed box (0 inside
    /// and on the edge), computed in `f64` and rounded to `f32`.
    fn distance_2(&self, point: &[f32; 2]) -> f32 {
        self.aabb().distance_squared_to_point(*point) as f32
    }

    fn contains_point(&self, point: &[f32; 2]) -> bool {
        self.envelope.contains_point(point)
    }
}

/// An upper bound, in `f64`, on the values rstar ranks a box by (its leaf
/// [`PointDistance::distance_2`] and the `AABB::distance_2` of every node
/// above it) when quadrat puts the box at distance `d` or nearer; infinite
/// where those values may overflow `f32`.
///
/// Such a box has an exact squared distance below `next_up(d)²` (quadrat
/// would round it to more than `d` otherwise), and each value is that
/// squared distance after at most four roundings in `f32` (relative error
/// 2⁻²⁴ each, or 2⁻¹⁵⁰ absolute below the normal range), well within the
/// margin of 2⁻²⁰ relative and 2⁻¹⁴⁰ absolute. A node is never farther than
/// the boxes inside it: rstar's gaps to a larger box are no larger, and
/// rounding keeps that order.
#[must_use]
fn key_limit(d: f32) -> f64 {
    let next = f64::from(d.next_up());
    let limit = next * next * (1.0 + 2f64.powi(-20)) + 2f64.powi(-140);
    if limit < f64::from(f32::MAX) {
        limit
    } else {
        f64::INFINITY
    }
}

fn envelope(b: &Bbox) -> AABB<[f32; 2]> {
    AABB::from_corners([b[0], b[1]], [b[2], b[3]])
}

/// A bulk-loaded R*-tree; all pairs by joining the tree with itself.
pub struct Rstar {
    tree: RTree<Entry>,
}

impl Rstar {
    /// Appends the index of every box that shares a point with the closed
    /// disc (quadrat's [`Circle::intersects_aabb`]) to `out`: rstar's
    /// `locate_within_distance` over a squared radius raised to the bound
    /// `key_limit` (see the module docs), then quadrat's test on each
    /// candidate. A negative or NaN radius finds nothing.
    pub fn query_circle(&self, center: [f32; 2], radius: f32, out: &mut Vec<u32>) {
        if radius.is_nan() || radius < 0.0 {
            return;
        }
        let circle = Circle::new(center, radius);
        // Rounded up: `as` rounds to the nearest `f32`, possibly below.
        let reach = (key_limit(radius) as f32).next_up();
        out.extend(
            self.tree
                .locate_within_distance(center, reach)
                .filter(|e| circle.intersects_aabb(&e.aabb()))
                .map(|e| e.id),
        );
    }

    /// Appends the index of every box containing `point` (edges included)
    /// to `out`.
    pub fn query_point(&self, point: [f32; 2], out: &mut Vec<u32>) {
        let _ = self.tree.locate_all_at_point_int(point, |e| {
            out.push(e.id);
            ControlFlow::<()>::Continue(())
        });
    }

    /// Appends the `k` boxes nearest to `point` by quadrat's distance
    /// ([`Aabb::distance_to_point`]), as `(index, distance)`, to `out`, in
    /// the order rstar's iterator yields them (see the module docs). Boxes
    /// at exactly the same distance come in no particular order. Nothing for
    /// `k = 0` or a non-finite point, as in quadrat.
    pub fn nearest(&self, point: [f32; 2], k: usize, out: &mut Vec<(u32, f32)>) {
        if k == 0 || !(point[0].is_finite() && point[1].is_finite()) {
            return;
        }
        let start = out.len();
        let mut boxes = self.tree.nearest_neighbor_iter_with_distance_2(point);
        let measure = |e: &Entry| (e.id, e.aabb().distance_to_point(point));
        out.extend(boxes.by_ref().take(k).map(|(e, _)| measure(e)));
        if out.len() - start < k {
            return;
        }
        // The distance within which the `k` nearest lie.
        let farthest = out[start..].iter().fold(0f32, |m, h| m.max(h.1));
        let limit = key_limit(farthest);
        out.extend(
            boxes
                .take_while(|&(_, key)| f64::from(key) <= limit)
                .map(|(e, _)| measure(e)),
        );
        if out.len() - start > k {
            // Stable: equal distances stay in rstar's order.
            out[start..].sort_by(|a, b| a.1.total_cmp(&b.1));
            out.truncate(start + k);
        }
    }
}

impl BroadPhase for Rstar {
    const NAME: &'static str = "rstar";

    fn build(_world: Bbox, boxes: &[Bbox]) -> Self {
        let entries = boxes
            .iter()
            .enumerate()
            .map(|(i, b)| Entry {
                envelope: envelope(b),
                id: i as u32,
            })
            .collect();
        Self {
            tree: RTree::bulk_load(entries),
        }
    }

    fn pairs_into(&mut self, out: &mut Vec<(u32, u32)>) {
        out.extend(
            self.tree
                .intersection_candidates_with_other_tree(&self.tree)
                .filter(|(a, b)| a.id < b.id)
                .map(|(a, b)| (a.id, b.id)),
        );
    }

    fn query(&mut self, area: Bbox, out: &mut Vec<u32>) {
        let _ = self
            .tree
            .locate_in_envelope_intersecting_int(envelope(&area), |e| {
                out.push(e.id);
                ControlFlow::<()>::Continue(())
            });
    }
}
