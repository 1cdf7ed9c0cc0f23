//! What one call costs the host: a 1,000-repository claim runs within function-wasm's
//! memory limit of 128 MiB, answers as the native core does, and reports its fuel; a claim
//! too large for one composite gets the server's advice.

use component_host::{Host, MEMORY_LIMIT};
use function_artifactory::proto::v1::{
    Capability, RequestMeta, Resource, RunFunctionRequest, RunFunctionResponse, State,
};
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
            // Every repository rendered at once (createGuard: false): on a first call the
            // guard would leave the virtuals waiting for their members, and this measures the
            // memory of all of them rendered.
            "config": {"providerApi": "cluster", "createGuard": false},
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

/// The claim of `tests/function/hostile_claims.rs`'s `the_advice_for_5000_repositories_is_the_one_every_face_gives`:
/// 5,000 local maven repositories with a long description, a response over what Crossplane reads.
pub fn five_thousand_repositories() -> Vec<u8> {
    const DESCRIPTION: &str = "Releases of the libraries of team one, built by CI from the main branch of each library's repository and promoted here once their tests pass; snapshots go to the snapshot repository, and nothing here is ever deleted by hand.";
    let repositories: Vec<Value> = (0..5_000)
        .map(|i| json!({"name": format!("local-{i:05}"), "rclass": "local", "packageType": "maven", "description": DESCRIPTION}))
        .collect();
    let composite = json!({
        "apiVersion": "platform.example.org/v1alpha1",
        "kind": "XRepositories",
        "metadata": {
            "name": "team1-repos-x7k2p",
            "uid": "4f6c8f0e-0000-4000-8000-000000000001",
            "labels": {
                "crossplane.io/claim-name": "team1-repos",
                "crossplane.io/claim-namespace": "team1",
                "crossplane.io/composite": "team1-repos-x7k2p"
            }
        },
        "spec": {"repositories": repositories},
    });
    RunFunctionRequest {
        meta: Some(RequestMeta {
            tag: "test-tag".into(),
            capabilities: vec![
                Capability::Capabilities as i32,
                Capability::Conditions as i32,
            ],
        }),
        observed: Some(State {
            composite: Some(Resource {
                resource: Some(Struct::from_value(composite)),
                ..Default::default()
            }),
            ..Default::default()
        }),
        desired: Some(State::default()),
        ..Default::default()
    }
    .encode_to_vec()
}

/// On wasm32 the advice overflowed a 32-bit product and said "about 876 fit in one"; it is the
/// server's, word for word.
#[test]
fn the_advice_for_5000_repositories_is_the_servers() {
    let request = five_thousand_repositories();
    let call = Host::shared().call(&request).expect("no trap");
    let response = call.answer.expect("a response");
    let decoded = RunFunctionRequest::decode(request.as_slice()).unwrap();
    assert_eq!(
        response,
        function_artifactory::run_function(&decoded).encode_to_vec()
    );
    let response = RunFunctionResponse::decode(response.as_slice()).unwrap();
    let message = &response.results[0].message;
    assert_eq!(
        message.lines().nth(1),
        Some("- spec.repositories: the response would be about 4.6 MiB (4,840,000 bytes) for 5000 repositories: more than the 4.0 MiB (4,194,304 bytes) Crossplane reads (its function runner uses gRPC's default receive limit), so Crossplane would fail the call without saying why; fix: split the repositories over several composites: about 4332 fit in one"),
        "{message}"
    );
}
