//! Steps 2 and 3 of reading: a document's tree decoded as go-yaml decodes into `interface{}`
//! (YAML 1.1 resolution, tags, merge keys, aliases with go-yaml's limit and [`MAX_ALIAS_TEXT`]),
//! then made JSON as `sigs.k8s.io/yaml` and apimachinery make it.

use super::tree::{too_deep, Kind, Node, NodeId, Tree, MAX_DEPTH};
use crate::go::{format_g32, unstructured_number};
use crate::resolve::{resolve_plain, resolve_tagged, Resolved};
use base64::Engine as _;
use serde_json::{Map, Number, Value};

/// How many bytes of scalar text aliases may copy into one document: 32 MiB.
pub(super) const MAX_ALIAS_TEXT: usize = 32 << 20;

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

pub(super) fn decode(tree: Tree) -> Result<Value, String> {
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
pub(super) const MERGE_NEEDS_MAPS: &str =
    "yaml: map merge requires map or sequence of maps as the value";

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
