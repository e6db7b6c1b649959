//! Nearest-neighbour and ray-cast queries ("probes"): their inputs, the
//! distance of each box from them as quadrat defines it, and the reference
//! answers every implementation is checked against.

use core::cmp::Ordering;

use quadrat::scenario::Rng;
use quadrat::{Aabb, Ray};

use super::implementation::Implementation;
use super::peers::{Bbox, BroadPhase, Sweep, bounds};
use super::scene::{QueryKind, Scene};

/// Above this many box tests, the reference takes its candidates from sort
/// and sweep's box query instead of testing every box for every probe.
const BRUTE_TESTS: usize = 100_000_000;

/// A query whose answer is the nearest boxes, with their distances.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Probe {
    /// The `k` boxes nearest to `point`, by the Euclidean distance from the
    /// point to the closed box (0 inside or on the edge).
    Nearest {
        /// Where the distances are measured from.
        point: [f32; 2],
        /// How many boxes are wanted.
        k: usize,
    },
    /// The first box the ray from `origin` along `dir` hits within
    /// `max_dist`, at the Euclidean distance from the origin to where the ray
    /// enters the box (0 when the origin is inside).
    Ray {
        /// Where the ray starts.
        origin: [f32; 2],
        /// A unit direction that quadrat's own normalisation, rounded to
        /// `f32`, leaves unchanged (see [`unit_direction`]).
        dir: [f32; 2],
        /// The farthest a hit may be.
        max_dist: f32,
    },
}

impl Probe {
    /// The most boxes an answer holds: `k` for [`Probe::Nearest`], 1 for
    /// [`Probe::Ray`].
    #[must_use]
    pub fn wanted(&self) -> usize {
        match *self {
            Probe::Nearest { k, .. } => k,
            Probe::Ray { .. } => 1,
        }
    }

    /// The distance of box `b` from this probe, as quadrat defines it
    /// ([`Aabb::distance_to_point`], [`Ray::intersect_aabb`]); `None` when
    /// the ray misses the box within `max_dist`.
    #[must_use]
    pub fn distance(&self, b: &Bbox) -> Option<f32> {
        let b = Aabb::from(*b);
        match *self {
            Probe::Nearest { point, .. } => Some(b.distance_to_point(point)),
            Probe::Ray {
                origin,
                dir,
                max_dist,
            } => Ray::new(origin, dir).intersect_aabb(&b, max_dist),
        }
    }

    /// A box containing every box at distance at most `r` from the probe,
    /// with a margin far wider than any rounding.
    fn reach(&self, r: f32) -> Bbox {
        let margin = |scale: f32| 1e-3 + 1e-4 * (r + scale);
        match *self {
            Probe::Nearest { point: [x, y], .. } => {
                let m = r + margin(x.abs().max(y.abs()));
                [x - m, y - m, x + m, y + m]
            }
            Probe::Ray {
                origin: [x, y],
                dir: [dx, dy],
                ..
            } => {
                let (ex, ey) = (x + dx * r, y + dy * r);
                let m = margin(x.abs().max(y.abs()).max(ex.abs()).max(ey.abs()));
                [x.min(ex) - m, y.min(ey) - m, x.max(ex) + m, y.max(ey) + m]
            }
        }
    }

    /// A distance beyond which there is nothing more to find among boxes
    /// lying within `all` (the bounds of every box).
    fn horizon(&self, all: Bbox) -> f32 {
        match *self {
            Probe::Nearest { point: [x, y], .. } => {
                let dx = (x - all[0]).abs().max((x - all[2]).abs());
                let dy = (y - all[1]).abs().max((y - all[3]).abs());
                dx.hypot(dy) * 1.01 + 1e-3
            }
            Probe::Ray { max_dist, .. } => max_dist,
        }
    }
}

/// The unit vector at `angle` (radians), rescaled until normalising it as
/// quadrat normalises a ray's direction (divided by its length, in `f64`)
/// and rounding the result to `f32` gives it back, or `None` if that takes
/// more than a few steps. A library that takes the direction as given in
/// `f32` (parry2d's adapter hands it quadrat's normalisation, rounded) then
/// gets the very direction quadrat casts along, to `f32` precision.
#[must_use]
pub fn unit_direction(angle: f32) -> Option<[f32; 2]> {
    let mut d = [angle.cos(), angle.sin()];
    for _ in 0..8 {
        let unit = normalised(d);
        if unit == d {
            return Some(d);
        }
        d = unit;
    }
    None
}

/// `d` divided by its length in `f64`, as quadrat's ray casts do, rounded
/// to `f32`.
fn normalised([x, y]: [f32; 2]) -> [f32; 2] {
    let (x, y) = (f64::from(x), f64::from(y));
    let len = (x * x + y * y).sqrt();
    [(x / len) as f32, (y / len) as f32]
}

/// `count` probes of `kind` (`Nearest` or `Raycast`) with points and ray
/// origins uniform in `scene`'s world: `k` nearest boxes, or rays in
/// uniformly random directions reaching as far as the world's diagonal.
///
/// # Panics
/// For the other kinds, whose queries come from
/// [`queries`](super::scene::queries).
#[must_use]
pub fn probes(scene: &Scene, kind: QueryKind, count: usize, k: usize, seed: u64) -> Vec<Probe> {
    let mut rng = Rng::new(seed);
    let [x0, y0, x1, y1] = scene.world;
    let diagonal = (x1 - x0).hypot(y1 - y0);
    (0..count)
        .map(|_| {
            let p = [rng.range(x0, x1), rng.range(y0, y1)];
            match kind {
                QueryKind::Nearest => Probe::Nearest { point: p, k },
                QueryKind::Raycast => loop {
                    let angle = rng.range(0.0, core::f32::consts::TAU);
                    if let Some(dir) = unit_direction(angle) {
                        break Probe::Ray {
                            origin: p,
                            dir,
                            max_dist: diagonal,
                        };
                    }
                },
                _ => panic!("{} queries are shapes, not probes", kind.name()),
            }
        })
        .collect()
}

/// Ascending distance, then ascending box index: the order of answers.
pub(crate) fn by_distance(a: &(u32, f32), b: &(u32, f32)) -> Ordering {
    a.1.total_cmp(&b.1).then(a.0.cmp(&b.0))
}

/// The `wanted` smallest of `found` by distance, then box index, ascending.
fn smallest(wanted: usize, mut found: Vec<(u32, f32)>) -> Vec<(u32, f32)> {
    if wanted == 0 {
        return Vec::new();
    }
    if found.len() > wanted {
        found.select_nth_unstable_by(wanted - 1, by_distance);
        found.truncate(wanted);
    }
    found.sort_unstable_by(by_distance);
    found
}

/// Each probe's reference answer, `(box index, distance)` by ascending
/// distance, then index, and who found it: every box measured while that is
/// affordable, else the boxes within a growing distance, found as candidates
/// by sort and sweep's box query and measured exactly.
pub(crate) fn reference(scene: &Scene, probes: &[Probe]) -> (Implementation, Vec<Vec<(u32, f32)>>) {
    let boxes = &scene.boxes;
    if boxes.len().saturating_mul(probes.len()) <= BRUTE_TESTS {
        let answers = probes.iter().map(|p| brute(boxes, p)).collect();
        return (Implementation::Brute, answers);
    }
    let Some(all) = bounds(boxes) else {
        return (Implementation::Sweep, vec![Vec::new(); probes.len()]);
    };
    let [x0, y0, x1, y1] = scene.world;
    let spacing = ((x1 - x0) * (y1 - y0) / boxes.len() as f32).sqrt();
    let mut sweep = Sweep::build(scene.world, boxes);
    let answers = probes
        .iter()
        .map(|p| {
            let start = spacing * (p.wanted().max(1) as f32).sqrt();
            by_sweep(&mut sweep, boxes, all, p, start)
        })
        .collect();
    (Implementation::Sweep, answers)
}

/// Every box measured.
fn brute(boxes: &[Bbox], p: &Probe) -> Vec<(u32, f32)> {
    let found = (0u32..)
        .zip(boxes)
        .filter_map(|(i, b)| p.distance(b).map(|d| (i, d)))
        .collect();
    smallest(p.wanted(), found)
}

/// The boxes within distance `r` are candidates of the box query over
/// [`Probe::reach`]`(r)`; once there are enough of them (or `r` is past the
/// probe's horizon), the nearest of them are the answer. Otherwise `r`
/// doubles.
fn by_sweep(
    sweep: &mut Sweep,
    boxes: &[Bbox],
    all: Bbox,
    p: &Probe,
    start: f32,
) -> Vec<(u32, f32)> {
    let horizon = p.horizon(all);
    let mut r = start.max(f32::MIN_POSITIVE);
    let mut candidates = Vec::new();
    loop {
        candidates.clear();
        sweep.query(p.reach(r), &mut candidates);
        let within: Vec<(u32, f32)> = candidates
            .iter()
            .filter_map(|&i| {
                p.distance(&boxes[i as usize])
                    .filter(|&d| d <= r)
                    .map(|d| (i, d))
            })
            .collect();
        if within.len() >= p.wanted() || r >= horizon {
            return smallest(p.wanted(), within);
        }
        r = (r * 2.0).min(horizon);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quadrat::scenario::Layout;

    #[test]
    fn unit_directions_survive_normalisation() {
        let mut rng = Rng::new(3);
        let mut found = 0;
        for _ in 0..10_000 {
            let angle = rng.range(0.0, core::f32::consts::TAU);
            if let Some(d) = unit_direction(angle) {
                found += 1;
                assert_eq!(normalised(d), d);
                assert!((quadrat::Vec2::from(d).length() - 1.0).abs() < 1e-6);
            }
        }
        // The others do not settle within a few steps; they are drawn again.
        assert!(found > 9_500, "{found} of 10,000 angles");
    }

    #[test]
    fn reference_paths_agree() {
        for layout in Layout::ALL {
            let scene = Scene::new(layout, 3000, 5);
            let all = bounds(&scene.boxes).unwrap();
            let mut sweep = Sweep::build(scene.world, &scene.boxes);
            for (kind, k) in [
                (QueryKind::Nearest, 1),
                (QueryKind::Nearest, 10),
                (QueryKind::Nearest, 5000),
                (QueryKind::Raycast, 1),
            ] {
                let ps = probes(&scene, kind, 300, k, 9);
                let mut hits = 0;
                for p in &ps {
                    let expected = brute(&scene.boxes, p);
                    // A tiny start exercises the doubling.
                    assert_eq!(by_sweep(&mut sweep, &scene.boxes, all, p, 0.01), expected);
                    assert_eq!(by_sweep(&mut sweep, &scene.boxes, all, p, 50.0), expected);
                    assert_eq!(expected.len(), p.wanted().min(expected.len()));
                    hits += expected.len();
                }
                if kind == QueryKind::Nearest {
                    assert_eq!(hits, ps.len() * k.min(scene.boxes.len()));
                } else if layout == Layout::Uniform {
                    assert!(hits > ps.len() * 9 / 10, "{hits} rays of 300 hit");
                } else {
                    assert!(hits > ps.len() / 4, "{hits} rays of 300 hit");
                }
            }
        }
    }

    #[test]
    fn answers_are_the_smallest_by_distance_then_index() {
        let found = vec![(4, 2.0), (1, 1.0), (3, 1.0), (0, 5.0), (2, 1.0)];
        assert_eq!(smallest(2, found.clone()), [(1, 1.0), (2, 1.0)]);
        assert_eq!(smallest(0, found.clone()), []);
        assert_eq!(smallest(9, found).len(), 5);
    }
}
