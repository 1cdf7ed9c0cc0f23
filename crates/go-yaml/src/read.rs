//! Reading YAML as `crossplane render` and kubectl read it: `sigs.k8s.io/yaml.Unmarshal` into
//! an unstructured object, which is go-yaml v2 (YAML 1.1) into generic values, then JSON.
//!
//! The steps, each as Go takes it:
//! 1. libyaml's events ([`super::events`]) become a tree of nodes per document, with anchors
//!    resolved as they are met (an alias to an anchor not yet seen is an error).
//! 2. The tree is decoded as go-yaml decodes into `interface{}`: plain scalars resolved by YAML
//!    1.1 rules ([`super::resolve`]), quoted ones strings, explicit tags honoured, timestamps kept
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
//! - collections nest at most [`MAX_DEPTH`] deep (go-yaml allows 10,000, but nothing downstream
//!   of render needs more, and a deeper document is more likely an attack);
//! - aliases: go-yaml's own rule, `document contains excessive aliasing` once more than 100 nodes
//!   were decoded through aliases and they are more than a share of all decoded nodes (99% up to
//!   400,000 decoded nodes, falling to 10% at 4,000,000); and aliases may copy at most
//!   [`MAX_ALIAS_TEXT`] bytes of scalar text, a cap go-yaml has no need for (its strings are
//!   shared, not copied). A billion-laughs document stops after about a thousand nodes.

use super::events::{Collection, Event, Parser, Scalar};
use super::go::{format_g32, unstructured_number};
use super::resolve::{resolve_plain, resolve_tagged, Resolved};
use base64::Engine as _;
use serde_json::{Map, Number, Value};
use std::collections::HashMap;

/// How deep collections may nest in one document.
pub(super) const MAX_DEPTH: usize = 128;
/// How many bytes of scalar text aliases may copy into one document: 32 MiB.
pub(super) const MAX_ALIAS_TEXT: usize = 32 << 20;

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

// ---- 1. the tree ---------------------------------------------------------------------

type NodeId = usize;

#[derive(Debug)]
struct Node {
    kind: Kind,
    /// The 1-based line the node starts on.
    line: usize,
}

#[derive(Debug)]
enum Kind {
    Scalar {
        /// Its text, in [`Tree::texts`].
        text: usize,
        tag: Option<String>,
        plain: bool,
        /// Under an anchor, so an alias may decode it again: its text is copied, not moved.
        shared: bool,
    },
    Sequence(Vec<NodeId>),
    /// Keys and values, alternating.
    Mapping(Vec<NodeId>),
    Alias {
        target: NodeId,
        name: String,
    },
}

/// One document's nodes; the root is the last one added at the top level.
#[derive(Debug, Default)]
struct Tree {
    nodes: Vec<Node>,
    /// The scalars' texts, apart so that decoding can move them into the values.
    texts: Vec<String>,
    root: Option<NodeId>,
}

/// The documents of a text as trees, at most `limit` of them (go-yaml's `Unmarshal` reads one
/// and parses nothing after it).
fn parse(text: &str, limit: Option<usize>) -> Result<Vec<Tree>, String> {
    let mut builder = Builder {
        parser: Parser::new(text.as_bytes()),
        tree: Tree::default(),
        anchors: HashMap::new(),
        depth: 0,
        anchored: 0,
    };
    builder.expect_stream_start()?;
    let mut trees = Vec::new();
    loop {
        if limit.is_some_and(|limit| trees.len() >= limit) {
            return Ok(trees);
        }
        match builder.next()? {
            (Event::DocumentStart, _) => trees.push(builder.document()?),
            (Event::StreamEnd, _) => return Ok(trees),
            (other, _) => return Err(unexpected(&other)),
        }
    }
}

struct Builder<'a> {
    parser: Parser<'a>,
    tree: Tree,
    anchors: HashMap<String, NodeId>,
    depth: usize,
    /// How many anchored collections enclose the node being built.
    anchored: usize,
}

impl Builder<'_> {
    fn next(&mut self) -> Result<(Event, usize), String> {
        self.parser.next()
    }

    fn expect_stream_start(&mut self) -> Result<(), String> {
        match self.next()? {
            (Event::StreamStart, _) => Ok(()),
            (other, _) => Err(unexpected(&other)),
        }
    }

    /// A document after its start event, up to and with its end event.
    fn document(&mut self) -> Result<Tree, String> {
        self.anchors.clear();
        let (event, line) = self.next()?;
        let root = self.node(event, line)?;
        self.tree.root = Some(root);
        match self.next()? {
            (Event::DocumentEnd, _) => Ok(std::mem::take(&mut self.tree)),
            (other, _) => Err(unexpected(&other)),
        }
    }

    fn node(&mut self, event: Event, line: usize) -> Result<NodeId, String> {
        let line = line + 1;
        match event {
            Event::Scalar(Scalar {
                anchor,
                tag,
                value,
                plain,
            }) => {
                let shared = self.anchored > 0 || anchor.is_some();
                self.tree.texts.push(value);
                let text = self.tree.texts.len() - 1;
                let kind = Kind::Scalar {
                    text,
                    tag,
                    plain,
                    shared,
                };
                let id = self.add(kind, line);
                self.anchor(anchor, id);
                Ok(id)
            }
            Event::Alias(name) => {
                let Some(&target) = self.anchors.get(&name) else {
                    return Err(format!("yaml: unknown anchor '{name}' referenced"));
                };
                Ok(self.add(Kind::Alias { target, name }, line))
            }
            Event::SequenceStart(Collection { anchor }) => {
                let id = self.add(Kind::Sequence(Vec::new()), line);
                let children = self.anchored_children(anchor, id, Event::SequenceEnd, line)?;
                self.tree.nodes[id].kind = Kind::Sequence(children);
                Ok(id)
            }
            Event::MappingStart(Collection { anchor }) => {
                let id = self.add(Kind::Mapping(Vec::new()), line);
                let children = self.anchored_children(anchor, id, Event::MappingEnd, line)?;
                self.tree.nodes[id].kind = Kind::Mapping(children);
                Ok(id)
            }
            other => Err(unexpected(&other)),
        }
    }

    /// The children of a collection, which an anchor may name.
    fn anchored_children(
        &mut self,
        anchor: Option<String>,
        id: NodeId,
        end: Event,
        line: usize,
    ) -> Result<Vec<NodeId>, String> {
        let anchored = anchor.is_some();
        self.anchor(anchor, id);
        self.anchored += usize::from(anchored);
        let children = self.children(end, line);
        self.anchored -= usize::from(anchored);
        children
    }

    /// The nodes of a collection up to its end event.
    fn children(&mut self, end: Event, line: usize) -> Result<Vec<NodeId>, String> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(too_deep(line));
        }
        let mut children = Vec::new();
        loop {
            let (event, line) = self.next()?;
            if event == end {
                break;
            }
            children.push(self.node(event, line)?);
        }
        self.depth -= 1;
        Ok(children)
    }

    fn add(&mut self, kind: Kind, line: usize) -> NodeId {
        self.tree.nodes.push(Node { kind, line });
        self.tree.nodes.len() - 1
    }

    /// A later anchor of the same name replaces the earlier one for the aliases after it.
    fn anchor(&mut self, anchor: Option<String>, id: NodeId) {
        if let Some(name) = anchor {
            self.anchors.insert(name, id);
        }
    }
}

fn unexpected(event: &Event) -> String {
    format!("yaml: unexpected parse event {event:?}")
}

fn too_deep(line: usize) -> String {
    format!("yaml: line {line}: collections nest more than {MAX_DEPTH} deep (render's limit)")
}

// ---- 2. decoding as go-yaml ----------------------------------------------------------

/// A decoded value before it becomes JSON: scalars keep the YAML type they resolved to.
#[derive(Debug)]
enum Decoded {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Float(f64),
    Str(String),
    Sequence(Vec<Value>),
    Mapping(Map<String, Value>),
}

fn decode(tree: Tree) -> Result<Value, String> {
    let Some(root) = tree.root else {
        return Ok(Value::Null);
    };
    let mut decoder = Decoder {
        nodes: &tree.nodes,
        texts: tree.texts,
        decoded: 0,
        through_aliases: 0,
        alias_depth: 0,
        expanding: vec![false; tree.nodes.len()],
        alias_text: 0,
        depth: 0,
        json_error: None,
    };
    // go-yaml counts the document node itself.
    decoder.count()?;
    let decoded = decoder.decode(root)?;
    let value = decoder.json_value(decoded, tree.nodes[root].line);
    // sigs.k8s.io/yaml converts to JSON only once go-yaml has decoded the whole document.
    match decoder.json_error {
        Some(error) => Err(error),
        None => Ok(value),
    }
}

struct Decoder<'a> {
    nodes: &'a [Node],
    texts: Vec<String>,
    /// go-yaml's `decodeCount` and `aliasCount`.
    decoded: usize,
    through_aliases: usize,
    alias_depth: usize,
    /// The aliases being expanded, to find one that contains itself.
    expanding: Vec<bool>,
    /// Bytes of scalar text copied through aliases.
    alias_text: usize,
    depth: usize,
    /// The first value or key JSON cannot hold.
    json_error: Option<String>,
}

impl Decoder<'_> {
    /// go-yaml's count of decoded nodes and its check of the share decoded through aliases.
    fn count(&mut self) -> Result<(), String> {
        self.decoded += 1;
        if self.alias_depth > 0 {
            self.through_aliases += 1;
        }
        let share = self.through_aliases as f64 / self.decoded as f64;
        if self.through_aliases > 100
            && self.decoded > 1000
            && share > allowed_alias_share(self.decoded)
        {
            return Err("yaml: document contains excessive aliasing".into());
        }
        Ok(())
    }

    fn decode(&mut self, id: NodeId) -> Result<Decoded, String> {
        self.count()?;
        let nodes = self.nodes;
        let node = &nodes[id];
        match &node.kind {
            Kind::Alias { target, name } => {
                let target = *target;
                self.through_alias(id, name, |d| d.decode(target))
            }
            Kind::Scalar {
                text,
                tag,
                plain,
                shared,
            } => self.scalar(*text, tag.as_deref(), *plain, *shared),
            Kind::Sequence(items) => {
                self.enter(node.line)?;
                let mut values = Vec::with_capacity(items.len());
                for &item in items {
                    let decoded = self.decode(item)?;
                    values.push(self.json_value(decoded, nodes[item].line));
                }
                self.depth -= 1;
                Ok(Decoded::Sequence(values))
            }
            Kind::Mapping(_) => {
                self.enter(node.line)?;
                let mut map = Map::new();
                self.mapping(id, &mut map)?;
                self.depth -= 1;
                Ok(Decoded::Mapping(map))
            }
        }
    }

    /// One level deeper; aliases can nest a document deeper than its text does.
    fn enter(&mut self, line: usize) -> Result<(), String> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(too_deep(line));
        }
        Ok(())
    }

    fn through_alias<T>(
        &mut self,
        id: NodeId,
        name: &str,
        expand: impl FnOnce(&mut Self) -> Result<T, String>,
    ) -> Result<T, String> {
        if self.expanding[id] {
            return Err(format!("yaml: anchor '{name}' value contains itself"));
        }
        self.expanding[id] = true;
        self.alias_depth += 1;
        let result = expand(self);
        self.alias_depth -= 1;
        self.expanding[id] = false;
        result
    }

    /// The entries of a mapping node, set into `map` in order (merges included).
    fn mapping(&mut self, id: NodeId, map: &mut Map<String, Value>) -> Result<(), String> {
        let nodes = self.nodes;
        let Kind::Mapping(children) = &nodes[id].kind else {
            return Ok(());
        };
        for pair in children.chunks_exact(2) {
            let (key, value) = (pair[0], pair[1]);
            if self.is_merge(key) {
                self.merge(value, map)?;
                continue;
            }
            let decoded_key = self.decode(key)?;
            let key_text = self.json_key(decoded_key, nodes[key].line)?;
            let decoded = self.decode(value)?;
            let value = self.json_value(decoded, nodes[value].line);
            if let Some(key) = key_text {
                map.insert(key, value);
            }
        }
        Ok(())
    }

    /// `<<` written plain (or tagged `!!merge`).
    fn is_merge(&self, id: NodeId) -> bool {
        match &self.nodes[id].kind {
            Kind::Scalar {
                text, tag, plain, ..
            } => self.texts[*text] == "<<" && (*plain || tag.as_deref() == Some(MERGE_TAG)),
            _ => false,
        }
    }

    /// go-yaml's `merge`: a mapping, an alias to one, or a sequence of those, the last first so
    /// that earlier ones win.
    fn merge(&mut self, id: NodeId, map: &mut Map<String, Value>) -> Result<(), String> {
        let nodes = self.nodes;
        match &nodes[id].kind {
            Kind::Mapping(_) | Kind::Alias { .. } if self.is_map(id) => self.merge_one(id, map),
            Kind::Sequence(items) => {
                for &item in items.iter().rev() {
                    if !self.is_map(item) {
                        return Err(MERGE_NEEDS_MAPS.into());
                    }
                    self.merge_one(item, map)?;
                }
                Ok(())
            }
            _ => Err(MERGE_NEEDS_MAPS.into()),
        }
    }

    /// A mapping node, or an alias to one.
    fn is_map(&self, id: NodeId) -> bool {
        match &self.nodes[id].kind {
            Kind::Mapping(_) => true,
            Kind::Alias { target, .. } => matches!(self.nodes[*target].kind, Kind::Mapping(_)),
            _ => false,
        }
    }

    fn merge_one(&mut self, id: NodeId, map: &mut Map<String, Value>) -> Result<(), String> {
        self.count()?;
        let nodes = self.nodes;
        match &nodes[id].kind {
            Kind::Alias { target, name } => {
                let target = *target;
                self.through_alias(id, name, |d| d.merge_target(target, map))
            }
            _ => self.mapping(id, map),
        }
    }

    /// The mapping an alias in a merge names, decoded into the map (counted like any node).
    fn merge_target(&mut self, id: NodeId, map: &mut Map<String, Value>) -> Result<(), String> {
        self.count()?;
        self.mapping(id, map)
    }

    /// go-yaml's `scalar` into `interface{}`.
    fn scalar(
        &mut self,
        text: usize,
        tag: Option<&str>,
        plain: bool,
        shared: bool,
    ) -> Result<Decoded, String> {
        if self.alias_depth > 0 {
            self.alias_text += self.texts[text].len();
            if self.alias_text > MAX_ALIAS_TEXT {
                return Err(format!(
                    "yaml: document contains excessive aliasing: aliases copy more than {} MiB \
                     of text (render's limit)",
                    MAX_ALIAS_TEXT >> 20
                ));
            }
        }
        let value = &self.texts[text];
        let resolved = match tag {
            None if !plain => Resolved::Str,
            Some(BINARY_TAG) => return binary(value).map(Decoded::Str),
            None => resolve_plain(value),
            Some(tag) => resolve_tagged(tag, value).map_err(|e| format!("yaml: {e}"))?,
        };
        Ok(match resolved {
            Resolved::Null => Decoded::Null,
            Resolved::Bool(b) => Decoded::Bool(b),
            Resolved::Int(i) => Decoded::Int(i),
            Resolved::Uint(u) => Decoded::Uint(u),
            Resolved::Float(f) => Decoded::Float(f),
            Resolved::Timestamp | Resolved::Str if shared => Decoded::Str(value.clone()),
            Resolved::Timestamp | Resolved::Str => {
                Decoded::Str(std::mem::take(&mut self.texts[text]))
            }
        })
    }

    // ---- 3. JSON ----

    /// A key as `sigs.k8s.io/yaml` turns it into a JSON key; `None` (with the error kept for
    /// the end of the document) when it cannot.
    fn json_key(&mut self, key: Decoded, line: usize) -> Result<Option<String>, String> {
        Ok(Some(match key {
            Decoded::Str(text) => text,
            Decoded::Int(i) => i.to_string(),
            Decoded::Float(f) => format_g32(f),
            Decoded::Bool(b) => b.to_string(),
            Decoded::Null => {
                self.keep_json_error(format!(
                    "line {line}: unsupported map key: null (a JSON key is a string: quote it \
                     if the text is meant)"
                ));
                return Ok(None);
            }
            Decoded::Uint(u) => {
                self.keep_json_error(format!(
                    "line {line}: unsupported map key: {u} (an integer beyond int64 cannot \
                     become a JSON key: quote it)"
                ));
                return Ok(None);
            }
            Decoded::Sequence(items) => {
                return Err(invalid_key(line, &Value::Array(items)));
            }
            Decoded::Mapping(map) => return Err(invalid_key(line, &Value::Object(map))),
        }))
    }

    /// A value as it reaches an unstructured object through JSON.
    fn json_value(&mut self, decoded: Decoded, line: usize) -> Value {
        match decoded {
            Decoded::Null => Value::Null,
            Decoded::Bool(b) => Value::Bool(b),
            Decoded::Int(i) => Value::Number(Number::from(i)),
            // Beyond int64 apimachinery reads the JSON integer as a float64.
            Decoded::Uint(u) => Number::from_f64(u as f64).map_or(Value::Null, Value::Number),
            Decoded::Float(f) => match unstructured_number(f) {
                Some(number) => Value::Number(number),
                None => {
                    let name = if f.is_nan() {
                        "NaN"
                    } else if f > 0.0 {
                        "+Inf"
                    } else {
                        "-Inf"
                    };
                    self.keep_json_error(format!(
                        "json: unsupported value: {name} (line {line}: JSON has no infinities \
                         or NaN: quote the value if the text is meant)"
                    ));
                    Value::Null
                }
            },
            Decoded::Str(text) => Value::String(text),
            Decoded::Sequence(items) => Value::Array(items),
            Decoded::Mapping(map) => Value::Object(map),
        }
    }

    fn keep_json_error(&mut self, message: String) {
        self.json_error.get_or_insert(message);
    }
}

const MERGE_TAG: &str = "tag:yaml.org,2002:merge";
const BINARY_TAG: &str = "tag:yaml.org,2002:binary";
const MERGE_NEEDS_MAPS: &str = "yaml: map merge requires map or sequence of maps as the value";

/// go-yaml's `allowedAliasRatio`.
fn allowed_alias_share(decoded: usize) -> f64 {
    const LOW: f64 = 400_000.0;
    const HIGH: f64 = 4_000_000.0;
    let decoded = decoded as f64;
    if decoded <= LOW {
        0.99
    } else if decoded >= HIGH {
        0.10
    } else {
        0.99 - 0.89 * ((decoded - LOW) / (HIGH - LOW))
    }
}

fn invalid_key(line: usize, key: &Value) -> String {
    format!("yaml: line {line}: invalid map key: {key} (a sequence or mapping cannot be a key)")
}

/// A `!!binary` scalar: base64 (line breaks ignored, as Go's decoder ignores them) whose bytes
/// become text as Go's JSON encoder makes them, each byte of invalid UTF-8 a U+FFFD.
fn binary(text: &str) -> Result<String, String> {
    let compact: String = text.chars().filter(|c| !matches!(c, '\r' | '\n')).collect();
    let engine = base64::engine::GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        base64::engine::GeneralPurposeConfig::new()
            .with_decode_allow_trailing_bits(true)
            .with_decode_padding_mode(base64::engine::DecodePaddingMode::RequireCanonical),
    );
    let bytes = engine
        .decode(compact)
        .map_err(|_| "yaml: !!binary value contains invalid base64 data".to_string())?;
    let mut out = String::with_capacity(bytes.len());
    let mut rest = bytes.as_slice();
    while !rest.is_empty() {
        match std::str::from_utf8(rest) {
            Ok(valid) => {
                out.push_str(valid);
                break;
            }
            Err(error) => {
                let (valid, after) = rest.split_at(error.valid_up_to());
                out.push_str(std::str::from_utf8(valid).unwrap_or_default());
                out.push('\u{FFFD}');
                rest = &after[1..];
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    //! Expectations are go-yaml's and sigs.k8s.io/yaml's; tests/go_yaml.rs compares the reader
    //! with Go itself where Go is installed.
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
