//! Drift warnings (issue 18): each is a status warning of its entry and a
//! Warning result, and never fails the call.

use crate::support;

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
    // Said once for the composite, not in each entry's status.
    assert_eq!(warnings(&response), vec![Vec::<String>::new(); 2]);
    let results = warning_results(&response);
    assert_eq!(
        results,
        [(
            "ProjectEnvironmentsMissing".to_owned(),
            "projectKey \"team1\" is set and repository a does not set forProvider.projectEnvironments: Artifactory assigns DEV and the provider then reports drift on every reconcile; set projectEnvironments on each (for example [DEV]), or once in the function input's defaults".to_owned()
        )]
    );
}

/// Five entries with the same cause get one warning that names them, not five.
#[test]
fn project_environments_missing_on_several_entries_is_one_warning() {
    let entries: Vec<Value> = (1..=12)
        .map(|i| json!({"name": format!("r{i}"), "rclass": "local", "packageType": "maven"}))
        .collect();
    let five = request(composite(
        json!({"projectKey": "team1", "repositories": entries[..5]}),
    ))
    .run();
    let results = warning_results(&five);
    assert_eq!(results.len(), 1, "{results:?}");
    assert_eq!(
        results[0].1,
        "projectKey \"team1\" is set and 5 repositories (r1, r2, r3, r4, r5) do not set forProvider.projectEnvironments: Artifactory assigns DEV and the provider then reports drift on every reconcile; set projectEnvironments on each (for example [DEV]), or once in the function input's defaults"
    );
    let (_, findings) = function_artifactory::run_function_with_findings(
        &request(composite(
            json!({"projectKey": "team1", "repositories": entries[..5]}),
        ))
        .build(),
    );
    let about: Vec<_> = findings
        .warnings
        .iter()
        .filter(|w| w.message.contains("projectEnvironments"))
        .collect();
    assert_eq!(about.len(), 1, "{about:?}");
    assert_eq!(
        (about[0].path.as_str(), about[0].entry),
        ("spec.projectKey", None)
    );
    // Past ten, the first ten and a count.
    let twelve = request(composite(
        json!({"projectKey": "team1", "repositories": entries}),
    ))
    .run();
    let results = warning_results(&twelve);
    assert_eq!(results.len(), 1, "{results:?}");
    assert!(
        results[0].1.contains(
            "12 repositories (r1, r2, r3, r4, r5, r6, r7, r8, r9, r10 and 2 more) do not set"
        ),
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

/// A virtual "all" of the locals "a" and "b" and the external "shared-remote".
fn virtual_entry() -> Value {
    json!({"name": "all", "rclass": "virtual", "packageType": "maven", "key": "all",
           "repositories": ["a", "b"], "externalRepositories": ["shared-remote"]})
}

const DESIRED: [&str; 3] = ["a", "b", "shared-remote"];

/// The virtual as observed: the members the provider was given (`applied`), those Artifactory
/// reports (`effective`), and whether `Synced` is True for the current generation.
fn observed_virtual(applied: &[&str], effective: &[&str], synced_current: bool) -> Value {
    let mut object = live(
        "virtual.artifactory.jfrog.crossplane.io/v1alpha1",
        "MavenRepository",
        "all",
        true,
    );
    object["metadata"]["generation"] = json!(3);
    object["spec"]["forProvider"]["repositories"] = json!(applied);
    object["status"]["atProvider"] = json!({"repositories": effective});
    object["status"]["conditions"][1]["observedGeneration"] =
        json!(if synced_current { 3 } else { 2 });
    object
}

fn local_live(key: &str, ready: bool) -> Value {
    live(
        "local.artifactory.jfrog.crossplane.io/v1alpha1",
        "MavenRepository",
        key,
        ready,
    )
}

/// The composite with "a", "b" and the virtual; "a" is live and ready, "b" as given.
fn virtual_request(observed: Value, b: Option<Value>) -> RunFunctionResponse {
    let spec = json!({"repositories": [
        {"name": "a", "rclass": "local", "packageType": "maven", "key": "a"},
        {"name": "b", "rclass": "local", "packageType": "maven", "key": "b"},
        virtual_entry()
    ]});
    let mut builder = request(composite(spec))
        .observed("a", local_live("a", true))
        .observed("all", observed);
    if let Some(b) = b {
        builder = builder.observed("b", b);
    }
    builder.run()
}

/// Applied, Synced for the current generation, and still without some members: Artifactory
/// dropped them. Each is named with the likely why; recreating the resource is not advised,
/// since it would not bring them back.
#[test]
fn members_artifactory_dropped_are_named_with_the_why() {
    let response = virtual_request(
        observed_virtual(&DESIRED, &["a"], true),
        Some(local_live("b", false)),
    );
    let warnings = warnings(&response);
    assert_eq!(
        warnings[2],
        ["the provider applied the members [a, b, shared-remote] (Synced for the current generation), and Artifactory left out 2 members: \"b\" (entry b) was not ready, and Artifactory leaves out a member that does not exist: the provider adds it at a later update once it is ready, nothing to do unless it stays unready; \"shared-remote\" (externalRepositories) is not a repository of this composite, and Artifactory leaves out a member that does not exist or that a maven virtual cannot aggregate: create it as a maven repository, or correct the key"]
    );
    assert!(!warnings[2][0].contains("recreate"));
    let results = warning_results(&response);
    assert_eq!(results.len(), 1, "{results:?}");
    assert_eq!(results[0].0, "VirtualMembersDropped");
    assert!(results[0]
        .1
        .starts_with("repository all (key all): the provider applied"));
    // A member of the composite that is ready and still left out: nothing here explains it.
    let response = virtual_request(
        observed_virtual(&DESIRED, &["a", "shared-remote"], true),
        Some(local_live("b", true)),
    );
    assert!(
        warnings_of(&response).ends_with("left out 1 member: \"b\" (entry b) is ready and of the virtual's package type, yet was left out: see the provider's logs and the repository in Artifactory"),
        "{:?}",
        warnings_of(&response)
    );
}

fn warnings_of(response: &RunFunctionResponse) -> String {
    warnings(response)[2].join("\n")
}

/// A member change (a reorder included) is an ordinary update: no warning while the provider
/// has not applied it, nor once Artifactory reports every member.
#[test]
fn a_member_change_in_flight_is_no_drift() {
    for (what, observed) in [
        // Crossplane has not yet written the new members into the managed resource.
        (
            "not applied",
            observed_virtual(&["b", "a", "shared-remote"], &["b", "a"], true),
        ),
        // Written, but the provider has not reconciled that generation yet.
        ("old generation", observed_virtual(&DESIRED, &["a"], false)),
        // Every member is there, whatever the order Artifactory reports.
        (
            "all there",
            observed_virtual(&DESIRED, &["b", "a", "shared-remote"], true),
        ),
    ] {
        let response = virtual_request(observed, None);
        assert!(warnings(&response)[2].is_empty(), "{what}");
        assert!(warning_results(&response).is_empty(), "{what}");
    }
    // Not Synced, or no generation to compare: the provider may not have seen the change.
    let mut failing = observed_virtual(&DESIRED, &["a"], true);
    failing["status"]["conditions"][1]["status"] = json!("False");
    let mut no_generation = observed_virtual(&DESIRED, &["a"], true);
    no_generation["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("generation");
    // status.observedGeneration stands in for the condition's.
    let mut status_generation = observed_virtual(&DESIRED, &["a"], true);
    status_generation["status"]["conditions"][1]
        .as_object_mut()
        .unwrap()
        .remove("observedGeneration");
    status_generation["status"]["observedGeneration"] = json!(3);
    for (what, observed, warned) in [
        ("not synced", failing, false),
        ("no generation", no_generation, false),
        ("status.observedGeneration", status_generation, true),
    ] {
        let response = virtual_request(observed, None);
        assert_eq!(
            warning_results(&response).len(),
            usize::from(warned),
            "{what}"
        );
    }
}
