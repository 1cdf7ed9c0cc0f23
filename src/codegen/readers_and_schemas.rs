//! The readers and the schemas describe one API: the fields each hand-written reader of the
//! core accepts are exactly the properties of the schema generated from `api`'s types at the
//! same path, and the enums and patterns agree with the readers' rules. A test module of its
//! own so that `api` (the types) and `schemas` (what is generated from them) each name only
//! the one below it.

use super::api::*;
use super::schemas::{composite_spec_schema, input_schema};
use crate::core::catalog::{catalog, ProviderApi, Rclass};
use crate::core::composite::{is_dns_label, is_project_key, read_spec};
use crate::core::input::{read_input, SettingsAt};
use crate::core::policy::MANAGEMENT_POLICIES;
use crate::core::problems::Findings;
use crate::core::reader::trace::fields_read;
use serde_json::{json, Value};
use std::collections::BTreeSet;

/// A spec that sets every field, nested objects included.
fn full_spec() -> Value {
    json!({
        "projectKey": "team1",
        "providerConfigRef": {"name": "default"},
        "deletionPolicy": "Delete",
        "managementPolicies": ["*"],
        "repositories": [{
            "name": "libs", "rclass": "federated", "packageType": "maven", "key": "team1-libs",
            "description": "d", "notes": "n", "url": "https://example.com/libs",
            "repositories": ["a"], "externalRepositories": ["b"], "defaultDeploymentRepo": "a",
            "members": [{
                "url": "https://eu.example.com/artifactory/team1-libs", "enabled": true,
                "accessTokenSecretRef": {"key": "token", "name": "eu", "namespace": "crossplane-system"}
            }],
            "forProvider": {"xrayIndex": true}, "import": false, "deletionPolicy": "Orphan",
            "managementPolicies": ["Observe"], "providerConfigRef": {"name": "eu"}, "paused": false,
            "username": "ci", "password": {"secretRef": {"name": "upstream", "key": "password", "namespace": "team1"}}
        }]
    })
}

fn full_input() -> Value {
    json!({
        "apiVersion": "artifactory.fn.crossplane.io/v1beta1", "kind": "Input",
        "metadata": {"name": "x"}, "providerApi": "auto", "naming": {"format": "{name}"},
        "artifactoryUrl": "https://artifactory.example.com",
        "defaults": {"providerConfigRef": {"name": "default"}, "deletionPolicy": "Delete", "managementPolicies": ["*"]},
        "deletionProtection": true, "createGuard": true, "neverDelete": false, "allowedKeys": "{claimNamespace}-*",
        "allowedSecretNamespaces": ["vault"], "writeOnlyPasswords": false, "ttl": "60s"
    })
}

/// The schema node at a reader path such as `spec.repositories[].members[]`.
fn node_at<'a>(root: &'a Value, path: &str) -> &'a Value {
    let mut node = root;
    for segment in path.split('.') {
        let (name, lists) = segment.split_at(segment.find('[').unwrap_or(segment.len()));
        node = &node["properties"][name];
        for _ in 0..lists.matches("[]").count() {
            node = &node["items"];
        }
    }
    node
}

fn property_names(node: &Value) -> BTreeSet<&str> {
    node["properties"]
        .as_object()
        .map(|p| p.keys().map(String::as_str).collect())
        .unwrap_or_default()
}

fn assert_readers_match(root: &Value, read: impl FnOnce(), expected_paths: &[&str]) {
    let fields = fields_read(read);
    let paths: Vec<&str> = fields.keys().map(String::as_str).collect();
    assert_eq!(paths, expected_paths, "every object reader ran");
    for (path, known) in &fields {
        let known: BTreeSet<&str> = known.iter().copied().collect();
        assert_eq!(
            known,
            property_names(node_at(root, path)),
            "{path}: the fields the reader accepts (left) differ from the schema's properties (right)"
        );
    }
}

#[test]
fn the_composite_reader_accepts_exactly_the_schema_fields() {
    let schema =
        json!({"properties": {"spec": composite_spec_schema(ProviderApi::Cluster).unwrap()}});
    let composite = json!({"spec": full_spec()});
    let mut findings = Findings::default();
    assert_readers_match(
        &schema,
        || {
            read_spec(
                crate::proto::ObjectView::Json(composite.as_object().unwrap()),
                &mut findings,
            );
        },
        &[
            "spec",
            "spec.repositories[]",
            "spec.repositories[].members[]",
            "spec.repositories[].password",
            "spec.repositories[].password.secretRef",
        ],
    );
    assert!(!findings.has_problems(), "{:?}", findings.problems);
}

#[test]
fn the_input_reader_accepts_exactly_the_schema_fields() {
    let schema = json!({"properties": {"input": input_schema().unwrap()}});
    let input = full_input();
    let mut findings = Findings::default();
    assert_readers_match(
        &schema,
        || {
            let view = crate::proto::ObjectView::Json(input.as_object().unwrap());
            read_input(Some(view), SettingsAt::Input, &mut findings);
        },
        &["input", "input.defaults", "input.naming"],
    );
    assert!(!findings.has_problems(), "{:?}", findings.problems);
}

#[test]
fn the_full_examples_deserialize_into_the_types() {
    let spec: CompositeSpecSchema = serde_json::from_value(full_spec()).unwrap();
    assert_eq!(spec.repositories[0].rclass, Rclass::Federated);
    let input: InputSchema = serde_json::from_value(full_input()).unwrap();
    assert_eq!(input.provider_api, Some(ProviderApiChoice::Auto));
}

fn strings(values: &Value) -> Vec<&str> {
    values
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect()
}

#[test]
fn enums_are_what_the_readers_accept() {
    let spec = composite_spec_schema(ProviderApi::Cluster).unwrap();
    let entry = &spec["properties"]["repositories"]["items"]["properties"];
    assert_eq!(strings(&entry["rclass"]["enum"]), Rclass::NAMES);
    assert_eq!(
        strings(&entry["deletionPolicy"]["enum"]),
        ["Delete", "Orphan"]
    );
    assert_eq!(
        strings(&entry["managementPolicies"]["items"]["enum"]),
        MANAGEMENT_POLICIES
    );
    let input = input_schema().unwrap();
    let mut apis = vec!["auto"];
    apis.extend(ProviderApi::ALL.map(ProviderApi::as_str));
    assert_eq!(strings(&input["properties"]["providerApi"]["enum"]), apis);
    // Every package type of the enum renders to a kind in some API and class,
    // and every kind's package type is in the enum.
    let package_types = strings(&entry["packageType"]["enum"]);
    let catalog = catalog();
    for package_type in &package_types {
        let found = ProviderApi::ALL.iter().any(|api| {
            Rclass::ALL
                .iter()
                .any(|rclass| catalog.find(*api, *rclass, package_type).is_ok())
        });
        assert!(found, "{package_type} renders to no kind");
    }
    for kind in catalog.all_kinds() {
        assert!(package_types.contains(&kind.package_type.as_str()));
    }
}

#[test]
fn patterns_agree_with_the_readers() {
    let project_key = regex::Regex::new(PROJECT_KEY_PATTERN).unwrap();
    for sample in [
        "team1",
        "a-",
        "ab",
        "Team1",
        "1team",
        "a",
        "t-1-x",
        &"a".repeat(33),
    ] {
        assert_eq!(
            project_key.is_match(sample),
            is_project_key(sample),
            "{sample}"
        );
    }
    let dns_label = regex::Regex::new(DNS_LABEL_PATTERN).unwrap();
    for sample in [
        "libs",
        "libs-release",
        "-libs",
        "libs-",
        "Libs",
        "a",
        "1a",
        "a_b",
        "",
    ] {
        assert_eq!(dns_label.is_match(sample), is_dns_label(sample), "{sample}");
    }
    let duration = regex::Regex::new(DURATION_PATTERN).unwrap();
    for sample in ["60s", "1m30s", "1.5h", "250ms", "60", "s", "", "1d"] {
        assert_eq!(
            duration.is_match(sample),
            crate::core::time::parse_go_duration(sample).is_ok(),
            "{sample}"
        );
    }
    let key = regex::Regex::new(KEY_PATTERN).unwrap();
    for sample in ["team1-libs", "libs.local", "Team_Images"] {
        assert!(key.is_match(sample), "{sample}");
    }
    for sample in ["team libs", "a/b", "a\"b", "a\\b", "a`b", "a[b]"] {
        assert!(!key.is_match(sample), "{sample}");
    }
}
