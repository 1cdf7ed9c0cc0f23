//! Test support: validates Kubernetes objects against CustomResourceDefinitions the way the
//! API server does: ObjectMeta checks here, and the schema (defaults, OpenAPI types, list
//! types, `x-kubernetes-validations` CEL rules) with the library's own validator,
//! `validation::openapi`, which also checks the live schemas Crossplane sends.

// Each integration test binary compiles its own copy and uses only part of it.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use function_artifactory::validation::{field_path, index_path, json_type, CompiledSchema};
use serde_json::Value;

/// The served versions of a set of CRDs, indexed by (apiVersion "group/version", kind).
pub struct Crds {
    kinds: BTreeMap<(String, String), Crd>,
}

/// One served version of one CRD.
struct Crd {
    scope: String,
    schema: CompiledSchema,
    file: PathBuf,
}

impl fmt::Debug for Crds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Crds")
            .field("kinds", &self.kinds.len())
            .finish()
    }
}

impl Crds {
    /// Loads every *.yaml CRD in `dir` (non-recursive). Error string names the file.
    ///
    /// A directory without any CRD is an error too, so that a wrong path cannot make a
    /// test pass by validating nothing.
    pub fn load_dir(dir: &Path) -> Result<Crds, String> {
        let mut crds = Crds {
            kinds: BTreeMap::new(),
        };
        for file in yaml_files(dir)? {
            crds.add_file(&file)
                .map_err(|e| format!("{}: {e}", file.display()))?;
        }
        if crds.kinds.is_empty() {
            return Err(format!("{}: no *.yaml CRD found", dir.display()));
        }
        Ok(crds)
    }

    /// The CRDs among named, parsed YAML documents.
    pub fn from_documents(
        documents: impl IntoIterator<Item = (String, Value)>,
    ) -> Result<Crds, String> {
        let mut crds = Crds {
            kinds: BTreeMap::new(),
        };
        for (name, doc) in documents {
            crds.add_document(&doc, Path::new(&name))
                .map_err(|e| format!("{name}: {e}"))?;
        }
        if crds.kinds.is_empty() {
            return Err("no CRD given".to_string());
        }
        Ok(crds)
    }

    /// Every (apiVersion, kind, scope) known, sorted.
    pub fn kinds(&self) -> Vec<(String, String, String)> {
        self.kinds
            .iter()
            .map(|((api, kind), crd)| (api.clone(), kind.clone(), crd.scope.clone()))
            .collect()
    }

    /// Validates one object. Returns every violation found (empty = valid), each message
    /// starting with the JSON path, e.g. "spec.forProvider.url: expected string, got number".
    pub fn validate(&self, object: &Value) -> Vec<String> {
        let crd = match self.lookup(object) {
            Ok(crd) => crd,
            Err(e) => return vec![e],
        };
        let mut body = object.clone();
        let fields = body.as_object_mut().expect("lookup accepts only objects");
        // metadata is checked as ObjectMeta (the schema only says `type: object`); status is
        // written by the provider, never rendered, so it is out of scope.
        let metadata = fields.remove("metadata");
        fields.remove("status");

        let mut errors = Vec::new();
        check_metadata(metadata.as_ref(), &crd.scope, &mut errors);
        errors.extend(crd.schema.validate(&body));
        errors
    }

    /// The CRD serving the object's apiVersion and kind.
    fn lookup(&self, object: &Value) -> Result<&Crd, String> {
        if !object.is_object() {
            return Err(format!(
                "<root>: expected object, got {}",
                json_type(object)
            ));
        }
        let api = object["apiVersion"].as_str().unwrap_or_default();
        let kind = object["kind"].as_str().unwrap_or_default();
        self.kinds
            .get(&(api.to_string(), kind.to_string()))
            .ok_or_else(|| {
                format!(
                    "apiVersion/kind: {api:?} {kind:?} is not served by any loaded CRD{}",
                    self.kind_hint(api, kind)
                )
            })
    }

    /// Suggestions for an unknown kind: kind spelling is irregular across CRD folders.
    fn kind_hint(&self, api: &str, kind: &str) -> String {
        let same_name: Vec<String> = self
            .kinds
            .keys()
            .filter(|(_, k)| k.eq_ignore_ascii_case(kind))
            .map(|(a, k)| format!("{a} {k}"))
            .collect();
        if !same_name.is_empty() {
            return format!("; did you mean: {}", same_name.join(", "));
        }
        let same_api: Vec<&str> = self
            .kinds
            .keys()
            .filter(|(a, _)| a == api)
            .map(|(_, k)| k.as_str())
            .collect();
        if same_api.is_empty() {
            String::new()
        } else {
            format!("; kinds of {api}: {}", same_api.join(", "))
        }
    }

    /// Adds every served version of the CRD in `file`.
    fn add_file(&mut self, file: &Path) -> Result<(), String> {
        let text = std::fs::read_to_string(file).map_err(|e| e.to_string())?;
        let doc: Value =
            serde_yaml_ng::from_str(&text).map_err(|e| format!("invalid YAML: {e}"))?;
        self.add_document(&doc, file)
    }

    /// Adds every served version of one parsed CRD; `file` names it in messages.
    fn add_document(&mut self, doc: &Value, file: &Path) -> Result<(), String> {
        if doc["kind"] != "CustomResourceDefinition" {
            return Err(format!(
                "not a CustomResourceDefinition: kind {}",
                doc["kind"]
            ));
        }
        let spec = &doc["spec"];
        let group = required_str(spec, "group")?;
        let kind = required_str(&spec["names"], "kind")?;
        let scope = required_str(spec, "scope")?;
        let versions = spec["versions"].as_array().ok_or("spec.versions missing")?;
        for version in versions.iter().filter(|v| v["served"] == true) {
            let name = required_str(version, "name")?;
            let schema = &version["schema"]["openAPIV3Schema"];
            if !schema.is_object() {
                return Err(format!("version {name} has no schema.openAPIV3Schema"));
            }
            let key = (format!("{group}/{name}"), kind.to_string());
            if let Some(other) = self.kinds.get(&key) {
                return Err(format!(
                    "{key:?} is also defined by {}",
                    other.file.display()
                ));
            }
            let crd = Crd {
                scope: scope.to_string(),
                schema: CompiledSchema::new(schema.clone()),
                file: file.to_path_buf(),
            };
            self.kinds.insert(key, crd);
        }
        Ok(())
    }
}

/// The provider CRDs of one API generation (`flat`, `cluster`, `namespaced`) in the newest
/// release that has it, from the repository's `crds/` (read by the `codegen` feature's
/// reader; without that feature the tests that need them print a visible SKIP line).
pub fn provider_crds(api: &str) -> Option<Crds> {
    let documents = provider_crd_documents(api)?;
    Some(Crds::from_documents(documents).unwrap_or_else(|e| panic!("{e}")))
}

/// The documents behind [`provider_crds`]: (file name, parsed CRD), by file name.
pub fn provider_crd_documents(api: &str) -> Option<Vec<(String, Value)>> {
    #[cfg(feature = "codegen")]
    {
        use function_artifactory::catalog::{catalog, ProviderApi};
        let api = ProviderApi::parse(api).expect("a provider API");
        let catalog = catalog();
        let release = catalog.release_name(catalog.effective_release(None, api));
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let release = function_artifactory::codegen::crds::release(root, release)
            .unwrap_or_else(|e| panic!("{e}"));
        let namespaced = api == ProviderApi::Namespaced;
        let documents = release.crds.into_iter().filter(|(_, crd)| {
            let group = crd["spec"]["group"].as_str().unwrap_or_default();
            group.contains(".m.") == namespaced
        });
        Some(documents.collect())
    }
    #[cfg(not(feature = "codegen"))]
    {
        eprintln!("SKIP CRD validation ({api}): run the tests with --all-features");
        None
    }
}

/// The *.yaml files directly in `dir`, sorted so that loading is deterministic.
fn yaml_files(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut files = Vec::new();
    for entry in entries {
        let path = entry.map_err(|e| format!("{}: {e}", dir.display()))?.path();
        if path.is_file() && path.extension().is_some_and(|ext| ext == "yaml") {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

fn required_str<'a>(node: &'a Value, key: &str) -> Result<&'a str, String> {
    node[key]
        .as_str()
        .ok_or_else(|| format!("missing string field {key:?}"))
}

// ---------------------------------------------------------------------------------------
// metadata (ObjectMeta), checked as the API server does
// ---------------------------------------------------------------------------------------

/// Checks the subset of ObjectMeta that a rendered object may sensibly carry.
fn check_metadata(metadata: Option<&Value>, scope: &str, errors: &mut Vec<String>) {
    let Some(metadata) = metadata else {
        return;
    };
    let Some(fields) = metadata.as_object() else {
        let got = json_type(metadata);
        return errors.push(format!("metadata: expected object, got {got}"));
    };
    for (key, value) in fields {
        let path = field_path("metadata", key);
        if let Err(e) = check_meta_field(key, value, &path, errors) {
            errors.push(format!("{path}: {e}"));
        }
    }
    if scope == "Cluster" && fields.contains_key("namespace") {
        errors.push("metadata.namespace: must be absent for a Cluster-scoped kind".to_string());
    }
}

/// One metadata field; an `Err` is reported at the field's own path.
fn check_meta_field(
    key: &str,
    value: &Value,
    path: &str,
    errors: &mut Vec<String>,
) -> Result<(), String> {
    match key {
        "name" => check_name(value, false),
        "generateName" => check_name(value, true),
        "namespace" => expect_str(value).and_then(|s| {
            dns_label(s)
                .then_some(())
                .ok_or_else(|| format!("invalid namespace {s:?}: must be a DNS-1123 label"))
        }),
        "labels" => {
            check_string_map(value, path, errors, label_entry);
            Ok(())
        }
        "annotations" => {
            check_string_map(value, path, errors, annotation_entry);
            Ok(())
        }
        "finalizers" => check_finalizers(value, path, errors),
        "ownerReferences" => check_owner_references(value, path, errors),
        "uid" | "resourceVersion" => expect_str(value).map(|_| ()),
        "generation" if value.is_i64() => Ok(()),
        "generation" => Err(format!("expected integer, got {}", json_type(value))),
        // Serializers commonly write an unset timestamp as null.
        "creationTimestamp" if value.is_null() => Ok(()),
        "creationTimestamp" => expect_str(value).map(|_| ()),
        _ => Err("unknown or unsupported metadata field".to_string()),
    }
}

fn expect_str(value: &Value) -> Result<&str, String> {
    value
        .as_str()
        .ok_or_else(|| format!("expected string, got {}", json_type(value)))
}

/// Custom resource names are DNS-1123 subdomains; a generateName is a prefix of one, so a
/// trailing '-' is fine there.
fn check_name(value: &Value, prefix: bool) -> Result<(), String> {
    let name = expect_str(value)?;
    let masked = match name.strip_suffix('-') {
        Some(stem) if prefix => format!("{stem}a"),
        _ => name.to_string(),
    };
    if dns_subdomain(&masked) {
        Ok(())
    } else {
        Err(format!("invalid name {name:?}: must be a DNS-1123 subdomain (lowercase alphanumerics, '-' and '.', at most 253 characters)"))
    }
}

/// Labels and annotations: a map of string to string whose entries pass `entry`.
fn check_string_map(
    value: &Value,
    path: &str,
    errors: &mut Vec<String>,
    entry: fn(&str, &str) -> Result<(), String>,
) {
    let Some(map) = value.as_object() else {
        return errors.push(format!("{path}: expected object, got {}", json_type(value)));
    };
    for (key, value) in map {
        let result = expect_str(value).and_then(|value| entry(key, value));
        if let Err(e) = result {
            errors.push(format!("{}: {e}", index_path(path, key)));
        }
    }
    if path.ends_with("annotations") {
        let size: usize = map
            .iter()
            .map(|(k, v)| k.len() + v.as_str().map_or(0, str::len))
            .sum();
        if size > 256 * 1024 {
            errors.push(format!(
                "{path}: annotations are {size} bytes, at most 262144 allowed"
            ));
        }
    }
}

fn label_entry(key: &str, value: &str) -> Result<(), String> {
    if !qualified_name(key) {
        return Err(format!("invalid label key {key:?}: {QUALIFIED_NAME_RULE}"));
    }
    if !label_value(value) {
        return Err(format!("invalid label value {value:?}: at most 63 characters, alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric"));
    }
    Ok(())
}

fn annotation_entry(key: &str, _value: &str) -> Result<(), String> {
    // The API server lowercases annotation keys before checking them.
    if qualified_name(&key.to_ascii_lowercase()) {
        Ok(())
    } else {
        Err(format!(
            "invalid annotation key {key:?}: {QUALIFIED_NAME_RULE}"
        ))
    }
}

fn check_finalizers(value: &Value, path: &str, errors: &mut Vec<String>) -> Result<(), String> {
    let items = value
        .as_array()
        .ok_or_else(|| format!("expected array, got {}", json_type(value)))?;
    for (i, item) in items.iter().enumerate() {
        let result = expect_str(item).and_then(|f| {
            qualified_name(f)
                .then_some(())
                .ok_or_else(|| format!("invalid finalizer {f:?}: {QUALIFIED_NAME_RULE}"))
        });
        if let Err(e) = result {
            errors.push(format!("{}: {e}", index_path(path, i)));
        }
    }
    Ok(())
}

fn check_owner_references(
    value: &Value,
    path: &str,
    errors: &mut Vec<String>,
) -> Result<(), String> {
    let items = value
        .as_array()
        .ok_or_else(|| format!("expected array, got {}", json_type(value)))?;
    for (i, item) in items.iter().enumerate() {
        check_owner_reference(item, &index_path(path, i), errors);
    }
    Ok(())
}

fn check_owner_reference(item: &Value, path: &str, errors: &mut Vec<String>) {
    let Some(fields) = item.as_object() else {
        return errors.push(format!("{path}: expected object, got {}", json_type(item)));
    };
    for required in ["apiVersion", "kind", "name", "uid"] {
        if !fields.contains_key(required) {
            errors.push(format!("{path}.{required}: required field is missing"));
        }
    }
    for (key, value) in fields {
        let problem = match key.as_str() {
            "apiVersion" | "kind" | "name" | "uid" => expect_str(value).err(),
            "controller" | "blockOwnerDeletion" if value.is_boolean() => None,
            "controller" | "blockOwnerDeletion" => {
                Some(format!("expected boolean, got {}", json_type(value)))
            }
            _ => Some("unknown field".to_string()),
        };
        if let Some(problem) = problem {
            errors.push(format!("{path}.{key}: {problem}"));
        }
    }
}

// ---------------------------------------------------------------------------------------
// Kubernetes name syntax (k8s.io/apimachinery/pkg/util/validation), without a regex crate
// ---------------------------------------------------------------------------------------

const QUALIFIED_NAME_RULE: &str = "an optional DNS subdomain prefix and '/', then a name of at \
     most 63 alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric";

/// `(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?` without the emptiness: the body of label
/// values and of qualified-name names.
fn name_part(s: &str) -> bool {
    let alnum = |c: char| c.is_ascii_alphanumeric();
    s.starts_with(alnum)
        && s.ends_with(alnum)
        && s.chars().all(|c| alnum(c) || matches!(c, '-' | '_' | '.'))
}

fn label_value(s: &str) -> bool {
    s.is_empty() || (s.len() <= 63 && name_part(s))
}

/// `[prefix/]name`: prefix a DNS subdomain, name at most 63 characters.
fn qualified_name(s: &str) -> bool {
    let (prefix, name) = match s.split_once('/') {
        Some((prefix, name)) => (Some(prefix), name),
        None => (None, s),
    };
    prefix.is_none_or(dns_subdomain) && name.len() <= 63 && name_part(name)
}

/// One dot-free piece of a DNS-1123 name: `[a-z0-9]([-a-z0-9]*[a-z0-9])?`.
fn dns_piece(s: &str) -> bool {
    let alnum = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    s.starts_with(alnum) && s.ends_with(alnum) && s.chars().all(|c| alnum(c) || c == '-')
}

fn dns_label(s: &str) -> bool {
    s.len() <= 63 && dns_piece(s)
}

fn dns_subdomain(s: &str) -> bool {
    s.len() <= 253 && s.split('.').all(dns_piece)
}
