//! What both fuzz targets check, shared with the corpus seeder.

use function_artifactory::proto::json::request_from_json;
use function_artifactory::proto::v1::{RunFunctionRequest, RunFunctionResponse};
use function_artifactory::run_function;
use prost::Message;
use serde_json::{json, Value};

/// Runs the core on `request` and checks what must hold for any request: the response carries
/// the request's tag, encodes and decodes back to itself, and the same request gives the same
/// bytes a second time. Panics (a fuzzer finding) when one does not hold.
pub fn check(request: &RunFunctionRequest) -> RunFunctionResponse {
    let response = run_function(request);
    let tag = request.meta.as_ref().map_or("", |m| m.tag.as_str());
    assert_eq!(
        response.meta.as_ref().map_or("", |m| m.tag.as_str()),
        tag,
        "the response's tag is the request's"
    );
    let bytes = response.encode_to_vec();
    let decoded = RunFunctionResponse::decode(bytes.as_slice()).expect("the response decodes");
    assert_eq!(decoded, response, "the response survives encoding");
    assert_eq!(
        run_function(request).encode_to_vec(),
        bytes,
        "the same request gives the same bytes"
    );
    response
}

/// A cluster-scoped composite with `spec`, as Crossplane sends a claim's XR.
pub fn composite(spec: Value) -> Value {
    json!({
        "apiVersion": "platform.example.org/v1alpha1",
        "kind": "XRepositories",
        "metadata": {"name": "team1-repos-x7k2p", "uid": "4f6c8f0e-0000-4000-8000-000000000001"},
        "spec": spec
    })
}

/// A valid function input (the cluster provider API).
pub fn input() -> Value {
    json!({
        "apiVersion": "artifactory.fn.crossplane.io/v1beta1",
        "kind": "Input",
        "providerApi": "cluster",
        "artifactoryUrl": "https://artifactory.example.com"
    })
}

/// A valid composite spec.
pub fn spec() -> Value {
    json!({
        "projectKey": "team1",
        "repositories": [
            {"name": "libs-release", "rclass": "local", "packageType": "maven"},
            {"name": "maven-central", "rclass": "remote", "packageType": "maven", "url": "https://repo1.maven.org/maven2"},
            {"name": "maven", "rclass": "virtual", "packageType": "maven", "repositories": ["libs-release", "maven-central"], "defaultDeploymentRepo": "libs-release"}
        ]
    })
}

/// The request (JSON mapping) for `composite` with `input`, tagged.
pub fn request(composite: Value, input: Value) -> RunFunctionRequest {
    let mut request = json!({
        "meta": {"tag": "fuzz", "capabilities": ["CAPABILITY_CAPABILITIES", "CAPABILITY_CONDITIONS"]},
        "observed": {"composite": {"resource": composite}},
    });
    if input.is_object() {
        request["input"] = input;
    }
    request_from_json(&request).expect("a request in the JSON mapping")
}
