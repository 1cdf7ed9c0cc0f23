//! Test support: the schema validator as it was before it was compiled into nodes and given
//! instances (`validation::openapi` before the live-schema work of issue 26), kept verbatim as the
//! reference the compiled one must agree with, message for message
//! (`tests/schemas/validator_agreement.rs`). Two changes since: `pattern` goes through cel-rules'
//! RE2 function (the `cel` crate's `matches` is no longer built), and rules are quoted as the
//! library quotes them (shortened past 200 characters); they are still evaluated by the `cel`
//! crate's interpreter, without cel-rules' cost limits (no rule here comes near them).
#![allow(dead_code)]

use cel_rules::re2;
use function_artifactory::validation::{failed_rule, shown_rule};
use serde_json::{Map, Value};
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::{Arc, OnceLock};

/// Shown instead of the CEL rules when they were skipped, as the API server says it.
const RULES_SKIPPED: &str = "<root>: some validation rules were not checked because the object \
     was invalid; correct the existing errors to complete validation";

/// A schema with its CEL rules compiled once, to validate any number of objects.
pub struct ReferenceSchema {
    schema: Value,
    /// Each rule (and `messageExpression`) of the schema, compiled; a rule that does not
    /// compile keeps its error, reported when the rule is evaluated.
    programs: HashMap<String, Result<cel::Program, RuleError>>,
}

impl fmt::Debug for ReferenceSchema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReferenceSchema")
            .field("rules", &self.programs.len())
            .finish()
    }
}

impl ReferenceSchema {
    /// Compiles every CEL rule of `schema` (an object's `openAPIV3Schema`).
    pub fn new(schema: Value) -> ReferenceSchema {
        let mut sources = Vec::new();
        collect_rules(&schema, &mut sources);
        let programs = sources
            .into_iter()
            .map(|source| {
                let program = compile(&source);
                (source, program)
            })
            .collect();
        ReferenceSchema { schema, programs }
    }

    /// The schema.
    pub fn schema(&self) -> &Value {
        &self.schema
    }

    /// Validates an object (without `metadata` and `status`, which the caller checks or leaves
    /// out). Returns every violation (empty: valid), each starting with its path, such as
    /// `spec.forProvider.url: expected string, got number`.
    pub fn validate(&self, object: &Value) -> Vec<String> {
        let mut body = object.clone();
        apply_defaults(&mut body, &self.schema);
        let mut check = Checker::new(self);
        check.value(&body, &self.schema, "");
        // Like the API server: CEL rules would trip over mistyped data, so type and enum
        // errors skip them rather than drown the real error in rule failures.
        if check.blocking {
            check.errors.push(RULES_SKIPPED.to_string());
        } else {
            check.rules(&body, &self.schema, "");
        }
        check.errors
    }
}

/// The CEL environment of the API server, as far as the `cel` crate has it: the standard
/// library plus the strings and lists extensions. Built once per process.
fn env() -> &'static Arc<cel::Env> {
    static ENV: OnceLock<Arc<cel::Env>> = OnceLock::new();
    ENV.get_or_init(|| {
        let mut env = cel::Env::stdlib();
        // Both extensions are part of the crate: adding them cannot fail.
        let _ = env.add_extension(cel::extensions::strings);
        let _ = env.add_extension(cel::extensions::lists);
        Arc::new(env)
    })
}

/// Why a CEL rule gave no verdict; the text goes into the problem at the rule's field.
#[derive(Debug, Clone, thiserror::Error)]
enum RuleError {
    /// The rule is not valid CEL.
    #[error("does not compile: {0}")]
    Compile(String),
    /// Transition rules compare with the stored object, which a rendered object has not got.
    #[error("transition rules (oldSelf) are not supported")]
    Transition,
    /// The rule failed as it ran (a missing field, a type mismatch, ...).
    #[error("evaluation failed: {0}")]
    Evaluation(String),
}

fn compile(source: &str) -> Result<cel::Program, RuleError> {
    // A refusal in the words of the rules' own parser, which refuses what the crate's parser
    // refuses (crates/cel-rules/tests/cel_parser.rs); the program is still the crate's.
    cel_rules::parse::parse(source).map_err(RuleError::Compile)?;
    let program = env()
        .compile(source)
        .map_err(|e| RuleError::Compile(e.to_string()))?;
    if program.references().has_variable("oldSelf") {
        return Err(RuleError::Transition);
    }
    Ok(program)
}

/// Every `rule` and `messageExpression` of the schema and its children.
fn collect_rules(schema: &Value, sources: &mut Vec<String>) {
    let Some(object) = schema.as_object() else {
        return;
    };
    for rule in object
        .get("x-kubernetes-validations")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        for key in ["rule", "messageExpression"] {
            if let Some(source) = rule[key].as_str() {
                sources.push(source.to_owned());
            }
        }
    }
    for child in ["items", "additionalProperties"] {
        if let Some(child) = object.get(child) {
            collect_rules(child, sources);
        }
    }
    for property in object
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flat_map(|p| p.values())
    {
        collect_rules(property, sources);
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
fn shown(path: &str) -> &str {
    if path.is_empty() {
        "<root>"
    } else {
        path
    }
}

/// The JSON type of a value, as messages name it.
pub fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn flag(schema: &Value, key: &str) -> bool {
    schema[key] == true
}

/// The schema of `key` inside an object node: a declared property, else the
/// `additionalProperties` schema of a map.
fn child_schema<'s>(schema: &'s Value, key: &str) -> Option<&'s Value> {
    schema["properties"]
        .get(key)
        .or_else(|| Some(&schema["additionalProperties"]).filter(|s| s.is_object()))
}

/// Whether keys not declared in `properties` are allowed (the server would keep them).
fn allows_unknown(schema: &Value) -> bool {
    flag(schema, "x-kubernetes-preserve-unknown-fields")
        || schema["additionalProperties"] == true
        || schema["additionalProperties"].is_object()
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
    compiled: &'e ReferenceSchema,
    errors: Vec<String>,
    /// A type or enum error was found: the API server then skips the CEL rules.
    blocking: bool,
}

impl<'e> Checker<'e> {
    fn new(compiled: &'e ReferenceSchema) -> Self {
        Checker {
            compiled,
            errors: Vec::new(),
            blocking: false,
        }
    }

    fn error(&mut self, path: &str, message: impl fmt::Display) {
        self.errors.push(format!("{}: {message}", shown(path)));
    }

    /// OpenAPI checks of `value` and everything below it.
    fn value(&mut self, value: &Value, schema: &Value, path: &str) {
        if value.is_null() {
            if !flag(schema, "nullable") {
                self.error(path, "must not be null (the API server would drop it)");
            }
            return;
        }
        if !self.check_type(value, schema, path) || !self.check_enum(value, schema, path) {
            return;
        }
        match value {
            Value::String(s) => self.string(s, schema, path),
            Value::Array(items) => self.array(items, schema, path),
            Value::Object(fields) => self.object(fields, schema, path),
            _ => {}
        }
    }

    fn check_type(&mut self, value: &Value, schema: &Value, path: &str) -> bool {
        let ok = match schema["type"].as_str() {
            // No type: only int-or-string narrows what is accepted.
            None if flag(schema, "x-kubernetes-int-or-string") => {
                value.is_string() || value.is_i64() || value.is_u64()
            }
            None => true,
            Some("string") => value.is_string(),
            Some("boolean") => value.is_boolean(),
            Some("number") => value.is_number(),
            Some("integer") => value.is_i64() || value.is_u64(),
            Some("object") => value.is_object(),
            Some("array") => value.is_array(),
            Some(other) => {
                self.error(path, format!("schema has unsupported type {other:?}"));
                return false;
            }
        };
        if !ok {
            let expected = schema["type"].as_str().unwrap_or("integer or string");
            let got = match value {
                Value::Number(_) if expected == "integer" => "non-integer number",
                _ => json_type(value),
            };
            self.error(path, format!("expected {expected}, got {got}"));
            self.blocking = true;
        }
        ok
    }

    fn check_enum(&mut self, value: &Value, schema: &Value, path: &str) -> bool {
        let Some(allowed) = schema["enum"].as_array() else {
            return true;
        };
        if allowed.contains(value) {
            return true;
        }
        let allowed: Vec<String> = allowed.iter().map(Value::to_string).collect();
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

    fn string(&mut self, s: &str, schema: &Value, path: &str) {
        // The API server counts characters, not bytes.
        let length = s.chars().count() as u64;
        if let Some(min) = schema["minLength"].as_u64().filter(|&min| length < min) {
            self.error(path, format!("must have at least {min} characters"));
        }
        if let Some(max) = schema["maxLength"].as_u64().filter(|&max| length > max) {
            self.error(path, format!("must have at most {max} characters"));
        }
        if let Some(pattern) = schema["pattern"].as_str() {
            self.pattern(s, pattern, path);
        }
    }

    /// `pattern`: RE2 syntax and meaning through the function the library's `matches()` uses
    /// (the `cel` crate's own `matches` is not built).
    fn pattern(&mut self, s: &str, pattern: &str, path: &str) {
        match re2::matches(s, pattern) {
            Ok(true) => {}
            Ok(false) => self.error(path, format!("{s:?} does not match pattern {pattern:?}")),
            Err(e) => self.error(path, format!("pattern {pattern:?}: {e}")),
        }
    }

    fn array(&mut self, items: &[Value], schema: &Value, path: &str) {
        let count = items.len() as u64;
        if let Some(min) = schema["minItems"].as_u64().filter(|&min| count < min) {
            self.error(path, format!("must have at least {min} items"));
        }
        if let Some(max) = schema["maxItems"].as_u64().filter(|&max| count > max) {
            self.error(path, format!("must have at most {max} items"));
        }
        for (i, item) in items.iter().enumerate() {
            self.value(item, &schema["items"], &index_path(path, i));
        }
        match schema["x-kubernetes-list-type"].as_str() {
            Some("set") => self.unique_set(items, path),
            Some("map") => self.unique_map(items, schema, path),
            _ => {}
        }
    }

    /// `x-kubernetes-list-type: set`: no item may repeat.
    fn unique_set(&mut self, items: &[Value], path: &str) {
        for (i, item) in items.iter().enumerate() {
            if items[..i].contains(item) {
                self.error(
                    &index_path(path, i),
                    format!("duplicate entry {item} in a set"),
                );
            }
        }
    }

    /// `x-kubernetes-list-type: map`: no two items may share their map-key values.
    fn unique_map(&mut self, items: &[Value], schema: &Value, path: &str) {
        let keys: Vec<&str> = schema["x-kubernetes-list-map-keys"]
            .as_array()
            .map(|keys| keys.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut seen = HashSet::new();
        for (i, item) in items.iter().enumerate() {
            let id: Vec<String> = keys
                .iter()
                .map(|k| format!("{k}={}", item.get(*k).unwrap_or(&Value::Null)))
                .collect();
            let id = id.join(",");
            if !seen.insert(id.clone()) {
                self.error(
                    &index_path(path, i),
                    format!("duplicate entry with key {id}"),
                );
            }
        }
    }

    fn object(&mut self, fields: &Map<String, Value>, schema: &Value, path: &str) {
        for name in schema["required"].as_array().into_iter().flatten() {
            let name = name.as_str().unwrap_or_default();
            if !fields.contains_key(name) {
                self.error(&field_path(path, name), "required field is missing");
            }
        }
        let properties = &schema["properties"];
        let map_values = &schema["additionalProperties"];
        for (key, child) in fields {
            if let Some(property) = properties.get(key) {
                self.value(child, property, &field_path(path, key));
            } else if map_values.is_object() {
                self.value(child, map_values, &index_path(path, key));
            } else if !allows_unknown(schema) {
                self.error(&field_path(path, key), "unknown field");
            }
        }
    }

    /// Every `x-kubernetes-validations` rule at or below `value`.
    fn rules(&mut self, value: &Value, schema: &Value, path: &str) {
        if value.is_null() {
            return;
        }
        for rule in schema["x-kubernetes-validations"]
            .as_array()
            .into_iter()
            .flatten()
        {
            self.rule(rule, value, schema, path);
        }
        match value {
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    self.rules(item, &schema["items"], &index_path(path, i));
                }
            }
            Value::Object(fields) => {
                for (key, child) in fields {
                    if let Some(property) = schema["properties"].get(key) {
                        self.rules(child, property, &field_path(path, key));
                    } else if schema["additionalProperties"].is_object() {
                        let map_values = &schema["additionalProperties"];
                        self.rules(child, map_values, &index_path(path, key));
                    }
                }
            }
            _ => {}
        }
    }

    /// One rule with `self` bound to `value`. A rule that cannot be compiled or evaluated
    /// is reported, never taken as passed.
    fn rule(&mut self, rule: &Value, value: &Value, schema: &Value, path: &str) {
        let Some(source) = rule["rule"].as_str() else {
            return self.error(path, format!("validation without a rule: {rule}"));
        };
        let vars = [("self", to_cel(value, schema))];
        match self.eval(source, &vars) {
            Ok(cel::Value::Bool(true)) => {}
            Ok(cel::Value::Bool(false)) => {
                let message = self.rule_message(rule, source, &vars);
                self.error(path, message);
            }
            Ok(other) => self.error(
                path,
                format!("rule {} gave {other:?}, not a bool", shown_rule(source)),
            ),
            Err(e) => self.error(path, format!("rule {}: {e}", shown_rule(source))),
        }
    }

    /// The message of a failed rule: `messageExpression` if it gives a string, else
    /// `message`, else the rule itself (as the API server does).
    fn rule_message(&self, rule: &Value, source: &str, vars: &[(&str, cel::Value)]) -> String {
        if let Some(expression) = rule["messageExpression"].as_str() {
            if let Ok(cel::Value::String(message)) = self.eval(expression, vars) {
                return message.to_string();
            }
        }
        match rule["message"].as_str() {
            Some(message) => message.to_string(),
            None => failed_rule(source),
        }
    }

    /// Runs the compiled `source` with `vars` bound.
    fn eval(&self, source: &str, vars: &[(&str, cel::Value)]) -> Result<cel::Value, RuleError> {
        let compiled;
        let program = match self.compiled.programs.get(source) {
            Some(program) => program.as_ref().map_err(Clone::clone)?,
            // Only a rule of another schema gets here; compiled on the spot all the same.
            None => {
                compiled = compile(source)?;
                &compiled
            }
        };
        let mut context = cel::Context::with_env(Arc::clone(env()));
        for (name, value) in vars {
            context.add_variable_from_value(*name, value.clone());
        }
        program
            .execute(&context)
            .map_err(|e| RuleError::Evaluation(e.to_string()))
    }
}

// ---------------------------------------------------------------------------------------
// JSON to CEL, typed by the schema as the API server does
// ---------------------------------------------------------------------------------------

/// `value` as CEL sees it: `number` fields are doubles even when written as integers,
/// properties are escaped (`namespace` is `__namespace__`, `a-b` is `a__dash__b`) and
/// unknown fields are absent because the server would have pruned them.
fn to_cel(value: &Value, schema: &Value) -> cel::Value {
    match value {
        Value::Null => cel::Value::Null,
        Value::Bool(b) => cel::Value::Bool(*b),
        Value::Number(n) => number_to_cel(n, schema),
        Value::String(s) => cel::Value::from(s.as_str()),
        Value::Array(items) => {
            let items = items.iter().map(|v| to_cel(v, &schema["items"])).collect();
            cel::Value::List(Arc::new(items))
        }
        Value::Object(fields) => object_to_cel(fields, schema),
    }
}

fn number_to_cel(n: &serde_json::Number, schema: &Value) -> cel::Value {
    let as_double = schema["type"] == "number";
    match (n.as_i64(), n.as_u64()) {
        (Some(i), _) if !as_double => cel::Value::Int(i),
        (None, Some(u)) if !as_double => cel::Value::UInt(u),
        _ => cel::Value::Float(n.as_f64().unwrap_or(f64::NAN)),
    }
}

fn object_to_cel(fields: &Map<String, Value>, schema: &Value) -> cel::Value {
    let properties = schema["properties"].as_object();
    let keep_unknown = properties.is_none() || allows_unknown(schema);
    let mut map = HashMap::new();
    for (key, child) in fields {
        let declared = properties.is_some_and(|p| p.contains_key(key));
        if !declared && !keep_unknown {
            continue;
        }
        // Only declared properties are escaped; map keys are looked up as written.
        let cel_key = if declared {
            escape_property(key)
        } else {
            key.clone()
        };
        let child_schema = child_schema(schema, key).unwrap_or(&Value::Null);
        map.insert(
            cel::objects::Key::from(cel_key),
            to_cel(child, child_schema),
        );
    }
    cel::Value::Map(cel::objects::Map { map: Arc::new(map) })
}

/// CEL reserved words that the API server escapes as `__word__` in property names.
const CEL_RESERVED: &[&str] = &[
    "true",
    "false",
    "null",
    "in",
    "as",
    "break",
    "const",
    "continue",
    "else",
    "for",
    "function",
    "if",
    "import",
    "let",
    "loop",
    "package",
    "namespace",
    "return",
    "var",
    "void",
    "while",
];

/// The API server's property name escaping, so rules written for it find their fields.
fn escape_property(name: &str) -> String {
    if CEL_RESERVED.contains(&name) {
        return format!("__{name}__");
    }
    let mut escaped = String::with_capacity(name.len());
    let mut rest = name;
    while let Some(c) = rest.chars().next() {
        let (text, len) = match c {
            '_' if rest.starts_with("__") => ("__underscores__", 2),
            '.' => ("__dot__", 1),
            '-' => ("__dash__", 1),
            '/' => ("__slash__", 1),
            _ => {
                escaped.push(c);
                rest = &rest[c.len_utf8()..];
                continue;
            }
        };
        escaped.push_str(text);
        rest = &rest[len..];
    }
    escaped
}
