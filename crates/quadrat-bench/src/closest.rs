//! Nearest and ray-cast queries in the query benchmark: who answers them,
//! and how their answers are checked before they are timed.
//!
//! - **nearest**: the `k` boxes nearest to a point, by the Euclidean
//!   distance to the closed box (0 inside). quadrat's [`QuadTree::nearest`]
//!   against rstar's best-first `nearest_neighbor_iter_with_distance_2` over
//!   the same boxes, ranking them by quadrat's squared distance and taking
//!   the few more boxes it needs to settle near ties ([`Rstar::nearest`]).
//!   kiddo is not a contender: it indexes points, and the boxes nearest by
//!   their centres are not the boxes nearest by distance to the box.
//! - **raycast**: the first box a ray hits within the world's diagonal.
//!   quadrat's [`QuadTree::raycast`] against parry2d's best-first
//!   `Bvh::find_best` (the search behind `Bvh::cast_ray`), its node test on
//!   boxes grown by a rounding margin and quadrat's ray-box test on the
//!   leaves ([`Parry::raycast`]).
//!
//! An answer is checked against the reference's with [`diff_nearest`]: the
//! same distances as `f32` values, and the same boxes except where several
//! boxes tie at the last distance (rstar orders equal distances arbitrarily;
//! parry2d keeps the first box found at the best distance, quadrat the
//! smallest key). A tie is an exact one: boxes whose distances differ in the
//! last bit do not tie, which the peers' adapters meet by reporting
//! quadrat's distances (computed in `f64` and rounded to `f32`) and
//! searching with margins wide enough for their libraries' `f32` rounding.
//! How many answers chose other boxes at such a tie is logged and noted in
//! the report.
//!
//! [`QuadTree::nearest`]: quadrat::QuadTree::nearest
//! [`QuadTree::raycast`]: quadrat::QuadTree::raycast
//! [`Rstar::nearest`]: super::peers::Rstar::nearest
//! [`Parry::raycast`]: super::peers::Parry::raycast

use super::exact::diff_nearest;
use super::implementation::Implementation;
use super::ours::Quadrat;
use super::peers::BroadPhase;
#[cfg(feature = "peers")]
use super::peers::{Parry, Rstar};
use super::probe::{self, Probe, probes};
use super::progress::Progress;
use super::queries::{Contest, Search, Verdict};
use super::scene::{QueryKind, Scene};
use super::{Error, Part, Results, Settings, fmt_n};

/// Whether `imp` answers queries of `kind` (`Nearest` or `Raycast`).
pub(super) fn answers(imp: Implementation, kind: QueryKind) -> bool {
    match (kind, imp) {
        (QueryKind::Nearest | QueryKind::Raycast, Implementation::Quadrat) => true,
        #[cfg(feature = "peers")]
        (QueryKind::Nearest, Implementation::Rstar) => true,
        #[cfg(feature = "peers")]
        (QueryKind::Raycast, Implementation::Parry) => true,
        _ => false,
    }
}

/// Runs one batch of `kind` (`Nearest` or `Raycast`) over `scene`: the
/// reference, then each participant checked, then timed. Appends a record
/// per participant and a note on how the answers compared.
pub(super) fn run(
    settings: &Settings,
    progress: &Progress,
    results: &mut Results,
    scene: &Scene,
    kind: QueryKind,
    seed: u64,
) -> Result<(), Error> {
    let k = settings.nearest_k;
    let ps = probes(scene, kind, settings.queries, k, seed);
    progress.start(format!(
        "queries {} n={}: reference",
        kind.name(),
        fmt_n(scene.boxes.len())
    ));
    let (reference, expected) = probe::reference(scene, &ps);
    let found: usize = expected.iter().map(Vec::len).sum();
    let summary = match kind {
        QueryKind::Nearest => format!(
            "{} points, k = {k}, {} boxes found by {}",
            fmt_n(ps.len()),
            fmt_n(found),
            reference.name()
        ),
        _ => format!(
            "{} rays, {} hits by {}",
            fmt_n(ps.len()),
            fmt_n(found),
            reference.name()
        ),
    };
    let contest = Contest {
        kind,
        scene,
        queries: &ps,
        reference,
        summary,
    };
    let mut ties = Vec::new();
    contest.run(
        settings,
        progress,
        results,
        |imp| searcher(imp, kind, scene),
        |imp, got| -> Verdict {
            let t = diff_nearest(&expected, &got, |q, i| {
                ps[q].distance(&scene.boxes[i as usize])
            })?;
            ties.push((imp, t));
            Ok((t > 0).then(|| format!("{t} ties resolved otherwise")))
        },
    )?;
    results.note(Part::Queries, note(kind, k, &expected, &ties));
    Ok(())
}

/// What the check found, for the report: `expected` are the reference's
/// answers, `ties` how many answers of each participant chose other boxes
/// at a tie.
fn note(
    kind: QueryKind,
    k: usize,
    expected: &[Vec<(u32, f32)>],
    ties: &[(Implementation, usize)],
) -> String {
    let counts: Vec<String> = ties
        .iter()
        .map(|(imp, t)| format!("{} {}", imp.name(), fmt_n(*t)))
        .collect();
    let counts = format!(
        "answers of {} queries that chose other boxes at such a tie: {}",
        fmt_n(expected.len()),
        counts.join(", ")
    );
    if kind == QueryKind::Nearest {
        return format!(
            "Nearest (k = {k}): every answer had the reference's distances, bit for bit, and \
             its boxes except where more boxes lie at the k-th distance than fit ({counts})."
        );
    }
    let inside = expected
        .iter()
        .filter(|a| a.first().is_some_and(|&(_, d)| d == 0.0))
        .count();
    format!(
        "Raycast: every answer had the reference's distance, bit for bit, and its box except \
         where boxes tie for the first hit ({counts}). {} of the rays start inside a box, so \
         their first hit is at distance 0, and every box containing the origin ties for it.",
        fmt_n(inside)
    )
}

/// Builds `imp`'s index over the scene for queries of `kind`, or `None`
/// when it does not answer them.
fn searcher(
    imp: Implementation,
    kind: QueryKind,
    scene: &Scene,
) -> Option<Box<dyn Search<Probe, Hit = (u32, f32)>>> {
    let (world, boxes) = (scene.world, &scene.boxes[..]);
    match (kind, imp) {
        (QueryKind::Nearest, Implementation::Quadrat) => {
            Some(Box::new(Nearest(Quadrat::build(world, boxes))))
        }
        (QueryKind::Raycast, Implementation::Quadrat) => {
            Some(Box::new(Raycast(Quadrat::build(world, boxes))))
        }
        #[cfg(feature = "peers")]
        (QueryKind::Nearest, Implementation::Rstar) => {
            Some(Box::new(Nearest(Rstar::build(world, boxes))))
        }
        #[cfg(feature = "peers")]
        (QueryKind::Raycast, Implementation::Parry) => {
            Some(Box::new(Raycast(Parry::build(world, boxes))))
        }
        _ => None,
    }
}

/// An index asked for the nearest boxes; ignores ray casts.
struct Nearest<I>(I);

/// An index asked for the first box a ray hits; ignores nearest queries.
struct Raycast<I>(I);

impl Search<Probe> for Nearest<Quadrat> {
    type Hit = (u32, f32);

    fn search(&mut self, q: &Probe, out: &mut Vec<(u32, f32)>) {
        if let Probe::Nearest { point, k } = *q {
            self.0.nearest(point, k, out);
        }
    }
}

#[cfg(feature = "peers")]
impl Search<Probe> for Nearest<Rstar> {
    type Hit = (u32, f32);

    fn search(&mut self, q: &Probe, out: &mut Vec<(u32, f32)>) {
        if let Probe::Nearest { point, k } = *q {
            self.0.nearest(point, k, out);
        }
    }
}

impl Search<Probe> for Raycast<Quadrat> {
    type Hit = (u32, f32);

    fn search(&mut self, q: &Probe, out: &mut Vec<(u32, f32)>) {
        if let Probe::Ray {
            origin,
            dir,
            max_dist,
        } = *q
        {
            out.extend(self.0.raycast(origin, dir, max_dist));
        }
    }
}

#[cfg(feature = "peers")]
impl Search<Probe> for Raycast<Parry> {
    type Hit = (u32, f32);

    fn search(&mut self, q: &Probe, out: &mut Vec<(u32, f32)>) {
        if let Probe::Ray {
            origin,
            dir,
            max_dist,
        } = *q
        {
            out.extend(self.0.raycast(origin, dir, max_dist));
        }
    }
}
