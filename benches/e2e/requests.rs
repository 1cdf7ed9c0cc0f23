//! The requests of the end-to-end benchmark, shared by the driver (`driver.rs`) and the writer
//! of the live schemas (`schemas.rs`).
//!
//! - plain: make_request.py's repositories in our contract, no capability (a Crossplane before
//!   v2.2, or one that sends nothing more);
//! - live: the same with `CAPABILITY_REQUIRED_SCHEMAS` and the schemas answered: what Crossplane
//!   v2.2 sends once the function asked for them, on every later call;
//! - reconcile: the two calls of one reconcile with every capability Crossplane v2.2 advertises:
//!   the first without schemas or required resources, the second with what the first asked for
//!   (the schemas, and no managed resource found for any key: a claim's first reconcile).

#![allow(dead_code)]

use function_artifactory::proto::v1::{
    Capability, RequestMeta, Resource, Resources, RunFunctionRequest, Schema, State,
};
use function_artifactory::proto::Struct;
use serde_json::{json, Value};
use std::collections::BTreeMap;

pub const TYPES: [&str; 10] = [
    "maven", "npm", "docker", "pypi", "generic", "gradle", "helm", "go", "nuget", "cargo",
];

fn layout(t: &str) -> &'static str {
    match t {
        "maven" => "maven-2-default",
        "gradle" => "gradle-default",
        "npm" => "npm-default",
        "go" => "go-default",
        "nuget" => "nuget-default",
        "cargo" => "cargo-default",
        _ => "simple-default",
    }
}

/// make_request.py's repositories, in function-artifactory's contract.
pub fn our_request(n: usize) -> RunFunctionRequest {
    let repositories: Vec<Value> = (0..n)
        .map(|i| {
            let t = TYPES[i % TYPES.len()];
            json!({
                "name": format!("team-a-{t}-local-{i:04}"),
                "rclass": "local",
                "packageType": t,
                "description": format!("Local {t} repository #{i} for team A"),
                "forProvider": {
                    "includesPattern": "**/*",
                    "excludesPattern": "**/*.tmp",
                    "repoLayoutRef": layout(t),
                    "xrayIndex": i % 2 == 0,
                },
            })
        })
        .collect();
    let composite = json!({
        "apiVersion": "platform.example.org/v1alpha1",
        "kind": "XRepositories",
        "metadata": {"name": "team-a-repos", "uid": "0b6f4c1e-6a0e-4e63-9d6c-3a7a4f7f3c11",
                     "labels": {"crossplane.io/composite": "team-a-repos"}},
        "spec": {"providerConfigRef": {"name": "artifactory-prod"}, "repositories": repositories},
    });
    RunFunctionRequest {
        meta: Some(RequestMeta {
            tag: "bench".into(),
            capabilities: vec![],
        }),
        observed: Some(State {
            composite: Some(Resource {
                resource: Some(Struct::from_value(composite)),
                ..Resource::default()
            }),
            resources: BTreeMap::new(),
        }),
        desired: Some(State::default()),
        ..RunFunctionRequest::default()
    }
}

/// `request` advertising `capabilities`.
pub fn with_capabilities(
    mut request: RunFunctionRequest,
    capabilities: &[Capability],
) -> RunFunctionRequest {
    request
        .meta
        .get_or_insert_with(RequestMeta::default)
        .capabilities = capabilities.iter().map(|c| *c as i32).collect();
    request
}

/// What Crossplane v2.2 and later advertise.
pub const CROSSPLANE_V2_2: [Capability; 5] = [
    Capability::Capabilities,
    Capability::RequiredResources,
    Capability::Credentials,
    Capability::Conditions,
    Capability::RequiredSchemas,
];

/// The live-schema call: the schemas asked for, answered from `answers` (by requirement name).
pub fn live_request(n: usize, answers: &BTreeMap<String, Schema>) -> RunFunctionRequest {
    let mut request = with_capabilities(our_request(n), &[Capability::RequiredSchemas]);
    request.required_schemas = answers.clone();
    request
}

/// The two calls of a reconcile: the first, and the second with what the first asked for.
pub fn reconcile_requests(n: usize, answers: &BTreeMap<String, Schema>) -> [RunFunctionRequest; 2] {
    let first = with_capabilities(our_request(n), &CROSSPLANE_V2_2);
    let asked = function_artifactory::run_function(&first)
        .requirements
        .unwrap_or_default();
    let mut second = first.clone();
    second.required_schemas = asked
        .schemas
        .keys()
        .map(|name| (name.clone(), answers.get(name).cloned().unwrap_or_default()))
        .collect();
    second.required_resources = asked
        .resources
        .keys()
        .map(|name| (name.clone(), Resources::default()))
        .collect();
    [first, second]
}

/// A message in a gRPC frame.
pub fn framed(message: &[u8]) -> Vec<u8> {
    let mut out = vec![0u8];
    out.extend_from_slice(&(message.len() as u32).to_be_bytes());
    out.extend_from_slice(message);
    out
}
