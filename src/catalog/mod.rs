//! The kind catalog: which provider kind renders a (provider API, repository
//! class, package type), and the schema of its `spec`.
//!
//! `catalog.json` is generated from the provider CRDs by
//! `cargo run --features codegen --bin codegen` and checked for drift by a
//! test; see `codegen::catalog`. It is parsed once, on first use.

use serde::Deserialize;
use serde_json::Value;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::OnceLock;

/// The provider's API generations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProviderApi {
    /// Provider releases up to v0.6.0: `artifactory.jfrog.crossplane.io`, `Local<Type>Repository`.
    Flat,
    /// v0.7.0 and later, cluster scoped: `<rclass>.artifactory.jfrog.crossplane.io`.
    Cluster,
    /// v0.7.0 and later, namespaced: `<rclass>.artifactory.jfrog.m.crossplane.io`.
    Namespaced,
}

impl ProviderApi {
    pub const ALL: [ProviderApi; 3] = [
        ProviderApi::Flat,
        ProviderApi::Cluster,
        ProviderApi::Namespaced,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ProviderApi::Flat => "flat",
            ProviderApi::Cluster => "cluster",
            ProviderApi::Namespaced => "namespaced",
        }
    }

    pub fn parse(text: &str) -> Option<ProviderApi> {
        ProviderApi::ALL
            .into_iter()
            .find(|api| api.as_str() == text)
    }

    /// The namespaced API has no `deletionPolicy`: deletion follows the management policies.
    pub fn has_deletion_policy(self) -> bool {
        self != ProviderApi::Namespaced
    }
}

impl fmt::Display for ProviderApi {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Artifactory's repository classes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize)]
#[cfg_attr(feature = "codegen", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum Rclass {
    Local,
    Remote,
    Virtual,
    Federated,
}

impl Rclass {
    pub const ALL: [Rclass; 4] = [
        Rclass::Local,
        Rclass::Remote,
        Rclass::Virtual,
        Rclass::Federated,
    ];
    pub const NAMES: [&'static str; 4] = ["local", "remote", "virtual", "federated"];

    pub fn as_str(self) -> &'static str {
        Rclass::NAMES[self as usize]
    }

    pub fn parse(text: &str) -> Option<Rclass> {
        Rclass::ALL.into_iter().find(|rc| rc.as_str() == text)
    }
}

impl fmt::Display for Rclass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Index of a schema node in the catalog.
pub type NodeId = usize;

/// One node of an OpenAPI schema, as the catalog keeps it.
#[derive(Debug, Clone, Deserialize)]
pub struct Node {
    #[serde(rename = "type")]
    pub type_: String,
    #[serde(default)]
    pub properties: Properties,
    #[serde(default)]
    pub items: Option<NodeId>,
    #[serde(default, rename = "additionalProperties")]
    pub additional_properties: Option<NodeId>,
    #[serde(default)]
    pub required: Vec<String>,
    #[serde(default, rename = "enum")]
    pub enum_values: Option<Vec<Value>>,
    #[serde(default)]
    pub default: Option<Value>,
    #[serde(default, rename = "x-kubernetes-list-type")]
    pub list_type: Option<String>,
}

/// One provider kind.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Kind {
    pub api: ProviderApi,
    pub rclass: Rclass,
    /// The package type as the CRD names it (`dockerv2`, `terraformmodule`, ...).
    pub package_type: String,
    pub api_version: String,
    pub kind: String,
    pub namespaced: bool,
    /// Schema of the kind's `spec`.
    pub spec: NodeId,
    /// `forProvider` fields the CRD's CEL rules require unless the management
    /// policies allow neither create nor update.
    pub required_when_managed: Vec<String>,
    /// The `forProvider` and `providerConfigRef` nodes of `spec`, found after
    /// loading: every rendered repository needs them.
    #[serde(skip)]
    for_provider: Option<NodeId>,
    #[serde(skip)]
    provider_config_ref: Option<NodeId>,
}

#[derive(Debug, Deserialize)]
pub struct Catalog {
    nodes: Vec<Node>,
    kinds: Vec<Kind>,
    /// By API and class (`[api as usize][rclass as usize]`), package type to
    /// the kind's index; built after loading, so a lookup by a borrowed
    /// package type needs no allocation.
    #[serde(skip)]
    index: [[ByName<usize>; 4]; 3],
}

/// Values by name, for the lookups made for every repository of every call:
/// sorted by length, so that a lookup finds the names of its length by their
/// lengths alone and compares bytes only with those few, where a
/// `BTreeMap<String, _>` calls `memcmp` at every key it passes.
#[derive(Debug, Clone)]
pub struct ByName<T>(Vec<(String, T)>);

impl<T> Default for ByName<T> {
    fn default() -> Self {
        ByName(Vec::new())
    }
}

impl<T> ByName<T> {
    fn key(name: &str) -> (usize, &[u8]) {
        (name.len(), name.as_bytes())
    }

    pub fn get(&self, name: &str) -> Option<&T> {
        let first = self
            .0
            .partition_point(|(known, _)| known.len() < name.len());
        self.0[first..]
            .iter()
            .take_while(|(known, _)| known.len() == name.len())
            // Names of one length mostly differ in their first byte: a byte compared inline
            // skips most of them without a call to `memcmp`.
            .find(|(known, _)| known.as_bytes().first() == name.as_bytes().first() && known == name)
            .map(|(_, value)| value)
    }

    fn insert(&mut self, name: String, value: T) {
        let wanted = Self::key(&name);
        match self
            .0
            .binary_search_by(|(known, _)| Self::key(known).cmp(&wanted))
        {
            Ok(i) => self.0[i].1 = value,
            Err(i) => self.0.insert(i, (name, value)),
        }
    }

    /// The names in alphabetical order, as messages list them.
    pub fn names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self.0.iter().map(|(name, _)| name.as_str()).collect();
        names.sort_unstable();
        names
    }
}

/// A schema node's properties: the schema's name of each to its node.
pub type Properties = ByName<NodeId>;

impl<T> From<BTreeMap<String, T>> for ByName<T> {
    fn from(map: BTreeMap<String, T>) -> Self {
        let mut entries: Vec<(String, T)> = map.into_iter().collect();
        entries.sort_unstable_by(|(a, _), (b, _)| Self::key(a).cmp(&Self::key(b)));
        ByName(entries)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for ByName<T> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        BTreeMap::<String, T>::deserialize(deserializer).map(ByName::from)
    }
}

/// Package types people write that the CRDs spell differently.
const ALIASES: [(&str, &str); 8] = [
    ("docker", "dockerv2"),
    ("gem", "gems"),
    ("rubygems", "gems"),
    ("golang", "go"),
    ("huggingface", "huggingfaceml"),
    ("lfs", "gitlfs"),
    ("terraformbackends", "terraformbackend"),
    ("python", "pypi"),
];

/// The catalog, parsed on first use.
pub fn catalog() -> &'static Catalog {
    static CATALOG: OnceLock<Catalog> = OnceLock::new();
    CATALOG.get_or_init(|| {
        let mut catalog: Catalog = serde_json::from_str(include_str!("catalog.json"))
            .expect("catalog.json is generated and checked by tests");
        for (i, kind) in catalog.kinds.iter_mut().enumerate() {
            let spec = &catalog.nodes[kind.spec].properties;
            kind.for_provider = spec.get("forProvider").copied();
            kind.provider_config_ref = spec.get("providerConfigRef").copied();
            catalog.index[kind.api as usize][kind.rclass as usize]
                .insert(kind.package_type.clone(), i);
        }
        catalog
    })
}

/// Lower case without separators: `docker-v2`, `Docker_V2` and `dockerv2` are one type.
pub fn normalize_package_type(text: &str) -> String {
    normalized_package_type(text).into_owned()
}

/// [`normalize_package_type`], borrowed when the text already is normalized
/// (lower-case ASCII without separators), as nearly every entry's is.
fn normalized_package_type(text: &str) -> Cow<'_, str> {
    let is_separator = |c: char| matches!(c, '-' | '_' | ' ' | '.');
    // Bytes, not characters: a byte of a multi-byte character is not ASCII either.
    let normalized =
        |b: u8| b.is_ascii() && !b.is_ascii_uppercase() && !is_separator(char::from(b));
    if text.bytes().all(normalized) {
        return Cow::Borrowed(text);
    }
    text.chars()
        .filter(|c| !is_separator(*c))
        .flat_map(char::to_lowercase)
        .collect()
}

/// The Artifactory package family a package type belongs to: virtual
/// repositories aggregate members of one family (a `docker` virtual takes
/// `dockerv2` locals; `terraform` takes modules and providers).
pub fn package_family(package_type: &str) -> &str {
    if package_type.starts_with("docker") {
        "docker"
    } else if package_type.starts_with("terraform") {
        "terraform"
    } else {
        package_type
    }
}

impl Catalog {
    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id]
    }

    /// Every kind of one provider API.
    pub fn kinds(&self, api: ProviderApi) -> impl Iterator<Item = &Kind> {
        self.kinds.iter().filter(move |k| k.api == api)
    }

    /// Every kind of every API.
    pub fn all_kinds(&self) -> &[Kind] {
        &self.kinds
    }

    /// The kind for an entry, accepting aliases. On failure: the package types that exist.
    pub fn find(
        &self,
        api: ProviderApi,
        rclass: Rclass,
        package_type: &str,
    ) -> Result<&Kind, Vec<&str>> {
        let wanted = normalized_package_type(package_type);
        let by_type = &self.index[api as usize][rclass as usize];
        let lookup = |pt: &str| by_type.get(pt).map(|i| &self.kinds[*i]);
        let alias = || {
            ALIASES
                .iter()
                .find(|(from, _)| *from == wanted)
                .and_then(|(_, to)| lookup(to))
        };
        lookup(&wanted)
            .or_else(alias)
            .ok_or_else(|| self.package_types(api, rclass))
    }

    /// Every package type an entry may name, in any API: the catalog's
    /// package types and the aliases, sorted. The XRDs' `packageType` enum.
    pub fn accepted_package_types(&self) -> Vec<&str> {
        let mut types: Vec<&str> = self
            .kinds
            .iter()
            .map(|k| k.package_type.as_str())
            .chain(ALIASES.iter().map(|(alias, _)| *alias))
            .collect();
        types.sort_unstable();
        types.dedup();
        types
    }

    /// Package types with a kind for (api, rclass), sorted.
    pub fn package_types(&self, api: ProviderApi, rclass: Rclass) -> Vec<&str> {
        self.kinds
            .iter()
            .filter(|k| k.api == api && k.rclass == rclass)
            .map(|k| k.package_type.as_str())
            .collect()
    }

    /// Whether a (rclass, package type) exists in any API; used to tell a
    /// typo from a type the chosen API lacks.
    pub fn exists_elsewhere(&self, rclass: Rclass, package_type: &str) -> Vec<ProviderApi> {
        ProviderApi::ALL
            .into_iter()
            .filter(|api| self.find(*api, rclass, package_type).is_ok())
            .collect()
    }

    /// The `forProvider` schema of a kind.
    pub fn for_provider(&self, kind: &Kind) -> Option<NodeId> {
        kind.for_provider
    }

    /// The `providerConfigRef` schema of a kind.
    pub fn provider_config_ref(&self, kind: &Kind) -> Option<NodeId> {
        kind.provider_config_ref
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_api_has_kinds_and_valid_nodes() {
        let catalog = catalog();
        for api in ProviderApi::ALL {
            assert!(catalog.kinds(api).count() > 90, "{api}");
        }
        for kind in catalog.all_kinds() {
            assert!(catalog.for_provider(kind).is_some(), "{}", kind.kind);
        }
    }

    #[test]
    fn aliases_resolve_only_where_needed() {
        let catalog = catalog();
        let local_docker = catalog
            .find(ProviderApi::Cluster, Rclass::Local, "docker")
            .unwrap();
        assert_eq!(local_docker.package_type, "dockerv2");
        let federated_docker = catalog
            .find(ProviderApi::Cluster, Rclass::Federated, "docker")
            .unwrap();
        assert_eq!(federated_docker.package_type, "docker");
        let flat = catalog
            .find(ProviderApi::Flat, Rclass::Local, "Docker-V2")
            .unwrap();
        assert_eq!(flat.kind, "LocalDockerV2Repository");
        let missing = catalog
            .find(ProviderApi::Flat, Rclass::Local, "go")
            .unwrap_err();
        assert!(missing.contains(&"maven") && !missing.contains(&"go"));
    }
}
