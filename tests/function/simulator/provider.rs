//! The provider: crossplane-runtime's managed reconciler and upjet's Terraform-CLI client
//! (`pkg/controller/external.go`), which every release of provider-jfrog-artifactory runs
//! (`tjcontroller.NewConnector`, with `UseAsync: true`), one reconcile of one managed resource
//! at a time. The no-fork asynchronous clients are behind [`Client::NoFork`]. Each rule names
//! the upstream line it follows; a change of provider release is a change here.
//!
//! One reconcile, in order:
//! 1. an apply started by an earlier reconcile finishes first (its callback writes
//!    `LastAsyncOperation` and `AsyncOperation`), and that is the whole step, so that the
//!    composite can reconcile while the apply runs;
//! 2. a resource being deleted: the repository is deleted when the policies say so, then the
//!    finalizer goes;
//! 3. Observe by external name; a missing repository is created when the policies allow it
//!    (annotations around `Create`, which returns at once and leaves the apply running), and
//!    is an error for policies that cannot create;
//! 4. a found repository: `Ready` True and `status.atProvider`; late-initialisation of the
//!    omitted fields whose live value is not a zero value, written alone; otherwise, with
//!    `Update` allowed, an apply of `forProvider` in which every omitted field goes back to
//!    its Terraform default.

use super::artifactory::{fields_of, Actor, Artifactory};
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, BTreeSet};

pub const EXTERNAL_NAME: &str = "crossplane.io/external-name";
pub const CREATE_PENDING: &str = "crossplane.io/external-create-pending";
pub const CREATE_SUCCEEDED: &str = "crossplane.io/external-create-succeeded";
pub const CREATE_FAILED: &str = "crossplane.io/external-create-failed";
pub const ORIGIN: &str = "artifactory.fn.crossplane.io/origin";

/// Which upjet client the provider runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Client {
    /// The Terraform-CLI client, `pkg/controller/external.go`: every release of the provider.
    TerraformCli,
    /// The no-fork asynchronous clients (`external_async_tfpluginfw.go`): the upjet template's
    /// default, should the provider move to it.
    NoFork,
}

/// How the next create's apply fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Artifactory made the repository, then the apply failed (a timeout after the PUT; the
    /// SDKv2 resources' create-then-read, terraform-provider-artifactory `repository.go:768-776`
    /// @ v12.11.7).
    AfterMade,
    /// The apply failed before anything was made.
    Before,
}

/// An apply the client started and has not finished.
#[derive(Debug, Clone, PartialEq)]
pub enum Apply {
    Create { fault: Option<Fault> },
    Update,
}

/// A managed resource in the simulated cluster.
#[derive(Debug, Clone)]
pub struct Managed {
    pub object: Value,
    /// Crossplane deleted it; the provider's finalizer has not run yet.
    pub deleting: bool,
    pub apply: Option<Apply>,
    /// The function's last applied intent (server-side apply's field owner).
    pub applied: Value,
    /// Whose composite composed it: 0 the claim under test, 1 the second claim.
    pub claim: u8,
    /// The repository the provider's last `Observe` found ([`super::artifactory::Repository::serial`]):
    /// what `status.atProvider` describes.
    pub observed_serial: Option<u64>,
}

/// The provider: which client, and the fault the next create meets.
#[derive(Debug, Clone)]
pub struct Provider {
    pub client: Client,
    pub next_fault: Option<Fault>,
}

/// What the Terraform provider's diagnostics say, through each client's error wrapping.
fn failure(client: Client, detail: &str) -> (&'static str, String) {
    match client {
        // upjet `pkg/terraform/workspace.go:173-176`, `pkg/terraform/errors/errors.go:90-91`,
        // `pkg/resource/conditions.go:43-50` @ v2.2.0.
        Client::TerraformCli => ("ApplyFailure", format!("apply failed: {detail}")),
        // upjet `pkg/terraform/errors/errors.go:193-198`, `conditions.go:59-66` @ v2.2.0.
        Client::NoFork => (
            "AsyncCreateFailure",
            format!("async create failed: resource creation call returned error diags: {detail}"),
        ),
    }
}

/// Artifactory's refusal of a taken key, as the Terraform provider reports it.
pub const KEY_EXISTS: &str = "Unable to Create Resource: An unexpected error occurred while creating the resource update request. Please report this issue to the provider developers.\n\nError: {\"errors\":[{\"status\":400,\"message\":\"Case insensitive repository key already exists\"}]}";
/// A create whose PUT was made and whose answer never came.
pub const TIMEOUT: &str = "Unable to Create Resource: context deadline exceeded";
/// A create Artifactory refused for another reason.
pub const SERVER_ERROR: &str = "Unable to Create Resource: {\"errors\":[{\"status\":500,\"message\":\"Internal Server Error\"}]}";

pub fn annotation<'a>(object: &'a Value, name: &str) -> Option<&'a str> {
    object["metadata"]["annotations"][name].as_str()
}

fn annotate(object: &mut Value, name: &str, value: &str) {
    object["metadata"]["annotations"][name] = json!(value);
}

/// Sets a condition; `lastTransitionTime` moves only when its status, reason or message does
/// (crossplane-runtime `ConditionedStatus.SetConditions`, which keeps an equal condition).
pub fn set_condition(
    object: &mut Value,
    type_: &str,
    status: &str,
    reason: &str,
    message: Option<&str>,
    now: &str,
) {
    let mut condition =
        json!({"type": type_, "status": status, "reason": reason, "lastTransitionTime": now});
    if let Some(message) = message {
        condition["message"] = json!(message);
    }
    if !object["status"].is_object() {
        object["status"] = json!({});
    }
    let conditions = object["status"]["conditions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let mut kept: Vec<Value> = Vec::new();
    let mut found = false;
    for c in conditions {
        if c["type"] == type_ {
            found = true;
            let same = c["status"] == status
                && c["reason"] == reason
                && c.get("message").and_then(Value::as_str) == message;
            kept.push(if same { c } else { condition.clone() });
        } else {
            kept.push(c);
        }
    }
    if !found {
        kept.push(condition);
    }
    object["status"]["conditions"] = Value::Array(kept);
}

pub fn condition<'a>(object: &'a Value, type_: &str) -> Option<&'a Value> {
    object["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == type_)
}

/// The management policies (absent: the CRD's default, `*`).
fn policies(object: &Value) -> Vec<String> {
    match object["spec"]["managementPolicies"].as_array() {
        Some(list) => list
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        None => vec!["*".to_owned()],
    }
}

pub fn allows(object: &Value, action: &str) -> bool {
    policies(object).iter().any(|p| p == "*" || p == action)
}

/// crossplane-runtime `ShouldDelete` (`pkg/reconciler/managed/policies.go:229-235` modern,
/// `:245-268` legacy @ v2.5.0-rc.0): with `*` the deletion policy decides; otherwise `Delete`
/// in the policies deletes, whatever the deletion policy.
pub fn should_delete(object: &Value) -> bool {
    let policies = policies(object);
    if policies.iter().any(|p| p == "*") {
        object["spec"]["deletionPolicy"] != "Orphan"
    } else {
        policies.iter().any(|p| p == "Delete")
    }
}

/// Whole seconds as RFC 3339 (crossplane-runtime `pkg/meta/meta.go:301,320,339`: `time.RFC3339`).
fn seconds(text: Option<&str>) -> i64 {
    let Some(text) = text else { return i64::MIN };
    let time = &text[11..19];
    let parts: Vec<i64> = time.split(':').map(|p| p.parse().unwrap_or(0)).collect();
    let day: i64 = text[8..10].parse().unwrap_or(0);
    ((day * 24 + parts[0]) * 60 + parts[1]) * 60 + parts[2]
}

/// Whether upjet's late initialisation leaves a live value out: `false`, `0` and `""`
/// (`WithZeroValueJSONOmitEmptyFilter`, pkg/resource/lateinit.go:108-139 @ v2.2.0).
pub fn is_zero_value(value: &Value) -> bool {
    value == &json!(false) || value == &json!("") || value == &json!(0)
}

/// upjet's late initialisation before it plans (external.go:279-285, 329-336 @ v2.2.0): every
/// field `for_provider` omits takes its live value, but for zero values. `true` when it
/// filled one, for the reconciler writes the spec then and stops (reconciler.go:1479-1513 @
/// v2.5.0-rc.0).
pub fn late_initialise<'a>(
    for_provider: &mut Value,
    live: impl IntoIterator<Item = (&'a String, &'a Value)>,
) -> bool {
    let mut filled = false;
    for (name, value) in live {
        if for_provider.get(name).is_none() && !is_zero_value(value) {
            for_provider[name] = value.clone();
            filled = true;
        }
    }
    filled
}

/// The fields Terraform's plan of `for_provider` over the `live` state changes: a field the
/// spec sets to another value, and a field it omits, which goes to its default. A default given
/// as `None` is one the caller does not know, taken to differ from any live value.
pub fn planned_changes<'a>(
    for_provider: &Value,
    live: &BTreeMap<String, Value>,
    defaults: impl IntoIterator<Item = (&'a str, Option<Value>)>,
) -> BTreeSet<String> {
    defaults
        .into_iter()
        .filter(|(name, default)| {
            match (
                for_provider.get(*name).or(default.as_ref()),
                live.get(*name),
            ) {
                (Some(desired), Some(live)) => desired != live,
                (Some(_), None) => true,
                (None, live) => live.is_some(),
            }
        })
        .map(|(name, _)| name.to_owned())
        .collect()
}

impl Provider {
    /// One reconcile of `managed`; `false` once its finalizer is gone (the resource is deleted
    /// from the cluster).
    pub fn reconcile(
        &mut self,
        managed: &mut Managed,
        artifactory: &mut Artifactory,
        now: &str,
    ) -> bool {
        let object = &mut managed.object;
        let key = annotation(object, EXTERNAL_NAME)
            .unwrap_or_default()
            .to_owned();
        let actor = Actor::Provider {
            claim: managed.claim,
            resource: object["metadata"]["annotations"]["crossplane.io/composition-resource-name"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            origin: annotation(object, ORIGIN).map(str::to_owned),
        };
        // `MavenRepository` in a class group, `LocalMavenRepository` in the flat API.
        let kind = object["kind"].as_str().unwrap_or_default();
        let package = ["Local", "Remote", "Virtual", "Federated"]
            .iter()
            .find_map(|class| kind.strip_prefix(class))
            .unwrap_or(kind)
            .trim_end_matches("Repository")
            .to_lowercase();
        if let Some(apply) = managed.apply.take() {
            self.finish(apply, object, artifactory, &key, actor, &package, now);
            return true;
        }
        if managed.deleting {
            // crossplane-runtime: the deletion branch calls `Delete` only when `ShouldDelete`,
            // then removes the finalizer (policies.go:229-268 @ v2.5.0-rc.0).
            if should_delete(object) && artifactory.get(&key).is_some() {
                artifactory.delete(actor, &key);
            }
            return false;
        }
        // `ExternalCreateIncomplete` (meta.go:346-362): upjet sets no deterministic external
        // name, so the reconciler stops (reconciler.go:1104-1110).
        let pending = seconds(annotation(object, CREATE_PENDING));
        let done = seconds(annotation(object, CREATE_SUCCEEDED))
            .max(seconds(annotation(object, CREATE_FAILED)));
        if annotation(object, CREATE_PENDING).is_some() && pending > done {
            set_condition(object, "Synced", "False", "ReconcileError", Some("cannot determine creation result - remove the crossplane.io/external-create-pending annotation if it is safe to proceed"), now);
            return true;
        }
        let Some(live) = artifactory.get(&key).cloned() else {
            if !allows(object, "Create") {
                // reconciler.go:65,71,1203-1205 @ v2.5.0-rc.0.
                set_condition(
                    object,
                    "Synced",
                    "False",
                    "ReconcileError",
                    Some("observe failed: external resource does not exist"),
                    now,
                );
                return true;
            }
            // reconciler.go:1355 (`!ResourceExists && ShouldCreate`), :1363 pending and a full
            // update, :1378 `Create`; upjet's `Create` starts the apply and returns at once
            // (external.go:384-385, workspace.go:165-186 @ v2.2.0), so :1437 writes
            // succeeded, Ready False `Creating`, Synced True.
            annotate(object, CREATE_PENDING, now);
            managed.apply = Some(Apply::Create {
                fault: self.next_fault.take(),
            });
            annotate(object, CREATE_SUCCEEDED, now);
            set_condition(object, "Ready", "False", "Creating", None, now);
            set_condition(object, "Synced", "True", "ReconcileSuccess", None, now);
            if self.client == Client::TerraformCli {
                // The CLI client's Observe while the apply runs (external.go:224-229).
                set_condition(object, "AsyncOperation", "False", "Ongoing", None, now);
            }
            return true;
        };
        // upjet Observe found it: `Available` and what it read (external.go:311-326).
        managed.observed_serial = Some(live.serial);
        let object = &mut managed.object;
        set_condition(object, "Ready", "True", "Available", None, now);
        let mut at_provider = Map::new();
        at_provider.insert("id".into(), json!(live.key));
        // What the kind's schema has of the repository (a maven repository read through an
        // npm kind shows no `handleSnapshots`).
        let read: BTreeMap<String, Value> = fields_of(&package)
            .filter_map(|(name, _)| Some((name.to_string(), live.fields.get(*name)?.clone())))
            .collect();
        for (name, value) in &read {
            at_provider.insert(name.clone(), value.clone());
        }
        object["status"]["atProvider"] = Value::Object(at_provider);
        let defaults = fields_of(&package).map(|(name, default)| (*name, Some(default.value())));
        let up_to_date =
            planned_changes(&object["spec"]["forProvider"], &read, defaults).is_empty();
        if self.client == Client::NoFork && up_to_date {
            // The no-fork clients reset a failed apply once the live state equals the spec
            // (external_async_tfpluginfw.go:173-176 @ v2.2.0); the CLI client never does.
            set_condition(object, "LastAsyncOperation", "True", "Success", None, now);
        }
        if allows(object, "LateInitialize") {
            // Late initialisation before the plan; a filled spec is written without `Update`.
            if late_initialise(&mut object["spec"]["forProvider"], &read) {
                set_condition(object, "Synced", "True", "ReconcileSuccess", None, now);
                return true;
            }
        }
        if allows(object, "Update") && !up_to_date {
            // Terraform plans every omitted field back to its default; upjet applies
            // asynchronously (external.go, `Update` → `ApplyAsync`).
            managed.apply = Some(Apply::Update);
            if self.client == Client::TerraformCli {
                set_condition(object, "AsyncOperation", "False", "Ongoing", None, now);
            }
        }
        // reconciler.go:1575: ReconcileSuccess.
        set_condition(object, "Synced", "True", "ReconcileSuccess", None, now);
        true
    }

    /// The apply's callback (upjet `pkg/controller/api.go:127`, `:138-143` @ v2.2.0).
    #[allow(clippy::too_many_arguments)]
    fn finish(
        &self,
        apply: Apply,
        object: &mut Value,
        artifactory: &mut Artifactory,
        key: &str,
        actor: Actor,
        package: &str,
        now: &str,
    ) {
        let fields: BTreeMap<String, Value> = fields_of(package)
            .map(|(name, default)| {
                let value = object["spec"]["forProvider"]
                    .get(*name)
                    .cloned()
                    .unwrap_or_else(|| default.value());
                (name.to_string(), value)
            })
            .collect();
        let error = match apply {
            Apply::Create { fault } => {
                if artifactory.get(key).is_some() {
                    Some(KEY_EXISTS)
                } else {
                    match fault {
                        Some(Fault::Before) => Some(SERVER_ERROR),
                        Some(Fault::AfterMade) => {
                            artifactory.create(actor, key, package, &fields);
                            Some(TIMEOUT)
                        }
                        None => {
                            artifactory.create(actor, key, package, &fields);
                            None
                        }
                    }
                }
            }
            Apply::Update => {
                artifactory.update(actor, key, &fields);
                None
            }
        };
        match error {
            Some(detail) => {
                let (reason, message) = failure(self.client, detail);
                set_condition(
                    object,
                    "LastAsyncOperation",
                    "False",
                    reason,
                    Some(&message),
                    now,
                );
            }
            None => set_condition(object, "LastAsyncOperation", "True", "Success", None, now),
        }
        if self.client == Client::TerraformCli {
            set_condition(object, "AsyncOperation", "True", "Finished", None, now);
        }
    }
}
