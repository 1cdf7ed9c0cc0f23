//! The words of the lifecycle: the results a call gives about phases, previews, retirements,
//! moves, renamed kinds and consequential changes, each said at the call where what it says
//! begins (`previous`), and the held message the `RepositoriesReady` condition repeats.

use crate::core::lifecycle::adoption::Stuck;
use crate::core::lifecycle::guards;
use crate::core::lifecycle::phase::{Hold, Phase, PhaseName, Rendering, Wait};
use crate::core::lifecycle::previous::PreviousStatus;
use crate::core::lifecycle::retirement::{Move, Retirement};
use crate::core::lifecycle::takeover::Preview;
use crate::core::lifecycle::Repository;
use crate::core::plan::Planned;
use crate::core::problems::{count, masked, some_of, Findings};
use crate::proto::v1::{Result as FnResult, Severity, Target};

/// Normal and Warning results for what changed against the observed state.
pub(crate) fn change_results(
    repositories: &[Repository],
    retirements: &[Retirement],
    previous: &PreviousStatus,
) -> Vec<FnResult> {
    let mut results = Vec::new();
    if let Some(message) = creating_message(repositories) {
        results.push(result(Severity::Normal, "RepositoriesCreating", message));
    }
    for p in repositories
        .iter()
        .filter(|r| r.leak && !previous.leaks.contains(r.planned.name))
        .map(|r| &r.planned)
    {
        results.push(result(
            Severity::Warning,
            "CreationMayHaveLeaked",
            format!(
                "repository {} (key {}): a create was started after the last recorded success or failure, so the provider may have created it without recording it; its identity is left as it is: check Artifactory for the key",
                p.name, p.key
            ),
        ));
    }
    for retirement in retirements {
        if let Some(result) = retirement_result(retirement, previous) {
            results.push(result);
        }
    }
    for r in repositories {
        results.extend(adoption_results(r, previous));
    }
    results
}

/// The results of one entry's phase: each said at the call where it begins (or, for a preview,
/// where its count changes), never again while it lasts.
fn adoption_results(r: &Repository, previous: &PreviousStatus) -> Vec<FnResult> {
    let (p, adoption) = (&r.planned, &r.adoption);
    let entered = previous.phase(p.name) != Some(adoption.phase.name());
    let entry = format!("repository {} (key {})", p.name, p.key);
    let mut results = Vec::new();
    if let Some(message) = &adoption.policies_disabled {
        if !previous.policies_disabled.contains(p.name) {
            results.push(result(
                Severity::Warning,
                "ManagementPoliciesDisabled",
                format!(
                    "{entry}: the provider refuses management policies (\"{}\"), so it can neither create the repository safely nor observe it only; start the provider with management policies enabled (its --enable-management-policies flag), or set createGuard: false in the function's input to create without the guard (an existing key is then taken over and deleted with the claim)",
                    short(message)
                ),
            ));
        }
    }
    let phase = adoption.phase.name();
    match &adoption.phase {
        Phase::Held(hold) if entered => {
            let message = held_message(p, hold);
            results.push(phase_result(phase, Severity::Warning, "RepositoryHeld", message));
        }
        Phase::Waiting(Wait::Members(members)) if entered => results.push(phase_result(
            phase,
            Severity::Normal,
            "RepositoryWaiting",
            format!(
                "{entry} is not created yet: a new virtual waits until this claim has created or adopted its members {}, so that it never aggregates a repository nobody chose to adopt",
                members.join(", ")
            ),
        )),
        Phase::Waiting(Wait::HeldMembers(members)) if entered => results.push(phase_result(
            phase,
            Severity::Warning,
            "RepositoryWaiting",
            format!(
                "{entry} is not created: its members {} are held, and a virtual never aggregates a repository nobody chose to adopt; resolve them first",
                members.join(", ")
            ),
        )),
        Phase::TakingOver => {
            let changes = r
                .preview
                .as_ref()
                .map_or_else(|| "what changes is not known: the provider has not read the repository".to_owned(), describe_changes);
            results.push(phase_result(
                phase,
                Severity::Warning,
                "TakingOver",
                format!("{entry} is taken over at this call: from now on the claim's settings are written to it; {}; {changes}", deletion_after_takeover(p)),
            ));
        }
        // Said once, where the phase begins.
        Phase::Waiting(Wait::NameRetiring { key }) if entered => results.push(phase_result(
            phase,
            Severity::Normal,
            "RepositoryWaiting",
            format!(
                "{entry} waits: the managed resource named {} (key {key}) left the spec and is still being released, its repository kept; the entry's resource is made once that one is gone",
                p.name
            ),
        )),
        Phase::Held(_) | Phase::Waiting(_) => {}
        // Said by `move_result`, for as long as the move lasts.
        Phase::Moving => {}
        // A create that does not go on is said once, with what to do; `RepositoriesCreating`
        // names new entries together.
        Phase::Creating => {
            if let Some(stuck) = &adoption.stuck {
                let message = stuck_message(stuck);
                if !previous.warned(p.name, &message) {
                    let reason = stuck_reason(stuck);
                    let message = format!("{entry}: {message}");
                    results.push(phase_result(phase, Severity::Warning, reason, message));
                }
            }
        }
        Phase::Created | Phase::Adopted { .. } | Phase::Managed => {}
    }
    let observe_only = adoption.phase.shows_preview() && adoption.phase != Phase::TakingOver;
    if let (true, Some(preview)) = (observe_only, &r.preview) {
        let total = preview.total() as u64;
        if previous.takeover_changes.get(p.name) != Some(&total) {
            let what = match total {
                0 => "would change nothing".to_owned(),
                1 => "would change 1 field".to_owned(),
                n => format!("would change {n} fields"),
            };
            // Nothing to change is news, not a warning.
            let severity = match total {
                0 => Severity::Normal,
                _ => Severity::Warning,
            };
            results.push(phase_result(
                phase,
                severity,
                "TakeoverPreview",
                format!("{entry} is observed only: taking it over {what} (status.repositories[].takeover)"),
            ));
        }
    }
    results
}

/// Adds the warning of each entry whose create does not go on to its status
/// (`status.repositories[].warnings`), where the next call finds it said.
pub(crate) fn warn_stuck(repositories: &[Repository], findings: &mut Findings) {
    for r in repositories {
        if let Some(stuck) = &r.adoption.stuck {
            let entry = r.planned.entry;
            findings.warning(entry.path(), Some(entry.index), stuck_message(stuck));
        }
    }
}

fn stuck_reason(stuck: &Stuck) -> &'static str {
    match stuck {
        Stuck::CreateFailed(_) => "CreateFailed",
        Stuck::CannotCreate(_) => "CannotCreate",
    }
}

/// Why a create does not go on, and what to do.
fn stuck_message(stuck: &Stuck) -> String {
    match stuck {
        Stuck::CreateFailed(message) => format!(
            "the provider's create failed: \"{}\"; it tries again while the key is free; if the repository is then found in Artifactory the entry is held, since the failed create may not have made it: see the provider's message, and check Artifactory for the key",
            short(message)
        ),
        Stuck::CannotCreate(message) => format!(
            "the key does not exist in Artifactory (the provider says \"{}\") and the entry's own management policies cannot create it: add Create to its managementPolicies, or import a key that exists",
            short(message)
        ),
    }
}

/// Why an entry is held, and the ways forward.
pub(crate) fn held_message(p: &Planned, hold: &Hold) -> String {
    let entry = format!("repository {} (key {})", p.name, p.key);
    let adopt = "set import: true on the entry to adopt it on purpose (observed first, with a preview of what taking it over would change), or give the entry another key";
    match hold {
        Hold::Existed => format!(
            "{entry} is held: the key exists in Artifactory outside this claim, so it is only observed, never updated or deleted; {adopt}"
        ),
        Hold::CreateRefused(message) => format!(
            "{entry} is held: Artifactory refused to create it because the key exists (perhaps in another case): \"{}\"; {adopt}",
            short(message)
        ),
        Hold::CreateUnconfirmed(message) => format!(
            "{entry} is held: the provider's create failed (\"{}\") and the repository exists in Artifactory, so the function cannot tell whether the failed create made it or another actor did; {adopt}",
            short(message)
        ),
        Hold::CreateUnproven { succeeded, observed } => format!(
            "{entry} is held: the provider reports its create succeeded at {succeeded}, no earlier than it first observed the repository ({observed}), which is how upjet's no-fork clients report a create that Artifactory refused because the key already existed, so the function cannot tell whether this claim made it; {adopt}"
        ),
        Hold::ImportMissing(message) => format!(
            "{entry} is held: it is imported, but Artifactory has no repository with this key (the provider says \"{}\"); an import never creates: check the key, or remove import: true to create the repository",
            short(message)
        ),
        Hold::ImportMismatch { live } => format!(
            "{entry} is held: the imported repository is of package type {live}, and the entry says {}; correct packageType (or rclass) to what Artifactory holds",
            p.kind.package_type
        ),
        Hold::Member { key } => format!(
            "{entry} is held: it aggregates {key}, which is held, and a virtual never aggregates a repository nobody chose to adopt; resolve {key} first"
        ),
    }
}

/// A provider's message, cut to what a condition and an event can carry: its start (what
/// failed) and its end (the cause, where Terraform and Artifactory put it), with what a URL in
/// it may carry as a secret masked first (Terraform's errors quote the URL they called).
fn short(message: &str) -> std::borrow::Cow<'_, str> {
    const HEAD: usize = 80;
    const TAIL: usize = 200;
    let message = masked(message);
    let count = message.chars().count();
    if count <= HEAD + TAIL {
        return message;
    }
    let head: String = message.chars().take(HEAD).collect();
    let tail: String = message.chars().skip(count - TAIL).collect();
    format!("{head}…{tail}").into()
}

/// "3 fields change: spec.forProvider.description: \"a\" -> \"b\"; ...", the first few.
fn describe_changes(preview: &Preview) -> String {
    const SHOWN: usize = 5;
    if preview.total() == 0 {
        return "nothing in Artifactory changes".to_owned();
    }
    let shown: Vec<String> = preview
        .changes
        .iter()
        .take(SHOWN)
        .map(|c| format!("{}: {} -> {}", c.path, c.live, c.claim))
        .collect();
    let more = preview.total() - shown.len();
    let tail = if more > 0 {
        format!("; and {more} more (status.repositories[].takeover)")
    } else {
        String::new()
    };
    format!(
        "{} change{}: {}{tail}",
        count(preview.total(), "field", "fields"),
        if preview.total() == 1 { "s" } else { "" },
        shown.join("; ")
    )
}

/// "2 new repositories: creating a (local maven), adopting b (remote npm)",
/// written into one string: at the first call, every repository is new.
fn creating_message(repositories: &[Repository]) -> Option<String> {
    let first_seen = || {
        repositories
            .iter()
            .filter(|r| {
                r.observed.is_none()
                    && r.adoption.phase.name().rendering() != Rendering::NotRendered
            })
            // A key that moves is said by `move_result`.
            .filter(|r| r.adoption.phase.name() != PhaseName::Moving)
            .inspect(|r| debug_assert_said(r.adoption.phase.name(), "RepositoriesCreating"))
            .map(|r| &r.planned)
    };
    // Imports are not new: they are adopted, said apart.
    let created = listed(first_seen().filter(|p| !p.entry.import), "creating ");
    let adopted = listed(first_seen().filter(|p| p.entry.import), "");
    let created = created.map(|(count, list)| {
        let noun = if count == 1 {
            "repository"
        } else {
            "repositories"
        };
        format!("{count} new {noun}: {list}")
    });
    let adopted = adopted.map(|(count, list)| {
        let noun = if count == 1 {
            "repository"
        } else {
            "repositories"
        };
        format!("adopting {count} {noun}: {list}")
    });
    match (created, adopted) {
        (Some(created), Some(adopted)) => Some(format!("{created}; {adopted}")),
        (one, other) => one.or(other),
    }
}

/// "creating libs (local maven), creating docs (local generic)" and how many: pieces pushed as
/// they are, no formatting machinery (a claim's first call may list thousands).
fn listed<'p, 'a: 'p>(
    planned: impl Iterator<Item = &'p Planned<'a>>,
    verb: &str,
) -> Option<(usize, String)> {
    let mut list = String::new();
    let mut count = 0;
    for p in planned {
        if count > 0 {
            list.push_str(", ");
        }
        for piece in [
            verb,
            &p.key,
            " (",
            p.kind.rclass.as_str(),
            " ",
            &p.kind.package_type,
            ")",
        ] {
            list.push_str(piece);
        }
        count += 1;
    }
    (count > 0).then_some((count, list))
}

fn retirement_result(retirement: &Retirement, previous: &PreviousStatus) -> Option<FnResult> {
    match retirement {
        Retirement::Orphaning { name, key, .. } if !previous.retiring.contains(name) => Some(result(
            Severity::Warning,
            "RepositoryRetiring",
            format!(
                "repository {name} (key {key}) is gone from the spec: its deletion is turned to Orphan first, so the repository and its artifacts stay in Artifactory; the managed resource is removed once that is applied"
            ),
        )),
        Retirement::Orphaning { .. } => None,
        Retirement::Released { name, key } => Some(result(
            Severity::Normal,
            "RepositoryReleased",
            format!("repository {name} (key {key}) is gone from the spec: the managed resource is removed and the repository stays in Artifactory"),
        )),
        Retirement::Deleted { name, key } => Some(result(
            Severity::Warning,
            "RepositoryDeleted",
            format!("repository {name} (key {key}) is gone from the spec and deletion protection is off: the managed resource and the repository are deleted"),
        )),
    }
}

/// A Normal result for a key that moves to a renamed entry.
pub(crate) fn move_result(m: &Move) -> FnResult {
    debug_assert_said(PhaseName::Moving, "RepositoryMoving");
    FnResult {
        severity: Severity::Normal as i32,
        message: format!(
            "repository key \"{}\" moves from composed resource \"{}\" to \"{}\": \"{}\" is released first (the repository is kept), then \"{}\" takes the repository over",
            m.key, m.from, m.to, m.from, m.to
        ),
        reason: Some("RepositoryMoving".to_owned()),
        target: Some(Target::Composite as i32),
    }
}

/// A Normal result for the live resources whose kind the provider renamed, rendered under the
/// new name: the same managed resource, key and repository.
pub(crate) fn renamed_result(repositories: &[Repository]) -> Option<FnResult> {
    let renamed: Vec<String> = repositories
        .iter()
        .filter_map(|r| guards::renamed_kind(&r.planned, r.observed.as_ref()?))
        .collect();
    if renamed.is_empty() {
        return None;
    }
    Some(FnResult {
        severity: Severity::Normal as i32,
        message: format!(
            "rendered under the kind names of the provider release targeted, the same managed resources, keys and repositories: {}",
            some_of(&renamed)
        ),
        reason: Some("KindRenamed".to_owned()),
        target: Some(Target::Composite as i32),
    })
}

/// One Warning for every consequential change this answer makes (docs/design.md, "Lifecycle").
pub(crate) fn consequential_result(lines: &[String]) -> Option<FnResult> {
    const SHOWN: usize = 20;
    if lines.is_empty() {
        return None;
    }
    let mut message = lines[..lines.len().min(SHOWN)].join("; ");
    if lines.len() > SHOWN {
        message.push_str(&format!("; and {} more", lines.len() - SHOWN));
    }
    Some(FnResult {
        severity: Severity::Warning as i32,
        message,
        reason: Some("ConsequentialChange".to_owned()),
        target: Some(Target::CompositeAndClaim as i32),
    })
}

/// What deleting a repository taken over does: an import keeps Orphan deletion unless its entry
/// asks for deletion (`adoption::asks_for_deletion`).
fn deletion_after_takeover(p: &Planned) -> &'static str {
    match p.deletion {
        crate::core::policy::Deletion::Orphan => "its deletion stays Orphan, so deleting the entry or the claim leaves it in Artifactory (set deletionPolicy: Delete, or Delete in managementPolicies, on the entry to have it deleted with them)",
        crate::core::policy::Deletion::Delete => "the entry asks for deletion, so deleting the entry or the claim deletes it and its artifacts",
    }
}

/// A result about an entry in `phase`, whose reason the phase table lists for it.
fn phase_result(phase: PhaseName, severity: Severity, reason: &str, message: String) -> FnResult {
    debug_assert_said(phase, reason);
    result(severity, reason, message)
}

/// The phase table (`PhaseName::results`) says what is said of each phase: a result it does
/// not list is a rule that changed without the table.
fn debug_assert_said(phase: PhaseName, reason: &str) {
    debug_assert!(
        phase.results().contains(&reason),
        "{reason} is said of an entry in phase {}, which the phase table does not list",
        phase.as_str()
    );
}

fn result(severity: Severity, reason: &str, message: String) -> FnResult {
    FnResult {
        severity: severity as i32,
        message,
        reason: Some(reason.into()),
        target: Some(Target::CompositeAndClaim as i32),
    }
}
