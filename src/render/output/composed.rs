//! The composed resources as `crossplane render` prints them: each desired resource with the
//! metadata Crossplane adds (name prefix or the observed name, the composition resource name,
//! the composite and claim labels, the controller reference).

use super::metadata::{add_strings, object_entry, set_metadata_string, string_map};
use crate::proto::v1::State;
use crate::proto::Struct;
use crate::render::load::{object_at, resource_name, str_at, Object, ANNOTATION_RESOURCE_NAME};
use crate::render::pipeline::Inputs;
use crate::render::Result;
use anyhow::{Context as _, Error};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

const LABEL_COMPOSITE: &str = "crossplane.io/composite";
const LABEL_CLAIM_NAME: &str = "crossplane.io/claim-name";
const LABEL_CLAIM_NAMESPACE: &str = "crossplane.io/claim-namespace";

/// The desired composed resources, sorted by composition resource name, with
/// the metadata Crossplane adds.
pub(super) fn composed_resources(inputs: &Inputs, desired: &State) -> Result<Vec<Object>> {
    let observed: BTreeMap<String, &Object> = inputs
        .observed
        .iter()
        .map(|o| (resource_name(o), o))
        .collect();
    let mut out = Vec::new();
    // `resources` is a BTreeMap: its order is Go's byte-wise string order.
    for (name, resource) in &desired.resources {
        let mut object = resource
            .resource
            .clone()
            .map(Struct::into_fields)
            .unwrap_or_default();
        if let Some(observed) = observed.get(name) {
            for field in ["namespace", "name", "generateName"] {
                set_metadata_string(&mut object, field, str_at(observed, &["metadata", field]));
            }
        }
        add_crossplane_metadata(&mut object, &inputs.composite, name)
            .with_context(|| format!("cannot render composed resource {name:?} metadata"))?;
        out.push(object);
    }
    Ok(out)
}

/// crossplane's `SetComposedResourceMetadata`.
fn add_crossplane_metadata(object: &mut Object, xr: &Object, name: &str) -> Result<()> {
    let xr_name = str_at(xr, &["metadata", "name"]);
    let xr_labels = string_map(object_at(xr, &["metadata", "labels"]));
    // Nested XRs carry the root XR's name in this label.
    let prefix = xr_labels
        .get(LABEL_COMPOSITE)
        .filter(|p| !p.is_empty())
        .map_or(xr_name, String::as_str);
    if str_at(object, &["metadata", "name"]).is_empty()
        && str_at(object, &["metadata", "generateName"]).is_empty()
    {
        set_metadata_string(object, "generateName", &format!("{prefix}-"));
    }
    let xr_namespace = str_at(xr, &["metadata", "namespace"]);
    if !xr_namespace.is_empty() {
        set_metadata_string(object, "namespace", xr_namespace);
    }
    add_strings(object, "annotations", [(ANNOTATION_RESOURCE_NAME, name)]);
    add_strings(object, "labels", [(LABEL_COMPOSITE, prefix)]);
    if let Some((claim_name, claim_namespace)) = claim(xr, &xr_labels) {
        add_strings(
            object,
            "labels",
            [
                (LABEL_CLAIM_NAMESPACE, claim_namespace.as_str()),
                (LABEL_CLAIM_NAME, claim_name.as_str()),
            ],
        );
    }
    add_controller_reference(object, xr).with_context(|| {
        format!("cannot set composite resource {xr_name:?} as controller ref of composed resource")
    })
}

/// The claim's name and namespace: from the XR's claim labels when both are
/// set, else from its claim reference.
fn claim(xr: &Object, xr_labels: &BTreeMap<String, String>) -> Option<(String, String)> {
    let label = |key: &str| xr_labels.get(key).filter(|v| !v.is_empty()).cloned();
    if let (Some(name), Some(namespace)) = (label(LABEL_CLAIM_NAME), label(LABEL_CLAIM_NAMESPACE)) {
        return Some((name, namespace));
    }
    let reference = object_at(xr, &["spec", "claimRef"])
        .or_else(|| object_at(xr, &["spec", "crossplane", "claimRef"]))?;
    Some((
        str_at(reference, &["name"]).into(),
        str_at(reference, &["namespace"]).into(),
    ))
}

/// A controller reference to the XR (`uid` is the XR's, usually empty).
/// An existing reference with the same UID is replaced; a controller
/// reference with another UID is an error, as in crossplane-runtime.
fn add_controller_reference(object: &mut Object, xr: &Object) -> Result<()> {
    let reference = OwnerReference {
        api_version: str_at(xr, &["apiVersion"]).into(),
        kind: str_at(xr, &["kind"]).into(),
        name: str_at(xr, &["metadata", "name"]).into(),
        uid: str_at(xr, &["metadata", "uid"]).into(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    };
    let mut references = owner_references(object);
    if let Some(existing) = references
        .iter()
        .find(|r| r.controller == Some(true) && r.uid != reference.uid)
    {
        return Err(Error::msg(format!(
            "{} is already controlled by {} {} (UID {})",
            str_at(object, &["metadata", "name"]),
            existing.kind,
            existing.name,
            existing.uid
        )));
    }
    match references.iter_mut().find(|r| r.uid == reference.uid) {
        Some(existing) => *existing = reference,
        None => references.push(reference),
    }
    let list = references.iter().map(OwnerReference::to_json).collect();
    object_entry(object, "metadata").insert("ownerReferences".into(), Value::Array(list));
    Ok(())
}

/// A `metav1.OwnerReference` as apimachinery reads and writes it.
#[derive(Debug, Clone, PartialEq)]
struct OwnerReference {
    api_version: String,
    kind: String,
    name: String,
    uid: String,
    controller: Option<bool>,
    block_owner_deletion: Option<bool>,
}

impl OwnerReference {
    fn from_json(object: &Object) -> OwnerReference {
        OwnerReference {
            api_version: str_at(object, &["apiVersion"]).into(),
            kind: str_at(object, &["kind"]).into(),
            name: str_at(object, &["name"]).into(),
            uid: str_at(object, &["uid"]).into(),
            controller: object.get("controller").and_then(Value::as_bool),
            block_owner_deletion: object.get("blockOwnerDeletion").and_then(Value::as_bool),
        }
    }

    fn to_json(&self) -> Value {
        let mut object = Map::new();
        object.insert("apiVersion".into(), json!(self.api_version));
        object.insert("kind".into(), json!(self.kind));
        object.insert("name".into(), json!(self.name));
        object.insert("uid".into(), json!(self.uid));
        if let Some(controller) = self.controller {
            object.insert("controller".into(), json!(controller));
        }
        if let Some(block) = self.block_owner_deletion {
            object.insert("blockOwnerDeletion".into(), json!(block));
        }
        Value::Object(object)
    }
}

/// The owner references as apimachinery reads them: none unless the field
/// is a list of objects.
fn owner_references(object: &Object) -> Vec<OwnerReference> {
    let list = object
        .get("metadata")
        .and_then(|m| m.get("ownerReferences"))
        .and_then(Value::as_array);
    let objects: Option<Vec<&Object>> = list
        .map(|items| items.iter().map(Value::as_object).collect())
        .unwrap_or_default();
    objects
        .unwrap_or_default()
        .into_iter()
        .map(OwnerReference::from_json)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(value: Value) -> Object {
        value.as_object().cloned().unwrap()
    }

    fn xr() -> Object {
        object(json!({"apiVersion": "x.io/v1", "kind": "XR", "metadata": {"name": "xr"}}))
    }

    #[test]
    fn composed_metadata_is_added() {
        let mut cd = object(
            json!({"apiVersion": "a/v1", "kind": "B", "metadata": {"labels": {"keep": "me"}}}),
        );
        add_crossplane_metadata(&mut cd, &xr(), "bucket").unwrap();
        assert_eq!(
            cd["metadata"],
            json!({
                "generateName": "xr-",
                "annotations": {ANNOTATION_RESOURCE_NAME: "bucket"},
                "labels": {"keep": "me", LABEL_COMPOSITE: "xr"},
                "ownerReferences": [{"apiVersion": "x.io/v1", "kind": "XR", "name": "xr", "uid": "", "controller": true, "blockOwnerDeletion": true}],
            })
        );
    }

    #[test]
    fn named_resources_get_no_generate_name_and_namespaced_xrs_force_their_namespace() {
        let mut xr = xr();
        xr["metadata"]["namespace"] = json!("team");
        xr["metadata"]["labels"] =
            json!({LABEL_CLAIM_NAME: "c", LABEL_CLAIM_NAMESPACE: "ns", LABEL_COMPOSITE: "root"});
        let mut cd = object(json!({"metadata": {"name": "fixed", "namespace": "elsewhere"}}));
        add_crossplane_metadata(&mut cd, &xr, "r").unwrap();
        assert_eq!(cd["metadata"]["name"], "fixed");
        assert_eq!(cd["metadata"]["namespace"], "team");
        assert!(cd["metadata"].get("generateName").is_none());
        assert_eq!(
            cd["metadata"]["labels"],
            json!({LABEL_COMPOSITE: "root", LABEL_CLAIM_NAME: "c", LABEL_CLAIM_NAMESPACE: "ns"})
        );
        let mut unnamed = Object::new();
        add_crossplane_metadata(&mut unnamed, &xr, "r").unwrap();
        assert_eq!(unnamed["metadata"]["generateName"], "root-");
    }

    #[test]
    fn claim_labels_come_from_the_claim_reference() {
        let mut xr = xr();
        xr.insert(
            "spec".into(),
            json!({"claimRef": {"name": "c", "namespace": "ns", "kind": "C"}}),
        );
        let mut cd = Object::new();
        add_crossplane_metadata(&mut cd, &xr, "r").unwrap();
        assert_eq!(cd["metadata"]["labels"][LABEL_CLAIM_NAME], "c");
        assert_eq!(cd["metadata"]["labels"][LABEL_CLAIM_NAMESPACE], "ns");
    }

    #[test]
    fn another_controller_is_an_error() {
        let mut cd = object(
            json!({"metadata": {"name": "n", "ownerReferences": [{"kind": "K", "name": "o", "uid": "u1", "controller": true}]}}),
        );
        let error = add_crossplane_metadata(&mut cd, &xr(), "r").unwrap_err();
        assert_eq!(
            format!("{error:#}"),
            "cannot set composite resource \"xr\" as controller ref of composed resource: n is already controlled by K o (UID u1)"
        );
    }

    #[test]
    fn an_owner_reference_with_the_same_uid_is_replaced() {
        let mut cd = object(
            json!({"metadata": {"ownerReferences": [{"kind": "Old", "name": "o", "uid": "", "extra": 1}, {"kind": "K", "name": "p", "uid": "u2"}]}}),
        );
        add_crossplane_metadata(&mut cd, &xr(), "r").unwrap();
        let references = cd["metadata"]["ownerReferences"].as_array().unwrap();
        assert_eq!(references.len(), 2);
        assert_eq!(references[0]["kind"], "XR");
        assert_eq!(
            references[1],
            json!({"apiVersion": "", "kind": "K", "name": "p", "uid": "u2"})
        );
    }
}
