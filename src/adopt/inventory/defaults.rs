//! The Terraform provider's static defaults, by class of repository: a setting equal to its
//! default says nothing a reader of the claim needs, so `adopt` leaves it out.

use crate::core::catalog::Rclass;
use serde_json::{json, Value};

/// The fields each class of repository gets a default for when the claim leaves them out, with
/// that default, from the Terraform provider's schemas (jfrog/terraform-provider-artifactory):
/// `pkg/artifactory/resource/repository/repository.go` (`BaseAttributes`, every class) and
/// `local/local.go` (`LocalAttributes`, local and federated). `adopt` leaves a setting equal to
/// its default out of the entries it writes. The takeover preview needs no default: a
/// taken-over repository's omitted fields are rendered at their live values
/// (`core::lifecycle::takeover::Kept`).
fn defaults(rclass: Rclass) -> &'static [(&'static str, DefaultValue)] {
    use DefaultValue::{False, Text};
    const BASE: [(&str, DefaultValue); 5] = [
        ("description", Text("")),
        ("excludesPattern", Text("")),
        ("includesPattern", Text("**/*")),
        ("notes", Text("")),
        ("projectKey", Text("")),
    ];
    const LOCAL: [(&str, DefaultValue); 10] = [
        ("archiveBrowsingEnabled", False),
        ("blackedOut", False),
        ("description", Text("")),
        ("downloadDirect", False),
        ("excludesPattern", Text("")),
        ("includesPattern", Text("**/*")),
        ("notes", Text("")),
        ("priorityResolution", False),
        ("projectKey", Text("")),
        ("xrayIndex", False),
    ];
    match rclass {
        Rclass::Local | Rclass::Federated => &LOCAL,
        Rclass::Remote | Rclass::Virtual => &BASE,
    }
}

/// The Terraform provider's static default of `field` for `rclass`, where the table has one.
pub(super) fn default_of(rclass: Rclass, field: &str) -> Option<Value> {
    defaults(rclass)
        .iter()
        .find(|(name, _)| *name == field)
        .map(|(_, default)| default.to_value())
}

#[derive(Debug, Clone, Copy)]
enum DefaultValue {
    Text(&'static str),
    False,
}

impl DefaultValue {
    fn to_value(self) -> Value {
        match self {
            DefaultValue::Text(text) => json!(text),
            DefaultValue::False => json!(false),
        }
    }
}
