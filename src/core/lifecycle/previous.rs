//! What the composite's status said after the previous call (`status.repositories`,
//! `status.retiring`): a result is given where what it says begins, not on every call, and a
//! key that moves is handed over the call after its old resource is gone.

use crate::core::lifecycle::phase::PhaseName;
use crate::proto::{ObjectView, View};
use std::collections::{HashMap, HashSet};

/// What the composite's status said after the previous call: results are
/// given for changes against it, not on every call.
#[derive(Debug, Default)]
pub(crate) struct PreviousStatus {
    pub(super) leaks: HashSet<String>,
    pub(super) retiring: HashSet<String>,
    /// `phase` by entry name.
    phases: HashMap<String, PhaseName>,
    /// `takeoverChanges` by entry name.
    pub(super) takeover_changes: HashMap<String, u64>,
    /// `warnings` of each entry, as `name` and the warning joined by a newline.
    warnings: HashSet<String>,
    /// Entries whose provider refused the management policies.
    pub(super) policies_disabled: HashSet<String>,
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
                    let phase = PhaseName::parse(item.get("phase")?.as_str()?)?;
                    Some((name.to_owned(), phase))
                })
                .collect(),
            warnings: items()
                .flat_map(|(name, item)| {
                    let warnings = item.get("warnings").and_then(View::as_list);
                    warnings
                        .into_iter()
                        .flatten()
                        .filter_map(View::as_str)
                        .map(move |warning| format!("{name}\n{warning}"))
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
    pub(crate) fn phases(&self) -> &HashMap<String, PhaseName> {
        &self.phases
    }

    /// Whether the previous call listed `warning` in the entry's status.
    pub(super) fn warned(&self, name: &str, warning: &str) -> bool {
        !self.warnings.is_empty() && self.warnings.contains(&format!("{name}\n{warning}"))
    }

    pub(super) fn phase(&self, name: &str) -> Option<PhaseName> {
        self.phases.get(name).copied()
    }
}
