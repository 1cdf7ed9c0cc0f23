//! Validation of an object against an OpenAPI v3 schema as the Kubernetes API server validates
//! a custom resource with a structural schema: schema defaults, types, enums, formats of lists
//! (`x-kubernetes-list-type`), unknown fields, and the `x-kubernetes-validations` CEL rules,
//! parsed by the `cel` crate and evaluated with the API server's limits by [`cel_rules`].
//!
//! Used for the schemas Crossplane sends (live schemas, [`super::live`]) and by the tests
//! against the provider's CRDs. Deliberately stricter than the API server in two places, since
//! a rendering bug should be refused rather than repaired silently: unknown fields are errors
//! (the server would prune them), and so are `null` values without a default (it would drop
//! them). Keywords it does not check (`$ref`, `allOf`, `format`, descriptions) are ignored,
//! so a schema from the API server's OpenAPI endpoint, whose `metadata` is a reference, works.
//!
//! A schema is compiled once ([`CompiledSchema::new`]) into nodes holding only the keywords
//! checked, its CEL rules compiled, and then checks any number of objects: a JSON value, or a
//! rendered resource seen as the values the function built ([`Instance`]), so that nothing is
//! decoded or copied to be checked. Defaults are seen in place rather than written into a copy
//! (`instance.rs`); the CEL rules are walked only into subtrees that have rules.

mod cel;
mod check;
mod compile;
mod defaults;
mod instance;

use crate::core::catalog::by_length_get;
use cel_rules::{re2, Budget, Failure, Rule, RuleError, Subject, Verdict};
pub(crate) use check::repeated_items;
use check::Checker;
pub use defaults::apply_defaults;
pub use instance::Instance;
use instance::{Kind, Path};
use serde_json::{Map, Value};
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::hash::{Hash, Hasher};

/// Shown instead of the CEL rules when they were skipped, as the API server says it.
pub(crate) const RULES_SKIPPED: &str =
    "<root>: some validation rules were not checked because the object \
     was invalid; correct the existing errors to complete validation";

/// A rule as messages quote it: whole up to 200 characters, else its start and its length.
pub fn shown_rule(source: &str) -> String {
    match shortened(source) {
        (whole, None) => format!("{whole:?}"),
        (start, Some(chars)) => format!("{start:?}… ({chars} characters)"),
    }
}

/// The rule as a failed rule's message shows it (unquoted, as the API server does).
pub fn failed_rule(source: &str) -> String {
    match shortened(source) {
        (whole, None) => format!("failed rule: {whole}"),
        (start, Some(chars)) => format!("failed rule: {start}… ({chars} characters)"),
    }
}

/// The first 200 characters of `source`, and its length if that is not all of it.
fn shortened(source: &str) -> (&str, Option<usize>) {
    const SHOWN: usize = 200;
    match source.char_indices().nth(SHOWN) {
        None => (source, None),
        Some((end, _)) => (&source[..end], Some(source.chars().count())),
    }
}

/// A schema compiled to check any number of objects: its nodes, and its CEL rules compiled.
pub struct CompiledSchema {
    /// Node 0 is the schema without keywords (what an absent `items` is), node 1 the root.
    nodes: Vec<Node>,
    /// Each rule (and `messageExpression`) of the schema, compiled; a rule that does not
    /// compile keeps its error, reported when the rule is evaluated.
    programs: HashMap<String, Result<Rule, RuleError>>,
    /// About what the nodes hold on the heap (see [`CompiledSchema::heap_bytes`]).
    heap_bytes: usize,
}

impl fmt::Debug for CompiledSchema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CompiledSchema")
            .field("nodes", &self.nodes.len())
            .field("rules", &self.programs.len())
            .finish()
    }
}

/// Index of a node.
type NodeId = u32;

/// Properties by name: each name and its node.
type Properties = Box<[(Box<str>, NodeId)]>;
const EMPTY: NodeId = 0;
const ROOT: NodeId = 1;

/// One schema object, with the keywords the checks read. A schema that is not a JSON object
/// reads as one without keywords, as indexing a non-object `Value` gives `null`.
#[derive(Debug, Default)]
pub(crate) struct Node {
    type_: Type,
    /// `nullable: true`.
    nullable: bool,
    /// `x-kubernetes-int-or-string: true`.
    int_or_string: bool,
    /// `x-kubernetes-preserve-unknown-fields: true`.
    preserve_unknown: bool,
    /// A rule at this node or below it: the rules' walk skips subtrees without.
    rules_below: bool,
    list_type: ListType,
    items: NodeId,
    additional: Additional,
    /// `properties`, in name order; `None` where it is not an object.
    properties: Option<Properties>,
    /// The same, by length then name: a lookup compares the names of its length only
    /// (as the catalog's `ByName`), where a search in name order compares at every step.
    by_length: Properties,
    /// `required`, a name that is not a string as `""`.
    required: Box<[Box<str>]>,
    /// The indexes in `properties` of those with a `default`.
    defaulted: Box<[u32]>,
    /// The rarer keywords.
    extra: Option<Box<Extra>>,
}

#[derive(Debug, Default)]
struct Extra {
    enum_values: Option<Vec<Value>>,
    min_length: Option<u64>,
    max_length: Option<u64>,
    min_items: Option<u64>,
    max_items: Option<u64>,
    pattern: Option<Box<str>>,
    list_map_keys: Vec<Box<str>>,
    default: Option<Value>,
    /// The items of `x-kubernetes-validations`.
    rules: Vec<Value>,
}

/// The keywords of a node that has none of the rarer ones.
static NO_EXTRA: Extra = Extra {
    enum_values: None,
    min_length: None,
    max_length: None,
    min_items: None,
    max_items: None,
    pattern: None,
    list_map_keys: Vec::new(),
    default: None,
    rules: Vec::new(),
};

#[derive(Debug, Default, PartialEq)]
enum Type {
    #[default]
    Absent,
    String,
    Boolean,
    Number,
    Integer,
    Object,
    Array,
    Unsupported(Box<str>),
}

#[derive(Debug, Default, PartialEq)]
enum ListType {
    #[default]
    Other,
    Set,
    Map,
}

/// `additionalProperties`.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
enum Additional {
    /// Absent, or anything but `true` or a schema.
    #[default]
    No,
    True,
    Schema(NodeId),
}

impl Node {
    fn extra(&self) -> &Extra {
        self.extra.as_deref().unwrap_or(&NO_EXTRA)
    }

    fn property(&self, name: &str) -> Option<NodeId> {
        by_length_get(&self.by_length, name).copied()
    }

    /// The schema of `key` inside an object: a declared property, else the
    /// `additionalProperties` schema of a map.
    fn child(&self, key: &str) -> Option<NodeId> {
        self.property(key).or(match self.additional {
            Additional::Schema(node) => Some(node),
            _ => None,
        })
    }

    /// Whether keys not declared in `properties` are allowed (the server would keep them).
    fn allows_unknown(&self) -> bool {
        self.preserve_unknown || self.additional != Additional::No
    }
}

impl CompiledSchema {
    /// About how many bytes the compiled schema holds on the heap: its nodes, names and
    /// values, and a rough share for each CEL program. What bounds the cache of live schemas.
    pub fn heap_bytes(&self) -> usize {
        self.heap_bytes
    }

    fn at(&self, id: NodeId) -> &Node {
        &self.nodes[id as usize]
    }

    /// Whether the object at the path of property names `path` has every property in `names`.
    pub fn has_properties(&self, path: &[&str], names: &[&str]) -> bool {
        let mut node = self.at(ROOT);
        for name in path {
            match node.property(name) {
                Some(child) => node = self.at(child),
                None => return false,
            }
        }
        names.iter().all(|name| node.property(name).is_some())
    }

    /// Validates an object (without `metadata` and `status`, which the caller checks or leaves
    /// out). Returns every violation (empty: valid), each starting with its path, such as
    /// `spec.forProvider.url: expected string, got number`.
    pub fn validate(&self, object: &Value) -> Vec<String> {
        self.validate_instance(Instance::Json(object))
    }

    /// [`CompiledSchema::validate`] of an object given as an [`Instance`]: the same violations
    /// as of its JSON value.
    pub fn validate_instance(&self, object: Instance) -> Vec<String> {
        let root = self.at(ROOT);
        let mut check = Checker::new(self);
        check.value(object, root, &Path::Root);
        // Like the API server: CEL rules would trip over mistyped data, so type and enum
        // errors skip them rather than drown the real error in rule failures.
        if check.blocking {
            check.errors.push(RULES_SKIPPED.to_string());
        } else {
            check.rules(object, root, &Path::Root);
        }
        check.errors
    }
}

// ---------------------------------------------------------------------------------------
// Paths and schema accessors
// ---------------------------------------------------------------------------------------

/// Path of a property: `spec.forProvider`.
pub fn field_path(parent: &str, name: &str) -> String {
    if parent.is_empty() {
        name.to_string()
    } else {
        format!("{parent}.{name}")
    }
}

/// Path of a map entry or list item: `metadata.labels[app]`, `spec.member[0]`. Brackets
/// keep keys containing dots or slashes readable.
pub fn index_path(parent: &str, index: impl fmt::Display) -> String {
    format!("{parent}[{index}]")
}

/// Path shown in a message: the root has no name of its own.
fn shown(path: &Path) -> String {
    if path.is_empty() {
        "<root>".to_owned()
    } else {
        path.to_string()
    }
}

/// The JSON type of a value, as messages name it.
pub fn json_type(value: &Value) -> &'static str {
    kind_name(Instance::Json(value).kind())
}

fn kind_name(kind: Kind) -> &'static str {
    match kind {
        Kind::Null => "null",
        Kind::Bool => "boolean",
        Kind::Number => "number",
        Kind::String => "string",
        Kind::Array => "array",
        Kind::Object => "object",
    }
}

/// Whether a boolean keyword of a schema (`nullable`, `x-kubernetes-preserve-unknown-fields`) is set.
fn flag(schema: &Value, key: &str) -> bool {
    schema[key] == true
}
