//! Checking what we render against the provider's schema (from the catalog),
//! so a resource the API server would reject is an error before it is emitted.
//!
//! The rules are those of a Kubernetes structural schema: types, enums,
//! required fields (a default satisfies them), no unknown fields, unique
//! items in `set` lists. The CEL rules are applied by `compose` from the
//! catalog's `requiredWhenManaged`.

use crate::core::catalog::{Catalog, NodeId};
use crate::core::path::FieldPath;
use crate::core::problems::{quoted_at, suggestion, Category, Findings};
use crate::core::validation::openapi::repeated_items;
use crate::proto::{Kind, View};
use serde_json::{Map, Value};

/// Checks `value` against schema node `node`; `path` names it in messages.
pub(crate) fn check(
    catalog: &Catalog,
    node: NodeId,
    value: &Value,
    path: &FieldPath,
    entry: Option<usize>,
    findings: &mut Findings,
) {
    Checker {
        catalog,
        entry,
        findings,
    }
    .check(node, value, path);
}

/// [`check`] for a string, with no `Value` built for it where nothing can be wrong: against
/// a string schema without an enum, as those of the typed fields (`description`, `url`, ...) are.
pub(crate) fn check_text(
    catalog: &Catalog,
    node: NodeId,
    text: &str,
    path: &FieldPath,
    entry: Option<usize>,
    findings: &mut Findings,
) {
    let schema = catalog.node(node);
    if schema.type_ == "string" && schema.enum_values.is_none() {
        return;
    }
    check(catalog, node, &Value::from(text), path, entry, findings);
}

/// [`check`] for a value viewed where the request holds it: a scalar that nothing can be wrong
/// with (of its schema's type, no enum) without making a `Value` of it; anything else as JSON,
/// so that every message is the one [`check`] gives.
pub(crate) fn check_view(
    catalog: &Catalog,
    node: NodeId,
    value: View,
    path: &FieldPath,
    entry: Option<usize>,
    findings: &mut Findings,
) {
    let schema = catalog.node(node);
    if schema.enum_values.is_none() {
        let fine = match (schema.type_.as_str(), value.kind()) {
            ("string", Kind::String(_)) | ("boolean", Kind::Bool(_)) => true,
            ("number", Kind::Number(_)) => true,
            ("integer", Kind::Number(n)) => n.is_i64() || n.is_u64(),
            _ => false,
        };
        if fine {
            return;
        }
    }
    check(catalog, node, &value.to_value(), path, entry, findings);
}

/// [`check`] for an object held as a map, without copying it into a `Value`.
pub(crate) fn check_object(
    catalog: &Catalog,
    node: NodeId,
    object: &Map<String, Value>,
    path: &FieldPath,
    entry: Option<usize>,
    findings: &mut Findings,
) {
    let schema = catalog.node(node);
    let mut checker = Checker {
        catalog,
        entry,
        findings,
    };
    if schema.type_ == "object" && schema.enum_values.is_none() {
        // What `check` does for an object against an object schema without an enum.
        checker.check_object(node, object, path);
    } else {
        checker.check(node, &Value::Object(object.clone()), path);
    }
}

struct Checker<'a> {
    catalog: &'a Catalog,
    entry: Option<usize>,
    findings: &'a mut Findings,
}

impl Checker<'_> {
    fn check(&mut self, id: NodeId, value: &Value, path: &FieldPath) {
        let node = self.catalog.node(id);
        if !type_matches(&node.type_, value) {
            let expected = type_phrase(&node.type_);
            self.problem(
                path,
                format!("expected {expected}, got {}", quoted_at(path, value)),
                format!("write it as {expected}"),
            );
            return;
        }
        if let Some(allowed) = &node.enum_values {
            if !allowed.contains(value) {
                let names: Vec<String> = allowed
                    .iter()
                    .map(|v| v.as_str().map_or(v.to_string(), str::to_owned))
                    .collect();
                let given = value.as_str().unwrap_or_default();
                self.problem_with(
                    path,
                    format!(
                        "{} is not one of {}",
                        quoted_at(path, value),
                        names.join(", ")
                    ),
                    || suggestion(given, names.iter().map(String::as_str)),
                );
            }
        }
        match value {
            Value::Object(object) => self.check_object(id, object, path),
            Value::Array(items) => self.check_array(id, items, path),
            _ => {}
        }
    }

    fn check_object(&mut self, id: NodeId, object: &Map<String, Value>, path: &FieldPath) {
        let node = self.catalog.node(id);
        for (name, field) in object {
            let field_path = path.field(name);
            if let Some(child) = node.properties.get(name) {
                self.check(*child, field, &field_path);
            } else if let Some(child) = node.additional_properties {
                self.check(child, field, &field_path);
            } else {
                self.problem_with(
                    &field_path,
                    format!("unknown field \"{name}\" for this kind"),
                    || {
                        let known = suggestion(name, node.properties.names());
                        format!("remove it or correct its name: {known}")
                    },
                );
            }
        }
        for name in &node.required {
            let defaulted = node
                .properties
                .get(name)
                .is_some_and(|c| self.catalog.node(*c).default.is_some());
            if !object.contains_key(name) && !defaulted {
                self.problem(
                    &path.field(name),
                    format!("required field \"{name}\" is missing"),
                    format!("set {name}"),
                );
            }
        }
    }

    fn check_array(&mut self, id: NodeId, items: &[Value], path: &FieldPath) {
        let node = self.catalog.node(id);
        if let Some(item_node) = node.items {
            for (index, item) in items.iter().enumerate() {
                self.check(item_node, item, &path.index(index));
            }
        }
        if node.list_type.as_deref() == Some("set") {
            for index in repeated_items(items) {
                self.problem(
                    &path.index(index),
                    format!(
                        "{} appears twice in a list that is a set",
                        quoted_at(path, &items[index])
                    ),
                    "list each value once",
                );
            }
        }
    }

    fn problem(&mut self, path: &FieldPath, message: String, fix: impl Into<String>) {
        self.problem_with(path, message, || fix.into());
    }

    /// [`Self::problem`] with a fix worked out only if the problem is kept.
    fn problem_with(&mut self, path: &FieldPath, message: String, fix: impl FnOnce() -> String) {
        self.findings.problem_with(
            Category::InvalidProviderFields,
            path.to_string(),
            self.entry,
            message,
            fix,
        );
    }
}

fn type_matches(type_: &str, value: &Value) -> bool {
    match type_ {
        "string" => value.is_string(),
        "boolean" => value.is_boolean(),
        "number" => value.is_number(),
        "integer" => value.is_i64() || value.is_u64(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        _ => true,
    }
}

fn type_phrase(type_: &str) -> &'static str {
    match type_ {
        "string" => "a string",
        "boolean" => "true or false",
        "number" => "a number",
        "integer" => "a whole number",
        "array" => "a list",
        "object" => "an object",
        _ => "a value",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::catalog::{catalog, ProviderApi, Rclass};
    use serde_json::json;

    fn problems(
        api: ProviderApi,
        rclass: Rclass,
        package_type: &str,
        for_provider: Value,
    ) -> Vec<String> {
        let catalog = catalog();
        let kind = catalog.find(api, rclass, package_type).unwrap();
        let mut findings = Findings::default();
        check(
            catalog,
            catalog.for_provider(kind).unwrap(),
            &for_provider,
            &FieldPath::Root("forProvider"),
            None,
            &mut findings,
        );
        findings.problems.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn unknown_fields_get_a_suggestion() {
        let found = problems(
            ProviderApi::Cluster,
            Rclass::Local,
            "maven",
            json!({"xrayIndx": true}),
        );
        assert_eq!(found, vec![
            "forProvider.xrayIndx: unknown field \"xrayIndx\" for this kind; fix: remove it or correct its name: did you mean \"xrayIndex\"?"
        ]);
    }

    #[test]
    fn types_sets_and_nested_required_fields() {
        let found = problems(
            ProviderApi::Cluster,
            Rclass::Federated,
            "maven",
            json!({"xrayIndex": "yes", "propertySets": ["a", "a"], "member": [{"url": "u", "accessTokenSecretRef": {"name": "n"}}]}),
        );
        assert_eq!(found.len(), 4, "{found:#?}");
        assert!(
            found[0].starts_with("forProvider.member[0].accessTokenSecretRef.key: required field")
        );
        assert!(found
            .iter()
            .any(|p| p.starts_with("forProvider.propertySets[1]: \"a\" appears twice")));
        assert!(found
            .iter()
            .any(|p| p.starts_with("forProvider.xrayIndex: expected true or false, got \"yes\"")));
    }
}
