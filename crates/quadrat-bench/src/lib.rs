//! The quadrat benchmarks: brute force, other broad phases and quadrat on
//! the same seeded scenes. The `quadrat-bench` binary runs them ([`run`]);
//! `benches/` holds the library's criterion benches.
//!
//! For each scene, every implementation is first checked to report exactly
//! the reference's result (brute force while it is affordable, else sort and
//! sweep), and only then timed. Five benchmarks, one per [`Part`]:
//!
//! - **pairs**: build the index from scratch and find all pairs, over a
//!   sweep of n, for each layout of [`quadrat::scenario`]. Brute force runs
//!   while a run takes less than the time limit; beyond, its time is
//!   extrapolated as n² and marked so. Other implementations are left out
//!   where a run is expected to take longer than the limit.
//! - **moving**: every frame, update the index to the boxes' new places and
//!   find all pairs; boxes drift, or drift while 1% teleport.
//! - **queries**: batches of area queries (every implementation) and of
//!   circle and point queries (quadrat and rstar), about 10 hits each; of
//!   the k nearest boxes to a point (quadrat and rstar); and of the first box
//!   a ray hits (quadrat and parry2d).
//! - **memory**: the heap each tree-shaped index takes at the queries' n,
//!   peak while built and retained, counted by the binary's allocator
//!   ([`alloc`]).
//! - **resting**: a static tile map with 1k or 10k movers, timed per step
//!   for quadrat's `CollisionWorld` and for the two-tree split written by
//!   hand with each implementation (see `resting.rs`); `resting.md` and
//!   `resting.png` (time per step against the number of static tiles).
//!
//! Results go to standard output and to `--out`: `bench.md` (the tables),
//! `bench.csv` (every figure) and `pairs.png` / `pairs.svg` (time against n,
//! log–log, one line per implementation).
//!
//! The peers (rstar, broccoli, parry2d, flat_spatial, obvhs) come with the
//! default feature `peers`; without it, the benchmarks know brute force,
//! sort and sweep, the tutorial quadtree and quadrat.

pub mod alloc;
mod args;
mod closest;
mod exact;
mod implementation;
mod memory;
mod moving;
pub mod ours;
mod pairs;
pub mod peers;
mod plot;
pub mod probe;
mod progress;
mod queries;
mod record;
mod reference;
mod report;
mod resting;
pub mod scene;
mod timing;

use core::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Instant;

use self::args::Settings;
pub use self::args::{Args, Part};
pub use self::exact::Mismatch;
pub use self::implementation::{Implementation, Index};
use self::progress::Progress;
pub use self::record::{Benchmark, Record};
use self::report::{fmt_ms, fmt_n, fmt_rate};

/// What the benchmarks produced: figures, and notes for the report.
#[derive(Debug, Default)]
struct Results {
    records: Vec<Record>,
    memory: Vec<memory::MemoryRecord>,
    notes: Vec<(Part, String)>,
}

impl Results {
    /// Adds a sentence to the report's section on `part`.
    fn note(&mut self, part: Part, note: String) {
        self.notes.push((part, note));
    }
}

/// Why a benchmark run failed.
#[derive(Debug)]
pub enum Error {
    /// Implementations disagreed with the reference: the benchmark would
    /// compare different work, so it stops.
    Mismatch(Vec<Mismatch>),
    /// An output file could not be written.
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What went wrong.
        source: io::Error,
    },
    /// The plot could not be drawn.
    Plot(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Mismatch(ms) => {
                let names: Vec<_> = ms.iter().map(|m| m.implementation).collect();
                write!(
                    f,
                    "exactness check failed: {} disagree{} with the reference",
                    names.join(", "),
                    if names.len() == 1 { "s" } else { "" }
                )?;
                for m in ms {
                    write!(f, "\n  {m}")?;
                }
                Ok(())
            }
            Error::Io { path, source } => write!(f, "cannot write {}: {source}", path.display()),
            Error::Plot(e) => write!(f, "cannot draw the plot: {e}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// Runs the benchmarks `args` select: what the `quadrat-bench` binary does.
///
/// # Errors
/// When an implementation disagrees with the reference ([`Error::Mismatch`]),
/// or an output cannot be written.
pub fn run(args: &Args) -> Result<(), Error> {
    let settings = Settings::new(args);
    let started = Instant::now();
    println!(
        "quadrat-bench: {} ({} cores), median of up to {} runs, time limit {} s",
        if args.quick { "quick run" } else { "full run" },
        std::thread::available_parallelism().map_or(1, usize::from),
        settings.runs,
        settings.limit.as_secs_f64(),
    );
    if cfg!(debug_assertions) {
        println!("warning: built without optimizations; use --release for meaningful times");
    }
    create_dir(&settings.out)?;

    let progress = Progress::new(settings.steps());
    let mut results = Results::default();
    let outcome = run_parts(&settings, &progress, &mut results);
    progress.finish();
    outcome?;

    let records = &results.records;
    let markdown = report::markdown(&settings, &results);
    println!("\n{markdown}");
    let out = &settings.out;
    write(&out.join("bench.md"), &markdown)?;
    write(&out.join("bench.csv"), &report::csv(records))?;
    if settings.runs(Part::Pairs) {
        plot::write(
            records,
            &settings.layouts,
            &out.join("pairs.png"),
            &out.join("pairs.svg"),
        )?;
    }
    println!(
        "wrote bench.md, bench.csv{} to {} in {:.0} s",
        if settings.runs(Part::Pairs) {
            ", pairs.png, pairs.svg"
        } else {
            ""
        },
        out.display(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Runs the selected benchmarks, in order.
fn run_parts(settings: &Settings, progress: &Progress, results: &mut Results) -> Result<(), Error> {
    if settings.runs(Part::Pairs) {
        pairs::run(settings, progress, results)?;
    }
    if settings.runs(Part::Moving) {
        moving::run(settings, progress, results)?;
    }
    if settings.runs(Part::Queries) {
        queries::run(settings, progress, results)?;
    }
    if settings.runs(Part::Memory) {
        memory::run(settings, progress, results);
    }
    if settings.runs(Part::Resting) {
        resting::run(settings, progress, results)?;
    }
    Ok(())
}

fn create_dir(path: &Path) -> Result<(), Error> {
    fs::create_dir_all(path).map_err(|source| Error::Io {
        path: path.to_owned(),
        source,
    })
}

fn write(path: &Path, contents: &str) -> Result<(), Error> {
    fs::write(path, contents).map_err(|source| Error::Io {
        path: path.to_owned(),
        source,
    })
}
