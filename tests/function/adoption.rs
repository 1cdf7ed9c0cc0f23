//! Adopt only by intent (docs/design.md, "Adoption"; docs/lifecycle.md, "Phases"), through the
//! server over real gRPC on loopback, for the cluster, namespaced and flat provider APIs. Every
//! answer is also the core's, byte for byte, and every rendered resource is checked against the
//! provider's CRDs, CEL rules included.
//!
//! The observed resources are shaped as the provider writes them:
//! - crossplane-runtime, `pkg/reconciler/managed/reconciler.go`: `external-create-pending` is
//!   written before `Create`, `external-create-succeeded` or `-failed` after it; when `Observe`
//!   finds the resource, `Create` is never called and neither is written. An observe-only
//!   resource whose external resource does not exist gets `Synced` False, reason
//!   `ReconcileError`, "observe failed: external resource does not exist"
//!   (`errReconcileObserve`, `errExternalResourceNotExist`).
//! - crossplane-runtime, `pkg/reconciler/managed/policies.go`: with the feature off, a
//!   non-default policy set is refused, "`spec.managementPolicies` is set to a non-default value
//!   but the feature is not enabled: [...]" (`errFmtManagementPolicyNonDefault`).
//! - upjet, `pkg/controller/external_tfpluginfw.go`: `Observe` sets `Ready` True, reason
//!   `Available`, when the repository exists, and copies what it read into
//!   `status.atProvider`.
//! - upjet, `pkg/controller/external_async_tfpluginfw.go` and `pkg/resource/conditions.go`:
//!   `Create` returns at once (so `-succeeded` is written before the apply); the apply's outcome
//!   is `LastAsyncOperation` (True `Success`, or False `ApplyFailure` with "async create failed:
//!   " and the error), and `AsyncOperation` is False `Ongoing` while it runs, True `Finished`
//!   after. Terraform's diagnostics come as "resource creation call returned error diags:
//!   <summary>: <detail>", and Artifactory refuses an existing key with 400 "Case insensitive
//!   repository key already exists".

use crate::simulator::provider;
use crate::support;

use function_artifactory::proto::v1::{
    Ready, Result as FnResult, RunFunctionResponse, Severity, Target,
};
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, BTreeSet};
use support::requests::{
    assert_valid, composite, desired_resources, fatal_message, input, namespaced_composite,
    request, status_repositories, RequestBuilder,
};
use support::server::Function;

/// One provider API: where its CRDs are, its composite and its input, and its kinds.
#[derive(Clone, Copy)]
struct Api {
    folder: &'static str,
    namespaced: bool,
    flat: bool,
    local: (&'static str, &'static str),
    virtual_: (&'static str, &'static str),
    remote_maven: (&'static str, &'static str),
    remote_helm: (&'static str, &'static str),
}

const CLUSTER: Api = Api {
    folder: "cluster",
    namespaced: false,
    flat: false,
    local: (
        "local.artifactory.jfrog.crossplane.io/v1alpha1",
        "MavenRepository",
    ),
    virtual_: (
        "virtual.artifactory.jfrog.crossplane.io/v1alpha1",
        "MavenRepository",
    ),
    remote_maven: (
        "remote.artifactory.jfrog.crossplane.io/v1alpha1",
        "MavenRepository",
    ),
    remote_helm: (
        "remote.artifactory.jfrog.crossplane.io/v1alpha1",
        "HelmRepository",
    ),
};

const NAMESPACED: Api = Api {
    folder: "namespaced",
    namespaced: true,
    flat: false,
    local: (
        "local.artifactory.jfrog.m.crossplane.io/v1alpha1",
        "MavenRepository",
    ),
    virtual_: (
        "virtual.artifactory.jfrog.m.crossplane.io/v1alpha1",
        "MavenRepository",
    ),
    remote_maven: (
        "remote.artifactory.jfrog.m.crossplane.io/v1alpha1",
        "MavenRepository",
    ),
    remote_helm: (
        "remote.artifactory.jfrog.m.crossplane.io/v1alpha1",
        "HelmRepository",
    ),
};

const FLAT: Api = Api {
    folder: "flat",
    namespaced: false,
    flat: true,
    local: (
        "artifactory.jfrog.crossplane.io/v1alpha1",
        "LocalMavenRepository",
    ),
    virtual_: (
        "artifactory.jfrog.crossplane.io/v1alpha1",
        "VirtualMavenRepository",
    ),
    remote_maven: (
        "artifactory.jfrog.crossplane.io/v1alpha1",
        "RemoteMavenRepository",
    ),
    remote_helm: (
        "artifactory.jfrog.crossplane.io/v1alpha1",
        "RemoteHelmRepository",
    ),
};

const APIS: [Api; 3] = [CLUSTER, NAMESPACED, FLAT];

impl Api {
    fn request(self, spec: Value) -> RequestBuilder {
        self.request_with(spec, json!({}))
    }

    /// A request with the input's `fields` (the flat API named, as a v0.6.0 cluster needs).
    fn request_with(self, spec: Value, fields: Value) -> RequestBuilder {
        let mut fields = fields;
        if self.flat {
            fields["providerApi"] = json!("flat");
        }
        let composite = if self.namespaced {
            namespaced_composite(spec)
        } else {
            composite(spec)
        };
        request(composite).input(input(fields))
    }

    /// A providerConfigRef: the namespaced API names the kind too (its CRD requires it).
    fn provider_config(self, name: &str) -> Value {
        if self.namespaced {
            json!({"name": name, "kind": "ProviderConfig"})
        } else {
            json!({"name": name})
        }
    }

    /// A local repository's managed resource as the function rendered it: `key`, with the
    /// origin annotation (absent for `None`) and policies it was rendered with.
    fn local_resource(self, key: &str, origin: Option<&str>, policies: Option<Value>) -> Live {
        Live::new(self.local, key, origin, policies)
    }
}

/// An observed managed resource, built up as the provider would have written it.
struct Live(Value);

impl Live {
    fn new(
        (api_version, kind): (&str, &str),
        key: &str,
        origin: Option<&str>,
        policies: Option<Value>,
    ) -> Live {
        let mut annotations = json!({"crossplane.io/external-name": key});
        if let Some(origin) = origin {
            annotations["artifactory.fn.crossplane.io/origin"] = json!(origin);
        }
        let mut spec = json!({"forProvider": {}});
        if let Some(policies) = policies {
            spec["managementPolicies"] = policies;
        }
        Live(json!({
            "apiVersion": api_version,
            "kind": kind,
            "metadata": {
                "name": format!("team1-repos-{}", key.len()),
                "annotations": annotations,
                "labels": {"artifactory.fn.crossplane.io/key": key},
            },
            "spec": spec,
            "status": {"conditions": []},
        }))
    }

    fn annotate(mut self, name: &str, value: &str) -> Live {
        self.0["metadata"]["annotations"][name] = json!(value);
        self
    }

    fn condition(mut self, type_: &str, status: &str, reason: &str, message: Option<&str>) -> Live {
        let mut condition = json!({
            "type": type_, "status": status, "reason": reason,
            "lastTransitionTime": "2026-11-01T10:00:00Z",
        });
        if let Some(message) = message {
            condition["message"] = json!(message);
        }
        self.0["status"]["conditions"]
            .as_array_mut()
            .unwrap()
            .push(condition);
        self
    }

    fn spec(mut self, field: &str, value: Value) -> Live {
        self.0["spec"][field] = value;
        self
    }

    fn at_provider(mut self, fields: Value) -> Live {
        self.0["status"]["atProvider"] = fields;
        self
    }

    /// crossplane-runtime's annotations around a create that was called (and, for upjet's
    /// asynchronous client, returned at once).
    fn create_called(self) -> Live {
        self.annotate(
            "crossplane.io/external-create-pending",
            "2026-11-01T09:59:58Z",
        )
        .annotate(
            "crossplane.io/external-create-succeeded",
            "2026-11-01T09:59:58Z",
        )
    }

    /// upjet's `Observe` found the repository.
    fn observed_existing(self) -> Live {
        self.condition("Ready", "True", "Available", None)
            .condition("Synced", "True", "ReconcileSuccess", None)
    }

    /// A create of ours that the provider applied: the repository exists because we made it.
    fn created(self) -> Live {
        self.create_called()
            .observed_existing()
            .condition("LastAsyncOperation", "True", "Success", None)
            .condition("AsyncOperation", "True", "Finished", None)
    }

    /// An import the provider has observed: origin `imported`, `["Observe"]`, and what it read.
    fn observed_import(kind: (&str, &str), key: &str, at_provider: Value) -> Live {
        Live::new(kind, key, Some("imported"), Some(json!(["Observe"])))
            .observed_existing()
            .at_provider(at_provider)
    }

    /// Deletion turned to Orphan, as retiring does: the deletion policy, or in the namespaced
    /// API (which has none) the policies without Delete.
    fn orphaned(self, api: Api) -> Live {
        if api.namespaced {
            self.spec(
                "managementPolicies",
                json!(["Observe", "Create", "Update", "LateInitialize"]),
            )
        } else {
            self.spec("deletionPolicy", json!("Orphan"))
        }
    }

    fn value(self) -> Value {
        self.0
    }
}

/// An asynchronous create that failed on a server error, in the words of upjet's no-fork
/// clients (`AsyncCreateFailure`, "async create failed: …", `errors.go:193-198` @ v2.2.0).
const NO_FORK_SERVER_ERROR: &str =
    "async create failed: failed to create the repository: 500 Internal Server Error";

/// The asynchronous create failed because Artifactory has the key (in another case).
const KEY_EXISTS: &str = "async create failed: resource creation call returned error diags: Unable to Create Resource: An unexpected error occurred while creating the resource update request. Please report this issue to the provider developers.\n\nError: {\"errors\":[{\"status\":400,\"message\":\"Case insensitive repository key already exists\"}]}";

fn spec(entries: Value) -> Value {
    json!({"repositories": entries})
}

fn libs() -> Value {
    json!({"name": "libs", "rclass": "local", "packageType": "maven"})
}

fn results(response: &RunFunctionResponse, reason: &str) -> Vec<FnResult> {
    response
        .results
        .iter()
        .filter(|r| r.reason.as_deref() == Some(reason))
        .cloned()
        .collect()
}

/// The only result with `reason`, which must be a Warning for the composite and the claim.
fn warning(response: &RunFunctionResponse, reason: &str) -> String {
    let found = results(response, reason);
    assert_eq!(found.len(), 1, "one {reason}: {:#?}", response.results);
    assert_eq!(found[0].severity, Severity::Warning as i32);
    assert_eq!(found[0].target, Some(Target::CompositeAndClaim as i32));
    found[0].message.clone()
}

/// Asserts that the call was not fatal, showing why when it was.
fn assert_not_fatal(response: &RunFunctionResponse, case: &str) {
    let fatal = fatal_message(response);
    assert!(fatal.is_none(), "{case}: {fatal:?}");
}

/// Asserts that `text` says `part`, showing all of it when it does not.
/// The first entry is held, and the `RepositoryHeld` Warning says `words`.
fn assert_held(response: &RunFunctionResponse, api: Api, words: &str) {
    assert_eq!(
        status_repositories(response)[0]["phase"],
        "held",
        "{}",
        api.folder
    );
    assert_has(&warning(response, "RepositoryHeld"), words);
}

fn assert_has(text: &str, part: &str) {
    assert!(text.contains(part), "{part:?} is not in:\n{text}");
}

fn validated(api: Api, response: &RunFunctionResponse) -> BTreeMap<String, Value> {
    let resources = desired_resources(response);
    assert_valid(api.folder, &resources);
    resources
}

fn policies(resource: &Value) -> &Value {
    &resource["spec"]["managementPolicies"]
}

fn origin(resource: &Value) -> &Value {
    &resource["metadata"]["annotations"]["artifactory.fn.crossplane.io/origin"]
}

fn with_status(composite_status: Value, request: RequestBuilder) -> RequestBuilder {
    let mut built = request.build();
    let observed = built.observed.as_mut().unwrap();
    let composite = observed.composite.as_mut().unwrap();
    let mut value = composite.resource.take().unwrap().into_value();
    value["status"] = composite_status;
    composite.resource = Some(function_artifactory::proto::Struct::from_value(value));
    RequestBuilder::from(built)
}

// ---- 1. create, never take over --------------------------------------------

#[tokio::test]
async fn a_new_entry_is_created_under_observe_and_create_in_every_api() {
    let mut function = Function::start().await;
    for api in APIS {
        let response = function.call(api.request(spec(json!([libs()])))).await;
        let resources = validated(api, &response);
        assert_eq!(policies(&resources["libs"]), &json!(["Observe", "Create"]));
        assert_eq!(origin(&resources["libs"]), "creating");
        let status = status_repositories(&response);
        assert_eq!(status[0]["phase"], "creating", "{}", api.folder);
        // Observe and Create: deleting the resource orphans the repository (policies.go,
        // ShouldDelete: no Delete in the set), so a key created by nobody is never deleted.
        assert_eq!(status[0]["deletion"], "Orphan");
        assert!(fatal_message(&response).is_none());
    }
}

#[tokio::test]
async fn the_guard_keeps_the_crd_rules_for_required_fields() {
    let mut function = Function::start().await;
    for api in APIS {
        let remote = json!([{"name": "central", "rclass": "remote", "packageType": "maven"}]);
        let response = function.call(api.request(spec(remote))).await;
        let message = fatal_message(&response).expect("a remote without url is refused");
        assert_has(
            &message,
            "requires spec.forProvider.url while it may create",
        );
    }
}

// ---- 2. widen once the provider shows it created the repository ------------

#[tokio::test]
async fn a_confirmed_create_gets_the_entrys_own_policies_then_is_managed() {
    let mut function = Function::start().await;
    for api in APIS {
        let guarded = Some(json!(["Observe", "Create"]));
        let created = api
            .local_resource("libs", Some("creating"), guarded)
            .created()
            .value();
        let response = function
            .call(api.request(spec(json!([libs()]))).observed("libs", created))
            .await;
        let resources = validated(api, &response);
        assert_eq!(
            policies(&resources["libs"]),
            &Value::Null,
            "the provider's default, *"
        );
        assert_eq!(origin(&resources["libs"]), "created");
        assert_eq!(status_repositories(&response)[0]["phase"], "created");
        assert_eq!(status_repositories(&response)[0]["deletion"], "Delete");

        // The next call: the managed resource carries its own policies.
        let widened = api
            .local_resource("libs", Some("created"), None)
            .created()
            .value();
        let previous = json!({"repositories": [{"name": "libs", "phase": "created"}]});
        let response = function
            .call(with_status(
                previous,
                api.request(spec(json!([libs()]))).observed("libs", widened),
            ))
            .await;
        assert_eq!(status_repositories(&response)[0]["phase"], "managed");
        assert!(
            response.results.is_empty(),
            "nothing new: {:?}",
            response.results
        );
    }
}

#[tokio::test]
async fn an_apply_that_runs_or_failed_otherwise_keeps_the_guard() {
    let mut function = Function::start().await;
    for api in APIS {
        let guarded =
            || api.local_resource("libs", Some("creating"), Some(json!(["Observe", "Create"])));
        let ongoing = guarded()
            .create_called()
            .condition("Ready", "False", "Creating", None)
            .condition("Synced", "True", "ReconcileSuccess", None)
            .condition("AsyncOperation", "False", "Ongoing", None)
            .value();
        let failed = guarded()
            .create_called()
            .condition("Ready", "False", "Creating", None)
            .condition("Synced", "True", "ReconcileSuccess", None)
            .condition(
                "LastAsyncOperation",
                "False",
                "ApplyFailure",
                Some("async create failed: resource creation call returned error diags: Unable to Create Resource: 403 Forbidden"),
            )
            .condition("AsyncOperation", "True", "Finished", None)
            .value();
        for live in [ongoing, failed] {
            let response = function
                .call(api.request(spec(json!([libs()]))).observed("libs", live))
                .await;
            let resources = validated(api, &response);
            assert_eq!(policies(&resources["libs"]), &json!(["Observe", "Create"]));
            assert_eq!(status_repositories(&response)[0]["phase"], "creating");
        }
    }
}

// ---- 3. a taken key is held --------------------------------------------------

#[tokio::test]
async fn a_key_that_existed_is_held_and_the_claim_told_how_to_go_on() {
    let mut function = Function::start().await;
    for api in APIS {
        let existed = api
            .local_resource("libs", Some("creating"), Some(json!(["Observe", "Create"])))
            .observed_existing()
            .at_provider(json!({"description": "made by hand", "includesPattern": "**/*"}))
            .value();
        let other = json!({"name": "tools", "rclass": "local", "packageType": "maven"});
        let response = function
            .call(
                api.request(spec(json!([libs(), other])))
                    .observed("libs", existed),
            )
            .await;
        assert!(fatal_message(&response).is_none(), "not fatal");
        let resources = validated(api, &response);
        assert_eq!(policies(&resources["libs"]), &json!(["Observe"]));
        assert_eq!(origin(&resources["libs"]), "taken");
        assert_eq!(
            response.desired.as_ref().unwrap().resources["libs"].ready,
            Ready::False as i32,
            "held: not ready, so neither is the claim"
        );
        assert_eq!(
            policies(&resources["tools"]),
            &json!(["Observe", "Create"]),
            "the others go on"
        );
        let status = status_repositories(&response);
        assert_eq!(status[0]["phase"], "held");
        assert_eq!(status[0]["ready"], false);
        assert_eq!(status[0]["deletion"], "Orphan");
        let message = warning(&response, "RepositoryHeld");
        assert!(message.starts_with("repository libs (key libs) is held: the key exists in Artifactory outside this claim"), "{message}");
        assert_has(
            &message,
            "set import: true on the entry to adopt it on purpose",
        );
        assert_has(&message, "or give the entry another key");
        let condition = &response.conditions[0];
        assert_eq!(condition.reason, "Held");
        assert!(
            condition
                .message
                .as_deref()
                .unwrap()
                .contains("repository libs (key libs) is held"),
            "{condition:?}"
        );
        // What the claim leaves out is rendered at its live value, so adopting it would change
        // nothing: no field goes back to the provider's default.
        assert_eq!(
            resources["libs"]["spec"]["forProvider"],
            json!({"description": "made by hand", "includesPattern": "**/*"})
        );
        assert_eq!(status[0]["takeoverChanges"], 0);
        assert_eq!(status[0]["takeover"], json!([]));
    }
}

#[tokio::test]
async fn a_create_refused_because_the_key_exists_is_held_and_stays_held() {
    let mut function = Function::start().await;
    for api in APIS {
        let refused = api
            .local_resource("libs", Some("creating"), Some(json!(["Observe", "Create"])))
            .create_called()
            .condition("Ready", "False", "Creating", None)
            .condition("Synced", "True", "ReconcileSuccess", None)
            .condition(
                "LastAsyncOperation",
                "False",
                "ApplyFailure",
                Some(KEY_EXISTS),
            )
            .condition("AsyncOperation", "True", "Finished", None)
            .value();
        let response = function
            .call(api.request(spec(json!([libs()]))).observed("libs", refused))
            .await;
        let resources = validated(api, &response);
        assert_eq!(policies(&resources["libs"]), &json!(["Observe"]));
        let message = warning(&response, "RepositoryHeld");
        assert_has(
            &message,
            "Artifactory refused to create it because the key exists (perhaps in another case)",
        );
        assert_has(&message, "Case insensitive repository key already exists");

        // Held it stays, and is said once: once the failed condition is gone (the no-fork
        // clients reset it; the Terraform-CLI client's next apply would), the origin annotation
        // remembers.
        let held = api
            .local_resource("libs", Some("taken"), Some(json!(["Observe"])))
            .observed_existing()
            .value();
        let previous = json!({"repositories": [{"name": "libs", "phase": "held"}]});
        let response = function
            .call(with_status(
                previous,
                api.request(spec(json!([libs()]))).observed("libs", held),
            ))
            .await;
        assert_eq!(status_repositories(&response)[0]["phase"], "held");
        assert!(results(&response, "RepositoryHeld").is_empty());
    }
}

/// Issue 54, item 3, under upjet's no-fork clients, which never set `AsyncOperation`: a create
/// refused because the key exists is reset to `LastAsyncOperation` True `Success` by the
/// `Observe` that first finds the repository equal to the spec, in the status write that sets
/// `Ready` True (`external_async_tfpluginfw.go:173-176` @ v2.2.0). Read only after that reset,
/// the create is not confirmed: the entry is held and the import offered. A create of ours,
/// whose apply succeeded before that `Observe`, is confirmed.
#[tokio::test]
async fn under_the_no_fork_clients_a_success_dated_from_the_first_sight_confirms_nothing() {
    let mut function = Function::start().await;
    for api in APIS {
        let no_fork = |succeeded_at: &str| {
            let mut live = api
                .local_resource("libs", Some("creating"), Some(json!(["Observe", "Create"])))
                .create_called()
                .observed_existing()
                .condition("LastAsyncOperation", "True", "Success", None)
                .value();
            let conditions = live["status"]["conditions"].as_array_mut().unwrap();
            conditions[2]["lastTransitionTime"] = json!(succeeded_at);
            assert_eq!(conditions[0]["lastTransitionTime"], "2026-11-01T10:00:00Z");
            live
        };

        let reset = no_fork("2026-11-01T10:00:00Z");
        let response = function
            .call(api.request(spec(json!([libs()]))).observed("libs", reset))
            .await;
        let resources = validated(api, &response);
        assert_eq!(
            policies(&resources["libs"]),
            &json!(["Observe"]),
            "{}",
            api.folder
        );
        assert_eq!(origin(&resources["libs"]), "taken");
        assert_eq!(status_repositories(&response)[0]["phase"], "held");
        let message = warning(&response, "RepositoryHeld");
        assert_has(&message, "the provider reports its create succeeded at 2026-11-01T10:00:00Z, no earlier than it first observed the repository (2026-11-01T10:00:00Z), which is how upjet's no-fork clients report a create that Artifactory refused because the key already existed");
        assert_has(&message, "import: true");

        // A create that failed again in the same words keeps the first failure's time, before
        // the latest create began; with no `AsyncOperation`, a `Ready` True since then says the
        // apply has ended: the failure is read, and the repository that exists is held.
        let failed_again = api
            .local_resource("libs", Some("creating"), Some(json!(["Observe", "Create"])))
            .annotate(
                "crossplane.io/external-create-pending",
                "2026-11-01T10:00:05Z",
            )
            .annotate(
                "crossplane.io/external-create-succeeded",
                "2026-11-01T10:00:05Z",
            )
            .condition(
                "LastAsyncOperation",
                "False",
                "AsyncCreateFailure",
                Some(NO_FORK_SERVER_ERROR),
            )
            .observed_existing()
            .value();
        let mut failed_again = failed_again;
        for condition in failed_again["status"]["conditions"].as_array_mut().unwrap() {
            if condition["type"] != "LastAsyncOperation" {
                condition["lastTransitionTime"] = json!("2026-11-01T10:00:09Z");
            }
        }
        let response = function
            .call(
                api.request(spec(json!([libs()])))
                    .observed("libs", failed_again),
            )
            .await;
        assert_held(
            &response,
            api,
            "the provider's create failed (\"async create failed: ",
        );

        let ours = no_fork("2026-11-01T09:59:59Z");
        let response = function
            .call(api.request(spec(json!([libs()]))).observed("libs", ours))
            .await;
        let resources = validated(api, &response);
        assert_eq!(
            status_repositories(&response)[0]["phase"],
            "created",
            "{}",
            api.folder
        );
        assert_eq!(origin(&resources["libs"]), "created");
        assert!(results(&response, "RepositoryHeld").is_empty());
    }
}

#[tokio::test]
async fn a_virtual_never_aggregates_a_held_or_unconfirmed_member() {
    let mut function = Function::start().await;
    for api in APIS {
        let all = json!({"name": "all", "rclass": "virtual", "packageType": "maven", "repositories": ["libs"]});
        // A new virtual over a new member: it waits, and says so.
        let response = function
            .call(api.request(spec(json!([libs(), all.clone()]))))
            .await;
        let resources = validated(api, &response);
        assert!(!resources.contains_key("all"), "{}", api.folder);
        assert_eq!(status_repositories(&response)[1]["phase"], "waiting");
        let waiting = results(&response, "RepositoryWaiting");
        assert_eq!(waiting[0].severity, Severity::Normal as i32);
        assert!(waiting[0]
            .message
            .contains("waits until this claim has created or adopted its members libs"));

        // The member created: the virtual is rendered, under the guard.
        let created = api
            .local_resource("libs", Some("creating"), Some(json!(["Observe", "Create"])))
            .created()
            .value();
        let response = function
            .call(
                api.request(spec(json!([libs(), all.clone()])))
                    .observed("libs", created),
            )
            .await;
        let resources = validated(api, &response);
        assert_eq!(policies(&resources["all"]), &json!(["Observe", "Create"]));

        // A live virtual whose member is held is held too.
        let held = api
            .local_resource("libs", Some("taken"), Some(json!(["Observe"])))
            .observed_existing()
            .value();
        let live_virtual = Live::new(api.virtual_, "all", Some("created"), None)
            .created()
            .value();
        let response = function
            .call(
                api.request(spec(json!([libs(), all])))
                    .observed("libs", held)
                    .observed("all", live_virtual),
            )
            .await;
        let resources = validated(api, &response);
        assert_eq!(policies(&resources["all"]), &json!(["Observe"]));
        let status = status_repositories(&response);
        assert_eq!(status[1]["phase"], "held");
        let held = results(&response, "RepositoryHeld");
        assert!(
            held.iter()
                .any(|r| r.message.contains("it aggregates libs, which is held")),
            "{held:?}"
        );
    }
}

// ---- 4. what the guard must not break ---------------------------------------

#[tokio::test]
async fn resources_composed_before_the_guard_are_left_as_they_are() {
    let mut function = Function::start().await;
    for api in APIS {
        let legacy = api
            .local_resource("libs", None, None)
            .observed_existing()
            .value();
        let response = function
            .call(api.request(spec(json!([libs()]))).observed("libs", legacy))
            .await;
        let resources = validated(api, &response);
        assert_eq!(policies(&resources["libs"]), &Value::Null);
        assert_eq!(origin(&resources["libs"]), &Value::Null);
        assert_eq!(status_repositories(&response)[0]["phase"], "managed");
        assert!(response.results.is_empty(), "{:?}", response.results);
    }
}

#[tokio::test]
async fn a_provider_without_management_policies_is_recognised() {
    let mut function = Function::start().await;
    for api in APIS {
        let refused = api
            .local_resource("libs", Some("creating"), Some(json!(["Observe", "Create"])))
            .condition("Synced", "False", "ReconcileError", Some("`spec.managementPolicies` is set to a non-default value but the feature is not enabled: [Observe Create]"))
            .value();
        let response = function
            .call(api.request(spec(json!([libs()]))).observed("libs", refused))
            .await;
        let message = warning(&response, "ManagementPoliciesDisabled");
        assert_has(
            &message,
            "start the provider with management policies enabled",
        );
        assert_has(&message, "createGuard: false");
        assert_eq!(
            status_repositories(&response)[0]["managementPoliciesDisabled"],
            true
        );
    }
}

#[tokio::test]
async fn create_guard_false_renders_as_asked() {
    let mut function = Function::start().await;
    for api in APIS {
        let all = json!({"name": "all", "rclass": "virtual", "packageType": "maven", "repositories": ["libs"]});
        let response = function
            .call(api.request_with(spec(json!([libs(), all])), json!({"createGuard": false})))
            .await;
        let resources = validated(api, &response);
        assert_eq!(policies(&resources["libs"]), &Value::Null);
        assert_eq!(origin(&resources["libs"]), &Value::Null);
        assert!(resources.contains_key("all"), "nothing waits");
    }
}

// ---- 5. adoption on purpose, checked, with a preview --------------------------

fn imported(policies: Option<Value>) -> Value {
    let mut entry = json!({"name": "libs", "rclass": "local", "packageType": "maven", "key": "legacy-libs", "import": true, "description": "Libraries"});
    if let Some(policies) = policies {
        entry["managementPolicies"] = policies;
    }
    entry
}

#[tokio::test]
async fn an_import_of_a_missing_key_is_held_quoting_the_provider() {
    let mut function = Function::start().await;
    for api in APIS {
        let missing = api
            .local_resource("legacy-libs", Some("imported"), Some(json!(["Observe"])))
            .condition(
                "Synced",
                "False",
                "ReconcileError",
                Some("observe failed: external resource does not exist"),
            )
            .value();
        let response = function
            .call(
                api.request(spec(json!([imported(Some(json!(["*"])))])))
                    .observed("libs", missing),
            )
            .await;
        let resources = validated(api, &response);
        assert_eq!(
            policies(&resources["libs"]),
            &json!(["Observe"]),
            "an import never creates"
        );
        let message = warning(&response, "RepositoryHeld");
        assert_has(&message, "it is imported, but Artifactory has no repository with this key (the provider says \"observe failed: external resource does not exist\")");
    }
}

#[tokio::test]
async fn an_import_is_verified_where_the_provider_reports_the_package_type() {
    let mut function = Function::start().await;
    for api in APIS {
        let entry = json!({"name": "all", "rclass": "virtual", "packageType": "maven", "key": "legacy-all", "import": true});
        let live = |package_type: &str| {
            Live::observed_import(
                api.virtual_,
                "legacy-all",
                json!({"packageType": package_type, "repositories": []}),
            )
            .value()
        };
        let response = function
            .call(
                api.request(spec(json!([entry.clone()])))
                    .observed("all", live("npm")),
            )
            .await;
        let message = warning(&response, "RepositoryHeld");
        assert!(
            message.contains(
                "the imported repository is of package type npm, and the entry says maven"
            ),
            "{message}"
        );
        let response = function
            .call(
                api.request(spec(json!([entry])))
                    .observed("all", live("maven")),
            )
            .await;
        let status = status_repositories(&response);
        assert_eq!(status[0]["phase"], "adopted");
        assert_eq!(status[0]["identity"], "verified");
        // A local kind reports no package type: not verified, and not held.
        let local = api
            .local_resource("legacy-libs", Some("imported"), Some(json!(["Observe"])))
            .observed_existing()
            .at_provider(json!({"description": "Libraries"}))
            .value();
        let response = function
            .call(
                api.request(spec(json!([imported(None)])))
                    .observed("libs", local),
            )
            .await;
        assert_eq!(
            status_repositories(&response)[0]["identity"],
            "not verified"
        );
    }
}

#[tokio::test]
async fn an_imported_key_keeps_the_key_artifactory_has() {
    let mut function = Function::start().await;
    for api in APIS {
        let entry = json!({"name": "images", "rclass": "local", "packageType": "docker", "key": "Team_Images", "import": true});
        let response = function.call(api.request(spec(json!([entry])))).await;
        assert!(
            fatal_message(&response).is_none(),
            "a warning, not a refusal"
        );
        let status = status_repositories(&response);
        let warnings = status[0]["warnings"].as_array().unwrap();
        assert!(
            warnings.iter().any(|w| w.as_str().unwrap().contains(
                "has upper case or '_', which dockerv2 keys may not have; the repository is imported, so it keeps the key"
            )),
            "{warnings:?}"
        );
        let resources = validated(api, &response);
        assert_eq!(
            resources["images"]["metadata"]["annotations"]["crossplane.io/external-name"],
            "Team_Images"
        );
    }
}

#[tokio::test]
async fn the_preview_lists_what_a_takeover_would_change_then_the_takeover_says_it() {
    let mut function = Function::start().await;
    for api in APIS {
        let observed = |policies: Value| {
            api.local_resource("legacy-libs", Some("imported"), Some(policies))
                .observed_existing()
                .at_provider(json!({
                    "description": "Old libraries", "xrayIndex": true, "projectKey": "team9",
                    "includesPattern": "**/*", "notes": "", "id": "legacy-libs"
                }))
                .value()
        };
        let response = function
            .call(
                api.request(spec(json!([imported(None)])))
                    .observed("libs", observed(json!(["Observe"]))),
            )
            .await;
        let status = status_repositories(&response);
        assert_eq!(status[0]["phase"], "adopted", "{}", api.folder);
        // Only what the claim sets can change: the fields it leaves out are rendered at their
        // live values (zero values too), the provider's `id` is not a field of the kind.
        assert_eq!(
            status[0]["takeover"],
            json!([
                {"path": "spec.forProvider.description", "live": "\"Old libraries\"", "claim": "\"Libraries\""},
            ])
        );
        assert_eq!(status[0]["takeoverChanges"], 1);
        assert_eq!(
            validated(api, &response)["libs"]["spec"]["forProvider"],
            json!({
                "description": "Libraries", "xrayIndex": true, "projectKey": "team9",
                "includesPattern": "**/*", "notes": ""
            })
        );
        let message = warning(&response, "TakeoverPreview");
        assert_eq!(message, "repository libs (key legacy-libs) is observed only: taking it over would change 1 field (status.repositories[].takeover)");
        // Said once: the next call with the same count says nothing.
        let previous =
            json!({"repositories": [{"name": "libs", "phase": "adopted", "takeoverChanges": 1}]});
        let response = function
            .call(with_status(
                previous,
                api.request(spec(json!([imported(None)])))
                    .observed("libs", observed(json!(["Observe"]))),
            ))
            .await;
        assert!(results(&response, "TakeoverPreview").is_empty());

        // Wider policies before any preview was published (issue 54, 8): adopted first, the
        // preview said, nothing taken over.
        let response = function
            .call(
                api.request(spec(json!([imported(Some(json!(["*"])))])))
                    .observed("libs", observed(json!(["Observe"]))),
            )
            .await;
        let resources = validated(api, &response);
        assert_eq!(policies(&resources["libs"]), &json!(["Observe"]));
        assert_eq!(status_repositories(&response)[0]["phase"], "adopted");
        assert!(results(&response, "TakingOver").is_empty());
        warning(&response, "TakeoverPreview");

        // Taking over, by the entry's own policies, once the preview was published: said at the
        // call that does it, with the changes.
        let previous =
            json!({"repositories": [{"name": "libs", "phase": "adopted", "takeoverChanges": 1}]});
        let response = function
            .call(with_status(
                previous,
                api.request(spec(json!([imported(Some(json!(["*"])))])))
                    .observed("libs", observed(json!(["Observe"]))),
            ))
            .await;
        let resources = validated(api, &response);
        assert_eq!(policies(&resources["libs"]), &json!(["*"]));
        assert_eq!(status_repositories(&response)[0]["phase"], "takingOver");
        let message = warning(&response, "TakingOver");
        assert_has(
            &message,
            "1 field changes: spec.forProvider.description: \"Old libraries\" -> \"Libraries\"",
        );
        // ... and the deletion that comes with it; the project it is in stays, as the claim
        // leaves projectKey out.
        let consequence = warning(&response, "ConsequentialChange");
        assert_has(&consequence, "its deletion turns from Orphan to Delete");
        assert!(!consequence.contains("JFrog project"), "{consequence}");
        assert_eq!(
            resources["libs"]["spec"]["forProvider"]["projectKey"],
            "team9"
        );
    }
}

#[tokio::test]
async fn removing_import_once_adopted_is_a_takeover_not_a_taken_key() {
    let mut function = Function::start().await;
    for api in APIS {
        let adopted = api
            .local_resource("legacy-libs", Some("imported"), Some(json!(["Observe"])))
            .observed_existing()
            .at_provider(json!({"description": "Libraries"}))
            .value();
        let mut entry = imported(None);
        entry.as_object_mut().unwrap().remove("import");
        let previous = json!({"repositories": [{"name": "libs", "phase": "adopted"}]});
        let response = function
            .call(with_status(
                previous,
                api.request(spec(json!([entry.clone()])))
                    .observed("libs", adopted.clone()),
            ))
            .await;
        let resources = validated(api, &response);
        // Taken over, its deletion stays Orphan: the entry does not ask for deletion (issue 54,
        // item 4); the namespaced API says so with policies that leave Delete out.
        if api.namespaced {
            assert_eq!(
                policies(&resources["libs"]),
                &json!(["Observe", "Create", "Update", "LateInitialize"])
            );
        } else {
            assert_eq!(policies(&resources["libs"]), &Value::Null);
            assert_eq!(resources["libs"]["spec"]["deletionPolicy"], "Orphan");
        }
        assert_eq!(origin(&resources["libs"]), "imported");
        let status = status_repositories(&response);
        assert_eq!(status[0]["deletion"], "Orphan");
        assert_eq!(status[0]["phase"], "takingOver");
        assert_eq!(status[0]["adopted"], true);
        let message = warning(&response, "TakingOver");
        assert_has(&message, "nothing in Artifactory changes");

        // With own policies that only observe, removing import leaves it adopted, not taking
        // over for good (issue 54, 8).
        entry["managementPolicies"] = json!(["Observe"]);
        let previous = json!({"repositories": [{"name": "libs", "phase": "adopted"}]});
        let response = function
            .call(with_status(
                previous,
                api.request(spec(json!([entry.clone()])))
                    .observed("libs", adopted.clone()),
            ))
            .await;
        assert_eq!(status_repositories(&response)[0]["phase"], "adopted");
        assert!(results(&response, "TakingOver").is_empty());
    }
}

#[tokio::test]
async fn removing_import_from_a_held_import_takes_nothing_over() {
    let mut function = Function::start().await;
    for api in APIS {
        let mut entry = imported(None);
        entry.as_object_mut().unwrap().remove("import");
        // Its key is missing: a plain entry now, which creates it under the guard.
        let missing = api
            .local_resource("legacy-libs", Some("imported"), Some(json!(["Observe"])))
            .condition("Ready", "False", "Unavailable", None)
            .condition("Synced", "False", "ReconcileError", Some(NOT_FOUND))
            .value();
        let previous = json!({"repositories": [{"name": "libs", "phase": "held"}]});
        let response = function
            .call(with_status(
                previous.clone(),
                api.request(spec(json!([entry.clone()])))
                    .observed("libs", missing),
            ))
            .await;
        let resources = validated(api, &response);
        assert_eq!(policies(&resources["libs"]), &json!(["Observe", "Create"]));
        assert_eq!(status_repositories(&response)[0]["phase"], "creating");
        assert!(results(&response, "TakingOver").is_empty());

        // It is a repository of another package type (a virtual reports it): held as a key
        // taken.
        let virtual_entry = json!({"name": "libs", "rclass": "virtual", "packageType": "maven",
            "key": "legacy-libs"});
        let other = Live::observed_import(
            api.virtual_,
            "legacy-libs",
            json!({"packageType": "npm", "id": "legacy-libs"}),
        )
        .value();
        let response = function
            .call(with_status(
                previous,
                api.request(spec(json!([virtual_entry])))
                    .observed("libs", other),
            ))
            .await;
        let resources = validated(api, &response);
        assert_eq!(policies(&resources["libs"]), &json!(["Observe"]));
        assert_eq!(origin(&resources["libs"]), "taken");
        assert_eq!(status_repositories(&response)[0]["phase"], "held");
        assert!(results(&response, "TakingOver").is_empty());
    }
}

#[tokio::test]
async fn a_remote_taken_over_without_url_keeps_the_live_url() {
    let mut function = Function::start().await;
    for api in APIS {
        let entry = json!({"name": "central", "rclass": "remote", "packageType": "maven", "key": "maven-central", "import": true, "managementPolicies": ["*"]});
        let live = Live::observed_import(
            api.remote_maven,
            "maven-central",
            json!({"url": "https://repo1.maven.org/maven2"}),
        )
        .value();
        // Taken over: the call after the one that showed it adopted. The url the provider
        // requires to update is the live one, which the claim leaves out.
        let previous = json!({"repositories": [{"name": "central", "phase": "adopted"}]});
        let response = function
            .call(with_status(
                previous,
                api.request(spec(json!([entry]))).observed("central", live),
            ))
            .await;
        assert_not_fatal(&response, "taken over");
        let resources = validated(api, &response);
        assert_eq!(
            resources["central"]["spec"]["forProvider"]["url"],
            "https://repo1.maven.org/maven2"
        );
        assert_eq!(status_repositories(&response)[0]["phase"], "takingOver");
    }
}

// ---- 6. consequential changes are said before they happen --------------------

#[tokio::test]
async fn provider_config_project_and_members_changes_are_said_once() {
    let mut function = Function::start().await;
    for api in APIS {
        let entries = json!([
            {"name": "libs", "rclass": "local", "packageType": "maven", "providerConfigRef": api.provider_config("eu")},
            {"name": "all", "rclass": "virtual", "packageType": "maven", "repositories": ["libs"]}
        ]);
        let libs_live = api
            .local_resource("libs", Some("created"), None)
            .created()
            .spec("providerConfigRef", api.provider_config("us"))
            .spec("forProvider", json!({"projectKey": "team1"}))
            .value();
        let all_live = Live::new(api.virtual_, "all", Some("created"), None)
            .created()
            .at_provider(json!({"packageType": "maven", "repositories": ["libs", "old-libs"]}))
            .value();
        let response = function
            .call(
                api.request(spec(entries))
                    .observed("libs", libs_live)
                    .observed("all", all_live),
            )
            .await;
        validated(api, &response);
        let message = warning(&response, "ConsequentialChange");
        assert_has(
            &message,
            "repository libs (key libs): its providerConfigRef changes from \"us\" to \"eu\"",
        );
        assert_has(
            &message,
            "repository libs (key libs): it is taken out of the JFrog project \"team1\"",
        );
        assert_has(
            &message,
            "repository all (key all): the virtual stops aggregating \"old-libs\"",
        );
    }
}

#[tokio::test]
async fn a_change_between_two_projects_is_said_not_to_be_applied() {
    let mut function = Function::start().await;
    for api in APIS {
        let live = api
            .local_resource("team2-libs", None, None)
            .observed_existing()
            .spec("forProvider", json!({"projectKey": "team1"}))
            .value();
        let spec = json!({"projectKey": "team2", "repositories": [
            {"name": "libs", "rclass": "local", "packageType": "maven", "key": "team2-libs"}
        ]});
        let response = function
            .call(api.request(spec).observed("libs", live))
            .await;
        let message = warning(&response, "ConsequentialChange");
        assert_has(
            &message,
            "projectKey changes from \"team1\" to \"team2\", which the provider does not apply",
        );
    }
}

/// The fatal message for an entry that changes the live `externalDependenciesPatterns` of a
/// helm remote, `live` (a field the Terraform provider replaces the repository for).
async fn replacement_refusal(function: &mut Function, api: Api, live: Live) -> String {
    let entry = json!({"name": "charts", "rclass": "remote", "packageType": "helm", "url": "https://charts.example.com",
        "forProvider": {"externalDependenciesEnabled": true, "externalDependenciesPatterns": ["**/github.com/**"]}});
    let live = live
        .spec(
            "forProvider",
            json!({"url": "https://charts.example.com", "externalDependenciesEnabled": true, "externalDependenciesPatterns": ["**"]}),
        )
        .value();
    let response = function
        .call(api.request(spec(json!([entry]))).observed("charts", live))
        .await;
    fatal_message(&response).expect("a replacement is refused")
}

#[tokio::test]
async fn a_field_that_forces_replacement_is_refused() {
    let mut function = Function::start().await;
    for api in APIS {
        let live = Live::new(api.remote_helm, "charts", None, None).observed_existing();
        let message = replacement_refusal(&mut function, api, live).await;
        assert_has(&message, "spec.repositories[0].forProvider.externalDependenciesPatterns: repository \"charts\": changing externalDependenciesPatterns of a live remote helm repository replaces the repository in Artifactory");
        assert_has(&message, "to change it on purpose, add a new entry");
    }
}

// ---- the preview's bounds ------------------------------------------------------

/// 18 claimed fields that each differ from what is live.
fn everything_differs() -> (Value, Value) {
    let claim = json!({
        "archiveBrowsingEnabled": true, "blackedOut": true, "cdnRedirect": true,
        "checksumPolicyType": "server-generated-checksums", "downloadDirect": true,
        "excludesPattern": "tmp/**", "handleReleases": false, "handleSnapshots": false,
        "includesPattern": "com/**", "maxUniqueSnapshots": 5, "notes": "claim notes",
        "priorityResolution": true, "propertySets": ["claim"], "repoLayoutRef": "maven-2-default",
        "snapshotVersionBehavior": "unique", "suppressPomConsistencyChecks": true,
        "xrayIndex": true, "projectEnvironments": ["DEV"]
    });
    let live = json!({
        "archiveBrowsingEnabled": false, "blackedOut": false, "cdnRedirect": false,
        "checksumPolicyType": "client-checksums", "downloadDirect": false,
        "excludesPattern": "", "handleReleases": true, "handleSnapshots": true,
        "includesPattern": "**/*", "maxUniqueSnapshots": 0, "notes": "",
        "priorityResolution": false, "propertySets": ["live"], "repoLayoutRef": "simple-default",
        "snapshotVersionBehavior": "non-unique", "suppressPomConsistencyChecks": false,
        "xrayIndex": false, "projectEnvironments": ["PROD"]
    });
    (claim, live)
}

#[tokio::test]
async fn the_preview_is_bounded_per_repository_and_per_composite() {
    let mut function = Function::start().await;
    let (claim, live) = everything_differs();
    // 20 imports, each with 18 changes: 16 listed each until the composite's 256 are listed.
    let mut entries = Vec::new();
    for i in 0..20 {
        entries.push(
            json!({"name": format!("r{i:02}"), "rclass": "local", "packageType": "maven",
            "key": format!("legacy-{i:02}"), "import": true, "forProvider": claim}),
        );
    }
    let mut request = CLUSTER.request(spec(json!(entries)));
    for i in 0..20 {
        let observed = CLUSTER
            .local_resource(
                &format!("legacy-{i:02}"),
                Some("imported"),
                Some(json!(["Observe"])),
            )
            .observed_existing()
            .at_provider(live.clone())
            .value();
        request = request.observed(&format!("r{i:02}"), observed);
    }
    let response = function.call(request).await;
    let status = status_repositories(&response);
    let listed: Vec<usize> = status
        .iter()
        .map(|item| item["takeover"].as_array().unwrap().len())
        .collect();
    assert_eq!(listed[0], 16, "at most 16 a repository");
    assert_eq!(status[0]["takeoverChanges"], 18);
    assert_eq!(status[0]["takeoverOmitted"], 2);
    assert_eq!(listed.iter().sum::<usize>(), 256, "at most 256 a composite");
    assert_eq!(listed[16], 0, "the budget is spent by the 17th");
    assert_eq!(
        status[16]["takeoverChanges"], 18,
        "but every change is counted"
    );
    // The composite stays small: the whole status well under the API server's 1.5 MiB.
    let composite = support::requests::desired_composite(&response);
    assert!(composite.to_string().len() < 200_000);
}

// ---- 8. the guard in every order of edits (issue 54) ------------------------
//
// Observed resources here are shaped as upjet's Terraform-CLI client writes them, the client
// every release of provider-jfrog-artifactory runs (`pkg/controller/external.go`): a failed apply
// is `LastAsyncOperation` False, reason `ApplyFailure`, "apply failed: <summary>: <detail>"
// (`pkg/terraform/workspace.go:173-176`, `pkg/terraform/errors/errors.go:90-91`,
// `pkg/resource/conditions.go:43-50` @ v2.2.0), and `Observe` never clears it: only the next
// apply's callback does (`pkg/controller/api.go:127`).

/// A first apply that failed after Artifactory's PUT: the client timed out.
const APPLY_TIMED_OUT: &str = "apply failed: failed to create the repository: Put \"https://artifactory.example.com/artifactory/api/repositories/libs\": context deadline exceeded (Client.Timeout exceeded while awaiting headers)";

/// crossplane-runtime's observe-only error for a key Artifactory does not have
/// (`pkg/reconciler/managed/reconciler.go:65,1203-1205` @ v2.5.0-rc.0).
const NOT_FOUND: &str = "observe failed: external resource does not exist";

fn failed_apply(api: Api, repository_exists: bool) -> Live {
    let live = api
        .local_resource("libs", Some("creating"), Some(json!(["Observe", "Create"])))
        .create_called();
    let live = if repository_exists {
        live.observed_existing()
    } else {
        live.condition("Ready", "False", "Creating", None)
            .condition("Synced", "True", "ReconcileSuccess", None)
    };
    live.condition(
        "LastAsyncOperation",
        "False",
        "ApplyFailure",
        Some(APPLY_TIMED_OUT),
    )
    .condition("AsyncOperation", "True", "Finished", None)
}

#[tokio::test]
async fn a_create_that_failed_is_said_and_one_that_made_the_repository_is_held() {
    let mut function = Function::start().await;
    for api in APIS {
        // The repository is not there: the provider tries again, and the claim is told why the
        // entry stays in creating, once.
        let request = || {
            api.request(spec(json!([libs()])))
                .observed("libs", failed_apply(api, false).value())
        };
        let response = function.call(request()).await;
        let resources = validated(api, &response);
        assert_eq!(policies(&resources["libs"]), &json!(["Observe", "Create"]));
        let item = &status_repositories(&response)[0];
        assert_eq!(item["phase"], "creating");
        let message = warning(&response, "CreateFailed");
        assert_has(
            &message,
            "repository libs (key libs): the provider's create failed",
        );
        assert_has(&message, "context deadline exceeded");
        let said = item["warnings"][0].clone();
        assert_has(said.as_str().unwrap(), "context deadline exceeded");
        let previous =
            json!({"repositories": [{"name": "libs", "phase": "creating", "warnings": [said]}]});
        let response = function.call(with_status(previous, request())).await;
        assert!(results(&response, "CreateFailed").is_empty(), "said once");
        assert_eq!(status_repositories(&response)[0]["phase"], "creating");

        // The repository is there: the failed create may have made it, or another actor did;
        // the function cannot tell, so the key is held and an import offered.
        let response = function
            .call(
                api.request(spec(json!([libs()])))
                    .observed("libs", failed_apply(api, true).value()),
            )
            .await;
        let resources = validated(api, &response);
        assert_eq!(policies(&resources["libs"]), &json!(["Observe"]));
        assert_eq!(origin(&resources["libs"]), "taken");
        assert_eq!(status_repositories(&response)[0]["phase"], "held");
        assert_eq!(status_repositories(&response)[0]["ready"], false);
        let message = warning(&response, "RepositoryHeld");
        assert_has(&message, "cannot tell whether the failed create made it");
        assert_has(&message, "set import: true on the entry");
        assert!(results(&response, "CreateFailed").is_empty());
    }
}

#[tokio::test]
async fn a_held_key_whose_repository_was_deleted_is_created_again() {
    let mut function = Function::start().await;
    for api in APIS {
        let gone = api
            .local_resource("libs", Some("taken"), Some(json!(["Observe"])))
            .condition("Ready", "False", "Unavailable", None)
            .condition("Synced", "False", "ReconcileError", Some(NOT_FOUND))
            .value();
        let previous = json!({"repositories": [{"name": "libs", "phase": "held"}]});
        let response = function
            .call(with_status(
                previous,
                api.request(spec(json!([libs()]))).observed("libs", gone),
            ))
            .await;
        let resources = validated(api, &response);
        assert_eq!(policies(&resources["libs"]), &json!(["Observe", "Create"]));
        assert_eq!(origin(&resources["libs"]), "creating");
        assert_eq!(status_repositories(&response)[0]["phase"], "creating");

        // The create the provider then makes is judged on its own: the refusal that held the
        // key is older than the new attempt (`Observe` left it, `api.go:127` overwrites it
        // only when the new apply ends), so it neither holds the entry nor counts as a failure.
        let recreating = api
            .local_resource("libs", Some("creating"), Some(json!(["Observe", "Create"])))
            .create_called()
            .annotate(
                "crossplane.io/external-create-pending",
                "2026-11-01T10:05:00Z",
            )
            .annotate(
                "crossplane.io/external-create-succeeded",
                "2026-11-01T10:05:00Z",
            )
            .condition("Ready", "False", "Creating", None)
            .condition("Synced", "True", "ReconcileSuccess", None)
            .condition(
                "LastAsyncOperation",
                "False",
                "ApplyFailure",
                Some(KEY_EXISTS),
            )
            .condition("AsyncOperation", "False", "Ongoing", None)
            .value();
        let response = function
            .call(
                api.request(spec(json!([libs()])))
                    .observed("libs", recreating),
            )
            .await;
        assert_eq!(status_repositories(&response)[0]["phase"], "creating");
        assert!(results(&response, "RepositoryHeld").is_empty());
        assert!(results(&response, "CreateFailed").is_empty());
    }
}

#[tokio::test]
async fn an_entry_whose_policies_cannot_create_is_told_so_once() {
    let mut function = Function::start().await;
    for api in APIS {
        let entry = json!({"name": "libs", "rclass": "local", "packageType": "maven",
            "managementPolicies": ["Observe"]});
        let missing = api
            .local_resource("libs", Some("creating"), Some(json!(["Observe"])))
            .condition("Ready", "False", "Unavailable", None)
            .condition("Synced", "False", "ReconcileError", Some(NOT_FOUND))
            .value();
        let request = || {
            api.request(spec(json!([entry.clone()])))
                .observed("libs", missing.clone())
        };
        let response = function.call(request()).await;
        let resources = validated(api, &response);
        assert_eq!(policies(&resources["libs"]), &json!(["Observe"]));
        let message = warning(&response, "CannotCreate");
        assert_has(
            &message,
            "cannot create it: add Create to its managementPolicies",
        );
        let said = status_repositories(&response)[0]["warnings"][0].clone();
        let previous =
            json!({"repositories": [{"name": "libs", "phase": "creating", "warnings": [said]}]});
        let response = function.call(with_status(previous, request())).await;
        assert!(results(&response, "CannotCreate").is_empty(), "said once");
    }
}

#[tokio::test]
async fn retiring_a_resource_whose_policies_list_delete_orphans_it() {
    let mut function = Function::start().await;
    for api in APIS {
        let own = json!(["Observe", "Create", "Update", "Delete"]);
        let removed = api
            .local_resource("old", Some("created"), Some(own))
            .created()
            .value();
        let response = function
            .call(api.request(spec(json!([libs()]))).observed("old", removed))
            .await;
        let resources = validated(api, &response);
        let old = &resources["old"];
        assert_eq!(
            policies(old),
            &json!(["Observe", "Create", "Update"]),
            "{}",
            api.folder
        );
        if !api.namespaced {
            assert_eq!(old["spec"]["deletionPolicy"], "Orphan");
        }
        let retiring = &response_status(&response)["retiring"][0];
        assert_eq!(retiring["deletion"], "Orphan");
    }
}

#[tokio::test]
async fn the_crds_default_provider_config_is_no_change() {
    let mut function = Function::start().await;
    for api in APIS {
        let live = api
            .local_resource("libs", Some("created"), None)
            .created()
            .spec("providerConfigRef", api.provider_config("default"))
            .value();
        let previous = json!({"repositories": [{"name": "libs", "phase": "managed"}]});
        let response = function
            .call(with_status(
                previous,
                api.request(spec(json!([libs()]))).observed("libs", live),
            ))
            .await;
        assert!(
            results(&response, "ConsequentialChange").is_empty(),
            "{}: {:#?}",
            api.folder,
            response.results
        );
    }
}

fn response_status(response: &RunFunctionResponse) -> Value {
    let composite = response
        .desired
        .as_ref()
        .unwrap()
        .composite
        .as_ref()
        .unwrap();
    composite.resource.as_ref().unwrap().clone().into_value()["status"].clone()
}

// ---- a move carries its key and its origin (issue 54, items 1 and 2) --------------------

/// The old resource of a move as it retires: what its origin says it was, as observed.
fn retiring_resource(api: Api, origin: &str) -> Value {
    let live = match origin {
        "created" => api
            .local_resource("libs", Some(origin), None)
            .created()
            .orphaned(api),
        // Held or adopted: observed only, never created by us.
        _ => api
            .local_resource("libs", Some(origin), Some(json!(["Observe"])))
            .observed_existing(),
    };
    live.value()
}

/// An entry renamed with its key kept: its new resource observes the repository meanwhile,
/// holding the key for the claim (its key label is what another composite's lookup meets), and
/// carries the old resource's origin; once the old resource is gone, that origin decides, as
/// at any call: a key the claim created is managed, a held key stays held (renaming a held
/// entry takes nothing over), an import stays adopted until its takeover is previewed.
#[tokio::test]
async fn a_moved_key_carries_what_it_was_to_the_claim() {
    let mut function = Function::start().await;
    let renamed =
        || json!([{"name": "libs-new", "rclass": "local", "packageType": "maven", "key": "libs"}]);
    for api in APIS {
        for (was, carried, then) in [
            ("created", "moved", "managed"),
            ("taken", "taken", "held"),
            ("imported", "imported", "adopted"),
        ] {
            let case = format!("{} {was}", api.folder);
            let response = function
                .call(
                    api.request(spec(renamed()))
                        .observed("libs", retiring_resource(api, was)),
                )
                .await;
            let resources = validated(api, &response);
            let moving = &resources["libs-new"];
            assert_eq!(policies(moving), &json!(["Observe"]), "{case}");
            assert_eq!(origin(moving), carried, "{case}");
            assert_eq!(
                moving["metadata"]["labels"]["artifactory.fn.crossplane.io/key"], "libs",
                "{case}"
            );
            assert_eq!(
                status_repositories(&response)[0]["phase"],
                "moving",
                "{case}"
            );
            assert_eq!(results(&response, "RepositoryMoving").len(), 1, "{case}");

            // The old resource gone, the new one observed as the provider shows it.
            let observed = api
                .local_resource("libs", Some(carried), Some(json!(["Observe"])))
                .observed_existing()
                .value();
            let previous = json!({"repositories": [{"name": "libs-new", "phase": "moving"}]});
            let response = function
                .call(with_status(
                    previous,
                    api.request(spec(renamed())).observed("libs-new", observed),
                ))
                .await;
            let resources = validated(api, &response);
            assert_eq!(status_repositories(&response)[0]["phase"], then, "{case}");
            let own = if then == "managed" {
                Value::Null
            } else {
                json!(["Observe"])
            };
            assert_eq!(policies(&resources["libs-new"]), &own, "{case}");
        }
    }
}

/// Issue 54, item 1, as written there: `a-libs` under project `team1`, then `libs` under
/// `team1-a` (the same key, so a move), then project `payments`: `libs` is never given
/// `payments-libs`, a repository another team made. Its moving resource holds
/// `team1-a-libs`, so the new project key is a key change, refused; before that resource is
/// observed, `payments-libs` is only a new entry's, created or held by the guard.
#[tokio::test]
async fn a_move_hands_over_only_the_key_that_moved() {
    let mut function = Function::start().await;
    let libs_under = |project: &str, name: &str| json!({"projectKey": project, "repositories": [{"name": name, "rclass": "local", "packageType": "maven"}]});
    for api in APIS {
        let a_libs = api
            .local_resource("team1-a-libs", Some("created"), None)
            .created()
            .value();
        // Step 2: the move.
        let response = function
            .call(
                api.request(libs_under("team1-a", "libs"))
                    .observed("a-libs", a_libs.clone()),
            )
            .await;
        let resources = validated(api, &response);
        assert_eq!(
            resources["libs"]["metadata"]["annotations"]["crossplane.io/external-name"],
            "team1-a-libs"
        );
        assert_eq!(policies(&resources["libs"]), &json!(["Observe"]));
        let moving = api
            .local_resource("team1-a-libs", Some("moved"), Some(json!(["Observe"])))
            .observed_existing()
            .value();
        let previous = json!({"repositories": [{"name": "libs", "phase": "moving"}]});

        // Step 3, the moving resource observed: a key change, refused.
        let response = function
            .call(with_status(
                previous.clone(),
                api.request(libs_under("payments", "libs"))
                    .observed("a-libs", a_libs.clone())
                    .observed("libs", moving),
            ))
            .await;
        let fatal = fatal_message(&response).expect("a key change is refused");
        assert_has(&fatal, "team1-a-libs");

        // Step 3 before the moving resource is observed: a new entry under the guard.
        let response = function
            .call(with_status(
                previous,
                api.request(libs_under("payments", "libs"))
                    .observed("a-libs", a_libs),
            ))
            .await;
        let resources = validated(api, &response);
        let libs = &resources["libs"];
        assert_eq!(
            libs["metadata"]["annotations"]["crossplane.io/external-name"],
            "payments-libs"
        );
        assert_eq!(
            policies(libs),
            &json!(["Observe", "Create"]),
            "{}",
            api.folder
        );
        assert_eq!(origin(libs), "creating");
    }
}

// ---- a name reused while its old resource goes (issue 54, item 8) -------------------------

/// An entry removed and another added under its name while the old resource still retires:
/// the new entry waits, said once, and the old one goes on being released; not a refused
/// change of key or kind.
#[tokio::test]
async fn a_name_reused_while_its_resource_retires_waits_for_it() {
    let mut function = Function::start().await;
    for api in APIS {
        let old = api
            .local_resource("team1-libs", Some("created"), None)
            .created()
            .orphaned(api)
            .value();
        let previous = json!({"retiring": [{"name": "libs", "key": "team1-libs"}]});
        let response = function
            .call(with_status(
                previous,
                api.request(spec(json!([libs()]))).observed("libs", old),
            ))
            .await;
        assert_eq!(fatal_message(&response), None, "{}", api.folder);
        let resources = validated(api, &response);
        assert!(!resources.contains_key("libs"), "{resources:?}");
        assert_eq!(status_repositories(&response)[0]["phase"], "waiting");
        let waiting = results(&response, "RepositoryWaiting");
        assert_eq!(waiting.len(), 1, "{:#?}", response.results);
        assert_has(&waiting[0].message, "(key team1-libs) left the spec");
        assert_eq!(results(&response, "RepositoryReleased").len(), 1);
    }
}

/// A resource of the entry's name that is being deleted is not the entry's: its finalizer
/// acts with the deletion it has, so rendering the entry's own policies onto it would let the
/// finalizer delete a repository the claim lists. The entry waits until it is gone.
#[tokio::test]
async fn an_entry_waits_while_a_resource_of_its_name_is_deleted() {
    let mut function = Function::start().await;
    for api in APIS {
        let mut going = api
            .local_resource("libs", Some("creating"), Some(json!(["Observe", "Create"])))
            .created()
            .value();
        going["metadata"]["deletionTimestamp"] = json!("2026-11-01T10:00:00Z");
        let response = function
            .call(api.request(spec(json!([libs()]))).observed("libs", going))
            .await;
        let resources = validated(api, &response);
        assert!(!resources.contains_key("libs"), "{resources:?}");
        assert_eq!(status_repositories(&response)[0]["phase"], "waiting");
    }
}

/// A create that fails again in the same words keeps the first failure's time on
/// `LastAsyncOperation` (crossplane-runtime keeps an equal condition as it was), while
/// `AsyncOperation` Finished moves at every apply (upjet `external.go:238-240`, `api.go:142-143`
/// @ v2.2.0): the failure is read as the latest create's, not left `creating` in silence.
#[tokio::test]
async fn a_create_that_fails_again_in_the_same_words_is_read() {
    let mut function = Function::start().await;
    for api in APIS {
        let again = |finished: &str| {
            let mut live = api
                .local_resource("libs", Some("creating"), Some(json!(["Observe", "Create"])))
                .annotate(
                    "crossplane.io/external-create-pending",
                    "2026-11-01T10:05:00Z",
                )
                .annotate(
                    "crossplane.io/external-create-succeeded",
                    "2026-11-01T10:05:00Z",
                )
                .observed_existing()
                .condition(
                    "LastAsyncOperation",
                    "False",
                    "ApplyFailure",
                    Some(APPLY_TIMED_OUT),
                )
                .condition("AsyncOperation", "True", "Finished", None)
                .value();
            live["status"]["conditions"][3]["lastTransitionTime"] = json!(finished);
            api.request(spec(json!([libs()]))).observed("libs", live)
        };
        // An apply finished after the latest create began: its failure is that create's.
        let response = function.call(again("2026-11-01T10:06:00Z")).await;
        assert_held(&response, api, "the provider's create failed");
        // None has since: the failure is an earlier attempt's, and the create goes on.
        let response = function.call(again("2026-11-01T10:00:00Z")).await;
        assert_eq!(status_repositories(&response)[0]["phase"], "creating");
    }
}

/// A held key deleted by its owner: crossplane-runtime leaves `Ready` as it was when `Observe`
/// fails, so the resource shows a stale `Ready` True beside "external resource does not
/// exist". The key is free: the entry goes back to `creating`, and one whose own policies
/// cannot create is told so, instead of turning between `held` and `creating`.
#[tokio::test]
async fn a_held_key_deleted_by_its_owner_is_free_despite_a_stale_ready() {
    let mut function = Function::start().await;
    for api in APIS {
        let gone = |origin: &str| {
            api.local_resource("libs", Some(origin), Some(json!(["Observe"])))
                .condition("Ready", "True", "Available", None)
                .condition("Synced", "False", "ReconcileError", Some(NOT_FOUND))
                .value()
        };
        let entry = json!({"name": "libs", "rclass": "local", "packageType": "maven", "managementPolicies": ["Observe"]});
        for origin in ["taken", "creating"] {
            let response = function
                .call(
                    api.request(spec(json!([entry.clone()])))
                        .observed("libs", gone(origin)),
                )
                .await;
            let case = format!("{} {origin}", api.folder);
            assert_eq!(
                status_repositories(&response)[0]["phase"],
                "creating",
                "{case}"
            );
            assert_has(&warning(&response, "CannotCreate"), NOT_FOUND);
        }
    }
}

// ---- imports are not new (issue 54, item 7) -----------------------------------------------

/// A claim of imports, a virtual among them that lists the others: the virtual is adopted at
/// the first call (observed only, it aggregates nothing it did not already), nothing is called
/// new, and the claim is adopting, not creating; an import whose preview is empty is news, not a
/// warning.
#[tokio::test]
async fn a_claim_of_imports_is_adopting_not_creating() {
    let mut function = Function::start().await;
    let entries = json!([
        {"name": "local", "key": "libs-release-local", "rclass": "local", "packageType": "maven", "import": true},
        {"name": "release", "key": "libs-release", "rclass": "virtual", "packageType": "maven", "import": true,
         "repositories": ["local"], "defaultDeploymentRepo": "local"},
    ]);
    for api in APIS {
        let response = function.call(api.request(spec(entries.clone()))).await;
        let resources = validated(api, &response);
        let case = api.folder;
        assert_eq!(
            policies(&resources["release"]),
            &json!(["Observe"]),
            "{case}"
        );
        let phases: Vec<Value> = status_repositories(&response)
            .iter()
            .map(|r| r["phase"].clone())
            .collect();
        assert_eq!(phases, [json!("adopted"), json!("adopted")], "{case}");
        let said = results(&response, "RepositoriesCreating");
        assert_eq!(said.len(), 1, "{case}: {:#?}", response.results);
        assert_eq!(
            said[0].message,
            "adopting 2 repositories: libs-release-local (local maven), libs-release (virtual maven)"
        );
        assert!(results(&response, "RepositoryWaiting").is_empty(), "{case}");
        let condition = &response.conditions[0];
        assert_eq!(condition.reason, "Adopting", "{case}");

        // Both observed, nothing to change: the previews are said as Normal results.
        let local = api
            .local_resource(
                "libs-release-local",
                Some("imported"),
                Some(json!(["Observe"])),
            )
            .observed_existing()
            .at_provider(json!({}))
            .value();
        let response = function
            .call(
                api.request(spec(json!([entries[0].clone()])))
                    .observed("local", local),
            )
            .await;
        let previews = results(&response, "TakeoverPreview");
        assert_eq!(previews.len(), 1, "{case}: {:#?}", response.results);
        assert_eq!(previews[0].severity, Severity::Normal as i32, "{case}");
        assert_has(&previews[0].message, "would change nothing");
    }
}

/// A new virtual that waits for members names them by key, once each, though it lists a
/// member and deploys to it too.
#[tokio::test]
async fn a_waiting_virtual_names_its_members_by_key_once() {
    let mut function = Function::start().await;
    let entries = json!([
        {"name": "local", "key": "libs-release-local", "rclass": "local", "packageType": "maven"},
        {"name": "release", "rclass": "virtual", "packageType": "maven",
         "repositories": ["local"], "defaultDeploymentRepo": "local"},
    ]);
    for api in APIS {
        let response = function.call(api.request(spec(entries.clone()))).await;
        let waiting = results(&response, "RepositoryWaiting");
        assert_eq!(waiting.len(), 1, "{}: {:#?}", api.folder, response.results);
        assert_has(
            &waiting[0].message,
            "created or adopted its members libs-release-local, so that",
        );
    }
}

// ---- the migration switch (issue 54, item 5) ----------------------------------------------

/// `neverDelete: true` renders every repository so that no deletion reaches Artifactory,
/// whatever the entries say (their own `deletionPolicy: Delete`, `Delete` in their policies,
/// the default `*`), retires removed entries orphaned first even with deletion protection off,
/// and shows itself in the composite's status.
#[tokio::test]
async fn never_delete_renders_nothing_that_can_delete() {
    let mut function = Function::start().await;
    for api in APIS {
        let case = api.folder;
        // Deletion asked for explicitly where the API has a deletion policy; `*` elsewhere.
        let mut libs = libs();
        if !api.namespaced {
            libs["deletionPolicy"] = json!("Delete");
        }
        let entries = json!([libs, {"name": "docs", "rclass": "local", "packageType": "maven",
            "managementPolicies": ["Observe", "Create", "Update", "Delete"]}]);
        let managed = |key: &str| {
            api.local_resource(key, Some("created"), None)
                .created()
                .value()
        };
        let removed = api
            .local_resource("old", Some("created"), None)
            .created()
            .value();
        let fields = json!({"neverDelete": true, "deletionProtection": false});
        let response = function
            .call(
                api.request_with(spec(entries.clone()), fields)
                    .observed("libs", managed("libs"))
                    .observed("docs", managed("docs"))
                    .observed("old", removed),
            )
            .await;
        let resources = validated(api, &response);
        for name in ["libs", "docs"] {
            let resource = &resources[name];
            let policies = policies(resource).as_array().expect("policies spelled out");
            assert!(
                !policies.iter().any(|p| p == "Delete" || p == "*"),
                "{case} {name}: {resource:#}"
            );
            if !api.namespaced {
                assert_eq!(
                    resource["spec"]["deletionPolicy"], "Orphan",
                    "{case} {name}"
                );
            }
        }
        // The removed entry is orphaned first, as with deletion protection.
        let old = &resources["old"];
        if api.namespaced {
            assert!(!policies(old)
                .as_array()
                .unwrap()
                .iter()
                .any(|p| p == "Delete" || p == "*"));
        } else {
            assert_eq!(old["spec"]["deletionPolicy"], "Orphan", "{case}");
        }
        let status = response_status(&response);
        assert_eq!(status["neverDelete"], true, "{case}");
        for item in status["repositories"].as_array().unwrap() {
            assert_eq!(item["deletion"], "Orphan", "{case}: {item:#}");
        }
        assert_eq!(status["retiring"][0]["name"], "old", "{case}");
        assert!(results(&response, "RepositoryDeleted").is_empty(), "{case}");

        // Switched off again: the entries' own deletion comes back, and it is said.
        let orphaned = api
            .local_resource("libs", Some("created"), None)
            .created()
            .orphaned(api)
            .value();
        let response = function
            .call(
                api.request(spec(entries.clone()))
                    .observed("libs", orphaned)
                    .observed("docs", managed("docs")),
            )
            .await;
        assert_eq!(response_status(&response)["neverDelete"], Value::Null);
        assert_has(
            &warning(&response, "ConsequentialChange"),
            "repository libs (key libs): deleting the entry or the claim now deletes the repository",
        );
    }
}

// ---- issue 56: the provider's own words, no secret in a status -------------------------
//
// Observed resources shaped as upjet's Terraform-CLI client writes them (section 8). That client
// refuses a replacement in `Observe`: the Terraform configuration it writes keeps the resource
// (`lifecycle.prevent_destroy`, upjet `pkg/terraform/files.go:178-180` @ v2.2.0), so Terraform's
// plan fails, "Instance cannot be destroyed", wrapped "cannot run plan: plan failed: …"
// (`pkg/controller/external.go:35,350-353`, `pkg/terraform/errors/errors.go:68,151`) and
// "observe failed: …" by crossplane-runtime.

#[tokio::test]
async fn a_replacement_is_refused_in_the_words_this_provider_s_client_writes() {
    let mut function = Function::start().await;
    for api in APIS {
        let live = Live::new(api.remote_helm, "charts", Some("created"), None).created();
        let message = replacement_refusal(&mut function, api, live).await;
        assert_has(&message, "which the provider refuses to apply: its Terraform configuration keeps the repository (lifecycle.prevent_destroy), so the managed resource would stop syncing with \"observe failed: cannot run plan: plan failed: Instance cannot be destroyed: Resource … has lifecycle.prevent_destroy set, but the plan calls for this resource to be destroyed\" in its Synced condition; it is [\"**\"] and the spec now gives [\"**/github.com/**\"]");
        assert!(
            !message.contains("diff contains fields that require resource replacement"),
            "not the words of upjet's no-fork clients: {message}"
        );
    }
}

/// A live remote URL with credentials and a token, as Artifactory returns it to the provider.
const SECRET_URL: &str = "https://bob:secret@upstream.example/path?token=abc123xyz";

/// What any reader of the claim may see of [`SECRET_URL`].
const MASKED_URL: &str = "https://***@upstream.example/path?token=***";

/// Asserts that no part of [`SECRET_URL`]'s secrets is anywhere in the response's bytes.
/// No secret of a live url in what the claim's readers read: the results, the conditions and
/// the composite (its status). The composed managed resources may hold the live url: their
/// `status.atProvider` has it as the provider read it, and a kept field (one the claim leaves
/// out) is rendered at that value.
fn assert_no_secret(response: &RunFunctionResponse, case: &str) {
    use prost::Message;
    let mut bytes = Vec::new();
    for result in &response.results {
        bytes.extend(result.encode_to_vec());
    }
    for condition in &response.conditions {
        bytes.extend(condition.encode_to_vec());
    }
    if let Some(composite) = response.desired.as_ref().and_then(|d| d.composite.as_ref()) {
        bytes.extend(composite.encode_to_vec());
    }
    for secret in ["bob", "secret", "abc123xyz"] {
        assert!(
            !bytes
                .windows(secret.len())
                .any(|window| window == secret.as_bytes()),
            "{case}: {secret:?} is in the response: {:#?}",
            response
        );
    }
}

#[tokio::test]
async fn a_live_url_s_secrets_are_in_no_preview_message_or_status() {
    let mut function = Function::start().await;
    for api in APIS {
        let case = api.folder;
        let live = Live::observed_import(
            api.remote_maven,
            "maven-central",
            json!({"url": SECRET_URL, "id": "maven-central"}),
        )
        .value();
        let entry = |url: Option<&str>, policies: Option<Value>| {
            let mut entry = json!({"name": "central", "rclass": "remote", "packageType": "maven",
                "key": "maven-central", "import": true});
            if let Some(url) = url {
                entry["url"] = json!(url);
            }
            if let Some(policies) = policies {
                entry["managementPolicies"] = policies;
            }
            entry
        };

        // Adopted: the preview quotes the live URL masked.
        let response = function
            .call(
                api.request(spec(json!([entry(
                    Some("https://upstream.example/path"),
                    None
                )])))
                .observed("central", live.clone()),
            )
            .await;
        validated(api, &response);
        let status = status_repositories(&response);
        assert_eq!(status[0]["phase"], "adopted", "{case}");
        assert_eq!(
            status[0]["takeover"],
            json!([{"path": "spec.forProvider.url", "live": format!("\"{MASKED_URL}\""),
                "claim": "\"https://upstream.example/path\""}]),
            "{case}"
        );
        warning(&response, "TakeoverPreview");
        assert_no_secret(&response, case);

        // Taken over: the warning lists the change, masked.
        let previous = json!({"repositories": [{"name": "central", "phase": "adopted", "takeoverChanges": 1}]});
        let response = function
            .call(with_status(
                previous.clone(),
                api.request(spec(json!([entry(
                    Some("https://upstream.example/path"),
                    Some(json!(["*"]))
                )])))
                .observed("central", live.clone()),
            ))
            .await;
        validated(api, &response);
        assert_eq!(status_repositories(&response)[0]["phase"], "takingOver");
        let message = warning(&response, "TakingOver");
        assert_has(
            &message,
            &format!("spec.forProvider.url: \"{MASKED_URL}\" -> \"https://upstream.example/path\""),
        );
        assert_no_secret(&response, case);

        // Taken over without a url: the live one is kept in the managed resource, as its
        // status.atProvider has it, and said nowhere the claim's readers read.
        let response = function
            .call(with_status(
                previous,
                api.request(spec(json!([entry(None, Some(json!(["*"])))])))
                    .observed("central", live),
            ))
            .await;
        let resources = validated(api, &response);
        assert_eq!(
            resources["central"]["spec"]["forProvider"]["url"],
            SECRET_URL
        );
        assert_eq!(status_repositories(&response)[0]["takeover"], json!([]));
        assert_no_secret(&response, case);
    }
}

#[tokio::test]
async fn a_provider_message_quoting_a_url_is_repeated_masked() {
    let mut function = Function::start().await;
    let failure = format!("apply failed: failed to create the repository: Put \"{SECRET_URL}\": context deadline exceeded (Client.Timeout exceeded while awaiting headers)");
    for api in APIS {
        // Section 8's failed create, its message quoting the URL it called.
        let mut live = failed_apply(api, false).value();
        for condition in live["status"]["conditions"].as_array_mut().unwrap() {
            if condition["type"] == "LastAsyncOperation" {
                condition["message"] = json!(failure);
            }
        }
        let response = function
            .call(api.request(spec(json!([libs()]))).observed("libs", live))
            .await;
        validated(api, &response);
        let message = warning(&response, "CreateFailed");
        assert_has(
            &message,
            &format!("Put \"{MASKED_URL}\": context deadline exceeded"),
        );
        let said = &status_repositories(&response)[0]["warnings"][0];
        assert_has(said.as_str().unwrap(), MASKED_URL);
        assert_no_secret(&response, api.folder);
    }
}

// ---- A takeover changes exactly what its preview lists (issue 56) ----------

/// The package types the exactness test takes over: one of each family, in every class that
/// has it (a class without the package type is skipped, and the test counts what it covered).
const FAMILIES: [&str; 10] = [
    "maven", "docker", "oci", "npm", "pypi", "helm", "debian", "generic", "go", "nuget",
];

/// `spec.forProvider`'s properties of `kind` in the API's CRDs, by name.
fn for_provider_properties(api: Api, kind: (&str, &str)) -> Map<String, Value> {
    let documents = support::crd::provider_crd_documents(api.folder).expect("the CRDs");
    let (group, version) = kind.0.split_once('/').unwrap();
    let crd = documents
        .iter()
        .map(|(_, crd)| crd)
        .find(|crd| crd["spec"]["group"] == group && crd["spec"]["names"]["kind"] == kind.1)
        .unwrap_or_else(|| panic!("no CRD of {kind:?}"));
    let served = crd["spec"]["versions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"] == version)
        .unwrap();
    served["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["forProvider"]
        ["properties"]
        .as_object()
        .cloned()
        .unwrap_or_default()
}

/// Whether a field holds or names a credential, or refers to another resource: the test gives
/// such fields no live value (Artifactory returns no credential; references are the claim's).
fn neither_credential_nor_reference(field: &str) -> bool {
    let lower = field.to_ascii_lowercase();
    let credential = ["password", "secret", "token", "certificate"]
        .iter()
        .any(|word| lower.contains(word));
    let reference =
        lower.ends_with("ref") || lower.ends_with("refs") || lower.ends_with("selector");
    !credential && !reference
}

/// A live value for every scalar field (and list of strings) of the kind, differing from the
/// Terraform defaults where it can: every other switch and number at its zero value (`false`,
/// `0`, which upjet's late initialisation skips), the others at a value of their own; an enum at
/// its last value. Objects and lists of objects are left out, but for a federated repository's
/// `member` list.
fn live_settings(properties: &Map<String, Value>) -> Map<String, Value> {
    let mut live = Map::new();
    for (i, (name, schema)) in properties.iter().enumerate() {
        let zero = i % 2 == 0;
        let value = match (schema["type"].as_str(), schema["enum"].as_array()) {
            (_, Some(values)) => values.last().cloned(),
            (Some("boolean"), _) if neither_credential_nor_reference(name) || !zero => {
                Some(json!(!zero))
            }
            (Some("boolean"), _) => Some(json!(false)),
            (_, _) if !neither_credential_nor_reference(name) => None,
            (Some("integer" | "number"), _) => Some(json!(if zero { 0 } else { 7 })),
            (Some("string"), _) if name == "url" => Some(json!("https://live.example/upstream")),
            // A federated repository's members, which the provider requires to update.
            (Some("array"), _) if name == "member" => Some(json!([
                {"url": "https://live.example/artifactory/legacy", "enabled": true}
            ])),
            (Some("string"), _) => Some(json!(format!("live {name}"))),
            (Some("array"), _) if schema["items"]["type"] == "string" => {
                Some(json!([format!("live-{name}")]))
            }
            _ => None,
        };
        if let Some(value) = value {
            live.insert(name.clone(), value);
        }
    }
    live
}

/// The fields the provider model of the lifecycle simulation (upjet's Terraform-CLI client,
/// `simulator::provider`) changes at one Observe and apply of a taken-over repository: with
/// `LateInitialize` in the policies the omitted fields whose live value is not a zero value are
/// copied into the spec first, then Terraform plans the spec over the live state and an omitted
/// field goes to its default, which the test takes to differ from any live value (it does not
/// rely on a table of defaults).
fn provider_changes(
    rendered: &Map<String, Value>,
    live: &Map<String, Value>,
    properties: &Map<String, Value>,
    late_initialize: bool,
) -> BTreeSet<String> {
    let live: BTreeMap<String, Value> = live.clone().into_iter().collect();
    let mut spec = Value::Object(rendered.clone());
    if late_initialize {
        provider::late_initialise(&mut spec, &live);
    }
    let unknown_defaults = properties.keys().map(|name| (name.as_str(), None));
    provider::planned_changes(&spec, &live, unknown_defaults)
}

fn previewed_fields(response: &RunFunctionResponse) -> BTreeSet<String> {
    status_repositories(response)[0]["takeover"]
        .as_array()
        .unwrap()
        .iter()
        .map(|change| {
            let path = change["path"].as_str().unwrap();
            path.strip_prefix("spec.forProvider.").unwrap().to_owned()
        })
        .collect()
}

/// Issue 56: for every class and a package type of each family, an imported repository whose
/// live settings differ from the defaults (zero values included) is previewed, taken over with
/// and without `LateInitialize`, and managed after: the provider model changes exactly the
/// fields the preview lists (here the claim's description), the takeover renders what the
/// preview showed, and once managed the fields the claim leaves out stay as the takeover wrote
/// them when Artifactory changes one outside.
#[tokio::test]
async fn every_kind_taken_over_changes_exactly_what_its_preview_lists() {
    let mut function = Function::start().await;
    let api = CLUSTER;
    let mut covered = Vec::new();
    for rclass in ["local", "remote", "virtual", "federated"] {
        for package_type in FAMILIES {
            let key = format!("legacy-{rclass}-{package_type}");
            let entry = |policies: Option<Value>| {
                let mut entry = json!({"name": "legacy", "rclass": rclass, "packageType": package_type,
                    "key": key, "import": true, "description": "claimed description"});
                if let Some(policies) = policies {
                    entry["managementPolicies"] = policies;
                }
                entry
            };
            // The kind the entry renders, where the class has the package type.
            let first = function.call(api.request(spec(json!([entry(None)])))).await;
            if fatal_message(&first).is_some() {
                continue;
            }
            let resource = &desired_resources(&first)["legacy"];
            let kind = (
                resource["apiVersion"].as_str().unwrap().to_owned(),
                resource["kind"].as_str().unwrap().to_owned(),
            );
            let kind = (kind.0.as_str(), kind.1.as_str());
            let properties = for_provider_properties(api, kind);
            let mut live = live_settings(&properties);
            live.insert("description".into(), json!("live description"));
            let mut at_provider = Value::Object(live.clone());
            at_provider["id"] = json!(key);
            let case = format!("{rclass} {package_type} ({})", kind.1);

            // Adopted: the preview.
            let observed = Live::observed_import(kind, &key, at_provider.clone()).value();
            let adopted = function
                .call(
                    api.request(spec(json!([entry(None)])))
                        .observed("legacy", observed.clone()),
                )
                .await;
            assert_not_fatal(&adopted, &case);
            let rendered = validated(api, &adopted)["legacy"]["spec"]["forProvider"]
                .as_object()
                .cloned()
                .unwrap();
            let previewed = previewed_fields(&adopted);
            assert!(previewed.contains("description"), "{case}: {previewed:?}");
            assert!(
                !rendered.contains_key("id"),
                "{case}: id is not a field of the kind"
            );

            // Taken over, with and without LateInitialize: what the provider changes is the
            // preview, and the takeover renders what the preview was computed from.
            let status = json!({"repositories": [{"name": "legacy", "phase": "adopted",
                "takeoverChanges": previewed.len()}]});
            for (policies, late_initialize) in [
                (json!(["*"]), true),
                (json!(["Observe", "Create", "Update", "Delete"]), false),
            ] {
                let taking = function
                    .call(with_status(
                        status.clone(),
                        api.request(spec(json!([entry(Some(policies.clone()))])))
                            .observed("legacy", observed.clone()),
                    ))
                    .await;
                assert_not_fatal(&taking, &case);
                let resources = validated(api, &taking);
                assert_eq!(
                    status_repositories(&taking)[0]["phase"],
                    "takingOver",
                    "{case}"
                );
                let taken = resources["legacy"]["spec"]["forProvider"]
                    .as_object()
                    .unwrap();
                assert_eq!(
                    taken, &rendered,
                    "{case}: the takeover renders what was previewed"
                );
                let changes = provider_changes(taken, &live, &properties, late_initialize);
                assert_eq!(
                    changes, previewed,
                    "{case}, {policies}: the provider changes exactly the preview"
                );
            }

            // Managed after the takeover: Artifactory holds what it wrote, and someone changes a
            // field the claim leaves out; the resource keeps what the takeover wrote.
            let mut applied = live.clone();
            applied.extend(rendered.clone());
            let outside = applied
                .iter()
                .find(|(name, value)| value.is_boolean() && *name != "description")
                .map(|(name, _)| name.clone());
            if let Some(name) = &outside {
                let flipped = !applied[name].as_bool().unwrap();
                applied.insert(name.clone(), json!(flipped));
            }
            let mut managed = Live::observed_import(kind, &key, Value::Object(applied))
                .spec("managementPolicies", json!(["*"]))
                .value();
            managed["spec"]["forProvider"] = Value::Object(rendered.clone());
            let later = function
                .call(with_status(
                    json!({"repositories": [{"name": "legacy", "phase": "takingOver"}]}),
                    api.request(spec(json!([entry(Some(json!(["*"])))])))
                        .observed("legacy", managed),
                ))
                .await;
            assert_not_fatal(&later, &case);
            assert_eq!(status_repositories(&later)[0]["phase"], "managed", "{case}");
            assert_eq!(
                validated(api, &later)["legacy"]["spec"]["forProvider"],
                Value::Object(rendered),
                "{case}: once managed, {outside:?} stays as the takeover wrote it"
            );
            covered.push(case);
        }
    }
    // Every class, and each family in at least one class.
    for rclass in ["local", "remote", "virtual", "federated"] {
        assert!(
            covered.iter().any(|c| c.starts_with(rclass)),
            "{rclass}: {covered:?}"
        );
    }
    for family in FAMILIES {
        assert!(
            covered.iter().any(|c| c.split(' ').nth(1) == Some(family)),
            "{family}: {covered:?}"
        );
    }
    eprintln!("{} kinds taken over: {covered:?}", covered.len());
}
