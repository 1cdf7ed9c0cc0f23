use super::*;

fn options() -> Options {
    Options {
        api: ProviderApi::Cluster,
        release: None,
        naming_format: None,
        api_version: "platform.example.org/v1alpha1".into(),
        kind: "Repositories".into(),
        name: "repos".into(),
        namespace: Some("team1".into()),
        include: None,
        exclude: None,
        project: None,
        group_by_project: false,
        per_claim: REPOSITORIES_PER_CLAIM,
    }
}

fn entries(inventory: &Inventory) -> Vec<Value> {
    inventory
        .claims
        .iter()
        .flat_map(|c| c["spec"]["repositories"].as_array().unwrap().clone())
        .collect()
}

#[test]
fn the_name_is_what_the_format_turns_back_into_the_key() {
    let configs = [
        json!({"key": "team1-libs", "rclass": "local", "packageType": "maven"}),
        json!({"key": "other", "rclass": "local", "packageType": "maven"}),
    ];
    let options = Options {
        naming_format: Some("{claimNamespace}-{name}".into()),
        ..options()
    };
    let found = entries(&adopt(&configs, &options));
    assert_eq!(found[0]["name"], "other");
    assert_eq!(found[0]["key"], "other", "the format cannot give it back");
    assert_eq!(found[1]["name"], "libs");
    assert!(found[1].get("key").is_none());
}

#[test]
fn names_that_would_collide_or_are_no_dns_label_get_the_key_explicitly() {
    let configs = [
        json!({"key": "Libs.Old", "rclass": "local", "packageType": "maven"}),
        json!({"key": "libs-old", "rclass": "remote", "packageType": "maven", "url": "https://x"}),
        json!({"key": "x".repeat(64), "rclass": "local", "packageType": "generic"}),
    ];
    let found = entries(&adopt(&configs, &options()));
    let names: Vec<&str> = found.iter().map(|e| e["name"].as_str().unwrap()).collect();
    assert_eq!(names[0], "libs-old-2");
    assert_eq!(found[0]["key"], "Libs.Old");
    assert_eq!(names[1].len(), 63);
    assert_eq!(names[2], "libs-old");
    assert!(found
        .iter()
        .all(|e| is_dns_label(e["name"].as_str().unwrap())));
}

#[test]
fn claims_are_cut_by_count_and_by_bytes() {
    let configs: Vec<Value> = (0..5)
        .map(|i| json!({"key": format!("r{i}"), "rclass": "local", "packageType": "generic", "description": "d".repeat(100_000)}))
        .collect();
    let by_bytes = adopt(&configs, &options());
    assert_eq!(by_bytes.claims.len(), 3, "two 100 kB entries a claim");
    assert_eq!(by_bytes.claims[2]["metadata"]["name"], "repos-3");
    let small: Vec<Value> = (0..5)
        .map(|i| json!({"key": format!("r{i}"), "rclass": "local", "packageType": "generic"}))
        .collect();
    let by_count = adopt(
        &small,
        &Options {
            per_claim: 2,
            ..options()
        },
    );
    assert_eq!(by_count.claims.len(), 3);
    let one = adopt(&small, &options());
    assert_eq!(one.claims[0]["metadata"]["name"], "repos");
}

#[test]
fn what_has_no_kind_or_no_field_is_reported_not_guessed() {
    let configs = [
        json!({"key": "bundles", "rclass": "releaseBundles", "packageType": "releasebundles"}),
        json!({"key": "odd", "rclass": "local", "packageType": "nosuchtype"}),
        json!({"key": "libs", "rclass": "local", "packageType": "maven", "someFutureSetting": 3, "nullSetting": null}),
        json!({"rclass": "local", "packageType": "maven"}),
        json!({"key": "LIBS", "rclass": "local", "packageType": "maven"}),
    ];
    let inventory = adopt(&configs, &options());
    let skipped: Vec<&str> = inventory.skipped.iter().map(|s| s.key.as_str()).collect();
    assert_eq!(skipped, ["bundles", "odd", "(no key)", "LIBS"]);
    assert!(inventory.skipped[3]
        .reason
        .starts_with("listed a second time"));
    assert!(inventory.skipped[1]
        .reason
        .contains("no local kind for package type \"nosuchtype\""));
    assert_eq!(
        inventory.unmapped,
        BTreeMap::from([("someFutureSetting".to_owned(), (vec!["libs".to_owned()], 1))])
    );
    assert_eq!(entries(&inventory).len(), 1);
}

#[test]
fn defaults_are_left_out_and_other_values_kept() {
    let configs = [json!({
        "key": "libs", "rclass": "local", "packageType": "maven",
        "description": "", "includesPattern": "**/*", "xrayIndex": false,
        "excludesPattern": "secret/**", "blackedOut": true, "handleSnapshots": false
    })];
    let found = entries(&adopt(&configs, &options()));
    assert!(found[0].get("description").is_none());
    assert_eq!(
        found[0]["forProvider"],
        json!({"excludesPattern": "secret/**", "blackedOut": true, "handleSnapshots": false})
    );
}

fn read_configurations(text: &str) -> Result<Vec<Value>, String> {
    let mut all = Vec::new();
    super::read_configurations(text, &mut |config| all.push(Value::Object(config)))?;
    Ok(all)
}

#[test]
fn configurations_read_both_answers_and_refuse_others() {
    let by_class = read_configurations(r#"{"LOCAL": [{"key": "a"}], "VIRTUAL": []}"#).unwrap();
    assert_eq!(by_class, [json!({"key": "a", "rclass": "local"})]);
    let listed = read_configurations(r#"[{"key": "a", "rclass": "remote"}]"#).unwrap();
    assert_eq!(listed[0]["rclass"], "remote");
    assert!(read_configurations("3")
        .unwrap_err()
        .contains("is a number"));
    assert!(read_configurations(r#"{"errors": [{"status": 401}]}"#)
        .unwrap_err()
        .contains("\"errors\", which is not a class"));
    assert!(read_configurations(r#"{"LOCAL": [1]}"#)
        .unwrap_err()
        .contains("a number at LOCAL[0]"));
    // The answer of GET /api/repositories/<key>: one configuration.
    let one = read_configurations(r#"{"key": "a", "rclass": "local", "LOCAL": 1}"#).unwrap();
    assert_eq!(one, [json!({"key": "a", "rclass": "local", "LOCAL": 1})]);
}

#[test]
fn the_default_project_is_no_project() {
    let configs = [
        json!({"key": "libs", "rclass": "local", "packageType": "maven", "projectKey": "default"}),
        json!({"key": "t1-libs", "rclass": "local", "packageType": "maven", "projectKey": "t1"}),
    ];
    let options = Options {
        group_by_project: true,
        ..options()
    };
    let inventory = adopt(&configs, &options);
    let names: Vec<&str> = inventory
        .claims
        .iter()
        .map(|c| c["metadata"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["repos", "repos-t1"]);
    assert!(inventory.claims[0]["spec"].get("projectKey").is_none());
    let libs = &inventory.claims[0]["spec"]["repositories"][0];
    assert!(libs.get("forProvider").is_none(), "{libs}");
    let selected = adopt(
        &configs,
        &Options {
            project: Some("default".into()),
            ..self::options()
        },
    );
    assert_eq!(selected.not_selected, 2);
}

#[test]
fn a_summary_list_stays_short_whatever_the_answer() {
    let configs: Vec<Value> = (0..1000)
        .map(|i| json!({"rclass": "local", "packageType": "maven", format!("f{i}"): 1}))
        .chain((0..1000).map(|i| {
            json!({"key": format!("k{i}"), "rclass": "local", "packageType": "maven", format!("f{i}"): 1})
        }))
        .collect();
    let inventory = adopt(&configs, &options());
    assert_eq!(inventory.read, 2000);
    assert_eq!(inventory.skipped.len(), SHOWN);
    assert_eq!(inventory.skipped_more, 1000 - SHOWN);
    assert_eq!(inventory.unmapped.len(), SHOWN);
    assert_eq!(inventory.unmapped_more, 1000 - SHOWN);
    // Those with a key and without repoLayoutRef and includesPattern.
    assert_eq!(inventory.partial.1, 1000);
}

#[test]
fn a_live_value_of_another_shape_than_the_field_skips_the_repository() {
    let configs = [json!({
        "key": "libs", "rclass": "local", "packageType": "maven",
        "propertySets": [{"a": 0}, {"a": 0}]
    })];
    let inventory = adopt(&configs, &options());
    assert!(inventory.claims.is_empty() || entries(&inventory).is_empty());
    assert_eq!(inventory.skipped[0].key, "libs");
    assert!(
        inventory.skipped[0]
            .reason
            .contains("propertySets is a list"),
        "{}",
        inventory.skipped[0].reason
    );
}

#[test]
fn a_key_or_field_from_the_instance_cannot_write_a_line_of_the_summary() {
    assert_eq!(shown("libs-release"), "libs-release");
    assert_eq!(shown("a\nkubectl delete"), "\"a\\nkubectl delete\"");
    assert_eq!(shown("\u{1b}[2J"), "\"\\u{1b}[2J\"");
    assert_eq!(shown("x\u{202e}y"), "\"x\\u{202e}y\"");
    assert_eq!(shown(""), "\"\"");
}

#[test]
fn a_derived_name_gives_way_to_a_key_that_must_be_named_after_itself() {
    let configs = [
        json!({"key": "team1-docker-local", "rclass": "local", "packageType": "generic"}),
        json!({"key": "docker-local", "rclass": "local", "packageType": "generic"}),
    ];
    let options = Options {
        naming_format: Some("{claimNamespace}-{name}".into()),
        ..options()
    };
    let found = entries(&adopt(&configs, &options));
    let pairs: Vec<(&str, &str)> = found
        .iter()
        .map(|e| (e["name"].as_str().unwrap(), e["key"].as_str().unwrap()))
        .collect();
    assert_eq!(
        pairs,
        [
            ("docker-local", "docker-local"),
            ("team1-docker-local", "team1-docker-local")
        ]
    );
}

#[test]
fn the_namespace_placeholder_is_the_namespaced_composites_own() {
    let configs = [json!({"key": "team2-images", "rclass": "local", "packageType": "generic"})];
    for (api, format, explicit) in [
        (ProviderApi::Namespaced, "{namespace}-{name}", false),
        (ProviderApi::Cluster, "{namespace}-{name}", true),
        (ProviderApi::Cluster, "{claimNamespace}-{name}", false),
        (ProviderApi::Namespaced, "{claimNamespace}-{name}", true),
    ] {
        let options = Options {
            api,
            naming_format: Some(format.into()),
            namespace: Some("team2".into()),
            ..options()
        };
        let found = entries(&adopt(&configs, &options));
        assert_eq!(found[0].get("key").is_some(), explicit, "{api} {format}");
        if !explicit {
            assert_eq!(found[0]["name"], "images");
        }
    }
}

/// The fields of JFrog's "Repository Configuration JSON" (the REST API's documented answer)
/// that a local and a federated repository share.
const STORED: [&str; 33] = [
    "key",
    "projectKey",
    "environments",
    "rclass",
    "packageType",
    "description",
    "notes",
    "includesPattern",
    "excludesPattern",
    "repoLayoutRef",
    "debianTrivialLayout",
    "checksumPolicyType",
    "handleReleases",
    "handleSnapshots",
    "maxUniqueSnapshots",
    "maxUniqueTags",
    "snapshotVersionBehavior",
    "suppressPomConsistencyChecks",
    "blackedOut",
    "xrayIndex",
    "propertySets",
    "archiveBrowsingEnabled",
    "calculateYumMetadata",
    "yumRootDepth",
    "dockerApiVersion",
    "enableFileListsIndexing",
    "optionalIndexCompressionFormats",
    "downloadRedirect",
    "cdnRedirect",
    "blockPushingSchema1",
    "primaryKeyPairRef",
    "secondaryKeyPairRef",
    "priorityResolution",
];

/// Each class's documented fields, with those real answers add that the page does not list
/// (`dockerTagRetention`, `cargoAnonymousAccess`, `cargoInternalIndex`, `pyPIRepositorySuffix`,
/// `chartsBaseUrl`, `virtualRetrievalCachePeriodSecs`, `resolveDockerTagsByTimestamp`).
fn documented() -> [(Rclass, Vec<&'static str>); 4] {
    let with_stored = |extra: &[&'static str]| [&STORED[..], extra].concat();
    [
        (
            Rclass::Local,
            with_stored(&[
                "terraformType",
                "forceNugetAuthentication",
                "forceP2Authentication",
                "forceConanAuthentication",
                "encryptStates",
                "dockerTagRetention",
                "cargoAnonymousAccess",
                "cargoInternalIndex",
            ]),
        ),
        (
            Rclass::Remote,
            vec![
                "key",
                "projectKey",
                "environments",
                "rclass",
                "packageType",
                "url",
                "username",
                "password",
                "proxy",
                "disableProxy",
                "description",
                "notes",
                "includesPattern",
                "excludesPattern",
                "repoLayoutRef",
                "remoteRepoLayoutRef",
                "remoteRepoChecksumPolicyType",
                "handleReleases",
                "handleSnapshots",
                "maxUniqueSnapshots",
                "suppressPomConsistencyChecks",
                "hardFail",
                "offline",
                "blackedOut",
                "storeArtifactsLocally",
                "socketTimeoutMillis",
                "localAddress",
                "retrievalCachePeriodSecs",
                "missedRetrievalCachePeriodSecs",
                "unusedArtifactsCleanupPeriodHours",
                "assumedOfflinePeriodSecs",
                "fetchJarsEagerly",
                "fetchSourcesEagerly",
                "shareConfiguration",
                "synchronizeProperties",
                "blockMismatchingMimeTypes",
                "xrayIndex",
                "propertySets",
                "allowAnyHostAuth",
                "enableCookieManagement",
                "enableTokenAuthentication",
                "forceNugetAuthentication",
                "forceP2Authentication",
                "forceConanAuthentication",
                "metadataRetrievalTimeoutSecs",
                "bowerRegistryUrl",
                "gitRegistryUrl",
                "composerRegistryUrl",
                "pyPIRegistryUrl",
                "vcsType",
                "vcsGitProvider",
                "vcsGitDownloadUrl",
                "bypassHeadRequests",
                "clientTlsCertificate",
                "externalDependenciesEnabled",
                "externalDependenciesPatterns",
                "downloadRedirect",
                "cdnRedirect",
                "feedContextPath",
                "downloadContextPath",
                "v3FeedUrl",
                "listRemoteFolderItems",
                "contentSynchronisation",
                "blockPushingSchema1",
                "priorityResolution",
                "disableUrlNormalization",
                "pyPIRepositorySuffix",
                "chartsBaseUrl",
                "dockerTagRetention",
            ],
        ),
        (
            Rclass::Virtual,
            vec![
                "key",
                "projectKey",
                "environments",
                "rclass",
                "packageType",
                "repositories",
                "description",
                "notes",
                "includesPattern",
                "excludesPattern",
                "repoLayoutRef",
                "debianTrivialLayout",
                "debianDefaultArchitectures",
                "artifactoryRequestsCanRetrieveRemoteArtifacts",
                "keyPair",
                "pomRepositoryReferencesCleanupPolicy",
                "defaultDeploymentRepo",
                "optionalIndexCompressionFormats",
                "forceMavenAuthentication",
                "externalDependenciesEnabled",
                "externalDependenciesPatterns",
                "externalDependenciesRemoteRepo",
                "primaryKeyPairRef",
                "secondaryKeyPairRef",
                "virtualRetrievalCachePeriodSecs",
                "resolveDockerTagsByTimestamp",
            ],
        ),
        (
            Rclass::Federated,
            with_stored(&["members", "proxy", "disableProxy"]),
        ),
    ]
}

/// Every documented field of every class is read into the entry (its own fields), or maps to
/// a `forProvider` field of some kind of the class in the CRDs (the catalog is made from
/// `crds/`), or is listed in `NOT_HELD` with the reason.
#[test]
fn every_documented_field_maps_to_a_field_of_the_kind_or_is_listed_as_not_held() {
    let mut missing = Vec::new();
    for (rclass, fields) in documented() {
        let kinds: Vec<&Kind> = catalog()
            .kinds(ProviderApi::Cluster)
            .filter(|k| k.rclass == rclass)
            .collect();
        for field in &fields {
            let held = kinds.iter().any(|kind| {
                let schema = catalog().node(catalog().for_provider(kind).unwrap());
                schema.properties.get(field_of(schema, field)).is_some()
            });
            let not_held = not_held(rclass, field).is_some();
            if CONSUMED.contains(field) || held {
                assert!(
                    !not_held,
                    "{rclass} {field} is held, yet listed in NOT_HELD"
                );
            } else if !not_held {
                missing.push(format!("{rclass} {field}"));
            }
        }
    }
    assert!(missing.is_empty(), "neither held nor listed: {missing:?}");
}
