//! The function input: the pipeline step's `input` (docs/design.md, "Input").
//!
//! ```yaml
//! apiVersion: artifactory.fn.crossplane.io/v1beta1
//! kind: Input
//! providerApi: auto
//! naming: {format: "{projectKey}-{name}"}
//! artifactoryUrl: https://artifactory.example.com
//! defaults: {providerConfigRef: {name: default}, deletionPolicy: Delete, managementPolicies: ["*"]}
//! deletionProtection: true
//! ttl: 60s
//! ```
//! A missing input means every default.

use crate::core::catalog::{catalog, ProviderApi, Release, ReleaseMatch};
use crate::core::path::FieldPath;
use crate::core::policy::{read_deletion_policy, read_management_policies, DeletionPolicy};
use crate::core::problems::{quoted, Category, Findings};
use crate::core::reader::ObjectReader;
use crate::core::time::parse_go_duration;
use crate::proto::{Kind, ObjectView, View};
use serde_json::{Map, Value};
use std::time::Duration;

pub(crate) const INPUT_GROUP: &str = "artifactory.fn.crossplane.io";
pub(crate) const INPUT_API_VERSION: &str = "artifactory.fn.crossplane.io/v1beta1";
pub(crate) const INPUT_KIND: &str = "Input";
pub(crate) const DEFAULT_TTL_SECONDS: u64 = 60;

/// The longest `ttl` accepted: about 31 years, far beyond any use.
const MAX_TTL: Duration = Duration::from_secs(1_000_000_000);

/// Where the function's settings are in the step's `input`: the input itself (this
/// function's own Function package), or its `config`, for a runtime that hands its guest the
/// settings inside an input of its own (function-wasm). Problems name the fields where the
/// user wrote them (`input.ttl`, `input.config.ttl`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SettingsAt {
    /// The step's input is this function's Input.
    #[default]
    Input,
    /// The settings are the step input's `config` object.
    Config,
}

static INPUT: FieldPath<'static> = FieldPath::Root("input");
static CONFIG: FieldPath<'static> = FieldPath::Field(&INPUT, "config");
static INPUT_DEFAULTS: FieldPath<'static> = FieldPath::Field(&INPUT, "defaults");
static CONFIG_DEFAULTS: FieldPath<'static> = FieldPath::Field(&CONFIG, "defaults");

impl SettingsAt {
    /// The field path of the settings: `input`, or `input.config`.
    pub(crate) fn path(self) -> &'static FieldPath<'static> {
        match self {
            SettingsAt::Input => &INPUT,
            SettingsAt::Config => &CONFIG,
        }
    }

    /// The path of the `defaults` setting.
    pub(crate) fn defaults(self) -> &'static FieldPath<'static> {
        match self {
            SettingsAt::Input => &INPUT_DEFAULTS,
            SettingsAt::Config => &CONFIG_DEFAULTS,
        }
    }

    /// The field path of one setting: `input.ttl`, `input.config.naming.format`.
    pub(crate) fn path_of(self, setting: &str) -> String {
        format!("{}.{setting}", self.path())
    }
}

/// Which provider API to render for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum ApiChoice {
    /// Namespaced when the composite is namespaced, else cluster.
    #[default]
    Auto,
    Fixed(ProviderApi),
}

/// Settings that apply to every repository unless the composite or the entry says otherwise.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Defaults {
    pub provider_config_ref: Option<Map<String, Value>>,
    pub deletion_policy: Option<DeletionPolicy>,
    pub management_policies: Option<Vec<String>>,
    /// `forProvider.projectEnvironments` of every repository in a project that sets none.
    pub project_environments: Option<Vec<String>>,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Input {
    /// Where the settings were read, for the paths of later problems.
    pub at: SettingsAt,
    pub provider_api: ApiChoice,
    /// The provider release named by `providerVersion`; `None`: the newest of the API.
    pub provider_release: Option<Release>,
    /// The key template; `None` means the default, which depends on `projectKey`.
    pub naming_format: Option<String>,
    /// Base URL of Artifactory, without a trailing slash.
    pub artifactory_url: Option<String>,
    pub defaults: Defaults,
    pub deletion_protection: bool,
    /// Create new repositories without taking over a key that exists (docs/design.md,
    /// "Adoption"); false renders every entry with its own policies at once.
    pub create_guard: bool,
    /// `releaseFlat`: release the flat API's live resources, render none (the v0.7.0 group move).
    pub release_flat: bool,
    /// `neverDelete`: every repository rendered so that no deletion reaches Artifactory (the
    /// migration switch, docs/upgrading.md).
    pub never_delete: bool,
    /// The pattern that every key a claim touches must match, with the claim's placeholders,
    /// where the input sets one (`keys::Bound`).
    pub allowed_keys: Option<String>,
    /// Namespaces other than a claim's own whose Secrets a claim may reference
    /// (docs/design.md, "Credentials"); none by default.
    pub allowed_secret_namespaces: Vec<String>,
    /// Remote passwords as the provider's write-only fields (`passwordWoSecretRef`
    /// and `passwordWoVersion`), not `passwordSecretRef`.
    pub write_only_passwords: bool,
    /// How long Crossplane may cache the response.
    pub ttl: Duration,
}

impl Default for Input {
    fn default() -> Self {
        Input {
            at: SettingsAt::Input,
            provider_api: ApiChoice::Auto,
            provider_release: None,
            naming_format: None,
            artifactory_url: None,
            defaults: Defaults::default(),
            deletion_protection: true,
            create_guard: true,
            release_flat: false,
            never_delete: false,
            allowed_keys: None,
            allowed_secret_namespaces: Vec::new(),
            write_only_passwords: false,
            ttl: Duration::from_secs(DEFAULT_TTL_SECONDS),
        }
    }
}

impl Input {
    /// The URL of the repository `key` in Artifactory, `<artifactoryUrl>/artifactory/<key>`,
    /// when the input gives Artifactory's URL.
    pub(crate) fn repository_url(&self, key: &str) -> Option<String> {
        let base = self.artifactory_url.as_deref()?;
        Some(format!("{base}/artifactory/{key}"))
    }
}

/// Reads the settings from the step's input, at `at`; problems go to `findings` and the
/// defaults stand in for bad fields.
pub(crate) fn read_input(
    step_input: Option<ObjectView>,
    at: SettingsAt,
    findings: &mut Findings,
) -> Input {
    let mut input = Input {
        at,
        ..Input::default()
    };
    let Some(object) = settings(step_input, at, findings) else {
        return input;
    };
    let mut reader =
        ObjectReader::of_object(object, *at.path(), None, Category::InvalidInput, findings);
    check_type_meta(&mut reader, at);
    reader.value("metadata");
    if let Some(api) = reader.string("providerApi") {
        input.provider_api = parse_api_choice(api, &mut reader);
    }
    if let Some(version) = reader.string("providerVersion") {
        input.provider_release = read_provider_version(version, &mut reader);
    }
    if let Some(naming) = reader.value("naming") {
        input.naming_format = read_naming(naming, at, reader.findings());
    }
    if let Some(url) = reader.string("artifactoryUrl") {
        input.artifactory_url = read_artifactory_url(url, &mut reader);
    }
    if let Some(defaults) = reader.value("defaults") {
        input.defaults = read_defaults(defaults, at, reader.findings());
    }
    if let Some(protection) = reader.bool("deletionProtection") {
        input.deletion_protection = protection;
    }
    if let Some(guard) = reader.bool("createGuard") {
        input.create_guard = guard;
    }
    if let Some(release) = reader.bool("releaseFlat") {
        input.release_flat = release;
    }
    if let Some(never) = reader.bool("neverDelete") {
        input.never_delete = never;
    }
    if let Some(pattern) = reader.string("allowedKeys") {
        input.allowed_keys = read_allowed_keys(pattern, &mut reader);
    }
    if let Some(namespaces) = reader.string_list("allowedSecretNamespaces") {
        input.allowed_secret_namespaces = namespaces.into_iter().map(str::to_owned).collect();
    }
    if let Some(write_only) = reader.bool("writeOnlyPasswords") {
        input.write_only_passwords = write_only;
    }
    if let Some(ttl) = reader.string("ttl") {
        match parse_go_duration(ttl) {
            Ok(parsed) if parsed <= MAX_TTL => input.ttl = parsed,
            _ => {
                let path = reader.path_of("ttl");
                reader.problem(
                    path,
                    format!("\"{ttl}\" is not a duration"),
                    "write a duration such as 60s, 5m or 1h30m",
                );
            }
        }
    }
    reader.finish();
    input
}

/// The settings object: the step's input, or its field `at` names (absent or null: none).
fn settings<'a>(
    step_input: Option<ObjectView<'a>>,
    at: SettingsAt,
    findings: &mut Findings,
) -> Option<ObjectView<'a>> {
    if at == SettingsAt::Input {
        return step_input;
    }
    let config = step_input?.get("config")?;
    match config.kind() {
        Kind::Object(settings) => Some(settings),
        Kind::Null => None,
        _ => {
            findings.problem(
                Category::InvalidInput,
                at.path().to_string(),
                None,
                format!("{} is not an object", quoted(&config.to_value())),
                "write the settings of function-artifactory as an object, such as config: {providerApi: cluster}",
            );
            None
        }
    }
}

fn check_type_meta(reader: &mut ObjectReader, at: SettingsAt) {
    let api_version = reader.string("apiVersion");
    let kind = reader.string("kind");
    let group = api_version.and_then(|v| v.split('/').next());
    if group.is_some_and(|g| g != INPUT_GROUP) || kind.is_some_and(|k| k != INPUT_KIND) {
        reader.problem(
            at.path().to_string(),
            format!(
                "expected an {INPUT_KIND} of {INPUT_GROUP}, got {} {}",
                api_version.unwrap_or_default(),
                kind.unwrap_or_default()
            ),
            format!("use apiVersion: {INPUT_API_VERSION} and kind: {INPUT_KIND}"),
        );
    }
}

fn parse_api_choice(text: &str, reader: &mut ObjectReader) -> ApiChoice {
    if text == "auto" {
        return ApiChoice::Auto;
    }
    match ProviderApi::parse(text) {
        Some(api) => ApiChoice::Fixed(api),
        None => {
            let path = reader.path_of("providerApi");
            reader.problem(
                path,
                format!("\"{text}\" is not a provider API"),
                "use auto, flat (provider up to v0.6.0), cluster or namespaced",
            );
            ApiChoice::Auto
        }
    }
}

/// `providerVersion`: a release of the catalog; a patch it has not got, or a release after
/// its newest, uses the newest release before it (with a warning, since the provider may
/// have changed a kind in between).
fn read_provider_version(version: &str, reader: &mut ObjectReader) -> Option<Release> {
    let catalog = catalog();
    let known = catalog.release_names();
    let path = reader.path_of("providerVersion");
    match catalog.match_release(version) {
        Some(ReleaseMatch::Exact(release)) => Some(release),
        Some(ReleaseMatch::Nearest(release) | ReleaseMatch::Newer(release)) => {
            let used = catalog.release_name(release);
            reader.findings().warning(
                path,
                None,
                format!("provider release {version} is not in the function's catalog: the kinds and schemas of {used} are used (live schemas, where Crossplane sends them, check against what the cluster serves)"),
            );
            Some(release)
        }
        None => {
            reader.problem(
                path,
                format!("\"{version}\" is not a provider release"),
                format!(
                    "write the release of provider-jfrog-artifactory the cluster runs, as vX.Y.Z from {} to {} (or leave providerVersion out for the newest)",
                    known.first().map_or("", String::as_str),
                    known.last().map_or("", String::as_str)
                ),
            );
            None
        }
    }
}

fn read_naming(value: View, at: SettingsAt, findings: &mut Findings) -> Option<String> {
    let mut reader = ObjectReader::new(
        value,
        at.path().field("naming"),
        None,
        Category::InvalidInput,
        findings,
    )?;
    let format = reader.string("format").map(str::to_owned);
    reader.finish();
    format
}

/// `allowedKeys`: a key pattern where `*` stands for any run of characters, with the claim's
/// placeholders; an empty one would allow no key at all.
fn read_allowed_keys(pattern: &str, reader: &mut ObjectReader) -> Option<String> {
    if !pattern.trim().is_empty() {
        return Some(pattern.to_owned());
    }
    let path = reader.path_of("allowedKeys");
    reader.problem(
        path,
        "an empty pattern would allow no key",
        "leave allowedKeys out to allow any key, or write a pattern such as \"{claimNamespace}-*\"",
    );
    None
}

fn read_artifactory_url(url: &str, reader: &mut ObjectReader) -> Option<String> {
    let trimmed = url.trim_end_matches('/');
    let valid = (trimmed.starts_with("https://") || trimmed.starts_with("http://"))
        && trimmed.len() > "https://".len()
        && !trimmed.contains(char::is_whitespace);
    if valid {
        return Some(trimmed.to_owned());
    }
    let path = reader.path_of("artifactoryUrl");
    reader.problem(
        path,
        format!(
            "{} is not an http(s) URL",
            quoted(&Value::String(url.to_owned()))
        ),
        "write the base URL of Artifactory, such as https://artifactory.example.com",
    );
    None
}

fn read_defaults(value: View, at: SettingsAt, findings: &mut Findings) -> Defaults {
    let mut defaults = Defaults::default();
    let Some(mut reader) = ObjectReader::new(
        value,
        *at.defaults(),
        None,
        Category::InvalidInput,
        findings,
    ) else {
        return defaults;
    };
    defaults.provider_config_ref = reader.object("providerConfigRef").map(ObjectView::to_map);
    defaults.deletion_policy = read_deletion_policy(&mut reader);
    defaults.management_policies = read_management_policies(&mut reader);
    defaults.project_environments = reader
        .string_list("projectEnvironments")
        .map(|list| list.into_iter().map(str::to_owned).collect());
    reader.finish();
    defaults
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ttl_is_a_go_duration_of_at_most_a_billion_seconds() {
        for (ttl, expected) in [
            ("1m30s", Some(Duration::from_secs(90))),
            ("250ms", Some(Duration::from_millis(250))),
            ("1000000000s", Some(MAX_TTL)),
            ("1000000001s", None),
            ("60", None),
        ] {
            let mut findings = Findings::default();
            let input = read_input(
                Some(ObjectView::Json(json!({"ttl": ttl}).as_object().unwrap())),
                SettingsAt::Input,
                &mut findings,
            );
            match expected {
                Some(duration) => assert_eq!(input.ttl, duration, "{ttl}"),
                None => assert_eq!(findings.problems[0].path, "input.ttl", "{ttl}"),
            }
        }
    }

    #[test]
    fn missing_input_means_defaults() {
        let mut findings = Findings::default();
        assert_eq!(
            read_input(None, SettingsAt::Input, &mut findings),
            Input::default()
        );
        assert!(!findings.has_problems());
    }

    #[test]
    fn every_input_problem_is_reported() {
        let mut findings = Findings::default();
        let input = json!({
            "apiVersion": "artifactory.fn.crossplane.io/v1beta1", "kind": "Input",
            "providerApi": "clustr", "ttl": "soon", "deletionProtecton": false,
            "defaults": {"deletionPolicy": "Keep"}
        });
        let input = ObjectView::Json(input.as_object().unwrap());
        read_input(Some(input), SettingsAt::Input, &mut findings);
        let paths: Vec<&str> = findings.problems.iter().map(|p| p.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "input.providerApi",
                "input.defaults.deletionPolicy",
                "input.ttl",
                "input.deletionProtecton"
            ]
        );
        assert!(findings.problems[3]
            .fix
            .contains("did you mean \"deletionProtection\"?"));
    }
}
