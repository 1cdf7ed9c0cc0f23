//! The layout the README and docs/design.md describe, checked on the sources:
//! the core and the protocol name none of the faces (server, render, wasm,
//! component, codegen), the WebAssembly faces name no other face (what they share
//! is in the core or the protocol), the core's modules depend on each other
//! without a circle, and a file's `use` lines come before its items. (That the core builds without any
//! feature, for wasm32, is checked by scripts/test-all.sh.)

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const FACES: [&str; 6] = ["server", "render", "adopt", "wasm", "component", "codegen"];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, files: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, files);
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
}

/// The lines of a file that are code: neither comments nor its unit tests.
fn code_lines(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap();
    let code = match text.find("#[cfg(test)]\nmod tests") {
        Some(tests) => &text[..tests],
        None => &text[..],
    };
    code.lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .map(str::to_owned)
        .collect()
}

/// The names that follow `prefix` in a line (`crate::core::` → `keys`, `plan`, ...).
fn names_after<'a>(line: &'a str, prefix: &str) -> Vec<&'a str> {
    line.match_indices(prefix)
        .map(|(at, _)| {
            let rest = &line[at + prefix.len()..];
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            &rest[..end]
        })
        .collect()
}

/// The core's modules (`src/core/<module>.rs` or `src/core/<module>/`) and the
/// other core modules each names outside its tests.
fn core_graph() -> BTreeMap<String, BTreeSet<String>> {
    let core = src().join("core");
    let mut files = Vec::new();
    rust_files(&core, &mut files);
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in files {
        let first = file
            .strip_prefix(&core)
            .unwrap()
            .components()
            .next()
            .unwrap();
        let module = first.as_os_str().to_str().unwrap().trim_end_matches(".rs");
        if module == "mod" {
            continue;
        }
        let uses = graph.entry(module.to_owned()).or_default();
        for line in code_lines(&file) {
            for name in names_after(&line, "crate::core::") {
                if name != module {
                    uses.insert(name.to_owned());
                }
            }
        }
    }
    graph
}

/// A circle in the graph, as the path that closes it, if there is one.
fn find_circle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|n| n == node) {
            let mut circle = path[at..].to_vec();
            circle.push(node.to_owned());
            return Some(circle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_owned());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(circle) = visit(next, graph, path, done) {
                return Some(circle);
            }
        }
        path.pop();
        done.insert(node.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|node| visit(node, graph, &mut Vec::new(), &mut done))
}

#[test]
fn the_core_and_the_protocol_name_no_face() {
    let mut files = Vec::new();
    rust_files(&src().join("core"), &mut files);
    rust_files(&src().join("proto"), &mut files);
    assert!(files.len() > 20, "found {files:?}");
    let mut found = Vec::new();
    for file in &files {
        for line in code_lines(file) {
            for name in names_after(&line, "crate::") {
                if FACES.contains(&name) {
                    found.push(format!("{}: {}", file.display(), line.trim()));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "the core names a face:\n{}",
        found.join("\n")
    );
}

/// The npm module and the component translate for their hosts only: whatever both need is in
/// the core or the protocol, never in the other face.
#[test]
fn the_webassembly_faces_name_no_other_face() {
    for face in ["wasm", "component"] {
        let mut files = Vec::new();
        rust_files(&src().join(face), &mut files);
        assert!(!files.is_empty(), "no files in src/{face}");
        let mut found = Vec::new();
        for file in &files {
            for line in code_lines(file) {
                for name in names_after(&line, "crate::") {
                    if FACES.contains(&name) && name != face {
                        found.push(format!("{}: {}", file.display(), line.trim()));
                    }
                }
            }
        }
        assert!(
            found.is_empty(),
            "src/{face} names another face:\n{}",
            found.join("\n")
        );
    }
}

#[test]
fn the_core_modules_depend_on_each_other_without_a_circle() {
    let graph = core_graph();
    for module in [
        "keys",
        "catalog",
        "wiring",
        "lifecycle",
        "status",
        "plan",
        "function",
    ] {
        assert!(
            graph.contains_key(module),
            "no core module {module}: {graph:?}"
        );
    }
    assert!(graph["function"].contains("plan"), "{graph:?}");
    if let Some(circle) = find_circle(&graph) {
        panic!("a circle between core modules: {}", circle.join(" -> "));
    }
}

#[test]
fn the_circle_check_finds_a_circle() {
    let mut graph = core_graph();
    graph.get_mut("keys").unwrap().insert("function".to_owned());
    let circle = find_circle(&graph).expect("keys -> function -> ... -> keys");
    assert_eq!(circle.first(), circle.last());
}

#[test]
fn use_lines_come_before_the_items() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let item = |line: &str| {
        let line = line.strip_prefix("pub ").unwrap_or(line);
        let line = line.strip_prefix("pub(crate) ").unwrap_or(line);
        [
            "fn ", "struct ", "enum ", "const ", "static ", "impl", "trait ", "type ",
        ]
        .iter()
        .any(|start| line.starts_with(start))
    };
    let mut late = Vec::new();
    for file in files
        .iter()
        .filter(|f| !f.to_str().unwrap().contains("generated"))
    {
        let lines = code_lines(file);
        if let Some(first_item) = lines.iter().position(|l| item(l)) {
            for line in &lines[first_item..] {
                if line.starts_with("use ") {
                    late.push(format!("{}: {line}", file.display()));
                }
            }
        }
    }
    assert!(
        late.is_empty(),
        "use lines after items:\n{}",
        late.join("\n")
    );
}
