//! What is checked against a schema: a JSON value, or a rendered resource's parts borrowed from
//! where the function built them, seen with the schema's defaults in place.
//!
//! The API server defaults an object before it validates it: every absent property with a
//! `default` gets it. Rather than copy the object to default it, the walk sees each object's
//! members merged with the defaults of its schema node ([`Instance::members`]), in name order,
//! as the defaulted map would hold them.

use super::{CompiledSchema, Node};
use crate::proto::{self, View};
use serde_json::{Map, Value};
use std::cmp::Ordering;
use std::fmt;
use std::iter::Peekable;

/// A value to check.
#[derive(Debug, Clone, Copy)]
pub enum Instance<'a> {
    /// A JSON value.
    Json(&'a Value),
    /// A JSON object, not in a `Value`.
    Object(&'a Map<String, Value>),
    /// A value viewed where the request holds it (a claim's `forProvider` members).
    View(View<'a>),
    /// A string.
    Text(&'a str),
    /// A list of strings.
    Texts(&'a [String]),
    /// An object as its members, sorted by name (byte order, as a `Map` keeps them), each once.
    Members(&'a [(&'a str, Instance<'a>)]),
}

/// The JSON types, as the checks tell them apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Null,
    Bool,
    Number,
    String,
    Array,
    Object,
}

impl<'a> Instance<'a> {
    pub(super) fn kind(&self) -> Kind {
        match self {
            Instance::Json(value) => match value {
                Value::Null => Kind::Null,
                Value::Bool(_) => Kind::Bool,
                Value::Number(_) => Kind::Number,
                Value::String(_) => Kind::String,
                Value::Array(_) => Kind::Array,
                Value::Object(_) => Kind::Object,
            },
            Instance::View(view) => match view.kind() {
                proto::Kind::Null => Kind::Null,
                proto::Kind::Bool(_) => Kind::Bool,
                proto::Kind::Number(_) => Kind::Number,
                proto::Kind::String(_) => Kind::String,
                proto::Kind::List(_) => Kind::Array,
                proto::Kind::Object(_) => Kind::Object,
            },
            Instance::Text(_) => Kind::String,
            Instance::Texts(_) => Kind::Array,
            Instance::Object(_) | Instance::Members(_) => Kind::Object,
        }
    }

    pub(super) fn as_str(&self) -> Option<&'a str> {
        match self {
            Instance::Json(Value::String(text)) => Some(text),
            Instance::Text(text) => Some(text),
            Instance::View(view) => view.as_str(),
            _ => None,
        }
    }

    pub(super) fn as_bool(&self) -> Option<bool> {
        match self {
            Instance::Json(value) => value.as_bool(),
            Instance::View(view) => view.as_bool(),
            _ => None,
        }
    }

    pub(super) fn as_number(&self) -> Option<serde_json::Number> {
        match self {
            Instance::Json(Value::Number(n)) => Some(n.clone()),
            Instance::View(view) => match view.kind() {
                proto::Kind::Number(n) => Some(n),
                _ => None,
            },
            _ => None,
        }
    }

    /// Whether it is a number with an integer value (`is_i64 || is_u64`).
    pub(super) fn is_integer(&self) -> bool {
        self.as_number().is_some_and(|n| n.is_i64() || n.is_u64())
    }

    /// A list's length and items.
    pub(super) fn items(&self) -> Items<'a> {
        match self {
            Instance::Json(Value::Array(items)) => Items::Json(items.iter()),
            Instance::Texts(texts) => Items::Texts(texts.iter()),
            Instance::View(view) => match view.as_list() {
                Some(items) => Items::View(items.iter()),
                None => Items::Json([].iter()),
            },
            _ => Items::Json([].iter()),
        }
    }

    /// An object's members in name order, with the defaults of `node` where they are absent
    /// (or null while the property is not nullable), as the API server's defaulting leaves
    /// them. Nothing for anything but an object.
    pub(super) fn members(
        self,
        node: &'a Node,
        schema: &'a CompiledSchema,
    ) -> impl Iterator<Item = (&'a str, Instance<'a>)> + 'a {
        let present = match self {
            Instance::Json(Value::Object(map)) | Instance::Object(map) => Members::Map(map.iter()),
            Instance::Members(members) => Members::Slice(members.iter()),
            Instance::View(view) => match view.as_object() {
                Some(object) => Members::View(object.iter()),
                None => Members::Slice([].iter()),
            },
            _ => Members::Slice([].iter()),
        };
        Defaulted {
            present: present.peekable(),
            defaults: schema.defaults(node).peekable(),
        }
    }

    /// Whether an object has a member `name` once defaulted.
    pub(super) fn has_member(self, name: &str, node: &'a Node, schema: &'a CompiledSchema) -> bool {
        let present = match self {
            Instance::Json(Value::Object(map)) | Instance::Object(map) => map.contains_key(name),
            Instance::Members(members) => members.iter().any(|(member, _)| *member == name),
            Instance::View(view) => view.get(name).is_some(),
            _ => false,
        };
        present
            || schema
                .defaults(node)
                .any(|(property, _, _)| property == name)
    }

    /// The value as JSON, defaults in place (as the API server would hold it): for messages
    /// and for the checks that compare whole values.
    pub(super) fn to_json(self, node: &Node, schema: &CompiledSchema) -> Value {
        let mut value = self.to_json_as_given();
        schema.apply_defaults(&mut value, node);
        value
    }

    fn to_json_as_given(self) -> Value {
        match self {
            Instance::Json(value) => value.clone(),
            Instance::Object(map) => Value::Object(map.clone()),
            Instance::View(view) => view.to_value(),
            Instance::Text(text) => Value::from(text),
            Instance::Texts(texts) => Value::from(texts),
            Instance::Members(members) => {
                Value::Object(crate::core::sorted::object(members.iter().map(
                    |(name, member)| ((*name).to_owned(), member.to_json_as_given()),
                )))
            }
        }
    }

    /// Whether it equals `other` once defaulted (an `enum` check).
    pub(super) fn equals(self, other: &Value, node: &Node, schema: &CompiledSchema) -> bool {
        match self {
            Instance::Json(value) if !value.is_object() && !value.is_array() => value == other,
            Instance::Text(text) => other.as_str() == Some(text),
            Instance::View(view) if view.as_list().is_none() && view.as_object().is_none() => {
                view.to_value() == *other
            }
            _ => self.to_json(node, schema) == *other,
        }
    }
}

/// A list's items.
pub(super) enum Items<'a> {
    Json(std::slice::Iter<'a, Value>),
    Texts(std::slice::Iter<'a, String>),
    View(proto::Items<'a>),
}

impl<'a> Iterator for Items<'a> {
    type Item = Instance<'a>;

    fn next(&mut self) -> Option<Instance<'a>> {
        match self {
            Items::Json(items) => items.next().map(Instance::Json),
            Items::Texts(texts) => texts.next().map(|text| Instance::Text(text)),
            Items::View(items) => items.next().map(Instance::View),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match self {
            Items::Json(items) => items.size_hint(),
            Items::Texts(texts) => texts.size_hint(),
            Items::View(items) => items.size_hint(),
        }
    }
}

impl ExactSizeIterator for Items<'_> {}

/// An object's members as given.
enum Members<'a> {
    Map(serde_json::map::Iter<'a>),
    Slice(std::slice::Iter<'a, (&'a str, Instance<'a>)>),
    View(proto::Members<'a>),
}

impl<'a> Iterator for Members<'a> {
    type Item = (&'a str, Instance<'a>);

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            Members::Map(map) => map
                .next()
                .map(|(name, value)| (name.as_str(), Instance::Json(value))),
            Members::Slice(members) => members.next().map(|(name, member)| (*name, *member)),
            Members::View(members) => members
                .next()
                .map(|(name, value)| (name, Instance::View(value))),
        }
    }
}

/// The members given merged with the defaults, both in name order.
struct Defaulted<'a, D: Iterator<Item = (&'a str, &'a Value, bool)>> {
    present: Peekable<Members<'a>>,
    defaults: Peekable<D>,
}

impl<'a, D: Iterator<Item = (&'a str, &'a Value, bool)>> Iterator for Defaulted<'a, D> {
    type Item = (&'a str, Instance<'a>);

    fn next(&mut self) -> Option<Self::Item> {
        // Most schema nodes have no default, and the rest few: once they are merged, the
        // members pass through without being peeked at first.
        let Some((property, _, _)) = self.defaults.peek() else {
            return self.present.next();
        };
        let order = match self.present.peek() {
            None => Ordering::Greater,
            Some((name, _)) => name.cmp(property),
        };
        match order {
            Ordering::Less => self.present.next(),
            Ordering::Greater => {
                let (property, default, _) = self.defaults.next()?;
                Some((property, Instance::Json(default)))
            }
            Ordering::Equal => {
                let (name, given) = self.present.next()?;
                let (_, default, nullable) = self.defaults.next()?;
                let unset = given.kind() == Kind::Null && !nullable;
                Some((
                    name,
                    if unset {
                        Instance::Json(default)
                    } else {
                        given
                    },
                ))
            }
        }
    }
}

/// A path in messages, formatted only when one is written: `spec.forProvider.url`,
/// `spec.member[0]`, `metadata.labels[app]`; the root alone shows as `<root>`.
#[derive(Debug, Clone, Copy)]
pub(super) enum Path<'a> {
    Root,
    /// A property: `<parent>.name`, or `name` at the root.
    Field(&'a Path<'a>, &'a str),
    /// A list item: `<parent>[3]`.
    Index(&'a Path<'a>, usize),
    /// A map entry (`additionalProperties`): `<parent>[key]`.
    Key(&'a Path<'a>, &'a str),
}

impl Path<'_> {
    /// Whether it is written as nothing: the root, or empty names below it.
    pub(super) fn is_empty(&self) -> bool {
        match self {
            Path::Root => true,
            Path::Field(parent, name) => name.is_empty() && parent.is_empty(),
            Path::Index(..) | Path::Key(..) => false,
        }
    }

    fn write(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Path::Root => Ok(()),
            Path::Field(parent, name) if parent.is_empty() => f.write_str(name),
            Path::Field(parent, name) => {
                parent.write(f)?;
                write!(f, ".{name}")
            }
            Path::Index(parent, index) => {
                parent.write(f)?;
                write!(f, "[{index}]")
            }
            Path::Key(parent, key) => {
                parent.write(f)?;
                write!(f, "[{key}]")
            }
        }
    }
}

/// As `field_path` and `index_path` build it; the root is empty.
impl fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write(f)
    }
}
