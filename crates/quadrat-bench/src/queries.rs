//! Query throughput: batches of area, circle, point, nearest and ray-cast
//! queries against an index built beforehand. This file runs the shape
//! queries (area, circle, point) and holds what every kind shares: the
//! [`Search`] interface, checking each participant before timing it, and
//! the timing. Nearest and ray casts are in [`closest`].

use quadrat::scenario::Layout;

use super::closest;
use super::exact::{Mismatch, diff_queries};
use super::implementation::{Implementation, Index};
use super::ours::Quadrat;
#[cfg(feature = "peers")]
use super::peers::Rstar;
use super::peers::{BroadPhase, Sweep};
use super::progress::Progress;
use super::record::{Benchmark, Record};
use super::scene::{Query, QueryKind, Scene, queries};
use super::timing::{Sampler, take_turns, time};
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
        let seed = settings.seed ^ (0xA11 + k as u64);
        if !kind.is_shape() {
            closest::run(settings, progress, results, &scene, kind, seed)?;
            continue;
        }
        let qs = queries(&scene, kind, settings.queries, HITS_PER_QUERY, seed);
        progress.start(format!("queries {} n={}: reference", kind.name(), fmt_n(n)));
        let (reference, expected) = reference_hits(&scene, &qs);
        let hits: usize = expected.iter().map(Vec::len).sum();
        let contest = Contest {
            kind,
            scene: &scene,
            queries: &qs,
            reference,
            summary: format!(
                "{} queries, {} hits by {}",
                fmt_n(qs.len()),
                fmt_n(hits),
                reference.name()
            ),
        };
        contest.run(
            settings,
            progress,
            results,
            |imp| searcher(imp, kind, &scene),
            |_, mut got| {
                for hits in &mut got {
                    hits.sort_unstable();
                }
                diff_queries(&expected, &got).map_or(Ok(None), Err)
            },
        )?;
    }
    Ok(())
}

/// One kind of query over one scene, with the reference's answers in hand:
/// every participant is first checked, then timed.
pub(super) struct Contest<'a, Q> {
    /// The kind of query.
    pub(super) kind: QueryKind,
    /// The boxes.
    pub(super) scene: &'a Scene,
    /// The batch of queries.
    pub(super) queries: &'a [Q],
    /// Who computed the reference answers.
    pub(super) reference: Implementation,
    /// What the reference found, for the log: `10,000 queries, … by brute`.
    pub(super) summary: String,
}

/// A participant of a contest, ready to search.
type Searcher<Q, H> = (Implementation, Box<dyn Search<Q, Hit = H>>);

/// What a participant's check said: agreement (with a remark for the log,
/// such as ties resolved otherwise), or how it differs.
pub(super) type Verdict = Result<Option<String>, String>;

impl<Q> Contest<'_, Q> {
    /// Builds each participant of this kind with `build` (`None` skips it)
    /// and runs it on every query; `check` compares its answers with the
    /// reference's. When all agree, times each and appends its record.
    pub(super) fn run<H>(
        &self,
        settings: &Settings,
        progress: &Progress,
        results: &mut Results,
        build: impl Fn(Implementation) -> Option<Box<dyn Search<Q, Hit = H>>>,
        mut check: impl FnMut(Implementation, Vec<Vec<H>>) -> Verdict,
    ) -> Result<(), Error> {
        let context = format!("{} n={}", self.kind.name(), fmt_n(self.scene.boxes.len()));
        // First every index is built and checked, then timed.
        let mut agree = Vec::new();
        let mut mismatches = Vec::new();
        let mut searchers = Vec::new();
        for imp in participants(&settings.implementations, self.kind) {
            progress.start(format!("queries {context}: checking {}", imp.name()));
            let Some(mut searcher) = build(imp) else {
                progress.finish_step();
                continue;
            };
            let got: Vec<Vec<H>> = self
                .queries
                .iter()
                .map(|q| {
                    let mut hits = Vec::new();
                    searcher.search(q, &mut hits);
                    hits
                })
                .collect();
            match check(imp, got) {
                Ok(None) => agree.push(imp.name().to_owned()),
                Ok(Some(remark)) => agree.push(format!("{} ({remark})", imp.name())),
                Err(detail) => mismatches.push(Mismatch {
                    implementation: imp.name(),
                    reference: self.reference.name(),
                    context: format!("{} queries, {context}", self.queries.len()),
                    detail,
                }),
            }
            searchers.push((imp, searcher));
        }
        progress.println(format!(
            "exact: queries {context}: {}; agree: {}",
            self.summary,
            agree.join(", ")
        ));
        if !mismatches.is_empty() {
            for m in &mismatches {
                progress.println(format!("MISMATCH: {m}"));
            }
            return Err(Error::Mismatch(mismatches));
        }

        let mut line = format!("  queries {context}:");
        progress.start(format!("queries {context}: timing"));
        for record in self.measure(&mut searchers, settings) {
            progress.finish_step();
            let rate = record.queries_per_second().unwrap_or(0.0);
            line += &format!(" {} {}", record.implementation.name(), fmt_rate(rate));
            results.records.push(record);
        }
        progress.println(line + " queries/s");
        Ok(())
    }

    /// Times batches of all queries for each of `searchers`: the median of
    /// up to `settings.runs` batches each, fewer when they add up to more
    /// than the time limit. The searchers take turns, one batch each per
    /// round, so that a slow spell of a shared machine falls on all of them
    /// alike (as in the pairs sweep and the moving frames).
    fn measure<H>(&self, searchers: &mut [Searcher<Q, H>], settings: &Settings) -> Vec<Record> {
        let mut samplers: Vec<Sampler> = searchers
            .iter()
            .map(|_| Sampler::new(settings.runs, settings.limit))
            .collect();
        let mut found = vec![0; searchers.len()];
        let mut out = Vec::new();
        take_turns(&mut samplers, |i| {
            let (searcher, found) = (&mut searchers[i].1, &mut found[i]);
            *found = 0;
            let (t, ()) = time(|| {
                for q in self.queries {
                    out.clear();
                    searcher.search(q, &mut out);
                    *found += out.len();
                }
            });
            t
        });
        searchers
            .iter()
            .zip(samplers)
            .zip(found)
            .map(|((&(imp, _), sampler), found)| Record {
                benchmark: Benchmark::Queries(self.kind),
                layout: self.scene.scenario.layout,
                n: self.scene.boxes.len(),
                implementation: imp,
                median: sampler.median(),
                samples: sampler.samples().len(),
                extrapolated: false,
                count: found as u64,
                queries: self.queries.len(),
            })
            .collect()
    }
}

/// The selected implementations that take part in queries of `kind`: every
/// one but brute force for areas; quadrat and rstar for circles, points and
/// nearest; quadrat and parry2d for ray casts.
pub(super) fn participants(
    implementations: &[Implementation],
    kind: QueryKind,
) -> Vec<Implementation> {
    implementations
        .iter()
        .copied()
        .filter(|&i| match kind {
            QueryKind::Area => {
                i.is_static()
                    && !matches!(
                        i,
                        Implementation::Brute
                            | Implementation::QuadratPar
                            | Implementation::QuadratLoop
                    )
            }
            QueryKind::Circle | QueryKind::Point => supports_shapes(i),
            QueryKind::Nearest | QueryKind::Raycast => closest::answers(i, kind),
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

/// An index that answers queries of type `Q`.
pub(super) trait Search<Q> {
    /// One item of an answer: a box index, or a box index and a distance.
    type Hit;

    /// Appends the query's answer to `out`.
    fn search(&mut self, q: &Q, out: &mut Vec<Self::Hit>);
}

/// Any implementation, for area queries.
struct Areas(Box<dyn Index>);

impl Search<Query> for Areas {
    type Hit = u32;

    fn search(&mut self, q: &Query, out: &mut Vec<u32>) {
        if let Query::Area(b) = q {
            self.0.query(*b, out);
        }
    }
}

impl Search<Query> for Quadrat {
    type Hit = u32;

    fn search(&mut self, q: &Query, out: &mut Vec<u32>) {
        match *q {
            Query::Area(b) => BroadPhase::query(self, b, out),
            Query::Circle(c, r) => self.query_circle(c, r, out),
            Query::Point(p) => self.query_point(p, out),
        }
    }
}

#[cfg(feature = "peers")]
impl Search<Query> for Rstar {
    type Hit = u32;

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
fn searcher(
    imp: Implementation,
    kind: QueryKind,
    scene: &Scene,
) -> Option<Box<dyn Search<Query, Hit = u32>>> {
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
    use crate::peers::Brute;

    #[test]
    fn searchers_take_turns_and_keep_their_order() {
        let scene = Scene::new(Layout::Uniform, 3000, 5);
        let kind = QueryKind::Area;
        let qs = queries(&scene, kind, 200, HITS_PER_QUERY, 9);
        let (_, expected) = reference_hits(&scene, &qs);
        let hits = expected.iter().map(Vec::len).sum::<usize>() as u64;
        assert!(hits > 0);
        let contest = Contest {
            kind,
            scene: &scene,
            queries: &qs,
            reference: Implementation::Sweep,
            summary: String::new(),
        };
        let imps = [Implementation::Quadrat, Implementation::Sweep];
        let mut searchers: Vec<_> = imps
            .iter()
            .map(|&i| (i, searcher(i, kind, &scene).expect("a shape searcher")))
            .collect();
        let settings = crate::args::settings_from(&["quadrat-bench", "--quick", "--runs", "4"]);
        let records = contest.measure(&mut searchers, &settings);
        let got: Vec<_> = records
            .iter()
            .map(|r| (r.implementation, r.samples, r.count, r.queries))
            .collect();
        assert_eq!(
            got,
            [
                (Implementation::Quadrat, 4, hits, 200),
                (Implementation::Sweep, 4, hits, 200),
            ]
        );
    }

    #[test]
    fn reference_paths_agree() {
        let scene = Scene::new(Layout::Uniform, 3000, 5);
        for kind in QueryKind::ALL.into_iter().filter(|k| k.is_shape()) {
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
                QueryKind::Nearest | QueryKind::Raycast => unreachable!("not a shape"),
            }
        }
    }
}
