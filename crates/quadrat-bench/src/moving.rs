//! Moving frames: every frame, update the index to the boxes' new places,
//! then find all pairs.

use std::collections::HashMap;
use std::time::Duration;

use quadrat::scenario::Layout;

use super::exact::{Mismatch, diff_sorted};
use super::implementation::Implementation;
use super::progress::Progress;
use super::record::{Benchmark, Record};
use super::reference::Oracle;
use super::scene::{Frames, Motion, Scene};
use super::timing::{median, time};
use super::{Error, Results, Settings, fmt_ms, fmt_n};

/// Runs both motions at every n of `settings.moving_ns`, adding one record
/// per implementation (brute force excepted).
pub(super) fn run(
    settings: &Settings,
    progress: &Progress,
    results: &mut Results,
) -> Result<(), Error> {
    for &n in &settings.moving_ns {
        let scene = Scene::new(Layout::Uniform, n, settings.seed);
        for motion in Motion::ALL {
            let context = format!("{} n={}", motion.name(), fmt_n(n));
            let seed = settings.seed ^ 0x0F0F;
            // The reference pairs after a number of frames, computed when an
            // implementation first stops after that many.
            let mut references: HashMap<usize, (Implementation, Vec<(u32, u32)>)> = HashMap::new();
            let mut agree = Vec::new();
            let mut mismatches = Vec::new();
            let mut line = format!("  moving {context}:");
            for imp in participants(&settings.implementations) {
                progress.start(format!("moving {context}: {}", imp.name()));
                let run = play(imp, &scene, motion, seed, settings);
                progress.finish_step();

                let (reference, expected) = references.entry(run.frames).or_insert_with(|| {
                    progress.start(format!("moving {context}: reference"));
                    let mut replay = Frames::new(&scene, motion, seed);
                    (0..run.frames).for_each(|_| replay.advance());
                    let (reference, pairs, _) =
                        Oracle::new(settings.limit).pairs(scene.world, &replay.boxes);
                    (reference, pairs)
                });
                match diff_sorted(expected, &run.pairs) {
                    None => agree.push(imp.name()),
                    Some(d) => mismatches.push(Mismatch {
                        implementation: imp.name(),
                        reference: reference.name(),
                        context: format!("moving frame {}, {context}", run.frames),
                        detail: format!(
                            "{} pairs expected, {} found; {d}",
                            expected.len(),
                            run.pairs.len()
                        ),
                    }),
                }
                let record = Record {
                    benchmark: Benchmark::Moving(motion),
                    layout: Layout::Uniform,
                    n,
                    implementation: imp,
                    median: median(&run.samples),
                    samples: run.samples.len(),
                    extrapolated: false,
                    count: run.pairs.len() as u64,
                    queries: 0,
                };
                line += &format!(" {} {}", imp.name(), fmt_ms(record.millis()));
                results.records.push(record);
            }
            let full = settings.warmup + settings.frames;
            if let Some((&frames, (reference, expected))) = references
                .get_key_value(&full)
                .or_else(|| references.iter().next())
            {
                progress.println(format!(
                    "exact: moving {context}: {} pairs by {} after {frames} frames; agree: {}",
                    fmt_n(expected.len()),
                    reference.name(),
                    agree.join(", ")
                ));
            }
            if !mismatches.is_empty() {
                for m in &mismatches {
                    progress.println(format!("MISMATCH: {m}"));
                }
                return Err(Error::Mismatch(mismatches));
            }
            progress.println(line + " ms per frame");
        }
    }
    Ok(())
}

/// What one implementation did over the frames.
struct Run {
    /// Frames played.
    frames: usize,
    /// Times of the measured frames (update + all pairs).
    samples: Vec<Duration>,
    /// The sorted pairs of the last frame.
    pairs: Vec<(u32, u32)>,
}

/// Builds `imp` on the scene, then plays the warm-up and measured frames,
/// stopping early (after at least one measured frame) once the frames add up
/// to the time limit.
fn play(imp: Implementation, scene: &Scene, motion: Motion, seed: u64, settings: &Settings) -> Run {
    let mut frames = Frames::new(scene, motion, seed);
    let mut index = imp.build(scene.world, &scene.boxes);
    let mut pairs = Vec::new();
    let mut samples = Vec::with_capacity(settings.frames);
    let mut spent = Duration::ZERO;
    let mut played = 0;
    while samples.len() < settings.frames {
        frames.advance();
        played += 1;
        pairs.clear();
        let (t, ()) = time(|| {
            index.update(scene.world, &frames.boxes);
            index.pairs_into(&mut pairs);
        });
        spent += t;
        let over_budget = spent >= settings.limit;
        if played > settings.warmup || over_budget {
            samples.push(t);
        }
        if over_budget {
            break;
        }
    }
    pairs.sort_unstable();
    Run {
        frames: played,
        samples,
        pairs,
    }
}

/// The selected implementations, brute force excepted: at the sizes of the
/// moving benchmark it would take seconds a frame.
pub(super) fn participants(implementations: &[Implementation]) -> Vec<Implementation> {
    implementations
        .iter()
        .copied()
        .filter(|&i| i != Implementation::Brute)
        .collect()
}
