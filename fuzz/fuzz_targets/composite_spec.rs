//! Arbitrary JSON as a composite's `spec`, as the function input, and as one repository entry:
//! whatever the claim or the Composition says, the function answers (a fatal result or
//! resources), never panics, and answers the same bytes each time.
#![no_main]

use function_artifactory_fuzz::{check, composite, input, request, spec};
use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};

fuzz_target!(|data: &[u8]| {
    // serde_json's own recursion limit (128) bounds the depth, as for a request from the API
    // server; text that is not JSON is not an input this function can receive.
    let Ok(value) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    check(&request(composite(value.clone()), input()));
    check(&request(composite(spec()), value.clone()));
    if value.is_object() {
        let mut with_entry = spec();
        with_entry["repositories"]
            .as_array_mut()
            .expect("the spec's list")
            .push(value);
        check(&request(composite(with_entry), input()));
    } else {
        check(&request(composite(json!({"repositories": value})), input()));
    }
});
