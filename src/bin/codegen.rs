//! Regenerates every committed generated file. See `function_artifactory::codegen`.

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let shared = function_artifactory::codegen::shared_dir(&root);
    match function_artifactory::codegen::generate_all(&root, shared.as_deref()) {
        Ok(files) => match function_artifactory::codegen::write_all(&root, &files) {
            Ok(()) => {
                for file in &files {
                    println!("wrote {}", file.path.display());
                }
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("codegen: cannot write: {e}");
                ExitCode::FAILURE
            }
        },
        Err(e) => {
            eprintln!("codegen: {e}");
            ExitCode::FAILURE
        }
    }
}
