//! Build + all pairs over a sweep of n: the scaling benchmark.

use std::collections::HashMap;
use std::time::Duration;

use super::exact::{Mismatch, diff_sorted};
use super::implementation::Implementation;
use super::progress::Progress;
use super::record::{Benchmark, Record};
use super::reference::Oracle;
use super::scene::Scene;
use super::timing::{Sampler, take_turns, time};
use super::{Error, Part, Results, Settings, fmt_ms, fmt_n};

/// Runs the sweep for every layout and n in `settings`, adding one record
/// per implementation and point.
pub(super) fn run(
    settings: &Settings,
    progress: &Progress,
    results: &mut Results,
) -> Result<(), Error> {
    let limit = settings.limit;
    for &layout in &settings.layouts {
        let mut oracle = Oracle::new(limit);
        // Measured single-run times of each implementation, by n.
        let mut history: HashMap<Implementation, Vec<(usize, Duration)>> = HashMap::new();
        let mut skipped: Vec<Implementation> = Vec::new();
        for &n in &settings.ns {
            let scene = Scene::new(layout, n, settings.seed);
            let context = format!("{} n={}", layout.name(), fmt_n(n));
            let mut active = Vec::new();
            for imp in static_ones(&settings.implementations) {
                let expected = history.get(&imp).and_then(|h| predict(h, n));
                match expected {
                    _ if skipped.contains(&imp) => progress.finish_step(),
                    Some(t) if imp != Implementation::Brute && t > limit => {
                        skipped.push(imp);
                        results.note(
                            Part::Pairs,
                            format!(
                                "{} was not run on the {} layout from n = {} on: a run was \
                                 expected to take {:.0} s, over the {} s limit.",
                                imp.name(),
                                layout.name(),
                                fmt_n(n),
                                t.as_secs_f64(),
                                limit.as_secs_f64()
                            ),
                        );
                        progress.finish_step();
                    }
                    _ => active.push(imp),
                }
            }

            progress.start(format!("pairs {context}: reference"));
            let (reference, expected, reference_time) = oracle.pairs(scene.world, &scene.boxes);
            let mut first_runs = check(&scene, &context, reference, &expected, &active, progress)?;
            if let Some(t) = reference_time {
                first_runs.insert(reference, t);
            }

            let mut line = format!("  {context}:");
            let extrapolated = |imp: Implementation| {
                imp == Implementation::Brute && reference != Implementation::Brute
            };
            let timed: Vec<Implementation> = active
                .iter()
                .copied()
                .filter(|&i| !extrapolated(i))
                .collect();
            progress.start(format!("pairs {context}: timing"));
            let mut measured = measure(
                &timed,
                &scene,
                settings.runs,
                limit,
                &first_runs,
                expected.len(),
            )
            .into_iter();
            for &imp in &active {
                let record = if extrapolated(imp) {
                    extrapolate_brute(&oracle, &scene, expected.len())
                } else {
                    let r = measured
                        .next()
                        .expect("one record per timed implementation");
                    if imp == Implementation::Brute {
                        oracle.record_brute(n, r.median);
                    }
                    history.entry(imp).or_default().push((n, r.median));
                    Some(r)
                };
                progress.finish_step();
                if let Some(r) = record {
                    let mark = if r.extrapolated { "≈" } else { "" };
                    line += &format!(" {} {mark}{}", imp.name(), fmt_ms(r.millis()));
                    results.records.push(r);
                }
            }
            progress.println(line + " ms");
        }
    }
    Ok(())
}

/// Runs build + all pairs once: the time of that, and the sorted pairs.
fn run_once(imp: Implementation, scene: &Scene) -> (Duration, Vec<(u32, u32)>) {
    let mut pairs = Vec::new();
    let (t, index) = time(|| {
        let mut index = imp.build(scene.world, &scene.boxes);
        index.pairs_into(&mut pairs);
        index
    });
    drop(index);
    pairs.sort_unstable();
    (t, pairs)
}

/// Checks every implementation's pairs against the reference's; prints the
/// outcome and fails naming each implementation that disagrees. Returns the
/// time each checked run took.
fn check(
    scene: &Scene,
    context: &str,
    reference: Implementation,
    expected: &[(u32, u32)],
    active: &[Implementation],
    progress: &Progress,
) -> Result<HashMap<Implementation, Duration>, Error> {
    let mut times = HashMap::new();
    let mut agree = Vec::new();
    let mut mismatches = Vec::new();
    for &imp in active {
        if imp == reference || imp == Implementation::Brute {
            // The reference itself, or brute force beyond its time limit.
            continue;
        }
        progress.start(format!("pairs {context}: checking {}", imp.name()));
        let (t, got) = run_once(imp, scene);
        times.insert(imp, t);
        match diff_sorted(expected, &got) {
            None => agree.push(imp.name()),
            Some(d) => mismatches.push(Mismatch {
                implementation: imp.name(),
                reference: reference.name(),
                context: format!("pairs, {context}"),
                detail: format!(
                    "{} pairs expected, {} found; {d}",
                    expected.len(),
                    got.len()
                ),
            }),
        }
    }
    progress.println(format!(
        "exact: pairs {context}: {} pairs by {}; agree: {}",
        fmt_n(expected.len()),
        reference.name(),
        if agree.is_empty() {
            "(no other implementation)".to_owned()
        } else {
            agree.join(", ")
        },
    ));
    if mismatches.is_empty() {
        Ok(times)
    } else {
        for m in &mismatches {
            progress.println(format!("MISMATCH: {m}"));
        }
        Err(Error::Mismatch(mismatches))
    }
}

/// Times build + all pairs for each of `imps`: the median of up to `runs`
/// runs each, fewer when they add up to more than `budget`. The
/// implementations take turns, one run each per round, so that a slow
/// spell of a shared machine falls on all of them alike instead of on
/// whichever ran then. So each run starts with the caches holding the
/// other implementations' data: at 1k and 10k boxes, whose data would fit
/// in the caches, every run is a cold one. The first run (the exactness
/// check, in `first`) is not timed again, unless it alone took the whole
/// budget: then it is the only sample. Each implementation was checked to
/// find the `pairs` pairs.
fn measure(
    imps: &[Implementation],
    scene: &Scene,
    runs: usize,
    budget: Duration,
    first: &HashMap<Implementation, Duration>,
    pairs: usize,
) -> Vec<Record> {
    let mut samplers: Vec<Sampler> = imps
        .iter()
        .map(|imp| {
            let mut sampler = Sampler::new(runs, budget);
            if let Some(&t) = first.get(imp).filter(|&&t| t >= budget) {
                sampler.push(t);
            }
            sampler
        })
        .collect();
    let mut out = Vec::new();
    take_turns(&mut samplers, |i| {
        let imp = imps[i];
        out.clear();
        let (t, index) = time(|| {
            let mut index = imp.build(scene.world, &scene.boxes);
            index.pairs_into(&mut out);
            index
        });
        drop(index);
        debug_assert_eq!(out.len(), pairs, "{} after its check", imp.name());
        t
    });
    imps.iter()
        .zip(samplers)
        .map(|(&imp, sampler)| Record {
            benchmark: Benchmark::Pairs,
            layout: scene.scenario.layout,
            n: scene.boxes.len(),
            implementation: imp,
            median: sampler.median(),
            samples: sampler.samples().len(),
            extrapolated: false,
            count: pairs as u64,
            queries: 0,
        })
        .collect()
}

/// The expected time of one run at `n`, from the last two measurements:
/// their growth as a power of n (between n¹ and n²), carried on.
fn predict(history: &[(usize, Duration)], n: usize) -> Option<Duration> {
    let [.., (n1, t1), (n2, t2)] = history else {
        return None;
    };
    let (t1, t2) = (t1.as_secs_f64().max(1e-9), t2.as_secs_f64().max(1e-9));
    let slope = ((t2 / t1).ln() / (*n2 as f64 / *n1 as f64).ln()).clamp(1.0, 2.0);
    Some(Duration::from_secs_f64(
        t2 * (n as f64 / *n2 as f64).powf(slope),
    ))
}

/// Brute force beyond the time limit: its time at the largest measured n,
/// scaled as n².
fn extrapolate_brute(oracle: &Oracle, scene: &Scene, pairs: usize) -> Option<Record> {
    let n = scene.boxes.len();
    Some(Record {
        benchmark: Benchmark::Pairs,
        layout: scene.scenario.layout,
        n,
        implementation: Implementation::Brute,
        median: oracle.brute_estimate(n)?,
        samples: 0,
        extrapolated: true,
        count: pairs as u64,
        queries: 0,
    })
}

/// The implementations of the pairs sweep (see [`Implementation::is_static`]).
pub(super) fn static_ones(implementations: &[Implementation]) -> Vec<Implementation> {
    implementations
        .iter()
        .copied()
        .filter(|i| i.is_static())
        .collect()
}

#[cfg(test)]
mod tests {
    use quadrat::scenario::Layout;

    use super::*;

    #[test]
    fn prediction_carries_the_measured_growth_on() {
        let ms = Duration::from_millis;
        assert_eq!(predict(&[], 100), None);
        assert_eq!(predict(&[(10, ms(1))], 100), None);
        // n^1.5 growth: 1 ms -> 31.6 ms per factor 10.
        let t = predict(&[(10, ms(1)), (100, Duration::from_secs_f64(0.0316))], 1000).unwrap();
        assert!((t.as_secs_f64() - 1.0).abs() < 0.01, "{t:?}");
        // Growth below n^1 is taken as n^1, above n^2 as n^2.
        assert_eq!(predict(&[(10, ms(10)), (100, ms(10))], 1000), Some(ms(100)));
        assert_eq!(
            predict(&[(10, ms(1)), (100, ms(1000))], 1000),
            Some(ms(100_000))
        );
    }

    #[test]
    fn implementations_take_turns_and_keep_their_order() {
        let scene = Scene::new(Layout::Clustered, 3000, 4);
        let (_, expected) = run_once(Implementation::Brute, &scene);
        let imps = [
            Implementation::Sweep,
            Implementation::Quadrat,
            Implementation::Brute,
        ];
        let slow = HashMap::from([(Implementation::Brute, Duration::from_secs(60))]);
        let n = expected.len();
        let records = measure(&imps, &scene, 3, Duration::from_secs(30), &slow, n);
        let got: Vec<_> = records
            .iter()
            .map(|r| (r.implementation, r.samples, r.count))
            .collect();
        let n = n as u64;
        assert!(n > 0);
        // A first run over the budget is the only sample, and not run again.
        assert_eq!(
            got,
            [
                (Implementation::Sweep, 3, n),
                (Implementation::Quadrat, 3, n),
                (Implementation::Brute, 1, n),
            ]
        );
        assert_eq!(records[2].median, Duration::from_secs(60));
    }
}
