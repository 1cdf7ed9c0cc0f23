//! Lifecycle safety for live repositories: keys that must not change, retiring
//! repositories that left the spec (orphaned before they go), moves, leaked
//! creations and key conflicts across composites. What deleting a repository
//! would do is computed by `policy::effective_deletion`.

use crate::core::catalog::{catalog, parse_version, Kind, ProviderApi, Release};
use crate::core::compose::EXTERNAL_NAME;
use crate::core::composite::CompositeMeta;
use crate::core::keys::{key_label_value, KEY_LABEL};
use crate::core::observed::Observed;
use crate::core::plan::Planned;
use crate::core::policy::{effective_deletion, Deletion, DeletionPolicy};
use crate::core::problems::{a_or_an, some_of, Category, Findings};
use crate::core::sorted;
use crate::proto::v1::{resource_selector::Match, MatchLabels, ResourceSelector, Resources};
use crate::proto::{ObjectView, Struct, View};
use foldhash::fast::RandomState;
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

/// Keys and kinds are immutable: a live repository whose entry now yields
/// another key or kind would be renamed (orphaning the old repository) or
/// replaced. Both fail the call. A kind the provider renamed keeps its CRD, so it is the same
/// kind under its new name.
///
/// `renamed_by_project_key`: the key changes come from a changed `spec.projectKey` or naming
/// format, reported once for them all ([`check_project_key_change`],
/// [`check_naming_format_change`]), so not again here.
pub(crate) fn check_immutable(
    p: &Planned,
    live: &Observed,
    renamed_by_project_key: bool,
    findings: &mut Findings,
) {
    let entry = p.entry;
    if let Some(live_key) = live.key() {
        if live_key != p.key && !renamed_by_project_key {
            findings.problem(
                Category::UnsafeChange,
                crate::core::keys::key_path(entry),
                Some(entry.index),
                format!(
                    "{}: the live repository has key \"{live_key}\" and the spec now asks for \"{}\"; keys are immutable in Artifactory, so this would orphan \"{live_key}\" and create \"{}\"",
                    entry.label(),
                    p.key,
                    p.key
                ),
                format!(
                    "keep the key (set key: \"{live_key}\" on the entry); to move, add a new entry (with a new name) for \"{}\" and remove this one, which is then retired safely{}",
                    p.key,
                    if entry.key.is_none() {
                        "; if the Composition's naming format changed, set it back there"
                    } else {
                        ""
                    }
                ),
            );
        }
    }
    let (live_api_version, live_kind) = (live.api_version, live.kind);
    if moves_group(p, live) {
        // Said once for every entry by `check_group_move`.
        return;
    }
    // A kind the provider renamed (same CRD) is the same kind: the new name is rendered.
    if !catalog().same_crd(
        (live_api_version, live_kind),
        (&p.kind.api_version, &p.kind.kind),
    ) {
        findings.problem(
            Category::UnsafeChange,
            entry.path(),
            Some(entry.index),
            format!(
                "{}: the live repository is {} {live_kind} ({live_api_version}) and the spec now renders {} {} ({}); the class and package type of a repository cannot change",
                entry.label(),
                a_or_an(live_kind),
                a_or_an(&p.kind.kind),
                p.kind.kind,
                p.kind.api_version
            ),
            "restore rclass and packageType; to move, add a new entry (with a new name and key) and remove this one, which is then retired safely",
        );
    }
}

/// A live resource whose kind the provider renamed and that is now rendered under the new name:
/// `libs (NpmRepository -> NPMRepository, provider v0.7.1)`, for a Normal result.
pub(crate) fn renamed_kind(p: &Planned, live: &Observed) -> Option<String> {
    if live.kind == p.kind.kind {
        return None;
    }
    let catalog = catalog();
    let rename = catalog.renames().iter().find(|r| {
        r.group == crate::core::catalog::api_group(live.api_version)
            && r.from == live.kind
            && r.to == p.kind.kind
    })?;
    Some(format!(
        "{} ({} -> {}, provider {})",
        p.name,
        rename.from,
        rename.to,
        catalog.release_name(rename.release)
    ))
}

/// The group of the flat API (provider releases v0.1.0 to v0.6.0).
const FLAT_GROUP: &str = "artifactory.jfrog.crossplane.io";

/// A live resource of the flat API whose entry now renders a kind of the split groups: the
/// provider's v0.7.0 group move, not a change of class or package type.
fn moves_group(p: &Planned, live: &Observed) -> bool {
    p.kind.api != ProviderApi::Flat
        && crate::core::catalog::api_group(live.api_version) == FLAT_GROUP
}

/// The provider's v0.7.0 group move: live resources of the flat group
/// (`artifactory.jfrog.crossplane.io`) while the call renders the split groups
/// (`local.`/`remote.`/`virtual.`). v0.7.0 ships none of the flat CRDs, so the old resources
/// must be released while the old provider runs, and the new kinds adopt the keys after the
/// upgrade: one problem, at the input's `providerApi`, that says so step by step
/// (docs/upgrading.md). Returns whether it was.
pub(crate) fn check_group_move(
    planned: &[Planned],
    live: &[Option<Observed>],
    provider_api_path: String,
    findings: &mut Findings,
) -> bool {
    let moving: Vec<String> = planned
        .iter()
        .zip(live)
        .filter_map(|(p, live)| {
            let live = live.as_ref()?;
            moves_group(p, live).then(|| {
                format!(
                    "{} ({} -> {} {})",
                    p.name,
                    live.kind,
                    p.kind.kind,
                    crate::core::catalog::api_group(&p.kind.api_version)
                )
            })
        })
        .collect();
    if moving.is_empty() {
        return false;
    }
    let count = moving.len();
    findings.problem(
        Category::UnsafeChange,
        provider_api_path,
        None,
        format!(
            "{count} live {} of the flat API (artifactory.jfrog.crossplane.io, provider v0.6.0 and before) would be rendered as kinds of the split groups: {}; this is the provider's v0.7.0 group move, and v0.7.0 serves none of the flat kinds, so the old managed resources must be released before the provider is upgraded (else they are left without a controller, stuck on their finalizers)",
            if count == 1 { "repository" } else { "repositories" },
            some_of(&moving)
        ),
        "follow docs/upgrading.md: 1. with providerApi: flat and the old provider still running, set releaseFlat: true in the Composition's function input; the function orphans each flat managed resource, then lets it go, and the repositories stay; 2. upgrade the provider to v0.7.0 or later; 3. set providerApi: cluster, remove releaseFlat, and mark the entries import: true, then take them over once adopted",
    );
    true
}

/// When every live repository whose key would change gets the new `spec.projectKey` in its
/// key and had not had it, the project key changed: that is the one cause, said once at
/// `spec.projectKey` with the repositories it would rename. Returns whether it was.
pub(crate) fn check_project_key_change(
    planned: &[Planned],
    live: &[Option<Observed>],
    project_key: Option<&str>,
    findings: &mut Findings,
) -> bool {
    let Some(project_key) = project_key else {
        return false;
    };
    let renames: Vec<(&str, &str, &Observed)> = planned
        .iter()
        .zip(live)
        .filter_map(|(p, live)| {
            let live = live.as_ref()?;
            Some((live.key()?, p.key.as_str(), live))
        })
        .filter(|(old, new, _)| old != new)
        .collect();
    let from_project_key = |(old, new, _): &(&str, &str, &Observed)| {
        new.contains(project_key) && !old.contains(project_key)
    };
    if renames.is_empty() || !renames.iter().all(from_project_key) {
        return false;
    }
    let list: Vec<String> = renames
        .iter()
        .map(|(old, new, _)| format!("\"{old}\" -> \"{new}\""))
        .collect();
    let count = renames.len();
    let noun = if count == 1 {
        "repository"
    } else {
        "repositories"
    };
    let previous = previous_project_key(renames.iter().map(|(_, _, live)| *live));
    let (from, restore) = match previous {
        PreviousProjectKey::Unknown => (
            String::new(),
            "restore projectKey to the value the live keys were made with".to_owned(),
        ),
        PreviousProjectKey::Unset => (
            " from unset".to_owned(),
            "remove projectKey, as the live keys were made without one".to_owned(),
        ),
        PreviousProjectKey::Was(old) => (
            format!(" from \"{old}\""),
            format!("restore projectKey: \"{old}\", the value the live keys were made with"),
        ),
    };
    findings.problem(
        Category::UnsafeChange,
        "spec.projectKey",
        None,
        format!(
            "changing projectKey{from} to \"{project_key}\" would rename {count} live {noun}: {}; keys are immutable in Artifactory, so each would be orphaned and a new one created",
            some_of(&list)
        ),
        format!("{restore}; to move the repositories to the new project, add new entries and remove these, which are then retired safely"),
    );
    true
}

/// The naming format in use and where it is set, for [`check_naming_format_change`].
pub(crate) struct Naming<'a> {
    /// The format keys are computed with now.
    pub format: &'a str,
    /// Whether the Composition's step sets it (else it is the default).
    pub given: bool,
    /// The field path of the setting: `input.naming.format`.
    pub path: String,
    pub meta: &'a CompositeMeta,
    pub project_key: Option<&'a str>,
}

/// A change of the Composition's naming format, not of the claim. The heuristic: at least two
/// live repositories have computed keys (no `key` or `import` on their entries), every one of
/// them would get another key, no given key changes, and one format other than the current one
/// gives all their live keys ([`crate::core::keys::format_of_key`]). Nothing in a claim changes
/// the computed keys of live entries together but its `spec.projectKey` (reported by
/// [`check_project_key_change`], checked first) or the removal of `key` from each entry, which
/// a single format rarely explains. Said once at the format's setting, with the old and new
/// formats and the repositories it would rename. Returns whether it was.
pub(crate) fn check_naming_format_change(
    planned: &[Planned],
    live: &[Option<Observed>],
    naming: &Naming,
    findings: &mut Findings,
) -> bool {
    let mut renames: Vec<(&str, &Planned)> = Vec::new();
    for (p, live) in planned.iter().zip(live) {
        let Some(live_key) = live.as_ref().and_then(Observed::key) else {
            continue;
        };
        let computed = p.entry.key.is_none() && !p.entry.import;
        match (computed, live_key == p.key) {
            (true, false) => renames.push((live_key, p)),
            // A computed key that stays, or a given key that changes: not the format.
            (true, true) | (false, false) => return false,
            (false, true) => {}
        }
    }
    if renames.len() < 2 {
        return false;
    }
    let old_formats: BTreeSet<String> = renames
        .iter()
        .map(|(old, p)| {
            crate::core::keys::format_of_key(
                old,
                p.name,
                p.kind.rclass,
                &p.kind.package_type,
                naming.meta,
                naming.project_key,
            )
        })
        .collect();
    let old = match old_formats.first() {
        Some(old) if old_formats.len() == 1 && old != naming.format => old,
        _ => return false,
    };
    let list: Vec<String> = renames
        .iter()
        .map(|(old, p)| format!("\"{old}\" -> \"{}\"", p.key))
        .collect();
    let now = if naming.given {
        format!("\"{}\"", naming.format)
    } else {
        format!("\"{}\" (the default, without naming.format)", naming.format)
    };
    findings.problem(
        Category::UnsafeChange,
        naming.path.clone(),
        None,
        format!(
            "the Composition's naming format changed from \"{old}\" to {now}: it would rename {} live repositories: {}; keys are immutable in Artifactory, so each would be orphaned and a new one created (the claim did not change these keys)",
            renames.len(),
            some_of(&list)
        ),
        format!(
            "set {}: \"{old}\" again in the Composition's function step (for every claim it renders); or, in this claim, set key: to the live key on each entry; to rename the repositories on purpose, add new entries and remove these, which are then retired safely",
            naming.path
        ),
    );
    true
}

/// The project key the live repositories were rendered with.
enum PreviousProjectKey<'a> {
    Was(&'a str),
    Unset,
    /// They disagree, or one is not a managed resource this function rendered.
    Unknown,
}

/// Read from the live resources' `spec.forProvider.projectKey`, which the function writes
/// from `spec.projectKey`: the old value is gone from the composite, but not from them.
fn previous_project_key<'a, 'o: 'a>(
    live: impl Iterator<Item = &'a Observed<'o>>,
) -> PreviousProjectKey<'o> {
    let mut values = live.map(|observed| {
        observed
            .spec
            .and_then(|spec| spec.get("forProvider"))
            .map(|fields| fields.get("projectKey").and_then(View::as_str))
    });
    let Some(Some(first)) = values.next() else {
        return PreviousProjectKey::Unknown;
    };
    if !values.all(|value| value == Some(first)) {
        return PreviousProjectKey::Unknown;
    }
    match first {
        Some(old) => PreviousProjectKey::Was(old),
        None => PreviousProjectKey::Unset,
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

// ---- retiring removed repositories -----------------------------------------

/// What happens to a live repository whose entry is gone from the spec.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Retirement {
    /// Kept in the desired state with deletion turned into Orphan.
    Orphaning {
        name: String,
        key: String,
        desired: Value,
    },
    /// Left out: Crossplane deletes the managed resource and the repository stays.
    Released { name: String, key: String },
    /// Left out with protection off while deletion is Delete: the repository goes too.
    Deleted { name: String, key: String },
}

/// The managed resources of this function that no entry claims any more.
///
/// Ours are the observed composed resources that no earlier pipeline step rendered (they are
/// not in the request's desired state, `earlier_steps`) and that are a repository kind of the
/// catalog, of any release, group or scope, or carry the key label. The label alone cannot
/// decide: resources composed before the function (or by a version that did not label them)
/// lack it, and dropping them would delete their repositories. An earlier step's resource is
/// never ours, whatever its kind or labels: retiring it would overwrite that step's intent.
pub(crate) fn retire<'a>(
    observed: impl IntoIterator<Item = (&'a String, ObjectView<'a>)>,
    earlier_steps: &BTreeMap<String, crate::proto::v1::Resource>,
    planned: &[Planned],
    protection: bool,
) -> Vec<Retirement> {
    // Built when first needed: a first call observes nothing of ours, and nothing retires in
    // most calls after it. foldhash, not SipHash: every reconcile looks up every resource.
    let mut names: Option<HashSet<&str, RandomState>> = None;
    let mut keys = None;
    observed
        .into_iter()
        .filter(|(name, _)| {
            !names
                .get_or_insert_with(|| planned.iter().map(|p| p.name).collect())
                .contains(name.as_str())
                && !earlier_steps.contains_key(name.as_str())
        })
        .map(|(name, live)| (name, Observed::read(live)))
        .filter(|(_, live)| is_ours(live))
        .map(|(name, live)| {
            let keys = keys.get_or_insert_with(|| planned_keys(planned));
            let moving = live.key().is_some_and(|key| keys.contains_key(key));
            retire_one(name, &live, protection || moving)
        })
        .collect()
}

/// A repository kind of the catalog (any release, group or scope), or a resource with the key
/// label: a composed resource of this function.
fn is_ours(live: &Observed) -> bool {
    live.key_label.is_some() || catalog().is_repository_kind(live.api_version, live.kind)
}

/// The planned entries' names by their keys (the first entry of a key): looked up once per
/// observed resource, so not searched for in a list.
fn planned_keys<'p>(planned: &'p [Planned]) -> HashMap<&'p str, &'p str, RandomState> {
    let mut keys = HashMap::with_capacity_and_hasher(planned.len(), RandomState::default());
    for p in planned {
        keys.entry(p.key.as_str()).or_insert(p.name);
    }
    keys
}

/// An entry renamed with its key kept: the repository moves from the retiring resource to the
/// entry's new one.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Move<'r> {
    pub from: &'r str,
    pub to: &'r str,
    pub key: &'r str,
}

/// The moves among the retirements: each retiring resource whose key a planned entry takes.
/// The entry's resource is held back until the old one is gone, so that two managed resources
/// never act on one repository; the old one is orphaned first, whatever deletion protection
/// says, so that the repository stays.
pub(crate) fn moves<'r>(retirements: &'r [Retirement], planned: &'r [Planned]) -> Vec<Move<'r>> {
    if retirements.is_empty() {
        return Vec::new();
    }
    let keys = planned_keys(planned);
    retirements
        .iter()
        .filter_map(|retirement| {
            let (from, key) = retirement.name_and_key();
            let to = *keys.get(key)?;
            Some(Move { from, to, key })
        })
        .collect()
}

impl Retirement {
    /// The composed resource's name and the repository's key.
    pub(crate) fn name_and_key(&self) -> (&str, &str) {
        match self {
            Retirement::Orphaning { name, key, .. }
            | Retirement::Released { name, key }
            | Retirement::Deleted { name, key } => (name, key),
        }
    }
}

fn retire_one(name: &str, live: &Observed, protection: bool) -> Retirement {
    let key = live.key().unwrap_or_default().to_owned();
    let name = name.to_owned();
    match (live_deletion(live), protection) {
        (Deletion::Orphan, _) => Retirement::Released { name, key },
        (Deletion::Delete, false) => Retirement::Deleted { name, key },
        (Deletion::Delete, true) => Retirement::Orphaning {
            desired: orphaning_desired(live),
            name,
            key,
        },
    }
}

/// Namespaced kinds live in the `.m.` groups.
fn live_api(live: &Observed) -> ProviderApi {
    if live.api_version.contains(".m.crossplane.io/") {
        ProviderApi::Namespaced
    } else {
        ProviderApi::Cluster
    }
}

fn live_policies(live: &Observed) -> Option<Vec<String>> {
    let list = live.spec?.get("managementPolicies")?.as_list()?;
    Some(
        list.iter()
            .filter_map(|p| p.as_str().map(str::to_owned))
            .collect(),
    )
}

/// What deleting the live resource would do now.
pub(crate) fn live_deletion(live: &Observed) -> Deletion {
    let deletion_policy = match live
        .spec
        .and_then(|s| s.get("deletionPolicy"))
        .and_then(View::as_str)
    {
        Some("Orphan") => Some(DeletionPolicy::Orphan),
        _ => None,
    };
    effective_deletion(
        live_api(live),
        live_policies(live).as_deref(),
        deletion_policy,
    )
}

/// The live resource as a desired one, with deletion turned into Orphan and
/// everything else as it is, so nothing about the repository changes.
fn orphaning_desired(live: &Observed) -> Value {
    let mut spec = live.spec.map(ObjectView::to_map).unwrap_or_default();
    if live_api(live) == ProviderApi::Namespaced {
        let policies = live_policies(live).unwrap_or_else(|| vec!["*".into()]);
        spec.insert(
            "managementPolicies".into(),
            json!(without_delete(&policies)),
        );
    } else {
        spec.insert("deletionPolicy".into(), json!("Orphan"));
    }
    let key = live.key().unwrap_or_default();
    let mut annotations = Map::new();
    annotations.insert(EXTERNAL_NAME.into(), json!(key));
    if let Some(paused) = live.annotations.paused {
        annotations.insert(crate::core::compose::PAUSED.into(), json!(paused));
    }
    json!({
        "apiVersion": live.api_version,
        "kind": live.kind,
        "metadata": {"annotations": annotations, "labels": {KEY_LABEL: key_label_value(key)}},
        "spec": spec,
    })
}

/// The same management without the right to delete: `*` spelled out without Delete.
fn without_delete(policies: &[String]) -> Vec<String> {
    if policies.iter().any(|p| p == "*") {
        return ["Observe", "Create", "Update", "LateInitialize"]
            .map(String::from)
            .to_vec();
    }
    policies
        .iter()
        .filter(|p| *p != "Delete")
        .cloned()
        .collect()
}

// ---- key conflicts across composites ---------------------------------------

/// The requirement name for an entry's key lookup; stable across calls.
pub(crate) fn requirement_name(p: &Planned) -> String {
    format!("artifactory-key-{}", p.name)
}

/// The requirement name for an entry's key lookup among the kinds of the other provider API
/// ([`other_api_kind`]); stable across calls, and never an entry's [`requirement_name`].
pub(crate) fn other_requirement_name(p: &Planned, other: &Kind) -> String {
    format!("artifactory-other-key-{}-{}", other.api, p.name)
}

/// The provider API whose managed resources can hold the same keys as `api`'s on one cluster:
/// from v0.8.0 the provider serves the cluster-scoped and the namespaced kinds side by side (a
/// Crossplane v1 claim's resources and a v2 namespaced composite's). The flat API never shares
/// a release with another.
pub(crate) fn other_api(api: ProviderApi) -> Option<ProviderApi> {
    match api {
        ProviderApi::Cluster => Some(ProviderApi::Namespaced),
        ProviderApi::Namespaced => Some(ProviderApi::Cluster),
        ProviderApi::Flat => None,
    }
}

/// The kind of an entry's class and package type in the other provider API, as `release` (the
/// input's, else the newest) names it; `None` where that release has none.
pub(crate) fn other_api_kind(p: &Planned, release: Option<Release>) -> Option<&'static Kind> {
    let other = other_api(p.kind.api)?;
    catalog().kind_in(release, other, p.kind.rclass, &p.kind.package_type)
}

/// The first release in which the provider declares SafeStart: from it on a kind is served only
/// once activated, so a release alone does not say which kinds a cluster serves.
const SAFE_START: (u32, u32, u32) = (0, 9, 0);

/// Whether a cluster that runs `release` serves every kind of it: a release before SafeStart
/// installs and serves all its CRDs.
pub(crate) fn serves_every_kind(release: Release) -> bool {
    parse_version(catalog().release_name(release)).is_some_and(|version| version < SAFE_START)
}

fn key_selector(kind: &Kind, key: &str) -> ResourceSelector {
    ResourceSelector {
        api_version: kind.api_version.clone(),
        kind: kind.kind.clone(),
        r#match: Some(Match::MatchLabels(MatchLabels {
            labels: sorted::map([(KEY_LABEL.to_owned(), key_label_value(key))]),
        })),
        namespace: None,
    }
}

/// Asks Crossplane for managed resources that carry the key label of each
/// rendered repository: of the kind rendered and, where `others` gives one, of the same class
/// and package type in the other provider API (a kind the cluster is known to serve: Crossplane
/// fails the whole call when a required kind is not served). The same plan and answers give the
/// same requirements, so Crossplane's requirement loop settles.
pub(crate) fn key_requirements(
    planned: &[Planned],
    others: &[Option<&Kind>],
) -> BTreeMap<String, ResourceSelector> {
    let own = planned
        .iter()
        .map(|p| (requirement_name(p), key_selector(p.kind, &p.key)));
    let other = planned.iter().zip(others).filter_map(|(p, other)| {
        let other = (*other)?;
        Some((
            other_requirement_name(p, other),
            key_selector(other, &p.key),
        ))
    });
    sorted::map(own.chain(other))
}

/// A managed resource with one of our keys, controlled by another composite,
/// would make two composites fight over one repository.
pub(crate) fn check_conflicts(
    p: &Planned,
    found: Option<&Resources>,
    me: &CompositeMeta,
    findings: &mut Findings,
) {
    for item in found.into_iter().flat_map(|r| &r.items) {
        let Some(object) = item.resource.as_ref().map(Struct::view) else {
            continue;
        };
        let Some(owner) = controller(object) else {
            continue;
        };
        if is_me(owner, me) {
            continue;
        }
        let owner_kind = owner
            .get("kind")
            .and_then(View::as_str)
            .unwrap_or("composite");
        let owner_name = owner.get("name").and_then(View::as_str).unwrap_or_default();
        let resource_name = object
            .get("metadata")
            .and_then(|m| m.get("name"))
            .and_then(View::as_str)
            .unwrap_or_default();
        findings.problem(
            Category::KeyConflict,
            crate::core::keys::key_path(p.entry),
            Some(p.entry.index),
            format!(
                "{}: key \"{}\" is already managed by {owner_kind} \"{owner_name}\" (managed resource {resource_name})",
                p.entry.label(),
                p.key
            ),
            "choose another key, or remove the repository from the other composite first",
        );
    }
}

fn controller(object: ObjectView<'_>) -> Option<ObjectView<'_>> {
    object
        .get("metadata")?
        .get("ownerReferences")?
        .as_list()?
        .iter()
        .filter_map(View::as_object)
        .find(|r| r.get("controller").and_then(View::as_bool) == Some(true))
}

fn is_me(owner: ObjectView, me: &CompositeMeta) -> bool {
    let field = |name: &str| owner.get(name).and_then(View::as_str);
    match (field("uid"), me.uid.as_deref()) {
        (Some(uid), Some(mine)) if !uid.is_empty() && !mine.is_empty() => uid == mine,
        _ => field("kind") == Some(me.kind.as_str()) && field("name") == Some(me.name.as_str()),
    }
}

#[cfg(test)]
mod live_tests {
    use super::*;

    #[test]
    fn without_delete_spells_out_star() {
        assert_eq!(
            without_delete(&["*".into()]),
            ["Observe", "Create", "Update", "LateInitialize"]
        );
        assert_eq!(
            without_delete(&["Observe".into(), "Delete".into()]),
            ["Observe"]
        );
    }
}
