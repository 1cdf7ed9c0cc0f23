//! The README stays a newcomer's page (at most 350 lines; the reference lives in `docs/`), and no
//! relative link of the README or of `docs/*.md` is broken: each names a file or folder of the
//! repository and, with a `#fragment`, a heading of that Markdown file. docs/development.md indexes
//! every test module.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

const README_MAX_LINES: usize = 350;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// README.md and every `docs/*.md`.
fn pages() -> Vec<PathBuf> {
    let mut pages = vec![root().join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    pages.extend(docs);
    pages
}

/// The lines of a Markdown page outside fenced code blocks, with their numbers.
fn prose(text: &str) -> Vec<(usize, &str)> {
    let mut in_code = false;
    let mut lines = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
        } else if !in_code {
            lines.push((index + 1, line));
        }
    }
    lines
}

/// The targets of inline links `[text](target)` on a line, code spans left out.
fn link_targets(line: &str) -> Vec<&str> {
    let mut targets = Vec::new();
    let mut in_span = false;
    let bytes = line.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'`' => in_span = !in_span,
            b']' if !in_span && bytes.get(i + 1) == Some(&b'(') => {
                let start = i + 2;
                if let Some(length) = line[start..].find(')') {
                    let target = line[start..start + length].split_whitespace().next();
                    targets.extend(target);
                    i = start + length;
                }
            }
            _ => {}
        }
        i += 1;
    }
    targets
}

/// A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces to `-`.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == '-' || *c == ' ' || *c == '_')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

fn anchors(page: &str) -> BTreeSet<String> {
    prose(page)
        .into_iter()
        .filter_map(|(_, line)| line.strip_prefix('#'))
        .map(|heading| anchor(heading.trim_start_matches('#')))
        .collect()
}

#[test]
fn the_readme_is_at_most_350_lines() {
    let lines = read(&root().join("README.md")).lines().count();
    assert!(
        lines <= README_MAX_LINES,
        "README.md has {lines} lines; keep it at most {README_MAX_LINES}: move reference material into a page under docs/ and link it"
    );
}

#[test]
fn every_relative_link_of_the_readme_and_docs_resolves() {
    let mut broken = Vec::new();
    let mut checked = 0;
    for page in pages() {
        let text = read(&page);
        let folder = page.parent().unwrap();
        for (number, line) in prose(&text) {
            for target in link_targets(line) {
                if target.contains("://") || target.starts_with("mailto:") {
                    continue;
                }
                checked += 1;
                let (file, fragment) = target.split_once('#').unwrap_or((target, ""));
                let path = if file.is_empty() {
                    page.clone()
                } else {
                    folder.join(file)
                };
                let at = format!("{}:{number}: {target}", page.display());
                if !path.exists() {
                    broken.push(format!("{at}: no such file"));
                } else if !fragment.is_empty()
                    && path.extension().is_some_and(|e| e == "md")
                    && !anchors(&read(&path)).contains(fragment)
                {
                    broken.push(format!("{at}: no heading with that anchor"));
                }
            }
        }
    }
    assert!(
        checked > 20,
        "only {checked} links found: the parser is broken"
    );
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn anchors_and_links_are_read_as_github_does() {
    assert_eq!(
        anchor(" Against your provider's CRDs"),
        "against-your-providers-crds"
    );
    assert_eq!(anchor("`kinds(providerApi?)`"), "kindsproviderapi");
    assert_eq!(
        anchor("Run as a WebAssembly pipeline step"),
        "run-as-a-webassembly-pipeline-step"
    );
    assert_eq!(
        link_targets("see [a](docs/a.md#x) and `[b](no)` and [c](../c \"title\")"),
        ["docs/a.md#x", "../c"]
    );
    assert_eq!(
        prose("a\n```\n[x](y)\n```\nb")
            .into_iter()
            .map(|(_, l)| l)
            .collect::<Vec<_>>(),
        ["a", "b"]
    );
}

/// Every file a reader copies function-wasm commands from: the docs, the README and the
/// function-wasm example.
fn command_sources() -> Vec<(PathBuf, String)> {
    let mut files = pages();
    files.push(root().join("examples/function-wasm/functions.yaml"));
    files.push(root().join("examples/function-wasm/README.md"));
    files
        .into_iter()
        .map(|p| {
            let text = read(&p);
            (p, text)
        })
        .collect()
}

/// function-wasm's runtime binary is `function` (its crate `function-wasm` builds the binary
/// `function`), and a runtime started with `--cosign-key` verifies with keys only: a keyless
/// `cosign sign` gives a signature it refuses (issue 47).
#[test]
fn function_wasm_commands_are_the_ones_that_exist() {
    for (path, text) in command_sources() {
        for (number, line) in text.lines().enumerate() {
            let command = line.trim_start_matches(['#', ' ']);
            assert!(
                !command.starts_with("function-wasm --"),
                "{}:{}: the runtime's binary is `function`: {line}",
                path.display(),
                number + 1
            );
            if let Some(rest) = command.strip_prefix("cosign sign ") {
                assert!(
                    rest.contains("--key "),
                    "{}:{}: sign with the key the runtime verifies with: {line}",
                    path.display(),
                    number + 1
                );
            }
        }
    }
    let guide = read(&root().join("docs/wasm-component.md"));
    assert!(guide.contains("function validate examples/function-wasm/composition.yaml --module-dir target/wasmfn --resolve"));
}

/// CHANGELOG.md starts with the changes not yet released, each under the issue it came from.
#[test]
fn the_changelog_starts_with_what_is_unreleased() {
    let changelog = read(&root().join("CHANGELOG.md"));
    let headings: Vec<&str> = changelog.lines().filter(|l| l.starts_with("## ")).collect();
    assert_eq!(headings.first(), Some(&"## Unreleased"), "{headings:?}");
    for issue in ["issue 44", "issue 47", "issue 48"] {
        assert!(changelog.contains(issue), "{issue}");
    }
}

/// The upgrading page is reached from the README, lifecycle.md and provider-releases.md, and its
/// own links (to each procedure's heading) are among those checked above.
#[test]
fn the_upgrading_page_is_linked_where_upgrades_are_mentioned() {
    let links_to = |page: &str, target: &str| {
        prose(&read(&root().join(page)))
            .into_iter()
            .any(|(_, line)| link_targets(line).contains(&target))
    };
    assert!(links_to("README.md", "docs/upgrading.md"));
    assert!(links_to("docs/lifecycle.md", "upgrading.md"));
    assert!(links_to("docs/provider-releases.md", "upgrading.md"));
    let upgrading = read(&root().join("docs/upgrading.md"));
    for heading in [
        "kinds-renamed-v071-v0110-v0111",
        "the-group-move-v060-to-v070",
        "crossplane-v1-claims-to-v2-namespaced-composites",
        "the-compositions-naming-format",
    ] {
        assert!(anchors(&upgrading).contains(heading), "{heading}");
        assert!(
            links_to("docs/upgrading.md", &format!("#{heading}")),
            "{heading}"
        );
    }
}

/// The README's Crossplane v2 install makes the provider config `examples/namespaced/` names: a
/// namespaced `ProviderConfig` of the `.m.` group, in the example composite's namespace.
#[test]
fn the_readme_installs_the_provider_config_of_the_namespaced_example() {
    let readme = read(&root().join("README.md"));
    let composition = read(&root().join("examples/namespaced/composition.yaml"));
    let xr = read(&root().join("examples/namespaced/xr.yaml"));
    assert!(composition.contains("kind: ProviderConfig\n            name: artifactory"));
    assert!(xr.contains("namespace: team2"));
    assert!(readme.contains(
        "   apiVersion: artifactory.jfrog.m.crossplane.io/v1beta1\n   kind: ProviderConfig\n   metadata:\n     name: artifactory "
    ));
    assert!(readme.contains("     namespace: team2 "));
}

/// The "Tests" section of docs/development.md: from its heading to the next of its level.
fn test_index() -> String {
    let page = read(&root().join("docs/development.md"));
    let start = page
        .find("\n## Tests\n")
        .expect("docs/development.md has a \"## Tests\" section");
    let section = &page[start + 1..];
    let end = section[3..]
        .find("\n## ")
        .map_or(section.len(), |end| end + 3);
    section[..end].to_owned()
}

/// The Rust files the index names: its code spans that are a path under `tests/` or `crates/`
/// ending in `.rs`.
fn indexed_files(index: &str) -> BTreeSet<String> {
    prose(index)
        .into_iter()
        .flat_map(|(_, line)| line.split('`').skip(1).step_by(2))
        .filter(|span| {
            (span.starts_with("tests/") || span.starts_with("crates/")) && span.ends_with(".rs")
        })
        .map(str::to_owned)
        .collect()
}

/// The modules each test binary declares in `tests/<area>/main.rs`, as `tests/<area>/<module>.rs`
/// (or `tests/<area>/<module>/mod.rs` for a module that is a folder).
/// A module with a `#[path]` attribute is not the binary's own: the shared `tests/support/`.
fn test_modules() -> BTreeSet<String> {
    let mut modules = BTreeSet::new();
    for entry in std::fs::read_dir(root().join("tests")).unwrap() {
        let folder = entry.unwrap().path();
        let main = folder.join("main.rs");
        if !main.is_file() {
            continue;
        }
        let area = folder.file_name().unwrap().to_str().unwrap().to_owned();
        let mut elsewhere = false;
        for line in read(&main).lines().map(str::trim) {
            if line.starts_with("#[path") {
                elsewhere = true;
            } else if let Some(name) = line
                .strip_prefix("mod ")
                .and_then(|rest| rest.strip_suffix(';'))
            {
                if !elsewhere {
                    // A module with files of its own is a folder: `<module>/mod.rs`.
                    let folder = format!("tests/{area}/{name}/mod.rs");
                    modules.insert(if root().join(&folder).is_file() {
                        folder
                    } else {
                        format!("tests/{area}/{name}.rs")
                    });
                }
                elsewhere = false;
            }
        }
    }
    modules
}

/// The integration tests of the workspace's crates: `crates/*/tests/*.rs`.
fn crate_tests() -> BTreeSet<String> {
    let mut tests = BTreeSet::new();
    for entry in std::fs::read_dir(root().join("crates")).unwrap() {
        let crate_tests = entry.unwrap().path().join("tests");
        let Ok(files) = std::fs::read_dir(&crate_tests) else {
            continue;
        };
        for file in files {
            let path = file.unwrap().path();
            if path.extension().is_some_and(|e| e == "rs") {
                let relative = path.strip_prefix(root()).unwrap();
                tests.insert(relative.to_str().unwrap().to_owned());
            }
        }
    }
    tests
}

/// docs/development.md's index of tests names every module of every test binary and every
/// crate's test file, and names no file that does not exist, so that a test added, moved or
/// renamed is indexed where a reader looks for it.
#[test]
fn the_test_index_names_every_test_module_and_only_files_that_exist() {
    let index = indexed_files(&test_index());
    let modules = test_modules();
    assert!(
        modules.len() > 20 && index.len() > 20,
        "{} modules, {} indexed files: the parsers are broken",
        modules.len(),
        index.len()
    );
    let mut wrong = Vec::new();
    for module in modules.iter().chain(&crate_tests()) {
        assert!(root().join(module).is_file(), "{module}: declared, no file");
        if !index.contains(module) {
            wrong.push(format!(
                "{module}: not in docs/development.md's index of tests"
            ));
        }
    }
    for file in &index {
        if !root().join(file).is_file() {
            wrong.push(format!(
                "{file}: in docs/development.md's index, no such file"
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

// Paths that exist.
//
// Every path the repository's text names, from one of its top-level folders (`src/`, `tests/`,
// `crates/`, `scripts/`, `docs/`, ...: the first component of the files `git ls-files` lists), is
// a file or folder of the tree, so that moving or renaming a file cannot leave a reader at a
// path that is gone. The text read is:
//
// - every tracked Markdown file, all of its lines, code blocks included, except those of `HISTORY`
//   (`CHANGELOG.md` and the dated benchmark history), which name the files of their day;
// - the comments of every tracked source file: `//` in Rust, JavaScript, Go, WIT and protobuf;
//   `#` in TOML and YAML;
// - every line of the shell scripts (`.sh`, a `#!` script, the Dockerfile): their messages name
//   files for the reader too, and their code names files that must exist.
//
// A path is a word that starts with a top-level folder and a `/` (or `./` before it), backticked
// or not. A `:LINE`, `:LINE-LINE`, `::item` or `#anchor` after it, and the punctuation that ends
// a sentence, are not part of it. It is not checked when it holds a placeholder (`*`, `<...>`,
// `{...}`, `$`), when it lies under a location the root `.gitignore` names (`target/`,
// `fuzz/artifacts/`, ...: made by builds, never in a clone), or when it is in `ELSEWHERE`, a
// path of another repository. A path written in a crate of its own (a folder with a
// `Cargo.toml`: `crates/go-yaml/`, `fuzz/`, `tools/wasmfn-pack/`, ...) may be relative to that
// crate: it exists when it does from the crate's folder or from the repository's root.

/// Paths of other repositories that the repository's text names: (file, path, whose).
const ELSEWHERE: &[(&str, &str, &str)] = &[
    (
        "scripts/update-provider-crds.sh",
        "package/crds",
        "the provider's repository, at each release tag",
    ),
    ("wit/world.wit", "docs/abi-v2.md", "function-wasm's"),
    (
        "tests/component-host/wit/contract.wit",
        "docs/abi-v2.md",
        "function-wasm's",
    ),
];

/// Files whose paths are those of their day.
const HISTORY: &[&str] = &["CHANGELOG.md", "BENCHMARKS.md", "docs/benchmarks-log.md"];

/// Where a file's comments are, by its kind.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Text {
    /// Every line: Markdown and shell scripts.
    All,
    /// What follows `//` at the start of a line or after a space.
    SlashComments,
    /// What follows `#` at the start of a line or after a space.
    HashComments,
}

fn text_of(path: &str, first_line: &str) -> Option<Text> {
    let name = path.rsplit('/').next().unwrap_or(path);
    let extension = name.rsplit_once('.').map_or("", |(_, e)| e);
    match extension {
        "md" | "sh" => Some(Text::All),
        "rs" | "js" | "mjs" | "cjs" | "go" | "wit" | "proto" => Some(Text::SlashComments),
        "toml" | "yaml" | "yml" => Some(Text::HashComments),
        _ if name == "Dockerfile" || first_line.starts_with("#!") => Some(Text::All),
        _ => None,
    }
}

/// The part of a line read for paths.
fn readable(line: &str, text: Text) -> &str {
    let from = |marker: &str| {
        if line.trim_start().starts_with(marker) {
            return line.trim_start();
        }
        line.find(&format!(" {marker}"))
            .map_or("", |at| &line[at..])
    };
    match text {
        Text::All => line,
        Text::SlashComments => from("//"),
        Text::HashComments => from("#"),
    }
}

/// The paths a line names that start with one of `folders`: of each word, what is made of the
/// characters of the tree's file names (so not a `:LINE`, `::item` or `#anchor` after it), without
/// the dots that end a sentence. A word with a placeholder is left out.
fn paths_in<'a>(line: &'a str, folders: &BTreeSet<String>) -> Vec<&'a str> {
    let ends_word = |c: char| c.is_whitespace() || "`'\"()[],;|=".contains(c);
    let in_name = |c: char| c.is_ascii_alphanumeric() || "_-./".contains(c);
    line.split(ends_word)
        .map(|word| word.strip_prefix("./").unwrap_or(word))
        .filter(|word| {
            word.split_once('/')
                .is_some_and(|(first, _)| folders.contains(first))
        })
        .filter(|word| !word.contains(['*', '<', '{', '$']))
        .map(|word| {
            let name = word.find(|c| !in_name(c)).unwrap_or(word.len());
            word[..name].trim_end_matches('.')
        })
        .collect()
}

/// A location the root `.gitignore` names: `/x` from the root, `x/` in any folder.
fn ignored(path: &str, gitignore: &str) -> bool {
    gitignore
        .lines()
        .map(str::trim)
        .filter(|pattern| {
            !pattern.is_empty() && !pattern.starts_with('#') && !pattern.contains('*')
        })
        .any(|pattern| {
            let name = pattern.trim_end_matches('/');
            match name.strip_prefix('/') {
                Some(anchored) => path == anchored || path.starts_with(&format!("{anchored}/")),
                None => path.split('/').any(|component| component == name),
            }
        })
}

/// The tracked files, as `git ls-files` lists them.
fn tracked_files() -> Vec<String> {
    let output = std::process::Command::new("git")
        .arg("ls-files")
        .current_dir(root())
        .output()
        .expect("git ls-files: the path check reads the files git tracks");
    assert!(output.status.success(), "git ls-files failed: {output:?}");
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// The folder of the crate `file` is in (the nearest folder above it with a tracked
/// `Cargo.toml`), when that is not the repository's root.
fn crate_of<'a>(file: &str, manifests: &'a BTreeSet<String>) -> Option<&'a str> {
    let mut folder = file;
    while let Some((parent, _)) = folder.rsplit_once('/') {
        if let Some(manifest) = manifests.get(&format!("{parent}/Cargo.toml")) {
            return manifest.strip_suffix("/Cargo.toml");
        }
        folder = parent;
    }
    None
}

/// How many paths `text` (the file `file`) names, and each that is not a file or folder of the
/// tree, with its line number. `exists` answers for a path from the repository's root.
fn missing_paths<'a>(
    file: &str,
    text: &'a str,
    folders: &BTreeSet<String>,
    manifests: &BTreeSet<String>,
    gitignore: &str,
    exists: &dyn Fn(&str) -> bool,
) -> (usize, Vec<(usize, &'a str)>) {
    let Some(kind) = text_of(file, text.lines().next().unwrap_or_default()) else {
        return (0, Vec::new());
    };
    let home = crate_of(file, manifests);
    let mut named = 0;
    let mut missing = Vec::new();
    for (index, line) in text.lines().enumerate() {
        for path in paths_in(readable(line, kind), folders) {
            named += 1;
            let found = exists(path) || home.is_some_and(|home| exists(&format!("{home}/{path}")));
            if !found && !ignored(path, gitignore) {
                missing.push((index + 1, path));
            }
        }
    }
    (named, missing)
}

/// The tree's top-level folders, and its crates' manifests (`Cargo.toml` below the root).
fn folders_and_manifests(files: &[String]) -> (BTreeSet<String>, BTreeSet<String>) {
    let folders = files
        .iter()
        .filter_map(|file| file.split_once('/').map(|(first, _)| first.to_owned()))
        .collect();
    let manifests = files
        .iter()
        .filter(|file| file.ends_with("/Cargo.toml"))
        .cloned()
        .collect();
    (folders, manifests)
}

/// Every path the Markdown files, the comments and the scripts name exists (see above), and
/// every entry of `ELSEWHERE` is still named where it says.
#[test]
fn every_path_the_text_names_exists() {
    let files = tracked_files();
    let (folders, manifests) = folders_and_manifests(&files);
    let gitignore = read(&root().join(".gitignore"));
    let exists = |path: &str| root().join(path).exists();
    let mut missing = Vec::new();
    let mut elsewhere = BTreeSet::new();
    let mut read_files = 0;
    let mut named = 0;
    for file in files
        .iter()
        .filter(|file| !HISTORY.contains(&file.as_str()))
    {
        let Ok(text) = std::fs::read_to_string(root().join(file)) else {
            continue;
        };
        read_files += 1;
        let (paths, gone) = missing_paths(file, &text, &folders, &manifests, &gitignore, &exists);
        named += paths;
        for (line, path) in gone {
            let path = path.trim_end_matches('/');
            match ELSEWHERE
                .iter()
                .position(|&(f, p, _)| f == file && p == path)
            {
                Some(entry) => {
                    elsewhere.insert(entry);
                }
                None => missing.push(format!("{file}:{line}: {path}")),
            }
        }
    }
    assert!(
        read_files > 300 && named > 500 && folders.contains("src") && folders.contains("docs"),
        "{read_files} files read, {named} paths, top-level folders {folders:?}: the file list or \
         the path reader is broken"
    );
    assert!(
        missing.is_empty(),
        "paths that name no file or folder of the tree:\n{}\n\
         Fix each to where the file is now (`git log --stat --follow -- <path>` and \
         `git log --diff-filter=RD --stat` show where it went), write a path still to be made \
         with a placeholder (`fuzz/regressions/<target>/`), or, for another repository's path, add it to \
         ELSEWHERE in tests/repo/docs.rs.",
        missing.join("\n")
    );
    let unused: Vec<_> = (0..ELSEWHERE.len())
        .filter(|entry| !elsewhere.contains(entry))
        .map(|entry| ELSEWHERE[entry])
        .collect();
    assert!(
        unused.is_empty(),
        "ELSEWHERE entries no longer named (or now found in the tree): remove them: {unused:?}"
    );
}

/// The path check reads paths as they are written and reports the one that is gone.
#[test]
fn the_path_check_reports_a_missing_path_and_reads_paths_as_written() {
    let folders: BTreeSet<String> = ["src", "docs", "fuzz", "tests", "crates", "target"]
        .map(str::to_owned)
        .into();
    assert_eq!(
        paths_in(
            "`src/core/path.rs:12-30`, `docs/design.md#layout` and ./tests/repo/docs.rs::anchor; \
             src/proto/ (fuzz/corpus/), see src/lib.rs.",
            &folders
        ),
        [
            "src/core/path.rs",
            "docs/design.md",
            "tests/repo/docs.rs",
            "src/proto/",
            "fuzz/corpus/",
            "src/lib.rs"
        ]
    );
    assert_eq!(
        paths_in(
            "`fuzz/regressions/<target>/` src/*.rs docs/{a,b}.md $root/src/x.rs docs/$page \
             https://docs.rs/x ../src/y.rs a/src/z.rs scripts/x.sh",
            &folders
        ),
        Vec::<&str>::new()
    );

    let manifests: BTreeSet<String> = ["crates/go-yaml/Cargo.toml".to_owned()].into();
    let tree = [
        "src/core/path.rs",
        "crates/go-yaml/tests/go_yaml.rs",
        "tests/cli/go_yaml_render.rs",
    ];
    let exists = |path: &str| tree.contains(&path);
    let gitignore = "/target\n/fuzz/artifacts\nnode_modules/\n";
    let check = |file: &str, text: &str| -> Vec<(usize, String)> {
        missing_paths(file, text, &folders, &manifests, gitignore, &exists)
            .1
            .into_iter()
            .map(|(line, path)| (line, path.to_owned()))
            .collect()
    };
    let at = |line: usize, path: &str| (line, path.to_owned());
    assert_eq!(
        check(
            "docs/x.md",
            "intro\n`src/core/path.rs:3` and `src/core/gone.rs:3`\n"
        ),
        [at(2, "src/core/gone.rs")]
    );
    // In a crate, a path may be the crate's own; in source files only the comments are read (the
    // slashes are written apart, or this file's own check would read the line as a comment).
    let source = format!(
        "{0}! tests/go_yaml.rs and tests/cli/go_yaml_render.rs, not tests/go_yaml_render.rs\n\
         let path = \"src/not_a_comment.rs\"; {0} src/gone.rs",
        "/".repeat(2)
    );
    assert_eq!(
        check("crates/go-yaml/src/lib.rs", &source),
        [at(1, "tests/go_yaml_render.rs"), at(2, "src/gone.rs")]
    );
    assert_eq!(
        check(
            "x.yaml",
            "key: src/value.rs # src/comment.rs\n# src/core/path.rs"
        ),
        [at(1, "src/comment.rs")]
    );
    // Build outputs the root .gitignore names are never in a clone.
    assert_eq!(
        check(
            "scripts/a.sh",
            "ls target/debug fuzz/artifacts/x docs/node_modules/y fuzz/artifacts-2/"
        ),
        [at(1, "fuzz/artifacts-2/")]
    );
    assert_eq!(check("data.json", "\"src/gone.rs\""), []);
    assert_eq!(
        check(".ci/run", "#!/bin/sh\nexec ./src/gone.sh"),
        [at(2, "src/gone.sh")]
    );
}

/// The cells of the rows of the first Markdown table under `## {heading}`.
fn table_rows(page: &str, heading: &str) -> Vec<Vec<String>> {
    let start = page
        .find(&format!("\n## {heading}\n"))
        .unwrap_or_else(|| panic!("no heading \"## {heading}\""));
    page[start..]
        .lines()
        .skip_while(|line| !line.starts_with('|'))
        .take_while(|line| line.starts_with('|'))
        .skip(2)
        .map(|line| {
            line.trim_matches('|')
                .split(" | ")
                .map(|cell| cell.trim().to_owned())
                .collect()
        })
        .collect()
}

/// The words in backticks of a cell.
fn code_spans(cell: &str) -> Vec<&str> {
    cell.split('`').skip(1).step_by(2).collect()
}

/// docs/lifecycle.md's phase table is the code's: one row per phase, in the code's order, and
/// each row's rendering, readiness, what it lets the provider change and what is said of it as
/// `function_artifactory::lifecycle::PhaseName` has them.
#[test]
fn the_phase_table_is_the_codes() {
    use function_artifactory::lifecycle::{Change, PhaseName, Rendering};
    let page = read(&root().join("docs/lifecycle.md"));
    let rows = table_rows(&page, "Phases");
    let names: Vec<String> = rows.iter().map(|row| row[0].clone()).collect();
    let phases: Vec<String> = PhaseName::ALL
        .iter()
        .map(|phase| format!("`{}`", phase.as_str()))
        .collect();
    assert_eq!(names, phases, "the rows of docs/lifecycle.md's phase table");
    for (row, phase) in rows.iter().zip(PhaseName::ALL) {
        let name = phase.as_str();
        let rendered = match phase.rendering() {
            Rendering::Guard => "`[\"Observe\", \"Create\"]`",
            Rendering::ObserveOnly => "`[\"Observe\"]`",
            Rendering::OwnPolicies => "the entry's own policies",
            Rendering::NotRendered => "not rendered",
        };
        assert!(
            row[1].starts_with(rendered),
            "{name}: rendered with {rendered}, the table says {}",
            row[1]
        );
        let ready = if phase.can_be_ready() {
            "as observed"
        } else {
            "never"
        };
        assert_eq!(row[2], ready, "{name}: ready");
        let changes = match phase.lets_change() {
            Change::Nothing => "change nothing",
            Change::CreateOnly => "create a free key",
            Change::AsTheEntrySays => "do what the entry's policies allow",
        };
        assert_eq!(row[3], changes, "{name}: what it lets the provider do");
        let said = if row[4] == "nothing" {
            Vec::new()
        } else {
            code_spans(&row[4])
        };
        assert_eq!(said, phase.results(), "{name}: the results said of it");
    }
}

#[test]
fn a_phase_row_that_differs_is_found() {
    let page =
        "# x\n\n## Phases\n\n| phase | a |\n|---|---|\n| `held` | `[\"Observe\"]` |\n\ntext\n";
    let rows = table_rows(page, "Phases");
    assert_eq!(
        rows,
        [vec!["`held`".to_owned(), "`[\"Observe\"]`".to_owned()]]
    );
    assert_eq!(code_spans("`A`, `B` (b)"), ["A", "B"]);
}
