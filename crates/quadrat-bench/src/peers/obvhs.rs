//! [`obvhs`] 0.4's binary BVH (`obvhs::bvh2::Bvh2`), built by PLOC.
//!
//! obvhs is a 3D library. Each box, and each query box, becomes an
//! `obvhs::aabb::Aabb` with its x and y bounds unchanged and z in `[0, 1]`.
//!
//! Build: `PlocBuilder::build_with_bvh` with `PlocSearchDistance::Minimum`,
//! `SortPrecision::U64` and no search-depth threshold, as obvhs's `physics`
//! example does for the broad phase of a dynamic scene. These are the
//! settings of `BvhBuildParams::fastest_build`, whose reinsertion and leaf
//! collapse passes are off. Every leaf holds one box. The adapter keeps the
//! builder and the tree and reuses their allocations. obvhs is built without
//! its `parallel` feature (rayon), so it runs on one thread.
//!
//! Semantics: `Aabb::intersect_aabb`, the node test of obvhs's traversal, is
//! closed (`!(min > other.max || max < other.min)` per axis, in `f32`). The
//! leaves hold the boxes exactly, and inner nodes hold unions of them (`min`
//! and `max`, which round nothing). Every box has the same z interval, so z
//! never rejects a node. The results are therefore exact without growing
//! or filtering, touching boxes and zero-size boxes included.
//!
//! Why z spans `[0, 1]` and not `[0, 0]`: PLOC merges neighbours in Morton
//! order by the half surface area of their union, `(dx + dy) dz + dx dy`.
//! With `dz = 0` that is the 2D area, which is 0 for any union of collinear
//! points or segments. With search distance 1, equal costs let only one pair
//! merge per pass. 20k points on one line then took 1.35 s to build a tree
//! 20,000 levels deep, and its pairs took 1.46 s more. With `dz = 1` the
//! build took 3.9 ms and the depth was 20. (A zero z extent also makes the
//! Morton offset `0 × ∞ = NaN`, which the cast to an integer turns into 0.)
//! On the benchmark scenes, `dz` of 0, 1 and 10 built the same trees in the
//! same time. Identical boxes still tie, and obvhs builds a tree as deep as
//! their number, but then every pair among them is in the output anyway.
//!
//! Queries: `Bvh2::aabb_traverse`, obvhs's stack traversal, which calls back
//! for every leaf the query box intersects. The callback reads the leaf's
//! boxes through `primitive_indices`.
//!
//! All pairs: obvhs has no tree-against-tree traversal, so the adapter runs
//! one `aabb_traverse` per box and keeps hits with a larger index. It takes
//! the boxes in the order of the leaves in the node array, which follows
//! the Morton order closely. Index order, which is random in space on these
//! scenes, took twice as long: 124 against 57 ms for the pairs at 100k
//! uniform boxes, after a 23 ms build.
//!
//! Moving frames: rebuild, with PLOC as above, in the same allocations.
//! obvhs also offers `Bvh2::refit_all`, reinsertion and partial rebuilds,
//! which its `physics` example offers as other modes. A refit alone lets
//! the tree decay as boxes move, and it is the wrong tool when boxes
//! teleport. The example's default per-frame mode is this full rebuild.

use ::obvhs::aabb::Aabb;
use ::obvhs::bvh2::Bvh2;
use ::obvhs::ploc::{PlocBuilder, PlocSearchDistance, SortPrecision};

use super::{Bbox, BroadPhase};

/// The box as an obvhs box, with z in `[0, 1]` (see the module docs).
fn aabb(b: &Bbox) -> Aabb {
    Aabb::new([b[0], b[1], 0.0].into(), [b[2], b[3], 1.0].into())
}

/// An obvhs BVH, rebuilt by PLOC for every frame, with the builder's and the
/// tree's allocations kept from frame to frame.
pub struct Obvhs {
    bvh: Bvh2,
    builder: PlocBuilder,
    aabbs: Vec<Aabb>,
}

impl Obvhs {
    /// Rebuilds the tree over `boxes`, reusing the allocations.
    fn rebuild(&mut self, boxes: &[Bbox]) {
        assert!(
            u32::try_from(boxes.len()).is_ok(),
            "too many boxes for the obvhs adapter"
        );
        self.aabbs.clear();
        self.aabbs.extend(boxes.iter().map(aabb));
        let mut indices = std::mem::take(&mut self.bvh.primitive_indices);
        indices.clear();
        indices.extend(0..boxes.len() as u32);
        self.builder.build_with_bvh(
            &mut self.bvh,
            PlocSearchDistance::Minimum,
            &self.aabbs,
            indices,
            SortPrecision::U64,
            0,
        );
    }

    /// Calls `hit` with the index of every box whose (closed) box intersects
    /// `area`.
    #[inline]
    fn traverse(bvh: &Bvh2, area: Aabb, mut hit: impl FnMut(u32)) {
        bvh.aabb_traverse(area, |bvh, node| {
            let node = &bvh.nodes[node as usize];
            let first = node.first_index as usize;
            for &j in &bvh.primitive_indices[first..first + node.prim_count as usize] {
                hit(j);
            }
            true
        });
    }
}

impl BroadPhase for Obvhs {
    const NAME: &'static str = "obvhs";

    fn build(_world: Bbox, boxes: &[Bbox]) -> Self {
        let mut index = Self {
            bvh: Bvh2::default(),
            builder: PlocBuilder::with_capacity(boxes.len()),
            aabbs: Vec::with_capacity(boxes.len()),
        };
        index.rebuild(boxes);
        index
    }

    /// One query per box, with the boxes taken in the order of the tree's
    /// leaves, keeping hits with a larger index.
    fn pairs_into(&mut self, out: &mut Vec<(u32, u32)>) {
        let (bvh, aabbs) = (&self.bvh, &self.aabbs);
        for leaf in bvh.nodes.iter().filter(|node| node.is_leaf()) {
            let first = leaf.first_index as usize;
            for &i in &bvh.primitive_indices[first..first + leaf.prim_count as usize] {
                Self::traverse(bvh, aabbs[i as usize], |j| {
                    if i < j {
                        out.push((i, j));
                    }
                });
            }
        }
    }

    fn query(&mut self, area: Bbox, out: &mut Vec<u32>) {
        Self::traverse(&self.bvh, aabb(&area), |j| out.push(j));
    }

    /// Rebuilds the tree in the same allocations.
    fn update(&mut self, _world: Bbox, boxes: &[Bbox]) {
        self.rebuild(boxes);
    }
}

#[cfg(test)]
mod tests {
    use quadrat::scenario::Rng;

    use super::super::Brute;
    use super::*;

    const WORLD: Bbox = [0.0, 0.0, 100.0, 100.0];

    /// Boxes on a small integer lattice, many of them points, segments,
    /// duplicates, or touching others along an edge or at a corner.
    fn scene(n: usize, seed: u64) -> Vec<Bbox> {
        let mut rng = Rng::new(seed);
        let mut coord = |hi: u64| rng.below(hi) as f32;
        (0..n)
            .map(|_| {
                let (x, y) = (coord(40), coord(40));
                let (w, h) = (coord(4), coord(4));
                [x, y, x + w, y + h]
            })
            .collect()
    }

    fn check(boxes: &[Bbox], queries: &[Bbox]) {
        let mut brute = Brute::build(WORLD, boxes);
        let mut ours = Obvhs::build(WORLD, boxes);
        assert_eq!(ours.pairs(), brute.pairs(), "pairs of {boxes:?}");
        assert_eq!(ours.queries(queries), brute.queries(queries));
    }

    #[test]
    fn touching_degenerate_and_shared_edges_match_brute_force() {
        let cases: [&[Bbox]; 7] = [
            // Two squares sharing the edge x = 1.
            &[[0.0, 0.0, 1.0, 1.0], [1.0, 0.0, 2.0, 1.0]],
            // Two squares sharing only the corner (1, 1).
            &[[0.0, 0.0, 1.0, 1.0], [1.0, 1.0, 2.0, 2.0]],
            // A square and a point on its edge, and one on its corner.
            &[
                [0.0, 0.0, 1.0, 1.0],
                [1.0, 0.5, 1.0, 0.5],
                [0.0, 0.0, 0.0, 0.0],
            ],
            // Two identical points, and a third one apart.
            &[
                [3.0, 3.0, 3.0, 3.0],
                [3.0, 3.0, 3.0, 3.0],
                [4.0, 3.0, 4.0, 3.0],
            ],
            // Segments: crossing, meeting end to end, collinear apart.
            &[
                [0.0, 1.0, 2.0, 1.0],
                [1.0, 0.0, 1.0, 2.0],
                [2.0, 1.0, 3.0, 1.0],
                [3.5, 1.0, 4.0, 1.0],
            ],
            // Only points, all on one line (zero extent in y for the scene).
            &[
                [0.0, 5.0, 0.0, 5.0],
                [1.0, 5.0, 1.0, 5.0],
                [1.0, 5.0, 1.0, 5.0],
                [2.0, 5.0, 2.0, 5.0],
            ],
            // A single box, and (below) none at all.
            &[[1.0, 1.0, 2.0, 2.0]],
        ];
        let queries = [
            [1.0, 1.0, 1.0, 1.0],
            [2.0, 0.0, 3.0, 1.0],
            [-1.0, -1.0, 0.0, 0.0],
            [3.0, 3.0, 3.0, 3.0],
            [1.0, 5.0, 2.0, 5.0],
            [-10.0, -10.0, 10.0, 10.0],
            [0.5, 0.5, 0.5, 0.5],
            [7.0, 7.0, 8.0, 8.0],
        ];
        for case in cases {
            check(case, &queries);
        }
        check(&[], &queries);
    }

    #[test]
    fn lattice_scenes_match_brute_force() {
        for seed in 1..=4 {
            let boxes = scene(600, seed);
            let queries = scene(100, seed + 100);
            check(&boxes, &queries);
        }
    }

    #[test]
    fn collinear_scenes_match_brute_force_in_a_shallow_tree() {
        // Points and segments on one line: the union areas PLOC compares
        // would all be 0 with a flat z range.
        let boxes: Vec<Bbox> = (0..2000)
            .map(|i| {
                let x = (i / 2) as f32 * 0.5;
                let w = if i % 2 == 0 { 0.0 } else { 0.75 };
                [x, 5.0, x + w, 5.0]
            })
            .collect();
        let queries = [
            [0.0, 5.0, 0.0, 5.0],
            [10.0, 0.0, 20.0, 5.0],
            [3.0, 6.0, 4.0, 7.0],
        ];
        check(&boxes, &queries);
        let depth = Obvhs::build(WORLD, &boxes).bvh.depth(0);
        assert!(depth < 64, "depth {depth}");
    }

    #[test]
    fn update_matches_a_new_build() {
        let (a, b) = (scene(500, 7), scene(500, 8));
        let mut index = Obvhs::build(WORLD, &a);
        index.update(WORLD, &b);
        assert_eq!(index.pairs(), Brute::build(WORLD, &b).pairs());
        let queries = scene(50, 9);
        assert_eq!(
            index.queries(&queries),
            Brute::build(WORLD, &b).queries(&queries)
        );
    }
}
