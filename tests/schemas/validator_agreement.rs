//! The compiled schema validator (`validation::openapi`) agrees, message for message and in the same
//! order, with the validator it replaced (`tests/schemas/reference_validator.rs`, kept verbatim):
//! on the provider's CRDs of several releases and on random schemas, for random objects given as
//! JSON and as the members a rendered resource is checked from (`Instance`). This is what keeps
//! the function's answers with live schemas byte-identical to what they were.
#![cfg(feature = "codegen")]

use crate::reference_validator as reference;

use function_artifactory::codegen::crds;
use function_artifactory::validation::{CompiledSchema, Instance};
use proptest::prelude::*;
use reference::ReferenceSchema;
use serde_json::{json, Map, Value};
use std::path::Path;
use std::sync::OnceLock;

/// Both validators of one schema.
struct Pair {
    compiled: CompiledSchema,
    reference: ReferenceSchema,
}

impl Pair {
    fn new(schema: Value) -> Pair {
        Pair {
            compiled: CompiledSchema::new(schema.clone()),
            reference: ReferenceSchema::new(schema),
        }
    }

    /// Both validators agree on `object` given as JSON and as members.
    fn agree(&self, object: &Value) -> Result<(), TestCaseError> {
        let expected = self.reference.validate(object);
        prop_assert_eq!(&self.compiled.validate(object), &expected, "{}", object);
        if let Some(fields) = object.as_object() {
            let nested: Vec<(String, Vec<(&str, Instance)>)> = fields
                .iter()
                .filter_map(|(name, value)| Some((name.clone(), members(value.as_object()?))))
                .collect();
            let top: Vec<(&str, Instance)> = fields
                .iter()
                .map(|(name, value)| {
                    let instance = match nested.iter().find(|(n, _)| n == name) {
                        Some((_, inner)) => Instance::Members(inner),
                        None => instance(value),
                    };
                    (name.as_str(), instance)
                })
                .collect();
            let given = self.compiled.validate_instance(Instance::Members(&top));
            prop_assert_eq!(&given, &expected, "{} as members", object);
        }
        Ok(())
    }
}

/// An object's members, strings as text and lists of strings as texts, as `compose` gives them.
fn members(fields: &Map<String, Value>) -> Vec<(&str, Instance<'_>)> {
    fields
        .iter()
        .map(|(name, value)| (name.as_str(), instance(value)))
        .collect()
}

fn instance(value: &Value) -> Instance<'_> {
    match value {
        Value::String(text) => Instance::Text(text),
        Value::Object(map) => Instance::Object(map),
        other => Instance::Json(other),
    }
}

/// The served schemas of a few releases of every API.
fn crd_schemas() -> &'static [(String, Value)] {
    static SCHEMAS: OnceLock<Vec<(String, Value)>> = OnceLock::new();
    SCHEMAS.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut schemas = Vec::new();
        for release in ["v0.6.0", "v0.11.0", "v0.14.0"] {
            let release = crds::release(root, release).unwrap();
            for (file, crd) in release.crds.iter().step_by(7) {
                let schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"].clone();
                schemas.push((file.clone(), schema));
            }
        }
        assert!(schemas.len() > 40, "{}", schemas.len());
        schemas
    })
}

/// A random JSON value: any type, a few levels deep, with names drawn from `names`.
fn value(names: Vec<String>) -> impl Strategy<Value = Value> {
    let scalar = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-3i64..300).prop_map(Value::from),
        prop_oneof![Just(0.5), Just(2.0), Just(-1.25)].prop_map(|n: f64| json!(n)),
        prop_oneof![
            Just("".to_owned()),
            Just("Delete".to_owned()),
            Just("Orphan".to_owned()),
            Just("*".to_owned()),
            Just("Observe".to_owned()),
            Just("Create".to_owned()),
            Just("https://repo.example.org/r".to_owned()),
            "[a-zA-Z0-9 *./-]{0,12}",
        ]
        .prop_map(Value::String),
    ];
    let keys = prop::sample::select(names);
    scalar.prop_recursive(3, 24, 5, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((keys.clone(), inner), 0..5)
                .prop_map(|entries| Value::Object(entries.into_iter().collect())),
        ]
    })
}

/// The property names of a schema object, at any depth, and a few unknown ones.
fn names_in(schema: &Value, names: &mut Vec<String>) {
    if !schema.is_object() {
        return;
    }
    if let Some(properties) = schema["properties"].as_object() {
        for (name, property) in properties {
            names.push(name.clone());
            names_in(property, names);
        }
    }
    for child in ["items", "additionalProperties"] {
        names_in(&schema[child], names);
    }
}

/// A rendered resource of a CRD's kind: `spec` with random members, `forProvider` with random
/// fields of the kind (and unknown ones).
fn resource(schema: &Value) -> impl Strategy<Value = Value> {
    let mut names = vec![
        "unknownField".to_owned(),
        "name".to_owned(),
        "key".to_owned(),
    ];
    names_in(schema, &mut names);
    names.sort();
    names.dedup();
    let spec_names = vec![
        "forProvider".to_owned(),
        "initProvider".to_owned(),
        "deletionPolicy".to_owned(),
        "managementPolicies".to_owned(),
        "providerConfigRef".to_owned(),
        "nope".to_owned(),
    ];
    let field = (prop::sample::select(names.clone()), value(names.clone()));
    let spec_member = (prop::sample::select(spec_names), value(names));
    (
        prop::collection::vec(field, 0..6),
        prop::collection::vec(spec_member, 0..4),
        any::<bool>(),
    )
        .prop_map(|(fields, spec_members, typed)| {
            let for_provider: Map<String, Value> = fields.into_iter().collect();
            let mut spec: Map<String, Value> = spec_members.into_iter().collect();
            spec.insert("forProvider".to_owned(), Value::Object(for_provider));
            let mut object = json!({"spec": spec});
            if typed {
                object["apiVersion"] = json!("a/v1");
                object["kind"] = json!("K");
            }
            object
        })
}

proptest! {
    #![proptest_config(ProptestConfig {
        failure_persistence: crate::support::seeds_beside_the_file(),
        .. ProptestConfig::with_cases(600)
    })]

    #[test]
    fn the_compiled_validator_agrees_on_the_provider_crds(
        (pick, objects) in (0..crd_schemas().len()).prop_flat_map(|i| {
            (Just(i), prop::collection::vec(resource(&crd_schemas()[i].1), 1..8))
        }),
    ) {
        let pair = Pair::new(crd_schemas()[pick].1.clone());
        for object in &objects {
            pair.agree(object)?;
        }
    }

    #[test]
    fn the_compiled_validator_agrees_on_random_schemas(
        schema in random_schema(),
        objects in prop::collection::vec(value(vec!["a".into(), "b".into(), "c".into(), "d".into()]), 1..6),
    ) {
        let pair = Pair::new(schema);
        for object in objects {
            pair.agree(&object)?;
            pair.agree(&json!({"a": object}))?;
        }
    }
}

/// Schemas of every keyword the validators read, a few levels deep, over the names a-d.
fn random_schema() -> impl Strategy<Value = Value> {
    let keyword = prop_oneof![
        prop::sample::select(vec!["string", "integer", "number", "boolean", "object", "array", "date"])
            .prop_map(|t| ("type", json!(t))),
        Just(("nullable", json!(true))),
        Just(("x-kubernetes-int-or-string", json!(true))),
        Just(("x-kubernetes-preserve-unknown-fields", json!(true))),
        prop_oneof![Just(json!(["x", "y", 1])), Just(json!([{"a": 1}, null]))].prop_map(|e| ("enum", e)),
        (0u64..4).prop_map(|n| ("minLength", json!(n))),
        (0u64..4).prop_map(|n| ("maxLength", json!(n))),
        (0u64..3).prop_map(|n| ("minItems", json!(n))),
        (0u64..3).prop_map(|n| ("maxItems", json!(n))),
        prop_oneof![Just("^[a-z]+$"), Just("x")].prop_map(|p| ("pattern", json!(p))),
        prop_oneof![Just("set"), Just("map"), Just("atomic")].prop_map(|t| ("x-kubernetes-list-type", json!(t))),
        Just(("x-kubernetes-list-map-keys", json!(["a"]))),
        prop_oneof![Just(json!(["a"])), Just(json!(["b", "c"])), Just(json!([3]))].prop_map(|r| ("required", r)),
        prop_oneof![Just(json!(1)), Just(json!("x")), Just(json!({"b": true})), Just(json!(null)), Just(json!([]))]
            .prop_map(|d| ("default", d)),
        prop_oneof![
            Just(json!([{"rule": "self != null", "message": "m"}])),
            Just(json!([{"rule": "!has(self.a) || self.a != 'x'", "messageExpression": "'a is ' + string(self.a)"}])),
            Just(json!([{"rule": "size(self) < 3"}])),
            Just(json!([{"rule": "self.a +", "message": "broken"}])),
            Just(json!([{"rule": "oldSelf == self"}])),
            Just(json!([{"message": "no rule"}])),
        ]
        .prop_map(|v| ("x-kubernetes-validations", v)),
        prop_oneof![Just(json!(true)), Just(json!(false))].prop_map(|a| ("additionalProperties", a)),
    ];
    let leaf = prop::collection::vec(keyword, 0..4).prop_map(|keywords| {
        Value::Object(
            keywords
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v))
                .collect(),
        )
    });
    leaf.prop_recursive(3, 20, 4, |inner| {
        (
            prop::collection::vec(
                (
                    prop::sample::select(vec!["a", "b", "c", "d"]),
                    inner.clone(),
                ),
                0..4,
            ),
            prop::option::of(inner.clone()),
            prop::option::of(inner.clone()),
            inner,
        )
            .prop_map(|(properties, items, additional, mut base)| {
                if !properties.is_empty() {
                    let properties: Map<String, Value> = properties
                        .into_iter()
                        .map(|(k, v)| (k.to_owned(), v))
                        .collect();
                    base["properties"] = Value::Object(properties);
                }
                if let Some(items) = items {
                    base["items"] = items;
                }
                if let Some(additional) = additional {
                    base["additionalProperties"] = additional;
                }
                base
            })
    })
}

#[test]
fn defaults_nested_in_defaults_are_applied_as_the_server_does() {
    let pair = Pair::new(json!({"type": "object", "properties": {
        "spec": {"type": "object", "default": {}, "required": ["a"], "properties": {
            "a": {"type": "object", "default": {"x": "y"}, "properties": {
                "x": {"type": "string", "enum": ["y"]},
                "n": {"type": "integer", "default": 3, "minimum": 1}}},
            "b": {"type": "string", "nullable": false, "default": "d"}}}}}));
    for object in [
        json!({}),
        json!({"spec": {}}),
        json!({"spec": {"b": null}}),
        json!({"spec": {"a": {"x": "z"}}}),
        json!({"spec": {"a": null, "b": 1}}),
    ] {
        pair.agree(&object).unwrap();
    }
}
