//! One call of the component against the native core, in one run (BENCHMARKS.md, "The
//! WebAssembly component"): at 10 and 100 repositories, and the live-schema call of the
//! cluster example. The component is instantiated afresh for every call, as function-wasm
//! does, so instantiation and run are timed apart; the native core runs warm, as the server
//! does. Medians of many calls, and the fuel of one (about one unit per wasm instruction), which
//! does not depend on the machine's load; and the fuel of the same call made a second time on
//! one instance, what a call costs once the instance holds what a call builds.
//!
//! `cargo test --manifest-path tests/component-host/Cargo.toml --target-dir target/component-host
//! --bench calls` (the test build: the core optimised as in a release but without LTO, its
//! dependencies at opt-level 1, wasmtime as the tests run it).

use clap::Parser;
use component_host::{repository, Host};
use function_artifactory::proto::v1::{RequestMeta, Resource, RunFunctionRequest, State};
use function_artifactory::proto::Struct;
use function_artifactory::render::{render_with, RenderArgs};
use prost::Message;
use serde_json::{json, Value};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

const TYPES: [&str; 10] = [
    "maven", "npm", "docker", "pypi", "generic", "gradle", "helm", "go", "nuget", "conan",
];

/// The core benchmark's entries (benches/core.rs): every tenth a virtual over the locals of
/// its type before it, every fifth a remote, the others locals with provider fields.
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
               "forProvider": {"includesPattern": "**/*", "excludesPattern": "**/*.tmp", "xrayIndex": i.is_multiple_of(2)}})
    }
}

fn resource(object: Value) -> Resource {
    Resource {
        resource: Some(Struct::from_value(object)),
        ..Resource::default()
    }
}

/// A steady-state reconcile of `n` repositories: half of them observed and ready; the
/// settings in function-wasm's Input.
fn request(n: usize) -> Vec<u8> {
    let composite = json!({
        "apiVersion": "platform.example.org/v1alpha1", "kind": "XRepositories",
        "metadata": {"name": "team-a-repos", "uid": "0b6f4c1e-6a0e-4e63-9d6c-3a7a4f7f3c11"},
        "spec": {"projectKey": "team-a", "repositories": (0..n).map(entry).collect::<Vec<_>>()}
    });
    let mut request = RunFunctionRequest {
        meta: Some(RequestMeta {
            tag: "bench".into(),
            capabilities: vec![],
        }),
        observed: Some(State {
            composite: Some(resource(composite)),
            resources: BTreeMap::new(),
        }),
        desired: Some(State::default()),
        input: Some(Struct::from_value(json!({
            "apiVersion": "wasm.fn.crossplane.io/v1", "kind": "Input",
            "module": {"type": "Path", "path": "function-artifactory.wasm"},
            "config": {"providerApi": "cluster"},
        }))),
        ..RunFunctionRequest::default()
    };
    let first = native(&request.encode_to_vec());
    let first =
        function_artifactory::proto::v1::RunFunctionResponse::decode(first.as_slice()).unwrap();
    request.observed.as_mut().unwrap().resources = first
        .desired
        .unwrap_or_default()
        .resources
        .into_iter()
        .enumerate()
        .filter(|(i, _)| i.is_multiple_of(2))
        .map(|(_, (name, r))| {
            let mut object = r.resource.unwrap_or_default().into_value();
            object["status"] =
                json!({"conditions": [{"type": "Ready", "status": "True", "reason": "Available"}]});
            (name, resource(object))
        })
        .collect();
    request.encode_to_vec()
}

/// What the server does with a request's bytes.
fn native(request: &[u8]) -> Vec<u8> {
    let request = RunFunctionRequest::decode(request).unwrap();
    let at = function_artifactory::SettingsAt::Config;
    let at = if request
        .input
        .as_ref()
        .is_some_and(|i| i.fields()["apiVersion"] == "wasm.fn.crossplane.io/v1")
    {
        at
    } else {
        function_artifactory::SettingsAt::Input
    };
    function_artifactory::run_function_at(&request, at).encode_to_vec()
}

/// The last request the cluster example's live-schema render sends this function: with the
/// provider CRDs of its kinds as required schemas.
fn live_schema_request() -> Vec<u8> {
    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: RenderArgs,
    }
    let folder = repository().join("examples/cluster");
    std::env::set_current_dir(&folder).unwrap();
    let text = std::fs::read_to_string(folder.join("schemas.args")).unwrap();
    let argv = std::iter::once("render".to_owned()).chain(
        text.lines()
            .filter(|l| !l.trim_start().starts_with('#'))
            .flat_map(|l| l.split_whitespace().map(str::to_owned)),
    );
    let args = Cli::try_parse_from(argv).unwrap().args;
    let last = RefCell::new(Vec::new());
    let capture = |request: &[u8]| -> Result<Vec<u8>, String> {
        *last.borrow_mut() = request.to_vec();
        Ok(native(request))
    };
    render_with(&args, &capture).unwrap();
    let request = last.into_inner();
    assert!(!RunFunctionRequest::decode(request.as_slice())
        .unwrap()
        .required_schemas
        .is_empty());
    request
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn micros(d: Duration) -> String {
    format!("{:.0} µs", d.as_secs_f64() * 1e6)
}

fn measure(name: &str, request: &[u8], rounds: usize) {
    let host = Host::shared();
    let expected = native(request);
    let mut native_times = Vec::new();
    for _ in 0..rounds {
        let started = Instant::now();
        let answer = native(request);
        native_times.push(started.elapsed());
        assert_eq!(answer, expected);
    }
    let (mut instantiate, mut run, mut fuel) = (Vec::new(), Vec::new(), 0);
    for _ in 0..rounds {
        let call = host.call(request).unwrap();
        assert_eq!(call.answer.as_ref(), Ok(&expected));
        instantiate.push(call.instantiate);
        run.push(call.run);
        fuel = call.fuel;
    }
    // The floor pre-initialisation aims at: the same call again on the instance that made it.
    let again = host.calls_on_one_instance(&[request, request]).unwrap();
    for call in &again {
        assert_eq!(call.answer.as_ref(), Ok(&expected));
    }
    let native = median(native_times);
    let (instantiate, run) = (median(instantiate), median(run));
    let ratio = (instantiate + run).as_secs_f64() / native.as_secs_f64();
    println!(
        "| {name} | {} B | {} | {} | {} | {} | {ratio:.1}x | {:.2} M | {:.2} M |",
        request.len(),
        micros(native),
        micros(instantiate),
        micros(run),
        micros(instantiate + run),
        fuel as f64 / 1e6,
        again[1].fuel as f64 / 1e6,
    );
}

fn main() {
    let compile = Instant::now();
    Host::shared();
    println!(
        "compiling the component: {:.2} s",
        compile.elapsed().as_secs_f64()
    );
    println!(
        "| call | request | native core | instantiate | run | component | ratio | fuel | fuel, again on one instance |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    // What any call costs in this host: an empty request, which the core answers with one
    // fatal result.
    measure("empty request (the floor)", &[], 200);
    measure("10 repositories", &request(10), 200);
    measure("100 repositories", &request(100), 100);
    measure(
        "live schemas (examples/cluster, 3 kinds)",
        &live_schema_request(),
        100,
    );
}
