//! Writing a message's fields as JSON members and reading them back, with the path of every
//! field in the errors.

use super::*;

/// One JSON object, leaving out fields at their default value.
#[derive(Default)]
pub(super) struct Writer(Map<String, Value>);

impl Writer {
    pub(super) fn always(&mut self, name: &str, value: Value) {
        self.0.insert(name.to_owned(), value);
    }

    pub(super) fn string(&mut self, name: &str, value: &str) {
        if !value.is_empty() {
            self.always(name, Value::String(value.to_owned()));
        }
    }

    pub(super) fn message(&mut self, name: &str, value: Option<Value>) {
        if let Some(value) = value {
            self.always(name, value);
        }
    }

    pub(super) fn enum_(&mut self, name: &str, value: i32, names: fn(i32) -> Option<&'static str>) {
        if value != 0 {
            self.always(name, enum_value(value, names));
        }
    }

    pub(super) fn enum_list(
        &mut self,
        name: &str,
        values: &[i32],
        names: fn(i32) -> Option<&'static str>,
    ) {
        if !values.is_empty() {
            let items = values.iter().map(|v| enum_value(*v, names)).collect();
            self.always(name, Value::Array(items));
        }
    }

    pub(super) fn list<T>(&mut self, name: &str, items: &[T], item: impl Fn(&T) -> Value) {
        if !items.is_empty() {
            self.always(name, Value::Array(items.iter().map(item).collect()));
        }
    }

    pub(super) fn map<T>(
        &mut self,
        name: &str,
        map: &BTreeMap<String, T>,
        item: impl Fn(&T) -> Value,
    ) {
        if !map.is_empty() {
            let object = object_of(map.iter().map(|(k, v)| (k.clone(), item(v))));
            self.always(name, Value::Object(object));
        }
    }

    pub(super) fn finish(self) -> Value {
        Value::Object(self.0)
    }
}

/// An enum by name; a number the schema does not know stays a number.
pub(super) fn enum_value(value: i32, names: fn(i32) -> Option<&'static str>) -> Value {
    match names(value) {
        Some(name) => Value::String(name.to_owned()),
        None => Value::from(value),
    }
}

// ---- reading ----------------------------------------------------------------

/// One JSON object being read as a message, with its path for errors.
pub(super) struct Reader<'a> {
    pub(super) object: &'a Map<String, Value>,
    path: String,
}

impl<'a> Reader<'a> {
    pub(super) fn root(value: &'a Value, message: &str) -> Parsed<Reader<'a>> {
        match value {
            Value::Object(object) => Ok(Reader {
                object,
                path: String::new(),
            }),
            other => Err(JsonError {
                path: String::new(),
                message: format!("a {message} must be a JSON object, not {}", kind(other)),
            }),
        }
    }

    pub(super) fn error(&self, message: impl Into<String>) -> JsonError {
        JsonError {
            path: self.path.clone(),
            message: message.into(),
        }
    }

    pub(super) fn child_path(&self, name: &str) -> String {
        if self.path.is_empty() {
            name.to_owned()
        } else {
            format!("{}.{name}", self.path)
        }
    }

    /// The field by its JSON name or its proto name; `null` is not set.
    pub(super) fn field(&self, json: &str, proto: &str) -> Option<(&'a Value, String)> {
        let value = self.object.get(json).or_else(|| self.object.get(proto))?;
        (!value.is_null()).then(|| (value, self.child_path(json)))
    }

    pub(super) fn string(&self, json: &str, proto: &str) -> Parsed<String> {
        Ok(self.optional_string(json, proto)?.unwrap_or_default())
    }

    pub(super) fn optional_string(&self, json: &str, proto: &str) -> Parsed<Option<String>> {
        match self.field(json, proto) {
            None => Ok(None),
            Some((Value::String(s), _)) => Ok(Some(s.clone())),
            Some((other, path)) => Err(expected(path, "a string", other)),
        }
    }

    pub(super) fn duration(
        &self,
        json: &str,
        proto: &str,
    ) -> Parsed<Option<prost_types::Duration>> {
        match self.field(json, proto) {
            None => Ok(None),
            Some((Value::String(s), path)) => duration_from_json(s).map(Some).ok_or(JsonError {
                path,
                message: format!(
                    "{s:?} is not a duration; write seconds with an s, as \"60s\" or \"1.5s\""
                ),
            }),
            Some((other, path)) => Err(expected(path, "a duration string such as \"60s\"", other)),
        }
    }

    pub(super) fn enum_(
        &self,
        json: &str,
        proto: &str,
        parse: fn(&str) -> Option<i32>,
    ) -> Parsed<i32> {
        Ok(self.optional_enum(json, proto, parse)?.unwrap_or(0))
    }

    pub(super) fn optional_enum(
        &self,
        json: &str,
        proto: &str,
        parse: fn(&str) -> Option<i32>,
    ) -> Parsed<Option<i32>> {
        match self.field(json, proto) {
            None => Ok(None),
            Some((value, path)) => enum_from_json(value, path, parse).map(Some),
        }
    }

    pub(super) fn enum_list(
        &self,
        json: &str,
        proto: &str,
        parse: fn(&str) -> Option<i32>,
    ) -> Parsed<Vec<i32>> {
        match self.field(json, proto) {
            None => Ok(Vec::new()),
            Some((Value::Array(items), path)) => items
                .iter()
                .enumerate()
                .map(|(i, item)| enum_from_json(item, format!("{path}[{i}]"), parse))
                .collect(),
            Some((other, path)) => Err(expected(path, "a list", other)),
        }
    }

    pub(super) fn message<T>(
        &self,
        json: &str,
        proto: &str,
        read: impl Fn(&Reader) -> Parsed<T>,
    ) -> Parsed<Option<T>> {
        match self.field(json, proto) {
            None => Ok(None),
            Some((Value::Object(object), path)) => read(&Reader { object, path }).map(Some),
            Some((other, path)) => Err(expected(path, "an object", other)),
        }
    }

    pub(super) fn list<T>(
        &self,
        json: &str,
        proto: &str,
        read: impl Fn(&Reader) -> Parsed<T>,
    ) -> Parsed<Vec<T>> {
        match self.field(json, proto) {
            None => Ok(Vec::new()),
            Some((Value::Array(items), path)) => items
                .iter()
                .enumerate()
                .map(|(i, item)| {
                    let path = format!("{path}[{i}]");
                    match item {
                        Value::Object(object) => read(&Reader { object, path }),
                        other => Err(expected(path, "an object", other)),
                    }
                })
                .collect(),
            Some((other, path)) => Err(expected(path, "a list", other)),
        }
    }

    /// A map field: an object whose values are read by `read`.
    pub(super) fn entries<T>(
        &self,
        json: &str,
        proto: &str,
        read: impl Fn(&Value, String) -> Parsed<T>,
    ) -> Parsed<BTreeMap<String, T>> {
        match self.field(json, proto) {
            None => Ok(BTreeMap::new()),
            Some((Value::Object(object), path)) => {
                // Inserted, not collected: collecting into a map sorts first
                // (crate::core::sorted).
                let mut entries = BTreeMap::new();
                for (key, item) in object {
                    let value = read(item, format!("{path}[{key:?}]"))?;
                    entries.insert(key.clone(), value);
                }
                Ok(entries)
            }
            Some((other, path)) => Err(expected(path, "an object (a map)", other)),
        }
    }

    pub(super) fn map<T>(
        &self,
        json: &str,
        proto: &str,
        read: impl Fn(&Reader) -> Parsed<T>,
    ) -> Parsed<BTreeMap<String, T>> {
        self.entries(json, proto, |item, path| match item {
            Value::Object(object) => read(&Reader { object, path }),
            other => Err(expected(path, "an object", other)),
        })
    }

    pub(super) fn string_map(&self, json: &str, proto: &str) -> Parsed<BTreeMap<String, String>> {
        self.entries(json, proto, |item, path| match item {
            Value::String(s) => Ok(s.clone()),
            other => Err(expected(path, "a string", other)),
        })
    }

    pub(super) fn bytes_map(&self, json: &str, proto: &str) -> Parsed<BTreeMap<String, Vec<u8>>> {
        self.entries(json, proto, |item, path| match item {
            Value::String(s) => base64_decode(s).ok_or(JsonError {
                path,
                message: "is not base64".to_owned(),
            }),
            other => Err(expected(path, "a base64 string", other)),
        })
    }
}

pub(super) fn enum_from_json(
    value: &Value,
    path: String,
    parse: fn(&str) -> Option<i32>,
) -> Parsed<i32> {
    match value {
        Value::String(name) => parse(name).ok_or_else(|| JsonError {
            path,
            message: format!("{name:?} is not a value of this enum"),
        }),
        Value::Number(n) => n
            .as_i64()
            .and_then(|n| i32::try_from(n).ok())
            .ok_or_else(|| expected(path, "an enum name or number", value)),
        other => Err(expected(path, "an enum name or number", other)),
    }
}

pub(super) fn expected(path: String, what: &str, got: &Value) -> JsonError {
    JsonError {
        path,
        message: format!("expected {what}, not {}", kind(got)),
    }
}

pub(crate) fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}
