//! The takeover preview (docs/design.md, "Adoption"): what taking over an observed repository
//! would change in Artifactory, field by field, before anyone widens its policies.
//!
//! upjet writes what the provider read of the repository into `status.atProvider`, under the
//! names of `spec.forProvider` (with `id`, and `packageType` for virtual and federated kinds).
//!
//! A takeover changes the fields the claim sets, and nothing else: every field of the kind the
//! claim leaves out is rendered at its live value ([`Kept`]), zero values included, so neither
//! upjet's late initialisation nor the Terraform provider's defaults can change it. upjet's
//! Terraform-CLI client, which every release of the provider runs, late-initialises each nil
//! `forProvider` field from the refreshed state before its first plan (upjet
//! `pkg/controller/external.go:279-285, 329-336`) but skips zero values
//! (`WithZeroValueJSONOmitEmptyFilter`, `pkg/resource/lateinit.go:108-139` @ v2.2.0), and
//! without `LateInitialize` does not at all; the Terraform provider then plans an omitted
//! field with a default back to it (terraform-provider-artifactory v12.11.7,
//! `pkg/artifactory/resource/repository/repository.go` `BaseAttributes`, `local/local.go:178-226`,
//! `remote/remote.go:365-583`). The preview is then the claim's
//! fields whose value differs from the live one, and those whose live value cannot be read.
//!
//! Whoever can read the claim reads the preview, not only whoever can read Artifactory: every
//! value is quoted with what a URL in it may carry as a secret masked (`problems::masked`), and
//! credentials are described, never quoted.

use crate::core::compose::rendered_spec;
use crate::core::lifecycle::observed::Observed;
use crate::core::lifecycle::phase::{Origin, Phase};
use crate::core::lifecycle::Repository;
use crate::core::problems::masked;
use crate::core::sorted;
use crate::proto::{Kind, ObjectView, View};
use serde_json::Value;
use std::collections::BTreeSet;

/// Changes listed per repository; the rest are counted.
pub(crate) const PER_REPOSITORY: usize = 16;
/// Changes listed per composite, all repositories together; the rest are counted.
pub(crate) const PER_COMPOSITE: usize = 256;
/// A value longer than this is cut in the preview.
const VALUE_CHARS: usize = 120;

/// One field a takeover would change.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Change {
    /// `spec.forProvider.<field>`.
    pub path: String,
    /// The live value as JSON text, or a description.
    pub live: String,
    /// The value the takeover writes, as JSON text, or a description.
    pub claim: String,
}

/// What taking one repository over would change.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Preview {
    /// The changes listed, in field order.
    pub changes: Vec<Change>,
    /// How many more were found than are listed.
    pub omitted: usize,
}

impl Preview {
    /// Every change found, listed or not.
    pub(crate) fn total(&self) -> usize {
        self.changes.len() + self.omitted
    }
}

/// Where the live values of the fields a claim leaves out come from, first source first, for a
/// repository that existed before the claim (origin `taken` or `imported`); none for one the
/// claim made, whose omitted fields are the provider's to default.
///
/// Until the takeover has been applied, `status.atProvider`: what the provider last read, so
/// the takeover writes back what Artifactory holds. After it (`managed`), `spec.forProvider` as
/// the cluster holds it first: the values the takeover wrote stay as they were, whatever the
/// policies and whatever changes in Artifactory afterwards, as they would if the claim had
/// named them; `status.atProvider` then gives a field the spec does not hold yet.
#[derive(Default)]
pub(crate) struct Kept<'a>([Option<ObjectView<'a>>; 2]);

impl<'a> Kept<'a> {
    pub(crate) fn of(r: &Repository<'a>) -> Kept<'a> {
        let Some(live) = &r.observed else {
            return Kept::default();
        };
        match (r.adoption.origin, &r.adoption.phase) {
            (Some(Origin::Taken | Origin::Imported), Phase::Managed) => {
                Kept([live.spec_for_provider(), live.at_provider()])
            }
            (Some(Origin::Taken | Origin::Imported), _) => Kept([live.at_provider(), None]),
            _ => Kept::default(),
        }
    }

    /// The live fields, first source first; a field of a later source that an earlier one
    /// holds too is given again (the caller keeps the first, and the fields its kind holds).
    /// Credentials and references to Secrets are never kept: Artifactory does not return a
    /// credential, and which Secret a repository reads is the claim's to say, within the
    /// namespaces the platform allows (a kept reference would outlive a narrower bound).
    pub(crate) fn fields(&self) -> impl Iterator<Item = (&'a str, View<'a>)> + '_ {
        self.0
            .iter()
            .flatten()
            .flat_map(|source| source.into_iter())
            .filter(|(name, value)| !names_credential(name, *value))
    }
}

/// Fields that hold or name credentials: described, never quoted.
fn is_credential(field: &str) -> bool {
    let lower = field.to_ascii_lowercase();
    ["password", "secret", "token", "certificate"]
        .iter()
        .any(|word| lower.contains(word))
}

/// A credential's value, or a reference to a Secret; a switch named after one (a remote's
/// `enableTokenAuthentication`) is neither.
fn names_credential(field: &str, value: View) -> bool {
    let reference = field.to_ascii_lowercase().ends_with("secretref");
    reference || (is_credential(field) && !matches!(value.kind(), Kind::Bool(_)))
}

/// Lists whose order means nothing to Artifactory: compared as sets.
fn is_unordered(field: &str) -> bool {
    matches!(field, "propertySets" | "projectEnvironments")
}

/// Sets the preview of each repository whose phase shows one, from its rendered resource,
/// within the composite's bound on listed changes.
pub(crate) fn preview_takeovers(repositories: &mut [Repository]) {
    let mut budget = PER_COMPOSITE;
    for r in repositories.iter_mut() {
        let Some(live) = r
            .observed
            .as_ref()
            .filter(|_| r.adoption.phase.shows_preview())
        else {
            continue;
        };
        let for_provider = r
            .resource
            .as_ref()
            .and_then(rendered_spec)
            .and_then(|spec| spec.get("forProvider"))
            .and_then(View::as_object);
        r.preview = preview(for_provider, live, &mut budget);
    }
}

/// What taking `live` over with the rendered `for_provider` would change; `None` while the
/// provider has not read the repository (`status.atProvider` absent). The rendered fields are
/// the claim's and, for those it leaves out, the live values ([`Kept`]): only the claim's can
/// differ.
///
/// `budget` is what the composite may still list; it is taken from.
fn preview(
    for_provider: Option<ObjectView>,
    live: &Observed,
    budget: &mut usize,
) -> Option<Preview> {
    let at_provider = live.at_provider()?;
    let mut preview = Preview::default();
    for (field, value) in for_provider.into_iter().flatten() {
        let Some(change) = claimed_change(field, value, at_provider.get(field)) else {
            continue;
        };
        if preview.changes.len() < PER_REPOSITORY && *budget > 0 {
            *budget -= 1;
            preview.changes.push(change);
        } else {
            preview.omitted += 1;
        }
    }
    Some(preview)
}

/// The change a claimed field makes, if any.
fn claimed_change(field: &str, claimed: View, live: Option<View>) -> Option<Change> {
    // A switch such as a remote's `enableTokenAuthentication` names no credential: compared.
    if names_credential(field, claimed) {
        return Some(Change {
            path: path(field),
            live: "not readable: Artifactory does not return credentials".to_owned(),
            claim: "set from the Secret the claim references".to_owned(),
        });
    }
    let claimed = claimed.to_value();
    let live = live.map(|v| v.to_value());
    if live
        .as_ref()
        .is_some_and(|live| same(live, &claimed, field))
    {
        return None;
    }
    let mut claim = text(&claimed);
    // Values that differ only where a URL's secrets are masked would read as no change.
    if live
        .as_ref()
        .is_some_and(|live| shown(live) == shown(&claimed))
    {
        claim.push_str(" (differs from the live value in what is masked: a URL's user information, query or fragment)");
    }
    let live = live.as_ref().map_or_else(|| "unset".to_owned(), text);
    Some(Change {
        path: path(field),
        live,
        claim,
    })
}

fn path(field: &str) -> String {
    format!("spec.forProvider.{field}")
}

/// Equal as Artifactory sees them: numbers by value, unordered lists as sets.
fn same(a: &Value, b: &Value, field: &str) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) if is_unordered(field) => same_set(x, y),
        _ => a == b,
    }
}

/// Whether two lists hold the same items, in any order and however often: each list's items
/// are put in a sorted set once, so a comparison costs n log n item comparisons, not the n² of
/// looking every item up in the other list (40,000 property sets took 5 s of CPU that way on
/// every reconcile, issue 56). Items compare as they are equal: a string by its text, any
/// other value by its JSON text.
fn same_set(x: &[Value], y: &[Value]) -> bool {
    #[derive(PartialEq, Eq, PartialOrd, Ord)]
    enum Item<'v> {
        Text(&'v str),
        Other(String),
    }
    fn items(list: &[Value]) -> BTreeSet<Item<'_>> {
        sorted::set(list.iter().map(|item| match item {
            Value::String(text) => Item::Text(text),
            other => Item::Other(other.to_string()),
        }))
    }
    items(x) == items(y)
}

/// A value as JSON text, with a URL's secrets masked.
fn shown(value: &Value) -> String {
    masked(&value.to_string()).into_owned()
}

/// [`shown`], cut to [`VALUE_CHARS`] characters (after masking: a cut URL could hide the `@`
/// that shows where its user information ends).
fn text(value: &Value) -> String {
    let full = shown(value);
    match full.char_indices().nth(VALUE_CHARS) {
        Some((end, _)) => format!("{}…", &full[..end]),
        None => full,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn lists_of_sets_compare_without_order_and_numbers_by_value() {
        assert!(same(&json!(["a", "b"]), &json!(["b", "a"]), "propertySets"));
        assert!(!same(
            &json!(["a", "b"]),
            &json!(["b", "a"]),
            "repositories"
        ));
        assert!(same(
            &json!(7200),
            &json!(7200.0),
            "retrievalCachePeriodSeconds"
        ));
    }

    #[test]
    fn a_switch_named_after_a_token_is_compared_not_described() {
        let live = json!(true);
        let claimed = json!(true);
        let same_value = claimed_change(
            "enableTokenAuthentication",
            View::Json(&claimed),
            Some(View::Json(&live)),
        );
        assert_eq!(same_value, None);
    }

    #[test]
    fn unordered_lists_compare_as_sets() {
        assert!(same(
            &json!(["a", "a", "b"]),
            &json!(["b", "a"]),
            "propertySets"
        ));
        // Of equal length, every item of one in the other, yet not the same set.
        assert!(!same(
            &json!(["a", "a"]),
            &json!(["a", "b"]),
            "propertySets"
        ));
        assert!(!same(&json!(["1"]), &json!([1]), "propertySets"));
        assert!(same(&json!([]), &json!([]), "projectEnvironments"));
    }

    #[test]
    fn forty_thousand_property_sets_compare_as_sets() {
        // Their cost: hostile_claims::forty_thousand_property_sets_are_previewed_in_linear_time.
        let live: Vec<Value> = (0..40_000)
            .map(|i| json!(format!("property-set-{i:05}")))
            .collect();
        let mut claimed = live.clone();
        claimed.reverse();
        let (live, claimed) = (Value::Array(live), Value::Array(claimed));
        assert!(same(&live, &claimed, "propertySets"));
        let mut other = claimed.clone();
        other.as_array_mut().unwrap()[0] = json!("property-set-40000");
        assert!(!same(&live, &other, "propertySets"));
    }

    #[test]
    fn a_url_differing_only_in_its_secrets_is_said_to_differ() {
        let live = json!("https://bob:old@upstream.example/");
        let claimed = json!("https://bob:new@upstream.example/");
        let change = claimed_change("url", View::Json(&claimed), Some(View::Json(&live))).unwrap();
        assert_eq!(change.live, "\"https://***@upstream.example/\"");
        assert_eq!(change.claim, "\"https://***@upstream.example/\" (differs from the live value in what is masked: a URL's user information, query or fragment)");
        // Long values that differ past the cut are not said to differ in what is masked.
        let (live, claimed) = (
            json!("x".repeat(200)),
            json!(format!("{}y", "x".repeat(199))),
        );
        let change =
            claimed_change("notes", View::Json(&claimed), Some(View::Json(&live))).unwrap();
        assert_eq!(change.claim, change.live);
    }

    #[test]
    fn long_values_are_cut() {
        let long = json!("x".repeat(500));
        assert_eq!(text(&long).chars().count(), VALUE_CHARS + 1);
    }
}
