//! Shared test vectors: requests as Crossplane sends them, one per case the
//! faces must agree on. `tests/function/vectors.rs` writes them (with their expected
//! responses) to `tests/vectors/` and checks the native core against them;
//! `wasm/test/vectors.test.mjs` checks the WebAssembly module against the
//! same files.

use super::requests::{composite, input, live, namespaced_composite, request, resource};
use function_artifactory::proto::v1::{Capability, Resources, RunFunctionRequest};
use serde_json::{json, Value};

/// One vector: its file name stem, what it covers, and the reason of the
/// fatal result it must produce (`None`: the call succeeds).
pub struct Vector {
    pub name: &'static str,
    pub covers: &'static str,
    pub fatal_reason: Option<&'static str>,
    pub request: RunFunctionRequest,
}

const LOCAL_MAVEN: &str = "local.artifactory.jfrog.crossplane.io/v1alpha1";

fn local(name: &str, package_type: &str) -> Value {
    json!({"name": name, "rclass": "local", "packageType": package_type})
}

fn spec(entries: Value) -> Value {
    json!({"repositories": entries})
}

fn libs() -> Value {
    json!([local("libs", "maven")])
}

/// A Maven set with every repository class and the wiring between them.
fn maven_set() -> Value {
    json!([
        {"name": "libs-release", "rclass": "local", "packageType": "maven", "description": "Release builds",
         "forProvider": {"xrayIndex": true, "handleSnapshots": false}},
        {"name": "libs-snapshot", "rclass": "local", "packageType": "maven", "forProvider": {"handleReleases": false}},
        {"name": "maven-central", "rclass": "remote", "packageType": "maven", "url": "https://repo1.maven.org/maven2"},
        {"name": "libs", "rclass": "virtual", "packageType": "maven",
         "repositories": ["libs-release", "libs-snapshot", "maven-central"],
         "externalRepositories": ["shared-maven-remote"], "defaultDeploymentRepo": "libs-snapshot"},
        {"name": "libs-federated", "rclass": "federated", "packageType": "maven", "deletionPolicy": "Orphan"}
    ])
}

fn with_capability(mut request: RunFunctionRequest, capability: Capability) -> RunFunctionRequest {
    if let Some(meta) = request.meta.as_mut() {
        meta.capabilities.push(capability as i32);
    }
    request
}

fn with_status(mut xr: Value, status: Value) -> Value {
    xr["status"] = status;
    xr
}

/// A local Maven repository the function rendered under the create guard, with the provider's
/// conditions: `annotations` merged over the origin and the external name
/// (tests/function/adoption.rs cites where each comes from).
fn guarded(
    key: &str,
    origin: &str,
    policies: Value,
    annotations: Value,
    conditions: Value,
) -> Value {
    let mut metadata_annotations = json!({
        "artifactory.fn.crossplane.io/origin": origin,
        "crossplane.io/external-name": key,
    });
    for (name, value) in annotations.as_object().unwrap() {
        metadata_annotations[name] = value.clone();
    }
    json!({
        "apiVersion": LOCAL_MAVEN, "kind": "MavenRepository",
        "metadata": {"name": format!("team1-repos-{key}"), "annotations": metadata_annotations,
                     "labels": {"artifactory.fn.crossplane.io/key": key}},
        "spec": {"forProvider": {}, "managementPolicies": policies},
        "status": {"conditions": conditions, "atProvider": {"description": "made by hand", "xrayIndex": true}}
    })
}

fn condition(type_: &str, status: &str, reason: &str) -> Value {
    json!({"type": type_, "status": status, "reason": reason, "lastTransitionTime": "2026-11-01T10:00:00Z"})
}

/// The adoption phases (docs/lifecycle.md, "Phases"), so that every face answers them alike.
fn adoption_vectors() -> Vec<Vector> {
    let create_called = json!({
        "crossplane.io/external-create-pending": "2026-11-01T09:59:58Z",
        "crossplane.io/external-create-succeeded": "2026-11-01T09:59:58Z",
    });
    let exists = [
        condition("Ready", "True", "Available"),
        condition("Synced", "True", "ReconcileSuccess"),
    ];
    let created = guarded(
        "libs",
        "creating",
        json!(["Observe", "Create"]),
        create_called,
        json!([
            exists[0],
            exists[1],
            condition("LastAsyncOperation", "True", "Success"),
            condition("AsyncOperation", "True", "Finished")
        ]),
    );
    let existed = guarded(
        "tools",
        "creating",
        json!(["Observe", "Create"]),
        json!({}),
        json!(exists),
    );
    let adopted = guarded(
        "legacy",
        "imported",
        json!(["Observe"]),
        json!({}),
        json!(exists),
    );
    let all = json!({"name": "all", "rclass": "virtual", "packageType": "maven", "repositories": ["libs", "new"]});
    vec![
        Vector {
            name: "adoption-phases",
            covers: "a confirmed create widened, a taken key held with its preview, a new virtual waiting",
            fatal_reason: None,
            request: request(composite(spec(json!([
                local("libs", "maven"),
                local("tools", "maven"),
                local("new", "maven"),
                all
            ]))))
            .observed("libs", created)
            .observed("tools", existed)
            .build(),
        },
        Vector {
            name: "adoption-takeover",
            covers: "an import taken over: the preview, the takeover and its consequences; what the claim leaves out kept at its live value",
            fatal_reason: None,
            // Taken over the call after one that showed it adopted, with its preview: the
            // claim's description changes, the live xrayIndex it leaves out stays.
            request: request(with_status(
                composite(spec(json!([
                    {"name": "legacy", "rclass": "local", "packageType": "maven", "import": true, "managementPolicies": ["*"], "description": "Legacy libraries"}
                ]))),
                json!({"repositories": [{"name": "legacy", "phase": "adopted", "takeoverChanges": 1}]}),
            ))
            .observed("legacy", adopted)
            .build(),
        },
    ]
}

/// Every vector, in a stable order.
pub fn vectors() -> Vec<Vector> {
    let retiring = live(LOCAL_MAVEN, "MavenRepository", "old-libs", true);
    let mut orphaned = retiring.clone();
    orphaned["spec"]["deletionPolicy"] = json!("Orphan");
    let retiring_status =
        json!({"retiring": [{"name": "old", "key": "old-libs", "deletion": "Orphan"}]});
    let mut leaking = live(LOCAL_MAVEN, "MavenRepository", "libs", false);
    leaking["metadata"]["annotations"]["crossplane.io/external-create-pending"] =
        json!("2026-11-01T10:05:00Z");
    leaking["metadata"]["annotations"]["crossplane.io/external-create-succeeded"] =
        json!("2026-11-01T10:00:00Z");
    let mut theirs = live(LOCAL_MAVEN, "MavenRepository", "libs", true);
    theirs["metadata"]["ownerReferences"] = json!([{
        "apiVersion": "platform.example.org/v1alpha1", "kind": "XRepositories", "name": "team2-repos-abcde",
        "uid": "99999999-0000-4000-8000-000000000000", "controller": true, "blockOwnerDeletion": true
    }]);
    let mut conflict = with_capability(
        request(composite(spec(libs()))).build(),
        Capability::RequiredResources,
    );
    conflict.required_resources.insert(
        "artifactory-key-libs".into(),
        Resources {
            items: vec![resource(theirs)],
        },
    );

    vec![
        Vector {
            name: "valid-flat",
            covers: "a valid composite, flat provider API (releases up to v0.6.0)",
            fatal_reason: None,
            // The flat API has no federated kinds.
            request: request(composite(spec(json!(maven_set().as_array().expect("a list")[..4]))))
                .input(input(json!({"providerApi": "flat", "artifactoryUrl": "https://artifactory.example.com"})))
                .build(),
        },
        Vector {
            name: "valid-cluster",
            covers: "a valid composite, cluster API: project key, defaults, docker, npm, key warnings",
            fatal_reason: None,
            request: request(composite(json!({
                "projectKey": "team1",
                "providerConfigRef": {"name": "default"},
                "managementPolicies": ["*"],
                "repositories": [
                    {"name": "images", "rclass": "local", "packageType": "docker", "paused": true},
                    {"name": "docker-hub", "rclass": "remote", "packageType": "docker", "url": "https://registry-1.docker.io"},
                    {"name": "all-images", "rclass": "virtual", "packageType": "docker",
                     "repositories": ["images", "docker-hub"], "defaultDeploymentRepo": "images"},
                    {"name": "npm", "rclass": "local", "packageType": "npm", "key": "1npm", "notes": "digits first"},
                    {"name": "npm-eu", "rclass": "federated", "packageType": "npm",
                     "members": [{"url": "https://eu.example.com/artifactory/team1-npm-eu", "enabled": true}]}
                ]
            })))
            .input(input(json!({
                "providerApi": "cluster",
                "artifactoryUrl": "https://artifactory.example.com",
                "defaults": {"deletionPolicy": "Orphan"},
                "ttl": "90s"
            })))
            .build(),
        },
        Vector {
            name: "valid-namespaced",
            covers: "a valid namespaced (Crossplane v2) composite, namespaced API chosen by auto",
            fatal_reason: None,
            request: request(namespaced_composite(json!({
                "providerConfigRef": {"kind": "ProviderConfig", "name": "default"},
                "repositories": maven_set().as_array().expect("a list")[..4].to_vec()
            })))
            .input(input(json!({"naming": {"format": "{namespace}-{name}"}})))
            .build(),
        },
        Vector {
            name: "pass-through",
            covers: "resources and context of earlier pipeline steps pass through untouched",
            fatal_reason: None,
            request: request(composite(spec(libs())))
                .desired("bucket", json!({"apiVersion": "s3.aws.upbound.io/v1beta1", "kind": "Bucket", "spec": {"forProvider": {"region": "eu-west-1"}}}))
                .context(json!({"apiextensions.crossplane.io/environment": {"region": "eu-west-1", "replicas": 3, "ratio": 0.5}}))
                .build(),
        },
        Vector {
            name: "empty-request",
            covers: "a request with no fields at all: a fatal result, not an error",
            fatal_reason: Some("InvalidComposite"),
            request: RunFunctionRequest::default(),
        },
        Vector {
            name: "invalid-input",
            covers: "invalid function input: unknown provider API, naming placeholder, TTL",
            fatal_reason: Some("InvalidInput"),
            request: request(composite(spec(libs())))
                .input(input(json!({"providerApi": "v2", "naming": {"format": "{team}-{name}"}, "ttl": "soon"})))
                .build(),
        },
        Vector {
            name: "invalid-composite",
            covers: "invalid composite: unknown fields, wrong types, duplicate names, missing fields",
            fatal_reason: Some("InvalidComposite"),
            request: request(composite(json!({
                "projectKeys": "team1",
                "repositories": [
                    {"name": "libs", "rclass": "locl", "packageType": "maven"},
                    {"name": "libs", "rclass": "local", "packageType": "maven", "descripton": "x"},
                    {"name": "Not_A_Label", "rclass": "local"},
                    {"name": "pypi", "rclass": "local", "packageType": "pypy", "import": "yes"}
                ]
            })))
            .build(),
        },
        Vector {
            name: "invalid-key",
            covers: "invalid keys: reserved, too long, characters, case for docker, -cache, duplicates",
            fatal_reason: Some("InvalidKey"),
            request: request(composite(spec(json!([
                {"name": "a", "rclass": "local", "packageType": "maven", "key": "Artifactory-Build-Info"},
                {"name": "b", "rclass": "local", "packageType": "maven", "key": "k".repeat(65)},
                {"name": "c", "rclass": "local", "packageType": "maven", "key": "a/b:c"},
                {"name": "d", "rclass": "local", "packageType": "docker", "key": "Team_Images"},
                {"name": "e", "rclass": "local", "packageType": "maven", "key": "libs-cache"},
                {"name": "f", "rclass": "local", "packageType": "maven", "key": "Libs"},
                {"name": "g", "rclass": "local", "packageType": "npm", "key": "libs"}
            ]))))
            .build(),
        },
        Vector {
            name: "invalid-wiring",
            covers: "invalid wiring: unknown member, other package type, self, default deployment, cycle",
            fatal_reason: Some("InvalidWiring"),
            request: request(composite(spec(json!([
                local("libs-release", "maven"),
                local("npm-local", "npm"),
                {"name": "remote", "rclass": "remote", "packageType": "maven", "url": "https://r.example.com"},
                {"name": "libs", "rclass": "virtual", "packageType": "maven",
                 "repositories": ["libs-relase", "npm-local", "libs", "remote"], "defaultDeploymentRepo": "remote"},
                {"name": "plain", "rclass": "local", "packageType": "maven", "url": "https://x.example.com"},
                {"name": "v1", "rclass": "virtual", "packageType": "npm", "repositories": ["v2"]},
                {"name": "v2", "rclass": "virtual", "packageType": "npm", "repositories": ["v1"]}
            ]))))
            .build(),
        },
        Vector {
            name: "invalid-provider-fields",
            covers: "invalid provider fields: unknown forProvider field, wrong type, missing url and members",
            fatal_reason: Some("InvalidProviderFields"),
            request: request(composite(spec(json!([
                {"name": "a", "rclass": "local", "packageType": "maven", "forProvider": {"xrayIndx": true}},
                {"name": "b", "rclass": "local", "packageType": "maven", "forProvider": {"xrayIndex": "yes"}},
                {"name": "r", "rclass": "remote", "packageType": "maven"},
                {"name": "f", "rclass": "federated", "packageType": "maven"}
            ]))))
            .build(),
        },
        Vector {
            name: "mixed-problems",
            covers: "problems of several classes in one fatal result",
            fatal_reason: Some("InvalidComposite"),
            request: request(composite(spec(json!([
                {"name": "a", "rclass": "local", "packageType": "maven", "key": "jfrog-logs"},
                {"name": "v", "rclass": "virtual", "packageType": "maven", "repositories": ["b"]}
            ]))))
            .build(),
        },
        Vector {
            name: "unsafe-change",
            covers: "a live key and a live kind may not change",
            fatal_reason: Some("UnsafeChange"),
            request: request(composite(spec(json!([
                local("libs", "maven"),
                local("tools", "gradle")
            ]))))
            .observed("libs", live(LOCAL_MAVEN, "MavenRepository", "libs-old", true))
            .observed("tools", live(LOCAL_MAVEN, "MavenRepository", "tools", true))
            .build(),
        },
        Vector {
            name: "key-conflict",
            covers: "a key already managed by another composite (required resources)",
            fatal_reason: Some("KeyConflict"),
            request: conflict,
        },
        Vector {
            name: "requirements",
            covers: "key requirements asked for when Crossplane advertises required resources",
            fatal_reason: None,
            request: with_capability(
                request(composite(spec(maven_set())))
                    .input(input(json!({"artifactoryUrl": "https://artifactory.example.com"})))
                    .build(),
                Capability::RequiredResources,
            ),
        },
        Vector {
            name: "observed-ready",
            covers: "observed resources: ready and not ready, synced, RepositoriesReady condition",
            fatal_reason: None,
            request: request(composite(spec(json!([
                local("libs", "maven"),
                local("tools", "gradle"),
                local("new", "npm")
            ]))))
            .observed("libs", live(LOCAL_MAVEN, "MavenRepository", "libs", true))
            .observed("tools", live(LOCAL_MAVEN, "GradleRepository", "tools", false))
            .build(),
        },
        Vector {
            name: "observed-import",
            covers: "import: true adopts an existing repository, observing first",
            fatal_reason: None,
            request: request(composite(spec(json!([
                {"name": "a", "rclass": "local", "packageType": "maven", "key": "legacy-libs", "import": true},
                {"name": "b", "rclass": "local", "packageType": "maven", "import": true, "managementPolicies": ["Observe", "Update"]}
            ]))))
            .observed("a", live(LOCAL_MAVEN, "MavenRepository", "legacy-libs", true))
            .build(),
        },
        Vector {
            name: "observed-removal-protected",
            covers: "a removed repository is kept with deletion turned to Orphan",
            fatal_reason: None,
            request: request(composite(spec(libs())))
                .observed("libs", live(LOCAL_MAVEN, "MavenRepository", "libs", true))
                .observed("old", retiring.clone())
                .build(),
        },
        Vector {
            name: "observed-removal-released",
            covers: "once the orphaning is applied, the removed repository is left out",
            fatal_reason: None,
            request: request(with_status(composite(spec(libs())), retiring_status))
                .observed("old", orphaned)
                .build(),
        },
        Vector {
            name: "observed-removal-unprotected",
            covers: "without deletion protection a removed repository goes at once",
            fatal_reason: None,
            request: request(composite(spec(libs())))
                .input(input(json!({"deletionProtection": false})))
                .observed("old", retiring)
                .build(),
        },
        Vector {
            name: "observed-leak",
            covers: "a suspected leaked creation is reported and identity kept",
            fatal_reason: None,
            request: request(composite(spec(libs())))
                .observed("libs", leaking)
                .build(),
        },
    ]
    .into_iter()
    .chain(adoption_vectors())
    .collect()
}

/// Bytes that are not a `RunFunctionRequest`: the server answers INTERNAL and the
/// WebAssembly module throws, both with the decoder's message.
pub fn undecodable() -> Vec<(&'static str, Vec<u8>)> {
    // A Struct nested deeper than the decoder's recursion limit, in `input`.
    let mut deep: Vec<u8> = Vec::new();
    for _ in 0..120 {
        // Value { struct_value (5): Struct { fields (1): Entry { key "k", value (2): deep } } }
        let mut entry = vec![0x0a, 0x01, b'k'];
        entry.push(0x12);
        push_varint(&mut entry, deep.len());
        entry.extend_from_slice(&deep);
        let mut structure = vec![0x0a];
        push_varint(&mut structure, entry.len());
        structure.extend_from_slice(&entry);
        deep = vec![0x2a];
        push_varint(&mut deep, structure.len());
        deep.extend_from_slice(&structure);
    }
    // input (4) = Struct { fields: Entry { key "k", value: deep } }
    let mut entry = vec![0x0a, 0x01, b'k', 0x12];
    push_varint(&mut entry, deep.len());
    entry.extend_from_slice(&deep);
    let mut input = vec![0x0a];
    push_varint(&mut input, entry.len());
    input.extend_from_slice(&entry);
    let mut too_deep = vec![0x22];
    push_varint(&mut too_deep, input.len());
    too_deep.extend_from_slice(&input);

    vec![
        ("truncated", vec![0x0a, 0x05, 0x0a, 0x01]),
        ("bad-wire-type", vec![0x0f]),
        ("invalid-utf8-tag", vec![0x0a, 0x03, 0x0a, 0x01, 0xff]),
        ("too-deep", too_deep),
    ]
}

fn push_varint(buf: &mut Vec<u8>, mut value: usize) {
    while value >= 0x80 {
        buf.push((value as u8) | 0x80);
        value >>= 7;
    }
    buf.push(value as u8);
}
