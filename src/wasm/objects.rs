//! The function for tools that hold plain JSON objects rather than protocol
//! messages (the WebAssembly module's `renderComposite` and `kinds`, the
//! playground): a composite in, the rendered resources, status, results and
//! the problems found out, each problem with the repository entry it belongs
//! to. It runs the same [`crate::core::function::run_function`] as the server.

use crate::core::catalog::{catalog, ProviderApi};
use crate::core::function::run_function_with_findings;
use crate::core::problems::Findings;
use crate::proto::json::wire_struct;
use crate::proto::v1::{
    Capability, Condition, RequestMeta, Resource, Result as FnResult, RunFunctionRequest,
    RunFunctionResponse, Severity, State, Status, Target,
};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

/// The annotation Crossplane puts on a composed resource: the name it has in the composition.
pub(super) const COMPOSITION_RESOURCE_NAME: &str = "crossplane.io/composition-resource-name";

/// An argument of `renderComposite` or `kinds` that is not of the shape they take; the
/// message is what JavaScript sees.
#[derive(Debug, thiserror::Error)]
pub(super) enum ArgumentError {
    #[error("renderComposite takes an object: {{composite, observed?, input?}}")]
    NotAnObject,
    #[error(
        "renderComposite: `composite` must be an object: the composite resource (or claim) \
         with its spec, parsed from YAML"
    )]
    Composite,
    #[error("renderComposite: `observed[{0:?}]` must be an object (a managed resource)")]
    ObservedByName(String),
    #[error(
        "renderComposite: `observed[{0}]` must be a managed resource annotated \
         {COMPOSITION_RESOURCE_NAME}, or pass `observed` as an object keyed by that name"
    )]
    ObservedInList(usize),
    #[error(
        "renderComposite: `observed` must be an object keyed by composition resource name, or a \
         list of managed resources"
    )]
    Observed,
    #[error("renderComposite: `input` must be an object (the pipeline step's input)")]
    Input,
    #[error("unknown provider API {0:?}; use one of: flat, cluster, namespaced")]
    ProviderApi(String),
}

/// Renders a composite: `args` is `{composite, observed?, input?}` with
/// `composite` the observed composite resource (or claim), `observed` its
/// observed composed resources, by composition resource name or as a list of
/// resources annotated with it, and `input` the pipeline step's input.
///
/// Returns `{resources, ready, composite, results, conditions, problems,
/// problemsOmitted, warnings}` (`problems`: the first 100 the call found; `problemsOmitted`:
/// how many more); an `Err` only when `args` is not of that shape.
pub(super) fn render_composite(args: &Value) -> Result<Value, ArgumentError> {
    let request = request_for(args)?;
    let (response, findings) = run_function_with_findings(&request);
    Ok(plain_response(&response, &findings))
}

/// The request `render_composite` runs: no tag, an empty desired state, and the conditions
/// capability, as Crossplane (1.17 and later) sends it, so that a fatal call shows what a
/// claim's author would see (`RepositoriesReady` False with the problems).
pub(super) fn request_for(args: &Value) -> Result<RunFunctionRequest, ArgumentError> {
    let Value::Object(args) = args else {
        return Err(ArgumentError::NotAnObject);
    };
    let composite = match args.get("composite") {
        Some(Value::Object(composite)) => composite,
        _ => return Err(ArgumentError::Composite),
    };
    let observed = match args.get("observed") {
        None | Some(Value::Null) => BTreeMap::new(),
        // Inserted, not collected: collecting into a map sorts first (crate::core::sorted).
        Some(Value::Object(by_name)) => {
            let mut observed = BTreeMap::new();
            for (name, object) in by_name {
                match object {
                    Value::Object(object) => observed.insert(name.clone(), resource(object)),
                    _ => return Err(ArgumentError::ObservedByName(name.clone())),
                };
            }
            observed
        }
        Some(Value::Array(list)) => {
            let mut observed = BTreeMap::new();
            for (i, object) in list.iter().enumerate() {
                let name = object
                    .pointer("/metadata/annotations")
                    .and_then(|a| a.get(COMPOSITION_RESOURCE_NAME))
                    .and_then(Value::as_str);
                match (object, name) {
                    (Value::Object(object), Some(name)) => {
                        observed.insert(name.to_owned(), resource(object))
                    }
                    _ => return Err(ArgumentError::ObservedInList(i)),
                };
            }
            observed
        }
        Some(_) => return Err(ArgumentError::Observed),
    };
    let input = match args.get("input") {
        None | Some(Value::Null) => None,
        Some(Value::Object(input)) => Some(wire_struct(input)),
        Some(_) => return Err(ArgumentError::Input),
    };
    Ok(RunFunctionRequest {
        observed: Some(State {
            composite: Some(resource(composite)),
            resources: observed,
        }),
        desired: Some(State::default()),
        input,
        meta: Some(RequestMeta {
            capabilities: vec![Capability::Conditions as i32],
            ..RequestMeta::default()
        }),
        ..RunFunctionRequest::default()
    })
}

fn resource(object: &Map<String, Value>) -> Resource {
    Resource {
        resource: Some(wire_struct(object)),
        ..Resource::default()
    }
}

/// The response and findings as plain objects.
pub(super) fn plain_response(response: &RunFunctionResponse, findings: &Findings) -> Value {
    let desired = response.desired.clone().unwrap_or_default();
    let mut resources = Map::new();
    let mut ready = Map::new();
    for (name, r) in desired.resources {
        ready.insert(name.clone(), Value::Bool(r.ready == 1));
        resources.insert(name, r.resource.unwrap_or_default().into_value());
    }
    let composite = desired
        .composite
        .and_then(|c| c.resource)
        .map_or(Value::Null, |s| s.into_value());
    let problems = findings
        .problems
        .iter()
        .map(|p| {
            json!({
                "category": p.category.reason(),
                "path": p.path,
                "entry": p.entry,
                "message": p.message,
                "fix": p.fix,
            })
        })
        .collect();
    let warnings = findings
        .warnings
        .iter()
        .map(|w| json!({"path": w.path, "entry": w.entry, "message": w.message}))
        .collect();
    json!({
        "resources": resources,
        "ready": ready,
        "composite": composite,
        "results": response.results.iter().map(plain_result).collect::<Vec<_>>(),
        "conditions": response.conditions.iter().map(plain_condition).collect::<Vec<_>>(),
        "problems": Value::Array(problems),
        "problemsOmitted": findings.omitted_problems(),
        "warnings": Value::Array(warnings),
    })
}

fn plain_result(result: &FnResult) -> Value {
    let severity = match Severity::try_from(result.severity) {
        Ok(Severity::Fatal) => "Fatal",
        Ok(Severity::Warning) => "Warning",
        Ok(Severity::Normal) => "Normal",
        _ => "Unspecified",
    };
    let mut out = json!({"severity": severity, "message": result.message});
    if let Some(reason) = &result.reason {
        out["reason"] = json!(reason);
    }
    if let Some(target) = result.target {
        out["target"] = json!(target_name(target));
    }
    out
}

fn plain_condition(condition: &Condition) -> Value {
    let status = match Status::try_from(condition.status) {
        Ok(Status::ConditionTrue) => "True",
        Ok(Status::ConditionFalse) => "False",
        _ => "Unknown",
    };
    let mut out = json!({"type": condition.r#type, "status": status, "reason": condition.reason});
    if let Some(message) = &condition.message {
        out["message"] = json!(message);
    }
    if let Some(target) = condition.target {
        out["target"] = json!(target_name(target));
    }
    out
}

fn target_name(target: i32) -> &'static str {
    match Target::try_from(target) {
        Ok(Target::CompositeAndClaim) => "CompositeAndClaim",
        _ => "Composite",
    }
}

/// The kinds the function renders, per provider API (`{flat: [...], cluster:
/// [...], namespaced: [...]}`), or for one API (a list), each
/// `{rclass, packageType, apiVersion, kind, namespaced}`.
pub(super) fn kinds(api: Option<&str>) -> Result<Value, ArgumentError> {
    let list = |api: ProviderApi| -> Value {
        catalog()
            .kinds(api)
            .map(|k| {
                json!({
                    "rclass": k.rclass.as_str(),
                    "packageType": k.package_type,
                    "apiVersion": k.api_version,
                    "kind": k.kind,
                    "namespaced": k.namespaced,
                })
            })
            .collect()
    };
    match api {
        None => Ok(Value::Object(
            ProviderApi::ALL
                .into_iter()
                .map(|api| (api.as_str().to_owned(), list(api)))
                .collect(),
        )),
        Some(text) => match ProviderApi::parse(text) {
            Some(api) => Ok(list(api)),
            None => Err(ArgumentError::ProviderApi(text.to_owned())),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claim(repositories: Value) -> Value {
        json!({
            "apiVersion": "platform.example.org/v1alpha1",
            "kind": "XRepositories",
            "metadata": {"name": "team1-repos"},
            "spec": {"repositories": repositories}
        })
    }

    #[test]
    fn renders_resources_status_and_conditions() {
        let out = render_composite(&json!({
            "composite": claim(json!([{"name": "libs", "rclass": "local", "packageType": "maven"}])),
            "input": {"providerApi": "flat"}
        }))
        .unwrap();
        assert_eq!(out["resources"]["libs"]["kind"], "LocalMavenRepository");
        assert_eq!(out["ready"]["libs"], false);
        assert_eq!(out["composite"]["status"]["repositories"][0]["key"], "libs");
        assert_eq!(out["conditions"][0]["type"], "RepositoriesReady");
        assert_eq!(out["conditions"][0]["status"], "False");
        assert_eq!(out["problems"], json!([]));
    }

    #[test]
    fn problems_carry_their_entry() {
        let out = render_composite(&json!({
            "composite": claim(json!([
                {"name": "ok", "rclass": "local", "packageType": "maven"},
                {"name": "bad", "rclass": "local", "packageType": "maven", "key": "libs-cache"}
            ]))
        }))
        .unwrap();
        assert_eq!(out["resources"], json!({}));
        // The claim's Warning first, then the Fatal result for the composite.
        assert_eq!(out["results"][0]["severity"], "Warning");
        assert_eq!(out["results"][1]["severity"], "Fatal");
        assert_eq!(out["results"][1]["reason"], "InvalidKey");
        assert_eq!(out["conditions"][0]["status"], "False");
        assert_eq!(out["problems"][0]["entry"], 1);
        assert_eq!(out["problems"][0]["path"], "spec.repositories[1].key");
        let message = out["results"][1]["message"].as_str().unwrap();
        assert!(message.contains(out["problems"][0]["message"].as_str().unwrap()));
    }

    #[test]
    fn observed_resources_by_name_or_annotation_are_the_same() {
        let live = json!({
            "apiVersion": "artifactory.jfrog.crossplane.io/v1alpha1",
            "kind": "LocalMavenRepository",
            "metadata": {"name": "x-1", "annotations": {
                "crossplane.io/external-name": "libs",
                COMPOSITION_RESOURCE_NAME: "libs"
            }},
            "status": {"conditions": [{"type": "Ready", "status": "True"}]}
        });
        let composite = claim(json!([{"name": "libs", "rclass": "local", "packageType": "maven"}]));
        let input = json!({"providerApi": "flat"});
        let by_name = render_composite(
            &json!({"composite": composite, "input": input, "observed": {"libs": live}}),
        )
        .unwrap();
        let listed =
            render_composite(&json!({"composite": composite, "input": input, "observed": [live]}))
                .unwrap();
        assert_eq!(by_name, listed);
        assert_eq!(by_name["ready"]["libs"], true);
    }

    #[test]
    fn wrong_shapes_are_errors() {
        assert!(render_composite(&json!([])).is_err());
        assert!(render_composite(&json!({}))
            .unwrap_err()
            .to_string()
            .contains("`composite`"));
        let composite = claim(json!([]));
        let err = render_composite(&json!({"composite": composite, "observed": [{}]}))
            .unwrap_err()
            .to_string();
        assert!(err.contains("observed[0]"), "{err}");
        assert!(err.contains(COMPOSITION_RESOURCE_NAME), "{err}");
        assert!(render_composite(&json!({"composite": composite, "input": "x"})).is_err());
    }

    #[test]
    fn kinds_per_api() {
        let all = kinds(None).unwrap();
        for api in ["flat", "cluster", "namespaced"] {
            assert!(all[api].as_array().unwrap().len() > 90);
            assert_eq!(kinds(Some(api)).unwrap(), all[api]);
        }
        assert!(kinds(Some("v2"))
            .unwrap_err()
            .to_string()
            .contains("flat, cluster, namespaced"));
    }
}
