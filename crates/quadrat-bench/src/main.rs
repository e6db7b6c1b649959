//! `quadrat-bench`: checks brute force, other broad phases and quadrat for
//! exactness on the same scenes, then times them.

use std::process::ExitCode;

use clap::Parser;

/// Counts heap bytes for the memory figures.
#[global_allocator]
static ALLOCATOR: quadrat_bench::alloc::Counting = quadrat_bench::alloc::Counting;

/// Check brute force, other broad phases and quadrat for exactness on the
/// same scenes, then time them: build + all pairs over a sweep of n, moving
/// frames, queries, memory, and resting worlds (a static map with movers).
/// Writes Markdown, CSV and log–log plots.
#[derive(Debug, Parser)]
#[command(name = "quadrat-bench", version)]
struct Cli {
    #[command(flatten)]
    args: quadrat_bench::Args,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match quadrat_bench::run(&cli.args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
