//! A schema's CEL rules past the API server's limits, as the schema validator
//! (`validation::openapi`) reports them: one problem, in the API server's words, with the rule
//! shortened, and no further rule run once a limit is reached. That the limits hold (each
//! attack refused or stopped in bounded time and memory) is cel-rules' to test:
//! crates/cel-rules/tests/cel_limits.rs.

use function_artifactory::validation::CompiledSchema;
use serde_json::{json, Value};

/// A schema of an object with a string `s`, a list of strings `names`, and the rules given.
fn schema(rules: &[&str]) -> Value {
    let validations: Vec<Value> = rules.iter().map(|r| json!({"rule": r})).collect();
    json!({
        "type": "object",
        "properties": {
            "s": {"type": "string"},
            "names": {"type": "array", "items": {"type": "string"}},
        },
        "x-kubernetes-validations": validations,
    })
}

fn violations(rules: &[&str], object: Value) -> Vec<String> {
    CompiledSchema::new(schema(rules)).validate(&object)
}

#[test]
fn a_two_thousand_term_chain_is_refused_with_a_clear_message() {
    let chain = vec!["1"; 2000].join("+");
    let rule = format!("{chain} > 0");
    let found = violations(&[&rule], json!({}));
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].len() < 400, "the rule is shortened: {found:?}");
    assert!(
        found[0].contains("nests 2001 levels deep; at most 320 are evaluated"),
        "{found:?}"
    );
}

#[test]
fn nested_ranges_stop_at_the_call_limit() {
    // As written in the review: the outer range alone is over the limit, so nothing is built.
    let found = violations(
        &["lists.range(1000000).all(a, lists.range(1000000).all(b, true))"],
        json!({}),
    );
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].contains("operation cancelled: actual cost limit exceeded"),
        "{found:?}"
    );
    assert!(found[0].contains("no further validation rules will be run"));
}

#[test]
fn the_objects_budget_is_shared_by_its_rules_and_ends_them() {
    // About 545,000 units each: eighteen fit in the budget of 10,000,000, the nineteenth does
    // not, and the rest never run.
    let rule = "lists.range(300).all(a, lists.range(300).all(b, b >= 0))";
    let many: Vec<String> = (0..30).map(|i| format!("{rule} && {i} >= 0")).collect();
    let many: Vec<&str> = many.iter().map(String::as_str).collect();
    let found = violations(&many, json!({}));
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(
        found[0],
        "<root>: validation failed due to running out of cost budget, no further validation \
         rules will be run (the object's rules cost more than 10000000 units, the API server's \
         RuntimeCELCostBudget)"
    );
}
