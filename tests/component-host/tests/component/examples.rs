//! Every render example (`examples/**/*.args`: cluster, flat, namespaced, lifecycle, live
//! schemas, credentials, ...) rendered with the component as this function's steps: each
//! request render builds gets from the component the bytes the native core answers, and the
//! output is the example's golden file. The examples are rendered here in process, in this test
//! binary of its own (it changes the working folder, as `render` reads the paths relative to it).

use clap::Parser;
use component_host::{repository, Host};
use function_artifactory::proto::v1::RunFunctionRequest;
use function_artifactory::render::{render_with, RenderArgs};
use prost::Message;
use std::cell::Cell;
use std::path::{Path, PathBuf};

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    args: RenderArgs,
}

fn args_files(folder: &Path, found: &mut Vec<PathBuf>) {
    for path in std::fs::read_dir(folder)
        .unwrap()
        .map(|e| e.unwrap().path())
    {
        if path.is_dir() {
            args_files(&path, found);
        } else if path.extension().is_some_and(|e| e == "args") {
            found.push(path);
        }
    }
}

/// The arguments of an `.args` file: whitespace-separated, `#` comments.
fn read_args(file: &Path) -> Vec<String> {
    std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .filter(|line| !line.trim_start().starts_with('#'))
        .flat_map(|line| line.split_whitespace().map(str::to_owned))
        .collect()
}

#[test]
fn every_render_example_gives_its_golden_output_with_the_component() {
    let mut files = Vec::new();
    args_files(&repository().join("examples"), &mut files);
    files.sort();
    let calls = Cell::new(0);
    let component = |request: &[u8]| -> Result<Vec<u8>, String> {
        let call = Host::shared()
            .call(request)
            .map_err(|trap| format!("the component trapped: {trap:?}"))?;
        let decoded = RunFunctionRequest::decode(request).map_err(|e| e.to_string())?;
        let native = function_artifactory::run_function(&decoded).encode_to_vec();
        assert_eq!(
            call.answer.as_ref(),
            Ok(&native),
            "the component answers as the core"
        );
        calls.set(calls.get() + 1);
        call.answer
    };
    let mut checked = 0;
    for file in &files {
        let stem = file.file_stem().unwrap().to_str().unwrap();
        let folder = file.parent().unwrap();
        let golden = folder.join(format!("{stem}.golden.yaml"));
        let failing = folder.join(format!("{stem}.golden.stderr"));
        std::env::set_current_dir(folder).unwrap();
        let argv = std::iter::once("render".to_owned()).chain(read_args(file));
        let args = Cli::try_parse_from(argv).unwrap().args;
        let rendered = render_with(&args, &component);
        if golden.exists() {
            let rendered = rendered.unwrap_or_else(|e| panic!("{}: {e:#}", file.display()));
            assert_eq!(
                rendered,
                std::fs::read_to_string(&golden).unwrap(),
                "{}",
                file.display()
            );
        } else {
            // A failing example: the same error as the native render (its golden stderr).
            let error = format!("{:#}", rendered.expect_err(stem));
            let expected = std::fs::read_to_string(&failing).unwrap();
            assert!(
                expected.contains(&error),
                "{}: {error}\n{expected}",
                file.display()
            );
        }
        checked += 1;
    }
    assert!(checked >= 10, "{checked} examples");
    assert!(calls.get() >= 10, "{} calls of the component", calls.get());
    eprintln!("{checked} examples, {} component calls", calls.get());
}
