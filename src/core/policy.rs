//! Deletion and management policies: reading them and the precedence chain
//! repository entry > composite spec > function input > provider default.

use crate::core::catalog::ProviderApi;
use crate::core::problems::{quoted, suggestion};
use crate::core::reader::{Members, ObjectReader};
use serde::Deserialize;
use serde_json::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[cfg_attr(feature = "codegen", derive(schemars::JsonSchema))]
pub(crate) enum DeletionPolicy {
    Delete,
    Orphan,
}

impl DeletionPolicy {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            DeletionPolicy::Delete => "Delete",
            DeletionPolicy::Orphan => "Orphan",
        }
    }
}

/// The management policies the provider accepts.
pub(crate) const MANAGEMENT_POLICIES: [&str; 6] = [
    "Observe",
    "Create",
    "Update",
    "Delete",
    "LateInitialize",
    "*",
];

/// Reads `deletionPolicy`, reporting values other than Delete and Orphan.
pub(crate) fn read_deletion_policy<'a, M: Members<'a>>(
    reader: &mut ObjectReader<'a, '_, M>,
) -> Option<DeletionPolicy> {
    let text = reader.string("deletionPolicy")?;
    match text {
        "Delete" => Some(DeletionPolicy::Delete),
        "Orphan" => Some(DeletionPolicy::Orphan),
        _ => {
            let path = reader.path_of("deletionPolicy");
            reader.problem(
                path,
                format!("\"{text}\" is not a deletion policy"),
                format!(
                    "use Delete or Orphan ({})",
                    suggestion(text, ["Delete", "Orphan"])
                ),
            );
            None
        }
    }
}

/// Reads `managementPolicies`, reporting unknown policies and an empty list.
pub(crate) fn read_management_policies<'a, M: Members<'a>>(
    reader: &mut ObjectReader<'a, '_, M>,
) -> Option<Vec<String>> {
    let policies: Vec<String> = reader
        .string_list("managementPolicies")?
        .into_iter()
        .map(str::to_owned)
        .collect();
    let path = |reader: &ObjectReader<'a, '_, M>| reader.path_of("managementPolicies");
    let mut valid = true;
    for (index, policy) in policies.iter().enumerate() {
        if !MANAGEMENT_POLICIES.contains(&policy.as_str()) {
            valid = false;
            reader.problem(
                format!("{}[{index}]", path(reader)),
                format!(
                    "{} is not a management policy",
                    quoted(&Value::String(policy.clone()))
                ),
                format!(
                    "use {}: {}",
                    MANAGEMENT_POLICIES.join(", "),
                    suggestion(policy, MANAGEMENT_POLICIES)
                ),
            );
        }
    }
    if policies.is_empty() {
        valid = false;
        reader.problem(
            path(reader),
            "an empty list of management policies would leave the repository unmanaged and unobserved",
            "leave the field out for the default [\"*\"], or list the policies, such as [\"Observe\"]",
        );
    }
    valid.then_some(policies)
}

/// What deleting the managed resource does to the repository in Artifactory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Deletion {
    /// The repository and its artifacts are deleted.
    Delete,
    /// The repository stays in Artifactory.
    Orphan,
}

impl Deletion {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Deletion::Delete => "Delete",
            Deletion::Orphan => "Orphan",
        }
    }
}

/// The effective deletion, by the table of docs/design.md ("Lifecycle").
///
/// `None` policies mean the provider default `["*"]`; `None` deletion policy
/// means the provider default `Delete`. The namespaced API has no deletion
/// policy: there, Delete exactly when the policies are `*` or contain Delete.
pub(crate) fn effective_deletion(
    api: ProviderApi,
    policies: Option<&[String]>,
    deletion_policy: Option<DeletionPolicy>,
) -> Deletion {
    let all = policies.is_none_or(|p| p.iter().any(|x| x == "*"));
    let contains_delete = policies.is_some_and(|p| p.iter().any(|x| x == "Delete"));
    let policy = if api.has_deletion_policy() {
        deletion_policy.unwrap_or(DeletionPolicy::Delete)
    } else {
        DeletionPolicy::Delete
    };
    match (all, contains_delete, policy) {
        (true, _, DeletionPolicy::Delete) => Deletion::Delete,
        (true, _, DeletionPolicy::Orphan) => Deletion::Orphan,
        (false, true, _) => Deletion::Delete,
        (false, false, _) => Deletion::Orphan,
    }
}

/// The management policies of an adopted repository: observe only, unless
/// the entry gives its own (Crossplane's import flow: observe first, then widen).
pub(crate) fn import_policies() -> Vec<String> {
    vec!["Observe".to_owned()]
}

#[cfg(test)]
mod effective_deletion_tests {
    use super::*;

    fn policies(list: &[&str]) -> Option<Vec<String>> {
        Some(list.iter().map(|s| s.to_string()).collect())
    }

    #[test]
    fn the_table_row_by_row() {
        use DeletionPolicy::{Delete as D, Orphan as O};
        let rows: [(Option<Vec<String>>, Option<DeletionPolicy>, Deletion); 8] = [
            (None, None, Deletion::Delete),
            (policies(&["*"]), Some(D), Deletion::Delete),
            (policies(&["*"]), Some(O), Deletion::Orphan),
            (policies(&["Observe", "Delete"]), None, Deletion::Delete),
            (policies(&["Observe", "Delete"]), Some(O), Deletion::Delete),
            (policies(&["Observe", "Create"]), Some(D), Deletion::Orphan),
            (policies(&["Observe"]), None, Deletion::Orphan),
            (policies(&["Observe"]), Some(O), Deletion::Orphan),
        ];
        for (policies, deletion_policy, expected) in rows {
            let got =
                effective_deletion(ProviderApi::Cluster, policies.as_deref(), deletion_policy);
            assert_eq!(got, expected, "{policies:?} {deletion_policy:?}");
        }
    }

    #[test]
    fn namespaced_follows_the_policies_only() {
        let api = ProviderApi::Namespaced;
        assert_eq!(effective_deletion(api, None, None), Deletion::Delete);
        assert_eq!(
            effective_deletion(api, policies(&["Observe", "Delete"]).as_deref(), None),
            Deletion::Delete
        );
        assert_eq!(
            effective_deletion(api, policies(&["Observe", "Update"]).as_deref(), None),
            Deletion::Orphan
        );
    }
}
