//! `function-artifactory adopt` against instances as companies run them and as a hostile one
//! would answer (issue 59, docs/adopt.md): JFrog's own answers (`projectKey: "default"`,
//! partial answers to a non-admin), an internal CA, bounded work, no redirect followed, no
//! plain HTTP or password in a URL by surprise, output that an answer cannot forge, exact YAML,
//! and the smaller points; and a 300-repository answer that round-trips. Every server is a
//! loopback one (plain, or TLS with a CA made here).

use crate::adopt_command::{
    adopt, assert_no_token, claims, every_package_type, fixture, fixture_configurations, reply,
    round_trip, stderr, stdout, Artifactory, Reply, TOKEN,
};
use crate::support::server::{issuer, leaf};
use rcgen::ExtendedKeyUsagePurpose;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

fn configurations_answer(configurations: &[Value]) -> String {
    let mut classes = serde_json::Map::new();
    for config in configurations {
        let class = config["rclass"].as_str().unwrap().to_uppercase();
        classes
            .entry(class)
            .or_insert_with(|| json!([]))
            .as_array_mut()
            .unwrap()
            .push(config.clone());
    }
    Value::Object(classes).to_string()
}

fn serve_configurations(body: String) -> Artifactory {
    Artifactory::start(move |path| match path {
        "/artifactory/api/repositories/configurations" => reply(200, &body),
        _ => reply(500, "{}"),
    })
}

// 1. JFrog's answers as JFrog gives them.

#[test]
fn the_default_project_is_no_project() {
    let mut configurations = fixture_configurations();
    for config in &mut configurations {
        if config.get("projectKey").is_none() {
            config["projectKey"] = json!("default");
        }
    }
    let server = serve_configurations(configurations_answer(&configurations));
    let output = server.run(&[
        "--group-by",
        "project",
        "--name",
        "legacy",
        "--namespace",
        "team1",
    ]);
    let claims = claims(&output);
    let names: Vec<&str> = claims
        .iter()
        .map(|c| c["metadata"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["legacy", "legacy-team1"], "{}", stderr(&output));
    assert!(
        !stdout(&output).contains("projectKey: \"default\""),
        "{}",
        stdout(&output)
    );
    let adoptable: Vec<Value> = fixture_configurations()
        .into_iter()
        .filter(|c| c["rclass"] != "releaseBundles")
        .collect();
    assert_eq!(round_trip(&claims, &adoptable, None), adoptable.len());
}

/// A non-admin's configuration: what an admin's always has (repoLayoutRef, includesPattern)
/// missing, as assumed in docs/adopt.md.
fn partial(config: &Value) -> Value {
    let mut config = config.clone();
    let object = config.as_object_mut().unwrap();
    object.retain(|field, _| {
        matches!(
            field.as_str(),
            "key" | "rclass" | "packageType" | "description" | "url"
        )
    });
    config
}

#[test]
fn partial_answers_are_refused_on_both_paths_with_what_to_do() {
    let configurations: Vec<Value> = fixture_configurations().iter().map(partial).collect();
    let server = serve_configurations(configurations_answer(&configurations));
    let output = server.run(&[]);
    assert!(!output.status.success());
    let message = stderr(&output);
    assert!(
        message
            .contains("is a partial answer: 10 repositories lack repoLayoutRef or includesPattern"),
        "{message}"
    );
    assert!(
        message.contains("fix: use an admin's access token"),
        "{message}"
    );
    assert!(stdout(&output).is_empty());

    // The older path: the list, then each key's configuration, partial.
    let server = Artifactory::per_key(&configurations);
    let output = server.run(&[]);
    assert!(!output.status.success());
    let message = stderr(&output);
    assert!(message.contains("is a partial answer"), "{message}");
    assert!(message.contains("/api/repositories/<key>"), "{message}");
    assert_no_token(&output);

    // A saved partial answer too.
    let output = adopt(
        &["--from", "-"],
        &[],
        Some(&configurations_answer(&configurations)),
    );
    assert!(stderr(&output).contains("fix: save the answer again with an admin's token"));
}

// 2. Trust as users configure it.

#[test]
fn an_internal_ca_is_trusted_through_ca_file_or_ssl_cert_file_and_else_named() {
    let ca = issuer("adopt test CA");
    let tls = leaf(
        &ca,
        &["127.0.0.1", "localhost"],
        ExtendedKeyUsagePurpose::ServerAuth,
    );
    let dir = tempfile::tempdir().unwrap();
    let ca_file = dir.path().join("ca.pem");
    std::fs::write(&ca_file, ca.pem()).unwrap();
    let body = std::fs::read_to_string(fixture()).unwrap();
    let server = Artifactory::start_tls(&tls, move |_| reply(200, &body));
    assert!(server.url.starts_with("https://127.0.0.1:"));
    let expected = stdout(&adopt(&["--from", fixture().to_str().unwrap()], &[], None));

    let output = server.run(&["--ca-file", ca_file.to_str().unwrap()]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(stdout(&output), expected);

    let with_cert_file = |path: &str| {
        adopt(
            &[],
            &[
                ("JFROG_URL", &server.url),
                ("JFROG_ACCESS_TOKEN", TOKEN),
                ("SSL_CERT_FILE", path),
            ],
            None,
        )
    };
    let output = with_cert_file(ca_file.to_str().unwrap());
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(stdout(&output), expected);

    // Neither: the error says what to use, and that a saved answer works.
    let output = with_cert_file("/nonexistent/ca.pem");
    assert!(!output.status.success());
    let message = stderr(&output);
    for says in [
        "the server's certificate is not trusted",
        "--ca-file",
        "SSL_CERT_FILE",
        "--from answer.json",
    ] {
        assert!(message.contains(says), "no {says:?} in {message}");
    }
    assert_no_token(&output);
    // The requests that reached the server carried the token only over TLS.
    assert_eq!(server.paths().len(), 2, "{:?}", server.paths());
}

#[test]
fn https_to_a_plain_http_server_says_so() {
    let server = serve_configurations("{}".to_owned());
    let url = server.url.replace("http://", "https://");
    let output = adopt(
        &[],
        &[("JFROG_URL", &url), ("JFROG_ACCESS_TOKEN", TOKEN)],
        None,
    );
    assert!(!output.status.success());
    let message = stderr(&output);
    assert!(
        message.contains("the server did not answer TLS"),
        "{message}"
    );
}

// 3. Bounded work.

#[test]
fn a_hostile_answer_of_empty_configurations_gives_a_short_summary() {
    // 4 MiB of empty configurations.
    let count = (4 << 20) / 3;
    let mut body = String::with_capacity(4 << 20);
    body.push('[');
    for i in 0..count {
        if i > 0 {
            body.push(',');
        }
        body.push_str("{}");
    }
    body.push(']');
    let started = Instant::now();
    let output = adopt(&["--from", "-"], &[], Some(&body));
    assert!(started.elapsed() < Duration::from_secs(20));
    assert!(output.status.success(), "{}", stderr(&output));
    let summary = stderr(&output);
    assert!(summary.lines().count() < 40, "{summary}");
    assert!(summary.contains(&format!("skipped ({count})")), "{summary}");
    assert!(summary.contains(&format!("and {} more", count - 20)));
}

#[test]
fn the_per_key_path_has_a_total_time_and_size_budget() {
    let keys: Vec<Value> = (0..20).map(|i| json!({"key": format!("k{i}")})).collect();
    let list = serde_json::to_string(&keys).unwrap();
    let slow_list = list.clone();
    let server =
        Artifactory::start(
            move |path| match path.strip_prefix("/artifactory/api/repositories") {
                Some("/configurations") => reply(404, "{}"),
                Some("") => reply(200, &slow_list),
                _ => Reply {
                    delay: Duration::from_millis(400),
                    ..reply(
                        200,
                        "{\"key\": \"k\", \"rclass\": \"local\", \"packageType\": \"generic\"}",
                    )
                },
            },
        );
    let started = Instant::now();
    let output = server.run(&["--total-timeout", "1s"]);
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(!output.status.success());
    let message = stderr(&output);
    assert!(
        message.contains("took longer than --total-timeout 1s"),
        "{message}"
    );

    // Per-key answers of 300 KiB each: the 1 MiB answer limit holds for them together.
    let big = format!(
        "{{\"key\": \"k\", \"rclass\": \"local\", \"packageType\": \"generic\", \"includesPattern\": \"**/*\", \"repoLayoutRef\": \"simple-default\", \"notes\": \"{}\"}}",
        "x".repeat(300 << 10)
    );
    let server =
        Artifactory::start(
            move |path| match path.strip_prefix("/artifactory/api/repositories") {
                Some("/configurations") => reply(404, "{}"),
                Some("") => reply(200, &list),
                _ => reply(200, &big),
            },
        );
    let output = server.run(&["--max-answer-mib", "1"]);
    assert!(!output.status.success());
    let message = stderr(&output);
    assert!(
        message.contains("larger than the answer limit, 1 MiB"),
        "{message}"
    );
    assert!(server.paths().len() <= 6, "{:?}", server.paths());
}

// 4. No surprise from the network.

#[test]
fn a_redirect_is_not_followed_and_says_where_it_went() {
    let elsewhere = serve_configurations(std::fs::read_to_string(fixture()).unwrap());
    let target = format!("{}/api/repositories/configurations", elsewhere.url);
    let server = Artifactory::start(move |_| Reply {
        headers: vec![("Location".to_owned(), target.clone())],
        ..reply(302, "")
    });
    let output = server.run(&[]);
    assert!(!output.status.success());
    let message = stderr(&output);
    assert!(message.contains("answered 302"), "{message}");
    assert!(message.contains("adopt follows no redirect"), "{message}");
    assert!(message.contains(&elsewhere.url), "{message}");
    assert!(
        elsewhere.paths().is_empty(),
        "the other origin got a request"
    );
    assert!(stdout(&output).is_empty());
}

#[test]
fn plain_http_passwords_in_urls_and_tokens_as_paths_are_refused_unshown() {
    let server = serve_configurations(std::fs::read_to_string(fixture()).unwrap());
    let output = adopt(
        &[],
        &[("JFROG_URL", &server.url), ("JFROG_ACCESS_TOKEN", TOKEN)],
        None,
    );
    assert!(!output.status.success());
    let message = stderr(&output);
    assert!(message.contains("is plain HTTP"), "{message}");
    assert!(message.contains("--allow-http"), "{message}");
    assert!(server.paths().is_empty(), "nothing sent in clear");

    let with_password = server.url.replace("http://", "http://ops7:pa55word@");
    let output = adopt(
        &["--url", &with_password, "--allow-http"],
        &[("JFROG_ACCESS_TOKEN", TOKEN)],
        None,
    );
    assert!(!output.status.success());
    let message = stderr(&output);
    assert!(message.contains("http://***@127.0.0.1"), "{message}");
    assert!(!message.contains("pa55word") && !message.contains("ops7"));

    // A token given by mistake as the path of --token-file.
    let output = adopt(&["--url", &server.url, "--token-file", TOKEN], &[], None);
    assert!(!output.status.success());
    assert!(stderr(&output).contains("the value is not shown"));
    assert_no_token(&output);
}

// 5. Output that cannot be forged.

#[test]
fn keys_and_field_names_cannot_write_lines_or_escape_sequences() {
    let forged_key = "x\n  kubectl -n team1 delete namespace team1   # \u{1b}[2J";
    let configurations = json!([
        {"key": forged_key, "rclass": "remote", "packageType": "generic", "url": "https://u.example",
         "username": "ci", "includesPattern": "**/*", "repoLayoutRef": "simple-default"},
        {"key": "libs", "rclass": "local", "packageType": "generic", "includesPattern": "**/*",
         "repoLayoutRef": "simple-default", "weird\u{1b}]0;title\u{7}\nfield": 1},
        {"key": "bad\u{202e}key", "rclass": "nosuchclass", "packageType": "generic"}
    ]);
    let output = adopt(&["--from", "-"], &[], Some(&configurations.to_string()));
    assert!(output.status.success(), "{}", stderr(&output));
    let summary = stderr(&output);
    assert!(
        !summary.contains('\u{1b}') && !summary.contains('\u{202e}'),
        "{summary:?}"
    );
    assert!(
        !summary
            .lines()
            .any(|l| l.trim_start().starts_with("kubectl -n team1 delete")),
        "{summary}"
    );
    assert!(
        summary.contains(r#"# "x\n  kubectl -n team1 delete namespace team1   # \u{1b}[2J""#),
        "{summary}"
    );
    assert!(
        summary.contains(r#""weird\u{1b}]0;title\u{7}\nfield": libs"#),
        "{summary}"
    );
    assert!(
        summary.contains(r#""bad\u{202e}key": its class"#),
        "{summary}"
    );
    // The claims hold the key exactly.
    let claims = claims(&output);
    let keys: Vec<&str> = claims[0]["spec"]["repositories"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["key"].as_str())
        .collect();
    assert!(keys.contains(&forged_key), "{keys:?}");
}

/// Every string of `value`, with its path.
fn strings(value: &Value, path: String, out: &mut Vec<(String, String)>) {
    match value {
        Value::String(s) => out.push((path, s.clone())),
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                strings(item, format!("{path}[{i}]"), out);
            }
        }
        Value::Object(fields) => {
            for (name, item) in fields {
                out.push((format!("{path}.<key>"), name.clone()));
                strings(item, format!("{path}.{name}"), out);
            }
        }
        _ => {}
    }
}

/// A YAML 1.2 document (yaml-rust2) as JSON.
fn yaml12(node: &yaml_rust2::Yaml) -> Value {
    use yaml_rust2::Yaml;
    match node {
        Yaml::String(s) => json!(s),
        Yaml::Integer(i) => json!(i),
        Yaml::Real(r) => json!(r.parse::<f64>().unwrap()),
        Yaml::Boolean(b) => json!(b),
        Yaml::Null => Value::Null,
        Yaml::Array(items) => Value::Array(items.iter().map(yaml12).collect()),
        Yaml::Hash(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.as_str().expect("string keys").to_owned(), yaml12(v)))
                .collect(),
        ),
        other => panic!("unexpected YAML node {other:?}"),
    }
}

#[test]
fn every_string_reads_back_byte_for_byte_in_yaml_1_1_and_1_2() {
    // Every character class that YAML treats specially: C0 and C1 controls, DEL, NEL, the
    // line and paragraph separators, the byte-order mark, non-characters, astral characters,
    // quotes, backslashes, YAML's indicators and words that resolve to other types.
    let mut texts: Vec<String> = (0u32..0x100)
        .filter_map(char::from_u32)
        .map(|c| format!("a{c}b"))
        .collect();
    texts.extend(
        [
            "\u{2028}",
            "\u{2029}",
            "\u{FEFF}",
            "\u{FFFE}",
            "\u{FFFF}",
            "\u{1F600}",
            "\u{D7FF}",
            "\u{E000}",
            "\u{10FFFF}",
            "yes",
            "No",
            "on",
            "~",
            "null",
            "0x1F",
            "1e3",
            "- a",
            "#x",
            ": a",
            "'",
            "\"",
            "\\",
            "  lead",
            "trail  ",
            "",
            "a\r\nb",
            "\t",
            "%TAG",
            "---",
            "...",
            "*alias",
            "&anchor",
            "!tag",
            "|",
            ">",
            "@",
            "`",
            "{a: 1}",
            "[1]",
        ]
        .iter()
        .map(|s| (*s).to_owned()),
    );
    let configurations: Vec<Value> = texts
        .iter()
        .enumerate()
        .map(|(i, text)| {
            json!({
                "key": format!("odd{text}key{i}"), "rclass": "local", "packageType": "generic",
                "description": text, "notes": format!("n{text}"), "excludesPattern": text,
                "propertySets": [text], "includesPattern": "**/*",
                "repoLayoutRef": "simple-default"
            })
        })
        .collect();
    let output = adopt(
        &["--from", "-"],
        &[],
        Some(&serde_json::to_string(&configurations).unwrap()),
    );
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(stderr(&output).contains(&format!("{} repositories read", texts.len())));
    let text = stdout(&output);
    let documents: Vec<&str> = text.split("---\n").filter(|d| !d.is_empty()).collect();
    let v11: Vec<Value> = documents
        .iter()
        .map(|d| serde_yaml_ng::from_str(d).expect("YAML 1.1 (libyaml) reads it"))
        .collect();
    let v12: Vec<Value> = yaml_rust2::YamlLoader::load_from_str(&text)
        .expect("YAML 1.2 (yaml-rust2) reads it")
        .iter()
        .map(yaml12)
        .collect();
    assert_eq!(v11, v12);
    let mut found = Vec::new();
    for (i, claim) in v11.iter().enumerate() {
        strings(claim, format!("claim{i}"), &mut found);
    }
    let read: std::collections::BTreeSet<&str> = found.iter().map(|(_, s)| s.as_str()).collect();
    for (i, text) in texts.iter().enumerate() {
        for expected in [text.clone(), format!("n{text}"), format!("odd{text}key{i}")] {
            if expected.is_empty() {
                continue;
            }
            assert!(
                read.contains(expected.as_str()),
                "{expected:?} not read back"
            );
        }
    }
    // And the claims render: every key is the live key (no takeover change).
    assert_eq!(round_trip(&v11, &configurations, None), texts.len());
}

// 9. The smaller points.

#[test]
fn the_namespaced_api_writes_the_namespaced_examples_api_version() {
    let output = adopt(
        &[
            "--from",
            fixture().to_str().unwrap(),
            "--provider-api",
            "namespaced",
            "--naming-format",
            "{namespace}-{name}",
            "--namespace",
            "team2",
        ],
        &[],
        None,
    );
    let first = claims(&output);
    assert_eq!(first[0]["apiVersion"], "artifactory.example.org/v1alpha1");
    // No key starts with team2-: every entry explicit; one that does is named without it.
    let configurations: Vec<Value> = fixture_configurations()
        .into_iter()
        .filter(|c| c["rclass"] != "releaseBundles")
        .map(|mut c| {
            if c["key"] == "libs-release" {
                c["key"] = json!("team2-libs-release");
            }
            c
        })
        .collect();
    let text = serde_json::to_string(&configurations).unwrap();
    let output = adopt(
        &[
            "--from",
            "-",
            "--provider-api",
            "namespaced",
            "--naming-format",
            "{namespace}-{name}",
            "--namespace",
            "team2",
            "--name",
            "team2-repos",
        ],
        &[],
        Some(&text),
    );
    let claims = claims(&output);
    let entries = claims[0]["spec"]["repositories"].as_array().unwrap();
    let libs = entries
        .iter()
        .find(|e| e["name"] == "libs-release")
        .expect("the entry named from {namespace}-{name}");
    assert!(libs.get("key").is_none(), "{libs}");
}

#[test]
fn a_saved_answer_larger_than_the_limit_names_the_flag_that_raises_it() {
    let body = format!(
        "[{{\"key\": \"k\", \"rclass\": \"local\", \"packageType\": \"generic\", \"includesPattern\": \"**/*\", \"repoLayoutRef\": \"simple-default\", \"notes\": \"{}\"}}]",
        "x".repeat(1 << 20)
    );
    let output = adopt(&["--from", "-", "--max-answer-mib", "1"], &[], Some(&body));
    assert!(!output.status.success());
    assert!(
        stderr(&output).contains("larger than 1 MiB; fix: give a larger --max-answer-mib"),
        "{}",
        stderr(&output)
    );
    let output = adopt(&["--from", "-", "--max-answer-mib", "2"], &[], Some(&body));
    assert!(output.status.success(), "{}", stderr(&output));
}

#[test]
fn a_single_configuration_is_read_as_one() {
    let config = fixture_configurations()
        .into_iter()
        .find(|c| c["key"] == "libs-release")
        .unwrap();
    let output = adopt(&["--from", "-"], &[], Some(&config.to_string()));
    let claims = claims(&output);
    assert_eq!(round_trip(&claims, &[config], None), 1);
}

// The 300-repository round trip.

/// 300 configurations: every class and package type of the catalog, each with the documented
/// settings of its class set away from JFrog's defaults, and the spellings the provider
/// writes otherwise.
pub(crate) fn three_hundred() -> Vec<Value> {
    let base = every_package_type();
    let mut all = Vec::new();
    let mut round = 0;
    while all.len() < 300 {
        for config in &base {
            if all.len() == 300 {
                break;
            }
            let mut config = config.clone();
            let key = format!("{}-{round}", config["key"].as_str().unwrap());
            config["key"] = json!(key);
            config["description"] = json!(format!("repository {key}"));
            config["notes"] = json!("adopted");
            config["excludesPattern"] = json!("private/**");
            config["xrayIndex"] = json!(true);
            config["propertySets"] = json!(["artifactory"]);
            match (
                config["rclass"].as_str().unwrap(),
                config["packageType"].as_str().unwrap(),
            ) {
                ("remote", "pypi") => {
                    config["pyPIRegistryUrl"] = json!("https://pypi.internal.example.com");
                    config["pyPIRepositorySuffix"] = json!("simple-internal");
                }
                ("remote", "helm") => {
                    config["chartsBaseUrl"] = json!("https://charts.internal.example.com");
                }
                ("local", "debian") => config["debianTrivialLayout"] = json!(true),
                ("remote", _) => {
                    config["retrievalCachePeriodSecs"] = json!(600);
                    config["hardFail"] = json!(true);
                }
                _ => {}
            }
            all.push(config);
        }
        round += 1;
    }
    all
}

#[test]
fn three_hundred_repositories_round_trip_with_empty_previews() {
    let configurations = three_hundred();
    let body = configurations_answer(&configurations);
    let server = serve_configurations(body);
    let started = Instant::now();
    let output = server.run(&["--name", "legacy", "--namespace", "team1"]);
    let elapsed = started.elapsed();
    let claims = claims(&output);
    assert_eq!(claims.len(), 2, "200 a claim");
    let summary = stderr(&output);
    for field in [
        "pyPIRegistryUrl",
        "pyPIRepositorySuffix",
        "chartsBaseUrl",
        "debianTrivialLayout",
    ] {
        assert!(
            !summary.contains(&format!("  {field}:")),
            "{field} is held by the kind and carried: {summary}"
        );
    }
    let text = stdout(&output);
    for field in [
        "pypiRegistryUrl",
        "pypiRepositorySuffix",
        "helmChartsBaseUrl",
        "trivialLayout",
    ] {
        assert!(
            text.contains(&format!("{field}: ")),
            "{field} not in the claims"
        );
    }
    assert_eq!(round_trip(&claims, &configurations, None), 300);
    assert!(elapsed < Duration::from_secs(30), "{elapsed:?}");
}
