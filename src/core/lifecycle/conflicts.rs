//! Key conflicts across composites (docs/lifecycle.md, "What it will do"): the function asks
//! Crossplane for managed resources carrying the keys it renders, in its provider API and the
//! other one a cluster may serve beside it, and fails the call when another composite controls
//! one.

use crate::core::catalog::{catalog, parse_version, Kind, ProviderApi, Release};
use crate::core::composite::CompositeMeta;
use crate::core::keys::{key_label_value, KEY_LABEL};
use crate::core::lifecycle::Repository;
use crate::core::plan::Planned;
use crate::core::problems::{Category, Findings};
use crate::core::sorted;
use crate::proto::v1::{resource_selector::Match, MatchLabels, ResourceSelector, Resources};
use crate::proto::{ObjectView, Struct, View};
use std::collections::BTreeMap;

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
/// and package type in the other provider API (`Repository::other_kind`, a kind the cluster is known to serve: Crossplane
/// fails the whole call when a required kind is not served). The same plan and answers give the
/// same requirements, so Crossplane's requirement loop settles.
pub(crate) fn key_requirements(repositories: &[Repository]) -> BTreeMap<String, ResourceSelector> {
    let own = repositories.iter().map(|r| {
        (
            requirement_name(&r.planned),
            key_selector(r.planned.kind, &r.planned.key),
        )
    });
    let other = repositories.iter().filter_map(|r| {
        let (p, other) = (&r.planned, r.other_kind?);
        Some((
            other_requirement_name(p, other),
            key_selector(other, &p.key),
        ))
    });
    sorted::map(own.chain(other))
}

/// A managed resource with one of our keys, controlled by another composite, would make two
/// composites fight over one repository: each one Crossplane found for a key requirement, of
/// the kind rendered or of the other provider API, fails the call.
pub(crate) fn check_conflicts(
    repositories: &[Repository],
    answered: &BTreeMap<String, Resources>,
    me: &CompositeMeta,
    findings: &mut Findings,
) {
    for r in repositories {
        let p = &r.planned;
        check_found(p, answered.get(&requirement_name(p)), me, findings);
        if let Some(other) = r.other_kind {
            let found = answered.get(&other_requirement_name(p, other));
            check_found(p, found, me, findings);
        }
    }
}

fn check_found(
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
