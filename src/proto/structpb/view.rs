//! A JSON value read where it is held, without building a `serde_json` tree: in the bytes of a
//! request, or in a `serde_json` tree that is already there.
//!
//! The composite of every call is read field by field, once. Decoding it into `serde_json`
//! meant a `String` and a `BTreeMap` insert for every key and string, and dropping them again,
//! which cost as much as the rest of a call without live schemas (BENCHMARKS.md). A composite's
//! Struct is instead kept as its bytes ([`State`](crate::proto::State)) with an [`Index`] of
//! them, made in the one walk that also checks them when the request is decoded: every value's
//! kind and place, each object's members sorted by name. Every other resource of a request is
//! kept as its bytes with nothing read of them ([`Resource`](crate::proto::Resource)), since
//! the function reads a few fields of each: a view of those names a value by its place in the
//! bytes and finds members by scanning (`structpb/lazy.rs`). A [`View`] is a handle into either
//! (or into a `serde_json` value, for the objects `render` and the WebAssembly builds hand over
//! as JSON), copied freely; keys and strings are read as slices of the bytes.
//!
//! [`Struct::view`](crate::proto::Struct::view) gives one for any Struct, however it is held;
//! the same object gives the same view either way (`structpb/view_tests.rs` and
//! `structpb/lazy_tests.rs` compare them).

use super::lazy::{self, At, Wired};
use prost::bytes::Bytes;
use serde_json::{Map, Number, Value};

/// A Struct's bytes and where its values are in them.
#[derive(Debug)]
pub struct Index {
    bytes: Bytes,
    nodes: Vec<Node>,
    members: Vec<Member>,
    items: Vec<u32>,
    /// The Struct's own members, in `members`.
    root: Span,
}

/// A range of `Index::bytes`, `Index::members` or `Index::items`: where it starts, how long.
#[derive(Debug, Clone, Copy, Default)]
pub struct Span {
    pub(crate) start: u32,
    pub(crate) len: u32,
}

impl Span {
    pub(crate) fn range(self) -> std::ops::Range<usize> {
        self.start as usize..(self.start + self.len) as usize
    }
}

/// A value in the bytes. A number is kept as the double it was; NaN and the infinities, which
/// JSON cannot hold, are `Null` (`proto::json_number`).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Node {
    Null,
    Bool(bool),
    Number(f64),
    /// Its UTF-8 bytes, checked when indexed.
    String(Span),
    /// Its items, in `Index::items`.
    List(Span),
    /// Its members, in `Index::members`.
    Object(Span),
}

/// An object's member: its name (UTF-8 bytes, checked) and its value, in `Index::nodes`.
#[derive(Debug, Clone, Copy)]
pub struct Member {
    pub(crate) name: Span,
    pub(crate) value: u32,
}

impl Index {
    /// An index of `bytes`: `nodes`, `members` and `items` as `structpb`'s walk made them,
    /// `root` the Struct's own members.
    ///
    /// # Safety
    ///
    /// Every [`Node::String`] and every [`Member`] name must be a range of `bytes` that is
    /// valid UTF-8: [`Index::text`] reads them without checking them again.
    pub(crate) unsafe fn new(
        bytes: Bytes,
        nodes: Vec<Node>,
        members: Vec<Member>,
        items: Vec<u32>,
        root: Span,
    ) -> Self {
        Index {
            bytes,
            nodes,
            members,
            items,
            root,
        }
    }

    /// The Struct's own members.
    pub(crate) fn root(&self) -> Span {
        self.root
    }

    /// A string or member name. Reading the composite reads a few dozen a repository entry,
    /// and checking each again cost 2.3% of a call (BENCHMARKS.md).
    fn text(&self, span: Span) -> &str {
        // SAFETY: the spans of strings and names are UTF-8 in `bytes`, as the caller of
        // `Index::new` vouched, and neither changes after (the fields are private, and a
        // `Bytes` is never written).
        unsafe { std::str::from_utf8_unchecked(&self.bytes[span.range()]) }
    }

    fn name_bytes(&self, member: &Member) -> &[u8] {
        &self.bytes[member.name.range()]
    }
}

/// A JSON value.
#[derive(Debug, Clone, Copy)]
pub enum View<'a> {
    /// A value in an [`Index`].
    Indexed(&'a Index, u32),
    /// A value in a Struct's bytes read where they are: the bytes, and the value's place in
    /// them (`structpb::lazy`).
    Wire(&'a Bytes, At),
    /// A `serde_json` value.
    Json(&'a Value),
}

/// A JSON object, its members by name (byte order, as a `serde_json::Map` keeps them), each
/// name once.
#[derive(Debug, Clone, Copy)]
pub enum ObjectView<'a> {
    /// An object in an [`Index`]: its members there.
    Indexed(&'a Index, Span),
    /// An object in a Struct's bytes read where they are: the bytes, and the object's place.
    Wire(&'a Bytes, At),
    /// A `serde_json` object.
    Json(&'a Map<String, Value>),
}

/// A JSON list.
#[derive(Debug, Clone, Copy)]
pub enum ListView<'a> {
    /// A list in an [`Index`]: its items there.
    Indexed(&'a Index, Span),
    /// A list in a Struct's bytes read where they are: the bytes, and the list's place.
    Wire(&'a Bytes, At),
    /// A `serde_json` list.
    Json(&'a [Value]),
}

/// What a value is, to match on.
#[derive(Debug, Clone)]
pub enum Kind<'a> {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number.
    Number(Number),
    /// A string.
    String(&'a str),
    /// A list.
    List(ListView<'a>),
    /// An object.
    Object(ObjectView<'a>),
}

impl<'a> View<'a> {
    /// What the value is.
    #[inline]
    pub fn kind(self) -> Kind<'a> {
        match self {
            View::Indexed(index, at) => match index.nodes[at as usize] {
                Node::Null => Kind::Null,
                Node::Bool(flag) => Kind::Bool(flag),
                Node::Number(number) => match crate::proto::json_number(number) {
                    Value::Number(number) => Kind::Number(number),
                    _ => Kind::Null,
                },
                Node::String(span) => Kind::String(index.text(span)),
                Node::List(span) => Kind::List(ListView::Indexed(index, span)),
                Node::Object(span) => Kind::Object(ObjectView::Indexed(index, span)),
            },
            View::Wire(bytes, at) => match lazy::read(bytes, at) {
                Wired::Null => Kind::Null,
                Wired::Bool(flag) => Kind::Bool(flag),
                Wired::Number(number) => match crate::proto::json_number(number) {
                    Value::Number(number) => Kind::Number(number),
                    _ => Kind::Null,
                },
                Wired::String(text) => Kind::String(text),
                Wired::List(_) => Kind::List(ListView::Wire(bytes, at)),
                Wired::Object(_) => Kind::Object(ObjectView::Wire(bytes, at)),
            },
            View::Json(value) => match value {
                Value::Null => Kind::Null,
                Value::Bool(flag) => Kind::Bool(*flag),
                Value::Number(number) => Kind::Number(number.clone()),
                Value::String(text) => Kind::String(text),
                Value::Array(items) => Kind::List(ListView::Json(items)),
                Value::Object(object) => Kind::Object(ObjectView::Json(object)),
            },
        }
    }

    /// The value as an owned `serde_json` value: for messages, and for the parts of a claim
    /// that are handed on as they were written.
    pub fn to_value(self) -> Value {
        match self {
            View::Json(value) => value.clone(),
            View::Wire(bytes, at) => lazy::to_value(bytes, at, lazy::TO_VALUE_DEPTH),
            View::Indexed(..) => match self.kind() {
                Kind::Null => Value::Null,
                Kind::Bool(flag) => Value::Bool(flag),
                Kind::Number(number) => Value::Number(number),
                Kind::String(text) => Value::String(text.to_owned()),
                Kind::List(list) => Value::Array(list.iter().map(View::to_value).collect()),
                Kind::Object(object) => Value::Object(object.to_map()),
            },
        }
    }

    /// Whether it is `null`.
    #[inline]
    pub fn is_null(self) -> bool {
        match self {
            View::Indexed(index, at) => matches!(index.nodes[at as usize], Node::Null),
            View::Wire(bytes, at) => matches!(lazy::read(bytes, at), Wired::Null),
            View::Json(value) => value.is_null(),
        }
    }

    /// Whether it is a string.
    #[inline]
    pub fn is_string(self) -> bool {
        match self {
            View::Indexed(index, at) => matches!(index.nodes[at as usize], Node::String(_)),
            View::Wire(bytes, at) => matches!(lazy::read(bytes, at), Wired::String(_)),
            View::Json(value) => value.is_string(),
        }
    }

    /// The text of a string.
    #[inline]
    pub fn as_str(self) -> Option<&'a str> {
        match self {
            View::Indexed(index, at) => match index.nodes[at as usize] {
                Node::String(span) => Some(index.text(span)),
                _ => None,
            },
            View::Wire(bytes, at) => match lazy::read(bytes, at) {
                Wired::String(text) => Some(text),
                _ => None,
            },
            View::Json(value) => value.as_str(),
        }
    }

    /// The number, where it is an integer that fits an `i64` (as `serde_json` reads one).
    pub fn as_i64(self) -> Option<i64> {
        match self {
            View::Json(value) => value.as_i64(),
            View::Indexed(..) | View::Wire(..) => match self.kind() {
                Kind::Number(number) => number.as_i64(),
                _ => None,
            },
        }
    }

    /// The flag of a boolean.
    #[inline]
    pub fn as_bool(self) -> Option<bool> {
        match self {
            View::Indexed(index, at) => match index.nodes[at as usize] {
                Node::Bool(flag) => Some(flag),
                _ => None,
            },
            View::Wire(bytes, at) => match lazy::read(bytes, at) {
                Wired::Bool(flag) => Some(flag),
                _ => None,
            },
            View::Json(value) => value.as_bool(),
        }
    }

    /// The items of a list.
    #[inline]
    pub fn as_list(self) -> Option<ListView<'a>> {
        match self {
            View::Indexed(index, at) => match index.nodes[at as usize] {
                Node::List(span) => Some(ListView::Indexed(index, span)),
                _ => None,
            },
            View::Wire(bytes, at) => match lazy::read(bytes, at) {
                Wired::List(_) => Some(ListView::Wire(bytes, at)),
                _ => None,
            },
            View::Json(value) => value.as_array().map(|items| ListView::Json(items)),
        }
    }

    /// The members of an object.
    #[inline]
    pub fn as_object(self) -> Option<ObjectView<'a>> {
        match self {
            View::Indexed(index, at) => match index.nodes[at as usize] {
                Node::Object(span) => Some(ObjectView::Indexed(index, span)),
                _ => None,
            },
            View::Wire(bytes, at) => match lazy::read(bytes, at) {
                Wired::Object(_) => Some(ObjectView::Wire(bytes, at)),
                _ => None,
            },
            View::Json(value) => value.as_object().map(ObjectView::Json),
        }
    }

    /// The member `name` of an object; `None` for anything else.
    pub fn get(self, name: &str) -> Option<View<'a>> {
        self.as_object()?.get(name)
    }
}

impl<'a> ObjectView<'a> {
    /// The member `name`.
    pub fn get(self, name: &str) -> Option<View<'a>> {
        match self {
            ObjectView::Indexed(index, span) => {
                let members = &index.members[span.range()];
                let name = name.as_bytes();
                // An entry has a handful of members: a scan is cheaper than a search.
                let found = if members.len() <= 8 {
                    members.iter().find(|m| index.name_bytes(m) == name)
                } else {
                    members
                        .binary_search_by(|m| index.name_bytes(m).cmp(name))
                        .ok()
                        .map(|i| &members[i])
                };
                found.map(|member| View::Indexed(index, member.value))
            }
            ObjectView::Wire(bytes, at) => {
                let fields = lazy::object_fields(bytes, at);
                lazy::get(bytes, fields, name).map(|at| View::Wire(bytes, at))
            }
            ObjectView::Json(object) => object.get(name).map(View::Json),
        }
    }

    /// The members `names` (each given once): for bytes read where they are, found in one
    /// scan of the object rather than one each.
    pub fn get_all<const N: usize>(self, names: [&str; N]) -> [Option<View<'a>>; N] {
        match self {
            ObjectView::Wire(bytes, at) => {
                let fields = lazy::object_fields(bytes, at);
                lazy::get_all(bytes, fields, names).map(|at| at.map(|at| View::Wire(bytes, at)))
            }
            _ => names.map(|name| self.get(name)),
        }
    }

    /// How many members it has.
    pub fn len(self) -> usize {
        match self {
            ObjectView::Indexed(_, span) => span.len as usize,
            ObjectView::Wire(bytes, at) => {
                lazy::members(bytes, lazy::object_fields(bytes, at)).len()
            }
            ObjectView::Json(object) => object.len(),
        }
    }

    /// Whether it has no member.
    pub fn is_empty(self) -> bool {
        self.len() == 0
    }

    /// The members, by name.
    #[inline]
    pub fn iter(self) -> Members<'a> {
        match self {
            ObjectView::Indexed(index, span) => {
                Members::Indexed(index, index.members[span.range()].iter())
            }
            ObjectView::Wire(bytes, at) => Members::Wire(
                bytes,
                lazy::members(bytes, lazy::object_fields(bytes, at)).into_iter(),
            ),
            ObjectView::Json(object) => Members::Json(object.iter()),
        }
    }

    /// The names of the members, in order.
    pub fn keys(self) -> impl Iterator<Item = &'a str> {
        self.iter().map(|(name, _)| name)
    }

    /// The object as an owned `serde_json` object.
    pub fn to_map(self) -> Map<String, Value> {
        match self {
            ObjectView::Json(object) => object.clone(),
            ObjectView::Wire(bytes, at) => {
                lazy::to_map(bytes, lazy::object_fields(bytes, at), lazy::TO_VALUE_DEPTH)
            }
            ObjectView::Indexed(..) => self
                .iter()
                .map(|(name, value)| (name.to_owned(), value.to_value()))
                .collect(),
        }
    }
}

/// An object's members, by name.
pub enum Members<'a> {
    /// Of an object in an [`Index`].
    Indexed(&'a Index, std::slice::Iter<'a, Member>),
    /// Of an object in a Struct's bytes: its members read and sorted, with their places.
    Wire(&'a Bytes, std::vec::IntoIter<(&'a str, At)>),
    /// Of a `serde_json` object.
    Json(serde_json::map::Iter<'a>),
}

impl<'a> Iterator for Members<'a> {
    type Item = (&'a str, View<'a>);

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            Members::Indexed(index, members) => {
                let member = members.next()?;
                Some((index.text(member.name), View::Indexed(index, member.value)))
            }
            Members::Wire(bytes, members) => {
                let (name, at) = members.next()?;
                Some((name, View::Wire(bytes, at)))
            }
            Members::Json(members) => {
                let (name, value) = members.next()?;
                Some((name.as_str(), View::Json(value)))
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match self {
            Members::Indexed(_, members) => members.size_hint(),
            Members::Wire(_, members) => members.size_hint(),
            Members::Json(members) => members.size_hint(),
        }
    }
}

impl ExactSizeIterator for Members<'_> {}

impl<'a> ListView<'a> {
    /// How many items it has.
    pub fn len(self) -> usize {
        match self {
            ListView::Indexed(_, span) => span.len as usize,
            ListView::Wire(bytes, at) => lazy::item_count(lazy::list_fields(bytes, at)),
            ListView::Json(items) => items.len(),
        }
    }

    /// Whether it has no item.
    pub fn is_empty(self) -> bool {
        self.len() == 0
    }

    /// The items, in order.
    #[inline]
    pub fn iter(self) -> Items<'a> {
        match self {
            ListView::Indexed(index, span) => {
                Items::Indexed(index, index.items[span.range()].iter())
            }
            ListView::Wire(bytes, at) => {
                let list = lazy::list_fields(bytes, at);
                Items::Wire {
                    bytes,
                    list,
                    left: lazy::item_count(list),
                }
            }
            ListView::Json(items) => Items::Json(items.iter()),
        }
    }
}

/// A list's items.
pub enum Items<'a> {
    /// Of a list in an [`Index`].
    Indexed(&'a Index, std::slice::Iter<'a, u32>),
    /// Of a list in a Struct's bytes.
    Wire {
        /// The bytes.
        bytes: &'a Bytes,
        /// The list's fields not read yet.
        list: &'a [u8],
        /// How many items they hold.
        left: usize,
    },
    /// Of a `serde_json` list.
    Json(std::slice::Iter<'a, Value>),
}

impl<'a> Iterator for Items<'a> {
    type Item = View<'a>;

    fn next(&mut self) -> Option<View<'a>> {
        match self {
            Items::Indexed(index, items) => Some(View::Indexed(index, *items.next()?)),
            Items::Wire { bytes, list, left } => {
                let at = lazy::next_item(bytes, list)?;
                *left = left.saturating_sub(1);
                Some(View::Wire(bytes, at))
            }
            Items::Json(items) => items.next().map(View::Json),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match self {
            Items::Indexed(_, items) => items.size_hint(),
            Items::Wire { left, .. } => (*left, Some(*left)),
            Items::Json(items) => items.size_hint(),
        }
    }
}

impl ExactSizeIterator for Items<'_> {}

impl<'a> IntoIterator for ListView<'a> {
    type Item = View<'a>;
    type IntoIter = Items<'a>;

    fn into_iter(self) -> Items<'a> {
        self.iter()
    }
}

impl<'a> IntoIterator for ObjectView<'a> {
    type Item = (&'a str, View<'a>);
    type IntoIter = Members<'a>;

    fn into_iter(self) -> Members<'a> {
        self.iter()
    }
}

/// Equal as JSON, wherever each is held.
impl PartialEq for View<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.to_value() == other.to_value()
    }
}

/// Equal as JSON, wherever each is held.
impl PartialEq for ObjectView<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.to_map() == other.to_map()
    }
}
