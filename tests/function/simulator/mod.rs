//! A deterministic simulation of the three parties around the function (issue 55), driven by
//! property tests: Crossplane's composite reconcile ([`crossplane`]), the provider
//! ([`provider`]: crossplane-runtime's managed reconciler and upjet's Terraform-CLI client,
//! the no-fork clients behind a switch) and Artifactory with outside actors
//! ([`artifactory`]). Random sequences of [`events`] run against it, and the six invariants of
//! issue 55 ([`invariants`]) are checked after every step; proptest shrinks a failure to a
//! minimal sequence.
//!
//! The model of the provider, with the upstream line each rule follows (in `provider.rs`):
//! - crossplane-runtime's managed reconciler: `Create` only when Observe finds nothing and the
//!   policies allow it (`pkg/reconciler/managed/reconciler.go:1355` @ v2.5.0-rc.0); the
//!   `crossplane.io/external-create-pending` annotation before it (`:1363`),
//!   `-succeeded` after it returns (`:1437`), RFC 3339 whole seconds (`pkg/meta/meta.go:301,
//!   320,339`), never removed; an incomplete create halts the reconciler (`:1104-1110`);
//!   observe-only policies on a missing repository give Synced False "observe failed:
//!   external resource does not exist" (`:65,71,1203-1205`); deletion honours `ShouldDelete`
//!   (`policies.go:229-268`); late-initialisation writes the spec and returns without Update
//!   (`:1479-1513`);
//! - upjet's Terraform-CLI client (`pkg/controller/external.go` @ v2.2.0): `Create` starts the
//!   apply and returns at once (`:384-385`); `AsyncOperation` False `Ongoing` while it runs
//!   (`:224-229`), True `Finished` after (`api.go:142-143`); the apply's outcome in
//!   `LastAsyncOperation` (True `Success`, or False `ApplyFailure` "apply failed: …",
//!   `workspace.go:173-176`), which Observe never clears (only the next apply's callback,
//!   `api.go:127`); `Ready` True `Available` and `status.atProvider` once Observe finds the
//!   repository (`:311-326`); late-initialisation of omitted fields with the zero-value filter
//!   (`pkg/resource/lateinit.go:108-139`); an omitted field planned back to its Terraform
//!   default on Update;
//! - the no-fork clients ([`provider::Client::NoFork`]): `AsyncCreateFailure` "async create
//!   failed: …" (`errors.go:193-198`), and a failed apply reset to `Success` once the live
//!   state equals the spec (`external_async_tfpluginfw.go:173-176`);
//! - the CRD's defaults on every write: `providerConfigRef: {name: default}`,
//!   `deletionPolicy: Delete`, `managementPolicies: ["*"]` (the namespaced kinds: no
//!   `deletionPolicy`, the reference's kind `ClusterProviderConfig`);
//! - Artifactory: keys compared without case; a create of a taken key refused with 400 "Case
//!   insensitive repository key already exists"; a create can fail before or after the
//!   repository was made.
//!
//! Each sequence draws the provider API (cluster, namespaced or flat; [`events::Api`]) and a
//! provider change to walk through ([`events::Change`], [`upgrade`]: the v0.7.1 renames, the
//! v0.7.0 group move, Crossplane v1 claims to v2 namespaced composites, one operator step per
//! `Upgrade` event as docs/upgrading.md gives them), and runs under both upjet clients, with
//! local maven, gradle and npm repositories and deletion protection on, beside a second claim
//! of another team that asks for one key of the same pool
//! ([`Second`]; each claim's invariants are checked with the other's writes seen as made
//! outside it). `cargo test` runs a few sequences ([`cases`]), and a few more over the gRPC
//! server; `SIMULATOR_CASES` and `SIMULATOR_STEPS` raise them (docs/development.md, "The
//! lifecycle simulator").

mod artifactory;
mod crossplane;
mod events;
mod invariants;
pub(crate) mod provider;
mod upgrade;

use artifactory::{Actor, Artifactory};
use crossplane::{Cluster, Transport};
use events::{Api, Event, Setup, DESCRIPTIONS, KEYS, NAMES, PACKAGE_TYPES, POLICIES, PROJECT_KEYS};
use invariants::{Armed, Checker, Invariant, Violation};
use proptest::prelude::*;
use provider::{Client, Fault, Provider};
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// One entry of the claim.
#[derive(Debug, Clone, PartialEq)]
struct Entry {
    name: String,
    package: &'static str,
    key: Option<String>,
    import: bool,
    policies: Option<&'static [&'static str]>,
    delete: Option<bool>,
    description: Option<&'static str>,
}

/// The claim's spec.
#[derive(Debug, Clone, PartialEq, Default)]
struct Claim {
    entries: Vec<Entry>,
    project_key: Option<&'static str>,
}

impl Claim {
    fn spec(&self) -> Value {
        let entries: Vec<Value> = self
            .entries
            .iter()
            .map(|e| {
                let mut entry =
                    json!({"name": e.name, "rclass": "local", "packageType": e.package});
                if let Some(key) = &e.key {
                    entry["key"] = json!(key);
                }
                if e.import {
                    entry["import"] = json!(true);
                }
                if let Some(policies) = e.policies {
                    entry["managementPolicies"] = json!(policies);
                }
                if let Some(delete) = e.delete {
                    entry["deletionPolicy"] = json!(if delete { "Delete" } else { "Orphan" });
                }
                if let Some(text) = e.description {
                    entry["description"] = json!(text);
                }
                entry
            })
            .collect();
        let mut spec = json!({"repositories": entries});
        if let Some(project) = self.project_key {
            spec["projectKey"] = json!(project);
        }
        spec
    }

    /// The key an entry has: its own, or the naming format's (`{projectKey}-{name}` with a
    /// project key, `{name}` without).
    fn key(&self, entry: &Entry) -> String {
        entry.key.clone().unwrap_or_else(|| match self.project_key {
            Some(project) => format!("{project}-{}", entry.name),
            None => entry.name.clone(),
        })
    }

    /// Names and keys unique (keys without case): a claim the author could apply.
    fn is_valid(&self) -> bool {
        let mut names = std::collections::HashSet::new();
        let mut keys = std::collections::HashSet::new();
        self.entries
            .iter()
            .all(|e| names.insert(e.name.clone()) && keys.insert(self.key(e).to_lowercase()))
    }
}

/// The simulated world: the claim, the cluster, the provider, Artifactory, a clock.
struct World {
    claim: Claim,
    /// The claim at the last call that was not fatal: an author whose edit is refused puts it
    /// back.
    accepted: Claim,
    input: Value,
    cluster: Cluster,
    provider: Provider,
    artifactory: Artifactory,
    checker: Checker,
    /// Whether an edit since the last call may be refused on purpose.
    may_be_refused: bool,
    /// Entry names removed since the last call: adding one back before the function has seen
    /// it gone is a change of that entry (its key or kind), which may be refused.
    removed: Vec<String>,
    seconds: u32,
    /// What happened, for a failure's report.
    trace: Vec<String>,
    transport: Transport,
    api: Api,
    second: Second,
    /// The steps of the sequence's provider change not taken yet.
    steps: std::collections::VecDeque<upgrade::Step>,
}

/// A second claim, team2's, in the same cluster and Artifactory: one entry, `libs`, asking
/// for a key of [`KEYS`] (or none), so that two claims ask for one key in every order. Its
/// invariants are checked as the first claim's are, each claim seeing the other's writes as
/// made outside it.
struct Second {
    key: Option<String>,
    /// The key at its last call that was not fatal.
    accepted: Option<String>,
    cluster: Cluster,
    checker: Checker,
    /// Its entry has `import: true` (set and removed by a provider change's steps).
    import: bool,
    /// Its Composition's input, once the first claim's has moved on to another Composition
    /// (a namespaced composite's); before, they share one.
    input: Option<Value>,
}

impl Second {
    fn spec(key: Option<&str>, import: bool) -> Value {
        let entries: Vec<Value> = key
            .map(|key| {
                let mut entry =
                    json!({"name": "libs", "rclass": "local", "packageType": "maven", "key": key});
                if import {
                    entry["import"] = json!(true);
                }
                entry
            })
            .into_iter()
            .collect();
        json!({ "repositories": entries })
    }
}

impl World {
    fn new(setup: Setup, client: Client) -> World {
        World::over(setup, client, Transport::Core)
    }

    fn over(setup: Setup, client: Client, transport: Transport) -> World {
        let mut input = json!({});
        if setup.bounded {
            // A namespaced composite has no claim: its own namespace bounds it.
            input["allowedKeys"] = json!(match setup.api {
                Api::Namespaced => "{namespace}-*",
                Api::Cluster | Api::Flat => "{claimNamespace}-*",
            });
        }
        if setup.api == Api::Flat {
            // A cluster of a release before v0.7.0 serves only the flat kinds: said in the input.
            input["providerApi"] = json!("flat");
        }
        if let Some(version) = upgrade::starting_version(setup.change) {
            input["providerVersion"] = json!(version);
        }
        World {
            claim: Claim::default(),
            accepted: Claim::default(),
            input,
            cluster: Cluster::new(setup.api, 0),
            provider: Provider {
                client,
                next_fault: None,
            },
            artifactory: Artifactory::default(),
            checker: Checker::new(setup.bounded.then_some("team1-")),
            may_be_refused: false,
            removed: Vec::new(),
            seconds: 0,
            trace: Vec::new(),
            transport,
            api: setup.api,
            second: Second {
                key: None,
                accepted: None,
                cluster: Cluster::new(setup.api, 1),
                checker: Checker::of_claim(1, setup.bounded.then_some("team2-")),
                import: false,
                input: None,
            },
            steps: upgrade::steps(setup.change),
        }
    }

    /// The clock, one second a step, as RFC 3339.
    fn now(&self) -> String {
        let s = self.seconds;
        format!(
            "2026-11-01T{:02}:{:02}:{:02}Z",
            10 + s / 3600,
            s / 60 % 60,
            s % 60
        )
    }

    /// Applies one event and checks the invariants; the violations found.
    fn step(&mut self, event: &Event) -> Vec<Violation> {
        self.seconds += 1;
        let mut found = Vec::new();
        // The namespaced API has no deletion policy: its authors use management policies.
        let no_deletion_policy =
            self.api == Api::Namespaced && matches!(event, Event::Deletion { .. });
        if event.edits_claim() && !no_deletion_policy {
            let mut claim = self.claim.clone();
            edit(&mut claim, event);
            if claim.is_valid() && claim != self.claim {
                let gone = self
                    .claim
                    .entries
                    .iter()
                    .filter(|e| !claim.entries.iter().any(|n| n.name == e.name))
                    .map(|e| e.name.clone());
                self.removed.extend(gone);
                let back = claim.entries.iter().any(|e| {
                    self.removed.contains(&e.name)
                        && !self.claim.entries.iter().any(|o| o.name == e.name)
                });
                if let Event::Describe { slot, .. } = event {
                    let entry = &claim.entries[slot % claim.entries.len()];
                    self.checker.claim_set(&claim.key(entry), "description");
                }
                self.claim = claim;
                let bounded = self.checker.allowed_prefix.is_some();
                self.may_be_refused |= event.may_be_refused(bounded) || back;
            }
        }
        match *event {
            Event::OutsideCreate { key, snapshots } => {
                let fields = BTreeMap::from([
                    ("description".to_owned(), json!("made by hand")),
                    ("handleSnapshots".to_owned(), json!(snapshots)),
                ]);
                self.artifactory
                    .create(Actor::Outside, events::outside_key(key), "maven", &fields);
            }
            Event::OutsideDelete { key } => {
                self.artifactory
                    .delete(Actor::Outside, events::outside_key(key));
            }
            Event::CreateFails { after_made } => {
                self.provider.next_fault = Some(if after_made {
                    Fault::AfterMade
                } else {
                    Fault::Before
                });
            }
            Event::Provider { slot } => {
                let names = self.managed_names();
                if !names.is_empty() {
                    let (claim, name) = names[slot % names.len()].clone();
                    self.reconcile_managed(claim, &name);
                }
            }
            Event::ProviderAll => {
                for (claim, name) in self.managed_names() {
                    self.reconcile_managed(claim, &name);
                }
            }
            Event::Composite if !self.composite_gone() => found.extend(self.reconcile_composite()),
            Event::Upgrade => {
                if let Some(step) = self.upgrade() {
                    self.trace.push(format!("  upgrade: {step:?}"));
                }
            }
            Event::SecondClaim { key } => self.second.key = key.map(|k| KEYS[k].to_owned()),
            Event::SecondComposite => found.extend(self.reconcile_second()),
            _ => {}
        }
        found.extend(self.checker.writes(&self.artifactory.writes));
        found.extend(self.second.checker.writes(&self.artifactory.writes));
        found.extend(self.checker.armed(&armed(&self.cluster)));
        found.extend(self.second.checker.armed(&armed(&self.second.cluster)));
        self.trace.push(format!("{event:?}"));
        found
    }

    /// Every managed resource, by its claim and composed resource name.
    fn managed_names(&self) -> Vec<(u8, String)> {
        let names = |cluster: &Cluster, claim: u8| -> Vec<(u8, String)> {
            cluster
                .resources
                .keys()
                .map(|n| (claim, n.clone()))
                .collect()
        };
        [names(&self.cluster, 0), names(&self.second.cluster, 1)].concat()
    }

    fn reconcile_managed(&mut self, claim: u8, name: &str) {
        let now = self.now();
        let cluster = match claim {
            0 => &mut self.cluster,
            _ => &mut self.second.cluster,
        };
        let Some(managed) = cluster.resources.get_mut(name) else {
            return;
        };
        if !self
            .provider
            .reconcile(managed, &mut self.artifactory, &now)
        {
            cluster.resources.remove(name);
        }
    }

    /// The second claim's composite reconcile: a fatal result is meant when its key changed
    /// since its last call, and the claim puts its key back.
    fn reconcile_second(&mut self) -> Option<Violation> {
        let others = objects(&self.cluster);
        let second = &mut self.second;
        let spec = Second::spec(second.key.as_deref(), second.import);
        let input = second.input.as_ref().unwrap_or(&self.input);
        let reconciled = second
            .cluster
            .reconcile(&spec, input, &others, &mut self.transport);
        if let Some(message) = reconciled.fatal {
            let taken = !keys_managed_elsewhere(&message).is_empty();
            let meant = second.key != second.accepted || taken;
            self.trace.push(format!("second claim fatal: {message}"));
            // The author puts the claim back, or, told the key is another claim's, drops it.
            second.key = if taken { None } else { second.accepted.clone() };
            return second.checker.fatal(&message, meant);
        }
        second.accepted = second.key.clone();
        published(
            &mut self.trace,
            "second claim: ",
            &second.cluster,
            &mut second.checker,
            &reconciled.response.results,
        );
        None
    }

    fn reconcile_composite(&mut self) -> Option<Violation> {
        let others = objects(&self.second.cluster);
        let reconciled = self.cluster.reconcile(
            &self.claim.spec(),
            &self.input,
            &others,
            &mut self.transport,
        );
        if let Some(message) = reconciled.fatal {
            // Asking for a key another claim's composite manages is refused on purpose, also
            // when the other claim took it while the entry waited (first come, first served).
            let taken = keys_managed_elsewhere(&message);
            let violation = self
                .checker
                .fatal(&message, self.may_be_refused || !taken.is_empty());
            self.trace.push(format!("fatal: {message}"));
            // The author reads the error and puts the claim back, without the entries whose
            // key another claim manages (the error's fix: choose another key).
            self.claim = self.accepted.clone();
            self.claim.entries.retain(|e| !taken.contains(&e.name));
            self.may_be_refused = false;
            // The entries dropped are gone since the last call the function accepted: adding
            // one back before it has seen it gone is a change of that entry.
            self.removed = self
                .accepted
                .entries
                .iter()
                .filter(|e| taken.contains(&e.name))
                .map(|e| e.name.clone())
                .collect();
            return violation;
        }
        self.accepted = self.claim.clone();
        self.may_be_refused = false;
        self.removed.clear();
        for result in &reconciled.response.results {
            self.trace
                .push(format!("  result {}: {}", result.severity, result.message));
        }
        published(
            &mut self.trace,
            "",
            &self.cluster,
            &mut self.checker,
            &reconciled.response.results,
        );
        None
    }

    /// The provider and Crossplane run until nothing changes: then invariant 4.
    fn settle(&mut self) -> Vec<Violation> {
        let mut found = Vec::new();
        for _ in 0..4 {
            found.extend(self.step(&Event::ProviderAll));
            found.extend(self.step(&Event::ProviderAll));
            found.extend(self.step(&Event::Composite));
            found.extend(self.step(&Event::SecondComposite));
        }
        found.extend(self.checker.at_rest());
        found.extend(self.second.checker.at_rest());
        found
    }
}

/// What a composite's call published, traced (each line after `label`) and read by its
/// claim's checker.
fn published(
    trace: &mut Vec<String>,
    label: &str,
    cluster: &Cluster,
    checker: &mut Checker,
    results: &[function_artifactory::proto::v1::Result],
) {
    for item in cluster.status["repositories"]
        .as_array()
        .into_iter()
        .flatten()
    {
        trace.push(format!(
            "  {label}{} {} {}",
            item["name"], item["key"], item["phase"]
        ));
    }
    checker.reconciled(&cluster.status, results, &observed_serials(cluster));
}

/// The entries a fatal result says ask for a key another composite manages (`KeyConflict`).
fn keys_managed_elsewhere(message: &str) -> Vec<String> {
    message
        .lines()
        .filter(|line| line.contains("is already managed by"))
        .filter_map(|line| line.split("repository \"").nth(1)?.split('"').next())
        .map(str::to_owned)
        .collect()
}

/// The repository the provider last observed for each key of `cluster`'s resources.
fn observed_serials(cluster: &Cluster) -> std::collections::HashMap<String, u64> {
    cluster
        .resources
        .values()
        .filter_map(|m| {
            let key = provider::annotation(&m.object, provider::EXTERNAL_NAME)?;
            Some((key.to_lowercase(), m.observed_serial?))
        })
        .collect()
}

/// The managed resources of `cluster`, as another composite's requirements find them.
fn objects(cluster: &Cluster) -> Vec<Value> {
    cluster
        .resources
        .values()
        .map(|m| m.object.clone())
        .collect()
}

/// What each managed resource of `cluster` lets the provider do.
fn armed(cluster: &Cluster) -> Vec<Armed> {
    cluster
        .resources
        .iter()
        .map(|(name, managed)| {
            let object = &managed.object;
            Armed {
                resource: name.clone(),
                key: provider::annotation(object, provider::EXTERNAL_NAME)
                    .unwrap_or_default()
                    .to_owned(),
                origin: provider::annotation(object, provider::ORIGIN).map(str::to_owned),
                updates: provider::allows(object, "Update"),
                deletes: provider::should_delete(object),
            }
        })
        .collect()
}

/// A claim edit, applied to `claim` (an edit of an entry that is not there does nothing).
fn edit(claim: &mut Claim, event: &Event) {
    let count = claim.entries.len();
    let slot = |slot: usize| (count > 0).then(|| slot % count);
    match *event {
        Event::Add { name, package, key } => claim.entries.push(Entry {
            name: NAMES[name].to_owned(),
            package: PACKAGE_TYPES[package],
            key: key.map(|k| KEYS[k].to_owned()),
            import: false,
            policies: None,
            delete: None,
            description: None,
        }),
        Event::Remove { slot: s } => {
            if let Some(i) = slot(s) {
                claim.entries.remove(i);
            }
        }
        Event::Rename { slot: s, name } => {
            if let Some(i) = slot(s) {
                let key = claim.key(&claim.entries[i]);
                let entry = &mut claim.entries[i];
                entry.name = NAMES[name].to_owned();
                entry.key = Some(key);
            }
        }
        Event::ReKey { slot: s, key } => set(
            claim,
            s,
            Box::new(move |e| e.key = key.map(|k| KEYS[k].to_owned())),
        ),
        Event::Import { slot: s, on } => set(claim, s, Box::new(move |e| e.import = on)),
        Event::Policies { slot: s, policies } => set(
            claim,
            s,
            Box::new(move |e| e.policies = policies.map(|p| POLICIES[p])),
        ),
        Event::Deletion { slot: s, delete } => set(claim, s, Box::new(move |e| e.delete = delete)),
        Event::Describe { slot: s, text } => set(
            claim,
            s,
            Box::new(move |e| e.description = text.map(|t| DESCRIPTIONS[t])),
        ),
        Event::ProjectKey(project) => claim.project_key = project.map(|p| PROJECT_KEYS[p]),
        _ => {}
    }
}

/// Changes the entry `slot` picks (modulo their count); nothing when there is none.
fn set(claim: &mut Claim, slot: usize, change: Box<dyn FnOnce(&mut Entry)>) {
    let count = claim.entries.len();
    if count > 0 {
        change(&mut claim.entries[slot % count]);
    }
}

/// Runs a sequence (then lets the world settle) and returns every violation, each with the
/// steps that led to it.
fn run(setup: Setup, client: Client, events: &[Event]) -> (Vec<Violation>, Vec<String>) {
    run_over(setup, client, Transport::Core, events)
}

fn run_over(
    setup: Setup,
    client: Client,
    transport: Transport,
    events: &[Event],
) -> (Vec<Violation>, Vec<String>) {
    let mut world = World::over(setup, client, transport);
    let mut found = Vec::new();
    for event in events {
        found.extend(world.step(event));
    }
    found.extend(world.settle());
    if std::env::var("SIMULATOR_DUMP").is_ok() {
        for (name, m) in &world.cluster.resources {
            eprintln!(
                "{name}: {}",
                serde_json::to_string_pretty(&m.object).unwrap()
            );
        }
    }
    (found, world.trace)
}

/// The invariants that fail today, with the open issue that is to make each true: the random
/// run reports their violations without failing, and the named cases below show that the
/// simulator finds them. Flip an entry once its issue lands.
///
/// Invariant 4 (nothing stuck silently) holds since issue 54's failed creates and entries that
/// cannot create are said (`CreateFailed`, `CannotCreate`, a held unconfirmed create);
/// invariant 5 (within `allowedKeys`) since issue 57 checks computed keys too
/// (`regression_57_a_computed_key_stays_inside_the_bound`).
///
/// Invariants 1, 3 and 6 hold since issue 54's moves carry their key and origin, and a name
/// reused while its old resource goes waits for it (the named cases below); under the no-fork
/// clients too since a `Success` dated from the first sight of the repository confirms no
/// create (`regression_54_3_…_no_fork_clients`): every sequence runs under both clients.
///
/// Invariant 2 (a takeover changes only what its preview listed) holds since issue 56 renders
/// a taken-over repository's omitted fields at their live values
/// (`regression_56_1_a_takeover_resets_no_omitted_field`): before, the search found a takeover
/// that reset a live `handleSnapshots: false`, which the provider's late initialisation skips
/// as a zero value and its plan sets back to the default, true.
const KNOWN_OPEN: [(Invariant, u32); 0] = [];

fn known_open(invariant: Invariant) -> bool {
    KNOWN_OPEN.iter().any(|(open, _)| *open == invariant)
}

/// `SIMULATOR_CASES` sequences of at most `SIMULATOR_STEPS` events (8 of 12 by default, so
/// that `cargo test` stays fast; docs/development.md gives the long run).
fn cases() -> (u32, usize) {
    let read = |name: &str, default: usize| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    (
        read("SIMULATOR_CASES", 8) as u32,
        read("SIMULATOR_STEPS", 12),
    )
}

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: crate::support::seeds_beside_the_file(),
        source_file: Some(file!()),
        max_shrink_iters: 2_000,
        ..ProptestConfig::default()
    }
}

#[test]
fn every_sequence_keeps_the_invariants_that_hold_today() {
    let (cases, steps) = cases();
    let mut runner = proptest::test_runner::TestRunner::new(config(cases));
    let open: std::cell::RefCell<BTreeMap<Invariant, String>> = Default::default();
    let outcome = runner.run(&events::sequence(steps), |(setup, events)| {
        for client in [Client::TerraformCli, Client::NoFork] {
            let (found, trace) = run(setup, client, &events);
            check_sequence(client, &found, &trace, &open)?;
        }
        Ok(())
    });
    for (invariant, example) in open.borrow().iter() {
        eprintln!("known open, invariant {}: {example}", *invariant as u8);
    }
    if let Err(failure) = outcome {
        panic!("{failure}");
    }
}

/// Fewer sequences, each under both clients, with the function reached over gRPC on loopback
/// as Crossplane reaches it: the server answers every call with the library's bytes
/// (`support::server::Function::call_request` asserts it) and the invariants hold.
#[test]
fn sequences_over_the_grpc_server_keep_the_invariants() {
    let mut runner = proptest::test_runner::TestRunner::new(config(GRPC_CASES));
    let open: std::cell::RefCell<BTreeMap<Invariant, String>> = Default::default();
    let outcome = runner.run(&events::sequence(12), |(setup, events)| {
        for client in [Client::TerraformCli, Client::NoFork] {
            let (found, trace) = run_over(setup, client, Transport::grpc(), &events);
            check_sequence(client, &found, &trace, &open)?;
        }
        Ok(())
    });
    if let Err(failure) = outcome {
        panic!("{failure}");
    }
}

/// The sequences [`sequences_over_the_grpc_server_keep_the_invariants`] runs: a server each.
const GRPC_CASES: u32 = 3;

/// One sequence's violations under `client`: those of [`KNOWN_OPEN`] are kept as examples,
/// any other fails the sequence.
fn check_sequence(
    client: Client,
    found: &[Violation],
    trace: &[String],
    open: &std::cell::RefCell<BTreeMap<Invariant, String>>,
) -> Result<(), proptest::test_runner::TestCaseError> {
    for violation in found {
        if known_open(violation.invariant) {
            open.borrow_mut()
                .entry(violation.invariant)
                .or_insert_with(|| format!("{violation}\n  after {}", trace.join("\n        ")));
        }
    }
    let broken: Vec<String> = found
        .iter()
        .filter(|v| !known_open(v.invariant))
        .map(ToString::to_string)
        .collect();
    prop_assert!(
        broken.is_empty(),
        "{}\nunder {client:?}, after:\n{}",
        broken.join("\n"),
        trace.join("\n")
    );
    Ok(())
}

/// Searches random sequences (from a fixed seed, so every run searches the same ones) for a
/// violation of `invariant`, and shrinks it: the minimal sequence, or `None`.
fn shrunk_violation(invariant: Invariant, cases: u32, steps: usize) -> Option<(Setup, Vec<Event>)> {
    let config = ProptestConfig {
        cases,
        failure_persistence: None,
        max_shrink_iters: 400,
        rng_seed: proptest::test_runner::RngSeed::Fixed(55),
        ..ProptestConfig::default()
    };
    let mut runner = proptest::test_runner::TestRunner::new(config);
    let outcome = runner.run(&events::sequence(steps), |(setup, events)| {
        let (found, _) = run(setup, Client::TerraformCli, &events);
        prop_assert!(!found.iter().any(|v| v.invariant == invariant));
        Ok(())
    });
    match outcome {
        Err(proptest::test_runner::TestError::Fail(_, minimal)) => Some(minimal),
        _ => None,
    }
}

/// Expected failures: each invariant of [`KNOWN_OPEN`] is broken by some random sequence,
/// which the search shrinks (printed with `--nocapture`). When an issue lands, its invariant
/// leaves `KNOWN_OPEN`, and this test no longer expects it broken.
#[test]
fn the_random_run_finds_each_known_open_hole_and_shrinks_it() {
    for (invariant, issue) in KNOWN_OPEN {
        let Some((setup, events)) = shrunk_violation(invariant, 1024, 24) else {
            panic!("no sequence breaks invariant {} any more: has issue {issue} landed? Remove it from KNOWN_OPEN", invariant as u8);
        };
        let (found, trace) = run(setup, Client::TerraformCli, &events);
        let violation = found
            .iter()
            .find(|v| v.invariant == invariant)
            .expect("it breaks it");
        eprintln!(
            "invariant {} (open until issue {issue}), {setup:?}, {} events:\n  {}\n  {violation}",
            invariant as u8,
            events.len(),
            trace.join("\n  ")
        );
    }
}

/// Runs `events` and returns the violations of `invariant`.
fn violations_of(invariant: Invariant, bounded: bool, events: &[Event]) -> Vec<Violation> {
    let (found, trace) = run(
        Setup {
            bounded,
            ..Setup::default()
        },
        Client::TerraformCli,
        events,
    );
    if std::env::var_os("SIMULATOR_TRACE").is_some() {
        eprintln!("{}\n{found:#?}", trace.join("\n"));
    }
    found
        .into_iter()
        .filter(|v| v.invariant == invariant)
        .collect()
}

fn index(pool: &[&str], item: &str) -> usize {
    pool.iter().position(|x| *x == item).expect("in the pool")
}

use Event::{Composite, ProviderAll};

/// The claim adds a maven entry `name`, with `key` given or computed.
fn add(name: &str, key: Option<&str>) -> Event {
    Event::Add {
        name: index(&NAMES, name),
        package: 0,
        key: key.map(|k| index(&KEYS, k)),
    }
}

/// The composite and the provider reconcile until a new entry's create is confirmed and the
/// entry is `managed`: the create, its apply, the Observe that finds it; `created`, `managed`.
fn created() -> Vec<Event> {
    vec![
        Composite,
        ProviderAll,
        ProviderAll,
        ProviderAll,
        Composite,
        Composite,
    ]
}

/// An outside actor makes `key` (with `handleSnapshots: snapshots`).
fn outside(key: &str, snapshots: bool) -> Event {
    Event::OutsideCreate {
        key: index(&KEYS, key),
        snapshots,
    }
}

/// The claim renames its first entry `name`, keeping its key.
fn rename(name: &str) -> Event {
    Event::Rename {
        slot: 0,
        name: index(&NAMES, name),
    }
}

/// Asserts that `events`, which broke `invariant` with a violation that said `said` before
/// `issue` landed, keep every invariant now.
fn holds(invariant: Invariant, events: &[Event], said: &str, issue: &str) {
    let (found, trace) = run(
        Setup {
            bounded: false,
            ..Setup::default()
        },
        Client::TerraformCli,
        events,
    );
    assert!(
        found.is_empty(),
        "{issue}'s hole (invariant {}: {said}) is closed, and no other opens:\n{found:#?}\n{}",
        invariant as u8,
        trace.join("\n")
    );
}

/// Issue 56, item 1: an outside repository with `handleSnapshots: false` (a zero value, which
/// upjet's late initialisation skips, pkg/resource/lateinit.go, and the Terraform provider
/// plans back to its default, true), imported and taken over with and without
/// `LateInitialize` in the policies: the takeover changed `handleSnapshots`, which the preview
/// never listed. Now the field the claim leaves out is rendered at its live value, and only
/// the description the claim sets changes, as the preview said.
#[test]
fn regression_56_1_a_takeover_resets_no_omitted_field() {
    for policies in [1, 2] {
        let events = [
            outside("payments-libs", false),
            add("libs", Some("payments-libs")),
            Event::Import { slot: 0, on: true },
            Event::Describe {
                slot: 0,
                text: Some(0),
            },
            Composite,
            ProviderAll,
            Composite,
            Composite,
            Event::Policies {
                slot: 0,
                policies: Some(policies),
            },
            Composite,
            ProviderAll,
            ProviderAll,
            Composite,
            ProviderAll,
            Composite,
            ProviderAll,
        ];
        holds(
            Invariant::TakeoverAsPreviewed,
            &events,
            "changed [\"handleSnapshots\"]",
            "issue 56.1",
        );
    }
}

/// Issue 57: under `allowedKeys: "{claimNamespace}-*"`, project `payments` made the computed
/// key `payments-libs`, which the claim then created. Now refused (an edit that may be): no
/// write outside `team1-`. Under the team's own project the key is inside and created.
#[test]
fn regression_57_a_computed_key_stays_inside_the_bound() {
    for (project, refused) in [("payments", true), ("team1", false)] {
        let mut events = vec![
            Event::ProjectKey(Some(index(&PROJECT_KEYS, project))),
            add("libs", None),
        ];
        events.extend(created());
        let (found, trace) = run(
            Setup {
                bounded: true,
                ..Setup::default()
            },
            Client::TerraformCli,
            &events,
        );
        assert_eq!(found, [], "{project}: {}", trace.join("\n"));
        let fatal = trace.iter().any(|line| line.starts_with("fatal: "));
        assert_eq!(fatal, refused, "{project}: {}", trace.join("\n"));
    }
}

/// Issue 54, item 1: a move hands over any key. `a-libs` under project `team1`, then `libs`
/// under `team1-a` (the same key: a move), then project `payments`: `libs` is rendered for
/// `payments-libs`, which another team made (with `handleSnapshots: false`, which the
/// provider resets to its default). Held since issue 54: the moving resource holds
/// `team1-a-libs`, so the new project key is a refused key change.
#[test]
fn regression_54_1_a_move_hands_over_another_teams_key() {
    let events = [
        outside("payments-libs", false),
        Event::ProjectKey(Some(index(&PROJECT_KEYS, "team1"))),
        add("a-libs", None),
        Composite,
        ProviderAll,
        ProviderAll,
        Composite,
        Composite,
        // One edit: project team1-a, entry `a-libs` renamed `libs` (key team1-a-libs kept).
        Event::ProjectKey(Some(index(&PROJECT_KEYS, "team1-a"))),
        rename("libs"),
        Event::ReKey { slot: 0, key: None },
        Composite,
        // `libs` is moving; before the old resource is released, project `payments`.
        Event::ProjectKey(Some(index(&PROJECT_KEYS, "payments"))),
        Composite,
        ProviderAll,
        ProviderAll,
        ProviderAll,
        Composite,
    ];
    holds(
        Invariant::OutsideUntouched,
        &events,
        "may update and delete payments-libs",
        "issue 54.1",
    );
}

/// Issue 54, item 2: renaming a held entry took its repository over; since issue 54 the key
/// moves as what it was (`taken`), and stays held.
#[test]
fn regression_54_2_renaming_a_held_entry_takes_it_over() {
    let events = [
        outside("payments-libs", true),
        add("libs", Some("payments-libs")),
        Composite,
        ProviderAll,
        Composite,
        Composite,
        // Renamed, with the same key.
        rename("docs"),
        Composite,
        ProviderAll,
        ProviderAll,
        Composite,
        Composite,
        ProviderAll,
        ProviderAll,
        Event::Describe {
            slot: 0,
            text: Some(0),
        },
        Composite,
        ProviderAll,
        ProviderAll,
    ];
    holds(
        Invariant::OutsideUntouched,
        &events,
        "payments-libs",
        "issue 54.2",
    );
}

/// Issue 54, item 3: a create that fails after Artifactory made the repository left the entry
/// `creating` for good, and nothing said why; now it is said, then held.
#[test]
fn regression_54_3_a_create_that_fails_after_the_repository_was_made() {
    let events = [
        add("libs", None),
        Composite,
        Event::CreateFails { after_made: true },
        ProviderAll,
        ProviderAll,
        Composite,
    ];
    // It holds since issue 54: the entry is held (the failed create cannot be shown to have
    // made the repository), and the claim is told, with `import: true` as the way on.
    let found = violations_of(Invariant::NothingStuckSilently, false, &events);
    assert_eq!(found, [], "nothing stuck silently");
    let (_, trace) = run(
        Setup {
            bounded: false,
            ..Setup::default()
        },
        Client::TerraformCli,
        &events,
    );
    assert!(
        trace
            .iter()
            .any(|line| line.contains("is held: the provider's create failed")),
        "the held result is given:\n{}",
        trace.join("\n")
    );
}

/// A plain create, a held key and an import read as the function expects: the simulator's
/// provider writes what the function confirms, under either client (a create of ours is
/// confirmed under the no-fork clients too: its `Success` comes before the first sight).
#[test]
fn the_simulated_provider_confirms_a_create_and_holds_a_taken_key() {
    for client in [Client::TerraformCli, Client::NoFork] {
        confirms_a_create_and_holds_a_taken_key(client);
    }
}

fn confirms_a_create_and_holds_a_taken_key(client: Client) {
    let events = [
        vec![outside("docs", true), add("libs", None), add("docs", None)],
        created(),
    ]
    .concat();
    let mut world = World::new(
        Setup {
            bounded: false,
            ..Setup::default()
        },
        client,
    );
    for event in &events {
        assert_eq!(world.step(event), [], "{event:?}");
    }
    let phases: BTreeMap<String, String> = world.cluster.status["repositories"]
        .as_array()
        .expect("repositories")
        .iter()
        .map(|r| {
            (
                r["name"].as_str().unwrap().to_owned(),
                r["phase"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        phases["libs"], "managed",
        "{client:?}: {:#}",
        world.cluster.status
    );
    assert_eq!(phases["docs"], "held");
    assert_eq!(
        world.artifactory.get("docs").unwrap().fields["description"],
        "made by hand"
    );
    let libs = &world.cluster.resources["libs"].object;
    for annotation in [provider::CREATE_PENDING, provider::CREATE_SUCCEEDED] {
        assert!(provider::annotation(libs, annotation).is_some(), "{libs:#}");
    }
    assert_eq!(
        libs["spec"]["providerConfigRef"],
        json!({"name": "default"})
    );
}

/// Issue 54, item 8: an entry removed and added back while its old resource is still
/// retiring is refused as a key change (expected: the new entry waits until the old resource
/// is released). Holds since issue 54: it waits.
#[test]
fn regression_54_8_reusing_a_retiring_name_is_fatal() {
    let events = [
        vec![add("libs", Some("team1-libs"))],
        created(),
        vec![
            Event::Remove { slot: 0 },
            Composite,
            add("libs", None),
            Composite,
        ],
    ]
    .concat();
    holds(
        Invariant::NoUnmeantFatal,
        &events,
        "keys are immutable",
        "issue 54.8",
    );
}

/// Runs `events` under `client`, with a repository made outside, with the Terraform defaults,
/// between the create's Observe and its apply (the race the create guard is for).
fn race(client: Client) -> (World, Vec<Violation>) {
    let mut world = World::new(
        Setup {
            bounded: false,
            ..Setup::default()
        },
        client,
    );
    let mut found = Vec::new();
    found.extend(world.step(&add("libs", None)));
    found.extend(world.step(&Composite));
    found.extend(world.step(&ProviderAll));
    world
        .artifactory
        .create(Actor::Outside, "LIBS", "maven", &BTreeMap::new());
    for event in [ProviderAll, ProviderAll, Composite, ProviderAll, Composite] {
        found.extend(world.step(&event));
    }
    (world, found)
}

/// Issue 54, item 3, the other side: under the Terraform-CLI client a create refused because
/// the key was taken meanwhile stays `LastAsyncOperation` False, and the entry is held; under
/// the no-fork clients the failure is reset to `Success` once the live repository equals the
/// spec, and the function, which missed the one call that could see it, used to confirm the
/// create and give the entry its own policies over a repository made outside. Holds since
/// issue 54: a `Success` no earlier than the first sight of the repository proves nothing, and
/// the entry is held, with the import offered.
#[test]
fn regression_54_3_a_refused_create_looks_created_under_the_no_fork_clients() {
    let (cli, found) = race(Client::TerraformCli);
    assert_eq!(found, [], "the CLI client keeps the key held");
    assert_eq!(cli.cluster.status["repositories"][0]["phase"], "held");
    let libs = &cli.cluster.resources["libs"].object;
    let last = provider::condition(libs, "LastAsyncOperation").expect("the apply's outcome");
    assert_eq!(last["reason"], "ApplyFailure");
    assert!(
        last["message"]
            .as_str()
            .unwrap()
            .starts_with("apply failed: "),
        "{last}"
    );

    let (no_fork, found) = race(Client::NoFork);
    assert_eq!(
        found,
        [],
        "the no-fork clients' reset does not confirm the create"
    );
    assert_eq!(no_fork.cluster.status["repositories"][0]["phase"], "held");
    let libs = &no_fork.cluster.resources["libs"].object;
    let last = provider::condition(libs, "LastAsyncOperation").expect("the apply's outcome");
    assert_eq!(last["reason"], "Success", "reset by the no-fork Observe");
    assert_eq!(
        libs["spec"]["managementPolicies"],
        json!(["Observe"]),
        "held: observed only"
    );
}

/// Found by the long run (10,000 sequences of 40 events), shrunk: an entry removed while its
/// create is still unconfirmed (`["Observe", "Create"]`, so released at once) and added back
/// before the provider's finalizer has run. The function sees the old resource, still
/// observed while it is deleted, confirms the create and renders the entry's own policies
/// (`*`, deletion Delete) onto it; the finalizer then deletes the repository the claim
/// created, while the claim lists its entry. Issue 54, item 8's family (a name reused while
/// its old resource is going). Holds since issue 54: the entry waits while a resource of its
/// name is being deleted.
#[test]
fn regression_a_name_reused_while_its_resource_is_deleted() {
    let provider = Event::Provider { slot: 0 };
    let events = [
        add("docs", None),
        Composite,
        provider.clone(),
        Event::Remove { slot: 0 },
        provider.clone(),
        provider.clone(),
        Composite,
        add("docs", None),
        Composite,
    ];
    holds(
        Invariant::CreatedKept,
        &events,
        "deleted docs",
        "issue 54.8",
    );
}

/// Issue 55, a second claim: team2's claim asks for the key team1's claim created. Its call is
/// refused (another composite manages the key) and the repository is untouched; once team1
/// removes its entry (the repository is orphaned, not deleted), team2's ask finds a repository
/// made outside it and holds the key until it imports it.
#[test]
fn a_second_claim_asking_for_a_created_key_is_refused_then_held() {
    let mut world = World::new(Setup::default(), Client::TerraformCli);
    let team1_libs = Some(KEYS.iter().position(|k| *k == "team1-libs").unwrap());
    let ask = [
        Event::SecondClaim { key: team1_libs },
        Event::SecondComposite,
    ];
    let events = [
        vec![add("libs", Some("team1-libs"))],
        created(),
        ask.to_vec(),
    ]
    .concat();
    for event in &events {
        assert_eq!(
            world.step(event),
            [],
            "{event:?}\n{}",
            world.trace.join("\n")
        );
    }
    assert!(
        world
            .trace
            .iter()
            .any(|line| line.starts_with("second claim fatal:")
                && line.contains(
                    "key \"team1-libs\" is already managed by XRepositories \"team1-repos-x7k2p\""
                )),
        "{}",
        world.trace.join("\n")
    );
    assert!(world.second.cluster.resources.is_empty());

    let events = [
        vec![Event::Remove { slot: 0 }],
        created(),
        vec![ProviderAll],
    ]
    .concat();
    for event in &events {
        assert_eq!(world.step(event), [], "{event:?}");
    }
    assert!(
        world.cluster.resources.is_empty(),
        "team1's resource is gone"
    );
    let events = [ask.to_vec(), vec![ProviderAll, Event::SecondComposite]].concat();
    for event in &events {
        assert_eq!(world.step(event), [], "{event:?}");
    }
    assert_eq!(world.settle(), []);
    assert_eq!(
        world.artifactory.get("team1-libs").unwrap().fields["description"],
        "",
        "the repository stays, orphaned"
    );
    assert_eq!(
        world.second.cluster.status["repositories"][0]["phase"],
        "held",
        "{}",
        world.trace.join("\n")
    );
}

/// Found by the long run (10,000 sequences of 40 events), shrunk: an entry's key is made
/// outside, the provider observes it, then it is deleted outside; the entry imports it, is
/// adopted with an empty preview (of what the provider last observed) and taken over; the key
/// is made again outside with `handleSnapshots: true`, and the provider writes the claim's
/// (the old repository's `false`) onto it. The function sees only what the provider observed,
/// and the provider cannot tell the new repository from the imported one: the checker's
/// invariant 2 holds the provider to a preview only for the repository it was computed from.
#[test]
fn regression_55_a_key_made_again_outside_before_its_takeover_lands() {
    let a_libs = 6; // KEYS has 5: an index past them names the entry name `a-libs`
    assert_eq!(events::outside_key(a_libs), "a-libs");
    let events = [
        Event::Add {
            name: index(&NAMES, "a-libs"),
            package: 0,
            key: None,
        },
        Event::OutsideCreate {
            key: a_libs,
            snapshots: false,
        },
        Composite,
        Event::Provider { slot: 0 },
        Event::OutsideDelete { key: a_libs },
        Event::Policies {
            slot: 0,
            policies: Some(1),
        },
        Event::Import { slot: 0, on: true },
        Composite,
        Composite,
        Event::OutsideCreate {
            key: a_libs,
            snapshots: true,
        },
    ];
    holds(
        Invariant::TakeoverAsPreviewed,
        &events,
        "a takeover changes only what its preview listed",
        "issue 55's checker",
    );
}

/// Found by the long run under the no-fork clients, shrunk: a create fails twice in the same
/// words (the condition keeps the first failure's time, earlier than the second create's
/// pending annotation), then the key is made outside in another case. Those clients set no
/// `AsyncOperation`, so nothing said the second apply had ended: the entry stayed `creating`
/// for good, silently. Now a `Ready` True since the create began says it has ended: the entry
/// is held (the repository exists, and whether a failed create made it cannot be told).
#[test]
fn regression_55_a_failure_repeated_under_the_no_fork_clients_is_read() {
    let fails = Event::CreateFails { after_made: false };
    let libs = Event::Provider { slot: 0 };
    let events = [
        fails.clone(),
        add("libs", None),
        Composite,
        libs.clone(),
        libs.clone(),
        fails,
        libs.clone(),
        libs,
        outside("LIBS", false),
    ];
    let (found, trace) = run(Setup::default(), Client::NoFork, &events);
    assert_eq!(found, [], "{}", trace.join("\n"));
    assert!(
        trace
            .iter()
            .any(|line| line.contains("\"libs\" \"libs\" \"held\"")),
        "{}",
        trace.join("\n")
    );
}

/// Found by the long run, shrunk: an import taken over by removing `import: true`, then the
/// claim sets a description before the provider's first apply. The description is the claim's
/// new intent, written after the preview: the checker's invariant 2 counts only the fields the
/// author did not set since the last preview.
#[test]
fn regression_55_a_description_set_after_the_takeover_is_the_claims() {
    let events = [
        outside("LIBS", false),
        add("libs", None),
        Event::Import { slot: 0, on: true },
        Composite,
        Event::Provider { slot: 0 },
        Event::Import { slot: 0, on: false },
        Composite,
        Event::Describe {
            slot: 0,
            text: Some(0),
        },
    ];
    holds(
        Invariant::TakeoverAsPreviewed,
        &events,
        "a takeover changes only what its preview listed",
        "issue 55's checker",
    );
}

/// Found by the long run with a second claim, shrunk: team1 renames an entry's key to one no
/// composite manages while the entry waits for its old resource to be released; team2 asks for
/// that key meanwhile and gets it. Team1's next call is refused (the key is another claim's),
/// first come first served, and its author drops the entry as the error says; team1's other
/// entry goes on.
#[test]
fn regression_55_a_key_taken_by_another_claim_while_the_entry_waits() {
    let payments_libs = Some(index(&KEYS, "payments-libs"));
    let events = [
        add("libs", None),
        add("a-libs", None),
        Event::SecondClaim { key: payments_libs },
        Composite,
        Event::Remove { slot: 1 },
        Composite,
        add("a-libs", Some("payments-libs")),
        Composite,
        Event::SecondComposite,
    ];
    let (found, trace) = run(Setup::default(), Client::TerraformCli, &events);
    assert_eq!(found, [], "{}", trace.join("\n"));
    assert!(
        trace.iter().any(|line| line.starts_with("fatal: ")
            && line.contains(
                "key \"payments-libs\" is already managed by XRepositories \"team2-repos-x7k2p\""
            )),
        "{}",
        trace.join("\n")
    );
}

/// Found by the long run, shrunk: an entry composed but not yet created is renamed, keeping
/// its key, and made observe-only; its key moves to the new name. The provider observes the
/// new resource while the old one is released and finds no repository, so the entry "cannot
/// create": the move kept that finding, which reached `status.repositories[].warnings`
/// unsaid, and when the entry entered `creating` the function took its Warning as said. It
/// stayed `creating` silently. Now the move keeps no finding of a create, and the Warning is
/// said where `creating` begins: for the three provider APIs, under both clients, in process
/// and through the gRPC server.
#[test]
fn regression_54_4_a_moved_entry_that_cannot_create_says_so() {
    let events = [
        add("a-libs", None),
        Composite,
        rename("docs"),
        Event::Policies {
            slot: 0,
            policies: Some(index_of_observe_only()),
        },
        Composite,
        Event::Provider { slot: 1 },
        Composite,
    ];
    for api in [Api::Cluster, Api::Namespaced, Api::Flat] {
        for client in [Client::TerraformCli, Client::NoFork] {
            for grpc in [false, true] {
                let setup = Setup {
                    api,
                    ..Setup::default()
                };
                let transport = if grpc {
                    Transport::grpc()
                } else {
                    Transport::Core
                };
                let (found, trace) = run_over(setup, client, transport, &events);
                let case = format!("{api:?}, {client:?}, over gRPC: {grpc}");
                assert_eq!(found, [], "{case}:\n{}", trace.join("\n"));
                let said = trace.iter().filter(|line| {
                    line.starts_with(
                        "  result 2: repository docs (key a-libs): the key does not exist",
                    )
                });
                assert_eq!(said.count(), 1, "{case}:\n{}", trace.join("\n"));
            }
        }
    }
}

/// The index of `["Observe"]` in [`events::POLICIES`].
fn index_of_observe_only() -> usize {
    events::POLICIES
        .iter()
        .position(|p| *p == ["Observe"])
        .expect("in the pool")
}
