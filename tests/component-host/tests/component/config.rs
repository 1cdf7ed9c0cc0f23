//! The step's `config`: the component itself reports a wrong type or an unknown field as a
//! fatal result naming the field (function-wasm checks the manifest's schema only for OCI
//! modules and Path modules that name a manifest), and the manifest's schema accepts every
//! example's settings and refuses a misspelled field.

use component_host::{repository, Host};
use function_artifactory::proto::v1::Resource;
use function_artifactory::proto::v1::{RunFunctionRequest, RunFunctionResponse, Severity, State};
use function_artifactory::proto::Struct;
use prost::Message;
use serde_json::{json, Value};

/// A request of one repository, with `config` as function-wasm's Input carries it.
fn request_with_config(config: Value) -> Vec<u8> {
    let composite = json!({
        "apiVersion": "platform.example.org/v1alpha1",
        "kind": "XRepositories",
        "metadata": {"name": "team1"},
        "spec": {"repositories": [{"name": "libs", "rclass": "local", "packageType": "maven"}]},
    });
    RunFunctionRequest {
        observed: Some(State {
            composite: Some(Resource {
                resource: Some(Struct::from_value(composite)),
                ..Default::default()
            }),
            ..Default::default()
        }),
        input: Some(Struct::from_value(json!({
            "apiVersion": "wasm.fn.crossplane.io/v1",
            "kind": "Input",
            "module": {"type": "Path", "path": "function-artifactory.wasm"},
            "config": config,
        }))),
        ..Default::default()
    }
    .encode_to_vec()
}

/// The fatal result's message, if the call failed.
fn fatal(config: Value) -> Option<String> {
    let call = Host::shared()
        .call(&request_with_config(config))
        .expect("no trap");
    let response = RunFunctionResponse::decode(call.answer.unwrap().as_slice()).unwrap();
    response
        .results
        .into_iter()
        .find(|r| r.severity == Severity::Fatal as i32)
        .map(|r| r.message)
}

#[test]
fn good_settings_render() {
    assert_eq!(fatal(json!({})), None);
    assert_eq!(
        fatal(json!({"providerApi": "cluster", "deletionProtection": false})),
        None
    );
}

#[test]
fn a_wrong_type_is_a_fatal_result_naming_the_field() {
    let message = fatal(json!({"deletionProtection": "yes"})).expect("fatal");
    assert!(
        message.contains("input.config.deletionProtection"),
        "{message}"
    );
}

#[test]
fn an_unknown_field_is_a_fatal_result_naming_it_and_the_closest_one() {
    let message = fatal(json!({"providerAPI": "cluster"})).expect("fatal");
    assert!(message.contains("input.config.providerAPI"), "{message}");
    assert!(message.contains("providerApi"), "{message}");
}

#[test]
fn settings_that_are_not_an_object_are_a_fatal_result() {
    let message = fatal(json!("cluster")).expect("fatal");
    assert!(message.contains("input.config"), "{message}");
}

/// The manifest's `config.schema`, compiled as function-wasm compiles it.
fn schema() -> jsonschema::Validator {
    let text = std::fs::read_to_string(repository().join("wasmfn.yaml")).unwrap();
    let manifest: Value = serde_yaml_ng::from_str(&text).unwrap();
    assert_eq!(manifest["abi"], 2);
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .build(&manifest["config"]["schema"])
        .expect("a JSON Schema")
}

/// The settings of this function's steps in every example Composition: a step's input, or the
/// `config` of a function-wasm step.
fn example_settings() -> Vec<(String, Value)> {
    let mut found = Vec::new();
    let mut folders = vec![repository().join("examples")];
    while let Some(folder) = folders.pop() {
        for path in std::fs::read_dir(&folder)
            .unwrap()
            .map(|e| e.unwrap().path())
        {
            if path.is_dir() {
                folders.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "yaml") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            for document in serde_yaml_ng::Deserializer::from_str(&text) {
                let Ok(document) = <Value as serde::Deserialize>::deserialize(document) else {
                    continue;
                };
                if document["kind"] != "Composition" {
                    continue;
                }
                for step in document["spec"]["pipeline"]
                    .as_array()
                    .into_iter()
                    .flatten()
                {
                    let input = &step["input"];
                    let api_version = input["apiVersion"].as_str().unwrap_or_default();
                    let settings = if api_version.starts_with("artifactory.fn.crossplane.io/") {
                        input.clone()
                    } else if api_version.starts_with("wasm.fn.crossplane.io/") {
                        input["config"].clone()
                    } else {
                        continue;
                    };
                    found.push((
                        format!("{} step {}", path.display(), step["step"]),
                        settings,
                    ));
                }
            }
        }
    }
    found
}

#[test]
fn the_schema_accepts_every_examples_settings() {
    let schema = schema();
    let settings = example_settings();
    assert!(settings.len() >= 4, "{settings:?}");
    assert!(
        settings.iter().any(|(at, _)| at.contains("function-wasm")),
        "the function-wasm example has settings"
    );
    for (at, settings) in settings {
        let errors: Vec<String> = schema
            .iter_errors(&settings)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{at}: {errors:?}");
    }
}

#[test]
fn the_schema_refuses_a_misspelled_field_and_a_wrong_value() {
    let schema = schema();
    for (settings, field) in [
        (json!({"providerAPI": "cluster"}), "providerAPI"),
        (json!({"naming": {"fromat": "{name}"}}), "fromat"),
        (json!({"defaults": {"deletionPolicy": "Keep"}}), "Keep"),
        (json!({"ttl": "sixty seconds"}), "sixty seconds"),
        (json!({"deletionProtection": "yes"}), "yes"),
    ] {
        let errors: Vec<String> = schema
            .iter_errors(&settings)
            .map(|e| e.to_string())
            .collect();
        assert!(
            errors.iter().any(|e| e.contains(field)),
            "{settings}: {errors:?}"
        );
    }
}
