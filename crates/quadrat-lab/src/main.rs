//! `quadrat-lab`: the command line of the quadrat lab. Without a
//! subcommand, it serves the lab's web page (`serve`).

use std::error::Error;
use std::process::ExitCode;

use clap::error::ErrorKind;
use clap::{CommandFactory, Parser, Subcommand};

/// The command that runs the benchmarks, named by `quadrat-lab bench`.
const BENCH_HINT: &str = "cargo run --release -p quadrat-bench";

/// The quadrat lab: a live quadtree in the browser (the default), and
/// pictures of trees.
#[derive(Debug, Parser)]
#[command(
    name = "quadrat-lab",
    version,
    about,
    args_conflicts_with_subcommands = true,
    after_help = "The benchmarks are a binary of their own: cargo run --release -p quadrat-bench -- --help"
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
    /// The benchmarks are the `quadrat-bench` binary; this only says so.
    #[command(hide = true, disable_help_flag = true)]
    Bench {
        /// Whatever followed `bench`, repeated in the hint.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
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
        Command::Bench { args } => {
            let args: String = args.iter().map(|a| format!(" {a}")).collect();
            let run = if args.is_empty() {
                BENCH_HINT.to_owned()
            } else {
                format!("{BENCH_HINT} --{args}")
            };
            Cli::command()
                .error(
                    ErrorKind::InvalidSubcommand,
                    format!("the benchmarks are no longer part of the lab; run `{run}`"),
                )
                .exit()
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
