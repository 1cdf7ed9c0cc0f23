//! `RunFunction` for both package names, translated to one call of [`crate::run_function`].

use crate::proto::v1::{self, RunFunctionRequest, RunFunctionResponse};
use crate::proto::v1beta1;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::Semaphore;
use tonic::{Request, Response, Status};

/// Serves `apiextensions.fn.proto.v1` and `v1beta1` (Crossplane 1.14 to 1.16 sends only the
/// latter; later releases fall back to it on UNIMPLEMENTED). Both carry the v1 messages.
#[derive(Clone)]
pub struct Runner {
    /// Core calls at once. The core is CPU-bound, so more calls than cores only add memory:
    /// the others wait here (bounded by the request timeout) instead of piling up threads.
    cores: Arc<Semaphore>,
}

impl Runner {
    pub fn new(parallel_calls: usize) -> Self {
        Self {
            cores: Arc::new(Semaphore::new(parallel_calls.max(1))),
        }
    }

    async fn run(
        &self,
        package: &'static str,
        request: Request<RunFunctionRequest>,
    ) -> Result<Response<RunFunctionResponse>, Status> {
        // Owned, and moved into the blocking task: a call whose handler timed out still holds its
        // permit until the core returns, so the bound is on cores busy, not on handlers waiting.
        let permit = Arc::clone(&self.cores)
            .acquire_owned()
            .await
            .map_err(|_| Status::unavailable("the server is stopping"))?;
        let request = request.into_inner();
        if is_small(&request) {
            // A handoff to a blocking thread cost more CPU than the core itself at 10
            // repositories (BENCHMARKS.md); a small call holds the transport for well under 1 ms.
            drop(permit);
            return run_logged(package, &request).map(Response::new);
        }
        // Off the async workers, so a long call cannot stall health checks, keepalives or accepts.
        let response = tokio::task::spawn_blocking(move || {
            let response = run_logged(package, &request);
            drop(permit);
            response
        })
        .await
        .map_err(|_| internal())??;
        Ok(Response::new(response))
    }
}

/// Repository entries plus observed resources up to which the core runs on the transport's
/// thread: about 1 ms of work on a slow core.
const INLINE_LIMIT: usize = 128;

/// Whether a call is cheap enough to run without leaving the async thread.
fn is_small(request: &RunFunctionRequest) -> bool {
    let Some(observed) = request.observed.as_ref() else {
        return true;
    };
    let entries = observed
        .composite
        .as_ref()
        .and_then(|c| c.resource.as_ref())
        .and_then(|r| {
            r.fields()
                .get("spec")?
                .get("repositories")?
                .as_array()
                .map(Vec::len)
        })
        .unwrap_or(0);
    let required = request.required_resources.len() + request.extra_resources.len();
    entries + observed.resources.len() + required <= INLINE_LIMIT
}

/// Runs the core once and logs the call: at debug level, or as an error if the core panicked.
fn run_logged(
    package: &'static str,
    request: &RunFunctionRequest,
) -> Result<RunFunctionResponse, Status> {
    let started = Instant::now();
    let tag = request.meta.as_ref().map_or("", |m| m.tag.as_str());
    let response = call_core(|| crate::run_function(request)).inspect_err(|_| {
        tracing::error!(package, tag, "RunFunction panicked; answered INTERNAL");
    })?;
    tracing::debug!(
        package,
        tag,
        desired_resources = response.desired.as_ref().map_or(0, |d| d.resources.len()),
        results = response.results.len(),
        duration_us = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX),
        "RunFunction"
    );
    Ok(response)
}

/// Turns a panic of the core into INTERNAL, so a bug answers one call with an error instead of
/// ending the process. The panic hook has already logged the panic with its location.
///
/// `AssertUnwindSafe`: the closure only borrows the request, which nothing reads after a panic,
/// and the core keeps no state between calls.
pub fn call_core(
    core: impl FnOnce() -> RunFunctionResponse,
) -> Result<RunFunctionResponse, Status> {
    catch_unwind(AssertUnwindSafe(core)).map_err(|_| internal())
}

fn internal() -> Status {
    Status::internal("function-artifactory failed unexpectedly (a bug); its log has the details")
}

#[tonic::async_trait]
impl v1::function_runner_service_server::FunctionRunnerService for Runner {
    async fn run_function(
        &self,
        request: Request<RunFunctionRequest>,
    ) -> Result<Response<RunFunctionResponse>, Status> {
        self.run("v1", request).await
    }
}

#[tonic::async_trait]
impl v1beta1::function_runner_service_server::FunctionRunnerService for Runner {
    async fn run_function(
        &self,
        request: Request<RunFunctionRequest>,
    ) -> Result<Response<RunFunctionResponse>, Status> {
        self.run("v1beta1", request).await
    }
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
    fn an_answer_of_the_core_passes_through() {
        let response = RunFunctionResponse::default();
        assert_eq!(call_core(|| response.clone()).unwrap(), response);
    }
}
