//! Guards on live repositories (docs/lifecycle.md, "What it will do"): a key, kind or field
//! the spec would change on a live repository fails the call, with the cause said once: an
//! entry's key or kind, the claim's `spec.projectKey`, the Composition's naming format, or the
//! provider's v0.7.0 group move.

use crate::core::catalog::{catalog, ProviderApi};
use crate::core::composite::CompositeMeta;
use crate::core::lifecycle::observed::Observed;
use crate::core::lifecycle::Repository;
use crate::core::plan::Planned;
use crate::core::problems::{a_or_an, some_of, Category, Findings};
use crate::proto::View;
use std::collections::BTreeSet;

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
    repositories: &[Repository],
    provider_api_path: String,
    findings: &mut Findings,
) -> bool {
    let moving: Vec<String> = repositories
        .iter()
        .filter_map(|r| {
            let (p, live) = (&r.planned, r.observed.as_ref()?);
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
    repositories: &[Repository],
    project_key: Option<&str>,
    findings: &mut Findings,
) -> bool {
    let Some(project_key) = project_key else {
        return false;
    };
    let renames: Vec<(&str, &str, &Observed)> = repositories
        .iter()
        .filter_map(|r| {
            let live = r.observed.as_ref()?;
            Some((live.key()?, r.planned.key.as_str(), live))
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
    repositories: &[Repository],
    naming: &Naming,
    findings: &mut Findings,
) -> bool {
    let mut renames: Vec<(&str, &Planned)> = Vec::new();
    for r in repositories {
        let p = &r.planned;
        let Some(live_key) = r.observed.as_ref().and_then(Observed::key) else {
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
