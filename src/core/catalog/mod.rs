//! The kind catalog: which provider kind renders a (provider release, provider API,
//! repository class, package type), and the schema of its `spec`.
//!
//! `catalog.json` is generated from the provider CRDs of every release since v0.1.0
//! (`crds/`) by `cargo run --features codegen --bin codegen` and checked for drift by a
//! test; see `codegen::catalog`. Each kind is stored once for the releases in which it is the
//! same, and every name once. It is read on first use, in two steps: the releases, names and
//! kinds then, with the index of the newest release of each API (what a call without
//! `providerVersion` uses); a schema node only when a call first needs it, and an older
//! release's index on first use. The WebAssembly component, which function-wasm instantiates
//! afresh for every call, takes the first step when it is built (pre-initialisation): its
//! calls parse only the nodes they need.

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::OnceLock;

/// The provider's API generations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProviderApi {
    /// Provider releases v0.1.0 to v0.6.0: `artifactory.jfrog.crossplane.io`, `Local<Type>Repository`.
    Flat,
    /// v0.7.0 and later, cluster scoped: `<rclass>.artifactory.jfrog.crossplane.io`.
    Cluster,
    /// v0.8.0 and later, namespaced: `<rclass>.artifactory.jfrog.m.crossplane.io`.
    Namespaced,
}

impl ProviderApi {
    /// Every API, oldest first.
    pub const ALL: [ProviderApi; 3] = [
        ProviderApi::Flat,
        ProviderApi::Cluster,
        ProviderApi::Namespaced,
    ];

    /// The name the input's `providerApi` takes.
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderApi::Flat => "flat",
            ProviderApi::Cluster => "cluster",
            ProviderApi::Namespaced => "namespaced",
        }
    }

    /// The API of an input's `providerApi` value; `None` for anything else (including `auto`).
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
    /// Repositories that hold artifacts uploaded to Artifactory.
    Local,
    /// Caches of an upstream repository at a URL.
    Remote,
    /// One key over an ordered list of member repositories.
    Virtual,
    /// Repositories mirrored across Artifactory instances.
    Federated,
}

impl Rclass {
    /// Every class, in the order Artifactory documents them.
    pub const ALL: [Rclass; 4] = [
        Rclass::Local,
        Rclass::Remote,
        Rclass::Virtual,
        Rclass::Federated,
    ];
    /// The names as a claim writes them (`rclass`), in the order of [`Rclass::ALL`].
    pub const NAMES: [&'static str; 4] = ["local", "remote", "virtual", "federated"];

    /// The name as a claim writes it.
    pub fn as_str(self) -> &'static str {
        Rclass::NAMES[self as usize]
    }

    /// The class of a claim's `rclass` value; `None` for anything else.
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
pub(crate) type NodeId = usize;

/// One node of an OpenAPI schema, as the catalog keeps it.
#[derive(Debug, Clone)]
pub struct Node {
    /// The OpenAPI `type` (`object`, `string`, ...; empty where the schema gives none).
    pub type_: String,
    /// An object's properties, by name.
    pub properties: Properties,
    /// An array's item schema.
    pub items: Option<NodeId>,
    /// A map's value schema.
    pub additional_properties: Option<NodeId>,
    /// The properties an object requires.
    pub required: Vec<String>,
    /// The values an `enum` allows.
    pub enum_values: Option<Vec<Value>>,
    /// The value the API server fills in when the field is absent.
    pub default: Option<Value>,
    /// `x-kubernetes-list-type` (`set`, `map`, `atomic`).
    pub list_type: Option<String>,
}

/// A node as `catalog.json` stores it: names as indexes into the catalog's names.
#[derive(Deserialize)]
struct StoredNode {
    #[serde(rename = "type")]
    type_: String,
    /// Name and node indexes, one after the other.
    #[serde(default)]
    properties: Vec<usize>,
    #[serde(default)]
    items: Option<NodeId>,
    #[serde(default, rename = "additionalProperties")]
    additional_properties: Option<NodeId>,
    #[serde(default)]
    required: Vec<usize>,
    #[serde(default, rename = "enum")]
    enum_values: Option<Vec<Value>>,
    #[serde(default)]
    default: Option<Value>,
    #[serde(default, rename = "x-kubernetes-list-type")]
    list_type: Option<String>,
}

/// A kind as `catalog.json` stores it: `[api, rclass, packageType, apiVersion, kind,
/// namespaced, spec, requiredWhenManaged, first release, last release]`, names as indexes.
#[derive(Deserialize)]
struct StoredKind(
    ProviderApi,
    Rclass,
    usize,
    usize,
    usize,
    bool,
    NodeId,
    Vec<usize>,
    usize,
    usize,
);

/// `catalog.json`, its nodes left as text until a call needs them.
#[derive(Deserialize)]
struct Stored<'a> {
    releases: Vec<String>,
    /// `[group, plural, old kind, new kind, release]` (see [`Rename`]).
    #[serde(borrow)]
    renames: Vec<[&'a str; 5]>,
    #[serde(borrow)]
    names: Vec<&'a str>,
    kinds: Vec<StoredKind>,
    #[serde(borrow)]
    nodes: Vec<&'a RawValue>,
}

/// One provider kind.
#[derive(Debug, Clone)]
pub struct Kind {
    /// The provider API the kind belongs to.
    pub api: ProviderApi,
    /// The repository class it renders.
    pub rclass: Rclass,
    /// The package type as the CRD names it (`dockerv2`, `terraformmodule`, ...).
    pub package_type: String,
    /// `apiVersion` of its managed resources (`artifactory.jfrog.crossplane.io/v1alpha1`, ...).
    pub api_version: String,
    /// Its kind (`LocalMavenRepository`, ...).
    pub kind: String,
    /// Whether its managed resources are namespaced.
    pub namespaced: bool,
    /// Schema of the kind's `spec`.
    pub spec: NodeId,
    /// `forProvider` fields the CRD's CEL rules require unless the management
    /// policies allow neither create nor update.
    pub required_when_managed: Vec<String>,
    /// The first and last release (indexes into the catalog's releases) with this kind as
    /// recorded.
    first: usize,
    last: usize,
}

/// A CRD the provider renamed in a release: the group and plural stay, only `spec.names.kind`
/// changes, so the API server serves the objects made under the old name as the new kind and
/// the new release's controller reconciles them. A live resource of the old name is the same
/// repository kind as the new one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rename {
    /// The CRD's group (`local.artifactory.jfrog.crossplane.io`).
    pub group: &'static str,
    /// The CRD's plural (`npmrepositories`).
    pub plural: &'static str,
    /// The kind name before the release (`NpmRepository`).
    pub from: &'static str,
    /// The kind name from the release on (`NPMRepository`).
    pub to: &'static str,
    /// The first release with the new name.
    pub release: Release,
}

/// The provider's kinds and their schemas, for every release the catalog knows.
#[derive(Debug)]
pub struct Catalog {
    /// Every provider release, oldest first.
    releases: Vec<String>,
    /// Every CRD rename, by group and plural.
    renames: Vec<Rename>,
    /// The names the stored nodes refer to.
    names: Vec<&'static str>,
    /// Each node's text, and the node once parsed.
    stored_nodes: Vec<&'static RawValue>,
    nodes: Vec<OnceLock<Node>>,
    kinds: Vec<Kind>,
    /// The newest release that has kinds of each API (`[api as usize]`): what a call
    /// without `providerVersion` renders for.
    newest: [Release; 3],
    /// The kinds of the newest releases, by API and class.
    index: KindIndex,
    /// The kinds of each release, built on first use.
    by_release: Vec<OnceLock<KindIndex>>,
}

/// By API and class (`[api as usize][rclass as usize]`), package type to the
/// kind's index; built after loading, so a lookup by a borrowed package type
/// needs no allocation.
type KindIndex = [[ByName<usize>; 4]; 3];

/// A provider release of the catalog (an index into its releases, oldest first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Release(usize);

/// What a release name given by a user picks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReleaseMatch {
    /// A release of the catalog.
    Exact(Release),
    /// Not a release of the catalog, but a version between two: the newest older one, whose
    /// kinds and schemas the given one has unless the provider changed them in a patch.
    Nearest(Release),
    /// Newer than every release of the catalog: the newest.
    Newer(Release),
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

    /// The value stored under `name`.
    pub fn get(&self, name: &str) -> Option<&T> {
        by_length_get(&self.0, name)
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
pub(crate) type Properties = ByName<NodeId>;

impl<T> From<BTreeMap<String, T>> for ByName<T> {
    fn from(map: BTreeMap<String, T>) -> Self {
        ByName::from_pairs(map)
    }
}

impl<T> ByName<T> {
    /// The pairs, each name once.
    fn from_pairs(pairs: impl IntoIterator<Item = (String, T)>) -> Self {
        let mut entries: Vec<(String, T)> = pairs.into_iter().collect();
        entries.sort_unstable_by(|(a, _), (b, _)| Self::key(a).cmp(&Self::key(b)));
        ByName(entries)
    }
}

/// The value of `name` among `entries` sorted by the length of their names, then by name
/// ([`ByName`], and a schema node's properties in `openapi`): the names of its length are found
/// by their lengths alone, and bytes are compared only with those few. Inlined into the checks'
/// property lookups, a few a field, as the loop it replaced there was.
#[inline]
pub(crate) fn by_length_get<'e, N: AsRef<str>, T>(
    entries: &'e [(N, T)],
    name: &str,
) -> Option<&'e T> {
    let first = entries.partition_point(|(known, _)| known.as_ref().len() < name.len());
    entries[first..]
        .iter()
        .take_while(|(known, _)| known.as_ref().len() == name.len())
        // Names of one length mostly differ in their first byte: a byte compared inline skips
        // most of them.
        .find(|(known, _)| {
            let known = known.as_ref().as_bytes();
            known.first() == name.as_bytes().first() && same_length_equal(known, name.as_bytes())
        })
        .map(|(_, value)| value)
}

/// Whether two byte strings of the same length are equal. From 4 to 16 bytes (nearly every
/// name looked up) they are compared as their first and last words, which overlap where the
/// strings are shorter than two words, rather than by a call to `memcmp`: the checks look up a
/// property for each field they meet, and the call cost more than the comparison.
#[inline(always)]
fn same_length_equal(a: &[u8], b: &[u8]) -> bool {
    debug_assert_eq!(a.len(), b.len());
    fn ends<const N: usize>(s: &[u8]) -> Option<(&[u8; N], &[u8; N])> {
        Some((s.first_chunk::<N>()?, s.last_chunk::<N>()?))
    }
    match a.len() {
        8..=16 => ends::<8>(a) == ends::<8>(b),
        4..=7 => ends::<4>(a) == ends::<4>(b),
        _ => a == b,
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

/// What `catalog.json` holds, checked when it is generated and by the tests; a broken
/// file is a bug of the build, never of a request.
const GENERATED: &str = "catalog.json is generated and checked by tests";

/// The catalog, read on first use.
pub fn catalog() -> &'static Catalog {
    // The component's instances start with it read (`prepare`, src/component/mod.rs): there a
    // call only reads it, so the code that reads the file leaves the module with the
    // initialisation.
    #[cfg(all(feature = "component", target_os = "wasi"))]
    return CATALOG
        .get()
        .expect("prepare() runs when the component is built");
    #[cfg(not(all(feature = "component", target_os = "wasi")))]
    prepare()
}

static CATALOG: OnceLock<Catalog> = OnceLock::new();

/// Reads the catalog now, once: what [`catalog`] gives.
pub(crate) fn prepare() -> &'static Catalog {
    CATALOG.get_or_init(|| {
        let stored: Stored<'static> =
            serde_json::from_str(include_str!("catalog.json")).expect(GENERATED);
        let name = |i: usize| stored.names[i].to_owned();
        let kinds: Vec<Kind> = stored
            .kinds
            .iter()
            .map(|k| Kind {
                api: k.0,
                rclass: k.1,
                package_type: name(k.2),
                api_version: name(k.3),
                kind: name(k.4),
                namespaced: k.5,
                spec: k.6,
                required_when_managed: k.7.iter().map(|&i| name(i)).collect(),
                first: k.8,
                last: k.9,
            })
            .collect();
        let mut newest = [Release::default(); 3];
        for kind in &kinds {
            let newest = &mut newest[kind.api as usize];
            newest.0 = newest.0.max(kind.last);
        }
        let renames = stored
            .renames
            .iter()
            .map(|[group, plural, from, to, release]| Rename {
                group,
                plural,
                from,
                to,
                release: Release(
                    stored
                        .releases
                        .iter()
                        .position(|r| r == release)
                        .expect(GENERATED),
                ),
            })
            .collect();
        let mut catalog = Catalog {
            renames,
            by_release: stored.releases.iter().map(|_| OnceLock::new()).collect(),
            releases: stored.releases,
            names: stored.names,
            nodes: stored.nodes.iter().map(|_| OnceLock::new()).collect(),
            stored_nodes: stored.nodes,
            kinds,
            newest,
            index: KindIndex::default(),
        };
        catalog.index = catalog.build_index(|api| catalog.newest[api as usize]);
        catalog
    })
}

/// The group of an apiVersion (`local.artifactory.jfrog.crossplane.io/v1alpha1`); empty for
/// the core group's `v1`.
pub(crate) fn api_group(api_version: &str) -> &str {
    api_version.split_once('/').map_or("", |(group, _)| group)
}

/// `vX.Y.Z` as three numbers.
pub(crate) fn parse_version(text: &str) -> Option<(u32, u32, u32)> {
    let mut numbers = text
        .strip_prefix('v')?
        .split('.')
        .map(|n| n.parse::<u32>().ok());
    let version = (numbers.next()??, numbers.next()??, numbers.next()??);
    numbers.next().is_none().then_some(version)
}

/// Lower case without separators: `docker-v2`, `Docker_V2` and `dockerv2` are one type;
/// borrowed when the text already is normalized (lower-case ASCII without separators), as
/// nearly every entry's is.
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
pub(crate) fn package_family(package_type: &str) -> &str {
    if package_type.starts_with("docker") {
        "docker"
    } else if package_type.starts_with("terraform") {
        "terraform"
    } else {
        package_type
    }
}

impl Kind {
    /// Whether the kind is as recorded in `release`.
    pub fn in_release(&self, release: Release) -> bool {
        (self.first..=self.last).contains(&release.0)
    }
}

impl Catalog {
    /// The schema node `id`, parsed the first time it is asked for.
    pub fn node(&self, id: NodeId) -> &Node {
        self.nodes[id].get_or_init(|| self.parse_node(id))
    }

    fn parse_node(&self, id: NodeId) -> Node {
        let stored: StoredNode =
            serde_json::from_str(self.stored_nodes[id].get()).expect(GENERATED);
        let name = |i: usize| self.names[i].to_owned();
        Node {
            type_: stored.type_,
            properties: ByName::from_pairs(
                stored
                    .properties
                    .chunks_exact(2)
                    .map(|pair| (name(pair[0]), pair[1])),
            ),
            items: stored.items,
            additional_properties: stored.additional_properties,
            required: stored.required.into_iter().map(name).collect(),
            enum_values: stored.enum_values,
            default: stored.default,
            list_type: stored.list_type,
        }
    }

    /// The index of the kinds of the release `release_of(api)` for each API.
    fn build_index(&self, release_of: impl Fn(ProviderApi) -> Release) -> KindIndex {
        let mut index = KindIndex::default();
        for (i, kind) in self.kinds.iter().enumerate() {
            if kind.in_release(release_of(kind.api)) {
                index[kind.api as usize][kind.rclass as usize].insert(kind.package_type.clone(), i);
            }
        }
        index
    }

    /// The kinds of `release`, or of the newest release of each API for `None`.
    fn index_of(&self, release: Option<Release>) -> &KindIndex {
        match release {
            None => &self.index,
            Some(release) => {
                self.by_release[release.0].get_or_init(|| self.build_index(|_| release))
            }
        }
    }

    /// The release a call renders for: the one named, else the newest that has `api`.
    pub fn effective_release(&self, release: Option<Release>, api: ProviderApi) -> Release {
        release.unwrap_or(self.newest[api as usize])
    }

    /// Every provider release, oldest first.
    pub fn release_names(&self) -> &[String] {
        &self.releases
    }

    /// The name of a release: `v0.14.0`.
    pub fn release_name(&self, release: Release) -> &str {
        &self.releases[release.0]
    }

    /// The release a user's version names: `v0.10.0` exactly; `v0.10.2` (a patch the
    /// catalog has not got) the newest release before it; a version after every release the
    /// newest. `None` for text that is not `vX.Y.Z`, or a version before the first release.
    pub fn match_release(&self, text: &str) -> Option<ReleaseMatch> {
        let wanted = parse_version(text)?;
        let versions = self.releases.iter().map(|r| parse_version(r));
        let older = versions
            .take_while(|v| v.is_some_and(|v| v <= wanted))
            .count();
        let newest = older.checked_sub(1)?;
        Some(if self.releases[newest] == text {
            ReleaseMatch::Exact(Release(newest))
        } else if older == self.releases.len() {
            ReleaseMatch::Newer(Release(newest))
        } else {
            ReleaseMatch::Nearest(Release(newest))
        })
    }

    /// The first and last release that have kinds of `api`.
    pub fn api_releases(&self, api: ProviderApi) -> (Release, Release) {
        let first = self
            .kinds
            .iter()
            .filter(|k| k.api == api)
            .map(|k| k.first)
            .min();
        (
            Release(first.unwrap_or_default()),
            self.newest[api as usize],
        )
    }

    /// Whether `release` has kinds of `api`.
    pub fn has_api(&self, release: Release, api: ProviderApi) -> bool {
        self.kinds
            .iter()
            .any(|k| k.api == api && k.in_release(release))
    }

    /// Every kind of one provider API, in its newest release.
    pub fn kinds(&self, api: ProviderApi) -> impl Iterator<Item = &Kind> {
        let newest = self.newest[api as usize];
        self.kinds
            .iter()
            .filter(move |k| k.api == api && k.in_release(newest))
    }

    /// Every kind of one provider API in one release.
    pub fn kinds_in(&self, release: Release, api: ProviderApi) -> impl Iterator<Item = &Kind> {
        self.kinds
            .iter()
            .filter(move |k| k.api == api && k.in_release(release))
    }

    /// Every kind of every API, each in its newest release.
    pub fn all_kinds(&self) -> impl Iterator<Item = &Kind> {
        ProviderApi::ALL.into_iter().flat_map(|api| self.kinds(api))
    }

    /// The kind for an entry, accepting aliases. On failure: the package types that exist.
    pub fn find(
        &self,
        api: ProviderApi,
        rclass: Rclass,
        package_type: &str,
    ) -> Result<&Kind, Vec<&str>> {
        self.find_in(None, api, rclass, package_type)
    }

    /// [`Catalog::find`] in `release` (`None`: the newest release of the API).
    pub fn find_in(
        &self,
        release: Option<Release>,
        api: ProviderApi,
        rclass: Rclass,
        package_type: &str,
    ) -> Result<&Kind, Vec<&str>> {
        self.kind_in(release, api, rclass, package_type)
            .ok_or_else(|| self.index_of(release)[api as usize][rclass as usize].names())
    }

    /// [`Catalog::find_in`] for a caller that needs no package types on failure (which cost a
    /// sorted list each).
    pub fn kind_in(
        &self,
        release: Option<Release>,
        api: ProviderApi,
        rclass: Rclass,
        package_type: &str,
    ) -> Option<&Kind> {
        let wanted = normalized_package_type(package_type);
        let by_type = &self.index_of(release)[api as usize][rclass as usize];
        let lookup = |pt: &str| by_type.get(pt).map(|i| &self.kinds[*i]);
        let alias = || {
            ALIASES
                .iter()
                .find(|(from, _)| *from == wanted)
                .and_then(|(_, to)| lookup(to))
        };
        lookup(&wanted).or_else(alias)
    }

    /// Every package type an entry may name, in any API: the catalog's
    /// package types and the aliases, sorted. The XRDs' `packageType` enum.
    pub fn accepted_package_types(&self) -> Vec<&str> {
        let mut types: Vec<&str> = self
            .all_kinds()
            .map(|k| k.package_type.as_str())
            .chain(ALIASES.iter().map(|(alias, _)| *alias))
            .collect();
        types.sort_unstable();
        types.dedup();
        types
    }

    /// Whether a (rclass, package type) exists in any API of `release`; used to
    /// tell a typo from a type the chosen API lacks.
    pub fn exists_elsewhere(
        &self,
        release: Option<Release>,
        rclass: Rclass,
        package_type: &str,
    ) -> Vec<ProviderApi> {
        ProviderApi::ALL
            .into_iter()
            .filter(|api| self.find_in(release, *api, rclass, package_type).is_ok())
            .collect()
    }

    /// Every CRD the provider renamed, by group and plural.
    pub fn renames(&self) -> &[Rename] {
        &self.renames
    }

    /// Whether two (apiVersion, kind) name one CRD: the same group and kind, or the kind names of
    /// one renamed CRD in different releases ([`Rename`]). The version is not compared: a CRD
    /// serves its objects at each of its versions.
    pub fn same_crd(&self, a: (&str, &str), b: (&str, &str)) -> bool {
        let (group_a, group_b) = (api_group(a.0), api_group(b.0));
        if group_a != group_b {
            return false;
        }
        if a.1 == b.1 {
            return true;
        }
        let plural = |kind: &str| {
            self.renames
                .iter()
                .find(|r| r.group == group_a && (r.from == kind || r.to == kind))
                .map(|r| r.plural)
        };
        plural(a.1).is_some_and(|p| plural(b.1) == Some(p))
    }

    /// Whether (apiVersion, kind) is a repository kind of any release, API generation or
    /// scope the catalog knows (the version is not compared, as in [`Catalog::same_crd`]).
    pub fn is_repository_kind(&self, api_version: &str, kind: &str) -> bool {
        let group = api_group(api_version);
        self.kinds
            .iter()
            .any(|k| k.kind == kind && api_group(&k.api_version) == group)
    }

    /// The rename that took `from` (of `api_version`'s group) to another name, if any.
    pub fn rename_of(&self, api_version: &str, from: &str) -> Option<&Rename> {
        let group = api_group(api_version);
        self.renames
            .iter()
            .find(|r| r.group == group && r.from == from)
    }

    /// The `forProvider` schema of a kind.
    pub fn for_provider(&self, kind: &Kind) -> Option<NodeId> {
        self.node(kind.spec).properties.get("forProvider").copied()
    }

    /// Whether a kind's `forProvider` has the field `name`.
    pub fn for_provider_has(&self, kind: &Kind, name: &str) -> bool {
        self.for_provider(kind)
            .is_some_and(|node| self.node(node).properties.get(name).is_some())
    }

    /// The `providerConfigRef` schema of a kind.
    pub fn provider_config_ref(&self, kind: &Kind) -> Option<NodeId> {
        self.node(kind.spec)
            .properties
            .get("providerConfigRef")
            .copied()
    }
}

#[cfg(test)]
mod tests;
