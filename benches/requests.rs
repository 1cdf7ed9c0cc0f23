//! The requests of every benchmark, in one copy. Each includes this file with
//! `#[path = …] mod requests;`:
//!
//! - `benches/core.rs`, the core alone (divan);
//! - the end-to-end programs: the driver (`benches/e2e/driver.rs`), `profile-call`
//!   (`benches/e2e/profile.rs`) and the writer of the live schemas (`benches/e2e/schemas.rs`);
//! - the component host's benchmark, `tests/component-host/benches/calls.rs` (a workspace of
//!   its own, which depends on this crate by path and so can read this file by path too).
//!
//! There were three copies of the claim entries and builders, which could drift apart: a
//! native figure and a component figure (BENCHMARKS.md) compare only when both come from one
//! request. What one benchmark alone needs (the core benchmark's live schemas read from the
//! CRDs, the component's request from the cluster example) stays in that benchmark.
//!
//! Two claims, each with the requests built on it.
//!
//! The end-to-end claim (`our_request`): make_request.py's repositories in our contract, all
//! locals, nothing observed. Its bodies are compared byte for byte across commits
//! (`target/bench-e2e/*.bin`, the callgrind figures of `profile-call`): nothing here may change
//! its bytes.
//!
//! - plain: the claim, no capability (a Crossplane before v2.2, or one that sends nothing
//!   more);
//! - live: the same with `CAPABILITY_REQUIRED_SCHEMAS` and the schemas answered: what Crossplane
//!   v2.2 sends once the function asked for them, on every later call;
//! - reconcile: the two calls of one reconcile with every capability Crossplane v2.2 advertises:
//!   the first without schemas or required resources, the second with what the first asked for
//!   (the schemas, and no managed resource found for any key: a claim's first reconcile);
//! - steady: the same two calls in a reconcile of a claim whose resources exist, as every
//!   reconcile after its first: each resource the function composes observed as the provider
//!   reports it, and found again by its key's lookup in the second call.
//!
//! The mixed claim (`mixed_request`): locals, remotes and virtuals of ten package types, half
//! the resources observed ready, no settings. Since issue 49 it is the one request of both the
//! core benchmark (`run_function_call`, `decode_run_encode`, the live-schema and metrics
//! benchmarks) and the component benchmark, which sends it to the native core and to the
//! component alike, inside function-wasm's Input. Before, the core benchmark's main figures
//! used cargo as the tenth package type (every call failed on its virtual entries, see
//! `MIXED_TYPES`), and the component benchmark set `providerApi: cluster` in that Input.

// Each includer uses a part of it.
#![allow(dead_code)]
// `i % 2 == 0`, not `is_multiple_of` (Rust 1.87): the root crate's rust-version is 1.86; the
// component host sets none, and its clippy would ask for `is_multiple_of`.
#![allow(clippy::manual_is_multiple_of)]

use function_artifactory::proto::v1::{
    Capability, RequestMeta, Resource, Resources, RunFunctionRequest, Schema, State,
};
use function_artifactory::proto::Struct;
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// The end-to-end claim's package types, make_request.py's.
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

/// The two calls of a reconcile of a claim whose resources exist.
pub fn steady_requests(n: usize, answers: &BTreeMap<String, Schema>) -> [RunFunctionRequest; 2] {
    let [first, second] = reconcile_requests(n, answers);
    let observed = observed_as_composed(&second);
    [first, second].map(|request| with_observed(request, &observed))
}

/// The resources the function composes for `request`'s claim, as the provider reports them
/// once they exist.
pub fn observed_as_composed(request: &RunFunctionRequest) -> BTreeMap<String, Resource> {
    // Without capabilities the call renders in full, whichever call of a reconcile it is.
    let mut full = request.clone();
    full.meta = None;
    let desired = function_artifactory::run_function(&full)
        .desired
        .unwrap_or_default();
    desired
        .resources
        .into_iter()
        .map(|(name, resource)| {
            let mut object = resource.resource.unwrap_or_default().into_value();
            as_the_provider_reports_it(&mut object);
            let resource = Resource {
                resource: Some(Struct::from_value(object)),
                ..Resource::default()
            };
            (name, resource)
        })
        .collect()
}

/// `request` in a reconcile of a claim whose resources exist: `observed` among its observed
/// resources, and each `artifactory-key-<name>` lookup it answers finding resource `<name>`.
pub fn with_observed(
    mut request: RunFunctionRequest,
    observed: &BTreeMap<String, Resource>,
) -> RunFunctionRequest {
    let state = request.observed.get_or_insert_with(State::default);
    state.resources.extend(observed.clone());
    for (requirement, found) in &mut request.required_resources {
        let name = requirement.strip_prefix("artifactory-key-");
        if let Some(resource) = name.and_then(|name| observed.get(name)) {
            found.items = vec![resource.clone()];
        }
    }
    request
}

/// What the API server and the provider add to a managed resource once it exists: its
/// metadata, the managers of its fields (`managedFields`, which Crossplane sends as the API
/// server keeps them), and a status with every field the provider reads back.
fn as_the_provider_reports_it(object: &mut Value) {
    let key = object["metadata"]["annotations"]["crossplane.io/external-name"].clone();
    let for_provider = object["spec"]["forProvider"].clone();
    let fields = |object: &Value| -> Value {
        let names = object.as_object().into_iter().flat_map(|o| o.keys());
        Value::Object(names.map(|name| (format!("f:{name}"), json!({}))).collect())
    };
    let owner_uid = "0b6f4c1e-6a0e-4e63-9d6c-3a7a4f7f3c11";
    let managed_fields = json!([
        {
            "apiVersion": object["apiVersion"], "fieldsType": "FieldsV1",
            "manager": "apiextensions.crossplane.io/composed/7c0e5d9a4b2f", "operation": "Apply",
            "time": "2026-11-20T10:00:00Z",
            "fieldsV1": {
                "f:metadata": {
                    "f:annotations": fields(&object["metadata"]["annotations"]),
                    "f:labels": fields(&object["metadata"]["labels"]),
                    "f:ownerReferences": {format!("k:{{\"uid\":\"{owner_uid}\"}}"): {}}
                },
                "f:spec": {
                    "f:forProvider": fields(&for_provider),
                    "f:providerConfigRef": {"f:name": {}}
                }
            }
        },
        {
            "apiVersion": object["apiVersion"], "fieldsType": "FieldsV1",
            "manager": "provider-artifactory", "operation": "Update", "subresource": "status",
            "time": "2026-11-20T10:00:05Z",
            "fieldsV1": {"f:status": {
                "f:atProvider": fields(&for_provider),
                "f:conditions": {"k:{\"type\":\"Ready\"}": {}, "k:{\"type\":\"Synced\"}": {}}
            }}
        },
        {
            "apiVersion": object["apiVersion"], "fieldsType": "FieldsV1",
            "manager": "provider-artifactory", "operation": "Update",
            "time": "2026-11-20T10:00:04Z",
            "fieldsV1": {"f:metadata": {
                "f:annotations": {
                    "f:crossplane.io/external-create-pending": {},
                    "f:crossplane.io/external-create-succeeded": {}
                },
                "f:finalizers": {"v:\"finalizer.managedresource.crossplane.io\"": {}}
            }}
        }
    ]);
    let metadata = &mut object["metadata"];
    metadata["uid"] = json!("3f0c7a52-8d0e-4a8e-9d55-0c1f5c7f2a10");
    metadata["generation"] = json!(1);
    metadata["creationTimestamp"] = json!("2026-11-20T10:00:00Z");
    metadata["resourceVersion"] = json!("123456");
    metadata["finalizers"] = json!(["finalizer.managedresource.crossplane.io"]);
    metadata["annotations"]["crossplane.io/external-create-pending"] =
        json!("2026-11-20T10:00:01Z");
    metadata["annotations"]["crossplane.io/external-create-succeeded"] =
        json!("2026-11-20T10:00:02Z");
    metadata["ownerReferences"] = json!([{
        "apiVersion": "platform.example.org/v1alpha1", "kind": "XRepositories",
        "name": "team-a-repos", "uid": owner_uid,
        "controller": true, "blockOwnerDeletion": true
    }]);
    metadata["managedFields"] = managed_fields;
    let mut at_provider = for_provider;
    at_provider["key"] = key.clone();
    at_provider["id"] = key;
    object["status"] = json!({
        "atProvider": at_provider,
        "conditions": [
            {"type": "Ready", "status": "True", "reason": "Available",
             "lastTransitionTime": "2026-11-20T10:00:05Z", "observedGeneration": 1},
            {"type": "Synced", "status": "True", "reason": "ReconcileSuccess",
             "lastTransitionTime": "2026-11-20T10:00:03Z", "observedGeneration": 1}
        ]
    });
}

/// A message in a gRPC frame.
pub fn framed(message: &[u8]) -> Vec<u8> {
    let mut out = vec![0u8];
    out.extend_from_slice(&(message.len() as u32).to_be_bytes());
    out.extend_from_slice(message);
    out
}

/// The mixed claim's package types: the end-to-end claim's `TYPES` with conan for cargo. Every
/// tenth entry is a virtual of the tenth type, and cargo has no virtual kind: with cargo every
/// call fails on those entries and renders nothing.
pub const MIXED_TYPES: [&str; 10] = [
    "maven", "npm", "docker", "pypi", "generic", "gradle", "helm", "go", "nuget", "conan",
];

/// Entry `i` of the mixed claim: every tenth a virtual of the tenth type, every fifth a remote,
/// the others locals with provider fields. A virtual lists the locals of its type among the nine
/// entries before it: none, as the types go round in tens, so each virtual has no member.
pub fn mixed_entry(i: usize) -> Value {
    let package_type = MIXED_TYPES[i % MIXED_TYPES.len()];
    let name = format!("{package_type}-{i:05}");
    if i % 10 == 9 {
        let members: Vec<String> = (i - 9..i)
            .filter(|m| MIXED_TYPES[m % 10] == package_type)
            .map(|m| format!("{}-{m:05}", MIXED_TYPES[m % 10]))
            .collect();
        json!({"name": name, "rclass": "virtual", "packageType": package_type, "repositories": members})
    } else if i % 5 == 4 {
        json!({"name": name, "rclass": "remote", "packageType": package_type, "url": "https://upstream.example.com/r"})
    } else {
        json!({"name": name, "rclass": "local", "packageType": package_type, "description": format!("Local {package_type} #{i}"),
               "forProvider": {"includesPattern": "**/*", "excludesPattern": "**/*.tmp", "xrayIndex": i % 2 == 0}})
    }
}

/// A steady-state reconcile of the mixed claim of `n` entries: every other resource the
/// function composes for it observed and ready (the first, third, … in name order), the others
/// not yet created. No input: every setting at its default.
pub fn mixed_request(n: usize) -> RunFunctionRequest {
    let composite = json!({
        "apiVersion": "platform.example.org/v1alpha1", "kind": "XRepositories",
        "metadata": {"name": "team-a-repos", "uid": "0b6f4c1e-6a0e-4e63-9d6c-3a7a4f7f3c11"},
        "spec": {"projectKey": "team-a", "repositories": (0..n).map(mixed_entry).collect::<Vec<_>>()}
    });
    let composed = function_artifactory::run_function(&RunFunctionRequest {
        observed: Some(State {
            composite: Some(resource(composite.clone())),
            resources: BTreeMap::new(),
        }),
        ..RunFunctionRequest::default()
    });
    let observed: BTreeMap<String, Resource> = composed
        .desired
        .unwrap_or_default()
        .resources
        .into_iter()
        .enumerate()
        .filter(|(i, _)| i % 2 == 0)
        .map(|(_, (name, r))| {
            let mut object = r.resource.unwrap_or_default().into_value();
            object["status"] =
                json!({"conditions": [{"type": "Ready", "status": "True", "reason": "Available"}]});
            (name, resource(object))
        })
        .collect();
    RunFunctionRequest {
        meta: Some(RequestMeta {
            tag: "bench".into(),
            capabilities: vec![],
        }),
        observed: Some(State {
            composite: Some(resource(composite)),
            resources: observed,
        }),
        desired: Some(State::default()),
        ..RunFunctionRequest::default()
    }
}

/// `object` as a resource of a request.
pub fn resource(object: Value) -> Resource {
    Resource {
        resource: Some(Struct::from_value(object)),
        ..Resource::default()
    }
}
