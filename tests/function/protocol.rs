//! Protocol rules (docs/design.md, "Protocol"): tag and TTL, pass-through of other steps'
//! resources and context, determinism, tolerance of odd requests.

use crate::support;

use function_artifactory::proto::v1::{
    RunFunctionRequest, RunFunctionResponse, Severity, Status, Target,
};
use function_artifactory::run_function;
use prost::Message;
use serde_json::{json, Value};
use support::requests::{
    composite, desired_composite, desired_resources, fatal_message, input, request, resource,
};

fn spec() -> serde_json::Value {
    json!({"repositories": [
        {"name": "b", "rclass": "local", "packageType": "npm"},
        {"name": "a", "rclass": "remote", "packageType": "npm", "url": "https://registry.npmjs.org"},
        {"name": "v", "rclass": "virtual", "packageType": "npm", "repositories": ["b", "a"]}
    ]})
}

#[test]
fn tag_is_copied_and_ttl_set() {
    let response = request(composite(spec()))
        .input(input(json!({"ttl": "2m30s"})))
        .run();
    let meta = response.meta.unwrap();
    assert_eq!(meta.tag, "test-tag");
    assert_eq!(meta.ttl.unwrap().seconds, 150);
    let default_ttl = request(composite(spec())).run().meta.unwrap().ttl.unwrap();
    assert_eq!((default_ttl.seconds, default_ttl.nanos), (60, 0));
}

#[test]
fn other_steps_resources_and_context_pass_through() {
    let other = json!({"apiVersion": "v1", "kind": "ConfigMap", "data": {"x": "1"}});
    let builder = request(composite(spec()))
        .desired("from-earlier-step", other.clone())
        .context(json!({"apiextensions.crossplane.io/environment": {"region": "eu"}}));
    let mut req = builder.clone().build();
    req.desired.as_mut().unwrap().composite = Some(resource(json!({"status": {"other": "kept"}})));
    let response = run_function(&req);
    let resources = desired_resources(&response);
    assert_eq!(resources["from-earlier-step"], other);
    // b and a, and the earlier step's: the new virtual v waits for its members
    // (docs/design.md, "Adoption").
    assert_eq!(resources.len(), 3);
    assert_eq!(response.context, req.context);
    let composite = desired_composite(&response);
    assert_eq!(composite["status"]["other"], "kept");
    assert_eq!(
        composite["status"]["repositories"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
}

/// The desired composite of earlier steps keeps everything but the status members this
/// function owns: a stale `retiring` goes, a status that is not an object is replaced.
#[test]
fn the_desired_composite_of_earlier_steps_is_merged_not_replaced() {
    let run = |earlier: serde_json::Value| {
        let mut req = request(composite(spec())).build();
        req.desired.as_mut().unwrap().composite = Some(resource(earlier));
        desired_composite(&run_function(&req))
    };
    let merged = run(json!({
        "apiVersion": "platform.example.org/v1alpha1",
        "metadata": {"labels": {"team": "a"}},
        "status": {"aaa": 1, "retiring": [{"name": "old"}], "zzz": {"x": [true]}}
    }));
    assert_eq!(merged["apiVersion"], "platform.example.org/v1alpha1");
    assert_eq!(merged["metadata"], json!({"labels": {"team": "a"}}));
    let status = merged["status"].as_object().unwrap();
    let names: Vec<&str> = status.keys().map(String::as_str).collect();
    assert_eq!(names, ["aaa", "repositories", "zzz"]);
    assert_eq!(status["zzz"], json!({"x": [true]}));
    assert_eq!(status["repositories"][2]["members"], json!(["b", "a"]));
    let replaced = run(json!({"status": "not an object"}));
    assert_eq!(
        replaced["status"]["repositories"].as_array().unwrap().len(),
        3
    );
    assert_eq!(replaced.as_object().unwrap().len(), 1);
}

#[test]
fn a_fatal_result_leaves_the_desired_state_untouched() {
    let other = json!({"apiVersion": "v1", "kind": "ConfigMap"});
    let req = request(composite(json!({"repositories": [{"name": "x"}]})))
        .desired("from-earlier-step", other)
        .context(json!({"k": "v"}))
        .build();
    let response = run_function(&req);
    assert!(fatal_message(&response).is_some());
    assert_eq!(response.desired, req.desired);
    assert_eq!(response.context, req.context);
}

#[test]
fn a_fatal_result_reaches_the_claim_where_conditions_are_honoured() {
    // 7 entries without a name: 7 problems, of which the claim sees the first 5 and a count.
    let entries: Vec<Value> = (0..7)
        .map(|_| json!({"rclass": "local", "packageType": "maven"}))
        .collect();
    let req = request(composite(json!({"repositories": entries}))).build();
    let response = run_function(&req);
    let fatal = fatal_message(&response).expect("fatal");
    assert_eq!(response.conditions.len(), 1);
    let condition = &response.conditions[0];
    assert_eq!(condition.r#type, "RepositoriesReady");
    assert_eq!(condition.status, Status::ConditionFalse as i32);
    assert_eq!(condition.reason, "InvalidComposite");
    assert_eq!(condition.target, Some(Target::CompositeAndClaim as i32));
    let message = condition.message.as_deref().unwrap();
    assert!(
        message.starts_with(
            "cannot render the Artifactory repositories: 7 problems\n- spec.repositories[0]"
        ),
        "{message}"
    );
    assert_eq!(
        message.matches("\n- spec.repositories").count(),
        5,
        "{message}"
    );
    assert!(
        message.ends_with("\n- and 2 more (every problem is in the composite's events)"),
        "{message}"
    );
    assert!(fatal.len() > message.len());
    // A Warning result for the claim's events, before the Fatal one (for the composite).
    let severities: Vec<(i32, Option<i32>)> = response
        .results
        .iter()
        .map(|r| (r.severity, r.target))
        .collect();
    assert_eq!(
        severities,
        [
            (
                Severity::Warning as i32,
                Some(Target::CompositeAndClaim as i32)
            ),
            (Severity::Fatal as i32, Some(Target::Composite as i32)),
        ]
    );
    assert_eq!(response.results[0].message, message);

    // Without CAPABILITY_CONDITIONS: the fatal result alone, as before.
    let mut without = req.clone();
    without.meta.as_mut().unwrap().capabilities.clear();
    let response = run_function(&without);
    assert!(response.conditions.is_empty());
    assert_eq!(response.results.len(), 1);
    assert_eq!(response.results[0].severity, Severity::Fatal as i32);
}

#[test]
fn a_step_that_renders_one_of_our_names_is_a_conflict() {
    let response = request(composite(spec()))
        .desired("a", json!({"apiVersion": "v1", "kind": "ConfigMap"}))
        .run();
    let message = fatal_message(&response).unwrap();
    assert!(
        message
            .contains("an earlier pipeline step already renders a composed resource named \"a\""),
        "{message}"
    );
}

#[test]
fn same_request_same_bytes() {
    let bytes = request(composite(spec())).build().encode_to_vec();
    let first =
        run_function(&RunFunctionRequest::decode(bytes.as_slice()).unwrap()).encode_to_vec();
    for _ in 0..5 {
        let again =
            run_function(&RunFunctionRequest::decode(bytes.as_slice()).unwrap()).encode_to_vec();
        assert_eq!(first, again);
    }
    // Re-encoding the decoded response gives the same bytes: maps are ordered.
    let decoded = RunFunctionResponse::decode(first.as_slice()).unwrap();
    assert_eq!(decoded.encode_to_vec(), first);
}

#[test]
fn odd_requests_get_a_fatal_result_not_a_panic() {
    let empty = run_function(&RunFunctionRequest::default());
    assert_eq!(empty.results[0].severity, Severity::Fatal as i32);
    assert!(empty.results[0].message.contains("no observed composite"));
    assert_eq!(empty.meta.unwrap().tag, "");

    let no_spec = request(json!({"apiVersion": "x/v1", "kind": "X"})).run();
    assert!(fatal_message(&no_spec)
        .unwrap()
        .contains("the composite has no spec"));

    let wrong_types = request(composite(json!({"repositories": "all"})))
        .input(json!({"kind": 3}))
        .run();
    let message = fatal_message(&wrong_types).unwrap();
    assert!(
        message.contains("spec.repositories: expected a list"),
        "{message}"
    );
    assert!(
        message.contains("input.kind: expected a string"),
        "{message}"
    );
}

#[test]
fn unknown_protobuf_fields_are_tolerated() {
    let mut bytes = request(composite(spec())).build().encode_to_vec();
    // Field 99, length-delimited, 3 bytes: a future protocol field.
    bytes.extend_from_slice(&[0x9a, 0x06, 0x03, b'a', b'b', b'c']);
    let response = run_function(&RunFunctionRequest::decode(bytes.as_slice()).unwrap());
    // The new virtual waits for its members (docs/design.md, "Adoption").
    assert_eq!(desired_resources(&response).len(), 2);
}

#[test]
fn empty_repositories_render_nothing_and_succeed() {
    let response = request(composite(json!({"repositories": []}))).run();
    assert!(desired_resources(&response).is_empty());
    assert_eq!(response.conditions[0].reason, "Available");
}
