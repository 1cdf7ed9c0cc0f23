//! How a remote repository gets its password: the provider's secret reference
//! fields for the chosen API, with the Secret's namespace decided here.

use crate::core::catalog::{Kind, ProviderApi, Rclass};
use crate::core::composite::{CompositeMeta, Entry};
use crate::core::problems::{Category, Findings};
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
    write_only: bool,
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
        let namespace = password
            .namespace
            .or(meta.claim_namespace.as_deref())
            .or(meta.namespace.as_deref());
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
        write_only,
        version: None,
    })
}
