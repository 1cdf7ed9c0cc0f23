//! Generators of the committed code and data (feature `codegen`).
//!
//! Everything the project generates is produced here and nowhere else:
//! `cargo run --features codegen --bin codegen` writes the files, and the
//! drift test (`tests/repo/generated.rs`) runs the same generators and fails when a
//! committed file differs from what they produce now.

mod api;
mod catalog;
pub mod crds;
mod proto;
#[cfg(test)]
mod readers_and_schemas;
pub mod schemas;

use std::path::{Path, PathBuf};

/// One generated file: its path relative to the repository root and its text.
#[derive(Debug, Clone, PartialEq)]
pub struct GeneratedFile {
    /// Where the file goes, relative to the repository.
    pub path: PathBuf,
    /// What it holds.
    pub contents: String,
}

/// Writes every file, creating folders as needed.
pub fn write_all(root: &Path, files: &[GeneratedFile]) -> std::io::Result<()> {
    for file in files {
        let path = root.join(&file.path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(path, &file.contents)?;
    }
    Ok(())
}

/// The files that differ from what is committed under `root`, with a reason each.
pub fn drift(root: &Path, files: &[GeneratedFile]) -> Vec<String> {
    files
        .iter()
        .filter_map(|file| {
            let committed = std::fs::read_to_string(root.join(&file.path)).ok();
            match committed {
                None => Some(format!("{} is missing", file.path.display())),
                Some(text) if text != file.contents => Some(format!(
                    "{} differs from what the generator produces",
                    file.path.display()
                )),
                Some(_) => None,
            }
        })
        .collect()
}

/// A scratch folder for generators that insist on writing files.
pub(crate) fn scratch_dir(name: &str) -> std::io::Result<PathBuf> {
    let dir = std::env::temp_dir().join(format!(
        "function-artifactory-{name}-{}",
        std::process::id()
    ));
    if dir.exists() {
        std::fs::remove_dir_all(&dir)?;
    }
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

/// Runs every generator.
pub fn generate_all(root: &Path) -> anyhow::Result<Vec<GeneratedFile>> {
    // prost-build is not safe to run twice at once in one process (it shares
    // scratch files); callers such as parallel tests take turns.
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _turn = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let mut files = proto::generate(root)?;
    files.extend(schemas::generate()?);
    files.extend(catalog::generate(root)?);
    Ok(files)
}
