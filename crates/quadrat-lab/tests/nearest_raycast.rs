//! Nearest and ray-cast answers of quadrat and its peers against brute force
//! on small scenes full of edge cases: the same distances, bit for bit, and
//! the same boxes, except that a peer may pick other boxes where several tie
//! at the last distance (quadrat breaks those ties by index).

mod common;

use common::{WORLD, edge_cases, pick};
use quadrat::scenario::{Layout, Rng};
use quadrat::{Aabb, Ray};
use quadrat_lab::bench::ours::Quadrat;
use quadrat_lab::bench::peers::{Bbox, BroadPhase};
use quadrat_lab::bench::probe::unit_direction;
use quadrat_lab::bench::scene::Scene;

const WORLD_BOX: Bbox = [0.0, 0.0, WORLD, WORLD];

/// Boxes per edge-case scene; brute force is the oracle.
const N: usize = 2000;

/// The scenes: edge cases (duplicates, points, touching and lattice boxes,
/// so plenty of exact ties), the three layouts, and tiny ones.
fn scenes() -> Vec<(String, Vec<Bbox>)> {
    let mut out = Vec::new();
    for seed in 1..=3 {
        out.push((format!("edge cases #{seed}"), edge_cases(N, seed)));
    }
    for layout in Layout::ALL {
        let scene = Scene::new(layout, N, 7);
        out.push((format!("{} scenario", layout.name()), scene.boxes));
    }
    out.push(("empty".into(), Vec::new()));
    out.push(("single".into(), vec![[1.0, 2.0, 3.0, 4.0]]));
    out.push(("identical".into(), vec![[10.0, 10.0, 20.0, 20.0]; 30]));
    out
}

/// Points to measure from: random, on the integer lattice of the edge
/// cases, on box corners and edges, inside boxes and outside the world.
fn points(scene: &[Bbox], rng: &mut Rng, count: usize) -> Vec<[f32; 2]> {
    (0..count)
        .map(|_| {
            let a = if scene.is_empty() {
                [5.0, 5.0, 6.0, 6.0]
            } else {
                scene[pick(rng, scene.len())]
            };
            match rng.below(6) {
                0 => [rng.range(0.0, WORLD), rng.range(0.0, WORLD)],
                1 => [rng.below(100) as f32 * 10.0, rng.below(100) as f32 * 10.0],
                2 => [a[pick(rng, 2) * 2], a[1 + pick(rng, 2) * 2]],
                3 => [rng.range(a[0], a[2]), rng.range(a[1], a[3])],
                4 => [a[2], rng.range(a[1], a[3])],
                _ => [rng.range(-200.0, WORLD + 200.0), -50.0],
            }
        })
        .collect()
}

/// Ray directions: random unit vectors that quadrat's normalisation keeps,
/// and the axes and diagonals, which meet lattice boxes at exact ties.
fn direction(rng: &mut Rng) -> [f32; 2] {
    let axes = [[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [0.0, -1.0]];
    match rng.below(3) {
        0 => axes[pick(rng, 4)],
        1 => unit_direction(core::f32::consts::FRAC_PI_4 * (1 + 2 * rng.below(4)) as f32)
            .expect("a diagonal"),
        _ => loop {
            if let Some(d) = unit_direction(rng.range(0.0, core::f32::consts::TAU)) {
                break d;
            }
        },
    }
}

fn by_distance(a: &(u32, f32), b: &(u32, f32)) -> core::cmp::Ordering {
    a.1.total_cmp(&b.1).then(a.0.cmp(&b.0))
}

/// Every box with its distance from `p`, by distance, then index.
fn all_by_distance(scene: &[Bbox], p: [f32; 2]) -> Vec<(u32, f32)> {
    let mut all: Vec<(u32, f32)> = (0u32..)
        .zip(scene)
        .map(|(i, b)| (i, Aabb::from(*b).distance_to_point(p)))
        .collect();
    all.sort_by(by_distance);
    all
}

/// The first hit by brute force: every box tested, the smallest distance,
/// then index.
fn first_hit(scene: &[Bbox], ray: Ray, max_dist: f32) -> Option<(u32, f32)> {
    (0u32..)
        .zip(scene)
        .filter_map(|(i, b)| {
            ray.intersect_aabb(&Aabb::from(*b), max_dist)
                .map(|d| (i, d))
        })
        .min_by(by_distance)
}

/// Checks `got` (in any order) against the expected answer, sorted by
/// distance then index: equal sorted distances, each box at the distance
/// given, no box twice, the same boxes nearer than the last distance.
/// Returns whether it picked other boxes at the last distance.
fn agrees(
    expected: &[(u32, f32)],
    got: &[(u32, f32)],
    distance: impl Fn(u32) -> Option<f32>,
    what: &str,
) -> bool {
    let mut got = got.to_vec();
    got.sort_by(by_distance);
    let ds = |v: &[(u32, f32)]| v.iter().map(|h| h.1).collect::<Vec<f32>>();
    assert_eq!(ds(&got), ds(expected), "distances on {what}");
    for &(i, d) in &got {
        assert_eq!(distance(i), Some(d), "box {i} on {what}");
    }
    let Some(&(_, last)) = expected.last() else {
        return false;
    };
    let ids = |v: &[(u32, f32)], keep: &dyn Fn(f32) -> bool| {
        let mut ids: Vec<u32> = v.iter().filter(|h| keep(h.1)).map(|h| h.0).collect();
        ids.sort_unstable();
        ids
    };
    let mut all = ids(&got, &|_| true);
    all.dedup();
    assert_eq!(all.len(), got.len(), "a box twice on {what}");
    assert_eq!(
        ids(&got, &|d| d < last),
        ids(expected, &|d| d < last),
        "nearer boxes on {what}"
    );
    ids(&got, &|d| d == last) != ids(expected, &|d| d == last)
}

/// Checks `nearest(index, point, k)` on every scene, for several `k`.
/// `exact_ties`: the implementation breaks ties by index, as quadrat does.
/// Returns how many answers picked other boxes at a tie.
fn check_nearest<P: BroadPhase>(
    nearest: impl Fn(&P, [f32; 2], usize, &mut Vec<(u32, f32)>),
    exact_ties: bool,
) -> usize {
    let mut rng = Rng::new(41);
    let mut ties = 0;
    for (name, scene) in scenes() {
        let index = P::build(WORLD_BOX, &scene);
        for p in points(&scene, &mut rng, 150) {
            let all = all_by_distance(&scene, p);
            for k in [1, 3, 10, 64, N + 5] {
                let expected = &all[..k.min(all.len())];
                let mut got = Vec::new();
                nearest(&index, p, k, &mut got);
                let what = format!("{}: {k} nearest to {p:?} on {name}", P::NAME);
                if exact_ties {
                    assert_eq!(got, expected, "{what}");
                } else {
                    let distance =
                        |i: u32| Some(Aabb::from(scene[i as usize]).distance_to_point(p));
                    ties += usize::from(agrees(expected, &got, distance, &what));
                }
            }
        }
    }
    ties
}

/// Checks `raycast(index, origin, dir, max_dist)` on every scene, with a
/// generous maximum, a short one, and one equal to the first hit's distance
/// (which must still hit: the maximum is inclusive).
fn check_raycast<P: BroadPhase>(
    raycast: impl Fn(&P, [f32; 2], [f32; 2], f32) -> Option<(u32, f32)>,
    exact_ties: bool,
) -> usize {
    let mut rng = Rng::new(43);
    let mut ties = 0;
    for (name, scene) in scenes() {
        let index = P::build(WORLD_BOX, &scene);
        for origin in points(&scene, &mut rng, 200) {
            let dir = direction(&mut rng);
            let ray = Ray::new(origin, dir);
            let far = first_hit(&scene, ray, 2000.0);
            let mut maxima = vec![2000.0, 5.0];
            maxima.extend(far.map(|h| h.1));
            for max_dist in maxima {
                let expected: Vec<(u32, f32)> =
                    first_hit(&scene, ray, max_dist).into_iter().collect();
                let got: Vec<(u32, f32)> =
                    raycast(&index, origin, dir, max_dist).into_iter().collect();
                let what = format!(
                    "{}: ray {origin:?} → {dir:?} within {max_dist} on {name}",
                    P::NAME
                );
                if exact_ties {
                    assert_eq!(got, expected, "{what}");
                } else {
                    let distance =
                        |i: u32| ray.intersect_aabb(&Aabb::from(scene[i as usize]), max_dist);
                    ties += usize::from(agrees(&expected, &got, distance, &what));
                }
            }
        }
    }
    ties
}

#[test]
fn quadrat_nearest_is_brute_force_ties_by_index() {
    check_nearest::<Quadrat>(|q, p, k, out| q.nearest(p, k, out), true);
}

#[test]
fn quadrat_raycast_is_brute_force_ties_by_index() {
    check_raycast::<Quadrat>(|q, o, d, m| q.raycast(o, d, m), true);
}

#[cfg(feature = "peers")]
mod peers {
    use super::{check_nearest, check_raycast};
    use quadrat_lab::bench::peers::{Parry, Rstar};

    #[test]
    fn rstar_nearest_agrees_up_to_ties() {
        let ties = check_nearest::<Rstar>(|r, p, k, out| r.nearest(p, k, out), false);
        // The edge cases hold duplicates, so ties do occur.
        assert!(ties > 0, "no tie was resolved otherwise");
    }

    #[test]
    fn parry_raycast_agrees_up_to_ties() {
        check_raycast::<Parry>(|b, o, d, m| b.raycast(o, d, m), false);
    }
}
