//! A claim given in place of the composite resource: the XR `crossplane xr generate` (CLI
//! v2.5.0, `cmd/crossplane/xr/generate.go`) makes of it, then rendered like any XR, so that
//! rendering a claim gives what rendering that command's output gives.
//!
//! A claim is recognised only with `--xrd` (its `spec.claimNames` and `spec.group`); without
//! it, a kind that differs from the Composition's `compositeTypeRef` stays the error
//! `crossplane render` reports, with a hint.
//!
//! The XR gets, as `xr generate` gives it:
//! - `apiVersion`: the claim's; `kind`: `X` and the claim's kind;
//! - `metadata.name`: `<claim name>-` (cut to 58 characters) and five characters. The command
//!   draws those at random; render derives them from the claim's namespace and name
//!   ([`generated_name`]), so that the same claim always renders the same bytes. A claim bound to
//!   its XR (`spec.resourceRef.name`) gives that name, as `xr generate --name` would;
//! - `metadata.annotations`: the claim's; `metadata.labels`: the claim's without
//!   `crossplane.io/composite`, with `crossplane.io/claim-name` and
//!   `crossplane.io/claim-namespace` (the claim's namespace as written, empty without one);
//! - `spec`: the claim's, with `claimRef` naming the claim. The two fields a claim has and an XR
//!   does not (`compositeDeletePolicy`, `resourceRef`) are left out, where `xr generate` copies
//!   them: the API server prunes them from an XR, and the function would refuse them as unknown
//!   fields of its composite (docs/render.md lists this difference).

use super::load::{object_at, str_at, Object};
use super::Result;
use anyhow::Error;
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

const LABEL_CLAIM_NAME: &str = "crossplane.io/claim-name";
const LABEL_CLAIM_NAMESPACE: &str = "crossplane.io/claim-namespace";
const LABEL_COMPOSITE: &str = "crossplane.io/composite";
/// The spec fields a claim has and an XR does not: left out of the XR.
const CLAIM_ONLY_FIELDS: [&str; 2] = ["compositeDeletePolicy", "resourceRef"];
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
pub(super) fn composite_of(document: &Object, xrd: &Object) -> Result<Option<FromClaim>> {
    let (group, _) = group_version(str_at(document, &["apiVersion"]));
    let claim_kind = str_at(xrd, &["spec", "claimNames", "kind"]);
    let is_claim = !claim_kind.is_empty()
        && str_at(document, &["kind"]) == claim_kind
        && group == str_at(xrd, &["spec", "group"]);
    if !is_claim {
        return Ok(None);
    }
    build(document).map(Some)
}

fn build(claim: &Object) -> Result<FromClaim> {
    let claim_name = str_at(claim, &["metadata", "name"]);
    let claim_namespace = str_at(claim, &["metadata", "namespace"]);
    let claim_kind = str_at(claim, &["kind"]);
    let Some(Value::Object(claim_spec)) = claim.get("spec") else {
        return Err(Error::msg(format!(
            "claim {claim_namespace}/{claim_name} has no spec object to copy to its XR"
        )));
    };
    let (name, named) = match str_at(claim, &["spec", "resourceRef", "name"]) {
        "" => (
            generated_name(claim_namespace, claim_name),
            "crossplane xr generate ends its name in five random characters",
        ),
        bound => (bound.to_string(), "the XR its spec.resourceRef names"),
    };
    let kind = format!("X{claim_kind}");

    let mut labels = object_at(claim, &["metadata", "labels"])
        .cloned()
        .unwrap_or_default();
    labels.remove(LABEL_COMPOSITE);
    labels.insert(LABEL_CLAIM_NAME.into(), json!(claim_name));
    labels.insert(LABEL_CLAIM_NAMESPACE.into(), json!(claim_namespace));
    let mut metadata = Map::new();
    metadata.insert("name".into(), json!(name));
    metadata.insert("labels".into(), Value::Object(labels));
    if let Some(annotations) = object_at(claim, &["metadata", "annotations"]) {
        if !annotations.is_empty() {
            metadata.insert("annotations".into(), Value::Object(annotations.clone()));
        }
    }

    let mut spec = claim_spec.clone();
    spec.retain(|field, _| !CLAIM_ONLY_FIELDS.contains(&field.as_str()));
    spec.insert(
        "claimRef".into(),
        json!({
            "apiVersion": str_at(claim, &["apiVersion"]),
            "kind": claim_kind,
            "name": claim_name,
            "namespace": claim_namespace,
        }),
    );

    let mut xr = Map::new();
    xr.insert("apiVersion".into(), json!(str_at(claim, &["apiVersion"])));
    xr.insert("kind".into(), json!(kind));
    xr.insert("metadata".into(), Value::Object(metadata));
    xr.insert("spec".into(), Value::Object(spec));
    let note = format!(
        "function-artifactory: rendering {kind} {name:?}, the composite resource crossplane xr \
         generate makes of claim {claim_kind} {claim_namespace}/{claim_name} ({named})",
    );
    Ok(FromClaim { xr, note })
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
    fn the_xr_is_the_one_crossplane_xr_generate_makes() {
        let spec = json!({
            "size": 3,
            "compositionSelector": {"matchLabels": {"tier": "gold"}},
            "compositeDeletePolicy": "Foreground",
            "writeConnectionSecretToRef": {"name": "s"},
            "compositionRevisionRef": {"name": "r"},
        });
        let mut labelled = claim(spec);
        labelled["metadata"]["labels"]["crossplane.io/composite"] = json!("stale");
        let built = composite_of(&labelled, &xrd()).unwrap().unwrap();
        let name = generated_name("team", "mine");
        assert_eq!(
            Value::Object(built.xr),
            json!({
                "apiVersion": "example.org/v1alpha1",
                "kind": "XThing",
                "metadata": {
                    "name": name,
                    "labels": {
                        "app": "a",
                        "app.kubernetes.io/name": "x",
                        "k8s.io/y": "z",
                        "crossplane.io/claim-name": "mine",
                        "crossplane.io/claim-namespace": "team",
                    },
                    "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}", "note": "n"},
                },
                "spec": {
                    "size": 3,
                    "compositionSelector": {"matchLabels": {"tier": "gold"}},
                    "writeConnectionSecretToRef": {"name": "s"},
                    "compositionRevisionRef": {"name": "r"},
                    "claimRef": {"apiVersion": "example.org/v1alpha1", "kind": "Thing", "name": "mine", "namespace": "team"},
                },
            })
        );
        assert_eq!(
            built.note,
            format!(
                "function-artifactory: rendering XThing {name:?}, the composite resource \
                 crossplane xr generate makes of claim Thing team/mine (crossplane xr generate \
                 ends its name in five random characters)"
            )
        );
    }

    #[test]
    fn a_bound_claim_names_its_xr() {
        let spec =
            json!({"resourceRef": {"name": "mine-x7k2p"}, "compositionRef": {"name": "own"}});
        let built = composite_of(&claim(spec), &xrd()).unwrap().unwrap();
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
        assert_eq!(composite_of(&xr, &xrd()).unwrap(), None);
        let mut elsewhere = claim(json!({}));
        elsewhere.insert("apiVersion".into(), json!("other.org/v1alpha1"));
        assert_eq!(composite_of(&elsewhere, &xrd()).unwrap(), None);
        let mut no_claims = xrd();
        no_claims["spec"]
            .as_object_mut()
            .unwrap()
            .remove("claimNames");
        assert_eq!(composite_of(&claim(json!({})), &no_claims).unwrap(), None);
    }

    #[test]
    fn a_claim_needs_a_spec_and_keeps_the_namespace_it_has() {
        let mut bare = claim(json!({}));
        bare.remove("spec");
        assert_eq!(
            format!("{:#}", composite_of(&bare, &xrd()).unwrap_err()),
            "claim team/mine has no spec object to copy to its XR"
        );
        let mut unplaced = claim(json!({}));
        unplaced["metadata"]
            .as_object_mut()
            .unwrap()
            .remove("namespace");
        let built = composite_of(&unplaced, &xrd()).unwrap().unwrap();
        assert_eq!(
            built.xr["metadata"]["labels"]["crossplane.io/claim-namespace"],
            ""
        );
        assert_eq!(built.xr["spec"]["claimRef"]["namespace"], "");
    }
}
