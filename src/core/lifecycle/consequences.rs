//! Consequential changes (docs/design.md, "Lifecycle"): what this call's answer changes about a
//! live repository that a claim's author should hear of before it happens, and the changes the
//! provider could only make by replacing the repository, which are refused like a key change.
//!
//! Each is found by comparing what is rendered with the observed managed resource, so it is
//! said at the call whose answer makes the change and not again: at the next call the managed
//! resource carries it.

use crate::core::catalog::Rclass;
use crate::core::compose::rendered_spec;
use crate::core::lifecycle::observed::Observed;
use crate::core::lifecycle::phase::{Change, Phase};
use crate::core::lifecycle::retirement::live_deletion;
use crate::core::lifecycle::Repository;
use crate::core::plan::Planned;
use crate::core::policy::Deletion;
use crate::core::problems::{masked, Category, Findings};
use crate::proto::{ObjectView, View};
use serde_json::Value;

/// Fields whose change the Terraform provider plans as a replacement (delete and create, which
/// for a repository deletes its artifacts): by class, package type and field, from the
/// provider's schemas (jfrog/terraform-provider-artifactory v12.9.1 to v12.11.7,
/// `pkg/artifactory/resource/repository/remote/resource_artifactory_remote_helm_repository.go:166-174`:
/// `external_dependencies_patterns` is `ForceNew`). The key is one too (`repository.go:516`,
/// `RequiresReplace`; `:619`, `ForceNew`), refused by `guards::check_immutable`; so is
/// `package_type` (`:641-646`), which no claim sets.
///
/// How the provider refuses such a plan is its client's, upjet's Terraform-CLI client (every
/// release of provider-jfrog-artifactory): it writes `lifecycle.prevent_destroy` into the
/// resource's Terraform configuration (`pkg/terraform/files.go:178-180` @ v2.2.0, `:139` @
/// v1.4.1), so `terraform plan` fails in `Observe` with Terraform's "Instance cannot be
/// destroyed" (`checkPreventDestroy`, `internal/terraform/node_resource_abstract_instance.go`),
/// which upjet wraps as "cannot run plan: plan failed: <summary>: <detail>"
/// (`pkg/controller/external.go:35,350-353`, `pkg/terraform/workspace.go:313`,
/// `pkg/terraform/errors/errors.go:68,151` @ v2.2.0) and crossplane-runtime as "observe
/// failed: …" in `Synced` (`pkg/reconciler/managed/reconciler.go:65` @ v2.5.0-rc.0). ("diff
/// contains fields that require resource replacement" is upjet's no-fork clients', which this
/// provider does not run.)
const FORCES_REPLACEMENT: [(Rclass, &str, &str); 1] =
    [(Rclass::Remote, "helm", "externalDependenciesPatterns")];

/// How the managed resource says that it refuses a replacement: the start of its `Synced`
/// message, as [`FORCES_REPLACEMENT`]'s upstream lines write it.
const REFUSED_PLAN: &str =
    "observe failed: cannot run plan: plan failed: Instance cannot be destroyed: Resource … has lifecycle.prevent_destroy set, but the plan calls for this resource to be destroyed";

fn field<'a>(spec: Option<ObjectView<'a>>, name: &str) -> Option<View<'a>> {
    spec?.get("forProvider")?.get(name)
}

/// Whether the rendered policies let the provider write to the repository.
fn updates(p: &Planned) -> bool {
    p.management_policies
        .as_deref()
        .is_none_or(|policies| policies.iter().any(|x| x == "*" || x == "Update"))
}

/// A change of a field that forces replacement is refused: the provider would refuse to apply
/// it, and a replacement would delete the repository's artifacts.
pub(crate) fn check_replacements(repositories: &[Repository], findings: &mut Findings) {
    for r in repositories {
        let (p, Some(live), Some(resource)) = (&r.planned, &r.observed, &r.resource) else {
            continue;
        };
        if !updates(p) {
            continue;
        }
        let spec = rendered_spec(resource);
        for (_, _, name) in FORCES_REPLACEMENT
            .iter()
            .filter(|(rclass, package_type, _)| {
                *rclass == p.kind.rclass && *package_type == p.kind.package_type
            })
        {
            let was = live.for_provider(name).map(View::to_value);
            let now = field(spec, name).map(|v| v.to_value());
            if was.is_some() && was != now {
                findings.problem(
                    Category::UnsafeChange,
                    p.entry.field_path(&format!("forProvider.{name}")),
                    Some(p.entry.index),
                    format!(
                        "{}: changing {name} of a live {} {} repository replaces the repository in Artifactory (the Terraform provider deletes and creates it, with its artifacts), which the provider refuses to apply: its Terraform configuration keeps the repository (lifecycle.prevent_destroy), so the managed resource would stop syncing with \"{REFUSED_PLAN}\" in its Synced condition; it is {} and the spec now gives {}",
                        p.entry.label(),
                        p.kind.rclass,
                        p.kind.package_type,
                        show(was.as_ref()),
                        show(now.as_ref())
                    ),
                    format!("keep {name} as it is; to change it on purpose, add a new entry (with a new name and key) with the new value, move the artifacts, and remove this entry, which is then retired safely"),
                );
            }
        }
    }
}

/// One line per live repository whose deletion, provider config, project or members this
/// answer changes; empty when none.
pub(crate) fn consequences(repositories: &[Repository]) -> Vec<String> {
    let mut lines = Vec::new();
    for r in repositories {
        let (p, adoption) = (&r.planned, &r.adoption);
        let (Some(live), Some(resource)) = (&r.observed, &r.resource) else {
            continue;
        };
        if adoption.phase.is_waiting() {
            continue;
        }
        let entry = format!("repository {} (key {})", p.name, p.key);
        let spec = rendered_spec(resource);
        // A repository this claim just created leaves the guard's Orphan for its own policies,
        // as its entry asked: that is the plan, not news.
        let leaves_guard = adoption.phase == Phase::Created;
        if !leaves_guard
            && live_deletion(live) == Deletion::Orphan
            && p.deletion == Deletion::Delete
        {
            lines.push(format!("{entry}: deleting the entry or the claim now deletes the repository and its artifacts (its deletion turns from Orphan to Delete)"));
        }
        if let Some(line) = provider_config_change(&entry, live, spec) {
            lines.push(line);
        }
        // Only what the phase lets the provider change can change: a held or adopted key is
        // observed, whatever its policies.
        let phase_writes = match adoption.phase.name().lets_change() {
            Change::Nothing => false,
            Change::CreateOnly | Change::AsTheEntrySays => true,
        };
        if !updates(p) || !phase_writes {
            continue;
        }
        let taking_over = adoption.phase == Phase::TakingOver;
        if let Some(line) = project_key_change(&entry, live, spec, taking_over) {
            lines.push(line);
        }
        if p.kind.rclass == Rclass::Virtual {
            if let Some(line) = lost_members(&entry, live, p) {
                lines.push(line);
            }
        }
    }
    lines
}

/// The `providerConfigRef` the provider's CRDs default to.
const DEFAULT_PROVIDER_CONFIG: &str = "default";

fn provider_config_change(
    entry: &str,
    live: &Observed,
    spec: Option<ObjectView>,
) -> Option<String> {
    let name = |spec: Option<ObjectView>| {
        spec?
            .get("providerConfigRef")?
            .get("name")
            .and_then(View::as_str)
            .map(str::to_owned)
    };
    let (was, now) = (name(live.spec)?, name(spec));
    // Left out, the CRD's default applies: `{name: default}`, which the observed resource then
    // carries (the provider's CRDs, `providerConfigRef.default`).
    if now.as_deref().unwrap_or(DEFAULT_PROVIDER_CONFIG) == was {
        return None;
    }
    Some(format!(
        "{entry}: its providerConfigRef changes from \"{was}\" to {}: the provider reaches the repository with other credentials, perhaps on another Artifactory, where the key may name another repository",
        now.map_or_else(|| "none (the provider's default)".to_owned(), |n| format!("\"{n}\""))
    ))
}

/// `taking_over`: the live project is what the provider read (`atProvider`), since the
/// managed resource's spec holds only what the import rendered.
fn project_key_change(
    entry: &str,
    live: &Observed,
    spec: Option<ObjectView>,
    taking_over: bool,
) -> Option<String> {
    let live_value = match live.at_provider() {
        Some(at) if taking_over => at.get("projectKey"),
        _ => live.for_provider("projectKey"),
    };
    let was = non_empty(live_value);
    let now = non_empty(field(spec, "projectKey"));
    match (was, now) {
        (None, Some(now)) => Some(format!(
            "{entry}: it is assigned to the JFrog project \"{now}\" (projectKey added): the project's members gain access to it"
        )),
        (Some(was), None) => Some(format!(
            "{entry}: it is taken out of the JFrog project \"{was}\" (projectKey removed): the project's members lose the access the project gave them"
        )),
        (Some(was), Some(now)) if was != now => Some(format!(
            "{entry}: projectKey changes from \"{was}\" to \"{now}\", which the provider does not apply (it assigns a repository to a project, or unassigns it, but does not move it between two): remove projectKey first, then set the new one"
        )),
        _ => None,
    }
}

fn non_empty(value: Option<View<'_>>) -> Option<&str> {
    value.and_then(View::as_str).filter(|s| !s.is_empty())
}

/// Members the virtual aggregates live (`atProvider`, else the live spec) that the answer
/// drops.
fn lost_members(entry: &str, live: &Observed, p: &Planned) -> Option<String> {
    let members = live
        .at_provider()
        .and_then(|at| at.get("repositories"))
        .or_else(|| live.for_provider("repositories"))?
        .as_list()?;
    let lost: Vec<&str> = members
        .iter()
        .filter_map(View::as_str)
        .filter(|key| !p.member_keys.iter().any(|m| m == key))
        .collect();
    if lost.is_empty() {
        return None;
    }
    Some(format!(
        "{entry}: the virtual stops aggregating {}, which it aggregates now: clients resolving through it no longer see their artifacts",
        lost.iter()
            .map(|k| format!("\"{k}\""))
            .collect::<Vec<_>>()
            .join(", ")
    ))
}

/// A value quoted whole (a fix may need all of it), with a URL's secrets masked.
fn show(value: Option<&Value>) -> String {
    value.map_or_else(
        || "unset".to_owned(),
        |value| masked(&value.to_string()).into_owned(),
    )
}
