//! Every implementation must report exactly the brute-force result: all
//! closed-box intersections, each pair once, for pairs, range queries and
//! after moving frames; and, for quadrat and rstar, circle and point
//! queries.

mod common;

use common::{WORLD, edge_cases, pick};
use quadrat::scenario::{Layout, Rng};
use quadrat_bench::ours::Quadrat;
use quadrat_bench::peers::{Bbox, BroadPhase, Brute, Sweep, TutorialQuadtree};
use quadrat_bench::scene::Scene;

/// The world box the indexes are built with.
const WORLD_BOX: Bbox = [0.0, 0.0, WORLD, WORLD];

/// Boxes per edge-case scene. Brute force is the oracle, so this stays
/// small enough for the unoptimised test profile.
const EDGE_N: usize = 3000;

/// Query boxes: random boxes, points, boxes touching scene boxes, exact
/// copies of scene boxes, boxes outside the world and one covering it all.
fn query_boxes(scene: &[Bbox], seed: u64) -> Vec<Bbox> {
    let mut rng = Rng::new(seed);
    let mut qs = vec![
        [-10.0, -10.0, WORLD + 10.0, WORLD + 10.0],
        [-50.0, -50.0, -40.0, -40.0],
        [WORLD + 5.0, WORLD + 5.0, WORLD + 5.0, WORLD + 5.0],
    ];
    for _ in 0..200 {
        let a = if scene.is_empty() {
            [1.0, 1.0, 2.0, 2.0]
        } else {
            scene[pick(&mut rng, scene.len())]
        };
        let w = rng.range(0.0, 40.0);
        let h = rng.range(0.0, 40.0);
        let x = rng.range(-20.0, WORLD);
        let y = rng.range(-20.0, WORLD);
        qs.push(match rng.below(6) {
            0 => [x, y, x + w, y + h],
            1 => [x, y, x, y],
            2 => [a[2], a[1], a[2] + w, a[3]],
            3 => [a[0] - w, a[1] - h, a[0], a[1]],
            4 => a,
            _ => [a[2], a[3], a[2], a[3]],
        });
    }
    qs
}

/// Moves every box by an independent random step in `[-step, step)` per
/// axis, keeping its size.
fn jitter(boxes: &mut [Bbox], step: f32, rng: &mut Rng) {
    for b in boxes {
        let dx = rng.range(-step, step);
        let dy = rng.range(-step, step);
        *b = [b[0] + dx, b[1] + dy, b[2] + dx, b[3] + dy];
    }
}

fn check_frame<P: BroadPhase>(peer: &mut P, scene: &[Bbox], seed: u64, what: &str) {
    let mut brute = Brute::build(WORLD_BOX, scene);
    let expected = brute.pairs();
    let got = peer.pairs();
    assert!(
        got == expected,
        "{} pairs differ on {what}: {} expected, {} found, first missing {:?}, first extra {:?}",
        P::NAME,
        expected.len(),
        got.len(),
        expected.iter().find(|p| got.binary_search(p).is_err()),
        got.iter().find(|p| expected.binary_search(p).is_err()),
    );
    let qs = query_boxes(scene, seed ^ 0x5eed);
    let expected = brute.queries(&qs);
    let got = peer.queries(&qs);
    for (k, q) in qs.iter().enumerate() {
        assert_eq!(got[k], expected[k], "{} query {q:?} on {what}", P::NAME);
    }
}

fn scenes() -> Vec<(String, Vec<Bbox>)> {
    let mut out = Vec::new();
    for seed in 1..=4 {
        out.push((format!("edge cases #{seed}"), edge_cases(EDGE_N, seed)));
    }
    for layout in Layout::ALL {
        let scene = Scene::new(layout, 5000, 7);
        out.push((format!("{} scenario", layout.name()), scene.boxes));
    }
    out.push(("empty".into(), Vec::new()));
    out.push(("single".into(), vec![[1.0, 2.0, 3.0, 4.0]]));
    out.push(("one point".into(), vec![[5.0, 5.0, 5.0, 5.0]]));
    out.push(("all identical".into(), vec![[1.0, 1.0, 2.0, 2.0]; 40]));
    out.push(("identical points".into(), vec![[7.0, 7.0, 7.0, 7.0]; 40]));
    out.push((
        "far outside the world".into(),
        vec![
            [-5e4, -5e4, -4e4, -4e4],
            [-4e4, -4e4, -3e4, -3e4],
            [2e4, 0.0, 2e4, 1.0],
        ],
    ));
    out
}

fn check_static<P: BroadPhase>() {
    for (name, scene) in scenes() {
        let mut peer = P::build(WORLD_BOX, &scene);
        check_frame(&mut peer, &scene, 11, &name);
    }
}

/// Builds on one scene, then updates through small random steps and through
/// complete replacement by other edge-case scenes of the same size.
fn check_moving<P: BroadPhase>() {
    let mut scene = edge_cases(EDGE_N, 21);
    let mut peer = P::build(WORLD_BOX, &scene);
    let mut rng = Rng::new(99);
    for frame in 0..12 {
        if frame % 4 == 3 {
            scene = edge_cases(EDGE_N, 100 + frame);
        } else {
            jitter(&mut scene, 2.0, &mut rng);
        }
        peer.update(WORLD_BOX, &scene);
        check_frame(&mut peer, &scene, frame, &format!("moving frame {frame}"));
    }
}

#[test]
fn brute_static() {
    check_static::<Brute>();
}

#[test]
fn brute_moving() {
    check_moving::<Brute>();
}

#[test]
fn sweep_static() {
    check_static::<Sweep>();
}

#[test]
fn sweep_moving() {
    check_moving::<Sweep>();
}

#[test]
fn tutorial_static() {
    check_static::<TutorialQuadtree>();
}

#[test]
fn tutorial_moving() {
    check_moving::<TutorialQuadtree>();
}

#[test]
fn quadrat_static() {
    check_static::<Quadrat>();
}

#[test]
fn quadrat_moving() {
    check_moving::<Quadrat>();
}

/// A circle: centre and radius.
type Disc = ([f32; 2], f32);

/// Circles around points of the scene (box corners, points on edges,
/// random points), with radii at the exact distance of some box (as
/// quadrat measures it, and an ulp either side), random radii and radius 0,
/// at scales where the squared distances are exact in `f32`, underflow and
/// overflow; and the points themselves.
fn circles_and_points(scene: &[Bbox], scale: f32, seed: u64) -> (Vec<Disc>, Vec<[f32; 2]>) {
    let mut rng = Rng::new(seed);
    let (mut circles, mut points) = (Vec::new(), Vec::new());
    for _ in 0..150 {
        let a = scene[pick(&mut rng, scene.len())];
        let b = scene[pick(&mut rng, scene.len())];
        let c = match rng.below(3) {
            0 => [a[pick(&mut rng, 2) * 2], a[1 + pick(&mut rng, 2) * 2]],
            1 => [a[2], rng.range(a[1], a[3])],
            _ => [rng.range(0.0, WORLD) * scale, rng.range(0.0, WORLD) * scale],
        };
        let d = quadrat::Aabb::from(b).distance_to_point(c);
        for r in [
            d,
            d.next_up(),
            d.next_down().max(0.0),
            rng.range(0.0, 60.0) * scale,
            0.0,
        ] {
            circles.push((c, r));
        }
        points.push(c);
    }
    (circles, points)
}

/// Checks `circle` and `point` queries on the edge cases at three scales
/// against quadrat's definitions ([`quadrat::Circle::intersects_aabb`],
/// [`quadrat::Aabb::contains_point`]).
fn check_circles_and_points<P: BroadPhase>(
    circle: impl Fn(&mut P, [f32; 2], f32, &mut Vec<u32>),
    point: impl Fn(&mut P, [f32; 2], &mut Vec<u32>),
) {
    // Powers of two keep exact contacts exact.
    for scale in [1.0, 1.0 / (1u128 << 75) as f32, (1u128 << 70) as f32] {
        let scene: Vec<Bbox> = edge_cases(EDGE_N, 8)
            .into_iter()
            .map(|b| b.map(|v| v * scale))
            .collect();
        let mut index = P::build(WORLD_BOX.map(|v| v * scale), &scene);
        let (circles, points) = circles_and_points(&scene, scale, 12);
        let expected = |hit: &dyn Fn(&quadrat::Aabb) -> bool| -> Vec<u32> {
            (0u32..)
                .zip(&scene)
                .filter(|(_, b)| hit(&quadrat::Aabb::from(**b)))
                .map(|(i, _)| i)
                .collect()
        };
        for (c, r) in circles {
            let mut got = Vec::new();
            circle(&mut index, c, r, &mut got);
            got.sort_unstable();
            let disc = quadrat::Circle::new(c, r);
            let want = expected(&|b| disc.intersects_aabb(b));
            assert_eq!(
                got,
                want,
                "{} circle {c:?} r = {r} at scale {scale}",
                P::NAME
            );
        }
        for p in points {
            let mut got = Vec::new();
            point(&mut index, p, &mut got);
            got.sort_unstable();
            let want = expected(&|b| b.contains_point(p));
            assert_eq!(got, want, "{} point {p:?} at scale {scale}", P::NAME);
        }
    }
}

#[test]
fn quadrat_circles_and_points() {
    check_circles_and_points::<Quadrat>(
        |q, c, r, out| q.query_circle(c, r, out),
        |q, p, out| q.query_point(p, out),
    );
}

#[cfg(feature = "peers")]
mod peers {
    use super::{check_circles_and_points, check_moving, check_static};
    use quadrat_bench::peers::{Broccoli, FlatSpatial, Obvhs, Parry, Rstar};

    #[test]
    fn rstar_circles_and_points() {
        check_circles_and_points::<Rstar>(
            |r, c, radius, out| r.query_circle(c, radius, out),
            |r, p, out| r.query_point(p, out),
        );
    }

    #[test]
    fn rstar_static() {
        check_static::<Rstar>();
    }

    #[test]
    fn rstar_moving() {
        check_moving::<Rstar>();
    }

    #[test]
    fn broccoli_static() {
        check_static::<Broccoli>();
    }

    #[test]
    fn broccoli_moving() {
        check_moving::<Broccoli>();
    }

    #[test]
    fn parry_static() {
        check_static::<Parry>();
    }

    #[test]
    fn parry_moving() {
        check_moving::<Parry>();
    }

    #[test]
    fn flat_spatial_static() {
        check_static::<FlatSpatial>();
    }

    #[test]
    fn flat_spatial_moving() {
        check_moving::<FlatSpatial>();
    }

    #[test]
    fn obvhs_static() {
        check_static::<Obvhs>();
    }

    #[test]
    fn obvhs_moving() {
        check_moving::<Obvhs>();
    }
}

#[test]
fn brute_matches_the_definition() {
    let scene = edge_cases(500, 3);
    let pairs = Brute::build(WORLD_BOX, &scene).pairs();
    let mut expected = Vec::new();
    for i in 0..scene.len() {
        for j in i + 1..scene.len() {
            let (a, b) = (scene[i], scene[j]);
            if a[0].max(b[0]) <= a[2].min(b[2]) && a[1].max(b[1]) <= a[3].min(b[3]) {
                expected.push((i as u32, j as u32));
            }
        }
    }
    assert_eq!(pairs, expected);
}

#[test]
fn edge_case_scenes_have_edge_cases() {
    let scene = edge_cases(EDGE_N, 1);
    let pairs = Brute::build(WORLD_BOX, &scene).pairs();
    let touching = pairs
        .iter()
        .filter(|&&(i, j)| {
            let (a, b) = (scene[i as usize], scene[j as usize]);
            a[0] == b[2] || b[0] == a[2] || a[1] == b[3] || b[1] == a[3]
        })
        .count();
    let points = scene
        .iter()
        .filter(|b| b[0] == b[2] && b[1] == b[3])
        .count();
    let duplicates = pairs
        .iter()
        .filter(|&&(i, j)| scene[i as usize] == scene[j as usize])
        .count();
    assert!(touching > 150, "{touching} touching pairs");
    assert!(points > 50, "{points} points");
    assert!(duplicates > 50, "{duplicates} duplicate pairs");
}
