//! Remote credentials (issue 18): `username` and `password.secretRef` rendered as
//! the provider's secret references for each API, write-only passwords versioned
//! by the Secret's resourceVersion, and no Secret value in any output.

use crate::support;

use function_artifactory::proto::v1::Schema;
use function_artifactory::proto::v1::{
    Capability, Resources, RunFunctionRequest, RunFunctionResponse,
};
use function_artifactory::proto::Struct;
use function_artifactory::run_function;
use function_artifactory::validation::requirement_name;
use serde_json::{json, Value};
use support::requests::{
    assert_valid, composite, desired_resources, fatal_message, input, namespaced_composite,
    request, resource, status_repositories,
};

/// A value that must never leave the Secret.
const SECRET_VALUE: &str = "s3cr3t-Upstream-Passw0rd";

fn remote(password: Value) -> Value {
    json!({"name": "central", "rclass": "remote", "packageType": "maven",
           "url": "https://repo1.maven.org/maven2", "username": "ci", "password": password})
}

fn spec(password: Value) -> Value {
    json!({"repositories": [remote(password)]})
}

fn for_provider(response: &RunFunctionResponse) -> Value {
    desired_resources(response)["central"]["spec"]["forProvider"].clone()
}

#[test]
fn cluster_api_namespace_defaults_to_the_claims() {
    let response = request(composite(spec(
        json!({"secretRef": {"name": "upstream", "key": "password"}}),
    )))
    .run();
    let fields = for_provider(&response);
    assert_eq!(fields["username"], "ci");
    assert_eq!(
        fields["passwordSecretRef"],
        json!({"key": "password", "name": "upstream", "namespace": "team1"})
    );
    assert!(fields.get("passwordWoSecretRef").is_none());
    assert!(assert_valid("cluster", &desired_resources(&response)));
    // A namespace given wins where the platform allows it (a claim's own, else the input's
    // allowedSecretNamespaces: tests/function/tenancy.rs).
    let response = request(composite(spec(
        json!({"secretRef": {"name": "upstream", "key": "password", "namespace": "vault"}}),
    )))
    .input(input(json!({"allowedSecretNamespaces": ["vault"]})))
    .run();
    assert_eq!(
        for_provider(&response)["passwordSecretRef"]["namespace"],
        "vault"
    );
}

#[test]
fn cluster_api_without_claim_or_namespace_needs_one() {
    let mut xr = composite(spec(
        json!({"secretRef": {"name": "upstream", "key": "password"}}),
    ));
    xr["metadata"].as_object_mut().unwrap().remove("labels");
    let message = fatal_message(&request(xr).run()).expect("a fatal result");
    assert!(message.contains("- spec.repositories[0].password.secretRef.namespace: repository \"central\": the password's Secret has no namespace, and the composite has no claim or namespace to take it from; fix: set password.secretRef.namespace to the Secret's namespace"), "{message}");
}

#[test]
fn namespaced_api_takes_a_local_reference() {
    for password in [
        json!({"secretRef": {"name": "upstream", "key": "password"}}),
        json!({"secretRef": {"name": "upstream", "key": "password", "namespace": "team1"}}),
    ] {
        let response = request(namespaced_composite(spec(password))).run();
        assert!(assert_valid("namespaced", &desired_resources(&response)));
        assert_eq!(
            for_provider(&response)["passwordSecretRef"],
            json!({"key": "password", "name": "upstream"})
        );
    }
    let response = request(namespaced_composite(spec(
        json!({"secretRef": {"name": "upstream", "key": "password", "namespace": "other"}}),
    )))
    .run();
    let message = fatal_message(&response).expect("a fatal result");
    assert!(message.contains("spec.repositories[0].password.secretRef.namespace: repository \"central\": the Secret's namespace \"other\" is not the composite's (team1)"), "{message}");
}

#[test]
fn credentials_are_for_remotes_and_well_formed() {
    let spec = json!({"repositories": [
        {"name": "libs", "rclass": "local", "packageType": "maven", "username": "ci"},
        remote(json!({"secretRef": {"name": "upstream"}})),
    ]});
    let message = fatal_message(&request(composite(spec)).run()).expect("a fatal result");
    assert!(message.contains("spec.repositories[0].username: repository \"libs\": username is for remote repositories, and this one is local; fix: remove username, or make the entry a remote"), "{message}");
    assert!(
        message.contains(
            "spec.repositories[1].password.secretRef.key: the password's secretRef has no key"
        ),
        "{message}"
    );
}

fn write_only() -> Value {
    input(json!({"writeOnlyPasswords": true}))
}

fn with_required_resources(mut req: RunFunctionRequest) -> RunFunctionRequest {
    let meta = req.meta.get_or_insert_with(Default::default);
    meta.capabilities.push(Capability::RequiredResources as i32);
    req
}

/// The request of the call after `req`'s: every resource it asks for and `req` does not
/// answer, answered as not found (no managed resource holds the key). The first call of a
/// reconcile answers only its requirements; this is the one that renders.
fn answered(mut req: RunFunctionRequest) -> RunFunctionRequest {
    let asked = run_function(&req).requirements.unwrap_or_default();
    for name in asked.resources.into_keys() {
        req.required_resources.entry(name).or_default();
    }
    // Schemas not answered yet (the key lookup's kinds of the other provider API): not served.
    for name in asked.schemas.into_keys() {
        req.required_schemas.entry(name).or_default();
    }
    req
}

fn secret(resource_version: &str) -> Resources {
    Resources {
        items: vec![resource(json!({
            "apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "upstream", "namespace": "team1", "resourceVersion": resource_version},
            "data": {"password": SECRET_VALUE},
            "stringData": {"password": SECRET_VALUE}
        }))],
    }
}

fn write_only_request() -> RunFunctionRequest {
    with_required_resources(
        request(namespaced_composite(spec(
            json!({"secretRef": {"name": "upstream", "key": "password"}}),
        )))
        .input(write_only())
        .build(),
    )
}

#[test]
fn write_only_falls_back_where_the_release_has_no_write_only_fields() {
    // No released provider CRD (up to v0.14.0) has passwordWoSecretRef: the plain reference
    // is rendered, with a warning, and no Secret is asked for.
    let response = run_function(&answered(write_only_request()));
    let fields = for_provider(&response);
    assert_eq!(
        fields["passwordSecretRef"],
        json!({"key": "password", "name": "upstream"})
    );
    assert!(fields.get("passwordWoSecretRef").is_none());
    assert!(fields.get("passwordWoVersion").is_none());
    let requirements = &response.requirements.as_ref().unwrap().resources;
    assert!(
        !requirements.contains_key("artifactory-password-central"),
        "{requirements:?}"
    );
    let warnings = &status_repositories(&response)[0]["warnings"];
    assert_eq!(warnings, &json!(["MavenRepository of this provider release has no write-only password fields (passwordWoSecretRef, passwordWoVersion): passwordSecretRef is rendered instead"]));
}

/// The schema a cluster serves for a provider build that has the write-only fields
/// (no released CRD has them yet): only what the check needs, the rest left open.
fn live_schema_with_write_only_fields() -> Schema {
    let schema = json!({"type": "object", "properties": {
        "apiVersion": {"type": "string"}, "kind": {"type": "string"},
        "spec": {
        "type": "object", "x-kubernetes-preserve-unknown-fields": true,
        "properties": {"forProvider": {
            "type": "object", "x-kubernetes-preserve-unknown-fields": true,
            "properties": {
                "passwordWoSecretRef": {"type": "object", "required": ["key", "name"], "properties": {
                    "key": {"type": "string"}, "name": {"type": "string"}
                }},
                "passwordWoVersion": {"type": "string"}
            }
        }}
    }}});
    Schema {
        openapi_v3: Some(Struct::from_value(schema)),
    }
}

#[test]
fn write_only_password_where_the_live_schema_has_the_fields() {
    let mut req = write_only_request();
    let meta = req.meta.as_mut().unwrap();
    meta.capabilities.push(Capability::RequiredSchemas as i32);
    req.required_schemas.insert(
        requirement_name(
            "remote.artifactory.jfrog.m.crossplane.io/v1alpha1",
            "MavenRepository",
        ),
        live_schema_with_write_only_fields(),
    );
    // The first call asks for the Secret (and the key's resources), rendering nothing yet.
    let first = run_function(&req);
    assert!(first.desired.as_ref().unwrap().resources.is_empty());
    let selector = &first.requirements.as_ref().unwrap().resources["artifactory-password-central"];
    assert_eq!(
        (selector.api_version.as_str(), selector.kind.as_str()),
        ("v1", "Secret")
    );
    assert_eq!(selector.namespace.as_deref(), Some("team1"));
    // Answered: the write-only reference, its version the Secret's resourceVersion, and the
    // requirements settle.
    req.required_resources
        .insert("artifactory-password-central".into(), secret("4711"));
    req = answered(req);
    let second = run_function(&req);
    assert_eq!(second.requirements, first.requirements);
    let fields = for_provider(&second);
    assert_eq!(
        fields["passwordWoSecretRef"],
        json!({"key": "password", "name": "upstream"})
    );
    assert!(fields.get("passwordSecretRef").is_none());
    assert_eq!(fields["passwordWoVersion"], "4711");
    // Rotated: a new version, so the provider re-sends the password.
    req.required_resources
        .insert("artifactory-password-central".into(), secret("4790"));
    assert_eq!(
        for_provider(&run_function(&req))["passwordWoVersion"],
        "4790"
    );
    // Answered missing: a fatal problem naming the Secret.
    req.required_resources
        .insert("artifactory-password-central".into(), Resources::default());
    let message = fatal_message(&run_function(&req)).expect("a fatal result");
    assert!(
        message.contains(
            "the Secret \"upstream\" of the password is not found in namespace \"team1\""
        ),
        "{message}"
    );
    assert!(!format!("{second:?}").contains(SECRET_VALUE));
}

#[test]
fn no_secret_value_in_the_response() {
    let mut req = write_only_request();
    req.required_resources
        .insert("artifactory-password-central".into(), secret("4711"));
    let response = run_function(&req);
    desired_resources(&response);
    let debug = format!("{response:?}");
    assert!(!debug.contains(SECRET_VALUE));
    assert!(!debug.contains("stringData"));
}
