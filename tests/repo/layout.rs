//! The layout the README and docs/design.md describe, checked on the sources:
//! the core and the protocol name none of the faces (server, render, wasm,
//! component, codegen), the WebAssembly faces name no other face (what they share
//! is in the core or the protocol), the rooms of `src/` and the modules of each room
//! depend on each other without a circle, and a file's `use` lines come before its items; the
//! CEL engine (crates/cel-rules) and its tests build nothing of the function; no source file of
//! `src/` or of a crate's `src/` is over 800 lines. (That the core builds without any feature,
//! for wasm32, is checked by scripts/test-all.sh.)

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

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

/// The lines of a file that are code: neither comments nor its unit tests (a `mod tests` at
/// its end, or a file of unit tests: `tests.rs`, `*_tests.rs`).
fn code_lines(path: &Path) -> Vec<String> {
    let name = path.file_name().unwrap().to_str().unwrap();
    if name == "tests.rs" || name.ends_with("_tests.rs") {
        return Vec::new();
    }
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

/// The names that follow `prefix` in a line, a braced list after it included
/// (`super::{keys, plan::Plan}` → `keys`, `plan`).
fn names_after_with_lists<'a>(line: &'a str, prefix: &str) -> Vec<&'a str> {
    let mut names = names_after(line, prefix);
    let braced = format!("{prefix}{{");
    for (at, _) in line.match_indices(&braced) {
        let rest = &line[at + braced.len()..];
        let list = &rest[..rest.find('}').unwrap_or(rest.len())];
        names.extend(
            list.split(',')
                .map(|item| item.trim().split("::").next().unwrap_or_default().trim())
                .filter(|name| !name.is_empty()),
        );
    }
    names.retain(|name| !name.is_empty());
    names
}

/// The modules of one room of `src/` (`src/<room>/<module>.rs` or `src/<room>/<module>/`) and
/// the other modules of that room each names outside its tests: by `crate::<room>::<module>`,
/// or by a path relative to the file (`super::<module>` from a file of the room's folder,
/// `super::super::<module>` from one a folder below, and so on).
fn room_graph(room: &str) -> BTreeMap<String, BTreeSet<String>> {
    let dir = src().join(room);
    let mut files = Vec::new();
    rust_files(&dir, &mut files);
    let module_of = |file: &Path| -> String {
        let first = file
            .strip_prefix(&dir)
            .unwrap()
            .components()
            .next()
            .unwrap();
        first
            .as_os_str()
            .to_str()
            .unwrap()
            .trim_end_matches(".rs")
            .to_owned()
    };
    let modules: BTreeSet<String> = files.iter().map(|f| module_of(f)).collect();
    let absolute = format!("crate::{room}::");
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in &files {
        let module = module_of(file);
        if module == "mod" {
            continue;
        }
        // How many folders below the room's the file's module sits: `super::` climbs one.
        let below = file.strip_prefix(&dir).unwrap().components().count() - 1;
        let is_mod_rs = file.file_name().is_some_and(|name| name == "mod.rs");
        let climbs = if is_mod_rs { below } else { below + 1 };
        let relative = "super::".repeat(climbs);
        let uses = graph.entry(module.clone()).or_default();
        for line in code_lines(file) {
            let mut names = names_after_with_lists(&line, &absolute);
            // `super::super::x` also holds `super::x`: only the exact climb counts.
            names.extend(
                names_after_with_lists(&line, &relative)
                    .into_iter()
                    .filter(|name| *name != "super"),
            );
            for name in names {
                if name != module && modules.contains(name) {
                    uses.insert(name.to_owned());
                }
            }
        }
    }
    graph
}

/// The rooms of `src/` (its folders) and the other rooms each names.
fn rooms_graph() -> BTreeMap<String, BTreeSet<String>> {
    let rooms: Vec<String> = std::fs::read_dir(src())
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.is_dir() && path.file_name().is_some_and(|n| n != "bin"))
        .map(|path| path.file_name().unwrap().to_str().unwrap().to_owned())
        .collect();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for room in &rooms {
        let mut files = Vec::new();
        rust_files(&src().join(room), &mut files);
        let uses = graph.entry(room.clone()).or_default();
        for line in files.iter().flat_map(|file| code_lines(file)) {
            for name in names_after_with_lists(&line, "crate::") {
                if name != room && rooms.iter().any(|r| r == name) {
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
fn the_modules_of_every_room_depend_on_each_other_without_a_circle() {
    let rooms = rooms_graph();
    for room in ["core", "proto", "server", "render", "adopt", "codegen"] {
        assert!(rooms.contains_key(room), "no room src/{room}: {rooms:?}");
    }
    for room in rooms.keys() {
        let graph = room_graph(room);
        if let Some(circle) = find_circle(&graph) {
            panic!(
                "a circle between the modules of src/{room}: {}",
                circle.join(" -> ")
            );
        }
    }
    // The graphs are read: by absolute paths, and relative ones (`super::`).
    assert!(room_graph("core")["function"].contains("plan"));
    assert!(
        room_graph("codegen")["schemas"].contains("api"),
        "relative paths are read"
    );
}

/// The rooms themselves stack: the faces over the core, the core over the protocol.
#[test]
fn the_rooms_of_src_depend_on_each_other_without_a_circle() {
    let graph = rooms_graph();
    assert!(graph["render"].contains("core"), "{graph:?}");
    assert!(graph["core"].contains("proto"), "{graph:?}");
    if let Some(circle) = find_circle(&graph) {
        panic!(
            "a circle between the rooms of src/: {}",
            circle.join(" -> ")
        );
    }
}

/// docs/design.md's table of the core's modules, row by row: the modules each row names.
fn design_module_table() -> Vec<Vec<String>> {
    let design = std::fs::read_to_string(src().join("../docs/design.md")).unwrap();
    let start = design
        .find("The core's modules, in the order a call uses them")
        .expect("docs/design.md has the table of the core's modules");
    design[start..]
        .lines()
        .skip_while(|line| !line.starts_with("| module |"))
        .skip(2)
        .take_while(|line| line.starts_with('|'))
        .map(|row| {
            let first = row.split('|').nth(1).unwrap_or_default();
            first
                .split(',')
                .map(|name| name.trim().trim_matches('`').to_owned())
                .collect()
        })
        .collect()
}

/// The table in docs/design.md names every module of the core and no other, in an order where
/// each module names only modules of its row or above it, as the table says.
#[test]
fn the_design_table_of_core_modules_agrees_with_the_tree() {
    let graph = room_graph("core");
    let rows = design_module_table();
    let listed: BTreeSet<&str> = rows.iter().flatten().map(String::as_str).collect();
    let modules: BTreeSet<&str> = graph.keys().map(String::as_str).collect();
    assert_eq!(
        listed, modules,
        "docs/design.md's module table against src/core/ (left: the table)"
    );
    let row_of = |module: &str| rows.iter().position(|row| row.iter().any(|m| m == module));
    let mut below = Vec::new();
    for (module, uses) in &graph {
        for used in uses {
            if row_of(used) > row_of(module) {
                below.push(format!("{module} names {used}, listed below it"));
            }
        }
    }
    assert!(
        below.is_empty(),
        "docs/design.md's module table:\n{}",
        below.join("\n")
    );
}

/// docs/design.md's layout table has a row for every folder of `src/` (but `bin/`) and every
/// crate of `crates/`, and no row for one that is gone.
#[test]
fn the_design_layout_table_agrees_with_the_tree() {
    let root = src().join("..");
    let design = std::fs::read_to_string(root.join("docs/design.md")).unwrap();
    let rows: BTreeSet<String> = design
        .lines()
        .filter_map(|line| line.strip_prefix("| `"))
        .filter_map(|rest| rest.split('`').next())
        .filter(|path| {
            path.ends_with('/') && (path.starts_with("src/") || path.starts_with("crates/"))
        })
        .map(str::to_owned)
        .collect();
    let mut folders = BTreeSet::new();
    for parent in ["src", "crates"] {
        for entry in std::fs::read_dir(root.join(parent)).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_str().unwrap().to_owned();
            if path.is_dir() && name != "bin" {
                folders.insert(format!("{parent}/{name}/"));
            }
        }
    }
    assert_eq!(
        rows, folders,
        "docs/design.md's layout table (left) against the tree"
    );
}

/// Lines a source file may have: past them a file holds more than one concept, and is split at
/// its seams (issue 53). Generated files are not sources.
const FILE_LINES_MAX: usize = 800;

#[test]
fn no_source_file_is_over_800_lines() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    for entry in std::fs::read_dir(root.join("crates")).unwrap() {
        let crate_src = entry.unwrap().path().join("src");
        if crate_src.is_dir() {
            rust_files(&crate_src, &mut files);
        }
    }
    assert!(
        files.len() > 100,
        "the walk found the sources: {}",
        files.len()
    );
    let long: Vec<String> = files
        .iter()
        .filter_map(|file| {
            let text = std::fs::read_to_string(file).unwrap();
            let generated = text.lines().take(3).any(|l| l.contains("@generated"));
            let lines = text.lines().count();
            (!generated && lines > FILE_LINES_MAX).then(|| {
                let path = file.strip_prefix(root).unwrap().display();
                format!("{path}: {lines} lines")
            })
        })
        .collect();
    assert!(
        long.is_empty(),
        "files over {FILE_LINES_MAX} lines; split each at its seams into a module of files:\n{}",
        long.join("\n")
    );
}

#[test]
fn the_circle_check_finds_a_circle() {
    let mut graph = room_graph("core");
    graph.get_mut("keys").unwrap().insert("function".to_owned());
    let circle = find_circle(&graph).expect("keys -> function -> ... -> keys");
    assert_eq!(circle.first(), circle.last());
}

#[test]
fn use_lines_come_before_the_items() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    rust_files(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/cel-rules/src"),
        &mut files,
    );
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

/// The crates that building `package` and its tests takes (normal and dev dependencies, for this
/// host), by name, as the lockfile has them.
fn crates_built_for(package: &str) -> BTreeSet<String> {
    let output = Command::new(env!("CARGO"))
        .args([
            "tree",
            "-p",
            package,
            "-e",
            "normal,dev",
            "--prefix",
            "none",
        ])
        .args(["--locked", "--offline"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo tree");
    assert!(
        output.status.success(),
        "cargo tree -p {package}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .map(str::to_owned)
        .collect()
}

/// The function itself, or its transport and protocol code.
fn of_the_function(name: &str) -> bool {
    name == "function-artifactory"
        || ["tonic", "tokio", "prost"]
            .iter()
            .any(|p| name.starts_with(p))
}

/// `cargo test -p cel-rules` builds the engine and its oracles, nothing of the function: no
/// gRPC, no runtime, no protocol code, so its tests stay quick to build and it cannot come to
/// depend on the function.
#[test]
fn cel_rules_and_its_tests_build_nothing_of_the_function() {
    let crates = crates_built_for("cel-rules");
    assert!(
        crates.contains("cel") && crates.contains("proptest"),
        "not the tree of cel-rules and its tests: {crates:?}"
    );
    let found: Vec<&String> = crates.iter().filter(|c| of_the_function(c)).collect();
    assert!(found.is_empty(), "cel-rules builds {found:?}");
    // The same question finds them in the function's tree.
    let function = crates_built_for("function-artifactory");
    assert!(
        function.contains("tokio") && function.contains("prost"),
        "{function:?}"
    );
}
