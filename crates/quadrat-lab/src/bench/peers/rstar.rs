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
//! Circle and point queries use rstar's own routines,
//! `locate_within_distance` and `locate_all_at_point_int`, through a
//! [`PointDistance`] implementation that measures the distance to the box
//! exactly as quadrat does (clamp the point into the box, then the squared
//! length of the difference), so both report the same closed sets.
//!
//! The k nearest boxes come from `nearest_neighbor_iter_with_distance_2`,
//! the first `k` items of rstar's best-first iterator, which orders boxes by
//! the same [`PointDistance::distance_2`]. That squared distance is computed
//! with the same `f32` operations as quadrat's `Aabb::distance_squared_to_point`
//! (0 inside and on the edge; otherwise the clamped difference, squared and
//! summed), so its square root is quadrat's distance, bit for bit. Boxes at
//! equal distance come in no particular order.

use core::ops::ControlFlow;

use ::rstar::{AABB, Envelope, PointDistance, RTree, RTreeObject};

use super::{Bbox, BroadPhase};

/// A box as stored in the tree.
#[derive(Clone, Copy, Debug)]
struct Entry {
    envelope: AABB<[f32; 2]>,
    id: u32,
}

impl RTreeObject for Entry {
    type Envelope = AABB<[f32; 2]>;

    fn envelope(&self) -> Self::Envelope {
        self.envelope
    }
}

impl PointDistance for Entry {
    /// Squared distance from `point` to the closed box; 0 inside and on the
    /// edge.
    fn distance_2(&self, point: &[f32; 2]) -> f32 {
        self.envelope.distance_2(point)
    }

    fn contains_point(&self, point: &[f32; 2]) -> bool {
        self.envelope.contains_point(point)
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
    /// Appends the index of every box within `radius` of `center` (distance
    /// to the closed box at most `radius`) to `out`.
    pub fn query_circle(&self, center: [f32; 2], radius: f32, out: &mut Vec<u32>) {
        out.extend(
            self.tree
                .locate_within_distance(center, radius * radius)
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

    /// Appends the `k` boxes nearest to `point`, as `(index, distance)` by
    /// ascending Euclidean distance to the closed box (0 inside), to `out`.
    pub fn nearest(&self, point: [f32; 2], k: usize, out: &mut Vec<(u32, f32)>) {
        out.extend(
            self.tree
                .nearest_neighbor_iter_with_distance_2(point)
                .take(k)
                .map(|(e, d2)| (e.id, d2.sqrt())),
        );
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
