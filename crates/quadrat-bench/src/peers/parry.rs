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
//! Ray casts: `Bvh::find_best`, the best-first search behind
//! `Bvh::cast_ray` (the nearer child first, pruned by the best hit so far),
//! with the same node test as `cast_ray` (parry2d's `f32` slab test,
//! `Aabb::cast_local_ray`) and quadrat's own test on the leaves: each
//! leaf's box (from `Bvh::leaf_node`) is measured with
//! [`Ray::intersect_aabb`], so hits and distances are quadrat's. Two
//! corrections keep the search from losing a box that quadrat hits:
//!
//! - quadrat casts in `f64` with the direction normalised in `f64`, so
//!   parry2d's `f32` slab test can put a box a few ulps farther than quadrat
//!   does, or miss a box the ray only grazes (at a corner, where the ray
//!   enters and leaves at once). The node test is therefore run on each
//!   node's box grown by a margin (see [`Parry::raycast`]), far wider than
//!   those roundings, so every node holding a box that quadrat hits is
//!   entered, and entered no later than quadrat's distance to that box.
//! - The search keeps a leaf, and enters a node, only when it is strictly
//!   nearer than the best so far, starting from the maximum distance, so the
//!   maximum is passed one ulp up to make it inclusive as quadrat's is;
//!   quadrat's test then enforces the maximum itself.
//!
//! At a tie the first box found wins, where quadrat takes the smallest key.
//! The grown boxes cost four additions per node test, and quadrat's test
//! replaces parry2d's on the leaves the search reaches. A depth-first
//! `Bvh::traverse` with parry2d's own tests, which could break ties by
//! index, took about 15 times as long as `Bvh::cast_ray` (370 ms against
//! 25 ms for 10k rays at 1M boxes).
//!
//! Moving frame: [`Parry`] calls `insert_or_update_partially` for every leaf
//! (margin 0, so leaves stay tight and nothing needs filtering), then
//! `refit` and `optimize_incremental`, the per-step sequence rapier uses;
//! [`ParryRebuild`] builds a new BVH every frame instead.

use parry2d::bounding_volume::Aabb as ParryAabb;
use parry2d::math::Vector;
use parry2d::partitioning::{Bvh, BvhBuildStrategy, BvhNode, BvhWorkspace};
use parry2d::query::{Ray as ParryRay, RayCast};
use quadrat::{Aabb, Ray};

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
    /// `max_dist`, as `(index, distance)`, both as quadrat's
    /// [`Ray::intersect_aabb`] defines them: the Euclidean distance from the
    /// origin to where the ray enters the box (0 when the origin is inside),
    /// whatever the length of `dir`. `None` for an invalid ray or a NaN or
    /// negative `max_dist`, as in quadrat.
    ///
    /// parry2d gets the direction normalised as quadrat normalises it (in
    /// `f64`), rounded to `f32`, with components below `f32::MIN_POSITIVE`
    /// set to 0. Its node test runs on boxes grown on every side by
    /// `2⁻¹⁸ r`, where `r` is the origin's largest coordinate magnitude plus
    /// the reach: `max_dist`, or, when less, that magnitude plus the largest
    /// coordinate magnitude of the tree's root box. Where the ray hits a box
    /// within reach, the coordinates and their differences from the origin
    /// that decide the hit are at most `2.5 r` in magnitude, so parry2d's
    /// `f32` slab test (four roundings of relative 2⁻²⁴: the unit direction,
    /// its reciprocal, the difference, the product) is off by less than
    /// `10 r 2⁻²⁴` at each crossing, and the margin, over six times that,
    /// moves every entry earlier and every exit later than quadrat's. A
    /// component set to 0 moves the ray by less than `2.5 r 2⁻¹²⁶` along its
    /// axis within reach, also far inside the margin.
    #[must_use]
    pub fn raycast(&self, origin: [f32; 2], dir: [f32; 2], max_dist: f32) -> Option<(u32, f32)> {
        let exact = Ray::new(origin, dir);
        if exact.validate().is_err()
            || max_dist.is_nan()
            || max_dist < 0.0
            || self.bvh.leaf_count() == 0
        {
            return None;
        }
        let ray = ParryRay::new(Vector::new(origin[0], origin[1]), unit(dir));
        let grow = Vector::splat(margin(origin, max_dist, &self.bvh.root_aabb()));
        self.bvh.find_best(
            max_dist.next_up(),
            |node: &BvhNode, best| {
                let b = node.aabb();
                ParryAabb::new(b.mins - grow, b.maxs + grow)
                    .cast_local_ray(&ray, best, true)
                    .unwrap_or(f32::INFINITY)
            },
            |leaf, _| {
                let b = self.bvh.leaf_node(leaf)?.aabb();
                let b = Aabb::new([b.mins.x, b.mins.y], [b.maxs.x, b.maxs.y]);
                exact.intersect_aabb(&b, max_dist)
            },
        )
    }
}

/// `dir` normalised in `f64` as quadrat does, rounded to `f32`, with
/// components below `f32::MIN_POSITIVE` set to 0 (as subnormals they would
/// lose their relative precision, and their reciprocals can overflow).
fn unit(dir: [f32; 2]) -> Vector {
    let (dx, dy) = (f64::from(dir[0]), f64::from(dir[1]));
    let len = (dx * dx + dy * dy).sqrt();
    let component = |c: f64| {
        let u = c / len;
        if u.abs() < f64::from(f32::MIN_POSITIVE) {
            0.0
        } else {
            u as f32
        }
    };
    Vector::new(component(dx), component(dy))
}

/// How far the node boxes are grown for a ray cast from `origin` within
/// `max_dist` through a tree whose boxes lie in `root`: `2⁻¹⁸ r`, rounded
/// up, with `r` as in [`Parry::raycast`]; at least `f32::MIN_POSITIVE`.
fn margin(origin: [f32; 2], max_dist: f32, root: &ParryAabb) -> f32 {
    let o = f64::from(origin[0].abs().max(origin[1].abs()));
    let extent = [root.mins.x, root.mins.y, root.maxs.x, root.maxs.y]
        .into_iter()
        .fold(0f64, |m, v| m.max(f64::from(v.abs())));
    let r = o + f64::from(max_dist).min(o + extent);
    let m = (r * 2f64.powi(-18)).max(f64::from(f32::MIN_POSITIVE));
    // Rounded up: `as` rounds to the nearest `f32`, possibly below.
    (m as f32).next_up()
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
