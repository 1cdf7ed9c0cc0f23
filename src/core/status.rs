//! Readiness, composite status and conditions (docs/design.md, "Status and results").

use crate::core::catalog::Rclass;
use crate::core::input::Input;
use crate::core::lifecycle::Retirement;
use crate::core::observed::{self, Observed};
use crate::core::plan::Planned;
use crate::core::problems::Findings;
use crate::proto::v1::{Condition, Ready, Status, Target};
use crate::proto::v1::{Resource, Result as FnResult, Severity, State};
use crate::proto::{ListWriter, ObjectWriter, Struct};
use crate::proto::{ObjectView, View};
use serde_json::Value;
use std::collections::{BTreeMap, HashSet};

pub(crate) const CONDITION_TYPE: &str = "RepositoriesReady";

/// Whether a condition is there with status `True`.
fn is_true(condition: Option<observed::Condition>) -> bool {
    condition.is_some_and(|c| c.is("True"))
}

/// READY_TRUE when the observed resource's `Ready` condition is `True`.
pub(crate) fn readiness(observed: Option<&Observed>) -> Ready {
    if is_true(observed.and_then(|o| o.ready)) {
        Ready::True
    } else {
        Ready::False
    }
}

/// One item of `status.repositories`, its members in key order; `leak` adds
/// `leakSuspected: true`.
fn write_repository_status(
    item: &mut ObjectWriter,
    p: &Planned,
    observed: Option<&Observed>,
    input: &Input,
    warnings: &[String],
    leak: bool,
) {
    item.bool("adopted", p.entry.import);
    item.string("apiVersion", &p.kind.api_version);
    item.string("deletion", p.deletion.as_str());
    item.string("key", &p.key);
    item.string("kind", &p.kind.kind);
    if leak {
        item.bool("leakSuspected", true);
    }
    if p.kind.rclass == Rclass::Virtual {
        item.strings("members", p.member_keys.iter().map(String::as_str));
    }
    item.string("name", p.name);
    item.string("packageType", &p.kind.package_type);
    item.string("rclass", p.kind.rclass.as_str());
    item.bool("ready", is_true(observed.and_then(|o| o.ready)));
    item.bool("synced", is_true(observed.and_then(|o| o.synced)));
    if let Some(url) = input.repository_url(&p.key) {
        item.string("url", &url);
    }
    item.strings("warnings", warnings.iter().map(String::as_str));
}

/// `RepositoriesReady` on the composite and its claim.
///
/// True (Available) when every repository is ready; False (Unavailable) when
/// one reports a failure; else False (Creating).
pub(crate) fn repositories_condition(
    planned: &[Planned],
    observed: &[Option<Observed>],
) -> Condition {
    let not_ready: Vec<&str> = planned
        .iter()
        .zip(observed)
        .filter(|(_, o)| !is_true(o.and_then(|o| o.ready)))
        .map(|(p, _)| p.key.as_str())
        .collect();
    let failing = observed.iter().flatten().any(has_failure);
    let (status, reason, message) = if not_ready.is_empty() {
        (
            Status::ConditionTrue,
            "Available",
            format!("{} repositories are ready", planned.len()),
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
    /// Entries whose resource is held back while their key moves to them.
    pub held_back: &'a HashSet<&'a str>,
    pub input: &'a Input,
    pub findings: &'a Findings,
}

/// What the composite's status said after the previous call: results are
/// given for changes against it, not on every call.
#[derive(Debug, Default)]
pub(crate) struct PreviousStatus {
    leaks: HashSet<String>,
    retiring: HashSet<String>,
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
        PreviousStatus {
            leaks: names("repositories", Some("leakSuspected")),
            retiring: names("retiring", None),
        }
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
        for ((p, live), leak) in report.planned.iter().zip(report.live).zip(report.leaks) {
            let warnings = warnings_by_entry
                .get(&p.entry.index)
                .map_or(&[][..], Vec::as_slice);
            list.object(|item| {
                write_repository_status(item, p, live.as_ref(), report.input, warnings, *leak)
            });
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
    results
}

/// "2 new repositories: creating a (local maven), adopting b (remote npm)",
/// written into one string: at the first call, every repository is new.
fn creating_message(report: &Report) -> Option<String> {
    let mut new = report
        .planned
        .iter()
        .zip(report.live)
        .filter(|(p, live)| live.is_none() && !report.held_back.contains(p.name))
        .map(|(p, _)| p)
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
