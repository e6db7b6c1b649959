//! Query throughput: batches of area, circle and point queries against an
//! index built beforehand.

use quadrat::scenario::Layout;

use super::exact::{Mismatch, diff_queries};
use super::implementation::{Implementation, Index};
use super::ours::Quadrat;
#[cfg(feature = "peers")]
use super::peers::Rstar;
use super::peers::{BroadPhase, Sweep};
use super::progress::Progress;
use super::record::{Benchmark, Record};
use super::scene::{Query, QueryKind, Scene, queries};
use super::timing::{Sampler, time};
use super::{Error, Results, Settings, fmt_n, fmt_rate};

/// Mean hits of an area or circle query in the uniform layout.
const HITS_PER_QUERY: f32 = 10.0;

/// Above this many box tests, the reference uses sort and sweep for
/// candidates instead of testing every box against every query.
const BRUTE_TESTS: usize = 1_000_000_000;

/// Runs every query kind over `settings.query_n` boxes, appending one record
/// per implementation and kind.
pub(super) fn run(
    settings: &Settings,
    progress: &Progress,
    results: &mut Results,
) -> Result<(), Error> {
    let n = settings.query_n;
    let scene = Scene::new(Layout::Uniform, n, settings.seed);
    for (k, kind) in QueryKind::ALL.into_iter().enumerate() {
        let context = format!("{} n={}", kind.name(), fmt_n(n));
        let qs = queries(
            &scene,
            kind,
            settings.queries,
            HITS_PER_QUERY,
            settings.seed ^ (0xA11 + k as u64),
        );
        progress.start(format!("queries {context}: reference"));
        let (reference, expected) = reference_hits(&scene, &qs);
        let hits: usize = expected.iter().map(Vec::len).sum();

        // First every index is built and checked, then timed.
        let mut agree = Vec::new();
        let mut mismatches = Vec::new();
        let mut searchers = Vec::new();
        for imp in participants(&settings.implementations, kind) {
            progress.start(format!("queries {context}: checking {}", imp.name()));
            let Some(mut searcher) = searcher(imp, kind, &scene) else {
                progress.finish_step();
                continue;
            };
            let got: Vec<Vec<u32>> = qs
                .iter()
                .map(|q| {
                    let mut hits = Vec::new();
                    searcher.search(q, &mut hits);
                    hits.sort_unstable();
                    hits
                })
                .collect();
            match diff_queries(&expected, &got) {
                None => agree.push(imp.name()),
                Some(detail) => mismatches.push(Mismatch {
                    implementation: imp.name(),
                    reference: reference.name(),
                    context: format!("{} queries, {context}", qs.len()),
                    detail,
                }),
            }
            searchers.push((imp, searcher));
        }
        progress.println(format!(
            "exact: queries {context}: {} queries, {} hits by {}; agree: {}",
            fmt_n(qs.len()),
            fmt_n(hits),
            reference.name(),
            agree.join(", ")
        ));
        if !mismatches.is_empty() {
            for m in &mismatches {
                progress.println(format!("MISMATCH: {m}"));
            }
            return Err(Error::Mismatch(mismatches));
        }

        let mut line = format!("  queries {context}:");
        for (imp, mut searcher) in searchers {
            progress.start(format!("queries {context}: timing {}", imp.name()));
            let record = measure(imp, kind, searcher.as_mut(), &scene, &qs, settings);
            progress.finish_step();
            let rate = record.queries_per_second().unwrap_or(0.0);
            line += &format!(" {} {}", imp.name(), fmt_rate(rate));
            results.records.push(record);
        }
        progress.println(line + " queries/s");
    }
    Ok(())
}

/// Times batches of all `qs`: the median of up to `settings.runs` batches,
/// fewer when they add up to more than the time limit.
fn measure(
    imp: Implementation,
    kind: QueryKind,
    searcher: &mut dyn Search,
    scene: &Scene,
    qs: &[Query],
    settings: &Settings,
) -> Record {
    let mut sampler = Sampler::new(settings.runs, settings.limit);
    let mut out = Vec::new();
    let mut found = 0;
    while sampler.wants_more() {
        found = 0;
        let (t, ()) = time(|| {
            for q in qs {
                out.clear();
                searcher.search(q, &mut out);
                found += out.len();
            }
        });
        sampler.push(t);
    }
    Record {
        benchmark: Benchmark::Queries(kind),
        layout: scene.scenario.layout,
        n: scene.boxes.len(),
        implementation: imp,
        median: sampler.median(),
        samples: sampler.samples().len(),
        extrapolated: false,
        count: found as u64,
        queries: qs.len(),
    }
}

/// The selected implementations that take part in queries of `kind`: every
/// one but brute force for areas, quadrat and rstar for circles and points.
pub(super) fn participants(
    implementations: &[Implementation],
    kind: QueryKind,
) -> Vec<Implementation> {
    implementations
        .iter()
        .copied()
        .filter(|&i| match kind {
            QueryKind::Area => !matches!(i, Implementation::Brute | Implementation::QuadratPar),
            QueryKind::Circle | QueryKind::Point => supports_shapes(i),
        })
        .collect()
}

/// Whether `imp` answers circle and point queries natively.
fn supports_shapes(imp: Implementation) -> bool {
    match imp {
        Implementation::Quadrat => true,
        #[cfg(feature = "peers")]
        Implementation::Rstar => true,
        _ => false,
    }
}

/// An index that answers one kind of query.
trait Search {
    /// Appends the index of every box the query hits.
    fn search(&mut self, q: &Query, out: &mut Vec<u32>);
}

/// Any implementation, for area queries.
struct Areas(Box<dyn Index>);

impl Search for Areas {
    fn search(&mut self, q: &Query, out: &mut Vec<u32>) {
        if let Query::Area(b) = q {
            self.0.query(*b, out);
        }
    }
}

impl Search for Quadrat {
    fn search(&mut self, q: &Query, out: &mut Vec<u32>) {
        match *q {
            Query::Area(b) => BroadPhase::query(self, b, out),
            Query::Circle(c, r) => self.query_circle(c, r, out),
            Query::Point(p) => self.query_point(p, out),
        }
    }
}

#[cfg(feature = "peers")]
impl Search for Rstar {
    fn search(&mut self, q: &Query, out: &mut Vec<u32>) {
        match *q {
            Query::Area(b) => BroadPhase::query(self, b, out),
            Query::Circle(c, r) => self.query_circle(c, r, out),
            Query::Point(p) => self.query_point(p, out),
        }
    }
}

/// Builds `imp`'s index over the scene for queries of `kind`, or `None`
/// when it does not answer them.
fn searcher(imp: Implementation, kind: QueryKind, scene: &Scene) -> Option<Box<dyn Search>> {
    let (world, boxes) = (scene.world, &scene.boxes[..]);
    match (kind, imp) {
        (QueryKind::Area, _) => Some(Box::new(Areas(imp.build(world, boxes)))),
        (_, Implementation::Quadrat) => Some(Box::new(Quadrat::build(world, boxes))),
        #[cfg(feature = "peers")]
        (_, Implementation::Rstar) => Some(Box::new(Rstar::build(world, boxes))),
        _ => None,
    }
}

/// The sorted hits of every query, and who found them: every box tested
/// against every query while that is affordable, else candidates from sort
/// and sweep's box query (over a box containing the query's shape) filtered
/// with the exact test.
fn reference_hits(scene: &Scene, qs: &[Query]) -> (Implementation, Vec<Vec<u32>>) {
    let boxes = &scene.boxes;
    let exact = |q: &Query, candidates: &mut dyn Iterator<Item = u32>| -> Vec<u32> {
        let mut hits: Vec<u32> = candidates.filter(|&i| q.hits(&boxes[i as usize])).collect();
        hits.sort_unstable();
        hits
    };
    if boxes.len().saturating_mul(qs.len()) <= BRUTE_TESTS {
        let all = || 0..boxes.len() as u32;
        let hits = qs.iter().map(|q| exact(q, &mut all())).collect();
        return (Implementation::Brute, hits);
    }
    let mut sweep = Sweep::build(scene.world, boxes);
    let mut candidates = Vec::new();
    let hits = qs
        .iter()
        .map(|q| {
            candidates.clear();
            BroadPhase::query(&mut sweep, q.bounds(), &mut candidates);
            exact(q, &mut candidates.iter().copied())
        })
        .collect();
    (Implementation::Sweep, hits)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::peers::Brute;

    #[test]
    fn reference_paths_agree() {
        let scene = Scene::new(Layout::Uniform, 3000, 5);
        for kind in QueryKind::ALL {
            let qs = queries(&scene, kind, 400, HITS_PER_QUERY, 9);
            let (_, by_brute) = reference_hits(&scene, &qs);
            let mut sweep = Sweep::build(scene.world, &scene.boxes);
            let mut brute = Brute::build(scene.world, &scene.boxes);
            for (q, expected) in qs.iter().zip(&by_brute) {
                let mut cands = Vec::new();
                BroadPhase::query(&mut sweep, q.bounds(), &mut cands);
                let mut got: Vec<u32> = cands
                    .into_iter()
                    .filter(|&i| q.hits(&scene.boxes[i as usize]))
                    .collect();
                got.sort_unstable();
                assert_eq!(&got, expected, "{q:?}");
                if let Query::Area(b) = q {
                    let mut direct = Vec::new();
                    BroadPhase::query(&mut brute, *b, &mut direct);
                    assert_eq!(&direct, expected, "{q:?}");
                }
            }
            let hits: usize = by_brute.iter().map(Vec::len).sum();
            let mean = hits as f32 / qs.len() as f32;
            match kind {
                QueryKind::Area | QueryKind::Circle => {
                    assert!(
                        (7.0..13.0).contains(&mean),
                        "{kind:?}: {mean} hits per query"
                    )
                }
                QueryKind::Point => assert!(mean < 2.0, "{mean} hits per point"),
            }
        }
    }
}
