//! Wiring (docs/design.md, "Wiring"): virtual repositories name their members by key,
//! and fields that belong to one repository class are refused on the others.

use crate::core::catalog::{package_family, Rclass};
use crate::core::composite::Entry;
use crate::core::path::FieldPath;
use crate::core::plan::Planned;
use crate::core::problems::{a_or_an, closest, suggestion, Category, Findings};
use crate::core::sorted;
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
    let by_name: BTreeMap<&str, usize> =
        sorted::map(planned.iter().enumerate().map(|(i, p)| (p.name, i)));
    let failed: BTreeSet<&str> = sorted::set(
        entries
            .iter()
            .filter_map(|e| e.name)
            .filter(|name| !by_name.contains_key(name)),
    );
    // Each name with its package type, so that a suggestion names only entries the virtual
    // can aggregate (an entry that could not be planned has the type it was given, if any).
    let given_types: BTreeMap<&str, &str> = sorted::map(
        entries
            .iter()
            .filter_map(|e| Some((e.name?, e.package_type?))),
    );
    let known = by_name
        .iter()
        .map(|(name, i)| (*name, Some(planned[*i].kind.package_type.as_str())))
        .chain(
            failed
                .iter()
                .map(|name| (*name, given_types.get(name).copied())),
        )
        .collect();
    let mut names = Names {
        all: planned,
        by_name: &by_name,
        failed: &failed,
        known,
        budget: SUGGESTION_BUDGET,
    };
    let resolved: Vec<(Vec<String>, Option<String>)> = planned
        .iter()
        .map(|p| resolve_virtual(p, &mut names, findings))
        .collect();
    for (p, (members, default_key)) in planned.iter_mut().zip(resolved) {
        p.member_keys = members;
        p.default_deployment_key = default_key;
    }
    check_cycles(planned, &by_name, findings);
}

/// The name comparisons that suggestions for unknown members may make in one call. Each
/// suggestion compares the name with every entry's, and a claim may name thousands of unknown
/// members among thousands of entries: only the problems a call keeps get one (see
/// `Findings::problem_with`), and past this budget they get none. 100,000 comparisons take
/// about 25 ms (release build): every kept problem gets its suggestion up to 1,000 entries.
const SUGGESTION_BUDGET: usize = 100_000;

/// The entries' names, as members may name them.
struct Names<'n, 'a> {
    /// The planned entries.
    all: &'n [Planned<'a>],
    /// The planned entries, by name.
    by_name: &'n BTreeMap<&'a str, usize>,
    /// The names of entries that could not be planned (they have problems of their own).
    failed: &'n BTreeSet<&'a str>,
    /// Both, for suggestions, each with its package type when it has one.
    known: Vec<(&'a str, Option<&'a str>)>,
    /// Comparisons left for suggestions ([`SUGGESTION_BUDGET`]).
    budget: usize,
}

impl<'n, 'a> Names<'n, 'a> {
    fn get(&self, name: &str) -> Option<&'n Planned<'a>> {
        self.by_name.get(name).map(|i| &self.all[*i])
    }

    /// Takes the comparisons of one look through every name from the budget; false once
    /// the budget cannot pay for it.
    fn spend(&mut self) -> bool {
        let count = self.known.len();
        if count > self.budget {
            return false;
        }
        self.budget -= count;
        true
    }

    /// The names a member of `virtual_` may be meant as: other entries of a package type the
    /// virtual aggregates (a maven virtual's misspelled member is not a docker entry), and
    /// entries without a package type of their own.
    fn candidates<'s>(&'s self, virtual_: &'s Planned) -> impl Iterator<Item = &'a str> + 's {
        let family = package_family(&virtual_.kind.package_type);
        self.known
            .iter()
            .filter(move |(name, package_type)| {
                *name != virtual_.name && package_type.is_none_or(|t| package_family(t) == family)
            })
            .map(|(name, _)| *name)
    }

    /// "did you mean ...?" for an unknown member of `virtual_`, while the budget lasts; none
    /// when no entry could be meant.
    fn suggestion(&mut self, given: &str, virtual_: &Planned) -> Option<String> {
        if !self.spend() {
            return None;
        }
        let mut candidates = self.candidates(virtual_).peekable();
        candidates.peek()?;
        Some(suggestion(given, candidates))
    }

    /// The entry `given` was most likely meant to name, while the budget lasts.
    fn closest(&mut self, given: &str, virtual_: &Planned) -> Option<&'a str> {
        if !self.spend() {
            return None;
        }
        closest(given, self.candidates(virtual_))
    }
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
    names: &mut Names,
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
    names: &mut Names,
) -> Option<&'m str> {
    let default = p.entry.default_deployment_repo?;
    let missing: Vec<&'m str> = members
        .iter()
        .copied()
        .filter(|name| *name != p.name && names.get(name).is_none() && !names.failed.contains(name))
        .collect();
    if let Some(same) = missing.iter().find(|name| **name == default) {
        return Some(same);
    }
    let meant = !members.contains(&default)
        && names
            .get(default)
            .is_some_and(|member| is_deployable_member(p, member));
    if !meant {
        return None;
    }
    missing
        .into_iter()
        .find(|name| names.closest(name, p) == Some(default))
}

/// The entry a member names. `also_default`: the default deployment repository's problem
/// follows from this member's, and is said here instead.
fn find_member<'p, 'a>(
    p: &Planned,
    name: &str,
    names: &mut Names<'p, 'a>,
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
    let default = p.entry.default_deployment_repo.filter(|_| also_default);
    findings.problem_with(
        Category::InvalidWiring,
        path.to_string(),
        Some(p.entry.index),
        format!("{}: member \"{name}\" names no repository entry of this composite", p.entry.label()),
        || {
            let entries = match names.suggestion(name, p) {
                Some(suggestion) => format!(" ({suggestion})"),
                None => String::new(),
            };
            let mut fix = format!("name an entry of spec.repositories{entries}, or list a repository outside this composite by key in externalRepositories");
            match default {
                Some(default) if default == name => fix.push_str(&format!(
                    "; defaultDeploymentRepo names \"{name}\" too: correct it with this member"
                )),
                Some(default) => fix.push_str(&format!(
                    "; defaultDeploymentRepo \"{default}\" is a member once this is fixed"
                )),
                None => {}
            }
            fix
        },
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
///
/// Reported once per group of virtuals that reach each other (a strongly connected component
/// of the membership graph), at its first virtual in spec order, with one cycle through it.
/// Linear in the virtuals and their members: a search from every virtual, as before, took
/// time quadratic in a long chain of them.
fn check_cycles(planned: &[Planned], by_name: &BTreeMap<&str, usize>, findings: &mut Findings) {
    let members: Vec<Vec<usize>> = planned
        .iter()
        .enumerate()
        .map(|(i, p)| {
            if p.entry.rclass != Some(Rclass::Virtual) {
                return Vec::new();
            }
            p.entry
                .repositories
                .iter()
                .flatten()
                .filter_map(|name| by_name.get(name).copied())
                .filter(|m| *m != i && planned[*m].entry.rclass == Some(Rclass::Virtual))
                .collect()
        })
        .collect();
    let component = strongly_connected(&members);
    let mut sizes = vec![0usize; planned.len()];
    for group in &component {
        sizes[*group] += 1;
    }
    let mut search = Search::new(planned.len());
    let mut reported = vec![false; planned.len()];
    for start in 0..planned.len() {
        let group = component[start];
        // Without self members, a virtual alone in its component is in no cycle.
        if reported[group] || sizes[group] < 2 {
            continue;
        }
        reported[group] = true;
        let Some(cycle) = search.cycle(start, &members, |node| component[node] == group) else {
            continue;
        };
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
            format!(
                "{}: virtual repositories form a cycle: {}",
                entry.label(),
                path.join(" -> ")
            ),
            "remove one of the virtual members so that no virtual contains itself through others",
        );
    }
}

/// The state of the searches for cycles, one per component: each node is visited by the
/// search of its own component only, so the state is allocated once for all of them.
struct Search {
    parent: Vec<Option<usize>>,
    visited: Vec<bool>,
}

impl Search {
    fn new(count: usize) -> Search {
        Search {
            parent: vec![None; count],
            visited: vec![false; count],
        }
    }

    /// A path from `start` back to `start` through nodes `inside` allows (those of its
    /// component), as the list of nodes from `start`: depth first, each node visited once.
    fn cycle(
        &mut self,
        start: usize,
        members: &[Vec<usize>],
        inside: impl Fn(usize) -> bool,
    ) -> Option<Vec<usize>> {
        self.visited[start] = true;
        let mut stack = vec![start];
        while let Some(node) = stack.pop() {
            if members[node].contains(&start) {
                let mut path = vec![node];
                while let Some(up) = self.parent[*path.last()?] {
                    path.push(up);
                }
                path.reverse();
                return Some(path);
            }
            for &next in &members[node] {
                if !self.visited[next] && inside(next) {
                    self.visited[next] = true;
                    self.parent[next] = Some(node);
                    stack.push(next);
                }
            }
        }
        None
    }
}

/// The strongly connected component of every node (Tarjan's algorithm, without recursion:
/// a chain of virtuals may be as long as the claim).
fn strongly_connected(members: &[Vec<usize>]) -> Vec<usize> {
    const UNSEEN: usize = usize::MAX;
    let count = members.len();
    let (mut index, mut low) = (vec![UNSEEN; count], vec![0; count]);
    let mut on_stack = vec![false; count];
    let mut component = vec![UNSEEN; count];
    let (mut next_index, mut next_component) = (0, 0);
    let mut stack = Vec::new();
    for root in 0..count {
        if index[root] != UNSEEN {
            continue;
        }
        // (node, how many of its members were looked at)
        let mut work = vec![(root, 0)];
        while let Some(&mut (node, ref mut looked)) = work.last_mut() {
            if *looked == 0 && index[node] == UNSEEN {
                index[node] = next_index;
                low[node] = next_index;
                next_index += 1;
                stack.push(node);
                on_stack[node] = true;
            }
            if let Some(&next) = members[node].get(*looked) {
                *looked += 1;
                if index[next] == UNSEEN {
                    work.push((next, 0));
                } else if on_stack[next] {
                    low[node] = low[node].min(index[next]);
                }
                continue;
            }
            work.pop();
            if let Some(&(parent, _)) = work.last() {
                low[parent] = low[parent].min(low[node]);
            }
            if low[node] == index[node] {
                while let Some(member) = stack.pop() {
                    on_stack[member] = false;
                    component[member] = next_component;
                    if member == node {
                        break;
                    }
                }
                next_component += 1;
            }
        }
    }
    component
}
