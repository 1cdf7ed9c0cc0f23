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

/// A maven virtual's misspelled member was answered "use one of: images", a docker entry it
/// cannot aggregate. Only entries of the virtual's package type are suggested.
#[test]
fn a_misspelled_member_is_matched_only_with_entries_the_virtual_aggregates() {
    let alone = fatal_message(
        &request(composite(spec(json!([
            {"name": "images", "rclass": "local", "packageType": "docker"},
            {"name": "libs", "rclass": "virtual", "packageType": "maven", "repositories": ["libs-relase"]},
        ]))))
        .run(),
    )
    .expect("a fatal result");
    assert!(
        alone.contains("- spec.repositories[1].repositories[0]: repository \"libs\": member \"libs-relase\" names no repository entry of this composite; fix: name an entry of spec.repositories, or list a repository outside this composite by key in externalRepositories"),
        "{alone}"
    );
    // A docker entry spelled nearly as the member is not it either; the maven one is.
    let near = fatal_message(
        &request(composite(spec(json!([
            {"name": "libs-releases", "rclass": "local", "packageType": "docker"},
            {"name": "libs-release", "rclass": "local", "packageType": "maven"},
            {"name": "libs", "rclass": "virtual", "packageType": "maven", "repositories": ["libs-relase"]},
        ]))))
        .run(),
    )
    .expect("a fatal result");
    assert!(near.contains("(did you mean \"libs-release\"?)"), "{near}");
    let docker_only = fatal_message(
        &request(composite(spec(json!([
            {"name": "libs-release", "rclass": "local", "packageType": "docker"},
            {"name": "more", "rclass": "local", "packageType": "maven"},
            {"name": "libs", "rclass": "virtual", "packageType": "maven", "repositories": ["libs-relase"]},
        ]))))
        .run(),
    )
    .expect("a fatal result");
    assert!(docker_only.contains("(use one of: more)"), "{docker_only}");
}
