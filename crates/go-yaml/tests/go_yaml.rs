//! The crate reads and prints YAML byte for byte as Go's sigs.k8s.io/yaml (go-yaml v2) does
//! under `crossplane render`: a corpus of documents goes through [`go_yaml::read_first`] and
//! [`go_yaml::to_yaml`] and through the Go program in tests/go-yaml, and every document must
//! print the same bytes, or fail on both sides.
//!
//! The corpus: the files in tests/go-yaml/corpus (YAML 1.1 scalars, merge keys, aliases, keys,
//! numbers, control characters, line folding) and cases generated from a fixed seed (plain and
//! quoted scalars, strings of special characters, key pairs for go-yaml's key order, numbers of
//! every magnitude). The function's own documents (its examples, numbers as a function's reply
//! carries them) are compared by the workspace root's tests/cli/go_yaml_render.rs.
//!
//! The Go reference and its requirements (REQUIRE_GO_YAML=1 makes a missing Go a failure): see
//! tests/support/mod.rs.

mod support;

use std::process::Command;
use support::{compare, corpus_files, crate_dir, go_reference, number_cases, Cases, GOPATH};

/// One document read and printed by this crate; numbers are what they were read as.
fn reprint(document: &str, as_doubles: bool) -> Result<String, String> {
    assert!(!as_doubles, "this crate's tests compare numbers as read");
    let value = go_yaml::read_first(document).map_err(|e| e.to_string())?;
    go_yaml::to_yaml(&value).map_err(|e| e.to_string())
}

// ---- generated cases ----

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

// ---- the tests ----

#[test]
fn the_corpus_reads_and_prints_as_go() {
    compare(&corpus_files(), "read", reprint);
}

#[test]
fn generated_cases_read_and_print_as_go() {
    let mut cases = Cases(0x5eed_0f9a_4a11);
    let mut documents = scalar_cases(&mut cases);
    documents.extend(special_string_cases(&mut cases));
    documents.extend(wrapping_cases(&mut cases));
    documents.extend(key_pair_cases(&mut cases));
    documents.extend(number_cases(&mut cases));
    compare(&documents, "read", reprint);
}

/// src/unicode.rs is what the Go program prints.
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
    let committed =
        std::fs::read_to_string(crate_dir().join("src/unicode.rs")).expect("the committed tables");
    assert!(
        committed == expected,
        "crates/go-yaml/src/unicode.rs differs from Go's tables: regenerate it in crates/go-yaml \
         with `go run tests/go-yaml/main.go -unicode-tables > src/unicode.rs` \
         (GO111MODULE=off GOPATH={GOPATH})"
    );
}
