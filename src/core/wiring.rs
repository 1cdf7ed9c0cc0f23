//! Wiring (docs/design.md, "Wiring"): virtual repositories name their members by key,
//! and fields that belong to one repository class are refused on the others.

use crate::core::catalog::{package_family, Rclass};
use crate::core::composite::Entry;
use crate::core::path::FieldPath;
use crate::core::plan::Planned;
use crate::core::problems::{a_or_an, closest, suggestion, Category, Findings};
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
    let names = Names {
        all: planned,
        by_name: &by_name,
        failed: &failed,
    };
    let resolved: Vec<(Vec<String>, Option<String>)> = planned
        .iter()
        .map(|p| resolve_virtual(p, &names, findings))
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

/// The entries a virtual may name: the planned ones by name, and those that could not be
/// planned (their own problems are reported; a member naming one adds nothing).
struct Names<'p, 'a> {
    all: &'p [Planned<'a>],
    by_name: &'p BTreeMap<&'a str, usize>,
    failed: &'p BTreeSet<&'a str>,
}

impl<'p, 'a> Names<'p, 'a> {
    fn get(&self, name: &str) -> Option<&'p Planned<'a>> {
        self.by_name.get(name).map(|i| &self.all[*i])
    }

    /// What a member of `p` could mean, for suggestions: every entry but `p` itself.
    fn known(&self, p: &Planned) -> Vec<&'a str> {
        self.by_name
            .keys()
            .chain(self.failed)
            .copied()
            .filter(|n| *n != p.name)
            .collect()
    }
}

fn resolve_virtual(
    p: &Planned,
    names: &Names,
    findings: &mut Findings,
) -> (Vec<String>, Option<String>) {
    let entry = p.entry;
    if entry.rclass != Some(Rclass::Virtual) {
        return (Vec::new(), None);
    }
    let members = entry.repositories.as_deref().unwrap_or_default();
    let default_follows = default_follows_from_member(p, members, names);
    let mut keys = Vec::new();
    let repositories_path = entry.at_field("repositories");
    for (index, member_name) in members.iter().enumerate() {
        let path = repositories_path.index(index);
        if names.failed.contains(member_name) {
            continue;
        }
        let also_default = default_follows == Some(*member_name);
        if let Some(member) = find_member(p, member_name, names, also_default, &path, findings) {
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
        .filter(|name| !names.failed.contains(name) && default_follows.is_none())
        .and_then(|name| resolve_default(p, name, names, findings));
    (keys, default_key)
}

/// The misspelled member that the default deployment repository's problem would only follow
/// from, so that one typo is reported once, at the member, whose fix says so:
/// - the default names that same missing member (`[libs-relase]`, default `libs-relase`);
/// - or the default is the entry the member was meant to name and would be a deployable
///   member once the typo is fixed (`[libs-relase]`, default `libs-release`).
fn default_follows_from_member<'m>(
    p: &Planned,
    members: &[&'m str],
    names: &Names,
) -> Option<&'m str> {
    let default = p.entry.default_deployment_repo?;
    let mut missing = members
        .iter()
        .filter(|name| {
            **name != p.name && names.get(name).is_none() && !names.failed.contains(*name)
        })
        .peekable();
    missing.peek()?;
    let meant = !members.contains(&default)
        && names
            .get(default)
            .is_some_and(|member| is_deployable_member(p, member));
    let known = names.known(p);
    missing
        .find(|name| {
            **name == default || (meant && closest(name, known.iter().copied()) == Some(default))
        })
        .copied()
}

/// The entry a member names. `also_default`: the default deployment repository's problem
/// follows from this member's, and is said here instead.
fn find_member<'p, 'a>(
    p: &Planned,
    name: &str,
    names: &Names<'p, 'a>,
    also_default: bool,
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
    if let Some(member) = names.get(name) {
        return Some(member);
    }
    let known = names.known(p);
    let mut fix = format!(
        "name an entry of spec.repositories ({}), or list a repository outside this composite by key in externalRepositories",
        suggestion(name, known.iter().copied())
    );
    match p.entry.default_deployment_repo {
        Some(default) if also_default && default == name => fix.push_str(&format!(
            "; defaultDeploymentRepo names \"{name}\" too: correct it with this member"
        )),
        Some(default) if also_default => fix.push_str(&format!(
            "; defaultDeploymentRepo \"{default}\" is a member once this is fixed"
        )),
        _ => {}
    }
    findings.problem(
        Category::InvalidWiring,
        path.to_string(),
        Some(p.entry.index),
        format!(
            "{}: member \"{name}\" names no repository entry of this composite",
            p.entry.label()
        ),
        fix,
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
    names: &Names,
    findings: &mut Findings,
) -> Option<String> {
    let listed = p.entry.repositories.iter().flatten().any(|m| *m == name);
    let member = names.get(name);
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
                .filter(|m| names.get(m).is_some_and(|m| is_deployable_member(p, m)))
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
