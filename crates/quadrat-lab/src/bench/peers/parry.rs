//! [`parry2d`]'s BVH (`parry2d::partitioning::Bvh`), the broad phase behind
//! rapier.
//!
//! Node tests are closed (`mins <= other.maxs && maxs >= other.mins`) in
//! `f32`, so results are exact without filtering.
//!
//! Build: `Bvh::from_iter` with the binned SAH strategy (49 ms against 84 ms
//! for PLOC, build + pairs at 100k boxes). All pairs: the self-traversal of
//! the bounding-volume test tree, `traverse_bvtt_single_tree::<false>` (no
//! change detection: every overlapping leaf pair is reported once). Queries:
//! `intersect_aabb`.
//!
//! Ray casts: `Bvh::cast_ray`, parry2d's best-first search (the nearer
//! child first, pruned by the best hit so far), with `Aabb::cast_local_ray`
//! on the leaf's box (from `Bvh::leaf_node`) as the leaf test. Its slab test
//! is the same `f32` arithmetic as quadrat's (the reciprocal of each
//! direction component times the distances to the two sides), so with the
//! same direction the distances agree bit for bit. The search keeps a leaf
//! only when it is strictly nearer than the best so far, starting from the
//! maximum distance, so the maximum is passed one ulp up to make it
//! inclusive as quadrat's is; at a tie the first box found wins, where
//! quadrat takes the smallest key. A depth-first `Bvh::traverse` with the
//! same test, which could break ties by index, took about 15 times as long
//! (370 ms against 25 ms for 10k rays at 1M boxes).
//!
//! Moving frame: [`Parry`] calls `insert_or_update_partially` for every leaf
//! (margin 0, so leaves stay tight and nothing needs filtering), then
//! `refit` and `optimize_incremental`, the per-step sequence rapier uses;
//! [`ParryRebuild`] builds a new BVH every frame instead.

use parry2d::bounding_volume::Aabb as ParryAabb;
use parry2d::math::Vector;
use parry2d::partitioning::{Bvh, BvhBuildStrategy, BvhWorkspace};
use parry2d::query::{Ray, RayCast};

use super::{Bbox, BroadPhase, ordered};

fn aabb(b: &Bbox) -> ParryAabb {
    ParryAabb::new(Vector::new(b[0], b[1]), Vector::new(b[2], b[3]))
}

/// A parry2d BVH, updated in place between frames.
///
/// [`ParryRebuild`] is the same BVH built anew every frame.
pub struct Parry {
    bvh: Bvh,
    workspace: BvhWorkspace,
}

impl Parry {
    /// The first box the ray from `origin` along `dir` hits within
    /// `max_dist`, as `(index, distance)` (0 when the origin is inside).
    /// Distances are in lengths of `dir`, so Euclidean for a unit `dir`.
    #[must_use]
    pub fn raycast(&self, origin: [f32; 2], dir: [f32; 2], max_dist: f32) -> Option<(u32, f32)> {
        let ray = Ray::new(
            Vector::new(origin[0], origin[1]),
            Vector::new(dir[0], dir[1]),
        );
        let cost = max_dist.next_up();
        self.bvh.cast_ray(&ray, cost, |leaf, best| {
            let node = self.bvh.leaf_node(leaf)?;
            node.aabb().cast_local_ray(&ray, best, true)
        })
    }
}

impl BroadPhase for Parry {
    const NAME: &'static str = "parry2d";
    const INCREMENTAL: bool = true;

    fn build(_world: Bbox, boxes: &[Bbox]) -> Self {
        Self {
            bvh: Bvh::from_iter(BvhBuildStrategy::Binned, boxes.iter().map(aabb).enumerate()),
            workspace: BvhWorkspace::default(),
        }
    }

    fn pairs_into(&mut self, out: &mut Vec<(u32, u32)>) {
        self.bvh
            .traverse_bvtt_single_tree::<false>(&mut self.workspace, &mut |a, b| {
                out.push(ordered(a, b))
            });
    }

    fn query(&mut self, area: Bbox, out: &mut Vec<u32>) {
        out.extend(self.bvh.intersect_aabb(&aabb(&area)));
    }

    /// Moves every leaf, then refits and re-optimises the tree.
    fn update(&mut self, _world: Bbox, boxes: &[Bbox]) {
        for (i, b) in boxes.iter().enumerate() {
            self.bvh.insert_or_update_partially(aabb(b), i as u32, 0.0);
        }
        self.bvh.refit(&mut self.workspace);
        self.bvh.optimize_incremental(&mut self.workspace);
    }
}

/// A parry2d BVH built anew every frame (in the moving benchmark only: for
/// build + pairs and queries it is [`Parry`]).
pub struct ParryRebuild(Parry);

impl BroadPhase for ParryRebuild {
    const NAME: &'static str = "parry2d-rebuild";
    const INCREMENTAL: bool = false;

    fn build(world: Bbox, boxes: &[Bbox]) -> Self {
        ParryRebuild(Parry::build(world, boxes))
    }

    fn pairs_into(&mut self, out: &mut Vec<(u32, u32)>) {
        self.0.pairs_into(out);
    }

    fn query(&mut self, area: Bbox, out: &mut Vec<u32>) {
        self.0.query(area, out);
    }

    fn update(&mut self, world: Bbox, boxes: &[Bbox]) {
        self.0 = Parry::build(world, boxes);
    }
}
