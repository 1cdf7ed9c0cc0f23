//! Validation of an object against an OpenAPI v3 schema as the Kubernetes API server validates
//! a custom resource with a structural schema: schema defaults, types, enums, formats of lists
//! (`x-kubernetes-list-type`), unknown fields, and the `x-kubernetes-validations` CEL rules,
//! parsed by the `cel` crate and evaluated with the API server's limits ([`super::rules`]).
//!
//! Used for the schemas Crossplane sends (live schemas, [`super::live`]) and by the tests
//! against the provider's CRDs. Deliberately stricter than the API server in two places, since
//! a rendering bug should be refused rather than repaired silently: unknown fields are errors
//! (the server would prune them), and so are `null` values without a default (it would drop
//! them). Keywords it does not check (`$ref`, `allOf`, `format`, descriptions) are ignored,
//! so a schema from the API server's OpenAPI endpoint, whose `metadata` is a reference, works.

use super::rules::{self, re2, Budget, Failure, Rule, RuleError, Subject, Verdict};
use serde_json::{Map, Value};
use std::collections::{HashMap, HashSet};
use std::fmt;

/// Shown instead of the CEL rules when they were skipped, as the API server says it.
pub const RULES_SKIPPED: &str = "<root>: some validation rules were not checked because the object \
     was invalid; correct the existing errors to complete validation";

/// A rule as messages quote it: whole up to 200 characters, else its start and its length.
fn shown_rule(source: &str) -> String {
    match shortened(source) {
        (whole, None) => format!("{whole:?}"),
        (start, Some(chars)) => format!("{start:?}… ({chars} characters)"),
    }
}

/// The rule as a failed rule's message shows it (unquoted, as the API server does).
fn failed_rule(source: &str) -> String {
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

/// A schema with its CEL rules compiled once, to validate any number of objects.
pub struct CompiledSchema {
    schema: Value,
    /// Each rule (and `messageExpression`) of the schema, compiled; a rule that does not
    /// compile keeps its error, reported when the rule is evaluated.
    programs: HashMap<String, Result<Rule, RuleError>>,
}

impl fmt::Debug for CompiledSchema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CompiledSchema")
            .field("rules", &self.programs.len())
            .finish()
    }
}

impl CompiledSchema {
    /// Compiles every CEL rule of `schema` (an object's `openAPIV3Schema`).
    pub fn new(schema: Value) -> CompiledSchema {
        let mut sources = Vec::new();
        collect_rules(&schema, &mut sources);
        let programs = sources
            .into_iter()
            .map(|source| {
                let program = rules::compile(&source);
                (source, program)
            })
            .collect();
        CompiledSchema { schema, programs }
    }

    /// The schema.
    pub fn schema(&self) -> &Value {
        &self.schema
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
pub(super) fn child_schema<'s>(schema: &'s Value, key: &str) -> Option<&'s Value> {
    schema["properties"]
        .get(key)
        .or_else(|| Some(&schema["additionalProperties"]).filter(|s| s.is_object()))
}

/// Whether keys not declared in `properties` are allowed (the server would keep them).
pub(super) fn allows_unknown(schema: &Value) -> bool {
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
    compiled: &'e CompiledSchema,
    errors: Vec<String>,
    /// A type or enum error was found: the API server then skips the CEL rules.
    blocking: bool,
    /// What is left of the object's cost budget (`rules::OBJECT_BUDGET`).
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

    /// `pattern`: RE2 syntax and meaning, through the function CEL's `matches()` uses
    /// ([`re2`]). Matching is charged to the object's budget at the matcher's worst case (the
    /// API server's Go matcher is not counted, but is bounded by the pattern's size as ours is
    /// not), so a hostile pattern over a long string stops instead of running for minutes.
    fn pattern(&mut self, s: &str, pattern: &str, path: &str) {
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
    fn out_of_budget(&mut self, path: &str) {
        self.stopped = true;
        self.error(
            path,
            format!(
                "validation failed due to running out of cost budget, no further validation \
                 rules will be run (the object's rules cost more than {} units, the API \
                 server's RuntimeCELCostBudget)",
                rules::OBJECT_BUDGET
            ),
        );
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
        if value.is_null() || self.stopped {
            return;
        }
        if let Some(node_rules) = schema["x-kubernetes-validations"].as_array() {
            // `self` is built once for the rules of this node.
            let subject = Subject::new(value, schema);
            for rule in node_rules {
                if self.stopped {
                    return;
                }
                self.rule(rule, &subject, path);
            }
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

    /// One rule with `self` bound to `subject`. A rule that cannot be compiled or evaluated
    /// is reported, never taken as passed; one over a cost limit ends the object's rules, as
    /// in the API server.
    fn rule(&mut self, rule: &Value, subject: &Subject, path: &str) {
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
                        rules::PER_CALL_LIMIT
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
        path: &str,
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
