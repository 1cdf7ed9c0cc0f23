//! The entry point: one RunFunction call, from request to response.

use crate::proto::v1::{RunFunctionRequest, RunFunctionResponse, ResponseMeta};

/// Runs the function for one request. Pure: no I/O, clock or environment.
pub fn run_function(request: &RunFunctionRequest) -> RunFunctionResponse {
    // Placeholder until the core lands: start from the request and change nothing.
    RunFunctionResponse {
        meta: Some(ResponseMeta {
            tag: request.meta.as_ref().map(|m| m.tag.clone()).unwrap_or_default(),
            ttl: Some(prost_types::Duration { seconds: 60, nanos: 0 }),
        }),
        desired: request.desired.clone(),
        context: request.context.clone(),
        ..Default::default()
    }
}
