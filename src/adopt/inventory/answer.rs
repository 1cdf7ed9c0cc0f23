//! Reading Artifactory's answers: its repository configurations, one at a time, from any of
//! the shapes its REST API gives them in.

use super::*;

/// The repository configurations of a text, each given to `each` as it is read (one
/// configuration in memory at a time): Artifactory's answer to
/// `GET /api/repositories/configurations` (an object of classes, `LOCAL`, `REMOTE`, `VIRTUAL`,
/// `FEDERATED`, ... each a list), a list of configurations (the older per-key answers), or a
/// single configuration (the answer of `GET /api/repositories/<key>`).
pub(crate) fn read_configurations(
    text: &str,
    each: &mut dyn FnMut(Map<String, Value>),
) -> Result<(), String> {
    let mut de = serde_json::Deserializer::from_str(text);
    let read = de.deserialize_any(Answer { each }).and_then(|()| de.end());
    read.map_err(|e| {
        if e.is_syntax() || e.is_eof() {
            format!("is not JSON ({e}); expected Artifactory's repository configurations")
        } else {
            e.to_string()
        }
    })
}

/// Reads an answer, one configuration at a time.
struct Answer<'f> {
    each: &'f mut dyn FnMut(Map<String, Value>),
}

impl<'de> Visitor<'de> for Answer<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object of classes (LOCAL, REMOTE, VIRTUAL, FEDERATED), a list of repository configurations, or one configuration")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<(), A::Error> {
        configurations(seq, None, self.each)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut single: Option<Map<String, Value>> = None;
        let mut first: Option<String> = None;
        let mut classes = false;
        while let Some(name) = map.next_key::<String>()? {
            if let Some(config) = &mut single {
                config.insert(name, map.next_value()?);
                continue;
            }
            // Artifactory names its classes in capitals (LOCAL, RELEASE_BUNDLES, ...); a
            // configuration's fields are in camel case.
            if !name.is_empty() && name.bytes().all(|b| b.is_ascii_uppercase() || b == b'_') {
                if first.is_some() {
                    return Err(not_a_class(first.as_deref().unwrap_or("")));
                }
                map.next_value_seed(Class {
                    name: &name,
                    each: &mut *self.each,
                })?;
                classes = true;
            } else if first.is_none() && !classes {
                // One configuration (its fields in any order), or some other answer.
                let mut config = Map::new();
                config.insert(name.clone(), map.next_value()?);
                single = Some(config);
                first = Some(name);
            } else {
                return Err(not_a_class(&name));
            }
        }
        if let Some(config) = single {
            if !config.get("key").is_some_and(Value::is_string) {
                return Err(not_a_class(first.as_deref().unwrap_or("")));
            }
            (self.each)(config);
        }
        Ok(())
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        Err(not_an_answer("a string"))
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        Err(not_an_answer("a number"))
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        Err(not_an_answer("a number"))
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        Err(not_an_answer("a number"))
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        Err(not_an_answer("a boolean"))
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Err(not_an_answer("null"))
    }
}

fn not_a_class<E: de::Error>(name: &str) -> E {
    E::custom(format!(
        "has {name:?}, which is not a class of repositories (LOCAL, REMOTE, VIRTUAL, FEDERATED) nor a field of one configuration with a key"
    ))
}

fn not_an_answer<E: de::Error>(what: &str) -> E {
    E::custom(format!(
        "is {what}; expected an object of classes (LOCAL, REMOTE, VIRTUAL, FEDERATED), a list of repository configurations or one configuration"
    ))
}

/// The list of one class.
struct Class<'a, 'f> {
    name: &'a str,
    each: &'a mut (dyn FnMut(Map<String, Value>) + 'f),
}

impl<'de> DeserializeSeed<'de> for Class<'_, '_> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Class<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{} as a list of repository configurations", self.name)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<(), A::Error> {
        configurations(seq, Some(self.name), self.each)
    }

    fn visit_map<A: MapAccess<'de>>(self, _: A) -> Result<(), A::Error> {
        Err(not_a_list(self.name, "an object"))
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        Err(not_a_list(self.name, "a string"))
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        Err(not_a_list(self.name, "a number"))
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        Err(not_a_list(self.name, "a number"))
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        Err(not_a_list(self.name, "a number"))
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        Err(not_a_list(self.name, "a boolean"))
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Err(not_a_list(self.name, "null"))
    }
}

fn not_a_list<E: de::Error>(class: &str, what: &str) -> E {
    E::custom(format!(
        "has {class} as {what}, not a list of repository configurations"
    ))
}

/// Each item of a list, as a configuration: the class it is listed under, where it does not
/// say its own.
fn configurations<'de, A: SeqAccess<'de>>(
    mut seq: A,
    class: Option<&str>,
    each: &mut dyn FnMut(Map<String, Value>),
) -> Result<(), A::Error> {
    let mut i = 0;
    while let Some(item) = seq.next_element::<Value>()? {
        let Value::Object(mut config) = item else {
            return Err(de::Error::custom(format!(
                "has {} at {}[{i}], not a repository configuration (an object with key, rclass, packageType)",
                json_kind(&item),
                class.unwrap_or("")
            )));
        };
        if let Some(class) = class {
            config
                .entry("rclass")
                .or_insert_with(|| json!(class.to_ascii_lowercase()));
        }
        each(config);
        i += 1;
    }
    Ok(())
}
