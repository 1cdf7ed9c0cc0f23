//! Provider releases: `providerVersion` picks the kinds and built-in schemas of a release, and
//! what is rendered for a release is valid against that release's own CRDs (from `crds/`).
#![cfg(feature = "codegen")]

use crate::support;

use function_artifactory::codegen::crds;
use function_artifactory::proto::v1::{RunFunctionResponse, Severity};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::Path;
use support::crd::Crds;
use support::requests::{
    composite, desired_resources, fatal_message, input, namespaced_composite, request,
};

/// The CRDs of one release.
fn release_crds(release: &str) -> Crds {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    Crds::from_documents(crds::release(root, release).unwrap().crds).unwrap()
}

fn render(spec: Value, fields: Value) -> RunFunctionResponse {
    request(composite(spec)).input(input(fields)).run()
}

fn assert_valid_in(release: &str, resources: &BTreeMap<String, Value>) {
    let crds = release_crds(release);
    for (name, resource) in resources {
        let violations = crds.validate(resource);
        assert!(violations.is_empty(), "{release} {name}: {violations:?}");
    }
}

fn npm_pair() -> Value {
    json!({"repositories": [
        {"name": "npm-local", "rclass": "local", "packageType": "npm"},
        {"name": "npmjs", "rclass": "remote", "packageType": "npm",
         "url": "https://registry.npmjs.org"},
    ]})
}

#[test]
fn a_kind_renamed_between_releases_renders_as_each_release_names_it() {
    for (release, kind) in [
        ("v0.7.0", "NpmRepository"),
        ("v0.7.1", "NPMRepository"),
        ("v0.14.0", "NPMRepository"),
    ] {
        let response = render(
            npm_pair(),
            json!({"providerApi": "cluster", "providerVersion": release}),
        );
        let resources = desired_resources(&response);
        assert_eq!(resources["npm-local"]["kind"], kind, "{release}");
        assert_eq!(resources["npmjs"]["kind"], kind, "{release}");
        assert_valid_in(release, &resources);
    }
    // Without providerVersion: the newest release.
    let newest = desired_resources(&render(npm_pair(), json!({"providerApi": "cluster"})));
    assert_eq!(newest["npm-local"]["kind"], "NPMRepository");
}

#[test]
fn flat_releases_render_their_own_kinds() {
    let spec = json!({"repositories": [
        {"name": "libs", "rclass": "local", "packageType": "maven"},
    ]});
    let response = render(
        spec,
        json!({"providerApi": "flat", "providerVersion": "v0.4.0"}),
    );
    let resources = desired_resources(&response);
    assert_eq!(resources["libs"]["kind"], "LocalMavenRepository");
    assert_valid_in("v0.4.0", &resources);
}

#[test]
fn a_field_only_a_newer_release_has_is_refused_for_an_older_one() {
    let spec = json!({"repositories": [
        {"name": "central", "rclass": "remote", "packageType": "maven",
         "url": "https://repo1.maven.org/maven2", "forProvider": {"passThrough": true}},
    ]});
    let older = render(
        spec.clone(),
        json!({"providerApi": "cluster", "providerVersion": "v0.11.3"}),
    );
    let message = fatal_message(&older).expect("refused");
    assert!(
        message.contains("MavenRepository has no forProvider field \"passThrough\""),
        "{message}"
    );
    let newer = render(
        spec,
        json!({"providerApi": "cluster", "providerVersion": "v0.12.0"}),
    );
    let resources = desired_resources(&newer);
    assert_eq!(
        resources["central"]["spec"]["forProvider"]["passThrough"],
        true
    );
    assert_valid_in("v0.12.0", &resources);
}

#[test]
fn a_kind_a_release_has_not_got_is_refused_with_the_release_named() {
    let spec = json!({"repositories": [
        {"name": "fed", "rclass": "federated", "packageType": "maven",
         "members": [{"url": "https://eu.example.com/artifactory/fed", "enabled": true}]},
    ]});
    let response = render(
        spec,
        json!({"providerApi": "cluster", "providerVersion": "v0.8.0"}),
    );
    let message = fatal_message(&response).unwrap();
    assert!(
        message.contains("the cluster provider API of release v0.8.0 has no federated repository of package type \"maven\""),
        "{message}"
    );
}

#[test]
fn a_release_without_the_api_is_one_problem_on_provider_version() {
    let spec = json!({"repositories": [
        {"name": "a", "rclass": "local", "packageType": "maven"},
        {"name": "b", "rclass": "local", "packageType": "npm"},
    ]});
    let response = request(namespaced_composite(spec))
        .input(input(json!({"providerVersion": "v0.7.1"})))
        .run();
    let message = fatal_message(&response).unwrap();
    assert!(message.contains(": 1 problem"), "{message}");
    assert!(
        message.contains("input.providerVersion: provider release v0.7.1 has no namespaced API (flat: v0.1.0 to v0.6.0; cluster: v0.7.0 to v0.14.0; namespaced: v0.8.0 to v0.14.0)"),
        "{message}"
    );
}

#[test]
fn unknown_patch_and_newer_releases_use_the_nearest_known_with_a_warning() {
    for (given, used) in [("v0.10.2", "v0.10.0"), ("v0.99.0", "v0.14.0")] {
        let response = render(
            npm_pair(),
            json!({"providerApi": "cluster", "providerVersion": given}),
        );
        assert_eq!(fatal_message(&response), None);
        let warning = response
            .results
            .iter()
            .find(|r| r.severity == Severity::Warning as i32)
            .unwrap_or_else(|| panic!("no warning for {given}"));
        assert!(
            warning.message.contains(&format!(
                "provider release {given} is not in the function's catalog: the kinds and schemas of {used} are used"
            )),
            "{}",
            warning.message
        );
    }
}

#[test]
fn text_that_is_not_a_release_is_refused() {
    for given in ["latest", "0.14.0", "v0.0.9", "v1.2"] {
        let response = render(npm_pair(), json!({"providerVersion": given}));
        let message = fatal_message(&response).unwrap_or_default();
        assert!(
            message.contains(&format!(
                "input.providerVersion: \"{given}\" is not a provider release"
            )),
            "{given}: {message}"
        );
    }
}
