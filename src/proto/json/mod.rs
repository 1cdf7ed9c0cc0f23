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

mod read_write;
#[cfg(test)]
mod tests;
mod well_known;

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
// `adopt`'s messages name a JSON value's kind (feature `server`).
#[cfg(feature = "server")]
pub(crate) use read_write::kind;
use read_write::*;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::fmt;
pub use well_known::*;

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
