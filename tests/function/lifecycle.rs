//! Lifecycle safety (docs/design.md, "Lifecycle") over real requests, with observed
//! resources built as Crossplane sends them.

use crate::support;

use function_artifactory::proto::v1::{
    resource_selector::Match, Capability, Resources, RunFunctionResponse, Severity,
};
use serde_json::{json, Value};
use support::requests::{
    composite, desired_composite, desired_resources, fatal_message, input, live,
    namespaced_composite, request, resource, status_repositories,
};

const LOCAL_MAVEN: &str = "local.artifactory.jfrog.crossplane.io/v1alpha1";

fn spec(entries: Value) -> Value {
    json!({"repositories": entries})
}

fn libs() -> Value {
    json!([{"name": "libs", "rclass": "local", "packageType": "maven"}])
}

fn results(response: &RunFunctionResponse, severity: Severity) -> Vec<String> {
    response
        .results
        .iter()
        .filter(|r| r.severity == severity as i32)
        .map(|r| format!("{}: {}", r.reason.clone().unwrap_or_default(), r.message))
        .collect()
}

#[test]
fn a_changed_key_fails_and_says_how_to_move() {
    let observed = live(LOCAL_MAVEN, "MavenRepository", "libs-old", true);
    let response = request(composite(spec(libs())))
        .observed("libs", observed)
        .run();
    let message = fatal_message(&response).unwrap();
    assert!(message.contains("spec.repositories[0].name: repository \"libs\": the live repository has key \"libs-old\" and the spec now asks for \"libs\"; keys are immutable in Artifactory"), "{message}");
    assert!(message.contains("fix: keep the key (set key: \"libs-old\" on the entry); to move, add a new entry (with a new name) for \"libs\" and remove this one"), "{message}");
    assert_eq!(response.results[0].reason.as_deref(), Some("UnsafeChange"));
    assert!(
        response.desired.unwrap().resources.is_empty(),
        "a fatal call drops nothing and adds nothing"
    );
}

#[test]
fn a_changed_kind_fails() {
    let observed = live(LOCAL_MAVEN, "MavenRepository", "libs", true);
    let entries = json!([{"name": "libs", "rclass": "local", "packageType": "gradle"}]);
    let message = fatal_message(
        &request(composite(spec(entries)))
            .observed("libs", observed)
            .run(),
    )
    .unwrap();
    assert!(message.contains("the live repository is a MavenRepository (local.artifactory.jfrog.crossplane.io/v1alpha1) and the spec now renders a GradleRepository"), "{message}");
}

#[test]
fn the_same_key_and_kind_is_fine() {
    let observed = live(LOCAL_MAVEN, "MavenRepository", "libs", true);
    let response = request(composite(spec(libs())))
        .observed("libs", observed)
        .run();
    assert_eq!(desired_resources(&response).len(), 1);
    assert!(
        response.results.is_empty(),
        "nothing changed, nothing reported: {:?}",
        response.results
    );
}

#[test]
fn import_observes_first_unless_told_otherwise() {
    let entries = json!([
        {"name": "a", "rclass": "local", "packageType": "maven", "key": "legacy-libs", "import": true},
        {"name": "b", "rclass": "local", "packageType": "maven", "import": true, "managementPolicies": ["Observe", "Update"]}
    ]);
    let response = request(composite(spec(entries))).run();
    let resources = desired_resources(&response);
    assert_eq!(
        resources["a"]["spec"]["managementPolicies"],
        json!(["Observe"])
    );
    assert_eq!(
        resources["a"]["metadata"]["annotations"]["crossplane.io/external-name"],
        "legacy-libs"
    );
    // Its own policies wait until the provider has seen the repository: an import never
    // creates (tests/function/adoption.rs has the takeover that follows).
    assert_eq!(
        resources["b"]["spec"]["managementPolicies"],
        json!(["Observe"])
    );
    let status = status_repositories(&response);
    assert_eq!(status[0]["adopted"], true);
    assert_eq!(status[1]["phase"], "adopted");
    assert_eq!(status[0]["deletion"], "Orphan");
    assert!(results(&response, Severity::Normal)[0]
        .contains("adopting 2 repositories: legacy-libs (local maven), b (local maven)"));
}

#[test]
fn effective_deletion_table_row_by_row() {
    let rows = [
        (json!(null), json!(null), "Delete"),
        (json!(["*"]), json!("Delete"), "Delete"),
        (json!(["*"]), json!("Orphan"), "Orphan"),
        (
            json!(["Observe", "Create", "Update", "Delete"]),
            json!(null),
            "Delete",
        ),
        (
            json!(["Observe", "Create", "Update", "Delete"]),
            json!("Orphan"),
            "Delete",
        ),
        (
            json!(["Observe", "Create", "Update"]),
            json!("Delete"),
            "Orphan",
        ),
        (
            json!(["Observe", "Create", "Update"]),
            json!(null),
            "Orphan",
        ),
        (json!(["Observe"]), json!("Orphan"), "Orphan"),
    ];
    for (policies, deletion, expected) in rows {
        let mut entry = json!({"name": "a", "rclass": "local", "packageType": "maven"});
        if !policies.is_null() {
            entry["managementPolicies"] = policies.clone();
        }
        if !deletion.is_null() {
            entry["deletionPolicy"] = deletion.clone();
        }
        // A repository this claim manages (no origin annotation: composed before the guard),
        // so the entry's own policies render: a new one is created under the guard's.
        let managed = live(LOCAL_MAVEN, "MavenRepository", "a", true);
        let status = status_repositories(
            &request(composite(spec(json!([entry]))))
                .observed("a", managed)
                .run(),
        );
        assert_eq!(status[0]["deletion"], expected, "{policies} {deletion}");
    }
    for (policies, expected) in [
        (json!(null), "Delete"),
        (json!(["*"]), "Delete"),
        (json!(["Observe", "Delete"]), "Delete"),
        (json!(["Observe", "Update"]), "Orphan"),
    ] {
        let mut entry = json!({"name": "a", "rclass": "local", "packageType": "maven"});
        if !policies.is_null() {
            entry["managementPolicies"] = policies.clone();
        }
        let managed = live(
            "local.artifactory.jfrog.m.crossplane.io/v1alpha1",
            "MavenRepository",
            "a",
            true,
        );
        let status = status_repositories(
            &request(namespaced_composite(spec(json!([entry]))))
                .observed("a", managed)
                .run(),
        );
        assert_eq!(status[0]["deletion"], expected, "namespaced {policies}");
    }
}

/// The observed state after the first call of a removal, as Crossplane reports it back.
fn with_status(xr: Value, status: Value) -> Value {
    let mut xr = xr;
    xr["status"] = status;
    xr
}

#[test]
fn a_removed_repository_is_orphaned_first_then_released() {
    let old = live(LOCAL_MAVEN, "MavenRepository", "old-libs", true);
    // Call 1: "old" is gone from the spec and would be deleted with its artifacts.
    let first = request(composite(spec(libs())))
        .observed("old", old.clone())
        .run();
    let resources = desired_resources(&first);
    assert_eq!(resources["old"]["spec"]["deletionPolicy"], "Orphan");
    assert_eq!(
        resources["old"]["metadata"]["annotations"]["crossplane.io/external-name"],
        "old-libs"
    );
    assert_eq!(
        resources["old"]["spec"]["forProvider"],
        json!({}),
        "nothing else about it changes"
    );
    assert!(results(&first, Severity::Warning)[0]
        .starts_with("RepositoryRetiring: repository old (key old-libs) is gone from the spec"));
    let status = desired_composite(&first)["status"].clone();
    assert_eq!(
        status["retiring"],
        json!([{"name": "old", "key": "old-libs", "deletion": "Orphan"}])
    );

    // Call 1 again, before the orphaning is applied: still kept, no second warning.
    let again = request(with_status(composite(spec(libs())), status.clone()))
        .observed("old", old.clone())
        .run();
    assert!(desired_resources(&again).contains_key("old"));
    assert!(results(&again, Severity::Warning).is_empty());

    // Call 2: the orphaning is applied; now it can go, and the repository stays.
    let mut orphaned = old;
    orphaned["spec"]["deletionPolicy"] = json!("Orphan");
    let second = request(with_status(composite(spec(libs())), status))
        .observed("old", orphaned)
        .run();
    assert!(!desired_resources(&second).contains_key("old"));
    assert!(results(&second, Severity::Normal)
        .iter()
        .any(|r| r.starts_with("RepositoryReleased: repository old (key old-libs)")));
}

#[test]
fn a_namespaced_removal_drops_delete_from_the_policies() {
    let old = live(
        "local.artifactory.jfrog.m.crossplane.io/v1alpha1",
        "MavenRepository",
        "old-libs",
        true,
    );
    let first = request(namespaced_composite(spec(libs())))
        .observed("old", old.clone())
        .run();
    let resources = desired_resources(&first);
    assert_eq!(
        resources["old"]["spec"]["managementPolicies"],
        json!(["Observe", "Create", "Update", "LateInitialize"])
    );
    assert!(resources["old"]["spec"].get("deletionPolicy").is_none());
    let mut orphaned = old;
    orphaned["spec"]["managementPolicies"] =
        json!(["Observe", "Create", "Update", "LateInitialize"]);
    let second = request(namespaced_composite(spec(libs())))
        .observed("old", orphaned)
        .run();
    assert!(!desired_resources(&second).contains_key("old"));
}

#[test]
fn a_renamed_entry_retires_the_old_name() {
    let old = live(LOCAL_MAVEN, "MavenRepository", "libs", true);
    let renamed =
        json!([{"name": "libs-new", "rclass": "local", "packageType": "maven", "key": "libs"}]);
    let resources = desired_resources(
        &request(composite(spec(renamed)))
            .observed("libs", old)
            .run(),
    );
    assert_eq!(resources["libs"]["spec"]["deletionPolicy"], "Orphan");
    // The key moves: the new name only observes until the old resource is gone (see the test
    // below), never two managed resources acting on one repository.
    assert_eq!(
        resources["libs-new"]["spec"]["managementPolicies"],
        json!(["Observe"])
    );
}

#[test]
fn without_protection_a_removed_repository_goes_at_once() {
    let old = live(LOCAL_MAVEN, "MavenRepository", "old-libs", true);
    let response = request(composite(spec(libs())))
        .input(input(json!({"deletionProtection": false})))
        .observed("old", old)
        .run();
    assert!(!desired_resources(&response).contains_key("old"));
    assert!(results(&response, Severity::Warning)[0].starts_with("RepositoryDeleted:"));
}

#[test]
fn a_fatal_call_never_drops_anything() {
    let old = live(LOCAL_MAVEN, "MavenRepository", "old-libs", true);
    let bad = json!([{"name": "libs", "rclass": "local", "packageType": "maven", "key": "a/b"}]);
    let req = request(composite(spec(bad))).observed("old", old).build();
    let response = function_artifactory::run_function(&req);
    assert!(fatal_message(&response).is_some());
    assert_eq!(response.desired, req.desired);
}

#[test]
fn resources_of_other_steps_are_not_retired() {
    let other = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}});
    let response = request(composite(spec(libs())))
        .observed("config", other)
        .run();
    assert!(!desired_resources(&response).contains_key("config"));
    assert!(response
        .results
        .iter()
        .all(|r| !r.message.contains("config")));
}

#[test]
fn a_suspected_leak_is_reported_once_and_identity_kept() {
    let mut observed = live(LOCAL_MAVEN, "MavenRepository", "libs", false);
    observed["metadata"]["annotations"]["crossplane.io/external-create-pending"] =
        json!("2026-11-01T10:05:00Z");
    observed["metadata"]["annotations"]["crossplane.io/external-create-succeeded"] =
        json!("2026-11-01T10:00:00Z");
    let response = request(composite(spec(libs())))
        .observed("libs", observed.clone())
        .run();
    assert_eq!(
        desired_resources(&response)["libs"]["metadata"]["annotations"]
            ["crossplane.io/external-name"],
        "libs"
    );
    let status = status_repositories(&response);
    assert_eq!(status[0]["leakSuspected"], true);
    assert!(results(&response, Severity::Warning)[0]
        .starts_with("CreationMayHaveLeaked: repository libs (key libs)"));

    let previous = json!({"repositories": status});
    let again = request(with_status(composite(spec(libs())), previous))
        .observed("libs", observed.clone())
        .run();
    assert!(
        results(&again, Severity::Warning).is_empty(),
        "reported only when it first appears"
    );

    observed["metadata"]["annotations"]["crossplane.io/external-create-succeeded"] =
        json!("2026-11-01T10:06:00Z");
    let settled = request(composite(spec(libs())))
        .observed("libs", observed)
        .run();
    assert!(status_repositories(&settled)[0]
        .get("leakSuspected")
        .is_none());
}

fn with_required_resources(
    builder: support::requests::RequestBuilder,
) -> function_artifactory::proto::v1::RunFunctionRequest {
    builder.capability(Capability::RequiredResources).build()
}

#[test]
fn key_requirements_are_asked_for_and_stable() {
    let req = with_required_resources(request(composite(spec(libs()))));
    let first = function_artifactory::run_function(&req);
    let requirements = first.requirements.clone().unwrap().resources;
    let selector = &requirements["artifactory-key-libs"];
    assert_eq!(
        (selector.api_version.as_str(), selector.kind.as_str()),
        (LOCAL_MAVEN, "MavenRepository")
    );
    let Some(Match::MatchLabels(labels)) = &selector.r#match else {
        panic!("match labels")
    };
    assert_eq!(labels.labels["artifactory.fn.crossplane.io/key"], "libs");

    // Crossplane calls again with what it found (nothing): the same requirements.
    let mut second_req = req.clone();
    second_req
        .required_resources
        .insert("artifactory-key-libs".into(), Resources::default());
    let second = function_artifactory::run_function(&second_req);
    assert_eq!(second.requirements, first.requirements);
    assert!(fatal_message(&second).is_none());

    // Without the capability nothing is asked.
    assert!(request(composite(spec(libs())))
        .run()
        .requirements
        .is_none());
}

#[test]
fn a_key_owned_by_another_composite_is_a_conflict() {
    let mut theirs = live(LOCAL_MAVEN, "MavenRepository", "libs", true);
    theirs["metadata"]["ownerReferences"] = json!([{
        "apiVersion": "platform.example.org/v1alpha1", "kind": "XRepositories", "name": "team2-repos-abcde",
        "uid": "99999999-0000-4000-8000-000000000000", "controller": true, "blockOwnerDeletion": true
    }]);
    let mut req = with_required_resources(request(composite(spec(libs()))));
    req.required_resources.insert(
        "artifactory-key-libs".into(),
        Resources {
            items: vec![resource(theirs.clone())],
        },
    );
    let response = function_artifactory::run_function(&req);
    let message = fatal_message(&response).unwrap();
    assert!(message.contains("repository \"libs\": key \"libs\" is already managed by XRepositories \"team2-repos-abcde\""), "{message}");
    assert_eq!(response.results[0].reason.as_deref(), Some("KeyConflict"));
    assert!(
        response.requirements.is_some(),
        "requirements stay the same on a conflict"
    );

    // Our own managed resource is no conflict.
    theirs["metadata"]["ownerReferences"][0]["uid"] = json!("4f6c8f0e-0000-4000-8000-000000000001");
    req.required_resources.insert(
        "artifactory-key-libs".into(),
        Resources {
            items: vec![resource(theirs)],
        },
    );
    assert!(fatal_message(&function_artifactory::run_function(&req)).is_none());
}

/// An entry renamed with its key kept is a move: the old resource is orphaned and released
/// first (even without deletion protection); the new one meanwhile only observes, carrying
/// what the key was (`moved`: the claim's), so two managed resources never act on one
/// repository and no other composite can take the key; then it takes the key over.
#[test]
fn renaming_an_entry_with_its_key_moves_the_repository_in_two_phases() {
    let renamed =
        json!([{"name": "libs-new", "key": "libs", "rclass": "local", "packageType": "maven"}]);
    let old = live(LOCAL_MAVEN, "MavenRepository", "libs", true);
    let mut moving = Value::Null;
    for protection in [true, false] {
        let first = request(composite(spec(renamed.clone())))
            .input(input(json!({"deletionProtection": protection})))
            .observed("libs-old", old.clone())
            .run();
        assert_eq!(fatal_message(&first), None);
        let resources = desired_resources(&first);
        assert_eq!(resources.len(), 2, "{protection}: {resources:?}");
        assert_eq!(
            resources["libs-old"]["spec"]["deletionPolicy"], "Orphan",
            "{protection}"
        );
        moving = resources["libs-new"].clone();
        assert_eq!(moving["spec"]["managementPolicies"], json!(["Observe"]));
        assert_eq!(
            moving["metadata"]["annotations"]["artifactory.fn.crossplane.io/origin"],
            "moved"
        );
        let normal = results(&first, Severity::Normal);
        assert!(
            normal.iter().any(|r| r == "RepositoryMoving: repository key \"libs\" moves from composed resource \"libs-old\" to \"libs-new\": \"libs-old\" is released first (the repository is kept), then \"libs-new\" takes the repository over"),
            "{normal:?}"
        );
        assert!(
            !normal.iter().any(|r| r.contains("creating libs")),
            "{normal:?}"
        );
    }
    // The new resource as the provider shows it: observing the repository.
    moving["status"] = old["status"].clone();

    // The orphaning applied: the old resource is left out (Crossplane deletes it, the
    // repository stays) and the new one still only observes.
    let mut orphaned = old;
    orphaned["spec"]["deletionPolicy"] = json!("Orphan");
    let second = request(composite(spec(renamed.clone())))
        .observed("libs-old", orphaned)
        .observed("libs-new", moving.clone())
        .run();
    let resources = desired_resources(&second);
    assert_eq!(resources.len(), 1, "{resources:?}");
    assert_eq!(
        resources["libs-new"]["spec"]["managementPolicies"],
        json!(["Observe"])
    );

    // The old resource gone: the new one takes the key, with the entry's own policies.
    let third = request(composite(spec(renamed)))
        .observed("libs-new", moving)
        .run();
    let resources = desired_resources(&third);
    assert_eq!(
        resources["libs-new"]["metadata"]["annotations"]["crossplane.io/external-name"],
        "libs"
    );
    assert_eq!(
        resources["libs-new"]["spec"]["managementPolicies"],
        Value::Null
    );
    assert_eq!(resources["libs-new"]["spec"]["deletionPolicy"], Value::Null);
}
