//! A YAML emitter that prints JSON values byte for byte as go-yaml v2 does under
//! `sigs.k8s.io/yaml`, which is what `crossplane render` prints.
//!
//! The value it is given has already been through the JSON round trip ([`crate::go::reread`]).
//! What decides the bytes from there:
//! - the encoder: map keys in go-yaml's order ([`crate::go::key_less`]), numbers as the round trip
//!   leaves them ([`crate::go::number_text`]), and the style asked for each string: plain,
//!   double-quoted when the plain text would read back as another YAML 1.1 type
//!   ([`analysis::resolves_to_non_string`]), literal when it holds a line break;
//! - the emitter: block mappings and sequences, the scalar analysis that may overrule the
//!   style ([`analysis`]), and the writers that track the column, so that long scalars wrap at
//!   column 80 exactly where libyaml wraps them ([`writer`]).
//!
//! The emitter keeps libyaml's state variables (`column`, `indent`, `whitespace`, `indention`,
//! ...) and its writer primitives with the same meaning ([`writer`], which holds the state); the
//! event state machine is replaced by recursion over the value (this module). The dependencies
//! go one way: this module names [`analysis`] and [`writer`], `writer` names `analysis`.

mod analysis;
mod writer;

use crate::go::{number_text, sorted_entries};
use analysis::{analyze, is_break, requested_string_style, Analysis, Style};
use serde_json::{Map, Value};
use writer::Emitter;

/// Longest simple (implicit) key in bytes; longer keys use `? key`.
const MAX_SIMPLE_KEY_LEN: usize = 128;

/// Prints one document (without a `---` line) as go-yaml prints it.
pub(super) fn emit(value: &Value) -> String {
    let mut emitter = Emitter::new();
    emitter.document(value);
    emitter.out
}

/// Where a node is being emitted; mirrors libyaml's context flags.
#[derive(Debug, Clone, Copy, Default)]
struct NodeContext {
    mapping: bool,
    simple_key: bool,
}

impl Emitter {
    /// Stream start, implicit document, the root node, document and stream end.
    fn document(&mut self, value: &Value) {
        self.node(value, NodeContext::default());
        self.write_indent();
        if self.open_ended {
            self.write_indicator("...", true, false, false);
            self.write_indent();
        }
    }

    fn node(&mut self, value: &Value, context: NodeContext) {
        self.mapping_context = context.mapping;
        self.simple_key_context = context.simple_key;
        match value {
            Value::Object(map) if map.is_empty() => self.empty_flow("{", "}"),
            Value::Object(map) => self.block_mapping(map),
            Value::Array(items) if items.is_empty() => self.empty_flow("[", "]"),
            Value::Array(items) => self.block_sequence(items),
            Value::String(text) => self.scalar(text, requested_string_style(text)),
            Value::Number(number) => self.scalar(&number_text(number), Style::Plain),
            Value::Bool(flag) => self.scalar(if *flag { "true" } else { "false" }, Style::Plain),
            Value::Null => self.scalar("null", Style::Plain),
        }
    }

    fn block_mapping(&mut self, map: &Map<String, Value>) {
        self.increase_indent(false, false);
        for (key, value) in sorted_entries(map) {
            self.write_indent();
            if is_simple_key(key) {
                self.node(
                    &Value::String(key.clone()),
                    NodeContext {
                        mapping: true,
                        simple_key: true,
                    },
                );
                self.write_indicator(":", false, false, false);
            } else {
                self.write_indicator("?", true, false, true);
                self.node(
                    &Value::String(key.clone()),
                    NodeContext {
                        mapping: true,
                        simple_key: false,
                    },
                );
                self.write_indent();
                self.write_indicator(":", true, false, true);
            }
            self.node(
                value,
                NodeContext {
                    mapping: true,
                    simple_key: false,
                },
            );
        }
        self.pop_indent();
    }

    fn block_sequence(&mut self, items: &[Value]) {
        // A sequence that is a mapping value starts at its key's column.
        let indentless = self.mapping_context && !self.indention;
        self.increase_indent(false, indentless);
        for item in items {
            self.write_indent();
            self.write_indicator("-", true, false, true);
            self.node(item, NodeContext::default());
        }
        self.pop_indent();
    }

    /// An empty mapping or sequence: libyaml writes it in flow style (`{}`,
    /// `[]`). It is the only flow collection this emitter writes, so scalars
    /// are always in block context (libyaml's `flow_level` is 0).
    fn empty_flow(&mut self, open: &str, close: &str) {
        self.write_indicator(open, true, true, false);
        self.write_indicator(close, false, false, false);
    }

    fn scalar(&mut self, value: &str, requested: Style) {
        let analysis = analyze(value);
        let style = self.select_style(value, requested, &analysis);
        self.increase_indent(true, false);
        let allow_breaks = !self.simple_key_context;
        match style {
            Style::Plain => self.write_plain(value, allow_breaks),
            Style::SingleQuoted => self.write_single_quoted(value, allow_breaks),
            Style::DoubleQuoted => self.write_double_quoted(value, allow_breaks),
            Style::Literal => self.write_literal(value),
        }
        self.pop_indent();
    }

    /// `yaml_emitter_select_scalar_style`: the analysis may overrule the style.
    fn select_style(&self, value: &str, requested: Style, a: &Analysis) -> Style {
        if self.simple_key_context && a.multiline {
            return Style::DoubleQuoted;
        }
        let mut style = requested;
        if style == Style::Plain
            && (!a.block_plain_allowed || (value.is_empty() && self.simple_key_context))
        {
            style = Style::SingleQuoted;
        }
        if style == Style::SingleQuoted && !a.single_quoted_allowed {
            style = Style::DoubleQuoted;
        }
        if style == Style::Literal && (!a.block_allowed || self.simple_key_context) {
            style = Style::DoubleQuoted;
        }
        style
    }
}

/// `yaml_emitter_check_simple_key` for a string key.
fn is_simple_key(key: &str) -> bool {
    key.len() <= MAX_SIMPLE_KEY_LEN && !key.chars().any(is_break)
}

#[cfg(test)]
mod tests {
    //! Expectations are what sigs.k8s.io/yaml (go-yaml v2) prints for the same JSON; the
    //! corpus of tests/go_yaml.rs checks them against Go itself where Go is installed.
    use super::*;
    use serde_json::json;

    fn yaml(value: Value) -> String {
        emit(&value)
    }

    /// The printed form of one string value under the key `k`.
    fn scalar(text: &str) -> String {
        let printed = yaml(json!({ "k": text }));
        printed
            .strip_prefix("k: ")
            .unwrap_or(&printed)
            .trim_end_matches('\n')
            .to_string()
    }

    #[test]
    fn block_style_with_two_space_indent_and_dashes_at_the_key_column() {
        let value = json!({
            "apiVersion": "v1", "kind": "X",
            "metadata": {"name": "x", "labels": {"a": "b"}},
            "spec": {"list": [1, "two", {"k": "v", "j": []}], "empty": {}}
        });
        let expected = "\
apiVersion: v1
kind: X
metadata:
  labels:
    a: b
  name: x
spec:
  empty: {}
  list:
  - 1
  - two
  - j: []
    k: v
";
        assert_eq!(yaml(value), expected);
    }

    #[test]
    fn nested_sequences_and_empty_collections() {
        assert_eq!(
            yaml(json!({"a": [[1, 2], [], {}]})),
            "a:\n- - 1\n  - 2\n- []\n- {}\n"
        );
        assert_eq!(yaml(json!({})), "{}\n");
        assert_eq!(
            yaml(json!({"a": {"b": {"c": []}}})),
            "a:\n  b:\n    c: []\n"
        );
    }

    #[test]
    fn sequence_items_that_are_mappings_of_sequences() {
        let value = json!({"items": [{"name": "a", "ports": [80, 443]}]});
        assert_eq!(
            yaml(value),
            "items:\n- name: a\n  ports:\n  - 80\n  - 443\n"
        );
    }

    #[test]
    fn keys_sort_in_natural_order() {
        let value = json!({"b": 1, "a": 2, "a10": 3, "a2": 4, "A": 5, "_x": 6, "Z": 7});
        assert_eq!(
            yaml(value),
            "_x: 6\nA: 5\nZ: 7\na: 2\na2: 4\na10: 3\nb: 1\n"
        );
    }

    #[test]
    fn strings_that_read_back_as_other_types_are_double_quoted() {
        for text in [
            "true",
            "True",
            "TRUE",
            "false",
            "yes",
            "Yes",
            "no",
            "NO",
            "on",
            "On",
            "off",
            "y",
            "Y",
            "n",
            "N",
            "null",
            "Null",
            "NULL",
            "~",
            "",
            "123",
            "-7",
            "+1",
            "0x1F",
            "0X1f",
            "0o17",
            "017",
            "08",
            "0b101",
            "1_000",
            "1e3",
            "1.0",
            "1.",
            ".5",
            "-.5e3",
            ".inf",
            "-.Inf",
            ".NaN",
            "1:20",
            "-1:20:30.5",
            "2024-01-01",
            "2024-1-1",
            "2024-02-29",
            "2024-01-01T00:00:00Z",
            "2024-01-01t10:00:00.5+02:00",
            "2024-01-01 10:00:00",
            "99999999999999999999999",
        ] {
            assert_eq!(scalar(text), format!("\"{text}\""), "{text:?}");
        }
    }

    #[test]
    fn strings_that_stay_strings_are_plain() {
        for text in [
            "hello",
            "Yes!",
            "yES",
            "nope",
            "<<",
            "0x",
            "1.2.3",
            "1e",
            "e3",
            "a-b",
            "a:b",
            "a#b",
            "?x",
            ":x",
            "-x",
            "it's",
            "say \"hi\"",
            "2024-13-01",
            "2023-02-29",
            "2024-02-30",
            "2024-01-01T10:00:00",
            "2024-01-01 10:00",
            "12:60",
            "é",
            "x y z",
            "https://example.com/a?b=c#d",
            "v1.2",
            "1.2.3-rc.1",
            "._5",
            // Out of range for Go's number parsers, so strings.
            "1e400",
            "0x10000000000000000",
        ] {
            assert_eq!(scalar(text), text, "{text:?}");
        }
    }

    #[test]
    fn indicators_and_edge_spaces_are_single_quoted() {
        for (text, printed) in [
            ("-", "'-'"),
            ("- a", "'- a'"),
            ("a: b", "'a: b'"),
            ("a:", "'a:'"),
            ("a #b", "'a #b'"),
            ("? x", "'? x'"),
            (": x", "': x'"),
            ("?", "'?'"),
            ("*x", "'*x'"),
            ("&x", "'&x'"),
            ("!x", "'!x'"),
            ("|x", "'|x'"),
            (">x", "'>x'"),
            ("%x", "'%x'"),
            ("@x", "'@x'"),
            ("`x", "'`x'"),
            ("{x", "'{x'"),
            ("[x", "'[x'"),
            ("]x", "']x'"),
            ("}x", "'}x'"),
            ("#x", "'#x'"),
            (",x", "',x'"),
            ("\"x", "'\"x'"),
            ("'x", "'''x'"),
            ("---x", "'---x'"),
            ("...", "'...'"),
            (" lead", "' lead'"),
            ("trail ", "'trail '"),
            ("Unready resources: a, b", "'Unready resources: a, b'"),
        ] {
            assert_eq!(scalar(text), printed, "{text:?}");
        }
    }

    #[test]
    fn special_characters_are_escaped_in_double_quotes() {
        assert_eq!(scalar("a\tb"), r#""a\tb""#);
        assert_eq!(scalar("a\rb"), r#""a\rb""#);
        assert_eq!(scalar("nul\0"), r#""nul\0""#);
        assert_eq!(scalar("bell\u{7}"), r#""bell\a""#);
        assert_eq!(scalar("del\u{7f}"), r#""del\x7F""#);
        assert_eq!(scalar("nel\u{85}"), r#""nel\N""#);
        assert_eq!(scalar("bom\u{feff}"), r#""bom\uFEFF""#);
        // go-yaml looks for a byte order mark at the start whatever the position: a value that
        // starts with one has every character escaped.
        assert_eq!(scalar("\u{feff}é b\u{2028}"), r#""\uFEFF\xE9\x20\x62\L""#);
        // yaml.v2 does not count characters beyond the BMP as printable.
        assert_eq!(scalar("smile 😀"), r#""smile \U0001F600""#);
        // A quote or backslash inside an escaped string is escaped too.
        assert_eq!(scalar("tab\t\"q\" \\"), r#""tab\t\"q\" \\""#);
    }

    #[test]
    fn multi_line_strings_use_literal_blocks() {
        assert_eq!(yaml(json!({"k": "a\nb"})), "k: |-\n  a\n  b\n");
        assert_eq!(yaml(json!({"k": "a\n"})), "k: |\n  a\n");
        assert_eq!(yaml(json!({"k": "a\n\n"})), "k: |+\n  a\n\n");
        assert_eq!(yaml(json!({"k": "a\n\nb"})), "k: |-\n  a\n\n  b\n");
        assert_eq!(yaml(json!({"k": " a\nb"})), "k: |2-\n   a\n  b\n");
        assert_eq!(yaml(json!({"k": "\nx"})), "k: |2-\n\n  x\n");
        assert_eq!(yaml(json!({"k": "a\n b"})), "k: |-\n  a\n   b\n");
        assert_eq!(yaml(json!({"k": "a\n", "l": 1})), "k: |\n  a\nl: 1\n");
        assert_eq!(yaml(json!({"k": "a\n\n", "l": 1})), "k: |+\n  a\n\nl: 1\n");
    }

    #[test]
    fn literal_blocks_indent_below_their_key_or_dash() {
        assert_eq!(
            yaml(json!({"a": {"b": "x\ny"}})),
            "a:\n  b: |-\n    x\n    y\n"
        );
        assert_eq!(yaml(json!({"l": ["x\ny"]})), "l:\n- |-\n  x\n  y\n");
        assert_eq!(
            yaml(json!({"l": [{"m": "x\ny"}]})),
            "l:\n- m: |-\n    x\n    y\n"
        );
    }

    #[test]
    fn multi_line_strings_that_cannot_be_literal_are_double_quoted() {
        // A space before a break, a trailing space, or a special character.
        assert_eq!(scalar("a \nb"), r#""a \nb""#);
        assert_eq!(scalar("a\nb "), r#""a\nb ""#);
        assert_eq!(scalar("a\n\tb"), r#""a\n\tb""#);
        // A key with a line break cannot be a simple key.
        assert_eq!(yaml(json!({"a\nb": 1})), "? |-\n  a\n  b\n: 1\n");
    }

    #[test]
    fn keys_are_quoted_by_the_same_rules() {
        let value = json!({"true": 1, "": 2, "a b": 3, "x: y": 4});
        assert_eq!(yaml(value), "\"\": 2\na b: 3\n\"true\": 1\n'x: y': 4\n");
    }

    #[test]
    fn long_keys_use_the_explicit_key_form() {
        let key = "k".repeat(129);
        assert_eq!(yaml(json!({ key.clone(): "v" })), format!("? {key}\n: v\n"));
        let short = "k".repeat(128);
        assert_eq!(yaml(json!({ short.clone(): "v" })), format!("{short}: v\n"));
    }

    #[test]
    fn long_plain_scalars_wrap_after_column_80() {
        let words = ["aaaaaaaaa"; 10].join(" ");
        let expected = "\
description: aaaaaaaaa aaaaaaaaa aaaaaaaaa aaaaaaaaa aaaaaaaaa aaaaaaaaa aaaaaaaaa
  aaaaaaaaa aaaaaaaaa aaaaaaaaa
";
        assert_eq!(yaml(json!({ "description": words })), expected);
        // Never inside a word, never at a run of spaces, never inside a key.
        let word = "w".repeat(100);
        assert_eq!(yaml(json!({ "k": word.clone() })), format!("k: {word}\n"));
        let spaced = format!("{}  {}", "x".repeat(85), "y");
        assert_eq!(
            yaml(json!({ "k": spaced.clone() })),
            format!("k: {spaced}\n")
        );
        let key = ["key"; 30].join(" ");
        assert_eq!(yaml(json!({ key.clone(): 1 })), format!("{key}: 1\n"));
    }

    #[test]
    fn long_single_quoted_scalars_wrap_with_the_item_indent() {
        let message = format!("a: {}", ["bbbbbbbbb"; 9].join(" "));
        let expected = "\
c:
- message: 'a: bbbbbbbbb bbbbbbbbb bbbbbbbbb bbbbbbbbb bbbbbbbbb bbbbbbbbb bbbbbbbbb
    bbbbbbbbb bbbbbbbbb'
";
        assert_eq!(yaml(json!({"c": [{ "message": message }]})), expected);
    }

    #[test]
    fn long_double_quoted_scalars_wrap_and_keep_double_spaces() {
        let words = ["ccccccccc"; 9].join(" ");
        let expected = "\
k: \"x\\t ccccccccc ccccccccc ccccccccc ccccccccc ccccccccc ccccccccc ccccccccc ccccccccc
  ccccccccc\"
";
        assert_eq!(yaml(json!({ "k": format!("x\t {words}") })), expected);
        let eight = ["ccccccccc"; 8].join(" ");
        let expected = "\
k: \"x\\t ccccccccc ccccccccc ccccccccc ccccccccc ccccccccc ccccccccc ccccccccc ccccccccc
  \\ ccccccccc\"
";
        assert_eq!(
            yaml(json!({ "k": format!("x\t {eight}  ccccccccc") })),
            expected
        );
    }

    #[test]
    fn numbers_print_as_after_the_json_round_trip() {
        let value = json!({
            "i": 3, "neg": -7, "f": 1.5, "big": 1e21, "small": 1.5e-7, "whole": 3.0,
            "u": u64::MAX, "mid": 1_234_567.5, "fixed": 123_456.5, "z": -0.0, "huge": 1e20,
            "tiny": 0.0001, "tinier": 0.00001, "neg_f": -2.5, "third": 1.0 / 3.0,
        });
        let expected = "\
big: 1e+21
f: 1.5
fixed: 123456.5
huge: 1e+20
i: 3
mid: 1.2345675e+06
neg: -7
neg_f: -2.5
small: 1.5e-07
third: 0.3333333333333333
tinier: 1e-05
tiny: 0.0001
u: 1.8446744073709552e+19
whole: 3
z: 0
";
        assert_eq!(yaml(value), expected);
    }

    #[test]
    fn booleans_and_null_are_plain() {
        let value = json!({"t": true, "f": false, "z": null});
        assert_eq!(yaml(value), "f: false\nt: true\nz: null\n");
        // The key `n` is a YAML 1.1 boolean, so it is quoted.
        assert_eq!(yaml(json!({"n": 1})), "\"n\": 1\n");
        assert_eq!(yaml(json!({"l": [null, true]})), "l:\n- null\n- true\n");
    }
}
