//! Readiness, composite status and conditions (docs/design.md, "Status and results").

use crate::core::adoption::{self, Adoption, Hold, Origin, Phase, Wait};
use crate::core::catalog::Rclass;
use crate::core::input::Input;
use crate::core::lifecycle::Retirement;
use crate::core::observed::{self, Observed};
use crate::core::plan::Planned;
use crate::core::problems::Findings;
use crate::core::takeover::Preview;
use crate::proto::v1::{Condition, Ready, Status, Target};
use crate::proto::v1::{Resource, Result as FnResult, Severity, State};
use crate::proto::{ListWriter, ObjectWriter, Struct};
use crate::proto::{ObjectView, View};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap, HashSet};

pub(crate) const CONDITION_TYPE: &str = "RepositoriesReady";

/// Whether a condition is there with status `True`.
fn is_true(condition: Option<observed::Condition>) -> bool {
    condition.is_some_and(|c| c.is("True"))
}

/// READY_TRUE when the observed resource's `Ready` condition is `True` and the entry is not
/// held: a held key exists, so the provider reports it ready, but it is not the claim's.
pub(crate) fn readiness(observed: Option<&Observed>, phase: &Phase) -> Ready {
    if is_ready(observed, phase) {
        Ready::True
    } else {
        Ready::False
    }
}

fn is_ready(observed: Option<&Observed>, phase: &Phase) -> bool {
    !matches!(phase, Phase::Held(_) | Phase::Waiting(_)) && is_true(observed.and_then(|o| o.ready))
}

/// What one item of `status.repositories` is written from.
struct Item<'i, 'a> {
    p: &'i Planned<'a>,
    observed: Option<&'i Observed<'a>>,
    adoption: &'i Adoption,
    preview: Option<&'i Preview>,
    warnings: &'i [String],
    /// Adds `leakSuspected: true`.
    leak: bool,
}

/// One item of `status.repositories`, its members in key order.
fn write_repository_status(item: &mut ObjectWriter, of: &Item, input: &Input) {
    let Item {
        p,
        observed,
        adoption,
        preview,
        warnings,
        leak,
    } = *of;
    item.bool(
        "adopted",
        p.entry.import || adoption.origin == Some(Origin::Imported),
    );
    item.string("apiVersion", &p.kind.api_version);
    item.string("deletion", p.deletion.as_str());
    if let Some(identity) = import_identity(adoption, observed) {
        item.string("identity", identity);
    }
    item.string("key", &p.key);
    item.string("kind", &p.kind.kind);
    if leak {
        item.bool("leakSuspected", true);
    }
    if adoption.policies_disabled.is_some() {
        item.bool("managementPoliciesDisabled", true);
    }
    if p.kind.rclass == Rclass::Virtual {
        item.strings("members", p.member_keys.iter().map(String::as_str));
    }
    item.string("name", p.name);
    item.string("packageType", &p.kind.package_type);
    item.string("phase", adoption.phase.as_str());
    item.string("rclass", p.kind.rclass.as_str());
    item.bool("ready", is_ready(observed, &adoption.phase));
    item.bool("synced", is_true(observed.and_then(|o| o.synced)));
    if let Some(preview) = preview {
        write_preview(item, preview);
    }
    if let Some(url) = input.repository_url(&p.key) {
        item.string("url", &url);
    }
    item.strings("warnings", warnings.iter().map(String::as_str));
}

/// For an import the provider has observed: whether its package type was checked against the
/// entry's ("verified"; a mismatch holds the entry), or could not be (local and remote kinds do
/// not report it: "not verified").
fn import_identity(adoption: &Adoption, observed: Option<&Observed>) -> Option<&'static str> {
    let live = observed.filter(|live| adoption::exists(live))?;
    if adoption.origin != Some(Origin::Imported) || matches!(adoption.phase, Phase::Held(_)) {
        return None;
    }
    Some(if adoption::live_package_type(live).is_some() {
        "verified"
    } else {
        "not verified"
    })
}

/// `takeover` (the changes listed), `takeoverChanges` (how many in all) and, where some are not
/// listed, `takeoverOmitted`.
fn write_preview(item: &mut ObjectWriter, preview: &Preview) {
    item.list("takeover", |list| {
        for change in &preview.changes {
            list.object(|object| {
                object.string("claim", &change.claim);
                object.string("live", &change.live);
                object.string("path", &change.path);
            });
        }
    });
    item.value("takeoverChanges", &Value::from(preview.total() as u64));
    if preview.omitted > 0 {
        item.value("takeoverOmitted", &Value::from(preview.omitted as u64));
    }
}

/// `RepositoriesReady` on the composite and its claim.
///
/// True (Available) when every repository is ready; False (Held) when a key is held, with
/// the first held entry and the ways forward; False (Unavailable) when one reports a failure;
/// else False (Creating). With no entries, True, unless repositories are still retiring.
pub(crate) fn repositories_condition(report: &Report) -> Condition {
    let (planned, observed) = (report.planned, report.live);
    let not_ready: Vec<&str> = planned
        .iter()
        .zip(observed)
        .zip(report.adoptions)
        .filter(|((_, o), a)| !is_ready(o.as_ref(), &a.phase))
        .map(|((p, _), _)| p.key.as_str())
        .collect();
    let held = planned
        .iter()
        .zip(report.adoptions)
        .find_map(|(p, a)| match &a.phase {
            Phase::Held(hold) => Some((p, hold)),
            _ => None,
        });
    let retiring = report
        .retirements
        .iter()
        .filter(|r| matches!(r, Retirement::Orphaning { .. }))
        .count();
    let failing = observed.iter().flatten().any(has_failure);
    let (status, reason, message) = if planned.is_empty() && retiring > 0 {
        (
            Status::ConditionFalse,
            "Retiring",
            format!(
                "the spec lists no repositories; {} of the removed are still being released",
                count(retiring, "repository", "repositories")
            ),
        )
    } else if not_ready.is_empty() {
        let message = match planned.len() {
            0 => "the spec lists no repositories".to_owned(),
            1 => "1 repository is ready".to_owned(),
            n => format!("{n} repositories are ready"),
        };
        (Status::ConditionTrue, "Available", message)
    } else if let Some((p, hold)) = held {
        (
            Status::ConditionFalse,
            "Held",
            format!("{}; not ready: {}", held_message(p, hold), list(&not_ready)),
        )
    } else if failing {
        (
            Status::ConditionFalse,
            "Unavailable",
            format!("not ready: {}", list(&not_ready)),
        )
    } else {
        (
            Status::ConditionFalse,
            "Creating",
            format!("not ready yet: {}", list(&not_ready)),
        )
    };
    Condition {
        r#type: CONDITION_TYPE.into(),
        status: status as i32,
        reason: reason.into(),
        message: Some(message),
        target: Some(Target::CompositeAndClaim as i32),
    }
}

/// "1 repository", "2 repositories".
fn count(n: usize, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

/// Why an entry is held, and the ways forward.
fn held_message(p: &Planned, hold: &Hold) -> String {
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
        Hold::ImportMissing(message) => format!(
            "{entry} is held: it is imported, but Artifactory has no repository with this key (the provider says \"{}\"); an import never creates: check the key, or remove import: true to create the repository",
            short(message)
        ),
        Hold::ImportMismatch { live } => format!(
            "{entry} is held: the imported repository is of package type {live}, and the entry says {}; correct packageType (or rclass) to what Artifactory holds",
            p.kind.package_type
        ),
        Hold::Member { name } => format!(
            "{entry} is held: it aggregates {name}, which is held, and a virtual never aggregates a repository nobody chose to adopt; resolve {name} first"
        ),
    }
}

/// A provider's message, cut to what a condition and an event can carry: its start (what
/// failed) and its end (the cause, where Terraform and Artifactory put it).
fn short(message: &str) -> std::borrow::Cow<'_, str> {
    const HEAD: usize = 80;
    const TAIL: usize = 200;
    let count = message.chars().count();
    if count <= HEAD + TAIL {
        return message.into();
    }
    let head: String = message.chars().take(HEAD).collect();
    let tail: String = message.chars().skip(count - TAIL).collect();
    format!("{head}…{tail}").into()
}

/// A Synced=False or a Ready=False that is not about creating.
fn has_failure(observed: &Observed) -> bool {
    let synced_false = observed.synced.is_some_and(|c| c.is("False"));
    let unavailable = observed
        .ready
        .is_some_and(|c| c.is("False") && c.reason == Some("Unavailable"));
    synced_false || unavailable
}

/// The first keys of a long list, then how many more.
fn list(keys: &[&str]) -> String {
    const SHOWN: usize = 5;
    if keys.len() <= SHOWN {
        keys.join(", ")
    } else {
        format!(
            "{} and {} more",
            keys[..SHOWN].join(", "),
            keys.len() - SHOWN
        )
    }
}

// ---- the composite's status and the results of a call ----------------------

/// What a successful call found, for status and results.
pub(crate) struct Report<'a> {
    pub planned: &'a [Planned<'a>],
    /// The observed resource of each planned repository.
    pub live: &'a [Option<Observed<'a>>],
    /// Whether each planned repository's creation may have leaked.
    pub leaks: &'a [bool],
    pub retirements: &'a [Retirement],
    /// Each planned repository's phase and origin.
    pub adoptions: &'a [Adoption],
    /// What taking each observed-only repository over would change.
    pub previews: &'a [Option<Preview>],
    pub input: &'a Input,
    pub findings: &'a Findings,
}

/// What the composite's status said after the previous call: results are
/// given for changes against it, not on every call.
#[derive(Debug, Default)]
pub(crate) struct PreviousStatus {
    leaks: HashSet<String>,
    retiring: HashSet<String>,
    /// `phase` by entry name.
    phases: HashMap<String, String>,
    /// `takeoverChanges` by entry name.
    takeover_changes: HashMap<String, u64>,
    /// Entries whose provider refused the management policies.
    policies_disabled: HashSet<String>,
}

impl PreviousStatus {
    pub(crate) fn read(composite: ObjectView) -> PreviousStatus {
        let status = composite.get("status");
        let names = |list: &str, flag: Option<&str>| -> HashSet<String> {
            status
                .and_then(|s| s.get(list))
                .and_then(View::as_list)
                .into_iter()
                .flatten()
                .filter(|item| {
                    flag.is_none_or(|f| item.get(f).and_then(View::as_bool) == Some(true))
                })
                .filter_map(|item| item.get("name")?.as_str().map(str::to_owned))
                .collect()
        };
        let items = || {
            status
                .and_then(|s| s.get("repositories"))
                .and_then(View::as_list)
                .into_iter()
                .flatten()
                .filter_map(|item| Some((item.get("name")?.as_str()?, item)))
        };
        PreviousStatus {
            leaks: names("repositories", Some("leakSuspected")),
            retiring: names("retiring", None),
            policies_disabled: names("repositories", Some("managementPoliciesDisabled")),
            phases: items()
                .filter_map(|(name, item)| {
                    Some((name.to_owned(), item.get("phase")?.as_str()?.to_owned()))
                })
                .collect(),
            takeover_changes: items()
                .filter_map(|(name, item)| {
                    Some((
                        name.to_owned(),
                        u64::try_from(item.get("takeoverChanges")?.as_i64()?).ok()?,
                    ))
                })
                .collect(),
        }
    }

    /// The phase of each entry at the previous call, by name.
    pub(crate) fn phases(&self) -> &HashMap<String, String> {
        &self.phases
    }

    fn phase(&self, name: &str) -> Option<&str> {
        self.phases.get(name).map(String::as_str)
    }
}

/// About the size of an item of `status.repositories` with a short name and key and no
/// warnings, encoded: the composite's buffer starts large enough for most, rather than grow
/// (and copy) a dozen times at 1,000 repositories.
pub(crate) const STATUS_ITEM_BYTES: usize = 320;

/// Writes `status.repositories` (and `status.retiring`) into the desired composite,
/// keeping whatever else earlier steps put in the composite and its status.
///
/// Written straight into the composite's encoding, as compose writes the resources: a JSON
/// tree of a thousand items would be built, walked to encode it and walked again to drop it.
pub(crate) fn set_composite_status(desired: &mut State, report: &Report) {
    let mut warnings_by_entry: BTreeMap<usize, Vec<String>> = BTreeMap::new();
    for warning in &report.findings.warnings {
        if let Some(entry) = warning.entry {
            warnings_by_entry
                .entry(entry)
                .or_default()
                .push(warning.message.clone());
        }
    }
    let write_repositories = |list: &mut ListWriter| {
        for (i, p) in report.planned.iter().enumerate() {
            let warnings = warnings_by_entry
                .get(&p.entry.index)
                .map_or(&[][..], Vec::as_slice);
            let item_of = Item {
                p,
                observed: report.live[i].as_ref(),
                adoption: &report.adoptions[i],
                preview: report.previews[i].as_ref(),
                warnings,
                leak: report.leaks[i],
            };
            list.object(|item| write_repository_status(item, &item_of, report.input));
        }
    };
    let retiring: Vec<(&str, &str)> = report
        .retirements
        .iter()
        .filter_map(|r| match r {
            Retirement::Orphaning { name, key, .. } => Some((name.as_str(), key.as_str())),
            _ => None,
        })
        .collect();
    let write_retiring = |list: &mut ListWriter| {
        for (name, key) in &retiring {
            list.object(|item| {
                item.string("deletion", "Orphan");
                item.string("key", key);
                item.string("name", name);
            });
        }
    };
    let composite = desired.composite.get_or_insert_with(Resource::default);
    let earlier = composite.resource.take();
    let earlier_len = earlier.as_ref().map_or(0, prost::Message::encoded_len);
    let earlier = earlier.as_ref().map(Struct::fields);
    // A status that is not an object is replaced, as a JSON merge would.
    let earlier_status = earlier
        .and_then(|fields| fields.get("status"))
        .and_then(Value::as_object);
    let capacity = earlier_len + STATUS_ITEM_BYTES * report.planned.len();
    composite.resource = Some(Struct::write_one(capacity, |object| {
        object.merge(earlier, &["status"], |object, _| {
            object.object("status", |status| {
                status.merge(
                    earlier_status,
                    &["repositories", "retiring"],
                    |status, name| match name {
                        "repositories" => status.list(name, write_repositories),
                        _ if retiring.is_empty() => {}
                        _ => status.list(name, write_retiring),
                    },
                )
            })
        })
    }));
}

/// Normal and Warning results for what changed against the observed state.
pub(crate) fn change_results(report: &Report, previous: &PreviousStatus) -> Vec<FnResult> {
    let mut results = Vec::new();
    if let Some(message) = creating_message(report) {
        results.push(result(Severity::Normal, "RepositoriesCreating", message));
    }
    for (p, _) in report
        .planned
        .iter()
        .zip(report.leaks)
        .filter(|(p, leak)| **leak && !previous.leaks.contains(p.name))
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
    for retirement in report.retirements {
        if let Some(result) = retirement_result(retirement, previous) {
            results.push(result);
        }
    }
    for (i, p) in report.planned.iter().enumerate() {
        results.extend(adoption_results(report, i, p, previous));
    }
    results
}

/// The results of one entry's phase: each said at the call where it begins (or, for a preview,
/// where its count changes), never again while it lasts.
fn adoption_results(
    report: &Report,
    i: usize,
    p: &Planned,
    previous: &PreviousStatus,
) -> Vec<FnResult> {
    let adoption = &report.adoptions[i];
    let entered = previous.phase(p.name) != Some(adoption.phase.as_str());
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
    match &adoption.phase {
        Phase::Held(hold) if entered => {
            results.push(result(Severity::Warning, "RepositoryHeld", held_message(p, hold)));
        }
        Phase::Waiting(Wait::Members(members)) if entered => results.push(result(
            Severity::Normal,
            "RepositoryWaiting",
            format!(
                "{entry} is not created yet: a new virtual waits until this claim has created or adopted its members {}, so that it never aggregates a repository nobody chose to adopt",
                members.join(", ")
            ),
        )),
        Phase::Waiting(Wait::HeldMembers(members)) if entered => results.push(result(
            Severity::Warning,
            "RepositoryWaiting",
            format!(
                "{entry} is not created: its members {} are held, and a virtual never aggregates a repository nobody chose to adopt; resolve them first",
                members.join(", ")
            ),
        )),
        Phase::TakingOver => {
            let changes = report.previews[i]
                .as_ref()
                .map_or_else(|| "what changes is not known: the provider has not read the repository".to_owned(), describe_changes);
            results.push(result(
                Severity::Warning,
                "TakingOver",
                format!("{entry} is taken over at this call: from now on the claim's settings are written to it, and deleting it follows its policies; {changes}"),
            ));
        }
        _ => {}
    }
    let observe_only = adoption.phase.shows_preview() && adoption.phase != Phase::TakingOver;
    if let (true, Some(preview)) = (observe_only, &report.previews[i]) {
        let total = preview.total() as u64;
        if previous.takeover_changes.get(p.name) != Some(&total) {
            let what = match total {
                0 => "would change nothing".to_owned(),
                1 => "would change 1 field".to_owned(),
                n => format!("would change {n} fields"),
            };
            results.push(result(
                Severity::Warning,
                "TakeoverPreview",
                format!("{entry} is observed only: taking it over {what} (status.repositories[].takeover)"),
            ));
        }
    }
    results
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
fn creating_message(report: &Report) -> Option<String> {
    let mut new = report
        .planned
        .iter()
        .zip(report.live)
        .zip(report.adoptions)
        .filter(|((_, live), adoption)| live.is_none() && !adoption.phase.is_waiting())
        .map(|((p, _), _)| p)
        .peekable();
    new.peek()?;
    let mut list = String::new();
    let mut count = 0;
    for p in new {
        let verb = if p.entry.import {
            "adopting"
        } else {
            "creating"
        };
        if count > 0 {
            list.push_str(", ");
        }
        // "creating libs (local maven)": pieces pushed as they are, no formatting machinery.
        for piece in [
            verb,
            " ",
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
    let noun = if count == 1 {
        "repository"
    } else {
        "repositories"
    };
    Some(format!("{count} new {noun}: {list}"))
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

fn result(severity: Severity, reason: &str, message: String) -> FnResult {
    FnResult {
        severity: severity as i32,
        message,
        reason: Some(reason.into()),
        target: Some(Target::CompositeAndClaim as i32),
    }
}
