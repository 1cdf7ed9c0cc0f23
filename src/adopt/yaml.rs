//! The claims as YAML that every reader reads back exactly (docs/adopt.md, "What the entries
//! hold").
//!
//! `render` prints as Go's sigs.k8s.io/yaml does (crates/go-yaml), which is right for `render`
//! and wrong here: a claim carries whatever text Artifactory holds (descriptions, notes, keys),
//! and a character that Go's emitter refuses or folds (a DEL, a NEL) would fail the export or
//! change a key. So `adopt` writes its own, small YAML, for the shapes a claim has (objects,
//! lists, strings, numbers, booleans, null), with one rule a reader cannot misread: every
//! string is double-quoted, and every character that is not printable in both YAML 1.1 and
//! YAML 1.2, or that YAML 1.1 reads as a line break, is written as an escape. Mapping keys are
//! plain only where they are identifiers that no YAML schema resolves to anything but a string.

use serde_json::Value;
use std::fmt::Write as _;

/// One YAML document (without the `---` line) for `value`, ending in a newline.
pub(crate) fn document(value: &Value) -> String {
    let mut out = String::new();
    match value {
        Value::Object(map) if !map.is_empty() => mapping(&mut out, map, 0),
        Value::Array(items) if !items.is_empty() => sequence(&mut out, items, 0),
        scalar => {
            write_scalar(&mut out, scalar);
            out.push('\n');
        }
    }
    out
}

fn indent(out: &mut String, width: usize) {
    out.extend(std::iter::repeat_n(' ', width));
}

/// A block mapping at `width`, each line starting with its indentation.
fn mapping(out: &mut String, map: &serde_json::Map<String, Value>, width: usize) {
    for (key, value) in map {
        indent(out, width);
        write_key(out, key);
        out.push(':');
        nested(out, value, width);
    }
}

/// A block sequence at `width`: a mapping item starts on the dash's line.
fn sequence(out: &mut String, items: &[Value], width: usize) {
    for item in items {
        indent(out, width);
        out.push_str("- ");
        match item {
            Value::Object(map) if !map.is_empty() => {
                let mut first = true;
                for (key, value) in map {
                    if !first {
                        indent(out, width + 2);
                    }
                    first = false;
                    write_key(out, key);
                    out.push(':');
                    nested(out, value, width + 2);
                }
            }
            Value::Array(inner) if !inner.is_empty() => {
                out.push('\n');
                sequence(out, inner, width + 2);
            }
            scalar => {
                write_scalar(out, scalar);
                out.push('\n');
            }
        }
    }
}

/// What follows `key:` of a mapping at `width`.
fn nested(out: &mut String, value: &Value, width: usize) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            out.push('\n');
            mapping(out, map, width + 2);
        }
        Value::Array(items) if !items.is_empty() => {
            out.push('\n');
            sequence(out, items, width + 2);
        }
        scalar => {
            out.push(' ');
            write_scalar(out, scalar);
            out.push('\n');
        }
    }
}

fn write_scalar(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&number(n)),
        Value::String(s) => quoted(out, s),
        Value::Array(_) => out.push_str("[]"),
        Value::Object(_) => out.push_str("{}"),
    }
}

/// A number as both YAML versions read it: an integer as its digits; a float with a '.' and
/// a signed exponent (YAML 1.1 reads `1e300` as a string).
fn number(n: &serde_json::Number) -> String {
    if n.is_i64() || n.is_u64() {
        return n.to_string();
    }
    let text = n.to_string();
    let (mantissa, exponent) = match text.split_once(['e', 'E']) {
        Some((m, e)) => (m.to_owned(), Some(e.to_owned())),
        None => (text.clone(), None),
    };
    let mut out = mantissa;
    if !out.contains('.') {
        out.push_str(".0");
    }
    if let Some(exponent) = exponent {
        out.push('e');
        if !exponent.starts_with(['+', '-']) {
            out.push('+');
        }
        out.push_str(&exponent);
    }
    out
}

/// Words that a YAML 1.1 or 1.2 reader resolves to something other than a string when plain.
const RESOLVED_WORDS: [&str; 12] = [
    "y", "n", "yes", "no", "on", "off", "true", "false", "null", "nan", "inf", "infinity",
];

/// A key plain where it is an ASCII identifier starting with a letter that no schema resolves
/// (`apiVersion`, `forProvider`), else double-quoted.
fn write_key(out: &mut String, key: &str) {
    let mut chars = key.chars();
    let identifier = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric())
        && !RESOLVED_WORDS.contains(&key.to_ascii_lowercase().as_str());
    if identifier {
        out.push_str(key);
    } else {
        quoted(out, key);
    }
}

/// Whether `c` is written as itself inside double quotes: printable in YAML 1.1 and 1.2
/// (`c-printable` of both), no line break of YAML 1.1 (NEL, LS, PS), no byte-order mark, and
/// neither of the two characters the quotes give a meaning.
fn plain_char(c: char) -> bool {
    matches!(c, ' '..='~' | '\u{A0}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..)
        && !matches!(c, '"' | '\\' | '\u{2028}' | '\u{2029}' | '\u{FEFF}')
}

/// `text` double-quoted, each other character as an escape both versions define.
pub(crate) fn quoted(out: &mut String, text: &str) {
    out.push('"');
    for c in text.chars() {
        if plain_char(c) {
            out.push(c);
            continue;
        }
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x100 => {
                let _ = write!(out, "\\x{:02X}", c as u32);
            }
            c if (c as u32) < 0x10000 => {
                let _ = write!(out, "\\u{:04X}", c as u32);
            }
            c => {
                let _ = write!(out, "\\U{:08X}", c as u32);
            }
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_claim_reads_as_block_yaml_with_every_string_quoted() {
        let claim = json!({
            "apiVersion": "platform.example.org/v1alpha1",
            "metadata": {"name": "repos"},
            "spec": {"repositories": [
                {"name": "libs", "import": true, "forProvider": {"maxUniqueSnapshots": 5, "propertySets": ["a"], "x": {}}},
                {"name": "on", "members": []}
            ]}
        });
        assert_eq!(
            document(&claim),
            "apiVersion: \"platform.example.org/v1alpha1\"\n\
             metadata:\n  name: \"repos\"\n\
             spec:\n  repositories:\n\
             \x20   - forProvider:\n\
             \x20       maxUniqueSnapshots: 5\n\
             \x20       propertySets:\n\
             \x20         - \"a\"\n\
             \x20       x: {}\n\
             \x20     import: true\n\
             \x20     name: \"libs\"\n\
             \x20   - members: []\n\
             \x20     name: \"on\"\n"
        );
    }

    #[test]
    fn keys_that_a_schema_resolves_are_quoted() {
        let mut out = String::new();
        for key in ["on", "Yes", "a-b", "", "1x", "name"] {
            write_key(&mut out, key);
            out.push(' ');
        }
        assert_eq!(out, "\"on\" \"Yes\" \"a-b\" \"\" \"1x\" name ");
    }

    #[test]
    fn floats_carry_a_dot_and_a_signed_exponent() {
        let n = |v: f64| number(&serde_json::Number::from_f64(v).unwrap());
        assert_eq!(n(1.5), "1.5");
        assert_eq!(n(1e300), "1.0e+300");
        assert_eq!(n(2.5e-7), "2.5e-7");
        assert_eq!(number(&7200.into()), "7200");
    }

    #[test]
    fn characters_outside_both_printable_sets_are_escaped() {
        let mut out = String::new();
        quoted(
            &mut out,
            "a\"\\\n\t\u{7F}\u{85}\u{2028}\u{FEFF}\u{1F600}\u{FFFE}é",
        );
        assert_eq!(
            out,
            "\"a\\\"\\\\\\n\\t\\x7F\\x85\\u2028\\uFEFF\u{1F600}\\uFFFEé\""
        );
    }
}
