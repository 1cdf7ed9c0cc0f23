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
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

/// A kind by its apiVersion and kind.
pub(crate) type KindRef<'k> = (&'k str, &'k str);

/// What Crossplane answered for one kind.
#[derive(Debug, Clone)]
pub enum LiveSchema {
    /// No CRD serves the kind.
    NotServed,
    /// The kind's schema, compiled.
    Served(Arc<CompiledSchema>),
}

/// The answers of one request, by kind; a kind without an answer is not here. The names are
/// borrowed from the request.
#[derive(Debug, Default)]
pub struct LiveSchemas<'r> {
    by_kind: Vec<(KindRef<'r>, LiveSchema)>,
}

/// The requirement name of a kind.
pub fn requirement_name(api_version: &str, kind: &str) -> String {
    format!("schema/{api_version}/{kind}")
}

/// The kind a requirement name names (`schema/<apiVersion>/<kind>`, the apiVersion with or
/// without a group); `None` for a name of another form.
pub(crate) fn requirement_kind(name: &str) -> Option<KindRef<'_>> {
    let (api_version, kind) = name.strip_prefix("schema/")?.rsplit_once('/')?;
    (!api_version.is_empty() && !kind.is_empty()).then_some((api_version, kind))
}

/// `Requirements.schemas` for the kinds, by requirement name (sorted, so deterministic).
pub(crate) fn requirements<'k>(
    kinds: impl IntoIterator<Item = KindRef<'k>>,
) -> BTreeMap<String, SchemaSelector> {
    crate::core::sorted::map(kinds.into_iter().map(|(api_version, kind)| {
        let selector = SchemaSelector {
            api_version: api_version.to_owned(),
            kind: kind.to_owned(),
        };
        (requirement_name(api_version, kind), selector)
    }))
}

impl<'r> LiveSchemas<'r> {
    /// Every answer among `required_schemas` under a requirement name of ours, read once for
    /// the call. Each schema is found in the process's cache by the hash of its content, and
    /// compiled only the first time that content comes (see [`compiled`]); its tree is not
    /// even decoded then, when it came off the wire (`proto::Schema`).
    pub fn read(required_schemas: &'r BTreeMap<String, Schema>) -> LiveSchemas<'r> {
        let by_kind = required_schemas
            .iter()
            .filter_map(|(name, answer)| {
                let kind = requirement_kind(name)?;
                let schema = match &answer.openapi_v3 {
                    Some(schema) if !schema.is_empty() => LiveSchema::Served(compiled(schema)),
                    _ => LiveSchema::NotServed,
                };
                Some((kind, schema))
            })
            .collect();
        LiveSchemas { by_kind }
    }

    /// The answer for a kind, if Crossplane gave one.
    pub fn get(&self, api_version: &str, kind: &str) -> Option<&LiveSchema> {
        // A few dozen kinds at most: a search by borrowed names, no key to allocate.
        self.by_kind
            .iter()
            .find(|((v, k), _)| *v == api_version && *k == kind)
            .map(|(_, schema)| schema)
    }

    /// Whether Crossplane answered for any kind.
    pub fn is_empty(&self) -> bool {
        self.by_kind.is_empty()
    }
}

/// How many compiled schemas the process keeps, and about how many bytes (as
/// [`CompiledSchema::heap_bytes`] reckons them): a Composition renders a few dozen kinds, of
/// 50 to 150 kB compiled each; past either bound the least recently used is dropped, never
/// the result.
const CACHE_SCHEMAS: usize = 256;
const CACHE_BYTES: usize = 32 << 20;

/// Compiled schemas by the hash of their content, least recently used first, and the bytes
/// they hold.
struct Cache {
    entries: Vec<(u128, Arc<CompiledSchema>)>,
    bytes: usize,
}

static CACHE: Mutex<Cache> = Mutex::new(Cache {
    entries: Vec::new(),
    bytes: 0,
});

/// The schema compiled, from the process's cache when the same content came before, under any
/// requirement name: every call of a Composition sends the same schemas, and compiling one
/// costs far more than hashing it. A schema is compiled with the cache held, so that calls
/// running at once never compile one content twice.
pub(crate) fn compiled(schema: &Struct) -> Arc<CompiledSchema> {
    let hash = schema.content_hash();
    let mut cache = CACHE.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(i) = cache.entries.iter().position(|(h, _)| *h == hash) {
        // Most recently used last.
        cache.entries[i..].rotate_left(1);
        return Arc::clone(&cache.entries.last().expect("just found").1);
    }
    // Decoded for the compiler alone: the tree is freed once compiled, not kept in the request.
    let compiled = Arc::new(CompiledSchema::compile_object(&schema.decoded_fields()));
    let size = compiled.heap_bytes();
    while !cache.entries.is_empty()
        && (cache.entries.len() >= CACHE_SCHEMAS || cache.bytes + size > CACHE_BYTES)
    {
        let (_, oldest) = cache.entries.remove(0);
        cache.bytes -= oldest.heap_bytes();
    }
    cache.entries.push((hash, Arc::clone(&compiled)));
    cache.bytes += size;
    compiled
}

/// How many schemas the process's cache holds, and about how many bytes.
pub fn cache_size() -> (usize, usize) {
    let cache = CACHE.lock().unwrap_or_else(PoisonError::into_inner);
    (cache.entries.len(), cache.bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

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
        answers.insert("not-ours".to_owned(), schema(json!({"type": "object"})));
        let live = LiveSchemas::read(&answers);
        assert!(matches!(
            live.get("a.example.org/v1", "Served"),
            Some(LiveSchema::Served(_))
        ));
        assert!(matches!(
            live.get("a.example.org/v1", "Missing"),
            Some(LiveSchema::NotServed)
        ));
        assert!(live.get("a.example.org/v1", "Unanswered").is_none());
        assert_eq!(live.by_kind.len(), 2, "names of another form are not ours");
    }

    #[test]
    fn requirement_names_give_their_kinds_back() {
        for (api_version, kind) in [("v1", "Secret"), ("a.example.org/v1alpha1", "Thing")] {
            let name = requirement_name(api_version, kind);
            assert_eq!(requirement_kind(&name), Some((api_version, kind)));
        }
        assert_eq!(requirement_kind("artifactory-key-libs"), None);
        assert_eq!(requirement_kind("schema/Thing"), None);
    }

    #[test]
    fn the_same_content_is_compiled_once() {
        let text = json!({"type": "object", "properties": {"n": {"type": "integer"}}});
        let first = compiled(&Struct::from_value(text.clone()));
        let again = compiled(&Struct::from_value(text));
        assert!(Arc::ptr_eq(&first, &again));
        let other = compiled(&Struct::from_value(json!({"type": "object"})));
        assert!(!Arc::ptr_eq(&first, &other));
        let (schemas, bytes) = cache_size();
        assert!(schemas >= 2 && bytes > 0, "{schemas} {bytes}");
    }

    #[test]
    fn requirements_are_sorted_and_named_stably() {
        let wanted = requirements([("b/v1", "K"), ("a/v1", "K")]);
        let names: Vec<&String> = wanted.keys().collect();
        assert_eq!(names, ["schema/a/v1/K", "schema/b/v1/K"]);
    }
}
