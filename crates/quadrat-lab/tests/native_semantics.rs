//! Pins down how each library treats boundary contacts, and how rstar and
//! parry2d measure nearest and ray-cast distances, when used directly,
//! without the adapters' corrections. The adapters rely on these findings;
//! the module docs of each adapter (`src/bench/peers/`) summarise them.

mod common;

use broccoli::aabb::pin::AabbPin;
use parry2d::bounding_volume::Aabb as ParryAabb;
use parry2d::math::Vector;
use parry2d::partitioning::{Bvh, BvhBuildStrategy, BvhWorkspace};
use quadrat_lab::bench::peers::{BroadPhase, Brute, ordered};

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

#[test]
#[should_panic]
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

/// rstar's squared distance from a point to a box is quadrat's, bit for bit:
/// 0 inside and on the edge, else the clamped difference squared and summed.
#[test]
fn rstar_box_distance_is_quadrats_squared() {
    use rstar::AABB;
    let mut rng = quadrat::scenario::Rng::new(5);
    for _ in 0..100_000 {
        let (x, y) = (rng.range(0.0, 100.0), rng.range(0.0, 100.0));
        let (w, h) = (rng.range(0.0, 30.0), rng.range(0.0, 30.0));
        let p = match rng.below(3) {
            0 => [x + w, rng.range(y, y + h)],
            _ => [rng.range(-20.0, 150.0), rng.range(-20.0, 150.0)],
        };
        let ours = quadrat::Aabb::new([x, y], [x + w, y + h]);
        let theirs = AABB::from_corners([x, y], [x + w, y + h]).distance_2(&p);
        assert_eq!(
            theirs.to_bits(),
            ours.distance_squared_to_point(p).to_bits()
        );
        assert_eq!(theirs.sqrt(), ours.distance_to_point(p));
    }
}

/// parry2d's ray-box test gives quadrat's distance, bit for bit, when both
/// get the same unit direction; inside the box it is 0 (solid).
#[test]
fn parry_ray_box_distance_is_quadrats() {
    use parry2d::query::{Ray, RayCast};
    use quadrat_lab::bench::probe::unit_direction;
    let mut rng = quadrat::scenario::Rng::new(6);
    let mut hits = 0;
    for _ in 0..100_000 {
        let Some(d) = unit_direction(rng.range(0.0, core::f32::consts::TAU)) else {
            continue;
        };
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
        let ours = quadrat::Ray::new(o, d).intersect_aabb(&quadrat::Aabb::from(b), 300.0);
        let ray = Ray::new(Vector::new(o[0], o[1]), Vector::new(d[0], d[1]));
        let theirs = parry_aabb(&b).cast_local_ray(&ray, 300.0, true);
        assert_eq!(theirs, ours, "{o:?} → {d:?}, {b:?}");
        hits += usize::from(ours.is_some());
    }
    assert!(hits > 10_000, "{hits} hits");
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
