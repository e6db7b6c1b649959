//! The command line of `quadrat-bench`, and the settings it resolves to.

use std::path::PathBuf;
use std::time::Duration;

use quadrat::scenario::Layout;

use super::implementation::Implementation;
use super::scene::{Motion, QueryKind};
use super::{memory, moving, pairs, queries, resting};

/// The benchmarks `quadrat-bench` can run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Part {
    /// Build + all pairs over a sweep of n.
    Pairs,
    /// Update + all pairs, frame after frame.
    Moving,
    /// Area, circle, point, nearest and ray-cast queries.
    Queries,
    /// Heap of each index, peak while built and retained.
    Memory,
    /// A static tile map with movers, and brownian motion: the step's cost
    /// against what moved.
    Resting,
}

/// Options of `quadrat-bench`. Unset options take the defaults of the
/// full run, or of the quick run with `--quick`.
#[derive(Clone, Debug, clap::Args)]
pub struct Args {
    /// Quick run, for a first look and for tests: n up to 100k, 3 runs,
    /// a 2 s time limit, moving frames and queries at 100k.
    #[arg(long)]
    pub quick: bool,

    /// Benchmarks to run [default: all].
    #[arg(long, value_delimiter = ',')]
    pub only: Vec<Part>,

    /// Layouts of the pairs sweep: uniform, clustered, mixed [default: all].
    #[arg(long, value_delimiter = ',', value_parser = parse_layout)]
    pub layouts: Vec<Layout>,

    /// Numbers of boxes of the pairs sweep; `k` and `M` suffixes work
    /// [default: 1k,10k,100k,1M; quick: 1k,10k,100k].
    #[arg(long = "n", value_name = "N", value_delimiter = ',', value_parser = parse_count)]
    pub ns: Vec<usize>,

    /// Implementations to check and time [default: all].
    #[arg(long, value_delimiter = ',')]
    pub impls: Vec<Implementation>,

    /// Timed runs per point; the median is reported [default: 5; quick: 3].
    #[arg(long)]
    pub runs: Option<usize>,

    /// Time limit of one run, in seconds. Where a run is expected to take
    /// longer, brute force is extrapolated as n² and other implementations
    /// are left out. Repeated runs and frames stop once they add up to it
    /// [default: 30; quick: 2].
    #[arg(long, value_name = "SECONDS")]
    pub limit: Option<f64>,

    /// Numbers of boxes of the moving-frame benchmark [default: 100k,1M;
    /// quick: 100k].
    #[arg(long, value_name = "N", value_delimiter = ',', value_parser = parse_count)]
    pub moving_n: Vec<usize>,

    /// Layouts of the moving-frame benchmark: uniform, clustered, mixed
    /// [default: uniform].
    #[arg(long, value_delimiter = ',', value_parser = parse_layout)]
    pub moving_layouts: Vec<Layout>,

    /// Numbers of static tiles of the resting benchmark, each with 1k and
    /// 10k movers [default: 8k,10k,100k,200k,1M; quick: 8k,10k,100k,200k].
    #[arg(long, value_name = "N", value_delimiter = ',', value_parser = parse_count)]
    pub resting_n: Vec<usize>,

    /// Numbers of movers of the resting benchmark [default: 1k,10k].
    #[arg(long, value_name = "N", value_delimiter = ',', value_parser = parse_count)]
    pub resting_movers: Vec<usize>,

    /// Numbers of bodies of the brownian scene (nothing rests)
    /// [default: 10k,100k].
    #[arg(long, value_name = "N", value_delimiter = ',', value_parser = parse_count)]
    pub brownian_n: Vec<usize>,

    /// Frames before the measured ones [default: 5; quick: 2].
    #[arg(long)]
    pub warmup: Option<usize>,

    /// Measured frames; the median is reported [default: 10; quick: 5].
    #[arg(long)]
    pub frames: Option<usize>,

    /// Milliseconds to sleep before each moving frame of each
    /// implementation, untimed, as a game waits for its next frame: the
    /// process idles, and rayon's threads fall asleep between frames
    /// [default: 0].
    #[arg(long, value_name = "MS", value_parser = parse_pause)]
    pub pause: Option<Duration>,

    /// Number of boxes the queries run against [default: 1M; quick: 100k].
    #[arg(long, value_name = "N", value_parser = parse_count)]
    pub query_n: Option<usize>,

    /// Queries per batch [default: 10k].
    #[arg(long, value_name = "N", value_parser = parse_count)]
    pub queries: Option<usize>,

    /// Boxes asked for by each nearest query [default: 10].
    #[arg(long, value_name = "K", value_parser = parse_count)]
    pub nearest_k: Option<usize>,

    /// Seed of the scenes, motions and queries.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,

    /// Directory for bench.md, bench.csv, pairs.png and pairs.svg.
    #[arg(long, default_value = "target/bench")]
    pub out: PathBuf,
}

/// `Args` with every default filled in.
#[derive(Clone, Debug)]
pub(super) struct Settings {
    pub(super) parts: Vec<Part>,
    pub(super) layouts: Vec<Layout>,
    /// Ascending, without duplicates.
    pub(super) ns: Vec<usize>,
    pub(super) implementations: Vec<Implementation>,
    pub(super) runs: usize,
    pub(super) limit: Duration,
    pub(super) moving_ns: Vec<usize>,
    /// Without duplicates, in the order of `Layout::ALL`.
    pub(super) moving_layouts: Vec<Layout>,
    pub(super) resting_ns: Vec<usize>,
    pub(super) resting_movers: Vec<usize>,
    pub(super) brownian_ns: Vec<usize>,
    pub(super) warmup: usize,
    pub(super) frames: usize,
    /// Sleep before each moving frame.
    pub(super) pause: Duration,
    pub(super) query_n: usize,
    pub(super) queries: usize,
    pub(super) nearest_k: usize,
    pub(super) seed: u64,
    pub(super) out: PathBuf,
}

impl Settings {
    pub(super) fn new(args: &Args) -> Settings {
        let quick = args.quick;
        let or = |given: &[usize], full: &[usize], fast: &[usize]| -> Vec<usize> {
            let mut v = if !given.is_empty() {
                given.to_vec()
            } else if quick {
                fast.to_vec()
            } else {
                full.to_vec()
            };
            v.sort_unstable();
            v.dedup();
            v
        };
        let pick = |given: Option<usize>, full: usize, fast: usize| {
            given.unwrap_or(if quick { fast } else { full })
        };
        let mut implementations = if args.impls.is_empty() {
            Implementation::ALL.to_vec()
        } else {
            args.impls.clone()
        };
        implementations.sort_unstable_by_key(|i| Implementation::ALL.iter().position(|a| a == i));
        implementations.dedup();
        Settings {
            parts: if args.only.is_empty() {
                vec![
                    Part::Pairs,
                    Part::Moving,
                    Part::Queries,
                    Part::Memory,
                    Part::Resting,
                ]
            } else {
                args.only.clone()
            },
            layouts: if args.layouts.is_empty() {
                Layout::ALL.to_vec()
            } else {
                args.layouts.clone()
            },
            ns: or(
                &args.ns,
                &[1_000, 10_000, 100_000, 1_000_000],
                &[1_000, 10_000, 100_000],
            ),
            implementations,
            runs: pick(args.runs, 5, 3).max(1),
            limit: Duration::from_secs_f64(
                args.limit
                    .unwrap_or(if quick { 2.0 } else { 30.0 })
                    .max(0.0),
            ),
            moving_ns: or(&args.moving_n, &[100_000, 1_000_000], &[100_000]),
            moving_layouts: if args.moving_layouts.is_empty() {
                vec![Layout::Uniform]
            } else {
                Layout::ALL
                    .into_iter()
                    .filter(|l| args.moving_layouts.contains(l))
                    .collect()
            },
            resting_ns: or(
                &args.resting_n,
                &[8_000, 10_000, 100_000, 200_000, 1_000_000],
                &[8_000, 10_000, 100_000, 200_000],
            ),
            resting_movers: or(&args.resting_movers, &[1_000, 10_000], &[1_000, 10_000]),
            brownian_ns: or(&args.brownian_n, &[10_000, 100_000], &[10_000, 100_000]),
            warmup: pick(args.warmup, 5, 2),
            frames: pick(args.frames, 10, 5).max(1),
            pause: args.pause.unwrap_or(Duration::ZERO),
            query_n: pick(args.query_n, 1_000_000, 100_000).max(1),
            queries: pick(args.queries, 10_000, 10_000).max(1),
            nearest_k: args.nearest_k.unwrap_or(10),
            seed: args.seed,
            out: args.out.clone(),
        }
    }

    pub(super) fn runs(&self, part: Part) -> bool {
        self.parts.contains(&part)
    }

    /// Progress steps: one per implementation and measured point.
    pub(super) fn steps(&self) -> u64 {
        let imps = &self.implementations;
        let mut steps = 0;
        if self.runs(Part::Pairs) {
            steps += self.layouts.len() * self.ns.len() * pairs::static_ones(imps).len();
        }
        if self.runs(Part::Moving) {
            steps += self.moving_layouts.len()
                * self.moving_ns.len()
                * Motion::ALL.len()
                * moving::participants(imps).len();
        }
        if self.runs(Part::Queries) {
            steps += QueryKind::ALL
                .iter()
                .map(|&k| queries::participants(imps, k).len())
                .sum::<usize>();
        }
        if self.runs(Part::Memory) {
            steps += memory::participants(imps).len();
        }
        if self.runs(Part::Resting) {
            steps += (2 * self.resting_movers.len() * self.resting_ns.len()
                + self.brownian_ns.len())
                * resting::runners(imps).len();
        }
        steps as u64
    }
}

/// Parses a layout name: `uniform`, `clustered` or `mixed`.
fn parse_layout(s: &str) -> Result<Layout, String> {
    Layout::ALL
        .into_iter()
        .find(|l| l.name() == s)
        .ok_or_else(|| format!("unknown layout `{s}` (expected uniform, clustered or mixed)"))
}

/// Parses a count such as `2000`, `10_000`, `10k` or `1M`.
fn parse_count(s: &str) -> Result<usize, String> {
    let t = s.trim().replace('_', "");
    let (digits, scale) = match t.char_indices().last() {
        Some((i, 'k' | 'K')) => (&t[..i], 1_000.0),
        Some((i, 'm' | 'M')) => (&t[..i], 1_000_000.0),
        _ => (&t[..], 1.0),
    };
    let value: f64 = digits
        .parse()
        .map_err(|_| format!("`{s}` is not a count (try 2000, 10k or 1M)"))?;
    let n = value * scale;
    if n >= 1.0 && n.fract() == 0.0 && n <= u32::MAX as f64 {
        Ok(n as usize)
    } else {
        Err(format!(
            "`{s}` is not a whole number of boxes between 1 and 2³²"
        ))
    }
}

/// A pause in milliseconds, from 0 to a minute.
fn parse_pause(s: &str) -> Result<Duration, String> {
    match s.trim().parse::<f64>() {
        Ok(ms) if (0.0..=60_000.0).contains(&ms) => Ok(Duration::from_secs_f64(ms / 1e3)),
        _ => Err(format!(
            "`{s}` is not a pause in milliseconds between 0 and 60000"
        )),
    }
}

/// The settings of a command line, for tests: `line` as typed, the program's
/// name first.
#[cfg(test)]
pub(crate) fn settings_from(line: &[&str]) -> Settings {
    use clap::Parser;
    /// The benchmark's options, parsed as on its command line.
    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: Args,
    }
    Settings::new(&Cli::parse_from(line).args)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_take_suffixes() {
        assert_eq!(parse_count("2000"), Ok(2000));
        assert_eq!(parse_count("10_000"), Ok(10_000));
        assert_eq!(parse_count("10k"), Ok(10_000));
        assert_eq!(parse_count("1.5k"), Ok(1_500));
        assert_eq!(parse_count("1M"), Ok(1_000_000));
        assert!(parse_count("0").is_err());
        assert!(parse_count("1.5").is_err());
        assert!(parse_count("ten").is_err());
    }

    #[test]
    fn pauses_in_milliseconds() {
        assert_eq!(parse_pause("16"), Ok(Duration::from_millis(16)));
        assert_eq!(parse_pause("0.5"), Ok(Duration::from_micros(500)));
        assert_eq!(parse_pause("0"), Ok(Duration::ZERO));
        for bad in ["-1", "NaN", "inf", "60001", "soon"] {
            assert!(parse_pause(bad).is_err(), "{bad}");
        }
        assert_eq!(settings_from(&["quadrat-bench"]).pause, Duration::ZERO);
        assert_eq!(
            settings_from(&["quadrat-bench", "--pause", "16"]).pause,
            Duration::from_millis(16)
        );
    }

    #[test]
    fn layouts_by_name() {
        assert_eq!(parse_layout("mixed"), Ok(Layout::MixedSizes));
        assert!(parse_layout("random").is_err());
    }
}
