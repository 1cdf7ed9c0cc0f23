//! The documents `crossplane render` prints, in its order: the composite
//! resource, the composed resources sorted by composition resource name,
//! then (on request) the results and the context.
//!
//! This follows Crossplane v2 (`render.go` of the in-tree CLI up to v2.2,
//! where it differs from 1.17):
//! - the XR's `Ready` condition honours the desired composite's readiness;
//! - conditions returned by functions are set on the XR (system types
//!   skipped);
//! - `generateName` is added only when a composed resource has no name and
//!   no `generateName`; the name, namespace and `generateName` of an observed
//!   resource are copied; a namespaced XR forces its namespace;
//! - the `crossplane.io/composite` label and the name prefix come from the
//!   XR's own `crossplane.io/composite` label when it has one (nested XRs).

use super::load::{object_at, resource_name, str_at, Object, ANNOTATION_RESOURCE_NAME};
use super::pipeline::{Inputs, Outcome, StepResult};
use super::Result;
use crate::proto::v1::{Condition, Ready, Severity, State, Status};
use crate::proto::Struct;
use anyhow::{Context as _, Error};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

const LABEL_COMPOSITE: &str = "crossplane.io/composite";
const LABEL_CLAIM_NAME: &str = "crossplane.io/claim-name";
const LABEL_CLAIM_NAMESPACE: &str = "crossplane.io/claim-namespace";
const RENDER_API_VERSION: &str = "render.crossplane.io/v1beta1";
/// render's fixed `lastTransitionTime`: real times would only be noise.
pub(super) const CONDITION_TIME: &str = "2024-01-01T00:00:00Z";
/// Condition types only Crossplane may set; functions' conditions of these
/// types are ignored.
const SYSTEM_CONDITION_TYPES: [&str; 3] = ["Ready", "Synced", "Healthy"];

/// Which optional documents to print.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Options {
    pub include_results: bool,
    pub include_context: bool,
    pub include_full_xr: bool,
}

/// One document to print, with what `crossplane render` calls it when it cannot be printed.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Document {
    pub value: Value,
    pub what: String,
}

/// Every document, in print order.
pub(super) fn documents(
    inputs: &Inputs,
    outcome: &Outcome,
    options: &Options,
) -> Result<Vec<Document>> {
    let composed =
        composed_resources(inputs, &outcome.desired).context("cannot render composite resource")?;
    let mut xr = composite(&inputs.composite, &outcome.desired, &outcome.conditions);
    if options.include_full_xr {
        copy_spec_and_metadata(&inputs.composite, &mut xr)?;
    }
    let xr_name = str_at(&inputs.composite, &["metadata", "name"]);
    let mut documents = vec![Document {
        value: Value::Object(xr),
        what: format!("cannot marshal composite resource {xr_name:?} to YAML"),
    }];
    documents.extend(composed.into_iter().map(|object| Document {
        what: format!(
            "cannot marshal composed resource {:?} to YAML",
            resource_name(&object)
        ),
        value: Value::Object(object),
    }));
    if options.include_results {
        documents.extend(outcome.results.iter().map(|result| Document {
            value: result_document(result),
            what: "cannot marshal result to YAML".into(),
        }));
    }
    if options.include_context {
        documents.extend(outcome.context.as_ref().map(|context| Document {
            value: context_document(context.fields()),
            what: "cannot marshal context to YAML".into(),
        }));
    }
    Ok(documents)
}

// ---- the composite resource ----

/// The desired composite as the pipeline left it, identified by the input
/// XR's apiVersion, kind, name and namespace, with its conditions set.
pub(super) fn composite(input: &Object, desired: &State, conditions: &[Condition]) -> Object {
    let mut xr = desired
        .composite
        .as_ref()
        .and_then(|c| c.resource.clone())
        .map(Struct::into_fields)
        .unwrap_or_default();
    xr.insert("apiVersion".into(), json!(str_at(input, &["apiVersion"])));
    xr.insert("kind".into(), json!(str_at(input, &["kind"])));
    set_metadata_string(&mut xr, "name", str_at(input, &["metadata", "name"]));
    set_metadata_string(
        &mut xr,
        "namespace",
        str_at(input, &["metadata", "namespace"]),
    );
    let mut list = read_conditions(&xr);
    set_condition(&mut list, ready_condition(desired));
    for condition in conditions
        .iter()
        .filter(|c| !SYSTEM_CONDITION_TYPES.contains(&c.r#type.as_str()))
    {
        set_condition(&mut list, XpCondition::from_function(condition));
    }
    write_conditions(&mut xr, &list);
    xr
}

/// `Ready` from the desired composite's readiness, else from the composed
/// resources: all `READY_TRUE` (or none) is Available, anything else is
/// Creating with the unready names.
fn ready_condition(desired: &State) -> XpCondition {
    let composite_ready = desired
        .composite
        .as_ref()
        .map_or(Ready::Unspecified as i32, |c| c.ready);
    let unready: Vec<&str> = desired
        .resources
        .iter()
        .filter(|(_, r)| r.ready != Ready::True as i32)
        .map(|(name, _)| name.as_str())
        .collect();
    if composite_ready == Ready::False as i32 {
        XpCondition::ready("False", "Creating", "")
    } else if composite_ready == Ready::Unspecified as i32 && !unready.is_empty() {
        let message = format!("Unready resources: {}", stable_n_and_some_more(3, &unready));
        XpCondition::ready("False", "Creating", &message)
    } else {
        XpCondition::ready("True", "Available", "")
    }
}

/// crossplane-runtime's `StableNAndSomeMore`: sorted, at most `n` names,
/// `a, b, and c` for exactly three, `a, b, c, and 2 more` beyond.
pub(super) fn stable_n_and_some_more(n: usize, names: &[&str]) -> String {
    let mut names = names.to_vec();
    names.sort_unstable();
    match names.len() {
        len if len > n => format!("{}, and {} more", names[..n].join(", "), len - n),
        len if len == n && n > 1 => format!("{}, and {}", names[..n - 1].join(", "), names[n - 1]),
        _ => names.join(", "),
    }
}

/// `-x`: the input XR's spec and metadata replace the rendered ones.
fn copy_spec_and_metadata(input: &Object, xr: &mut Object) -> Result<()> {
    for field in ["spec", "metadata"] {
        let value = input.get(field).ok_or_else(|| {
            Error::msg(format!("{field}: no such field"))
                .context(format!("cannot get composite resource {field}"))
        })?;
        xr.insert(field.into(), value.clone());
    }
    Ok(())
}

/// A crossplane-runtime `Condition` as it survives a JSON round trip:
/// unknown fields dropped, `lastTransitionTime` in UTC seconds or `null`.
#[derive(Debug, Clone, PartialEq, Default)]
struct XpCondition {
    r#type: String,
    status: String,
    last_transition_time: Option<String>,
    reason: String,
    message: String,
    observed_generation: i64,
}

impl XpCondition {
    fn ready(status: &str, reason: &str, message: &str) -> XpCondition {
        XpCondition {
            r#type: "Ready".into(),
            status: status.into(),
            last_transition_time: Some(CONDITION_TIME.into()),
            reason: reason.into(),
            message: message.into(),
            observed_generation: 0,
        }
    }

    fn from_function(condition: &Condition) -> XpCondition {
        let status = match Status::try_from(condition.status) {
            Ok(Status::ConditionTrue) => "True",
            Ok(Status::ConditionFalse) => "False",
            _ => "Unknown",
        };
        XpCondition {
            r#type: condition.r#type.clone(),
            status: status.into(),
            last_transition_time: Some(CONDITION_TIME.into()),
            reason: condition.reason.clone(),
            message: condition.message.clone().unwrap_or_default(),
            observed_generation: 0,
        }
    }

    fn from_json(value: &Value) -> XpCondition {
        let text = |key: &str| {
            value
                .get(key)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        XpCondition {
            r#type: text("type"),
            status: text("status"),
            last_transition_time: value
                .get("lastTransitionTime")
                .and_then(Value::as_str)
                .and_then(rfc3339_utc),
            reason: text("reason"),
            message: text("message"),
            observed_generation: value
                .get("observedGeneration")
                .and_then(Value::as_i64)
                .unwrap_or(0),
        }
    }

    fn to_json(&self) -> Value {
        let mut object = Map::new();
        object.insert("type".into(), json!(self.r#type));
        object.insert("status".into(), json!(self.status));
        object.insert(
            "lastTransitionTime".into(),
            json!(self.last_transition_time),
        );
        object.insert("reason".into(), json!(self.reason));
        if !self.message.is_empty() {
            object.insert("message".into(), json!(self.message));
        }
        if self.observed_generation != 0 {
            object.insert("observedGeneration".into(), json!(self.observed_generation));
        }
        Value::Object(object)
    }

    /// Equal apart from the transition time.
    fn same_as(&self, other: &XpCondition) -> bool {
        (
            &self.r#type,
            &self.status,
            &self.reason,
            &self.message,
            self.observed_generation,
        ) == (
            &other.r#type,
            &other.status,
            &other.reason,
            &other.message,
            other.observed_generation,
        )
    }
}

fn read_conditions(xr: &Object) -> Vec<XpCondition> {
    let list = xr
        .get("status")
        .and_then(|s| s.get("conditions"))
        .and_then(Value::as_array);
    list.map(|items| items.iter().map(XpCondition::from_json).collect())
        .unwrap_or_default()
}

fn write_conditions(xr: &mut Object, list: &[XpCondition]) {
    let status = object_entry(xr, "status");
    status.insert(
        "conditions".into(),
        Value::Array(list.iter().map(XpCondition::to_json).collect()),
    );
}

/// crossplane-runtime's `SetConditions`: a condition replaces those of its
/// type (kept as they are when equal apart from the time), else is appended.
fn set_condition(list: &mut Vec<XpCondition>, new: XpCondition) {
    let mut exists = false;
    for existing in list.iter_mut().filter(|c| c.r#type == new.r#type) {
        exists = true;
        if !existing.same_as(&new) {
            *existing = new.clone();
        }
    }
    if !exists {
        list.push(new);
    }
}

/// An RFC 3339 time as Kubernetes writes it back: in UTC, whole seconds.
fn rfc3339_utc(text: &str) -> Option<String> {
    crate::core::time::parse_rfc3339(text).map(|t| crate::core::time::format_utc(t.seconds))
}

// ---- composed resources ----

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

// ---- results and context ----

fn result_document(result: &StepResult) -> Value {
    let severity = Severity::try_from(result.severity).map_or_else(
        |_| result.severity.to_string(),
        |s| s.as_str_name().to_string(),
    );
    json!({
        "apiVersion": RENDER_API_VERSION,
        "kind": "Result",
        "step": result.step,
        "severity": severity,
        "message": result.message,
    })
}

/// The final context. An empty context prints `fields: null`, as Go's nil
/// map of an empty `structpb.Struct` does.
fn context_document(fields: &Map<String, Value>) -> Value {
    let fields = if fields.is_empty() {
        Value::Null
    } else {
        Value::Object(fields.clone())
    };
    json!({ "apiVersion": RENDER_API_VERSION, "kind": "Context", "fields": fields })
}

// ---- metadata helpers with apimachinery's Unstructured semantics ----

/// The object under `key`, replacing anything that is not an object.
fn object_entry<'a>(object: &'a mut Object, key: &str) -> &'a mut Object {
    let entry = object
        .entry(key)
        .or_insert_with(|| Value::Object(Map::new()));
    if !entry.is_object() {
        *entry = Value::Object(Map::new());
    }
    entry.as_object_mut().expect("just made an object")
}

/// `SetName`, `SetNamespace`, `SetGenerateName`: an empty value removes the field.
fn set_metadata_string(object: &mut Object, field: &str, value: &str) {
    if value.is_empty() {
        if let Some(Value::Object(metadata)) = object.get_mut("metadata") {
            metadata.remove(field);
        }
    } else {
        object_entry(object, "metadata").insert(field.into(), json!(value));
    }
}

/// A string map as apimachinery reads labels and annotations: empty when any
/// value is not a string.
fn string_map(object: Option<&Object>) -> BTreeMap<String, String> {
    let entries = object.map(|o| {
        o.iter()
            .map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
            .collect()
    });
    entries.flatten().unwrap_or_default()
}

/// `meta.AddLabels` / `meta.AddAnnotations`.
fn add_strings<'a>(
    object: &mut Object,
    field: &str,
    entries: impl IntoIterator<Item = (&'a str, &'a str)>,
) {
    let mut map = string_map(object_at(object, &["metadata", field]));
    map.extend(
        entries
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string())),
    );
    let value = map
        .into_iter()
        .map(|(k, v)| (k, Value::String(v)))
        .collect();
    object_entry(object, "metadata").insert(field.into(), Value::Object(value));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::v1::Resource;
    use crate::proto::Struct;

    fn object(value: Value) -> Object {
        value.as_object().cloned().unwrap()
    }

    fn state(ready: &[(&str, Ready)]) -> State {
        let resources = ready
            .iter()
            .map(|(name, ready)| {
                (
                    name.to_string(),
                    Resource {
                        ready: *ready as i32,
                        ..Default::default()
                    },
                )
            })
            .collect();
        State {
            composite: None,
            resources,
        }
    }

    fn conditions_of(xr: &Object) -> Value {
        xr["status"]["conditions"].clone()
    }

    #[test]
    fn n_and_some_more() {
        assert_eq!(stable_n_and_some_more(3, &["b"]), "b");
        assert_eq!(stable_n_and_some_more(3, &["b", "a"]), "a, b");
        assert_eq!(stable_n_and_some_more(3, &["c", "a", "b"]), "a, b, and c");
        assert_eq!(
            stable_n_and_some_more(3, &["e", "d", "c", "a", "b"]),
            "a, b, c, and 2 more"
        );
    }

    #[test]
    fn ready_when_every_resource_is_ready_or_there_are_none() {
        for desired in [state(&[]), state(&[("a", Ready::True)])] {
            assert_eq!(
                ready_condition(&desired),
                XpCondition::ready("True", "Available", ""),
            );
        }
    }

    #[test]
    fn creating_names_the_unready_resources() {
        let desired = state(&[
            ("d", Ready::True),
            ("c", Ready::False),
            ("b", Ready::Unspecified),
            ("a", Ready::False),
            ("e", Ready::False),
        ]);
        let condition = ready_condition(&desired);
        assert_eq!(
            condition,
            XpCondition::ready(
                "False",
                "Creating",
                "Unready resources: a, b, c, and 1 more"
            )
        );
    }

    #[test]
    fn the_desired_composite_readiness_wins() {
        let mut desired = state(&[("a", Ready::False)]);
        desired.composite = Some(Resource {
            ready: Ready::True as i32,
            ..Default::default()
        });
        assert_eq!(
            ready_condition(&desired),
            XpCondition::ready("True", "Available", "")
        );
        let mut desired = state(&[("a", Ready::True)]);
        desired.composite = Some(Resource {
            ready: Ready::False as i32,
            ..Default::default()
        });
        assert_eq!(
            ready_condition(&desired),
            XpCondition::ready("False", "Creating", "")
        );
    }

    #[test]
    fn the_composite_is_identified_by_the_input_and_gets_conditions() {
        let input = object(
            json!({"apiVersion": "x.io/v1", "kind": "XR", "metadata": {"name": "xr", "labels": {"a": "b"}}, "spec": {"s": 1}}),
        );
        let desired_xr = object(json!({
            "apiVersion": "other/v1", "metadata": {"name": "other", "namespace": "gone"},
            "status": {"ok": true, "conditions": [
                {"type": "Custom", "status": "True", "reason": "Old", "lastTransitionTime": "2023-05-06T09:08:07.5+02:00", "extra": 1},
                {"type": "Ready", "status": "True", "reason": "Available", "lastTransitionTime": "2020-01-01T00:00:00Z"}
            ]}
        }));
        let desired = State {
            composite: Some(Resource {
                resource: Some(Struct::from(desired_xr)),
                ..Default::default()
            }),
            ..Default::default()
        };
        let conditions = [
            Condition {
                r#type: "Custom".into(),
                status: Status::ConditionFalse as i32,
                reason: "New".into(),
                message: Some("m".into()),
                target: None,
            },
            Condition {
                r#type: "Synced".into(),
                status: Status::ConditionFalse as i32,
                ..Default::default()
            },
            Condition {
                r#type: "Other".into(),
                status: Status::ConditionUnspecified as i32,
                reason: "R".into(),
                ..Default::default()
            },
        ];
        let xr = composite(&input, &desired, &conditions);
        assert_eq!(xr["apiVersion"], "x.io/v1");
        assert_eq!(xr["kind"], "XR");
        assert_eq!(xr["metadata"], json!({"name": "xr"}));
        assert_eq!(xr["status"]["ok"], true);
        assert_eq!(
            conditions_of(&xr),
            json!([
                {"type": "Custom", "status": "False", "reason": "New", "message": "m", "lastTransitionTime": CONDITION_TIME},
                // Equal apart from the time: kept with its own time.
                {"type": "Ready", "status": "True", "reason": "Available", "lastTransitionTime": "2020-01-01T00:00:00Z"},
                {"type": "Other", "status": "Unknown", "reason": "R", "lastTransitionTime": CONDITION_TIME},
            ])
        );
        assert!(xr.get("spec").is_none());
    }

    #[test]
    fn condition_times_are_normalised_to_utc_seconds() {
        assert_eq!(
            rfc3339_utc("2023-05-06T09:08:07.5+02:00").as_deref(),
            Some("2023-05-06T07:08:07Z")
        );
        assert_eq!(
            rfc3339_utc("2024-01-01T00:30:00-01:00").as_deref(),
            Some("2024-01-01T01:30:00Z")
        );
        assert_eq!(
            rfc3339_utc("2024-03-01T00:30:00+01:00").as_deref(),
            Some("2024-02-29T23:30:00Z")
        );
        assert_eq!(
            rfc3339_utc("2024-01-01T00:00:00Z").as_deref(),
            Some("2024-01-01T00:00:00Z")
        );
        assert_eq!(rfc3339_utc("2024-01-01"), None);
        assert_eq!(rfc3339_utc("2024-02-30T00:00:00Z"), None);
        let xr = object(
            json!({"status": {"conditions": [{"type": "A", "lastTransitionTime": "garbage"}]}}),
        );
        assert_eq!(
            read_conditions(&xr)[0].to_json()["lastTransitionTime"],
            Value::Null
        );
    }

    #[test]
    fn include_full_xr_needs_a_spec() {
        let mut xr = Object::new();
        let error = copy_spec_and_metadata(&object(json!({"metadata": {}})), &mut xr).unwrap_err();
        assert_eq!(
            format!("{error:#}"),
            "cannot get composite resource spec: spec: no such field"
        );
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

    #[test]
    fn results_and_context_documents() {
        let result = StepResult {
            step: "s".into(),
            severity: Severity::Warning as i32,
            message: "m".into(),
        };
        assert_eq!(
            result_document(&result),
            json!({"apiVersion": RENDER_API_VERSION, "kind": "Result", "step": "s", "severity": "SEVERITY_WARNING", "message": "m"})
        );
        assert_eq!(context_document(&Map::new())["fields"], Value::Null);
        let fields = object(json!({"k": [1]}));
        assert_eq!(context_document(&fields)["fields"], json!({"k": [1]}));
    }
}
