//! Pins down how each library treats boundary contacts, and how rstar and
//! parry2d measure nearest and ray-cast distances (in `f32`, where quadrat
//! uses `f64`), when used directly, without the adapters' corrections. The
//! adapters rely on these findings; the module docs of each adapter
//! (`src/peers/`) summarise them.

mod common;

use broccoli::aabb::pin::AabbPin;
use obvhs::aabb::Aabb as ObvhsAabb;
use obvhs::bvh2::Bvh2;
use obvhs::ploc::{PlocBuilder, PlocSearchDistance, SortPrecision};
use parry2d::bounding_volume::Aabb as ParryAabb;
use parry2d::math::Vector;
use parry2d::partitioning::{Bvh, BvhBuildStrategy, BvhWorkspace};
use quadrat_bench::peers::{BroadPhase, Brute, ordered};

/// Two unit squares sharing the edge `x = 1`.
const EDGE: [[f32; 4]; 2] = [[0.0, 0.0, 1.0, 1.0], [1.0, 0.0, 2.0, 1.0]];
/// Two unit squares sharing only the corner `(1, 1)`.
const CORNER: [[f32; 4]; 2] = [[0.0, 0.0, 1.0, 1.0], [1.0, 1.0, 2.0, 2.0]];
/// A unit square and a point on its edge.
const POINT_ON_EDGE: [[f32; 4]; 2] = [[0.0, 0.0, 1.0, 1.0], [1.0, 0.5, 1.0, 0.5]];
/// Two identical points.
const SAME_POINT: [[f32; 4]; 2] = [[3.0, 3.0, 3.0, 3.0], [3.0, 3.0, 3.0, 3.0]];
/// Two overlapping squares (control case).
const OVERLAP: [[f32; 4]; 2] = [[0.0, 0.0, 1.0, 1.0], [0.5, 0.5, 1.5, 1.5]];

const CASES: [[[f32; 4]; 2]; 5] = [EDGE, CORNER, POINT_ON_EDGE, SAME_POINT, OVERLAP];

fn broccoli_pairs(boxes: &[[f32; 4]]) -> usize {
    let mut elems: Vec<(broccoli::axgeom::Rect<f32>, u32)> = boxes
        .iter()
        .enumerate()
        .map(|(i, b)| (broccoli::rect(b[0], b[2], b[1], b[3]), i as u32))
        .collect();
    let mut tree = broccoli::Tree::new(&mut elems);
    let mut n = 0;
    tree.find_colliding_pairs(|_, _| n += 1);
    n
}

fn broccoli_rect_hits(boxes: &[[f32; 4]], q: [f32; 4]) -> usize {
    let mut elems: Vec<(broccoli::axgeom::Rect<f32>, u32)> = boxes
        .iter()
        .enumerate()
        .map(|(i, b)| (broccoli::rect(b[0], b[2], b[1], b[3]), i as u32))
        .collect();
    let mut tree = broccoli::Tree::new(&mut elems);
    let mut q = broccoli::rect(q[0], q[2], q[1], q[3]);
    let mut n = 0;
    tree.find_all_intersect_rect(AabbPin::new(&mut q), |_, _| n += 1);
    n
}

fn parry_aabb(b: &[f32; 4]) -> ParryAabb {
    ParryAabb::new(Vector::new(b[0], b[1]), Vector::new(b[2], b[3]))
}

fn parry_pairs(boxes: &[[f32; 4]]) -> usize {
    let leaves: Vec<_> = boxes.iter().map(parry_aabb).collect();
    let bvh = Bvh::from_leaves(BvhBuildStrategy::Binned, &leaves);
    let mut n = 0;
    bvh.traverse_bvtt_single_tree::<false>(&mut BvhWorkspace::default(), &mut |_, _| n += 1);
    n
}

fn parry_hits(boxes: &[[f32; 4]], q: [f32; 4]) -> usize {
    let leaves: Vec<_> = boxes.iter().map(parry_aabb).collect();
    let bvh = Bvh::from_leaves(BvhBuildStrategy::Binned, &leaves);
    let q = parry_aabb(&q);
    bvh.intersect_aabb(&q).count()
}

fn rstar_hits(boxes: &[[f32; 4]], q: [f32; 4]) -> usize {
    let tree = rstar::RTree::bulk_load(
        boxes
            .iter()
            .map(|b| rstar::primitives::Rectangle::from_corners([b[0], b[1]], [b[2], b[3]]))
            .collect(),
    );
    tree.locate_in_envelope_intersecting(rstar::AABB::from_corners([q[0], q[1]], [q[2], q[3]]))
        .count()
}

/// The box with z in `[0, dz]`.
fn obvhs_aabb(b: &[f32; 4], dz: f32) -> ObvhsAabb {
    ObvhsAabb::new([b[0], b[1], 0.0].into(), [b[2], b[3], dz].into())
}

/// obvhs's PLOC tree over `boxes`, one box per leaf, as the adapter builds
/// it, with z in `[0, dz]`.
fn obvhs_bvh(boxes: &[[f32; 4]], dz: f32) -> Bvh2 {
    let aabbs: Vec<_> = boxes.iter().map(|b| obvhs_aabb(b, dz)).collect();
    PlocBuilder::new().build(
        PlocSearchDistance::Minimum,
        &aabbs,
        (0..aabbs.len() as u32).collect(),
        SortPrecision::U64,
        0,
    )
}

fn obvhs_hits(boxes: &[[f32; 4]], q: [f32; 4], dz: f32) -> usize {
    let mut n = 0;
    obvhs_bvh(boxes, dz).aabb_traverse(obvhs_aabb(&q, dz), |bvh, node| {
        n += bvh.nodes[node as usize].prim_count as usize;
        true
    });
    n
}

#[derive(Clone, Copy)]
struct FsBox([f32; 4]);

impl flat_spatial::AABB for FsBox {
    type V2 = [f32; 2];
    fn ll(&self) -> [f32; 2] {
        [self.0[0], self.0[1]]
    }
    fn ur(&self) -> [f32; 2] {
        [self.0[2], self.0[3]]
    }
}

fn flat_spatial_hits(boxes: &[[f32; 4]], q: [f32; 4]) -> usize {
    let mut grid = flat_spatial::AABBGrid::new(1);
    for (i, b) in boxes.iter().enumerate() {
        grid.insert(FsBox(*b), i as u32);
    }
    grid.query(FsBox(q)).count()
}

#[test]
fn broccoli_colliding_pairs_are_closed() {
    for case in CASES {
        assert_eq!(broccoli_pairs(&case), 1, "{case:?}");
    }
}

#[test]
fn broccoli_rect_query_is_open() {
    // `find_all_intersect_rect` requires an intersection of positive extent.
    assert_eq!(broccoli_rect_hits(&EDGE[..1], EDGE[1]), 0);
    assert_eq!(broccoli_rect_hits(&CORNER[..1], CORNER[1]), 0);
    assert_eq!(broccoli_rect_hits(&POINT_ON_EDGE[..1], POINT_ON_EDGE[1]), 0);
    assert_eq!(broccoli_rect_hits(&SAME_POINT[..1], SAME_POINT[1]), 0);
    assert_eq!(broccoli_rect_hits(&OVERLAP[..1], OVERLAP[1]), 1);
    // Even a large query never reports a zero-size element.
    assert_eq!(
        broccoli_rect_hits(&SAME_POINT[..1], [0.0, 0.0, 10.0, 10.0]),
        0
    );
}

#[test]
fn parry_bvh_is_closed() {
    for case in CASES {
        assert_eq!(parry_pairs(&case), 1, "{case:?}");
        assert_eq!(parry_hits(&case[..1], case[1]), 1, "{case:?}");
    }
}

#[test]
fn rstar_is_closed() {
    for case in CASES {
        assert_eq!(rstar_hits(&case[..1], case[1]), 1, "{case:?}");
    }
}

#[test]
fn obvhs_aabb_traversal_is_closed() {
    for case in CASES {
        for dz in [0.0, 1.0] {
            // A tree that is a single leaf, and one with an inner root.
            assert_eq!(obvhs_hits(&case[..1], case[1], dz), 1, "{case:?}");
            assert_eq!(obvhs_hits(&case, case[1], dz), 2, "{case:?}");
        }
    }
}

#[test]
fn obvhs_ploc_chains_collinear_boxes_without_z_extent() {
    // With z in [0, 0], every union of points on a line has area 0, PLOC
    // merges one pair per pass, and the tree is a chain with a level per
    // point (`depth` counts levels); a z extent of 1 makes the union's half
    // area grow with its length.
    let points: Vec<[f32; 4]> = (0..1000).map(|i| [i as f32, 5.0, i as f32, 5.0]).collect();
    assert_eq!(obvhs_bvh(&points, 0.0).depth(0), points.len());
    assert!(obvhs_bvh(&points, 1.0).depth(0) < 30);
}

#[test]
fn flat_spatial_query_is_closed_on_small_integers() {
    for case in CASES {
        assert_eq!(flat_spatial_hits(&case[..1], case[1]), 1, "{case:?}");
    }
}

#[test]
fn flat_spatial_query_is_inexact_after_rounding() {
    // `AABB::intersects` compares `|(a.min + a.max) - (b.min + b.max)|` with
    // the sum of the widths. With sums that are not representable, rounding
    // turns some exact contacts into misses and some one-ulp gaps into hits.
    let (mut missed, mut admitted) = (0, 0);
    let mut rng = quadrat::scenario::Rng::new(7);
    for _ in 0..10_000 {
        let x0 = rng.range(0.0, 1000.0);
        let x1 = x0 + rng.range(0.0, 10.0);
        let x2 = x1 + rng.range(0.0, 10.0);
        let a = [x0, 0.0, x1, 1.0];
        if flat_spatial_hits(&[a], [x1, 0.0, x2, 1.0]) == 0 {
            missed += 1;
        }
        if flat_spatial_hits(&[a], [x1.next_up(), 0.0, x2.max(x1.next_up()), 1.0]) == 1 {
            admitted += 1;
        }
    }
    eprintln!(
        "flat_spatial: {missed} of 10000 edge contacts missed, \
         {admitted} of 10000 one-ulp gaps reported"
    );
    assert!(missed > 0, "expected some touching pairs to be missed");
    assert!(admitted > 0, "expected some separated pairs to be reported");
}

/// flat_spatial 0.6's visitor unwraps the cell of a query that fits in one
/// cell, and a cell no insert has touched does not exist: the adapter
/// checks for that case and returns no hits.
#[test]
#[should_panic(expected = "called `Option::unwrap()` on a `None` value")]
fn flat_spatial_visitor_panics_in_an_untouched_cell() {
    let mut grid = flat_spatial::AABBGrid::new(10);
    grid.insert(FsBox([0.0, 0.0, 1.0, 1.0]), 0u32);
    grid.query_visitor(FsBox([55.0, 55.0, 56.0, 56.0]), |_, _, _| {});
}

#[test]
fn broccoli_colliding_pairs_are_exact_on_edge_case_scenes() {
    // Native pairs on unexpanded boxes, against the definition.
    for seed in 1..=3 {
        let scene = common::edge_cases(2000, seed);
        let mut elems: Vec<(broccoli::axgeom::Rect<f32>, u32)> = scene
            .iter()
            .enumerate()
            .map(|(i, b)| (broccoli::rect(b[0], b[2], b[1], b[3]), i as u32))
            .collect();
        let mut got = Vec::new();
        broccoli::Tree::new(&mut elems).find_colliding_pairs(|a, b| got.push(ordered(a.1, b.1)));
        got.sort_unstable();
        let world = [0.0, 0.0, common::WORLD, common::WORLD];
        assert_eq!(got, Brute::build(world, &scene).pairs());
    }
}

/// A box of random size, a point near it (often on its edge), and a scale
/// from 2⁻⁹⁰ to 2⁶⁰, so that the `f32` squares underflow or overflow at the
/// ends. `[min_x, min_y, max_x, max_y]` and the point.
fn box_and_point(rng: &mut quadrat::scenario::Rng) -> ([f32; 4], [f32; 2]) {
    let (x, y) = (rng.range(0.0, 100.0), rng.range(0.0, 100.0));
    let (w, h) = (rng.range(0.0, 30.0), rng.range(0.0, 30.0));
    let p = match rng.below(3) {
        0 => [x + w, rng.range(y, y + h)],
        _ => [rng.range(-20.0, 150.0), rng.range(-20.0, 150.0)],
    };
    let s = 2f32.powi(rng.below(151) as i32 - 90);
    (
        [x * s, y * s, (x + w) * s, (y + h) * s],
        [p[0] * s, p[1] * s],
    )
}

/// rstar's squared distance from a point to a box squares and sums `f32`
/// gaps, where quadrat's is computed in `f64`: the two differ in the last
/// bits, and rstar's overflows to infinity (or underflows to 0) where
/// quadrat's distance is finite (or positive). It still never exceeds
/// `next_up(d)²` by more than a relative 2⁻²⁰ (plus 2⁻¹⁴⁰), `d` being
/// quadrat's distance: the bound the rstar adapter's nearest and circle
/// queries rely on (`key_limit`).
#[test]
fn rstar_box_distance_is_f32_arithmetic() {
    use rstar::AABB;
    let mut rng = quadrat::scenario::Rng::new(5);
    let (mut differ, mut overflow, mut underflow) = (0, 0, 0);
    for _ in 0..100_000 {
        let (b, p) = box_and_point(&mut rng);
        let ours = quadrat::Aabb::from(b);
        let theirs = AABB::from_corners([b[0], b[1]], [b[2], b[3]]).distance_2(&p);
        let d = ours.distance_to_point(p);
        let squared = ours.distance_squared_to_point(p);
        differ += usize::from(theirs != squared as f32);
        overflow += usize::from(theirs.is_infinite() && d.is_finite());
        underflow += usize::from(theirs == 0.0 && d > 0.0);
        let next = f64::from(d.next_up());
        let limit = next * next * (1.0 + 2f64.powi(-20)) + 2f64.powi(-140);
        assert!(
            f64::from(theirs) <= limit || limit >= f64::from(f32::MAX),
            "{b:?} from {p:?}: {theirs} against quadrat's {d}"
        );
    }
    eprintln!(
        "rstar: {differ} of 100000 squared distances differ from quadrat's, \
         {overflow} overflow, {underflow} underflow"
    );
    assert!(differ > 1000 && overflow > 0 && underflow > 0);
}

/// parry2d's ray-box test (`f32`, the direction as given) and quadrat's
/// (`f64`, the direction normalised) differ in the last bits of the
/// distance, and on rays that graze a corner of the box one may hit where
/// the other misses. Where both hit, they agree within a relative 2⁻²⁰.
/// This is why the parry2d adapter grows the node boxes it tests and
/// measures the leaves with quadrat's test.
#[test]
fn parry_ray_box_test_is_f32_arithmetic() {
    use parry2d::query::{Ray, RayCast};
    use quadrat_bench::probe::unit_direction;
    let mut rng = quadrat::scenario::Rng::new(6);
    let (mut hits, mut differ, mut grazes, mut disagree) = (0, 0, 0, 0);
    for _ in 0..100_000 {
        let o = [rng.range(-50.0, 150.0), rng.range(-50.0, 150.0)];
        let b = [
            rng.range(0.0, 100.0),
            rng.range(0.0, 100.0),
            rng.range(0.0, 100.0),
            rng.range(0.0, 100.0),
        ];
        let b = [
            b[0].min(b[2]),
            b[1].min(b[3]),
            b[0].max(b[2]),
            b[1].max(b[3]),
        ];
        // Half the rays aim at a corner of the box, so they only graze it
        // when the corner faces away.
        let d = if rng.below(2) == 0 {
            let c = [b[pick_corner(&mut rng)], b[1 + pick_corner(&mut rng)]];
            let (dx, dy) = (f64::from(c[0] - o[0]), f64::from(c[1] - o[1]));
            let len = dx.hypot(dy);
            if len == 0.0 {
                continue;
            }
            grazes += 1;
            [(dx / len) as f32, (dy / len) as f32]
        } else {
            let Some(d) = unit_direction(rng.range(0.0, core::f32::consts::TAU)) else {
                continue;
            };
            d
        };
        let ours = quadrat::Ray::new(o, d).intersect_aabb(&quadrat::Aabb::from(b), 300.0);
        let ray = Ray::new(Vector::new(o[0], o[1]), Vector::new(d[0], d[1]));
        let theirs = parry_aabb(&b).cast_local_ray(&ray, 300.0, true);
        match (ours, theirs) {
            (Some(a), Some(t)) => {
                hits += 1;
                differ += usize::from(a != t);
                assert!((a - t).abs() <= a * 2f32.powi(-20), "{o:?} → {d:?}, {b:?}");
            }
            (None, None) => {}
            _ => disagree += 1,
        }
    }
    eprintln!(
        "parry2d: of {hits} hits, {differ} at another distance than quadrat's; \
         {disagree} of {grazes} rays aimed at a corner hit by one test only"
    );
    assert!(hits > 10_000 && differ > 100 && disagree > 0, "{hits} hits");
}

/// `0` or `2`: the offset of a random corner's coordinate in a box.
fn pick_corner(rng: &mut quadrat::scenario::Rng) -> usize {
    2 * rng.below(2) as usize
}

/// `Bvh::cast_ray` is `Bvh::find_best` with the node's `cast_ray` as the
/// node cost, which the parry2d adapter calls directly with grown boxes.
#[test]
fn parry_cast_ray_is_find_best_with_the_node_ray_test() {
    use parry2d::partitioning::BvhNode;
    use parry2d::query::{Ray, RayCast};
    let mut rng = quadrat::scenario::Rng::new(8);
    let leaves: Vec<_> = common::edge_cases(2000, 4).iter().map(parry_aabb).collect();
    let bvh = Bvh::from_leaves(BvhBuildStrategy::Binned, &leaves);
    let mut hits = 0;
    for _ in 0..2000 {
        let o = Vector::new(rng.range(0.0, 1000.0), rng.range(0.0, 1000.0));
        let a = rng.range(0.0, core::f32::consts::TAU);
        let ray = Ray::new(o, Vector::new(a.cos(), a.sin()));
        let max = rng.range(0.0, 300.0);
        let leaf = |i: u32, best: f32| leaves[i as usize].cast_local_ray(&ray, best, true);
        let cast = bvh.cast_ray(&ray, max, leaf);
        let best = bvh.find_best(max, |n: &BvhNode, best| n.cast_ray(&ray, best), leaf);
        assert_eq!(cast, best);
        hits += usize::from(cast.is_some());
    }
    assert!(hits > 500, "{hits} hits");
}

/// `Bvh::cast_ray` keeps a hit only when it is strictly nearer than the
/// maximum: a box exactly at the maximum distance is missed, so the adapter
/// passes the maximum one ulp up.
#[test]
fn parry_cast_ray_maximum_is_exclusive() {
    use parry2d::query::{Ray, RayCast};
    let boxes = [[5.0, 0.0, 6.0, 1.0], [8.0, 0.0, 9.0, 1.0]];
    let leaves: Vec<_> = boxes.iter().map(parry_aabb).collect();
    let bvh = Bvh::from_leaves(BvhBuildStrategy::Binned, &leaves);
    let ray = Ray::new(Vector::new(0.0, 0.5), Vector::new(1.0, 0.0));
    let cast = |max: f32| {
        bvh.cast_ray(&ray, max, |i, best| {
            leaves[i as usize].cast_local_ray(&ray, best, true)
        })
    };
    assert_eq!(cast(5.0), None);
    assert_eq!(cast(5.0f32.next_up()), Some((0, 5.0)));
    assert_eq!(cast(100.0), Some((0, 5.0)));
}
