//! The WebAssembly component face: function-wasm's guest world (`wit/world.wit`, its
//! `wasmfn:function@2.0.0`) over the pure core, for `wasm32-wasip2`
//! (`scripts/build-component.sh` builds and packages it).
//!
//! Only translation happens here. `run` takes the `RunFunctionRequest` bytes the runtime
//! received, finds our settings in its Input's `config`, runs the core exactly as the gRPC
//! server does, and hands back the `RunFunctionResponse` bytes: for the same request and
//! settings, the bytes the server answers. Problems are a fatal result inside the response;
//! `err` is only for what the server refuses before the core runs (bytes that are not a
//! request, a request or response over the server's limits), with the server's words.
//!
//! function-wasm makes a fresh instance for every call, so nothing here outlives a call. What
//! every call would build first is built once, when the component is built: `wizer-initialize`
//! (below) runs then, and the memory it leaves is written into the component, so an instance
//! starts with the kind catalog and CEL's environment built.

mod bindings {
    #![allow(missing_docs, unreachable_pub, clippy::all)]
    wit_bindgen::generate!({
        world: "function",
        path: "wit",
    });
}

use crate::proto::v1::{RunFunctionRequest, RunFunctionResponse};
use crate::proto::{not_a_request, MAX_REQUEST_BYTES, MAX_RESPONSE_BYTES};
use crate::SettingsAt;
use bindings::LogLevel;
use prost::Message;

/// The component's one export.
struct Component;

bindings::export!(Component with_types_in bindings);

impl bindings::Guest for Component {
    fn run(request: Vec<u8>) -> Result<Vec<u8>, String> {
        answer(&request)
    }
}

/// Pre-initialisation, run once when the component is built and never by a host:
/// tools/wasmfn-preinit instantiates the core module, calls this, writes the memory it leaves
/// into the module's data and removes this export (scripts/build-component.sh). It builds what
/// every call would otherwise build first: the kind catalog (its releases, names, kinds and
/// the newest releases' index; a call parses the schema nodes it needs, docs/design.md says
/// why) and CEL's environment. It may call no import (the tool links none, and a
/// call of one fails the build): no clock, no random source, no log, so the snapshot is the
/// same wherever it is built and holds no hash seed.
#[unsafe(export_name = "wizer-initialize")]
extern "C" fn prepare_instance() {
    crate::core::catalog::prepare();
    cel_rules::prepare();
}

/// One call, from the request's bytes to the response's.
fn answer(bytes: &[u8]) -> Result<Vec<u8>, String> {
    if bytes.len() > MAX_REQUEST_BYTES {
        return Err(format!(
            "the request is {} bytes, over the limit of {MAX_REQUEST_BYTES} bytes",
            bytes.len()
        ));
    }
    let request = RunFunctionRequest::decode(bytes).map_err(not_a_request)?;
    let response = crate::run_function_at(&request, settings_at(&request));
    log_call(&request, &response);
    let size = response.encoded_len();
    if size > MAX_RESPONSE_BYTES {
        return Err(format!(
            "the response is {size} bytes, over the limit of {MAX_RESPONSE_BYTES} bytes"
        ));
    }
    Ok(response.encode_to_vec())
}

/// function-wasm's Input group: the runtime hands the module the step's input as it is, with
/// the module's source, its limits and, in `config`, the module's own settings.
const RUNTIME_INPUT_GROUP: &str = "wasm.fn.crossplane.io";

/// Where our settings are: in `config` of function-wasm's Input; an input of any other group
/// (ours, given straight by another host) is read as it is, and the core says what is wrong
/// with one that is neither.
fn settings_at(request: &RunFunctionRequest) -> SettingsAt {
    let group = request
        .input
        .as_ref()
        .and_then(|input| input.fields().get("apiVersion"))
        .and_then(|v| v.as_str())
        .and_then(|v| v.split('/').next());
    if group == Some(RUNTIME_INPUT_GROUP) {
        SettingsAt::Config
    } else {
        SettingsAt::Input
    }
}

/// One debug line per call: the tag and counts, never a value of the request.
fn log_call(request: &RunFunctionRequest, response: &RunFunctionResponse) {
    let tag = request.meta.as_ref().map_or("", |m| m.tag.as_str());
    let desired = response.desired.as_ref().map_or(0, |d| d.resources.len());
    bindings::log(
        LogLevel::Debug,
        "RunFunction",
        &[
            ("tag".to_owned(), tag.to_owned()),
            ("desired_resources".to_owned(), desired.to_string()),
            ("results".to_owned(), response.results.len().to_string()),
        ],
    );
}
