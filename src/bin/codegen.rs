//! Regenerates every committed generated file. See `function_artifactory::codegen`.
//!
//! `codegen` regenerates from what the repository holds. To add a provider release that the
//! repository does not have yet, give its package as the user downloaded it (an `.xpkg`
//! tarball, an OCI image layout folder, or a folder of CRDs):
//!
//! `codegen --provider-package provider-jfrog-artifactory-v0.15.0.xpkg --release v0.15.0`
//!
//! Its repository CRDs are written to the folder `v0.15.0` of `crds/`, and the catalog is
//! regenerated with it.

use anyhow::{anyhow, Context as _};
use function_artifactory::codegen;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

fn main() -> ExitCode {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.as_slice() {
        [] => Ok(()),
        [flag, package, release_flag, release]
            if flag == "--provider-package" && release_flag == "--release" =>
        {
            import_package(&root, Path::new(package), release)
        }
        _ => Err(anyhow!(
            "usage: codegen [--provider-package PATH --release vX.Y.Z]"
        )),
    };
    let result = result.and_then(|()| {
        let files = codegen::generate_all(&root)?;
        codegen::write_all(&root, &files).context("cannot write")?;
        for file in &files {
            println!("wrote {}", file.path.display());
        }
        Ok(())
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("codegen: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// Writes the repository CRDs of a provider package to `crds/<release>/`.
fn import_package(root: &Path, package: &Path, release: &str) -> anyhow::Result<()> {
    let (dir, count) = codegen::crds::import_package(root, package, release)?;
    println!("wrote {count} CRDs to {}", dir.display());
    Ok(())
}
