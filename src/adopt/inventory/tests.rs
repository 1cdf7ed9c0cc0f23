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
        inventory.unmapped.keys().collect::<Vec<_>>(),
        ["someFutureSetting"]
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
}
