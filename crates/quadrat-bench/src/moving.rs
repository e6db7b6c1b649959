//! Moving frames: every frame, update the index to the boxes' new places,
//! then find all pairs.

use std::collections::HashMap;
use std::time::Duration;

use super::exact::{Mismatch, diff_sorted};
use super::implementation::{Implementation, Index};
use super::peers::Bbox;
use super::progress::Progress;
use super::record::{Benchmark, Record};
use super::reference::Oracle;
use super::scene::{Frames, Motion, Scene};
use super::timing::{median, time};
use super::{Error, Results, Settings, fmt_ms, fmt_n};

/// Runs both motions in every layout of `settings.moving_layouts` at every
/// n of `settings.moving_ns`, adding one record per implementation (brute
/// force excepted).
pub(super) fn run(
    settings: &Settings,
    progress: &Progress,
    results: &mut Results,
) -> Result<(), Error> {
    for (&layout, &n) in settings
        .moving_layouts
        .iter()
        .flat_map(|l| settings.moving_ns.iter().map(move |n| (l, n)))
    {
        let scene = Scene::new(layout, n, settings.seed);
        for motion in Motion::ALL {
            let scene_name = super::report::moving_scene(motion, layout);
            let context = format!("{scene_name} n={}", fmt_n(n));
            let seed = settings.seed ^ 0x0F0F;
            // The reference pairs after a number of frames, computed when an
            // implementation first stops after that many.
            let mut references: HashMap<usize, (Implementation, Vec<(u32, u32)>)> = HashMap::new();
            let mut agree = Vec::new();
            let mut mismatches = Vec::new();
            let mut line = format!("  moving {context}:");
            let imps = participants(&settings.implementations);
            progress.start(format!("moving {context}: {}", names(&imps)));
            let runs = play(&imps, &scene, motion, seed, settings);
            imps.iter().for_each(|_| progress.finish_step());
            for (imp, run) in imps.into_iter().zip(runs) {
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
                    layout,
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

/// One implementation playing the frames.
struct Player {
    frames: Frames,
    index: Box<dyn Index>,
    pairs: Vec<(u32, u32)>,
    samples: Vec<Duration>,
    spent: Duration,
    played: usize,
    done: bool,
}

impl Player {
    /// Plays the next frame: moves the boxes, sleeps for the pause, then
    /// times the update and all pairs. Done after the warm-up and measured
    /// frames, or (after at least one measured frame) once the frames add
    /// up to the time limit.
    fn step(&mut self, world: Bbox, settings: &Settings) {
        self.frames.advance();
        self.played += 1;
        self.pairs.clear();
        let (index, pairs, boxes) = (&mut self.index, &mut self.pairs, &self.frames.boxes);
        if !settings.pause.is_zero() {
            std::thread::sleep(settings.pause);
        }
        let (t, ()) = time(|| {
            index.update(world, boxes);
            index.pairs_into(pairs);
        });
        self.spent += t;
        let over_budget = self.spent >= settings.limit;
        if self.played > settings.warmup || over_budget {
            self.samples.push(t);
        }
        self.done = over_budget || self.samples.len() >= settings.frames;
    }
}

/// Builds every implementation of `imps` on the scene, then plays the
/// frames with all of them in turn, one frame each per round, so that a
/// slow spell of a shared machine falls on every implementation alike
/// instead of on whichever ran then. Each replays the same frames.
fn play(
    imps: &[Implementation],
    scene: &Scene,
    motion: Motion,
    seed: u64,
    settings: &Settings,
) -> Vec<Run> {
    let mut players: Vec<Player> = imps
        .iter()
        .map(|imp| Player {
            frames: Frames::new(scene, motion, seed),
            index: imp.build(scene.world, &scene.boxes),
            pairs: Vec::new(),
            samples: Vec::with_capacity(settings.frames),
            spent: Duration::ZERO,
            played: 0,
            done: false,
        })
        .collect();
    while players.iter().any(|p| !p.done) {
        for p in players.iter_mut().filter(|p| !p.done) {
            p.step(scene.world, settings);
        }
    }
    players
        .into_iter()
        .map(|mut p| {
            p.pairs.sort_unstable();
            Run {
                frames: p.played,
                samples: p.samples,
                pairs: p.pairs,
            }
        })
        .collect()
}

/// The implementations' names, for the progress line.
fn names(imps: &[Implementation]) -> String {
    imps.iter().map(|i| i.name()).collect::<Vec<_>>().join(", ")
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::args::settings_from;
    use quadrat::scenario::Layout;

    #[test]
    fn players_take_turns_over_the_same_frames() {
        let line = ["quadrat-bench", "--quick", "--warmup", "2", "--frames", "3"];
        let settings = settings_from(&line);
        let scene = Scene::new(Layout::Uniform, 2000, 3);
        let (motion, seed) = (Motion::Teleport, 5);
        let imps = [
            Implementation::Sweep,
            Implementation::Quadrat,
            Implementation::Sweep,
        ];
        let runs = play(&imps, &scene, motion, seed, &settings);
        let mut replay = Frames::new(&scene, motion, seed);
        (0..5).for_each(|_| replay.advance());
        let mut expected = Vec::new();
        Implementation::Brute
            .build(scene.world, &replay.boxes)
            .pairs_into(&mut expected);
        expected.sort_unstable();
        assert!(!expected.is_empty());
        assert_eq!(runs.len(), imps.len());
        for run in &runs {
            assert_eq!((run.frames, run.samples.len()), (5, 3));
            assert_eq!(run.pairs, expected);
        }
    }
}
