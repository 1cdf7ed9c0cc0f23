//! render reads and prints YAML byte for byte as Go's sigs.k8s.io/yaml (go-yaml v2) does under
//! `crossplane render`: a corpus of documents goes through render's reader and writer
//! (`render::reprint_yaml`) and through the Go program in tests/go-yaml, and every document must
//! print the same bytes, or fail on both sides.
//!
//! The corpus: the files in tests/go-yaml/corpus (YAML 1.1 scalars, merge keys, aliases, keys,
//! numbers, control characters, line folding), every YAML file under examples/ (inputs and
//! golden outputs), and cases generated from a fixed seed (plain and quoted scalars, strings of
//! special characters, key pairs for go-yaml's key order, numbers of every magnitude).
//!
//! The reference is Debian's golang-go (1.19) and golang-k8s-sigs-yaml-dev (1.3.0, go-yaml
//! 2.4.0), built offline: `apt-get install --no-install-recommends golang-go
//! golang-k8s-sigs-yaml-dev`. Without them the tests print a SKIP line and pass, unless
//! `REQUIRE_GO_YAML=1` (scripts/test-all.sh sets it), which makes a missing Go a failure.
#![cfg(feature = "server")]

use function_artifactory::render::reprint_yaml;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

const GOPATH: &str = "/usr/share/gocode";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The Go program, built once; `None` (after a SKIP line) when Go or the library is missing.
fn go_reference() -> Option<&'static Path> {
    static BUILT: OnceLock<Option<PathBuf>> = OnceLock::new();
    BUILT.get_or_init(build_reference).as_deref()
}

fn build_reference() -> Option<PathBuf> {
    let library = Path::new(GOPATH).join("src/sigs.k8s.io/yaml");
    let go_found = Command::new("go").arg("version").output().is_ok();
    if !go_found || !library.is_dir() {
        let missing = "Go or sigs.k8s.io/yaml is not installed (apt-get install \
                       --no-install-recommends golang-go golang-k8s-sigs-yaml-dev)";
        assert!(
            std::env::var("REQUIRE_GO_YAML").as_deref() != Ok("1"),
            "REQUIRE_GO_YAML=1 but {missing}"
        );
        println!("SKIP: go_yaml: {missing}");
        return None;
    }
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("go-yaml");
    std::fs::create_dir_all(&dir).expect("a folder for the Go build");
    let binary = dir.join("go-yaml");
    let output = Command::new("go")
        .args(["build", "-o"])
        .arg(&binary)
        .arg(root().join("tests/go-yaml/main.go"))
        .env("GO111MODULE", "off")
        .env("GOPATH", GOPATH)
        .env("GOFLAGS", "")
        .env("GOPROXY", "off")
        .env("GOCACHE", dir.join("cache"))
        .output()
        .expect("go runs");
    assert!(
        output.status.success(),
        "go build failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    Some(binary)
}

/// What the Go program prints for the documents: one entry per document.
fn go_outputs(binary: &Path, documents: &[String], numbers: &str) -> Vec<String> {
    let mut child = Command::new(binary)
        .arg(format!("-numbers={numbers}"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("the Go reference runs");
    let input = documents.join("---\n");
    let mut stdin = child.stdin.take().expect("stdin");
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let output = child.wait_with_output().expect("the Go reference ends");
    writer.join().expect("writer").expect("input written");
    assert!(output.status.success(), "the Go reference failed");
    let text = String::from_utf8(output.stdout).expect("UTF-8 from Go");
    let mut entries: Vec<String> = Vec::new();
    for line in text.split_inclusive('\n') {
        if line.starts_with("=== ") {
            entries.push(String::new());
        } else if let Some(last) = entries.last_mut() {
            last.push_str(line);
        }
    }
    assert_eq!(entries.len(), documents.len(), "one output per document");
    entries
}

/// What render prints for one document, in the Go program's form.
fn ours(document: &str, as_doubles: bool) -> String {
    match reprint_yaml(document, as_doubles) {
        Ok(text) => text,
        Err(error) => format!("ERROR: {}\n", error.replace('\n', " ")),
    }
}

/// Errors render words its own way (naming the line and the fix) where Go prints a Go value.
const OWN_WORDS: [&str; 4] = [
    "unsupported map key:",
    "invalid map key:",
    "json: unsupported value:",
    "(render's limit)",
];

/// Compares every document: the same bytes, or an error on both sides (worded as Go words it,
/// but for [`OWN_WORDS`]).
fn compare(documents: &[String], numbers: &str) {
    let Some(binary) = go_reference() else {
        return;
    };
    let expected = go_outputs(binary, documents, numbers);
    let mut differences = Vec::new();
    let mut worded_differently = 0;
    for (document, go) in documents.iter().zip(&expected) {
        let mine = ours(document, numbers == "float");
        let both_fail = go.starts_with("ERROR: ") && mine.starts_with("ERROR: ");
        // render words some errors its own way, with the line and the fix; any other error
        // must read as Go's.
        let own_words = OWN_WORDS.iter().any(|words| mine.contains(words));
        if both_fail && &mine != go && !own_words {
            differences.push(format!(
                "--- input\n{document}--- Go\n{go}--- render (worded otherwise)\n{mine}"
            ));
        } else if both_fail && &mine != go {
            worded_differently += 1;
            if std::env::var("GO_YAML_SHOW_ERRORS").is_ok() {
                println!("--- input\n{document}--- Go\n{go}--- render\n{mine}");
            }
        }
        if !both_fail && &mine != go {
            differences.push(format!(
                "--- input\n{document}--- Go\n{go}--- render\n{mine}"
            ));
        }
    }
    println!(
        "go_yaml: {} documents compared with -numbers={numbers}, {} differ, {} fail on both \
         sides with other words (GO_YAML_SHOW_ERRORS=1 shows them)",
        documents.len(),
        differences.len(),
        worded_differently
    );
    assert!(
        differences.is_empty(),
        "{} of {} documents differ from Go:\n{}",
        differences.len(),
        documents.len(),
        differences
            .iter()
            .take(20)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// Documents separated by lines that are exactly `---`, as the Go program splits them.
fn split(text: &str) -> Vec<String> {
    let mut documents = vec![String::new()];
    for line in text.split_inclusive('\n') {
        if line.trim_end_matches('\n') == "---" {
            documents.push(String::new());
        } else {
            documents.last_mut().expect("one").push_str(line);
        }
    }
    documents
}

fn yaml_files(dir: &Path, found: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("readable folder")
        .map(|e| e.expect("entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            yaml_files(&path, found);
        } else if path.extension().is_some_and(|e| e == "yaml") {
            found.push(path);
        }
    }
}

fn corpus_files() -> Vec<String> {
    let mut files = Vec::new();
    yaml_files(&root().join("tests/go-yaml/corpus"), &mut files);
    assert!(files.len() >= 4, "the corpus files are missing");
    files
        .iter()
        .flat_map(|f| split(&std::fs::read_to_string(f).expect("readable corpus")))
        .collect()
}

// ---- generated cases ----

/// A small deterministic generator (64-bit LCG), so that every run compares the same cases.
struct Cases(u64);

impl Cases {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn text(&mut self, alphabet: &[&str], max_len: usize) -> String {
        let len = 1 + self.below(max_len);
        (0..len)
            .map(|_| alphabet[self.below(alphabet.len())])
            .collect()
    }
}

/// A YAML double-quoted scalar holding exactly `text`.
fn quoted(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_ascii_graphic() || c == ' ' => out.push(c),
            c if (c as u32) < 0x10000 => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push_str(&format!("\\U{:08X}", c as u32)),
        }
    }
    out.push('"');
    out
}

/// Scalars written plain and quoted: resolution when read, quoting when printed.
fn scalar_cases(cases: &mut Cases) -> Vec<String> {
    let alphabet = [
        "0", "1", "7", "9", "_", "+", "-", ".", "e", "E", "x", "o", "b", "B", ":", "y", "n", "N",
        "t", "~", "0x", "0o", "0b", "inf", "nan", "Inf", "1_0", "12", "00", "2001-", "12-14",
    ];
    (0..600)
        .flat_map(|_| {
            let text = cases.text(&alphabet, 6);
            [
                format!("k: {text}\n"),
                format!("k: {}\n", quoted(&text)),
                format!("{text}: v\n"),
            ]
        })
        .collect()
}

/// Strings of the characters Go's JSON leaves raw or escapes, as values and as keys.
fn special_string_cases(cases: &mut Cases) -> Vec<String> {
    let alphabet = [
        " ",
        " ",
        "a",
        "b",
        "\t",
        "\n",
        "\r",
        "\u{1}",
        "\u{1b}",
        "\u{7f}",
        "\u{85}",
        "\u{9f}",
        "\u{a0}",
        "\u{2028}",
        "\u{2029}",
        "\u{feff}",
        "\u{fffe}",
        "\u{1F600}",
        "\"",
        "\\",
        "#",
        ":",
        "-",
        "'",
        ".",
        "---",
        "...",
        "<",
        "&",
        "é",
    ];
    (0..600)
        .flat_map(|_| {
            let text = cases.text(&alphabet, 10);
            [
                format!("k: {}\n", quoted(&text)),
                format!("{}: v\n", quoted(&text)),
                format!("l:\n- m: {}\n", quoted(&text)),
            ]
        })
        .collect()
}

/// Long texts that wrap at column 80, at several depths and with keys of several lengths.
fn wrapping_cases(cases: &mut Cases) -> Vec<String> {
    let words = [
        "a",
        "bb",
        "cccc",
        "dddddddd",
        "eeeeeeeeeeeeeeee",
        " ",
        "  ",
        "x: y",
        "#",
    ];
    (0..150)
        .map(|_| {
            let text: String = (0..30).map(|_| words[cases.below(words.len())]).collect();
            let indent = "  ".repeat(cases.below(4));
            let key = "k".repeat(1 + cases.below(12));
            format!("a:\n{indent}  {key}: {}\n", quoted(&text))
        })
        .collect()
}

/// Two keys per document: a two-entry map is sorted the same however Go's map iterates, so it
/// shows go-yaml's `keyList.Less` for that pair.
fn key_pair_cases(cases: &mut Cases) -> Vec<String> {
    let alphabet = [
        "a", "b", "Z", "0", "1", "2", "9", "00", "10", "_", "-", ".", "/", "ª", "Ⅻ", "٣", "é",
        "中", "ǅ", "²",
    ];
    (0..800)
        .map(|_| {
            let first = cases.text(&alphabet, 5);
            // The second shares a prefix with the first, so the comparison reaches inside.
            let keep = cases.below(first.chars().count() + 1);
            let prefix: String = first.chars().take(keep).collect();
            let second = format!("{prefix}{}", cases.text(&alphabet, 3));
            format!("{}: 1\n{}: 2\n", quoted(&first), quoted(&second))
        })
        .collect()
}

/// Numbers around the limits of int64, uint64 and float64, as integers and as decimals.
fn number_cases(cases: &mut Cases) -> Vec<String> {
    let mut documents = Vec::new();
    for power in 0..70 {
        let base = 2f64.powi(power);
        for delta in [-1.0, 0.0, 1.0] {
            documents.push(format!("n: {:.0}\nm: -{:.0}\n", base + delta, base + delta));
        }
    }
    for power in [53, 60, 62, 63, 64, 65] {
        let exact = 2u128.pow(power);
        for delta in [0u128, 1, 7, 1000] {
            documents.push(format!("n: {}\n", exact + delta));
            documents.push(format!("n: -{}\n", exact - delta.min(exact)));
        }
    }
    for _ in 0..300 {
        let mantissa = cases.next() % 10_000_000;
        let exponent = cases.below(60) as i32 - 30;
        documents.push(format!("f: {mantissa}e{exponent}\ng: 0.{mantissa}\n"));
    }
    documents
}

// ---- the tests ----

#[test]
fn the_corpus_reads_and_prints_as_go() {
    compare(&corpus_files(), "read");
}

#[test]
fn every_example_reads_and_prints_as_go() {
    let mut files = Vec::new();
    yaml_files(&root().join("examples"), &mut files);
    assert!(files.len() > 20, "examples found: {}", files.len());
    let documents: Vec<String> = files
        .iter()
        .flat_map(|f| split(&std::fs::read_to_string(f).expect("readable example")))
        .collect();
    compare(&documents, "read");
}

#[test]
fn generated_cases_read_and_print_as_go() {
    let mut cases = Cases(0x5eed_0f9a_4a11);
    let mut documents = scalar_cases(&mut cases);
    documents.extend(special_string_cases(&mut cases));
    documents.extend(wrapping_cases(&mut cases));
    documents.extend(key_pair_cases(&mut cases));
    documents.extend(number_cases(&mut cases));
    compare(&documents, "read");
}

/// Numbers as a function's reply carries them (doubles) print as Crossplane prints them.
#[test]
fn numbers_from_function_replies_print_as_go() {
    let mut cases = Cases(0x00d0_b1e5);
    let mut documents = number_cases(&mut cases);
    documents.extend(corpus_files());
    compare(&documents, "float");
}

/// src/render/yaml/unicode.rs is what the Go program prints.
#[test]
fn unicode_tables_are_gos() {
    let Some(binary) = go_reference() else {
        return;
    };
    let output = Command::new(binary)
        .arg("-unicode-tables")
        .output()
        .expect("the Go reference runs");
    let expected = String::from_utf8(output.stdout).expect("UTF-8");
    let committed = std::fs::read_to_string(root().join("src/render/yaml/unicode.rs"))
        .expect("the committed tables");
    assert!(
        committed == expected,
        "src/render/yaml/unicode.rs differs from Go's tables: regenerate it with \
         `go run tests/go-yaml/main.go -unicode-tables > src/render/yaml/unicode.rs` \
         (GO111MODULE=off GOPATH={GOPATH})"
    );
}
