//! The core alone: time and allocations per `run_function` call, at 10 to
//! 10,000 repositories (a mix of local, remote and virtual entries, with
//! observed resources for half of them), and the protobuf decode/encode around it.
//!
//! `cargo bench --bench core` (the `item/s` column is repositories per second: constant across
//! sizes when the cost grows linearly). `--profile profiling` for callgrind (BENCHMARKS.md).

use function_artifactory::proto::v1::{RequestMeta, Resource, RunFunctionRequest, State};
use function_artifactory::proto::Struct;
use function_artifactory::run_function;
use prost::Message;
use serde_json::{json, Value};
use std::collections::BTreeMap;

#[global_allocator]
static ALLOC: divan::AllocProfiler = divan::AllocProfiler::system();

fn main() {
    divan::main();
}

const SIZES: [usize; 4] = [10, 100, 1_000, 10_000];
const TYPES: [&str; 10] = [
    "maven", "npm", "docker", "pypi", "generic", "gradle", "helm", "go", "nuget", "cargo",
];

/// Every tenth entry is a virtual over the nine locals before it; every fifth a remote.
fn entry(i: usize) -> Value {
    let package_type = TYPES[i % TYPES.len()];
    let name = format!("{package_type}-{i:05}");
    if i % 10 == 9 {
        let members: Vec<String> = (i - 9..i)
            .filter(|m| TYPES[m % 10] == package_type)
            .map(|m| format!("{}-{m:05}", TYPES[m % 10]))
            .collect();
        json!({"name": name, "rclass": "virtual", "packageType": package_type, "repositories": members})
    } else if i % 5 == 4 {
        json!({"name": name, "rclass": "remote", "packageType": package_type, "url": "https://upstream.example.com/r"})
    } else {
        json!({"name": name, "rclass": "local", "packageType": package_type, "description": format!("Local {package_type} #{i}"),
               "forProvider": {"includesPattern": "**/*", "excludesPattern": "**/*.tmp", "xrayIndex": i % 2 == 0}})
    }
}

pub fn request(repositories: usize) -> RunFunctionRequest {
    let entries: Vec<Value> = (0..repositories).map(entry).collect();
    let composite = json!({
        "apiVersion": "platform.example.org/v1alpha1", "kind": "XRepositories",
        "metadata": {"name": "team-a-repos", "uid": "0b6f4c1e-6a0e-4e63-9d6c-3a7a4f7f3c11"},
        "spec": {"projectKey": "team-a", "repositories": entries}
    });
    let first = run_function(&RunFunctionRequest {
        observed: Some(State {
            composite: Some(resource(composite.clone())),
            resources: BTreeMap::new(),
        }),
        ..RunFunctionRequest::default()
    });
    // Half the repositories exist and are ready, as in a steady-state reconcile.
    let observed: BTreeMap<String, Resource> = first
        .desired
        .unwrap_or_default()
        .resources
        .into_iter()
        .enumerate()
        .filter(|(i, _)| i % 2 == 0)
        .map(|(_, (name, r))| {
            let mut object = r.resource.unwrap_or_default().into_value();
            object["status"] =
                json!({"conditions": [{"type": "Ready", "status": "True", "reason": "Available"}]});
            (name, resource(object))
        })
        .collect();
    RunFunctionRequest {
        meta: Some(RequestMeta {
            tag: "bench".into(),
            capabilities: vec![],
        }),
        observed: Some(State {
            composite: Some(resource(composite)),
            resources: observed,
        }),
        desired: Some(State::default()),
        ..RunFunctionRequest::default()
    }
}

fn resource(object: Value) -> Resource {
    Resource {
        resource: Some(Struct::from_value(object)),
        ..Resource::default()
    }
}

#[divan::bench(args = SIZES)]
fn run_function_call(bencher: divan::Bencher, repositories: usize) {
    let request = request(repositories);
    // Repositories per second: constant across sizes when the cost grows linearly.
    bencher
        .counter(divan::counter::ItemsCount::new(repositories))
        .bench(|| run_function(divan::black_box(&request)));
}

#[divan::bench(args = SIZES)]
fn decode_run_encode(bencher: divan::Bencher, repositories: usize) {
    let bytes = request(repositories).encode_to_vec();
    bencher
        .counter(divan::counter::ItemsCount::new(repositories))
        .bench(|| {
            let request = RunFunctionRequest::decode(divan::black_box(bytes.as_slice()))
                .expect("valid request");
            run_function(&request).encode_to_vec()
        });
}

/// The request of `repositories` as a Crossplane v2.2 sends it once the function asked for
/// schemas: the capability, and the schema of every kind asked for: the cluster kinds as the
/// provider's v0.14.0 CRDs serve them, the flat kinds that `providerApi: auto` also asks for as
/// not served (a cluster without the provider's old API).
#[cfg(feature = "codegen")]
fn live_request(repositories: usize) -> RunFunctionRequest {
    use function_artifactory::codegen::crds;
    use function_artifactory::proto::v1::{Capability, Schema};
    let mut request = request(repositories);
    request.meta.as_mut().unwrap().capabilities = vec![Capability::RequiredSchemas as i32];
    let asked = run_function(&request)
        .requirements
        .unwrap_or_default()
        .schemas;
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let release = crds::release(root, "v0.14.0").expect("the v0.14.0 CRDs");
    for (name, selector) in asked {
        let schema = release.crds.iter().find_map(|(_, crd)| {
            let spec = &crd["spec"];
            let version = &spec["versions"][0];
            let api_version = format!("{}/{}", spec["group"].as_str()?, version["name"].as_str()?);
            (api_version == selector.api_version && spec["names"]["kind"] == selector.kind.as_str())
                .then(|| Struct::from_value(version["schema"]["openAPIV3Schema"].clone()))
        });
        request
            .required_schemas
            .insert(name, Schema { openapi_v3: schema });
    }
    request
}

#[cfg(feature = "codegen")]
#[divan::bench(args = [10, 100])]
fn run_function_live_schemas(bencher: divan::Bencher, repositories: usize) {
    let request = live_request(repositories);
    assert!(run_function(&request)
        .results
        .iter()
        .all(|r| r.severity != 1));
    bencher
        .counter(divan::counter::ItemsCount::new(repositories))
        .bench(|| run_function(divan::black_box(&request)));
}

#[cfg(feature = "codegen")]
#[divan::bench(args = [10, 100])]
fn decode_run_encode_live_schemas(bencher: divan::Bencher, repositories: usize) {
    let bytes = live_request(repositories).encode_to_vec();
    bencher
        .counter(divan::counter::ItemsCount::new(repositories))
        .bench(|| {
            let request = RunFunctionRequest::decode(divan::black_box(bytes.as_slice()))
                .expect("valid request");
            run_function(&request).encode_to_vec()
        });
}
