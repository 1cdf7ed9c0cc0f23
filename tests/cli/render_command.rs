//! `function-artifactory render`: golden examples, and pipelines that mix
//! this function (in process) with functions served over gRPC by the test.
#![cfg(feature = "server")]

use crate::support;

use function_artifactory::proto::v1::{resource_selector, MatchLabels};
use function_artifactory::proto::v1::{
    Capability, Condition, Ready, RequestMeta, Requirements, Resource, ResourceSelector,
    Result as FnResult, RunFunctionRequest, RunFunctionResponse, Severity, State, Status,
};
use function_artifactory::proto::Struct;
use serde_json::{json, Value};
use std::path::Path;
use support::render::{
    args_files, check_golden, functions_yaml, respond_from, Api, Scenario, TestFunction,
};

// ---- golden examples ----

/// Every `examples/**/*.args` run matches its golden file. `BLESS=1`
/// rewrites the golden files instead.
#[test]
fn golden_examples() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let files = args_files(&root);
    assert!(
        !files.is_empty(),
        "no .args file under {}: the golden test would pass vacuously",
        root.display()
    );
    let bless = std::env::var("BLESS").is_ok_and(|v| v == "1");
    let failures: Vec<String> = files
        .iter()
        .filter_map(|file| check_golden(file, bless))
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

// ---- inputs shared by the scenarios ----

const XR: &str = "\
apiVersion: artifactory.example.org/v1alpha1
kind: XRepositorySet
metadata:
  name: team1-repos
spec:
  projectKey: team1
  repositories:
    - name: libs-release
      rclass: local
      packageType: maven
";

/// A Composition with the given steps (`step` -> `function`).
fn composition(steps: &[(&str, &str)]) -> String {
    let mut text = String::from(
        "\
apiVersion: apiextensions.crossplane.io/v1
kind: Composition
metadata:
  name: repository-sets
spec:
  compositeTypeRef:
    apiVersion: artifactory.example.org/v1alpha1
    kind: XRepositorySet
  mode: Pipeline
  pipeline:
",
    );
    for (step, function) in steps {
        text.push_str(&format!(
            "    - step: {step}\n      functionRef:\n        name: {function}\n"
        ));
        if *function == "function-artifactory" {
            text.push_str("      input:\n        apiVersion: artifactory.fn.crossplane.io/v1beta1\n        kind: Input\n");
        }
    }
    text
}

fn object(value: Value) -> Struct {
    Struct::from_value(value)
}

fn desired_resource(value: Value, ready: Ready) -> Resource {
    Resource {
        resource: Some(object(value)),
        ready: ready as i32,
        ..Default::default()
    }
}

/// `function-extra`: adds a bucket, a warning and a context field.
fn extra_function(request: RunFunctionRequest) -> RunFunctionResponse {
    let mut response = respond_from(&request);
    let desired = response.desired.get_or_insert_with(State::default);
    let bucket = json!({"apiVersion": "s3.aws.upbound.io/v1beta1", "kind": "Bucket", "spec": {"forProvider": {"region": "us-east-2"}}});
    desired
        .resources
        .insert("extra-bucket".into(), desired_resource(bucket, Ready::True));
    response.results.push(FnResult {
        severity: Severity::Warning as i32,
        message: "extra bucket added: check its region".into(),
        ..Default::default()
    });
    let context = response.context.get_or_insert_with(Struct::default);
    context
        .fields_mut()
        .insert("example.org/extra".into(), json!({"buckets": 1}));
    response
}

fn scenario_with_extra(name: &str, extra: &TestFunction, steps: &[(&str, &str)]) -> Scenario {
    let scenario = Scenario::new(name);
    scenario
        .file("xr.yaml", XR)
        .file("composition.yaml", &composition(steps))
        .file("functions.yaml", &functions_yaml(extra));
    scenario
}

// ---- two steps: this function in process, another over gRPC ----

#[test]
fn two_steps_run_in_order_and_both_contribute() {
    let extra = TestFunction::serve(extra_function);
    let scenario = scenario_with_extra(
        "two-steps",
        &extra,
        &[
            ("artifactory", "function-artifactory"),
            ("extra", "function-extra"),
        ],
    );
    let run = scenario.render(&["xr.yaml", "composition.yaml", "functions.yaml"]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);

    // The second step was called once over v1, with what the first returned.
    let requests = extra.requests();
    assert_eq!(requests.len(), 1);
    let received = &requests[0];
    let first_step = RunFunctionRequest {
        meta: Some(RequestMeta {
            tag: String::new(),
            capabilities: received.meta.clone().unwrap().capabilities,
        }),
        observed: received.observed.clone(),
        desired: Some(State::default()),
        input: Some(object(
            json!({"apiVersion": "artifactory.fn.crossplane.io/v1beta1", "kind": "Input"}),
        )),
        context: Some(Struct::default()),
        ..Default::default()
    };
    // render called the first step again with what it asked for (no managed resource holds
    // any key), and passed on that call's answer.
    let mut answered = first_step.clone();
    let asked = function_artifactory::run_function(&first_step)
        .requirements
        .unwrap_or_default();
    for name in asked.resources.into_keys() {
        answered.required_resources.insert(name, Default::default());
    }
    let first_desired = function_artifactory::run_function(&answered)
        .desired
        .unwrap_or_default();
    assert_eq!(received.desired.clone().unwrap_or_default(), first_desired);

    // Both steps' resources are printed, each with Crossplane's metadata.
    for name in first_desired
        .resources
        .keys()
        .chain(["extra-bucket".to_string()].iter())
    {
        assert!(
            run.stdout.contains(&format!(
                "crossplane.io/composition-resource-name: {name}\n"
            )),
            "{name} missing:\n{}",
            run.stdout
        );
    }
    assert!(
        run.stdout
            .contains("  forProvider:\n    region: us-east-2\n"),
        "{}",
        run.stdout
    );
    // Results and context only on request.
    assert!(!run.stdout.contains("kind: Result"));
    assert!(!run.stdout.contains("kind: Context"));
}

#[test]
fn requests_carry_the_observed_state_input_context_and_meta() {
    let extra = TestFunction::serve(extra_function);
    let scenario = scenario_with_extra("request-shape", &extra, &[("extra", "function-extra")]);
    scenario.file(
        "observed.yaml",
        "\
apiVersion: s3.aws.upbound.io/v1beta1
kind: Bucket
metadata:
  name: team1-repos-abcde
  annotations:
    crossplane.io/composition-resource-name: extra-bucket
",
    );
    let args = [
        "xr.yaml",
        "composition.yaml",
        "functions.yaml",
        "-o",
        "observed.yaml",
        "--context-values",
        "a=1;b={\"c\": [true]}",
    ];
    let run = scenario.render(&args);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let request = &extra.requests()[0];
    let observed = request.observed.clone().unwrap();
    let xr = observed.composite.unwrap().resource.unwrap().into_value();
    assert_eq!(xr["metadata"]["name"], "team1-repos");
    assert_eq!(xr["spec"]["repositories"][0]["name"], "libs-release");
    let bucket = observed.resources["extra-bucket"]
        .resource
        .clone()
        .unwrap()
        .into_value();
    assert_eq!(bucket["metadata"]["name"], "team1-repos-abcde");
    assert_eq!(request.desired, Some(State::default()));
    assert_eq!(
        request.context.clone().unwrap().into_value(),
        json!({"a": 1, "b": {"c": [true]}})
    );
    let meta = request.meta.clone().unwrap();
    assert_eq!(meta.tag.len(), 64, "a hex SHA-256 tag");
    assert_eq!(
        meta.capabilities,
        vec![1, 2, 3, 4],
        "CAPABILITIES, REQUIRED_RESOURCES, CREDENTIALS, CONDITIONS"
    );
    // The observed name is kept, so no generateName is added.
    assert!(
        run.stdout.contains("  name: team1-repos-abcde\n"),
        "{}",
        run.stdout
    );
}

#[test]
fn results_and_context_are_printed_on_request() {
    let extra = TestFunction::serve(extra_function);
    let scenario = scenario_with_extra(
        "results-context",
        &extra,
        &[
            ("artifactory", "function-artifactory"),
            ("extra", "function-extra"),
        ],
    );
    let run = scenario.render(&["xr.yaml", "composition.yaml", "functions.yaml", "-r", "-c"]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let result = "\
---
apiVersion: render.crossplane.io/v1beta1
kind: Result
message: 'extra bucket added: check its region'
severity: SEVERITY_WARNING
step: extra
";
    let context = "\
---
apiVersion: render.crossplane.io/v1beta1
fields:
  example.org/extra:
    buckets: 1
kind: Context
";
    assert!(
        run.stdout.ends_with(&format!("{result}{context}")),
        "{}",
        run.stdout
    );
}

// ---- failures ----

#[test]
fn a_fatal_result_prints_nothing_and_exits_1() {
    let fatal = TestFunction::serve(|request| {
        let mut response = respond_from(&request);
        response.results.push(FnResult {
            severity: Severity::Fatal as i32,
            message: "spec.repositories[0].key: invalid".into(),
            ..Default::default()
        });
        response
    });
    let scenario = scenario_with_extra(
        "fatal",
        &fatal,
        &[
            ("artifactory", "function-artifactory"),
            ("validate", "function-extra"),
        ],
    );
    let run = scenario.render(&["xr.yaml", "composition.yaml", "functions.yaml", "-r"]);
    assert_eq!(run.code, 1);
    assert_eq!(run.stdout, "");
    assert_eq!(
        run.stderr,
        "function-artifactory: error: cannot render composite resource: pipeline step \"validate\" returned a fatal result: spec.repositories[0].key: invalid\n"
    );
}

#[test]
fn other_functions_must_be_listed_and_served() {
    let scenario = Scenario::new("unknown-function");
    scenario.file("xr.yaml", XR).file(
        "composition.yaml",
        &composition(&[
            ("artifactory", "function-artifactory"),
            ("extra", "function-missing"),
        ]),
    );
    let run = scenario.render(&["xr.yaml", "composition.yaml"]);
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stderr,
        "function-artifactory: error: cannot render composite resource: cannot run pipeline step \"extra\": unknown Function \"function-missing\" - does it exist in your Functions file?\n"
    );

    scenario.file("functions.yaml", "apiVersion: pkg.crossplane.io/v1\nkind: Function\nmetadata:\n  name: function-missing\nspec:\n  package: xpkg.example.io/x:v1\n");
    let run = scenario.render(&["xr.yaml", "composition.yaml", "functions.yaml"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.starts_with("function-artifactory: error: cannot render composite resource: cannot start function runtimes: cannot start Function \"function-missing\": function-artifactory render does not use Docker"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_function_that_is_not_served_times_out() {
    let scenario = Scenario::new("timeout");
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let functions = format!(
        "apiVersion: pkg.crossplane.io/v1\nkind: Function\nmetadata:\n  name: function-extra\n  annotations:\n    render.crossplane.io/runtime: Development\n    render.crossplane.io/runtime-development-target: dns:///{closed}\nspec:\n  package: x\n"
    );
    scenario
        .file("xr.yaml", XR)
        .file(
            "composition.yaml",
            &composition(&[("extra", "function-extra")]),
        )
        .file("functions.yaml", &functions);
    // Given twice, --timeout keeps the last, as kong does in `crossplane render`.
    let run = scenario.render(&[
        "xr.yaml",
        "composition.yaml",
        "functions.yaml",
        "--timeout",
        "1h",
        "--timeout",
        "1s",
    ]);
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stderr,
        format!("function-artifactory: error: cannot render composite resource: cannot run pipeline step \"extra\": context deadline exceeded (--timeout 1s): is Function \"function-extra\" serving at \"dns:///{closed}\"?\n")
    );
}

#[test]
fn bad_inputs_are_reported_with_the_file() {
    let scenario = Scenario::new("bad-inputs");
    scenario.file("xr.yaml", XR).file(
        "composition.yaml",
        &composition(&[]).replace("mode: Pipeline", "mode: Resources"),
    );
    let run = scenario.render(&["xr.yaml", "composition.yaml"]);
    assert_eq!(
        (run.code, run.stderr.as_str()),
        (1, "function-artifactory: error: render only supports Composition Function pipelines: Composition \"repository-sets\" must use spec.mode: Pipeline\n")
    );
    let run = scenario.render(&["missing.yaml", "composition.yaml"]);
    assert_eq!(run.code, 1);
    assert!(run.stderr.starts_with("function-artifactory: error: cannot load composite resource from \"missing.yaml\": cannot read composite resource file: open missing.yaml: "), "{}", run.stderr);
    scenario.file(
        "other.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n",
    );
    let run = scenario.render(&["xr.yaml", "other.yaml"]);
    assert_eq!(run.stderr, "function-artifactory: error: cannot load Composition from \"other.yaml\": not a composition: ConfigMap/cm\n");
    scenario.file("pipeline.yaml", &composition(&[]));
    let run = scenario.render(&["xr.yaml", "pipeline.yaml", "other.yaml"]);
    assert_eq!(run.stderr, "function-artifactory: error: cannot load functions from \"other.yaml\": not a function: ConfigMap/cm\n");
    let run = scenario.render(&["other.yaml", "pipeline.yaml"]);
    assert_eq!(
        run.stderr,
        "function-artifactory: error: composition's compositeTypeRef.kind (XRepositorySet) does not match XR's kind (ConfigMap)\n"
    );
}

// ---- what Crossplane adds to the output ----

/// One external step returns four resources in a scrambled order with mixed
/// readiness, a desired status and conditions; an observed resource gives
/// one of them its name. The whole stream is checked byte for byte.
#[test]
fn ready_condition_sorting_and_metadata() {
    let function = TestFunction::serve(|request| {
        let mut response = respond_from(&request);
        let desired = response.desired.get_or_insert_with(State::default);
        let bucket = |extra: Value| {
            let mut value = json!({"apiVersion": "s3.aws.upbound.io/v1beta1", "kind": "Bucket"});
            value
                .as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            value
        };
        desired.resources.insert(
            "zeta".into(),
            desired_resource(
                bucket(json!({"spec": {"forProvider": {"region": "us-east-2"}}})),
                Ready::True,
            ),
        );
        desired.resources.insert(
            "beta2".into(),
            desired_resource(bucket(json!({})), Ready::Unspecified),
        );
        desired.resources.insert(
            "alpha".into(),
            desired_resource(
                bucket(json!({"metadata": {"name": "explicit-name"}})),
                Ready::False,
            ),
        );
        desired.resources.insert(
            "beta10".into(),
            desired_resource(bucket(json!({})), Ready::Unspecified),
        );
        desired.composite = Some(Resource {
            resource: Some(object(json!({"status": {"repositories": []}}))),
            ..Default::default()
        });
        response.conditions = vec![
            Condition {
                r#type: "RepositoriesReady".into(),
                status: Status::ConditionFalse as i32,
                reason: "Creating".into(),
                message: Some("2 of 4 repositories are ready".into()),
                target: None,
            },
            Condition {
                r#type: "Synced".into(),
                status: Status::ConditionFalse as i32,
                reason: "Ignored".into(),
                message: None,
                target: None,
            },
        ];
        response
    });
    let scenario = scenario_with_extra("metadata", &function, &[("extra", "function-extra")]);
    scenario.file(
        "observed.yaml",
        "\
apiVersion: s3.aws.upbound.io/v1beta1
kind: Bucket
metadata:
  name: team1-repos-zeta1
  generateName: team1-repos-
  annotations:
    crossplane.io/composition-resource-name: zeta
",
    );
    let run = scenario.render(&[
        "xr.yaml",
        "composition.yaml",
        "functions.yaml",
        "--observed-resources",
        "observed.yaml",
    ]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let owner = [
        "  ownerReferences:",
        "  - apiVersion: artifactory.example.org/v1alpha1",
        "    blockOwnerDeletion: true",
        "    controller: true",
        "    kind: XRepositorySet",
        "    name: team1-repos",
        "    uid: \"\"\n",
    ]
    .join("\n");
    // Metadata keys print in order: annotations, generateName, labels, name, ownerReferences.
    let composed = |name: &str, generate_name: bool, explicit_name: Option<&str>, rest: &str| {
        let generate_name = if generate_name {
            "  generateName: team1-repos-\n"
        } else {
            ""
        };
        let explicit_name = explicit_name
            .map(|n| format!("  name: {n}\n"))
            .unwrap_or_default();
        format!(
            "---\napiVersion: s3.aws.upbound.io/v1beta1\nkind: Bucket\nmetadata:\n  annotations:\n    \
             crossplane.io/composition-resource-name: {name}\n{generate_name}  labels:\n    \
             crossplane.io/composite: team1-repos\n{explicit_name}{owner}{rest}"
        )
    };
    let expected = [
        "\
---
apiVersion: artifactory.example.org/v1alpha1
kind: XRepositorySet
metadata:
  name: team1-repos
status:
  conditions:
  - lastTransitionTime: \"2024-01-01T00:00:00Z\"
    message: 'Unready resources: alpha, beta10, and beta2'
    reason: Creating
    status: \"False\"
    type: Ready
  - lastTransitionTime: \"2024-01-01T00:00:00Z\"
    message: 2 of 4 repositories are ready
    reason: Creating
    status: \"False\"
    type: RepositoriesReady
  repositories: []
"
        .to_string(),
        // A name the function set: kept, no generateName.
        composed("alpha", false, Some("explicit-name"), ""),
        // Sorted byte-wise: beta10 before beta2.
        composed("beta10", true, None, ""),
        composed("beta2", true, None, ""),
        // Name and generateName copied from the observed resource.
        composed(
            "zeta",
            true,
            Some("team1-repos-zeta1"),
            "spec:\n  forProvider:\n    region: us-east-2\n",
        ),
    ]
    .concat();
    assert_eq!(run.stdout, expected);
}

// ---- protocol details ----

#[test]
fn a_v1beta1_function_is_called_through_the_fallback() {
    let beta = TestFunction::serve_api(Api::V1beta1, extra_function);
    let scenario = scenario_with_extra("v1beta1", &beta, &[("extra", "function-extra")]);
    let run = scenario.render(&["xr.yaml", "composition.yaml", "functions.yaml"]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    assert_eq!(beta.requests().len(), 1);
    assert!(run
        .stdout
        .contains("crossplane.io/composition-resource-name: extra-bucket\n"));
}

/// A step that asks for resources is called again with them (from the
/// required-resources file and the observed resources) until it asks for
/// the same again.
#[test]
fn requirements_are_met_until_they_stabilise() {
    let function = TestFunction::serve(|request| {
        let mut response = respond_from(&request);
        let by_labels = ResourceSelector {
            api_version: "s3.aws.upbound.io/v1beta1".into(),
            kind: "Bucket".into(),
            r#match: Some(resource_selector::Match::MatchLabels(MatchLabels {
                labels: [("team".to_string(), "team1".to_string())].into(),
            })),
            ..Default::default()
        };
        let by_name = ResourceSelector {
            api_version: "v1".into(),
            kind: "ConfigMap".into(),
            r#match: Some(resource_selector::Match::MatchName("settings".into())),
            ..Default::default()
        };
        let mut requirements = Requirements::default();
        requirements.resources.insert("buckets".into(), by_labels);
        // Ask for the settings only once the buckets have arrived.
        if request.required_resources.contains_key("buckets") {
            requirements.resources.insert("settings".into(), by_name);
        }
        response.requirements = Some(requirements);
        response
    });
    let scenario = scenario_with_extra("requirements", &function, &[("extra", "function-extra")]);
    scenario.file(
        "observed.yaml",
        "apiVersion: s3.aws.upbound.io/v1beta1\nkind: Bucket\nmetadata:\n  name: observed-bucket\n  labels:\n    team: team1\n  annotations:\n    crossplane.io/composition-resource-name: b\n",
    );
    // Two files, both read: -e is repeatable.
    scenario.file(
        "required.yaml",
        "apiVersion: s3.aws.upbound.io/v1beta1\nkind: Bucket\nmetadata:\n  name: other-team\n  labels:\n    team: team2\n",
    );
    scenario.file(
        "settings.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n",
    );
    let run = scenario.render(&[
        "xr.yaml",
        "composition.yaml",
        "functions.yaml",
        "-o",
        "observed.yaml",
        "--required-resources",
        "required.yaml",
        "-e",
        "settings.yaml",
        "-d",
    ]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let requests = function.requests();
    assert_eq!(
        requests.len(),
        3,
        "first call, buckets, buckets and settings (stable)"
    );
    // -d counts what each call carries: the answers from -o and --required-resources included
    // (it said "0 required resources" once, counting before the step had asked).
    let debug: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.starts_with("render: step \"extra\""))
        .collect();
    assert_eq!(
        debug,
        [
            "render: step \"extra\" (function \"function-extra\"): 0 credentials, 0 required resources, 0 required schemas (call 1)",
            "render: step \"extra\" (function \"function-extra\"): 0 credentials, 1 required resources, 0 required schemas (call 2)",
            "render: step \"extra\" (function \"function-extra\"): 0 credentials, 2 required resources, 0 required schemas (call 3)",
        ],
        "{}",
        run.stderr
    );
    assert!(requests[0].required_resources.is_empty());
    let names = |request: &RunFunctionRequest, key: &str| -> Vec<String> {
        request.required_resources[key]
            .items
            .iter()
            .map(|r| {
                r.resource.clone().unwrap().into_value()["metadata"]["name"]
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect()
    };
    assert_eq!(names(&requests[1], "buckets"), vec!["observed-bucket"]);
    assert_eq!(names(&requests[2], "settings"), vec!["settings"]);
    assert_ne!(
        requests[1].meta.clone().unwrap().tag,
        requests[2].meta.clone().unwrap().tag
    );
}

#[test]
fn requirements_that_never_stabilise_are_an_error() {
    let function = TestFunction::serve(|request| {
        let mut response = respond_from(&request);
        let calls = request.required_resources.len();
        let selector = ResourceSelector {
            api_version: "v1".into(),
            kind: "ConfigMap".into(),
            r#match: Some(resource_selector::Match::MatchName(format!("cm-{calls}"))),
            ..Default::default()
        };
        let mut requirements = Requirements::default();
        // A new requirement name on every call.
        for i in 0..=calls {
            requirements
                .resources
                .insert(format!("r{i}"), selector.clone());
        }
        response.requirements = Some(requirements);
        response
    });
    let scenario = scenario_with_extra("unstable", &function, &[("extra", "function-extra")]);
    let run = scenario.render(&["xr.yaml", "composition.yaml", "functions.yaml"]);
    assert_eq!(run.code, 1);
    assert_eq!(function.requests().len(), 6);
    assert_eq!(
        run.stderr,
        "function-artifactory: error: cannot render composite resource: cannot run pipeline step \"extra\": requirements didn't stabilize after the maximum number of iterations (5)\n"
    );
}

// ---- claims (issue 24) ----

/// A claim with `--xrd` renders the XR `crossplane xr generate` makes of it and says so on stderr; the
/// same claim always gets the same XR name. (The output: examples/render-claim.)
#[test]
fn a_claim_renders_its_xr_and_names_it_on_stderr() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/render-claim");
    let args = [
        "claim.yaml",
        "composition.yaml",
        "functions.yaml",
        "--xrd",
        "../cluster/xrd.yaml",
    ];
    let run = support::render::render_in(&dir, &args);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let name = "team1-repos-znz6g";
    assert_eq!(
        run.stderr,
        format!(
            "function-artifactory: rendering XRepositories \"{name}\", the composite resource \
             crossplane xr generate makes of claim Repositories team1/team1-repos (crossplane xr \
             generate ends its name in five random characters)\n"
        )
    );
    let documents: Vec<Value> = serde_yaml_ng::Deserializer::from_str(&run.stdout)
        .map(|d| serde::Deserialize::deserialize(d).unwrap())
        .collect();
    assert_eq!(documents[0]["kind"], "XRepositories");
    assert_eq!(documents[0]["metadata"]["name"], name);
    // Composed resources carry the claim's labels and the XR as their controller.
    for composed in &documents[1..] {
        let labels = &composed["metadata"]["labels"];
        assert_eq!(labels["crossplane.io/claim-name"], "team1-repos");
        assert_eq!(labels["crossplane.io/claim-namespace"], "team1");
        assert_eq!(labels["crossplane.io/composite"], name);
        assert_eq!(composed["metadata"]["ownerReferences"][0]["name"], name);
    }
    let again = support::render::render_in(&dir, &args);
    assert_eq!(
        again.stdout, run.stdout,
        "the same claim renders the same bytes"
    );
}

/// A step's declared requirements (`requirements.requiredResources` and `requiredSchemas`) are
/// answered before its first call, the schemas from `--required-schemas`, and stay in the
/// request on every later call beside what the step asks for.
#[test]
fn declared_requirements_come_first_and_stay() {
    let function = TestFunction::serve(|request| {
        let mut response = respond_from(&request);
        let by_name = ResourceSelector {
            api_version: "v1".into(),
            kind: "ConfigMap".into(),
            r#match: Some(resource_selector::Match::MatchName("settings".into())),
            ..Default::default()
        };
        let mut requirements = Requirements::default();
        requirements.resources.insert("settings".into(), by_name);
        response.requirements = Some(requirements);
        response
    });
    let scenario = scenario_with_extra("declared", &function, &[("extra", "function-extra")]);
    let declared = "      requirements:\n        requiredResources:\n        - requirementName: bucket\n          apiVersion: s3.aws.upbound.io/v1beta1\n          kind: Bucket\n          name: shared\n        requiredSchemas:\n        - requirementName: thing\n          apiVersion: example.org/v1\n          kind: Thing\n        - requirementName: missing\n          apiVersion: example.org/v1\n          kind: Missing\n";
    scenario.file(
        "composition.yaml",
        &format!("{}{declared}", composition(&[("extra", "function-extra")])),
    );
    scenario.file(
        "required.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n---\napiVersion: s3.aws.upbound.io/v1beta1\nkind: Bucket\nmetadata:\n  name: shared\n",
    );
    scenario.file(
        "crds.yaml",
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: things.example.org\nspec:\n  group: example.org\n  names:\n    kind: Thing\n  versions:\n  - name: v1\n    served: true\n    schema:\n      openAPIV3Schema:\n        type: object\n",
    );
    let run = scenario.render(&[
        "xr.yaml",
        "composition.yaml",
        "functions.yaml",
        "--required-resources",
        "required.yaml",
        "--required-schemas",
        "crds.yaml",
    ]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    let requests = function.requests();
    assert_eq!(requests.len(), 2, "the first call, then the settings");
    for request in &requests {
        assert_eq!(request.required_resources["bucket"].items.len(), 1);
        let thing = request.required_schemas["thing"].openapi_v3.as_ref();
        assert_eq!(thing.unwrap().fields()["type"], "object");
        assert_eq!(request.required_schemas["missing"].openapi_v3, None);
        let capabilities = &request.meta.as_ref().unwrap().capabilities;
        assert!(capabilities.contains(&(Capability::RequiredSchemas as i32)));
    }
    assert!(!requests[0].required_resources.contains_key("settings"));
    assert_eq!(requests[1].required_resources["settings"].items.len(), 1);
}
