//! Every key rule and every wiring error, each with the message it produces
//! (docs/design.md, "Keys", "Rendering" and "Wiring"), and all problems of a call in one fatal result.

use crate::support;

use serde_json::{json, Value};
use support::requests::{
    composite, desired_resources, fatal_message, input, namespaced_composite, request,
    status_repositories,
};

fn local(name: &str, package_type: &str) -> Value {
    json!({"name": name, "rclass": "local", "packageType": package_type})
}

fn with(mut entry: Value, field: &str, value: Value) -> Value {
    entry[field] = value;
    entry
}

/// The fatal message for a composite with these entries (and the spec fields given).
fn fatal_for(spec: Value) -> String {
    let response = request(composite(spec)).run();
    let message = fatal_message(&response).expect("a fatal result");
    assert_eq!(
        response.desired.as_ref().unwrap().resources.len(),
        0,
        "nothing rendered on a fatal result"
    );
    message
}

fn fatal_for_entries(entries: Vec<Value>) -> String {
    fatal_for(json!({"repositories": entries}))
}

fn assert_line(message: &str, expected: &str) {
    assert!(
        message.lines().any(|l| l == format!("- {expected}")),
        "expected the line\n- {expected}\nin\n{message}"
    );
}

#[test]
fn empty_key() {
    let m = fatal_for_entries(vec![with(local("a", "maven"), "key", json!(""))]);
    assert_line(&m, "spec.repositories[0].key: repository \"a\": key \"\" (from key) is empty; fix: set key, or a naming format that yields a key");
}

#[test]
fn too_long_keys_per_class() {
    let m = fatal_for_entries(vec![
        with(local("a", "maven"), "key", json!("k".repeat(65))),
        json!({"name": "b", "rclass": "remote", "packageType": "npm", "url": "https://r.example.com", "key": "k".repeat(59)}),
        with(local("c", "docker"), "key", json!("c".repeat(64))),
    ]);
    assert!(
        m.contains("is 65 characters long; local maven keys may have at most 64"),
        "{m}"
    );
    assert!(
        m.contains("is 59 characters long; remote npm keys may have at most 58"),
        "{m}"
    );
    assert!(
        m.contains("is 64 characters long; local dockerv2 keys may have at most 63"),
        "{m}"
    );
}

#[test]
fn white_space_and_forbidden_characters() {
    let m = fatal_for_entries(vec![
        with(local("a", "maven"), "key", json!(" lead")),
        with(local("b", "maven"), "key", json!("a/b:c")),
    ]);
    assert_line(&m, "spec.repositories[0].key: repository \"a\": key \" lead\" (from key) starts or ends with white space; fix: use \"lead\"");
    assert!(m.contains("spec.repositories[0].key: repository \"a\": key \" lead\" (from key) contains characters Artifactory forbids in keys: ' '"), "{m}");
    assert_line(&m, "spec.repositories[1].key: repository \"b\": key \"a/b:c\" (from key) contains characters Artifactory forbids in keys: '/' ':'; fix: use letters, digits, '-', '_' and '.', for example \"a-b-c\"");
}

#[test]
fn upper_case_and_underscore_for_image_types() {
    let m = fatal_for_entries(vec![
        with(local("a", "docker"), "key", json!("Team_Images")),
        with(local("b", "oci"), "key", json!("Oci")),
        json!({"name": "c", "rclass": "virtual", "packageType": "helmoci", "key": "helm_charts"}),
    ]);
    assert_line(&m, "spec.repositories[0].key: repository \"a\": key \"Team_Images\" (from key) has upper case or '_', which dockerv2 keys may not have; fix: use \"team-images\"");
    assert!(
        m.contains("key \"Oci\" (from key) has upper case or '_', which oci keys may not have"),
        "{m}"
    );
    assert!(
        m.contains(
            "key \"helm_charts\" (from key) has upper case or '_', which helmoci keys may not have"
        ),
        "{m}"
    );
    // maven keys may have both.
    assert!(fatal_message(
        &request(composite(
            json!({"repositories": [with(local("d", "maven"), "key", json!("Libs_A"))]})
        ))
        .run()
    )
    .is_none());
}

#[test]
fn reserved_keys_prefixes_and_cache_suffix() {
    let m = fatal_for_entries(vec![
        with(local("a", "maven"), "key", json!("Artifactory-Build-Info")),
        with(
            local("b", "maven"),
            "key",
            json!("jfrog-artifactory-system-x"),
        ),
        with(local("c", "maven"), "key", json!("libs-cache")),
        local("nginx", "generic"),
    ]);
    assert_line(&m, "spec.repositories[0].key: repository \"a\": key \"Artifactory-Build-Info\" (from key) is reserved by Artifactory; fix: choose another key");
    assert!(m.contains("key \"jfrog-artifactory-system-x\" (from key) starts with \"jfrog-artifactory-system\", which Artifactory reserves"), "{m}");
    assert_line(&m, "spec.repositories[2].key: repository \"c\": key \"libs-cache\" (from key) ends in \"-cache\", which Artifactory reserves for the caches of remote repositories; fix: choose another ending, such as \"libs-cached\"");
    assert_line(&m, "spec.repositories[3].name: repository \"nginx\": key \"nginx\" (from naming format \"{name}\") is reserved by Artifactory; fix: choose another key");
}

#[test]
fn keys_equal_ignoring_case() {
    let m = fatal_for_entries(vec![
        with(local("a", "maven"), "key", json!("Libs")),
        with(local("b", "npm"), "key", json!("libs")),
    ]);
    assert_line(&m, "spec.repositories[1].key: repository \"b\": key \"libs\" is also the key of repository \"a\" at spec.repositories[0] (keys are compared ignoring case); fix: give each repository its own key");
}

#[test]
fn project_key_pattern() {
    let m = fatal_for(json!({"projectKey": "Team_1", "repositories": []}));
    assert_line(&m, "spec.projectKey: \"Team_1\" is not a JFrog project key (rule: ^[a-z][a-z0-9-]{1,31}$); fix: use 2 to 32 lower-case letters, digits or '-', starting with a letter");
}

#[test]
fn warnings_do_not_fail() {
    // projectEnvironments set: the projectKey drift warning (tests/function/drift.rs) is not this
    // test's subject.
    let entry = with(local("a", "maven"), "key", json!("1libs"));
    let entry = with(
        entry,
        "forProvider",
        json!({"projectEnvironments": ["DEV"]}),
    );
    let spec = json!({"projectKey": "team1", "repositories": [entry]});
    let response = request(composite(spec)).run();
    desired_resources(&response);
    let warnings = &status_repositories(&response)[0]["warnings"];
    assert_eq!(
        warnings,
        &json!([
            "key \"1libs\" starts with a digit, which some clients handle badly",
            "key \"1libs\" does not start with the project key prefix \"team1-\""
        ])
    );
}

#[test]
fn naming_format_errors() {
    let response = request(composite(json!({"repositories": [local("a", "maven")]})))
        .input(input(
            json!({"naming": {"format": "{team}-{projectKey}-{name}"}}),
        ))
        .run();
    let m = fatal_message(&response).unwrap();
    assert!(m.contains("input.naming.format: naming format \"{team}-{projectKey}-{name}\" uses the unknown placeholder {team}; fix: use only {name}, {projectKey}"), "{m}");
    assert!(
        m.contains("uses {projectKey}, which has no value: the composite has no spec.projectKey"),
        "{m}"
    );
}

#[test]
fn unknown_fields_are_named_with_a_suggestion() {
    let m = fatal_for_entries(vec![
        with(local("a", "maven"), "descripton", json!("x")),
        with(
            local("b", "maven"),
            "forProvider",
            json!({"xrayIndx": true}),
        ),
    ]);
    assert_line(&m, "spec.repositories[0].descripton: unknown field \"descripton\"; fix: remove it or correct its name: did you mean \"description\"?");
    assert_line(&m, "spec.repositories[1].forProvider.xrayIndx: repository \"b\": MavenRepository has no forProvider field \"xrayIndx\"; fix: remove it or correct its name: did you mean \"xrayIndex\"?");
}

#[test]
fn typed_and_for_provider_must_agree() {
    let same = with(
        with(local("a", "maven"), "description", json!("x")),
        "forProvider",
        json!({"description": "x"}),
    );
    assert!(fatal_message(&request(composite(json!({"repositories": [same]}))).run()).is_none());
    let different = with(
        with(local("a", "maven"), "description", json!("x")),
        "forProvider",
        json!({"description": "y"}),
    );
    let m = fatal_for_entries(vec![different]);
    assert_line(&m, "spec.repositories[0].forProvider.description: repository \"a\": forProvider.description is \"y\" but spec.repositories[0].description gives \"x\"; fix: give description once, as spec.repositories[0].description");
}

#[test]
fn unknown_package_type_lists_what_exists() {
    let m = fatal_for_entries(vec![local("a", "mavn"), local("b", "vcs")]);
    assert!(m.contains("spec.repositories[0].packageType: repository \"a\": the cluster provider API has no local repository of package type \"mavn\"; fix: use a package type that has a local kind in the cluster API: alpine, ansible,"), "{m}");
    assert!(m.contains("(did you mean \"maven\"?)"), "{m}");
    assert!(
        m.contains("has no local repository of package type \"vcs\"; fix"),
        "{m}"
    );
}

#[test]
fn remote_without_url_and_federated_without_members() {
    let m = fatal_for_entries(vec![
        json!({"name": "r", "rclass": "remote", "packageType": "maven"}),
        json!({"name": "f", "rclass": "federated", "packageType": "maven"}),
    ]);
    assert_line(&m, "spec.repositories[0].url: repository \"r\": MavenRepository requires spec.forProvider.url while it may create or update the repository; fix: set url to the upstream URL, such as https://repo1.maven.org/maven2");
    assert!(m.contains("spec.repositories[1].members: repository \"f\": MavenRepository requires spec.forProvider.member"), "{m}");
    // Observing only: the CRD does not require them.
    let observe = json!({"name": "r", "rclass": "remote", "packageType": "maven", "managementPolicies": ["Observe"]});
    assert!(fatal_message(&request(composite(json!({"repositories": [observe]}))).run()).is_none());
}

#[test]
fn wiring_errors() {
    let m = fatal_for_entries(vec![
        local("libs-release", "maven"),
        local("npm-local", "npm"),
        json!({"name": "remote", "rclass": "remote", "packageType": "maven", "url": "https://r.example.com"}),
        json!({"name": "libs", "rclass": "virtual", "packageType": "maven",
               "repositories": ["libs-relase", "npm-local", "libs", "remote"], "defaultDeploymentRepo": "remote"}),
        with(
            local("plain", "maven"),
            "url",
            json!("https://x.example.com"),
        ),
    ]);
    assert_line(&m, "spec.repositories[3].repositories[0]: repository \"libs\": member \"libs-relase\" names no repository entry of this composite; fix: name an entry of spec.repositories (did you mean \"libs-release\"?), or list a repository outside this composite by key in externalRepositories");
    assert_line(&m, "spec.repositories[3].repositories[1]: repository \"libs\": member \"npm-local\" is an npm repository, and this virtual aggregates maven; fix: members of a virtual must share its package type; remove \"npm-local\" or change its packageType");
    assert_line(&m, "spec.repositories[3].repositories[2]: repository \"libs\": a virtual repository cannot contain itself; fix: remove \"libs\" from repositories");
    assert_line(&m, "spec.repositories[3].defaultDeploymentRepo: repository \"libs\": defaultDeploymentRepo \"remote\" is a remote repository; deployments go to a local one; fix: add a local repository to repositories and name it here, or remove defaultDeploymentRepo");
    assert_line(&m, "spec.repositories[4].url: repository \"plain\": url is for remote repositories, and this one is local; fix: remove url, or change rclass to remote");
}

#[test]
fn default_deployment_repo_must_be_a_listed_member() {
    let m = fatal_for_entries(vec![
        local("a", "maven"),
        local("b", "maven"),
        json!({"name": "v", "rclass": "virtual", "packageType": "maven", "repositories": ["a"], "defaultDeploymentRepo": "b"}),
    ]);
    assert_line(&m, "spec.repositories[2].defaultDeploymentRepo: repository \"v\": defaultDeploymentRepo \"b\" is not one of this virtual's repositories; fix: name one of the local members: a");
}

#[test]
fn virtual_cycles() {
    let m = fatal_for_entries(vec![
        json!({"name": "v1", "rclass": "virtual", "packageType": "npm", "repositories": ["v2"]}),
        json!({"name": "v2", "rclass": "virtual", "packageType": "npm", "repositories": ["v3"]}),
        json!({"name": "v3", "rclass": "virtual", "packageType": "npm", "repositories": ["v1"]}),
    ]);
    assert_line(&m, "spec.repositories[0].repositories: repository \"v1\": virtual repositories form a cycle: v1 -> v2 -> v3 -> v1; fix: remove one of the virtual members so that no virtual contains itself through others");
    assert_eq!(
        m.matches("form a cycle").count(),
        1,
        "one cycle, reported once: {m}"
    );
}

#[test]
fn docker_virtuals_take_docker_v2_locals() {
    let spec = json!({"repositories": [
        local("images", "docker"),
        json!({"name": "all-images", "rclass": "virtual", "packageType": "docker", "repositories": ["images"], "defaultDeploymentRepo": "images"})
    ]});
    // Rendered at once (createGuard: false): the wiring is the subject, not the new virtual
    // waiting for its members (tests/function/adoption.rs).
    let resources = desired_resources(
        &request(composite(spec))
            .input(input(json!({"createGuard": false})))
            .run(),
    );
    assert_eq!(
        resources["all-images"]["spec"]["forProvider"]["repositories"],
        json!(["images"])
    );
}

#[test]
fn every_problem_in_one_result() {
    let m = fatal_for(json!({
        "projectKey": "X",
        "repositories": [
            {"name": "a", "rclass": "locl", "packageType": "maven"},
            {"name": "b", "rclass": "local", "packageType": "maven", "key": "b/c"},
            {"name": "b", "rclass": "local", "packageType": "maven"}
        ]
    }));
    assert!(
        m.starts_with("cannot render the Artifactory repositories: 4 problems\n"),
        "{m}"
    );
    let response = request(composite(
        json!({"repositories": [{"name": "a", "rclass": "locl", "packageType": "maven"}]}),
    ))
    .run();
    assert_eq!(
        response.results[0].reason.as_deref(),
        Some("InvalidComposite")
    );
}

#[test]
fn namespaced_api_has_no_deletion_policy() {
    let spec = json!({"deletionPolicy": "Orphan", "repositories": [local("a", "maven")]});
    let m = fatal_message(&request(namespaced_composite(spec)).run()).unwrap();
    assert!(m.contains("spec.deletionPolicy: the namespaced provider API has no deletionPolicy; fix: remove it; to keep the repository"), "{m}");
}

#[test]
fn key_in_for_provider_is_refused() {
    let m = fatal_for_entries(vec![with(
        local("a", "maven"),
        "forProvider",
        json!({"key": "x"}),
    )]);
    assert_line(&m, "spec.repositories[0].forProvider.key: repository \"a\": the provider has no forProvider.key; the key is the external name; fix: set key on the repository entry instead");
}

#[test]
fn the_flat_api_has_no_federated_repositories() {
    let entries = json!([{"name": "f", "rclass": "federated", "packageType": "maven", "members": [{"url": "https://x.example.com/artifactory/f"}]}]);
    let response = request(composite(json!({"repositories": entries})))
        .input(input(json!({"providerApi": "flat"})))
        .run();
    let m = fatal_message(&response).unwrap();
    assert_line(&m, "spec.repositories[0].packageType: repository \"f\": the flat provider API has no federated repository of package type \"maven\" (the cluster and namespaced provider APIs have it); fix: the flat API has no federated repositories at all: use another rclass, or providerApi cluster or namespaced");
}

/// A remote proxies its url: every remote needs one while it may be created or updated, also
/// where the provider's CRD has no rule for it (npm, ansible, huggingfaceml).
#[test]
fn every_remote_needs_a_url_while_it_may_be_created_or_updated() {
    for (package_type, kind) in [
        ("npm", "NPMRepository"),
        ("ansible", "AnsibleRepository"),
        ("huggingfaceml", "HuggingFaceMLRepository"),
        ("maven", "MavenRepository"),
    ] {
        let remote = json!({"name": "upstream", "rclass": "remote", "packageType": package_type});
        let message = fatal_for_entries(vec![remote.clone()]);
        assert!(message.contains(": 1 problem"), "{message}");
        assert_line(
            &message,
            &format!("spec.repositories[0].url: repository \"upstream\": {kind} requires spec.forProvider.url while it may create or update the repository; fix: set url to the upstream URL, such as https://repo1.maven.org/maven2"),
        );
        // Observed only: the provider creates nothing, so no url is needed.
        let observed = with(remote, "managementPolicies", json!(["Observe"]));
        let response = request(composite(json!({"repositories": [observed]}))).run();
        assert_eq!(fatal_message(&response), None, "{package_type}");
    }
}

/// A typo in an entry's rclass is reported once: the virtuals that list the entry do not add
/// "names no repository entry" for it.
#[test]
fn a_bad_rclass_is_reported_once_not_again_by_the_virtuals_that_list_it() {
    let message = fatal_for_entries(vec![
        json!({"name": "libs-release", "rclass": "locl", "packageType": "maven"}),
        local("libs-snapshot", "maven"),
        json!({"name": "libs", "rclass": "virtual", "packageType": "maven",
               "repositories": ["libs-release", "libs-snapshot"],
               "defaultDeploymentRepo": "libs-release"}),
    ]);
    assert!(message.contains(": 1 problem"), "{message}");
    assert!(message.contains("spec.repositories[0].rclass"), "{message}");
    assert!(!message.contains("names no repository entry"), "{message}");
    // A member that names no entry at all still is one, and the suggestion includes the
    // entry that could not be planned.
    let message = fatal_for_entries(vec![
        json!({"name": "libs-release", "rclass": "locl", "packageType": "maven"}),
        json!({"name": "libs", "rclass": "virtual", "packageType": "maven",
               "repositories": ["libs-relase"]}),
    ]);
    assert!(
        message.contains("member \"libs-relase\" names no repository entry of this composite; fix: name an entry of spec.repositories (did you mean \"libs-release\"?)"),
        "{message}"
    );
}

/// A changed projectKey renames every live repository: one problem at spec.projectKey that
/// lists them, not one per repository that never names projectKey.
#[test]
fn a_changed_project_key_is_reported_once_at_spec_project_key() {
    let message = project_key_change(Some("team2"), [Some("team1"), Some("team1")]);
    assert!(message.contains(": 1 problem"), "{message}");
    assert_line(
        &message,
        "spec.projectKey: changing projectKey from \"team1\" to \"team2\" would rename 2 live repositories: \"team1-libs-release\" -> \"team2-libs-release\", \"team1-libs-snapshot\" -> \"team2-libs-snapshot\"; keys are immutable in Artifactory, so each would be orphaned and a new one created; fix: restore projectKey: \"team1\", the value the live keys were made with; to move the repositories to the new project, add new entries and remove these, which are then retired safely",
    );
}

/// The fatal message when the composite asks for `project_key` and the two live repositories
/// were rendered with `was` as their `forProvider.projectKey` (keys `team1-...`).
fn project_key_change(project_key: Option<&str>, was: [Option<&str>; 2]) -> String {
    use support::requests::live;
    let mut spec = json!({"repositories": [
        local("libs-release", "maven"), local("libs-snapshot", "maven")]});
    if let Some(project_key) = project_key {
        spec["projectKey"] = json!(project_key);
    }
    let mut builder = request(composite(spec));
    for (name, was) in ["libs-release", "libs-snapshot"].into_iter().zip(was) {
        let mut object = live(
            "local.artifactory.jfrog.crossplane.io/v1alpha1",
            "MavenRepository",
            &format!("team1-{name}"),
            true,
        );
        if let Some(was) = was {
            object["spec"]["forProvider"]["projectKey"] = json!(was);
        }
        builder = builder.observed(name, object);
    }
    fatal_message(&builder.run()).unwrap()
}

/// The old projectKey is gone from the composite, but the live repositories still carry it:
/// the message names it, or says it was unset, or, where they disagree, names none.
#[test]
fn a_changed_project_key_names_the_old_value() {
    let from_unset = project_key_change(Some("team2"), [None, None]);
    assert!(
        from_unset.contains("- spec.projectKey: changing projectKey from unset to \"team2\" would rename 2 live repositories"),
        "{from_unset}"
    );
    assert!(
        from_unset.contains("fix: remove projectKey, as the live keys were made without one;"),
        "{from_unset}"
    );
    let disagreeing = project_key_change(Some("team2"), [Some("team1"), Some("team3")]);
    assert!(
        disagreeing.contains("- spec.projectKey: changing projectKey to \"team2\" would rename"),
        "{disagreeing}"
    );
    assert!(
        disagreeing.contains("fix: restore projectKey to the value the live keys were made with;"),
        "{disagreeing}"
    );
}

/// A misspelled member is one root cause: the default deployment repository's problem that
/// only follows from it is not reported again, and the member's fix says what it brings along.
#[test]
fn a_misspelled_member_is_reported_once_not_again_at_default_deployment_repo() {
    let virtual_ = |default: &str| {
        json!({"name": "libs", "rclass": "virtual", "packageType": "maven",
               "repositories": ["libs-relase", "libs-snapshot"], "defaultDeploymentRepo": default})
    };
    let entries = |default: &str| {
        vec![
            local("libs-release", "maven"),
            local("libs-snapshot", "maven"),
            virtual_(default),
        ]
    };
    // The default names the entry the member was meant to name.
    let m = fatal_for_entries(entries("libs-release"));
    assert!(m.contains(": 1 problem"), "{m}");
    assert_line(&m, "spec.repositories[2].repositories[0]: repository \"libs\": member \"libs-relase\" names no repository entry of this composite; fix: name an entry of spec.repositories (did you mean \"libs-release\"?), or list a repository outside this composite by key in externalRepositories; defaultDeploymentRepo \"libs-release\" is a member once this is fixed");
    // The same typo in both fields.
    let m = fatal_for_entries(entries("libs-relase"));
    assert!(m.contains(": 1 problem"), "{m}");
    assert!(
        m.ends_with(
            "; defaultDeploymentRepo names \"libs-relase\" too: correct it with this member"
        ),
        "{m}"
    );
    // A default with a cause of its own is still reported: a remote takes no deployments.
    let mut remote = entries("maven-central");
    remote.push(json!({"name": "maven-central", "rclass": "remote", "packageType": "maven", "url": "https://r.example.com"}));
    let m = fatal_for_entries(remote);
    assert!(m.contains(": 2 problems"), "{m}");
    assert!(m.contains("spec.repositories[2].defaultDeploymentRepo: repository \"libs\": defaultDeploymentRepo \"maven-central\""), "{m}");
}
