//! Drift warnings (issue 18): each is a status warning of its entry and a
//! Warning result, and never fails the call.

mod support;

use function_artifactory::proto::v1::{RunFunctionResponse, Severity};
use serde_json::{json, Value};
use support::requests::{composite, desired_resources, input, live, request, status_repositories};

fn warnings(response: &RunFunctionResponse) -> Vec<Vec<String>> {
    desired_resources(response);
    status_repositories(response)
        .iter()
        .map(|r| {
            r["warnings"]
                .as_array()
                .unwrap()
                .iter()
                .map(|w| w.as_str().unwrap().to_owned())
                .collect()
        })
        .collect()
}

/// (reason, message) of each Warning result.
fn warning_results(response: &RunFunctionResponse) -> Vec<(String, String)> {
    response
        .results
        .iter()
        .filter(|r| r.severity == Severity::Warning as i32)
        .map(|r| (r.reason.clone().unwrap_or_default(), r.message.clone()))
        .collect()
}

#[test]
fn project_key_without_project_environments() {
    let spec = json!({"projectKey": "team1", "repositories": [
        {"name": "a", "rclass": "local", "packageType": "maven"},
        {"name": "b", "rclass": "local", "packageType": "npm", "forProvider": {"projectEnvironments": ["PROD"]}}
    ]});
    let response = request(composite(spec)).run();
    let warnings = warnings(&response);
    assert_eq!(warnings[0].len(), 1, "{warnings:?}");
    assert!(
        warnings[0][0].starts_with(
            "projectKey is set without forProvider.projectEnvironments: Artifactory assigns DEV"
        ),
        "{warnings:?}"
    );
    assert!(warnings[1].is_empty(), "{warnings:?}");
    let results = warning_results(&response);
    assert_eq!(results.len(), 1, "{results:?}");
    assert_eq!(results[0].0, "ProjectEnvironmentsMissing");
    assert!(
        results[0]
            .1
            .starts_with("repository a (key team1-a): projectKey is set"),
        "{results:?}"
    );
}

#[test]
fn no_project_key_no_warning() {
    let spec = json!({"repositories": [{"name": "a", "rclass": "local", "packageType": "maven"}]});
    let response = request(composite(spec)).run();
    assert_eq!(warnings(&response), vec![Vec::<String>::new()]);
    assert!(warning_results(&response).is_empty());
}

fn docker(name: &str, key: &str) -> Value {
    json!({"name": name, "rclass": "local", "packageType": "docker", "key": key})
}

#[test]
fn docker_and_oci_keys_on_jfrog_saas_must_fit_a_subdomain() {
    // "acme" + "-": 63 - 5 = 58 characters at most.
    let fits = "d".repeat(58);
    let too_long = "o".repeat(59);
    let spec = json!({"repositories": [
        docker("fits", &fits),
        {"name": "long", "rclass": "local", "packageType": "oci", "key": too_long},
        {"name": "maven", "rclass": "local", "packageType": "maven", "key": "m".repeat(59)}
    ]});
    let on_saas = request(composite(spec.clone()))
        .input(input(json!({"artifactoryUrl": "https://acme.jfrog.io/"})))
        .run();
    let warnings = warnings(&on_saas);
    assert!(warnings[0].is_empty(), "{warnings:?}");
    assert_eq!(
        warnings[1],
        [format!("key \"{too_long}\" has 59 characters, but a Docker/OCI repository on the JFrog SaaS server \"acme\" is served as the subdomain <key>-acme only when the key has at most 58 (63 - (4 + 1)); shorten the key")]
    );
    assert!(warnings[2].is_empty(), "maven is not served as a subdomain");
    let results = warning_results(&on_saas);
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].0, "KeyTooLongForSubdomain");
    // Self-hosted: no subdomain rule.
    let self_hosted = request(composite(spec))
        .input(input(
            json!({"artifactoryUrl": "https://artifactory.example.com"}),
        ))
        .run();
    assert!(warning_results(&self_hosted).is_empty());
}

fn virtual_entry() -> Value {
    json!({"name": "all", "rclass": "virtual", "packageType": "maven", "key": "all", "repositories": ["a", "b"]})
}

fn observed_virtual(members: &[&str], synced: bool) -> Value {
    let mut object = live(
        "virtual.artifactory.jfrog.crossplane.io/v1alpha1",
        "MavenRepository",
        "all",
        true,
    );
    object["status"]["atProvider"] = json!({"repositories": members});
    if !synced {
        object["status"]["conditions"][1]["status"] = json!("False");
    }
    object
}

fn virtual_request(observed: Value) -> RunFunctionResponse {
    let spec = json!({"repositories": [
        {"name": "a", "rclass": "local", "packageType": "maven", "key": "a"},
        {"name": "b", "rclass": "local", "packageType": "maven", "key": "b"},
        virtual_entry()
    ]});
    request(composite(spec)).observed("all", observed).run()
}

#[test]
fn virtual_members_dropped_after_synced() {
    let response = virtual_request(observed_virtual(&["a"], true));
    let warnings = warnings(&response);
    assert_eq!(
        warnings[2],
        ["the provider reports Synced but the repository's members are [a], not the desired [a, b]: the provider dropped the member change; check its logs, or recreate the managed resource"]
    );
    let results = warning_results(&response);
    assert_eq!(results.len(), 1, "{results:?}");
    assert_eq!(results[0].0, "VirtualMembersDrifted");
    assert!(results[0].1.starts_with("repository all (key all): "));
}

#[test]
fn virtual_members_not_yet_synced_or_equal_are_no_drift() {
    for observed in [
        observed_virtual(&["a"], false),
        observed_virtual(&["a", "b"], true),
    ] {
        let response = virtual_request(observed);
        assert!(warnings(&response)[2].is_empty());
        assert!(warning_results(&response).is_empty());
    }
    // Order is resolution order: a reordering is drift too.
    let response = virtual_request(observed_virtual(&["b", "a"], true));
    assert_eq!(warnings(&response)[2].len(), 1);
}
