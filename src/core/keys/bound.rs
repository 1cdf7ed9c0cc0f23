//! `allowedKeys` (docs/design.md, "Allowed keys"): every key a claim touches stays inside the
//! bound the platform sets for it.
//!
//! With the default naming formats every part of a computed key is the claim author's
//! (`{name}`, `{projectKey}`), so the bound is checked on every key, not only on keys given in
//! `key`: the entries' keys however they came, imports, and the keys a virtual names outside
//! the claim (`externalRepositories`, and `repositories` or `defaultDeploymentRepo` written in
//! `forProvider`). Members and default deployment repositories named by entry are that entry's
//! key, checked as such.

use super::{composite_value, key_path, KeyOrigin};
use crate::core::catalog::Rclass;
use crate::core::composite::{CompositeMeta, Entry};
use crate::core::input::Input;
use crate::core::path::FieldPath;
use crate::core::problems::{Category, Findings};
use crate::proto::View;
use std::fmt;

/// The placeholders of `allowedKeys` and who chooses their values. The platform: the
/// namespace a claim is in, and a namespaced composite's own (RBAC decides who writes there).
/// The claim's author: the claim's and the composite's names and the project key, which a
/// claim can set to reach any key.
const BOUND_PLACEHOLDERS: [(&str, Chooser); 5] = [
    ("claimNamespace", Chooser::Platform),
    ("namespace", Chooser::Platform),
    ("claimName", Chooser::Claim),
    ("xrName", Chooser::Claim),
    ("projectKey", Chooser::Claim),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Chooser {
    Platform,
    Claim,
}

/// The longest key the bound is matched against; a longer one does not match.
const BOUND_KEY_CHARS: usize = 1_024;
/// How much of a refused key its message quotes.
const BOUND_KEY_SHOWN: usize = 128;

/// `allowedKeys` filled in for this composite.
pub(crate) struct Bound<'i> {
    pattern: &'i str,
    /// The pattern with its placeholders filled in.
    filled: String,
    /// [`Bound::filled`] in lower case, matched against keys in lower case (Artifactory
    /// compares keys ignoring case).
    lower: String,
    /// `{claimNamespace} is "team1"`, for messages; empty without placeholders.
    values: String,
}

impl<'i> Bound<'i> {
    /// The input's bound for this composite; `None` without `allowedKeys`, or (with a problem)
    /// where a placeholder is unknown, unclosed or without a value. A bound made only of
    /// placeholders the claim chooses is a warning: it bounds nothing.
    pub(crate) fn new(
        input: &'i Input,
        meta: &CompositeMeta,
        project_key: Option<&str>,
        findings: &mut Findings,
    ) -> Option<Bound<'i>> {
        let pattern = input.allowed_keys.as_deref()?;
        let path = || input.at.path_of("allowedKeys");
        let mut filled = String::with_capacity(pattern.len());
        let mut values = Vec::new();
        let mut choosers = Vec::new();
        let mut rest = pattern;
        while let Some(open) = rest.find('{') {
            filled.push_str(&rest[..open]);
            let close = rest[open..].find('}').map(|c| open + c);
            let name = close.map(|close| &rest[open + 1..close]);
            let known = name.and_then(|name| BOUND_PLACEHOLDERS.iter().find(|(p, _)| *p == name));
            match known.and_then(|(name, chooser)| {
                Some((*name, *chooser, composite_value(name, meta, project_key)?))
            }) {
                Some((name, chooser, value)) => {
                    filled.push_str(value);
                    values.push(format!("{{{name}}} is \"{value}\""));
                    choosers.push((name, chooser));
                }
                None => {
                    findings.problem(
                        Category::InvalidInput,
                        path(),
                        None,
                        format!("allowedKeys \"{pattern}\" has a placeholder that is unknown, unclosed or without a value for this composite"),
                        "use only {claimNamespace}, {namespace}, {claimName}, {xrName} and {projectKey}, each closed and with a value, as in {claimNamespace}-*",
                    );
                    return None;
                }
            }
            rest = &rest[close.unwrap_or(rest.len()) + 1..];
        }
        filled.push_str(rest);
        if !choosers.is_empty() && choosers.iter().all(|(_, c)| *c == Chooser::Claim) {
            let named: Vec<String> = choosers.iter().map(|(n, _)| format!("{{{n}}}")).collect();
            findings.warning(
                path(),
                None,
                format!("allowedKeys \"{pattern}\" is made only of placeholders that the claim's author chooses ({}): a claim can set them to reach any key, so it bounds nothing; use {{claimNamespace}} (a claim's namespace) or {{namespace}} (a namespaced composite's), which the platform controls, as in \"{{claimNamespace}}-*\"", named.join(", ")),
            );
        }
        Some(Bound {
            pattern,
            lower: filled.to_lowercase(),
            filled,
            values: values.join(", "),
        })
    }

    /// Whether `key` is inside the bound.
    fn allows(&self, key: &str) -> bool {
        key.len() <= BOUND_KEY_CHARS && glob_matches(&self.lower, &key.to_lowercase())
    }

    /// An entry's key, however it came: given, imported or computed by the naming format.
    pub(crate) fn check_key(
        &self,
        entry: &Entry,
        key: &str,
        origin: KeyOrigin,
        findings: &mut Findings,
    ) {
        if self.allows(key) {
            return;
        }
        let fix = match origin {
            KeyOrigin::Given => format!("use a key that matches \"{}\", or ask the platform team that owns the Composition to allow this one", self.filled),
            KeyOrigin::Format(format) => format!("the naming format \"{format}\" is filled with the entry's name and the claim's spec.projectKey: choose them so that the key matches \"{}\", or set key to one that does", self.filled),
        };
        self.refuse(
            entry,
            key_path(entry),
            format_args!("key \"{}\" ({origin})", Shown(key)),
            fix,
            findings,
        );
    }

    /// The keys a virtual names outside the claim: `externalRepositories`, and the members and
    /// default deployment repository written in `forProvider` where the typed fields are not
    /// given (given both, they must agree, and the typed ones are checked).
    pub(crate) fn check_members(&self, entry: &Entry, findings: &mut Findings) {
        if entry.rclass != Some(Rclass::Virtual) {
            return;
        }
        let external = entry.at_field("externalRepositories");
        for (index, key) in entry.external_repositories.iter().flatten().enumerate() {
            self.check_member(entry, external.index(index), key, findings);
        }
        let Some(for_provider) = entry.for_provider else {
            return;
        };
        let at = entry.at_field("forProvider");
        let typed_members = entry.repositories.is_some() || entry.external_repositories.is_some();
        let members = for_provider
            .get("repositories")
            .and_then(View::as_list)
            .filter(|_| !typed_members);
        let members_at = at.field("repositories");
        for (index, member) in members.into_iter().flat_map(|list| list.iter()).enumerate() {
            if let Some(key) = member.as_str() {
                self.check_member(entry, members_at.index(index), key, findings);
            }
        }
        let default = for_provider
            .get("defaultDeploymentRepo")
            .and_then(View::as_str)
            .filter(|_| entry.default_deployment_repo.is_none());
        if let Some(key) = default {
            self.check_member(entry, at.field("defaultDeploymentRepo"), key, findings);
        }
    }

    fn check_member(&self, entry: &Entry, at: FieldPath, key: &str, findings: &mut Findings) {
        if self.allows(key) {
            return;
        }
        let fix = format!("name only repositories whose keys match \"{}\", or ask the platform team that owns the Composition to allow this one", self.filled);
        self.refuse(
            entry,
            at.to_string(),
            format_args!("repository key \"{}\"", Shown(key)),
            fix,
            findings,
        );
    }

    fn refuse(
        &self,
        entry: &Entry,
        path: String,
        what: fmt::Arguments,
        fix: String,
        findings: &mut Findings,
    ) {
        let (pattern, filled) = (self.pattern, &self.filled);
        let here = if self.values.is_empty() {
            String::new()
        } else {
            format!(", here \"{filled}\" ({})", self.values)
        };
        findings.problem(
            Category::InvalidKey,
            path,
            Some(entry.index),
            format!(
                "{}: {what} is outside the keys this composite may use: the function's input allows only keys matching allowedKeys \"{pattern}\"{here}",
                entry.label(),
            ),
            fix,
        );
    }
}

/// A key as a message quotes it: at most [`BOUND_KEY_SHOWN`] characters.
struct Shown<'k>(&'k str);

impl fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut chars = self.0.chars();
        f.write_str(&chars.by_ref().take(BOUND_KEY_SHOWN).collect::<String>())?;
        if chars.next().is_some() {
            f.write_str("…")?;
        }
        Ok(())
    }
}

/// Whether `text` matches `pattern`, where `*` stands for any run of characters: the usual
/// walk that returns to the last `*` on a mismatch, at most pattern × text steps.
fn glob_matches(pattern: &str, text: &str) -> bool {
    let (pattern, text): (Vec<char>, Vec<char>) =
        (pattern.chars().collect(), text.chars().collect());
    let (mut p, mut t) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        if p < pattern.len() && pattern[p] == '*' {
            star = Some((p, t));
            p += 1;
        } else if p < pattern.len() && pattern[p] == text[t] {
            p += 1;
            t += 1;
        } else if let Some((star_p, star_t)) = star {
            p = star_p + 1;
            t = star_t + 1;
            star = Some((star_p, star_t + 1));
        } else {
            return false;
        }
    }
    pattern[p..].iter().all(|c| *c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::input::SettingsAt;

    #[test]
    fn star_is_any_run_and_the_rest_is_literal() {
        assert!(glob_matches("team1-*", "team1-libs"));
        assert!(glob_matches("team1-*", "team1-"));
        assert!(!glob_matches("team1-*", "team2-libs"));
        assert!(glob_matches("*-release", "libs-release"));
        assert!(glob_matches("a*b*c", "axxbyyc"));
        assert!(!glob_matches("a*b*c", "axxbyy"));
        assert!(glob_matches("exact", "exact"));
        assert!(!glob_matches("exact", "exact-not"));
    }

    fn bound_warnings(pattern: &str) -> Vec<String> {
        let input = Input {
            at: SettingsAt::Input,
            allowed_keys: Some(pattern.to_owned()),
            ..Input::default()
        };
        let meta = CompositeMeta {
            name: "team1-repos-x7k2p".into(),
            claim_name: Some("team1-repos".into()),
            claim_namespace: Some("team1".into()),
            ..CompositeMeta::default()
        };
        let mut findings = Findings::default();
        let bound = Bound::new(&input, &meta, Some("payments"), &mut findings).unwrap();
        assert!(!findings.has_problems());
        assert!(bound.allows(&format!("{}x", bound.filled.trim_end_matches('*'))));
        findings.warnings.into_iter().map(|w| w.message).collect()
    }

    #[test]
    fn a_bound_of_claim_placeholders_only_is_warned_about() {
        for pattern in [
            "{projectKey}-*",
            "{claimName}-*",
            "x-{xrName}-{projectKey}*",
        ] {
            let warnings = bound_warnings(pattern);
            assert_eq!(warnings.len(), 1, "{pattern}");
            assert!(warnings[0].contains("bounds nothing"), "{}", warnings[0]);
        }
        for pattern in [
            "{claimNamespace}-*",
            "{claimNamespace}-{projectKey}-*",
            "payments-*",
        ] {
            assert!(bound_warnings(pattern).is_empty(), "{pattern}");
        }
    }
}
