//! The `render` face (being written).

pub mod yaml;

/// Arguments of `function-artifactory render`.
#[derive(Debug, Clone, clap::Args)]
pub struct RenderArgs {}

/// Runs the command; the exit code follows `crossplane render`.
pub fn run(_args: RenderArgs) -> std::process::ExitCode {
    std::process::ExitCode::FAILURE
}
