//! Upgrading without a dead end (docs/upgrading.md): provider releases that rename kinds, the
//! v0.7.0 group move, Crossplane v1 claims to v2 namespaced composites, retirement of
//! resources composed without the key label, and a Composition's changed naming format. Each
//! move is a sequence of calls, every observed resource shaped as the provider writes it:
//!
//! - crossplane-runtime, `pkg/reconciler/managed/reconciler.go`: `external-create-pending`
//!   before `Create`, `external-create-succeeded` after it; `Ready` and `Synced` conditions.
//! - upjet, `pkg/controller/external_async_tfpluginfw.go` and `pkg/resource/conditions.go`:
//!   `LastAsyncOperation` True `Success` and `AsyncOperation` True `Finished` once the
//!   asynchronous create is applied; `Ready` True `Available` once `Observe` finds it.
//! - A renamed CRD keeps its group and plural, so the API server returns the objects made
//!   under the old name with the new `kind` once the new CRD is applied (the CRD's
//!   `spec.names.kind` is what it serves).

use crate::support;

use function_artifactory::catalog::catalog;
use function_artifactory::proto::v1::{RunFunctionResponse, Severity};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use support::requests::{
    composite, desired_composite, desired_resources, fatal_message, input, request, RequestBuilder,
};

const TIME: &str = "2026-11-01T10:00:00Z";

/// What the provider writes on a resource the function rendered: its generated name, the
/// create annotations of a create that succeeded, and the conditions of an applied create.
fn provider_wrote(desired: &Value, name: &str) -> Value {
    let mut observed = desired.clone();
    observed["metadata"]["name"] = json!(format!("team1-repos-x7k2p-{name}"));
    let annotations = &mut observed["metadata"]["annotations"];
    annotations["crossplane.io/external-create-pending"] = json!(TIME);
    annotations["crossplane.io/external-create-succeeded"] = json!(TIME);
    observed["status"] = json!({"conditions": [
        {"type": "Ready", "status": "True", "reason": "Available", "lastTransitionTime": TIME},
        {"type": "Synced", "status": "True", "reason": "ReconcileSuccess", "lastTransitionTime": TIME},
        {"type": "LastAsyncOperation", "status": "True", "reason": "Success", "lastTransitionTime": TIME},
        {"type": "AsyncOperation", "status": "True", "reason": "Finished", "lastTransitionTime": TIME}
    ]});
    observed
}

/// One call after another, each observing what the previous one rendered as the provider
/// wrote it, and the composite's status as the previous call set it.
struct Sequence {
    spec: Value,
    observed: BTreeMap<String, Value>,
    status: Value,
}

impl Sequence {
    fn new(spec: Value) -> Sequence {
        Sequence {
            spec,
            observed: BTreeMap::new(),
            status: Value::Null,
        }
    }

    fn request(&self, fields: Value) -> RequestBuilder {
        let mut xr = composite(self.spec.clone());
        if !self.status.is_null() {
            xr["status"] = self.status.clone();
        }
        let mut builder = request(xr).input(input(fields));
        for (name, object) in &self.observed {
            builder = builder.observed(name, object.clone());
        }
        builder
    }

    /// A call with `fields` as the input; the provider then applies what it rendered.
    fn call(&mut self, fields: Value) -> BTreeMap<String, Value> {
        let response = self.request(fields).run();
        let resources = desired_resources(&response);
        self.status = desired_composite(&response)["status"].clone();
        for (name, desired) in &resources {
            self.observed
                .insert(name.clone(), provider_wrote(desired, name));
        }
        resources
    }
}

fn external_name(resource: &Value) -> &Value {
    &resource["metadata"]["annotations"]["crossplane.io/external-name"]
}

fn phases(status: &Value) -> Vec<(String, String)> {
    status["repositories"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| {
            (
                r["name"].as_str().unwrap_or_default().to_owned(),
                r["phase"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

// ---- 1. kinds the provider renamed -----------------------------------------------

/// The renames the committed CRDs show, by release: group and plural kept, kind renamed.
#[test]
fn the_catalog_records_each_rename_of_the_committed_crds() {
    let catalog = catalog();
    let by_release = |release: &str| -> Vec<String> {
        catalog
            .renames()
            .iter()
            .filter(|r| catalog.release_name(r.release) == release)
            .map(|r| format!("{} {}: {} -> {}", r.group, r.plural, r.from, r.to))
            .collect()
    };
    let v0_7_1 = by_release("v0.7.1");
    assert_eq!(v0_7_1.len(), 22, "{v0_7_1:#?}");
    assert!(v0_7_1.contains(
        &"local.artifactory.jfrog.crossplane.io npmrepositories: NpmRepository -> NPMRepository"
            .to_owned()
    ));
    let v0_11_0 = by_release("v0.11.0");
    assert_eq!(v0_11_0.len(), 24, "cluster and namespaced federated kinds");
    assert!(v0_11_0.contains(
        &"federated.artifactory.jfrog.m.crossplane.io pypirepositories: PypiRepository -> PyPIRepository"
            .to_owned()
    ));
    assert_eq!(
        by_release("v0.11.1"),
        [
            "local.artifactory.jfrog.crossplane.io terraformbackendrepositories: TerraformbackendRepository -> TerraformBackendRepository",
            "local.artifactory.jfrog.m.crossplane.io terraformbackendrepositories: TerraformbackendRepository -> TerraformBackendRepository",
            "remote.artifactory.jfrog.crossplane.io vcsrepositories: VcsRepository -> VCSRepository",
            "remote.artifactory.jfrog.m.crossplane.io vcsrepositories: VcsRepository -> VCSRepository",
        ]
    );
    assert_eq!(
        catalog.renames().len(),
        50,
        "no other release renamed a kind"
    );
    // The same CRD under both names; never across groups or plurals.
    let local = "local.artifactory.jfrog.crossplane.io/v1alpha1";
    assert!(catalog.same_crd((local, "NpmRepository"), (local, "NPMRepository")));
    assert!(!catalog.same_crd((local, "NpmRepository"), (local, "PyPIRepository")));
    let remote = "remote.artifactory.jfrog.crossplane.io/v1alpha1";
    assert!(!catalog.same_crd((remote, "NpmRepository"), (local, "NPMRepository")));
}

/// Rendered for the release before a rename until the repository is managed, then for the
/// release after it: the same composed resource, key and repository, under the new kind name;
/// then observed under the new name, as the API server returns it after the provider upgrade.
fn renamed_without_a_dead_end(spec: Value, api: &str, before: &str, after: &str) {
    let mut calls = Sequence::new(spec);
    let fields = |release: &str| json!({"providerApi": api, "providerVersion": release});
    let mut first = BTreeMap::new();
    for _ in 0..3 {
        first = calls.call(fields(before));
    }
    assert!(
        phases(&calls.status)
            .iter()
            .all(|(_, phase)| phase == "managed"),
        "{:?}",
        calls.status
    );
    let upgraded = calls.request(fields(after)).run();
    if let Some(message) = fatal_message(&upgraded) {
        panic!("{before} -> {after}: a renamed kind is refused:\n{message}");
    }
    let second = desired_resources(&upgraded);
    assert_eq!(
        first.keys().collect::<Vec<_>>(),
        second.keys().collect::<Vec<_>>(),
        "the same composed resources: nothing deleted or recreated"
    );
    let mut renamed = 0;
    for (name, old) in &first {
        let new = &second[name];
        assert_eq!(
            external_name(old),
            external_name(new),
            "{name}: the same key"
        );
        assert_eq!(
            old["apiVersion"], new["apiVersion"],
            "{name}: the same group"
        );
        let old_kind = old["kind"].as_str().unwrap();
        let new_kind = new["kind"].as_str().unwrap();
        if old_kind != new_kind {
            renamed += 1;
            let rename = catalog()
                .rename_of(old["apiVersion"].as_str().unwrap(), old_kind)
                .expect("a rename of the catalog");
            assert_eq!(rename.to, new_kind);
        }
        assert_ne!(
            new["spec"]["deletionPolicy"], "Orphan",
            "{name}: not retired"
        );
    }
    assert!(renamed > 0, "{before} -> {after} renamed a kind");
    let said: Vec<&str> = upgraded
        .results
        .iter()
        .filter(|r| r.reason.as_deref() == Some("KindRenamed"))
        .map(|r| r.message.as_str())
        .collect();
    assert_eq!(said.len(), 1, "{:?}", upgraded.results);
    assert!(
        said[0].starts_with("rendered under the kind names of the provider release targeted, the same managed resources, keys and repositories: "),
        "{}",
        said[0]
    );
    let status = desired_composite(&upgraded)["status"].clone();
    assert!(status.get("retiring").is_none(), "{status}");
    assert!(
        upgraded
            .results
            .iter()
            .all(|r| r.severity != Severity::Warning as i32),
        "{:?}",
        upgraded.results
    );

    // After the provider upgrade the API server returns the objects under the new name.
    calls.status = status;
    for (name, new) in &second {
        calls
            .observed
            .insert(name.clone(), provider_wrote(new, name));
    }
    let settled_response = calls.request(fields(after)).run();
    assert_eq!(
        desired_resources(&settled_response),
        second,
        "{before} -> {after}: settled"
    );
    assert!(settled_response
        .results
        .iter()
        .all(|r| r.reason.as_deref() != Some("KindRenamed")));
}

#[test]
fn v0_7_1_renames_npm_pypi_and_others_without_a_dead_end() {
    let spec = json!({"repositories": [
        {"name": "npm-local", "rclass": "local", "packageType": "npm"},
        {"name": "npmjs", "rclass": "remote", "packageType": "npm", "url": "https://registry.npmjs.org"},
        {"name": "pypi-local", "rclass": "local", "packageType": "pypi"},
        {"name": "libs", "rclass": "local", "packageType": "maven"}
    ]});
    renamed_without_a_dead_end(spec.clone(), "cluster", "v0.7.0", "v0.14.0");
    // The result names each renamed kind and the release that renamed it.
    let observed = |kind: &str, key: &str| {
        support::requests::live(
            "local.artifactory.jfrog.crossplane.io/v1alpha1",
            kind,
            key,
            true,
        )
    };
    let spec =
        json!({"repositories": [{"name": "npm-local", "rclass": "local", "packageType": "npm"}]});
    let response = request(composite(spec))
        .input(input(json!({"providerVersion": "v0.7.1"})))
        .observed("npm-local", observed("NpmRepository", "npm-local"))
        .run();
    assert!(
        response
            .results
            .iter()
            .any(|r| r.reason.as_deref() == Some("KindRenamed")
                && r.message
                    .ends_with(": npm-local (NpmRepository -> NPMRepository, provider v0.7.1)")),
        "{:?}",
        response.results
    );
}

#[test]
fn v0_11_0_renames_federated_kinds_without_a_dead_end() {
    let members =
        json!([{"url": "https://eu.example.com/artifactory/team1-npm-fed", "enabled": true}]);
    for api in ["cluster", "namespaced"] {
        let spec = json!({"repositories": [
            {"name": "npm-fed", "rclass": "federated", "packageType": "npm", "members": members}
        ]});
        if api == "namespaced" {
            // A namespaced composite renders the namespaced kinds.
            renamed_without_a_dead_end_namespaced(spec, "v0.10.0", "v0.11.0");
        } else {
            renamed_without_a_dead_end(spec, api, "v0.10.0", "v0.11.0");
        }
    }
}

#[test]
fn v0_11_1_renames_terraform_backend_and_vcs_without_a_dead_end() {
    let spec = json!({"repositories": [
        {"name": "tfstate", "rclass": "local", "packageType": "terraformbackend"},
        {"name": "vcs", "rclass": "remote", "packageType": "vcs", "url": "https://github.com"}
    ]});
    renamed_without_a_dead_end(spec, "cluster", "v0.11.0", "v0.11.3");
}

/// [`renamed_without_a_dead_end`] for a namespaced composite: only the kind and key compared.
fn renamed_without_a_dead_end_namespaced(spec: Value, before: &str, after: &str) {
    use support::requests::namespaced_composite;
    let fields = |release: &str| json!({"providerVersion": release});
    let name = spec["repositories"][0]["name"].as_str().unwrap().to_owned();
    let mut observed: Option<Value> = None;
    let mut status = Value::Null;
    let mut rendered = Value::Null;
    for _ in 0..3 {
        let mut xr = namespaced_composite(spec.clone());
        xr["status"] = status.clone();
        let mut builder = request(xr).input(input(fields(before)));
        if let Some(observed) = &observed {
            builder = builder.observed(&name, observed.clone());
        }
        let response = builder.run();
        rendered = desired_resources(&response)[&name].clone();
        status = desired_composite(&response)["status"].clone();
        observed = Some(provider_wrote(&rendered, &name));
    }
    let mut xr = namespaced_composite(spec);
    xr["status"] = status;
    let upgraded = request(xr)
        .input(input(fields(after)))
        .observed(&name, observed.unwrap())
        .run();
    let new = desired_resources(&upgraded)[&name].clone();
    assert_eq!(external_name(&rendered), external_name(&new));
    assert_eq!(
        catalog()
            .rename_of(
                rendered["apiVersion"].as_str().unwrap(),
                rendered["kind"].as_str().unwrap()
            )
            .map(|r| r.to),
        new["kind"].as_str()
    );
}

// ---- 4. retiring resources composed without the key label ------------------------

/// A managed resource composed before this function (by patch-and-transform, or by hand and
/// composed later): crossplane-runtime's external name and conditions, no key label.
fn unlabelled(api_version: &str, kind: &str, key: &str) -> Value {
    json!({
        "apiVersion": api_version,
        "kind": kind,
        "metadata": {
            "name": format!("team1-repos-x7k2p-{key}"),
            "annotations": {"crossplane.io/external-name": key}
        },
        "spec": {"forProvider": {"description": "composed before the function"}},
        "status": {"conditions": [
            {"type": "Ready", "status": "True", "reason": "Available", "lastTransitionTime": TIME},
            {"type": "Synced", "status": "True", "reason": "ReconcileSuccess", "lastTransitionTime": TIME}
        ]}
    })
}

fn libs_only() -> Value {
    json!({"repositories": [{"name": "libs", "rclass": "local", "packageType": "maven"}]})
}

#[test]
fn a_removed_entry_without_the_key_label_is_retired_in_two_steps() {
    for (api_version, kind) in [
        (
            "local.artifactory.jfrog.crossplane.io/v1alpha1",
            "MavenRepository",
        ),
        (
            "local.artifactory.jfrog.crossplane.io/v1alpha1",
            "NpmRepository",
        ),
        (
            "artifactory.jfrog.crossplane.io/v1alpha1",
            "LocalMavenRepository",
        ),
    ] {
        let old = unlabelled(api_version, kind, "team1-old");
        let first = request(composite(libs_only()))
            .observed("old", old.clone())
            .run();
        let resources = desired_resources(&first);
        let kept = &resources["old"];
        assert_eq!(kept["kind"], kind, "kept as it is");
        assert_eq!(kept["spec"]["deletionPolicy"], "Orphan", "{kind}");
        assert_eq!(external_name(kept), "team1-old");
        assert_eq!(
            kept["metadata"]["labels"]["artifactory.fn.crossplane.io/key"], "team1-old",
            "labelled from now on"
        );
        assert_eq!(
            kept["spec"]["forProvider"], old["spec"]["forProvider"],
            "nothing else changes"
        );
        let status = desired_composite(&first)["status"].clone();
        assert_eq!(
            status["retiring"],
            json!([{"name": "old", "key": "team1-old", "deletion": "Orphan"}])
        );

        // The orphaning applied (still without the label, as a provider that has not yet
        // applied the label would show it): released, and the repository stays.
        let mut orphaned = old;
        orphaned["spec"]["deletionPolicy"] = json!("Orphan");
        let mut xr = composite(libs_only());
        xr["status"] = status;
        let second = request(xr).observed("old", orphaned).run();
        assert!(!desired_resources(&second).contains_key("old"));
        assert!(second
            .results
            .iter()
            .any(|r| r.reason.as_deref() == Some("RepositoryReleased")
                && r.message.starts_with("repository old (key team1-old)")));
    }
}

#[test]
fn a_resource_of_another_step_is_never_retired() {
    // An earlier step renders "other", a repository kind with our label even: its intent is in
    // the request's desired state, and this function leaves it as that step made it.
    let other = json!({
        "apiVersion": "local.artifactory.jfrog.crossplane.io/v1alpha1",
        "kind": "MavenRepository",
        "metadata": {
            "annotations": {"crossplane.io/external-name": "shared-libs"},
            "labels": {"artifactory.fn.crossplane.io/key": "shared-libs"}
        },
        "spec": {"forProvider": {"description": "another step's"}}
    });
    let observed = {
        let mut observed = unlabelled(
            "local.artifactory.jfrog.crossplane.io/v1alpha1",
            "MavenRepository",
            "shared-libs",
        );
        observed["metadata"]["labels"] = other["metadata"]["labels"].clone();
        observed
    };
    let response = request(composite(libs_only()))
        .desired("other", other.clone())
        .observed("other", observed)
        .run();
    let resources = desired_resources(&response);
    assert_eq!(resources["other"], other, "passed on unchanged");
    let status = desired_composite(&response)["status"].clone();
    assert!(status.get("retiring").is_none(), "{status}");
    assert!(
        response
            .results
            .iter()
            .all(|r| !r.message.contains("other")),
        "{:?}",
        response.results
    );
}

// ---- 5. a Composition's changed naming format ------------------------------------

#[test]
fn a_changed_naming_format_is_named_as_the_compositions() {
    let spec = json!({"repositories": [
        {"name": "libs", "rclass": "local", "packageType": "maven"},
        {"name": "npm", "rclass": "local", "packageType": "npm"},
        {"name": "fixed", "rclass": "local", "packageType": "generic", "key": "team1-fixed"}
    ]});
    let local = "local.artifactory.jfrog.crossplane.io/v1alpha1";
    let observed = |kind: &str, key: &str| support::requests::live(local, kind, key, true);
    let call = |naming: Value| {
        request(composite(spec.clone()))
            .input(input(naming))
            .observed("libs", observed("MavenRepository", "team1-libs"))
            .observed("npm", observed("NPMRepository", "team1-npm"))
            .observed("fixed", observed("GenericRepository", "team1-fixed"))
            .run()
    };
    // Made with {claimNamespace}-{name}; the platform dropped naming.format.
    let message = fatal_message(&call(json!({}))).expect("refused");
    assert!(message.contains("input.naming.format: the Composition's naming format changed from \"{claimNamespace}-{name}\" to \"{name}\" (the default, without naming.format): it would rename 2 live repositories: \"team1-libs\" -> \"libs\", \"team1-npm\" -> \"npm\"; keys are immutable in Artifactory"), "{message}");
    assert!(message.contains("fix: set input.naming.format: \"{claimNamespace}-{name}\" again in the Composition's function step (for every claim it renders)"), "{message}");
    assert!(!message.contains("keep the key"), "said once: {message}");

    // Changed to another format.
    let message = fatal_message(&call(
        json!({"naming": {"format": "{claimNamespace}-{rclass}-{name}"}}),
    ))
    .expect("refused");
    assert!(message.contains("naming format changed from \"{claimNamespace}-{name}\" to \"{claimNamespace}-{rclass}-{name}\": it would rename 2 live repositories"), "{message}");

    // The format restored: nothing to say.
    let response = call(json!({"naming": {"format": "{claimNamespace}-{name}"}}));
    assert_eq!(desired_resources(&response).len(), 3);
}

#[test]
fn one_changed_key_is_the_entrys_and_mentions_the_format() {
    let spec =
        json!({"repositories": [{"name": "libs", "rclass": "local", "packageType": "maven"}]});
    let observed = support::requests::live(
        "local.artifactory.jfrog.crossplane.io/v1alpha1",
        "MavenRepository",
        "team1-libs",
        true,
    );
    let message =
        fatal_message(&request(composite(spec)).observed("libs", observed).run()).expect("refused");
    assert!(
        message.contains("fix: keep the key (set key: \"team1-libs\" on the entry)"),
        "{message}"
    );
    assert!(
        message.contains("if the Composition's naming format changed, set it back there"),
        "{message}"
    );
}

// ---- 3. Crossplane v1 claims to v2 namespaced composites ------------------------

const CLUSTER_LOCAL: &str = "local.artifactory.jfrog.crossplane.io/v1alpha1";
const NAMESPACED_LOCAL: &str = "local.artifactory.jfrog.m.crossplane.io/v1alpha1";

fn two_entries(extra: Value) -> Value {
    let mut entries = json!([
        {"name": "libs", "rclass": "local", "packageType": "maven", "key": "team1-libs"},
        {"name": "npm", "rclass": "local", "packageType": "npm", "key": "team1-npm"}
    ]);
    for entry in entries.as_array_mut().unwrap() {
        for (field, value) in extra.as_object().unwrap() {
            entry[field] = value.clone();
        }
    }
    json!({"repositories": entries})
}

/// The old claim's composite's managed resource, as Crossplane sends it back (controlled by the
/// composite, with its key label).
fn old_claims(kind: &str, key: &str) -> Value {
    let mut object = support::requests::live(CLUSTER_LOCAL, kind, key, true);
    object["metadata"]["ownerReferences"] = json!([{
        "apiVersion": "platform.example.org/v1alpha1", "kind": "XRepositories",
        "name": "team1-repos-x7k2p", "uid": "4f6c8f0e-0000-4000-8000-000000000001",
        "controller": true, "blockOwnerDeletion": true
    }]);
    object
}

fn phase_list(response: &RunFunctionResponse) -> Vec<String> {
    support::requests::status_repositories(response)
        .iter()
        .map(|r| r["phase"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[test]
fn a_v1_claim_moves_to_a_v2_namespaced_composite_without_deleting_or_creating() {
    use support::requests::namespaced_composite;
    // 1. The old claim's repositories are orphaned: the Composition's input (or the claim) sets
    //    deletionPolicy Orphan. Nothing else about them changes.
    let orphaning = request(composite(two_entries(json!({}))))
        .input(input(json!({"defaults": {"deletionPolicy": "Orphan"}})))
        .observed("libs", old_claims("MavenRepository", "team1-libs"))
        .observed("npm", old_claims("NPMRepository", "team1-npm"))
        .run();
    let resources = desired_resources(&orphaning);
    for name in ["libs", "npm"] {
        assert_eq!(
            resources[name]["spec"]["deletionPolicy"], "Orphan",
            "{name}"
        );
    }
    assert!(support::requests::status_repositories(&orphaning)
        .iter()
        .all(|r| r["deletion"] == "Orphan"));

    // 2. The old claim is deleted: Crossplane deletes its managed resources, which orphan their
    //    repositories. While it is not, the new composite's lookup finds them and refuses.
    let new_spec = two_entries(json!({"import": true}));
    let with_old_claim = request(namespaced_composite(new_spec.clone()))
        .input(input(json!({"providerVersion": "v0.8.0"})))
        .capability(function_artifactory::proto::v1::Capability::RequiredResources);
    let mut req = with_old_claim.build();
    for (name, kind, key) in [
        ("libs", "MavenRepository", "team1-libs"),
        ("npm", "NpmRepository", "team1-npm"),
    ] {
        let mut old = old_claims(kind, key);
        old["spec"]["deletionPolicy"] = json!("Orphan");
        req.required_resources.insert(
            format!("artifactory-other-key-cluster-{name}"),
            function_artifactory::proto::v1::Resources {
                items: vec![support::requests::resource(old)],
            },
        );
        req.required_resources.insert(
            format!("artifactory-key-{name}"),
            function_artifactory::proto::v1::Resources::default(),
        );
    }
    let refused = function_artifactory::run_function(&req);
    let message = fatal_message(&refused).expect("the old claim still manages the keys");
    assert!(message.contains("repository \"libs\": key \"team1-libs\" is already managed by XRepositories \"team1-repos-x7k2p\""), "{message}");

    // 3. The namespaced composite imports the keys: observe only, nothing created.
    let mut status = Value::Null;
    let mut observed: BTreeMap<String, Value> = BTreeMap::new();
    let call = |spec: &Value, observed: &BTreeMap<String, Value>, status: &Value| {
        let mut xr = namespaced_composite(spec.clone());
        xr["status"] = status.clone();
        let mut builder = request(xr);
        for (name, object) in observed {
            builder = builder.observed(name, object.clone());
        }
        builder.run()
    };
    let adopting = call(&new_spec, &observed, &status);
    let resources = desired_resources(&adopting);
    for (name, key) in [("libs", "team1-libs"), ("npm", "team1-npm")] {
        assert_eq!(resources[name]["apiVersion"], NAMESPACED_LOCAL);
        assert_eq!(
            resources[name]["spec"]["managementPolicies"],
            json!(["Observe"]),
            "{name}"
        );
        assert_eq!(external_name(&resources[name]), key);
    }
    assert_eq!(phase_list(&adopting), ["adopted", "adopted"]);
    status = desired_composite(&adopting)["status"].clone();
    for (name, resource) in &resources {
        let mut seen = resource.clone();
        seen["metadata"]["name"] = json!(name);
        seen["status"] = json!({"conditions": [
            {"type": "Ready", "status": "True", "reason": "Available", "lastTransitionTime": TIME},
            {"type": "Synced", "status": "True", "reason": "ReconcileSuccess", "lastTransitionTime": TIME}
        ]});
        observed.insert(name.clone(), seen);
    }
    let observing = call(&new_spec, &observed, &status);
    assert!(desired_resources(&observing)
        .values()
        .all(|r| r["spec"]["managementPolicies"] == json!(["Observe"])));
    status = desired_composite(&observing)["status"].clone();

    // 4. Taken over: import removed once adopted; the entries' own policies from now on.
    let taking_over = call(&two_entries(json!({})), &observed, &status);
    assert_eq!(phase_list(&taking_over), ["takingOver", "takingOver"]);
    let resources = desired_resources(&taking_over);
    // Imported, so deletion stays Orphan unless an entry asks (issue 54, item 4): in the
    // namespaced API, `*` without Delete.
    for name in ["libs", "npm"] {
        assert_eq!(
            resources[name]["spec"]["managementPolicies"],
            json!(["Observe", "Create", "Update", "LateInitialize"]),
            "{name}"
        );
    }
    assert!(support::requests::status_repositories(&taking_over)
        .iter()
        .all(|r| r["deletion"] == "Orphan"));
}

#[test]
fn the_lookup_asks_for_the_other_apis_kinds_only_where_the_cluster_serves_them() {
    use function_artifactory::proto::v1::{Capability, Schema};
    use function_artifactory::proto::Struct;
    use support::requests::namespaced_composite;
    let spec = json!({"repositories": [
        {"name": "libs", "rclass": "local", "packageType": "maven", "key": "team1-libs"}
    ]});
    let asked = |fields: Value, schemas: &[(&str, &str, bool)]| -> Vec<(String, String, String)> {
        let mut req = request(namespaced_composite(spec.clone()))
            .input(input(fields))
            .capability(Capability::RequiredResources)
            .build();
        if !schemas.is_empty() {
            req.meta
                .as_mut()
                .unwrap()
                .capabilities
                .push(Capability::RequiredSchemas as i32);
        }
        for (api_version, kind, served) in schemas {
            let schema = served.then(|| Struct::from_value(json!({"type": "object"})));
            req.required_schemas.insert(
                format!("schema/{api_version}/{kind}"),
                Schema { openapi_v3: schema },
            );
        }
        let response = function_artifactory::run_function(&req);
        response
            .requirements
            .unwrap_or_default()
            .resources
            .into_iter()
            .map(|(name, s)| (name, s.api_version, s.kind))
            .collect()
    };
    let own = (
        "artifactory-key-libs".to_owned(),
        NAMESPACED_LOCAL.to_owned(),
        "MavenRepository".to_owned(),
    );
    let other = (
        "artifactory-other-key-cluster-libs".to_owned(),
        CLUSTER_LOCAL.to_owned(),
        "MavenRepository".to_owned(),
    );
    // Without live schemas: a release before SafeStart serves every kind it has.
    assert_eq!(
        asked(json!({"providerVersion": "v0.8.0"}), &[]),
        [own.clone(), other.clone()]
    );
    // From SafeStart on, or without providerVersion, the release does not say: not asked.
    assert_eq!(
        asked(json!({"providerVersion": "v0.14.0"}), &[]),
        std::slice::from_ref(&own)
    );
    assert_eq!(asked(json!({}), &[]), std::slice::from_ref(&own));
    // Live schemas say: served, asked; not served, never asked.
    let served = [
        (NAMESPACED_LOCAL, "MavenRepository", true),
        (CLUSTER_LOCAL, "MavenRepository", true),
    ];
    assert_eq!(asked(json!({}), &served), [own.clone(), other]);
    let not_served = [
        (NAMESPACED_LOCAL, "MavenRepository", true),
        (CLUSTER_LOCAL, "MavenRepository", false),
    ];
    assert_eq!(asked(json!({}), &not_served), [own]);
}

// ---- 2. the provider's v0.7.0 group move ------------------------------------------

const FLAT: &str = "artifactory.jfrog.crossplane.io/v1alpha1";

fn flat_era(extra: Value) -> Value {
    let mut spec = two_entries(extra);
    for entry in spec["repositories"].as_array_mut().unwrap() {
        entry.as_object_mut().unwrap().remove("key");
    }
    spec
}

#[test]
fn the_group_move_is_named_and_done_in_three_steps_without_deleting_or_creating() {
    let flat_libs = support::requests::live(FLAT, "LocalMavenRepository", "libs", true);
    let flat_npm = support::requests::live(FLAT, "LocalNpmRepository", "npm", true);
    let with_flat = |spec: Value, fields: Value| {
        request(composite(spec))
            .input(input(fields))
            .observed("libs", flat_libs.clone())
            .observed("npm", flat_npm.clone())
    };

    // Switching providerApi to cluster without the procedure: the group move is named, once.
    let message =
        fatal_message(&with_flat(flat_era(json!({})), json!({"providerApi": "cluster"})).run())
            .expect("refused");
    assert!(message.contains("input.providerApi: 2 live repositories of the flat API (artifactory.jfrog.crossplane.io, provider v0.6.0 and before) would be rendered as kinds of the split groups: libs (LocalMavenRepository -> MavenRepository local.artifactory.jfrog.crossplane.io), npm (LocalNpmRepository -> NPMRepository local.artifactory.jfrog.crossplane.io); this is the provider's v0.7.0 group move"), "{message}");
    assert!(message.contains("fix: follow docs/upgrading.md: 1. with providerApi: flat and the old provider still running, set releaseFlat: true"), "{message}");
    assert!(!message.contains("class and package type"), "{message}");

    // (a) Before the provider upgrade: releaseFlat orphans each flat resource, even with
    //     deletion protection off, and renders nothing of the flat API.
    let release = json!({"providerApi": "flat", "releaseFlat": true, "deletionProtection": false});
    let releasing = with_flat(flat_era(json!({})), release.clone()).run();
    let resources = desired_resources(&releasing);
    assert_eq!(resources.len(), 2, "only the two old resources, kept");
    for (name, kind) in [
        ("libs", "LocalMavenRepository"),
        ("npm", "LocalNpmRepository"),
    ] {
        assert_eq!(resources[name]["kind"], kind);
        assert_eq!(
            resources[name]["spec"]["deletionPolicy"], "Orphan",
            "{name}"
        );
    }
    let status = desired_composite(&releasing)["status"].clone();
    assert_eq!(status["retiring"].as_array().unwrap().len(), 2, "{status}");
    //     The orphaning applied: let go. Crossplane deletes the managed resources while the old
    //     provider runs, which removes their finalizers and keeps the repositories.
    let mut orphaned_libs = flat_libs.clone();
    orphaned_libs["spec"]["deletionPolicy"] = json!("Orphan");
    let mut orphaned_npm = flat_npm.clone();
    orphaned_npm["spec"]["deletionPolicy"] = json!("Orphan");
    let mut xr = composite(flat_era(json!({})));
    xr["status"] = status;
    let released = request(xr)
        .input(input(release))
        .observed("libs", orphaned_libs)
        .observed("npm", orphaned_npm)
        .run();
    assert!(desired_resources(&released).is_empty());
    let released_results = released
        .results
        .iter()
        .filter(|r| r.reason.as_deref() == Some("RepositoryReleased"))
        .count();
    assert_eq!(released_results, 2);

    // (b) The provider is upgraded to v0.7.0 or later (no managed resource of ours exists).
    // (c) The split-group kinds adopt the keys: observe only, nothing created.
    let adopting = request(composite(flat_era(json!({"import": true}))))
        .input(input(json!({"providerApi": "cluster"})))
        .run();
    let resources = desired_resources(&adopting);
    assert_eq!(resources["libs"]["apiVersion"], CLUSTER_LOCAL);
    assert_eq!(resources["npm"]["kind"], "NPMRepository");
    for name in ["libs", "npm"] {
        assert_eq!(
            resources[name]["spec"]["managementPolicies"],
            json!(["Observe"]),
            "{name}"
        );
        assert_eq!(external_name(&resources[name]), name);
    }
    assert_eq!(phase_list(&adopting), ["adopted", "adopted"]);
    //     Observed by the new provider, then taken over (import removed once adopted).
    let status = desired_composite(&adopting)["status"].clone();
    let seen = |name: &str| {
        let mut seen = resources[name].clone();
        seen["metadata"]["name"] = json!(format!("team1-repos-x7k2p-{name}"));
        seen["status"] = json!({"conditions": [
            {"type": "Ready", "status": "True", "reason": "Available", "lastTransitionTime": TIME},
            {"type": "Synced", "status": "True", "reason": "ReconcileSuccess", "lastTransitionTime": TIME}
        ]});
        seen
    };
    let mut xr = composite(flat_era(json!({})));
    xr["status"] = status;
    let taking_over = request(xr)
        .input(input(json!({"providerApi": "cluster"})))
        .observed("libs", seen("libs"))
        .observed("npm", seen("npm"))
        .run();
    assert_eq!(phase_list(&taking_over), ["takingOver", "takingOver"]);
    let taken = desired_resources(&taking_over);
    for name in ["libs", "npm"] {
        assert_eq!(
            taken[name]["spec"].get("managementPolicies"),
            None,
            "{name}: *"
        );
        assert_eq!(external_name(&taken[name]), name);
    }
}
