//! How a remote repository gets its password: the provider's secret reference
//! fields for the chosen API, with the Secret's namespace decided here.

use crate::core::catalog::{Kind, ProviderApi, Rclass};
use crate::core::composite::{CompositeMeta, Entry};
use crate::core::input::Input;
use crate::core::path::FieldPath;
use crate::core::problems::{Category, Findings};
use crate::proto::{Kind as ValueKind, View};
use serde_json::{json, Map, Value};

/// How a planned remote repository gets its password.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SecretUse {
    pub name: String,
    pub key: String,
    /// The Secret's namespace: where it is looked up.
    pub namespace: Option<String>,
    /// Whether the reference carries the namespace (the cluster-scoped APIs);
    /// the namespaced API's references are local.
    pub namespaced_reference: bool,
    /// `passwordWoSecretRef` + `passwordWoVersion` rather than `passwordSecretRef`.
    pub write_only: bool,
    /// The Secret's `resourceVersion`, once required resources bring it.
    pub version: Option<String>,
}

impl SecretUse {
    /// The forProvider field the reference goes to.
    pub(crate) fn field(&self) -> &'static str {
        if self.write_only {
            "passwordWoSecretRef"
        } else {
            "passwordSecretRef"
        }
    }

    /// The reference as the provider's CRD spells it.
    pub(crate) fn reference(&self) -> Value {
        let mut reference = Map::new();
        reference.insert("key".into(), json!(self.key));
        reference.insert("name".into(), json!(self.name));
        if self.namespaced_reference {
            if let Some(namespace) = &self.namespace {
                reference.insert("namespace".into(), json!(namespace));
            }
        }
        Value::Object(reference)
    }
}

/// How an entry's password is rendered for `kind`; problems go to `findings`.
pub(crate) fn plan_password(
    entry: &Entry,
    kind: &Kind,
    meta: &CompositeMeta,
    input: &Input,
    findings: &mut Findings,
) -> Option<SecretUse> {
    if kind.rclass != Rclass::Remote {
        for (field, given) in [
            ("username", entry.username.is_some()),
            ("password", entry.password.is_some()),
        ] {
            if given {
                findings.problem(
                    Category::InvalidComposite,
                    entry.field_path(field),
                    Some(entry.index),
                    format!(
                        "{}: {field} is for remote repositories, and this one is {}",
                        entry.label(),
                        kind.rclass
                    ),
                    format!("remove {field}, or make the entry a remote"),
                );
            }
        }
        return None;
    }
    let password = entry.password.as_ref()?;
    let namespace_path = || entry.field_path("password.secretRef.namespace");
    let (namespace, namespaced_reference) = if kind.api == ProviderApi::Namespaced {
        let own = meta.namespace.as_deref();
        if let Some(given) = password.namespace.filter(|given| Some(*given) != own) {
            findings.problem(
                Category::InvalidComposite,
                namespace_path(),
                Some(entry.index),
                format!(
                    "{}: the Secret's namespace \"{given}\" is not the composite's ({}): the namespaced provider API references Secrets in the managed resource's own namespace only",
                    entry.label(),
                    own.unwrap_or("none")
                ),
                "put the Secret in the composite's namespace and remove password.secretRef.namespace",
            );
            return None;
        }
        (own.map(str::to_owned), false)
    } else {
        let claims = meta.claim_namespace_or_own();
        let namespace = password.namespace.or(claims);
        if let (Some(given), Some(claims)) = (namespace, claims) {
            if !may_reference(given, claims, input) {
                refuse_namespace(entry, namespace_path(), given, claims, findings);
                return None;
            }
        }
        let Some(namespace) = namespace else {
            findings.problem(
                Category::InvalidComposite,
                namespace_path(),
                Some(entry.index),
                format!(
                    "{}: the password's Secret has no namespace, and the composite has no claim or namespace to take it from",
                    entry.label()
                ),
                "set password.secretRef.namespace to the Secret's namespace",
            );
            return None;
        };
        (Some(namespace.to_owned()), true)
    };
    // Asked for; `settle_write_only` keeps it where the provider has the fields.
    Some(SecretUse {
        name: password.name.to_owned(),
        key: password.key.to_owned(),
        namespace,
        namespaced_reference,
        write_only: input.write_only_passwords,
        version: None,
    })
}

/// Whether a claim in namespace `claims` may reference a Secret in `namespace`: its own, or
/// one the platform lists in the input's `allowedSecretNamespaces`.
fn may_reference(namespace: &str, claims: &str, input: &Input) -> bool {
    namespace == claims
        || input
            .allowed_secret_namespaces
            .iter()
            .any(|n| n == namespace)
}

/// A claim's Secret reference that names another namespace than the claim's.
fn refuse_namespace(
    entry: &Entry,
    path: String,
    given: &str,
    claims: &str,
    findings: &mut Findings,
) {
    findings.problem(
        Category::InvalidComposite,
        path,
        Some(entry.index),
        format!(
            "{}: the Secret's namespace \"{given}\" is not the claim's (\"{claims}\"): the provider reads a Secret in any namespace and sends its value to the upstream, so a claim references Secrets in its own namespace only",
            entry.label()
        ),
        format!("put the Secret in namespace \"{claims}\" and name no other namespace, or ask the platform team to list \"{given}\" in the function input's allowedSecretNamespaces"),
    );
}

/// The forProvider fields that name the password's Secret: a claim gives `password` instead,
/// whose namespace is checked.
const PASSWORD_REFERENCES: [&str; 2] = ["passwordSecretRef", "passwordWoSecretRef"];

/// How deep the search for Secret references goes into `forProvider` and `members`: the
/// provider's references are at most three levels down (`member[].accessTokenSecretRef`).
const SECRET_REFERENCE_DEPTH: usize = 8;

/// A claim's Secret references outside `password` (docs/design.md, "Credentials"): the
/// password's own fields in `forProvider` are refused, and every other `...SecretRef` in
/// `forProvider` or a federated entry's `members` (`accessTokenSecretRef`,
/// `valueSecretRef`) names the claim's namespace or one the input allows. A composite that
/// is not a claim keeps every reference as written.
pub(crate) fn check_secret_references(
    entry: &Entry,
    meta: &CompositeMeta,
    input: &Input,
    findings: &mut Findings,
) {
    let Some(claims) = meta.claim_namespace_or_own() else {
        return;
    };
    let at = entry.at_field("forProvider");
    if let Some(for_provider) = entry.for_provider {
        for field in PASSWORD_REFERENCES
            .into_iter()
            .filter(|field| for_provider.get(field).is_some())
        {
            findings.problem(
                Category::InvalidComposite,
                at.field(field).to_string(),
                Some(entry.index),
                format!(
                    "{}: a claim may not set forProvider.{field}: it names a Secret in any namespace, which the provider reads and sends to the upstream",
                    entry.label()
                ),
                format!("remove it, and give the password as password: {{secretRef: {{name, key}}}} of a Secret in the claim's namespace \"{claims}\""),
            );
        }
        for (name, value) in for_provider.iter() {
            if !PASSWORD_REFERENCES.contains(&name) {
                let check = References {
                    entry,
                    claims,
                    input,
                };
                check.walk(name, value, &at.field(name), 0, findings);
            }
        }
    }
    let members = entry.at_field("members");
    for (index, member) in entry.members.iter().flatten().enumerate() {
        let check = References {
            entry,
            claims,
            input,
        };
        check.walk("", View::Json(member), &members.index(index), 0, findings);
    }
}

/// The search for a claim's Secret references in one entry.
struct References<'e, 'a> {
    entry: &'e Entry<'a>,
    claims: &'e str,
    input: &'e Input,
}

impl References<'_, '_> {
    /// `value`, found under the field `name` at `at`.
    fn walk(&self, name: &str, value: View, at: &FieldPath, depth: usize, findings: &mut Findings) {
        if depth > SECRET_REFERENCE_DEPTH {
            return;
        }
        match value.kind() {
            ValueKind::Object(object) => {
                let namespace = object.get("namespace").and_then(View::as_str);
                if let Some(given) = namespace.filter(|_| name.ends_with("SecretRef")) {
                    if !may_reference(given, self.claims, self.input) {
                        let path = at.field("namespace").to_string();
                        refuse_namespace(self.entry, path, given, self.claims, findings);
                    }
                    return;
                }
                for (field, item) in object.iter() {
                    self.walk(field, item, &at.field(field), depth + 1, findings);
                }
            }
            ValueKind::List(list) => {
                for (index, item) in list.iter().enumerate() {
                    self.walk(name, item, &at.index(index), depth + 1, findings);
                }
            }
            _ => {}
        }
    }
}
