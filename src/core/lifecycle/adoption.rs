//! Adoption by intent (docs/design.md, "Adoption"): a key that already names a repository in
//! Artifactory comes under a claim only through `import: true`.
//!
//! The provider names a repository by its key alone, in the external name, which the function
//! always sets: so the provider cannot tell "create this" from "take this over", and a plain
//! entry whose key exists would be observed as existing, updated with the claim's settings and
//! deleted with the claim. The function keeps that from happening with the management
//! policies, which crossplane-runtime honours before it calls the provider
//! (`pkg/reconciler/managed/policies.go`, `ManagementPoliciesResolver`):
//!
//! - a new entry is rendered with `["Observe", "Create"]`, one of the sets
//!   `defaultSupportedManagementPolicies` accepts: a free key is created; a taken key is only
//!   observed (no `Update`, no `LateInitialize`, and `ShouldDelete` is false, so deleting the
//!   resource orphans it);
//! - once the observed resource shows that a create of ours succeeded, the entry gets its own
//!   policies;
//! - a key that existed, or whose create Artifactory refused because it exists, is held at
//!   `["Observe"]` until the claim imports it on purpose.
//!
//! What the observed resource shows, as the provider writes it:
//!
//! - crossplane-runtime's managed reconciler (`pkg/reconciler/managed/reconciler.go`) writes
//!   `crossplane.io/external-create-pending` before it calls `Create`, and
//!   `crossplane.io/external-create-succeeded` or `-failed` after; when `Observe` finds the
//!   repository it never calls `Create`, so neither annotation is written;
//! - upjet's Terraform-CLI client, which every release of this provider runs
//!   (`pkg/controller/external.go`, `UseAsync` true by default in `pkg/config/common.go:92` @
//!   v2.2.0), sets `Ready` True (reason `Available`) once `Observe` finds the repository
//!   (`external.go:311-326`); its `Create` starts the apply and returns at once
//!   (`external.go:384-385`), so `-succeeded` is written before Terraform has applied anything;
//!   the apply's outcome comes later in the `LastAsyncOperation` condition (False with reason
//!   `ApplyFailure` and "apply failed: <summary>: <detail>", `pkg/terraform/workspace.go:173-176`,
//!   `pkg/resource/conditions.go:43-50`), which `Observe` never clears (only the next apply's
//!   callback does, `api.go:127`), and `AsyncOperation` is False with reason `Ongoing` while it
//!   runs (`external.go:224-229`);
//! - Artifactory refuses to create a key that exists, whatever its case, with 400 "Case
//!   insensitive repository key already exists";
//! - an observe-only resource whose repository does not exist gets `Synced` False with
//!   "observe failed: external resource does not exist" (reconciler.go,
//!   `errExternalResourceNotExist`), and a provider started without management policies
//!   refuses every other set with "`spec.managementPolicies` is set to a non-default value but
//!   the feature is not enabled" (policies.go, `errFmtManagementPolicyNonDefault`).

use crate::core::catalog::Rclass;
use crate::core::lifecycle::observed::{Condition, Observed};
use crate::core::lifecycle::phase::{
    Hold, Origin, Phase, PhaseName, Rendering, Wait, GUARD_POLICIES, OBSERVE_ONLY,
};
use crate::core::lifecycle::retirement::{orphan_on_delete, Move};
use crate::core::lifecycle::Repository;
use crate::core::plan::Planned;
use crate::core::policy;
use std::borrow::Cow;
use std::collections::HashMap;

/// What the adoption decided for one entry.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Adoption {
    pub phase: Phase,
    /// The origin annotation to write; `None` writes none (a resource composed before the
    /// guard, or rendered with `createGuard: false`).
    pub origin: Option<Origin>,
    /// The provider refuses non-default management policies: its message.
    pub policies_disabled: Option<String>,
    /// Why a `creating` entry is not getting created, in the provider's words.
    pub stuck: Option<Stuck>,
}

/// Why an entry in `creating` does not move on: said once, with the way forward.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Stuck {
    /// The provider's create failed for a reason other than a taken key: its message. The
    /// provider tries again while the key is free.
    CreateFailed(String),
    /// The entry's own policies cannot create, and the key does not exist: the provider's
    /// message.
    CannotCreate(String),
}

impl Default for Adoption {
    /// Before [`decide_phases`] has decided: a new entry.
    fn default() -> Self {
        Adoption {
            phase: Phase::Creating,
            origin: None,
            policies_disabled: None,
            stuck: None,
        }
    }
}

/// What the adoption reads besides the plan.
pub(crate) struct Context<'a> {
    /// `createGuard` of the input.
    pub guard: bool,
    /// The phase each entry had at the previous call (`status.repositories[].phase`), by name.
    pub previous: &'a HashMap<String, PhaseName>,
}

/// Decides every entry's phase, then sets the management policies it is rendered with (and the
/// deletion that follows) in its plan. `moves` are this call's: keys that move to an entry from
/// a retiring resource of this composite.
pub(crate) fn decide_phases(repositories: &mut [Repository], ctx: &Context, moves: &[Move]) {
    for r in repositories.iter_mut() {
        r.adoption = match &r.name_retiring {
            Some(key) => Adoption {
                phase: Phase::Waiting(Wait::NameRetiring { key: key.clone() }),
                ..Adoption::default()
            },
            None => decide(&r.planned, r.observed.as_ref(), ctx),
        };
    }
    move_keys(repositories, moves);
    if ctx.guard {
        hold_virtuals(repositories);
    }
    for r in repositories.iter_mut() {
        apply(&mut r.planned, &r.adoption);
    }
}

/// The move's transition: an entry whose key moves to it from a retiring resource is observed
/// only, and carries the old resource's origin, until the old resource is gone. Its resource
/// holds the key for the claim meanwhile (another composite asking for it meets it), and
/// records what the key was: once the old resource is gone, the new one's origin decides its
/// phase, as at any call. A key the entry no longer asks for is no move: the entry is judged
/// as a new one, and a live resource of another key is refused by the key guard.
fn move_keys(repositories: &mut [Repository], moves: &[Move]) {
    if moves.is_empty() {
        return;
    }
    let by_entry: HashMap<&str, &Move> = moves.iter().map(|m| (m.to, m)).collect();
    for r in repositories.iter_mut() {
        let Some(m) = by_entry.get(r.planned.name) else {
            continue;
        };
        // A create that does not go on is said when the entry enters `creating`: kept here,
        // it would reach the status's warnings, and the next call would take it as said.
        r.adoption = Adoption {
            phase: Phase::Moving,
            origin: Some(Origin::carried(m.origin)),
            stuck: None,
            ..r.adoption.clone()
        };
    }
}

fn decide(p: &Planned, live: Option<&Observed>, ctx: &Context) -> Adoption {
    let disabled = live.and_then(policies_disabled).map(str::to_owned);
    let adoption = |phase: Phase, origin: Option<Origin>| Adoption {
        phase,
        origin,
        policies_disabled: disabled.clone(),
        stuck: None,
    };
    let previous = ctx.previous.get(p.name).copied();
    if p.entry.import {
        return adoption(import_phase(p, live, previous), Some(Origin::Imported));
    }
    let origin = live
        .and_then(|l| l.annotations.origin)
        .and_then(Origin::parse);
    let Some(live) = live else {
        return adoption(Phase::Creating, ctx.guard.then_some(Origin::Creating));
    };
    match origin {
        // Import removed while only observed: a takeover, not a taken key, if the import could
        // go on; a held import stays out of reach.
        Some(Origin::Imported) if only_observes(live) => {
            match import_phase(p, Some(live), previous) {
                Phase::Held(Hold::ImportMissing(_)) => {
                    adoption(Phase::Creating, Some(Origin::Creating))
                }
                Phase::Held(_) => adoption(Phase::Held(Hold::Existed), Some(Origin::Taken)),
                phase => adoption(phase, Some(Origin::Imported)),
            }
        }
        Some(Origin::Imported) => adoption(Phase::Managed, Some(Origin::Imported)),
        // A held key whose repository is gone (its owner deleted it) is free again: the entry
        // goes back to creating it, under the guard.
        Some(Origin::Taken) if ctx.guard && missing_message(live).is_some() => Adoption {
            stuck: cannot_create(p, live),
            ..adoption(Phase::Creating, Some(Origin::Creating))
        },
        Some(Origin::Taken) if ctx.guard => {
            adoption(Phase::Held(Hold::Existed), Some(Origin::Taken))
        }
        Some(Origin::Creating) if ctx.guard => match create_outcome(live) {
            Outcome::Confirmed => adoption(Phase::Created, Some(Origin::Created)),
            Outcome::Existed => adoption(Phase::Held(Hold::Existed), Some(Origin::Taken)),
            Outcome::Refused(message) => adoption(
                Phase::Held(Hold::CreateRefused(message.to_owned())),
                Some(Origin::Taken),
            ),
            // The create failed, yet the repository exists: the function cannot prove that it
            // made it (a timeout after Artifactory's PUT, or another actor between Observe and
            // the apply), so it holds the key and offers an import.
            Outcome::Failed {
                message,
                exists: true,
            } => adoption(
                Phase::Held(Hold::CreateUnconfirmed(message.to_owned())),
                Some(Origin::Taken),
            ),
            Outcome::Unproven {
                succeeded,
                observed,
            } => adoption(
                Phase::Held(Hold::CreateUnproven {
                    succeeded: succeeded.to_owned(),
                    observed: observed.to_owned(),
                }),
                Some(Origin::Taken),
            ),
            Outcome::Failed {
                message,
                exists: false,
            } => Adoption {
                stuck: Some(Stuck::CreateFailed(message.to_owned())),
                ..adoption(Phase::Creating, Some(Origin::Creating))
            },
            Outcome::Pending => Adoption {
                stuck: cannot_create(p, live),
                ..adoption(Phase::Creating, Some(Origin::Creating))
            },
        },
        // A resource composed before the guard, or with the guard off: left as it is.
        Some(Origin::Taken | Origin::Creating) | None => adoption(Phase::Managed, None),
        Some(origin @ (Origin::Created | Origin::Moved)) => adoption(Phase::Managed, Some(origin)),
    }
}

/// An import: observe only until the provider has seen the repository, and held when it
/// cannot be, or is not what the entry says.
///
/// A takeover (the entry's own wider policies) follows a published preview: only an entry the
/// previous call showed `adopted` is taken over; before that it is adopted, and its preview
/// said, first.
fn import_phase(p: &Planned, live: Option<&Observed>, previous: Option<PhaseName>) -> Phase {
    let Some(live) = live else {
        return Phase::Adopted { verified: false };
    };
    if let Some(message) = missing_message(live) {
        return Phase::Held(Hold::ImportMissing(message.to_owned()));
    }
    if let Some(found) = live_package_type(live) {
        if !same_package_type(found, &p.kind.package_type) {
            return Phase::Held(Hold::ImportMismatch {
                live: found.to_owned(),
            });
        }
    }
    let verified = exists(live);
    if !verified || !wider_than_observe(p.management_policies.as_deref()) {
        return Phase::Adopted { verified };
    }
    let origin = live.annotations.origin.and_then(Origin::parse);
    match (origin, only_observes(live), previous) {
        // Taken over at an earlier call: the managed resource already has wider policies.
        (Some(Origin::Imported), false, _) => Phase::Managed,
        (_, _, Some(PhaseName::Adopted | PhaseName::TakingOver)) => Phase::TakingOver,
        // Not adopted before (a new import, or one added to a resource of another origin):
        // adopted first, its preview published.
        _ => Phase::Adopted { verified },
    }
}

/// A live resource whose package type the provider reports (virtual and federated kinds carry
/// `atProvider.packageType`; local and remote kinds do not, and are "not verified").
pub(crate) fn live_package_type<'a>(live: &Observed<'a>) -> Option<&'a str> {
    live.at_provider()?.get("packageType")?.as_str()
}

/// The catalog names package types as the provider's kinds do (`dockerv2`, `terraformmodule`);
/// Artifactory as its repositories do (`docker`, `terraform`).
fn same_package_type(live: &str, planned: &str) -> bool {
    let artifactory = match planned {
        "dockerv1" | "dockerv2" => "docker",
        "terraformmodule" | "terraformprovider" => "terraform",
        other => other,
    };
    live.eq_ignore_ascii_case(artifactory) || live.eq_ignore_ascii_case(planned)
}

enum Outcome<'a> {
    /// A create of ours succeeded and the provider observes the repository.
    Confirmed,
    /// The provider observes the repository and never created it.
    Existed,
    /// Artifactory refused the create because the key exists: the provider's message.
    Refused(&'a str),
    /// The create failed otherwise: the provider's message, and whether the repository exists.
    Failed { message: &'a str, exists: bool },
    /// The provider reports the create succeeded only as its no-fork clients also report one
    /// refused because the key existed: when the apply succeeded, and when the repository
    /// was first observed.
    Unproven {
        succeeded: &'a str,
        observed: &'a str,
    },
    /// Not known yet.
    Pending,
}

fn create_outcome<'a>(live: &Observed<'a>) -> Outcome<'a> {
    if let Some(message) = key_taken_message(live) {
        return Outcome::Refused(message);
    }
    let annotations = live.annotations;
    let ready = exists(live);
    let never_created = annotations.create_pending.is_none()
        && annotations.create_succeeded.is_none()
        && annotations.create_failed.is_none();
    if ready && never_created {
        return Outcome::Existed;
    }
    if let Some(message) = create_failure(live) {
        return Outcome::Failed {
            message,
            exists: ready,
        };
    }
    let succeeded = annotations.create_succeeded.is_some()
        && later_or_equal(annotations.create_succeeded, annotations.create_failed);
    let apply_done = !live.last_async_operation.is_some_and(|c| c.is("False"))
        && !live
            .async_operation
            .is_some_and(|c| c.is("False") && c.reason == Some("Ongoing"));
    if !(ready && succeeded && apply_done) {
        return Outcome::Pending;
    }
    match success_dated_from_first_sight(live) {
        Some((succeeded, observed)) => Outcome::Unproven {
            succeeded,
            observed,
        },
        None => Outcome::Confirmed,
    }
}

/// Under upjet's no-fork asynchronous clients (the upjet template's default, should the
/// provider move to them), a create that Artifactory refused because the key exists shows
/// `LastAsyncOperation` False only until the next `Observe` finds the repository equal to the
/// spec, which resets it to True `Success` (`external_async_tfpluginfw.go:173-176`,
/// `external_async_tfpluginsdk.go:133` @ v2.2.0) in the status write that sets `Ready` True:
/// both conditions then carry that Observe's time. A create of ours succeeded before the
/// repository was observed, so its `Success` is dated earlier than `Ready`. Those clients
/// never set `AsyncOperation` (`external.go:224-229` is the Terraform-CLI client's, which
/// every release of this provider runs and whose False is never reset), so its absence says
/// which client wrote the resource. Returns the two times when they cannot tell a create of
/// ours from a refused one, so that the decision never rests on seeing a short-lived False.
fn success_dated_from_first_sight<'a>(live: &Observed<'a>) -> Option<(&'a str, &'a str)> {
    if live.async_operation.is_some() {
        return None;
    }
    let (apply, ready) = (live.last_async_operation?, live.ready?);
    let time = |c: Condition<'a>| c.last_transition_time;
    let (succeeded, observed) = (
        time(apply).unwrap_or("unknown"),
        time(ready).unwrap_or("unknown"),
    );
    let instant = |t: &str| crate::core::time::parse_rfc3339(t);
    match (instant(succeeded), instant(observed)) {
        (Some(a), Some(r)) if a < r => None,
        _ => Some((succeeded, observed)),
    }
}

/// Whether `a` is at least as late as `b` (RFC 3339 times; an absent `b` is earlier).
fn later_or_equal(a: Option<&str>, b: Option<&str>) -> bool {
    let time = |t: Option<&str>| t.and_then(crate::core::time::parse_rfc3339);
    match (time(a), time(b)) {
        (_, None) => true,
        (Some(a), Some(b)) => a >= b,
        (None, Some(_)) => false,
    }
}

/// The provider observes the repository: upjet sets `Ready` True when `Observe` finds it.
/// crossplane-runtime leaves `Ready` as it was when `Observe` fails, so a repository deleted
/// since shows a stale `Ready` True beside `Synced` False "external resource does not exist":
/// that one is gone.
pub(crate) fn exists(live: &Observed) -> bool {
    live.ready.is_some_and(|c| c.is("True")) && missing_message(live).is_none()
}

/// A `creating` entry whose key is free while its resource only observes: the entry's own
/// policies cannot create (with the guard's, the provider would be creating it), so it is
/// said, in the provider's words.
fn cannot_create(p: &Planned, live: &Observed) -> Option<Stuck> {
    let message = missing_message(live)?;
    (!own_policies_create(p)).then(|| Stuck::CannotCreate(message.to_owned()))
}

/// The entry's own policies (`None`: the provider's default, `*`) let the provider create.
fn own_policies_create(p: &Planned) -> bool {
    p.management_policies
        .as_deref()
        .is_none_or(|own| own.iter().any(|x| x == "*" || x == "Create"))
}

/// The failed create's messages about the latest attempt: the asynchronous apply's
/// (`LastAsyncOperation` False), or the create call's (`Synced` False "create failed: …",
/// crossplane-runtime `pkg/reconciler/managed/reconciler.go:1397` @ v2.5.0-rc.0).
///
/// upjet's Terraform-CLI client, which every release of this provider runs, never clears
/// `LastAsyncOperation` in `Observe` (`pkg/controller/external.go` @ v2.2.0): only the next
/// apply's callback overwrites it (`pkg/controller/api.go:127`). So a False condition from
/// before the latest create attempt (its `lastTransitionTime` earlier than
/// `crossplane.io/external-create-pending`) is about an earlier attempt, and is not read,
/// unless an apply has finished since that create began: crossplane-runtime keeps an equal
/// condition as it was (`ConditionedStatus.SetConditions`, `apis/common/v1/condition.go`), so a
/// second failure in the same words keeps the first one's time, while `AsyncOperation`, Ongoing
/// while an apply runs and Finished after it (`external.go:224-229`, `external.go:238-240`,
/// `api.go:142-143` @ v2.2.0), moves at every apply.
fn failed_create_messages<'a>(live: &Observed<'a>) -> impl Iterator<Item = &'a str> + 'a {
    let pending = live.annotations.create_pending;
    let current = move |c: &Condition| {
        c.last_transition_time.is_none() || later_or_equal(c.last_transition_time, pending)
    };
    let since_create = |c: &Condition| c.last_transition_time.is_some() && current(c);
    // The no-fork clients set no `AsyncOperation`, and read the repository in `Observe` (which
    // sets `Ready` True) only while no apply runs (`external_async_tfpluginfw.go` @ v2.2.0): a
    // `Ready` True since the create began says its apply has ended, and a False
    // `LastAsyncOperation` left is its outcome, even in the words, and so at the time, of an
    // earlier failure. Asked only of a False `LastAsyncOperation`: it parses two times, and
    // most resources have no failure to date.
    let applied_since = || match live.async_operation {
        Some(c) => c.is("True") && since_create(&c),
        None => live.ready.is_some_and(|c| c.is("True") && since_create(&c)),
    };
    let apply = live
        .last_async_operation
        .filter(|c| c.is("False") && (current(c) || applied_since()));
    let create = live.synced.filter(|c| {
        c.is("False") && current(c) && c.message.is_some_and(|m| m.starts_with("create failed"))
    });
    [apply, create]
        .into_iter()
        .flatten()
        .filter_map(|c| c.message)
}

/// A create refused because Artifactory has the key, whatever its case.
fn key_taken_message<'a>(live: &Observed<'a>) -> Option<&'a str> {
    failed_create_messages(live).find(|m| contains_ignoring_case(m, "already exists"))
}

/// A create that failed for another reason (a key taken is [`key_taken_message`]).
fn create_failure<'a>(live: &Observed<'a>) -> Option<&'a str> {
    failed_create_messages(live).next()
}

/// An import of a key Artifactory does not have: crossplane-runtime's observe-only error.
fn missing_message<'a>(live: &Observed<'a>) -> Option<&'a str> {
    failing_with(live.synced, "external resource does not exist")
}

/// A provider whose management policies are turned off.
fn policies_disabled<'a>(live: &Observed<'a>) -> Option<&'a str> {
    failing_with(
        live.synced,
        "is set to a non-default value but the feature is not enabled",
    )
}

fn failing_with<'a>(condition: Option<Condition<'a>>, words: &str) -> Option<&'a str> {
    let condition = condition.filter(|c| c.is("False"))?;
    condition.message.filter(|m| m.contains(words))
}

fn contains_ignoring_case(text: &str, words: &str) -> bool {
    text.to_ascii_lowercase().contains(words)
}

/// The live resource's policies are `["Observe"]`: it observes and nothing more.
fn only_observes(live: &Observed) -> bool {
    live.management_policies()
        .is_some_and(|policies| policies == OBSERVE_ONLY)
}

/// Policies that do more than observe (`None` is the provider's default, `*`).
fn wider_than_observe(policies: Option<&[String]>) -> bool {
    policies.is_none_or(|p| p.iter().any(|x| x != "Observe"))
}

/// A virtual aggregates its members: one that lists a held entry is held too (or, new, not
/// made at all), and a new one waits until each member from the claim is one this claim
/// created or adopted, so that it never aggregates a repository nobody chose to adopt.
fn hold_virtuals(repositories: &mut [Repository]) {
    if !repositories
        .iter()
        .any(|r| r.planned.kind.rclass == Rclass::Virtual)
    {
        return;
    }
    let by_name: HashMap<&str, usize> = repositories
        .iter()
        .enumerate()
        .map(|(i, r)| (r.planned.name, i))
        .collect();
    // A virtual may list virtuals: settle in passes, each a walk of the members; a pass changes
    // at least one entry or ends, so there are at most as many passes as entries.
    for _ in 0..repositories.len() {
        let mut changed = false;
        for i in 0..repositories.len() {
            let r = &repositories[i];
            // Held, moving or waiting for its name: not a new virtual whose members decide; an
            // import observed only aggregates nothing it did not already.
            let phase = &r.adoption.phase;
            let settled = phase.is_held()
                || phase.name() == PhaseName::Moving
                || matches!(phase, Phase::Adopted { .. })
                || matches!(phase, Phase::Waiting(Wait::NameRetiring { .. }));
            if r.planned.kind.rclass != Rclass::Virtual || settled {
                continue;
            }
            let members =
                member_names(&r.planned).filter_map(|name| Some((name, *by_name.get(name)?)));
            let (mut held, mut pending) = (Vec::new(), Vec::new());
            // Named by key, once each: a virtual may list a member and deploy to it too.
            for (_, member) in members {
                let member = &repositories[member];
                let (phase, key) = (&member.adoption.phase, &member.planned.key);
                let list = if phase.is_held() {
                    &mut held
                } else if !phase.is_ours() {
                    &mut pending
                } else {
                    continue;
                };
                if !list.contains(key) {
                    list.push(key.clone());
                }
            }
            let phase = match (r.observed.is_some(), held.first()) {
                (true, Some(first)) => Phase::Held(Hold::Member { key: first.clone() }),
                (false, Some(_)) => Phase::Waiting(Wait::HeldMembers(held)),
                (false, None) if !pending.is_empty() => Phase::Waiting(Wait::Members(pending)),
                _ => continue,
            };
            let adoption = &mut repositories[i].adoption;
            if adoption.phase != phase {
                adoption.phase = phase;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
}

/// The entries a virtual names: its members and its default deployment repository.
fn member_names<'a>(p: &Planned<'a>) -> impl Iterator<Item = &'a str> + 'a {
    let entry = p.entry;
    entry
        .repositories
        .iter()
        .flatten()
        .copied()
        .chain(entry.default_deployment_repo)
}

/// The management policies the phase renders, and the deletion they give.
fn apply(p: &mut Planned, adoption: &Adoption) {
    let policies: &[&str] = match adoption.phase.name().rendering() {
        // `createGuard: false`: the entry's own policies at once.
        Rendering::Guard if adoption.origin.is_none() => return,
        Rendering::Guard => {
            if own_policies_create(p) {
                &GUARD_POLICIES
            } else {
                &OBSERVE_ONLY
            }
        }
        Rendering::ObserveOnly => &OBSERVE_ONLY,
        // A repository imported and taken over keeps Orphan deletion unless its entry asks.
        Rendering::OwnPolicies
            if adoption.origin == Some(Origin::Imported) && !asks_for_deletion(p) =>
        {
            return orphan_on_delete(p, false);
        }
        // The entry's own policies, as planned.
        Rendering::OwnPolicies | Rendering::NotRendered => return,
    };
    p.management_policies = Some(Cow::Owned(owned(policies)));
    p.deletion = policy::effective_deletion(
        p.kind.api,
        p.management_policies.as_deref(),
        p.deletion_policy,
    );
}

/// Whether the entry itself asks for its repository to be deleted with its managed resource:
/// its own `deletionPolicy: Delete`, or `Delete` (or `*`) in its own `managementPolicies`. The
/// default, and the composite's or the input's defaults, do not count: a repository that came
/// under the claim by import was made by someone else, and deleting it with the claim must be
/// asked for on the entry.
fn asks_for_deletion(p: &Planned) -> bool {
    let entry = p.entry;
    entry.deletion_policy == Some(policy::DeletionPolicy::Delete)
        || entry
            .management_policies
            .as_deref()
            .is_some_and(|own| own.iter().any(|x| x == "Delete" || x == "*"))
}

fn owned(policies: &[&str]) -> Vec<String> {
    policies.iter().map(|&p| p.to_owned()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn package_types_compare_across_the_catalog_and_artifactory() {
        assert!(same_package_type("docker", "dockerv2"));
        assert!(same_package_type("terraform", "terraformmodule"));
        assert!(same_package_type("maven", "maven"));
        assert!(!same_package_type("npm", "maven"));
        assert!(!same_package_type("helm", "helmoci"));
    }
}
