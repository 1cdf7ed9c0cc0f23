//! The values rules see: JSON typed by its schema as the API server does, built once per
//! object, and every value kept cheap to copy.
//!
//! The `cel` crate copies a value whenever it owns one it only borrowed (a list literal's
//! elements, a function's result): for its own lists, maps and strings that is a deep copy, so
//! a rule like `[self, self, ...]` or `range.map(i, self)` would allocate the object again and
//! again at a cost of one unit each. Every list, map, long string and optional we hand it is
//! [`Shared`]: a copy is a reference count, and what a rule allocates is only what its charged
//! operations create.

use cel::common::traits::{
    Adder, Comparer, Container, Divider, Indexer, Iterable, Modder, Multiplier, Negator, Sizer,
    Subtractor, Zeroer,
};
use cel::common::types::{
    CelBool, CelBytes, CelDouble, CelInt, CelList, CelMap, CelMapKey, CelNull, CelOptional,
    CelString, CelUInt, Type,
};
use cel::common::types::{CelType, Kind};
use cel::common::value::{Builtin, BuiltinRef, StaticVal, Val};
use cel::ExecutionError;
use serde_json::Value;
use std::any::Any;
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

/// A value behind a reference count: copying it is cheap, and it answers every question as
/// the value itself, so the `cel` crate's functions and operators see the built-in type.
pub(super) struct Shared<T>(Arc<T>);

impl<T> Shared<T> {
    pub(super) fn new(value: T) -> Self {
        Shared(Arc::new(value))
    }
}

impl<T: fmt::Debug> fmt::Debug for Shared<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl<T: Val + Clone + 'static> Shared<T> {
    /// The value itself: moved out when nothing else holds it, else copied (one level: what
    /// it holds is shared in turn).
    fn into_inner(self) -> T {
        Arc::try_unwrap(self.0).unwrap_or_else(|shared| (*shared).clone())
    }
}

impl<T: Val + Clone + 'static> Val for Shared<T> {
    fn get_type(&self) -> &Type {
        self.0.get_type()
    }

    fn cel_type() -> &'static Type
    where
        Self: Sized,
    {
        T::cel_type()
    }

    fn as_adder<'b, 'v>(&'b self) -> Option<&'b (dyn Adder + 'v)>
    where
        Self: 'v,
    {
        self.0.as_adder()
    }

    fn as_comparer(&self) -> Option<&dyn Comparer> {
        self.0.as_comparer()
    }

    fn as_container(&self) -> Option<&dyn Container> {
        self.0.as_container()
    }

    fn as_divider<'b, 'v>(&'b self) -> Option<&'b (dyn Divider + 'v)>
    where
        Self: 'v,
    {
        self.0.as_divider()
    }

    fn as_indexer<'b, 'v>(&'b self) -> Option<&'b (dyn Indexer + 'v)>
    where
        Self: 'v,
    {
        self.0.as_indexer()
    }

    fn into_indexer<'v>(self: Box<Self>) -> Option<Box<dyn Indexer + 'v>>
    where
        Self: 'v,
    {
        Box::new(self.into_inner()).into_indexer()
    }

    fn as_iterable<'b, 'v>(&'b self) -> Option<&'b (dyn Iterable + 'v)>
    where
        Self: 'v,
    {
        self.0.as_iterable()
    }

    fn as_modder<'b, 'v>(&'b self) -> Option<&'b (dyn Modder + 'v)>
    where
        Self: 'v,
    {
        self.0.as_modder()
    }

    fn as_multiplier<'b, 'v>(&'b self) -> Option<&'b (dyn Multiplier + 'v)>
    where
        Self: 'v,
    {
        self.0.as_multiplier()
    }

    fn as_negator<'b, 'v>(&'b self) -> Option<&'b (dyn Negator + 'v)>
    where
        Self: 'v,
    {
        self.0.as_negator()
    }

    fn as_sizer(&self) -> Option<&dyn Sizer> {
        self.0.as_sizer()
    }

    fn as_subtractor<'b, 'v>(&'b self) -> Option<&'b (dyn Subtractor + 'v)>
    where
        Self: 'v,
    {
        self.0.as_subtractor()
    }

    fn as_zeroer(&self) -> Option<&dyn Zeroer> {
        self.0.as_zeroer()
    }

    fn equals(&self, other: &dyn Val) -> bool {
        self.0.equals(other)
    }

    fn clone_as_boxed<'v>(&self) -> Box<dyn Val + 'v>
    where
        Self: 'v,
    {
        Box::new(Shared(Arc::clone(&self.0)))
    }

    /// Itself: how a value comes back from the crate without a copy ([`to_static`]). The
    /// types it wraps are recognised by `as_builtin`, never by `as_any`.
    fn as_any(&self) -> Option<&dyn Any> {
        Some(self)
    }

    fn as_builtin<'b, 'v>(&'b self) -> BuiltinRef<'b, 'v>
    where
        Self: 'v,
    {
        self.0.as_builtin()
    }

    fn into_builtin<'v>(self: Box<Self>) -> Option<Builtin<'v>>
    where
        Self: 'v,
    {
        Box::new(self.into_inner()).into_builtin()
    }
}

impl<T: Val + Clone + 'static> StaticVal for Shared<T> {}

/// Strings up to this many bytes are copied; longer ones are [`Shared`].
const SHORT_STRING: usize = 32;

/// A value produced by an operation, made cheap to copy: long strings and bytes, lists, maps
/// are shared, and so is what a list, map or optional holds. The work is linear in what
/// the operation produced, which its cost already paid for.
pub(super) fn shared(value: Box<dyn Val + 'static>) -> Box<dyn Val + 'static> {
    if matches!(value.as_builtin(), BuiltinRef::Other) || value.as_any().is_some() {
        // A scalar, or shared already.
        return value;
    }
    match value.into_builtin() {
        Some(Builtin::String(s)) if s.as_borrowed().is_some() || s.len() <= SHORT_STRING => {
            Box::new(s)
        }
        Some(Builtin::String(s)) => Box::new(Shared::new(s)),
        Some(Builtin::Bytes(b)) if b.inner().len() <= SHORT_STRING => Box::new(b),
        Some(Builtin::Bytes(b)) => Box::new(Shared::new(b)),
        Some(Builtin::List(list)) => {
            let items: Vec<_> = list.into_inner().into_iter().map(shared).collect();
            Box::new(Shared::new(CelList::from(items)))
        }
        Some(Builtin::Map(map)) => {
            let entries: HashMap<_, _> = map
                .into_inner()
                .into_iter()
                .map(|(key, value)| (key, shared(value)))
                .collect();
            Box::new(Shared::new(CelMap::from(entries)))
        }
        Some(Builtin::Optional(optional)) => {
            // An optional copies what it holds: that is shared instead.
            let inner: Option<Box<dyn Val>> = optional.into();
            Box::new(CelOptional::from(inner.map(shared)))
        }
        Some(other) => boxed(other),
        None => unreachable_builtin(),
    }
}

fn boxed(builtin: Builtin<'static>) -> Box<dyn Val + 'static> {
    match builtin {
        Builtin::String(s) => Box::new(s),
        Builtin::Bytes(b) => Box::new(b),
        Builtin::List(l) => Box::new(l),
        Builtin::Map(m) => Box::new(m),
        Builtin::Optional(o) => Box::new(o),
        Builtin::Struct(s) => Box::new(s),
        // `Builtin` may grow; what it grows by is not ours to share.
        #[allow(unreachable_patterns)]
        _ => Box::new(CelNull),
    }
}

/// `as_builtin` said built-in, so `into_builtin` cannot say otherwise (the crate relies on
/// the same pairing).
fn unreachable_builtin() -> Box<dyn Val + 'static> {
    Box::new(CelNull)
}

// ---------------------------------------------------------------------------------------
// JSON as rules see it (typed by its schema by the caller, who walks the schema: `Subject`)
// ---------------------------------------------------------------------------------------

/// A value as rules see it.
pub(super) type Boxed = Box<dyn Val + 'static>;

pub(super) fn null() -> Boxed {
    Box::new(CelNull)
}

pub(super) fn boolean(b: bool) -> Boxed {
    Box::new(CelBool::from(b))
}

/// A number: a double where the schema says `number`, even when written as an integer; else an
/// int, a uint or a double as written.
pub(super) fn number(n: &serde_json::Number, as_double: bool) -> Boxed {
    match (n.as_i64(), n.as_u64()) {
        (Some(i), _) if !as_double => Box::new(CelInt::from(i)),
        (None, Some(u)) if !as_double => Box::new(CelUInt::from(u)),
        _ => Box::new(CelDouble::from(n.as_f64().unwrap_or(f64::NAN))),
    }
}

/// A list, shared.
pub(super) fn list(items: Vec<Boxed>) -> Boxed {
    Box::new(Shared::new(CelList::from(items)))
}

/// An object, shared, from its members: each name, whether the schema declares it, and its
/// value. Declared properties are escaped as the API server escapes them (`namespace` is
/// `__namespace__`, `a-b` is `a__dash__b`); map keys are looked up as written.
pub(super) fn object<'a>(members: impl Iterator<Item = (&'a str, bool, Boxed)>) -> Boxed {
    let mut map = HashMap::with_capacity(members.size_hint().0);
    for (name, declared, value) in members {
        let key = match declared.then(|| escape_property(name)).flatten() {
            Some(escaped) => escaped,
            None => name.to_owned(),
        };
        map.insert(CelMapKey::String(CelString::from(key)), value);
    }
    Box::new(Shared::new(CelMap::from(map)))
}

/// JSON without a schema: numbers and names as written.
pub(super) fn from_json(value: &Value) -> Boxed {
    match value {
        Value::Null => null(),
        Value::Bool(b) => boolean(*b),
        Value::Number(n) => number(n, false),
        Value::String(s) => string(s),
        Value::Array(items) => list(items.iter().map(from_json).collect()),
        Value::Object(fields) => object(
            fields
                .iter()
                .map(|(k, v)| (k.as_str(), false, from_json(v))),
        ),
    }
}

/// CEL's keywords, which with its reserved words ([`super::parse::RESERVED`]) the API server
/// escapes as `__word__` in property names.
const CEL_KEYWORDS: [&str; 4] = ["true", "false", "null", "in"];

/// The API server's property name escaping, so rules written for it find their fields; `None`
/// when the name needs none (most do: no copy then).
fn escape_property(name: &str) -> Option<String> {
    if CEL_KEYWORDS.contains(&name) || super::parse::RESERVED.contains(&name) {
        return Some(format!("__{name}__"));
    }
    if !name.contains(['_', '.', '-', '/']) {
        return None;
    }
    let mut escaped = String::with_capacity(name.len() + 8);
    let mut rest = name;
    while let Some(c) = rest.chars().next() {
        let (text, len) = match c {
            '_' if rest.starts_with("__") => ("__underscores__", 2),
            '.' => ("__dot__", 1),
            '-' => ("__dash__", 1),
            '/' => ("__slash__", 1),
            _ => {
                escaped.push(c);
                rest = &rest[c.len_utf8()..];
                continue;
            }
        };
        escaped.push_str(text);
        rest = &rest[len..];
    }
    Some(escaped)
}

/// A string value: short ones copied, long ones shared.
pub(super) fn string(s: &str) -> Boxed {
    if s.len() <= SHORT_STRING {
        Box::new(CelString::from(s.to_owned()))
    } else {
        Box::new(Shared::new(CelString::from(s.to_owned())))
    }
}

/// The bool of a value, if it is one.
pub(super) fn as_bool(value: &dyn Val) -> Option<bool> {
    value.downcast_ref::<CelBool>().map(|b| *b.inner())
}

// ---------------------------------------------------------------------------------------
// Results of the crate, and sizes
// ---------------------------------------------------------------------------------------

/// A value the crate returned, as one of ours: `'static` (its lifetime comes from the
/// bindings of the call) and cheap to copy. Ours and scalars are taken as they are; a value
/// the crate built is moved into ours, its elements in turn.
pub(super) fn to_static(
    value: Box<dyn Val + '_>,
) -> Result<Box<dyn Val + 'static>, ExecutionError> {
    if let Some(copy) = static_copy(value.as_ref()) {
        return Ok(copy);
    }
    let unsupported = |v: &dyn Val| ExecutionError::UnexpectedType {
        got: v.get_type().name().to_owned(),
        want: "a value the function's rules can hold".to_owned(),
    };
    if matches!(value.as_builtin(), BuiltinRef::Other) {
        return Err(unsupported(value.as_ref()));
    }
    let value = match value.into_builtin() {
        Some(Builtin::String(s)) => Box::new(s.into_static()) as Box<dyn Val>,
        Some(Builtin::Bytes(b)) => Box::new(b.into_static()),
        Some(Builtin::List(list)) => {
            let items = list
                .into_inner()
                .into_iter()
                .map(to_static)
                .collect::<Result<Vec<_>, _>>()?;
            Box::new(CelList::from(items))
        }
        Some(Builtin::Map(map)) => {
            let entries = map
                .into_inner()
                .into_iter()
                .map(|(key, value)| Ok((key.into_static(), to_static(value)?)))
                .collect::<Result<HashMap<_, _>, ExecutionError>>()?;
            Box::new(CelMap::from(entries))
        }
        Some(Builtin::Optional(optional)) => {
            let inner: Option<Box<dyn Val + '_>> = optional.into();
            match inner {
                Some(inner) => Box::new(CelOptional::of(to_static(inner)?)),
                None => Box::new(CelOptional::none()),
            }
        }
        _ => return Err(ExecutionError::InternalError("a struct value".to_owned())),
    };
    Ok(shared(value))
}

/// [`to_static`] of a value the crate returned borrowed.
pub(super) fn to_static_ref(value: &dyn Val) -> Result<Box<dyn Val + 'static>, ExecutionError> {
    match static_copy(value) {
        Some(copy) => Ok(copy),
        None => to_static(value.clone_as_boxed()),
    }
}

/// A copy of a value that is `'static` already: a scalar, a type, or one of ours.
fn static_copy(value: &dyn Val) -> Option<Box<dyn Val + 'static>> {
    let any = value.as_any()?;
    macro_rules! copy {
        ($($t:ty),*) => {
            $(if let Some(v) = any.downcast_ref::<$t>() {
                return Some(v.clone_as_boxed());
            })*
        };
    }
    copy!(
        CelBool,
        cel::common::types::CelInt,
        CelUInt,
        CelDouble,
        CelNull,
        CelType,
        Shared<CelString<'static>>,
        Shared<CelBytes<'static>>,
        Shared<CelList<'static>>,
        Shared<CelMap<'static>>
    );
    None
}

/// The size of `value` counted down to its leaves (an entry or a character a unit), walked
/// without recursion and no further than `cap`: shared parts count each time they appear.
pub(super) fn deep_size(value: &dyn Val, cap: u64) -> u64 {
    let mut size = 0u64;
    let mut stack: Vec<&dyn Val> = vec![value];
    while let Some(value) = stack.pop() {
        if size > cap {
            break;
        }
        size = size.saturating_add(1);
        if let Some(s) = value.downcast_ref::<CelString>() {
            size = size.saturating_add(s.inner().len() as u64);
        } else if let Some(list) = value.downcast_ref::<CelList>() {
            stack.extend(list.inner().iter().map(|item| item.as_ref()));
        } else if let Some(map) = value.downcast_ref::<CelMap>() {
            stack.extend(map.inner().values().map(|item| item.as_ref()));
            size = size.saturating_add(map.inner().len() as u64);
        } else if let Some(inner) = value.downcast_ref::<CelOptional>().and_then(|o| o.option()) {
            stack.push(inner);
        }
    }
    size
}

/// How many elements `list.flatten(depth)` has, counted up to `cap` and no further.
pub(super) fn flattened_len(list: &dyn Val, depth: u64, cap: u64) -> u64 {
    let mut count = 0u64;
    let mut stack: Vec<(&dyn Val, u64)> = vec![(list, depth + 1)];
    while let Some((value, depth)) = stack.pop() {
        if count > cap {
            break;
        }
        match value.downcast_ref::<CelList>() {
            Some(inner) if depth > 0 && value.get_type().kind() == Kind::List => {
                stack.extend(inner.inner().iter().map(|item| (item.as_ref(), depth - 1)));
            }
            _ => count = count.saturating_add(1),
        }
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn escaping_is_the_api_servers() {
        assert_eq!(
            escape_property("namespace").as_deref(),
            Some("__namespace__")
        );
        assert_eq!(
            escape_property("a-b.c/d").as_deref(),
            Some("a__dash__b__dot__c__slash__d")
        );
        assert_eq!(
            escape_property("a__b").as_deref(),
            Some("a__underscores__b")
        );
        assert_eq!(escape_property("a_b"), Some("a_b".to_owned()));
        assert_eq!(escape_property("url"), None);
    }

    #[test]
    fn a_copy_of_a_shared_value_is_the_same_value() {
        let json = json!({"a": [1, "two", {"b": 3.5}]});
        let value = from_json(&json);
        let copy = value.clone_as_boxed();
        assert!(copy.equals(value.as_ref()) && value.equals(copy.as_ref()));
        assert!(
            copy.downcast_ref::<CelMap>().is_some(),
            "seen as the built-in map"
        );
        let plain: Box<dyn Val> = cel::Value::from(json_map()).try_into().unwrap();
        assert!(plain.equals(value.as_ref()) && value.equals(plain.as_ref()));
    }

    fn json_map() -> HashMap<String, cel::Value> {
        let mut b = HashMap::new();
        b.insert("b".to_owned(), cel::Value::Float(3.5));
        let list = vec![
            cel::Value::Int(1),
            cel::Value::from("two"),
            cel::Value::from(b),
        ];
        HashMap::from([("a".to_owned(), cel::Value::List(Arc::new(list)))])
    }
}
