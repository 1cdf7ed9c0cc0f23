//! Reading user-written objects field by field, reporting every mistake.
//!
//! serde stops at the first error and cannot suggest the field a typo meant;
//! this reader checks each field's type, remembers which fields it knows, and
//! at the end reports every unknown field with the closest known name.

use crate::problems::{quoted, suggestion, Category, Findings};
use serde_json::{Map, Value};

pub struct ObjectReader<'a, 'f> {
    object: &'a Map<String, Value>,
    path: String,
    entry: Option<usize>,
    category: Category,
    known: Vec<&'static str>,
    ignored: &'static [&'static str],
    findings: &'f mut Findings,
}

impl<'a, 'f> ObjectReader<'a, 'f> {
    /// Starts reading `value`, which must be an object (reported otherwise).
    pub fn new(
        value: &'a Value,
        path: &str,
        entry: Option<usize>,
        category: Category,
        findings: &'f mut Findings,
    ) -> Option<Self> {
        match value.as_object() {
            Some(object) => Some(ObjectReader {
                object,
                path: path.to_owned(),
                entry,
                category,
                known: Vec::new(),
                ignored: &[],
                findings,
            }),
            None => {
                findings.problem(
                    category,
                    path,
                    entry,
                    format!("expected an object, got {}", quoted(value)),
                    "write it as a YAML mapping of fields",
                );
                None
            }
        }
    }

    /// Fields that are allowed but not read (for example those Crossplane adds).
    pub fn ignoring(mut self, fields: &'static [&'static str]) -> Self {
        self.ignored = fields;
        self
    }

    pub fn findings(&mut self) -> &mut Findings {
        self.findings
    }

    /// Reports a problem with this reader's category and repository entry.
    pub fn problem(&mut self, path: String, message: impl Into<String>, fix: impl Into<String>) {
        self.findings
            .problem(self.category, path, self.entry, message, fix);
    }

    pub fn path_of(&self, field: &str) -> String {
        format!("{}.{field}", self.path)
    }

    /// The raw value of a field; `null` counts as absent.
    pub fn value(&mut self, name: &'static str) -> Option<&'a Value> {
        self.known.push(name);
        self.object.get(name).filter(|v| !v.is_null())
    }

    pub fn string(&mut self, name: &'static str) -> Option<String> {
        let value = self.value(name)?;
        match value.as_str() {
            Some(text) => Some(text.to_owned()),
            None => self.wrong_type(name, value, "a string"),
        }
    }

    pub fn bool(&mut self, name: &'static str) -> Option<bool> {
        let value = self.value(name)?;
        match value.as_bool() {
            Some(flag) => Some(flag),
            None => self.wrong_type(name, value, "true or false"),
        }
    }

    pub fn object(&mut self, name: &'static str) -> Option<&'a Map<String, Value>> {
        let value = self.value(name)?;
        match value.as_object() {
            Some(object) => Some(object),
            None => self.wrong_type(name, value, "an object"),
        }
    }

    pub fn array(&mut self, name: &'static str) -> Option<&'a Vec<Value>> {
        let value = self.value(name)?;
        match value.as_array() {
            Some(items) => Some(items),
            None => self.wrong_type(name, value, "a list"),
        }
    }

    /// A list of strings; each wrong item is reported with its index.
    pub fn string_list(&mut self, name: &'static str) -> Option<Vec<String>> {
        let items = self.array(name)?;
        let mut strings = Vec::with_capacity(items.len());
        let mut all_strings = true;
        for (index, item) in items.iter().enumerate() {
            match item.as_str() {
                Some(text) => strings.push(text.to_owned()),
                None => {
                    all_strings = false;
                    let path = format!("{}[{index}]", self.path_of(name));
                    self.findings.problem(
                        self.category,
                        path,
                        self.entry,
                        format!("expected a string, got {}", quoted(item)),
                        "write the item as a string",
                    );
                }
            }
        }
        all_strings.then_some(strings)
    }

    fn wrong_type<T>(&mut self, name: &str, value: &Value, expected: &str) -> Option<T> {
        let path = self.path_of(name);
        self.findings.problem(
            self.category,
            path,
            self.entry,
            format!("expected {expected}, got {}", quoted(value)),
            format!("write {name} as {expected}"),
        );
        None
    }

    /// Reports every field that was neither read nor ignored.
    pub fn finish(self) {
        #[cfg(test)]
        trace::record(&self.path, &self.known);
        let known: Vec<&str> = self.known.clone();
        for name in self.object.keys() {
            if known.contains(&name.as_str()) || self.ignored.contains(&name.as_str()) {
                continue;
            }
            self.findings.problem(
                self.category,
                format!("{}.{name}", self.path),
                self.entry,
                format!("unknown field \"{name}\""),
                format!(
                    "remove it or correct its name: {}",
                    suggestion(name, known.iter().copied())
                ),
            );
        }
    }
}

/// A test hook: which fields each reader read, by path, so tests can compare
/// the fields the hand-written readers accept with the published schemas.
#[cfg(test)]
pub(crate) mod trace {
    use std::cell::RefCell;
    use std::collections::{BTreeMap, BTreeSet};

    type Fields = BTreeMap<String, BTreeSet<&'static str>>;

    thread_local! {
        static TRACE: RefCell<Option<Fields>> = const { RefCell::new(None) };
    }

    pub(crate) fn record(path: &str, known: &[&'static str]) {
        TRACE.with(|trace| {
            if let Some(fields) = trace.borrow_mut().as_mut() {
                fields
                    .entry(normalize(path))
                    .or_default()
                    .extend(known.iter().copied());
            }
        });
    }

    /// Runs `read` and returns the fields read at each path (list indexes as `[]`).
    pub(crate) fn fields_read(read: impl FnOnce()) -> Fields {
        TRACE.with(|trace| *trace.borrow_mut() = Some(Fields::new()));
        read();
        TRACE.with(|trace| trace.borrow_mut().take().unwrap_or_default())
    }

    /// `spec.repositories[3].members[0]` -> `spec.repositories[].members[]`.
    fn normalize(path: &str) -> String {
        let mut out = String::with_capacity(path.len());
        let mut in_index = false;
        for c in path.chars() {
            match c {
                '[' => {
                    in_index = true;
                    out.push_str("[]");
                }
                ']' => in_index = false,
                _ if in_index => {}
                _ => out.push(c),
            }
        }
        out
    }
}
