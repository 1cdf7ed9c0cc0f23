//! Claims from a live Artifactory (docs/adopt.md): each repository configuration that Artifactory
//! reports becomes a claim entry with `import: true`, whose key is the live key and whose
//! settings are the live settings under the names of the provider kind's `forProvider`.
//!
//! Pure: the `adopt` command reads the configurations (a file, or Artifactory's REST API) and
//! prints what this module builds. Every setting is written, so that the claim states what the
//! repository is (a takeover would keep a setting left out at its live value, but the claim
//! would not say it); a setting equal to the Terraform provider's default (the table of
//! `defaults`) is left out, since it says nothing a reader needs.

use crate::core::catalog::{catalog, Kind, Node, ProviderApi, Rclass, Release};
use crate::core::composite::is_dns_label;
use crate::core::keys::default_format;
use crate::proto::json::kind as json_kind;
use regex::Regex;
use serde::de::{self, DeserializeSeed, Deserializer as _, MapAccess, SeqAccess, Visitor};
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::fmt;

mod answer;
mod claims;
mod defaults;

pub(crate) use answer::read_configurations;
use claims::*;
use defaults::default_of;

/// Repositories a claim holds at most. The composite keeps each entry in its spec and an item
/// of `status.repositories` (with a takeover preview of up to 16 changes) under the API
/// server's 1.5 MiB object limit, and the function's answer holds a managed resource a
/// repository within Crossplane's 4 MiB: 200 stay far below both.
pub(crate) const REPOSITORIES_PER_CLAIM: usize = 200;
/// The claim's entries, as JSON, take at most this many bytes (a claim is split before).
pub(crate) const ENTRY_BYTES_PER_CLAIM: usize = 256 * 1024;

/// What the claims are and which repositories they take.
#[derive(Debug, Clone)]
pub(crate) struct Options {
    /// The provider API of the Composition's input (`providerApi`).
    pub api: ProviderApi,
    /// The provider release of the input (`providerVersion`); `None`: the newest.
    pub release: Option<Release>,
    /// The input's `naming.format`; `None`: the function's default.
    pub naming_format: Option<String>,
    /// The claim's `apiVersion`.
    pub api_version: String,
    /// The claim's `kind`.
    pub kind: String,
    /// The claim's name (with `-2`, `-3`, ... or the project when there are several).
    pub name: String,
    /// The claim's namespace; `None` for a cluster-scoped composite.
    pub namespace: Option<String>,
    /// Only keys matching this.
    pub include: Option<Regex>,
    /// No key matching this.
    pub exclude: Option<Regex>,
    /// Only repositories of this JFrog project.
    pub project: Option<String>,
    /// One claim a JFrog project (`spec.projectKey` set), else claims split by size alone.
    pub group_by_project: bool,
    /// Repositories a claim holds at most.
    pub per_claim: usize,
}

/// A repository left out, and why.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Skipped {
    /// Its key (or a description where it has none).
    pub key: String,
    /// Why it is left out.
    pub reason: String,
}

/// A Secret the claim references and Artifactory cannot give: a remote's password.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SecretNeeded {
    /// The repository's key.
    pub repository: String,
    /// The claim's name.
    pub claim: String,
    /// The Secret's name.
    pub name: String,
    /// The key in the Secret.
    pub key: String,
}

/// The claims, and what the summary says about them.
#[derive(Debug, Clone, Default)]
pub(crate) struct Inventory {
    /// The claims, ready for `kubectl apply`.
    pub claims: Vec<Value>,
    /// Repositories adopted, by class.
    pub adopted: BTreeMap<Rclass, usize>,
    /// Repositories the selection left out (`--include`, `--exclude`, `--project`).
    pub not_selected: usize,
    /// Configurations read.
    pub read: usize,
    /// Repositories left out for a reason: the first [`SHOWN`], then how many more.
    pub skipped: Vec<Skipped>,
    /// Repositories left out beyond those in `skipped`.
    pub skipped_more: usize,
    /// Live settings that name no field of the kind: field, then the first [`SHOWN`] keys that
    /// have it and how many have it; at most [`SHOWN`] fields, then `unmapped_more` others.
    pub unmapped: BTreeMap<String, (Vec<String>, usize)>,
    /// Unmapped fields beyond those in `unmapped`.
    pub unmapped_more: usize,
    /// Repositories whose configuration lacks what an admin's answer always has: the first
    /// [`SHOWN`] keys, and how many.
    pub partial: (Vec<String>, usize),
    /// Secrets to create before taking over.
    pub secrets: Vec<SecretNeeded>,
    /// Entries whose key is set explicitly (the naming format cannot give it back).
    pub explicit_keys: usize,
}

/// Keys, fields and skipped repositories the summary lists at most, each list then counting
/// the rest: a hostile answer cannot make the summary longer than a few hundred lines.
pub(crate) const SHOWN: usize = 20;

/// Fields an admin's answer has for every repository of the classes the provider manages
/// (JFrog's "Repository Configuration JSON"). Artifactory gives other users "only partial
/// configuration data", and the assumption here is that such an answer lacks these.
pub(crate) const ADMIN_FIELDS: [&str; 2] = ["repoLayoutRef", "includesPattern"];

/// JFrog's names that the Terraform provider (so the kind's `forProvider`) spells otherwise.
/// JFrog: "Repository Configuration JSON"; the provider: its CRDs' `forProvider`.
const RENAMED: [(&str, &str); 15] = [
    ("environments", "projectEnvironments"),
    ("downloadRedirect", "downloadDirect"),
    ("retrievalCachePeriodSecs", "retrievalCachePeriodSeconds"),
    (
        "virtualRetrievalCachePeriodSecs",
        "retrievalCachePeriodSeconds",
    ),
    ("missedRetrievalCachePeriodSecs", "missedCachePeriodSeconds"),
    ("dockerTagRetention", "tagRetention"),
    ("cargoAnonymousAccess", "anonymousAccess"),
    ("cargoInternalIndex", "enableSparseIndex"),
    ("primaryKeyPairRef", "primaryKeypairRef"),
    ("secondaryKeyPairRef", "secondaryKeypairRef"),
    ("pyPIRegistryUrl", "pypiRegistryUrl"),
    ("pyPIRepositorySuffix", "pypiRepositorySuffix"),
    ("chartsBaseUrl", "helmChartsBaseUrl"),
    ("debianTrivialLayout", "trivialLayout"),
    // Local and federated; the virtual kinds keep JFrog's name (found first, below).
    ("optionalIndexCompressionFormats", "indexCompressionFormats"),
];

/// JFrog's documented fields that no `forProvider` field of any kind of their class holds,
/// with the reason (the summary lists them where an answer has them).
pub(crate) const NOT_HELD: [(Rclass, &str, &str); 6] = [
    (
        Rclass::Local,
        "forceP2Authentication",
        "the Terraform provider's P2 repositories have no such attribute",
    ),
    (
        Rclass::Remote,
        "forceP2Authentication",
        "the Terraform provider's P2 repositories have no such attribute",
    ),
    (
        Rclass::Local,
        "encryptStates",
        "the Terraform provider's Terraform backend repository has no such attribute",
    ),
    (
        Rclass::Remote,
        "vcsType",
        "GIT is the only type; the provider's VCS remote kind holds the Git provider and download URL only",
    ),
    (
        Rclass::Remote,
        "dockerTagRetention",
        "tag retention is a setting of the provider's local Docker kinds only",
    ),
    (
        Rclass::Virtual,
        "debianTrivialLayout",
        "the provider's virtual Debian kind has no trivial layout (only the local and federated ones)",
    ),
];

/// Why a documented field of `rclass` is not held by its kinds, if [`NOT_HELD`] says.
#[cfg(test)]
pub(crate) fn not_held(rclass: Rclass, field: &str) -> Option<&'static str> {
    NOT_HELD
        .iter()
        .find(|(class, name, _)| *class == rclass && *name == field)
        .map(|(_, _, reason)| *reason)
}

/// JFrog fields read to choose the kind or written as the entry's own fields, never as
/// `forProvider` fields. `password`: Artifactory answers it empty or encrypted, never usable.
const CONSUMED: [&str; 14] = [
    "key",
    "rclass",
    "packageType",
    "dockerApiVersion",
    "terraformType",
    "description",
    "notes",
    "url",
    "username",
    "password",
    "repositories",
    "defaultDeploymentRepo",
    "members",
    "projectKey",
];

/// One repository, mapped, before it is placed in a claim.
#[derive(Debug, Clone)]
struct Mapped {
    key: String,
    rclass: Rclass,
    kind: &'static Kind,
    project: Option<String>,
    /// The entry without `name`, `key`, members and the project key.
    entry: Map<String, Value>,
    members: Vec<String>,
    default_deployment: Option<String>,
    /// Needs a password Secret.
    username: bool,
}

/// The claims for `configurations` (a test's shortcut for [`Adopter`]).
#[cfg(test)]
pub(crate) fn adopt(configurations: &[Value], options: &Options) -> Inventory {
    let mut adopter = Adopter::new(options);
    for config in configurations {
        if let Some(config) = config.as_object() {
            adopter.add(config.clone());
        }
    }
    adopter.finish()
}

/// Builds the claims from configurations given one at a time: what is kept of each is its
/// entry, so memory follows what the claims hold, not the size of the answer.
pub(crate) struct Adopter<'o> {
    options: &'o Options,
    inventory: Inventory,
    mapped: Vec<Mapped>,
    /// Keys seen, in lower case (Artifactory's keys are unique without case).
    seen: HashSet<String>,
    /// The package types the XRD's enum accepts (read once: the catalog computes them).
    accepted: Vec<&'static str>,
}

impl<'o> Adopter<'o> {
    pub(crate) fn new(options: &'o Options) -> Adopter<'o> {
        Adopter {
            options,
            inventory: Inventory::default(),
            mapped: Vec::new(),
            seen: HashSet::new(),
            accepted: catalog().accepted_package_types(),
        }
    }

    /// One configuration.
    pub(crate) fn add(&mut self, config: Map<String, Value>) {
        self.inventory.read += 1;
        let Some(key) = config.get("key").and_then(Value::as_str) else {
            self.skip("(no key)", "the configuration has no key");
            return;
        };
        if !self.seen.insert(key.to_lowercase()) {
            self.skip(
                key,
                "listed a second time (keys are unique, without case); the first is kept",
            );
            return;
        }
        let managed = config
            .get("rclass")
            .and_then(Value::as_str)
            .is_some_and(|c| Rclass::parse(&c.to_ascii_lowercase()).is_some());
        if managed && ADMIN_FIELDS.iter().any(|f| !config.contains_key(*f)) {
            let (keys, count) = &mut self.inventory.partial;
            if keys.len() < SHOWN {
                keys.push(key.to_owned());
            }
            *count += 1;
        }
        if !selected(key, &config, self.options) {
            self.inventory.not_selected += 1;
            return;
        }
        match map(
            key,
            &config,
            self.options,
            &self.accepted,
            &mut self.inventory,
        ) {
            Ok(repository) => self.mapped.push(repository),
            Err(reason) => self.skip(key, &reason),
        }
    }

    fn skip(&mut self, key: &str, reason: &str) {
        self.inventory.skip(key, reason);
    }

    /// The claims.
    pub(crate) fn finish(self) -> Inventory {
        let Adopter {
            options,
            mut inventory,
            mut mapped,
            ..
        } = self;
        // Members before the virtuals over them; keys in order within a class.
        let rank = |rclass: Rclass| match rclass {
            Rclass::Local => 0,
            Rclass::Federated => 1,
            Rclass::Remote => 2,
            Rclass::Virtual => 3,
        };
        mapped.sort_by(|a, b| {
            (&a.project, rank(a.rclass), &a.key).cmp(&(&b.project, rank(b.rclass), &b.key))
        });
        for group in groups(mapped, options) {
            let claim = build_claim(
                &group.repositories,
                group.project.as_deref(),
                &group.name,
                options,
                &mut inventory,
            );
            inventory.claims.push(claim);
        }
        inventory
    }
}

impl Inventory {
    fn skip(&mut self, key: &str, reason: &str) {
        if self.skipped.len() < SHOWN {
            self.skipped.push(Skipped {
                key: key.to_owned(),
                reason: reason.to_owned(),
            });
        } else {
            self.skipped_more += 1;
        }
    }

    fn unmapped(&mut self, field: &str, key: &str) {
        let shown = self.unmapped.len();
        match self.unmapped.get_mut(field) {
            Some((keys, count)) => {
                if keys.len() < SHOWN {
                    keys.push(key.to_owned());
                }
                *count += 1;
            }
            None if shown < SHOWN => {
                self.unmapped
                    .insert(field.to_owned(), (vec![key.to_owned()], 1));
            }
            None => self.unmapped_more += 1,
        }
    }
}

/// The JFrog project of a configuration: `projectKey`, where it names one. Artifactory
/// answers `"default"` for a repository outside every project.
fn project_of(config: &Map<String, Value>) -> Option<&str> {
    config
        .get("projectKey")
        .and_then(Value::as_str)
        .filter(|p| !p.is_empty() && *p != "default")
}

fn selected(key: &str, config: &Map<String, Value>, options: &Options) -> bool {
    let project = project_of(config).unwrap_or("");
    options.include.as_ref().is_none_or(|re| re.is_match(key))
        && !options.exclude.as_ref().is_some_and(|re| re.is_match(key))
        && options.project.as_deref().is_none_or(|p| p == project)
}

/// The repository as an entry, or why it cannot be one.
fn map(
    key: &str,
    config: &Map<String, Value>,
    options: &Options,
    accepted: &[&str],
    inventory: &mut Inventory,
) -> Result<Mapped, String> {
    let text = |field: &str| {
        config
            .get(field)
            .and_then(Value::as_str)
            .filter(|t| !t.is_empty())
    };
    let rclass_text = text("rclass").unwrap_or("");
    let rclass = Rclass::parse(&rclass_text.to_ascii_lowercase()).ok_or_else(|| {
        format!(
            "its class {rclass_text:?} has no provider kind (the provider manages {})",
            Rclass::NAMES.join(", ")
        )
    })?;
    let package_type = text("packageType")
        .ok_or("the configuration has no packageType")?
        .to_ascii_lowercase();
    let wanted = kind_package_type(rclass, &package_type, config);
    let kind = catalog()
        .kind_in(options.release, options.api, rclass, &wanted)
        .ok_or_else(|| {
            format!(
                "the {} API of the provider has no {rclass} kind for package type {wanted:?}",
                options.api
            )
        })?;
    // The entry's packageType: JFrog's, where the XRD's enum has it, else the kind's.
    let entry_type = if accepted.contains(&wanted.as_str()) {
        wanted
    } else {
        kind.package_type.clone()
    };
    let schema = catalog().node(
        catalog()
            .for_provider(kind)
            .ok_or("the kind has no forProvider")?,
    );
    let mut entry = Map::new();
    entry.insert("rclass".to_owned(), json!(rclass.as_str()));
    entry.insert("packageType".to_owned(), json!(entry_type));
    entry.insert("import".to_owned(), json!(true));
    for field in ["description", "notes"] {
        if let Some(value) = text(field).filter(|v| !is_default(rclass, field, &json!(v))) {
            entry.insert(field.to_owned(), json!(value));
        }
    }
    let mut username = false;
    if rclass == Rclass::Remote {
        if let Some(url) = text("url") {
            entry.insert("url".to_owned(), json!(url));
        }
        if let Some(user) = text("username") {
            entry.insert("username".to_owned(), json!(user));
            username = true;
        }
    }
    if rclass == Rclass::Federated {
        if let Some(members) = config.get("members").and_then(Value::as_array) {
            entry.insert("members".to_owned(), json!(federated_members(members)));
        }
    }
    let mut for_provider = Map::new();
    for (field, value) in config {
        if value.is_null() || CONSUMED.contains(&field.as_str()) {
            continue;
        }
        let target = field_of(schema, field);
        let Some(&node) = schema.properties.get(target) else {
            inventory.unmapped(field, key);
            continue;
        };
        let value = match target {
            "contentSynchronisation" => content_synchronisation(value),
            _ => value.clone(),
        };
        if !fits(&value, catalog().node(node)) {
            return Err(format!(
                "its setting {} is {}, which the kind's field {target} does not hold",
                shown(field),
                json_kind(&value)
            ));
        }
        if !is_default(rclass, target, &value) {
            for_provider.insert(target.to_owned(), value);
        }
    }
    if !for_provider.is_empty() {
        entry.insert("forProvider".to_owned(), Value::Object(for_provider));
    }
    let members = match rclass {
        Rclass::Virtual => config
            .get("repositories")
            .and_then(Value::as_array)
            .map(|list| {
                list.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default(),
        _ => Vec::new(),
    };
    Ok(Mapped {
        key: key.to_owned(),
        rclass,
        kind,
        project: project_of(config).map(str::to_owned),
        entry,
        members,
        default_deployment: (rclass == Rclass::Virtual)
            .then(|| text("defaultDeploymentRepo").map(str::to_owned))
            .flatten(),
        username,
    })
}

/// The package type the catalog names the kind by: a local Docker repository is Docker V1 or
/// V2 by `dockerApiVersion`; a local or federated Terraform one a module, provider or backend
/// by `terraformType`.
fn kind_package_type(rclass: Rclass, package_type: &str, config: &Map<String, Value>) -> String {
    let field = |name: &str| {
        config
            .get(name)
            .and_then(Value::as_str)
            .map(str::to_ascii_lowercase)
    };
    match (rclass, package_type) {
        (Rclass::Local, "docker") => match field("dockerApiVersion").as_deref() {
            Some("v1") => "dockerv1".to_owned(),
            _ => "dockerv2".to_owned(),
        },
        (Rclass::Local | Rclass::Federated, "terraform") => match field("terraformType") {
            Some(kind) => format!("terraform{kind}"),
            None => "terraformmodule".to_owned(),
        },
        _ => package_type.to_owned(),
    }
}

/// A federated repository's members as the claim writes them: `url` and `enabled`.
fn federated_members(members: &[Value]) -> Vec<Value> {
    members
        .iter()
        .filter_map(|m| {
            let url = m.get("url")?.as_str()?;
            let mut member = json!({"url": url});
            if let Some(enabled) = m.get("enabled").and_then(Value::as_bool) {
                member["enabled"] = json!(enabled);
            }
            Some(member)
        })
        .collect()
}

/// JFrog's `contentSynchronisation` object as the provider's one-item list.
fn content_synchronisation(value: &Value) -> Value {
    let flag = |path: &[&str]| {
        path.iter()
            .try_fold(value, |v, field| v.get(field))
            .and_then(Value::as_bool)
    };
    let mut item = Map::new();
    for (field, path) in [
        ("enabled", &["enabled"][..]),
        ("statisticsEnabled", &["statistics", "enabled"][..]),
        ("propertiesEnabled", &["properties", "enabled"][..]),
        (
            "sourceOriginAbsenceDetection",
            &["source", "originAbsenceDetection"][..],
        ),
    ] {
        if let Some(flag) = flag(path) {
            item.insert(field.to_owned(), json!(flag));
        }
    }
    json!([item])
}

/// The `forProvider` field that holds JFrog's `field`: its own name where the kind has it,
/// else the provider's spelling ([`RENAMED`]).
fn field_of<'a>(schema: &Node, field: &'a str) -> &'a str {
    if schema.properties.get(field).is_some() {
        return field;
    }
    RENAMED
        .iter()
        .find(|(jfrog, _)| *jfrog == field)
        .map_or(field, |(_, ours)| ours)
}

/// Whether `value` has the shape of the schema `node` (types, list items, object fields): a
/// live value the kind cannot hold would make the claim invalid, and an answer of nested
/// values nothing reads must not grow in memory.
fn fits(value: &Value, node: &Node) -> bool {
    match (node.type_.as_str(), value) {
        ("string", Value::String(_))
        | ("boolean", Value::Bool(_))
        | ("number", Value::Number(_)) => true,
        ("integer", Value::Number(n)) => n.is_i64() || n.is_u64(),
        ("array", Value::Array(items)) => node
            .items
            .is_some_and(|item| items.iter().all(|v| fits(v, catalog().node(item)))),
        ("object", Value::Object(fields)) => fields.iter().all(|(name, v)| {
            node.properties
                .get(name)
                .or(node.additional_properties.as_ref())
                .is_some_and(|&field| fits(v, catalog().node(field)))
        }),
        ("", _) => true,
        _ => false,
    }
}

/// A text from the instance as the summary shows it: as it is where every character is
/// printable and none is a quote or a backslash, else quoted with escapes, so that no key or
/// field name can write a line of its own or a terminal's control sequence.
pub(crate) fn shown(text: &str) -> String {
    let plain = !text.is_empty()
        && text.chars().all(|c| {
            !c.is_control()
                && !matches!(c, '"' | '\\' | ' ' | '\u{200B}'..='\u{200F}' | '\u{2028}'..='\u{202E}' | '\u{2060}'..='\u{206F}' | '\u{FEFF}' | '\u{FFF9}'..='\u{FFFB}')
        });
    if plain {
        text.to_owned()
    } else {
        format!("{text:?}").chars().map(|c| match c {
            c if matches!(c, '\u{200B}'..='\u{200F}' | '\u{2028}'..='\u{202E}' | '\u{2060}'..='\u{206F}' | '\u{FEFF}' | '\u{FFF9}'..='\u{FFFB}') => format!("\\u{{{:x}}}", c as u32),
            c => c.to_string(),
        }).collect()
    }
}

fn is_default(rclass: Rclass, field: &str, value: &Value) -> bool {
    default_of(rclass, field).is_some_and(|default| &default == value)
}

#[cfg(test)]
mod tests;
