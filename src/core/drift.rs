//! Drift warnings: settings the provider accepts but that make it report
//! drift, or that Artifactory cannot serve as written. Never fatal: each
//! becomes a warning in the entry's status and a Warning result.

use crate::core::catalog::{catalog, Rclass};
use crate::core::input::Input;
use crate::core::plan::Planned;
use crate::core::problems::Findings;
use crate::core::status;
use crate::proto::v1::{Result as FnResult, Severity, Target};
use serde_json::{Map, Value};

type Object = Map<String, Value>;

/// The host suffix of JFrog SaaS instances, which serve Docker registries as subdomains.
const SAAS_SUFFIX: &str = ".jfrog.io";
/// The longest DNS label.
const DNS_LABEL_MAX: usize = 63;

/// Adds the drift warnings of a call to `findings` and returns their Warning results.
/// `live` is the observed resource of each planned repository.
pub(crate) fn drift_warnings(
    planned: &[Planned],
    live: &[Option<&Object>],
    input: &Input,
    project_key: Option<&str>,
    findings: &mut Findings,
) -> Vec<FnResult> {
    let mut results = Vec::new();
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
    for (p, live) in planned.iter().zip(live) {
        if project_key.is_some() && lacks_project_environments(p) {
            warn(
                p,
                "forProvider.projectEnvironments",
                "ProjectEnvironmentsMissing",
                "projectKey is set without forProvider.projectEnvironments: Artifactory assigns DEV and the provider then reports drift on every reconcile; set projectEnvironments (for example [DEV])".to_owned(),
            );
        }
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
        if let Some(observed) = dropped_members(p, *live) {
            warn(
                p,
                "repositories",
                "VirtualMembersDrifted",
                format!(
                    "the provider reports Synced but the repository's members are [{}], not the desired [{}]: the provider dropped the member change; check its logs, or recreate the managed resource",
                    observed.join(", "),
                    p.member_keys.join(", ")
                ),
            );
        }
    }
    results
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

/// The kind has `projectEnvironments` and the entry does not set it.
fn lacks_project_environments(p: &Planned) -> bool {
    let catalog = catalog();
    let has_field = catalog.for_provider(p.kind).is_some_and(|node| {
        catalog
            .node(node)
            .properties
            .get("projectEnvironments")
            .is_some()
    });
    has_field
        && !p
            .entry
            .for_provider
            .is_some_and(|fields| fields.contains_key("projectEnvironments"))
}

/// A virtual repository's observed members, when the provider reports Synced
/// and they differ from the desired ones.
fn dropped_members(p: &Planned, live: Option<&Object>) -> Option<Vec<String>> {
    if p.kind.rclass != Rclass::Virtual
        || (p.entry.repositories.is_none() && p.entry.external_repositories.is_none())
    {
        return None;
    }
    let live = live?;
    let synced = status::condition(live, "Synced").is_some_and(|c| c["status"] == "True");
    if !synced {
        return None;
    }
    let observed: Vec<String> = live
        .get("status")?
        .get("atProvider")?
        .get("repositories")?
        .as_array()?
        .iter()
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect();
    (observed != p.member_keys).then_some(observed)
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
