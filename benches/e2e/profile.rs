//! gRPC-framed request bodies (what bench-e2e writes to target/bench-e2e/), each decoded, run
//! and encoded CALLS times, in turn: the server's work without the transport, for callgrind.
//! Several bodies make one call of each (a reconcile's first and second call).
//!
//! valgrind --tool=callgrind target/profiling/examples/profile-call target/bench-e2e/ours-100.bin 20
//! valgrind --tool=callgrind target/profiling/examples/profile-call FIRST.bin SECOND.bin 20
//!
//! `--steady` first turns each body into the call of a reconcile whose resources exist: every
//! resource the function composes for it comes back observed, as the provider reports one
//! (uid, generation, owner, finalizer, `status.atProvider`, Ready and Synced). bench-e2e's
//! requests have none, and a claim's reconciles after its first all carry them.
//!
//! valgrind --tool=callgrind target/profiling/examples/profile-call --steady target/bench-e2e/plain-100-0.bin 6

use function_artifactory::proto::v1::{Resource, RunFunctionRequest};
use function_artifactory::proto::Struct;
use function_artifactory::run_function;
use prost::bytes::Bytes;
use prost::Message;
use serde_json::{json, Value};

/// The server binary's allocator (src/main.rs).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let steady = args.first().is_some_and(|arg| arg == "--steady");
    if steady {
        args.remove(0);
    }
    let calls: usize = match args.last().map(|s| s.parse()) {
        Some(Ok(calls)) if args.len() > 1 => {
            args.pop();
            calls
        }
        _ => 10,
    };
    // As the server holds a request: the bytes received, which the live schemas stay slices of.
    let bodies: Vec<Bytes> = args
        .iter()
        .map(|path| Bytes::from(std::fs::read(path).expect("a request body")).slice(5..))
        .map(|body| {
            if steady {
                with_resources_observed(&body)
            } else {
                body
            }
        })
        .collect();
    let mut bytes = 0;
    for _ in 0..calls {
        for body in &bodies {
            let request = RunFunctionRequest::decode(body.clone()).expect("a request");
            bytes += run_function(&request).encode_to_vec().len();
        }
    }
    let (schemas, cache_bytes) = function_artifactory::catalog::live::cache_size();
    println!("{calls} calls, {bytes} response bytes; live schemas cached: {schemas}, about {cache_bytes} bytes");
}

/// `body` with every resource the function composes for it observed, as the provider reports it.
fn with_resources_observed(body: &[u8]) -> Bytes {
    let mut request = RunFunctionRequest::decode(body).expect("a request");
    let desired = run_function(&request).desired.unwrap_or_default();
    let observed = request.observed.get_or_insert_with(Default::default);
    for (name, resource) in desired.resources {
        let mut object = resource.resource.unwrap_or_default().into_value();
        as_the_provider_reports_it(&mut object);
        let resource = Resource {
            resource: Some(Struct::from_value(object)),
            ..Resource::default()
        };
        observed.resources.insert(name, resource);
    }
    Bytes::from(request.encode_to_vec())
}

/// What the API server and the provider add to a managed resource once it exists.
fn as_the_provider_reports_it(object: &mut Value) {
    let key = object["metadata"]["annotations"]["crossplane.io/external-name"].clone();
    let description = object["spec"]["forProvider"]["description"].clone();
    let metadata = &mut object["metadata"];
    metadata["uid"] = json!("3f0c7a52-8d0e-4a8e-9d55-0c1f5c7f2a10");
    metadata["generation"] = json!(1);
    metadata["creationTimestamp"] = json!("2026-11-20T10:00:00Z");
    metadata["resourceVersion"] = json!("123456");
    metadata["finalizers"] = json!(["finalizer.managedresource.crossplane.io"]);
    metadata["ownerReferences"] = json!([{
        "apiVersion": "platform.example.org/v1alpha1", "kind": "XRepositories",
        "name": "team-a-repos", "uid": "0b6f4c1e-6a0e-4e63-9d6c-3a7a4f7f3c11",
        "controller": true, "blockOwnerDeletion": true
    }]);
    object["status"] = json!({
        "atProvider": {"key": key, "id": key, "description": description},
        "conditions": [
            {"type": "Ready", "status": "True", "reason": "Available",
             "lastTransitionTime": "2026-11-20T10:00:05Z", "observedGeneration": 1},
            {"type": "Synced", "status": "True", "reason": "ReconcileSuccess",
             "lastTransitionTime": "2026-11-20T10:00:03Z", "observedGeneration": 1}
        ]
    });
}
