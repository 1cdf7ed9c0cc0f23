//! The published schemas, generated from the API types in [`crate::codegen::api`]:
//!
//! - `package/input/artifactory.fn.crossplane.io_inputs.yaml`: the CRD of the
//!   function input (kind `Input`), shipped in the Function package;
//! - `examples/cluster/xrd.yaml`: an XRD with a claim for the cluster-scoped
//!   provider APIs (`flat` and `cluster`);
//! - `examples/namespaced/xrd.yaml`: a Crossplane v2 namespaced XRD for the
//!   namespaced provider API.
//!
//! schemars produces JSON Schema; [`structural`] turns it into a Kubernetes
//! structural schema (no `$ref`, a `type` on every node, no type unions,
//! enums instead of `const`, no keywords the API server refuses), and
//! [`structural_violations`] checks the result. A generator whose output
//! breaks a rule fails instead of writing the file.

use super::GeneratedFile;
use crate::codegen::api::{CompositeSpecSchema, InputSchema};
use crate::core::catalog::ProviderApi;
use crate::core::input::{INPUT_GROUP, INPUT_KIND};
use anyhow::{anyhow, bail, Context as _};
use schemars::generate::SchemaSettings;
use schemars::JsonSchema;
use serde_json::{json, Value};
use std::path::PathBuf;

/// The Input CRD in the package.
pub const INPUT_CRD_PATH: &str = "package/input/artifactory.fn.crossplane.io_inputs.yaml";
/// The XRD of the cluster-scoped example.
pub const CLUSTER_XRD_PATH: &str = "examples/cluster/xrd.yaml";
/// The XRD of the namespaced example.
pub const NAMESPACED_XRD_PATH: &str = "examples/namespaced/xrd.yaml";

/// The version of the Input kind.
pub const INPUT_VERSION: &str = "v1beta1";
/// The example XRDs' group and version (the function does not depend on them).
pub const XR_VERSION: &str = "v1alpha1";
/// The group of the examples' composite resources.
pub const CLUSTER_XR_GROUP: &str = "platform.example.org";
/// The kind of the cluster-scoped example's composite.
pub const CLUSTER_XR_KIND: &str = "XRepositories";
/// The kind of its claim.
pub const CLAIM_KIND: &str = "Repositories";
/// The namespaced example lives in its own group so both examples can be installed
/// side by side (its kind is the cluster example's claim kind).
pub const NAMESPACED_XR_GROUP: &str = "artifactory.example.org";
/// The kind of the namespaced example's composite.
pub const NAMESPACED_XR_KIND: &str = "Repositories";

const HEADER: &str = "# Generated from the Rust types in src/codegen/api.rs by `cargo run --features codegen --bin codegen`.\n# Do not edit: tests/repo/generated.rs fails when this file differs from what the generator produces.\n";

/// The module manifest of the WebAssembly component (function-wasm's `wasmfn.yaml`).
pub const MODULE_MANIFEST_PATH: &str = "wasmfn.yaml";

/// The oldest function-wasm that runs the component: 1.0.0 froze its guest world at
/// `wasmfn:function@2.0.0`, the world `wit/world.wit` restates.
pub const MIN_RUNTIME: &str = "v1.0.0";

/// Generates the Input CRD, the example XRDs and the component's module manifest.
pub fn generate() -> anyhow::Result<Vec<GeneratedFile>> {
    Ok(vec![
        file(INPUT_CRD_PATH, "", &input_crd()?)?,
        file(
            MODULE_MANIFEST_PATH,
            "# The module manifest of the WebAssembly component for function-wasm (docs/wasm-component.md):\n# scripts/build-component.sh publishes it beside the component as the artifact's manifest layer.\n# The runtime refuses a step whose `config` does not match config.schema, naming the field.\n",
            &module_manifest()?,
        )?,
        file(
            CLUSTER_XRD_PATH,
            "# A composite resource definition with a claim, for the cluster-scoped provider APIs\n# (providerApi flat or cluster).\n",
            &cluster_xrd()?,
        )?,
        file(
            NAMESPACED_XRD_PATH,
            "# A Crossplane v2 namespaced composite resource definition, for the namespaced provider API.\n",
            &namespaced_xrd()?,
        )?,
    ])
}

fn file(path: &str, comment: &str, object: &Value) -> anyhow::Result<GeneratedFile> {
    let yaml = serde_yaml_ng::to_string(object).with_context(|| path.to_string())?;
    Ok(GeneratedFile {
        path: PathBuf::from(path),
        contents: format!("{HEADER}{comment}{yaml}"),
    })
}

/// The structural schema of a Rust type, as schemars derives it and [`structural`] cleans it.
pub fn schema_of<T: JsonSchema>() -> anyhow::Result<Value> {
    let generator = SchemaSettings::draft2020_12()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .into_generator();
    let schema = generator.into_root_schema_for::<T>();
    structural(schema.to_value())
}

/// The schema of the function input (the Input's top level: the input has no `spec`).
pub fn input_schema() -> anyhow::Result<Value> {
    let mut schema = schema_of::<InputSchema>()?;
    schema["description"] = json!("Input of function-artifactory: how the function renders the composite's repositories. Every field is optional.");
    check(&schema)?;
    Ok(schema)
}

/// The module manifest: ABI v2 (a component), the crate's name and version, nothing
/// `requires`d of the sandbox (no egress, no /tmp, no environment, no step credential), and the
/// JSON Schema of the step's `config`, where the function reads its Input.
pub fn module_manifest() -> anyhow::Result<Value> {
    Ok(json!({
        "abi": 2,
        "name": env!("CARGO_PKG_NAME"),
        "version": env!("CARGO_PKG_VERSION"),
        "description": env!("CARGO_PKG_DESCRIPTION"),
        "minRuntime": MIN_RUNTIME,
        "requires": {},
        "config": {"schema": config_schema()?},
    }))
}

/// The Input's schema as a JSON Schema (draft 2020-12) of function-wasm's `config`: the same
/// properties, enums and patterns, and no field the readers do not know. Kubernetes prunes
/// unknown fields of a CRD's objects; JSON Schema keeps them unless told, and the readers
/// (`core::input`) report every unknown field, so every object with properties closes them.
pub fn config_schema() -> anyhow::Result<Value> {
    let mut schema = input_schema()?;
    close_objects(&mut schema);
    let object = schema
        .as_object_mut()
        .ok_or_else(|| anyhow!("the input schema is not an object"))?;
    object.insert(
        "$schema".to_owned(),
        json!("https://json-schema.org/draft/2020-12/schema"),
    );
    Ok(schema)
}

/// `additionalProperties: false` on every object that lists its properties.
fn close_objects(node: &mut Value) {
    let Some(object) = node.as_object_mut() else {
        return;
    };
    if let Some(Value::Object(properties)) = object.get_mut("properties") {
        properties.values_mut().for_each(close_objects);
        object.insert("additionalProperties".to_owned(), Value::Bool(false));
    }
    if let Some(items) = object.get_mut("items") {
        close_objects(items);
    }
}

/// The schema of a composite's `spec` for a provider API: the namespaced API has no
/// deletion policy, references provider configs by kind and name, and secrets without
/// a namespace; the cluster-scoped APIs reference provider configs by name (and policy)
/// and secrets with their namespace.
pub fn composite_spec_schema(api: ProviderApi) -> anyhow::Result<Value> {
    let mut spec = schema_of::<CompositeSpecSchema>()?;
    spec["description"] = json!("The Artifactory repositories of this composite. function-artifactory computes, checks and wires their keys.");
    tailor_to_api(&mut spec, api);
    let entry = &mut spec["properties"]["repositories"]["items"];
    tailor_to_api(entry, api);
    let member = &mut entry["properties"]["members"]["items"];
    let secret = &mut member["properties"]["accessTokenSecretRef"];
    if api == ProviderApi::Namespaced {
        // The secret is in the composite's namespace.
        remove_property(secret, "namespace");
    } else {
        secret["required"] = json!(["key", "name", "namespace"]);
    }
    check(&spec)?;
    Ok(spec)
}

/// Applies the differences between the provider APIs to an object with
/// `deletionPolicy` and `providerConfigRef` properties.
fn tailor_to_api(object: &mut Value, api: ProviderApi) {
    let reference = &mut object["properties"]["providerConfigRef"];
    if api.has_deletion_policy() {
        remove_property(reference, "kind");
    } else {
        remove_property(reference, "policy");
        reference["required"] = json!(["kind", "name"]);
        remove_property(object, "deletionPolicy");
    }
}

fn remove_property(object: &mut Value, name: &str) {
    if let Some(properties) = object.get_mut("properties").and_then(Value::as_object_mut) {
        properties.remove(name);
    }
    if let Some(required) = object.get_mut("required").and_then(Value::as_array_mut) {
        required.retain(|r| r != name);
    }
}

/// The function input's CRD. Crossplane never creates Input objects; the CRD
/// documents and validates the schema of the pipeline step's `input`.
pub fn input_crd() -> anyhow::Result<Value> {
    Ok(json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("inputs.{INPUT_GROUP}")},
        "spec": {
            "group": INPUT_GROUP,
            "names": {
                "categories": ["crossplane"],
                "kind": INPUT_KIND,
                "listKind": format!("{INPUT_KIND}List"),
                "plural": "inputs",
                "singular": "input",
            },
            "scope": "Namespaced",
            "versions": [{
                "name": INPUT_VERSION,
                "served": true,
                "storage": true,
                "schema": {"openAPIV3Schema": input_schema()?},
            }],
        },
    }))
}

/// The XR's top-level schema: the contract as `spec`, and the status the function writes.
fn xr_schema(api: ProviderApi) -> anyhow::Result<Value> {
    let schema = json!({
        "type": "object",
        "required": ["spec"],
        "properties": {
            "spec": composite_spec_schema(api)?,
            "status": {
                "type": "object",
                "description": "Written by function-artifactory: repositories (key, class, kind, readiness, deletion, members, warnings per entry) and retiring.",
                "x-kubernetes-preserve-unknown-fields": true,
            },
        },
    });
    check(&schema)?;
    Ok(schema)
}

fn xrd_version(api: ProviderApi) -> anyhow::Result<Value> {
    Ok(json!({
        "name": XR_VERSION,
        "served": true,
        "referenceable": true,
        "schema": {"openAPIV3Schema": xr_schema(api)?},
    }))
}

/// A v1 XRD with a claim, for the cluster-scoped provider APIs.
pub fn cluster_xrd() -> anyhow::Result<Value> {
    Ok(json!({
        "apiVersion": "apiextensions.crossplane.io/v1",
        "kind": "CompositeResourceDefinition",
        "metadata": {"name": format!("xrepositories.{CLUSTER_XR_GROUP}")},
        "spec": {
            "group": CLUSTER_XR_GROUP,
            "names": {"kind": CLUSTER_XR_KIND, "plural": "xrepositories"},
            "claimNames": {"kind": CLAIM_KIND, "plural": "repositories"},
            "defaultCompositionRef": {"name": "artifactory-repositories"},
            "versions": [xrd_version(ProviderApi::Cluster)?],
        },
    }))
}

/// A Crossplane v2 namespaced XRD, for the namespaced provider API.
pub fn namespaced_xrd() -> anyhow::Result<Value> {
    Ok(json!({
        "apiVersion": "apiextensions.crossplane.io/v2",
        "kind": "CompositeResourceDefinition",
        "metadata": {"name": format!("repositories.{NAMESPACED_XR_GROUP}")},
        "spec": {
            "scope": "Namespaced",
            "group": NAMESPACED_XR_GROUP,
            "names": {"kind": NAMESPACED_XR_KIND, "plural": "repositories"},
            "defaultCompositionRef": {"name": "artifactory-repositories-namespaced"},
            "versions": [xrd_version(ProviderApi::Namespaced)?],
        },
    }))
}

fn check(schema: &Value) -> anyhow::Result<()> {
    let violations = structural_violations(schema);
    if violations.is_empty() {
        Ok(())
    } else {
        Err(anyhow!(
            "the generated schema is not a Kubernetes structural schema:\n{}",
            violations.join("\n")
        ))
    }
}

/// Keywords schemars writes that a CRD schema does not take, or that say nothing here.
const DROPPED: [&str; 7] = [
    "$schema", "$id", "$defs", "title", "format", "examples", "$comment",
];

/// Turns schemars' JSON Schema into a Kubernetes structural schema.
pub fn structural(mut schema: Value) -> anyhow::Result<Value> {
    clean(&mut schema, "")?;
    Ok(schema)
}

fn clean(node: &mut Value, path: &str) -> anyhow::Result<()> {
    let Some(object) = node.as_object_mut() else {
        bail!("{path}: a schema must be an object, got {node}");
    };
    for keyword in DROPPED {
        object.remove(keyword);
    }
    if object.contains_key("$ref") {
        bail!("{path}: $ref left after inlining (a recursive type?)");
    }
    // `Option<T>`: a type union with null, or anyOf [T, null].
    if let Some(Value::Array(types)) = object.get("type") {
        let types: Vec<&Value> = types.iter().filter(|t| *t != "null").collect();
        match types.as_slice() {
            [single] => {
                let single = (*single).clone();
                object.insert("type".into(), single);
            }
            _ => bail!("{path}: a union of types is not structural"),
        }
    }
    for union in ["anyOf", "oneOf"] {
        let Some(Value::Array(members)) = object.remove(union) else {
            continue;
        };
        let members: Vec<Value> = members
            .into_iter()
            .filter(|m| m != &json!({"type": "null"}))
            .collect();
        let merged = match members.as_slice() {
            [single] => single.clone(),
            _ => string_enum(&members).with_context(|| {
                format!("{path}: {union} of different schemas is not structural")
            })?,
        };
        let Value::Object(merged) = merged else {
            bail!("{path}: {union} member is not an object");
        };
        for (key, value) in merged {
            // The field's own keywords (its description) win over the type's.
            object.entry(key).or_insert(value);
        }
    }
    if let Some(value) = object.remove("const") {
        object.insert("enum".into(), json!([value]));
    }
    if let Some(Value::Array(values)) = object.get_mut("enum") {
        values.retain(|v| !v.is_null());
    }
    if object.get("default").is_some_and(Value::is_null) {
        object.remove("default");
    }
    if let Some(Value::String(text)) = object.get_mut("description") {
        *text = one_paragraph(text);
    }
    if let Some(Value::Object(properties)) = object.get_mut("properties") {
        for (name, property) in properties.iter_mut() {
            clean(property, &format!("{path}.{name}"))?;
        }
    }
    if let Some(items) = object.get_mut("items") {
        clean(items, &format!("{path}[]"))?;
    }
    if let Some(additional @ Value::Object(_)) = object.get_mut("additionalProperties") {
        clean(additional, &format!("{path}.*"))?;
    }
    Ok(())
}

/// `oneOf` of string constants (a unit enum with documented variants) as one enum.
fn string_enum(members: &[Value]) -> Option<Value> {
    let mut values = Vec::new();
    for member in members {
        let member = member.as_object()?;
        if member.get("type").is_some_and(|t| t != "string") {
            return None;
        }
        if let Some(value) = member.get("const") {
            values.push(value.clone());
        } else {
            values.extend(member.get("enum")?.as_array()?.iter().cloned());
        }
    }
    Some(json!({"type": "string", "enum": values}))
}

/// Doc comments wrap lines; descriptions are paragraphs.
fn one_paragraph(text: &str) -> String {
    text.split("\n\n")
        .map(|paragraph| paragraph.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// Keywords a structural schema node may carry (apiextensions.k8s.io/v1 JSONSchemaProps,
/// less those this project has no use for and those structural schemas forbid).
const ALLOWED: [&str; 20] = [
    "type",
    "description",
    "properties",
    "required",
    "items",
    "additionalProperties",
    "enum",
    "pattern",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "minimum",
    "maximum",
    "default",
    "nullable",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-list-type",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-validations",
];

const TYPES: [&str; 6] = ["object", "array", "string", "integer", "number", "boolean"];

/// Every way `schema` breaks the rules of a Kubernetes structural schema, with its path.
/// Checked: a single `type` on every node (unless it preserves unknown fields or is
/// int-or-string), only known keywords (so no `$ref`, `const`, `oneOf`, `title`...),
/// `properties` only on objects and never with `additionalProperties`, `items` on
/// every array, `required` naming properties, enums and defaults of the node's type,
/// patterns that compile, and list-map keys that are required properties of the items.
pub fn structural_violations(schema: &Value) -> Vec<String> {
    let mut violations = Vec::new();
    walk(schema, "<root>", &mut violations);
    violations
}

fn walk(node: &Value, path: &str, out: &mut Vec<String>) {
    let Some(object) = node.as_object() else {
        out.push(format!("{path}: not an object"));
        return;
    };
    for key in object.keys() {
        if !ALLOWED.contains(&key.as_str()) && key != "x-kubernetes-int-or-string" {
            out.push(format!("{path}: keyword {key:?} is not allowed"));
        }
    }
    let preserves = object.get("x-kubernetes-preserve-unknown-fields") == Some(&json!(true));
    let int_or_string = object.get("x-kubernetes-int-or-string") == Some(&json!(true));
    let type_ = object.get("type").and_then(Value::as_str);
    match object.get("type") {
        None if preserves || int_or_string => {}
        None => out.push(format!("{path}: no type")),
        Some(Value::String(t)) if TYPES.contains(&t.as_str()) => {}
        Some(other) => out.push(format!("{path}: type {other} is not a single known type")),
    }
    if object.contains_key("properties") && type_ != Some("object") {
        out.push(format!(
            "{path}: properties on a node that is not an object"
        ));
    }
    if object.contains_key("properties") && object.contains_key("additionalProperties") {
        out.push(format!(
            "{path}: properties and additionalProperties together"
        ));
    }
    if let Some(additional) = object.get("additionalProperties") {
        if !additional.is_object() {
            out.push(format!(
                "{path}: additionalProperties must be a schema (use x-kubernetes-preserve-unknown-fields)"
            ));
        }
    }
    if type_ == Some("array") && !object.contains_key("items") {
        out.push(format!("{path}: an array without items"));
    }
    let properties = object.get("properties").and_then(Value::as_object);
    if let Some(required) = object.get("required") {
        let names = required.as_array().map(Vec::as_slice).unwrap_or_default();
        if names.is_empty() {
            out.push(format!("{path}: required must be a non-empty list"));
        }
        for name in names {
            let known = name
                .as_str()
                .is_some_and(|n| properties.is_some_and(|p| p.contains_key(n)));
            if !known {
                out.push(format!("{path}: required {name} is not a property"));
            }
        }
    }
    if let Some(values) = object.get("enum") {
        match values.as_array() {
            Some(values) if !values.is_empty() => {
                for value in values {
                    if !value_has_type(value, type_) {
                        out.push(format!("{path}: enum value {value} is not a {type_:?}"));
                    }
                }
            }
            _ => out.push(format!("{path}: enum must be a non-empty list")),
        }
    }
    if let Some(default) = object.get("default") {
        if !value_has_type(default, type_) {
            out.push(format!("{path}: default {default} is not a {type_:?}"));
        }
    }
    if let Some(pattern) = object.get("pattern") {
        match pattern.as_str() {
            Some(p) if type_ == Some("string") => check_pattern(p, path, out),
            _ => out.push(format!("{path}: pattern on a node that is not a string")),
        }
    }
    if object.get("x-kubernetes-list-type") == Some(&json!("map")) {
        let keys = object
            .get("x-kubernetes-list-map-keys")
            .and_then(Value::as_array);
        let item_required = object
            .get("items")
            .and_then(|i| i.get("required"))
            .and_then(Value::as_array);
        match (keys, item_required) {
            (Some(keys), Some(required)) if keys.iter().all(|k| required.contains(k)) => {}
            _ => out.push(format!(
                "{path}: a list-type map needs x-kubernetes-list-map-keys that are required properties of its items"
            )),
        }
    }
    if let Some(properties) = properties {
        for (name, property) in properties {
            walk(property, &format!("{path}.{name}"), out);
        }
    }
    if let Some(items) = object.get("items") {
        walk(items, &format!("{path}[]"), out);
    }
    if let Some(additional @ Value::Object(_)) = object.get("additionalProperties") {
        walk(additional, &format!("{path}.*"), out);
    }
}

fn value_has_type(value: &Value, type_: Option<&str>) -> bool {
    match type_ {
        Some("string") => value.is_string(),
        Some("boolean") => value.is_boolean(),
        Some("integer") => value.is_i64() || value.is_u64(),
        Some("number") => value.is_number(),
        Some("object") => value.is_object(),
        Some("array") => value.is_array(),
        _ => true,
    }
}

/// The patterns must mean the same to the API server (Go RE2) and to clients
/// (ECMA-262): they must compile as RE2 expressions, as the function checks them (no look-around,
/// no backreferences) and be anchored at both ends.
fn check_pattern(pattern: &str, path: &str, out: &mut Vec<String>) {
    if let Err(e) = cel_rules::re2::compiled(pattern) {
        out.push(format!("{path}: pattern {pattern:?} does not compile: {e}"));
    }
    if !pattern.starts_with('^') || !pattern.ends_with('$') {
        out.push(format!("{path}: pattern {pattern:?} is not anchored"));
    }
}
