//! The function's user-facing API as Rust types: the composite's `spec`
//! (docs/design.md, "The composite") and the function input ("Input").
//!
//! These types are the single source of the published schemas: the codegen
//! (`codegen::schemas`, feature `codegen`) derives the Input CRD
//! (`package/input/`) and the example XRDs (`examples/*/xrd.yaml`) from them
//! with schemars, so the API server rejects a malformed claim before the
//! function sees it. The function itself reads composites and inputs with the
//! hand-written readers in [`crate::core::composite`] and [`crate::core::input`], which
//! report every mistake at once with a suggestion; a unit test proves that the
//! readers accept exactly the fields these types declare, so the two cannot
//! drift apart.
//!
//! The doc comments of the fields become the schema descriptions that
//! `kubectl explain` shows.

use crate::core::catalog::Rclass;
use crate::core::policy::DeletionPolicy;
use serde::Deserialize;
use serde_json::{Map, Value};

/// A JFrog project key.
pub(super) const PROJECT_KEY_PATTERN: &str = "^[a-z][a-z0-9-]{1,31}$";
/// A DNS-1123 label (at most 63 characters, checked by `maxLength`).
pub(super) const DNS_LABEL_PATTERN: &str = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$";
/// A repository key: no white space and none of the characters Artifactory refuses.
/// The other key rules (reserved keys, per-type lengths and case) are the function's.
pub(super) const KEY_PATTERN: &str = "^[^\\s!@#$%^&*()+={}\\[\\]:;<>,/?~`|\\\\\"]+$";
/// An http(s) URL.
pub(super) const URL_PATTERN: &str = "^https?://\\S+$";
/// A provider release as the provider tags them.
pub(super) const RELEASE_PATTERN: &str = "^v[0-9]+\\.[0-9]+\\.[0-9]+$";
/// A Go duration with a unit on every number (`60s`, `1m30s`, `1.5h`, `250ms`); the
/// function's parser (`time::parse_go_duration`) also takes Go's `0`, `+1s` and `.5s`.
pub(super) const DURATION_PATTERN: &str = "^([0-9]+(\\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$";

/// The `spec` of a composite resource (or claim) that describes Artifactory repositories.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(super) struct CompositeSpecSchema {
    /// JFrog project key: 2 to 32 lower-case letters, digits or '-', starting with a letter.
    /// Set on every repository; the default key format becomes {projectKey}-{name}.
    #[serde(default)]
    #[schemars(regex(pattern = PROJECT_KEY_PATTERN))]
    pub project_key: Option<String>,
    /// Default provider config of every repository.
    #[serde(default)]
    pub provider_config_ref: Option<ProviderConfigRefSchema>,
    /// Default deletion policy of every repository (Delete or Orphan).
    #[serde(default)]
    pub deletion_policy: Option<DeletionPolicy>,
    /// Default management policies of every repository.
    #[serde(default)]
    #[schemars(schema_with = "schemas::management_policies")]
    pub management_policies: Option<Vec<String>>,
    /// The repositories, one composed resource each; may be empty.
    #[schemars(extend( "x-kubernetes-list-type" = "map", "x-kubernetes-list-map-keys" = ["name"] ))]
    pub repositories: Vec<RepositoryEntrySchema>,
}

/// One Artifactory repository.
#[derive(Debug, Clone, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(super) struct RepositoryEntrySchema {
    /// Unique name of the entry, a DNS-1123 label: it names the composed resource,
    /// and the key is computed from it unless key is given.
    #[schemars(length(min = 1, max = 63), regex(pattern = DNS_LABEL_PATTERN))]
    pub name: String,
    /// Repository class: local, remote, virtual or federated.
    pub rclass: Rclass,
    /// Artifactory package type, such as maven, npm, docker, oci, generic, pypi, helm or go.
    #[schemars(schema_with = "schemas::package_type")]
    pub package_type: String,
    /// Explicit repository key; otherwise computed from the naming format.
    #[serde(default)]
    #[schemars(length(min = 1, max = 64), regex(pattern = KEY_PATTERN))]
    pub key: Option<String>,
    /// Repository description.
    #[serde(default)]
    pub description: Option<String>,
    /// Internal notes.
    #[serde(default)]
    pub notes: Option<String>,
    /// Remote repositories: the upstream URL.
    #[serde(default)]
    #[schemars(regex(pattern = URL_PATTERN))]
    pub url: Option<String>,
    /// Virtual repositories: members by name of an entry of this list, in resolution order.
    #[serde(default)]
    #[schemars(schema_with = "schemas::entry_names")]
    pub repositories: Option<Vec<String>>,
    /// Virtual repositories: members outside this composite, by key; resolved after repositories.
    #[serde(default)]
    #[schemars(schema_with = "schemas::keys")]
    pub external_repositories: Option<Vec<String>>,
    /// Virtual repositories: name of the local member entry that deployments go to.
    #[serde(default)]
    #[schemars(length(min = 1, max = 63), regex(pattern = DNS_LABEL_PATTERN))]
    pub default_deployment_repo: Option<String>,
    /// Federated repositories: the members; without it, and with the input's artifactoryUrl,
    /// the repository itself.
    #[serde(default)]
    pub members: Option<Vec<FederatedMemberSchema>>,
    /// Any other provider field, camelCase, as in the provider's CRD; checked by the function.
    #[serde(default)]
    #[schemars(schema_with = "schemas::free_object")]
    pub for_provider: Option<Map<String, Value>>,
    /// Adopt an existing repository with this key (management policies [Observe] unless given).
    #[serde(default)]
    pub import: Option<bool>,
    /// Deletion policy of this repository (Delete or Orphan).
    #[serde(default)]
    pub deletion_policy: Option<DeletionPolicy>,
    /// Management policies of this repository.
    #[serde(default)]
    #[schemars(schema_with = "schemas::management_policies")]
    pub management_policies: Option<Vec<String>>,
    /// Provider config of this repository.
    #[serde(default)]
    pub provider_config_ref: Option<ProviderConfigRefSchema>,
    /// Pause reconciliation of this repository (crossplane.io/paused).
    #[serde(default)]
    pub paused: Option<bool>,
    /// Remote repositories: the user name for the upstream.
    #[serde(default)]
    pub username: Option<String>,
    /// Remote repositories: the password for the upstream, from a Secret.
    #[serde(default)]
    pub password: Option<PasswordSchema>,
}

/// A password kept in a Secret.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(super) struct PasswordSchema {
    /// The Secret key that holds the password. Without a namespace, the claim's namespace
    /// (then the composite's) for the cluster-scoped provider APIs; the namespaced API
    /// takes Secrets of the composite's namespace only.
    pub secret_ref: PasswordSecretRefSchema,
}

/// A key of a Secret, with an optional namespace.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(super) struct PasswordSecretRefSchema {
    /// Key in the Secret.
    #[schemars(length(min = 1))]
    pub key: String,
    /// Name of the Secret.
    #[schemars(length(min = 1))]
    pub name: String,
    /// Namespace of the Secret.
    #[serde(default)]
    pub namespace: Option<String>,
}

/// A member of a federated repository.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(super) struct FederatedMemberSchema {
    /// URL of the member repository, ending in its key.
    #[schemars(regex(pattern = URL_PATTERN))]
    pub url: String,
    /// Whether the member takes part in the federation.
    #[serde(default)]
    pub enabled: Option<bool>,
    /// Secret holding an access token for the member.
    #[serde(default)]
    pub access_token_secret_ref: Option<SecretKeySelectorSchema>,
}

/// A key of a Kubernetes secret.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(super) struct SecretKeySelectorSchema {
    /// Key in the secret.
    pub key: String,
    /// Name of the secret.
    pub name: String,
    /// Namespace of the secret (cluster-scoped provider APIs).
    #[serde(default)]
    pub namespace: Option<String>,
}

/// A reference to a provider config. The cluster-scoped provider APIs take name and
/// policy; the namespaced API takes kind and name.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(super) struct ProviderConfigRefSchema {
    /// Kind of the provider config (namespaced API): ProviderConfig or ClusterProviderConfig.
    #[serde(default)]
    #[schemars(extend("enum" = ["ProviderConfig", "ClusterProviderConfig"]))]
    pub kind: Option<String>,
    /// Name of the provider config.
    #[schemars(length(min = 1))]
    pub name: String,
    /// How the reference is resolved (cluster-scoped provider APIs).
    #[serde(default)]
    pub policy: Option<ReferencePolicySchema>,
}

/// Resolution policy of a reference.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(super) struct ReferencePolicySchema {
    /// Required or Optional.
    #[serde(default)]
    #[schemars(extend("enum" = ["Required", "Optional"]))]
    pub resolution: Option<String>,
    /// Always or IfNotPresent.
    #[serde(default)]
    #[schemars(extend("enum" = ["Always", "IfNotPresent"]))]
    pub resolve: Option<String>,
}

/// The function input: the pipeline step's `input`. Every field is optional.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(super) struct InputSchema {
    /// artifactory.fn.crossplane.io/v1beta1
    #[serde(default)]
    pub api_version: Option<String>,
    /// Input
    #[serde(default)]
    pub kind: Option<String>,
    /// Standard object metadata; not used.
    #[serde(default)]
    #[schemars(schema_with = "schemas::metadata")]
    pub metadata: Option<Map<String, Value>>,
    /// Provider API to render for: auto (namespaced when the composite is namespaced,
    /// else cluster; with live schemas, the API whose kinds the cluster serves), flat
    /// (provider releases v0.1.0 to v0.6.0), cluster (v0.7.0 and later) or namespaced
    /// (v0.8.0 and later).
    #[serde(default)]
    pub provider_api: Option<ProviderApiChoice>,
    /// The provider release the cluster runs, such as v0.14.0: its kinds and schemas are
    /// rendered for (default: the newest release that has the provider API). A patch release
    /// the function does not know uses the newest known release before it.
    #[serde(default)]
    #[schemars(regex(pattern = RELEASE_PATTERN))]
    pub provider_version: Option<String>,
    /// How repository keys are computed.
    #[serde(default)]
    pub naming: Option<NamingSchema>,
    /// Base URL of Artifactory: status URLs and the default federated self member.
    #[serde(default)]
    #[schemars(regex(pattern = URL_PATTERN))]
    pub artifactory_url: Option<String>,
    /// Defaults for every repository, below the composite's own.
    #[serde(default)]
    pub defaults: Option<DefaultsSchema>,
    /// Retire removed repositories in two steps, orphaning them first (default true).
    #[serde(default)]
    pub deletion_protection: Option<bool>,
    /// Create new repositories with managementPolicies [Observe, Create] until the provider
    /// shows the create succeeded, so that a key that already exists in Artifactory is held
    /// (observed only) rather than taken over; it comes under the claim only with
    /// import: true (default true). false renders every entry with its own policies at once:
    /// an existing key is then updated with the claim's settings and deleted with the claim.
    #[serde(default)]
    pub create_guard: Option<bool>,
    /// The first step of the provider's v0.7.0 group move (docs/upgrading.md), while the
    /// provider of v0.6.0 or before still runs: render no repository of the flat API, and
    /// release each live flat managed resource, orphaned first, so that the repositories stay
    /// and no resource is left without a controller after the upgrade (default false).
    #[serde(default)]
    pub release_flat: Option<bool>,
    /// The migration switch (docs/upgrading.md): render every repository so that deleting
    /// its managed resource, or the claim, leaves the repository in Artifactory: deletion
    /// Orphan and management policies without Delete, whatever the entries say; removed
    /// entries are retired, orphaned first, whatever deletionProtection says. The composite's
    /// status shows neverDelete: true (default false).
    #[serde(default)]
    pub never_delete: Option<bool>,
    /// A pattern that every key a claim touches must match (its entries' keys, given,
    /// imported or computed, and the keys its virtuals name outside it): * stands for any run
    /// of characters, and the placeholders {claimNamespace}, {namespace}, {claimName},
    /// {xrName} and {projectKey} take the composite's values, such as {claimNamespace}-*
    /// (default: any key). Only {claimNamespace} and {namespace} are the platform's: the
    /// claim's author chooses the others.
    #[serde(default)]
    #[schemars(length(min = 1))]
    pub allowed_keys: Option<String>,
    /// Namespaces whose Secrets a claim may reference besides its own (a claim: a composite
    /// with the crossplane.io/claim-namespace label, or a namespaced composite), for the
    /// cluster-scoped provider APIs, whose Secret references name a namespace (default: none).
    #[serde(default)]
    pub allowed_secret_namespaces: Option<Vec<String>>,
    /// Render remote passwords as the provider's write-only fields (passwordWoSecretRef and
    /// passwordWoVersion, the Secret's resourceVersion) rather than passwordSecretRef
    /// (default false; cluster and namespaced provider APIs).
    #[serde(default)]
    pub write_only_passwords: Option<bool>,
    /// How long Crossplane may cache the response, as a duration such as 60s (default 60s).
    #[serde(default)]
    #[schemars(regex(pattern = DURATION_PATTERN))]
    pub ttl: Option<String>,
}

/// Which provider API the function renders for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(super) enum ProviderApiChoice {
    Auto,
    Flat,
    Cluster,
    Namespaced,
}

/// Key naming.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(super) struct NamingSchema {
    /// Key template with the placeholders {name}, {projectKey}, {packageType}, {rclass},
    /// {xrName}, {namespace}, {claimName} and {claimNamespace}; default {name}, or
    /// {projectKey}-{name} when projectKey is set.
    #[serde(default)]
    #[schemars(length(min = 1))]
    pub format: Option<String>,
}

/// Defaults for every repository.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(super) struct DefaultsSchema {
    /// Default provider config.
    #[serde(default)]
    pub provider_config_ref: Option<ProviderConfigRefSchema>,
    /// Default deletion policy (Delete or Orphan; ignored by the namespaced API).
    #[serde(default)]
    pub deletion_policy: Option<DeletionPolicy>,
    /// Default management policies.
    #[serde(default)]
    #[schemars(schema_with = "schemas::management_policies")]
    pub management_policies: Option<Vec<String>>,
    /// Default forProvider.projectEnvironments of every repository when spec.projectKey is set
    /// and the entry's forProvider sets none (for example [DEV]).
    #[serde(default)]
    pub project_environments: Option<Vec<String>>,
}

/// Schemas that no plain Rust type expresses: enums from the catalog and
/// the policies, objects that keep unknown fields.
mod schemas {
    use super::{DNS_LABEL_PATTERN, KEY_PATTERN};
    use crate::core::catalog::catalog;
    use crate::core::policy::MANAGEMENT_POLICIES;
    use schemars::{json_schema, Schema, SchemaGenerator};

    pub(super) fn management_policies(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "array",
            "minItems": 1,
            "items": {"type": "string", "enum": MANAGEMENT_POLICIES},
        })
    }

    /// Every package type the catalog knows for any API, and the accepted aliases.
    pub(super) fn package_type(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "string", "enum": catalog().accepted_package_types()})
    }

    pub(super) fn entry_names(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "array",
            "items": {"type": "string", "maxLength": 63, "pattern": DNS_LABEL_PATTERN},
        })
    }

    pub(super) fn keys(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "array",
            "items": {"type": "string", "minLength": 1, "maxLength": 64, "pattern": KEY_PATTERN},
        })
    }

    pub(super) fn free_object(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "object", "x-kubernetes-preserve-unknown-fields": true})
    }

    pub(super) fn metadata(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "object"})
    }
}
