//! YAML read and printed as Go's `sigs.k8s.io/yaml` reads and prints it, so as kubectl and
//! `crossplane render` do: byte for byte, errors worded as Go words them.
//!
//! # What it reads and writes
//!
//! - [`read_first`], [`read_all`] and [`read_stream`] read YAML text into
//!   [`serde_json::Value`]s as `sigs.k8s.io/yaml.Unmarshal` reads it into an unstructured
//!   object: go-yaml v2 (YAML 1.1: `yes` is `true`, `012` is octal, `1_000` a number, `<<` merge
//!   keys) into generic values, then apimachinery's JSON (map keys become strings, numbers
//!   int64 or float64). They differ in what they take as a document: the first one only, every
//!   one YAML delimits, or the parts kubectl splits a file of manifests into.
//! - [`to_yaml`] prints a JSON value as `crossplane render` prints an object: Go's JSON text of
//!   it read back by go-yaml v2 (which refuses some characters and turns some numbers into
//!   integers), then go-yaml's emitter (its key order, its quoting, lines wrapped at column 80).
//!
//! Every error is an [`Error`] whose text is Go's (`error converting YAML to JSON: yaml: line
//! 3: ...`, `yaml: control characters are not allowed`), but for the limits below, which Go does
//! not have, and the few cases where Go would print a Go value (an invalid map key).
//!
//! # How it matches Go
//!
//! go-yaml v2 is a Go port of libyaml. The reader takes libyaml's parse events (through
//! `unsafe-libyaml`, libyaml translated to Rust), so it accepts and refuses the texts go-yaml
//! does with the same problems; the rest (go-yaml's resolver, decoder, merge keys, alias rules,
//! key order, number formats and emitter) is written here after go-yaml v2.4.0 and
//! `sigs.k8s.io/yaml` 1.3.0. The crate's tests/go_yaml.rs compares both directions with Go
//! itself, byte for byte, on a corpus and thousands of generated documents, where Go and
//! Debian's golang-k8s-sigs-yaml-dev are installed (`REQUIRE_GO_YAML=1` makes their absence a
//! failure rather than a skip).
//!
//! What one document may cost is bounded where Go is not: collections nest at most 128 deep,
//! and aliases may copy at most 32 MiB of scalar text (go-yaml's own excessive-aliasing rule
//! applies too, so a billion-laughs document stops after about a thousand nodes).
//!
//! # Where the `unsafe` is
//!
//! Only in `src/events.rs`: libyaml's interface is its C one (a parser struct initialised in
//! place, raw pointers to its event strings), which the module wraps in a safe parser that
//! copies each event's strings out. The crate root denies `unsafe` code everywhere else.
#![deny(unsafe_code)]
#![warn(missing_docs, unreachable_pub)]

mod emit;
mod events;
mod go;
mod read;
mod resolve;
mod unicode;

use serde_json::Value;

/// Why a text could not be read or a value printed, worded as Go's `sigs.k8s.io/yaml` words it
/// (its [`Display`](std::fmt::Display) is the whole message, one line or several).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct Error {
    message: String,
}

impl Error {
    // The engine words its errors as strings all the way down, as Go's do; they become an
    // `Error` only at this crate's surface.
    fn new(message: String) -> Error {
        Error { message }
    }
}

/// The first document of a text as `sigs.k8s.io/yaml.Unmarshal` reads a file (`null` when it
/// has none). As go-yaml, it parses nothing after the first document.
pub fn read_first(text: &str) -> Result<Value, Error> {
    read::first_document(text).map_err(Error::new)
}

/// Every document of a text as YAML delimits them (an empty one is `null`).
pub fn read_all(text: &str) -> Result<Vec<Value>, Error> {
    read::all_documents(text).map_err(Error::new)
}

/// The documents of a file of manifests, split as `crossplane render` and kubectl split one
/// (apimachinery's `YAMLReader`: at lines that start with `---`), each read as [`read_first`].
/// When there are several, an error names the line its document starts on.
pub fn read_stream(text: &str) -> Result<Vec<Value>, Error> {
    read::stream_documents(text).map_err(Error::new)
}

/// One object printed as `crossplane render` prints it (without the `---` line), or go-yaml's
/// error where Go's JSON of the object does not read back (a control character go-yaml
/// refuses, a key that is no longer a simple key).
pub fn to_yaml(value: &Value) -> Result<String, Error> {
    let reread = go::reread(value).map_err(Error::new)?;
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
