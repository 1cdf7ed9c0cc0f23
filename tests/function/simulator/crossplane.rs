//! Crossplane's composite reconcile, as far as the function sees it: the function called
//! through the library's `run_function` (or the server, [`Transport`]), with the observed
//! composite and every observed composed resource; the resources it requires found in the
//! simulated cluster and the call
//! repeated until its requirements settle (at most five calls); the desired resources applied
//! by server-side apply with the function as field owner (a field it no longer renders is
//! removed, fields the provider wrote stay); composed resources it dropped deleted (the
//! provider's finalizer honours their deletion and management policies); and the composite's
//! status written back. A fatal result applies nothing.

use super::events::Api;
use super::provider::{Managed, EXTERNAL_NAME};
use crate::support::requests::{composite, input, namespaced_composite, request};
use function_artifactory::proto::v1::{
    resource_selector::Match, Capability, Resources, RunFunctionRequest, RunFunctionResponse,
    Severity,
};
use function_artifactory::run_function;
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// The cluster-scoped composite's name, as `support::requests::composite` makes it.
pub const COMPOSITE: &str = "team1-repos-x7k2p";
/// The namespaced composite's, as `support::requests::namespaced_composite` makes it (in the
/// namespace `team1`, which its composed resources share).
const NAMESPACED_COMPOSITE: &str = "team1-repos";
const RESOURCE_NAME: &str = "crossplane.io/composition-resource-name";

/// What one composite reconcile gave.
#[derive(Debug, Clone)]
pub struct Reconciled {
    pub fatal: Option<String>,
    pub response: RunFunctionResponse,
}

/// The cluster's side of the composite.
#[derive(Debug, Clone, Default)]
pub struct Cluster {
    /// The provider API the composite's resources are of.
    api: Api,
    /// Whose composite: 0 team1's (the claim under test), 1 team2's (a second claim).
    claim: u8,
    pub status: Value,
    /// Managed resources by composition resource name.
    pub resources: BTreeMap<String, Managed>,
    /// Names generated so far (`metadata.name` suffixes).
    generated: u32,
}

/// The calls Crossplane makes before it gives up on requirements that do not settle.
const MAX_CALLS: usize = 5;

/// How Crossplane reaches the function: the library in process, or the server over gRPC on
/// loopback (which must answer the library's bytes, `support::server::Function::call_request`).
pub enum Transport {
    Core,
    Grpc(Box<Grpc>),
}

/// The server and a runtime to call it from the (synchronous) simulation.
pub struct Grpc {
    runtime: tokio::runtime::Runtime,
    function: crate::support::server::Function,
}

impl Transport {
    /// The server, started on loopback, and a runtime to call it from the simulation.
    pub fn grpc() -> Transport {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        let function = runtime.block_on(crate::support::server::Function::start());
        Transport::Grpc(Box::new(Grpc { runtime, function }))
    }

    fn call(&mut self, request: &RunFunctionRequest) -> RunFunctionResponse {
        match self {
            Transport::Core => run_function(request),
            Transport::Grpc(grpc) => grpc
                .runtime
                .block_on(grpc.function.call_request(request.clone())),
        }
    }
}

impl Cluster {
    pub fn new(api: Api, claim: u8) -> Cluster {
        Cluster {
            api,
            claim,
            ..Cluster::default()
        }
    }

    /// The provider's API its composite is rendered for from now on (the same composite).
    pub fn set_api(&mut self, api: Api) {
        self.api = api;
    }

    /// The composite is deleted: Crossplane deletes every managed resource it composed
    /// (the provider's finalizer then honours each one's policies).
    pub fn delete_every_resource(&mut self) {
        self.resources.values_mut().for_each(mark_deleted);
    }

    /// The composite's name, kind, uid and (namespaced) namespace.
    fn identity(&self) -> (String, &'static str, String, Option<String>) {
        let team = format!("team{}", self.claim + 1);
        let (name, kind, uid, namespace) = match self.api {
            Api::Namespaced => (
                NAMESPACED_COMPOSITE.replace("team1", &team),
                "Repositories",
                2,
                Some(team.clone()),
            ),
            Api::Cluster | Api::Flat => {
                (COMPOSITE.replace("team1", &team), "XRepositories", 1, None)
            }
        };
        let uid = format!("4f6c8f0e-0000-4000-8000-0000000000{}{uid}", self.claim);
        (name, kind, uid, namespace)
    }

    /// The observed composite with `spec`: `support::requests`' for team1, the same moved to
    /// team2 for the second claim.
    fn composite(&self, spec: &Value) -> Value {
        let mut xr = match self.api {
            Api::Namespaced => namespaced_composite(spec.clone()),
            Api::Cluster | Api::Flat => composite(spec.clone()),
        };
        if self.claim > 0 {
            let (name, _, uid, namespace) = self.identity();
            let team = format!("team{}", self.claim + 1);
            let metadata = &mut xr["metadata"];
            metadata["name"] = json!(name);
            metadata["uid"] = json!(uid);
            if let Some(namespace) = namespace {
                metadata["namespace"] = json!(namespace);
            }
            if let Some(labels) = metadata["labels"].as_object_mut() {
                labels.insert(
                    "crossplane.io/claim-name".into(),
                    json!(format!("{team}-repos")),
                );
                labels.insert("crossplane.io/claim-namespace".into(), json!(team));
                labels.insert("crossplane.io/composite".into(), json!(name));
            }
        }
        xr
    }

    /// One composite reconcile with the composite's `spec` and the function's `input`.
    /// `others`: the managed resources of the other composites in the cluster, which the
    /// function's requirements select too.
    pub fn reconcile(
        &mut self,
        spec: &Value,
        fields: &Value,
        others: &[Value],
        transport: &mut Transport,
    ) -> Reconciled {
        let mut xr = self.composite(spec);
        if !self.status.is_null() {
            xr["status"] = self.status.clone();
        }
        let mut builder = request(xr)
            .input(input(fields.clone()))
            .capability(Capability::RequiredResources);
        for (name, managed) in &self.resources {
            builder = builder.observed(name, managed.object.clone());
        }
        let mut call = builder.build();
        let mut response = transport.call(&call);
        for _ in 1..MAX_CALLS {
            let wanted = response
                .requirements
                .as_ref()
                .map(|r| r.resources.clone())
                .unwrap_or_default();
            if wanted
                .keys()
                .all(|name| call.required_resources.contains_key(name))
            {
                break;
            }
            call.required_resources = wanted
                .iter()
                .map(|(name, selector)| (name.clone(), self.select(selector, others)))
                .collect();
            response = transport.call(&call);
        }
        let fatal = response
            .results
            .iter()
            .find(|r| r.severity == Severity::Fatal as i32)
            .map(|r| r.message.clone());
        if fatal.is_none() {
            self.apply(&response);
        }
        Reconciled { fatal, response }
    }

    /// The managed resources a requirement selects.
    fn select(
        &self,
        selector: &function_artifactory::proto::v1::ResourceSelector,
        others: &[Value],
    ) -> Resources {
        let items = self
            .resources
            .values()
            .map(|m| &m.object)
            .chain(others)
            .filter(|o| {
                o["apiVersion"] == selector.api_version.as_str()
                    && o["kind"] == selector.kind.as_str()
            })
            .filter(|o| match &selector.r#match {
                Some(Match::MatchName(name)) => o["metadata"]["name"] == name.as_str(),
                Some(Match::MatchLabels(labels)) => labels
                    .labels
                    .iter()
                    .all(|(k, v)| o["metadata"]["labels"][k] == v.as_str()),
                None => false,
            })
            .map(|o| crate::support::requests::resource(o.clone()))
            .collect();
        Resources { items }
    }

    /// Server-side apply of the desired state, deletion of what was dropped, the status.
    fn apply(&mut self, response: &RunFunctionResponse) {
        let desired = response.desired.clone().unwrap_or_default();
        let wanted: BTreeMap<String, Value> = desired
            .resources
            .iter()
            .map(|(name, r)| {
                (
                    name.clone(),
                    r.resource.clone().unwrap_or_default().into_value(),
                )
            })
            .collect();
        for (name, intent) in &wanted {
            match self.resources.get_mut(name) {
                Some(managed) => {
                    let mut object = managed.object.clone();
                    remove_dropped(&mut object, &managed.applied, intent);
                    merge(&mut object, intent);
                    defaults(&mut object, self.api);
                    managed.object = object;
                    managed.applied = intent.clone();
                }
                None => {
                    self.generated += 1;
                    let mut object = intent.clone();
                    let (composite, kind, uid, namespace) = self.identity();
                    object["metadata"]["name"] =
                        json!(format!("{composite}-{:05x}", self.generated));
                    if let Some(namespace) = namespace {
                        object["metadata"]["namespace"] = json!(namespace);
                    }
                    object["metadata"]["annotations"][RESOURCE_NAME] = json!(name);
                    object["metadata"]["ownerReferences"] = json!([{
                        "apiVersion": "platform.example.org/v1alpha1",
                        "kind": kind,
                        "name": composite,
                        "uid": uid,
                        "controller": true,
                    }]);
                    // A composed resource without an external name gets its own name
                    // (crossplane-runtime's `NameAsExternalName` initializer); the function
                    // always sets it.
                    if object["metadata"]["annotations"][EXTERNAL_NAME].is_null() {
                        object["metadata"]["annotations"][EXTERNAL_NAME] =
                            object["metadata"]["name"].clone();
                    }
                    defaults(&mut object, self.api);
                    object["status"] = json!({});
                    self.resources.insert(
                        name.clone(),
                        Managed {
                            object,
                            deleting: false,
                            apply: None,
                            applied: intent.clone(),
                            claim: self.claim,
                            observed_serial: None,
                        },
                    );
                }
            }
        }
        for (name, managed) in self.resources.iter_mut() {
            if !wanted.contains_key(name) && !managed.deleting {
                mark_deleted(managed);
            }
        }
        if let Some(status) = desired
            .composite
            .and_then(|c| c.resource)
            .map(|r| r.into_value()["status"].clone())
        {
            self.status = status;
        }
    }
}

/// Crossplane deletes a managed resource: its deletion timestamp, the provider's finalizer
/// still to run.
fn mark_deleted(managed: &mut Managed) {
    managed.deleting = true;
    managed.object["metadata"]["deletionTimestamp"] = json!("2026-11-01T10:00:00Z");
}

/// The CRD's defaults, which the API server writes on every create and update:
/// `providerConfigRef: {name: default}`, `deletionPolicy: Delete`, `managementPolicies: ["*"]`;
/// the namespaced kinds have no `deletionPolicy` and default the reference's kind to
/// `ClusterProviderConfig`.
fn defaults(object: &mut Value, api: Api) {
    let spec = &mut object["spec"];
    let namespaced = api == Api::Namespaced;
    if spec["providerConfigRef"].is_null() {
        spec["providerConfigRef"] = if namespaced {
            json!({"kind": "ClusterProviderConfig", "name": "default"})
        } else {
            json!({"name": "default"})
        };
    }
    if spec["deletionPolicy"].is_null() && !namespaced {
        spec["deletionPolicy"] = json!("Delete");
    }
    if spec["managementPolicies"].is_null() {
        spec["managementPolicies"] = json!(["*"]);
    }
}

/// Removes what the function applied before and no longer renders (server-side apply drops a
/// field its only manager stops sending; a field another manager also set, as the provider's
/// late-initialisation does, is the provider's and would stay, which the model leaves aside).
fn remove_dropped(object: &mut Value, before: &Value, now: &Value) {
    let (Some(before), Some(target)) = (before.as_object(), object.as_object_mut()) else {
        return;
    };
    for (field, old) in before {
        match now.get(field) {
            None => {
                target.remove(field);
            }
            Some(new) if old.is_object() && new.is_object() => {
                if let Some(inner) = target.get_mut(field) {
                    remove_dropped(inner, old, new);
                }
            }
            Some(_) => {}
        }
    }
}

/// Overlays `intent` on `object`: maps merge, everything else is replaced.
fn merge(object: &mut Value, intent: &Value) {
    match (object.as_object_mut(), intent.as_object()) {
        (Some(target), Some(source)) => {
            for (field, value) in source {
                match target.get_mut(field) {
                    Some(existing) if existing.is_object() && value.is_object() => {
                        merge(existing, value)
                    }
                    _ => {
                        target.insert(field.clone(), value.clone());
                    }
                }
            }
        }
        _ => *object = intent.clone(),
    }
}
