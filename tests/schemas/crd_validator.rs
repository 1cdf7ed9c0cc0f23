//! The validator against the provider's real CRDs (`crds/`, the newest release of each API
//! generation `flat`, `cluster`, `namespaced`). Every test skips (with a visible SKIP line)
//! where the tests run without the `codegen` feature, whose reader opens the archive.

use crate::support;

use std::sync::OnceLock;

use serde_json::{json, Value};
use support::crd::{provider_crd_documents, provider_crds, Crds};

const FOLDERS: [&str; 3] = ["flat", "cluster", "namespaced"];

const LOCAL: &str = "local.artifactory.jfrog.crossplane.io/v1alpha1";
const REMOTE: &str = "remote.artifactory.jfrog.crossplane.io/v1alpha1";
const FEDERATED: &str = "federated.artifactory.jfrog.crossplane.io/v1alpha1";
const NS_REMOTE: &str = "remote.artifactory.jfrog.m.crossplane.io/v1alpha1";
const NS_LOCAL: &str = "local.artifactory.jfrog.m.crossplane.io/v1alpha1";
const FLAT: &str = "artifactory.jfrog.crossplane.io/v1alpha1";

/// The CRDs of one folder, loaded once per test binary: loading all three takes a second
/// or two in debug builds.
fn crds(what: &str, folder: &str) -> Option<&'static Crds> {
    static CACHE: [OnceLock<Crds>; 3] = [OnceLock::new(), OnceLock::new(), OnceLock::new()];
    let slot = FOLDERS
        .iter()
        .position(|f| *f == folder)
        .expect("known folder");
    let _ = what;
    if let Some(crds) = CACHE[slot].get() {
        return Some(crds);
    }
    let crds = provider_crds(folder)?;
    Some(CACHE[slot].get_or_init(|| crds))
}

/// A cluster-scoped object with a name and external-name, as the function renders them.
fn object(api_version: &str, kind: &str, spec: Value) -> Value {
    json!({
        "apiVersion": api_version,
        "kind": kind,
        "metadata": {
            "name": "acme-maven",
            "labels": {"app.kubernetes.io/managed-by": "function-artifactory"},
            "annotations": {"crossplane.io/external-name": "acme-maven"}
        },
        "spec": spec
    })
}

fn assert_valid(crds: &Crds, object: &Value) {
    let errors = crds.validate(object);
    assert!(
        errors.is_empty(),
        "unexpected violations: {errors:#?}\nfor {object:#}"
    );
}

/// Asserts that exactly `expected` is reported, so no extra false positive hides behind it.
fn assert_violations(crds: &Crds, object: &Value, expected: &[&str]) {
    let errors = crds.validate(object);
    assert_eq!(errors, expected, "for {object:#}");
}

fn assert_violation_starting(crds: &Crds, object: &Value, prefix: &str) {
    let errors = crds.validate(object);
    assert!(
        errors.iter().any(|e| e.starts_with(prefix)),
        "expected a violation starting with {prefix:?}, got {errors:#?}"
    );
}

#[test]
fn every_crd_of_every_folder_loads() {
    let expected = [("flat", 97), ("cluster", 139), ("namespaced", 139)];
    for (folder, count) in expected {
        let Some(crds) = crds("every_crd_of_every_folder_loads", folder) else {
            return;
        };
        let kinds = crds.kinds();
        assert_eq!(kinds.len(), count, "{folder}");
        let scope = if folder == "namespaced" {
            "Namespaced"
        } else {
            "Cluster"
        };
        assert!(
            kinds.iter().all(|(_, _, s)| s == scope),
            "{folder}: {kinds:?}"
        );
        assert!(
            kinds.windows(2).all(|w| w[0] < w[1]),
            "{folder}: not sorted"
        );
    }
}

#[test]
fn minimal_flat_local_is_valid() {
    let Some(crds) = crds("minimal_flat_local_is_valid", "flat") else {
        return;
    };
    let spec = json!({"forProvider": {}});
    assert_valid(crds, &object(FLAT, "LocalMavenRepository", spec));
}

#[test]
fn minimal_cluster_local_is_valid() {
    let Some(crds) = crds("minimal_cluster_local_is_valid", "cluster") else {
        return;
    };
    let spec = json!({"forProvider": {}});
    assert_valid(crds, &object(LOCAL, "MavenRepository", spec));
}

#[test]
fn minimal_cluster_remote_is_valid() {
    let Some(crds) = crds("minimal_cluster_remote_is_valid", "cluster") else {
        return;
    };
    let spec = json!({"forProvider": {"url": "https://repo1.maven.org/maven2"}});
    assert_valid(crds, &object(REMOTE, "MavenRepository", spec));
}

#[test]
fn minimal_federated_is_valid() {
    let Some(crds) = crds("minimal_federated_is_valid", "cluster") else {
        return;
    };
    let member = json!([{"url": "https://a.example.com/artifactory/acme-maven", "enabled": true}]);
    let spec = json!({"forProvider": {"member": member}});
    assert_valid(crds, &object(FEDERATED, "MavenRepository", spec));
}

#[test]
fn minimal_namespaced_remote_is_valid() {
    let Some(crds) = crds("minimal_namespaced_remote_is_valid", "namespaced") else {
        return;
    };
    let spec = json!({
        "forProvider": {"url": "https://repo1.maven.org/maven2"},
        "providerConfigRef": {"kind": "ProviderConfig", "name": "artifactory"}
    });
    let mut object = object(NS_REMOTE, "MavenRepository", spec);
    object["metadata"]["namespace"] = json!("team-a");
    assert_valid(crds, &object);
}

#[test]
fn unknown_for_provider_field_is_reported() {
    let Some(crds) = crds("unknown_for_provider_field_is_reported", "cluster") else {
        return;
    };
    let spec = json!({"forProvider": {"key": "acme-maven"}});
    let object = object(LOCAL, "MavenRepository", spec);
    assert_violations(crds, &object, &["spec.forProvider.key: unknown field"]);
}

#[test]
fn wrong_type_is_reported_with_its_path() {
    let Some(crds) = crds("wrong_type_is_reported_with_its_path", "cluster") else {
        return;
    };
    let spec = json!({"forProvider": {"member": [{"url": 42, "enabled": true}]}});
    let object = object(FEDERATED, "MavenRepository", spec);
    let errors = crds.validate(&object);
    assert_eq!(
        errors[0],
        "spec.forProvider.member[0].url: expected string, got number"
    );
    // As the API server does, a type error skips the CEL rules and says so.
    assert_eq!(errors.len(), 2, "{errors:#?}");
    assert!(
        errors[1].contains("validation rules were not checked"),
        "{errors:#?}"
    );
}

#[test]
fn remote_without_url_fails_its_cel_rule() {
    let Some(crds) = crds("remote_without_url_fails_its_cel_rule", "cluster") else {
        return;
    };
    // managementPolicies is absent: only its default ['*'] makes the rule apply, so this
    // also proves defaults are applied before CEL.
    let object = object(REMOTE, "MavenRepository", json!({"forProvider": {}}));
    assert_violations(
        crds,
        &object,
        &["spec: spec.forProvider.url is a required parameter"],
    );
}

#[test]
fn remote_url_in_init_provider_satisfies_the_rule() {
    let Some(crds) = crds("remote_url_in_init_provider_satisfies_the_rule", "cluster") else {
        return;
    };
    let spec =
        json!({"forProvider": {}, "initProvider": {"url": "https://repo1.maven.org/maven2"}});
    assert_valid(crds, &object(REMOTE, "MavenRepository", spec));
}

#[test]
fn observe_only_remote_without_url_is_valid() {
    let Some(crds) = crds("observe_only_remote_without_url_is_valid", "cluster") else {
        return;
    };
    let spec = json!({"forProvider": {}, "managementPolicies": ["Observe"]});
    assert_valid(crds, &object(REMOTE, "MavenRepository", spec));
}

#[test]
fn federated_without_member_fails_its_cel_rule() {
    let Some(crds) = crds("federated_without_member_fails_its_cel_rule", "cluster") else {
        return;
    };
    let object = object(FEDERATED, "MavenRepository", json!({"forProvider": {}}));
    assert_violations(
        crds,
        &object,
        &["spec: spec.forProvider.member is a required parameter"],
    );
}

#[test]
fn deletion_policy_is_unknown_on_namespaced_kinds() {
    let Some(crds) = crds(
        "deletion_policy_is_unknown_on_namespaced_kinds",
        "namespaced",
    ) else {
        return;
    };
    let spec = json!({"forProvider": {}, "deletionPolicy": "Orphan"});
    let mut object = object(NS_LOCAL, "MavenRepository", spec);
    object["metadata"]["namespace"] = json!("team-a");
    assert_violations(crds, &object, &["spec.deletionPolicy: unknown field"]);
}

#[test]
fn bad_management_policy_is_reported() {
    let Some(crds) = crds("bad_management_policy_is_reported", "cluster") else {
        return;
    };
    let spec = json!({"forProvider": {}, "managementPolicies": ["Observe", "Destroy"]});
    let object = object(LOCAL, "MavenRepository", spec);
    assert_violation_starting(
        crds,
        &object,
        "spec.managementPolicies[1]: unsupported value \"Destroy\", expected one of: \"Observe\"",
    );
}

#[test]
fn invalid_label_value_is_reported() {
    let Some(crds) = crds("invalid_label_value_is_reported", "cluster") else {
        return;
    };
    let mut object = object(LOCAL, "MavenRepository", json!({"forProvider": {}}));
    object["metadata"]["labels"]["team"] = json!("platform team");
    assert_violation_starting(
        crds,
        &object,
        "metadata.labels[team]: invalid label value \"platform team\"",
    );
    assert_eq!(crds.validate(&object).len(), 1);
}

#[test]
fn duplicate_entries_in_a_set_are_reported() {
    let Some(crds) = crds("duplicate_entries_in_a_set_are_reported", "cluster") else {
        return;
    };
    let spec = json!({"forProvider": {"propertySets": ["artifactory", "artifactory"]}});
    let object = object(LOCAL, "MavenRepository", spec);
    assert_violations(
        crds,
        &object,
        &["spec.forProvider.propertySets[1]: duplicate entry \"artifactory\" in a set"],
    );
}

#[test]
fn namespace_on_a_cluster_scoped_kind_is_reported() {
    let Some(crds) = crds("namespace_on_a_cluster_scoped_kind_is_reported", "cluster") else {
        return;
    };
    let mut object = object(LOCAL, "MavenRepository", json!({"forProvider": {}}));
    object["metadata"]["namespace"] = json!("team-a");
    assert_violations(
        crds,
        &object,
        &["metadata.namespace: must be absent for a Cluster-scoped kind"],
    );
}

#[test]
fn unknown_kind_is_reported_with_a_hint() {
    let Some(crds) = crds("unknown_kind_is_reported_with_a_hint", "flat") else {
        return;
    };
    // Flat kinds are spelled irregularly: VirtualOciRepository, not VirtualOCIRepository.
    let object = object(FLAT, "VirtualOCIRepository", json!({"forProvider": {}}));
    let errors = crds.validate(&object);
    assert_eq!(errors.len(), 1, "{errors:#?}");
    assert!(errors[0].starts_with("apiVersion/kind: "), "{errors:#?}");
    assert!(errors[0].contains("did you mean: "), "{errors:#?}");
    assert!(errors[0].contains(" VirtualOciRepository"), "{errors:#?}");
}

#[test]
fn missing_spec_is_reported() {
    let Some(crds) = crds("missing_spec_is_reported", "cluster") else {
        return;
    };
    let mut object = object(LOCAL, "MavenRepository", json!({}));
    object.as_object_mut().unwrap().remove("spec");
    assert_violations(crds, &object, &["spec: required field is missing"]);
}

// ---------------------------------------------------------------------------------------
// Every kind, synthetic minimal object: the validator must have no false positive.
// ---------------------------------------------------------------------------------------

/// What a test needs to know of one CRD file, read independently of the validator.
struct KindInfo {
    api_version: String,
    kind: String,
    namespaced: bool,
    /// `spec.forProvider` fields that a `has(self.forProvider.X)` rule asks for, with the
    /// schema of each.
    required: Vec<(String, Value)>,
}

fn read_kind(crd: &Value) -> KindInfo {
    let spec = &crd["spec"];
    let version = &spec["versions"][0];
    let spec_schema = &version["schema"]["openAPIV3Schema"]["properties"]["spec"];
    let for_provider = &spec_schema["properties"]["forProvider"]["properties"];
    let rules = spec_schema["x-kubernetes-validations"].to_string();
    let required = rules
        .split("has(self.forProvider.")
        .skip(1)
        .map(|rest| rest.split(')').next().unwrap().to_string())
        .map(|field| (field.clone(), for_provider[&field].clone()))
        .collect();
    KindInfo {
        api_version: format!(
            "{}/{}",
            spec["group"].as_str().unwrap(),
            version["name"].as_str().unwrap()
        ),
        kind: spec["names"]["kind"].as_str().unwrap().to_string(),
        namespaced: spec["scope"] == "Namespaced",
        required,
    }
}

/// A small valid value for a schema: scalars get a plausible value, objects get their
/// scalar properties (so a federated member gets `url` and `enabled: true`).
fn sample(schema: &Value) -> Value {
    match schema["type"].as_str() {
        Some("string") => json!("https://artifactory.example.com/artifactory/api/sample"),
        Some("boolean") => json!(true),
        Some("integer") | Some("number") => json!(1),
        Some("array") => json!([sample(&schema["items"])]),
        Some("object") => {
            let properties = schema["properties"]
                .as_object()
                .cloned()
                .unwrap_or_default();
            let scalars = properties
                .iter()
                .filter(|(_, p)| p["type"] == "string" || p["type"] == "boolean")
                .map(|(name, p)| (name.clone(), sample(p)));
            Value::Object(scalars.collect())
        }
        other => panic!("no sample for type {other:?}"),
    }
}

fn synthetic_object(info: &KindInfo) -> Value {
    let mut for_provider = serde_json::Map::new();
    for (field, schema) in &info.required {
        for_provider.insert(field.clone(), sample(schema));
    }
    let mut object = object(
        &info.api_version,
        &info.kind,
        json!({"forProvider": for_provider}),
    );
    if info.namespaced {
        object["metadata"]["namespace"] = json!("team-a");
    }
    object
}

#[test]
fn every_kind_accepts_a_minimal_synthetic_object_and_enforces_its_rules() {
    let mut validated = 0;
    let mut with_required = 0;
    let mut failures = Vec::new();
    for folder in FOLDERS {
        let what = "every_kind_accepts_a_minimal_synthetic_object_and_enforces_its_rules";
        let (Some(crds), Some(files)) = (crds(what, folder), provider_crd_documents(folder)) else {
            return;
        };
        assert_eq!(
            files.len(),
            crds.kinds().len(),
            "{folder}: one kind per file"
        );
        for (file, crd) in files {
            let info = read_kind(&crd);
            let object = synthetic_object(&info);
            let errors = crds.validate(&object);
            if !errors.is_empty() {
                failures.push(format!("{file}: {errors:?}"));
            }
            // And no false negative: without the fields, each rule must fail with its message.
            let mut bare = object.clone();
            bare["spec"]["forProvider"] = json!({});
            let expected: Vec<String> = info
                .required
                .iter()
                .map(|(field, _)| format!("spec: spec.forProvider.{field} is a required parameter"))
                .collect();
            if crds.validate(&bare) != expected {
                failures.push(format!(
                    "{file}: bare object gave {:?}",
                    crds.validate(&bare)
                ));
            }
            validated += 1;
            with_required += usize::from(!info.required.is_empty());
        }
    }
    assert!(
        failures.is_empty(),
        "false positives:\n{}",
        failures.join("\n")
    );
    // 375 kinds (97 flat, 139 cluster, 139 namespaced), 167 of them with a url or member rule.
    assert_eq!((validated, with_required), (375, 167));
}
