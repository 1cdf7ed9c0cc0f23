//! The words of issue 47 ("Why 4"), each pinned to the input that showed it: the article before
//! a kind whose first word is an acronym, the suggestion for a misspelled member of a virtual,
//! and the project key prefix the provider's CRDs require, said to the claim too.

mod support;

use serde_json::{json, Value};
use support::requests::{composite, fatal_message, live, request};

const LOCAL: &str = "local.artifactory.jfrog.crossplane.io/v1alpha1";

fn spec(entries: Value) -> Value {
    json!({ "repositories": entries })
}

/// "an NpmRepository": said "an en-pee-em repository", as "an npm repository" is.
#[test]
fn a_live_npm_repository_takes_an() {
    let entries = json!([{"name": "libs", "rclass": "local", "packageType": "maven"}]);
    let message = fatal_message(
        &request(composite(spec(entries)))
            .observed("libs", live(LOCAL, "NpmRepository", "libs", true))
            .run(),
    )
    .expect("a changed kind is fatal");
    assert!(
        message.contains(&format!(
            "the live repository is an NpmRepository ({LOCAL}) and the spec now renders a MavenRepository"
        )),
        "{message}"
    );
}
