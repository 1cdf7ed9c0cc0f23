//! Drift warnings: settings the provider accepts but that make it report
//! drift, or that Artifactory cannot serve as written. Never fatal: each
//! becomes a warning (in the entry's status when it is about one entry) and a
//! Warning result.

use crate::core::catalog::{catalog, package_family, Rclass};
use crate::core::input::Input;
use crate::core::keys::has_project_prefix;
use crate::core::lifecycle::observed::Observed;
use crate::core::lifecycle::Repository;
use crate::core::plan::Planned;
use crate::core::problems::{a_or_an, Findings};
use crate::core::sorted;
use crate::proto::v1::{Result as FnResult, Severity, Target};
use crate::proto::View;
use std::collections::BTreeSet;

/// The host suffix of JFrog SaaS instances, which serve Docker registries as subdomains.
const SAAS_SUFFIX: &str = ".jfrog.io";
/// The longest DNS label.
const DNS_LABEL_MAX: usize = 63;
/// How many entries a warning about several names before "and N more".
const NAMED_ENTRIES_MAX: usize = 10;

/// Adds the drift warnings of a call to `findings` and returns their Warning results.
pub(crate) fn drift_warnings(
    repositories: &[Repository],
    input: &Input,
    project_key: Option<&str>,
    findings: &mut Findings,
) -> Vec<FnResult> {
    let mut results = Vec::new();
    if let Some(project_key) = project_key {
        results.extend(project_environments_warning(
            repositories,
            input,
            project_key,
            findings,
        ));
        results.extend(project_prefix_warning(repositories, project_key));
    }
    let mut warn = |p: &Planned, field: &str, reason: &str, message: String| {
        findings.warning(
            p.entry.field_path(field),
            Some(p.entry.index),
            message.clone(),
        );
        results.push(FnResult {
            severity: Severity::Warning as i32,
            message: format!("repository {} (key {}): {message}", p.name, p.key),
            reason: Some(reason.to_owned()),
            target: Some(Target::CompositeAndClaim as i32),
        });
    };
    let saas_server = input.artifactory_url.as_deref().and_then(saas_server_name);
    for r in repositories {
        let (p, observed) = (&r.planned, &r.observed);
        if let Some(server) = saas_server {
            let limit = DNS_LABEL_MAX.saturating_sub(server.len() + 1);
            if is_container_registry(&p.kind.package_type) && p.key.len() > limit {
                warn(
                    p,
                    "key",
                    "KeyTooLongForSubdomain",
                    format!(
                        "key \"{}\" has {} characters, but a Docker/OCI repository on the JFrog SaaS server \"{server}\" is served as the subdomain <key>-{server} only when the key has at most {limit} (63 - ({} + 1)); shorten the key",
                        p.key,
                        p.key.len(),
                        server.len()
                    ),
                );
            }
        }
        if let Some(dropped) = dropped_members(p, observed.as_ref()) {
            warn(
                p,
                "repositories",
                "VirtualMembersDropped",
                dropped_message(p, &dropped, repositories),
            );
        }
    }
    results
}

/// One warning for every entry whose kind has `projectEnvironments` and that does not set
/// it: they share the cause (`spec.projectKey`) and the fix, so it is said once, naming them.
fn project_environments_warning(
    repositories: &[Repository],
    input: &Input,
    project_key: &str,
    findings: &mut Findings,
) -> Option<FnResult> {
    let lacking: Vec<&str> = repositories
        .iter()
        .map(|r| &r.planned)
        .filter(|p| lacks_project_environments(p, input))
        .map(|p| p.name)
        .collect();
    let first = lacking.first()?;
    let subject = if lacking.len() == 1 {
        format!("repository {first} does")
    } else {
        format!("{} repositories ({}) do", lacking.len(), named(&lacking))
    };
    let message = format!(
        "projectKey \"{project_key}\" is set and {subject} not set forProvider.projectEnvironments: Artifactory assigns DEV and the provider then reports drift on every reconcile; set projectEnvironments on each (for example [DEV]), or once in the function input's defaults"
    );
    findings.warning("spec.projectKey", None, message.clone());
    Some(FnResult {
        severity: Severity::Warning as i32,
        message,
        reason: Some("ProjectEnvironmentsMissing".to_owned()),
        target: Some(Target::CompositeAndClaim as i32),
    })
}

/// One Warning result for the keys without the project key prefix, so that the claim's author
/// sees it too: each entry's status has its own warning already (`keys::key_warnings`).
fn project_prefix_warning(repositories: &[Repository], project_key: &str) -> Option<FnResult> {
    let lacking: Vec<String> = repositories
        .iter()
        .map(|r| &r.planned)
        .filter(|p| !has_project_prefix(&p.key, project_key))
        .map(|p| format!("{} (key \"{}\")", p.name, p.key))
        .collect();
    let lacking: Vec<&str> = lacking.iter().map(String::as_str).collect();
    let first = lacking.first()?;
    let subject = if lacking.len() == 1 {
        format!("the key of repository {first} does")
    } else {
        format!(
            "the keys of {} repositories ({}) do",
            lacking.len(),
            named(&lacking)
        )
    };
    Some(FnResult {
        severity: Severity::Warning as i32,
        message: format!(
            "projectKey \"{project_key}\" is set and {subject} not start with the project key prefix \"{project_key}-\", which the provider's CRD says a repository key in a project must have; start each key with \"{project_key}-\" (naming format \"{{projectKey}}-{{name}}\")"
        ),
        reason: Some("KeyWithoutProjectPrefix".to_owned()),
        target: Some(Target::CompositeAndClaim as i32),
    })
}

/// `a, b, c` or, past [`NAMED_ENTRIES_MAX`], the first ones `and N more`.
fn named(names: &[&str]) -> String {
    let shown = names[..names.len().min(NAMED_ENTRIES_MAX)].join(", ");
    match names.len().saturating_sub(NAMED_ENTRIES_MAX) {
        0 => shown,
        more => format!("{shown} and {more} more"),
    }
}

/// The server name of a JFrog SaaS URL: `acme` of `https://acme.jfrog.io`.
fn saas_server_name(url: &str) -> Option<&str> {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let host = rest.split(['/', ':', '?', '#']).next()?;
    let server = host.strip_suffix(SAAS_SUFFIX)?;
    (!server.is_empty()).then_some(server)
}

fn is_container_registry(package_type: &str) -> bool {
    package_type.starts_with("docker") || package_type == "oci"
}

/// The kind has `projectEnvironments`, and neither the entry nor the input's defaults set it.
fn lacks_project_environments(p: &Planned, input: &Input) -> bool {
    input.defaults.project_environments.is_none()
        && catalog().for_provider_has(p.kind, "projectEnvironments")
        && p.entry
            .for_provider
            .is_none_or(|fields| fields.get("projectEnvironments").is_none())
}

/// The members of a virtual that Artifactory left out, in the desired order.
///
/// A member change (a reorder included) is an ordinary update: until the provider has applied
/// it, the observed members differ from the desired ones and nothing is wrong. So this speaks
/// only once the provider has applied the current members: the managed resource carries them
/// (`spec.forProvider.repositories` as desired), the provider has reconciled that generation
/// (`Synced` True with its `observedGeneration`, else `status.observedGeneration`, equal to
/// `metadata.generation`), and the members Artifactory reports (`status.atProvider.repositories`,
/// "the effective list" in the provider's CRDs) still lack some. Without a generation to
/// compare, whether the provider has seen the change cannot be told, and nothing is said.
fn dropped_members(p: &Planned, live: Option<&Observed>) -> Option<Vec<String>> {
    if p.kind.rclass != Rclass::Virtual
        || (p.entry.repositories.is_none() && p.entry.external_repositories.is_none())
    {
        return None;
    }
    let live = live?;
    let applied = strings(live.for_provider("repositories")?)?;
    if applied != p.member_keys || !reconciled_current_generation(live) {
        return None;
    }
    let effective = strings(live.status?.get("atProvider")?.get("repositories")?)?;
    // A set: a virtual may have hundreds of members.
    let effective: BTreeSet<&str> = sorted::set(effective.iter().map(String::as_str));
    let dropped: Vec<String> = p
        .member_keys
        .iter()
        .filter(|key| !effective.contains(key.as_str()))
        .cloned()
        .collect();
    (!dropped.is_empty()).then_some(dropped)
}

/// `Synced` is True for the resource's current generation.
fn reconciled_current_generation(live: &Observed) -> bool {
    let Some(synced) = live.synced else {
        return false;
    };
    let generation = live.generation;
    let observed = synced
        .observed_generation
        .or_else(|| live.status?.get("observedGeneration"))
        .and_then(View::as_i64);
    synced.is("True") && generation.is_some() && observed == generation
}

fn strings(value: View) -> Option<Vec<String>> {
    value
        .as_list()?
        .iter()
        .map(|v| v.as_str().map(str::to_owned))
        .collect()
}

/// What Artifactory left out and, member by member, the likely why and the fix.
fn dropped_message(p: &Planned, dropped: &[String], repositories: &[Repository]) -> String {
    let family = package_family(&p.kind.package_type);
    let reasons: Vec<String> = dropped
        .iter()
        .map(|key| match repositories.iter().find(|m| m.planned.key == *key).map(|m| (&m.planned, &m.observed)) {
            Some((m, observed)) if !observed.as_ref().is_some_and(Observed::is_ready) => format!(
                "\"{key}\" (entry {}) was not ready, and Artifactory leaves out a member that does not exist: the provider adds it at a later update once it is ready, nothing to do unless it stays unready",
                m.name
            ),
            Some((m, _)) => format!(
                "\"{key}\" (entry {}) is ready and of the virtual's package type, yet was left out: see the provider's logs and the repository in Artifactory",
                m.name
            ),
            None => format!(
                "\"{key}\" (externalRepositories) is not a repository of this composite, and Artifactory leaves out a member that does not exist or that {} {} virtual cannot aggregate: create it as {} {family} repository, or correct the key",
                a_or_an(&p.kind.package_type),
                p.kind.package_type,
                a_or_an(family)
            ),
        })
        .collect();
    let noun = if dropped.len() == 1 {
        "member"
    } else {
        "members"
    };
    format!(
        "the provider applied the members [{}] (Synced for the current generation), and Artifactory left out {} {noun}: {}",
        p.member_keys.join(", "),
        dropped.len(),
        reasons.join("; ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saas_server_names() {
        assert_eq!(saas_server_name("https://acme.jfrog.io"), Some("acme"));
        assert_eq!(
            saas_server_name("https://acme.jfrog.io:443/artifactory"),
            Some("acme")
        );
        assert_eq!(saas_server_name("https://artifactory.example.com"), None);
        assert_eq!(saas_server_name("https://jfrog.io"), None);
        assert_eq!(saas_server_name("https://acme.jfrog.io.evil.com"), None);
    }

    #[test]
    fn container_registries() {
        assert!(is_container_registry("docker"));
        assert!(is_container_registry("dockerv2"));
        assert!(is_container_registry("oci"));
        assert!(!is_container_registry("maven"));
    }
}
