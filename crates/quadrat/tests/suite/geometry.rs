//! The distance, circle and ray predicates against answers computed
//! another way: exact integer arithmetic on small integer coordinates,
//! scaled by powers of two across the whole `f32` range (scaling by a power
//! of two is exact, so the answer must not change with the scale). The
//! model tests compare the tree with these very predicates; this file checks
//! the predicates themselves.

use crate::support::shapes::Rng;
use quadrat::{Aabb, Circle, QuadTree, Ray, Vec2};

/// Scales at which every value below stays a normal `f32`, squares and all
/// (which is what `f32` arithmetic would overflow or underflow on).
const SCALES: [i32; 9] = [-120, -100, -64, -20, 0, 20, 64, 90, 100];

fn scale(v: i32, k: i32) -> f32 {
    v as f32 * 2f32.powi(k)
}

fn sbox(b: [i32; 4], k: i32) -> Aabb {
    Aabb::new(
        [scale(b[0], k), scale(b[1], k)],
        [scale(b[2], k), scale(b[3], k)],
    )
}

fn random_box(rng: &mut Rng) -> [i32; 4] {
    let x = rng.below(2001) as i32 - 1000;
    let y = rng.below(2001) as i32 - 1000;
    let w = if rng.chance(20) {
        0
    } else {
        rng.below(300) as i32
    };
    let h = if rng.chance(20) {
        0
    } else {
        rng.below(300) as i32
    };
    [x, y, x + w, y + h]
}

/// The squared distance from integer point `(px, py)` to integer box `b`,
/// exactly.
fn exact_distance_squared(b: [i32; 4], px: i32, py: i32) -> i64 {
    let gap = |lo: i32, hi: i32, v: i32| i64::from((lo - v).max(0).max(v - hi));
    let (dx, dy) = (gap(b[0], b[2], px), gap(b[1], b[3], py));
    dx * dx + dy * dy
}

#[test]
fn circle_tests_are_exact_at_every_scale() {
    let mut rng = Rng::new(1);
    let mut touching = 0;
    for _ in 0..20_000 {
        let b = random_box(&mut rng);
        let (cx, cy) = (rng.below(2001) as i32 - 1000, rng.below(2001) as i32 - 1000);
        let d2 = exact_distance_squared(b, cx, cy);
        // Radii at, just under and just over the distance, when it is a
        // whole number; otherwise around it.
        let root = (d2 as f64).sqrt() as i64;
        for r in [root - 1, root, root + 1] {
            if r < 0 {
                continue;
            }
            let hit = d2 <= r * r;
            touching += usize::from(d2 == r * r);
            for k in SCALES {
                let c = Circle::new([scale(cx, k), scale(cy, k)], scale(r as i32, k));
                assert_eq!(
                    c.intersects_aabb(&sbox(b, k)),
                    hit,
                    "circle ({cx}, {cy}) r {r} against {b:?} at scale 2^{k}"
                );
            }
        }
    }
    assert!(
        touching > 100,
        "the cases include circles exactly touching boxes"
    );
}

#[test]
fn distances_scale_exactly() {
    let mut rng = Rng::new(2);
    for _ in 0..20_000 {
        let b = random_box(&mut rng);
        let (px, py) = (rng.below(2001) as i32 - 1000, rng.below(2001) as i32 - 1000);
        let d2 = exact_distance_squared(b, px, py);
        // The distance correctly rounded: the f64 square root of an exact
        // integer, rounded to f32 (double rounding cannot bite: d2 < 2^23).
        let d = (d2 as f64).sqrt() as f32;
        for k in SCALES {
            let p = Vec2::new(scale(px, k), scale(py, k));
            let got = sbox(b, k).distance_to_point(p);
            assert_eq!(got, d * 2f32.powi(k), "{b:?} from ({px}, {py}) at 2^{k}");
        }
    }
}

#[test]
fn axis_rays_are_exact_at_every_scale() {
    let mut rng = Rng::new(3);
    for _ in 0..20_000 {
        let b = random_box(&mut rng);
        let (ox, oy) = (rng.below(2001) as i32 - 1000, rng.below(2001) as i32 - 1000);
        let reach = rng.below(2500) as i32;
        // Along +x, -x, +y and -y, with direction lengths from subnormal to
        // huge: where the ray enters the box, worked out on integers.
        let cases = [
            ((1, 0), oy >= b[1] && oy <= b[3] && ox <= b[2], b[0] - ox),
            ((-1, 0), oy >= b[1] && oy <= b[3] && ox >= b[0], ox - b[2]),
            ((0, 1), ox >= b[0] && ox <= b[2] && oy <= b[3], b[1] - oy),
            ((0, -1), ox >= b[0] && ox <= b[2] && oy >= b[1], oy - b[3]),
        ];
        for ((dx, dy), reaches_it, entry) in cases {
            let entry = entry.max(0);
            let want = (reaches_it && entry <= reach).then_some(entry);
            for k in SCALES {
                for len in [1e-40f32, 1.0, 3e38] {
                    let ray = Ray::new(
                        [scale(ox, k), scale(oy, k)],
                        [dx as f32 * len, dy as f32 * len],
                    );
                    let got = ray.intersect_aabb(&sbox(b, k), scale(reach, k));
                    assert_eq!(
                        got,
                        want.map(|e| scale(e, k)),
                        "ray from ({ox}, {oy}) along ({dx}, {dy})·{len} into {b:?} within {reach} at 2^{k}"
                    );
                }
            }
        }
    }
}

/// A ray through a box's corner, along its edge, and starting on it: hits,
/// at the exact distance.
#[test]
fn rays_graze_corners_and_edges() {
    let b = Aabb::new([10.0, 10.0], [20.0, 20.0]);
    let diagonal = Ray::new([0.0, 20.0], [1.0, -1.0]);
    // From (0, 20) down the diagonal: it touches the corner (10, 10) only.
    let hit = diagonal.intersect_aabb(&b, f32::INFINITY).unwrap();
    assert!((hit - 200f32.sqrt()).abs() <= 2e-6, "{hit}");
    let along_edge = Ray::new([0.0, 10.0], [1.0, 0.0]);
    assert_eq!(along_edge.intersect_aabb(&b, f32::INFINITY), Some(10.0));
    let on_edge = Ray::new([20.0, 15.0], [1.0, 0.0]);
    assert_eq!(on_edge.intersect_aabb(&b, 5.0), Some(0.0));
    let leaving = Ray::new([20.0, 15.0], [-1.0, 0.0]);
    assert_eq!(leaving.intersect_aabb(&b, 5.0), Some(0.0));
    let past_corner = Ray::new([0.0, 19.5], [1.0, -1.0]);
    assert_eq!(past_corner.intersect_aabb(&b, f32::INFINITY), None);
    // The tree agrees, and finds the same hits.
    let mut tree = QuadTree::new(Aabb::new([0.0, 0.0], [32.0, 32.0]));
    let k = tree.insert(b, ());
    assert_eq!(tree.raycast(along_edge, f32::INFINITY), Some((k, 10.0)));
    assert_eq!(tree.raycast(past_corner, f32::INFINITY), None);
}
