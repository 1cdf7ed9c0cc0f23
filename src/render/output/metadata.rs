//! Metadata as apimachinery's `Unstructured` reads and writes it: a missing map is made on
//! write, a field of the wrong type is replaced, an empty name or namespace removes the field,
//! and string maps (labels, annotations) are merged key by key.

use crate::render::load::{object_at, Object};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

/// The object under `key`, replacing anything that is not an object.
pub(super) fn object_entry<'a>(object: &'a mut Object, key: &str) -> &'a mut Object {
    let entry = object
        .entry(key)
        .or_insert_with(|| Value::Object(Map::new()));
    if !entry.is_object() {
        *entry = Value::Object(Map::new());
    }
    entry.as_object_mut().expect("just made an object")
}

/// `SetName`, `SetNamespace`, `SetGenerateName`: an empty value removes the field.
pub(super) fn set_metadata_string(object: &mut Object, field: &str, value: &str) {
    if value.is_empty() {
        if let Some(Value::Object(metadata)) = object.get_mut("metadata") {
            metadata.remove(field);
        }
    } else {
        object_entry(object, "metadata").insert(field.into(), json!(value));
    }
}

/// A string map as apimachinery reads labels and annotations: empty when any
/// value is not a string.
pub(super) fn string_map(object: Option<&Object>) -> BTreeMap<String, String> {
    let entries = object.map(|o| {
        o.iter()
            .map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
            .collect()
    });
    entries.flatten().unwrap_or_default()
}

/// `meta.AddLabels` / `meta.AddAnnotations`.
pub(super) fn add_strings<'a>(
    object: &mut Object,
    field: &str,
    entries: impl IntoIterator<Item = (&'a str, &'a str)>,
) {
    let mut map = string_map(object_at(object, &["metadata", field]));
    map.extend(
        entries
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string())),
    );
    let value = map
        .into_iter()
        .map(|(k, v)| (k, Value::String(v)))
        .collect();
    object_entry(object, "metadata").insert(field.into(), Value::Object(value));
}
