//! The published schemas (the Input CRD and the example XRDs, generated from
//! src/codegen/api.rs): they are Kubernetes structural schemas, the examples conform to
//! them, and a claim with a mistake is rejected by them, as the API server would
//! reject it before the function sees it.

use crate::support;

use function_artifactory::CROSSPLANE_SPEC_FIELDS;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use support::crd::Crds;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn read_yaml(path: &str) -> Value {
    let text = std::fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_yaml_ng::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

const INPUT_CRD: &str = "package/input/artifactory.fn.crossplane.io_inputs.yaml";
const CLUSTER_XRD: &str = "examples/cluster/xrd.yaml";
const NAMESPACED_XRD: &str = "examples/namespaced/xrd.yaml";

fn openapi_schema(document: &Value) -> &Value {
    let schema = &document["spec"]["versions"][0]["schema"]["openAPIV3Schema"];
    assert!(schema.is_object(), "no openAPIV3Schema");
    schema
}

#[cfg(feature = "codegen")]
mod structural {
    use super::*;
    use function_artifactory::codegen::schemas::{structural, structural_violations};

    #[test]
    fn committed_schemas_are_structural() {
        for path in [INPUT_CRD, CLUSTER_XRD, NAMESPACED_XRD] {
            let document = read_yaml(path);
            let violations = structural_violations(openapi_schema(&document));
            assert!(violations.is_empty(), "{path}:\n{}", violations.join("\n"));
        }
    }

    #[test]
    fn violations_are_found() {
        let bad = json!({
            "type": "object",
            "properties": {
                "a": {"$ref": "#/$defs/A"},
                "b": {"description": "no type"},
                "c": {"type": ["string", "null"]},
                "d": {"type": "object", "properties": {"x": {"type": "string"}}, "additionalProperties": {"type": "string"}},
                "e": {"type": "string", "anyOf": [{"type": "string"}, {"type": "integer"}]},
                "f": {"type": "array"},
                "g": {"type": "string", "pattern": "^(?=a)b$"},
                "h": {"type": "string", "enum": [1]},
                "i": {"type": "object", "required": ["y"]},
                "j": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                      "items": {"type": "object", "properties": {"name": {"type": "string"}}}},
                "k": {"type": "string", "const": "x"}
            }
        });
        let violations = structural_violations(&bad);
        let paths: Vec<&str> = violations
            .iter()
            .map(|v| v.split(':').next().unwrap())
            .collect();
        for field in ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k"] {
            assert!(
                paths.contains(&format!("<root>.{field}").as_str()),
                "{field} not reported: {violations:#?}"
            );
        }
        let fine = json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true});
        assert!(structural_violations(&fine).is_empty());
    }

    #[test]
    fn schemars_output_is_made_structural() {
        let raw = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "T",
            "type": "object",
            "properties": {
                "a": {"type": ["string", "null"], "format": "uri", "description": "line one\nline two"},
                "b": {"anyOf": [{"type": "object", "properties": {"x": {"type": "boolean"}}}, {"type": "null"}], "description": "b"},
                "c": {"oneOf": [{"type": "string", "const": "x", "description": "X"}, {"type": "string", "const": "y"}]},
                "d": {"type": "integer", "format": "uint", "default": null}
            }
        });
        let schema = structural(raw).unwrap();
        assert_eq!(
            schema,
            json!({
                "type": "object",
                "properties": {
                    "a": {"type": "string", "description": "line one line two"},
                    "b": {"type": "object", "description": "b", "properties": {"x": {"type": "boolean"}}},
                    "c": {"type": "string", "enum": ["x", "y"]},
                    "d": {"type": "integer"}
                }
            })
        );
        assert!(structural(json!({"type": "object", "properties": {"u": {"anyOf": [{"type": "string"}, {"type": "integer"}]}}})).is_err());
        assert!(structural(json!({"$ref": "#/$defs/Loop"})).is_err());
    }
}

/// The example XRDs as the CRDs Crossplane makes of them (the XR, and the claim where
/// there is one), plus the Input CRD, in a folder the CRD validator loads.
fn published_crds() -> (tempfile::TempDir, Crds) {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, crd: Value| {
        let text = serde_yaml_ng::to_string(&crd).unwrap();
        std::fs::write(dir.path().join(name), text).unwrap();
    };
    write("input.yaml", read_yaml(INPUT_CRD));
    for (file, xrd) in [
        ("cluster", read_yaml(CLUSTER_XRD)),
        ("namespaced", read_yaml(NAMESPACED_XRD)),
    ] {
        let spec = &xrd["spec"];
        let namespaced = spec["scope"] == "Namespaced";
        // Crossplane adds the standard fields to the XR's and the claim's schema.
        let mut versions = spec["versions"].clone();
        for version in versions.as_array_mut().unwrap() {
            let properties = &mut version["schema"]["openAPIV3Schema"]["properties"];
            properties["apiVersion"] = json!({"type": "string"});
            properties["kind"] = json!({"type": "string"});
            properties["metadata"] = json!({"type": "object"});
        }
        let crd = |names: &Value, scope: &str| {
            json!({
                "apiVersion": "apiextensions.k8s.io/v1",
                "kind": "CustomResourceDefinition",
                "metadata": {"name": format!("{}.{}", names["plural"].as_str().unwrap(), spec["group"].as_str().unwrap())},
                "spec": {"group": spec["group"], "names": names, "scope": scope, "versions": versions},
            })
        };
        let scope = if namespaced { "Namespaced" } else { "Cluster" };
        write(&format!("{file}-xr.yaml"), crd(&spec["names"], scope));
        if spec["claimNames"].is_object() {
            write(
                &format!("{file}-claim.yaml"),
                crd(&spec["claimNames"], "Namespaced"),
            );
        }
    }
    let crds = Crds::load_dir(dir.path()).unwrap();
    (dir, crds)
}

/// A composite as the user writes it: Crossplane's own spec fields (which Crossplane adds
/// to the XR's schema itself) are left out.
fn without_crossplane_fields(mut object: Value) -> Value {
    if let Some(spec) = object["spec"].as_object_mut() {
        for field in CROSSPLANE_SPEC_FIELDS {
            spec.remove(*field);
        }
    }
    object
}

fn example_files(name: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = ["flat", "cluster", "namespaced", "enterprise"]
        .iter()
        .flat_map(|dir| std::fs::read_dir(root().join("examples").join(dir)).unwrap())
        .map(|entry| entry.unwrap().path())
        .filter(|path| {
            let stem = path.file_stem().unwrap().to_str().unwrap();
            path.extension().is_some_and(|e| e == "yaml")
                && (stem == name || stem.starts_with(&format!("{name}-")))
        })
        .collect();
    files.sort();
    files
}

#[test]
fn example_composites_and_claims_conform_to_the_xrds() {
    let (_dir, crds) = published_crds();
    let mut checked = 0;
    for path in example_files("xr")
        .into_iter()
        .chain(example_files("claim"))
    {
        let object: Value =
            serde_yaml_ng::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let violations = crds.validate(&without_crossplane_fields(object));
        let invalid = path.to_str().unwrap().contains("invalid");
        if invalid {
            assert!(
                !violations.is_empty(),
                "{} should be rejected",
                path.display()
            );
        } else {
            assert!(
                violations.is_empty(),
                "{}:\n{}",
                path.display(),
                violations.join("\n")
            );
        }
        checked += 1;
    }
    assert!(checked >= 8, "the examples were found ({checked})");
}

#[test]
fn example_inputs_conform_to_the_input_crd() {
    let (_dir, crds) = published_crds();
    let compositions = example_files("composition");
    assert_eq!(compositions.len(), 4);
    for path in compositions {
        let composition: Value =
            serde_yaml_ng::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let mut input = composition["spec"]["pipeline"][0]["input"].clone();
        input["metadata"] = json!({"name": "input", "namespace": "default"});
        let violations = crds.validate(&input);
        assert!(
            violations.is_empty(),
            "{}:\n{}",
            path.display(),
            violations.join("\n")
        );
    }
    let bad = json!({
        "apiVersion": "artifactory.fn.crossplane.io/v1beta1", "kind": "Input",
        "providerApi": "clustr", "ttl": "soon", "artifactoryUrl": "artifactory.example.com",
        "defaults": {"deletionPolicy": "Keep", "managementPolicies": []}
    });
    let violations = crds.validate(&bad).join("\n");
    for path in [
        "providerApi",
        "ttl",
        "artifactoryUrl",
        "defaults.deletionPolicy",
        "defaults.managementPolicies",
    ] {
        assert!(
            violations.contains(path),
            "{path} not rejected:\n{violations}"
        );
    }
}

fn claim(spec: Value) -> Value {
    json!({
        "apiVersion": "platform.example.org/v1alpha1", "kind": "Repositories",
        "metadata": {"name": "team1-repos", "namespace": "team1"},
        "spec": spec
    })
}

#[test]
fn a_claim_with_mistakes_is_rejected_by_the_schema() {
    let (_dir, crds) = published_crds();
    let good = json!({"name": "libs", "rclass": "local", "packageType": "maven"});
    assert_eq!(
        crds.validate(&claim(json!({"repositories": [good]}))),
        Vec::<String>::new()
    );
    let cases = [
        (
            json!({"repositories": [{"name": "libs", "rclass": "locl", "packageType": "maven"}]}),
            "spec.repositories[0].rclass",
        ),
        (
            json!({"repositories": [{"name": "libs", "rclass": "local", "packageType": "mavn"}]}),
            "spec.repositories[0].packageType",
        ),
        (
            json!({"repositories": [{"name": "Libs", "rclass": "local", "packageType": "maven"}]}),
            "spec.repositories[0].name",
        ),
        (
            json!({"repositories": [{"name": "l".repeat(64), "rclass": "local", "packageType": "maven"}]}),
            "spec.repositories[0].name",
        ),
        (
            json!({"repositories": [{"rclass": "local", "packageType": "maven"}]}),
            "spec.repositories[0]",
        ),
        (
            json!({"projectKey": "Team1", "repositories": []}),
            "spec.projectKey",
        ),
        (
            json!({"repositories": [good, good]}),
            "spec.repositories[1]",
        ),
        (
            json!({"repositories": [{"name": "libs", "rclass": "local", "packageType": "maven", "key": "team libs"}]}),
            "spec.repositories[0].key",
        ),
        (
            json!({"repositories": [{"name": "libs", "rclass": "local", "packageType": "maven", "descripton": "x"}]}),
            "spec.repositories[0].descripton",
        ),
        (
            json!({"repositories": [{"name": "libs", "rclass": "virtual", "packageType": "maven", "repositories": ["Libs"]}]}),
            "spec.repositories[0].repositories[0]",
        ),
        (
            json!({"repositories": [{"name": "libs", "rclass": "local", "packageType": "maven", "managementPolicies": ["Observ"]}]}),
            "spec.repositories[0].managementPolicies[0]",
        ),
        (
            json!({"repositories": [{"name": "libs", "rclass": "local", "packageType": "maven", "providerConfigRef": {"kind": "ProviderConfig", "name": "x"}}]}),
            "spec.repositories[0].providerConfigRef.kind",
        ),
        (json!({}), "spec.repositories"),
    ];
    for (spec, path) in cases {
        let violations = crds.validate(&claim(spec.clone()));
        assert!(
            violations.iter().any(|v| v.starts_with(path)),
            "{spec}: no violation at {path}: {violations:#?}"
        );
    }
}

#[test]
fn the_namespaced_xrd_takes_the_namespaced_references() {
    let (_dir, crds) = published_crds();
    let xr = |spec: Value| {
        json!({
            "apiVersion": "artifactory.example.org/v1alpha1", "kind": "Repositories",
            "metadata": {"name": "team2-repos", "namespace": "team2"}, "spec": spec
        })
    };
    let entry = json!({"name": "libs", "rclass": "local", "packageType": "maven",
        "providerConfigRef": {"kind": "ClusterProviderConfig", "name": "shared"}});
    assert_eq!(
        crds.validate(&xr(json!({"repositories": [entry]}))),
        Vec::<String>::new()
    );
    for (spec, path) in [
        (
            json!({"deletionPolicy": "Orphan", "repositories": []}),
            "spec.deletionPolicy",
        ),
        (
            json!({"providerConfigRef": {"name": "x"}, "repositories": []}),
            "spec.providerConfigRef",
        ),
        (
            json!({"providerConfigRef": {"kind": "Secret", "name": "x"}, "repositories": []}),
            "spec.providerConfigRef.kind",
        ),
    ] {
        let violations = crds.validate(&xr(spec.clone()));
        assert!(
            violations.iter().any(|v| v.starts_with(path)),
            "{spec}: no violation at {path}: {violations:#?}"
        );
    }
}
