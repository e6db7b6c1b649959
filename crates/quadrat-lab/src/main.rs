//! `quadrat-lab`: the command line of the quadrat lab. Without a
//! subcommand, it serves the lab's web page (`serve`).

use std::error::Error;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Counts heap bytes for the benchmark's memory figures.
#[global_allocator]
static ALLOCATOR: quadrat_lab::alloc::Counting = quadrat_lab::alloc::Counting;

/// The quadrat lab: a live quadtree in the browser (the default), pictures
/// of trees, and benchmarks.
#[derive(Debug, Parser)]
#[command(
    name = "quadrat-lab",
    version,
    about,
    args_conflicts_with_subcommands = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// Options of `serve`, for running without a subcommand.
    #[command(flatten)]
    serve: quadrat_lab::serve::Args,
}

/// What the lab can do; one variant per subcommand.
#[derive(Debug, Subcommand)]
enum Command {
    /// Serve the lab's web page on 127.0.0.1:8080 (the default command):
    /// one live simulation per browser tab, streamed over a WebSocket.
    Serve(quadrat_lab::serve::Args),
    /// Draw a scenario's quadtree (nodes, objects, an optional query area)
    /// as SVG and PNG.
    Render(quadrat_lab::render::Args),
    /// Check brute force, other broad phases and quadrat for exactness on
    /// the same scenes, then time them: build + all pairs over a sweep of n,
    /// moving frames, queries, memory, and resting worlds (a static map
    /// with movers). Writes Markdown, CSV and log–log plots.
    Bench(Box<quadrat_lab::bench::Args>),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result: Result<(), Box<dyn Error>> = match cli.command.unwrap_or(Command::Serve(cli.serve))
    {
        Command::Serve(args) => quadrat_lab::serve::run(&args).map_err(Into::into),
        Command::Render(args) => quadrat_lab::render::run(&args)
            .map(|picture| {
                println!(
                    "{} nodes, depth {}{}: {} and {}",
                    picture.nodes,
                    picture.depth,
                    if args.query.is_some() {
                        format!(", query returns {}", picture.hits)
                    } else {
                        String::new()
                    },
                    picture.svg.display(),
                    picture.png.display()
                );
            })
            .map_err(Into::into),
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
