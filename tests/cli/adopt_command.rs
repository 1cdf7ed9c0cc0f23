//! `function-artifactory adopt` (docs/adopt.md): claims written from a live Artifactory's
//! repository configurations, and the round trip that proves them: the claims rendered by the
//! function, with observed resources holding what the provider would report, keep every live
//! key, observe every repository only, and would change nothing on takeover.
//!
//! The configurations are written from JFrog's "Repository Configuration JSON" (the fixture in
//! `tests/adopt/`, and one configuration a package type of the catalog), and what the provider
//! reports (`status.atProvider`) is derived here, by this file's own table of the names the
//! Terraform provider spells otherwise, not by the mapping under test. Live mode is tested
//! against a loopback HTTP server.

use crate::support;

use function_artifactory::catalog::{catalog, ProviderApi, Rclass};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::io::{BufRead as _, BufReader, Write as _};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use support::requests::{
    assert_valid, composite, desired_resources, fatal_message, input, namespaced_composite,
    request, status_repositories,
};

pub(crate) const TOKEN: &str = "tok-8d1e5c0a-do-not-print";

pub(crate) fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/adopt/configurations.json")
}

/// Runs `function-artifactory adopt` with `args`, `stdin` piped in, and no Artifactory
/// variables from the environment the tests run in.
pub(crate) fn adopt(args: &[&str], env: &[(&str, &str)], stdin: Option<&str>) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_function-artifactory"));
    command.arg("adopt").args(args);
    for name in [
        "JFROG_URL",
        "ARTIFACTORY_URL",
        "JFROG_ACCESS_TOKEN",
        "ARTIFACTORY_ACCESS_TOKEN",
        // ureq honours the proxy variables: the loopback server is reached directly.
        "HTTP_PROXY",
        "http_proxy",
        "HTTPS_PROXY",
        "https_proxy",
        "ALL_PROXY",
        "all_proxy",
    ] {
        command.env_remove(name);
    }
    command.envs(env.iter().copied());
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().expect("the binary runs");
    let mut pipe = child.stdin.take().expect("stdin");
    if let Some(text) = stdin {
        // The binary may refuse its flags before it reads stdin, and exit: a closed pipe is
        // then its answer, which the caller checks.
        if let Err(error) = pipe.write_all(text.as_bytes()) {
            assert_eq!(
                error.kind(),
                std::io::ErrorKind::BrokenPipe,
                "stdin written: {error}"
            );
        }
    }
    drop(pipe);
    child.wait_with_output().expect("the binary ends")
}

pub(crate) fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).expect("UTF-8")
}

pub(crate) fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).expect("UTF-8")
}

/// The claims printed on stdout.
pub(crate) fn claims(output: &Output) -> Vec<Value> {
    assert!(output.status.success(), "adopt failed:\n{}", stderr(output));
    let text = stdout(output);
    assert!(text.starts_with("---\n"), "{text}");
    text.split("---\n")
        .filter(|doc| !doc.trim().is_empty())
        .map(|doc| serde_yaml_ng::from_str(doc).expect("each claim is YAML"))
        .collect()
}

/// The Terraform provider's names for JFrog's, this test's own table ("Repository
/// Configuration JSON" against the CRDs' `forProvider`).
pub(crate) fn provider_name(jfrog: &str) -> &str {
    match jfrog {
        "environments" => "projectEnvironments",
        "downloadRedirect" => "downloadDirect",
        "retrievalCachePeriodSecs" | "virtualRetrievalCachePeriodSecs" => {
            "retrievalCachePeriodSeconds"
        }
        "missedRetrievalCachePeriodSecs" => "missedCachePeriodSeconds",
        "pyPIRegistryUrl" => "pypiRegistryUrl",
        "pyPIRepositorySuffix" => "pypiRepositorySuffix",
        "chartsBaseUrl" => "helmChartsBaseUrl",
        "debianTrivialLayout" => "trivialLayout",
        "members" => "member",
        other => other,
    }
}

/// The catalog's package type for a JFrog configuration.
fn catalog_type(config: &Value) -> String {
    let rclass = config["rclass"].as_str().unwrap();
    let package_type = config["packageType"].as_str().unwrap();
    match (rclass, package_type) {
        ("local", "docker") => format!(
            "docker{}",
            config["dockerApiVersion"]
                .as_str()
                .unwrap_or("V2")
                .to_lowercase()
        ),
        ("local" | "federated", "terraform") => {
            format!("terraform{}", config["terraformType"].as_str().unwrap())
        }
        _ => package_type.to_owned(),
    }
}

/// What the provider reports of a repository: its settings under the kind's `forProvider`
/// names, those the kind has, without credentials; `id`, and `packageType` for the virtual
/// and federated kinds (upjet's `atProvider`).
fn at_provider(config: &Value, api: ProviderApi) -> Value {
    let rclass = Rclass::parse(config["rclass"].as_str().unwrap()).unwrap();
    let kind = catalog()
        .find(api, rclass, &catalog_type(config))
        .expect("a kind");
    let schema = catalog().node(catalog().for_provider(kind).unwrap());
    let mut fields = Map::new();
    for (field, value) in config.as_object().unwrap() {
        let name = provider_name(field);
        if name.contains("password") || schema.properties.get(name).is_none() {
            continue;
        }
        let value = if name == "contentSynchronisation" {
            json!([{
                "enabled": value["enabled"],
                "statisticsEnabled": value["statistics"]["enabled"],
                "propertiesEnabled": value["properties"]["enabled"],
                "sourceOriginAbsenceDetection": value["source"]["originAbsenceDetection"],
            }])
        } else {
            value.clone()
        };
        fields.insert(name.to_owned(), value);
    }
    fields.insert("id".into(), config["key"].clone());
    if matches!(rclass, Rclass::Virtual | Rclass::Federated) {
        fields.insert("packageType".into(), json!(kind.package_type));
    }
    Value::Object(fields)
}

/// An imported repository as the provider shows it once it has observed it.
fn observed(entry_name: &str, config: &Value, api: ProviderApi) -> Value {
    let rclass = Rclass::parse(config["rclass"].as_str().unwrap()).unwrap();
    let kind = catalog().find(api, rclass, &catalog_type(config)).unwrap();
    let condition = |kind: &str, reason: &str| json!({"type": kind, "status": "True", "reason": reason, "lastTransitionTime": "2026-11-01T10:00:00Z"});
    json!({
        "apiVersion": kind.api_version,
        "kind": kind.kind,
        "metadata": {
            "name": format!("team1-repos-x7k2p-{entry_name}"),
            "annotations": {
                "crossplane.io/external-name": config["key"],
                "artifactory.fn.crossplane.io/origin": "imported"
            }
        },
        "spec": {"forProvider": {}, "managementPolicies": ["Observe"]},
        "status": {
            "atProvider": at_provider(config, api),
            "conditions": [condition("Ready", "Available"), condition("Synced", "ReconcileSuccess")]
        }
    })
}

/// Renders each claim (as its composite) with every repository observed, and checks the
/// round trip: every key is the live key, every entry observed only and adopted, nothing
/// refused, every preview empty but for the password a remote with a username needs.
/// Returns how many repositories were checked.
pub(crate) fn round_trip(
    claims: &[Value],
    configurations: &[Value],
    naming: Option<&str>,
) -> usize {
    round_trip_in(ProviderApi::Cluster, claims, configurations, naming)
}

/// [`round_trip`] for the claims of one provider API (the cluster API's composite is a
/// claim's XR, the namespaced one's a namespaced XR).
pub(crate) fn round_trip_in(
    api: ProviderApi,
    claims: &[Value],
    configurations: &[Value],
    naming: Option<&str>,
) -> usize {
    let by_key: BTreeMap<&str, &Value> = configurations
        .iter()
        .map(|c| (c["key"].as_str().unwrap(), c))
        .collect();
    let mut checked = 0;
    for claim in claims {
        let entries = claim["spec"]["repositories"].as_array().unwrap();
        let spec = claim["spec"].clone();
        let mut builder = request(match api {
            ProviderApi::Namespaced => namespaced_composite(spec),
            _ => composite(spec),
        });
        let mut fields = json!({"providerApi": api.as_str()});
        if let Some(format) = naming {
            fields["naming"] = json!({"format": format});
        }
        builder = builder.input(input(fields));
        let mut live_keys = BTreeMap::new();
        for entry in entries {
            let name = entry["name"].as_str().unwrap();
            // The live repository the entry is for: its key, else the name in the format.
            let key = entry["key"].as_str().map_or_else(
                || {
                    let project = claim["spec"]["projectKey"].as_str().unwrap_or("");
                    naming
                        .unwrap_or(if project.is_empty() {
                            "{name}"
                        } else {
                            "{projectKey}-{name}"
                        })
                        .replace("{projectKey}", project)
                        .replace("{rclass}", entry["rclass"].as_str().unwrap())
                        .replace("{name}", name)
                },
                str::to_owned,
            );
            let config = by_key
                .get(key.as_str())
                .unwrap_or_else(|| panic!("entry {name} gives key {key}, which is not live"));
            assert_eq!(entry["import"], true, "{name}");
            let mut live = observed(name, config, api);
            if api == ProviderApi::Namespaced {
                live["metadata"]["namespace"] = json!("team1");
            }
            builder = builder.observed(name, live);
            live_keys.insert(name.to_owned(), (key, *config));
        }
        let response = builder.run();
        assert!(
            fatal_message(&response).is_none(),
            "refused: {:?}",
            fatal_message(&response)
        );
        let resources = desired_resources(&response);
        assert_valid(api.as_str(), &resources);
        let status = status_repositories(&response);
        assert_eq!(status.len(), entries.len());
        for item in &status {
            let name = item["name"].as_str().unwrap();
            let (key, config) = &live_keys[name];
            assert_eq!(item["key"], json!(key), "{name}");
            assert_eq!(item["phase"], "adopted", "{name}: {item}");
            let resource = &resources[name];
            assert_eq!(
                resource["metadata"]["annotations"]["crossplane.io/external-name"],
                json!(key)
            );
            assert_eq!(
                resource["spec"]["managementPolicies"],
                json!(["Observe"]),
                "{name}"
            );
            let has_username = config["username"].as_str().is_some_and(|u| !u.is_empty());
            let changes: Vec<&str> = item["takeover"]
                .as_array()
                .map(|list| list.iter().map(|c| c["path"].as_str().unwrap()).collect())
                .unwrap_or_default();
            if has_username {
                assert_eq!(
                    changes,
                    ["spec.forProvider.passwordSecretRef"],
                    "{name}: {item}"
                );
            } else {
                assert_eq!(item["takeoverChanges"], 0, "{name}: {item}");
            }
            checked += 1;
        }
    }
    checked
}

pub(crate) fn fixture_configurations() -> Vec<Value> {
    let text = std::fs::read_to_string(fixture()).unwrap();
    let value: Value = serde_json::from_str(&text).unwrap();
    value
        .as_object()
        .unwrap()
        .values()
        .flat_map(|list| list.as_array().unwrap().clone())
        .collect()
}

#[test]
fn the_fixture_round_trips_every_class() {
    let output = adopt(
        &[
            "--from",
            fixture().to_str().unwrap(),
            "--name",
            "team1-repos",
            "--namespace",
            "team1",
        ],
        &[],
        None,
    );
    let claims = claims(&output);
    assert_eq!(claims.len(), 1);
    let claim = &claims[0];
    assert_eq!(claim["apiVersion"], "platform.example.org/v1alpha1");
    assert_eq!(claim["kind"], "Repositories");
    assert_eq!(
        claim["metadata"],
        json!({"name": "team1-repos", "namespace": "team1"})
    );
    let configurations = fixture_configurations();
    let adoptable: Vec<Value> = configurations
        .iter()
        .filter(|c| c["rclass"] != "releaseBundles")
        .cloned()
        .collect();
    assert_eq!(round_trip(&claims, &adoptable, None), adoptable.len());

    let entries = claim["spec"]["repositories"].as_array().unwrap();
    let entry = |name: &str| {
        entries
            .iter()
            .find(|e| e["name"] == name)
            .unwrap_or_else(|| panic!("no entry {name}"))
    };
    // A key the naming format cannot give back from a DNS label is set explicitly.
    assert_eq!(entry("team-images")["key"], "Team_Images");
    assert!(entry("libs-release").get("key").is_none());
    // Members in Artifactory's order: entries by name, then the rest by key.
    assert_eq!(
        entry("libs")["repositories"],
        json!(["libs-release", "maven-central"])
    );
    assert_eq!(
        entry("libs")["externalRepositories"],
        json!(["libs-snapshot-legacy"])
    );
    assert_eq!(entry("libs")["defaultDeploymentRepo"], "libs-release");
    // A member before an entry: the order holds only with every member by key from there on.
    assert!(entry("images").get("repositories").is_none());
    assert_eq!(
        entry("images")["externalRepositories"],
        json!(["legacy-images", "Team_Images", "docker-hub"])
    );
    assert_eq!(
        entry("shared-generic")["members"].as_array().unwrap().len(),
        2
    );
    assert_eq!(entry("team1-npm")["forProvider"]["projectKey"], "team1");
    assert_eq!(
        entry("team1-npm")["forProvider"]["projectEnvironments"],
        json!(["DEV"])
    );
    // Settings equal to the Terraform provider's default are left out; the others kept.
    let release = &entry("libs-release")["forProvider"];
    assert!(release.get("includesPattern").is_none() && release.get("blackedOut").is_none());
    assert_eq!(release["xrayIndex"], true);
    assert_eq!(
        entry("maven-central")["forProvider"]["retrievalCachePeriodSeconds"],
        7200
    );
    assert_eq!(
        entry("maven-central")["password"],
        json!({"secretRef": {"name": "maven-central-credentials", "key": "password"}})
    );

    let summary = stderr(&output);
    for line in [
        "  local: 4",
        "  remote: 3",
        "  virtual: 2",
        "  federated: 1",
        "release-bundles-v2: its class \"releaseBundles\" has no provider kind",
        "  enableComposerSupport: libs-release",
        "  virtualRetrievalCachePeriodSecs: libs",
        "kubectl -n team1 create secret generic maven-central-credentials --from-literal=password=...   # maven-central",
        "next: review the claims",
    ] {
        assert!(summary.contains(line), "no {line:?} in:\n{summary}");
    }
}

#[test]
fn the_fixture_round_trips_in_the_flat_and_namespaced_apis() {
    let configurations = fixture_configurations();
    for api in [ProviderApi::Flat, ProviderApi::Namespaced] {
        let output = adopt(
            &[
                "--from",
                fixture().to_str().unwrap(),
                "--provider-api",
                api.as_str(),
                "--name",
                "team1-repos",
                "--namespace",
                "team1",
            ],
            &[],
            None,
        );
        let claims = claims(&output);
        // The flat API has no federated kinds: skipped, and said so.
        let adoptable: Vec<Value> = configurations
            .iter()
            .filter(|c| {
                c["rclass"] != "releaseBundles"
                    && !(api == ProviderApi::Flat && c["rclass"] == "federated")
            })
            .cloned()
            .collect();
        assert_eq!(
            round_trip_in(api, &claims, &adoptable, None),
            adoptable.len(),
            "{api}"
        );
        if api == ProviderApi::Flat {
            assert!(stderr(&output).contains(
                "shared-generic: the flat API of the provider has no federated kind for package type \"generic\""
            ));
        }
    }
}

/// One configuration a package type of the catalog, every class, in JFrog's spelling.
pub(crate) fn every_package_type() -> Vec<Value> {
    let mut configurations = Vec::new();
    for kind in catalog().kinds(ProviderApi::Cluster) {
        let pt = kind.package_type.as_str();
        let rclass = kind.rclass.as_str();
        // What an admin's answer always has (docs/adopt.md, "Partial answers").
        let mut config = json!({
            "key": format!("{rclass}-{pt}"), "rclass": rclass, "packageType": pt,
            "includesPattern": "**/*", "repoLayoutRef": "simple-default"
        });
        match (kind.rclass, pt) {
            (Rclass::Local, "dockerv1" | "dockerv2") => {
                config["packageType"] = json!("docker");
                config["dockerApiVersion"] = json!(pt[6..].to_uppercase());
            }
            // The same JFrog configuration as the federated docker kind.
            (Rclass::Federated, "dockerv1" | "dockerv2") => continue,
            (Rclass::Local | Rclass::Federated, _) if pt.starts_with("terraform") => {
                config["packageType"] = json!("terraform");
                config["terraformType"] = json!(&pt["terraform".len()..]);
            }
            _ => {}
        }
        match kind.rclass {
            Rclass::Remote => config["url"] = json!(format!("https://upstream.example.com/{pt}")),
            Rclass::Virtual => config["repositories"] = json!([]),
            Rclass::Federated => {
                config["members"] = json!([{"url": format!("https://eu.example.com/artifactory/federated-{pt}"), "enabled": true}])
            }
            Rclass::Local => config["description"] = json!(format!("{pt} packages")),
        }
        configurations.push(config);
    }
    configurations
}

#[test]
fn every_package_type_of_the_catalog_round_trips() {
    let configurations = every_package_type();
    assert!(configurations.len() > 120, "{}", configurations.len());
    let text = serde_json::to_string(&configurations).unwrap();
    // A list of configurations (the older API's answers), piped in.
    let output = adopt(
        &[
            "--from",
            "-",
            "--name",
            "team1-repos",
            "--namespace",
            "team1",
        ],
        &[],
        Some(&text),
    );
    let claims = claims(&output);
    assert_eq!(
        round_trip(&claims, &configurations, None),
        configurations.len()
    );
    assert!(!stderr(&output).contains("skipped"), "{}", stderr(&output));
}

#[test]
fn claims_split_by_size_and_by_project_round_trip() {
    let mut configurations = every_package_type();
    for (i, config) in configurations
        .iter_mut()
        .enumerate()
        .filter(|(i, _)| i % 3 == 0)
    {
        let project = if i % 2 == 0 { "team1" } else { "team2" };
        let key = format!("{project}-{}", config["key"].as_str().unwrap());
        config["key"] = json!(key);
        config["projectKey"] = json!(project);
    }
    let text = serde_json::to_string(&configurations).unwrap();
    let output = adopt(
        &[
            "--from",
            "-",
            "--per-claim",
            "40",
            "--name",
            "team1-repos",
            "--namespace",
            "team1",
        ],
        &[],
        Some(&text),
    );
    let by_size = claims(&output);
    assert!(by_size.len() >= 4);
    assert_eq!(by_size[0]["metadata"]["name"], "team1-repos-1");
    assert!(by_size
        .iter()
        .all(|c| c["spec"]["repositories"].as_array().unwrap().len() <= 40));
    assert_eq!(
        round_trip(&by_size, &configurations, None),
        configurations.len()
    );

    let output = adopt(
        &[
            "--from",
            "-",
            "--group-by",
            "project",
            "--name",
            "team1-repos",
            "--namespace",
            "team1",
        ],
        &[],
        Some(&text),
    );
    let by_project = claims(&output);
    let names: Vec<&str> = by_project
        .iter()
        .map(|c| c["metadata"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["team1-repos", "team1-repos-team1", "team1-repos-team2"]
    );
    assert_eq!(by_project[1]["spec"]["projectKey"], "team1");
    // The function's default format with a project is {projectKey}-{name}: names without it.
    let first = &by_project[1]["spec"]["repositories"][0];
    assert!(first.get("key").is_none(), "{first}");
    assert!(!first["name"].as_str().unwrap().starts_with("team1-"));
    assert_eq!(
        round_trip(&by_project, &configurations, None),
        configurations.len()
    );
}

#[test]
fn a_naming_format_gives_names_that_it_turns_back_into_the_keys() {
    let configurations = every_package_type();
    let text = serde_json::to_string(&configurations).unwrap();
    let format = "{rclass}-{name}";
    let output = adopt(
        &[
            "--from",
            "-",
            "--include",
            "^local-",
            "--naming-format",
            format,
            "--name",
            "team1-repos",
            "--namespace",
            "team1",
        ],
        &[],
        Some(&text),
    );
    let claims = claims(&output);
    let entries = claims[0]["spec"]["repositories"].as_array().unwrap();
    assert!(entries.iter().all(|e| e.get("key").is_none()));
    assert!(entries
        .iter()
        .any(|e| e["name"] == "maven" && e["rclass"] == "local"));
    let local: Vec<Value> = configurations
        .iter()
        .filter(|c| c["rclass"] == "local")
        .cloned()
        .collect();
    assert_eq!(round_trip(&claims, &local, Some(format)), local.len());
}

#[test]
fn selection_takes_only_the_keys_and_project_asked_for() {
    let path = fixture();
    let path = path.to_str().unwrap();
    let names = |args: &[&str]| -> Vec<String> {
        let mut all = vec!["--from", path];
        all.extend_from_slice(args);
        claims(&adopt(&all, &[], None))
            .iter()
            .flat_map(|c| c["spec"]["repositories"].as_array().unwrap().clone())
            .map(|e| e["name"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(names(&["--include", "^libs"]), ["libs-release", "libs"]);
    assert_eq!(
        names(&["--include", "^libs", "--exclude", "release$"]),
        ["libs"]
    );
    assert_eq!(names(&["--project", "team1"]), ["team1-npm"]);
    let output = adopt(&["--from", path, "--include", "^libs"], &[], None);
    assert!(stderr(&output).contains("not selected (--include, --exclude, --project): 9"));
}

#[test]
fn bad_input_ends_with_what_to_do() {
    let output = adopt(&["--from", "-"], &[], Some("{\"LOCAL\": 3}"));
    assert!(!output.status.success());
    assert!(
        stderr(&output).contains("--from - has LOCAL as a number"),
        "{}",
        stderr(&output)
    );
    let output = adopt(&["--from", "-"], &[], Some("<html>"));
    assert!(
        stderr(&output).contains("is not JSON"),
        "{}",
        stderr(&output)
    );
    let output = adopt(&["--from", "-", "--include", "("], &[], Some("[]"));
    assert!(stderr(&output).contains("--include \"(\" is not a regular expression"));
    let output = adopt(&["--from", "-", "--provider-api", "auto"], &[], Some("[]"));
    assert!(stderr(&output).contains("fix: use flat, cluster or namespaced"));
    let output = adopt(&[], &[], None);
    assert!(
        stderr(&output).contains("no Artifactory URL"),
        "{}",
        stderr(&output)
    );
    let output = adopt(&["--url", "https://h.example.com"], &[], None);
    assert!(stderr(&output).contains("no access token for https://h.example.com"));
    // A token is never a flag's value.
    let output = adopt(
        &["--url", "https://h.example.com", "--token", TOKEN],
        &[],
        None,
    );
    assert!(!output.status.success());
    assert!(!stderr(&output).contains(TOKEN));
}

/// One answer of the loopback Artifactory.
#[derive(Clone)]
pub(crate) struct Reply {
    pub status: u16,
    pub body: String,
    pub delay: Duration,
    /// Headers besides Content-Type, Content-Length and Connection.
    pub headers: Vec<(String, String)>,
}

pub(crate) fn reply(status: u16, body: &str) -> Reply {
    Reply {
        status,
        body: body.to_owned(),
        delay: Duration::ZERO,
        headers: Vec::new(),
    }
}

/// A loopback HTTP/1.1 server that answers by path and records each request's path and
/// Authorization header; over TLS with the certificate and key given.
pub(crate) struct Artifactory {
    pub url: String,
    pub requests: Arc<Mutex<Vec<(String, String)>>>,
}

/// A connection of the loopback server: plain or TLS.
trait Connection: std::io::Read + std::io::Write + Send {}
impl<T: std::io::Read + std::io::Write + Send> Connection for T {}

impl Artifactory {
    pub(crate) fn start(answer: impl Fn(&str) -> Reply + Send + 'static) -> Artifactory {
        Artifactory::serve(None, answer)
    }

    /// The server over TLS: `tls` its certificate chain and key, in PEM.
    pub(crate) fn start_tls(
        tls: &support::server::Pem,
        answer: impl Fn(&str) -> Reply + Send + 'static,
    ) -> Artifactory {
        use rustls::pki_types::pem::PemObject as _;
        use rustls::pki_types::{CertificateDer, PrivateKeyDer};
        let certs: Vec<CertificateDer<'static>> =
            CertificateDer::pem_slice_iter(tls.cert.as_bytes())
                .map(Result::unwrap)
                .collect();
        let key = PrivateKeyDer::from_pem_slice(tls.key.as_bytes()).unwrap();
        let config = rustls::ServerConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .unwrap();
        Artifactory::serve(Some(Arc::new(config)), answer)
    }

    fn serve(
        tls: Option<Arc<rustls::ServerConfig>>,
        answer: impl Fn(&str) -> Reply + Send + 'static,
    ) -> Artifactory {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let scheme = if tls.is_some() { "https" } else { "http" };
        let url = format!("{scheme}://{}/artifactory", listener.local_addr().unwrap());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&requests);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let mut stream: Box<dyn Connection> = match &tls {
                    Some(config) => {
                        let Ok(connection) = rustls::ServerConnection::new(Arc::clone(config))
                        else {
                            continue;
                        };
                        Box::new(rustls::StreamOwned::new(connection, stream))
                    }
                    None => Box::new(stream),
                };
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") {
                    match std::io::Read::read(&mut stream, &mut byte) {
                        Ok(1) => head.push(byte[0]),
                        _ => break,
                    }
                    // A TLS handshake on the plain server: answered as HTTP servers do.
                    if tls.is_none() && head == [0x16] {
                        let _ = stream
                            .write_all(b"HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n");
                        break;
                    }
                }
                if head.is_empty() || head == [0x16] {
                    continue;
                }
                let mut reader = BufReader::new(&head[..]);
                let mut line = String::new();
                if reader.read_line(&mut line).is_err() {
                    continue;
                }
                let path = line.split_whitespace().nth(1).unwrap_or("").to_owned();
                let mut authorization = String::new();
                loop {
                    let mut header = String::new();
                    if reader.read_line(&mut header).unwrap_or(0) == 0 || header == "\r\n" {
                        break;
                    }
                    if let Some((name, value)) = header.split_once(':') {
                        if name.eq_ignore_ascii_case("authorization") {
                            authorization = value.trim().to_owned();
                        }
                    }
                }
                seen.lock().unwrap().push((path.clone(), authorization));
                let reply = answer(&path);
                std::thread::sleep(reply.delay);
                let headers: String = reply
                    .headers
                    .iter()
                    .map(|(name, value)| format!("{name}: {value}\r\n"))
                    .collect();
                let _ = write!(
                    stream,
                    "HTTP/1.1 {} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\n{headers}Connection: close\r\n\r\n{}",
                    reply.status,
                    reply.body.len(),
                    reply.body
                );
                let _ = stream.flush();
            }
        });
        Artifactory { url, requests }
    }

    /// An Artifactory before 7.61.3: no configurations call, the list of keys, and each key's
    /// configuration.
    pub(crate) fn per_key(configurations: &[Value]) -> Artifactory {
        let list: Vec<Value> = configurations
            .iter()
            .map(|c| json!({"key": c["key"], "type": c["rclass"].as_str().unwrap().to_uppercase(), "packageType": c["packageType"]}))
            .collect();
        let list = serde_json::to_string(&list).unwrap();
        let by_key: BTreeMap<String, String> = configurations
            .iter()
            .map(|c| (c["key"].as_str().unwrap().to_owned(), c.to_string()))
            .collect();
        Artifactory::start(
            move |path| match path.strip_prefix("/artifactory/api/repositories") {
                Some("/configurations") => reply(404, "{\"errors\":[{\"status\":404}]}"),
                Some("") => reply(200, &list),
                Some(key) => by_key
                    .get(key.trim_start_matches('/'))
                    .map_or_else(|| reply(404, "{}"), |c| reply(200, c)),
                None => reply(500, "{}"),
            },
        )
    }

    /// adopt against this server, with the token in the environment (and --allow-http for a
    /// plain server: the tests' loopback).
    pub(crate) fn run(&self, args: &[&str]) -> Output {
        let mut all = args.to_vec();
        if self.url.starts_with("http://") {
            all.push("--allow-http");
        }
        adopt(
            &all,
            &[("JFROG_URL", &self.url), ("JFROG_ACCESS_TOKEN", TOKEN)],
            None,
        )
    }

    pub(crate) fn paths(&self) -> Vec<String> {
        self.requests
            .lock()
            .unwrap()
            .iter()
            .map(|(p, _)| p.clone())
            .collect()
    }
}

pub(crate) fn assert_no_token(output: &Output) {
    assert!(!stdout(output).contains(TOKEN) && !stderr(output).contains(TOKEN));
}

#[test]
fn live_reads_every_configuration_in_one_call_with_the_token_as_bearer() {
    let body = std::fs::read_to_string(fixture()).unwrap();
    let server = Artifactory::start(move |path| match path {
        "/artifactory/api/repositories/configurations" => reply(200, &body),
        _ => reply(500, "{}"),
    });
    let output = server.run(&["--name", "team1-repos", "--namespace", "team1"]);
    let from_file = adopt(
        &[
            "--from",
            fixture().to_str().unwrap(),
            "--name",
            "team1-repos",
            "--namespace",
            "team1",
        ],
        &[],
        None,
    );
    assert_eq!(stdout(&output), stdout(&from_file), "{}", stderr(&output));
    assert_eq!(
        server.paths(),
        ["/artifactory/api/repositories/configurations"]
    );
    let requests = server.requests.lock().unwrap().clone();
    assert_eq!(requests[0].1, format!("Bearer {TOKEN}"));
    assert!(stderr(&output).contains(&format!("read from {}", server.url)));
    assert_no_token(&output);
}

#[test]
fn live_falls_back_to_the_list_and_each_key_on_older_instances() {
    let configurations = fixture_configurations();
    let server = Artifactory::per_key(&configurations);
    let output = server.run(&["--name", "team1-repos", "--namespace", "team1"]);
    let claims = claims(&output);
    let adoptable: Vec<Value> = configurations
        .iter()
        .filter(|c| c["rclass"] != "releaseBundles")
        .cloned()
        .collect();
    assert_eq!(round_trip(&claims, &adoptable, None), adoptable.len());
    let paths = server.paths();
    assert_eq!(paths.len(), 2 + configurations.len());
    assert_eq!(paths[1], "/artifactory/api/repositories");
    assert!(paths.contains(&"/artifactory/api/repositories/Team_Images".to_owned()));
    assert!(server
        .requests
        .lock()
        .unwrap()
        .iter()
        .all(|(_, auth)| *auth == format!("Bearer {TOKEN}")));
    assert_no_token(&output);
}

#[test]
fn live_errors_name_the_url_and_the_fix_and_never_the_token() {
    for (status, says) in [
        (
            401,
            "answered 401 Unauthorized: the access token was refused",
        ),
        (
            403,
            "answered 403 Forbidden: the token's user may not read repository configurations",
        ),
        (
            500,
            "answered 500 Internal Server Error: Artifactory failed",
        ),
        (
            404,
            "neither it nor /api/repositories/configurations is there",
        ),
    ] {
        let server = Artifactory::start(move |_| {
            reply(
                status,
                &format!("{{\"errors\":[{{\"message\":\"{TOKEN}\"}}]}}"),
            )
        });
        let output = server.run(&[]);
        assert!(!output.status.success());
        let message = stderr(&output);
        assert!(message.contains(says), "{status}: {message}");
        assert!(
            message.contains(&format!("{}/api/repositories", server.url)),
            "{message}"
        );
        assert!(stdout(&output).is_empty());
        assert_no_token(&output);
    }
}

#[test]
fn live_refuses_a_body_that_is_not_the_documented_json() {
    for body in [
        "<html>login</html>",
        "\"text\"",
        "{\"LOCAL\": {}}",
        "{\"errors\": [{\"status\": 401}]}",
    ] {
        let body = body.to_owned();
        let server = Artifactory::start(move |_| reply(200, &body));
        let output = server.run(&[]);
        assert!(!output.status.success());
        let message = stderr(&output);
        assert!(
            message.contains("not the repository configuration JSON JFrog documents"),
            "{message}"
        );
        assert!(message.contains("/api/repositories/configurations"));
        assert_no_token(&output);
    }
}

#[test]
fn live_gives_up_on_a_slow_server() {
    let server = Artifactory::start(|_| Reply {
        delay: Duration::from_secs(5),
        ..reply(200, "{}")
    });
    let started = std::time::Instant::now();
    let output = server.run(&["--timeout", "1s"]);
    assert!(started.elapsed() < Duration::from_secs(4));
    assert!(!output.status.success());
    let message = stderr(&output);
    assert!(message.contains("did not answer within 1s"), "{message}");
    assert!(message.contains(&server.url));
    assert_no_token(&output);
}

#[test]
fn live_takes_the_token_from_a_file_or_the_providers_credentials() {
    let body = std::fs::read_to_string(fixture()).unwrap();
    let server = Artifactory::start(move |_| reply(200, &body));
    let dir = tempfile::tempdir().unwrap();
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, format!("{TOKEN}\n")).unwrap();
    let output = adopt(
        &[
            "--url",
            &server.url,
            "--allow-http",
            "--token-file",
            token_file.to_str().unwrap(),
        ],
        &[],
        None,
    );
    assert!(output.status.success(), "{}", stderr(&output));
    // The provider's Secret holds the platform URL: /artifactory is added.
    let credentials = dir.path().join("credentials.json");
    let platform = server.url.trim_end_matches("/artifactory");
    std::fs::write(
        &credentials,
        json!({"url": platform, "access_token": TOKEN}).to_string(),
    )
    .unwrap();
    let output = adopt(
        &[
            "--credentials-file",
            credentials.to_str().unwrap(),
            "--allow-http",
        ],
        &[],
        None,
    );
    assert!(output.status.success(), "{}", stderr(&output));
    assert_no_token(&output);
    let requests = server.requests.lock().unwrap().clone();
    assert_eq!(requests.len(), 2);
    assert!(requests.iter().all(|(path, auth)| path
        == "/artifactory/api/repositories/configurations"
        && *auth == format!("Bearer {TOKEN}")));
}
