//! The composite resource contract (docs/design.md, "The composite"): what the function reads
//! from the observed composite's `spec`.
//!
//! Reading reports every mistake at once: wrong types, missing required
//! fields, unknown fields (with the closest known name), duplicate names.

use crate::core::catalog::Rclass;
mod password;

use crate::core::path::FieldPath;
use crate::core::policy::{read_deletion_policy, read_management_policies, DeletionPolicy};
use crate::core::problems::{quoted, suggestion, Category, Findings};
use crate::core::reader::{Members, ObjectReader};
use crate::proto::{ObjectView, View};
pub(crate) use password::{read_password, PasswordRef};
use serde_json::{Map, Value};

/// Fields Crossplane adds to a composite's spec; the function ignores them.
pub const CROSSPLANE_SPEC_FIELDS: &[&str] = &[
    "claimRef",
    "compositionRef",
    "compositionRevisionRef",
    "compositionRevisionSelector",
    "compositionSelector",
    "compositionUpdatePolicy",
    "resourceRefs",
    "writeConnectionSecretToRef",
    "publishConnectionDetailsTo",
    "environmentConfigRefs",
    "crossplane",
];

pub(crate) const CLAIM_NAME_LABEL: &str = "crossplane.io/claim-name";
pub(crate) const CLAIM_NAMESPACE_LABEL: &str = "crossplane.io/claim-namespace";

/// The composite's identity, as far as naming needs it.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct CompositeMeta {
    pub api_version: String,
    pub kind: String,
    pub name: String,
    pub namespace: Option<String>,
    pub uid: Option<String>,
    pub claim_name: Option<String>,
    pub claim_namespace: Option<String>,
}

impl CompositeMeta {
    /// The namespace of the team that wrote the claim: a claim's (the claim-namespace label),
    /// else a namespaced composite's own, which its team writes as it would a claim. `None`
    /// for a cluster-scoped composite without a claim, which the platform writes itself.
    pub(crate) fn claim_namespace_or_own(&self) -> Option<&str> {
        self.claim_namespace
            .as_deref()
            .or(self.namespace.as_deref())
    }
}

/// The composite's `spec`, borrowed from the view of the observed composite: a call reads
/// every entry, and copying its strings would cost more than the rest of reading. `forProvider`
/// stays a view, written into the resource from it; the `providerConfigRef`s and federated
/// members, a few a call, are copied out as JSON, as the checks and plan take them.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct CompositeSpec<'a> {
    pub project_key: Option<&'a str>,
    pub provider_config_ref: Option<Map<String, Value>>,
    pub deletion_policy: Option<DeletionPolicy>,
    pub management_policies: Option<Vec<String>>,
    pub repositories: Vec<Entry<'a>>,
}

/// One entry of `spec.repositories`, borrowed from the composite. Required
/// fields are `Option` so an entry with problems can still be checked for the others.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Entry<'a> {
    pub index: usize,
    pub name: Option<&'a str>,
    pub rclass: Option<Rclass>,
    pub package_type: Option<&'a str>,
    pub key: Option<&'a str>,
    pub description: Option<&'a str>,
    pub notes: Option<&'a str>,
    pub url: Option<&'a str>,
    pub repositories: Option<Vec<&'a str>>,
    pub external_repositories: Option<Vec<&'a str>>,
    pub default_deployment_repo: Option<&'a str>,
    /// Federated members that are objects (each is checked as it is read).
    pub members: Option<Vec<Value>>,
    pub for_provider: Option<ObjectView<'a>>,
    pub import: bool,
    pub deletion_policy: Option<DeletionPolicy>,
    pub management_policies: Option<Vec<String>>,
    pub provider_config_ref: Option<Map<String, Value>>,
    pub paused: bool,
    /// Remote repositories: the user name for the upstream.
    pub username: Option<&'a str>,
    /// Remote repositories: the Secret key that holds the upstream password.
    pub password: Option<PasswordRef<'a>>,
}

impl Entry<'_> {
    /// `spec.repositories[3]`, not yet formatted.
    pub(crate) fn at(&self) -> FieldPath<'static> {
        FieldPath::Entry(self.index)
    }

    /// `spec.repositories[3]`.
    pub(crate) fn path(&self) -> String {
        self.at().to_string()
    }

    /// `spec.repositories[3].key`, not yet formatted.
    pub(crate) fn at_field<'f>(&self, field: &'f str) -> FieldPath<'f> {
        FieldPath::EntryField(self.index, field)
    }

    /// `spec.repositories[3].key`.
    pub(crate) fn field_path(&self, field: &str) -> String {
        self.at_field(field).to_string()
    }

    /// How messages name the entry: `repository "libs-release"`.
    pub(crate) fn label(&self) -> String {
        match self.name {
            Some(name) => format!("repository \"{name}\""),
            None => format!("repository #{}", self.index),
        }
    }
}

/// Reads the observed composite's metadata.
pub(crate) fn read_meta(composite: ObjectView) -> CompositeMeta {
    let text = |v: Option<View>| v.and_then(View::as_str).map(str::to_owned);
    let metadata = composite.get("metadata");
    let meta = |name: &str| text(metadata.and_then(|m| m.get(name)));
    let labels = metadata.and_then(|m| m.get("labels"));
    let label = |name: &str| text(labels.and_then(|l| l.get(name)));
    CompositeMeta {
        api_version: text(composite.get("apiVersion")).unwrap_or_default(),
        kind: text(composite.get("kind")).unwrap_or_default(),
        name: meta("name").unwrap_or_default(),
        namespace: meta("namespace").filter(|n| !n.is_empty()),
        uid: meta("uid"),
        claim_name: label(CLAIM_NAME_LABEL),
        claim_namespace: label(CLAIM_NAMESPACE_LABEL),
    }
}

/// Reads `spec` of the observed composite.
pub(crate) fn read_spec<'a>(
    composite: ObjectView<'a>,
    findings: &mut Findings,
) -> CompositeSpec<'a> {
    let mut spec = CompositeSpec::default();
    let Some(spec_value) = composite.get("spec") else {
        findings.problem(
            Category::InvalidComposite,
            "spec",
            None,
            "the composite has no spec",
            "give the composite a spec with a repositories list (it may be empty)",
        );
        return spec;
    };
    let Some(reader) = ObjectReader::new(
        spec_value,
        FieldPath::Root("spec"),
        None,
        Category::InvalidComposite,
        findings,
    ) else {
        return spec;
    };
    let mut spec_reader = reader.ignoring(CROSSPLANE_SPEC_FIELDS);
    spec.project_key = read_project_key(&mut spec_reader);
    spec.provider_config_ref = spec_reader
        .object("providerConfigRef")
        .map(ObjectView::to_map);
    spec.deletion_policy = read_deletion_policy(&mut spec_reader);
    spec.management_policies = read_management_policies(&mut spec_reader);
    match spec_reader.array("repositories") {
        Some(items) => {
            spec.repositories = items
                .iter()
                .enumerate()
                .map(|(index, item)| read_entry(index, item, spec_reader.findings()))
                .collect();
        }
        None if spec_value.get("repositories").is_none_or(View::is_null) => spec_reader.problem(
            "spec.repositories".to_owned(),
            "the repositories list is missing",
            "add spec.repositories (an empty list renders nothing)",
        ),
        None => {}
    }
    spec_reader.finish();
    check_unique_names(&spec.repositories, findings);
    spec
}

fn read_project_key<'a>(reader: &mut ObjectReader<'a, '_>) -> Option<&'a str> {
    let project_key = reader.string("projectKey")?;
    if is_project_key(project_key) {
        return Some(project_key);
    }
    reader.problem(
        "spec.projectKey".to_owned(),
        format!("\"{project_key}\" is not a JFrog project key (rule: ^[a-z][a-z0-9-]{{1,31}}$)"),
        "use 2 to 32 lower-case letters, digits or '-', starting with a letter",
    );
    None
}

/// `^[a-z][a-z0-9-]{1,31}$`
pub(crate) fn is_project_key(text: &str) -> bool {
    let mut chars = text.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && (2..=32).contains(&text.len())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

/// A DNS-1123 label: what Crossplane accepts as a composition resource name.
pub(crate) fn is_dns_label(text: &str) -> bool {
    let bytes = text.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= 63
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
        && bytes[0] != b'-'
        && bytes[bytes.len() - 1] != b'-'
}

/// Reads repository entries: a call reads every one.
type EntryReader<'a, 'f> = ObjectReader<'a, 'f, EntryMembers<'a>>;

/// A repository entry's members, sorted by field in one walk over its map.
/// An entry has a handful of the nineteen fields it may have, and looking
/// each of them up in the map cost more than the rest of reading the entry.
struct EntryMembers<'a>([Option<View<'a>>; EntryMembers::FIELDS]);

impl EntryMembers<'_> {
    const FIELDS: usize = 19;

    /// Where a field of an entry is kept; `None` for a name the entry may not have.
    #[inline(always)]
    fn slot(name: &str) -> Option<usize> {
        Some(match name {
            "name" => 0,
            "rclass" => 1,
            "packageType" => 2,
            "key" => 3,
            "description" => 4,
            "notes" => 5,
            "url" => 6,
            "repositories" => 7,
            "externalRepositories" => 8,
            "defaultDeploymentRepo" => 9,
            "members" => 10,
            "forProvider" => 11,
            "import" => 12,
            "deletionPolicy" => 13,
            "managementPolicies" => 14,
            "providerConfigRef" => 15,
            "paused" => 16,
            "username" => 17,
            "password" => 18,
            _ => return None,
        })
    }
}

impl<'a> Members<'a> for EntryMembers<'a> {
    fn of(object: ObjectView<'a>) -> Self {
        let mut members = EntryMembers([None; Self::FIELDS]);
        for (name, value) in object.iter() {
            // Unknown names are left to `ObjectReader::finish`, which finds
            // them by counting the fields read.
            if let Some(slot) = Self::slot(name) {
                members.0[slot] = Some(value);
            }
        }
        members
    }

    #[inline(always)]
    fn get(&self, name: &str) -> Option<View<'a>> {
        self.0[Self::slot(name)?]
    }
}

fn read_entry<'a>(index: usize, value: View<'a>, findings: &mut Findings) -> Entry<'a> {
    let mut entry = Entry {
        index,
        ..Entry::default()
    };
    let Some(mut reader) = EntryReader::with_members(
        value,
        entry.at(),
        Some(index),
        Category::InvalidComposite,
        findings,
    ) else {
        return entry;
    };
    entry.name = read_name(&mut reader, &entry);
    reader.set_entry_name(entry.name);
    entry.rclass = read_rclass(&mut reader, &entry);
    entry.package_type = read_required_string(
        &mut reader,
        &entry,
        "packageType",
        "a package type such as maven, npm or docker",
    );
    entry.key = reader.string("key");
    entry.description = reader.string("description");
    entry.notes = reader.string("notes");
    entry.url = reader.string("url");
    entry.repositories = reader.string_list("repositories");
    entry.external_repositories = reader.string_list("externalRepositories");
    entry.default_deployment_repo = reader.string("defaultDeploymentRepo");
    entry.members = read_members(&mut reader, &entry);
    entry.for_provider = reader.object("forProvider");
    entry.import = reader.bool("import").unwrap_or(false);
    entry.deletion_policy = read_deletion_policy(&mut reader);
    entry.management_policies = read_management_policies(&mut reader);
    entry.provider_config_ref = reader.object("providerConfigRef").map(ObjectView::to_map);
    entry.paused = reader.bool("paused").unwrap_or(false);
    entry.username = reader.string("username");
    entry.password = reader
        .value("password")
        .and_then(|password| read_password(password, index, reader.findings()));
    reader.finish();
    entry
}

fn read_required_string<'a>(
    reader: &mut EntryReader<'a, '_>,
    entry: &Entry,
    field: &'static str,
    what: &str,
) -> Option<&'a str> {
    let value = reader.string(field);
    if value.is_none_or(str::is_empty) && reader.reread(field).is_none_or(View::is_string) {
        reader.problem(
            entry.field_path(field),
            format!("{} has no {field}", entry.label()),
            format!("set {field} to {what}"),
        );
        return None;
    }
    value
}

fn read_name<'a>(reader: &mut EntryReader<'a, '_>, entry: &Entry) -> Option<&'a str> {
    let name = read_required_string(
        reader,
        entry,
        "name",
        "a DNS-1123 label, such as libs-release",
    )?;
    if is_dns_label(name) {
        return Some(name);
    }
    reader.problem(
        entry.field_path("name"),
        format!(
            "{} is not a DNS-1123 label (lower-case letters, digits and '-', starting and ending with a letter or digit, at most 63 characters)",
            quoted(&Value::String(name.to_owned()))
        ),
        "rename the entry; the repository key can still be anything valid through `key` or the naming format",
    );
    None
}

fn read_rclass(reader: &mut EntryReader, entry: &Entry) -> Option<Rclass> {
    let text = read_required_string(
        reader,
        entry,
        "rclass",
        "local, remote, virtual or federated",
    )?;
    let rclass = Rclass::parse(text);
    if rclass.is_none() {
        reader.problem(
            entry.field_path("rclass"),
            format!("\"{text}\" is not a repository class"),
            format!(
                "use local, remote, virtual or federated: {}",
                suggestion(text, Rclass::NAMES)
            ),
        );
    }
    rclass
}

/// Federated members: `{url, enabled, accessTokenSecretRef}` each.
fn read_members<'a>(reader: &mut EntryReader<'a, '_>, entry: &Entry) -> Option<Vec<Value>> {
    let items = reader.array("members")?;
    let mut members = Vec::with_capacity(items.len());
    let members_path = entry.at_field("members");
    for (index, item) in items.iter().enumerate() {
        let path = members_path.index(index);
        let Some(mut member) = ObjectReader::new(
            item,
            path,
            Some(entry.index),
            Category::InvalidComposite,
            reader.findings(),
        ) else {
            continue;
        };
        let url = member.string("url");
        member.bool("enabled");
        member.object("accessTokenSecretRef");
        if url.is_none_or(str::is_empty) {
            member.problem(
                path.field("url").to_string(),
                "the member has no url",
                "set url to the member's repository URL, ending in its key",
            );
        }
        member.finish();
        members.push(item.to_value());
    }
    Some(members)
}

fn check_unique_names(entries: &[Entry], findings: &mut Findings) {
    // Hashed, not ordered: only the first entry of each name is looked up.
    let mut first_by_name: std::collections::HashMap<&str, &Entry, foldhash::fast::RandomState> =
        std::collections::HashMap::with_capacity_and_hasher(entries.len(), Default::default());
    for entry in entries {
        let Some(name) = entry.name else {
            continue;
        };
        let first = *first_by_name.entry(name).or_insert(entry);
        if first.index != entry.index {
            findings.problem(
                Category::InvalidComposite,
                entry.field_path("name"),
                Some(entry.index),
                format!("name \"{name}\" is already used by {}", first.path()),
                "give every entry its own name: it identifies the composed resource",
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(spec: Value) -> (CompositeSpec<'static>, Vec<String>) {
        let mut findings = Findings::default();
        // The spec borrows the composite: leaked, it lives as long as the test.
        let composite = Box::leak(Box::new(json!({ "spec": spec })));
        let spec = read_spec(
            ObjectView::Json(composite.as_object().unwrap()),
            &mut findings,
        );
        (
            spec,
            findings.problems.iter().map(ToString::to_string).collect(),
        )
    }

    #[test]
    fn reads_a_full_entry() {
        let (spec, problems) = read(json!({
            "projectKey": "team1", "claimRef": {"name": "x"},
            "repositories": [{
                "name": "libs", "rclass": "virtual", "packageType": "maven", "key": "team1-libs",
                "repositories": ["a"], "externalRepositories": ["b"], "defaultDeploymentRepo": "a",
                "forProvider": {"xrayIndex": true}, "import": true, "paused": true,
                "deletionPolicy": "Orphan", "managementPolicies": ["Observe"], "providerConfigRef": {"name": "eu"}
            }]
        }));
        assert!(problems.is_empty(), "{problems:?}");
        let entry = &spec.repositories[0];
        assert_eq!(entry.rclass, Some(Rclass::Virtual));
        assert_eq!(entry.deletion_policy, Some(DeletionPolicy::Orphan));
        assert!(entry.import && entry.paused);
    }

    #[test]
    fn reports_every_problem_with_its_path() {
        let (_, problems) = read(json!({
            "projectKey": "Team1",
            "repositories": [
                {"name": "Libs", "rclass": "locl", "packageType": "maven", "descripton": "x"},
                {"name": "b", "packageType": 3},
                {"name": "b", "rclass": "local", "packageType": "npm"}
            ]
        }));
        let paths: Vec<&str> = problems
            .iter()
            .map(|p| p.split(':').next().unwrap())
            .collect();
        assert_eq!(
            paths,
            [
                "spec.projectKey",
                "spec.repositories[0].name",
                "spec.repositories[0].rclass",
                "spec.repositories[0].descripton",
                "spec.repositories[1].rclass",
                "spec.repositories[1].packageType",
                "spec.repositories[2].name",
            ]
        );
        assert!(
            problems[2].contains("did you mean \"local\"?"),
            "{}",
            problems[2]
        );
        assert!(
            problems[3].contains("did you mean \"description\"?"),
            "{}",
            problems[3]
        );
    }

    #[test]
    fn missing_repositories_is_an_error_but_empty_is_fine() {
        assert_eq!(read(json!({})).1.len(), 1);
        assert!(read(json!({"repositories": []})).1.is_empty());
        assert_eq!(
            read(json!({"repositories": [], "projectKy": "a"})).1.len(),
            1
        );
    }
}
