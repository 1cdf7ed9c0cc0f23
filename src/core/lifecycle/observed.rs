//! An observed composed resource: the parts of it the function reads (its key, kind,
//! annotations and labels, spec, conditions), each found once.
//!
//! Lifecycle, drift and status all ask the same few questions of every observed resource, on
//! every reconcile after a claim's first. The resource is held as the bytes it came as
//! (`proto::Resource`), where a member is found by scanning its object, so each object on the
//! way to what is read is scanned once here, and the answers are kept.

use crate::core::compose::{EXTERNAL_NAME, ORIGIN, PAUSED};
use crate::core::keys::KEY_LABEL;
use crate::proto::{ObjectView, View};

pub(crate) const CREATE_PENDING: &str = "crossplane.io/external-create-pending";
pub(crate) const CREATE_SUCCEEDED: &str = "crossplane.io/external-create-succeeded";
pub(crate) const CREATE_FAILED: &str = "crossplane.io/external-create-failed";

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
    /// `metadata.deletionTimestamp` is set: the resource is going, and its finalizer may still
    /// act on the repository with the deletion it had.
    pub deleting: bool,
    /// The annotations the function reads.
    pub annotations: Annotations<'a>,
    /// The key label (`keys::KEY_LABEL`): the function's own resources carry it.
    pub key_label: Option<&'a str>,
    pub status: Option<ObjectView<'a>>,
    /// The `Ready` condition (the first of that type, as the API server keeps one).
    pub ready: Option<Condition<'a>>,
    /// The `Synced` condition.
    pub synced: Option<Condition<'a>>,
    /// upjet's `LastAsyncOperation`: the outcome of the last asynchronous Terraform apply.
    pub last_async_operation: Option<Condition<'a>>,
    /// upjet's `AsyncOperation`: False with reason `Ongoing` while an apply runs.
    pub async_operation: Option<Condition<'a>>,
}

/// The annotations of a managed resource the function reads, where they are strings.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Annotations<'a> {
    pub external_name: Option<&'a str>,
    pub create_pending: Option<&'a str>,
    pub create_succeeded: Option<&'a str>,
    pub create_failed: Option<&'a str>,
    pub paused: Option<&'a str>,
    /// [`ORIGIN`].
    pub origin: Option<&'a str>,
}

/// A condition of `status.conditions`: what the function reads of it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Condition<'a> {
    pub status: Option<&'a str>,
    pub reason: Option<&'a str>,
    pub message: Option<&'a str>,
    /// `observedGeneration`, where it is given (an integer or not).
    pub observed_generation: Option<View<'a>>,
    /// `lastTransitionTime` (RFC 3339).
    pub last_transition_time: Option<&'a str>,
}

impl Condition<'_> {
    /// Whether its status is `status`.
    pub(crate) fn is(&self, status: &str) -> bool {
        self.status == Some(status)
    }
}

impl<'a> Observed<'a> {
    /// Reads the parts the function asks about.
    pub(crate) fn read(object: ObjectView<'a>) -> Observed<'a> {
        let [api_version, kind, metadata, spec, status] =
            object.get_all(["apiVersion", "kind", "metadata", "spec", "status"]);
        let metadata = metadata.and_then(View::as_object);
        let [name, generation, annotations, labels, deletion] = match metadata {
            Some(metadata) => metadata.get_all([
                "name",
                "generation",
                "annotations",
                "labels",
                "deletionTimestamp",
            ]),
            None => [None; 5],
        };
        let status = status.and_then(View::as_object);
        let conditions = Conditions::read(status);
        Observed {
            spec: spec.and_then(View::as_object),
            api_version: api_version.and_then(View::as_str).unwrap_or_default(),
            kind: kind.and_then(View::as_str).unwrap_or_default(),
            name: name.and_then(View::as_str),
            generation: generation.and_then(View::as_i64),
            deleting: deletion.and_then(View::as_str).is_some(),
            annotations: annotations
                .and_then(View::as_object)
                .map(read_annotations)
                .unwrap_or_default(),
            key_label: labels
                .and_then(|labels| labels.get(KEY_LABEL))
                .and_then(View::as_str),
            status,
            ready: conditions.ready,
            synced: conditions.synced,
            last_async_operation: conditions.last_async_operation,
            async_operation: conditions.async_operation,
        }
    }

    /// `Ready` True: upjet sets it when `Observe` finds the repository.
    pub(crate) fn is_ready(&self) -> bool {
        self.ready.is_some_and(|c| c.is("True"))
    }

    /// `status.atProvider`: what the provider last read of the repository.
    pub(crate) fn at_provider(&self) -> Option<ObjectView<'a>> {
        self.status?.get("atProvider")?.as_object()
    }

    /// `spec.managementPolicies` as written (absent: the provider's default `["*"]`).
    pub(crate) fn management_policies(&self) -> Option<Vec<&'a str>> {
        let list = self.spec?.get("managementPolicies")?.as_list()?;
        Some(list.iter().filter_map(View::as_str).collect())
    }

    /// The key the managed resource points at: its external name, or, as the provider does
    /// when the annotation is missing, its `metadata.name`.
    pub(crate) fn key(&self) -> Option<&'a str> {
        self.annotations.external_name.or(self.name)
    }

    /// `spec.forProvider` as the cluster holds it: what the function rendered last, and what
    /// the provider late-initialised.
    pub(crate) fn spec_for_provider(&self) -> Option<ObjectView<'a>> {
        self.spec?.get("forProvider")?.as_object()
    }

    /// The member `name` of `spec.forProvider`.
    pub(crate) fn for_provider(&self, name: &str) -> Option<View<'a>> {
        self.spec_for_provider()?.get(name)
    }
}

fn read_annotations(annotations: ObjectView<'_>) -> Annotations<'_> {
    let [external_name, create_pending, create_succeeded, create_failed, paused, origin] =
        annotations
            .get_all([
                EXTERNAL_NAME,
                CREATE_PENDING,
                CREATE_SUCCEEDED,
                CREATE_FAILED,
                PAUSED,
                ORIGIN,
            ])
            .map(|value| value.and_then(View::as_str));
    Annotations {
        external_name,
        create_pending,
        create_succeeded,
        create_failed,
        paused,
        origin,
    }
}

/// The conditions of `status.conditions` the function reads, the first of each type.
#[derive(Default)]
struct Conditions<'a> {
    ready: Option<Condition<'a>>,
    synced: Option<Condition<'a>>,
    last_async_operation: Option<Condition<'a>>,
    async_operation: Option<Condition<'a>>,
}

impl<'a> Conditions<'a> {
    fn read(status: Option<ObjectView<'a>>) -> Conditions<'a> {
        let mut found = Conditions::default();
        let conditions = status
            .and_then(|status| status.get("conditions"))
            .and_then(View::as_list);
        for condition in conditions.into_iter().flatten().filter_map(View::as_object) {
            let [type_, status, reason, message, observed_generation, last_transition_time] =
                condition.get_all([
                    "type",
                    "status",
                    "reason",
                    "message",
                    "observedGeneration",
                    "lastTransitionTime",
                ]);
            let slot = match type_.and_then(View::as_str) {
                Some("Ready") => &mut found.ready,
                Some("Synced") => &mut found.synced,
                Some("LastAsyncOperation") => &mut found.last_async_operation,
                Some("AsyncOperation") => &mut found.async_operation,
                _ => continue,
            };
            if slot.is_none() {
                *slot = Some(Condition {
                    status: status.and_then(View::as_str),
                    reason: reason.and_then(View::as_str),
                    message: message.and_then(View::as_str),
                    observed_generation,
                    last_transition_time: last_transition_time.and_then(View::as_str),
                });
            }
        }
        found
    }
}

/// The provider may have created a repository it did not record: a create
/// was started after the last recorded success or failure.
pub(crate) fn leak_suspected(live: &Observed) -> bool {
    let annotations = live.annotations;
    let Some(pending) = annotations
        .create_pending
        .and_then(crate::core::time::parse_rfc3339)
    else {
        return false;
    };
    let later_than = |time: Option<&str>| {
        time.and_then(crate::core::time::parse_rfc3339)
            .is_none_or(|t| pending > t)
    };
    later_than(annotations.create_succeeded) && later_than(annotations.create_failed)
}
