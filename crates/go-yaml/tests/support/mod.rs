//! The Go reference and the comparison with it, shared by the go-yaml crate's tests/go_yaml.rs
//! and the function's tests/cli/go_yaml_render.rs (which includes this file by its path): the Go
//! program in tests/go-yaml built once, documents compared byte for byte, the corpus, and the
//! generator of cases both use.
//!
//! The reference is Debian's golang-go (1.19) and golang-k8s-sigs-yaml-dev (1.3.0, go-yaml
//! 2.4.0), built offline: `apt-get install --no-install-recommends golang-go
//! golang-k8s-sigs-yaml-dev`. Without them the tests print a SKIP line and pass, unless
//! `REQUIRE_GO_YAML=1` (scripts/test-all.sh sets it), which makes a missing Go a failure.
// Each test that includes this module uses a part of it.
#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

pub const GOPATH: &str = "/usr/share/gocode";

/// The go-yaml crate's folder, whichever package's test includes this module: the crate's own
/// or the workspace root's.
pub fn crate_dir() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    if manifest.ends_with("crates/go-yaml") {
        manifest.to_path_buf()
    } else {
        manifest.join("crates/go-yaml")
    }
}

/// The Go program, built once; `None` (after a SKIP line) when Go or the library is missing.
pub fn go_reference() -> Option<&'static Path> {
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
        .arg(crate_dir().join("tests/go-yaml/main.go"))
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

/// Errors the crate words its own way (naming the line and the fix) where Go prints a Go
/// value.
const OWN_WORDS: [&str; 4] = [
    "unsupported map key:",
    "invalid map key:",
    "json: unsupported value:",
    "(render's limit)",
];

/// What one document reprints as: read, then printed, or the error either step gives; with
/// `as_doubles` every number travels as a double in between, as in a function's reply.
pub type Reprint = fn(document: &str, as_doubles: bool) -> Result<String, String>;

/// What `reprint` prints for one document, in the Go program's form.
fn ours(reprint: Reprint, document: &str, as_doubles: bool) -> String {
    match reprint(document, as_doubles) {
        Ok(text) => text,
        Err(error) => format!("ERROR: {}\n", error.replace('\n', " ")),
    }
}

/// Compares every document: the same bytes, or an error on both sides (worded as Go words it,
/// but for [`OWN_WORDS`]).
pub fn compare(documents: &[String], numbers: &str, reprint: Reprint) {
    let Some(binary) = go_reference() else {
        return;
    };
    let expected = go_outputs(binary, documents, numbers);
    let mut differences = Vec::new();
    let mut worded_differently = 0;
    for (document, go) in documents.iter().zip(&expected) {
        let mine = ours(reprint, document, numbers == "float");
        let both_fail = go.starts_with("ERROR: ") && mine.starts_with("ERROR: ");
        // The crate words some errors its own way, with the line and the fix; any other error
        // must read as Go's.
        let own_words = OWN_WORDS.iter().any(|words| mine.contains(words));
        if both_fail && &mine != go && !own_words {
            differences.push(format!(
                "--- input\n{document}--- Go\n{go}--- ours (worded otherwise)\n{mine}"
            ));
        } else if both_fail && &mine != go {
            worded_differently += 1;
            if std::env::var("GO_YAML_SHOW_ERRORS").is_ok() {
                println!("--- input\n{document}--- Go\n{go}--- ours\n{mine}");
            }
        }
        if !both_fail && &mine != go {
            differences.push(format!("--- input\n{document}--- Go\n{go}--- ours\n{mine}"));
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
pub fn split(text: &str) -> Vec<String> {
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

pub fn yaml_files(dir: &Path, found: &mut Vec<PathBuf>) {
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

pub fn corpus_files() -> Vec<String> {
    let mut files = Vec::new();
    yaml_files(&crate_dir().join("tests/go-yaml/corpus"), &mut files);
    assert!(files.len() >= 4, "the corpus files are missing");
    files
        .iter()
        .flat_map(|f| split(&std::fs::read_to_string(f).expect("readable corpus")))
        .collect()
}

// ---- generated cases ----

/// A small deterministic generator (64-bit LCG), so that every run compares the same cases.
pub struct Cases(pub u64);

impl Cases {
    pub fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    pub fn text(&mut self, alphabet: &[&str], max_len: usize) -> String {
        let len = 1 + self.below(max_len);
        (0..len)
            .map(|_| alphabet[self.below(alphabet.len())])
            .collect()
    }
}

/// Numbers around the limits of int64, uint64 and float64, as integers and as decimals.
pub fn number_cases(cases: &mut Cases) -> Vec<String> {
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
