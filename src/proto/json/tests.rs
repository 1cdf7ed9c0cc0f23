use super::*;
use serde_json::json;

#[test]
fn durations_use_0_3_6_or_9_digits() {
    let d = |seconds, nanos| prost_types::Duration { seconds, nanos };
    assert_eq!(duration_to_json(&d(60, 0)), "60s");
    assert_eq!(duration_to_json(&d(1, 500_000_000)), "1.500s");
    assert_eq!(duration_to_json(&d(0, 1_000)), "0.000001s");
    assert_eq!(duration_to_json(&d(0, -1)), "-0.000000001s");
    for text in ["60s", "1.500s", "0.000001s", "-0.000000001s", "-3.250s"] {
        assert_eq!(duration_to_json(&duration_from_json(text).unwrap()), text);
    }
    assert_eq!(duration_from_json("1.5s"), Some(d(1, 500_000_000)));
    for bad in ["", "s", "60", "1.s", ".5s", "1.0000000001s", "1e3s", "+1s"] {
        assert_eq!(duration_from_json(bad), None, "{bad}");
    }
}

#[test]
fn base64_round_trips_and_accepts_url_safe_unpadded() {
    for bytes in [&b""[..], b"f", b"fo", b"foo", b"foob", b"\xff\xfe\x00"] {
        assert_eq!(base64_decode(&base64_encode(bytes)).unwrap(), bytes);
    }
    assert_eq!(base64_encode(b"foob"), "Zm9vYg==");
    assert_eq!(base64_decode("_-8").unwrap(), vec![0xff, 0xef]);
    assert_eq!(base64_decode("Zm9vYg").unwrap(), b"foob");
    assert_eq!(
        base64_decode("Zm9vYh==").unwrap(),
        b"foob",
        "unused bits ignored"
    );
    assert!(base64_decode("Z").is_none());
    assert!(base64_decode("Zm9v!").is_none());
}

#[test]
fn a_request_round_trips_with_every_field_kind() {
    let value = json!({
        "meta": {"tag": "t", "capabilities": ["CAPABILITY_CAPABILITIES", "CAPABILITY_REQUIRED_RESOURCES"]},
        "observed": {
            "composite": {"resource": {"spec": {"n": 3, "f": 0.5}}, "connectionDetails": {"k": "dmFsdWU="}},
            "resources": {"a": {"resource": {"kind": "K"}, "ready": "READY_TRUE"}}
        },
        "desired": {},
        "input": {"ttl": "30s"},
        "context": {"x": [1, "y"]},
        "credentials": {"c": {"credentialData": {"data": {"password": "c2VjcmV0"}}}},
        "requiredResources": {"r": {"items": [{"resource": {"kind": "K"}}]}},
        "requiredSchemas": {"s": {"openapiV3": {"type": "object"}}}
    });
    let request = request_from_json(&value).unwrap();
    assert_eq!(request.meta.as_ref().unwrap().capabilities, vec![1, 2]);
    assert_eq!(request_to_json(&request), value);
}

#[test]
fn proto_names_numbers_and_nulls_are_accepted() {
    let request = request_from_json(&json!({
        "meta": {"tag": null, "capabilities": [2]},
        "observed": {"resources": {"a": {"ready": 1, "connection_details": {}}}},
        "extra_resources": null
    }))
    .unwrap();
    assert_eq!(request.meta.unwrap().capabilities, vec![2]);
    assert_eq!(request.observed.unwrap().resources["a"].ready, 1);
}

#[test]
fn struct_numbers_mean_what_the_wire_format_means() {
    let request = request_from_json(&json!({"input": {"a": 3.0, "b": 1.5}})).unwrap();
    assert_eq!(
        request.input.unwrap().into_value(),
        json!({"a": 3, "b": 1.5})
    );
}

#[test]
fn errors_name_the_field() {
    let error = request_from_json(&json!({"observed": {"resources": {"a": {"ready": "YES"}}}}))
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "observed.resources[\"a\"].ready: \"YES\" is not a value of this enum"
    );
    let error = request_from_json(&json!({"meta": {"tag": 7}})).unwrap_err();
    assert_eq!(
        error.to_string(),
        "meta.tag: expected a string, not a number"
    );
    let error = request_from_json(&json!([])).unwrap_err();
    assert_eq!(
        error.to_string(),
        "a RunFunctionRequest must be a JSON object, not a list"
    );
}

#[test]
fn a_response_round_trips() {
    let value = json!({
        "meta": {"tag": "t", "ttl": "60s"},
        "desired": {"composite": {"resource": {"status": {}}}, "resources": {"a": {"resource": {}, "ready": "READY_FALSE"}}},
        "results": [{"severity": "SEVERITY_FATAL", "message": "m", "reason": "InvalidKey", "target": "TARGET_COMPOSITE"}],
        "requirements": {"resources": {
            "n": {"apiVersion": "v", "kind": "K", "matchLabels": {"labels": {"a": "b"}}},
            "m": {"apiVersion": "v", "kind": "K", "matchName": "x", "namespace": ""}
        }},
        "conditions": [{"type": "RepositoriesReady", "status": "STATUS_CONDITION_FALSE", "reason": "Creating", "target": "TARGET_COMPOSITE_AND_CLAIM"}]
    });
    let response = response_from_json(&value).unwrap();
    assert_eq!(response_to_json(&response), value);
}
