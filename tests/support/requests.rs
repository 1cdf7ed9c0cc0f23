//! Building requests as Crossplane sends them, running the core, reading responses,
//! and validating rendered resources against the provider CRDs.

use super::crd::{provider_crds, Crds};
use function_artifactory::proto::v1::{
    Capability, RequestMeta, Resource, RunFunctionRequest, RunFunctionResponse, Severity, State,
};
use function_artifactory::proto::Struct;
use function_artifactory::run_function;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::sync::OnceLock;

/// A cluster-scoped composite (a claim's XR) with `spec`.
pub fn composite(spec: Value) -> Value {
    json!({
        "apiVersion": "platform.example.org/v1alpha1",
        "kind": "XRepositories",
        "metadata": {
            "name": "team1-repos-x7k2p",
            "uid": "4f6c8f0e-0000-4000-8000-000000000001",
            "labels": {
                "crossplane.io/claim-name": "team1-repos",
                "crossplane.io/claim-namespace": "team1",
                "crossplane.io/composite": "team1-repos-x7k2p"
            }
        },
        "spec": spec
    })
}

/// A namespaced (Crossplane v2) composite with `spec`.
pub fn namespaced_composite(spec: Value) -> Value {
    json!({
        "apiVersion": "platform.example.org/v1alpha1",
        "kind": "Repositories",
        "metadata": {"name": "team1-repos", "namespace": "team1", "uid": "4f6c8f0e-0000-4000-8000-000000000002"},
        "spec": spec
    })
}

/// Builds a request step by step.
#[derive(Clone, Debug, Default)]
pub struct RequestBuilder {
    request: RunFunctionRequest,
}

pub fn request(composite: Value) -> RequestBuilder {
    RequestBuilder {
        request: RunFunctionRequest {
            meta: Some(RequestMeta {
                tag: "test-tag".into(),
                capabilities: vec![
                    Capability::Capabilities as i32,
                    Capability::Conditions as i32,
                ],
            }),
            observed: Some(State {
                composite: Some(resource(composite)),
                resources: BTreeMap::new(),
            }),
            desired: Some(State::default()),
            ..RunFunctionRequest::default()
        },
    }
}

pub fn resource(object: Value) -> Resource {
    Resource {
        resource: Some(Struct::from_value(object)),
        ..Resource::default()
    }
}

impl From<RunFunctionRequest> for RequestBuilder {
    /// Goes on from a request built before, changed by hand.
    fn from(request: RunFunctionRequest) -> Self {
        RequestBuilder { request }
    }
}

impl RequestBuilder {
    pub fn input(mut self, input: Value) -> Self {
        self.request.input = Some(Struct::from_value(input));
        self
    }

    pub fn observed(mut self, name: &str, object: Value) -> Self {
        let observed = self.request.observed.get_or_insert_with(State::default);
        observed.resources.insert(name.into(), resource(object));
        self
    }

    pub fn desired(mut self, name: &str, object: Value) -> Self {
        let desired = self.request.desired.get_or_insert_with(State::default);
        desired.resources.insert(name.into(), resource(object));
        self
    }

    pub fn context(mut self, context: Value) -> Self {
        self.request.context = Some(Struct::from_value(context));
        self
    }

    /// Advertises one more capability, as a Crossplane that honours it does.
    pub fn capability(mut self, capability: Capability) -> Self {
        let meta = self.request.meta.get_or_insert_with(Default::default);
        meta.capabilities.push(capability as i32);
        self
    }

    pub fn build(self) -> RunFunctionRequest {
        self.request
    }

    pub fn run(self) -> RunFunctionResponse {
        run_function(&self.request)
    }
}

/// Two requests alike but for their composite's labels: the committed pair of label maps whose
/// content hashes are one under the fixed key (`tests/collision/labels.json`, written by the
/// k-tree search in `src/proto/structpb/collision_tests.rs`), which also differ in the claim's
/// name, and a naming format that puts that name in every key, so that their answers differ.
pub fn colliding_requests() -> [RunFunctionRequest; 2] {
    let labels: Value = serde_json::from_str(include_str!("../collision/labels.json"))
        .expect("the committed labels");
    ["a", "b"].map(|side| {
        let spec = json!({"repositories": [
            {"name": "libs", "rclass": "local", "packageType": "maven"},
        ]});
        let mut object = composite(spec);
        let own = object["metadata"]["labels"]
            .as_object_mut()
            .expect("labels");
        own.extend(labels[side].as_object().expect("a map").clone());
        request(object)
            .input(input(json!({"naming": {"format": "{claimName}-{name}"}})))
            .build()
    })
}

/// The input with fields merged over the apiVersion and kind.
pub fn input(fields: Value) -> Value {
    let mut input = json!({"apiVersion": "artifactory.fn.crossplane.io/v1beta1", "kind": "Input"});
    for (k, v) in fields.as_object().expect("input fields").clone() {
        input[k] = v;
    }
    input
}

/// The message of the fatal result, if there is one.
pub fn fatal_message(response: &RunFunctionResponse) -> Option<String> {
    response
        .results
        .iter()
        .find(|r| r.severity == Severity::Fatal as i32)
        .map(|r| r.message.clone())
}

/// The desired composite resource of a response, as JSON; panics when there is none.
pub fn desired_composite(response: &RunFunctionResponse) -> Value {
    desired_composite_object(response)
        .expect("a desired composite")
        .into_value()
}

fn desired_composite_object(response: &RunFunctionResponse) -> Option<Struct> {
    response
        .desired
        .as_ref()
        .and_then(|d| d.composite.as_ref())
        .and_then(|c| c.resource.clone())
}

/// Asserts success and returns the desired composed resources by name.
pub fn desired_resources(response: &RunFunctionResponse) -> BTreeMap<String, Value> {
    if let Some(message) = fatal_message(response) {
        panic!("unexpected fatal result:\n{message}");
    }
    response
        .desired
        .as_ref()
        .map(|d| {
            d.resources
                .iter()
                .map(|(name, r)| {
                    (
                        name.clone(),
                        r.resource.clone().unwrap_or_default().into_value(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// `status.repositories` of the desired composite.
pub fn status_repositories(response: &RunFunctionResponse) -> Vec<Value> {
    let value = desired_composite_object(response)
        .unwrap_or_default()
        .into_value();
    value["status"]["repositories"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// The provider CRDs of one folder (`flat`, `cluster`, `namespaced`), loaded once;
/// `None` (with a visible SKIP line) where the tests run without the `codegen` feature.
pub fn crds(folder: &str) -> Option<&'static Crds> {
    static CACHE: [OnceLock<Crds>; 3] = [OnceLock::new(), OnceLock::new(), OnceLock::new()];
    let slot = ["flat", "cluster", "namespaced"]
        .iter()
        .position(|f| *f == folder)
        .expect("known folder");
    if let Some(crds) = CACHE[slot].get() {
        return Some(crds);
    }
    let crds = provider_crds(folder)?;
    Some(CACHE[slot].get_or_init(|| crds))
}

/// Validates every rendered resource against the folder's CRDs; panics with every violation.
/// Returns false (and prints SKIP) where the CRDs are absent.
pub fn assert_valid(folder: &str, resources: &BTreeMap<String, Value>) -> bool {
    let Some(crds) = crds(folder) else {
        return false;
    };
    let mut violations = Vec::new();
    for (name, resource) in resources {
        for violation in crds.validate(resource) {
            violations.push(format!("{name}: {violation}"));
        }
    }
    assert!(
        violations.is_empty(),
        "rendered resources violate the CRDs:\n{}",
        violations.join("\n")
    );
    true
}

/// An observed managed resource as Crossplane sends it: the composed resource
/// the function rendered, with a generated name, the key label and conditions.
pub fn live(api_version: &str, kind: &str, key: &str, ready: bool) -> Value {
    let status = if ready { "True" } else { "False" };
    let reason = if ready { "Available" } else { "Creating" };
    json!({
        "apiVersion": api_version,
        "kind": kind,
        "metadata": {
            "name": format!("team1-repos-x7k2p-{}", key.len()),
            "annotations": {"crossplane.io/external-name": key},
            "labels": {"artifactory.fn.crossplane.io/key": key.to_lowercase()}
        },
        "spec": {"forProvider": {}},
        "status": {"conditions": [
            {"type": "Ready", "status": status, "reason": reason, "lastTransitionTime": "2026-11-01T10:00:00Z"},
            {"type": "Synced", "status": "True", "reason": "ReconcileSuccess", "lastTransitionTime": "2026-11-01T10:00:00Z"}
        ]}
    })
}

/// A claim too large for one composite (issue 47): 5,000 local maven repositories, `local-00000`
/// to `local-04999`, with a long description, and no input. The npm module
/// (`wasm/test/size.test.mjs`) and the component host build the same request.
pub fn five_thousand_repositories() -> RunFunctionRequest {
    const DESCRIPTION: &str = "Releases of the libraries of team one, built by CI from the main branch of each library's repository and promoted here once their tests pass; snapshots go to the snapshot repository, and nothing here is ever deleted by hand.";
    let repositories: Vec<Value> = (0..5_000)
        .map(|i| json!({"name": format!("local-{i:05}"), "rclass": "local", "packageType": "maven", "description": DESCRIPTION}))
        .collect();
    request(composite(json!({ "repositories": repositories }))).build()
}

/// The second line of the fatal message for [`five_thousand_repositories`], from every face.
pub const FIVE_THOUSAND_ADVICE: &str = "- spec.repositories: the response would be about 4.6 MiB (4,840,000 bytes) for 5000 repositories: more than the 4.0 MiB (4,194,304 bytes) Crossplane reads (its function runner uses gRPC's default receive limit), so Crossplane would fail the call without saying why; fix: split the repositories over several composites: about 4332 fit in one";
