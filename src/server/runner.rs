//! One `RunFunction` call, from the request's bytes to the response's, on one thread.

use super::memo::{Memo, Remembered, Witness};
use super::metrics::{metrics, Rendered};
use crate::proto::request_key::KeyedRequest;
use crate::proto::v1::{RunFunctionRequest, RunFunctionResponse};
use prost::bytes::Bytes;
use prost::encoding::{decode_key, skip_field, DecodeContext};
use prost::Message;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::Semaphore;
use tonic::Status;

/// Runs calls for both package names (`service.rs`).
#[derive(Clone)]
pub(super) struct Runner {
    /// Core calls at once. The core is CPU-bound, so more calls than cores only add memory:
    /// the others wait here (bounded by the request timeout) instead of piling up threads.
    cores: Arc<Semaphore>,
    /// The answers given before, by their request's content.
    memo: Arc<Memo>,
}

/// A call's answer: the response as computed, or its bytes where the memo keeps them.
pub(super) enum Answer {
    Computed(Box<RunFunctionResponse>),
    Encoded(Bytes),
}

impl Runner {
    /// A runner of `parallel_calls` calls at once that remembers up to `memo_bytes` of answers.
    pub(super) fn new(parallel_calls: usize, memo_bytes: usize) -> Self {
        Self {
            cores: Arc::new(Semaphore::new(parallel_calls.max(1))),
            memo: Arc::new(Memo::new(memo_bytes)),
        }
    }

    /// Answers one request, given as encoded bytes.
    pub(super) async fn run(
        &self,
        package: &'static str,
        request: Bytes,
    ) -> Result<Answer, Status> {
        // Owned, and moved into the blocking task: a call whose handler timed out still holds its
        // permit until the core returns, so the bound is on cores busy, not on handlers waiting.
        let permit = Arc::clone(&self.cores)
            .acquire_owned()
            .await
            .map_err(|_| Status::unavailable("the server is stopping"))?;
        if request.len() <= INLINE_LIMIT && !carries_schemas(&request) {
            // A handoff to a blocking thread cost more CPU than the core itself at 10
            // repositories (BENCHMARKS.md); a small call holds the transport for well under 1 ms.
            drop(permit);
            return answer(package, request, &self.memo);
        }
        // Off the async workers, so a long call cannot stall health checks, keepalives or
        // accepts. Decoding, the core and the request's drop happen on this one thread: the
        // request's tree is built, read and freed where it stays in the cache. A response the
        // memo keeps is encoded here, into the memo's buffer; one it does not is encoded by the
        // transport (`service.rs`), straight into its buffer.
        let memo = Arc::clone(&self.memo);
        tokio::task::spawn_blocking(move || {
            let response = answer(package, request, &memo);
            drop(permit);
            response
        })
        .await
        .map_err(|_| internal())?
    }
}

/// Requests up to this size run on the transport's thread: about 150 repository entries, or
/// a few dozen observed resources, well under 1 ms of work on a slow core.
const INLINE_LIMIT: usize = 40 * 1024;

/// Whether the request carries live schemas (`required_schemas`, field 9), found among its
/// top-level fields without decoding them. Such a call evaluates the schemas' CEL rules, whose
/// cost the API server's budget bounds per object (about a second at most), not per call: it
/// never runs on the transport's thread, however small it is.
fn carries_schemas(mut bytes: &[u8]) -> bool {
    const REQUIRED_SCHEMAS: u32 = 9;
    while !bytes.is_empty() {
        // What does not decode is the decoder's to report: not a call with schemas here.
        let Ok((tag, wire_type)) = decode_key(&mut bytes) else {
            return false;
        };
        if tag == REQUIRED_SCHEMAS {
            return true;
        }
        if skip_field(wire_type, tag, &mut bytes, DecodeContext::default()).is_err() {
            return false;
        }
    }
    false
}

/// Answers one call: from the memo where a request of the same content was answered before;
/// otherwise decoded and run, and its answer remembered. Decoded from the `Bytes` it came in,
/// so that the live schemas it carries stay slices of it (`proto::Schema`), not copies.
fn answer(package: &'static str, request: Bytes, memo: &Memo) -> Result<Answer, Status> {
    if !memo.is_on() {
        metrics().looked_up("off");
        let (response, _) = render(package, RunFunctionRequest::decode(request))?;
        return Ok(Answer::Computed(Box::new(response)));
    }
    let request = KeyedRequest::read(request);
    let Some(key) = request.key() else {
        metrics().looked_up("unkeyed");
        let (response, _) = render(package, request.decode())?;
        return Ok(Answer::Computed(Box::new(response)));
    };
    if let Some(remembered) = memo.get(key, || Witness::of_bytes(request.bytes())) {
        metrics().looked_up("hit");
        metrics().rendered(&remembered.rendered);
        tracing::debug!(package, remembered = true, "RunFunction");
        return Ok(Answer::Encoded(remembered.answer));
    }
    metrics().looked_up("miss");
    let decoded = request.decode();
    let witness = Witness::of(decoded.as_ref().ok());
    let (response, rendered) = render(package, decoded)?;
    let answer = Bytes::from(response.encode_to_vec());
    drop(response);
    memo.remember(
        key,
        Remembered {
            answer: answer.clone(),
            rendered,
            witness,
        },
    );
    Ok(Answer::Encoded(answer))
}

/// Runs the core on a decoded request, counts the call in the metrics and drops the request,
/// on this thread. A request that does not decode is answered as tonic's prost codec answers
/// it: INTERNAL, with prost's message.
fn render(
    package: &'static str,
    decoded: Result<RunFunctionRequest, prost::DecodeError>,
) -> Result<(RunFunctionResponse, Rendered), Status> {
    let decoded = decoded.map_err(|error| Status::internal(error.to_string()))?;
    let (response, rendered) = run_logged(package, &decoded)?;
    drop(decoded);
    metrics().rendered(&rendered);
    Ok((response, rendered))
}

/// Runs the core once and logs the call: at debug level, or as an error if the core panicked.
fn run_logged(
    package: &'static str,
    request: &RunFunctionRequest,
) -> Result<(RunFunctionResponse, Rendered), Status> {
    let started = Instant::now();
    let tag = request.meta.as_ref().map_or("", |m| m.tag.as_str());
    let (response, findings) =
        call_core(|| crate::core::function::run_function_with_findings(request)).inspect_err(
            |_| {
                tracing::error!(package, tag, "RunFunction panicked; answered INTERNAL");
            },
        )?;
    let rendered = Rendered::of(&findings, &response);
    tracing::debug!(
        package,
        tag,
        desired_resources = response.desired.as_ref().map_or(0, |d| d.resources.len()),
        results = response.results.len(),
        duration_us = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX),
        "RunFunction"
    );
    Ok((response, rendered))
}

/// Turns a panic of the core into INTERNAL, so a bug answers one call with an error instead of
/// ending the process. The panic hook has already logged the panic with its location.
///
/// `AssertUnwindSafe`: the closure only borrows the request, which nothing reads after a panic,
/// and the core keeps no state between calls.
pub(super) fn call_core<T>(core: impl FnOnce() -> T) -> Result<T, Status> {
    catch_unwind(AssertUnwindSafe(core)).map_err(|_| internal())
}

fn internal() -> Status {
    Status::internal("function-artifactory failed unexpectedly (a bug); its log has the details")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_of_the_core_becomes_internal() {
        let status = call_core(|| panic!("a bug")).unwrap_err();
        assert_eq!(status.code(), tonic::Code::Internal);
    }

    #[test]
    fn a_request_with_live_schemas_is_told_apart_without_decoding_it() {
        use crate::proto::v1::{RequestMeta, Schema};
        let mut request = RunFunctionRequest {
            meta: Some(RequestMeta {
                tag: "t".repeat(300),
                capabilities: vec![1, 2],
            }),
            ..RunFunctionRequest::default()
        };
        assert!(!carries_schemas(&request.encode_to_vec()));
        request
            .required_schemas
            .insert("schema/v1/Kind".to_owned(), Schema::default());
        assert!(carries_schemas(&request.encode_to_vec()));
        assert!(!carries_schemas(&[0xff, 0xff]), "garbage is not");
    }

    #[test]
    fn an_answer_of_the_core_passes_through() {
        let response = RunFunctionResponse::default();
        assert_eq!(call_core(|| response.clone()).unwrap(), response);
    }
}
