//! A claim given in place of the composite resource: the XR built from it as Crossplane's
//! claim reconciler builds it (`claim/syncer_ssa.go`), then rendered like any XR.
//!
//! Which kind is the claim's XR is the XRD's to say (`spec.claimNames` and `spec.names`), so a
//! claim is recognised only with `--xrd`; without it, a kind that differs from the
//! Composition's `compositeTypeRef` stays the error `crossplane render` reports, with a hint.
//!
//! The XR gets:
//! - `apiVersion`: the XRD's group and referenceable version; `kind`: the XRD's `names.kind`;
//! - `metadata.name`: the XR the claim already names (`spec.resourceRef.name`), else
//!   `<claim name>-` and five characters. Crossplane draws those at random; render derives
//!   them from the claim's namespace and name ([`generated_name`]), so that the same claim
//!   always renders the same bytes;
//! - `metadata.labels` and `annotations`: the claim's, without the `*kubernetes.io/` and
//!   `*k8s.io/` ones, with `crossplane.io/claim-name` and `crossplane.io/claim-namespace`, and
//!   `crossplane.io/composite` set to the XR's name, as the XR reconciler sets it before it runs
//!   the pipeline;
//! - `spec`: the claim's, without the fields only a claim has (`compositeDeletePolicy`,
//!   `compositionRevisionRef`, `resourceRef`, `writeConnectionSecretToRef`), with `claimRef`
//!   naming the claim and, when the claim names none, `compositionRef` naming the Composition
//!   render was given (the XR reconciler selects it before it runs the pipeline).
//!
//! A claim without a namespace is taken to be in `default`, where kubectl would create it.

use super::load::{object_at, str_at, Object};
use super::Result;
use anyhow::Error;
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

const LABEL_CLAIM_NAME: &str = "crossplane.io/claim-name";
const LABEL_CLAIM_NAMESPACE: &str = "crossplane.io/claim-namespace";
const LABEL_COMPOSITE: &str = "crossplane.io/composite";
/// The spec fields only a claim has, which Crossplane does not copy to the XR.
const CLAIM_ONLY_FIELDS: [&str; 4] = [
    "compositeDeletePolicy",
    "compositionRevisionRef",
    "resourceRef",
    "writeConnectionSecretToRef",
];
/// Kubernetes' generated names: the base cut to 58 characters, then 5 of these.
const NAME_ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
const MAX_NAME_BASE: usize = 58;
const NAME_SUFFIX: usize = 5;

/// An XR built from a claim, and the line render prints about it.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct FromClaim {
    pub xr: Object,
    pub note: String,
}

/// The XR of `document` when it is a claim of the XRD's, else `None`.
pub(super) fn composite_of(
    document: &Object,
    xrd: &Object,
    composition_name: &str,
) -> Result<Option<FromClaim>> {
    let (group, _) = group_version(str_at(document, &["apiVersion"]));
    let claim_kind = str_at(xrd, &["spec", "claimNames", "kind"]);
    let is_claim = !claim_kind.is_empty()
        && str_at(document, &["kind"]) == claim_kind
        && group == str_at(xrd, &["spec", "group"]);
    if !is_claim {
        return Ok(None);
    }
    build(document, xrd, composition_name).map(Some)
}

fn build(claim: &Object, xrd: &Object, composition_name: &str) -> Result<FromClaim> {
    let claim_name = str_at(claim, &["metadata", "name"]);
    let claim_namespace = match str_at(claim, &["metadata", "namespace"]) {
        "" => "default",
        namespace => namespace,
    };
    let Some(Value::Object(claim_spec)) = claim.get("spec") else {
        return Err(Error::msg(format!(
            "claim {claim_namespace}/{claim_name} has no spec object to copy to its XR"
        )));
    };
    let (name, named) = match str_at(claim, &["spec", "resourceRef", "name"]) {
        "" => (
            generated_name(claim_namespace, claim_name),
            "in a cluster its name ends in five random characters",
        ),
        bound => (bound.to_string(), "the XR its spec.resourceRef names"),
    };
    let api_version = xr_api_version(claim, xrd);
    let kind = str_at(xrd, &["spec", "names", "kind"]).to_string();

    let mut labels = without_reserved(object_at(claim, &["metadata", "labels"]));
    labels.insert(LABEL_CLAIM_NAME.into(), json!(claim_name));
    labels.insert(LABEL_CLAIM_NAMESPACE.into(), json!(claim_namespace));
    labels.insert(LABEL_COMPOSITE.into(), json!(name));
    let mut metadata = Map::new();
    metadata.insert("name".into(), json!(name));
    metadata.insert("labels".into(), Value::Object(labels));
    let annotations = without_reserved(object_at(claim, &["metadata", "annotations"]));
    if !annotations.is_empty() {
        metadata.insert("annotations".into(), Value::Object(annotations));
    }

    let mut spec = claim_spec.clone();
    spec.retain(|field, _| !CLAIM_ONLY_FIELDS.contains(&field.as_str()));
    spec.insert(
        "claimRef".into(),
        json!({
            "apiVersion": str_at(claim, &["apiVersion"]),
            "kind": str_at(claim, &["kind"]),
            "name": claim_name,
            "namespace": claim_namespace,
        }),
    );
    spec.entry("compositionRef")
        .or_insert_with(|| json!({ "name": composition_name }));

    let mut xr = Map::new();
    xr.insert("apiVersion".into(), json!(api_version));
    xr.insert("kind".into(), json!(kind));
    xr.insert("metadata".into(), Value::Object(metadata));
    xr.insert("spec".into(), Value::Object(spec));
    let note = format!(
        "function-artifactory: rendering {kind} {name:?}, the composite resource of claim {} \
         {claim_namespace}/{claim_name} ({named})",
        str_at(claim, &["kind"]),
    );
    Ok(FromClaim { xr, note })
}

/// The XRD's group with its referenceable version (the version Crossplane creates XRs at),
/// else the claim's version.
fn xr_api_version(claim: &Object, xrd: &Object) -> String {
    let group = str_at(xrd, &["spec", "group"]);
    let versions = xrd
        .get("spec")
        .and_then(|s| s.get("versions"))
        .and_then(Value::as_array);
    let referenceable = versions
        .into_iter()
        .flatten()
        .find(|v| v["referenceable"] == Value::Bool(true))
        .and_then(|v| v["name"].as_str());
    let (_, claim_version) = group_version(str_at(claim, &["apiVersion"]));
    format!("{group}/{}", referenceable.unwrap_or(claim_version))
}

/// `group/version`, or `("", version)` for the core group.
fn group_version(api_version: &str) -> (&str, &str) {
    api_version.split_once('/').unwrap_or(("", api_version))
}

/// `<claim name>-` cut to 58 characters, then five characters from Kubernetes' alphabet for
/// generated names, taken from the SHA-256 of `namespace/name`.
pub(super) fn generated_name(namespace: &str, name: &str) -> String {
    let base: String = format!("{name}-").chars().take(MAX_NAME_BASE).collect();
    let digest = Sha256::digest(format!("{namespace}/{name}").as_bytes());
    let suffix: String = digest
        .iter()
        .take(NAME_SUFFIX)
        .map(|byte| char::from(NAME_ALPHABET[usize::from(*byte) % NAME_ALPHABET.len()]))
        .collect();
    format!("{base}{suffix}")
}

/// Labels or annotations without the ones Kubernetes reserves (a domain before the first `/`
/// that ends in `kubernetes.io` or `k8s.io`), which Crossplane does not copy.
fn without_reserved(entries: Option<&Object>) -> Map<String, Value> {
    let reserved = |key: &str| {
        let domain = key.split('/').next().unwrap_or(key);
        domain.ends_with("kubernetes.io") || domain.ends_with("k8s.io")
    };
    entries
        .into_iter()
        .flatten()
        .filter(|(key, _)| !reserved(key))
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(value: Value) -> Object {
        value.as_object().unwrap().clone()
    }

    fn xrd() -> Object {
        object(json!({
            "apiVersion": "apiextensions.crossplane.io/v1", "kind": "CompositeResourceDefinition",
            "metadata": {"name": "xthings.example.org"},
            "spec": {
                "group": "example.org",
                "names": {"kind": "XThing", "plural": "xthings"},
                "claimNames": {"kind": "Thing", "plural": "things"},
                "versions": [{"name": "v1alpha1"}, {"name": "v1", "referenceable": true}]
            }
        }))
    }

    fn claim(spec: Value) -> Object {
        object(json!({
            "apiVersion": "example.org/v1alpha1", "kind": "Thing",
            "metadata": {
                "name": "mine", "namespace": "team",
                "labels": {"app": "a", "app.kubernetes.io/name": "x", "k8s.io/y": "z"},
                "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}", "note": "n"}
            },
            "spec": spec
        }))
    }

    #[test]
    fn the_xr_is_built_as_crossplane_builds_it() {
        let spec = json!({
            "size": 3,
            "compositionSelector": {"matchLabels": {"tier": "gold"}},
            "compositeDeletePolicy": "Foreground",
            "writeConnectionSecretToRef": {"name": "s"},
            "compositionRevisionRef": {"name": "r"},
        });
        let built = composite_of(&claim(spec), &xrd(), "things")
            .unwrap()
            .unwrap();
        let name = generated_name("team", "mine");
        assert_eq!(
            Value::Object(built.xr),
            json!({
                "apiVersion": "example.org/v1",
                "kind": "XThing",
                "metadata": {
                    "name": name,
                    "labels": {
                        "app": "a",
                        "crossplane.io/claim-name": "mine",
                        "crossplane.io/claim-namespace": "team",
                        "crossplane.io/composite": name,
                    },
                    "annotations": {"note": "n"},
                },
                "spec": {
                    "size": 3,
                    "compositionSelector": {"matchLabels": {"tier": "gold"}},
                    "claimRef": {"apiVersion": "example.org/v1alpha1", "kind": "Thing", "name": "mine", "namespace": "team"},
                    "compositionRef": {"name": "things"},
                },
            })
        );
        assert_eq!(
            built.note,
            format!(
                "function-artifactory: rendering XThing {name:?}, the composite resource of \
                 claim Thing team/mine (in a cluster its name ends in five random characters)"
            )
        );
    }

    #[test]
    fn a_bound_claim_names_its_xr() {
        let spec =
            json!({"resourceRef": {"name": "mine-x7k2p"}, "compositionRef": {"name": "own"}});
        let built = composite_of(&claim(spec), &xrd(), "things")
            .unwrap()
            .unwrap();
        assert_eq!(built.xr["metadata"]["name"], "mine-x7k2p");
        assert!(
            built.note.ends_with("(the XR its spec.resourceRef names)"),
            "{}",
            built.note
        );
        assert_eq!(built.xr["spec"]["compositionRef"], json!({"name": "own"}));
        assert!(built.xr["spec"].get("resourceRef").is_none());
    }

    #[test]
    fn generated_names_look_like_kubernetes_ones_and_are_stable() {
        let name = generated_name("team", "mine");
        assert_eq!(name, generated_name("team", "mine"));
        assert_ne!(name, generated_name("other", "mine"));
        let suffix = name.strip_prefix("mine-").unwrap();
        assert_eq!(suffix.len(), 5);
        assert!(suffix.bytes().all(|b| NAME_ALPHABET.contains(&b)), "{name}");
        let long = generated_name("team", &"n".repeat(80));
        assert_eq!(long.len(), 63);
        assert!(long.starts_with(&"n".repeat(58)));
    }

    #[test]
    fn only_a_claim_of_the_xrd_is_a_claim() {
        let xr = object(json!({"apiVersion": "example.org/v1", "kind": "XThing", "spec": {}}));
        assert_eq!(composite_of(&xr, &xrd(), "c").unwrap(), None);
        let mut elsewhere = claim(json!({}));
        elsewhere.insert("apiVersion".into(), json!("other.org/v1alpha1"));
        assert_eq!(composite_of(&elsewhere, &xrd(), "c").unwrap(), None);
        let mut no_claims = xrd();
        no_claims["spec"]
            .as_object_mut()
            .unwrap()
            .remove("claimNames");
        assert_eq!(
            composite_of(&claim(json!({})), &no_claims, "c").unwrap(),
            None
        );
    }

    #[test]
    fn a_claim_needs_a_spec_and_defaults_to_the_default_namespace() {
        let mut bare = claim(json!({}));
        bare.remove("spec");
        assert_eq!(
            format!("{:#}", composite_of(&bare, &xrd(), "c").unwrap_err()),
            "claim team/mine has no spec object to copy to its XR"
        );
        let mut unplaced = claim(json!({}));
        unplaced["metadata"]
            .as_object_mut()
            .unwrap()
            .remove("namespace");
        let built = composite_of(&unplaced, &xrd(), "c").unwrap().unwrap();
        assert_eq!(
            built.xr["metadata"]["labels"]["crossplane.io/claim-namespace"],
            "default"
        );
    }
}
