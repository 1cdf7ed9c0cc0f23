//! The six invariants of issue 55, checked after every step. [`Checker`] reads only what a
//! step left behind (Artifactory's writes, the composite's status, the results of the call,
//! a fatal result and whether the claim's edit asked for it), so the unit tests below feed it
//! hand-built violating traces.

use super::artifactory::{Actor, Op, Write};
use function_artifactory::proto::v1::{Result as FnResult, Severity};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Invariant {
    /// 1. A repository made by an outside actor is never changed or deleted unless a claim
    ///    imported its key and then took it over.
    OutsideUntouched = 1,
    /// 2. A takeover changes only fields the preview published before it listed.
    TakeoverAsPreviewed = 2,
    /// 3. A repository the claim created is never deleted (deletion protection is on in every
    ///    sequence, and the claim is never deleted: removal orphans first).
    CreatedKept = 3,
    /// 4. No entry stays in `creating`, `waiting`, `moving` or `held` without a result naming
    ///    it (a Warning for `creating`, where the provider had its chance), other than a
    ///    consequence of a change.
    NothingStuckSilently = 4,
    /// 5. With `allowedKeys`, no key outside the pattern is created, updated or deleted
    ///    through the claim.
    WithinAllowedKeys = 5,
    /// 6. No fatal result the claim's edit did not ask for.
    NoUnmeantFatal = 6,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Violation {
    pub invariant: Invariant,
    pub what: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invariant {} ({:?}): {}",
            self.invariant as u8, self.invariant, self.what
        )
    }
}

/// What invariant 1 reads of a managed resource in the cluster: what its policies let the
/// provider do to the repository its external name names.
#[derive(Debug, Clone, PartialEq)]
pub struct Armed {
    pub resource: String,
    pub key: String,
    pub origin: Option<String>,
    pub updates: bool,
    pub deletes: bool,
}

/// What the checker follows of an entry's phase.
#[derive(Debug, Clone, PartialEq)]
struct Watch {
    phase: String,
    key: String,
    /// A result has named it since its phase began.
    named: bool,
    /// A Warning has named it since its phase began.
    warned: bool,
}

/// The invariants' memory across steps.
#[derive(Debug, Clone, Default)]
pub struct Checker {
    /// `allowedKeys` as a lower-cased prefix (`{claimNamespace}-*` is `team1-`).
    pub allowed_prefix: Option<String>,
    /// The claim whose invariants these are: the provider's writes for another claim are,
    /// to this one, writes made outside it.
    claim: u8,
    writes_seen: usize,
    /// Who made each key's repository last, by lower-cased key.
    made_by: HashMap<String, Actor>,
    /// Keys the claim imported: shown `adopted` by an entry with `import: true`.
    imported: HashSet<String>,
    /// The fields each key's last published takeover preview listed, and which repository of
    /// the key it was computed from (what the provider had last observed).
    previews: HashMap<String, (BTreeSet<String>, Option<u64>)>,
    /// Fields the claim's author set on a key's entry since its last preview: the claim's
    /// new intent, not something the takeover changes behind the author's back.
    edited: HashMap<String, BTreeSet<String>>,
    entries: BTreeMap<String, Watch>,
    /// Keys whose repository the claim made, deleted outside since.
    deleted_ours: HashSet<String>,
    /// Keys whose repository the claim made, deleted and made again outside: Artifactory names
    /// a repository by its key alone, so the provider cannot tell the new one from its own
    /// (a resource with `*` would have re-made it itself had it observed the gap). Invariant 1
    /// does not count them as made outside.
    replaced_ours: HashSet<String>,
}

fn claims(actor: &Actor) -> bool {
    matches!(actor, Actor::Provider { .. })
}

impl Checker {
    pub fn new(allowed_prefix: Option<&str>) -> Checker {
        Checker::of_claim(0, allowed_prefix)
    }

    pub fn of_claim(claim: u8, allowed_prefix: Option<&str>) -> Checker {
        Checker {
            allowed_prefix: allowed_prefix.map(str::to_lowercase),
            claim,
            ..Checker::default()
        }
    }

    /// A write as this claim sees it: the provider's for another claim is made outside.
    fn seen(&self, write: &Write) -> Write {
        let mut seen = write.clone();
        if matches!(write.actor, Actor::Provider { claim, .. } if claim != self.claim) {
            seen.actor = Actor::Outside;
        }
        seen
    }

    /// Invariants 1, 2, 3 and 5 over Artifactory's writes since the last look.
    pub fn writes(&mut self, writes: &[Write]) -> Vec<Violation> {
        let mut found = Vec::new();
        for write in &writes[self.writes_seen.min(writes.len())..] {
            let write = &self.seen(write);
            let key = write.key.to_lowercase();
            self.follow_replacements(write, &key);
            let maker = self.made_by.get(&key).cloned();
            let maker = maker.filter(|_| !self.replaced_ours.contains(&key));
            if let (
                Actor::Provider {
                    resource, origin, ..
                },
                Some(Actor::Outside),
                Op::Update(_) | Op::Delete,
            ) = (&write.actor, &maker, &write.op)
            {
                let took_over =
                    self.imported.contains(&key) && origin.as_deref() == Some("imported");
                if !took_over {
                    found.push(Violation {
                        invariant: Invariant::OutsideUntouched,
                        what: format!(
                            "{resource} (origin {origin:?}) made {:?} to {} made outside, never imported and taken over",
                            write.op, write.key
                        ),
                    });
                }
            }
            if let (Actor::Provider { resource, .. }, Some(Actor::Outside), Op::Update(fields)) =
                (&write.actor, &maker, &write.op)
            {
                let (listed, described) = self.previews.get(&key).cloned().unwrap_or_default();
                let edited = self.edited.get(&key).cloned().unwrap_or_default();
                let unlisted: Vec<&String> = fields
                    .iter()
                    .filter(|f| !listed.contains(*f) && !edited.contains(*f))
                    .collect();
                // A preview of another repository of the key: it was deleted and made again
                // outside, unseen by the provider when the preview was computed, and the
                // provider cannot tell the new one from it (the function sees only what the
                // provider observed).
                let replaced_unseen = described.is_some_and(|serial| serial != write.serial);
                if !unlisted.is_empty() && !replaced_unseen {
                    found.push(Violation {
                        invariant: Invariant::TakeoverAsPreviewed,
                        what: format!(
                            "{resource} changed {unlisted:?} of {}; the preview listed {listed:?}",
                            write.key
                        ),
                    });
                }
            }
            if let (Op::Delete, Some(maker)) = (&write.op, &maker) {
                if claims(maker) && claims(&write.actor) {
                    found.push(Violation {
                        invariant: Invariant::CreatedKept,
                        what: format!(
                            "{:?} deleted {}, which the claim created",
                            write.actor, write.key
                        ),
                    });
                }
            }
            if let (Some(prefix), true) = (&self.allowed_prefix, claims(&write.actor)) {
                if !key.starts_with(prefix.as_str()) {
                    found.push(Violation {
                        invariant: Invariant::WithinAllowedKeys,
                        what: format!(
                            "{:?} made {:?} to {} outside `{prefix}*`",
                            write.actor, write.op, write.key
                        ),
                    });
                }
            }
            match write.op {
                Op::Create => {
                    self.made_by.insert(key, write.actor.clone());
                }
                Op::Delete => {
                    self.made_by.remove(&key);
                }
                Op::Update(_) => {}
            }
        }
        self.writes_seen = writes.len();
        found
    }

    /// Follows [`Checker::replaced_ours`].
    fn follow_replacements(&mut self, write: &Write, key: &str) {
        let ours = self.made_by.get(key).is_some_and(claims);
        match (&write.actor, &write.op) {
            (Actor::Outside, Op::Delete) if ours => {
                self.deleted_ours.insert(key.to_owned());
            }
            (Actor::Outside, Op::Create) if self.deleted_ours.remove(key) => {
                self.replaced_ours.insert(key.to_owned());
            }
            (Actor::Provider { .. }, Op::Create) => {
                self.deleted_ours.remove(key);
                self.replaced_ours.remove(key);
            }
            _ => {}
        }
    }

    /// The claim's author set `field` on the entry of `key`.
    pub fn claim_set(&mut self, key: &str, field: &str) {
        self.edited
            .entry(key.to_lowercase())
            .or_default()
            .insert(field.to_owned());
    }

    /// Invariant 1 before any write: a managed resource that would let the provider update or
    /// delete a repository made outside, which the claim never imported and took over.
    pub fn armed(&self, resources: &[Armed]) -> Vec<Violation> {
        resources
            .iter()
            .filter(|r| r.updates || r.deletes)
            .filter(|r| !self.replaced_ours.contains(&r.key.to_lowercase()))
            .filter(|r| self.made_by.get(&r.key.to_lowercase()) == Some(&Actor::Outside))
            .filter(|r| {
                !(self.imported.contains(&r.key.to_lowercase())
                    && r.origin.as_deref() == Some("imported"))
            })
            .map(|r| Violation {
                invariant: Invariant::OutsideUntouched,
                what: format!(
                    "{} (origin {:?}) may {} {}, made outside and never imported and taken over",
                    r.resource,
                    r.origin,
                    match (r.updates, r.deletes) {
                        (true, true) => "update and delete",
                        (true, false) => "update",
                        _ => "delete",
                    },
                    r.key
                ),
            })
            .collect()
    }

    /// What a call published: imports seen, previews, phases and the results that name them.
    /// `observed`: the repository the provider last observed for each key (lower-cased).
    pub fn reconciled(
        &mut self,
        status: &Value,
        results: &[FnResult],
        observed: &HashMap<String, u64>,
    ) {
        let items = status["repositories"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let mut entries = BTreeMap::new();
        for item in &items {
            let (Some(name), Some(key), Some(phase)) = (
                item["name"].as_str(),
                item["key"].as_str(),
                item["phase"].as_str(),
            ) else {
                continue;
            };
            let lower = key.to_lowercase();
            if phase == "adopted" && item["adopted"] == true {
                self.imported.insert(lower.clone());
            }
            if let Some(changes) = item["takeover"].as_array() {
                let fields = changes
                    .iter()
                    .filter_map(|c| c["path"].as_str())
                    .map(|p| p.trim_start_matches("spec.forProvider.").to_owned())
                    .collect();
                let described = observed.get(&lower).copied();
                self.edited.remove(&lower);
                self.previews.insert(lower, (fields, described));
            }
            let mut watch = match self.entries.get(name) {
                Some(old) if old.phase == phase && old.key == key => old.clone(),
                _ => Watch {
                    phase: phase.to_owned(),
                    key: key.to_owned(),
                    named: false,
                    warned: false,
                },
            };
            // A consequence (`ConsequentialChange`) names the entry but says nothing of why it
            // stands still.
            for result in results
                .iter()
                .filter(|r| r.reason.as_deref() != Some("ConsequentialChange"))
            {
                if result.message.contains(name)
                    || result.message.to_lowercase().contains(&key.to_lowercase())
                {
                    watch.named = true;
                    watch.warned |= result.severity == Severity::Warning as i32;
                }
            }
            entries.insert(name.to_owned(), watch);
        }
        self.entries = entries;
    }

    /// Invariant 6: a fatal result, and whether the edits since the last call could ask for it.
    pub fn fatal(&self, message: &str, meant: bool) -> Option<Violation> {
        (!meant).then(|| Violation {
            invariant: Invariant::NoUnmeantFatal,
            what: format!("a fatal result no edit asked for: {message}"),
        })
    }

    /// The claim is deleted: no entry of it waits any more.
    pub fn claim_deleted(&mut self) {
        self.entries.clear();
    }

    /// Invariant 4, once the provider and Crossplane have settled.
    pub fn at_rest(&self) -> Vec<Violation> {
        self.entries
            .iter()
            .filter_map(|(name, watch)| {
                let silent = match watch.phase.as_str() {
                    "creating" => !watch.warned,
                    "waiting" | "moving" | "held" => !watch.named,
                    _ => false,
                };
                silent.then(|| Violation {
                    invariant: Invariant::NothingStuckSilently,
                    what: format!(
                        "{name} ({}) stays {} and no {} names it",
                        watch.key,
                        watch.phase,
                        if watch.phase == "creating" {
                            "Warning"
                        } else {
                            "result"
                        }
                    ),
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    //! Each invariant fails on a trace that breaks it.
    use super::*;
    use serde_json::json;

    fn provider(origin: Option<&str>) -> Actor {
        Actor::Provider {
            claim: 0,
            resource: "libs".into(),
            origin: origin.map(str::to_owned),
        }
    }

    fn write(actor: Actor, key: &str, op: Op) -> Write {
        Write {
            actor,
            key: key.into(),
            op,
            serial: 1,
        }
    }

    fn kinds(found: &[Violation]) -> Vec<Invariant> {
        found.iter().map(|v| v.invariant).collect()
    }

    fn result(message: &str, severity: Severity) -> FnResult {
        FnResult {
            message: message.into(),
            severity: severity as i32,
            ..FnResult::default()
        }
    }

    #[test]
    fn one_changing_an_outside_repository_it_never_imported_breaks_1() {
        let mut checker = Checker::new(None);
        let writes = [
            write(Actor::Outside, "payments-libs", Op::Create),
            write(provider(Some("moved")), "PAYMENTS-LIBS", Op::Delete),
        ];
        assert_eq!(
            kinds(&checker.writes(&writes)),
            [Invariant::OutsideUntouched]
        );
        // Imported, then taken over: allowed.
        let mut checker = Checker::new(None);
        checker.writes(&writes[..1]);
        let status = json!({"repositories": [{"name": "libs", "key": "payments-libs", "phase": "adopted", "adopted": true, "takeover": []}]});
        checker.reconciled(&status, &[], &HashMap::new());
        let delete = write(provider(Some("imported")), "payments-libs", Op::Delete);
        assert_eq!(checker.writes(&[writes[0].clone(), delete]), []);
        // A managed resource that could delete it, before any write.
        let mut checker = Checker::new(None);
        checker.writes(&writes[..1]);
        let armed = Armed {
            resource: "libs".into(),
            key: "payments-libs".into(),
            origin: Some("moved".into()),
            updates: false,
            deletes: true,
        };
        assert_eq!(
            kinds(&checker.armed(std::slice::from_ref(&armed))),
            [Invariant::OutsideUntouched]
        );
        let observed = Armed {
            deletes: false,
            ..armed
        };
        assert_eq!(checker.armed(&[observed]), []);
    }

    #[test]
    fn a_takeover_changing_a_field_its_preview_did_not_list_breaks_2() {
        let mut checker = Checker::new(None);
        checker.writes(&[write(Actor::Outside, "libs", Op::Create)]);
        let status = json!({"repositories": [{"name": "libs", "key": "libs", "phase": "adopted", "adopted": true,
            "takeover": [{"path": "spec.forProvider.description", "live": "x", "claim": ""}]}]});
        checker.reconciled(&status, &[], &HashMap::new());
        let update = write(
            provider(Some("imported")),
            "libs",
            Op::Update(vec!["description".into(), "handleSnapshots".into()]),
        );
        let found = checker.writes(&[write(Actor::Outside, "libs", Op::Create), update]);
        assert_eq!(kinds(&found), [Invariant::TakeoverAsPreviewed]);
        assert!(found[0].what.contains("handleSnapshots"), "{}", found[0]);
    }

    #[test]
    fn deleting_a_repository_the_claim_created_breaks_3() {
        let mut checker = Checker::new(None);
        let writes = [
            write(provider(Some("creating")), "libs", Op::Create),
            write(provider(Some("created")), "libs", Op::Delete),
        ];
        assert_eq!(kinds(&checker.writes(&writes)), [Invariant::CreatedKept]);
    }

    #[test]
    fn an_entry_left_creating_without_a_warning_breaks_4() {
        let mut checker = Checker::new(None);
        let status = json!({"repositories": [
            {"name": "libs", "key": "libs", "phase": "creating"},
            {"name": "docs", "key": "docs", "phase": "held"},
            {"name": "web", "key": "web", "phase": "managed"},
        ]});
        checker.reconciled(
            &status,
            &[result("creating libs", Severity::Normal)],
            &HashMap::new(),
        );
        assert_eq!(
            kinds(&checker.at_rest()),
            [
                Invariant::NothingStuckSilently,
                Invariant::NothingStuckSilently
            ]
        );
        // Named by a Warning since: nothing stuck silently.
        let warnings = [
            result("libs: the create failed", Severity::Warning),
            result("docs is held", Severity::Normal),
        ];
        checker.reconciled(&status, &warnings, &HashMap::new());
        assert_eq!(checker.at_rest(), []);
    }

    #[test]
    fn a_write_outside_allowed_keys_breaks_5() {
        let mut checker = Checker::new(Some("team1-"));
        let writes = [
            write(provider(Some("creating")), "TEAM1-libs", Op::Create),
            write(provider(Some("creating")), "payments-libs", Op::Create),
        ];
        assert_eq!(
            kinds(&checker.writes(&writes)),
            [Invariant::WithinAllowedKeys]
        );
    }

    #[test]
    fn a_fatal_result_no_edit_asked_for_breaks_6() {
        let checker = Checker::new(None);
        assert!(checker.fatal("key cannot change", true).is_none());
        assert_eq!(
            checker
                .fatal("class and package type cannot change", false)
                .map(|v| v.invariant),
            Some(Invariant::NoUnmeantFatal)
        );
    }
}
