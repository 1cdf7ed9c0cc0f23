//! Remote credentials: `username` and `password: {secretRef: {name, key, namespace?}}`
//! of a remote entry, rendered as the provider's secret reference fields.
//!
//! The function never reads a Secret's data: it renders references, and for
//! write-only passwords it reads only the Secret's `metadata.resourceVersion`
//! (through required resources), so that rotating the Secret changes
//! `passwordWoVersion` and the provider re-sends the password.

use crate::core::catalog::{catalog, Kind};
use crate::core::plan::Planned;
use crate::core::problems::{Category, Findings};
use crate::core::sorted;
use crate::core::validation::live::{LiveSchema, LiveSchemas};
use crate::proto::v1::resource_selector::Match;
use crate::proto::v1::{ResourceSelector, Resources};
use std::collections::BTreeMap;

/// Keeps write-only passwords where the provider has `passwordWoSecretRef` and
/// `passwordWoVersion`: in the schema the cluster serves (live schemas), else in the
/// built-in schema of the release. Elsewhere the plain `passwordSecretRef` is rendered,
/// with a warning.
pub(crate) fn settle_write_only<'p, 'a: 'p>(
    planned: impl IntoIterator<Item = &'p mut Planned<'a>>,
    live: &LiveSchemas<'_>,
    findings: &mut Findings,
) {
    const FIELDS: [&str; 2] = ["passwordWoSecretRef", "passwordWoVersion"];
    for p in planned {
        let kind = p.kind;
        let Some(secret) = p.password.as_mut().filter(|s| s.write_only) else {
            continue;
        };
        let has_fields = match live.get(&kind.api_version, &kind.kind) {
            Some(LiveSchema::Served(schema)) => {
                schema.has_properties(&["spec", "forProvider"], &FIELDS)
            }
            _ => FIELDS
                .iter()
                .all(|field| has_for_provider_field(kind, field)),
        };
        if !has_fields {
            secret.write_only = false;
            findings.warning(
                p.entry.field_path("password"),
                Some(p.entry.index),
                format!(
                    "{} of this provider release has no write-only password fields (passwordWoSecretRef, passwordWoVersion): passwordSecretRef is rendered instead",
                    kind.kind
                ),
            );
        }
    }
}

fn has_for_provider_field(kind: &Kind, field: &str) -> bool {
    let catalog = catalog();
    catalog
        .for_provider(kind)
        .is_some_and(|node| catalog.node(node).properties.get(field).is_some())
}

/// The requirement name for the Secret of an entry's write-only password; stable across calls.
pub(crate) fn secret_requirement_name(p: &Planned) -> String {
    format!("artifactory-password-{}", p.name)
}

/// Asks Crossplane for the Secret of every write-only password, by name in its namespace.
pub(crate) fn secret_requirements<'p, 'a: 'p>(
    planned: impl IntoIterator<Item = &'p Planned<'a>>,
) -> BTreeMap<String, ResourceSelector> {
    sorted::map(planned.into_iter().filter_map(|p| {
        let secret = p.password.as_ref().filter(|s| s.write_only)?;
        let selector = ResourceSelector {
            api_version: "v1".to_owned(),
            kind: "Secret".to_owned(),
            r#match: Some(Match::MatchName(secret.name.clone())),
            namespace: secret.namespace.clone(),
        };
        Some((secret_requirement_name(p), selector))
    }))
}

/// Sets each write-only password's version from its Secret's `resourceVersion`,
/// where Crossplane answered the requirement; a Secret that is answered missing
/// is a problem (the provider could not read the password either).
pub(crate) fn read_versions<'p, 'a: 'p>(
    planned: impl IntoIterator<Item = &'p mut Planned<'a>>,
    answered: &BTreeMap<String, Resources>,
    findings: &mut Findings,
) {
    for p in planned {
        let name = secret_requirement_name(p);
        let Some(secret) = p.password.as_mut().filter(|s| s.write_only) else {
            continue;
        };
        let Some(found) = answered.get(&name) else {
            continue;
        };
        let version = found
            .items
            .iter()
            .filter_map(|item| item.resource.as_ref())
            .find_map(|object| {
                let metadata = object.view().get("metadata")?;
                metadata.get("resourceVersion")?.as_str().map(str::to_owned)
            });
        match version {
            Some(version) => secret.version = Some(version),
            None => findings.problem(
                Category::InvalidComposite,
                p.entry.field_path("password.secretRef"),
                Some(p.entry.index),
                format!(
                    "{}: the Secret \"{}\" of the password is not found in namespace \"{}\"",
                    p.entry.label(),
                    secret.name,
                    secret.namespace.as_deref().unwrap_or_default()
                ),
                "create the Secret, or correct password.secretRef",
            ),
        }
    }
}

/// Without required resources the Secret's version cannot be read: rotating it
/// would not re-send the password.
pub(crate) fn warn_unversioned<'p, 'a: 'p>(
    planned: impl IntoIterator<Item = &'p Planned<'a>>,
    findings: &mut Findings,
) {
    for p in planned {
        if p.password.as_ref().is_some_and(|s| s.write_only) {
            findings.warning(
                p.entry.field_path("password"),
                Some(p.entry.index),
                "Crossplane does not offer required resources, so the Secret's resourceVersion is unknown and passwordWoVersion is not set: rotating the Secret will not re-send the password",
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::catalog::ProviderApi;
    use crate::core::composite::{read_meta, read_spec};
    use crate::core::input::Input;
    use crate::core::plan::{plan, Context, SecretUse};
    use crate::proto::v1::Resource;
    use crate::proto::Struct;
    use serde_json::{json, Value};

    fn composite() -> Value {
        json!({
            "apiVersion": "platform.example.org/v1alpha1", "kind": "Repositories",
            "metadata": {"name": "repos", "namespace": "team1"},
            "spec": {"repositories": [{
                "name": "central", "rclass": "remote", "packageType": "maven",
                "url": "https://repo1.maven.org/maven2", "username": "ci",
                "password": {"secretRef": {"name": "upstream", "key": "password"}}
            }]}
        })
    }

    fn secret(version: &str) -> Resources {
        Resources {
            items: vec![Resource {
                resource: Some(Struct::from_value(json!({
                    "apiVersion": "v1", "kind": "Secret",
                    "metadata": {"name": "upstream", "namespace": "team1", "resourceVersion": version},
                    "data": {"password": "c2VjcmV0"}
                }))),
                ..Resource::default()
            }],
        }
    }

    /// The write-only path, as for a provider release with the write-only fields (no
    /// released CRD has them yet, so the plan's fallback is bypassed here).
    #[test]
    fn write_only_secret_is_required_and_versioned() {
        let composite = composite();
        let object = crate::proto::ObjectView::Json(composite.as_object().unwrap());
        let mut findings = Findings::default();
        let spec = read_spec(object, &mut findings);
        let meta = read_meta(object);
        let input = Input::default();
        let ctx = Context {
            spec: &spec,
            input: &input,
            meta: &meta,
            api: ProviderApi::Namespaced,
        };
        let mut planned = plan(&ctx, &mut findings);
        let secret_use = planned[0].password.as_mut().unwrap();
        assert_eq!(secret_use.field(), "passwordSecretRef");
        assert!(secret_requirements(&planned).is_empty());
        planned[0].password.as_mut().unwrap().write_only = true;
        assert_eq!(
            planned[0].password.as_ref().unwrap().field(),
            "passwordWoSecretRef"
        );
        let requirements = secret_requirements(&planned);
        let selector = &requirements["artifactory-password-central"];
        assert_eq!(selector.kind, "Secret");
        assert_eq!(selector.namespace.as_deref(), Some("team1"));
        assert_eq!(
            selector.r#match,
            Some(Match::MatchName("upstream".to_owned()))
        );
        // Not answered yet: no version, no problem.
        read_versions(&mut planned, &BTreeMap::new(), &mut findings);
        assert_eq!(planned[0].password.as_ref().unwrap().version, None);
        // Answered, then rotated.
        for version in ["4711", "4790"] {
            let answered =
                BTreeMap::from([("artifactory-password-central".to_owned(), secret(version))]);
            read_versions(&mut planned, &answered, &mut findings);
            assert_eq!(
                planned[0].password.as_ref().unwrap().version.as_deref(),
                Some(version)
            );
        }
        assert!(!findings.has_problems(), "{:?}", findings.problems);
        // Answered missing: a problem that names the Secret, never its data.
        let answered = BTreeMap::from([(
            "artifactory-password-central".to_owned(),
            Resources::default(),
        )]);
        read_versions(&mut planned, &answered, &mut findings);
        assert_eq!(findings.problems.len(), 1);
        assert_eq!(
            findings.problems[0].to_string(),
            "spec.repositories[0].password.secretRef: repository \"central\": the Secret \"upstream\" of the password is not found in namespace \"team1\"; fix: create the Secret, or correct password.secretRef"
        );
    }

    #[test]
    fn references_per_api() {
        let mut secret = SecretUse {
            name: "upstream".into(),
            key: "password".into(),
            namespace: Some("team1".into()),
            namespaced_reference: true,
            write_only: false,
            version: None,
        };
        assert_eq!(
            secret.reference(),
            json!({"key": "password", "name": "upstream", "namespace": "team1"})
        );
        secret.namespaced_reference = false;
        assert_eq!(
            secret.reference(),
            json!({"key": "password", "name": "upstream"})
        );
    }
}
