//! How each function of the pipeline runs: this one in process (through the protobuf wire
//! format, as a gRPC server would receive the request), any other over insecure gRPC at the
//! development target its Function's annotations give, with Crossplane's beta fallback.

use crate::proto::v1::{self, RunFunctionRequest, RunFunctionResponse};
use crate::proto::v1beta1;
use crate::render::load::{Function, Step};
use crate::render::time::format_go_duration;
use crate::render::{Result, ThisFunction};
use anyhow::Error;
use prost::Message;
use std::collections::BTreeMap;
use std::time::Duration;

/// The name under which this function runs in process.
const THIS_FUNCTION: &str = "function-artifactory";
const ANNOTATION_RUNTIME: &str = "render.crossplane.io/runtime";
const ANNOTATION_TARGET: &str = "render.crossplane.io/runtime-development-target";
const DEFAULT_TARGET: &str = "localhost:9443";

/// How a function runs.
#[derive(Debug, Clone, PartialEq)]
enum Runtime {
    /// This function, through `crate::run_function`.
    InProcess,
    /// Another function, served by the user at a gRPC target.
    Development(GrpcFunction),
}

/// The runtimes of the functions the pipeline uses, by function name.
pub(super) struct Runners<'a> {
    runtimes: BTreeMap<String, Runtime>,
    /// What runs this function.
    this: ThisFunction<'a>,
}

impl<'a> Runners<'a> {
    /// Decides how each function that a step names runs. A function that
    /// Functions does not list gets no runtime: its step fails when it is
    /// reached, as in `crossplane render`.
    pub(super) fn start(
        steps: &[Step],
        functions: &[Function],
        this: ThisFunction<'a>,
    ) -> Result<Runners<'a>> {
        let mut runtimes = BTreeMap::new();
        for step in steps {
            if runtimes.contains_key(&step.function) {
                continue;
            }
            let function = functions.iter().find(|f| f.name == step.function);
            if let Some(runtime) = runtime_for(&step.function, function)? {
                runtimes.insert(step.function.clone(), runtime);
            }
        }
        Ok(Runners { runtimes, this })
    }

    pub(super) async fn run(
        &mut self,
        function: &str,
        request: RunFunctionRequest,
    ) -> Result<RunFunctionResponse> {
        match self.runtimes.get_mut(function) {
            Some(Runtime::InProcess) => run_in_process(self.this, &request),
            Some(Runtime::Development(grpc)) => grpc.run(request).await,
            None => Err(Error::msg(format!(
                "unknown Function {function:?} - does it exist in your Functions file?"
            ))),
        }
    }

    pub(super) fn timed_out(&self, function: &str, timeout: Duration) -> Error {
        let hint = match self.runtimes.get(function) {
            Some(Runtime::Development(grpc)) => {
                format!(": is Function {function:?} serving at {:?}?", grpc.target)
            }
            _ => String::new(),
        };
        Error::msg(format!(
            "context deadline exceeded (--timeout {}){hint}",
            format_go_duration(timeout)
        ))
    }
}

/// This function runs in process when a step names it or when its Function's
/// package is this function's, whatever the runtime annotation says; other
/// functions need the Development runtime.
fn runtime_for(name: &str, function: Option<&Function>) -> Result<Option<Runtime>> {
    if name == THIS_FUNCTION {
        return Ok(Some(Runtime::InProcess));
    }
    let Some(function) = function else {
        return Ok(None);
    };
    if function.package.contains(THIS_FUNCTION) {
        return Ok(Some(Runtime::InProcess));
    }
    let annotation = |key: &str| {
        function
            .annotations
            .get(key)
            .map(String::as_str)
            .unwrap_or_default()
    };
    match annotation(ANNOTATION_RUNTIME) {
        "Development" => {
            let target = Some(annotation(ANNOTATION_TARGET)).filter(|t| !t.is_empty()).unwrap_or(DEFAULT_TARGET);
            Ok(Some(Runtime::Development(GrpcFunction::new(name, target))))
        }
        "" | "Docker" => Err(Error::msg(format!(
            "function-artifactory render does not use Docker: annotate the Function with \
             {ANNOTATION_RUNTIME}: Development and {ANNOTATION_TARGET}: <host:port>, and serve it there"
        ))
        .context(format!("cannot start Function {name:?}"))),
        other => Err(Error::msg(format!("unsupported {ANNOTATION_RUNTIME:?} annotation value {other:?} (unknown runtime)"))
            .context(format!("cannot get runtime for Function {name:?}"))),
    }
}

/// Runs this function on the request as a gRPC server would receive it: the
/// request and the response go through the protobuf wire format, so the
/// function sees exactly the values it would see in a cluster.
fn run_in_process(
    this: ThisFunction<'_>,
    request: &RunFunctionRequest,
) -> Result<RunFunctionResponse> {
    let response = this(&request.encode_to_vec()).map_err(Error::msg)?;
    RunFunctionResponse::decode(response.as_slice())
        .map_err(|e| Error::msg(format!("cannot decode protobuf: {e}")))
}

/// This function in process, as the server runs it: the request's bytes decoded, the core,
/// the response encoded.
pub(in crate::render) fn in_process(request: &[u8]) -> std::result::Result<Vec<u8>, String> {
    let request =
        RunFunctionRequest::decode(request).map_err(|e| format!("cannot decode protobuf: {e}"))?;
    Ok(crate::run_function(&request).encode_to_vec())
}

/// A function served over insecure gRPC, connected at first use.
#[derive(Debug, Clone)]
struct GrpcFunction {
    name: String,
    target: String,
    channel: Option<tonic::transport::Channel>,
}

impl PartialEq for GrpcFunction {
    fn eq(&self, other: &Self) -> bool {
        (&self.name, &self.target) == (&other.name, &other.target)
    }
}

impl GrpcFunction {
    fn new(name: &str, target: &str) -> GrpcFunction {
        GrpcFunction {
            name: name.to_string(),
            target: target.to_string(),
            channel: None,
        }
    }

    /// Calls `apiextensions.fn.proto.v1`, and the same bytes on `v1beta1`
    /// when the server does not implement v1 (Crossplane's beta fallback).
    async fn run(&mut self, request: RunFunctionRequest) -> Result<RunFunctionResponse> {
        let channel = self.channel().await?;
        let mut client =
            v1::function_runner_service_client::FunctionRunnerServiceClient::new(channel.clone());
        match client.run_function(request.clone()).await {
            Ok(response) => Ok(response.into_inner()),
            Err(status) if status.code() == tonic::Code::Unimplemented => {
                let mut beta =
                    v1beta1::function_runner_service_client::FunctionRunnerServiceClient::new(
                        channel,
                    );
                beta.run_function(request)
                    .await
                    .map(tonic::Response::into_inner)
                    .map_err(rpc_error)
            }
            Err(status) => Err(rpc_error(status)),
        }
    }

    /// Connects, retrying until it succeeds: Crossplane dials with gRPC's
    /// `waitForReady`, so a function that is still starting is waited for
    /// until the render's deadline.
    async fn channel(&mut self) -> Result<tonic::transport::Channel> {
        if let Some(channel) = &self.channel {
            return Ok(channel.clone());
        }
        let uri = endpoint_uri(&self.target)?;
        let endpoint = tonic::transport::Endpoint::from_shared(uri.clone())
            .map_err(|e| {
                Error::msg(format!(
                    "cannot dial Function {:?} at address {:?}: {e}",
                    self.name, self.target
                ))
            })?
            .connect_timeout(Duration::from_secs(5));
        loop {
            if let Ok(channel) = endpoint.connect().await {
                self.channel = Some(channel.clone());
                return Ok(channel);
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

/// The HTTP/2 URI of a gRPC target (`host:port`, `dns:///host:port`,
/// `passthrough:///host:port`, `ipv4:addr:port`, `ipv6:[addr]:port`).
fn endpoint_uri(target: &str) -> Result<String> {
    let address = if let Some(rest) = target.strip_prefix("dns:") {
        // dns:[//authority/]host:port
        rest.strip_prefix("//")
            .map_or(rest, |r| r.split_once('/').map_or(r, |(_, host)| host))
    } else if let Some(rest) = target.strip_prefix("passthrough:") {
        rest.trim_start_matches('/')
    } else if let Some(rest) = target
        .strip_prefix("ipv4:")
        .or_else(|| target.strip_prefix("ipv6:"))
    {
        rest
    } else if target.starts_with("unix:") {
        return Err(Error::msg(format!(
            "unsupported gRPC target {target:?}: use host:port"
        )));
    } else {
        target
    };
    Ok(format!("http://{address}"))
}

/// A gRPC error as Go's grpc-go prints it.
fn rpc_error(status: tonic::Status) -> Error {
    Error::msg(format!(
        "rpc error: code = {:?} desc = {}",
        status.code(),
        status.message()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_become_http_uris() {
        assert_eq!(
            endpoint_uri("localhost:9443").unwrap(),
            "http://localhost:9443"
        );
        assert_eq!(
            endpoint_uri("dns:///fn.ns:9443").unwrap(),
            "http://fn.ns:9443"
        );
        assert_eq!(
            endpoint_uri("dns://8.8.8.8/fn:9443").unwrap(),
            "http://fn:9443"
        );
        assert_eq!(
            endpoint_uri("passthrough:///127.0.0.1:1").unwrap(),
            "http://127.0.0.1:1"
        );
        assert_eq!(
            endpoint_uri("ipv6:[::1]:9443").unwrap(),
            "http://[::1]:9443"
        );
        assert!(endpoint_uri("unix:///tmp/fn.sock").is_err());
    }

    #[test]
    fn this_function_runs_in_process_whatever_its_annotations() {
        let by_package = Function {
            name: "fn".into(),
            package: "xpkg.example.io/org/function-artifactory:v0.1.0".into(),
            annotations: [(ANNOTATION_RUNTIME.to_string(), "Development".to_string())].into(),
        };
        assert_eq!(
            runtime_for("fn", Some(&by_package)).unwrap(),
            Some(Runtime::InProcess)
        );
        assert_eq!(
            runtime_for(THIS_FUNCTION, None).unwrap(),
            Some(Runtime::InProcess)
        );
        assert_eq!(runtime_for("other", None).unwrap(), None);
    }

    #[test]
    fn other_functions_need_the_development_runtime() {
        let mut function = Function {
            name: "other".into(),
            package: "xpkg/other:v1".into(),
            ..Default::default()
        };
        let error = format!("{:#}", runtime_for("other", Some(&function)).unwrap_err());
        assert!(error.starts_with(
            "cannot start Function \"other\": function-artifactory render does not use Docker"
        ));
        function
            .annotations
            .insert(ANNOTATION_RUNTIME.into(), "Development".into());
        let Some(Runtime::Development(grpc)) = runtime_for("other", Some(&function)).unwrap()
        else {
            panic!()
        };
        assert_eq!(grpc.target, DEFAULT_TARGET);
        function
            .annotations
            .insert(ANNOTATION_RUNTIME.into(), "Podman".into());
        let error = format!("{:#}", runtime_for("other", Some(&function)).unwrap_err());
        assert!(error
            .contains("unsupported \"render.crossplane.io/runtime\" annotation value \"Podman\""));
    }
}
