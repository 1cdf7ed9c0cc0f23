//! Test support: validates Kubernetes objects against CustomResourceDefinitions the way the
//! API server does for a structural schema: metadata checks, schema defaults, OpenAPI types,
//! list types and `x-kubernetes-validations` CEL rules (evaluated by the `cel` crate).
//!
//! Meant to be dropped into a crate as `tests/support/crd.rs`; depends only on `serde_json`,
//! `serde_yaml_ng` and `cel`.
//!
//! Deliberately stricter than the API server in two places, because a rendering bug should
//! fail a test rather than be repaired silently by the server: unknown fields are errors
//! (the server would prune them) and `null` values without a default are errors (the server
//! would drop them).

// Each integration test binary compiles its own copy and uses only part of it.
#![allow(dead_code)]

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Map, Value};

/// The served versions of a set of CRDs, indexed by (apiVersion "group/version", kind).
pub struct Crds {
    kinds: BTreeMap<(String, String), Crd>,
    env: Arc<cel::Env>,
}

/// One served version of one CRD.
struct Crd {
    scope: String,
    schema: Value,
    file: PathBuf,
}

impl fmt::Debug for Crds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Crds")
            .field("kinds", &self.kinds.len())
            .finish()
    }
}

/// Shown instead of the CEL rules when they were skipped, as the API server says it.
const RULES_SKIPPED: &str = "<root>: some validation rules were not checked because the object \
     was invalid; correct the existing errors to complete validation";

impl Crds {
    /// Loads every *.yaml CRD in `dir` (non-recursive). Error string names the file.
    ///
    /// A directory without any CRD is an error too, so that a wrong path cannot make a
    /// test pass by validating nothing.
    pub fn load_dir(dir: &Path) -> Result<Crds, String> {
        let mut crds = Crds {
            kinds: BTreeMap::new(),
            env: Arc::new(cel_env()?),
        };
        for file in yaml_files(dir)? {
            crds.add_file(&file)
                .map_err(|e| format!("{}: {e}", file.display()))?;
        }
        if crds.kinds.is_empty() {
            return Err(format!("{}: no *.yaml CRD found", dir.display()));
        }
        Ok(crds)
    }

    /// The CRDs among named, parsed YAML documents.
    pub fn from_documents(
        documents: impl IntoIterator<Item = (String, Value)>,
    ) -> Result<Crds, String> {
        let mut crds = Crds {
            kinds: BTreeMap::new(),
            env: Arc::new(cel_env()?),
        };
        for (name, doc) in documents {
            crds.add_document(&doc, Path::new(&name))
                .map_err(|e| format!("{name}: {e}"))?;
        }
        if crds.kinds.is_empty() {
            return Err("no CRD given".to_string());
        }
        Ok(crds)
    }

    /// Every (apiVersion, kind, scope) known, sorted.
    pub fn kinds(&self) -> Vec<(String, String, String)> {
        self.kinds
            .iter()
            .map(|((api, kind), crd)| (api.clone(), kind.clone(), crd.scope.clone()))
            .collect()
    }

    /// Validates one object. Returns every violation found (empty = valid), each message
    /// starting with the JSON path, e.g. "spec.forProvider.url: expected string, got number".
    pub fn validate(&self, object: &Value) -> Vec<String> {
        let crd = match self.lookup(object) {
            Ok(crd) => crd,
            Err(e) => return vec![e],
        };
        let mut body = object.clone();
        let fields = body.as_object_mut().expect("lookup accepts only objects");
        // metadata is checked as ObjectMeta (the schema only says `type: object`); status is
        // written by the provider, never rendered, so it is out of scope.
        let metadata = fields.remove("metadata");
        fields.remove("status");

        let mut check = Checker::new(&self.env);
        check_metadata(metadata.as_ref(), &crd.scope, &mut check.errors);
        apply_defaults(&mut body, &crd.schema);
        check.value(&body, &crd.schema, "");
        // Like the API server: CEL rules would trip over mistyped data, so type and enum
        // errors skip them rather than drown the real error in rule failures.
        if check.blocking {
            check.errors.push(RULES_SKIPPED.to_string());
        } else {
            check.rules(&body, &crd.schema, "");
        }
        check.errors
    }

    /// The CRD serving the object's apiVersion and kind.
    fn lookup(&self, object: &Value) -> Result<&Crd, String> {
        if !object.is_object() {
            return Err(format!(
                "<root>: expected object, got {}",
                json_type(object)
            ));
        }
        let api = object["apiVersion"].as_str().unwrap_or_default();
        let kind = object["kind"].as_str().unwrap_or_default();
        self.kinds
            .get(&(api.to_string(), kind.to_string()))
            .ok_or_else(|| {
                format!(
                    "apiVersion/kind: {api:?} {kind:?} is not served by any loaded CRD{}",
                    self.kind_hint(api, kind)
                )
            })
    }

    /// Suggestions for an unknown kind: kind spelling is irregular across CRD folders.
    fn kind_hint(&self, api: &str, kind: &str) -> String {
        let same_name: Vec<String> = self
            .kinds
            .keys()
            .filter(|(_, k)| k.eq_ignore_ascii_case(kind))
            .map(|(a, k)| format!("{a} {k}"))
            .collect();
        if !same_name.is_empty() {
            return format!("; did you mean: {}", same_name.join(", "));
        }
        let same_api: Vec<&str> = self
            .kinds
            .keys()
            .filter(|(a, _)| a == api)
            .map(|(_, k)| k.as_str())
            .collect();
        if same_api.is_empty() {
            String::new()
        } else {
            format!("; kinds of {api}: {}", same_api.join(", "))
        }
    }

    /// Adds every served version of the CRD in `file`.
    fn add_file(&mut self, file: &Path) -> Result<(), String> {
        let text = std::fs::read_to_string(file).map_err(|e| e.to_string())?;
        let doc: Value =
            serde_yaml_ng::from_str(&text).map_err(|e| format!("invalid YAML: {e}"))?;
        self.add_document(&doc, file)
    }

    /// Adds every served version of one parsed CRD; `file` names it in messages.
    fn add_document(&mut self, doc: &Value, file: &Path) -> Result<(), String> {
        if doc["kind"] != "CustomResourceDefinition" {
            return Err(format!(
                "not a CustomResourceDefinition: kind {}",
                doc["kind"]
            ));
        }
        let spec = &doc["spec"];
        let group = required_str(spec, "group")?;
        let kind = required_str(&spec["names"], "kind")?;
        let scope = required_str(spec, "scope")?;
        let versions = spec["versions"].as_array().ok_or("spec.versions missing")?;
        for version in versions.iter().filter(|v| v["served"] == true) {
            let name = required_str(version, "name")?;
            let schema = &version["schema"]["openAPIV3Schema"];
            if !schema.is_object() {
                return Err(format!("version {name} has no schema.openAPIV3Schema"));
            }
            let key = (format!("{group}/{name}"), kind.to_string());
            if let Some(other) = self.kinds.get(&key) {
                return Err(format!(
                    "{key:?} is also defined by {}",
                    other.file.display()
                ));
            }
            let crd = Crd {
                scope: scope.to_string(),
                schema: schema.clone(),
                file: file.to_path_buf(),
            };
            self.kinds.insert(key, crd);
        }
        Ok(())
    }
}

/// The provider CRDs of one API generation (`flat`, `cluster`, `namespaced`) in the newest
/// release that has it, from the repository's `crds/` (read by the `codegen` feature's
/// reader; without that feature the tests that need them print a visible SKIP line).
pub fn provider_crds(api: &str) -> Option<Crds> {
    let documents = provider_crd_documents(api)?;
    Some(Crds::from_documents(documents).unwrap_or_else(|e| panic!("{e}")))
}

/// The documents behind [`provider_crds`]: (file name, parsed CRD), by file name.
pub fn provider_crd_documents(api: &str) -> Option<Vec<(String, Value)>> {
    #[cfg(feature = "codegen")]
    {
        use function_artifactory::catalog::{catalog, ProviderApi};
        let api = ProviderApi::parse(api).expect("a provider API");
        let catalog = catalog();
        let release = catalog.release_name(catalog.effective_release(None, api));
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let release = function_artifactory::codegen::crds::release(root, release)
            .unwrap_or_else(|e| panic!("{e}"));
        let namespaced = api == ProviderApi::Namespaced;
        let documents = release.crds.into_iter().filter(|(_, crd)| {
            let group = crd["spec"]["group"].as_str().unwrap_or_default();
            group.contains(".m.") == namespaced
        });
        Some(documents.collect())
    }
    #[cfg(not(feature = "codegen"))]
    {
        eprintln!("SKIP CRD validation ({api}): run the tests with --all-features");
        None
    }
}

/// The *.yaml files directly in `dir`, sorted so that loading is deterministic.
fn yaml_files(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut files = Vec::new();
    for entry in entries {
        let path = entry.map_err(|e| format!("{}: {e}", dir.display()))?.path();
        if path.is_file() && path.extension().is_some_and(|ext| ext == "yaml") {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

fn required_str<'a>(node: &'a Value, key: &str) -> Result<&'a str, String> {
    node[key]
        .as_str()
        .ok_or_else(|| format!("missing string field {key:?}"))
}

/// The CEL environment of the API server, as far as the `cel` crate has it: the standard
/// library plus the strings and lists extensions.
fn cel_env() -> Result<cel::Env, String> {
    let mut env = cel::Env::stdlib();
    env.add_extension(cel::extensions::strings)
        .and_then(|()| env.add_extension(cel::extensions::lists))
        .map_err(|e| format!("cannot build the CEL environment: {e}"))?;
    Ok(env)
}

// ---------------------------------------------------------------------------------------
// Paths and schema accessors
// ---------------------------------------------------------------------------------------

/// Path of a property: `spec.forProvider`.
fn field_path(parent: &str, name: &str) -> String {
    if parent.is_empty() {
        name.to_string()
    } else {
        format!("{parent}.{name}")
    }
}

/// Path of a map entry or list item: `metadata.labels[app]`, `spec.member[0]`. Brackets
/// keep keys containing dots or slashes readable.
fn index_path(parent: &str, index: impl fmt::Display) -> String {
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

fn json_type(value: &Value) -> &'static str {
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
fn apply_defaults(value: &mut Value, schema: &Value) {
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
    env: &'e Arc<cel::Env>,
    errors: Vec<String>,
    /// A type or enum error was found: the API server then skips the CEL rules.
    blocking: bool,
}

impl<'e> Checker<'e> {
    fn new(env: &'e Arc<cel::Env>) -> Self {
        Checker {
            env,
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

    /// `pattern` through CEL's `matches` (RE2 syntax, as in the API server): no regex
    /// dependency of our own.
    fn pattern(&mut self, s: &str, pattern: &str, path: &str) {
        let vars = [
            ("self", cel::Value::from(s)),
            ("pattern", cel::Value::from(pattern)),
        ];
        match self.eval("self.matches(pattern)", &vars) {
            Ok(cel::Value::Bool(true)) => {}
            Ok(_) => self.error(path, format!("{s:?} does not match pattern {pattern:?}")),
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
            Ok(other) => self.error(path, format!("rule {source:?} gave {other:?}, not a bool")),
            Err(e) => self.error(path, format!("rule {source:?}: {e}")),
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
            None => format!("failed rule: {source}"),
        }
    }

    /// Compiles and runs `source` with `vars` bound.
    fn eval(&self, source: &str, vars: &[(&str, cel::Value)]) -> Result<cel::Value, String> {
        let program = self
            .env
            .compile(source)
            .map_err(|e| format!("does not compile: {e}"))?;
        // Transition rules compare with the stored object, which a render test has not got.
        if program.references().has_variable("oldSelf") {
            return Err("transition rules (oldSelf) are not supported".to_string());
        }
        let mut context = cel::Context::with_env(Arc::clone(self.env));
        for (name, value) in vars {
            context.add_variable_from_value(*name, value.clone());
        }
        program
            .execute(&context)
            .map_err(|e| format!("evaluation failed: {e}"))
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

// ---------------------------------------------------------------------------------------
// metadata (ObjectMeta), checked as the API server does
// ---------------------------------------------------------------------------------------

/// Checks the subset of ObjectMeta that a rendered object may sensibly carry.
fn check_metadata(metadata: Option<&Value>, scope: &str, errors: &mut Vec<String>) {
    let Some(metadata) = metadata else {
        return;
    };
    let Some(fields) = metadata.as_object() else {
        let got = json_type(metadata);
        return errors.push(format!("metadata: expected object, got {got}"));
    };
    for (key, value) in fields {
        let path = field_path("metadata", key);
        if let Err(e) = check_meta_field(key, value, &path, errors) {
            errors.push(format!("{path}: {e}"));
        }
    }
    if scope == "Cluster" && fields.contains_key("namespace") {
        errors.push("metadata.namespace: must be absent for a Cluster-scoped kind".to_string());
    }
}

/// One metadata field; an `Err` is reported at the field's own path.
fn check_meta_field(
    key: &str,
    value: &Value,
    path: &str,
    errors: &mut Vec<String>,
) -> Result<(), String> {
    match key {
        "name" => check_name(value, false),
        "generateName" => check_name(value, true),
        "namespace" => expect_str(value).and_then(|s| {
            dns_label(s)
                .then_some(())
                .ok_or_else(|| format!("invalid namespace {s:?}: must be a DNS-1123 label"))
        }),
        "labels" => {
            check_string_map(value, path, errors, label_entry);
            Ok(())
        }
        "annotations" => {
            check_string_map(value, path, errors, annotation_entry);
            Ok(())
        }
        "finalizers" => check_finalizers(value, path, errors),
        "ownerReferences" => check_owner_references(value, path, errors),
        "uid" | "resourceVersion" => expect_str(value).map(|_| ()),
        "generation" if value.is_i64() => Ok(()),
        "generation" => Err(format!("expected integer, got {}", json_type(value))),
        // Serializers commonly write an unset timestamp as null.
        "creationTimestamp" if value.is_null() => Ok(()),
        "creationTimestamp" => expect_str(value).map(|_| ()),
        _ => Err("unknown or unsupported metadata field".to_string()),
    }
}

fn expect_str(value: &Value) -> Result<&str, String> {
    value
        .as_str()
        .ok_or_else(|| format!("expected string, got {}", json_type(value)))
}

/// Custom resource names are DNS-1123 subdomains; a generateName is a prefix of one, so a
/// trailing '-' is fine there.
fn check_name(value: &Value, prefix: bool) -> Result<(), String> {
    let name = expect_str(value)?;
    let masked = match name.strip_suffix('-') {
        Some(stem) if prefix => format!("{stem}a"),
        _ => name.to_string(),
    };
    if dns_subdomain(&masked) {
        Ok(())
    } else {
        Err(format!("invalid name {name:?}: must be a DNS-1123 subdomain (lowercase alphanumerics, '-' and '.', at most 253 characters)"))
    }
}

/// Labels and annotations: a map of string to string whose entries pass `entry`.
fn check_string_map(
    value: &Value,
    path: &str,
    errors: &mut Vec<String>,
    entry: fn(&str, &str) -> Result<(), String>,
) {
    let Some(map) = value.as_object() else {
        return errors.push(format!("{path}: expected object, got {}", json_type(value)));
    };
    for (key, value) in map {
        let result = expect_str(value).and_then(|value| entry(key, value));
        if let Err(e) = result {
            errors.push(format!("{}: {e}", index_path(path, key)));
        }
    }
    if path.ends_with("annotations") {
        let size: usize = map
            .iter()
            .map(|(k, v)| k.len() + v.as_str().map_or(0, str::len))
            .sum();
        if size > 256 * 1024 {
            errors.push(format!(
                "{path}: annotations are {size} bytes, at most 262144 allowed"
            ));
        }
    }
}

fn label_entry(key: &str, value: &str) -> Result<(), String> {
    if !qualified_name(key) {
        return Err(format!("invalid label key {key:?}: {QUALIFIED_NAME_RULE}"));
    }
    if !label_value(value) {
        return Err(format!("invalid label value {value:?}: at most 63 characters, alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric"));
    }
    Ok(())
}

fn annotation_entry(key: &str, _value: &str) -> Result<(), String> {
    // The API server lowercases annotation keys before checking them.
    if qualified_name(&key.to_ascii_lowercase()) {
        Ok(())
    } else {
        Err(format!(
            "invalid annotation key {key:?}: {QUALIFIED_NAME_RULE}"
        ))
    }
}

fn check_finalizers(value: &Value, path: &str, errors: &mut Vec<String>) -> Result<(), String> {
    let items = value
        .as_array()
        .ok_or_else(|| format!("expected array, got {}", json_type(value)))?;
    for (i, item) in items.iter().enumerate() {
        let result = expect_str(item).and_then(|f| {
            qualified_name(f)
                .then_some(())
                .ok_or_else(|| format!("invalid finalizer {f:?}: {QUALIFIED_NAME_RULE}"))
        });
        if let Err(e) = result {
            errors.push(format!("{}: {e}", index_path(path, i)));
        }
    }
    Ok(())
}

fn check_owner_references(
    value: &Value,
    path: &str,
    errors: &mut Vec<String>,
) -> Result<(), String> {
    let items = value
        .as_array()
        .ok_or_else(|| format!("expected array, got {}", json_type(value)))?;
    for (i, item) in items.iter().enumerate() {
        check_owner_reference(item, &index_path(path, i), errors);
    }
    Ok(())
}

fn check_owner_reference(item: &Value, path: &str, errors: &mut Vec<String>) {
    let Some(fields) = item.as_object() else {
        return errors.push(format!("{path}: expected object, got {}", json_type(item)));
    };
    for required in ["apiVersion", "kind", "name", "uid"] {
        if !fields.contains_key(required) {
            errors.push(format!("{path}.{required}: required field is missing"));
        }
    }
    for (key, value) in fields {
        let problem = match key.as_str() {
            "apiVersion" | "kind" | "name" | "uid" => expect_str(value).err(),
            "controller" | "blockOwnerDeletion" if value.is_boolean() => None,
            "controller" | "blockOwnerDeletion" => {
                Some(format!("expected boolean, got {}", json_type(value)))
            }
            _ => Some("unknown field".to_string()),
        };
        if let Some(problem) = problem {
            errors.push(format!("{path}.{key}: {problem}"));
        }
    }
}

// ---------------------------------------------------------------------------------------
// Kubernetes name syntax (k8s.io/apimachinery/pkg/util/validation), without a regex crate
// ---------------------------------------------------------------------------------------

const QUALIFIED_NAME_RULE: &str = "an optional DNS subdomain prefix and '/', then a name of at \
     most 63 alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric";

/// `(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?` without the emptiness: the body of label
/// values and of qualified-name names.
fn name_part(s: &str) -> bool {
    let alnum = |c: char| c.is_ascii_alphanumeric();
    s.starts_with(alnum)
        && s.ends_with(alnum)
        && s.chars().all(|c| alnum(c) || matches!(c, '-' | '_' | '.'))
}

fn label_value(s: &str) -> bool {
    s.is_empty() || (s.len() <= 63 && name_part(s))
}

/// `[prefix/]name`: prefix a DNS subdomain, name at most 63 characters.
fn qualified_name(s: &str) -> bool {
    let (prefix, name) = match s.split_once('/') {
        Some((prefix, name)) => (Some(prefix), name),
        None => (None, s),
    };
    prefix.is_none_or(dns_subdomain) && name.len() <= 63 && name_part(name)
}

/// One dot-free piece of a DNS-1123 name: `[a-z0-9]([-a-z0-9]*[a-z0-9])?`.
fn dns_piece(s: &str) -> bool {
    let alnum = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    s.starts_with(alnum) && s.ends_with(alnum) && s.chars().all(|c| alnum(c) || c == '-')
}

fn dns_label(s: &str) -> bool {
    s.len() <= 63 && dns_piece(s)
}

fn dns_subdomain(s: &str) -> bool {
    s.len() <= 253 && s.split('.').all(dns_piece)
}
