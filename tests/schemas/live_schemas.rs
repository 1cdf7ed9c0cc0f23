//! Live schemas (Crossplane's required schemas): the function asks for the schema of every kind
//! it renders, fails on a kind the cluster does not serve, and checks what it renders against
//! the schema the cluster serves instead of its built-in catalog. The schemas answered here are
//! the provider's own CRDs of a given release, from `crds/`.
#![cfg(feature = "codegen")]

use crate::support;

use function_artifactory::codegen::crds;
use function_artifactory::proto::v1::{
    Capability, RunFunctionRequest, RunFunctionResponse, Schema,
};
use function_artifactory::proto::Struct;
use function_artifactory::run_function;
use serde_json::{json, Value};
use std::path::Path;
use support::requests::{composite, desired_resources, fatal_message, input, request};

const LOCAL: &str = "local.artifactory.jfrog.crossplane.io/v1alpha1";
const REMOTE: &str = "remote.artifactory.jfrog.crossplane.io/v1alpha1";
const FLAT: &str = "artifactory.jfrog.crossplane.io/v1alpha1";

/// The served version's `openAPIV3Schema` of one CRD file of one release.
fn crd_schema(release: &str, file: &str) -> Value {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let release = crds::release(root, release).unwrap();
    let (_, crd) = release
        .crds
        .iter()
        .find(|(name, _)| name == file)
        .unwrap_or_else(|| panic!("{file} not in the release"));
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"].clone()
}

fn remote_maven(release: &str) -> Value {
    crd_schema(
        release,
        "remote.artifactory.jfrog.crossplane.io_mavenrepositories.yaml",
    )
}

fn local_maven(release: &str) -> Value {
    crd_schema(
        release,
        "local.artifactory.jfrog.crossplane.io_mavenrepositories.yaml",
    )
}

/// A request that advertises required schemas, answered with `answers` (None: not served),
/// for the cluster API (`providerApi: auto` asks for the flat kinds too; see the last test).
fn with_schemas(spec: Value, answers: &[(&str, &str, Option<Value>)]) -> RunFunctionRequest {
    let mut built = request(composite(spec))
        .input(input(json!({"providerApi": "cluster"})))
        .build();
    built
        .meta
        .as_mut()
        .unwrap()
        .capabilities
        .push(Capability::RequiredSchemas as i32);
    for (api_version, kind, schema) in answers {
        built.required_schemas.insert(
            format!("schema/{api_version}/{kind}"),
            Schema {
                openapi_v3: schema.clone().map(Struct::from_value),
            },
        );
    }
    built
}

/// The desired state the requests of these tests come with.
fn answered_desired() -> Option<function_artifactory::proto::v1::State> {
    with_schemas(json!({}), &[]).desired
}

fn requirement_names(response: &RunFunctionResponse) -> Vec<String> {
    response
        .requirements
        .as_ref()
        .map(|r| r.schemas.keys().cloned().collect())
        .unwrap_or_default()
}

fn maven_pair() -> Value {
    json!({"repositories": [
        {"name": "libs", "rclass": "local", "packageType": "maven"},
        {"name": "central", "rclass": "remote", "packageType": "maven",
         "url": "https://repo1.maven.org/maven2"},
    ]})
}

#[test]
fn the_first_call_asks_for_every_rendered_kind_and_the_answer_keeps_the_requirements() {
    let first = run_function(&with_schemas(maven_pair(), &[]));
    let wanted = vec![
        format!("schema/{LOCAL}/MavenRepository"),
        format!("schema/{REMOTE}/MavenRepository"),
    ];
    assert_eq!(requirement_names(&first), wanted);
    let selectors = &first.requirements.as_ref().unwrap().schemas;
    assert_eq!(selectors[&wanted[1]].api_version, REMOTE);
    assert_eq!(selectors[&wanted[1]].kind, "MavenRepository");
    // The answers are not there yet, and Crossplane will call again with them: the first call
    // answers its requirements alone, the desired state as it came (docs/live-schemas.md).
    assert!(desired_resources(&first).is_empty());
    assert_eq!(first.desired, answered_desired());
    assert!(first.results.is_empty());

    let answered = with_schemas(
        maven_pair(),
        &[
            (LOCAL, "MavenRepository", Some(local_maven("v0.14.0"))),
            (REMOTE, "MavenRepository", Some(remote_maven("v0.14.0"))),
        ],
    );
    let second = run_function(&answered);
    assert_eq!(fatal_message(&second), None);
    assert_eq!(requirement_names(&second), wanted, "stable requirements");
    assert_eq!(desired_resources(&second).len(), 2);
    assert_eq!(run_function(&answered), second, "deterministic");
}

#[test]
fn without_the_capability_nothing_is_asked() {
    let response = request(composite(maven_pair())).run();
    assert!(requirement_names(&response).is_empty());
}

#[test]
fn a_kind_the_cluster_does_not_serve_is_one_fatal_problem_naming_its_entries() {
    let spec = json!({"repositories": [
        {"name": "a", "rclass": "local", "packageType": "maven"},
        {"name": "b", "rclass": "local", "packageType": "maven"},
        {"name": "central", "rclass": "remote", "packageType": "maven",
         "url": "https://repo1.maven.org/maven2"},
    ]});
    let answers = [
        (LOCAL, "MavenRepository", None),
        (REMOTE, "MavenRepository", Some(remote_maven("v0.14.0"))),
    ];
    let response = run_function(&with_schemas(spec, &answers));
    let message = fatal_message(&response).expect("fatal");
    assert!(message.contains("1 problem"), "{message}");
    assert!(
        message.contains(&format!(
            "the cluster does not serve MavenRepository ({LOCAL}), which repository \"a\", repository \"b\" need"
        )),
        "{message}"
    );
    assert!(
        message.contains("ManagedResourceActivationPolicy"),
        "{message}"
    );
    // As every fatal: the desired state is what came in, nothing of it dropped.
    assert_eq!(response.desired, answered_desired());
}

#[test]
fn a_field_the_installed_release_lacks_is_refused_at_its_claim_path() {
    // passThrough came to remote Maven in v0.12.0: the built-in (v0.14.0) schema accepts it.
    let spec = json!({"repositories": [
        {"name": "central", "rclass": "remote", "packageType": "maven",
         "url": "https://repo1.maven.org/maven2", "forProvider": {"passThrough": true}},
    ]});
    let builtin = request(composite(spec.clone())).run();
    assert_eq!(fatal_message(&builtin), None);
    assert_eq!(
        desired_resources(&builtin)["central"]["spec"]["forProvider"]["passThrough"],
        true
    );

    let answers = [(REMOTE, "MavenRepository", Some(remote_maven("v0.11.0")))];
    let response = run_function(&with_schemas(spec, &answers));
    let message = fatal_message(&response).expect("fatal");
    assert!(
        message.contains("spec.repositories[0].forProvider.passThrough: repository \"central\": the MavenRepository that the cluster serves refuses spec.forProvider.passThrough: unknown field"),
        "{message}"
    );
}

#[test]
fn a_field_only_the_live_schema_has_is_accepted() {
    let spec = json!({"repositories": [
        {"name": "libs", "rclass": "local", "packageType": "maven",
         "forProvider": {"futureSetting": "on"}},
    ]});
    let builtin = request(composite(spec.clone())).run();
    assert!(fatal_message(&builtin)
        .unwrap()
        .contains("has no forProvider field \"futureSetting\""));

    let mut newer = local_maven("v0.14.0");
    newer["properties"]["spec"]["properties"]["forProvider"]["properties"]["futureSetting"] =
        json!({"type": "string", "enum": ["on", "off"]});
    let answers = [(LOCAL, "MavenRepository", Some(newer.clone()))];
    let response = run_function(&with_schemas(spec, &answers));
    assert_eq!(fatal_message(&response), None);
    let resources = desired_resources(&response);
    assert_eq!(
        resources["libs"]["spec"]["forProvider"]["futureSetting"],
        "on"
    );

    // The live schema's types and enums apply to it.
    let wrong = json!({"repositories": [
        {"name": "libs", "rclass": "local", "packageType": "maven",
         "forProvider": {"futureSetting": "sometimes"}},
    ]});
    let answers = [(LOCAL, "MavenRepository", Some(newer))];
    let message = fatal_message(&run_function(&with_schemas(wrong, &answers))).unwrap();
    assert!(
        message.contains("spec.forProvider.futureSetting: unsupported value \"sometimes\""),
        "{message}"
    );
}

#[test]
fn the_cel_rules_of_the_live_schema_are_enforced() {
    // The provider's own rule: a remote needs url while it may be created or updated.
    let no_url = json!({"repositories": [
        {"name": "central", "rclass": "remote", "packageType": "maven"},
    ]});
    let answers = [(REMOTE, "MavenRepository", Some(remote_maven("v0.14.0")))];
    let message = fatal_message(&run_function(&with_schemas(no_url, &answers))).unwrap();
    assert!(
        message.contains("spec.forProvider.url is a required parameter"),
        "{message}"
    );

    // A rule only the cluster's CRD has.
    let mut stricter = remote_maven("v0.14.0");
    stricter["properties"]["spec"]["x-kubernetes-validations"]
        .as_array_mut()
        .unwrap()
        .push(json!({"rule": "!has(self.forProvider.description) || self.forProvider.description.startsWith('team ')",
                     "message": "descriptions start with the team"}));
    let described = |text: &str| {
        json!({"repositories": [
            {"name": "central", "rclass": "remote", "packageType": "maven",
             "url": "https://repo1.maven.org/maven2", "description": text},
        ]})
    };
    let answers = [(REMOTE, "MavenRepository", Some(stricter))];
    let refused = run_function(&with_schemas(described("Maven Central"), &answers));
    assert!(fatal_message(&refused)
        .unwrap()
        .contains("descriptions start with the team"));
    let accepted = run_function(&with_schemas(described("team a: Maven Central"), &answers));
    assert_eq!(fatal_message(&accepted), None);
}

#[test]
fn auto_renders_flat_kinds_where_the_cluster_serves_only_those() {
    let spec = json!({"repositories": [
        {"name": "libs", "rclass": "local", "packageType": "maven"},
    ]});
    let auto = || {
        let mut built = with_schemas(spec.clone(), &[]);
        built.input = Some(Struct::from_value(input(json!({"providerApi": "auto"}))));
        built
    };
    let first = run_function(&auto());
    let both = vec![
        format!("schema/{FLAT}/LocalMavenRepository"),
        format!("schema/{LOCAL}/MavenRepository"),
    ];
    assert_eq!(requirement_names(&first), both);
    // Answered for neither kind: the requirements alone (see the first test).
    assert!(desired_resources(&first).is_empty());

    let mut answered = auto();
    let flat = crd_schema(
        "v0.6.0",
        "artifactory.jfrog.crossplane.io_localmavenrepositories.yaml",
    );
    for (api_version, kind, schema) in [
        (LOCAL, "MavenRepository", None),
        (FLAT, "LocalMavenRepository", Some(flat)),
    ] {
        answered.required_schemas.insert(
            format!("schema/{api_version}/{kind}"),
            Schema {
                openapi_v3: schema.map(Struct::from_value),
            },
        );
    }
    let second = run_function(&answered);
    assert_eq!(fatal_message(&second), None);
    assert_eq!(requirement_names(&second), both, "stable requirements");
    let libs = &desired_resources(&second)["libs"];
    assert_eq!(libs["apiVersion"], FLAT);
    assert_eq!(libs["kind"], "LocalMavenRepository");
}
