//! The documents `crossplane render` prints, in its order: the composite
//! resource, the composed resources sorted by composition resource name,
//! then (on request) the results and the context.
//!
//! This follows Crossplane v2 (`render.go` of the in-tree CLI up to v2.2,
//! where it differs from 1.17):
//! - the XR's `Ready` condition honours the desired composite's readiness;
//! - conditions returned by functions are set on the XR (system types
//!   skipped);
//! - `generateName` is added only when a composed resource has no name and
//!   no `generateName`; the name, namespace and `generateName` of an observed
//!   resource are copied; a namespaced XR forces its namespace;
//! - the `crossplane.io/composite` label and the name prefix come from the
//!   XR's own `crossplane.io/composite` label when it has one (nested XRs).
//!
//! [`composite`] makes the composite resource, [`composed`] the composed resources, both with
//! the [`metadata`] helpers; this module orders the documents and makes the results and the
//! context. The dependencies go one way: this module names the three others, `composite` and
//! `composed` name `metadata`, which names none.

mod composed;
mod composite;
mod metadata;

use super::load::{resource_name, str_at};
use super::pipeline::{Inputs, Outcome, StepResult};
use super::Result;
use crate::proto::v1::Severity;
use anyhow::Context as _;
use composed::composed_resources;
use composite::{composite, copy_spec_and_metadata};
use serde_json::{json, Map, Value};

const RENDER_API_VERSION: &str = "render.crossplane.io/v1beta1";

/// Which optional documents to print.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Options {
    pub include_results: bool,
    pub include_context: bool,
    pub include_full_xr: bool,
}

/// One document to print, with what `crossplane render` calls it when it cannot be printed.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Document {
    pub value: Value,
    pub what: String,
}

/// Every document, in print order.
pub(super) fn documents(
    inputs: &Inputs,
    outcome: &Outcome,
    options: &Options,
) -> Result<Vec<Document>> {
    let composed =
        composed_resources(inputs, &outcome.desired).context("cannot render composite resource")?;
    let mut xr = composite(&inputs.composite, &outcome.desired, &outcome.conditions);
    if options.include_full_xr {
        copy_spec_and_metadata(&inputs.composite, &mut xr)?;
    }
    let xr_name = str_at(&inputs.composite, &["metadata", "name"]);
    let mut documents = vec![Document {
        value: Value::Object(xr),
        what: format!("cannot marshal composite resource {xr_name:?} to YAML"),
    }];
    documents.extend(composed.into_iter().map(|object| Document {
        what: format!(
            "cannot marshal composed resource {:?} to YAML",
            resource_name(&object)
        ),
        value: Value::Object(object),
    }));
    if options.include_results {
        documents.extend(outcome.results.iter().map(|result| Document {
            value: result_document(result),
            what: "cannot marshal result to YAML".into(),
        }));
    }
    if options.include_context {
        documents.extend(outcome.context.as_ref().map(|context| Document {
            value: context_document(context.fields()),
            what: "cannot marshal context to YAML".into(),
        }));
    }
    Ok(documents)
}

// ---- results and context ----

fn result_document(result: &StepResult) -> Value {
    let severity = Severity::try_from(result.severity).map_or_else(
        |_| result.severity.to_string(),
        |s| s.as_str_name().to_string(),
    );
    json!({
        "apiVersion": RENDER_API_VERSION,
        "kind": "Result",
        "step": result.step,
        "severity": severity,
        "message": result.message,
    })
}

/// The final context. An empty context prints `fields: null`, as Go's nil
/// map of an empty `structpb.Struct` does.
fn context_document(fields: &Map<String, Value>) -> Value {
    let fields = if fields.is_empty() {
        Value::Null
    } else {
        Value::Object(fields.clone())
    };
    json!({ "apiVersion": RENDER_API_VERSION, "kind": "Context", "fields": fields })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::load::Object;

    fn object(value: Value) -> Object {
        value.as_object().cloned().unwrap()
    }

    #[test]
    fn results_and_context_documents() {
        let result = StepResult {
            step: "s".into(),
            severity: Severity::Warning as i32,
            message: "m".into(),
        };
        assert_eq!(
            result_document(&result),
            json!({"apiVersion": RENDER_API_VERSION, "kind": "Result", "step": "s", "severity": "SEVERITY_WARNING", "message": "m"})
        );
        assert_eq!(context_document(&Map::new())["fields"], Value::Null);
        let fields = object(json!({"k": [1]}));
        assert_eq!(context_document(&fields)["fields"], json!({"k": [1]}));
    }
}
