//! What one call costs the host: a 1,000-repository claim runs within function-wasm's
//! memory limit of 128 MiB, answers as the native core does, and reports its fuel.

use component_host::{Host, MEMORY_LIMIT};
use function_artifactory::proto::v1::{Resource, RunFunctionRequest, State};
use function_artifactory::proto::Struct;
use prost::Message;
use serde_json::{json, Value};

/// A claim's composite with `n` repositories: locals of several package types, remotes with
/// a URL, and virtuals over them.
pub fn claim(n: usize) -> Vec<u8> {
    let types = ["maven", "npm", "pypi", "go", "generic"];
    let repositories: Vec<Value> = (0..n)
        .map(|i| {
            let package_type = types[i % types.len()];
            match i % 10 {
                0..=5 => json!({"name": format!("local-{i}"), "rclass": "local", "packageType": package_type}),
                6..=8 => json!({"name": format!("remote-{i}"), "rclass": "remote", "packageType": package_type,
                                "url": format!("https://mirror.example.com/{package_type}/{i}")}),
                _ => json!({"name": format!("virtual-{i}"), "rclass": "virtual", "packageType": package_type,
                            "repositories": [format!("local-{}", i - 5)]}),
            }
        })
        .collect();
    let composite = json!({
        "apiVersion": "platform.example.org/v1alpha1",
        "kind": "XRepositories",
        "metadata": {"name": "big"},
        "spec": {"projectKey": "team1", "repositories": repositories},
    });
    RunFunctionRequest {
        observed: Some(State {
            composite: Some(Resource {
                resource: Some(Struct::from_value(composite)),
                ..Default::default()
            }),
            ..Default::default()
        }),
        input: Some(Struct::from_value(json!({
            "apiVersion": "wasm.fn.crossplane.io/v1",
            "kind": "Input",
            "module": {"type": "Path", "path": "function-artifactory.wasm"},
            "config": {"providerApi": "cluster"},
        }))),
        ..Default::default()
    }
    .encode_to_vec()
}

#[test]
fn a_thousand_repositories_run_within_128_mib() {
    let request = claim(1000);
    let call = Host::shared()
        .call(&request)
        .expect("no trap, memory within the limit");
    let response = call.answer.expect("a response");
    let decoded = RunFunctionRequest::decode(request.as_slice()).unwrap();
    let native =
        function_artifactory::run_function_at(&decoded, function_artifactory::SettingsAt::Config);
    assert_eq!(response, native.encode_to_vec());
    assert!(
        !native.results.iter().any(|r| r.severity == 1),
        "{:?}",
        native.results
    );
    assert_eq!(native.desired.unwrap().resources.len(), 1000);
    assert!(call.peak_memory <= MEMORY_LIMIT);
    eprintln!(
        "1,000 repositories: {} bytes in, {} bytes out, fuel {}, peak memory {:.1} MiB",
        request.len(),
        response.len(),
        call.fuel,
        call.peak_memory as f64 / (1 << 20) as f64
    );
}
