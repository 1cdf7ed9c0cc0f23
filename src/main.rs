//! The function-artifactory binary: serves gRPC by default, or renders locally.

use clap::{Parser, Subcommand};
use function_artifactory::{adopt, render, server};
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
    /// Write claims that adopt the repositories a running Artifactory has (`import: true`).
    Adopt(adopt::AdoptArgs),
}

fn main() -> ExitCode {
    allocator::return_freed_memory_sooner();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => return usage_error(error),
    };
    match cli.command {
        Some(Command::Render(args)) => render::run(args),
        Some(Command::Adopt(args)) => adopt::run(args),
        None => server::serve(cli.serve),
    }
}

/// The allocator's options that differ from mimalloc's defaults.
mod allocator {
    use libmimalloc_sys::{mi_option_set, mi_option_t};

    /// `mi_option_purge_delay` in mimalloc.h's `mi_option_e` (whose numbering mimalloc keeps
    /// stable); libmimalloc-sys names no constant for it.
    const PURGE_DELAY: mi_option_t = 15;

    /// How long memory a call freed stays with the process before mimalloc returns it, in ms.
    /// mimalloc 3 waits 1,000 ms (2 waited 10): with calls of live schemas arriving every
    /// millisecond, a second's worth of freed request buffers stayed resident, and the peak RSS
    /// of 8 calls in flight at 100 repositories was 21-26 MB with live schemas and 53-60 MB
    /// with observed resources, against 18.7 and 34-40 MB at 50 ms. At 10 or 20 ms the freed
    /// pages of those large calls were faulted back in, 55 to 104 times a call, and the kernel
    /// time rose a third; at 50 ms 2 to 23 times, within the noise (BENCHMARKS.md).
    const PURGE_DELAY_MS: std::ffi::c_long = 50;

    /// Sets the purge delay, unless `MIMALLOC_PURGE_DELAY` sets it: mimalloc reads its
    /// environment when the process starts, and an operator's choice wins.
    pub(super) fn return_freed_memory_sooner() {
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
            // SAFETY: setting an option is safe at any time; mimalloc reads it on each purge.
            unsafe { mi_option_set(PURGE_DELAY, PURGE_DELAY_MS) };
        }
    }

    /// The purge delay in force.
    #[cfg(test)]
    pub(super) fn purge_delay() -> std::ffi::c_long {
        // SAFETY: reading an option is safe at any time.
        unsafe { libmimalloc_sys::mi_option_get(PURGE_DELAY) }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn the_purge_delay_is_ours_unless_the_environment_sets_it() {
            let before = purge_delay();
            return_freed_memory_sooner();
            match std::env::var("MIMALLOC_PURGE_DELAY") {
                Ok(_) => assert_eq!(purge_delay(), before, "the operator's value stays"),
                Err(_) => {
                    assert_eq!(
                        before, 1000,
                        "mimalloc's default, which the option number names"
                    );
                    assert_eq!(purge_delay(), PURGE_DELAY_MS);
                }
            }
        }
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
    if matches!(std::env::args().nth(1).as_deref(), Some("render" | "adopt")) {
        return ExitCode::FAILURE;
    }
    ExitCode::from(u8::try_from(error.exit_code()).unwrap_or(2))
}
