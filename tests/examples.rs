//! Every example composite (`examples/{flat,cluster,namespaced}/render.args`) renders
//! without problems, for the provider API its composition chooses, and every rendered
//! resource is valid against that API's provider CRDs.

mod support;

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use support::requests::{assert_valid, desired_resources, request};

const EXAMPLES: [&str; 3] = ["flat", "cluster", "namespaced"];

fn documents(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_yaml_ng::Deserializer::from_str(&text)
        .map(|document| serde::Deserialize::deserialize(document).unwrap())
        .filter(|value: &Value| !value.is_null())
        .collect()
}

/// The files named by an `.args` file, as `render` takes them.
struct Args {
    composite: PathBuf,
    composition: PathBuf,
    observed: Option<PathBuf>,
}

fn read_args(dir: &Path, name: &str) -> Args {
    let text = std::fs::read_to_string(dir.join(name)).unwrap();
    let words: Vec<&str> = text.split_whitespace().collect();
    let observed = words
        .iter()
        .position(|w| *w == "--observed-resources")
        .map(|i| dir.join(words[i + 1]));
    Args {
        composite: dir.join(words[0]),
        composition: dir.join(words[1]),
        observed,
    }
}

#[test]
fn every_example_renders_and_validates() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    for example in EXAMPLES {
        let dir = root.join(example);
        let args = read_args(&dir, "render.args");
        let composite = documents(&args.composite).remove(0);
        let composition = documents(&args.composition).remove(0);
        let step = &composition["spec"]["pipeline"][0];
        assert_eq!(step["functionRef"]["name"], "function-artifactory");
        let input = step["input"].clone();
        let api = match input["providerApi"].as_str() {
            Some("auto") | None if composite["metadata"]["namespace"].is_string() => "namespaced",
            Some("auto") | None => "cluster",
            Some(api) => api,
        };
        assert_eq!(
            api, example,
            "the {example} example renders for its own API"
        );
        let mut builder = request(composite).input(input);
        let mut observed = BTreeMap::new();
        for object in args.observed.iter().flat_map(|path| documents(path)) {
            let name = object["metadata"]["annotations"]["crossplane.io/composition-resource-name"]
                .as_str()
                .expect("observed resources name their composition resource")
                .to_owned();
            observed.insert(name.clone(), object.clone());
            builder = builder.observed(&name, object);
        }
        let response = builder.run();
        let resources = desired_resources(&response);
        assert!(resources.len() >= 4, "{example}: {}", resources.len());
        for name in observed.keys() {
            assert!(
                resources.contains_key(name),
                "{example}: observed {name} is rendered"
            );
        }
        for (name, object) in &resources {
            assert_eq!(
                object["apiVersion"]
                    .as_str()
                    .unwrap()
                    .contains(".m.crossplane.io"),
                example == "namespaced",
                "{example}/{name}: {}",
                object["apiVersion"]
            );
        }
        assert_valid(example, &resources);
    }
}

/// `examples/operations/runtime-config.yaml`: the DeploymentRuntimeConfig merges into
/// Crossplane's container (named package-runtime), probes the paths the server answers on the
/// port it listens on by default, and the PodDisruptionBudget selects the function's pods.
#[test]
fn the_runtime_config_probes_what_the_server_serves() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/operations/runtime-config.yaml");
    let docs = documents(&path);
    assert_eq!(docs.len(), 2);
    let config = &docs[0];
    assert_eq!(config["apiVersion"], "pkg.crossplane.io/v1beta1");
    assert_eq!(config["kind"], "DeploymentRuntimeConfig");
    let deployment = &config["spec"]["deploymentTemplate"]["spec"];
    assert!(deployment["replicas"].as_u64().unwrap() >= 2);
    // Crossplane's schema requires a selector and a template.
    assert!(deployment["selector"].is_object());
    let container = &deployment["template"]["spec"]["containers"][0];
    assert_eq!(container["name"], "package-runtime");
    let port = &container["ports"][0];
    assert_eq!(port["name"], "metrics");
    assert_eq!(
        port["containerPort"], 8080,
        "the server's default --metrics-address"
    );
    for (probe, path) in [("livenessProbe", "/healthz"), ("readinessProbe", "/readyz")] {
        assert_eq!(container[probe]["httpGet"]["path"], path);
        assert_eq!(container[probe]["httpGet"]["port"], "metrics");
    }
    assert!(container["resources"]["requests"]["memory"].is_string());
    let budget = &docs[1];
    assert_eq!(budget["kind"], "PodDisruptionBudget");
    assert_eq!(
        budget["spec"]["selector"]["matchLabels"]["pkg.crossplane.io/function"],
        "function-artifactory"
    );
}

/// `examples/function-wasm/`: the cluster example's Composition run by function-wasm. Its
/// settings, in the `config` of function-wasm's Input, render the cluster example as the
/// cluster example's own Composition does, byte for byte.
#[test]
fn the_function_wasm_example_renders_as_the_cluster_example() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let cluster = documents(&root.join("cluster/composition.yaml")).remove(0);
    let composite = documents(&root.join("cluster/xr.yaml")).remove(0);
    let expected = request(composite.clone())
        .input(cluster["spec"]["pipeline"][0]["input"].clone())
        .run();
    for file in ["composition.yaml", "composition-oci.yaml"] {
        let composition = documents(&root.join("function-wasm").join(file)).remove(0);
        let step = &composition["spec"]["pipeline"][0];
        assert_eq!(step["functionRef"]["name"], "function-wasm", "{file}");
        let input = step["input"].clone();
        assert_eq!(input["apiVersion"], "wasm.fn.crossplane.io/v1", "{file}");
        let request = request(composite.clone()).input(input).build();
        let response = function_artifactory::run_function_at(
            &request,
            function_artifactory::SettingsAt::Config,
        );
        assert_eq!(response, expected, "{file}");
        assert!(desired_resources(&response).len() >= 4, "{file}");
    }
}
