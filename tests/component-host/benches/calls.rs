//! One call of the component against the native core, in one run (docs/benchmarks-log.md, "The
//! WebAssembly component"): at 10 and 100 repositories (the core benchmark's request,
//! `requests::mixed_request`), and the live-schema call of the cluster example. The component
//! is instantiated afresh for every call, as function-wasm does, so instantiation and run are
//! timed apart; the native core runs warm, as the server does. Medians of many calls, and the
//! fuel of one (about one unit per wasm instruction), which does not depend on the machine's
//! load; and the fuel of the same call made a second time on one instance, what a call costs
//! once the instance holds what a call builds.
//!
//! `cargo test --manifest-path tests/component-host/Cargo.toml --target-dir target/component-host
//! --bench calls` (the test build: the core optimised as in a release but without LTO, its
//! dependencies at opt-level 1, wasmtime as the tests run it).

// The requests every benchmark shares, the native core's in benches/core.rs among them (its
// header says why there is one copy).
#[path = "../../../benches/requests.rs"]
mod requests;

use clap::Parser;
use component_host::{repository, Host};
use function_artifactory::proto::v1::RunFunctionRequest;
use function_artifactory::proto::Struct;
use function_artifactory::render::{render_with, RenderArgs};
use prost::Message;
use serde_json::json;
use std::cell::RefCell;
use std::time::{Duration, Instant};

/// The core benchmark's request of `n` repositories (a steady-state reconcile, half of them
/// observed and ready) inside function-wasm's Input, as the runtime hands it to the module: the
/// Input sets no `config`, so the settings are the defaults, as in the native core's request.
fn request(n: usize) -> Vec<u8> {
    let mut request = requests::mixed_request(n);
    request.input = Some(Struct::from_value(json!({
        "apiVersion": "wasm.fn.crossplane.io/v1", "kind": "Input",
        "module": {"type": "Path", "path": "function-artifactory.wasm"},
    })));
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
