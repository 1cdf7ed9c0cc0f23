//! Wiring (docs/design.md, "Wiring"): virtual repositories name their members by key,
//! and fields that belong to one repository class are refused on the others.

use crate::core::catalog::{package_family, Rclass};
use crate::core::composite::Entry;
use crate::core::path::FieldPath;
use crate::core::plan::Planned;
use crate::core::problems::{a_or_an, suggestion, Category, Findings};
use std::collections::{BTreeMap, BTreeSet};

/// Resolves member keys of every virtual and checks the wiring rules.
///
/// `entries` are all of the composite's entries: a member that names one that could not be
/// planned (it has problems of its own) is not reported again, and suggestions include it.
pub(crate) fn wire(planned: &mut [Planned], entries: &[Entry], findings: &mut Findings) {
    for p in planned.iter() {
        check_class_fields(p.entry, findings);
    }
    // Only virtual repositories name others: without one, nothing to resolve.
    if !planned
        .iter()
        .any(|p| p.entry.rclass == Some(Rclass::Virtual))
    {
        return;
    }
    let by_name: BTreeMap<&str, usize> = planned
        .iter()
        .enumerate()
        .map(|(i, p)| (p.name, i))
        .collect();
    let failed: BTreeSet<&str> = entries
        .iter()
        .filter_map(|e| e.name)
        .filter(|name| !by_name.contains_key(name))
        .collect();
    let resolved: Vec<(Vec<String>, Option<String>)> = planned
        .iter()
        .map(|p| resolve_virtual(p, planned, &by_name, &failed, findings))
        .collect();
    for (p, (members, default_key)) in planned.iter_mut().zip(resolved) {
        p.member_keys = members;
        p.default_deployment_key = default_key;
    }
    check_cycles(planned, &by_name, findings);
}

/// Fields only one class uses: `url` (remote), members and default (virtual), `members` (federated).
fn check_class_fields(entry: &Entry, findings: &mut Findings) {
    let Some(rclass) = entry.rclass else { return };
    let fields: [(&str, bool, Rclass); 5] = [
        ("url", entry.url.is_some(), Rclass::Remote),
        (
            "repositories",
            entry.repositories.is_some(),
            Rclass::Virtual,
        ),
        (
            "externalRepositories",
            entry.external_repositories.is_some(),
            Rclass::Virtual,
        ),
        (
            "defaultDeploymentRepo",
            entry.default_deployment_repo.is_some(),
            Rclass::Virtual,
        ),
        ("members", entry.members.is_some(), Rclass::Federated),
    ];
    for (field, present, owner) in fields {
        if present && rclass != owner {
            findings.problem(
                Category::InvalidWiring,
                entry.field_path(field),
                Some(entry.index),
                format!(
                    "{}: {field} is for {owner} repositories, and this one is {rclass}",
                    entry.label()
                ),
                format!("remove {field}, or change rclass to {owner}"),
            );
        }
    }
}

fn resolve_virtual(
    p: &Planned,
    all: &[Planned],
    by_name: &BTreeMap<&str, usize>,
    failed: &BTreeSet<&str>,
    findings: &mut Findings,
) -> (Vec<String>, Option<String>) {
    let entry = p.entry;
    if entry.rclass != Some(Rclass::Virtual) {
        return (Vec::new(), None);
    }
    let names = entry.repositories.as_deref().unwrap_or_default();
    let mut keys = Vec::new();
    let repositories_path = entry.at_field("repositories");
    for (index, member_name) in names.iter().enumerate() {
        let path = repositories_path.index(index);
        if failed.contains(member_name) {
            continue;
        }
        if let Some(member) = find_member(p, member_name, all, by_name, failed, &path, findings) {
            check_member(p, member, &path, findings);
            keys.push(member.key.clone());
        }
    }
    keys.extend(
        entry
            .external_repositories
            .iter()
            .flatten()
            .map(|key| (*key).to_owned()),
    );
    let default_key = entry
        .default_deployment_repo
        .filter(|name| !failed.contains(name))
        .and_then(|name| resolve_default(p, name, all, by_name, findings));
    (keys, default_key)
}

fn find_member<'p, 'a>(
    p: &Planned,
    name: &str,
    all: &'p [Planned<'a>],
    by_name: &BTreeMap<&str, usize>,
    failed: &BTreeSet<&str>,
    path: &FieldPath,
    findings: &mut Findings,
) -> Option<&'p Planned<'a>> {
    if name == p.name {
        findings.problem(
            Category::InvalidWiring,
            path.to_string(),
            Some(p.entry.index),
            format!(
                "{}: a virtual repository cannot contain itself",
                p.entry.label()
            ),
            format!("remove \"{name}\" from repositories"),
        );
        return None;
    }
    if let Some(index) = by_name.get(name) {
        return Some(&all[*index]);
    }
    let known: Vec<&str> = by_name
        .keys()
        .chain(failed)
        .copied()
        .filter(|n| *n != p.name)
        .collect();
    findings.problem(
        Category::InvalidWiring,
        path.to_string(),
        Some(p.entry.index),
        format!("{}: member \"{name}\" names no repository entry of this composite", p.entry.label()),
        format!(
            "name an entry of spec.repositories ({}), or list a repository outside this composite by key in externalRepositories",
            suggestion(name, known.iter().copied())
        ),
    );
    None
}

fn check_member(p: &Planned, member: &Planned, path: &FieldPath, findings: &mut Findings) {
    let (ours, theirs) = (
        package_family(&p.kind.package_type),
        package_family(&member.kind.package_type),
    );
    if ours != theirs {
        findings.problem(
            Category::InvalidWiring,
            path.to_string(),
            Some(p.entry.index),
            format!(
                "{}: member \"{}\" is {} {} repository, and this virtual aggregates {}",
                p.entry.label(),
                member.name,
                a_or_an(&member.kind.package_type),
                member.kind.package_type,
                p.kind.package_type
            ),
            format!("members of a virtual must share its package type; remove \"{}\" or change its packageType", member.name),
        );
    }
}

fn resolve_default(
    p: &Planned,
    name: &str,
    all: &[Planned],
    by_name: &BTreeMap<&str, usize>,
    findings: &mut Findings,
) -> Option<String> {
    let listed = p.entry.repositories.iter().flatten().any(|m| *m == name);
    let member = by_name.get(name).map(|i| &all[*i]);
    match member {
        Some(member) if listed && is_deployable_member(p, member) => Some(member.key.clone()),
        _ => {
            let why = match member {
                None => "names no repository entry of this composite".to_owned(),
                Some(_) if !listed => "is not one of this virtual's repositories".to_owned(),
                Some(m) if m.entry.rclass != Some(Rclass::Local) => format!(
                    "is a {} repository; deployments go to a local one",
                    m.entry.rclass.map_or("", |r| r.as_str())
                ),
                Some(m) => format!(
                    "is {} {} repository, and this virtual aggregates {}",
                    a_or_an(&m.kind.package_type),
                    m.kind.package_type,
                    p.kind.package_type
                ),
            };
            let locals: Vec<&str> = p
                .entry
                .repositories
                .iter()
                .flatten()
                .filter(|m| {
                    by_name
                        .get(*m)
                        .is_some_and(|i| is_deployable_member(p, &all[*i]))
                })
                .copied()
                .collect();
            let fix = if locals.is_empty() {
                "add a local repository to repositories and name it here, or remove defaultDeploymentRepo".to_owned()
            } else {
                format!("name one of the local members: {}", locals.join(", "))
            };
            findings.problem(
                Category::InvalidWiring,
                p.entry.field_path("defaultDeploymentRepo"),
                Some(p.entry.index),
                format!(
                    "{}: defaultDeploymentRepo \"{name}\" {why}",
                    p.entry.label()
                ),
                fix,
            );
            None
        }
    }
}

/// A local repository of the virtual's package family can take its deployments.
fn is_deployable_member(virtual_: &Planned, member: &Planned) -> bool {
    member.entry.rclass == Some(Rclass::Local)
        && package_family(&member.kind.package_type) == package_family(&virtual_.kind.package_type)
}

/// A virtual that reaches itself through other virtuals would make resolution loop.
fn check_cycles(planned: &[Planned], by_name: &BTreeMap<&str, usize>, findings: &mut Findings) {
    let members = |i: usize| -> Vec<usize> {
        planned[i]
            .entry
            .repositories
            .iter()
            .flatten()
            .filter_map(|name| by_name.get(name).copied())
            .filter(|m| *m != i && planned[*m].entry.rclass == Some(Rclass::Virtual))
            .collect()
    };
    let mut reported: Vec<Vec<usize>> = Vec::new();
    for start in 0..planned.len() {
        if planned[start].entry.rclass != Some(Rclass::Virtual) {
            continue;
        }
        if let Some(cycle) = find_cycle(start, &members) {
            let mut canonical = cycle.clone();
            canonical.sort_unstable();
            if reported.contains(&canonical) {
                continue;
            }
            reported.push(canonical);
            let path: Vec<&str> = cycle
                .iter()
                .chain(std::iter::once(&start))
                .map(|i| planned[*i].name)
                .collect();
            let entry = planned[start].entry;
            findings.problem(
                Category::InvalidWiring,
                entry.field_path("repositories"),
                Some(entry.index),
                format!("{}: virtual repositories form a cycle: {}", entry.label(), path.join(" -> ")),
                "remove one of the virtual members so that no virtual contains itself through others",
            );
        }
    }
}

/// A path from `start` back to `start`, as the list of nodes from `start`.
fn find_cycle(start: usize, members: &impl Fn(usize) -> Vec<usize>) -> Option<Vec<usize>> {
    let mut stack: Vec<(usize, Vec<usize>)> = vec![(start, vec![start])];
    let mut visited = vec![start];
    while let Some((node, path)) = stack.pop() {
        for next in members(node) {
            if next == start {
                return Some(path);
            }
            if !visited.contains(&next) {
                visited.push(next);
                let mut longer = path.clone();
                longer.push(next);
                stack.push((next, longer));
            }
        }
    }
    None
}
