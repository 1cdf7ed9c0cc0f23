//! The provider changes a platform team makes under live claims (docs/upgrading.md), one
//! operator step per [`super::Event::Upgrade`], each taken only once what the procedure says
//! to wait for holds: the sequence's other events fall between the steps in every order.

use super::crossplane::Cluster;
use super::events::{Api, Change};
use super::{provider, World};
use serde_json::json;
use std::collections::VecDeque;

/// One step of a provider change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// The provider is upgraded from v0.7.0 to v0.7.1 and the input says so (as Crossplane
    /// 2.2's live schemas would): the API server returns every object of a renamed kind under
    /// the new name (the CRD's group and plural are kept, `spec.names.kind` changes), and the
    /// function renders the new name.
    Rename,
    /// Group move, step 1: `releaseFlat: true` and `neverDelete: true` while the old
    /// provider runs.
    ReleaseFlat,
    /// Group move, step 2: the provider is upgraded past v0.6.0, once no managed resource of
    /// the flat group is left (`kubectl get managed` shows none); the flat kinds are gone.
    UpgradePastFlat,
    /// Group move, step 3: `providerApi` back to its default and `releaseFlat` removed, every
    /// entry `import: true`.
    AdoptSplit,
    /// Crossplane v1 to v2, step 1: `neverDelete: true`.
    NeverDelete,
    /// Step 2, once the status says `neverDelete` and every managed resource shows deletion
    /// Orphan without `Delete`: the claim is deleted, and Crossplane its managed resources.
    DeleteClaim,
    /// Step 3, once the old managed resources are gone: a namespaced composite of the same
    /// team, with the same entries, every one `import: true`.
    Namespaced,
    /// Take the adopted keys over: `import: true` removed from every entry.
    TakeOver,
    /// Last: `neverDelete` removed.
    DropNeverDelete,
}

/// The steps of `change`, in the order docs/upgrading.md gives them.
pub fn steps(change: Change) -> VecDeque<Step> {
    use Step::*;
    match change {
        Change::None => VecDeque::new(),
        Change::Rename => [Rename].into(),
        Change::GroupMove => [
            ReleaseFlat,
            UpgradePastFlat,
            AdoptSplit,
            TakeOver,
            DropNeverDelete,
        ]
        .into(),
        Change::ToNamespaced => [
            NeverDelete,
            DeleteClaim,
            Namespaced,
            TakeOver,
            DropNeverDelete,
        ]
        .into(),
    }
}

/// The kinds v0.7.1 renamed among the simulator's package types (its CRDs keep the group and
/// plural `npmrepositories.local.artifactory.jfrog.crossplane.io`).
const RENAMED_AT_V0_7_1: [(&str, &str); 1] = [("NpmRepository", "NPMRepository")];

/// The provider version a sequence of `change` starts at, when not the newest.
pub fn starting_version(change: Change) -> Option<&'static str> {
    (change == Change::Rename).then_some("v0.7.0")
}

impl World {
    /// Takes the next step of the sequence's provider change if what it waits for holds; the
    /// step taken.
    pub(super) fn upgrade(&mut self) -> Option<Step> {
        let step = *self.steps.front()?;
        if !self.may_take(step) {
            return None;
        }
        self.steps.pop_front();
        match step {
            Step::Rename => {
                self.input["providerVersion"] = json!("v0.7.1");
                for cluster in [&mut self.cluster, &mut self.second.cluster] {
                    rename_kinds(cluster);
                }
            }
            Step::ReleaseFlat => {
                self.input["releaseFlat"] = json!(true);
                self.input["neverDelete"] = json!(true);
            }
            Step::UpgradePastFlat => {
                self.api = Api::Cluster;
                self.cluster.set_api(Api::Cluster);
                self.second.cluster.set_api(Api::Cluster);
            }
            Step::AdoptSplit => {
                let input = self.input.as_object_mut().expect("an object");
                input.remove("providerApi");
                input.remove("releaseFlat");
                self.import_every_entry(true);
                self.second.import = true;
            }
            Step::NeverDelete => self.input["neverDelete"] = json!(true),
            Step::DeleteClaim => {
                self.cluster.delete_every_resource();
                self.checker.claim_deleted();
            }
            Step::Namespaced => {
                // The old claim's Composition keeps its input; the namespaced composite's is a
                // copy, bounded by its own namespace.
                self.second.input = Some(self.input.clone());
                self.api = Api::Namespaced;
                self.cluster = Cluster::new(Api::Namespaced, 0);
                if self.checker.allowed_prefix.is_some() {
                    // A namespaced composite has no claim: its own namespace bounds it.
                    self.input["allowedKeys"] = json!("{namespace}-*");
                }
                // The author's spec, and the last one the function accepted (which a refused
                // call puts back), moved to the namespaced composite: every entry imported,
                // without a deletion policy (the namespaced kinds have none).
                for claim in [&mut self.claim, &mut self.accepted] {
                    for entry in &mut claim.entries {
                        entry.delete = None;
                        entry.import = true;
                    }
                }
            }
            Step::TakeOver => {
                self.import_every_entry(false);
                self.second.import = false;
            }
            Step::DropNeverDelete => {
                if let Some(input) = self.input.as_object_mut() {
                    input.remove("neverDelete");
                }
            }
        }
        Some(step)
    }

    /// What the procedure says to wait for before `step`.
    fn may_take(&self, step: Step) -> bool {
        match step {
            Step::UpgradePastFlat => [&self.cluster, &self.second.cluster]
                .iter()
                .all(|cluster| !cluster.resources.values().any(|m| is_flat(&m.object))),
            Step::DeleteClaim => {
                self.cluster.status["neverDelete"] == true
                    && self.cluster.resources.values().all(|m| {
                        m.object["spec"]["deletionPolicy"] == "Orphan"
                            && !provider::should_delete(&m.object)
                    })
            }
            Step::Namespaced => self.cluster.resources.is_empty(),
            _ => true,
        }
    }

    /// The claim is deleted and its namespaced composite not made yet (a Crossplane v1 to v2
    /// move waits for the old resources to go): nothing calls the function for it.
    pub(super) fn composite_gone(&self) -> bool {
        self.steps.front() == Some(&Step::Namespaced)
    }

    fn import_every_entry(&mut self, on: bool) {
        for entry in &mut self.claim.entries {
            entry.import = on;
        }
    }
}

fn is_flat(object: &serde_json::Value) -> bool {
    object["apiVersion"]
        .as_str()
        .is_some_and(|v| v.starts_with("artifactory.jfrog.crossplane.io/"))
}

fn rename_kinds(cluster: &mut Cluster) {
    for managed in cluster.resources.values_mut() {
        for (before, after) in RENAMED_AT_V0_7_1 {
            if managed.object["kind"] == before {
                managed.object["kind"] = json!(after);
            }
        }
    }
}

/// Steps `events` in `world`, asserting that each keeps every invariant.
fn walk(world: &mut World, events: &[super::Event]) {
    for event in events {
        let found = world.step(event);
        assert_eq!(found, [], "{event:?}\n{}", world.trace.join("\n"));
    }
}

mod tests {
    use super::super::artifactory::Op;
    use super::super::events::{Api, Change, Event, Setup};
    use super::super::provider::Client;
    use super::super::{add, created, World};
    use super::walk;
    use Event::{Composite, ProviderAll, Upgrade};

    /// The phases the composite's status shows, by entry.
    fn phases(world: &World) -> Vec<String> {
        world.cluster.status["repositories"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|r| {
                format!(
                    "{} {}",
                    r["name"].as_str().unwrap(),
                    r["phase"].as_str().unwrap()
                )
            })
            .collect()
    }

    /// Two entries, maven and npm, created and managed.
    fn two_created() -> Vec<Event> {
        let npm = Event::Add {
            name: 1,
            package: 2,
            key: None,
        };
        [vec![add("libs", None), npm], created()].concat()
    }

    /// The last two steps of a move, each reconciled: the keys taken over, then
    /// `neverDelete` dropped; every step is then taken.
    fn take_over_and_finish(world: &mut World) {
        let events = [
            Upgrade,
            Composite,
            ProviderAll,
            ProviderAll,
            Composite,
            Upgrade,
            Composite,
        ];
        walk(world, &events);
        assert!(
            world.steps.is_empty(),
            "every step taken:\n{}",
            world.trace.join("\n")
        );
    }

    fn creates_and_deletes(world: &World) -> (usize, usize) {
        let count = |op: fn(&Op) -> bool| {
            world
                .artifactory
                .writes
                .iter()
                .filter(|w| op(&w.op))
                .count()
        };
        (count(|op| *op == Op::Create), count(|op| *op == Op::Delete))
    }

    /// Issue 55, the provider's v0.7.0 group move as docs/upgrading.md gives it, under both
    /// clients: the flat resources released (orphaned, then let go) while the old provider
    /// runs, the upgrade once none is left, the keys adopted observe only by the split-group
    /// kinds and taken over, `neverDelete` dropped: every invariant holds at every step, and
    /// the two repositories are created once and never deleted.
    #[test]
    fn the_group_move_keeps_every_repository() {
        for client in [Client::TerraformCli, Client::NoFork] {
            let setup = Setup {
                api: Api::Flat,
                change: Change::GroupMove,
                ..Setup::default()
            };
            let mut world = World::new(setup, client);
            walk(&mut world, &two_created());
            assert_eq!(phases(&world), ["libs managed", "a-libs managed"]);
            // Step 1, then what it waits for: orphaned, let go, finalized.
            walk(
                &mut world,
                &[Upgrade, Composite, ProviderAll, Composite, ProviderAll],
            );
            // Steps 2 and 3: the upgrade, the adoption, observed.
            walk(
                &mut world,
                &[Upgrade, Upgrade, Composite, ProviderAll, Composite],
            );
            assert_eq!(phases(&world), ["libs adopted", "a-libs adopted"]);
            take_over_and_finish(&mut world);
            assert_eq!(phases(&world), ["libs managed", "a-libs managed"]);
            let kinds: Vec<&str> = world
                .cluster
                .resources
                .values()
                .map(|m| m.object["kind"].as_str().unwrap())
                .collect();
            assert_eq!(kinds, ["NPMRepository", "MavenRepository"], "{client:?}");
            assert_eq!(creates_and_deletes(&world), (2, 0), "{client:?}");
        }
    }

    /// Issue 55, a Crossplane v1 claim moved to a v2 namespaced composite as
    /// docs/upgrading.md gives it, under both clients: `neverDelete`, the claim deleted once
    /// its resources show Orphan (Crossplane deletes them, the provider keeps the
    /// repositories), the namespaced composite importing the same keys, taking them over,
    /// `neverDelete` dropped: every invariant holds at every step, and nothing is created
    /// twice or deleted.
    #[test]
    fn the_move_to_a_namespaced_composite_keeps_every_repository() {
        for client in [Client::TerraformCli, Client::NoFork] {
            for bounded in [false, true] {
                let setup = Setup {
                    bounded,
                    api: Api::Cluster,
                    change: Change::ToNamespaced,
                };
                let mut world = World::new(setup, client);
                let named = |name: &str| super::super::add(name, bounded.then_some("team1-libs"));
                walk(&mut world, &[vec![named("libs")], created()].concat());
                assert_eq!(phases(&world), ["libs managed"]);
                // Deleting the claim waits until the status says neverDelete and the resource
                // shows Orphan.
                walk(&mut world, &[Upgrade, Upgrade]);
                assert_eq!(world.steps.len(), 4, "{}", world.trace.join("\n"));
                walk(&mut world, &[Composite, Upgrade, ProviderAll]);
                assert!(
                    world.cluster.resources.is_empty(),
                    "{}",
                    world.trace.join("\n")
                );
                walk(
                    &mut world,
                    &[Composite, Upgrade, Composite, ProviderAll, Composite],
                );
                assert_eq!(phases(&world), ["libs adopted"]);
                assert_eq!(world.cluster.status["neverDelete"], true);
                take_over_and_finish(&mut world);
                assert_eq!(phases(&world), ["libs managed"]);
                let resource = world.cluster.resources.values().next().expect("one");
                assert_eq!(
                    resource.object["apiVersion"],
                    "local.artifactory.jfrog.m.crossplane.io/v1alpha1"
                );
                assert_eq!(creates_and_deletes(&world), (1, 0), "{client:?}");
            }
        }
    }

    /// Issue 55, the provider's v0.7.1 renames under a live claim: the npm entry's resource is
    /// served as `NPMRepository` after the upgrade and rendered so, the same composed
    /// resource, key and repository; nothing is retired, created or deleted.
    #[test]
    fn a_renamed_kind_keeps_its_resource() {
        for client in [Client::TerraformCli, Client::NoFork] {
            let setup = Setup {
                change: Change::Rename,
                ..Setup::default()
            };
            let mut world = World::new(setup, client);
            walk(&mut world, &two_created());
            let kind = |world: &World| world.cluster.resources["a-libs"].object["kind"].clone();
            assert_eq!(kind(&world), "NpmRepository");
            let name = world.cluster.resources["a-libs"].object["metadata"]["name"].clone();
            walk(&mut world, &[Upgrade, Composite, ProviderAll, Composite]);
            assert!(world.steps.is_empty());
            assert_eq!(kind(&world), "NPMRepository");
            assert_eq!(
                world.cluster.resources["a-libs"].object["metadata"]["name"],
                name
            );
            assert_eq!(phases(&world), ["libs managed", "a-libs managed"]);
            assert_eq!(creates_and_deletes(&world), (2, 0), "{client:?}");
        }
    }
}
