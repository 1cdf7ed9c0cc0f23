//! The protobuf JSON mapping of the function's messages, for callers that
//! speak JSON instead of the wire format (the WebAssembly module's
//! `runFunctionJson`).
//!
//! The proto3 JSON rules, for the messages of `run_function.proto`:
//! lowerCamelCase field names (the original snake_case names are accepted
//! too); fields at their default value are left out, except `optional`
//! fields that are set; enums by name (numbers are accepted); `bytes` in
//! base64 (standard or URL-safe, padding optional); `google.protobuf.Duration`
//! as `"1.5s"`; `google.protobuf.Struct` as a plain JSON object; maps as
//! objects. `null` means "not set". Unknown fields are ignored, as the
//! function ignores them on the wire.
//!
//! Numbers inside a `Struct` are doubles on the wire; reading JSON gives them
//! the same values the wire format would ([`super::json_number`]), so a
//! request means the same thing in either form.

use super::v1::{
    credentials, resource_selector, Capability, Condition, CredentialData, Credentials,
    MatchLabels, Ready, RequestMeta, Requirements, Resource, ResourceSelector, Resources,
    ResponseMeta, Result as FnResult, RunFunctionRequest, RunFunctionResponse, Schema,
    SchemaSelector, Severity, State, Status, Target,
};
use super::{json_number, Struct};
use base64::alphabet;
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig, STANDARD};
use base64::engine::DecodePaddingMode;
use base64::Engine as _;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::fmt;

/// Why a JSON value is not the message it should be: where, and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonError {
    /// Path of the field, `observed.resources["a"].ready`; empty for the message itself.
    pub path: String,
    /// What is wrong, and where.
    pub message: String,
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

impl std::error::Error for JsonError {}

type Parsed<T> = std::result::Result<T, JsonError>;

// ---- requests ---------------------------------------------------------------

/// A `RunFunctionRequest` in the JSON mapping.
pub fn request_to_json(request: &RunFunctionRequest) -> Value {
    let mut out = Writer::default();
    out.message("meta", request.meta.as_ref().map(request_meta_to_json));
    out.message("observed", request.observed.as_ref().map(state_to_json));
    out.message("desired", request.desired.as_ref().map(state_to_json));
    out.message("input", request.input.as_ref().map(struct_to_json));
    out.message("context", request.context.as_ref().map(struct_to_json));
    out.map(
        "extraResources",
        &request.extra_resources,
        resources_to_json,
    );
    out.map("credentials", &request.credentials, credentials_to_json);
    out.map(
        "requiredResources",
        &request.required_resources,
        resources_to_json,
    );
    out.map("requiredSchemas", &request.required_schemas, schema_to_json);
    out.finish()
}

/// A `RunFunctionRequest` from the JSON mapping.
pub fn request_from_json(value: &Value) -> Parsed<RunFunctionRequest> {
    let r = Reader::root(value, "RunFunctionRequest")?;
    Ok(RunFunctionRequest {
        meta: r.message("meta", "meta", request_meta_from_json)?,
        observed: r.message("observed", "observed", state_from_json)?,
        desired: r.message("desired", "desired", state_from_json)?,
        input: r.message("input", "input", struct_from_json)?,
        context: r.message("context", "context", struct_from_json)?,
        extra_resources: r.map("extraResources", "extra_resources", resources_from_json)?,
        credentials: r.map("credentials", "credentials", credentials_from_json)?,
        required_resources: r.map(
            "requiredResources",
            "required_resources",
            resources_from_json,
        )?,
        required_schemas: r.map("requiredSchemas", "required_schemas", schema_from_json)?,
    })
}

fn request_meta_to_json(meta: &RequestMeta) -> Value {
    let mut out = Writer::default();
    out.string("tag", &meta.tag);
    out.enum_list("capabilities", &meta.capabilities, |n| {
        Capability::try_from(n).ok().map(|c| c.as_str_name())
    });
    out.finish()
}

fn request_meta_from_json(r: &Reader) -> Parsed<RequestMeta> {
    Ok(RequestMeta {
        tag: r.string("tag", "tag")?,
        capabilities: r.enum_list("capabilities", "capabilities", |name| {
            Capability::from_str_name(name).map(|c| c as i32)
        })?,
    })
}

fn state_to_json(state: &State) -> Value {
    let mut out = Writer::default();
    out.message("composite", state.composite.as_ref().map(resource_to_json));
    out.map("resources", &state.resources, resource_to_json);
    out.finish()
}

fn state_from_json(r: &Reader) -> Parsed<State> {
    Ok(State {
        composite: r.message("composite", "composite", resource_from_json)?,
        resources: r.map("resources", "resources", resource_from_json)?,
    })
}

fn resource_to_json(resource: &Resource) -> Value {
    let mut out = Writer::default();
    out.message("resource", resource.resource.as_ref().map(struct_to_json));
    out.map("connectionDetails", &resource.connection_details, |b| {
        Value::String(base64_encode(b))
    });
    out.enum_("ready", resource.ready, |n| {
        Ready::try_from(n).ok().map(|r| r.as_str_name())
    });
    out.finish()
}

fn resource_from_json(r: &Reader) -> Parsed<Resource> {
    Ok(Resource {
        resource: r.message("resource", "resource", struct_from_json)?,
        connection_details: r.bytes_map("connectionDetails", "connection_details")?,
        ready: r.enum_("ready", "ready", |name| {
            Ready::from_str_name(name).map(|r| r as i32)
        })?,
    })
}

fn resources_to_json(resources: &Resources) -> Value {
    let mut out = Writer::default();
    out.list("items", &resources.items, resource_to_json);
    out.finish()
}

fn resources_from_json(r: &Reader) -> Parsed<Resources> {
    Ok(Resources {
        items: r.list("items", "items", resource_from_json)?,
    })
}

fn credentials_to_json(credentials: &Credentials) -> Value {
    let mut out = Writer::default();
    match &credentials.source {
        Some(credentials::Source::CredentialData(data)) => {
            out.always("credentialData", credential_data_to_json(data));
        }
        None => {}
    }
    out.finish()
}

fn credentials_from_json(r: &Reader) -> Parsed<Credentials> {
    Ok(Credentials {
        source: r
            .message(
                "credentialData",
                "credential_data",
                credential_data_from_json,
            )?
            .map(credentials::Source::CredentialData),
    })
}

fn credential_data_to_json(data: &CredentialData) -> Value {
    let mut out = Writer::default();
    out.map("data", &data.data, |b| Value::String(base64_encode(b)));
    out.finish()
}

fn credential_data_from_json(r: &Reader) -> Parsed<CredentialData> {
    Ok(CredentialData {
        data: r.bytes_map("data", "data")?,
    })
}

fn schema_to_json(schema: &Schema) -> Value {
    let mut out = Writer::default();
    out.message("openapiV3", schema.openapi_v3.as_ref().map(struct_to_json));
    out.finish()
}

fn schema_from_json(r: &Reader) -> Parsed<Schema> {
    Ok(Schema {
        openapi_v3: r.message("openapiV3", "openapi_v3", struct_from_json)?,
    })
}

// ---- responses --------------------------------------------------------------

/// A `RunFunctionResponse` in the JSON mapping.
pub fn response_to_json(response: &RunFunctionResponse) -> Value {
    let mut out = Writer::default();
    out.message("meta", response.meta.as_ref().map(response_meta_to_json));
    out.message("desired", response.desired.as_ref().map(state_to_json));
    out.list("results", &response.results, result_to_json);
    out.message("context", response.context.as_ref().map(struct_to_json));
    out.message(
        "requirements",
        response.requirements.as_ref().map(requirements_to_json),
    );
    out.list("conditions", &response.conditions, condition_to_json);
    out.message("output", response.output.as_ref().map(struct_to_json));
    out.finish()
}

/// A `RunFunctionResponse` from the JSON mapping.
pub fn response_from_json(value: &Value) -> Parsed<RunFunctionResponse> {
    let r = Reader::root(value, "RunFunctionResponse")?;
    Ok(RunFunctionResponse {
        meta: r.message("meta", "meta", response_meta_from_json)?,
        desired: r.message("desired", "desired", state_from_json)?,
        results: r.list("results", "results", result_from_json)?,
        context: r.message("context", "context", struct_from_json)?,
        requirements: r.message("requirements", "requirements", requirements_from_json)?,
        conditions: r.list("conditions", "conditions", condition_from_json)?,
        output: r.message("output", "output", struct_from_json)?,
    })
}

fn response_meta_to_json(meta: &ResponseMeta) -> Value {
    let mut out = Writer::default();
    out.string("tag", &meta.tag);
    if let Some(ttl) = &meta.ttl {
        out.always("ttl", Value::String(duration_to_json(ttl)));
    }
    out.finish()
}

fn response_meta_from_json(r: &Reader) -> Parsed<ResponseMeta> {
    Ok(ResponseMeta {
        tag: r.string("tag", "tag")?,
        ttl: r.duration("ttl", "ttl")?,
    })
}

fn requirements_to_json(requirements: &Requirements) -> Value {
    let mut out = Writer::default();
    out.map(
        "extraResources",
        &requirements.extra_resources,
        resource_selector_to_json,
    );
    out.map(
        "resources",
        &requirements.resources,
        resource_selector_to_json,
    );
    out.map("schemas", &requirements.schemas, schema_selector_to_json);
    out.finish()
}

fn requirements_from_json(r: &Reader) -> Parsed<Requirements> {
    Ok(Requirements {
        extra_resources: r.map(
            "extraResources",
            "extra_resources",
            resource_selector_from_json,
        )?,
        resources: r.map("resources", "resources", resource_selector_from_json)?,
        schemas: r.map("schemas", "schemas", schema_selector_from_json)?,
    })
}

fn resource_selector_to_json(selector: &ResourceSelector) -> Value {
    let mut out = Writer::default();
    out.string("apiVersion", &selector.api_version);
    out.string("kind", &selector.kind);
    match &selector.r#match {
        Some(resource_selector::Match::MatchName(name)) => {
            out.always("matchName", Value::String(name.clone()));
        }
        Some(resource_selector::Match::MatchLabels(labels)) => {
            out.always("matchLabels", match_labels_to_json(labels));
        }
        None => {}
    }
    if let Some(namespace) = &selector.namespace {
        out.always("namespace", Value::String(namespace.clone()));
    }
    out.finish()
}

fn resource_selector_from_json(r: &Reader) -> Parsed<ResourceSelector> {
    let name = r.optional_string("matchName", "match_name")?;
    let labels = r.message("matchLabels", "match_labels", match_labels_from_json)?;
    let r#match = match (name, labels) {
        (Some(_), Some(_)) => {
            return Err(r.error("matchName and matchLabels are one oneof: set only one"))
        }
        (Some(name), None) => Some(resource_selector::Match::MatchName(name)),
        (None, Some(labels)) => Some(resource_selector::Match::MatchLabels(labels)),
        (None, None) => None,
    };
    Ok(ResourceSelector {
        api_version: r.string("apiVersion", "api_version")?,
        kind: r.string("kind", "kind")?,
        namespace: r.optional_string("namespace", "namespace")?,
        r#match,
    })
}

fn match_labels_to_json(labels: &MatchLabels) -> Value {
    let mut out = Writer::default();
    out.map("labels", &labels.labels, |v| Value::String(v.clone()));
    out.finish()
}

fn match_labels_from_json(r: &Reader) -> Parsed<MatchLabels> {
    Ok(MatchLabels {
        labels: r.string_map("labels", "labels")?,
    })
}

fn schema_selector_to_json(selector: &SchemaSelector) -> Value {
    let mut out = Writer::default();
    out.string("apiVersion", &selector.api_version);
    out.string("kind", &selector.kind);
    out.finish()
}

fn schema_selector_from_json(r: &Reader) -> Parsed<SchemaSelector> {
    Ok(SchemaSelector {
        api_version: r.string("apiVersion", "api_version")?,
        kind: r.string("kind", "kind")?,
    })
}

fn result_to_json(result: &FnResult) -> Value {
    let mut out = Writer::default();
    out.enum_("severity", result.severity, severity_name);
    out.string("message", &result.message);
    if let Some(reason) = &result.reason {
        out.always("reason", Value::String(reason.clone()));
    }
    if let Some(target) = result.target {
        out.always("target", enum_value(target, target_name));
    }
    out.finish()
}

fn result_from_json(r: &Reader) -> Parsed<FnResult> {
    Ok(FnResult {
        severity: r.enum_("severity", "severity", |name| {
            Severity::from_str_name(name).map(|s| s as i32)
        })?,
        message: r.string("message", "message")?,
        reason: r.optional_string("reason", "reason")?,
        target: r.optional_enum("target", "target", |name| {
            Target::from_str_name(name).map(|t| t as i32)
        })?,
    })
}

fn condition_to_json(condition: &Condition) -> Value {
    let mut out = Writer::default();
    out.string("type", &condition.r#type);
    out.enum_("status", condition.status, |n| {
        Status::try_from(n).ok().map(|s| s.as_str_name())
    });
    out.string("reason", &condition.reason);
    if let Some(message) = &condition.message {
        out.always("message", Value::String(message.clone()));
    }
    if let Some(target) = condition.target {
        out.always("target", enum_value(target, target_name));
    }
    out.finish()
}

fn condition_from_json(r: &Reader) -> Parsed<Condition> {
    Ok(Condition {
        r#type: r.string("type", "type")?,
        status: r.enum_("status", "status", |name| {
            Status::from_str_name(name).map(|s| s as i32)
        })?,
        reason: r.string("reason", "reason")?,
        message: r.optional_string("message", "message")?,
        target: r.optional_enum("target", "target", |name| {
            Target::from_str_name(name).map(|t| t as i32)
        })?,
    })
}

fn severity_name(n: i32) -> Option<&'static str> {
    Severity::try_from(n).ok().map(|s| s.as_str_name())
}

fn target_name(n: i32) -> Option<&'static str> {
    Target::try_from(n).ok().map(|t| t.as_str_name())
}

// ---- well-known types -----------------------------------------------------

fn struct_to_json(object: &Struct) -> Value {
    Value::Object(object.fields().clone())
}

fn struct_from_json(r: &Reader) -> Parsed<Struct> {
    Ok(wire_struct(r.object))
}

/// A JSON object as a `Struct`, its numbers as the wire format would carry them.
pub fn wire_struct(object: &Map<String, Value>) -> Struct {
    Struct::from(normalize_object(object))
}

/// Numbers as the wire format carries them: doubles, integral ones as integers.
fn normalize(value: &Value) -> Value {
    match value {
        Value::Number(n) => json_number(n.as_f64().unwrap_or(0.0)),
        Value::Array(items) => Value::Array(items.iter().map(normalize).collect()),
        Value::Object(map) => Value::Object(normalize_object(map)),
        other => other.clone(),
    }
}

fn normalize_object(map: &Map<String, Value>) -> Map<String, Value> {
    object_of(map.iter().map(|(k, v)| (k.clone(), normalize(v))))
}

/// A JSON object built by inserting: collecting into one sorts first, one more copy of the sort
/// in the WebAssembly builds (as `core::sorted` says).
fn object_of(members: impl IntoIterator<Item = (String, Value)>) -> Map<String, Value> {
    let mut object = Map::new();
    object.extend(members);
    object
}

/// `"60s"`, `"1.500s"`, `"-0.000000001s"`: 0, 3, 6 or 9 fractional digits.
pub fn duration_to_json(duration: &prost_types::Duration) -> String {
    let negative = duration.seconds < 0 || duration.nanos < 0;
    let seconds = duration.seconds.unsigned_abs();
    let nanos = duration.nanos.unsigned_abs();
    let sign = if negative { "-" } else { "" };
    if nanos == 0 {
        format!("{sign}{seconds}s")
    } else if nanos % 1_000_000 == 0 {
        format!("{sign}{seconds}.{:03}s", nanos / 1_000_000)
    } else if nanos % 1_000 == 0 {
        format!("{sign}{seconds}.{:06}s", nanos / 1_000)
    } else {
        format!("{sign}{seconds}.{nanos:09}s")
    }
}

/// The inverse of [`duration_to_json`]; up to 9 fractional digits.
pub fn duration_from_json(text: &str) -> Option<prost_types::Duration> {
    let body = text.strip_suffix('s')?;
    let (negative, body) = match body.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, body),
    };
    let (whole, fraction) = match body.split_once('.') {
        Some((whole, fraction)) => (whole, fraction),
        None => (body, ""),
    };
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() || !digits(whole) || !digits(fraction) || fraction.len() > 9 {
        return None;
    }
    if body.ends_with('.') {
        return None;
    }
    let seconds: i64 = whole.parse().ok()?;
    let nanos: i32 = if fraction.is_empty() {
        0
    } else {
        format!("{fraction:0<9}").parse().ok()?
    };
    // The range of google.protobuf.Duration: about ±10,000 years.
    if seconds > 315_576_000_000 {
        return None;
    }
    Some(if negative {
        prost_types::Duration {
            seconds: -seconds,
            nanos: -nanos,
        }
    } else {
        prost_types::Duration { seconds, nanos }
    })
}

/// Standard base64 with padding, as the JSON mapping writes `bytes`.
pub fn base64_encode(bytes: &[u8]) -> String {
    STANDARD.encode(bytes)
}

/// Standard or URL-safe base64, padding optional, as the JSON mapping reads
/// `bytes`; like Go's decoder, unused bits of the last character are ignored.
pub fn base64_decode(text: &str) -> Option<Vec<u8>> {
    const LENIENT: GeneralPurposeConfig = GeneralPurposeConfig::new()
        .with_decode_padding_mode(DecodePaddingMode::Indifferent)
        .with_decode_allow_trailing_bits(true);
    const STANDARD_LENIENT: GeneralPurpose = GeneralPurpose::new(&alphabet::STANDARD, LENIENT);
    const URL_SAFE_LENIENT: GeneralPurpose = GeneralPurpose::new(&alphabet::URL_SAFE, LENIENT);
    let url_safe = text.bytes().any(|b| b == b'-' || b == b'_');
    let engine = if url_safe {
        &URL_SAFE_LENIENT
    } else {
        &STANDARD_LENIENT
    };
    engine.decode(text).ok()
}

// ---- writing ----------------------------------------------------------------

/// One JSON object, leaving out fields at their default value.
#[derive(Default)]
struct Writer(Map<String, Value>);

impl Writer {
    fn always(&mut self, name: &str, value: Value) {
        self.0.insert(name.to_owned(), value);
    }

    fn string(&mut self, name: &str, value: &str) {
        if !value.is_empty() {
            self.always(name, Value::String(value.to_owned()));
        }
    }

    fn message(&mut self, name: &str, value: Option<Value>) {
        if let Some(value) = value {
            self.always(name, value);
        }
    }

    fn enum_(&mut self, name: &str, value: i32, names: fn(i32) -> Option<&'static str>) {
        if value != 0 {
            self.always(name, enum_value(value, names));
        }
    }

    fn enum_list(&mut self, name: &str, values: &[i32], names: fn(i32) -> Option<&'static str>) {
        if !values.is_empty() {
            let items = values.iter().map(|v| enum_value(*v, names)).collect();
            self.always(name, Value::Array(items));
        }
    }

    fn list<T>(&mut self, name: &str, items: &[T], item: impl Fn(&T) -> Value) {
        if !items.is_empty() {
            self.always(name, Value::Array(items.iter().map(item).collect()));
        }
    }

    fn map<T>(&mut self, name: &str, map: &BTreeMap<String, T>, item: impl Fn(&T) -> Value) {
        if !map.is_empty() {
            let object = object_of(map.iter().map(|(k, v)| (k.clone(), item(v))));
            self.always(name, Value::Object(object));
        }
    }

    fn finish(self) -> Value {
        Value::Object(self.0)
    }
}

/// An enum by name; a number the schema does not know stays a number.
fn enum_value(value: i32, names: fn(i32) -> Option<&'static str>) -> Value {
    match names(value) {
        Some(name) => Value::String(name.to_owned()),
        None => Value::from(value),
    }
}

// ---- reading ----------------------------------------------------------------

/// One JSON object being read as a message, with its path for errors.
struct Reader<'a> {
    object: &'a Map<String, Value>,
    path: String,
}

impl<'a> Reader<'a> {
    fn root(value: &'a Value, message: &str) -> Parsed<Reader<'a>> {
        match value {
            Value::Object(object) => Ok(Reader {
                object,
                path: String::new(),
            }),
            other => Err(JsonError {
                path: String::new(),
                message: format!("a {message} must be a JSON object, not {}", kind(other)),
            }),
        }
    }

    fn error(&self, message: impl Into<String>) -> JsonError {
        JsonError {
            path: self.path.clone(),
            message: message.into(),
        }
    }

    fn child_path(&self, name: &str) -> String {
        if self.path.is_empty() {
            name.to_owned()
        } else {
            format!("{}.{name}", self.path)
        }
    }

    /// The field by its JSON name or its proto name; `null` is not set.
    fn field(&self, json: &str, proto: &str) -> Option<(&'a Value, String)> {
        let value = self.object.get(json).or_else(|| self.object.get(proto))?;
        (!value.is_null()).then(|| (value, self.child_path(json)))
    }

    fn string(&self, json: &str, proto: &str) -> Parsed<String> {
        Ok(self.optional_string(json, proto)?.unwrap_or_default())
    }

    fn optional_string(&self, json: &str, proto: &str) -> Parsed<Option<String>> {
        match self.field(json, proto) {
            None => Ok(None),
            Some((Value::String(s), _)) => Ok(Some(s.clone())),
            Some((other, path)) => Err(expected(path, "a string", other)),
        }
    }

    fn duration(&self, json: &str, proto: &str) -> Parsed<Option<prost_types::Duration>> {
        match self.field(json, proto) {
            None => Ok(None),
            Some((Value::String(s), path)) => duration_from_json(s).map(Some).ok_or(JsonError {
                path,
                message: format!(
                    "{s:?} is not a duration; write seconds with an s, as \"60s\" or \"1.5s\""
                ),
            }),
            Some((other, path)) => Err(expected(path, "a duration string such as \"60s\"", other)),
        }
    }

    fn enum_(&self, json: &str, proto: &str, parse: fn(&str) -> Option<i32>) -> Parsed<i32> {
        Ok(self.optional_enum(json, proto, parse)?.unwrap_or(0))
    }

    fn optional_enum(
        &self,
        json: &str,
        proto: &str,
        parse: fn(&str) -> Option<i32>,
    ) -> Parsed<Option<i32>> {
        match self.field(json, proto) {
            None => Ok(None),
            Some((value, path)) => enum_from_json(value, path, parse).map(Some),
        }
    }

    fn enum_list(
        &self,
        json: &str,
        proto: &str,
        parse: fn(&str) -> Option<i32>,
    ) -> Parsed<Vec<i32>> {
        match self.field(json, proto) {
            None => Ok(Vec::new()),
            Some((Value::Array(items), path)) => items
                .iter()
                .enumerate()
                .map(|(i, item)| enum_from_json(item, format!("{path}[{i}]"), parse))
                .collect(),
            Some((other, path)) => Err(expected(path, "a list", other)),
        }
    }

    fn message<T>(
        &self,
        json: &str,
        proto: &str,
        read: impl Fn(&Reader) -> Parsed<T>,
    ) -> Parsed<Option<T>> {
        match self.field(json, proto) {
            None => Ok(None),
            Some((Value::Object(object), path)) => read(&Reader { object, path }).map(Some),
            Some((other, path)) => Err(expected(path, "an object", other)),
        }
    }

    fn list<T>(
        &self,
        json: &str,
        proto: &str,
        read: impl Fn(&Reader) -> Parsed<T>,
    ) -> Parsed<Vec<T>> {
        match self.field(json, proto) {
            None => Ok(Vec::new()),
            Some((Value::Array(items), path)) => items
                .iter()
                .enumerate()
                .map(|(i, item)| {
                    let path = format!("{path}[{i}]");
                    match item {
                        Value::Object(object) => read(&Reader { object, path }),
                        other => Err(expected(path, "an object", other)),
                    }
                })
                .collect(),
            Some((other, path)) => Err(expected(path, "a list", other)),
        }
    }

    /// A map field: an object whose values are read by `read`.
    fn entries<T>(
        &self,
        json: &str,
        proto: &str,
        read: impl Fn(&Value, String) -> Parsed<T>,
    ) -> Parsed<BTreeMap<String, T>> {
        match self.field(json, proto) {
            None => Ok(BTreeMap::new()),
            Some((Value::Object(object), path)) => {
                // Inserted, not collected: collecting into a map sorts first
                // (crate::core::sorted).
                let mut entries = BTreeMap::new();
                for (key, item) in object {
                    let value = read(item, format!("{path}[{key:?}]"))?;
                    entries.insert(key.clone(), value);
                }
                Ok(entries)
            }
            Some((other, path)) => Err(expected(path, "an object (a map)", other)),
        }
    }

    fn map<T>(
        &self,
        json: &str,
        proto: &str,
        read: impl Fn(&Reader) -> Parsed<T>,
    ) -> Parsed<BTreeMap<String, T>> {
        self.entries(json, proto, |item, path| match item {
            Value::Object(object) => read(&Reader { object, path }),
            other => Err(expected(path, "an object", other)),
        })
    }

    fn string_map(&self, json: &str, proto: &str) -> Parsed<BTreeMap<String, String>> {
        self.entries(json, proto, |item, path| match item {
            Value::String(s) => Ok(s.clone()),
            other => Err(expected(path, "a string", other)),
        })
    }

    fn bytes_map(&self, json: &str, proto: &str) -> Parsed<BTreeMap<String, Vec<u8>>> {
        self.entries(json, proto, |item, path| match item {
            Value::String(s) => base64_decode(s).ok_or(JsonError {
                path,
                message: "is not base64".to_owned(),
            }),
            other => Err(expected(path, "a base64 string", other)),
        })
    }
}

fn enum_from_json(value: &Value, path: String, parse: fn(&str) -> Option<i32>) -> Parsed<i32> {
    match value {
        Value::String(name) => parse(name).ok_or_else(|| JsonError {
            path,
            message: format!("{name:?} is not a value of this enum"),
        }),
        Value::Number(n) => n
            .as_i64()
            .and_then(|n| i32::try_from(n).ok())
            .ok_or_else(|| expected(path, "an enum name or number", value)),
        other => Err(expected(path, "an enum name or number", other)),
    }
}

fn expected(path: String, what: &str, got: &Value) -> JsonError {
    JsonError {
        path,
        message: format!("expected {what}, not {}", kind(got)),
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn durations_use_0_3_6_or_9_digits() {
        let d = |seconds, nanos| prost_types::Duration { seconds, nanos };
        assert_eq!(duration_to_json(&d(60, 0)), "60s");
        assert_eq!(duration_to_json(&d(1, 500_000_000)), "1.500s");
        assert_eq!(duration_to_json(&d(0, 1_000)), "0.000001s");
        assert_eq!(duration_to_json(&d(0, -1)), "-0.000000001s");
        for text in ["60s", "1.500s", "0.000001s", "-0.000000001s", "-3.250s"] {
            assert_eq!(duration_to_json(&duration_from_json(text).unwrap()), text);
        }
        assert_eq!(duration_from_json("1.5s"), Some(d(1, 500_000_000)));
        for bad in ["", "s", "60", "1.s", ".5s", "1.0000000001s", "1e3s", "+1s"] {
            assert_eq!(duration_from_json(bad), None, "{bad}");
        }
    }

    #[test]
    fn base64_round_trips_and_accepts_url_safe_unpadded() {
        for bytes in [&b""[..], b"f", b"fo", b"foo", b"foob", b"\xff\xfe\x00"] {
            assert_eq!(base64_decode(&base64_encode(bytes)).unwrap(), bytes);
        }
        assert_eq!(base64_encode(b"foob"), "Zm9vYg==");
        assert_eq!(base64_decode("_-8").unwrap(), vec![0xff, 0xef]);
        assert_eq!(base64_decode("Zm9vYg").unwrap(), b"foob");
        assert_eq!(
            base64_decode("Zm9vYh==").unwrap(),
            b"foob",
            "unused bits ignored"
        );
        assert!(base64_decode("Z").is_none());
        assert!(base64_decode("Zm9v!").is_none());
    }

    #[test]
    fn a_request_round_trips_with_every_field_kind() {
        let value = json!({
            "meta": {"tag": "t", "capabilities": ["CAPABILITY_CAPABILITIES", "CAPABILITY_REQUIRED_RESOURCES"]},
            "observed": {
                "composite": {"resource": {"spec": {"n": 3, "f": 0.5}}, "connectionDetails": {"k": "dmFsdWU="}},
                "resources": {"a": {"resource": {"kind": "K"}, "ready": "READY_TRUE"}}
            },
            "desired": {},
            "input": {"ttl": "30s"},
            "context": {"x": [1, "y"]},
            "credentials": {"c": {"credentialData": {"data": {"password": "c2VjcmV0"}}}},
            "requiredResources": {"r": {"items": [{"resource": {"kind": "K"}}]}},
            "requiredSchemas": {"s": {"openapiV3": {"type": "object"}}}
        });
        let request = request_from_json(&value).unwrap();
        assert_eq!(request.meta.as_ref().unwrap().capabilities, vec![1, 2]);
        assert_eq!(request_to_json(&request), value);
    }

    #[test]
    fn proto_names_numbers_and_nulls_are_accepted() {
        let request = request_from_json(&json!({
            "meta": {"tag": null, "capabilities": [2]},
            "observed": {"resources": {"a": {"ready": 1, "connection_details": {}}}},
            "extra_resources": null
        }))
        .unwrap();
        assert_eq!(request.meta.unwrap().capabilities, vec![2]);
        assert_eq!(request.observed.unwrap().resources["a"].ready, 1);
    }

    #[test]
    fn struct_numbers_mean_what_the_wire_format_means() {
        let request = request_from_json(&json!({"input": {"a": 3.0, "b": 1.5}})).unwrap();
        assert_eq!(
            request.input.unwrap().into_value(),
            json!({"a": 3, "b": 1.5})
        );
    }

    #[test]
    fn errors_name_the_field() {
        let error = request_from_json(&json!({"observed": {"resources": {"a": {"ready": "YES"}}}}))
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            "observed.resources[\"a\"].ready: \"YES\" is not a value of this enum"
        );
        let error = request_from_json(&json!({"meta": {"tag": 7}})).unwrap_err();
        assert_eq!(
            error.to_string(),
            "meta.tag: expected a string, not a number"
        );
        let error = request_from_json(&json!([])).unwrap_err();
        assert_eq!(
            error.to_string(),
            "a RunFunctionRequest must be a JSON object, not a list"
        );
    }

    #[test]
    fn a_response_round_trips() {
        let value = json!({
            "meta": {"tag": "t", "ttl": "60s"},
            "desired": {"composite": {"resource": {"status": {}}}, "resources": {"a": {"resource": {}, "ready": "READY_FALSE"}}},
            "results": [{"severity": "SEVERITY_FATAL", "message": "m", "reason": "InvalidKey", "target": "TARGET_COMPOSITE"}],
            "requirements": {"resources": {
                "n": {"apiVersion": "v", "kind": "K", "matchLabels": {"labels": {"a": "b"}}},
                "m": {"apiVersion": "v", "kind": "K", "matchName": "x", "namespace": ""}
            }},
            "conditions": [{"type": "RepositoriesReady", "status": "STATUS_CONDITION_FALSE", "reason": "Creating", "target": "TARGET_COMPOSITE_AND_CLAIM"}]
        });
        let response = response_from_json(&value).unwrap();
        assert_eq!(response_to_json(&response), value);
    }
}
