//! Retiring repositories that left the spec (docs/lifecycle.md, "What it will do"): each is
//! orphaned before its managed resource goes, unless its deletion is Orphan already or
//! deletion protection is off; and moves, an entry renamed with its key kept, whose new
//! resource waits until the old one is released.

use crate::core::catalog::{catalog, ProviderApi};
use crate::core::compose::EXTERNAL_NAME;
use crate::core::keys::{key_label_value, KEY_LABEL};
use crate::core::lifecycle::observed::Observed;
use crate::core::lifecycle::Repository;
use crate::core::policy::{effective_deletion, Deletion, DeletionPolicy};
use crate::proto::{ObjectView, View};
use foldhash::fast::RandomState;
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, HashMap, HashSet};

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
    repositories: &[Repository],
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
                .get_or_insert_with(|| repositories.iter().map(|r| r.planned.name).collect())
                .contains(name.as_str())
                && !earlier_steps.contains_key(name.as_str())
        })
        .map(|(name, live)| (name, Observed::read(live)))
        .filter(|(_, live)| is_ours(live))
        .map(|(name, live)| {
            let keys = keys.get_or_insert_with(|| planned_keys(repositories));
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
fn planned_keys<'p, 'a>(
    repositories: &'p [Repository<'a>],
) -> HashMap<&'p str, &'a str, RandomState> {
    let mut keys = HashMap::with_capacity_and_hasher(repositories.len(), RandomState::default());
    for r in repositories {
        keys.entry(r.planned.key.as_str()).or_insert(r.planned.name);
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
pub(crate) fn moves<'r, 'a: 'r>(
    retirements: &'r [Retirement],
    repositories: &[Repository<'a>],
) -> Vec<Move<'r>> {
    if retirements.is_empty() {
        return Vec::new();
    }
    let keys = planned_keys(repositories);
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
    let policies = live_policies(live);
    if live_api(live) == ProviderApi::Namespaced {
        let policies = policies.unwrap_or_else(|| vec!["*".into()]);
        spec.insert(
            "managementPolicies".into(),
            json!(without_delete(&policies)),
        );
    } else {
        spec.insert("deletionPolicy".into(), json!("Orphan"));
        // Policies that list Delete delete whatever the deletion policy says
        // (crossplane-runtime `pkg/reconciler/managed/policies.go`, `ShouldDelete`): they lose
        // it too, or the orphaning never shows and the retirement never ends. `*` with Orphan
        // orphans, and stays as it is.
        if let Some(policies) = policies.filter(|p| p.iter().any(|x| x == "Delete")) {
            spec.insert(
                "managementPolicies".into(),
                json!(without_delete(&policies)),
            );
        }
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
