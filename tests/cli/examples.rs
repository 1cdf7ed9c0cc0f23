//! Every example composite (`examples/{flat,cluster,namespaced,enterprise}/render.args`, and
//! the two teams' of `examples/teams/`) renders without problems, for the provider API its
//! composition chooses, and every rendered resource is valid against that API's provider CRDs. The examples the README installs ask
//! nothing of Artifactory that a plain Pro instance lacks; the enterprise one says what it needs.

use crate::support;

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use support::requests::{assert_valid, desired_resources, request, status_repositories};

/// Each example folder, the `.args` file of its composite, and the provider API it renders for.
const EXAMPLES: [(&str, &str, &str); 6] = [
    ("flat", "render.args", "flat"),
    ("cluster", "render.args", "cluster"),
    ("namespaced", "render.args", "namespaced"),
    ("enterprise", "render.args", "cluster"),
    ("teams", "team1.args", "namespaced"),
    ("teams", "team2.args", "namespaced"),
];

/// The examples that need no more than Artifactory Pro.
const PRO_EXAMPLES: [&str; 3] = ["flat", "cluster", "namespaced"];

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
    let words: Vec<&str> = text
        .lines()
        .filter(|line| !line.trim_start().starts_with('#'))
        .flat_map(str::split_whitespace)
        .collect();
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
    for (example, args_file, example_api) in EXAMPLES {
        let dir = root.join(example);
        let args = read_args(&dir, args_file);
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
            api, example_api,
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
        // Every entry is in the status; a new virtual is rendered once its members are created.
        let entries = status_repositories(&response).len();
        assert!(entries >= 3, "{example}: {entries}");
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
                example_api == "namespaced",
                "{example}/{name}: {}",
                object["apiVersion"]
            );
        }
        assert_valid(example_api, &resources);
    }
}

fn example_file(path: &str) -> Value {
    documents(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("examples")
            .join(path),
    )
    .remove(0)
}

fn function_input(composition: &Value) -> &Value {
    &composition["spec"]["pipeline"][0]["input"]
}

/// What a plain Artifactory Pro instance would refuse, or need made first, in a composite's
/// spec: federated repositories (Enterprise X and Enterprise+ only), a JFrog project (it must
/// exist before a repository names it), and virtual members that nothing in the claim creates.
fn needs_more_than_pro(spec: &Value) -> Vec<String> {
    let mut found = Vec::new();
    if spec.get("projectKey").is_some() {
        found.push("projectKey: the JFrog project must exist first".to_owned());
    }
    let entries = spec["repositories"].as_array().unwrap();
    let names: Vec<&str> = entries
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    for entry in entries {
        let name = entry["name"].as_str().unwrap();
        if entry["rclass"] == "federated" {
            found.push(format!("{name}: federated (Enterprise X or Enterprise+)"));
        }
        if entry.get("externalRepositories").is_some() {
            found.push(format!("{name}: members the claim does not create"));
        }
        for member in entry["repositories"].as_array().into_iter().flatten() {
            if !names.contains(&member.as_str().unwrap()) {
                found.push(format!("{name}: member {member} is not in the claim"));
            }
        }
    }
    found
}

/// The examples the README installs work on a plain Artifactory Pro instance, and name the
/// Artifactory URL in one place only: the provider's Secret, not the function input.
#[test]
fn the_readme_examples_need_no_more_than_artifactory_pro() {
    for example in PRO_EXAMPLES {
        let args = read_args(
            &Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("examples")
                .join(example),
            "render.args",
        );
        let composite = documents(&args.composite).remove(0);
        assert_eq!(
            needs_more_than_pro(&composite["spec"]),
            Vec::<String>::new(),
            "{example}"
        );
        let composition = documents(&args.composition).remove(0);
        assert!(
            function_input(&composition).get("artifactoryUrl").is_none(),
            "{example}: the URL belongs to the ProviderConfig's Secret"
        );
    }
    // The claim the README applies is the composite render reads, less what Crossplane adds.
    let claim = example_file("cluster/claim.yaml");
    let mut spec = example_file("cluster/xr.yaml")["spec"].clone();
    for added in ["claimRef", "compositionRef"] {
        spec.as_object_mut().unwrap().remove(added);
    }
    assert_eq!(claim["spec"], spec);
}

/// The optional enterprise claim shows what the default leaves out, and its composite is the
/// claim's; it gives every repository of the project an environment.
#[test]
fn the_enterprise_example_shows_projects_and_federation() {
    let claim = example_file("enterprise/claim.yaml");
    let mut spec = example_file("enterprise/xr.yaml")["spec"].clone();
    spec.as_object_mut().unwrap().remove("claimRef");
    assert_eq!(claim["spec"], spec);
    let needs = needs_more_than_pro(&claim["spec"]);
    assert!(
        needs.iter().any(|n| n.starts_with("projectKey")),
        "{needs:?}"
    );
    assert!(needs.iter().any(|n| n.contains("federated")), "{needs:?}");
    for entry in claim["spec"]["repositories"].as_array().unwrap() {
        assert!(
            entry["forProvider"]["projectEnvironments"].is_array(),
            "{}",
            entry["name"]
        );
    }
    let composition = example_file("enterprise/composition.yaml");
    assert_eq!(
        claim["spec"]["compositionRef"]["name"],
        composition["metadata"]["name"]
    );
    assert!(function_input(&composition)["artifactoryUrl"].is_string());
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
    // Applied in the namespace Crossplane runs in, whatever it is.
    assert!(budget["metadata"].get("namespace").is_none());
    assert_eq!(
        budget["spec"]["selector"]["matchLabels"]["pkg.crossplane.io/function"],
        "function-artifactory"
    );
}

/// The environment `examples/operations/runtime-config.yaml` gives the container is read by
/// the server: started with it, it says the settings it took.
#[test]
fn the_runtime_config_s_environment_sets_the_server() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/operations/runtime-config.yaml");
    let config = documents(&path).remove(0);
    let container =
        &config["spec"]["deploymentTemplate"]["spec"]["template"]["spec"]["containers"][0];
    let env: Vec<(String, String)> = container["env"]
        .as_array()
        .expect("env")
        .iter()
        .map(|e| {
            (
                e["name"].as_str().unwrap().to_owned(),
                e["value"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let names: Vec<&str> = env.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "ANSWER_MEMO_SIZE",
            "FUNCTION_ARTIFACTORY_MAX_RECV_MESSAGE_SIZE"
        ]
    );
    let os_env: Vec<(&str, &std::ffi::OsStr)> = env
        .iter()
        .map(|(n, v)| (n.as_str(), std::ffi::OsStr::new(v.as_str())))
        .collect();
    let server = support::server::Server::start_with_env(&["--insecure"], &os_env);
    let serving = server
        .wait_for_log(std::time::Duration::from_secs(5), |l| {
            l["message"] == "serving"
        })
        .expect("the server starts");
    let value = |name: &str| {
        env.iter()
            .find(|(n, _)| n == name)
            .unwrap()
            .1
            .parse::<u64>()
            .unwrap()
    };
    assert_eq!(serving["answer_memo_size_mib"], value("ANSWER_MEMO_SIZE"));
    assert_eq!(
        serving["max_recv_message_size_bytes"],
        value("FUNCTION_ARTIFACTORY_MAX_RECV_MESSAGE_SIZE") << 20
    );
}

/// The activation policy the README offers for Crossplane v2 without its default policy names
/// exactly the CRDs of the kinds the cluster example renders: one missing and that kind is never
/// served, so the claim never becomes ready.
#[test]
fn the_activation_policy_activates_the_kinds_of_the_cluster_example() {
    let Some(crds) = support::crd::provider_crd_documents("cluster") else {
        return;
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/cluster");
    let args = read_args(&root, "render.args");
    let composite = documents(&args.composite).remove(0);
    let composition = documents(&args.composition).remove(0);
    let input = composition["spec"]["pipeline"][0]["input"].clone();
    let response = request(composite).input(input).run();
    // Every entry's kind, from the status: a new virtual is not rendered on the first call (it
    // waits for its members), but its kind must be served all the same.
    let mut rendered: Vec<String> = status_repositories(&response)
        .iter()
        .map(|object| {
            let group = object["apiVersion"]
                .as_str()
                .unwrap()
                .split('/')
                .next()
                .unwrap();
            let kind = object["kind"].as_str().unwrap();
            let (_, crd) = crds
                .iter()
                .find(|(_, crd)| {
                    crd["spec"]["group"] == group && crd["spec"]["names"]["kind"] == kind
                })
                .unwrap_or_else(|| panic!("no CRD for {kind} in {group}"));
            crd["metadata"]["name"].as_str().unwrap().to_owned()
        })
        .collect();
    rendered.sort();
    rendered.dedup();
    let policy = example_file("cluster/activation-policy.yaml");
    assert_eq!(policy["kind"], "ManagedResourceActivationPolicy");
    let mut activated: Vec<String> = policy["spec"]["activate"]
        .as_array()
        .unwrap()
        .iter()
        .map(|name| name.as_str().unwrap().to_owned())
        .collect();
    activated.sort();
    assert_eq!(activated, rendered);
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
        assert!(status_repositories(&response).len() >= 4, "{file}");
    }
}
