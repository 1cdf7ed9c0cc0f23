//! Reading the files `render` is given, with the checks and error texts of
//! `crossplane render` (`cmd/crank/render/load.go` and `cmd.go`).
//!
//! YAML is read as `sigs.k8s.io/yaml` reads it (YAML 1.1, merge keys, JSON numbers): see
//! [`go_yaml`].

use super::Result;
use crate::proto::v1::{resource_selector, MatchLabels, ResourceSelector, SchemaSelector};
use anyhow::{Context as _, Error};
use serde::Deserialize;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::io::Read as _;
use std::path::{Path, PathBuf};

/// A Kubernetes object as a JSON map.
pub(super) type Object = Map<String, Value>;

/// The annotation that keys composed resources by composition resource name.
pub(super) const ANNOTATION_RESOURCE_NAME: &str = "crossplane.io/composition-resource-name";

/// The Composition: what render needs of it.
#[derive(Debug, Clone)]
pub(super) struct Composition {
    pub name: String,
    pub labels: BTreeMap<String, String>,
    pub composite_api_version: String,
    pub composite_kind: String,
    pub mode: String,
    pub steps: Vec<Step>,
}

/// One pipeline step.
#[derive(Debug, Clone)]
pub(super) struct Step {
    pub name: String,
    pub function: String,
    pub input: Option<Value>,
    /// Bootstrap requirements (`requirements.requiredResources`), by name.
    pub required_resources: Vec<(String, ResourceSelector)>,
    /// Bootstrap schema requirements (`requirements.requiredSchemas`), by name.
    pub required_schemas: Vec<(String, SchemaSelector)>,
    /// Credentials from Secrets (`credentials` of source `Secret` with a `secretRef`).
    pub credentials: Vec<StepCredential>,
}

/// A step's request for credentials from a Secret, as the Composition names it; the Secrets
/// themselves are given with `--function-credentials`.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct StepCredential {
    /// The name the function sees the credentials by.
    pub name: String,
    pub secret_name: String,
    pub secret_namespace: String,
}

/// A `pkg.crossplane.io` Function: its name, package and annotations.
#[derive(Debug, Clone, Default)]
pub(super) struct Function {
    pub name: String,
    pub package: String,
    pub annotations: BTreeMap<String, String>,
}

// ---- the documents as serde reads them ----

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct Meta {
    name: String,
    labels: BTreeMap<String, String>,
    annotations: BTreeMap<String, String>,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct Header {
    api_version: String,
    kind: String,
    metadata: Meta,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct CompositionSpec {
    composite_type_ref: TypeRef,
    mode: String,
    pipeline: Vec<StepSpec>,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct TypeRef {
    api_version: String,
    kind: String,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct StepSpec {
    step: String,
    function_ref: FunctionRef,
    input: Option<Value>,
    requirements: Option<StepRequirements>,
    credentials: Vec<CredentialSpec>,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct CredentialSpec {
    name: String,
    source: String,
    secret_ref: Option<SecretRefSpec>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct SecretRefSpec {
    name: String,
    namespace: String,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct FunctionRef {
    name: String,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct StepRequirements {
    required_resources: Vec<SelectorSpec>,
    required_schemas: Vec<SchemaSelectorSpec>,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct SchemaSelectorSpec {
    requirement_name: String,
    api_version: String,
    kind: String,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct SelectorSpec {
    requirement_name: String,
    api_version: String,
    kind: String,
    name: Option<String>,
    match_labels: Option<BTreeMap<String, String>>,
    namespace: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct FunctionSpec {
    package: String,
}

// ---- loaders ----

/// The composite resource: one YAML document with `apiVersion` and `kind`.
pub(super) fn composite(path: &Path) -> Result<Object> {
    let load = || -> Result<Object> {
        let text = read(path).context("cannot read composite resource file")?;
        let mut docs = parse_all(&text).context("cannot unmarshal composite resource YAML")?;
        if docs.len() != 1 {
            let msg = format!("expected one YAML document, found {}", docs.len());
            return Err(Error::msg(msg).context("cannot unmarshal composite resource YAML"));
        }
        let object = as_kubernetes_object(docs.remove(0));
        object.context("cannot unmarshal composite resource YAML")
    };
    load().with_context(|| format!("cannot load composite resource from {}", quoted(path)))
}

/// The Composition: `apiextensions.crossplane.io/v1` `Composition`.
pub(super) fn composition(path: &Path) -> Result<Composition> {
    let load = || -> Result<Composition> {
        let text = read(path).context("cannot read composition file")?;
        let doc = go_yaml::read_first(&text)
            .map_err(Error::msg)
            .context("cannot unmarshal composition resource YAML")?;
        let doc = if doc.is_null() {
            Value::Object(Map::new())
        } else {
            doc
        };
        parse_composition(doc)
    };
    load().with_context(|| format!("cannot load Composition from {}", quoted(path)))
}

fn parse_composition(doc: Value) -> Result<Composition> {
    let doc = without_nulls(doc);
    let wrap = |e: serde_json::Error| {
        Error::msg(e.to_string()).context("cannot unmarshal composition resource YAML")
    };
    let header: Header = serde_json::from_value(doc.clone()).map_err(wrap)?;
    if header.api_version != "apiextensions.crossplane.io/v1" || header.kind != "Composition" {
        return Err(Error::msg(format!(
            "not a composition: {}/{}",
            header.kind, header.metadata.name
        )));
    }
    let spec = doc.get("spec").cloned().unwrap_or(Value::Null);
    let spec: CompositionSpec = serde_json::from_value(spec).map_err(wrap)?;
    Ok(Composition {
        name: header.metadata.name,
        labels: header.metadata.labels,
        composite_api_version: spec.composite_type_ref.api_version,
        composite_kind: spec.composite_type_ref.kind,
        mode: spec.mode,
        steps: spec.pipeline.into_iter().map(step).collect(),
    })
}

fn step(spec: StepSpec) -> Step {
    let requirements = spec.requirements.unwrap_or_default();
    let schema = |spec: SchemaSelectorSpec| {
        let selector = SchemaSelector {
            api_version: spec.api_version,
            kind: spec.kind,
        };
        (spec.requirement_name, selector)
    };
    Step {
        name: spec.step,
        function: spec.function_ref.name,
        input: spec.input,
        required_resources: requirements
            .required_resources
            .into_iter()
            .map(selector)
            .collect(),
        required_schemas: requirements
            .required_schemas
            .into_iter()
            .map(schema)
            .collect(),
        // Only Secrets are a source of credentials, as in Crossplane; others are skipped.
        credentials: spec
            .credentials
            .into_iter()
            .filter(|c| c.source == "Secret")
            .filter_map(|c| {
                let secret = c.secret_ref?;
                Some(StepCredential {
                    name: c.name,
                    secret_name: secret.name,
                    secret_namespace: secret.namespace,
                })
            })
            .collect(),
    }
}

fn selector(spec: SelectorSpec) -> (String, ResourceSelector) {
    let r#match = match (spec.name, spec.match_labels) {
        (Some(name), _) => Some(resource_selector::Match::MatchName(name)),
        (None, Some(labels)) => Some(resource_selector::Match::MatchLabels(MatchLabels {
            labels,
        })),
        (None, None) => None,
    };
    let selector = ResourceSelector {
        api_version: spec.api_version,
        kind: spec.kind,
        namespace: spec.namespace,
        r#match,
    };
    (spec.requirement_name, selector)
}

/// The Functions: a file or folder of `pkg.crossplane.io` `Function`s.
pub(super) fn functions(path: &Path) -> Result<Vec<Function>> {
    let load = || -> Result<Vec<Function>> {
        let docs = read_stream(path).context("cannot load YAML stream from file")?;
        docs.into_iter().map(parse_function).collect()
    };
    load().with_context(|| format!("cannot load functions from {}", quoted(path)))
}

fn parse_function(doc: Value) -> Result<Function> {
    let doc = without_nulls(doc);
    let wrap = |e: serde_json::Error| {
        Error::msg(e.to_string()).context("cannot parse YAML Function manifest")
    };
    let header: Header = serde_json::from_value(doc.clone()).map_err(wrap)?;
    let known = ["pkg.crossplane.io/v1", "pkg.crossplane.io/v1beta1"];
    if !known.contains(&header.api_version.as_str()) || header.kind != "Function" {
        return Err(Error::msg(format!(
            "not a function: {}/{}",
            header.kind, header.metadata.name
        )));
    }
    let spec = doc.get("spec").cloned().unwrap_or(Value::Null);
    let spec: FunctionSpec = serde_json::from_value(spec).map_err(wrap)?;
    Ok(Function {
        name: header.metadata.name,
        package: spec.package,
        annotations: header.metadata.annotations,
    })
}

/// Observed composed resources or required resources: a file or folder of
/// Kubernetes objects. `what` names them in errors.
pub(super) fn resources(path: &Path, what: &str) -> Result<Vec<Object>> {
    let load = || -> Result<Vec<Object>> {
        let docs = read_stream(path).context("cannot load YAML stream from file")?;
        let parse = |doc| as_kubernetes_object(doc).context("cannot parse YAML resource manifest");
        docs.into_iter().map(parse).collect()
    };
    load().with_context(|| format!("cannot load {what} from {}", quoted(path)))
}

/// The Secrets of `--function-credentials`: a file or folder of YAML mappings.
pub(super) fn secrets(path: &Path) -> Result<Vec<Object>> {
    let load = || -> Result<Vec<Object>> {
        let docs = read_stream(path).context("cannot load YAML stream from file")?;
        let parse = |doc| match doc {
            Value::Object(object) => Ok(object),
            _ => Err(Error::msg("the document is not a YAML mapping")
                .context("cannot parse YAML secret manifest")),
        };
        docs.into_iter().map(parse).collect()
    };
    load().with_context(|| format!("cannot load secrets from {}", quoted(path)))
}

/// The CompositeResourceDefinition of `--xrd`: the first document of a file.
pub(super) fn xrd(path: &Path) -> Result<Object> {
    let load =
        || -> Result<Object> {
            let text = read(path).context("cannot read XRD file")?;
            let doc = go_yaml::read_first(&text)
                .map_err(Error::msg)
                .context("cannot unmarshal XRD YAML")?;
            match doc {
                Value::Object(object) => Ok(object),
                _ => Err(Error::msg("the file holds no YAML mapping")
                    .context("cannot unmarshal XRD YAML")),
            }
        };
    load().with_context(|| format!("cannot load XRD from {}", quoted(path)))
}

/// Context values given with `--context-values KEY=VALUE` (YAML or JSON) and
/// `--context-files KEY=FILE`; values win over files for the same key.
pub(super) fn context(files: &[String], values: &[String]) -> Result<Object> {
    let mut context = Object::new();
    for (key, file) in flag_pairs(files)? {
        let text = read(Path::new(&file))
            .with_context(|| format!("cannot read context file for key {key:?}"))?;
        context.insert(key.clone(), parse_value(&text, &key)?);
    }
    for (key, text) in flag_pairs(values)? {
        context.insert(key.clone(), parse_value(&text, &key)?);
    }
    Ok(context)
}

/// The first document of a context value (`null` for none), as `sigs.k8s.io/yaml.Unmarshal`
/// reads it.
fn parse_value(text: &str, key: &str) -> Result<Value> {
    go_yaml::read_first(text).map_err(|e| {
        Error::msg(e).context(format!(
            "cannot unmarshal YAML/JSON for context key {key:?}"
        ))
    })
}

/// `KEY=VALUE` pairs from repeated flags, each of which may hold several
/// pairs separated by `;` (kong's map syntax; `\;` keeps a literal `;`).
fn flag_pairs(flags: &[String]) -> Result<Vec<(String, String)>> {
    let mut pairs = Vec::new();
    for flag in flags {
        for pair in split_unescaped(flag, ';') {
            let Some((key, value)) = pair.split_once('=') else {
                return Err(Error::msg(format!("expected KEY=VALUE, got {pair:?}")));
            };
            pairs.push((key.to_string(), value.to_string()));
        }
    }
    Ok(pairs)
}

fn split_unescaped(text: &str, separator: char) -> Vec<String> {
    let mut parts = vec![String::new()];
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&separator) => {
                parts.last_mut().unwrap().push(chars.next().unwrap())
            }
            c if c == separator => parts.push(String::new()),
            c => parts.last_mut().unwrap().push(c),
        }
    }
    parts.retain(|p| !p.is_empty());
    parts
}

/// The document without null fields: Go's JSON decoding leaves a field
/// that is null at its zero value (`pipeline:` with nothing after it is an
/// empty pipeline). A step's `input` is kept as it is: it goes to the
/// function.
fn without_nulls(value: Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| {
                    if k == "input" {
                        (k, v)
                    } else {
                        (k, without_nulls(v))
                    }
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(without_nulls).collect()),
        other => other,
    }
}

// ---- files and YAML streams ----

/// The largest file `render` reads: four times the largest request the function accepts by
/// default. YAML read into objects takes several times its size in memory; a larger file is
/// almost certainly not what was meant (a log, an image, a device).
const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// A file's text, once it is known to be a regular file of at most [`MAX_FILE_BYTES`]:
/// `/dev/zero` would be read until memory runs out, a FIFO would wait for a writer forever.
fn read(path: &Path) -> Result<String> {
    let open_error = |e: std::io::Error| Error::msg(format!("open {}: {e}", path.display()));
    check_file(path, &std::fs::metadata(path).map_err(open_error)?)?;
    let file = std::fs::File::open(path).map_err(open_error)?;
    // Checked again on what was opened, and read no further than the limit: the file may
    // have changed since.
    check_file(path, &file.metadata().map_err(open_error)?)?;
    let mut text = String::new();
    file.take(MAX_FILE_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| Error::msg(format!("read {}: {e}", path.display())))?;
    if text.len() as u64 > MAX_FILE_BYTES {
        return Err(too_large(path, text.len() as u64));
    }
    Ok(text)
}

fn check_file(path: &Path, metadata: &std::fs::Metadata) -> Result<()> {
    use std::os::unix::fs::FileTypeExt;
    let kind = metadata.file_type();
    let what = if kind.is_file() {
        return match metadata.len() {
            size if size > MAX_FILE_BYTES => Err(too_large(path, size)),
            _ => Ok(()),
        };
    } else if kind.is_dir() {
        "a directory"
    } else if kind.is_fifo() {
        "a FIFO (named pipe)"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    };
    Err(Error::msg(format!(
        "{} is {what}: render reads YAML from regular files",
        path.display()
    )))
}

fn too_large(path: &Path, size: u64) -> Error {
    Error::msg(format!(
        "{} is {size} bytes, more than the {MAX_FILE_BYTES} bytes (16 MiB) render reads from one file",
        path.display()
    ))
}

/// The documents of a file, or of every `.yaml`/`.yml` file directly in a
/// folder, in file-name order (`LoadYAMLStream`).
fn read_stream(path: &Path) -> Result<Vec<Value>> {
    let files = if path.is_dir() {
        yaml_files(path)?
    } else {
        vec![path.to_path_buf()]
    };
    let mut docs = Vec::new();
    for file in files {
        let text = read(&file)?;
        docs.extend(
            split_stream(&text)
                .with_context(|| format!("cannot parse YAML stream in {}", file.display()))?,
        );
    }
    Ok(docs)
}

fn yaml_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| Error::msg(format!("cannot read directory: {e}")))?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|p| {
            p.is_file() && matches!(p.extension().and_then(|e| e.to_str()), Some("yaml" | "yml"))
        })
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(Error::msg(format!(
            "no YAML files found in {} (.yaml or .yml)",
            quoted(dir)
        )));
    }
    Ok(files)
}

/// The non-empty documents of a file of manifests, split as crossplane render splits one.
fn split_stream(text: &str) -> Result<Vec<Value>> {
    let documents = go_yaml::read_stream(text).map_err(Error::msg)?;
    Ok(documents.into_iter().filter(|doc| !doc.is_null()).collect())
}

/// The non-empty documents of a text as YAML delimits them.
fn parse_all(text: &str) -> Result<Vec<Value>> {
    let documents = go_yaml::read_all(text).map_err(Error::msg)?;
    Ok(documents.into_iter().filter(|doc| !doc.is_null()).collect())
}

/// A document as a Kubernetes object: a mapping with a `kind`, as the
/// apimachinery decoder requires.
fn as_kubernetes_object(doc: Value) -> Result<Object> {
    let Value::Object(object) = doc else {
        return Err(Error::msg("the document is not a YAML mapping"));
    };
    let kind = object
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if kind.is_empty() {
        return Err(Error::msg("Object 'Kind' is missing"));
    }
    Ok(object)
}

/// A path in double quotes, as Go's `%q` prints it.
fn quoted(path: &Path) -> String {
    format!("{:?}", path.display().to_string())
}

// ---- object accessors ----

/// The string at a path of object keys, or `""`.
pub(super) fn str_at<'a>(object: &'a Object, path: &[&str]) -> &'a str {
    value_at(object, path)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// The object at a path of object keys.
pub(super) fn object_at<'a>(object: &'a Object, path: &[&str]) -> Option<&'a Object> {
    value_at(object, path).and_then(Value::as_object)
}

fn value_at<'a>(object: &'a Object, path: &[&str]) -> Option<&'a Value> {
    let (first, rest) = path.split_first()?;
    rest.iter().try_fold(object.get(*first)?, |value, key| {
        value.as_object()?.get(*key)
    })
}

/// The composition-resource-name annotation of an object.
pub(super) fn resource_name(object: &Object) -> String {
    str_at(
        object,
        &["metadata", "annotations", ANNOTATION_RESOURCE_NAME],
    )
    .to_string()
}
