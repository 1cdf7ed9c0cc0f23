//! The core alone: time and allocations per `run_function` call, at 10 to
//! 10,000 repositories (a mix of local, remote and virtual entries, with
//! observed resources for half of them: `requests::mixed_request`, which the component
//! benchmark sends too), and the protobuf decode/encode around it.
//!
//! `cargo bench --bench core` (the `item/s` column is repositories per second: constant across
//! sizes when the cost grows linearly). `--profile profiling` for callgrind (BENCHMARKS.md).

// The requests every benchmark shares (its header says why there is one copy).
#[path = "requests.rs"]
mod requests;

use function_artifactory::proto::v1::{RunFunctionRequest, Severity, State};
use function_artifactory::run_function;
use prost::Message;
use requests::{framed, mixed_request, resource};
use serde_json::{json, Value};
use std::collections::BTreeMap;

#[global_allocator]
static ALLOC: divan::AllocProfiler = divan::AllocProfiler::system();

fn main() {
    // `WRITE_REQUESTS=DIR`: writes the requests measured here, gRPC-framed, for callgrind with
    // `profile-call` (BENCHMARKS.md): plain-N.bin and, with `codegen`, live-N.bin.
    if let Some(dir) = std::env::var_os("WRITE_REQUESTS") {
        write_requests(std::path::Path::new(&dir));
        return;
    }
    divan::main();
}

fn write_requests(dir: &std::path::Path) {
    std::fs::create_dir_all(dir).unwrap();
    let write = |name: String, request: RunFunctionRequest| {
        std::fs::write(dir.join(name), framed(&request.encode_to_vec())).unwrap();
    };
    for n in [10, 100] {
        write(format!("plain-{n}.bin"), mixed_request(n));
        #[cfg(feature = "codegen")]
        write(format!("live-{n}.bin"), live_request(n));
    }
}

const SIZES: [usize; 4] = [10, 100, 1_000, 10_000];

#[divan::bench(args = SIZES)]
fn run_function_call(bencher: divan::Bencher, repositories: usize) {
    let request = mixed_request(repositories);
    // Repositories per second: constant across sizes when the cost grows linearly.
    bencher
        .counter(divan::counter::ItemsCount::new(repositories))
        .bench(|| run_function(divan::black_box(&request)));
}

#[divan::bench(args = SIZES)]
fn decode_run_encode(bencher: divan::Bencher, repositories: usize) {
    bench_bytes(bencher, repositories, mixed_request(repositories));
}

/// Decode, run and encode of `request`, as the server does.
fn bench_bytes(bencher: divan::Bencher, repositories: usize, request: RunFunctionRequest) {
    let bytes = request.encode_to_vec();
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
    use function_artifactory::proto::Struct;
    let mut request =
        requests::with_capabilities(mixed_request(repositories), &[Capability::RequiredSchemas]);
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

/// The same calls without the capability, to compare with.
#[cfg(feature = "codegen")]
#[divan::bench(args = [10, 100])]
fn run_function_builtin_schemas(bencher: divan::Bencher, repositories: usize) {
    let mut request = live_request(repositories);
    request.meta.as_mut().unwrap().capabilities.clear();
    request.required_schemas.clear();
    bencher
        .counter(divan::counter::ItemsCount::new(repositories))
        .bench(|| run_function(divan::black_box(&request)));
}

#[cfg(feature = "codegen")]
#[divan::bench(args = [10, 100])]
fn run_function_live_schemas(bencher: divan::Bencher, repositories: usize) {
    let request = live_request(repositories);
    let fatal = run_function(&request)
        .results
        .into_iter()
        .find(|r| r.severity == Severity::Fatal as i32);
    assert!(fatal.is_none(), "{fatal:?}");
    bencher
        .counter(divan::counter::ItemsCount::new(repositories))
        .bench(|| run_function(divan::black_box(&request)));
}

#[cfg(feature = "codegen")]
#[divan::bench(args = [10, 100])]
fn decode_run_encode_live_schemas(bencher: divan::Bencher, repositories: usize) {
    bench_bytes(bencher, repositories, live_request(repositories));
}

/// The part of [`run_function_live_schemas`] that finds each schema in the cache: the schemas
/// of the request read once, by their content hash (computed as the request is decoded when it
/// comes off the wire; here from the trees the request was built with).
#[cfg(feature = "codegen")]
#[divan::bench(args = [10, 100])]
fn live_schemas_lookup(bencher: divan::Bencher, repositories: usize) {
    use function_artifactory::validation::LiveSchemas;
    let request = live_request(repositories);
    bencher.bench(|| LiveSchemas::read(divan::black_box(&request.required_schemas)).is_empty());
}

/// What the server's metrics add to a call (`src/server/metrics.rs`): the started count, the
/// handled count and handling time, and what the call rendered (`cargo bench --bench core
/// --features codegen -- metrics`).
#[divan::bench(args = [10, 100])]
fn metrics_per_call(bencher: divan::Bencher, repositories: usize) {
    use function_artifactory::server::metrics::{metrics, Rendered};
    const SERVICE: &str = "apiextensions.fn.proto.v1.FunctionRunnerService";
    let request = mixed_request(repositories);
    // A fresh response each time, as the server's.
    bencher
        .with_inputs(|| function_artifactory::run_function_with_findings(&request))
        .bench_local_refs(|(response, findings)| {
            let metrics = metrics();
            metrics.started(SERVICE);
            metrics.handled(
                SERVICE,
                tonic::Code::Ok,
                std::time::Duration::from_micros(200),
            );
            let rendered = Rendered::of(divan::black_box(findings), divan::black_box(response));
            metrics.rendered(&rendered);
        });
}

/// Issue 27's claims that were quadratic, at a tenth of the size and full size: a set list of
/// N items (one repeated), N unknown fields in one entry's `forProvider`, N local entries and a
/// virtual listing N names no entry has. Every check is linear: the `item/s` column (items,
/// fields or entries per second) stays about the same at both sizes (`cargo bench --bench core
/// -- hostile`; RELIABILITY.md, "Hostile input").
mod hostile {
    use super::*;

    fn composite_of(repositories: Vec<Value>) -> RunFunctionRequest {
        let composite = json!({
            "apiVersion": "platform.example.org/v1alpha1", "kind": "XRepositories",
            "metadata": {"name": "team-a-repos"},
            "spec": {"repositories": repositories}
        });
        RunFunctionRequest {
            observed: Some(State {
                composite: Some(resource(composite)),
                resources: BTreeMap::new(),
            }),
            ..RunFunctionRequest::default()
        }
    }

    fn local(name: &str) -> Value {
        json!({"name": name, "rclass": "local", "packageType": "maven"})
    }

    /// Decode and run, as the server does; the call must fail (each of these claims is wrong).
    fn bench_failing(bencher: divan::Bencher, items: usize, request: RunFunctionRequest) {
        bench_call(bencher, items, request, true);
    }

    /// Decode and run, as the server does; the call must fail, or not, as `fails` says.
    fn bench_call(bencher: divan::Bencher, items: usize, request: RunFunctionRequest, fails: bool) {
        let bytes = request.encode_to_vec();
        let failed = run_function(&request)
            .results
            .iter()
            .any(|r| r.severity == Severity::Fatal as i32);
        assert_eq!(failed, fails);
        bencher
            .counter(divan::counter::ItemsCount::new(items))
            .bench(|| {
                let request = RunFunctionRequest::decode(divan::black_box(bytes.as_slice()))
                    .expect("valid request");
                run_function(&request)
            });
    }

    #[divan::bench(args = [20_000, 200_000], sample_count = 10)]
    fn set_items(bencher: divan::Bencher, items: usize) {
        let mut values: Vec<String> = (0..items).map(|i| format!("set-{i}")).collect();
        values.push("set-0".to_owned());
        let mut entry = local("libs");
        entry["forProvider"] = json!({ "propertySets": values });
        bench_failing(bencher, items, composite_of(vec![entry]));
    }

    #[divan::bench(args = [8_000, 80_000], sample_count = 10)]
    fn unknown_fields(bencher: divan::Bencher, fields: usize) {
        let unknown: serde_json::Map<String, Value> = (0..fields)
            .map(|i| (format!("unknown{i:05}"), json!(i)))
            .collect();
        let mut entry = local("libs");
        entry["forProvider"] = Value::Object(unknown);
        bench_failing(bencher, fields, composite_of(vec![entry]));
    }

    /// Issue 56: an import whose claim and live repository list the same N property sets in
    /// opposite orders, previewed (compared as sets) at every call.
    #[divan::bench(args = [4_000, 40_000], sample_count = 10)]
    fn takeover_property_sets(bencher: divan::Bencher, items: usize) {
        let sets: Vec<String> = (0..items).map(|i| format!("property-set-{i:05}")).collect();
        let mut reversed = sets.clone();
        reversed.reverse();
        let mut entry = local("libs");
        entry["import"] = json!(true);
        entry["forProvider"] = json!({ "propertySets": sets });
        let mut request = composite_of(vec![entry]);
        let observed = json!({
            "apiVersion": "local.artifactory.jfrog.crossplane.io/v1alpha1", "kind": "MavenRepository",
            "metadata": {"name": "team-a-repos-libs", "annotations": {
                "crossplane.io/external-name": "libs", "artifactory.fn.crossplane.io/origin": "imported"}},
            "spec": {"managementPolicies": ["Observe"], "forProvider": {}},
            "status": {"atProvider": {"propertySets": reversed}, "conditions": [
                {"type": "Ready", "status": "True", "reason": "Available", "lastTransitionTime": "2026-11-01T10:00:00Z"}]}
        });
        request
            .observed
            .as_mut()
            .expect("observed")
            .resources
            .insert("libs".into(), resource(observed));
        bench_call(bencher, items, request, false);
    }

    #[divan::bench(args = [800, 8_000], sample_count = 10)]
    fn unknown_members(bencher: divan::Bencher, entries: usize) {
        let mut repositories: Vec<Value> = (0..entries)
            .map(|i| local(&format!("local-{i:05}")))
            .collect();
        let members: Vec<String> = (0..entries).map(|i| format!("missing-{i:05}")).collect();
        repositories.push(json!({"name": "all", "rclass": "virtual", "packageType": "maven", "repositories": members}));
        bench_failing(bencher, entries, composite_of(repositories));
    }
}
