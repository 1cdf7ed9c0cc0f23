//! The JavaScript face: wasm-bindgen exports over the pure core, for
//! `wasm32-unknown-unknown` (`scripts/build-wasm.sh` builds the npm package).
//!
//! Only translation happens here: bytes and JSON values in, the core's answer
//! out. A request the core can run always gets a response (problems are a
//! fatal result, as from the server); what is not a request at all (bytes
//! that do not decode, JSON of the wrong shape) is a JavaScript `Error` with
//! the message the server would give. The core never panics on any input, and
//! its limits (CEL cost and depth, sizes) keep every input within the module's
//! memory and stack; were a bug to make it panic, the panic hook set in `start`
//! throws an `Error` instead. Either failure leaves the instance unusable: the
//! npm module's entries (`wasm/wrapper/`) run the next call on a fresh one.

mod objects;

use crate::proto::json;
use crate::proto::v1::{RunFunctionRequest, RunFunctionResponse};
use prost::Message;
use serde_json::Value;
use wasm_bindgen::prelude::*;

#[wasm_bindgen(typescript_custom_section)]
const TYPES: &str = r#"
/** The provider's API generations. */
export type ProviderApi = "flat" | "cluster" | "namespaced";

/** What `renderComposite` takes; YAML is parsed by the caller. */
export interface RenderArgs {
  /** The observed composite resource (or claim), with its `spec`. */
  composite: Record<string, unknown>;
  /** Observed composed resources, by composition resource name, or a list of resources
   *  annotated `crossplane.io/composition-resource-name`. */
  observed?: Record<string, Record<string, unknown>> | Record<string, unknown>[];
  /** The pipeline step's input (`providerApi`, `naming`, `artifactoryUrl`, ...). */
  input?: Record<string, unknown>;
}

/** One problem that fails the call: its field path and repository entry index. */
export interface Problem {
  category: "InvalidInput" | "InvalidComposite" | "InvalidKey" | "InvalidWiring"
    | "InvalidProviderFields" | "UnsafeChange" | "KeyConflict";
  path: string;
  entry: number | null;
  message: string;
  fix: string;
}

/** A finding that does not fail the call (also in the composite's status). */
export interface Warning {
  path: string;
  entry: number | null;
  message: string;
}

export interface FunctionResult {
  severity: "Fatal" | "Warning" | "Normal";
  message: string;
  reason?: string;
  target?: "Composite" | "CompositeAndClaim";
}

export interface FunctionCondition {
  type: string;
  status: "True" | "False" | "Unknown";
  reason: string;
  message?: string;
  target?: "Composite" | "CompositeAndClaim";
}

/** What `renderComposite` returns. */
export interface Rendered {
  /** Desired composed resources by composition resource name (empty after a fatal result). */
  resources: Record<string, Record<string, unknown>>;
  /** Readiness of each desired composed resource. */
  ready: Record<string, boolean>;
  /** The desired composite (its `status`), or null. */
  composite: Record<string, unknown> | null;
  results: FunctionResult[];
  conditions: FunctionCondition[];
  /** The fatal result's problems, each with its repository entry: the first 100 found. */
  problems: Problem[];
  /** How many more problems the call found beyond those in `problems` (the fatal result's
   *  message ends with "and N more"). */
  problemsOmitted: number;
  warnings: Warning[];
}

/** A kind the function renders. */
export interface Kind {
  rclass: "local" | "remote" | "virtual" | "federated";
  packageType: string;
  apiVersion: string;
  kind: string;
  namespaced: boolean;
}
"#;

/// Runs when the module is instantiated. The core does not panic on any input; should a bug
/// make it panic all the same, the caller gets a JavaScript `Error` with the server's words for
/// that case rather than a bare WebAssembly trap ("unreachable").
#[wasm_bindgen(start)]
fn start() {
    std::panic::set_hook(Box::new(|info| {
        wasm_bindgen::throw_str(&format!(
            "function-artifactory failed unexpectedly (a bug): {info}"
        ));
    }));
}

/// `RunFunction` on the wire format: a `RunFunctionRequest` in, the
/// `RunFunctionResponse` out, byte for byte what the gRPC server answers.
#[wasm_bindgen(js_name = runFunction)]
pub fn run_function(request: &[u8]) -> Result<Vec<u8>, JsError> {
    // The message of tonic's status for a request that does not decode.
    let request = RunFunctionRequest::decode(request).map_err(|e| JsError::new(&e.to_string()))?;
    Ok(crate::run_function(&request).encode_to_vec())
}

/// `RunFunction` in the protobuf JSON mapping: a request object (or its JSON
/// text) in, the response object out.
#[wasm_bindgen(js_name = runFunctionJson, unchecked_return_type = "Record<string, unknown>")]
pub fn run_function_json(
    #[wasm_bindgen(unchecked_param_type = "Record<string, unknown> | string")] request: JsValue,
) -> Result<JsValue, JsError> {
    let value = from_js(&request, "runFunctionJson")?;
    let request = json::request_from_json(&value)
        .map_err(|e| JsError::new(&format!("invalid RunFunctionRequest: {e}")))?;
    to_js(&json::response_to_json(&crate::run_function(&request)))
}

/// A `RunFunctionRequest` from the JSON mapping to the wire format, for `runFunction`.
#[wasm_bindgen(js_name = encodeRequest)]
pub fn encode_request(
    #[wasm_bindgen(unchecked_param_type = "Record<string, unknown> | string")] request: JsValue,
) -> Result<Vec<u8>, JsError> {
    let value = from_js(&request, "encodeRequest")?;
    let request = json::request_from_json(&value)
        .map_err(|e| JsError::new(&format!("invalid RunFunctionRequest: {e}")))?;
    Ok(request.encode_to_vec())
}

/// A `RunFunctionResponse` from the wire format to the JSON mapping.
#[wasm_bindgen(js_name = decodeResponse, unchecked_return_type = "Record<string, unknown>")]
pub fn decode_response(response: &[u8]) -> Result<JsValue, JsError> {
    let response =
        RunFunctionResponse::decode(response).map_err(|e| JsError::new(&e.to_string()))?;
    to_js(&json::response_to_json(&response))
}

/// Renders a composite for tools: `{composite, observed?, input?}` in,
/// `{resources, ready, composite, results, conditions, problems, problemsOmitted, warnings}` out
/// (see `objects::render_composite`).
#[wasm_bindgen(js_name = renderComposite, unchecked_return_type = "Rendered")]
pub fn render_composite(
    #[wasm_bindgen(unchecked_param_type = "RenderArgs")] args: JsValue,
) -> Result<JsValue, JsError> {
    let value = from_js(&args, "renderComposite")?;
    let rendered =
        crate::wasm::objects::render_composite(&value).map_err(|e| JsError::new(&e.to_string()))?;
    to_js(&rendered)
}

/// The version of the function (the crate's).
#[wasm_bindgen]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_owned()
}

/// The kinds the function renders, from its built-in catalog: each API's newest provider
/// release (flat v0.6.0; cluster and namespaced the newest the catalog has).
///
/// `providerApi` is optional:
/// - left out, `undefined` or `null`: an object of three lists,
///   `{flat: Kind[], cluster: Kind[], namespaced: Kind[]}`;
/// - `"flat"`, `"cluster"` or `"namespaced"` (exactly, lower case): that API's `Kind[]`.
///
/// Another string (`"auto"`, `"Cluster"`) throws a JavaScript `Error` naming the three; a
/// value of another type throws an `Error` too. Each `Kind` is
/// `{rclass, packageType, apiVersion, kind, namespaced}`, with `packageType` the catalog's
/// lower-case name (`dockerv2`, `maven`).
///
/// ```js
/// fa.kinds().cluster.length;                                   // how many cluster-scoped kinds
/// fa.kinds('namespaced').filter((k) => k.packageType === 'npm'); // its npm kinds, one per rclass
/// ```
#[wasm_bindgen(unchecked_return_type = "Record<ProviderApi, Kind[]> | Kind[]")]
pub fn kinds(
    #[wasm_bindgen(js_name = providerApi, unchecked_optional_param_type = "string | null")]
    provider_api: Option<JsValue>,
) -> Result<JsValue, JsError> {
    // Taken as any value and checked here: a number where the bindings expect a string would
    // reach the module as garbage.
    let provider_api = provider_api.unwrap_or(JsValue::UNDEFINED);
    let provider_api = match provider_api.as_string() {
        Some(api) => Some(api),
        None if provider_api.is_undefined() || provider_api.is_null() => None,
        None => {
            return Err(JsError::new(
                "kinds: providerApi must be a string (flat, cluster or namespaced) or absent",
            ))
        }
    };
    let kinds = crate::wasm::objects::kinds(provider_api.as_deref())
        .map_err(|e| JsError::new(&e.to_string()))?;
    to_js(&kinds)
}

/// For the tests of the JavaScript entries (wasm/test/traps.test.mjs): fails as a bug would,
/// `"stack"` by exhausting the stack (a WebAssembly trap), `"panic"` by panicking (an `Error`
/// thrown from inside the module). Either leaves this instance unusable; the entries then run
/// the next call on a fresh one.
#[wasm_bindgen(js_name = __failForTests, skip_typescript)]
pub fn fail_for_tests(how: &str) -> u32 {
    match how {
        "stack" => deeper(0),
        _ => panic!("failing for a test, as asked ({how:?})"),
    }
}

/// Recurses until the stack runs out (the bound only keeps the compiler from seeing an
/// unconditional recursion; no stack has room for it).
#[inline(never)]
fn deeper(depth: u32) -> u32 {
    let frame = std::hint::black_box([depth; 256]);
    if depth == u32::MAX {
        return frame[0];
    }
    deeper(depth + 1).wrapping_add(frame[depth as usize % 256])
}

/// A JavaScript value as JSON: objects go through `JSON.stringify`, strings are JSON text.
fn from_js(value: &JsValue, function: &str) -> Result<Value, JsError> {
    let text = match value.as_string() {
        Some(text) => text,
        None => js_sys::JSON::stringify(value)
            .ok()
            .and_then(|s| s.as_string())
            .ok_or_else(|| {
                JsError::new(&format!(
                    "{function}: the argument cannot be written as JSON (undefined, a function, \
                     or a cycle)"
                ))
            })?,
    };
    serde_json::from_str(&text)
        .map_err(|e| JsError::new(&format!("{function}: the argument is not JSON: {e}")))
}

fn to_js(value: &Value) -> Result<JsValue, JsError> {
    js_sys::JSON::parse(&value.to_string())
        .map_err(|_| JsError::new("cannot hand the result to JavaScript"))
}
