//! `--function-credentials`: Secrets that pipeline steps receive as `credentials`,
//! as `crossplane render` passes them (a step's `credentials` entry of source
//! `Secret` names a Secret by name and namespace).
//!
//! The values travel only into the request of the step that asks for them:
//! nothing here prints or logs them.

use super::load::{str_at, Object, StepCredential};
use super::Result;
use crate::proto::json::base64_decode;
use crate::proto::v1::{credentials, CredentialData, Credentials};
use anyhow::{Context as _, Error};
use serde_json::Value;
use std::collections::BTreeMap;

/// The credentials of one step, by name: each Secret's `data` (base64) and
/// `stringData` (text; it wins, as the API server merges it) as bytes.
pub(super) fn for_step(
    wanted: &[StepCredential],
    secrets: &[Object],
) -> Result<BTreeMap<String, Credentials>> {
    let mut out = BTreeMap::new();
    for credential in wanted {
        let secret = secrets
            .iter()
            .find(|s| {
                str_at(s, &["metadata", "name"]) == credential.secret_name
                    && str_at(s, &["metadata", "namespace"]) == credential.secret_namespace
            })
            .ok_or_else(|| {
                Error::msg(format!("secret {:?} not found", credential.secret_name)).context(
                    format!(
                        "cannot get credentials from secret {:?}",
                        credential.secret_name
                    ),
                )
            })?;
        let data = secret_data(secret).with_context(|| {
            format!(
                "cannot get credentials from secret {:?}",
                credential.secret_name
            )
        })?;
        out.insert(
            credential.name.clone(),
            Credentials {
                source: Some(credentials::Source::CredentialData(CredentialData { data })),
            },
        );
    }
    Ok(out)
}

/// A Secret's keys and values as bytes. An error names the key, never the value.
fn secret_data(secret: &Object) -> Result<BTreeMap<String, Vec<u8>>> {
    let mut data = BTreeMap::new();
    let fields = |name: &str| secret.get(name).and_then(Value::as_object);
    for (key, value) in fields("data").into_iter().flatten() {
        let bytes = value
            .as_str()
            .and_then(base64_decode)
            .ok_or_else(|| Error::msg(format!("data.{key} is not base64")))?;
        data.insert(key.clone(), bytes);
    }
    for (key, value) in fields("stringData").into_iter().flatten() {
        let text = value
            .as_str()
            .ok_or_else(|| Error::msg(format!("stringData.{key} is not a string")))?;
        data.insert(key.clone(), text.as_bytes().to_vec());
    }
    Ok(data)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn secret() -> Object {
        json!({
            "apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "creds", "namespace": "crossplane-system"},
            "data": {"token": "aHVudGVyMg=="},
            "stringData": {"user": "ci"}
        })
        .as_object()
        .unwrap()
        .clone()
    }

    fn wanted(namespace: &str) -> Vec<StepCredential> {
        vec![StepCredential {
            name: "artifactory".into(),
            secret_name: "creds".into(),
            secret_namespace: namespace.into(),
        }]
    }

    #[test]
    fn data_and_string_data_become_bytes() {
        let found = for_step(&wanted("crossplane-system"), &[secret()]).unwrap();
        let Some(credentials::Source::CredentialData(data)) = &found["artifactory"].source else {
            panic!("credential data");
        };
        assert_eq!(data.data["token"], b"hunter2");
        assert_eq!(data.data["user"], b"ci");
    }

    #[test]
    fn a_secret_in_another_namespace_is_not_found() {
        let error = for_step(&wanted("default"), &[secret()]).unwrap_err();
        assert_eq!(
            format!("{error:#}"),
            "cannot get credentials from secret \"creds\": secret \"creds\" not found"
        );
    }

    #[test]
    fn bad_base64_names_the_key_not_the_value() {
        let mut bad = secret();
        bad["data"] = json!({"token": "not base64!"});
        let error = for_step(&wanted("crossplane-system"), &[bad]).unwrap_err();
        assert_eq!(
            format!("{error:#}"),
            "cannot get credentials from secret \"creds\": data.token is not base64"
        );
        assert!(!format!("{error:#}").contains("not base64!"));
    }
}
