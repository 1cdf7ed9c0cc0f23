//! `username` and `password` of a remote entry, as the claim writes them. The
//! function never reads a Secret's data: `plan::password` turns the reference
//! into the provider's fields.

use crate::core::path::FieldPath;
use crate::core::problems::{Category, Findings};
use crate::core::reader::ObjectReader;
use crate::proto::View;

/// `password.secretRef` of an entry, as written.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct PasswordRef<'a> {
    pub name: &'a str,
    pub key: &'a str,
    pub namespace: Option<&'a str>,
}

/// Reads `password` of entry `index`: `{secretRef: {name, key, namespace?}}`.
pub(crate) fn read_password<'a>(
    value: View<'a>,
    index: usize,
    findings: &mut Findings,
) -> Option<PasswordRef<'a>> {
    let path = FieldPath::EntryField(index, "password");
    let mut reader = ObjectReader::new(
        value,
        path,
        Some(index),
        Category::InvalidComposite,
        findings,
    )?;
    let secret_ref = reader.value("secretRef");
    if secret_ref.is_none() {
        reader.problem(
            path.field("secretRef").to_string(),
            "the password has no secretRef",
            "set password.secretRef to {name, key} of the Secret that holds the password",
        );
    }
    reader.finish();
    let secret_path = path.field("secretRef");
    let mut secret = ObjectReader::new(
        secret_ref?,
        secret_path,
        Some(index),
        Category::InvalidComposite,
        findings,
    )?;
    let name = secret.string("name");
    let key = secret.string("key");
    let namespace = secret.string("namespace");
    for (field, given) in [("name", name), ("key", key)] {
        if given.is_none_or(str::is_empty) {
            secret.problem(
                secret_path.field(field).to_string(),
                format!("the password's secretRef has no {field}"),
                format!("set password.secretRef.{field} to the Secret's {field}"),
            );
        }
    }
    secret.finish();
    Some(PasswordRef {
        name: name.filter(|n| !n.is_empty())?,
        key: key.filter(|k| !k.is_empty())?,
        namespace,
    })
}
