//! The function-artifactory binary: serves gRPC by default, or renders locally.

use clap::{Parser, Subcommand};
use function_artifactory::{render, server};
use std::process::ExitCode;
// The static build's memcpy, memmove, memcmp and bcmp in place of musl's, which took half of a
// call's CPU (crates/musl-x86-mem).
#[cfg(all(target_arch = "x86_64", target_env = "musl"))]
use musl_x86_mem as _;

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
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => return usage_error(error),
    };
    match cli.command {
        Some(Command::Render(args)) => render::run(args),
        None => server::serve(cli.serve),
    }
}

/// Prints a usage error (or the help or version asked for) as clap does. `render` exits 1 on a
/// usage error, as `crossplane render` does (kong exits 1 on every error); the server keeps
/// clap's 2.
fn usage_error(error: clap::Error) -> ExitCode {
    let _ = error.print();
    if !error.use_stderr() {
        return ExitCode::SUCCESS;
    }
    if std::env::args().nth(1).as_deref() == Some("render") {
        return ExitCode::FAILURE;
    }
    ExitCode::from(u8::try_from(error.exit_code()).unwrap_or(2))
}
