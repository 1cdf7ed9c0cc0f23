//! Reading user-written objects field by field, reporting every mistake.
//!
//! serde stops at the first error and cannot suggest the field a typo meant;
//! this reader checks each field's type, remembers which fields it knows, and
//! at the end reports every unknown field with the closest known name.

use crate::core::path::FieldPath;
use crate::core::problems::{quoted_at, suggestion, Category, Findings};
use crate::proto::{ListView, ObjectView, View};

pub(crate) struct ObjectReader<'a, 'f, M = LookedUp<'a>> {
    object: ObjectView<'a>,
    members: M,
    /// How many of the object's fields were read: when all were, none is unknown.
    fields_read: usize,
    path: FieldPath<'f>,
    entry: Option<usize>,
    /// The entry's name once read, for the label of type errors.
    entry_name: Option<&'a str>,
    category: Category,
    known: Known,
    ignored: &'static [&'static str],
    findings: &'f mut Findings,
}

/// How a reader finds an object's fields by name.
///
/// The reading methods are always inlined: they are called with constant
/// names, so a `get` that matches the name (as `composite::EntryMembers` does)
/// folds to the field's place, and reading one of the many absent fields of
/// an entry costs a few instructions instead of a call and a search.
pub(crate) trait Members<'a> {
    fn of(object: ObjectView<'a>) -> Self;

    /// The member named `name`, if the object has it.
    fn get(&self, name: &str) -> Option<View<'a>>;
}

/// Fields looked up in the object's map as they are read: the way for
/// objects read once a call. Objects read once per repository entry sort
/// their members by name in one walk instead (see `composite::EntryMembers`).
pub(crate) struct LookedUp<'a> {
    object: ObjectView<'a>,
    names: NameFilter,
}

impl<'a> Members<'a> for LookedUp<'a> {
    fn of(object: ObjectView<'a>) -> Self {
        LookedUp {
            object,
            names: NameFilter::of(object),
        }
    }

    fn get(&self, name: &str) -> Option<View<'a>> {
        if !self.names.may_contain(name) {
            return None;
        }
        self.object.get(name)
    }
}

/// A 64-bit summary of an object's field names, one bit per name chosen by
/// its length and first and last bytes. Most fields a reader asks for are
/// absent (an entry has a handful of the twenty it may have), and the summary
/// rules most of those out without searching the map.
#[derive(Clone, Copy)]
struct NameFilter(u64);

impl NameFilter {
    fn of(object: ObjectView) -> NameFilter {
        NameFilter(object.keys().fold(0, |bits, name| bits | Self::bit(name)))
    }

    fn may_contain(self, name: &str) -> bool {
        self.0 & Self::bit(name) != 0
    }

    fn bit(name: &str) -> u64 {
        let bytes = name.as_bytes();
        let first = usize::from(bytes.first().copied().unwrap_or(0));
        let last = usize::from(bytes.last().copied().unwrap_or(0));
        1 << ((bytes.len() + first * 3 + last * 5) % 64)
    }
}

/// The names a reader looked up, in order (a name looked up twice is listed
/// twice, as the suggestions have always listed it). A reader looks up about
/// twenty names at most, so they are kept inline: one reader per repository
/// entry must not cost allocations.
#[derive(Default)]
struct Known {
    names: [&'static str; Known::INLINE],
    len: usize,
    overflow: Vec<&'static str>,
}

impl Known {
    const INLINE: usize = 24;

    fn push(&mut self, name: &'static str) {
        match self.names.get_mut(self.len) {
            Some(slot) => {
                *slot = name;
                self.len += 1;
            }
            None => self.overflow.push(name),
        }
    }

    fn iter(&self) -> impl Iterator<Item = &'static str> + Clone + '_ {
        self.names[..self.len].iter().chain(&self.overflow).copied()
    }

    fn contains(&self, name: &str) -> bool {
        self.iter().any(|known| known == name)
    }
}

impl<'a, 'f> ObjectReader<'a, 'f> {
    /// Starts reading `value`, which must be an object (reported otherwise).
    pub(crate) fn new(
        value: View<'a>,
        path: FieldPath<'f>,
        entry: Option<usize>,
        category: Category,
        findings: &'f mut Findings,
    ) -> Option<Self> {
        Self::with_members(value, path, entry, category, findings)
    }

    /// Starts reading an object the protocol already guarantees is one (a
    /// `google.protobuf.Struct`), without wrapping it in a `View` first.
    pub(crate) fn of_object(
        object: ObjectView<'a>,
        path: FieldPath<'f>,
        entry: Option<usize>,
        category: Category,
        findings: &'f mut Findings,
    ) -> Self {
        Self::of_members(object, path, entry, category, findings)
    }
}

impl<'a, 'f, M: Members<'a>> ObjectReader<'a, 'f, M> {
    /// [`ObjectReader::new`], finding the fields through `M`.
    pub(crate) fn with_members(
        value: View<'a>,
        path: FieldPath<'f>,
        entry: Option<usize>,
        category: Category,
        findings: &'f mut Findings,
    ) -> Option<Self> {
        match value.as_object() {
            Some(object) => Some(Self::of_members(object, path, entry, category, findings)),
            None => {
                not_an_object(value, &path, entry, category, findings);
                None
            }
        }
    }

    fn of_members(
        object: ObjectView<'a>,
        path: FieldPath<'f>,
        entry: Option<usize>,
        category: Category,
        findings: &'f mut Findings,
    ) -> Self {
        ObjectReader {
            object,
            members: M::of(object),
            fields_read: 0,
            path,
            entry,
            entry_name: None,
            category,
            known: Known::default(),
            ignored: &[],
            findings,
        }
    }

    /// Fields that are allowed but not read (for example those Crossplane adds).
    pub(crate) fn ignoring(mut self, fields: &'static [&'static str]) -> Self {
        self.ignored = fields;
        self
    }

    pub(crate) fn findings(&mut self) -> &mut Findings {
        self.findings
    }

    /// Reports a problem with this reader's category and repository entry.
    pub(crate) fn problem(
        &mut self,
        path: String,
        message: impl Into<String>,
        fix: impl Into<String>,
    ) {
        self.findings
            .problem(self.category, path, self.entry, message, fix);
    }

    /// The path of one of this object's fields, as text (for a message).
    pub(crate) fn path_of(&self, field: &str) -> String {
        self.path.field(field).to_string()
    }

    /// The raw value of a field; `null` counts as absent. Each field is read
    /// once (see [`Self::reread`]), so that `finish` can count them.
    #[inline(always)]
    pub(crate) fn value(&mut self, name: &'static str) -> Option<View<'a>> {
        let value = self.look_up(name);
        if value.is_some() {
            debug_assert!(
                !self.known.contains(name),
                "{name} is read twice: use reread"
            );
            self.fields_read += 1;
        }
        self.known.push(name);
        value.filter(|v| !v.is_null())
    }

    /// [`Self::value`] of a field read before, for a second look. The name is
    /// listed among the known fields again (the suggestions for unknown fields
    /// have always listed it twice then), but the field is counted once.
    #[inline(always)]
    pub(crate) fn reread(&mut self, name: &'static str) -> Option<View<'a>> {
        self.known.push(name);
        self.look_up(name).filter(|v| !v.is_null())
    }

    #[inline(always)]
    fn look_up(&self, name: &str) -> Option<View<'a>> {
        self.members.get(name)
    }

    #[inline(always)]
    pub(crate) fn string(&mut self, name: &'static str) -> Option<&'a str> {
        let value = self.value(name)?;
        match value.as_str() {
            Some(text) => Some(text),
            None => self.wrong_type(name, value, "a string"),
        }
    }

    #[inline(always)]
    pub(crate) fn bool(&mut self, name: &'static str) -> Option<bool> {
        let value = self.value(name)?;
        match value.as_bool() {
            Some(flag) => Some(flag),
            None => self.wrong_type(name, value, "true or false"),
        }
    }

    #[inline(always)]
    pub(crate) fn object(&mut self, name: &'static str) -> Option<ObjectView<'a>> {
        let value = self.value(name)?;
        match value.as_object() {
            Some(object) => Some(object),
            None => self.wrong_type(name, value, "an object"),
        }
    }

    #[inline(always)]
    pub(crate) fn array(&mut self, name: &'static str) -> Option<ListView<'a>> {
        let value = self.value(name)?;
        match value.as_list() {
            Some(items) => Some(items),
            None => self.wrong_type(name, value, "a list"),
        }
    }

    /// A list of strings; each wrong item is reported with its index.
    pub(crate) fn string_list(&mut self, name: &'static str) -> Option<Vec<&'a str>> {
        let items = self.array(name)?;
        let mut strings = Vec::with_capacity(items.len());
        let mut all_strings = true;
        for (index, item) in items.iter().enumerate() {
            match item.as_str() {
                Some(text) => strings.push(text),
                None => {
                    all_strings = false;
                    let path = self.path.field(name).index(index).to_string();
                    let got = quoted_at(&path, &item.to_value());
                    self.findings.problem(
                        self.category,
                        path,
                        self.entry,
                        format!("expected a string, got {got}"),
                        "write the item as a string",
                    );
                }
            }
        }
        all_strings.then_some(strings)
    }

    /// Names the repository entry this reader reads, for its type errors.
    pub(crate) fn set_entry_name(&mut self, name: Option<&'a str>) {
        self.entry_name = name;
    }

    /// `repository "libs": ` for a reader of a repository entry, as its other errors say it.
    fn label(&self) -> String {
        match (self.entry, self.entry_name) {
            (Some(_), Some(name)) => format!("repository \"{name}\": "),
            (Some(index), None) => format!("repository #{index}: "),
            (None, _) => String::new(),
        }
    }

    fn wrong_type<T>(&mut self, name: &str, value: View, expected: &str) -> Option<T> {
        let path = self.path_of(name);
        let label = self.label();
        let got = quoted_at(&path, &value.to_value());
        self.findings.problem(
            self.category,
            path,
            self.entry,
            format!("{label}expected {expected}, got {got}"),
            format!("write {name} as {expected}"),
        );
        None
    }

    /// Reports every field that was neither read nor ignored.
    pub(crate) fn finish(self) {
        #[cfg(test)]
        trace::record(&self.path.to_string(), self.known.iter());
        if self.fields_read == self.object.len() {
            return;
        }
        for name in self.object.keys() {
            if self.known.contains(name) || self.ignored.contains(&name) {
                continue;
            }
            let known = &self.known;
            self.findings.problem_with(
                self.category,
                self.path.field(name).to_string(),
                self.entry,
                format!("unknown field \"{name}\""),
                || {
                    let known = suggestion(name, known.iter());
                    format!("remove it or correct its name: {known}")
                },
            );
        }
    }
}

/// The problem of a value that should be an object. Out of line: readers are made once per
/// entry, and keeping this in [`ObjectReader::with_members`] stopped it from being inlined.
#[cold]
fn not_an_object(
    value: View,
    path: &FieldPath,
    entry: Option<usize>,
    category: Category,
    findings: &mut Findings,
) {
    findings.problem(
        category,
        path.to_string(),
        entry,
        format!(
            "expected an object, got {}",
            quoted_at(path, &value.to_value())
        ),
        "write it as a YAML mapping of fields",
    );
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

    pub(crate) fn record(path: &str, known: impl Iterator<Item = &'static str>) {
        TRACE.with(|trace| {
            if let Some(fields) = trace.borrow_mut().as_mut() {
                fields.entry(normalize(path)).or_default().extend(known);
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
