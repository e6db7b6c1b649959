//! `quadrat-lab`: the command line of the quadrat lab.

use std::error::Error;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// The quadrat lab.
#[derive(Debug, Parser)]
#[command(name = "quadrat-lab", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// What the lab can do; one variant per subcommand.
#[derive(Debug, Subcommand)]
enum Command {
    /// Check brute force, other broad phases and quadrat for exactness on
    /// the same scenes, then time them: build + all pairs over a sweep of n,
    /// moving frames, and range queries. Writes Markdown, CSV and a log–log
    /// plot.
    Bench(quadrat_lab::bench::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result: Result<(), Box<dyn Error>> = match cli.command {
        Command::Bench(args) => quadrat_lab::bench::run(&args).map_err(Into::into),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
