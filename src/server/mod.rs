//! The gRPC face (to be written).

/// Command-line flags of the server, as the Crossplane function SDKs spell them.
#[derive(Debug, Clone, clap::Args)]
pub struct ServeArgs {}

/// Serves until SIGTERM or SIGINT.
pub fn serve(_args: ServeArgs) -> std::process::ExitCode {
    std::process::ExitCode::FAILURE
}
