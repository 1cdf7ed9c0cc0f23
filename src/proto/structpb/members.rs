//! Objects and lists written member by member ([`ObjectWriter`], [`ListWriter`]) straight
//! into their wire format, and members encoded ahead to be spliced in ([`EncodedMembers`]).

use super::*;

/// Writes a Struct's members straight into its encoding, in key order: the bytes are those of
/// the equivalent `Map` (a BTreeMap, so keys in byte order), which a debug build checks.
pub struct ObjectWriter<'w> {
    writer: &'w mut Writer,
    /// The first and last keys written, to check the order.
    #[cfg(debug_assertions)]
    first: Option<String>,
    #[cfg(debug_assertions)]
    last: Option<String>,
}

impl<'w> ObjectWriter<'w> {
    pub(super) fn new(writer: &'w mut Writer) -> Self {
        ObjectWriter {
            writer,
            #[cfg(debug_assertions)]
            first: None,
            #[cfg(debug_assertions)]
            last: None,
        }
    }

    /// Checks, in a debug build, that `name` comes after the last member.
    #[inline]
    fn check_order(&mut self, name: &str) {
        #[cfg(debug_assertions)]
        {
            debug_assert!(
                self.last.as_deref().is_none_or(|last| last < name),
                "members out of order: {:?} then {name:?}",
                self.last
            );
            if self.first.is_none() {
                self.first = Some(name.to_owned());
            }
            self.last = Some(name.to_owned());
        }
        #[cfg(not(debug_assertions))]
        let _ = name;
    }

    /// Members encoded before, copied in where they fall in the key order.
    pub fn members(&mut self, members: &EncodedMembers) {
        #[cfg(debug_assertions)]
        if let Some((first, last)) = &members.names {
            self.check_order(first);
            if last != first {
                self.check_order(last);
            }
        }
        self.writer.out.extend_from_slice(&members.bytes);
    }

    /// Writes a member `name` with a string value.
    pub fn string(&mut self, name: &str, text: &str) {
        self.check_order(name);
        self.writer.string_entry(name, text);
    }

    /// A JSON value as it is, such as one taken from the request.
    pub fn value(&mut self, name: &str, value: &Value) {
        self.check_order(name);
        self.writer.member(name, value);
    }

    /// A value viewed where it is held, as it is: the bytes [`ObjectWriter::value`] writes for
    /// the same JSON.
    pub fn view(&mut self, name: &str, value: View<'_>) {
        match (value, value.kind()) {
            (View::Json(value), _) => self.value(name, value),
            (_, Kind::String(text)) => self.string(name, text),
            (_, Kind::Bool(flag)) => self.bool(name, flag),
            (_, Kind::Object(object)) => self.object(name, |inner| {
                for (member, value) in object {
                    inner.view(member, value);
                }
            }),
            (_, Kind::List(items)) => self.list(name, |list| {
                for item in items {
                    list.view(item);
                }
            }),
            (_, Kind::Null) => self.value(name, &Value::Null),
            (_, Kind::Number(number)) => self.value(name, &Value::Number(number)),
        }
    }

    /// A JSON object as it is.
    pub fn map(&mut self, name: &str, map: &Map<String, Value>) {
        self.check_order(name);
        self.writer
            .entry_message(name, VALUE_STRUCT, |w| w.object(map));
    }

    /// A nested object, written member by member in key order.
    pub fn object(&mut self, name: &str, write: impl FnOnce(&mut ObjectWriter<'_>)) {
        self.check_order(name);
        self.writer
            .entry_message(name, VALUE_STRUCT, |w| write(&mut ObjectWriter::new(w)));
    }

    /// Writes a member `name` with a boolean value.
    pub fn bool(&mut self, name: &str, value: bool) {
        self.check_order(name);
        self.writer.bool_entry(name, value);
    }

    /// A list of strings.
    pub fn strings<'s>(&mut self, name: &str, items: impl IntoIterator<Item = &'s str>) {
        self.list(name, |list| {
            for item in items {
                list.string(item);
            }
        });
    }

    /// A list, written item by item.
    pub fn list(&mut self, name: &str, write: impl FnOnce(&mut ListWriter<'_>)) {
        self.check_order(name);
        self.writer.entry_message(name, VALUE_LIST, |writer| {
            write(&mut ListWriter {
                writer,
                wide: false,
            })
        });
    }

    /// The members of `earlier`, copied in key order, except those named in `ours` (sorted):
    /// `write` writes each of those (or leaves it out) where it falls in the order. This is how
    /// a step sets a few members of an object that earlier steps may have filled.
    pub fn merge(
        &mut self,
        earlier: Option<&Map<String, Value>>,
        ours: &[&str],
        mut write: impl FnMut(&mut Self, &str),
    ) {
        debug_assert!(ours.is_sorted(), "ours out of order: {ours:?}");
        let mut pending = ours.iter().copied().peekable();
        for (name, value) in earlier.into_iter().flatten() {
            while let Some(own) = pending.next_if(|own| *own < name.as_str()) {
                write(self, own);
            }
            if !ours.contains(&name.as_str()) {
                self.value(name, value);
            }
        }
        for own in pending {
            write(self, own);
        }
    }
}

/// Members encoded once and copied, as they are, into many objects: a member every resource
/// of a call has the same (the composite-wide `providerConfigRef`) costs one copy each rather
/// than one write each.
pub struct EncodedMembers {
    bytes: Box<[u8]>,
    /// The first and last names, for the order check of a debug build.
    #[cfg(debug_assertions)]
    names: Option<(String, String)>,
}

impl EncodedMembers {
    /// The members `write` writes, in key order, as [`ObjectWriter`] writes them anywhere.
    pub fn write(write: impl FnOnce(&mut ObjectWriter<'_>)) -> EncodedMembers {
        let mut writer = Writer::new();
        let mut members = ObjectWriter::new(&mut writer);
        write(&mut members);
        #[cfg(debug_assertions)]
        let names = members.first.take().zip(members.last.take());
        EncodedMembers {
            bytes: writer.bytes(),
            #[cfg(debug_assertions)]
            names,
        }
    }
}

/// Writes a ListValue's items straight into its encoding.
pub struct ListWriter<'w> {
    writer: &'w mut Writer,
    /// Whether the item before took two-byte lengths (see [`Writer::item_message`]).
    wide: bool,
}

impl ListWriter<'_> {
    /// Writes a string item.
    pub fn string(&mut self, text: &str) {
        self.writer.string_item(text);
        self.wide = false;
    }

    /// An object, written member by member in key order.
    pub fn object(&mut self, write: impl FnOnce(&mut ObjectWriter<'_>)) {
        self.wide = self.writer.item_message(self.wide, VALUE_STRUCT, |w| {
            write(&mut ObjectWriter::new(w))
        });
    }

    /// An item viewed where it is held, as it is.
    pub fn view(&mut self, item: View<'_>) {
        match item.kind() {
            Kind::String(text) => self.string(text),
            Kind::Object(object) => self.object(|inner| {
                for (member, value) in object {
                    inner.view(member, value);
                }
            }),
            _ => {
                let inner = self.writer.open(LIST_VALUES);
                self.writer.value(&item.to_value());
                self.writer.close(inner);
                self.wide = false;
            }
        }
    }
}
