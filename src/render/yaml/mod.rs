//! YAML in and out as Go's `sigs.k8s.io/yaml` reads and writes it, so as kubectl and
//! `crossplane render` do.
//!
//! - [`read`]: a YAML stream into JSON values, with YAML 1.1 resolution (`yes`, `012`, `1_000`),
//!   merge keys and the JSON conversion of `sigs.k8s.io/yaml`, over libyaml's events
//!   ([`events`]); what one document may cost is bounded there.
//! - [`to_yaml`]: a JSON value printed as `crossplane render` prints an object: Go's JSON text
//!   of it read back by go-yaml ([`go`]), then go-yaml's emitter ([`emit`]).
//! - [`resolve`]: what a plain scalar means, for both directions.
//!
//! tests/go_yaml.rs compares both directions with Go itself, byte for byte, where Go and Debian's
//! golang-k8s-sigs-yaml-dev are installed.

mod emit;
mod events;
mod go;
mod read;
mod resolve;
mod unicode;

use serde_json::Value;

/// The first document of a file, as `sigs.k8s.io/yaml.Unmarshal` reads one (`null` for none).
pub(super) fn read_first(text: &str) -> Result<Value, String> {
    read::first_document(text)
}

/// Every document of a text as YAML delimits them (an empty one is `null`).
pub(super) fn read_all(text: &str) -> Result<Vec<Value>, String> {
    read::all_documents(text)
}

/// The documents of a file of manifests, split as `crossplane render` and kubectl split one.
pub(super) fn read_stream(text: &str) -> Result<Vec<Value>, String> {
    read::stream_documents(text)
}

/// One object printed as `crossplane render` prints it (without the `---` line), or go-yaml's
/// error where Go's JSON of the object does not read back (a control character go-yaml
/// refuses, a key that is no longer a simple key).
pub(crate) fn to_yaml(value: &Value) -> Result<String, String> {
    let reread = go::reread(value)?;
    Ok(emit::emit(&reread))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]

        /// Whatever the text (YAML's indicators, anchors, tags, breaks, NEL, DEL), reading it
        /// and printing what was read ends in a value or an error, never a panic.
        #[test]
        fn any_text_is_read_and_printed_without_panicking(
            text in "[-:{}\\[\\],&*!|>'\"%@`#?<~ \n\tyYnN0-9a._\\\\\u{85}\u{7f}\u{feff}]{0,48}"
        ) {
            if let Ok(documents) = read_all(&text) {
                for document in documents {
                    let _ = to_yaml(&document);
                }
            }
            let _ = read_stream(&text);
            let _ = read_first(&text);
        }
    }
}
