//! Live schemas: the schemas of the kinds the cluster serves.
//!
//! Crossplane v2.2 and later advertise `CAPABILITY_REQUIRED_SCHEMAS`: a function names kinds in
//! `Requirements.schemas`, and Crossplane calls it again with each kind's OpenAPI schema as the
//! API server serves it, or an empty `Schema` when no CRD serves the kind (the provider is not
//! installed, is older, or has not activated the kind under SafeStart). The function then
//! checks what it renders against the provider release that is actually installed instead of
//! its built-in catalog.
//!
//! Requirement names are `schema/<apiVersion>/<kind>`: stable across calls, as Crossplane
//! requires (it calls again until the requirements stop changing, at most five times).

use super::openapi::CompiledSchema;
use crate::proto::v1::{Schema, SchemaSelector};
use crate::proto::Struct;
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::hash::{BuildHasher, Hasher};
use std::sync::{Arc, Mutex, PoisonError};

/// A kind by its apiVersion and kind.
pub type KindRef<'k> = (&'k str, &'k str);

/// What Crossplane answered for one kind.
#[derive(Debug, Clone)]
pub enum LiveSchema {
    /// No CRD serves the kind.
    NotServed,
    /// The kind's schema, compiled.
    Served(Arc<CompiledSchema>),
}

/// The answers of one request, by kind; a kind without an answer is not in the map.
#[derive(Debug, Default)]
pub struct LiveSchemas {
    by_kind: BTreeMap<(String, String), LiveSchema>,
}

/// The requirement name of a kind.
pub fn requirement_name(api_version: &str, kind: &str) -> String {
    format!("schema/{api_version}/{kind}")
}

/// `Requirements.schemas` for the kinds, by requirement name (sorted, so deterministic).
pub fn requirements<'k>(
    kinds: impl IntoIterator<Item = KindRef<'k>>,
) -> BTreeMap<String, SchemaSelector> {
    kinds
        .into_iter()
        .map(|(api_version, kind)| {
            let selector = SchemaSelector {
                api_version: api_version.to_owned(),
                kind: kind.to_owned(),
            };
            (requirement_name(api_version, kind), selector)
        })
        .collect()
}

impl LiveSchemas {
    /// The answers among `required_schemas` for `kinds`. Each schema is compiled once per
    /// process for the same content (see [`compiled`]).
    pub fn read<'k>(
        required_schemas: &BTreeMap<String, Schema>,
        kinds: impl IntoIterator<Item = KindRef<'k>>,
    ) -> LiveSchemas {
        let mut live = LiveSchemas::default();
        if required_schemas.is_empty() {
            return live;
        }
        let unique: BTreeSet<KindRef<'k>> = kinds.into_iter().collect();
        for (api_version, kind) in unique {
            let Some(answer) = required_schemas.get(&requirement_name(api_version, kind)) else {
                continue;
            };
            let schema = match &answer.openapi_v3 {
                Some(schema) if !schema.fields().is_empty() => LiveSchema::Served(compiled(schema)),
                _ => LiveSchema::NotServed,
            };
            live.by_kind
                .insert((api_version.to_owned(), kind.to_owned()), schema);
        }
        live
    }

    /// The answer for a kind, if Crossplane gave one.
    pub fn get(&self, api_version: &str, kind: &str) -> Option<&LiveSchema> {
        // A few dozen kinds at most: a search by borrowed names, no key to allocate.
        self.by_kind
            .iter()
            .find(|((v, k), _)| v == api_version && k == kind)
            .map(|(_, schema)| schema)
    }

    /// Whether Crossplane answered for any kind.
    pub fn is_empty(&self) -> bool {
        self.by_kind.is_empty()
    }
}

/// How many compiled schemas the process keeps: a Composition renders a few dozen kinds at
/// most; past that the oldest is dropped, never the result.
const CACHE_CAPACITY: usize = 256;

/// Compiled schemas by a 128-bit hash of their content, oldest first.
static CACHE: Mutex<Vec<(u128, Arc<CompiledSchema>)>> = Mutex::new(Vec::new());

/// The schema compiled, from the process's cache when the same content came before: every
/// call of a Composition sends the same schemas, and compiling one (its JSON tree and its CEL
/// rules) costs far more than hashing it.
pub fn compiled(schema: &Struct) -> Arc<CompiledSchema> {
    let hash = content_hash(schema.fields());
    let mut cache = CACHE.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((_, found)) = cache.iter().find(|(h, _)| *h == hash) {
        return Arc::clone(found);
    }
    let compiled = Arc::new(CompiledSchema::new(Value::Object(schema.fields().clone())));
    if cache.len() == CACHE_CAPACITY {
        cache.remove(0);
    }
    cache.push((hash, Arc::clone(&compiled)));
    compiled
}

/// Two 64-bit hashes with fixed seeds over the JSON tree, in one walk: the same content gives
/// the same hash in every process, and 128 bits make a collision between two schemas
/// negligible.
fn content_hash(fields: &Map<String, Value>) -> u128 {
    let seeded = |seed| foldhash::fast::FixedState::with_seed(seed).build_hasher();
    let mut both = Both(seeded(0x5eed_0001), seeded(0x5eed_0002));
    hash_object(fields, &mut both);
    (u128::from(both.1.finish()) << 64) | u128::from(both.0.finish())
}

/// Two hashers fed the same bytes.
struct Both<H>(H, H);

impl<H: Hasher> Hasher for Both<H> {
    fn write(&mut self, bytes: &[u8]) {
        self.0.write(bytes);
        self.1.write(bytes);
    }

    fn write_u8(&mut self, n: u8) {
        self.0.write_u8(n);
        self.1.write_u8(n);
    }

    fn write_u64(&mut self, n: u64) {
        self.0.write_u64(n);
        self.1.write_u64(n);
    }

    fn write_usize(&mut self, n: usize) {
        self.0.write_usize(n);
        self.1.write_usize(n);
    }

    fn finish(&self) -> u64 {
        self.0.finish()
    }
}

fn hash_object(fields: &Map<String, Value>, hasher: &mut impl Hasher) {
    hasher.write_usize(fields.len());
    for (key, value) in fields {
        hasher.write(key.as_bytes());
        hasher.write_u8(0xff);
        hash_value(value, hasher);
    }
}

fn hash_value(value: &Value, hasher: &mut impl Hasher) {
    match value {
        Value::Null => hasher.write_u8(0),
        Value::Bool(b) => hasher.write_u8(if *b { 1 } else { 2 }),
        Value::Number(n) => {
            hasher.write_u8(3);
            hasher.write_u64(n.as_f64().unwrap_or_default().to_bits());
        }
        Value::String(s) => {
            hasher.write_u8(4);
            hasher.write(s.as_bytes());
            hasher.write_u8(0xff);
        }
        Value::Array(items) => {
            hasher.write_u8(5);
            hasher.write_usize(items.len());
            for item in items {
                hash_value(item, hasher);
            }
        }
        Value::Object(fields) => {
            hasher.write_u8(6);
            hash_object(fields, hasher);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema(value: Value) -> Schema {
        Schema {
            openapi_v3: Some(Struct::from_value(value)),
        }
    }

    #[test]
    fn answers_are_read_by_requirement_name() {
        let mut answers = BTreeMap::new();
        answers.insert(
            requirement_name("a.example.org/v1", "Served"),
            schema(json!({"type": "object"})),
        );
        answers.insert(
            requirement_name("a.example.org/v1", "Missing"),
            Schema { openapi_v3: None },
        );
        let kinds = [
            ("a.example.org/v1", "Served"),
            ("a.example.org/v1", "Missing"),
            ("a.example.org/v1", "Unanswered"),
        ];
        let live = LiveSchemas::read(&answers, kinds);
        assert!(matches!(
            live.get("a.example.org/v1", "Served"),
            Some(LiveSchema::Served(_))
        ));
        assert!(matches!(
            live.get("a.example.org/v1", "Missing"),
            Some(LiveSchema::NotServed)
        ));
        assert!(live.get("a.example.org/v1", "Unanswered").is_none());
    }

    #[test]
    fn the_same_content_is_compiled_once() {
        let text = json!({"type": "object", "properties": {"n": {"type": "integer"}}});
        let first = compiled(&Struct::from_value(text.clone()));
        let again = compiled(&Struct::from_value(text));
        assert!(Arc::ptr_eq(&first, &again));
        let other = compiled(&Struct::from_value(json!({"type": "object"})));
        assert!(!Arc::ptr_eq(&first, &other));
    }

    #[test]
    fn requirements_are_sorted_and_named_stably() {
        let wanted = requirements([("b/v1", "K"), ("a/v1", "K")]);
        let names: Vec<&String> = wanted.keys().collect();
        assert_eq!(names, ["schema/a/v1/K", "schema/b/v1/K"]);
    }
}
