//! The random events, as a proptest strategy: a claim's author edits entries, outside actors
//! make and remove repositories, the provider reconciles managed resources, Crossplane
//! reconciles the composite. Claim edits and provider steps are separate events from the
//! composite's reconcile, so several of them can fall between two calls of the function: it
//! does not see every intermediate state.
//!
//! Names, keys and project keys come from small pools that overlap on purpose (`libs` and
//! `a-libs` under project keys `team1` and `team1-a` give the same key, and the outside keys
//! are the ones the claim computes), so that collisions, moves and held keys are common.

use proptest::prelude::*;

/// Entry names.
pub const NAMES: [&str; 3] = ["libs", "a-libs", "docs"];
/// Keys given in an entry's `key`, or made by outside actors.
pub const KEYS: [&str; 5] = [
    "team1-libs",
    "team1-a-libs",
    "payments-libs",
    "LIBS",
    "docs",
];
/// `spec.projectKey` values.
pub const PROJECT_KEYS: [&str; 3] = ["team1", "team1-a", "payments"];
/// Package types of the entries: two java types, so that reusing a name can change it.
pub const PACKAGE_TYPES: [&str; 3] = ["maven", "gradle", "npm"];
/// Management policies an entry may give itself (`None`: the default, `*`).
pub const POLICIES: [&[&str]; 3] = [
    &["Observe"],
    &["Observe", "Create", "Update", "LateInitialize"],
    &["Observe", "Create", "Update", "Delete"],
];

/// An event. Indices into pools are taken modulo their length; `slot` picks an entry (or a
/// managed resource) of the current state modulo their count, and does nothing when there is
/// none.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// The claim adds an entry (`key` given, or computed).
    Add {
        name: usize,
        package: usize,
        key: Option<usize>,
    },
    /// The claim removes an entry.
    Remove { slot: usize },
    /// The claim renames an entry and keeps its key (written into `key`).
    Rename { slot: usize, name: usize },
    /// The claim gives an entry another key (or drops its own, back to the computed one).
    ReKey { slot: usize, key: Option<usize> },
    /// The claim sets or removes `import: true`.
    Import { slot: usize, on: bool },
    /// The claim sets an entry's own management policies (or removes them).
    Policies {
        slot: usize,
        policies: Option<usize>,
    },
    /// The claim sets an entry's deletion policy (`Some(true)`: Delete), or removes it.
    Deletion { slot: usize, delete: Option<bool> },
    /// The claim sets an entry's description (a setting the provider writes).
    Describe { slot: usize, text: Option<usize> },
    /// The claim sets or removes `spec.projectKey`.
    ProjectKey(Option<usize>),
    /// An outside actor makes a repository, with settings of its own.
    OutsideCreate { key: usize, snapshots: bool },
    /// An outside actor deletes a repository.
    OutsideDelete { key: usize },
    /// The provider's next create fails: after Artifactory made the repository (a timeout
    /// after the PUT), or before.
    CreateFails { after_made: bool },
    /// A second claim, another team's, asks for key `key` in its one entry (or drops it).
    SecondClaim { key: Option<usize> },
    /// Crossplane reconciles the second claim's composite.
    SecondComposite,
    /// The provider reconciles one managed resource.
    Provider { slot: usize },
    /// The provider reconciles every managed resource once.
    ProviderAll,
    /// Crossplane reconciles the composite: the function is called.
    Composite,
    /// The platform team takes the next step of the sequence's provider change
    /// ([`Setup::change`]), as docs/upgrading.md gives it; nothing while the step's
    /// precondition (what the procedure says to wait for) does not hold, or when none is left.
    Upgrade,
}

impl Event {
    /// A claim edit, which the function sees at the next composite reconcile.
    pub fn edits_claim(&self) -> bool {
        matches!(
            self,
            Event::Add { .. }
                | Event::Remove { .. }
                | Event::Rename { .. }
                | Event::ReKey { .. }
                | Event::Import { .. }
                | Event::Policies { .. }
                | Event::Deletion { .. }
                | Event::Describe { .. }
                | Event::ProjectKey(_)
        )
    }

    /// A claim edit the function may refuse on purpose: one that changes or gives a key (a
    /// live key cannot change; with `allowedKeys`, `bounded`, every key must match, computed
    /// ones too).
    pub fn may_be_refused(&self, bounded: bool) -> bool {
        matches!(self, Event::Add { .. }) && bounded
            || matches!(
                self,
                Event::Add { key: Some(_), .. }
                    | Event::Rename { .. }
                    | Event::ReKey { .. }
                    | Event::Import { on: true, .. }
                    | Event::ProjectKey(_)
            )
    }
}

/// Texts a description can take.
pub const DESCRIPTIONS: [&str; 2] = ["team libraries", "mirror"];

fn slot() -> impl Strategy<Value = usize> {
    0..4usize
}

/// One event; provider steps and composite reconciles are the most frequent, as in a cluster.
pub fn event() -> impl Strategy<Value = Event> {
    prop_oneof![
        3 => (0..NAMES.len(), 0..PACKAGE_TYPES.len(), proptest::option::of(0..KEYS.len()))
            .prop_map(|(name, package, key)| Event::Add { name, package, key }),
        1 => slot().prop_map(|slot| Event::Remove { slot }),
        1 => (slot(), 0..NAMES.len()).prop_map(|(slot, name)| Event::Rename { slot, name }),
        1 => (slot(), proptest::option::of(0..KEYS.len()))
            .prop_map(|(slot, key)| Event::ReKey { slot, key }),
        2 => (slot(), any::<bool>()).prop_map(|(slot, on)| Event::Import { slot, on }),
        1 => (slot(), proptest::option::of(0..POLICIES.len()))
            .prop_map(|(slot, policies)| Event::Policies { slot, policies }),
        1 => (slot(), proptest::option::of(any::<bool>()))
            .prop_map(|(slot, delete)| Event::Deletion { slot, delete }),
        1 => (slot(), proptest::option::of(0..DESCRIPTIONS.len()))
            .prop_map(|(slot, text)| Event::Describe { slot, text }),
        1 => proptest::option::of(0..PROJECT_KEYS.len()).prop_map(Event::ProjectKey),
        2 => (0..KEYS.len() + NAMES.len(), any::<bool>())
            .prop_map(|(key, snapshots)| Event::OutsideCreate { key, snapshots }),
        1 => (0..KEYS.len() + NAMES.len()).prop_map(|key| Event::OutsideDelete { key }),
        1 => any::<bool>().prop_map(|after_made| Event::CreateFails { after_made }),
        1 => proptest::option::of(0..KEYS.len()).prop_map(|key| Event::SecondClaim { key }),
        2 => Just(Event::SecondComposite),
        4 => slot().prop_map(|slot| Event::Provider { slot }),
        3 => Just(Event::ProviderAll),
        5 => Just(Event::Composite),
        3 => Just(Event::Upgrade),
    ]
}

/// The key an outside event names: a key of [`KEYS`], or an entry name (the key the naming
/// format computes without a project key).
pub fn outside_key(index: usize) -> &'static str {
    KEYS.get(index)
        .copied()
        .unwrap_or_else(|| NAMES[(index - KEYS.len()) % NAMES.len()])
}

/// Whether the function input sets `allowedKeys` (`{claimNamespace}-*`), which of the
/// provider's APIs the composite is rendered for at first, and the provider change the
/// sequence's [`Event::Upgrade`]s walk through.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Setup {
    pub bounded: bool,
    pub api: Api,
    pub change: Change,
}

/// A change of the provider's release or API that docs/upgrading.md gives the steps of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Change {
    /// None: the newest release of the setup's API throughout.
    #[default]
    None,
    /// v0.7.0 to v0.7.1, which renamed kinds in the same CRDs (`NpmRepository` to
    /// `NPMRepository`): the claim starts rendered for v0.7.0 (cluster API).
    Rename,
    /// v0.6.0 to v0.7.0, the group move: release the flat resources, upgrade, adopt the keys
    /// with the split-group kinds, take them over, drop `neverDelete` (flat API).
    GroupMove,
    /// A Crossplane v1 claim to a v2 namespaced composite: `neverDelete`, delete the claim,
    /// the namespaced composite imports the keys, takes them over, drops `neverDelete`
    /// (cluster API).
    ToNamespaced,
}

/// The provider's three APIs (docs/design.md): cluster-scoped kinds by class group, their
/// namespaced twins of Crossplane v2 (a namespaced composite; no `deletionPolicy`, deletion by
/// management policies), and the flat kinds of the releases before v0.7.0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Api {
    #[default]
    Cluster,
    Namespaced,
    Flat,
}

pub fn setup() -> impl Strategy<Value = Setup> {
    let api = prop_oneof![Just(Api::Cluster), Just(Api::Namespaced), Just(Api::Flat)];
    (any::<bool>(), api, 0..3usize).prop_map(|(bounded, api, pick)| {
        let changes: &[Change] = match api {
            Api::Cluster => &[Change::None, Change::Rename, Change::ToNamespaced],
            Api::Flat => &[Change::None, Change::GroupMove],
            Api::Namespaced => &[Change::None],
        };
        Setup {
            bounded,
            api,
            change: changes[pick % changes.len()],
        }
    })
}

/// A sequence of up to `steps` events.
pub fn sequence(steps: usize) -> impl Strategy<Value = (Setup, Vec<Event>)> {
    (setup(), proptest::collection::vec(event(), 1..=steps))
}
