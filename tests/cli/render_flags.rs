//! `render --function-credentials`, `--xrd` and `--debug` (issue 18): credentials reach
//! the step that asks for them, and no Secret value reaches render's output or log.
//! The goldens of each flag are in `examples/render-flags/`.
#![cfg(feature = "server")]

use crate::support;

use function_artifactory::proto::v1::credentials::Source;
use support::render::{functions_yaml, respond_from, Scenario, TestFunction};

/// Values that must never be printed: a credential's and a required Secret's.
const TOKEN: &str = "tok-7f3a-Never-Print-Me";
const PASSWORD: &str = "pw-91c2-Never-Print-Me";

fn scenario(name: &str, extra: &TestFunction) -> Scenario {
    let scenario = Scenario::new(name);
    scenario
        .file(
            "xr.yaml",
            "\
apiVersion: artifactory.example.org/v1alpha1
kind: XRepositorySet
metadata:
  name: team1-repos
  labels:
    crossplane.io/claim-name: team1
    crossplane.io/claim-namespace: team1
spec:
  repositories:
    - name: vendor
      rclass: remote
      packageType: maven
      url: https://maven.vendor.example.com/releases
      username: ci
      password:
        secretRef: {name: vendor, key: password}
",
        )
        .file(
            "composition.yaml",
            "\
apiVersion: apiextensions.crossplane.io/v1
kind: Composition
metadata:
  name: sets
spec:
  compositeTypeRef:
    apiVersion: artifactory.example.org/v1alpha1
    kind: XRepositorySet
  mode: Pipeline
  pipeline:
    - step: artifactory
      functionRef: {name: function-artifactory}
      input:
        apiVersion: artifactory.fn.crossplane.io/v1beta1
        kind: Input
        writeOnlyPasswords: true
    - step: extra
      functionRef: {name: function-extra}
      credentials:
        - name: admin
          source: Secret
          secretRef: {namespace: crossplane-system, name: admin}
        - name: ignored
          source: None
",
        )
        .file("functions.yaml", &functions_yaml(extra))
        .file(
            "credentials.yaml",
            &format!(
                "\
apiVersion: v1
kind: Secret
metadata: {{name: admin, namespace: crossplane-system}}
stringData: {{token: {TOKEN}}}
"
            ),
        )
        .file(
            "required.yaml",
            &format!(
                "\
apiVersion: v1
kind: Secret
metadata: {{name: vendor, namespace: team1, resourceVersion: \"42\"}}
stringData: {{password: {PASSWORD}}}
"
            ),
        );
    scenario
}

#[test]
fn credentials_reach_the_step_and_no_secret_value_is_printed() {
    let extra = TestFunction::serve(|request| respond_from(&request));
    let scenario = scenario("credentials-debug", &extra);
    let run = scenario.render(&[
        "xr.yaml",
        "composition.yaml",
        "functions.yaml",
        "--function-credentials",
        "credentials.yaml",
        "--required-resources",
        "required.yaml",
        "--include-function-results",
        "--include-context",
        "--include-full-xr",
        "--debug",
    ]);
    assert_eq!(run.code, 0, "stderr: {}", run.stderr);
    // The step got the Secret's data under the credential's name; a source None is skipped.
    let requests = extra.requests();
    let credentials = &requests[0].credentials;
    assert_eq!(credentials.keys().collect::<Vec<_>>(), ["admin"]);
    let Some(Source::CredentialData(data)) = &credentials["admin"].source else {
        panic!("credential data");
    };
    assert_eq!(data.data["token"], TOKEN.as_bytes());
    // --debug says what happened, by name and count.
    assert!(
        run.stderr
            .contains("render: step \"extra\" (function \"function-extra\"): 1 credentials"),
        "{}",
        run.stderr
    );
    // The password is rendered as a reference.
    assert!(run.stdout.contains("passwordSecretRef:"), "{}", run.stdout);
    let all = format!("{}{}", run.stdout, run.stderr);
    for secret in [TOKEN, PASSWORD] {
        assert!(!all.contains(secret), "{secret} printed:\n{all}");
    }
    assert!(!all.contains("Never-Print"), "{all}");
}

#[test]
fn a_credential_secret_that_is_not_given_is_an_error() {
    let extra = TestFunction::serve(|request| respond_from(&request));
    let scenario = scenario("credentials-missing", &extra);
    scenario.file(
        "credentials.yaml",
        "apiVersion: v1\nkind: Secret\nmetadata: {name: admin, namespace: default}\n",
    );
    let run = scenario.render(&[
        "xr.yaml",
        "composition.yaml",
        "functions.yaml",
        "--function-credentials",
        "credentials.yaml",
    ]);
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stderr,
        "function-artifactory: error: cannot render composite resource: cannot get credentials from secret \"admin\": secret \"admin\" not found\n"
    );
    assert!(extra.requests().is_empty(), "the step never ran");
}

/// `crossplane render` exits 1 on every error, usage errors included (kong); clap's 2 is
/// kept for the server's flags.
#[test]
fn usage_errors_exit_1_as_crossplane_render() {
    let scenario = Scenario::new("usage-errors");
    for args in [
        &["--no-such-flag", "xr.yaml", "composition.yaml"][..],
        &[][..],
        &["xr.yaml", "composition.yaml", "--timeout", "soon"][..],
    ] {
        let run = scenario.render(args);
        assert_eq!(run.code, 1, "{args:?}: {}", run.stderr);
        assert!(run.stderr.starts_with("error: "), "{}", run.stderr);
    }
    let server = std::process::Command::new(env!("CARGO_BIN_EXE_function-artifactory"))
        .arg("--no-such-flag")
        .output()
        .expect("the binary runs");
    assert_eq!(server.status.code(), Some(2));
}

// ---- repeated flags (issue 24) ----

/// Runs render on the smoke example with `flags` after the three files.
fn smoke(flags: &[&str]) -> support::render::Run {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/render-smoke");
    let mut args = vec!["xr.yaml", "composition.yaml", "functions.yaml"];
    args.extend_from_slice(flags);
    support::render::render_in(&dir, &args)
}

/// A flag given twice does what kong does in `crossplane render`: a switch stays on, an
/// explicit `--switch=false` turns it off (the last one wins), a flag of one value keeps the
/// last, and the lists add up.
#[test]
fn repeated_flags_behave_as_crossplane_render() {
    let switches = [
        ("-r", "--include-function-results"),
        ("-c", "--include-context"),
        ("-x", "--include-full-xr"),
        ("-d", "--debug"),
    ];
    for (short, long) in switches {
        let once = smoke(&[short]);
        assert_eq!(once.code, 0, "{short}: {}", once.stderr);
        for twice in [[short, short], [short, long], [long, short]] {
            let run = smoke(&twice);
            assert_eq!(run.code, 0, "{twice:?}: {}", run.stderr);
            assert_eq!(run.stdout, once.stdout, "{twice:?}");
            assert_eq!(run.stderr, once.stderr, "{twice:?}");
        }
        let off = format!("{long}=false");
        let on = format!("{long}=true");
        assert_eq!(
            smoke(&[short, &off]).stdout,
            smoke(&[]).stdout,
            "{short} {off}"
        );
        assert_eq!(smoke(&[&off, short]).stdout, once.stdout, "{off} {short}");
        assert_eq!(smoke(&[&on]).stdout, once.stdout, "{on}");
    }
    // Switches combine as short flags.
    assert_eq!(smoke(&["-rcx"]).stdout, smoke(&["-r", "-c", "-x"]).stdout);
    // A switch takes only kong's words for a value.
    let run = smoke(&["--include-context=maybe"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr
            .contains("bool value must be true, 1, yes, false, 0 or no but got \"maybe\""),
        "{}",
        run.stderr
    );
}

#[test]
fn a_flag_of_one_value_given_twice_keeps_the_last() {
    let plain = smoke(&[]);
    assert_eq!(plain.code, 0, "{}", plain.stderr);
    // -o: the last file is read, a missing one before it is not.
    let run = smoke(&["-o", "missing.yaml", "-o", "../render-yaml/context.yaml"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains("render-yaml/context.yaml"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("missing.yaml"), "{}", run.stderr);
    let run = smoke(&["-o", "../render-yaml/context.yaml", "-o", "missing.yaml"]);
    assert!(run.stderr.contains("missing.yaml"), "{}", run.stderr);
    // --timeout: see `a_function_that_is_not_served_times_out` in tests/cli/render_command.rs.
    // --xrd and --function-credentials: the missing first file is not read.
    for flag in ["--xrd", "--function-credentials"] {
        let run = smoke(&[
            flag,
            "missing.yaml",
            flag,
            "../render-flags/credentials.yaml",
        ]);
        assert!(
            !run.stderr.contains("missing.yaml"),
            "{flag}: {}",
            run.stderr
        );
    }
    // -e and --extra-resources are repeatable in the CLI (v2.4.0 and later): every file is
    // read, a missing one is an error wherever it stands.
    for flag in ["-e", "--required-resources", "--extra-resources"] {
        let what = if flag == "--extra-resources" {
            "extra"
        } else {
            "required"
        };
        for order in [
            ["missing.yaml", "../render-flags/credentials.yaml"],
            ["../render-flags/credentials.yaml", "missing.yaml"],
        ] {
            let run = smoke(&[flag, order[0], flag, order[1]]);
            assert_eq!(run.code, 1, "{flag}: {}", run.stderr);
            assert!(
                run.stderr.contains(&format!(
                    "cannot load {what} resources from \"missing.yaml\""
                )),
                "{flag}: {}",
                run.stderr
            );
        }
        let run = smoke(&[
            flag,
            "../render-flags/credentials.yaml",
            flag,
            "../render-flags/other-credentials.yaml",
        ]);
        assert_eq!(run.code, 0, "{flag}: {}", run.stderr);
        assert_eq!(run.stdout, plain.stdout, "{flag}");
    }
    // Both flags at once: both read.
    let run = smoke(&[
        "-e",
        "../render-flags/credentials.yaml",
        "--extra-resources",
        "missing.yaml",
    ]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    // The lists add up: two --context-values both reach the context.
    let run = smoke(&["-c", "--context-values", "a=1", "--context-values", "b=2"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("  a: 1\n  b: 2\n"), "{}", run.stdout);
}
