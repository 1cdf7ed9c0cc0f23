//! Deletion and management policies: reading them and the precedence chain
//! repository entry > composite spec > function input > provider default.

use crate::problems::{quoted, suggestion};
use crate::reader::{Members, ObjectReader};
use serde::Deserialize;
use serde_json::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[cfg_attr(feature = "codegen", derive(schemars::JsonSchema))]
pub enum DeletionPolicy {
    Delete,
    Orphan,
}

impl DeletionPolicy {
    pub fn as_str(self) -> &'static str {
        match self {
            DeletionPolicy::Delete => "Delete",
            DeletionPolicy::Orphan => "Orphan",
        }
    }
}

/// The management policies the provider accepts.
pub const MANAGEMENT_POLICIES: [&str; 6] = [
    "Observe",
    "Create",
    "Update",
    "Delete",
    "LateInitialize",
    "*",
];

/// Reads `deletionPolicy`, reporting values other than Delete and Orphan.
pub fn read_deletion_policy<'a, M: Members<'a>>(
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
pub fn read_management_policies<'a, M: Members<'a>>(
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
