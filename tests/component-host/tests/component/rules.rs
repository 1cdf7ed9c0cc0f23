//! Live schemas' rules at the parser's nesting limit: the deepest a rule may nest parses within
//! the component's stack, and one level more is refused in words; neither traps, and both
//! answer as the native core does.

use crate::limits::claim;
use component_host::Host;
use function_artifactory::proto::v1::{
    Capability, RequestMeta, RunFunctionRequest, RunFunctionResponse,
};
use function_artifactory::proto::{Schema, Struct};
use prost::Message;
use serde_json::json;

/// A one-repository claim whose every live schema carries `rule`.
fn with_rule(rule: &str) -> Vec<u8> {
    let mut request = RunFunctionRequest::decode(claim(1).as_slice()).unwrap();
    request.meta = Some(RequestMeta {
        capabilities: vec![
            Capability::Capabilities as i32,
            Capability::RequiredSchemas as i32,
        ],
        ..Default::default()
    });
    let first =
        function_artifactory::run_function_at(&request, function_artifactory::SettingsAt::Config);
    let asked = first.requirements.expect("requirements").schemas;
    assert!(!asked.is_empty(), "live schemas are asked for");
    let schema = json!({
        "type": "object",
        "x-kubernetes-preserve-unknown-fields": true,
        "x-kubernetes-validations": [{"rule": rule}],
    });
    request.required_schemas = asked
        .into_keys()
        .map(|name| {
            let schema = Schema {
                openapi_v3: Some(Struct::from_value(schema.clone())),
            };
            (name, schema)
        })
        .collect();
    request.encode_to_vec()
}

/// The fatal result of `rule`, from the component, which must not trap and must answer the
/// native core's bytes.
fn fatal(rule: &str) -> String {
    let request = with_rule(rule);
    let call = Host::shared().call(&request).expect("no trap");
    let answer = call.answer.expect("a response");
    let decoded = RunFunctionRequest::decode(request.as_slice()).unwrap();
    let native =
        function_artifactory::run_function_at(&decoded, function_artifactory::SettingsAt::Config);
    assert!(answer == native.encode_to_vec(), "the native core's bytes");
    let response = RunFunctionResponse::decode(answer.as_slice()).unwrap();
    response
        .results
        .into_iter()
        .find(|r| r.severity == 1)
        .map(|r| r.message)
        .unwrap_or_default()
}

#[test]
fn rules_nested_to_the_parsers_limit_do_not_trap() {
    let shapes = [
        ("(", "1", ")"),
        ("[", "1", "]"),
        ("{1: ", "1", "}"),
        ("x.map(y, ", "y", ")"),
    ];
    for (open, inner, close) in shapes {
        let nested =
            |depth: usize| format!("{}{inner}{} == 1", open.repeat(depth), close.repeat(depth));
        let deepest = fatal(&nested(95));
        assert!(!deepest.contains("nested more than"), "{deepest}");
        let deeper = fatal(&nested(96));
        assert!(
            deeper.contains("nested more than 96 expressions deep"),
            "{deeper}"
        );
    }
}
