//! Readiness, composite status and conditions (docs/design.md, "Status and results").

use crate::core::catalog::Rclass;
use crate::core::input::Input;
use crate::core::lifecycle::adoption::{self, Adoption};
use crate::core::lifecycle::observed::{self, Observed};
use crate::core::lifecycle::phase::{Origin, Phase};
use crate::core::lifecycle::retirement::Retirement;
use crate::core::lifecycle::takeover::Preview;
use crate::core::lifecycle::words::held_message;
use crate::core::lifecycle::Repository;
use crate::core::plan::Planned;
use crate::core::problems::{count, Findings};
use crate::proto::v1::{Condition, Ready, Status, Target};
use crate::proto::v1::{Resource, State};
use crate::proto::{ListWriter, ObjectWriter, Struct};
use serde_json::Value;
use std::collections::BTreeMap;

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
    phase.name().can_be_ready() && is_true(observed.and_then(|o| o.ready))
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
    if adoption.origin != Some(Origin::Imported) || adoption.phase.is_held() {
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
    let repositories = report.repositories;
    let not_ready: Vec<&str> = repositories
        .iter()
        .filter(|r| !is_ready(r.observed.as_ref(), &r.adoption.phase))
        .map(|r| r.planned.key.as_str())
        .collect();
    let held = repositories.iter().find_map(|r| match &r.adoption.phase {
        Phase::Held(hold) => Some((&r.planned, hold)),
        Phase::Creating
        | Phase::Created
        | Phase::Adopted { .. }
        | Phase::TakingOver
        | Phase::Managed
        | Phase::Waiting(_) => None,
    });
    let retiring = report
        .retirements
        .iter()
        .filter(|r| matches!(r, Retirement::Orphaning { .. }))
        .count();
    let failing = repositories
        .iter()
        .filter_map(|r| r.observed.as_ref())
        .any(has_failure);
    let (status, reason, message) = if repositories.is_empty() && retiring > 0 {
        (
            Status::ConditionFalse,
            "Retiring",
            format!(
                "the spec lists no repositories; {} of the removed are still being released",
                count(retiring, "repository", "repositories")
            ),
        )
    } else if not_ready.is_empty() {
        let message = match repositories.len() {
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
    pub repositories: &'a [Repository<'a>],
    pub retirements: &'a [Retirement],
    pub input: &'a Input,
    pub findings: &'a Findings,
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
        for r in report.repositories {
            let p = &r.planned;
            let warnings = warnings_by_entry
                .get(&p.entry.index)
                .map_or(&[][..], Vec::as_slice);
            let item_of = Item {
                p,
                observed: r.observed.as_ref(),
                adoption: &r.adoption,
                preview: r.preview.as_ref(),
                warnings,
                leak: r.leak,
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
    let capacity = earlier_len + STATUS_ITEM_BYTES * report.repositories.len();
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
