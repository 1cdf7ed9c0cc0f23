//! Property tests over generated composites, observed resources and inputs:
//! the function never panics; it returns either one fatal result with the
//! desired state untouched, or resources that all validate against their CRDs;
//! other steps' resources and the context always pass through; the same
//! request always gives the same bytes.

use crate::support;

use function_artifactory::proto::v1::{
    Capability, Resources, RunFunctionRequest, RunFunctionResponse, Severity,
};
use function_artifactory::run_function;
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use prost::Message;
use serde_json::{json, Value};
use support::requests::{composite, crds, live, namespaced_composite, request, resource};

const NAMES: [&str; 6] = ["r0", "r1", "r2", "r3", "r4", "r5"];

/// Mostly valid choices, with a few of each kind of mistake, so both outcomes are common.
fn weighted<T: Clone + std::fmt::Debug + 'static>(
    good: Vec<T>,
    bad: Vec<T>,
) -> impl Strategy<Value = T> {
    prop_oneof![30 => prop::sample::select(good), 1 => prop::sample::select(bad)]
}

fn sometimes<T: std::fmt::Debug>(
    strategy: impl Strategy<Value = T>,
) -> impl Strategy<Value = Option<T>> {
    prop::option::weighted(0.25, strategy)
}

fn rarely<T: std::fmt::Debug>(
    strategy: impl Strategy<Value = T>,
) -> impl Strategy<Value = Option<T>> {
    prop::option::weighted(0.07, strategy)
}

/// An entry, named after its position unless the name is one of the mistakes.
fn entry() -> impl Strategy<Value = (Option<&'static str>, Value)> {
    (
        prop_oneof![30 => Just(None), 1 => prop::sample::select(vec!["Bad_Name", "r0", ""]).prop_map(Some)],
        weighted(vec!["local", "local", "remote", "virtual", "federated"], vec!["locl"]),
        weighted(vec!["maven", "npm", "generic", "docker", "oci", "helmoci"], vec!["vcs", "mavn"]),
        rarely(prop_oneof![6 => "[a-z][a-z0-9-]{0,20}", 1 => "[a-zA-Z0-9_./ -]{0,70}", 1 => Just("libs-cache".to_owned()), 1 => Just("nginx".to_owned())]),
        prop::bool::weighted(0.9),
        rarely(prop::collection::vec(prop::sample::select(NAMES.to_vec()), 0..3)),
        rarely(prop::sample::select(NAMES.to_vec())),
        prop::bool::weighted(0.2),
        sometimes(weighted(vec![json!(["*"]), json!(["Observe"]), json!(["Observe", "Delete"])], vec![json!([])])),
        sometimes(prop_oneof![12 => Just(json!({"xrayIndex": true})), 1 => Just(json!({"xrayIndx": 1})), 1 => Just(json!({"key": "x"}))]),
    )
        .prop_map(|(name, rclass, package_type, key, with_url, members, default, import, policies, for_provider)| {
            let mut entry = json!({"rclass": rclass, "packageType": package_type, "import": import});
            let mut set = |field: &str, value: Option<Value>| {
                if let Some(value) = value {
                    entry[field] = value;
                }
            };
            set("key", key.map(Value::from));
            set("url", (rclass == "remote" && with_url).then(|| json!("https://upstream.example.com/r")));
            set("members", (rclass == "federated" && with_url).then(|| json!([{"url": "https://eu.example.com/artifactory/x", "enabled": true}])));
            // Class fields mostly where they belong, now and then where they do not.
            let on_virtual = rclass == "virtual" || import;
            set("repositories", members.filter(|_| on_virtual).map(|m| json!(m)));
            set("defaultDeploymentRepo", default.filter(|_| on_virtual).map(Value::from));
            set("managementPolicies", policies);
            set("forProvider", for_provider);
            (name, entry)
        })
}

fn spec() -> impl Strategy<Value = Value> {
    (
        prop::collection::vec(entry(), 0..6),
        sometimes(weighted(vec!["team1"], vec!["X"])),
        prop::bool::weighted(0.1),
    )
        .prop_map(|(entries, project_key, with_garbage)| {
            let entries: Vec<Value> = entries
                .into_iter()
                .enumerate()
                .map(|(index, (name, mut entry))| {
                    entry["name"] =
                        json!(name.map_or_else(|| NAMES[index].to_owned(), str::to_owned));
                    entry
                })
                .collect();
            let mut spec = json!({"repositories": entries});
            if let Some(project_key) = project_key {
                spec["projectKey"] = json!(project_key);
            }
            if with_garbage {
                spec["unexpected"] = json!({"deep": [1, 2, {"x": null}]});
            }
            spec
        })
}

fn input() -> impl Strategy<Value = Option<Value>> {
    prop::option::of(
        (
            prop::sample::select(vec!["auto", "flat", "cluster", "namespaced", "moon"]),
            prop::option::of(prop::sample::select(vec!["{name}", "{projectKey}-{name}", "{claimName}-{name}", "{nope}"])),
            prop::bool::ANY,
            prop::option::of(Just("https://artifactory.example.com")),
        )
            .prop_map(|(api, format, protection, url)| {
                let mut input = json!({"apiVersion": "artifactory.fn.crossplane.io/v1beta1", "kind": "Input",
                                       "providerApi": api, "deletionProtection": protection});
                if let Some(format) = format {
                    input["naming"] = json!({"format": format});
                }
                if let Some(url) = url {
                    input["artifactoryUrl"] = json!(url);
                }
                input
            }),
    )
}

/// A request with the generated parts, an earlier step's resource and a context.
fn build(
    spec: Value,
    namespaced: bool,
    input: Option<Value>,
    observed: Vec<(String, bool)>,
) -> RunFunctionRequest {
    let xr = if namespaced {
        namespaced_composite(spec)
    } else {
        composite(spec)
    };
    let mut builder = request(xr)
        .desired(
            "from-earlier-step",
            json!({"apiVersion": "v1", "kind": "ConfigMap", "data": {"k": "v"}}),
        )
        .context(json!({"apiextensions.crossplane.io/environment": {"a": 1}}));
    if let Some(input) = input {
        builder = builder.input(input);
    }
    let api_version = if namespaced {
        "local.artifactory.jfrog.m.crossplane.io/v1alpha1"
    } else {
        "local.artifactory.jfrog.crossplane.io/v1alpha1"
    };
    for (name, ready) in observed {
        builder = builder.observed(&name, live(api_version, "MavenRepository", &name, ready));
    }
    builder.build()
}

/// Timestamps as they come in annotations and conditions: valid RFC 3339 in several spellings,
/// edge dates, and strings that only look like one.
fn timestamp() -> impl Strategy<Value = Value> {
    prop_oneof![
        prop::sample::select(vec![
            "2026-11-01T10:00:00Z",
            "2026-11-01T10:00:00.123456789+02:00",
            "1970-01-01T00:00:00Z",
            "0000-01-01T00:00:00Z",
            "9999-12-31T23:59:59.999999999-23:59",
            "2026-13-45T99:99:99Z",
            "2026-02-30T10:00:00Z",
            "2026-11-01 10:00:00",
            "2026-11-01T10:00:00",
            "",
            "now",
        ])
        .prop_map(Value::from),
        "[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]{1,12})?(Z|[+-][0-9]{2}:[0-9]{2})".prop_map(Value::from),
        Just(json!(1_700_000_000)),
        Just(Value::Null),
    ]
}

/// An observed resource of any shape Crossplane could send: known and unknown kinds, random
/// annotations (external name, creation timestamps, paused), labels and conditions.
fn observed_resource() -> impl Strategy<Value = Value> {
    let annotation_value = prop_oneof![
        timestamp(),
        prop::sample::select(NAMES.to_vec()).prop_map(Value::from),
        "[a-zA-Z0-9:./+_-]{0,30}".prop_map(Value::from),
        Just(json!("true")),
        Just(json!({"not": "a string"})),
    ];
    let annotations = prop::collection::btree_map(
        prop::sample::select(vec![
            "crossplane.io/external-name",
            "crossplane.io/composition-resource-name",
            "crossplane.io/paused",
            "crossplane.io/external-create-pending",
            "crossplane.io/external-create-succeeded",
            "crossplane.io/external-create-failed",
            "example.org/other",
        ])
        .prop_map(String::from),
        annotation_value,
        0..6,
    );
    let condition = (
        prop::sample::select(vec!["Ready", "Synced", "LastAsyncOperation", ""]),
        prop::sample::select(vec!["True", "False", "Unknown", "yes"]),
        timestamp(),
    )
        .prop_map(|(kind, status, time)| {
            json!({"type": kind, "status": status, "reason": "Generated", "lastTransitionTime": time})
        });
    (
        prop::sample::select(vec![
            "local.artifactory.jfrog.crossplane.io/v1alpha1",
            "local.artifactory.jfrog.m.crossplane.io/v1alpha1",
            "artifactory.jfrog.crossplane.io/v1alpha1",
            "remote.artifactory.jfrog.crossplane.io/v1alpha1",
            "v1",
            "",
        ]),
        prop::sample::select(vec![
            "MavenRepository",
            "GenericRepository",
            "LocalMavenRepository",
            "ConfigMap",
            "",
        ]),
        annotations,
        prop::option::of(prop::sample::select(NAMES.to_vec())),
        prop::collection::vec(condition, 0..3),
        prop::bool::weighted(0.2),
    )
        .prop_map(
            |(api_version, kind, annotations, key_label, conditions, deleting)| {
                let mut object = json!({
                    "apiVersion": api_version,
                    "kind": kind,
                    "metadata": {"name": "team1-repos-x7k2p-generated", "annotations": annotations},
                    "spec": {"forProvider": {}},
                    "status": {"conditions": conditions}
                });
                if let Some(key) = key_label {
                    object["metadata"]["labels"] = json!({"artifactory.fn.crossplane.io/key": key});
                }
                if deleting {
                    object["metadata"]["deletionTimestamp"] = json!("2026-11-01T10:00:00Z");
                }
                object
            },
        )
}

/// Required resources as Crossplane answers the function's requirements: under the names it
/// asks for (`artifactory-key-NAME`) or others, none to a few each.
fn required_resources() -> impl Strategy<Value = Vec<(String, Vec<Value>)>> {
    prop::collection::vec(
        (
            prop_oneof![
                4 => prop::sample::select(NAMES.to_vec()).prop_map(|n| format!("artifactory-key-{n}")),
                1 => "[a-z-]{0,20}",
            ],
            prop::collection::vec(observed_resource(), 0..3),
        ),
        0..4,
    )
}

/// The `name` of each entry of the request's composite spec.
fn spec_names(request: &RunFunctionRequest) -> Vec<String> {
    let composite = request.observed.as_ref().and_then(|o| o.composite.as_ref());
    let object = composite
        .and_then(|c| c.resource.clone())
        .map(|r| r.into_value())
        .unwrap_or_default();
    object["spec"]["repositories"]
        .as_array()
        .map(|entries| {
            entries
                .iter()
                .filter_map(|e| e["name"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

fn folder_of(api_version: &str) -> &'static str {
    if api_version.contains(".m.crossplane.io/") {
        "namespaced"
    } else if api_version.starts_with("artifactory.jfrog.crossplane.io/") {
        "flat"
    } else {
        "cluster"
    }
}

/// The guarantees of every call: tag and context kept, other steps' resources passed through,
/// and either one fatal result with the desired state untouched (true) or none (false).
fn fatal_untouched_or_rendered(
    request: &RunFunctionRequest,
    response: &RunFunctionResponse,
) -> Result<bool, TestCaseError> {
    prop_assert_eq!(response.meta.as_ref().unwrap().tag.as_str(), "test-tag");
    prop_assert_eq!(&response.context, &request.context);
    let desired = response.desired.as_ref().unwrap();
    prop_assert_eq!(
        &desired.resources["from-earlier-step"],
        &request.desired.as_ref().unwrap().resources["from-earlier-step"]
    );
    let fatal = response
        .results
        .iter()
        .filter(|r| r.severity == Severity::Fatal as i32)
        .count();
    if fatal > 0 {
        prop_assert_eq!(fatal, 1);
        prop_assert_eq!(&response.desired, &request.desired);
    }
    Ok(fatal > 0)
}

/// A rendered resource validates against its provider CRD (schema and CEL), where the CRDs are present.
fn valid_against_the_crds(name: &str, object: &Value) -> Result<(), TestCaseError> {
    let folder = folder_of(object["apiVersion"].as_str().unwrap_or_default());
    if let Some(crds) = crds(folder) {
        let violations = crds.validate(object);
        prop_assert!(
            violations.is_empty(),
            "{}: {:?}\n{}",
            name,
            violations,
            object
        );
    }
    Ok(())
}

/// The same request, after a wire round trip, gives the same bytes.
fn same_bytes_after_a_round_trip(
    request: &RunFunctionRequest,
    response: &RunFunctionResponse,
) -> Result<(), TestCaseError> {
    let again =
        run_function(&RunFunctionRequest::decode(request.encode_to_vec().as_slice()).unwrap());
    prop_assert_eq!(again.encode_to_vec(), response.encode_to_vec());
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 256,
        failure_persistence: support::seeds_beside_the_file(),
        .. ProptestConfig::default()
    })]

    #[test]
    fn fatal_untouched_or_all_valid(
        spec in spec(),
        namespaced in prop::bool::ANY,
        input in input(),
        observed in prop::collection::vec((prop::sample::select(NAMES.to_vec()).prop_map(String::from), prop::bool::ANY), 0..3),
    ) {
        let request = build(spec, namespaced, input, observed);
        let response = run_function(&request);
        let desired = response.desired.as_ref().unwrap();
        if !fatal_untouched_or_rendered(&request, &response)? {
            for (name, resource) in desired.resources.iter().filter(|(n, _)| n.as_str() != "from-earlier-step") {
                let object = resource.resource.clone().unwrap_or_default().into_value();
                valid_against_the_crds(name, &object)?;
            }
        }
        // Same request, same bytes, also after a wire round trip.
        same_bytes_after_a_round_trip(&request, &response)?;
    }

    /// Observed resources of any shape, with random annotations and timestamps, and random
    /// required resources: the same outcomes, never a panic.
    #[test]
    fn random_observed_and_required_resources_keep_the_guarantees(
        spec in spec(),
        namespaced in prop::bool::ANY,
        input in input(),
        observed in prop::collection::vec((prop_oneof![4 => prop::sample::select(NAMES.to_vec()).prop_map(String::from), 1 => "[a-z0-9-]{0,12}"], observed_resource()), 0..4),
        required in required_resources(),
        advertises_required in prop::bool::weighted(0.7),
    ) {
        let mut request = build(spec, namespaced, input, Vec::new());
        let state = request.observed.as_mut().unwrap();
        for (name, object) in observed {
            state.resources.insert(name, resource(object));
        }
        for (name, items) in required {
            request.required_resources.insert(name, Resources { items: items.into_iter().map(resource).collect() });
        }
        if advertises_required {
            request.meta.as_mut().unwrap().capabilities.push(Capability::RequiredResources as i32);
        }
        let response = run_function(&request);
        let desired = response.desired.as_ref().unwrap();
        if !fatal_untouched_or_rendered(&request, &response)? {
            let entries: Vec<String> = spec_names(&request);
            let observed = &request.observed.as_ref().unwrap().resources;
            for (name, resource) in desired.resources.iter().filter(|(n, _)| n.as_str() != "from-earlier-step") {
                let object = resource.resource.clone().unwrap_or_default().into_value();
                if !entries.contains(name) {
                    // Not in the spec any more: kept as observed (removal protection), never
                    // re-rendered; whatever kind it has is the cluster's.
                    let live = observed.get(name).and_then(|r| r.resource.clone()).map(|r| r.into_value());
                    prop_assert!(live.is_some(), "{} is neither in the spec nor observed", name);
                    let live = live.unwrap();
                    prop_assert_eq!(&object["apiVersion"], &live["apiVersion"]);
                    prop_assert_eq!(&object["kind"], &live["kind"]);
                    continue;
                }
                valid_against_the_crds(name, &object)?;
            }
        }
        same_bytes_after_a_round_trip(&request, &response)?;
    }

    #[test]
    fn arbitrary_json_never_panics(value in arbitrary_json(4)) {
        let response = request(composite(value.clone())).input(value.clone()).run();
        prop_assert!(response.meta.is_some());
        let response = request(json!({"metadata": value.clone(), "spec": {"repositories": [value]}})).run();
        prop_assert!(response.meta.is_some());
    }
}

fn arbitrary_json(depth: u32) -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        prop::bool::ANY.prop_map(Value::from),
        (-1e6f64..1e6).prop_map(|n| json!(n)),
        "[a-zA-Z{}_ -]{0,12}".prop_map(Value::from),
        prop::sample::select(vec![
            "name",
            "rclass",
            "local",
            "virtual",
            "maven",
            "repositories",
            "key"
        ])
        .prop_map(Value::from),
    ];
    leaf.prop_recursive(depth, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(
                prop::sample::select(vec![
                    "name",
                    "rclass",
                    "packageType",
                    "repositories",
                    "key",
                    "forProvider",
                    "members",
                    "x"
                ])
                .prop_map(String::from),
                inner,
                0..6
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// The generators reach both outcomes often: a property that only ever saw
/// fatal results would prove nothing about rendered resources.
#[test]
fn generated_requests_reach_both_outcomes() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::{Config, TestRng, TestRunner};
    let mut runner = TestRunner::new_with_rng(
        Config::default(),
        TestRng::deterministic_rng(Config::default().rng_algorithm),
    );
    let (mut rendered, mut fatal) = (0, 0);
    for _ in 0..300 {
        let spec = spec().new_tree(&mut runner).unwrap().current();
        let response = run_function(&build(spec, false, None, Vec::new()));
        if response
            .results
            .iter()
            .any(|r| r.severity == Severity::Fatal as i32)
        {
            fatal += 1;
            if std::env::var_os("SHOW_FATAL").is_some() {
                eprintln!("{}", response.results[0].message);
            }
        } else if response.desired.unwrap().resources.len() > 1 {
            rendered += 1;
        }
    }
    eprintln!("generated requests: {rendered} rendered, {fatal} fatal of 300");
    assert!(
        rendered >= 60 && fatal >= 60,
        "rendered {rendered}, fatal {fatal}"
    );
}
