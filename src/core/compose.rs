//! Rendering one managed resource per planned repository (docs/design.md, "Rendering"),
//! checked against the provider schema before it is emitted.

use crate::core::catalog::{catalog, NodeId, Rclass};
use crate::core::input::Input;
use crate::core::keys::{key_label, KEY_LABEL};
use crate::core::path::FieldPath;
use crate::core::plan::{Planned, Setting};
use crate::core::problems::{masked, quoted_at, suggestion, Category, Findings};
use crate::core::validation;
use crate::core::validation::live::{LiveSchema, LiveSchemas};
use crate::core::validation::openapi::{CompiledSchema, Instance, RULES_SKIPPED};
use crate::proto::{EncodedMembers, ObjectView, ObjectWriter, Struct, View};
use serde_json::{json, Map, Value};
use std::borrow::Cow;

pub(crate) const EXTERNAL_NAME: &str = "crossplane.io/external-name";
pub(crate) const PAUSED: &str = "crossplane.io/paused";
/// How the repository came under the claim (`adoption::Origin`).
pub(crate) const ORIGIN: &str = "artifactory.fn.crossplane.io/origin";

/// Renders the managed resources of one call, one planned repository at a time.
pub(crate) struct Composer<'a> {
    input: &'a Input,
    project_key: Option<&'a str>,
    /// The providerConfigRef schemas that the composite-wide providerConfigRef
    /// (the same for every entry without its own) was checked against: a
    /// second check would report the same problems, which findings keep once.
    shared_reference_checked: Vec<NodeId>,
    /// The schemas the cluster serves, where Crossplane sent them: they replace the
    /// built-in ones.
    live: Option<&'a LiveSchemas<'a>>,
    /// The composite-wide providerConfigRef as a member, encoded the first time an entry
    /// without its own uses it (most entries do), then copied into each resource: which map
    /// it is (its address, only compared), and its bytes.
    shared_reference: Option<(*const Map<String, Value>, EncodedMembers)>,
}

impl<'a> Composer<'a> {
    pub(crate) fn new(input: &'a Input, project_key: Option<&'a str>) -> Self {
        Composer {
            input,
            project_key,
            shared_reference_checked: Vec::new(),
            live: None,
            shared_reference: None,
        }
    }

    /// Checks each resource against the schema the cluster serves for its kind, where
    /// `live` has one, instead of the built-in schema.
    pub(crate) fn with_live(mut self, live: &'a LiveSchemas<'a>) -> Self {
        self.live = (!live.is_empty()).then_some(live);
        self
    }

    /// The managed resource for one planned repository; problems go to `findings`.
    ///
    /// Checked first, then written straight into its wire encoding: the response only needs
    /// the bytes, and a JSON tree built here would be walked once to encode it and once more
    /// to drop it. Members are written in key order, as the equivalent `Map` would encode.
    /// `origin` is the value of the origin annotation ([`ORIGIN`]), where one is written;
    /// `at_provider` what the provider last read of the repository, for fixes that name the
    /// live value; `kept` live values for the fields the claim leaves out, first source first,
    /// where a takeover keeps them (`lifecycle::takeover::Kept`).
    pub(crate) fn compose<'k>(
        &mut self,
        p: &Planned,
        origin: Option<&str>,
        at_provider: Option<ObjectView>,
        kept: impl Iterator<Item = (&'k str, View<'k>)>,
        findings: &mut Findings,
    ) -> Struct {
        let for_provider_path = p.entry.at_field("forProvider");
        let mut for_provider = for_provider(
            p,
            self.input,
            self.project_key,
            &for_provider_path,
            findings,
        );
        keep_live(p, kept, &for_provider_path, &mut for_provider);
        let live = self
            .live
            .and_then(|live| live.get(&p.kind.api_version, &p.kind.kind));
        // A kind the cluster does not serve is reported once for all its entries (by the
        // caller); checking its fields would only add to that.
        if live.is_none() {
            check_for_provider(p, &for_provider, at_provider, findings);
            if let Some(reference) = &p.provider_config_ref {
                self.check_provider_config_ref(p, reference, findings);
            }
        }
        let shared_reference = self.shared_reference(p);
        let resource = Struct::write(|resource| {
            resource.string("apiVersion", &p.kind.api_version);
            resource.string("kind", &p.kind.kind);
            resource.object("metadata", |metadata| write_metadata(p, origin, metadata));
            resource.object("spec", |spec| {
                write_spec(p, &for_provider, shared_reference, spec)
            });
        });
        if let Some(LiveSchema::Served(schema)) = live {
            check_live(p, &for_provider, schema, findings);
        }
        if !matches!(live, Some(LiveSchema::NotServed)) {
            check_remote_url(p, &for_provider, at_provider, findings);
        }
        resource
    }

    /// The composite-wide providerConfigRef member, where `p` uses it, encoded the first
    /// time; `None` where `p` has its own or none.
    fn shared_reference(&mut self, p: &Planned) -> Option<&EncodedMembers> {
        let reference = p.provider_config_ref.as_ref().filter(|r| r.shared)?;
        let map: *const Map<String, Value> = reference.value;
        if self
            .shared_reference
            .as_ref()
            .is_none_or(|(known, _)| !std::ptr::eq(*known, map))
        {
            let encoded = EncodedMembers::write(|member| {
                member.map("providerConfigRef", reference.value);
            });
            self.shared_reference = Some((map, encoded));
        }
        self.shared_reference.as_ref().map(|(_, encoded)| encoded)
    }

    fn check_provider_config_ref(
        &mut self,
        p: &Planned,
        reference: &Setting<&Map<String, Value>>,
        findings: &mut Findings,
    ) {
        let catalog = catalog();
        let Some(node) = catalog.provider_config_ref(p.kind) else {
            return;
        };
        if reference.shared {
            if self.shared_reference_checked.contains(&node) {
                return;
            }
            self.shared_reference_checked.push(node);
        }
        validation::check_object(
            catalog,
            node,
            reference.value,
            &reference.path,
            Some(p.entry.index),
            findings,
        );
    }
}

/// The `spec` of a resource this module rendered, read back from its bytes: what the answer
/// asks of the provider, for comparing with what is live.
pub(crate) fn rendered_spec(resource: &Struct) -> Option<ObjectView<'_>> {
    resource.view().get("spec")?.as_object()
}

/// `metadata`: annotations, then labels, each in key order.
fn write_metadata(p: &Planned, origin: Option<&str>, metadata: &mut ObjectWriter) {
    metadata.object("annotations", |annotations| {
        if let Some(origin) = origin {
            annotations.string(ORIGIN, origin);
        }
        annotations.string(EXTERNAL_NAME, &p.key);
        if p.entry.paused {
            annotations.string(PAUSED, "true");
        }
    });
    metadata.object("labels", |labels| {
        labels.string(KEY_LABEL, &key_label(&p.key));
    });
}

/// `spec`, its members in key order: deletionPolicy, forProvider, managementPolicies,
/// providerConfigRef.
/// `shared_reference` is the providerConfigRef member already encoded, where the entry uses
/// the composite-wide one.
fn write_spec(
    p: &Planned,
    for_provider: &Fields,
    shared_reference: Option<&EncodedMembers>,
    spec: &mut ObjectWriter,
) {
    if let Some(policy) = p.deletion_policy {
        spec.string("deletionPolicy", policy.as_str());
    }
    spec.object("forProvider", |fields| {
        for (name, field) in for_provider.iter() {
            match &field.value {
                FieldValue::Json(value) => fields.value(name, value),
                FieldValue::View(value) => fields.view(name, *value),
                FieldValue::Text(text) => fields.string(name, text),
            }
        }
    });
    if let Some(policies) = &p.management_policies {
        spec.strings("managementPolicies", policies.iter().map(String::as_str));
    }
    match (shared_reference, &p.provider_config_ref) {
        (Some(encoded), _) => spec.members(encoded),
        (None, Some(reference)) => spec.map("providerConfigRef", reference.value),
        (None, None) => {}
    }
}

/// A `forProvider` field with the path of the claim field it came from.
/// Fields given in the claim are borrowed from it, not copied.
struct Sourced<'p> {
    value: FieldValue<'p>,
    path: FieldPath<'p>,
}

/// A `forProvider` field's value. Those the claim gives in `forProvider` are viewed where the
/// request holds them, and the typed fields that are strings (`description`, `url`, ...) are
/// borrowed as the text they are: nearly every entry has a description, and a `Value` of it
/// would be a copy per resource.
enum FieldValue<'p> {
    Json(Cow<'p, Value>),
    View(View<'p>),
    Text(&'p str),
}

impl FieldValue<'_> {
    /// As a JSON value, for messages.
    fn to_json(&self) -> Cow<'_, Value> {
        match self {
            FieldValue::Json(value) => Cow::Borrowed(value),
            FieldValue::View(value) => Cow::Owned(value.to_value()),
            FieldValue::Text(text) => Cow::Owned(Value::from(*text)),
        }
    }

    fn is_same(&self, other: &FieldValue) -> bool {
        match (self, other) {
            (FieldValue::Text(a), FieldValue::Text(b)) => a == b,
            (FieldValue::View(view), FieldValue::Text(text))
            | (FieldValue::Text(text), FieldValue::View(view)) => view.as_str() == Some(*text),
            _ => self.to_json() == other.to_json(),
        }
    }
}

/// `forProvider` fields by name, sorted. A repository has a handful, so a
/// sorted list costs less than a tree, and it becomes the output map in one pass.
struct Fields<'p>(Vec<(&'p str, Sourced<'p>)>);

impl<'p> Fields<'p> {
    fn with_capacity(capacity: usize) -> Self {
        Fields(Vec::with_capacity(capacity))
    }

    fn position(&self, name: &str) -> Result<usize, usize> {
        self.0.binary_search_by(|(field, _)| (*field).cmp(name))
    }

    fn get(&self, name: &str) -> Option<&Sourced<'p>> {
        self.position(name).ok().map(|i| &self.0[i].1)
    }

    fn contains(&self, name: &str) -> bool {
        self.position(name).is_ok()
    }

    /// Adds a field named after every field so far, as a `Map`'s fields come, with no search.
    fn push_in_order(&mut self, name: &'p str, field: Sourced<'p>) {
        debug_assert!(self.0.last().is_none_or(|(last, _)| *last < name));
        self.0.push((name, field));
    }

    fn insert(&mut self, name: &'p str, field: Sourced<'p>) {
        match self.position(name) {
            Ok(i) => self.0[i].1 = field,
            Err(i) => self.0.insert(i, (name, field)),
        }
    }

    fn iter(&self) -> impl Iterator<Item = &(&'p str, Sourced<'p>)> {
        self.0.iter()
    }
}

/// The entry's `forProvider` plus its typed fields. `for_provider_path` is
/// the entry's `forProvider` path, which the fields given there borrow.
fn for_provider<'p>(
    p: &'p Planned,
    input: &Input,
    project_key: Option<&'p str>,
    for_provider_path: &'p FieldPath<'p>,
    findings: &mut Findings,
) -> Fields<'p> {
    let entry = p.entry;
    // The typed fields below add at most six.
    let mut fields = Fields::with_capacity(entry.for_provider.map_or(0, ObjectView::len) + 6);
    for (name, value) in entry.for_provider.into_iter().flatten() {
        let path = for_provider_path.field(name);
        if name == "key" {
            findings.problem(
                Category::InvalidProviderFields,
                path.to_string(),
                Some(entry.index),
                format!(
                    "{}: the provider has no forProvider.key; the key is the external name",
                    entry.label()
                ),
                "set key on the repository entry instead",
            );
            continue;
        }
        fields.push_in_order(
            name,
            Sourced {
                value: FieldValue::View(value),
                path,
            },
        );
    }
    let mut typed = |field: &'static str, value: Option<FieldValue<'p>>, path: FieldPath<'p>| {
        if let Some(value) = value {
            merge_typed(p, &mut fields, field, Sourced { value, path }, findings);
        }
    };
    let text = |text: Option<&'p str>| text.map(FieldValue::Text);
    let json = |value: Option<Value>| value.map(|value| FieldValue::Json(Cow::Owned(value)));
    typed(
        "description",
        text(entry.description),
        entry.at_field("description"),
    );
    typed("notes", text(entry.notes), entry.at_field("notes"));
    typed(
        "projectKey",
        text(project_key),
        FieldPath::Root("spec.projectKey"),
    );
    match entry.rclass {
        Some(Rclass::Remote) => {
            typed("url", text(entry.url), entry.at_field("url"));
            typed("username", text(entry.username), entry.at_field("username"));
            if let Some(secret) = &p.password {
                typed(
                    secret.field(),
                    json(Some(secret.reference())),
                    entry.at_field("password"),
                );
                if secret.write_only {
                    typed(
                        "passwordWoVersion",
                        text(secret.version.as_deref()),
                        entry.at_field("password"),
                    );
                }
            }
        }
        Some(Rclass::Virtual) => {
            let members = entry.repositories.is_some() || entry.external_repositories.is_some();
            typed(
                "repositories",
                json(members.then(|| json!(p.member_keys))),
                entry.at_field("repositories"),
            );
            typed(
                "defaultDeploymentRepo",
                text(p.default_deployment_key.as_deref()),
                entry.at_field("defaultDeploymentRepo"),
            );
        }
        Some(Rclass::Federated) => typed(
            "member",
            json(federated_members(p, input)),
            entry.at_field("members"),
        ),
        _ => {}
    }
    // The input's `defaults.projectEnvironments`, in a project, where the entry sets none.
    if let Some(environments) = &input.defaults.project_environments {
        if project_key.is_some()
            && !fields.contains("projectEnvironments")
            && catalog().for_provider_has(p.kind, "projectEnvironments")
        {
            let path = input.at.defaults().field("projectEnvironments");
            let value = FieldValue::Json(Cow::Owned(json!(environments)));
            fields.insert("projectEnvironments", Sourced { value, path });
        }
    }
    fields
}

/// Adds each field of `p`'s kind that the claim leaves out at its live value in `kept`, the
/// first one where two are given. Its path is the claim's `forProvider` field that would
/// set it, which a problem about it names as the place to set it otherwise.
fn keep_live<'p, 'k: 'p>(
    p: &Planned,
    kept: impl Iterator<Item = (&'k str, View<'k>)>,
    for_provider_path: &'p FieldPath<'p>,
    fields: &mut Fields<'p>,
) {
    let catalog = catalog();
    for (name, value) in kept {
        if !fields.contains(name) && catalog.for_provider_has(p.kind, name) {
            let path = for_provider_path.field(name);
            let value = FieldValue::View(value);
            fields.insert(name, Sourced { value, path });
        }
    }
}

/// `members`, or the self member at `<artifactoryUrl>/artifactory/<key>`.
fn federated_members(p: &Planned, input: &Input) -> Option<Value> {
    if let Some(members) = &p.entry.members {
        return Some(Value::Array(members.clone()));
    }
    let url = input.repository_url(&p.key)?;
    Some(json!([{"url": url, "enabled": true}]))
}

/// A typed field and the same field in `forProvider` must agree.
fn merge_typed<'p>(
    p: &Planned,
    fields: &mut Fields<'p>,
    field: &'static str,
    typed: Sourced<'p>,
    findings: &mut Findings,
) {
    if let Some(existing) = fields.get(field) {
        if !existing.value.is_same(&typed.value) {
            let path = typed.path;
            findings.problem(
                Category::InvalidProviderFields,
                existing.path.to_string(),
                Some(p.entry.index),
                format!(
                    "{}: forProvider.{field} is {} but {path} gives {}",
                    p.entry.label(),
                    quoted_at(&existing.path, &existing.value.to_json()),
                    quoted_at(&path, &typed.value.to_json())
                ),
                format!("give {field} once, as {path}"),
            );
        }
        return;
    }
    fields.insert(field, typed);
}

/// Schema of each field, then the fields the CRD's CEL rules require.
fn check_for_provider(
    p: &Planned,
    fields: &Fields,
    at_provider: Option<ObjectView>,
    findings: &mut Findings,
) {
    let catalog = catalog();
    let Some(node_id) = catalog.for_provider(p.kind) else {
        return;
    };
    let node = catalog.node(node_id);
    for (name, field) in fields.iter() {
        match node.properties.get(name) {
            Some(child) => match &field.value {
                FieldValue::Json(value) => validation::check(
                    catalog,
                    *child,
                    value,
                    &field.path,
                    Some(p.entry.index),
                    findings,
                ),
                FieldValue::View(value) => validation::check_view(
                    catalog,
                    *child,
                    *value,
                    &field.path,
                    Some(p.entry.index),
                    findings,
                ),
                FieldValue::Text(text) => validation::check_text(
                    catalog,
                    *child,
                    text,
                    &field.path,
                    Some(p.entry.index),
                    findings,
                ),
            },
            None => findings.problem_with(
                Category::InvalidProviderFields,
                field.path.to_string(),
                Some(p.entry.index),
                format!(
                    "{}: {} has no forProvider field \"{name}\"",
                    p.entry.label(),
                    p.kind.kind
                ),
                || {
                    let known = suggestion(name, node.properties.names());
                    format!("remove it or correct its name: {known}")
                },
            ),
        }
    }
    if creates_or_updates(p.management_policies.as_deref()) {
        for required in &p.kind.required_when_managed {
            if !fields.contains(required) {
                report_required(p, required, at_provider, findings);
            }
        }
    }
}

/// The resource against the schema the cluster serves: types, enums, required fields,
/// unknown fields and the CRD's CEL rules, each violation reported at the claim's field.
///
/// Checked from the values the resource was written from, not from its bytes decoded again:
/// the same members as `compose` writes, but `metadata`, which the schema has no say in.
fn check_live(p: &Planned, fields: &Fields, schema: &CompiledSchema, findings: &mut Findings) {
    let for_provider: Vec<(&str, Instance)> = fields
        .iter()
        .map(|(name, field)| {
            let value = match &field.value {
                FieldValue::Json(value) => Instance::Json(value),
                FieldValue::View(value) => Instance::View(*value),
                FieldValue::Text(text) => Instance::Text(text),
            };
            (*name, value)
        })
        .collect();
    // The members of `spec` in the order `write_spec` writes them: by name.
    let mut spec = Vec::with_capacity(4);
    if let Some(policy) = p.deletion_policy {
        spec.push(("deletionPolicy", Instance::Text(policy.as_str())));
    }
    spec.push(("forProvider", Instance::Members(&for_provider)));
    if let Some(policies) = &p.management_policies {
        spec.push(("managementPolicies", Instance::Texts(policies)));
    }
    if let Some(reference) = &p.provider_config_ref {
        spec.push(("providerConfigRef", Instance::Object(reference.value)));
    }
    let resource = [
        ("apiVersion", Instance::Text(&p.kind.api_version)),
        ("kind", Instance::Text(&p.kind.kind)),
        ("spec", Instance::Members(&spec)),
    ];
    for violation in schema.validate_instance(Instance::Members(&resource)) {
        let (path, message) = violation.split_once(": ").unwrap_or(("", &violation));
        // Said when type errors stopped the rules: the type errors are the news. Anything
        // else at the root (a rule of the whole object, its cost limits) is reported.
        if violation == RULES_SKIPPED {
            continue;
        }
        let fix = if message == "unknown field" {
            "remove it or correct its name: the provider release installed in the cluster has no such field (a newer release may have it)"
        } else {
            "change the value as the schema that the cluster serves for this kind requires"
        };
        findings.problem(
            Category::InvalidProviderFields,
            claim_path(p, fields, path),
            Some(p.entry.index),
            format!(
                "{}: the {} that the cluster serves refuses {path}: {message}",
                p.entry.label(),
                p.kind.kind
            ),
            fix,
        );
    }
}

/// Where a path of the rendered resource came from in the claim: a `forProvider` field at the
/// claim field that gave it, anything else at the entry.
fn claim_path(p: &Planned, fields: &Fields, path: &str) -> String {
    if path == "<root>" {
        return p.entry.path();
    }
    if let Some(rest) = path.strip_prefix("spec.forProvider.") {
        let name_end = rest.find(['.', '[']).unwrap_or(rest.len());
        if let Some(field) = fields.get(&rest[..name_end]) {
            return format!("{}{}", field.path, &rest[name_end..]);
        }
    }
    p.entry
        .field_path(path.strip_prefix("spec.").unwrap_or(path))
}

/// A remote repository proxies its `url`: the provider cannot create one without it, whatever
/// the CRD's rules say (the npm, ansible and huggingfaceml remotes have no rule for it). Where
/// the kind's rules require it, the check of those rules has reported it already.
fn check_remote_url(
    p: &Planned,
    fields: &Fields,
    at_provider: Option<ObjectView>,
    findings: &mut Findings,
) {
    let ruled = p.kind.required_when_managed.iter().any(|f| f == "url");
    if p.kind.rclass == Rclass::Remote
        && !ruled
        && !fields.contains("url")
        && creates_or_updates(p.management_policies.as_deref())
    {
        report_required(p, "url", at_provider, findings);
    }
}

/// The CRDs' CEL rules apply while the policies allow creating or updating.
fn creates_or_updates(policies: Option<&[String]>) -> bool {
    policies.is_none_or(|list| {
        list.iter()
            .any(|p| matches!(p.as_str(), "*" | "Create" | "Update"))
    })
}

/// A field the provider requires is missing; where the provider has read the repository (an
/// import being taken over), the fix names the value it has.
fn report_required(
    p: &Planned,
    field: &str,
    at_provider: Option<ObjectView>,
    findings: &mut Findings,
) {
    let entry = p.entry;
    if let Some(live) = at_provider.and_then(|at| at.get(field)) {
        let value = live.to_value().to_string();
        // A live URL's secrets are not for a message anyone who reads the claim reads.
        let value = match masked(&value) {
            Cow::Borrowed(_) => value,
            Cow::Owned(shown) => format!("{shown} (with what is masked here as the managed resource's status.atProvider.{field} has it)"),
        };
        let claim_field = if field == "url" {
            entry.field_path("url")
        } else {
            entry.field_path(&format!("forProvider.{field}"))
        };
        findings.problem(
            Category::InvalidProviderFields,
            claim_field,
            Some(entry.index),
            format!(
                "{}: {} requires spec.forProvider.{field} while it may create or update the repository",
                entry.label(),
                p.kind.kind
            ),
            format!("set it to {value}, the value the repository has in Artifactory (status.atProvider.{field}), so that taking it over keeps it"),
        );
        return;
    }
    let (path, fix) = match field {
        "url" => (entry.field_path("url"), "set url to the upstream URL, such as https://repo1.maven.org/maven2".to_owned()),
        "member" => (
            entry.field_path("members"),
            "set members (each {url, enabled}), or artifactoryUrl in the function input for a single self member".to_owned(),
        ),
        other => (entry.field_path(&format!("forProvider.{other}")), format!("set forProvider.{other}")),
    };
    findings.problem(
        Category::InvalidProviderFields,
        path,
        Some(entry.index),
        format!(
            "{}: {} requires spec.forProvider.{field} while it may create or update the repository",
            entry.label(),
            p.kind.kind
        ),
        fix,
    );
}
