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

/// The modules each test binary declares in `tests/<area>/main.rs`, as `tests/<area>/<module>.rs`.
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
                    modules.insert(format!("tests/{area}/{name}.rs"));
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
