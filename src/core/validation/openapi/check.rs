//! The structural checks: types, enums, strings and their patterns, lists by their list type,
//! unknown fields.

use super::*;

// ---------------------------------------------------------------------------------------
// Structural checks and CEL rules
// ---------------------------------------------------------------------------------------

/// Collects violations while walking an object alongside its schema.
pub(super) struct Checker<'e> {
    pub(super) compiled: &'e CompiledSchema,
    pub(super) errors: Vec<String>,
    /// A type or enum error was found: the API server then skips the CEL rules.
    pub(super) blocking: bool,
    /// What is left of the object's cost budget (`cel_rules::OBJECT_BUDGET`).
    pub(super) budget: Budget,
    /// A rule ran out of budget, or over its own limit: the API server evaluates no further
    /// rule.
    pub(super) stopped: bool,
}

impl<'e> Checker<'e> {
    pub(super) fn new(compiled: &'e CompiledSchema) -> Self {
        Checker {
            compiled,
            errors: Vec::new(),
            blocking: false,
            budget: Budget::object(),
            stopped: false,
        }
    }

    pub(super) fn error(&mut self, path: &Path, message: impl fmt::Display) {
        self.errors.push(format!("{}: {message}", shown(path)));
    }

    /// OpenAPI checks of `value` and everything below it.
    pub(super) fn value(&mut self, value: Instance<'e>, node: &'e Node, path: &Path) {
        if value.kind() == Kind::Null {
            if !node.nullable {
                self.error(path, "must not be null (the API server would drop it)");
            }
            return;
        }
        if !self.check_type(value, node, path) || !self.check_enum(value, node, path) {
            return;
        }
        match value.kind() {
            Kind::String => self.string(value.as_str().unwrap_or_default(), node, path),
            Kind::Array => self.array(value, node, path),
            Kind::Object => self.object(value, node, path),
            _ => {}
        }
    }

    pub(super) fn check_type(&mut self, value: Instance, node: &Node, path: &Path) -> bool {
        let kind = value.kind();
        let (ok, expected) = match &node.type_ {
            // No type: only int-or-string narrows what is accepted.
            Type::Absent if node.int_or_string => (
                kind == Kind::String || value.is_integer(),
                "integer or string",
            ),
            Type::Absent => (true, ""),
            Type::String => (kind == Kind::String, "string"),
            Type::Boolean => (kind == Kind::Bool, "boolean"),
            Type::Number => (kind == Kind::Number, "number"),
            Type::Integer => (value.is_integer(), "integer"),
            Type::Object => (kind == Kind::Object, "object"),
            Type::Array => (kind == Kind::Array, "array"),
            Type::Unsupported(other) => {
                self.error(path, format!("schema has unsupported type {other:?}"));
                return false;
            }
        };
        if !ok {
            let got = match kind {
                Kind::Number if expected == "integer" => "non-integer number",
                kind => kind_name(kind),
            };
            self.error(path, format!("expected {expected}, got {got}"));
            self.blocking = true;
        }
        ok
    }

    pub(super) fn check_enum(&mut self, value: Instance, node: &Node, path: &Path) -> bool {
        let Some(allowed) = &node.extra().enum_values else {
            return true;
        };
        if allowed
            .iter()
            .any(|option| value.equals(option, node, self.compiled))
        {
            return true;
        }
        let allowed: Vec<String> = allowed.iter().map(Value::to_string).collect();
        let value = value.to_json(node, self.compiled);
        self.error(
            path,
            format!(
                "unsupported value {value}, expected one of: {}",
                allowed.join(", ")
            ),
        );
        self.blocking = true;
        false
    }

    pub(super) fn string(&mut self, s: &str, node: &Node, path: &Path) {
        let extra = node.extra();
        if extra.min_length.is_some() || extra.max_length.is_some() {
            // The API server counts characters, not bytes: a count that reads the whole
            // string, so only where a bound asks for it.
            let length = s.chars().count() as u64;
            if let Some(min) = extra.min_length.filter(|&min| length < min) {
                self.error(path, format!("must have at least {min} characters"));
            }
            if let Some(max) = extra.max_length.filter(|&max| length > max) {
                self.error(path, format!("must have at most {max} characters"));
            }
        }
        if let Some(pattern) = &extra.pattern {
            self.pattern(s, pattern, path);
        }
    }

    /// `pattern`: RE2 syntax and meaning, through the function CEL's `matches()` uses
    /// ([`re2`]). Matching is charged to the object's budget at the matcher's worst case (the
    /// API server's Go matcher is not counted, but is bounded by the pattern's size as ours is
    /// not), so a hostile pattern over a long string stops instead of running for minutes.
    pub(super) fn pattern(&mut self, s: &str, pattern: &str, path: &Path) {
        if self.stopped {
            return;
        }
        let compiled = match re2::compiled(pattern) {
            Ok(compiled) => compiled,
            Err(e) => return self.error(path, format!("pattern {pattern:?}: {e}")),
        };
        let units = compiled.cost(s.chars().count() as u64);
        if units > self.budget.left() {
            self.out_of_budget(path);
            return;
        }
        self.budget = Budget::of(self.budget.left() - units);
        if !compiled.is_match(s) {
            self.error(path, format!("{s:?} does not match pattern {pattern:?}"));
        }
    }

    /// The API server's words when the object's budget is spent.
    pub(super) fn out_of_budget(&mut self, path: &Path) {
        self.stopped = true;
        self.error(
            path,
            format!(
                "validation failed due to running out of cost budget, no further validation \
                 rules will be run (the object's rules cost more than {} units, the API \
                 server's RuntimeCELCostBudget)",
                cel_rules::OBJECT_BUDGET
            ),
        );
    }

    pub(super) fn array(&mut self, value: Instance<'e>, node: &'e Node, path: &Path) {
        let extra = node.extra();
        let items = value.items();
        let count = items.len() as u64;
        if let Some(min) = extra.min_items.filter(|&min| count < min) {
            self.error(path, format!("must have at least {min} items"));
        }
        if let Some(max) = extra.max_items.filter(|&max| count > max) {
            self.error(path, format!("must have at most {max} items"));
        }
        let item_node = self.compiled.at(node.items);
        for (i, item) in items.enumerate() {
            self.value(item, item_node, &Path::Index(path, i));
        }
        if node.list_type != ListType::Other {
            // Compared as whole values, defaults in place: rare lists, made JSON to compare.
            let items: Vec<Value> = value
                .items()
                .map(|item| item.to_json(item_node, self.compiled))
                .collect();
            let path = path.to_string();
            match node.list_type {
                ListType::Set => self.unique_set(&items, &path),
                _ => self.unique_map(&items, &extra.list_map_keys, &path),
            }
        }
    }

    /// `x-kubernetes-list-type: set`: no item may repeat.
    pub(super) fn unique_set(&mut self, items: &[Value], path: &str) {
        for i in repeated_items(items) {
            self.error_at(
                &index_path(path, i),
                format!("duplicate entry {} in a set", items[i]),
            );
        }
    }

    /// `x-kubernetes-list-type: map`: no two items may share their map-key values.
    pub(super) fn unique_map(&mut self, items: &[Value], keys: &[Box<str>], path: &str) {
        let mut seen = HashSet::new();
        for (i, item) in items.iter().enumerate() {
            let id: Vec<String> = keys
                .iter()
                .map(|k| format!("{k}={}", item.get(k.as_ref()).unwrap_or(&Value::Null)))
                .collect();
            let id = id.join(",");
            if !seen.insert(id.clone()) {
                self.error_at(
                    &index_path(path, i),
                    format!("duplicate entry with key {id}"),
                );
            }
        }
    }

    /// [`Checker::error`] at a path already written out.
    pub(super) fn error_at(&mut self, path: &str, message: impl fmt::Display) {
        self.errors.push(format!("{path}: {message}"));
    }

    pub(super) fn object(&mut self, value: Instance<'e>, node: &'e Node, path: &Path) {
        let compiled = self.compiled;
        for name in node.required.iter() {
            if !value.has_member(name, node, compiled) {
                self.error(&Path::Field(path, name), "required field is missing");
            }
        }
        for (key, child) in value.members(node, compiled) {
            if let Some(property) = node.property(key) {
                self.value(child, compiled.at(property), &Path::Field(path, key));
            } else if let Additional::Schema(map_values) = node.additional {
                self.value(child, compiled.at(map_values), &Path::Key(path, key));
            } else if !node.allows_unknown() {
                self.error(&Path::Field(path, key), "unknown field");
            }
        }
    }
}

/// The indexes of the items equal to an earlier item, in order. One pass with a hash set: a
/// comparison of each item with every earlier one took 8 to 12 s for a set of 60,000.
pub(crate) fn repeated_items(items: &[Value]) -> Vec<usize> {
    let mut seen: HashSet<Hashed<'_>, foldhash::fast::RandomState> =
        HashSet::with_capacity_and_hasher(items.len(), Default::default());
    items
        .iter()
        .enumerate()
        .filter(|(_, item)| !seen.insert(Hashed(item)))
        .map(|(i, _)| i)
        .collect()
}

/// A JSON value hashed by its content; equal as the values are.
struct Hashed<'v>(&'v Value);

impl PartialEq for Hashed<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}

impl Eq for Hashed<'_> {}

impl Hash for Hashed<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        std::mem::discriminant(self.0).hash(state);
        match self.0 {
            Value::Null => {}
            Value::Bool(b) => b.hash(state),
            Value::Number(n) => n.hash(state),
            Value::String(s) => s.hash(state),
            Value::Array(items) => {
                items.len().hash(state);
                for item in items {
                    Hashed(item).hash(state);
                }
            }
            // Equal maps may list their members in another order (with serde_json's
            // `preserve_order`): only their size is hashed, equality decides.
            Value::Object(fields) => fields.len().hash(state),
        }
    }
}
