//! Defaults, seen as the API server writes them: by the compiled nodes while checking, and on
//! a JSON value with its schema.

use super::*;

impl CompiledSchema {
    /// The properties of `node` with a default, in name order: name, default, and whether the
    /// property is nullable.
    pub(super) fn defaults<'s>(
        &'s self,
        node: &'s Node,
    ) -> impl Iterator<Item = (&'s str, &'s Value, bool)> + 's {
        let properties = node.properties.as_deref().unwrap_or_default();
        node.defaulted.iter().filter_map(move |&i| {
            let (name, child) = &properties[i as usize];
            let child = self.at(*child);
            Some((
                name.as_ref(),
                child.extra().default.as_ref()?,
                child.nullable,
            ))
        })
    }

    /// Defaults `value` as the API server would (see [`apply_defaults`]), by the compiled nodes.
    pub(super) fn apply_defaults(&self, value: &mut Value, node: &Node) {
        match value {
            Value::Object(fields) => {
                let properties = node.properties.as_deref().unwrap_or_default();
                for &i in node.defaulted.iter() {
                    let (name, child) = &properties[i as usize];
                    let child = self.at(*child);
                    let Some(default) = &child.extra().default else {
                        continue;
                    };
                    let unset = fields
                        .get(name.as_ref())
                        .is_none_or(|v| v.is_null() && !child.nullable);
                    if unset {
                        fields.insert(name.to_string(), default.clone());
                    }
                }
                for (key, child) in fields.iter_mut() {
                    if let Some(child_node) = node.child(key) {
                        self.apply_defaults(child, self.at(child_node));
                    }
                }
            }
            Value::Array(items) => {
                for item in items {
                    self.apply_defaults(item, self.at(node.items));
                }
            }
            _ => {}
        }
    }
}

/// The schema of `key` inside an object node: a declared property, else the
/// `additionalProperties` schema of a map.
pub(super) fn child_schema<'s>(schema: &'s Value, key: &str) -> Option<&'s Value> {
    schema["properties"]
        .get(key)
        .or_else(|| Some(&schema["additionalProperties"]).filter(|s| s.is_object()))
}

// ---------------------------------------------------------------------------------------
// Defaulting
// ---------------------------------------------------------------------------------------

/// Applies `default:` values like the API server: in every object that is present, a
/// property that is absent (or null while not nullable) gets its default, then defaulting
/// goes on inside every child, defaulted ones included.
pub fn apply_defaults(value: &mut Value, schema: &Value) {
    match value {
        Value::Object(fields) => {
            default_properties(fields, schema);
            for (key, child) in fields.iter_mut() {
                if let Some(child_schema) = child_schema(schema, key) {
                    apply_defaults(child, child_schema);
                }
            }
        }
        Value::Array(items) => {
            for item in items {
                apply_defaults(item, &schema["items"]);
            }
        }
        _ => {}
    }
}

fn default_properties(fields: &mut Map<String, Value>, schema: &Value) {
    let Some(properties) = schema["properties"].as_object() else {
        return;
    };
    for (name, property) in properties {
        let Some(default) = property.get("default") else {
            continue;
        };
        let unset = fields
            .get(name)
            .is_none_or(|v| v.is_null() && !flag(property, "nullable"));
        if unset {
            fields.insert(name.clone(), default.clone());
        }
    }
}
