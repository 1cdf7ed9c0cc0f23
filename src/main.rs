//! The function-artifactory binary: serves gRPC by default, or renders locally.

use clap::{Parser, Subcommand};
use function_artifactory::{render, server};
use std::process::ExitCode;

/// malloc and free were a third of the instructions of a call (BENCHMARKS.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser, Debug)]
#[command(
    name = "function-artifactory",
    version,
    about = "Crossplane composition function for JFrog Artifactory repositories"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    serve: server::ServeArgs,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run a composition's pipeline without a cluster and print what `crossplane render` prints.
    Render(render::RenderArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Some(Command::Render(args)) => render::run(args),
        None => server::serve(cli.serve),
    }
}
