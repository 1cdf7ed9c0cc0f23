//! Reading YAML as `crossplane render` and kubectl read it: `sigs.k8s.io/yaml.Unmarshal` into
//! an unstructured object, which is go-yaml v2 (YAML 1.1) into generic values, then JSON.
//!
//! The steps, each as Go takes it:
//! 1. libyaml's events ([`crate::events`]) become a tree of nodes per document, with anchors
//!    resolved as they are met (an alias to an anchor not yet seen is an error): [`tree`].
//! 2. The tree is decoded as go-yaml decodes into `interface{}`: plain scalars resolved by YAML
//!    1.1 rules ([`crate::resolve`]), quoted ones strings, explicit tags honoured, timestamps kept
//!    as their text; `<<` merge keys applied in document order, so that a key written after the
//!    merge wins and one written before it is overwritten; of a list of maps, the earlier wins;
//!    aliases expanded.
//! 3. The values become JSON as `sigs.k8s.io/yaml` and apimachinery make them: map keys become
//!    strings (an integer in decimal, a float through float32 with `'g'`, a boolean
//!    `true`/`false`; a null key or an integer beyond int64 is an error); an integer that fits
//!    int64 stays one, a larger one becomes a float64, a float becomes an int64 when Go's JSON
//!    text of it is an integer; NaN and the infinities are an error (JSON has none).
//!
//! What one document may cost is bounded:
//! - collections nest at most [`MAX_DEPTH`](tree::MAX_DEPTH) deep (go-yaml allows 10,000, but
//!   no manifest needs more, and a deeper document is more likely an attack; the error calls it
//!   render's limit, the words `function-artifactory render` has always printed);
//! - aliases: go-yaml's own rule, `document contains excessive aliasing` once more than 100 nodes
//!   were decoded through aliases and they are more than a share of all decoded nodes (99% up to
//!   400,000 decoded nodes, falling to 10% at 4,000,000); and aliases may copy at most
//!   [`MAX_ALIAS_TEXT`](decode::MAX_ALIAS_TEXT) bytes of scalar text, a cap go-yaml has no need
//!   for (its strings are shared, not copied). A billion-laughs document stops after about a
//!   thousand nodes.
//!
//! The dependencies go one way: this module names [`tree`] and [`decode`](mod@decode),
//! `decode` names `tree`.

mod decode;
mod tree;

use decode::decode;
use serde_json::Value;
use tree::parse;

/// The first document of a text as `sigs.k8s.io/yaml.Unmarshal` reads a file (`null` when it
/// has none): go-yaml parses no further, so what follows the first document is not looked at.
/// The error is worded as `sigs.k8s.io/yaml` words it (`error converting YAML to JSON: yaml:
/// line 3: ...`).
pub(super) fn first_document(text: &str) -> Result<Value, String> {
    let trees = parse(text, Some(1)).map_err(wrap)?;
    match trees.into_iter().next() {
        Some(tree) => decode(tree).map_err(wrap),
        None => Ok(Value::Null),
    }
}

/// Every document of a text as YAML delimits them (an empty document is `null`).
pub(super) fn all_documents(text: &str) -> Result<Vec<Value>, String> {
    let trees = parse(text, None).map_err(wrap)?;
    trees
        .into_iter()
        .map(|tree| decode(tree).map_err(wrap))
        .collect()
}

/// The documents of a stream as `crossplane render` and kubectl split a file of manifests
/// (apimachinery's `YAMLReader`): at each line that starts with `---` followed by nothing but
/// spaces or a comment (any other text after `---` is an error), each part then read as
/// [`first_document`]. When the stream has several parts, an error names the part's first line.
pub(super) fn stream_documents(text: &str) -> Result<Vec<Value>, String> {
    let parts = split_stream(text)?;
    let several = parts.len() > 1;
    parts
        .into_iter()
        .map(|(line, part)| {
            first_document(&part).map_err(|e| {
                if several {
                    format!("the document at line {line}: {e}")
                } else {
                    e
                }
            })
        })
        .collect()
}

/// The parts of a stream and the 1-based line each starts on.
fn split_stream(text: &str) -> Result<Vec<(usize, String)>, String> {
    let mut parts = Vec::new();
    let mut current = String::new();
    let mut start = 1;
    for (number, line) in text.split_inclusive('\n').enumerate() {
        if let Some(rest) = line.strip_prefix("---") {
            let rest = rest.trim();
            if !rest.is_empty() && !rest.starts_with('#') {
                return Err(format!("invalid Yaml document separator: {rest}"));
            }
            if !current.is_empty() {
                parts.push((start, std::mem::take(&mut current)));
            }
            start = number + 2;
            continue;
        }
        current.push_str(line);
    }
    if !current.is_empty() {
        parts.push((start, current));
    }
    Ok(parts)
}

fn wrap(message: String) -> String {
    format!("error converting YAML to JSON: {message}")
}

#[cfg(test)]
mod tests {
    //! Expectations are go-yaml's and sigs.k8s.io/yaml's; tests/go_yaml.rs compares the reader
    //! with Go itself where Go is installed.
    use super::decode::MERGE_NEEDS_MAPS;
    use super::tree::{too_deep, MAX_DEPTH};
    use super::*;
    use serde_json::json;

    fn read(text: &str) -> Result<Value, String> {
        first_document(text)
    }

    #[test]
    fn yaml_1_1_scalars() {
        let doc = read(
            "a: yes\nb: Off\nc: 012\nd: 1_000\ne: 0x1F\nf: ~\ng: '012'\nh: !!str 12\n\
             i: !!int \"12\"\nj: 2001-12-14\nk: 1e400\nl: 08\nm: 1.5\n",
        );
        assert_eq!(
            doc,
            Ok(json!({
                "a": true, "b": false, "c": 10, "d": 1000, "e": 31, "f": null, "g": "012",
                "h": "12", "i": 12, "j": "2001-12-14", "k": "1e400", "l": 8, "m": 1.5,
            }))
        );
    }

    #[test]
    fn numbers_become_what_an_unstructured_object_holds() {
        let doc = read("big: 9223372036854775808\nmax: 18446744073709551615\nneg: -0.0\n").unwrap();
        assert_eq!(doc["big"], json!(9_223_372_036_854_775_808.0));
        assert!(doc["big"].is_f64());
        assert_eq!(doc["max"], json!(18_446_744_073_709_551_615.0));
        assert_eq!(doc["neg"], json!(0));
        assert!(doc["neg"].is_i64());
    }

    #[test]
    fn keys_become_json_keys() {
        let doc = read("1: a\n1.5: b\n3.141592653589793: c\ntrue: d\ny: e\n.inf: f\n").unwrap();
        assert_eq!(
            doc,
            json!({"1": "a", "1.5": "b", "3.1415927": "c", "true": "e", ".inf": "f"})
        );
        assert!(read("~: 1\n")
            .unwrap_err()
            .contains("unsupported map key: null"));
        assert!(read("18446744073709551615: 1\n")
            .unwrap_err()
            .contains("unsupported map key: 18446744073709551615"));
        assert_eq!(
            read("? [1]\n: 2\n"),
            Err(
                "error converting YAML to JSON: yaml: line 1: invalid map key: [1] (a sequence \
                 or mapping cannot be a key)"
                    .into()
            )
        );
        assert_eq!(
            read("a: .nan\n"),
            Err(
                "error converting YAML to JSON: json: unsupported value: NaN (line 1: JSON has \
                 no infinities or NaN: quote the value if the text is meant)"
                    .into()
            )
        );
    }

    #[test]
    fn merge_keys_in_document_order() {
        let doc = read(
            "base: &b {x: 1, z: 1}\nother: &o {x: 2, w: 2}\n\
             after:\n  <<: *b\n  x: 3\n\
             before:\n  x: 3\n  <<: *b\n\
             list:\n  <<: [*b, *o]\n\
             inline:\n  <<: {q: 1}\n  r: 2\n\
             quoted:\n  '<<': {q: 1}\n",
        )
        .unwrap();
        assert_eq!(doc["after"], json!({"x": 3, "z": 1}));
        assert_eq!(doc["before"], json!({"x": 1, "z": 1}));
        assert_eq!(doc["list"], json!({"x": 1, "z": 1, "w": 2}));
        assert_eq!(doc["inline"], json!({"q": 1, "r": 2}));
        assert_eq!(doc["quoted"], json!({"<<": {"q": 1}}));
        assert_eq!(
            read("a: &a [1]\nb:\n  <<: *a\n"),
            Err(format!("error converting YAML to JSON: {MERGE_NEEDS_MAPS}"))
        );
    }

    #[test]
    fn aliases_and_their_limits() {
        assert_eq!(
            read("a: &x {k: v}\nb: *x\n"),
            Ok(json!({"a": {"k": "v"}, "b": {"k": "v"}}))
        );
        assert_eq!(
            read("a: *x\n"),
            Err("error converting YAML to JSON: yaml: unknown anchor 'x' referenced".into())
        );
        assert_eq!(
            read("a: &x [*x]\n"),
            Err("error converting YAML to JSON: yaml: anchor 'x' value contains itself".into())
        );
    }

    #[test]
    fn a_billion_laughs_stops_early() {
        let mut text = String::from("a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
        for level in 1..10 {
            let refs = vec![format!("*a{}", level - 1); 9].join(", ");
            text.push_str(&format!("a{level}: &a{level} [{refs}]\n"));
        }
        assert_eq!(
            read(&text),
            Err("error converting YAML to JSON: yaml: document contains excessive aliasing".into())
        );
    }

    #[test]
    fn aliases_copy_a_bounded_amount_of_text() {
        let big = "x".repeat(1 << 20);
        let refs = vec!["*s"; 40].join(", ");
        let text = format!("s: &s {big}\nl: [{refs}]\n");
        let error = read(&text).unwrap_err();
        assert!(error.contains("aliases copy more than 32 MiB"), "{error}");
        let refs = vec!["*s"; 20].join(", ");
        assert!(read(&format!("s: &s {big}\nl: [{refs}]\n")).is_ok());
    }

    #[test]
    fn nesting_is_bounded() {
        let deep = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert!(read(&deep).is_ok());
        let deeper = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        assert_eq!(
            read(&deeper),
            Err(format!("error converting YAML to JSON: {}", too_deep(1)))
        );
        // Through aliases too.
        let nested = |depth: usize, inner: &str| {
            format!("{}{inner}{}", "[".repeat(depth), "]".repeat(depth))
        };
        let text = format!("a0: &a0 {}\na1: {}\n", nested(100, ""), nested(30, "*a0"));
        assert!(read(&text).unwrap_err().contains("nest more than 128 deep"));
    }

    #[test]
    fn binary_scalars() {
        assert_eq!(read("a: !!binary aGVsbG8=\n"), Ok(json!({"a": "hello"})));
        assert_eq!(read("a: !!binary /w==\n"), Ok(json!({"a": "\u{FFFD}"})));
        assert!(read("a: !!binary '*'\n").is_err());
    }

    #[test]
    fn documents_of_a_text() {
        assert_eq!(
            all_documents("a: 1\n---\n---\nb: 2\n"),
            Ok(vec![json!({"a": 1}), Value::Null, json!({"b": 2})])
        );
        assert_eq!(all_documents(""), Ok(vec![]));
        // go-yaml reads the first document and nothing after it.
        assert_eq!(first_document("{a: 1}}"), Ok(json!({"a": 1})));
        assert_eq!(first_document("a: 1\n...\n]]\n"), Ok(json!({"a": 1})));
        assert_eq!(first_document("# nothing\n"), Ok(Value::Null));
        assert!(all_documents("{a: 1}}").is_err());
    }

    #[test]
    fn streams_split_as_kubectl_splits_them() {
        assert_eq!(
            stream_documents("a: 1\n--- # next\n---\nb: 2\n...\nc: 3\n---\n"),
            Ok(vec![json!({"a": 1}), json!({"b": 2})])
        );
        assert_eq!(
            stream_documents("a: 1\n--- {b: 2}\n"),
            Err("invalid Yaml document separator: {b: 2}".into())
        );
        assert_eq!(
            stream_documents("a: 1\n---\nb: [\n"),
            Err(
                "the document at line 3: error converting YAML to JSON: yaml: line 1: did not \
                 find expected node content"
                    .into()
            )
        );
    }
}
