//! What the function renders (docs/design.md, "Rendering" and "Status and results"), validated against the provider CRDs.

use crate::support;

use function_artifactory::catalog::{catalog, ProviderApi, Rclass};
use function_artifactory::proto::v1::{Ready, Status};
use serde_json::{json, Value};
use support::requests::{
    assert_valid, composite, crds, desired_resources, input, live, namespaced_composite, request,
    status_repositories,
};

/// One entry for a kind, with what its CRD requires.
fn entry_for(rclass: Rclass, package_type: &str, index: usize) -> Value {
    let mut entry = json!({"name": format!("r{index}-{package_type}"), "rclass": rclass.as_str(), "packageType": package_type});
    match rclass {
        Rclass::Remote => entry["url"] = json!("https://upstream.example.com/repo"),
        Rclass::Federated => {
            entry["members"] =
                json!([{"url": "https://eu.example.com/artifactory/x", "enabled": true}])
        }
        _ => {}
    }
    entry
}

#[test]
fn every_kind_of_every_api_renders_and_validates() {
    let catalog = catalog();
    for api in ProviderApi::ALL {
        let entries: Vec<Value> = catalog
            .kinds(api)
            .enumerate()
            .map(|(i, kind)| entry_for(kind.rclass, &kind.package_type, i))
            .collect();
        let spec = json!({"repositories": entries});
        let xr = if api == ProviderApi::Namespaced {
            namespaced_composite(spec)
        } else {
            composite(spec)
        };
        let response = request(xr)
            .input(input(json!({"providerApi": api.as_str()})))
            .run();
        let resources = desired_resources(&response);
        assert_eq!(resources.len(), catalog.kinds(api).count(), "{api}");
        for kind in catalog.kinds(api) {
            assert!(
                resources.values().any(|r| r["kind"] == kind.kind.as_str()
                    && r["apiVersion"] == kind.api_version.as_str()),
                "{api}: {} not rendered",
                kind.kind
            );
        }
        assert_valid(api.as_str(), &resources);
    }
}

#[test]
fn every_crd_kind_is_reachable_from_the_catalog() {
    for api in ProviderApi::ALL {
        let Some(crds) = crds(api.as_str()) else {
            return;
        };
        for (api_version, kind, _) in crds.kinds() {
            let found = catalog()
                .kinds(api)
                .find(|k| k.api_version == api_version && k.kind == kind)
                .unwrap_or_else(|| panic!("{api}: {api_version} {kind} is not in the catalog"));
            let via_lookup = catalog()
                .find(api, found.rclass, &found.package_type)
                .unwrap();
            assert_eq!(via_lookup.kind, kind);
        }
        assert_eq!(crds.kinds().len(), catalog().kinds(api).count(), "{api}");
    }
}

fn team_spec() -> Value {
    json!({
        "projectKey": "team1",
        "providerConfigRef": {"name": "artifactory-prod"},
        "repositories": [
            {"name": "libs-release", "rclass": "local", "packageType": "maven", "description": "Release builds",
             "forProvider": {"xrayIndex": true}},
            {"name": "maven-central", "rclass": "remote", "packageType": "maven", "url": "https://repo1.maven.org/maven2"},
            {"name": "libs", "rclass": "virtual", "packageType": "maven",
             "repositories": ["libs-release", "maven-central"], "externalRepositories": ["shared-maven"],
             "defaultDeploymentRepo": "libs-release"},
            {"name": "libs-fed", "rclass": "federated", "packageType": "maven", "deletionPolicy": "Orphan"}
        ]
    })
}

#[test]
fn a_team_claim_renders_keys_wiring_and_settings() {
    // Everything at once (createGuard: false): the subject is what each resource says, not
    // the phases a new claim goes through (tests/function/adoption.rs).
    let response = request(composite(team_spec()))
        .input(input(
            json!({"artifactoryUrl": "https://artifactory.example.com/", "createGuard": false}),
        ))
        .run();
    let resources = desired_resources(&response);
    assert_valid("cluster", &resources);

    let local = &resources["libs-release"];
    assert_eq!(
        local["apiVersion"],
        "local.artifactory.jfrog.crossplane.io/v1alpha1"
    );
    assert_eq!(local["kind"], "MavenRepository");
    assert_eq!(
        local["metadata"]["annotations"]["crossplane.io/external-name"],
        "team1-libs-release"
    );
    assert_eq!(
        local["metadata"]["labels"]["artifactory.fn.crossplane.io/key"],
        "team1-libs-release"
    );
    assert!(
        local["metadata"].get("name").is_none(),
        "metadata.name is Crossplane's"
    );
    assert_eq!(
        local["spec"],
        json!({
            "forProvider": {"description": "Release builds", "projectKey": "team1", "xrayIndex": true},
            "providerConfigRef": {"name": "artifactory-prod"}
        })
    );
    assert_eq!(
        resources["maven-central"]["spec"]["forProvider"]["url"],
        "https://repo1.maven.org/maven2"
    );
    let virtual_ = &resources["libs"]["spec"]["forProvider"];
    assert_eq!(
        virtual_["repositories"],
        json!(["team1-libs-release", "team1-maven-central", "shared-maven"])
    );
    assert_eq!(virtual_["defaultDeploymentRepo"], "team1-libs-release");
    let federated = &resources["libs-fed"]["spec"];
    assert_eq!(
        federated["forProvider"]["member"],
        json!([{"url": "https://artifactory.example.com/artifactory/team1-libs-fed", "enabled": true}])
    );
    assert_eq!(federated["deletionPolicy"], "Orphan");
    assert!(
        resources["libs-release"]["spec"]
            .get("deletionPolicy")
            .is_none(),
        "unset stays unset"
    );
}

#[test]
fn status_lists_every_repository_in_spec_order() {
    let ready = live(
        "local.artifactory.jfrog.crossplane.io/v1alpha1",
        "MavenRepository",
        "team1-libs-release",
        true,
    );
    let response = request(composite(team_spec()))
        .input(input(
            json!({"artifactoryUrl": "https://artifactory.example.com"}),
        ))
        .observed("libs-release", ready.clone())
        .run();
    let status = status_repositories(&response);
    let names: Vec<&str> = status.iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["libs-release", "maven-central", "libs", "libs-fed"]);
    assert_eq!(
        status[0],
        json!({
            "name": "libs-release", "key": "team1-libs-release", "rclass": "local", "packageType": "maven",
            "apiVersion": "local.artifactory.jfrog.crossplane.io/v1alpha1", "kind": "MavenRepository",
            "ready": true, "synced": true, "deletion": "Delete", "adopted": false, "phase": "managed",
            "url": "https://artifactory.example.com/artifactory/team1-libs-release",
            // The spec has a projectKey and no projectEnvironments: one warning for the
            // composite, not one per entry (tests/function/drift.rs).
            "warnings": []
        })
    );
    assert_eq!(
        status[2]["members"],
        json!(["team1-libs-release", "team1-maven-central", "shared-maven"])
    );
    assert_eq!(status[3]["deletion"], "Orphan");
    assert_eq!(status[1]["ready"], false);

    let desired = response.desired.as_ref().unwrap();
    assert_eq!(desired.resources["libs-release"].ready, Ready::True as i32);
    assert_eq!(
        desired.resources["maven-central"].ready,
        Ready::False as i32
    );
    let condition = &response.conditions[0];
    assert_eq!(condition.r#type, "RepositoriesReady");
    assert_eq!(condition.status, Status::ConditionFalse as i32);
    assert_eq!(condition.reason, "Creating");
}

#[test]
fn all_ready_makes_the_condition_true() {
    let ready = live(
        "local.artifactory.jfrog.crossplane.io/v1alpha1",
        "NPMRepository",
        "a",
        true,
    );
    let spec = json!({"repositories": [{"name": "a", "rclass": "local", "packageType": "npm"}]});
    let response = request(composite(spec)).observed("a", ready).run();
    assert_eq!(response.conditions[0].status, Status::ConditionTrue as i32);
    assert_eq!(response.conditions[0].reason, "Available");
    assert!(
        response.results.is_empty(),
        "no result without a change: {:?}",
        response.results
    );
}

#[test]
fn precedence_entry_over_spec_over_input() {
    let spec = json!({
        "managementPolicies": ["Observe", "Create", "Update"],
        "repositories": [
            {"name": "a", "rclass": "local", "packageType": "npm", "providerConfigRef": {"name": "entry"}},
            {"name": "b", "rclass": "local", "packageType": "npm"}
        ]
    });
    let defaults = json!({"defaults": {"providerConfigRef": {"name": "input"}, "deletionPolicy": "Orphan", "managementPolicies": ["*"]}});
    // With the guard off, each entry's own policies render at once: the subject is where they
    // come from (the guard's are in tests/function/adoption.rs).
    let mut defaults = defaults;
    defaults["createGuard"] = json!(false);
    let resources = desired_resources(&request(composite(spec)).input(input(defaults)).run());
    assert_eq!(resources["a"]["spec"]["providerConfigRef"]["name"], "entry");
    assert_eq!(resources["b"]["spec"]["providerConfigRef"]["name"], "input");
    assert_eq!(resources["b"]["spec"]["deletionPolicy"], "Orphan");
    assert_eq!(
        resources["b"]["spec"]["managementPolicies"],
        json!(["Observe", "Create", "Update"])
    );
    assert_valid("cluster", &resources);
}

#[test]
fn namespaced_composites_render_the_namespaced_api() {
    let spec = json!({
        "providerConfigRef": {"kind": "ProviderConfig", "name": "team1"},
        "repositories": [{"name": "a", "rclass": "local", "packageType": "docker", "paused": true}]
    });
    let resources = desired_resources(&request(namespaced_composite(spec)).run());
    let a = &resources["a"];
    assert_eq!(
        a["apiVersion"],
        "local.artifactory.jfrog.m.crossplane.io/v1alpha1"
    );
    assert_eq!(a["kind"], "DockerV2Repository");
    assert_eq!(a["metadata"]["annotations"]["crossplane.io/paused"], "true");
    assert!(a["spec"].get("deletionPolicy").is_none());
    assert_valid("namespaced", &resources);
}

#[test]
fn naming_format_placeholders() {
    let spec = json!({"projectKey": "team1", "repositories": [{"name": "libs", "rclass": "local", "packageType": "maven"}]});
    let format =
        json!({"naming": {"format": "{claimNamespace}-{claimName}-{rclass}-{packageType}-{name}"}});
    let resources = desired_resources(&request(composite(spec)).input(input(format)).run());
    assert_eq!(
        resources["libs"]["metadata"]["annotations"]["crossplane.io/external-name"],
        "team1-team1-repos-local-maven-libs"
    );
}

#[test]
fn flat_api_renders_the_old_kinds() {
    let spec =
        json!({"repositories": [{"name": "a", "rclass": "local", "packageType": "generic"}]});
    let resources = desired_resources(
        &request(composite(spec))
            .input(input(json!({"providerApi": "flat"})))
            .run(),
    );
    assert_eq!(
        resources["a"]["apiVersion"],
        "artifactory.jfrog.crossplane.io/v1alpha1"
    );
    assert_eq!(resources["a"]["kind"], "LocalGenericRepository");
    assert_valid("flat", &resources);
}
