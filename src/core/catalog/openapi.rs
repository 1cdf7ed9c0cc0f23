//! Validation of an object against an OpenAPI v3 schema as the Kubernetes API server validates
//! a custom resource with a structural schema: schema defaults, types, enums, formats of lists
//! (`x-kubernetes-list-type`), unknown fields, and the `x-kubernetes-validations` CEL rules,
//! compiled and evaluated with the API server's limits by [`cel_rules`].
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

mod instance;

use super::by_length_get;
use cel_rules::{re2, Budget, Failure, Rule, RuleError, Subject, Verdict};
pub use instance::Instance;
use instance::{Kind, Path};
use serde_json::{Map, Value};
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::hash::{Hash, Hasher};

/// Shown instead of the CEL rules when they were skipped, as the API server says it.
pub const RULES_SKIPPED: &str =
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
    /// Compiles `schema` (an object's `openAPIV3Schema`) and every CEL rule in it.
    pub fn new(schema: Value) -> CompiledSchema {
        CompiledSchema::compile(&schema)
    }

    /// [`CompiledSchema::new`] of a borrowed schema.
    pub fn compile(schema: &Value) -> CompiledSchema {
        CompiledSchema::compile_with(|compiled| compiled.node(schema))
    }

    /// [`CompiledSchema::new`] of a borrowed schema object, such as a live schema's fields.
    pub fn compile_object(schema: &Map<String, Value>) -> CompiledSchema {
        CompiledSchema::compile_with(|compiled| compiled.object_node(schema))
    }

    fn compile_with(root: impl FnOnce(&mut CompiledSchema) -> NodeId) -> CompiledSchema {
        let mut compiled = CompiledSchema {
            nodes: vec![Node::default()],
            programs: HashMap::new(),
            heap_bytes: 0,
        };
        root(&mut compiled);
        let mut sources = Vec::new();
        for node in &compiled.nodes {
            collect_rules(&node.extra().rules, &mut sources);
        }
        compiled.programs = sources
            .into_iter()
            .map(|source| {
                let program = cel_rules::compile(&source);
                (source, program)
            })
            .collect();
        compiled.heap_bytes = compiled.measure();
        compiled
    }

    /// Compiles one schema object and those below it; its id.
    fn node(&mut self, schema: &Value) -> NodeId {
        match schema.as_object() {
            Some(object) => self.object_node(object),
            None => {
                self.nodes.push(Node::default());
                (self.nodes.len() - 1) as NodeId
            }
        }
    }

    fn object_node(&mut self, object: &Map<String, Value>) -> NodeId {
        let id = self.nodes.len() as NodeId;
        self.nodes.push(Node::default());
        let keyword = |name: &str| object.get(name).unwrap_or(&Value::Null);
        let flag = |name: &str| keyword(name) == &Value::Bool(true);
        let mut node = Node {
            type_: match object.get("type").and_then(Value::as_str) {
                None => Type::Absent,
                Some("string") => Type::String,
                Some("boolean") => Type::Boolean,
                Some("number") => Type::Number,
                Some("integer") => Type::Integer,
                Some("object") => Type::Object,
                Some("array") => Type::Array,
                Some(other) => Type::Unsupported(other.into()),
            },
            nullable: flag("nullable"),
            int_or_string: flag("x-kubernetes-int-or-string"),
            preserve_unknown: flag("x-kubernetes-preserve-unknown-fields"),
            list_type: match keyword("x-kubernetes-list-type").as_str() {
                Some("set") => ListType::Set,
                Some("map") => ListType::Map,
                _ => ListType::Other,
            },
            required: keyword("required")
                .as_array()
                .into_iter()
                .flatten()
                .map(|name| name.as_str().unwrap_or_default().into())
                .collect(),
            ..Node::default()
        };
        let extra = Extra {
            enum_values: keyword("enum").as_array().cloned(),
            min_length: keyword("minLength").as_u64(),
            max_length: keyword("maxLength").as_u64(),
            min_items: keyword("minItems").as_u64(),
            max_items: keyword("maxItems").as_u64(),
            pattern: keyword("pattern").as_str().map(Into::into),
            list_map_keys: keyword("x-kubernetes-list-map-keys")
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(Into::into)
                .collect(),
            default: object.get("default").cloned(),
            rules: keyword("x-kubernetes-validations")
                .as_array()
                .cloned()
                .unwrap_or_default(),
        };
        node.rules_below = !extra.rules.is_empty();
        if let Some(items) = object.get("items") {
            node.items = self.node(items);
            node.rules_below |= self.nodes[node.items as usize].rules_below;
        }
        node.additional = match object.get("additionalProperties") {
            Some(Value::Bool(true)) => Additional::True,
            Some(map_values @ Value::Object(_)) => {
                let values = self.node(map_values);
                node.rules_below |= self.nodes[values as usize].rules_below;
                Additional::Schema(values)
            }
            _ => Additional::No,
        };
        if let Some(properties) = object.get("properties").and_then(Value::as_object) {
            let mut compiled: Vec<(Box<str>, NodeId)> = Vec::with_capacity(properties.len());
            let mut defaulted = Vec::new();
            for (i, (name, property)) in properties.iter().enumerate() {
                let child = self.node(property);
                node.rules_below |= self.nodes[child as usize].rules_below;
                if property.get("default").is_some() {
                    defaulted.push(i as u32);
                }
                compiled.push((name.as_str().into(), child));
            }
            let mut by_length = compiled.clone();
            by_length.sort_unstable_by(|(a, _), (b, _)| (a.len(), a).cmp(&(b.len(), b)));
            node.properties = Some(compiled.into_boxed_slice());
            node.by_length = by_length.into_boxed_slice();
            node.defaulted = defaulted.into_boxed_slice();
        }
        let plain = extra.enum_values.is_none()
            && extra.min_length.is_none()
            && extra.max_length.is_none()
            && extra.min_items.is_none()
            && extra.max_items.is_none()
            && extra.pattern.is_none()
            && extra.list_map_keys.is_empty()
            && extra.default.is_none()
            && extra.rules.is_empty();
        node.extra = (!plain).then(|| Box::new(extra));
        self.nodes[id as usize] = node;
        id
    }

    /// About how many bytes the compiled schema holds on the heap: its nodes, names and
    /// values, and a rough share for each CEL program. What bounds the cache of live schemas.
    pub fn heap_bytes(&self) -> usize {
        self.heap_bytes
    }

    fn measure(&self) -> usize {
        /// Not measurable from outside the `cel` crate: a compiled rule's expression tree, of
        /// a few hundred bytes for the provider's rules.
        const PROGRAM: usize = 1024;
        let value = |value: &Value| serde_json::to_string(value).map_or(0, |text| 2 * text.len());
        let nodes: usize = self
            .nodes
            .iter()
            .map(|node| {
                let names: usize = node
                    .properties
                    .iter()
                    .flatten()
                    .map(|(n, _)| 2 * (n.len() + 24))
                    .sum();
                let required: usize = node.required.iter().map(|n| n.len() + 16).sum();
                let extra = node.extra.as_deref().map_or(0, |extra| {
                    std::mem::size_of::<Extra>()
                        + extra.enum_values.iter().flatten().map(value).sum::<usize>()
                        + extra.default.as_ref().map_or(0, value)
                        + extra.rules.iter().map(value).sum::<usize>()
                        + extra.pattern.as_ref().map_or(0, |p| p.len())
                });
                std::mem::size_of::<Node>() + names + required + 4 * node.defaulted.len() + extra
            })
            .sum();
        let programs: usize = self
            .programs
            .keys()
            .map(|source| PROGRAM + 2 * source.len())
            .sum();
        nodes + programs
    }

    fn at(&self, id: NodeId) -> &Node {
        &self.nodes[id as usize]
    }

    /// The properties of `node` with a default, in name order: name, default, and whether the
    /// property is nullable.
    fn defaults<'s>(
        &'s self,
        node: &'s Node,
    ) -> impl Iterator<Item = (&'s str, &'s Value, bool)> + 's {
        let properties = node.properties.as_deref().unwrap_or_default();
        node.defaulted.iter().filter_map(move |&i| {
            let (name, child) = &properties[i as usize];
            let child = self.at(*child);
            Some((
                name.as_ref(),
                child.extra().default.as_ref()?,
                child.nullable,
            ))
        })
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

    /// The compiled `source` (every rule of the schema was compiled with it).
    fn program(&self, source: &str) -> Result<&Rule, RuleError> {
        match self.programs.get(source) {
            Some(program) => program.as_ref().map_err(Clone::clone),
            None => Err(RuleError::Compile("not a rule of this schema".to_owned())),
        }
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

    /// Defaults `value` as the API server would (see [`apply_defaults`]), by the compiled nodes.
    fn apply_defaults(&self, value: &mut Value, node: &Node) {
        match value {
            Value::Object(fields) => {
                let properties = node.properties.as_deref().unwrap_or_default();
                for &i in node.defaulted.iter() {
                    let (name, child) = &properties[i as usize];
                    let child = self.at(*child);
                    let Some(default) = &child.extra().default else {
                        continue;
                    };
                    let unset = fields
                        .get(name.as_ref())
                        .is_none_or(|v| v.is_null() && !child.nullable);
                    if unset {
                        fields.insert(name.to_string(), default.clone());
                    }
                }
                for (key, child) in fields.iter_mut() {
                    if let Some(child_node) = node.child(key) {
                        self.apply_defaults(child, self.at(child_node));
                    }
                }
            }
            Value::Array(items) => {
                for item in items {
                    self.apply_defaults(item, self.at(node.items));
                }
            }
            _ => {}
        }
    }
}

/// Every `rule` and `messageExpression` of a node's `x-kubernetes-validations`.
fn collect_rules(rules: &[Value], sources: &mut Vec<String>) {
    for rule in rules {
        for key in ["rule", "messageExpression"] {
            if let Some(source) = rule[key].as_str() {
                sources.push(source.to_owned());
            }
        }
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

fn flag(schema: &Value, key: &str) -> bool {
    schema[key] == true
}

/// The schema of `key` inside an object node: a declared property, else the
/// `additionalProperties` schema of a map.
pub(super) fn child_schema<'s>(schema: &'s Value, key: &str) -> Option<&'s Value> {
    schema["properties"]
        .get(key)
        .or_else(|| Some(&schema["additionalProperties"]).filter(|s| s.is_object()))
}

// ---------------------------------------------------------------------------------------
// Defaulting
// ---------------------------------------------------------------------------------------

/// Applies `default:` values like the API server: in every object that is present, a
/// property that is absent (or null while not nullable) gets its default, then defaulting
/// goes on inside every child, defaulted ones included.
pub fn apply_defaults(value: &mut Value, schema: &Value) {
    match value {
        Value::Object(fields) => {
            default_properties(fields, schema);
            for (key, child) in fields.iter_mut() {
                if let Some(child_schema) = child_schema(schema, key) {
                    apply_defaults(child, child_schema);
                }
            }
        }
        Value::Array(items) => {
            for item in items {
                apply_defaults(item, &schema["items"]);
            }
        }
        _ => {}
    }
}

fn default_properties(fields: &mut Map<String, Value>, schema: &Value) {
    let Some(properties) = schema["properties"].as_object() else {
        return;
    };
    for (name, property) in properties {
        let Some(default) = property.get("default") else {
            continue;
        };
        let unset = fields
            .get(name)
            .is_none_or(|v| v.is_null() && !flag(property, "nullable"));
        if unset {
            fields.insert(name.clone(), default.clone());
        }
    }
}

// ---------------------------------------------------------------------------------------
// Structural checks and CEL rules
// ---------------------------------------------------------------------------------------

/// Collects violations while walking an object alongside its schema.
struct Checker<'e> {
    compiled: &'e CompiledSchema,
    errors: Vec<String>,
    /// A type or enum error was found: the API server then skips the CEL rules.
    blocking: bool,
    /// What is left of the object's cost budget (`cel_rules::OBJECT_BUDGET`).
    budget: Budget,
    /// A rule ran out of budget, or over its own limit: the API server evaluates no further
    /// rule.
    stopped: bool,
}

impl<'e> Checker<'e> {
    fn new(compiled: &'e CompiledSchema) -> Self {
        Checker {
            compiled,
            errors: Vec::new(),
            blocking: false,
            budget: Budget::object(),
            stopped: false,
        }
    }

    fn error(&mut self, path: &Path, message: impl fmt::Display) {
        self.errors.push(format!("{}: {message}", shown(path)));
    }

    /// OpenAPI checks of `value` and everything below it.
    fn value(&mut self, value: Instance<'e>, node: &'e Node, path: &Path) {
        if value.kind() == Kind::Null {
            if !node.nullable {
                self.error(path, "must not be null (the API server would drop it)");
            }
            return;
        }
        if !self.check_type(value, node, path) || !self.check_enum(value, node, path) {
            return;
        }
        match value.kind() {
            Kind::String => self.string(value.as_str().unwrap_or_default(), node, path),
            Kind::Array => self.array(value, node, path),
            Kind::Object => self.object(value, node, path),
            _ => {}
        }
    }

    fn check_type(&mut self, value: Instance, node: &Node, path: &Path) -> bool {
        let kind = value.kind();
        let (ok, expected) = match &node.type_ {
            // No type: only int-or-string narrows what is accepted.
            Type::Absent if node.int_or_string => (
                kind == Kind::String || value.is_integer(),
                "integer or string",
            ),
            Type::Absent => (true, ""),
            Type::String => (kind == Kind::String, "string"),
            Type::Boolean => (kind == Kind::Bool, "boolean"),
            Type::Number => (kind == Kind::Number, "number"),
            Type::Integer => (value.is_integer(), "integer"),
            Type::Object => (kind == Kind::Object, "object"),
            Type::Array => (kind == Kind::Array, "array"),
            Type::Unsupported(other) => {
                self.error(path, format!("schema has unsupported type {other:?}"));
                return false;
            }
        };
        if !ok {
            let got = match kind {
                Kind::Number if expected == "integer" => "non-integer number",
                kind => kind_name(kind),
            };
            self.error(path, format!("expected {expected}, got {got}"));
            self.blocking = true;
        }
        ok
    }

    fn check_enum(&mut self, value: Instance, node: &Node, path: &Path) -> bool {
        let Some(allowed) = &node.extra().enum_values else {
            return true;
        };
        if allowed
            .iter()
            .any(|option| value.equals(option, node, self.compiled))
        {
            return true;
        }
        let allowed: Vec<String> = allowed.iter().map(Value::to_string).collect();
        let value = value.to_json(node, self.compiled);
        self.error(
            path,
            format!(
                "unsupported value {value}, expected one of: {}",
                allowed.join(", ")
            ),
        );
        self.blocking = true;
        false
    }

    fn string(&mut self, s: &str, node: &Node, path: &Path) {
        let extra = node.extra();
        if extra.min_length.is_some() || extra.max_length.is_some() {
            // The API server counts characters, not bytes: a count that reads the whole
            // string, so only where a bound asks for it.
            let length = s.chars().count() as u64;
            if let Some(min) = extra.min_length.filter(|&min| length < min) {
                self.error(path, format!("must have at least {min} characters"));
            }
            if let Some(max) = extra.max_length.filter(|&max| length > max) {
                self.error(path, format!("must have at most {max} characters"));
            }
        }
        if let Some(pattern) = &extra.pattern {
            self.pattern(s, pattern, path);
        }
    }

    /// `pattern`: RE2 syntax and meaning, through the function CEL's `matches()` uses
    /// ([`re2`]). Matching is charged to the object's budget at the matcher's worst case (the
    /// API server's Go matcher is not counted, but is bounded by the pattern's size as ours is
    /// not), so a hostile pattern over a long string stops instead of running for minutes.
    fn pattern(&mut self, s: &str, pattern: &str, path: &Path) {
        if self.stopped {
            return;
        }
        let compiled = match re2::compiled(pattern) {
            Ok(compiled) => compiled,
            Err(e) => return self.error(path, format!("pattern {pattern:?}: {e}")),
        };
        let units = compiled.cost(s.chars().count() as u64);
        if units > self.budget.left() {
            self.out_of_budget(path);
            return;
        }
        self.budget = Budget::of(self.budget.left() - units);
        if !compiled.is_match(s) {
            self.error(path, format!("{s:?} does not match pattern {pattern:?}"));
        }
    }

    /// The API server's words when the object's budget is spent.
    fn out_of_budget(&mut self, path: &Path) {
        self.stopped = true;
        self.error(
            path,
            format!(
                "validation failed due to running out of cost budget, no further validation \
                 rules will be run (the object's rules cost more than {} units, the API \
                 server's RuntimeCELCostBudget)",
                cel_rules::OBJECT_BUDGET
            ),
        );
    }

    fn array(&mut self, value: Instance<'e>, node: &'e Node, path: &Path) {
        let extra = node.extra();
        let items = value.items();
        let count = items.len() as u64;
        if let Some(min) = extra.min_items.filter(|&min| count < min) {
            self.error(path, format!("must have at least {min} items"));
        }
        if let Some(max) = extra.max_items.filter(|&max| count > max) {
            self.error(path, format!("must have at most {max} items"));
        }
        let item_node = self.compiled.at(node.items);
        for (i, item) in items.enumerate() {
            self.value(item, item_node, &Path::Index(path, i));
        }
        if node.list_type != ListType::Other {
            // Compared as whole values, defaults in place: rare lists, made JSON to compare.
            let items: Vec<Value> = value
                .items()
                .map(|item| item.to_json(item_node, self.compiled))
                .collect();
            let path = path.to_string();
            match node.list_type {
                ListType::Set => self.unique_set(&items, &path),
                _ => self.unique_map(&items, &extra.list_map_keys, &path),
            }
        }
    }

    /// `x-kubernetes-list-type: set`: no item may repeat.
    fn unique_set(&mut self, items: &[Value], path: &str) {
        for i in repeated_items(items) {
            self.error_at(
                &index_path(path, i),
                format!("duplicate entry {} in a set", items[i]),
            );
        }
    }

    /// `x-kubernetes-list-type: map`: no two items may share their map-key values.
    fn unique_map(&mut self, items: &[Value], keys: &[Box<str>], path: &str) {
        let mut seen = HashSet::new();
        for (i, item) in items.iter().enumerate() {
            let id: Vec<String> = keys
                .iter()
                .map(|k| format!("{k}={}", item.get(k.as_ref()).unwrap_or(&Value::Null)))
                .collect();
            let id = id.join(",");
            if !seen.insert(id.clone()) {
                self.error_at(
                    &index_path(path, i),
                    format!("duplicate entry with key {id}"),
                );
            }
        }
    }

    /// [`Checker::error`] at a path already written out.
    fn error_at(&mut self, path: &str, message: impl fmt::Display) {
        self.errors.push(format!("{path}: {message}"));
    }

    fn object(&mut self, value: Instance<'e>, node: &'e Node, path: &Path) {
        let compiled = self.compiled;
        for name in node.required.iter() {
            if !value.has_member(name, node, compiled) {
                self.error(&Path::Field(path, name), "required field is missing");
            }
        }
        for (key, child) in value.members(node, compiled) {
            if let Some(property) = node.property(key) {
                self.value(child, compiled.at(property), &Path::Field(path, key));
            } else if let Additional::Schema(map_values) = node.additional {
                self.value(child, compiled.at(map_values), &Path::Key(path, key));
            } else if !node.allows_unknown() {
                self.error(&Path::Field(path, key), "unknown field");
            }
        }
    }

    /// Every `x-kubernetes-validations` rule at or below `value`; subtrees whose schema has
    /// none are not walked.
    fn rules(&mut self, value: Instance<'e>, node: &'e Node, path: &Path) {
        if !node.rules_below || value.kind() == Kind::Null || self.stopped {
            return;
        }
        let node_rules = &node.extra().rules;
        if !node_rules.is_empty() {
            // `self` is built once for the rules of this node.
            let subject = to_cel(value, node, self.compiled);
            for rule in node_rules.iter() {
                if self.stopped {
                    return;
                }
                self.rule(rule, &subject, path);
            }
        }
        let compiled = self.compiled;
        match value.kind() {
            Kind::Array => {
                let item_node = compiled.at(node.items);
                for (i, item) in value.items().enumerate() {
                    self.rules(item, item_node, &Path::Index(path, i));
                }
            }
            Kind::Object => {
                for (key, child) in value.members(node, compiled) {
                    if let Some(property) = node.property(key) {
                        self.rules(child, compiled.at(property), &Path::Field(path, key));
                    } else if let Additional::Schema(map_values) = node.additional {
                        self.rules(child, compiled.at(map_values), &Path::Key(path, key));
                    }
                }
            }
            _ => {}
        }
    }

    /// One rule with `self` bound to `subject`. A rule that cannot be compiled or evaluated
    /// is reported, never taken as passed; one over a cost limit ends the object's rules, as
    /// in the API server.
    fn rule(&mut self, rule: &Value, subject: &Subject, path: &Path) {
        let Some(source) = rule["rule"].as_str() else {
            return self.error(path, format!("validation without a rule: {rule}"));
        };
        match self.eval(source, subject) {
            Ok(Verdict::Bool(true)) => {}
            Ok(Verdict::Bool(false)) => {
                if let Some(message) = self.rule_message(rule, source, subject, path) {
                    self.error(path, message);
                }
            }
            Ok(Verdict::String(other)) => self.error(
                path,
                format!(
                    "rule {} gave String({other:?}), not a bool",
                    shown_rule(source)
                ),
            ),
            Ok(Verdict::Other(other)) => self.error(
                path,
                format!("rule {} gave {other}, not a bool", shown_rule(source)),
            ),
            Err(Failure::Error(e)) => self.error(path, format!("rule {}: {e}", shown_rule(source))),
            Err(Failure::CallLimit) => {
                self.stopped = true;
                self.error(
                    path,
                    format!(
                        "rule {}: operation cancelled: actual cost limit exceeded: no further \
                         validation rules will be run due to call cost exceeds limit for rule \
                         (it costs more than {} units, the API server's PerCallLimit)",
                        shown_rule(source),
                        cel_rules::PER_CALL_LIMIT
                    ),
                );
            }
            Err(Failure::Budget) => self.out_of_budget(path),
        }
    }

    /// The message of a failed rule: `messageExpression` if it gives a string, else
    /// `message`, else the rule itself (as the API server does). `None` when evaluating the
    /// message expression went over a cost limit (reported instead).
    fn rule_message(
        &mut self,
        rule: &Value,
        source: &str,
        subject: &Subject,
        path: &Path,
    ) -> Option<String> {
        if let Some(expression) = rule["messageExpression"].as_str() {
            match self.message(expression, subject) {
                Ok(Some(message)) => return Some(message),
                Ok(None) => {}
                Err(Failure::CallLimit) => {
                    self.stopped = true;
                    self.error(
                        path,
                        format!(
                            "no further validation rules will be run due to call cost exceeds \
                             limit for messageExpression: {}",
                            shown_rule(expression)
                        ),
                    );
                    return None;
                }
                Err(_) => {
                    self.stopped = true;
                    self.error(
                        path,
                        "messageExpression evaluation failed due to running out of cost \
                         budget, no further validation rules will be run",
                    );
                    return None;
                }
            }
        }
        Some(match rule["message"].as_str() {
            Some(message) => message.to_string(),
            None => failed_rule(source),
        })
    }

    /// Runs the compiled `source` with `self` bound to `subject`.
    fn eval(&mut self, source: &str, subject: &Subject) -> Result<Verdict, Failure> {
        let program = self
            .compiled
            .program(source)
            .map_err(|e| Failure::Error(e.to_string()))?;
        program.evaluate(subject, &mut self.budget)
    }

    fn message(&mut self, source: &str, subject: &Subject) -> Result<Option<String>, Failure> {
        match self.compiled.program(source) {
            Ok(program) => program.message(subject, &mut self.budget),
            Err(_) => Ok(None),
        }
    }
}

/// The indexes of the items equal to an earlier item, in order. One pass with a hash set: a
/// comparison of each item with every earlier one took 8 to 12 s for a set of 60,000.
pub(crate) fn repeated_items(items: &[Value]) -> Vec<usize> {
    let mut seen: HashSet<Hashed<'_>, foldhash::fast::RandomState> =
        HashSet::with_capacity_and_hasher(items.len(), Default::default());
    items
        .iter()
        .enumerate()
        .filter(|(_, item)| !seen.insert(Hashed(item)))
        .map(|(i, _)| i)
        .collect()
}

/// A JSON value hashed by its content; equal as the values are.
struct Hashed<'v>(&'v Value);

impl PartialEq for Hashed<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}

impl Eq for Hashed<'_> {}

impl Hash for Hashed<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        std::mem::discriminant(self.0).hash(state);
        match self.0 {
            Value::Null => {}
            Value::Bool(b) => b.hash(state),
            Value::Number(n) => n.hash(state),
            Value::String(s) => s.hash(state),
            Value::Array(items) => {
                items.len().hash(state);
                for item in items {
                    Hashed(item).hash(state);
                }
            }
            // Equal maps may list their members in another order (with serde_json's
            // `preserve_order`): only their size is hashed, equality decides.
            Value::Object(fields) => fields.len().hash(state),
        }
    }
}

// ---------------------------------------------------------------------------------------
// JSON to CEL, typed by the schema as the API server does
// ---------------------------------------------------------------------------------------

/// `value` as CEL sees it, defaults in place: `number` fields are doubles even when written as
/// integers, properties are escaped (`namespace` is `__namespace__`, `a-b` is `a__dash__b`)
/// and unknown fields are absent because the server would have pruned them.
fn to_cel(value: Instance, node: &Node, schema: &CompiledSchema) -> Subject {
    match value.kind() {
        Kind::Null => Subject::null(),
        Kind::Bool => Subject::boolean(value.as_bool() == Some(true)),
        Kind::Number => match value.as_number() {
            Some(n) => Subject::number(&n, node.type_ == Type::Number),
            None => Subject::null(),
        },
        Kind::String => Subject::string(value.as_str().unwrap_or_default()),
        Kind::Array => {
            let item_node = schema.at(node.items);
            Subject::list(value.items().map(|item| to_cel(item, item_node, schema)))
        }
        Kind::Object => object_to_cel(value, node, schema),
    }
}

fn object_to_cel(value: Instance, node: &Node, schema: &CompiledSchema) -> Subject {
    let keep_unknown = node.properties.is_none() || node.allows_unknown();
    let members = value.members(node, schema).filter_map(|(key, child)| {
        let declared = node.property(key).is_some();
        if !declared && !keep_unknown {
            return None;
        }
        let child_node = schema.at(node.child(key).unwrap_or(EMPTY));
        // Only declared properties are escaped; map keys are looked up as written.
        Some((key, declared, to_cel(child, child_node, schema)))
    });
    Subject::object(members)
}
