//! The plan: for every repository entry, its kind, its key and its settings,
//! decided before anything is rendered.

use crate::core::catalog::{catalog, Kind, ProviderApi, Rclass};
use crate::core::composite::{CompositeMeta, CompositeSpec, Entry};
mod password;

use crate::core::input::Input;
use crate::core::keys::{self, KeyOrigin, Template};
use crate::core::path::FieldPath;
use crate::core::policy::{self, Deletion, DeletionPolicy};
use crate::core::problems::{Category, Findings};
pub(crate) use password::{check_secret_references, plan_password, SecretUse};
use serde_json::{Map, Value};
use std::borrow::Cow;

/// One repository as it will be rendered.
#[derive(Debug, Clone)]
pub(crate) struct Planned<'a> {
    pub entry: &'a Entry<'a>,
    pub name: &'a str,
    pub kind: &'static Kind,
    pub key: String,
    /// Virtual: member keys in resolution order (`repositories`, then `externalRepositories`).
    pub member_keys: Vec<String>,
    /// Virtual: the key of the default deployment repository.
    pub default_deployment_key: Option<String>,
    /// Borrowed from the entry, the spec or the input, except an import's own.
    pub management_policies: Option<Cow<'a, [String]>>,
    pub deletion_policy: Option<DeletionPolicy>,
    pub provider_config_ref: Option<Setting<&'a Map<String, Value>>>,
    pub deletion: Deletion,
    /// Remote repositories: how the password is referenced.
    pub password: Option<SecretUse>,
}

/// A setting with the path it was taken from, for messages.
#[derive(Debug, Clone)]
pub(crate) struct Setting<T> {
    pub value: T,
    pub path: FieldPath<'static>,
    /// Composite-wide (the spec's or the input's): the same value for every
    /// entry that does not set its own.
    pub shared: bool,
}

/// Everything the plan needs to know about the call.
pub(crate) struct Context<'a> {
    pub spec: &'a CompositeSpec<'a>,
    pub input: &'a Input,
    pub meta: &'a CompositeMeta,
    pub api: ProviderApi,
}

/// Plans every entry; entries with problems are left out of the result
/// (the call will fail) but still checked as far as they can be. Virtual
/// members are resolved afterwards, by `wiring::wire`.
pub(crate) fn plan<'a>(ctx: &Context<'a>, findings: &mut Findings) -> Vec<Planned<'a>> {
    check_api_settings(ctx, findings);
    let project_key = ctx.spec.project_key;
    let format = ctx
        .input
        .naming_format
        .as_deref()
        .unwrap_or(keys::default_format(project_key));
    let template = Template::parse(format, ctx.meta, project_key, ctx.input.at, findings);
    let entries = &ctx.spec.repositories;
    let mut planned: Vec<Planned<'a>> = Vec::with_capacity(entries.len());
    planned.extend(
        entries
            .iter()
            .filter_map(|entry| plan_entry(ctx, entry, template.as_ref(), findings)),
    );
    keys::check_unique_keys(planned.iter().map(|p| (p.entry, p.key.as_str())), findings);
    // Every key the claim touches, however it came, inside the platform's bound.
    if let Some(bound) = keys::Bound::new(ctx.input, ctx.meta, project_key, findings) {
        for p in &planned {
            bound.check_key(p.entry, &p.key, key_origin(p.entry, format), findings);
        }
        for entry in entries {
            bound.check_members(entry, findings);
        }
    }
    planned
}

fn plan_entry<'a>(
    ctx: &Context<'a>,
    entry: &'a Entry<'a>,
    template: Option<&Template>,
    findings: &mut Findings,
) -> Option<Planned<'a>> {
    let (name, rclass, package_type) = (entry.name?, entry.rclass?, entry.package_type?);
    let kind = find_kind(ctx, entry, rclass, package_type, findings)?;
    let project_key = ctx.spec.project_key;
    let key = match (entry.key, template) {
        (Some(key), _) => key.to_owned(),
        (None, Some(template)) => {
            template.fill(name, rclass, &kind.package_type, ctx.meta, project_key)
        }
        (None, None) => return None,
    };
    let origin = key_origin(entry, template.map_or("", |t| t.format.as_str()));
    keys::check_key(&key, entry, rclass, &kind.package_type, origin, findings);
    check_secret_references(entry, ctx.meta, ctx.input, findings);
    keys::key_warnings(&key, entry, project_key, findings);
    let management_policies = management_policies(ctx, entry);
    let deletion_policy = deletion_policy(ctx, entry);
    let deletion =
        policy::effective_deletion(ctx.api, management_policies.as_deref(), deletion_policy);
    Some(Planned {
        entry,
        name,
        kind,
        key,
        member_keys: Vec::new(),
        default_deployment_key: None,
        management_policies,
        deletion_policy,
        provider_config_ref: provider_config_ref(ctx, entry),
        deletion,
        password: plan_password(entry, kind, ctx.meta, ctx.input, findings),
    })
}

/// Where an entry's key comes from: its `key`, else the naming format.
fn key_origin<'f>(entry: &Entry, format: &'f str) -> KeyOrigin<'f> {
    if entry.key.is_some() {
        KeyOrigin::Given
    } else {
        KeyOrigin::Format(format)
    }
}

fn find_kind(
    ctx: &Context<'_>,
    entry: &Entry,
    rclass: Rclass,
    package_type: &str,
    findings: &mut Findings,
) -> Option<&'static Kind> {
    let catalog = catalog();
    let (api, release) = (ctx.api, ctx.input.provider_release);
    match catalog.find_in(release, api, rclass, package_type) {
        Ok(kind) => Some(kind),
        Err(available) => {
            let elsewhere: Vec<&str> = catalog
                .exists_elsewhere(release, rclass, package_type)
                .iter()
                .map(|a| a.as_str())
                .collect();
            let where_else = if elsewhere.is_empty() {
                String::new()
            } else {
                let verb = if elsewhere.len() == 1 {
                    "API has"
                } else {
                    "APIs have"
                };
                format!(" (the {} provider {verb} it)", elsewhere.join(" and "))
            };
            // A release the user named is part of what is missing.
            let what = match release {
                Some(release) => format!(
                    "{api} provider API of release {}",
                    catalog.release_name(release)
                ),
                None => format!("{api} provider API"),
            };
            // The flat API has no federated kinds at all: say so rather than list nothing.
            let fix = if available.is_empty() && release.is_some() {
                format!("the {what} has no {rclass} repositories at all: use another rclass, or set providerVersion to the release the cluster runs")
            } else if available.is_empty() {
                format!("the {api} API has no {rclass} repositories at all: use another rclass, or providerApi cluster or namespaced")
            } else {
                format!(
                    "use a package type that has a {rclass} kind in the {api} API: {}{}",
                    available.join(", "),
                    crate::core::problems::closest(package_type, available.iter().copied())
                        .map(|best| format!(" (did you mean \"{best}\"?)"))
                        .unwrap_or_default()
                )
            };
            findings.problem(
                Category::InvalidComposite,
                entry.field_path("packageType"),
                Some(entry.index),
                format!("{}: the {what} has no {rclass} repository of package type \"{package_type}\"{where_else}", entry.label()),
                fix,
            );
            None
        }
    }
}

/// entry > composite spec > function input; `import` observes unless the entry says otherwise.
fn management_policies<'a>(ctx: &Context<'a>, entry: &'a Entry) -> Option<Cow<'a, [String]>> {
    if let Some(own) = &entry.management_policies {
        return Some(Cow::Borrowed(own));
    }
    if entry.import {
        return Some(Cow::Owned(policy::import_policies()));
    }
    ctx.spec
        .management_policies
        .as_deref()
        .or(ctx.input.defaults.management_policies.as_deref())
        .map(Cow::Borrowed)
}

fn deletion_policy(ctx: &Context, entry: &Entry) -> Option<DeletionPolicy> {
    if !ctx.api.has_deletion_policy() {
        return None;
    }
    entry
        .deletion_policy
        .or(ctx.spec.deletion_policy)
        .or(ctx.input.defaults.deletion_policy)
}

fn provider_config_ref<'a>(
    ctx: &Context<'a>,
    entry: &'a Entry<'a>,
) -> Option<Setting<&'a Map<String, Value>>> {
    let setting = |value: &'a Map<String, Value>, path: FieldPath<'static>, shared: bool| {
        Some(Setting {
            value,
            path,
            shared,
        })
    };
    if let Some(own) = &entry.provider_config_ref {
        return setting(own, entry.at_field("providerConfigRef"), false);
    }
    if let Some(spec) = &ctx.spec.provider_config_ref {
        return setting(spec, FieldPath::Root("spec.providerConfigRef"), true);
    }
    ctx.input
        .defaults
        .provider_config_ref
        .as_ref()
        .and_then(|d| setting(d, ctx.input.at.defaults().field("providerConfigRef"), true))
}

/// The namespaced API has no deletion policy; saying one would be silently ignored.
fn check_api_settings(ctx: &Context, findings: &mut Findings) {
    if ctx.api.has_deletion_policy() {
        return;
    }
    let mut report = |path: String, entry: Option<usize>| {
        findings.problem(
            Category::InvalidComposite,
            path,
            entry,
            "the namespaced provider API has no deletionPolicy",
            "remove it; to keep the repository when the resource is deleted, use managementPolicies without Delete, such as [\"Observe\", \"Create\", \"Update\", \"LateInitialize\"]",
        );
    };
    if ctx.input.defaults.deletion_policy.is_some() {
        report(ctx.input.at.path_of("defaults.deletionPolicy"), None);
    }
    if ctx.spec.deletion_policy.is_some() {
        report("spec.deletionPolicy".into(), None);
    }
    for entry in ctx
        .spec
        .repositories
        .iter()
        .filter(|e| e.deletion_policy.is_some())
    {
        report(entry.field_path("deletionPolicy"), Some(entry.index));
    }
}
