//! The words of issue 47 ("Why 4"), each pinned to the input that showed it: the article before
//! a kind whose first word is an acronym, the suggestion for a misspelled member of a virtual,
//! the project key prefix the provider's CRDs require, said to the claim too, and
//! `projectEnvironments` set once in the input's defaults.

use crate::support;

use function_artifactory::proto::v1::{RunFunctionResponse, Severity, Target};
use serde_json::{json, Value};
use support::requests::{
    composite, desired_resources, fatal_message, input, live, request, status_repositories,
};

const LOCAL: &str = "local.artifactory.jfrog.crossplane.io/v1alpha1";

fn spec(entries: Value) -> Value {
    json!({ "repositories": entries })
}

fn warnings(response: &RunFunctionResponse) -> Vec<(String, String, i32)> {
    response
        .results
        .iter()
        .filter(|r| r.severity == Severity::Warning as i32)
        .map(|r| {
            (
                r.reason.clone().unwrap_or_default(),
                r.message.clone(),
                r.target.unwrap_or_default(),
            )
        })
        .collect()
}

/// "an NpmRepository": said "an en-pee-em repository", as "an npm repository" is.
#[test]
fn a_live_npm_repository_takes_an() {
    let entries = json!([{"name": "libs", "rclass": "local", "packageType": "maven"}]);
    let message = fatal_message(
        &request(composite(spec(entries)))
            .observed("libs", live(LOCAL, "NpmRepository", "libs", true))
            .run(),
    )
    .expect("a changed kind is fatal");
    assert!(
        message.contains(&format!(
            "the live repository is an NpmRepository ({LOCAL}) and the spec now renders a MavenRepository"
        )),
        "{message}"
    );
}

/// A maven virtual's misspelled member was answered "use one of: images", a docker entry it
/// cannot aggregate. Only entries of the virtual's package type are suggested.
#[test]
fn a_misspelled_member_is_matched_only_with_entries_the_virtual_aggregates() {
    let alone = fatal_message(
        &request(composite(spec(json!([
            {"name": "images", "rclass": "local", "packageType": "docker"},
            {"name": "libs", "rclass": "virtual", "packageType": "maven", "repositories": ["libs-relase"]},
        ]))))
        .run(),
    )
    .expect("a fatal result");
    assert!(
        alone.contains("- spec.repositories[1].repositories[0]: repository \"libs\": member \"libs-relase\" names no repository entry of this composite; fix: name an entry of spec.repositories, or list a repository outside this composite by key in externalRepositories"),
        "{alone}"
    );
    // A docker entry spelled nearly as the member is not it either; the maven one is.
    let near = fatal_message(
        &request(composite(spec(json!([
            {"name": "libs-releases", "rclass": "local", "packageType": "docker"},
            {"name": "libs-release", "rclass": "local", "packageType": "maven"},
            {"name": "libs", "rclass": "virtual", "packageType": "maven", "repositories": ["libs-relase"]},
        ]))))
        .run(),
    )
    .expect("a fatal result");
    assert!(near.contains("(did you mean \"libs-release\"?)"), "{near}");
    let docker_only = fatal_message(
        &request(composite(spec(json!([
            {"name": "libs-release", "rclass": "local", "packageType": "docker"},
            {"name": "more", "rclass": "local", "packageType": "maven"},
            {"name": "libs", "rclass": "virtual", "packageType": "maven", "repositories": ["libs-relase"]},
        ]))))
        .run(),
    )
    .expect("a fatal result");
    assert!(docker_only.contains("(use one of: more)"), "{docker_only}");
}

/// A key without the project key prefix was only a warning in the entry's status; the claim's
/// author did not see it. It is a Warning result for the composite and the claim as well.
#[test]
fn a_key_without_the_project_prefix_reaches_the_claim() {
    let response = request(composite(json!({
        "projectKey": "team1",
        "repositories": [
            {"name": "libs", "rclass": "local", "packageType": "maven", "key": "libs",
             "forProvider": {"projectEnvironments": ["DEV"]}},
            {"name": "ok", "rclass": "local", "packageType": "maven", "key": "team1-ok",
             "forProvider": {"projectEnvironments": ["DEV"]}},
        ]
    })))
    .run();
    assert_eq!(fatal_message(&response), None);
    assert_eq!(
        warnings(&response),
        [(
            "KeyWithoutProjectPrefix".to_owned(),
            "projectKey \"team1\" is set and the key of repository libs (key \"libs\") does not start with the project key prefix \"team1-\", which the provider's CRD says a repository key in a project must have; start each key with \"team1-\" (naming format \"{projectKey}-{name}\")".to_owned(),
            Target::CompositeAndClaim as i32,
        )]
    );
    // The entry's own status keeps its warning.
    let status = status_repositories(&response);
    assert_eq!(
        status[0]["warnings"],
        json!(["key \"libs\" does not start with the project key prefix \"team1-\""]),
        "{status:?}"
    );
    assert_eq!(status[1]["warnings"], json!([]), "{status:?}");
}

/// `projectEnvironments` could only be set on each entry; the input's `defaults` take it now,
/// for every repository of a project whose entry sets none.
#[test]
fn project_environments_come_from_the_input_s_defaults() {
    let response = request(composite(json!({
        "projectKey": "team1",
        "repositories": [
            {"name": "libs", "rclass": "local", "packageType": "maven", "key": "team1-libs"},
            {"name": "own", "rclass": "local", "packageType": "maven", "key": "team1-own",
             "forProvider": {"projectEnvironments": ["PROD"]}},
        ]
    })))
    .input(input(json!({"defaults": {"projectEnvironments": ["DEV"]}})))
    .run();
    assert_eq!(fatal_message(&response), None);
    let resources = desired_resources(&response);
    assert_eq!(
        resources["libs"]["spec"]["forProvider"]["projectEnvironments"],
        json!(["DEV"])
    );
    assert_eq!(
        resources["own"]["spec"]["forProvider"]["projectEnvironments"],
        json!(["PROD"])
    );
    assert!(
        warnings(&response)
            .iter()
            .all(|(reason, _, _)| reason != "ProjectEnvironmentsMissing"),
        "{:?}",
        warnings(&response)
    );
    // Without a project the default sets nothing.
    let response = request(composite(json!({
        "repositories": [{"name": "libs", "rclass": "local", "packageType": "maven"}]
    })))
    .input(input(json!({"defaults": {"projectEnvironments": ["DEV"]}})))
    .run();
    let resources = desired_resources(&response);
    assert!(resources["libs"]["spec"]["forProvider"]
        .get("projectEnvironments")
        .is_none());
}
