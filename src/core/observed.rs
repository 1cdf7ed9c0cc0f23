//! An observed composed resource: the parts of it the function reads (its key, kind,
//! annotations and labels, spec, conditions), each found once.
//!
//! Lifecycle, drift and status all ask the same few questions of every observed resource, on
//! every reconcile after a claim's first. The resource is held as the bytes it came as
//! (`proto::Resource`), where a member is found by scanning its object, so each object on the
//! way to what is read is scanned once here, and the answers are kept.

use crate::core::compose::EXTERNAL_NAME;
use crate::proto::{ObjectView, View};

/// An observed composed resource, read.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Observed<'a> {
    /// `spec`: copied whole when a resource is retired.
    pub spec: Option<ObjectView<'a>>,
    pub api_version: &'a str,
    pub kind: &'a str,
    /// `metadata.name`.
    pub name: Option<&'a str>,
    /// `metadata.generation`.
    pub generation: Option<i64>,
    annotations: Option<ObjectView<'a>>,
    labels: Option<ObjectView<'a>>,
    pub status: Option<ObjectView<'a>>,
    /// The `Ready` condition (the first of that type, as the API server keeps one).
    pub ready: Option<ObjectView<'a>>,
    /// The `Synced` condition.
    pub synced: Option<ObjectView<'a>>,
}

impl<'a> Observed<'a> {
    /// Reads the parts the function asks about.
    pub(crate) fn read(object: ObjectView<'a>) -> Observed<'a> {
        let [api_version, kind, metadata, spec, status] =
            object.get_all(["apiVersion", "kind", "metadata", "spec", "status"]);
        let metadata = metadata.and_then(View::as_object);
        let [name, generation, annotations, labels] = match metadata {
            Some(metadata) => metadata.get_all(["name", "generation", "annotations", "labels"]),
            None => [None; 4],
        };
        let status = status.and_then(View::as_object);
        let (ready, synced) = conditions(status);
        Observed {
            spec: spec.and_then(View::as_object),
            api_version: api_version.and_then(View::as_str).unwrap_or_default(),
            kind: kind.and_then(View::as_str).unwrap_or_default(),
            name: name.and_then(View::as_str),
            generation: generation.and_then(View::as_i64),
            annotations: annotations.and_then(View::as_object),
            labels: labels.and_then(View::as_object),
            status,
            ready,
            synced,
        }
    }

    /// The annotation `name`, where it is a string.
    pub(crate) fn annotation(&self, name: &str) -> Option<&'a str> {
        self.annotations?.get(name)?.as_str()
    }

    /// The label `name`, where it is a string.
    pub(crate) fn label(&self, name: &str) -> Option<&'a str> {
        self.labels?.get(name)?.as_str()
    }

    /// The key the managed resource points at: its external name, or, as the provider does
    /// when the annotation is missing, its `metadata.name`.
    pub(crate) fn key(&self) -> Option<&'a str> {
        self.annotation(EXTERNAL_NAME).or(self.name)
    }

    /// The member `name` of `spec.forProvider`.
    pub(crate) fn for_provider(&self, name: &str) -> Option<View<'a>> {
        self.spec?.get("forProvider")?.get(name)
    }
}

/// The `Ready` and `Synced` conditions of `status.conditions`, the first of each type.
fn conditions(status: Option<ObjectView<'_>>) -> (Option<ObjectView<'_>>, Option<ObjectView<'_>>) {
    let (mut ready, mut synced) = (None, None);
    let conditions = status
        .and_then(|status| status.get("conditions"))
        .and_then(View::as_list);
    for condition in conditions.into_iter().flatten().filter_map(View::as_object) {
        match condition.get("type").and_then(View::as_str) {
            Some("Ready") if ready.is_none() => ready = Some(condition),
            Some("Synced") if synced.is_none() => synced = Some(condition),
            _ => {}
        }
    }
    (ready, synced)
}

/// The member `name` of a condition (or any object), where it is a string.
pub(crate) fn text<'a>(object: ObjectView<'a>, name: &str) -> Option<&'a str> {
    object.get(name).and_then(View::as_str)
}
