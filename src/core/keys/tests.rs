use super::*;

fn entry(name: &str) -> Entry<'_> {
    Entry {
        index: 0,
        name: Some(name),
        ..Entry::default()
    }
}

fn problems(key: &str, rclass: Rclass, package_type: &str) -> Vec<String> {
    let mut findings = Findings::default();
    check_key(
        key,
        &entry("e"),
        rclass,
        package_type,
        "computed",
        &mut findings,
    );
    findings
        .problems
        .iter()
        .map(|p| p.message.clone())
        .collect()
}

#[test]
fn the_one_pass_scan_agrees_with_the_character_rules() {
    for code in 0u8..=255 {
        let c = char::from(code);
        assert_eq!(
            is_forbidden(c),
            c.is_whitespace() || FORBIDDEN.contains(c),
            "{code:#x}"
        );
    }
    for key in [
        "libs-release",
        "Libs_Release",
        "a b",
        "tab\there",
        "vt\u{b}x",
        "x\u{a0}y",
        "ünïcode",
        "ÜBER",
        "ok.key-1",
        "q?",
        "",
        "日本",
    ] {
        let scan = KeyScan::of(key);
        assert_eq!(scan.length, key.chars().count(), "{key:?}");
        assert_eq!(
            scan.forbidden,
            key.chars()
                .any(|c| c.is_whitespace() || FORBIDDEN.contains(c)),
            "{key:?}"
        );
        assert_eq!(
            scan.upper_or_underscore,
            key.chars().any(|c| c.is_uppercase() || c == '_'),
            "{key:?}"
        );
        assert_eq!(lower_case(key), key.to_lowercase(), "{key:?}");
        let label_characters = key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
        assert_eq!(
            byte_classes(key) & NOT_IN_LABEL == 0,
            label_characters,
            "{key:?}"
        );
    }
}

#[test]
fn template_fills_every_placeholder() {
    let meta = CompositeMeta {
        name: "xr".into(),
        namespace: Some("ns".into()),
        claim_name: Some("c".into()),
        claim_namespace: Some("cns".into()),
        ..CompositeMeta::default()
    };
    let mut findings = Findings::default();
    let format = "{projectKey}-{name}-{packageType}-{rclass}-{xrName}-{namespace}-{claimName}-{claimNamespace}";
    let template =
        Template::parse(format, &meta, Some("p"), SettingsAt::Input, &mut findings).unwrap();
    assert_eq!(
        template.fill("n", Rclass::Local, "maven", &meta, Some("p")),
        "p-n-maven-local-xr-ns-c-cns"
    );
}

#[test]
fn template_errors() {
    let meta = CompositeMeta::default();
    let mut findings = Findings::default();
    assert!(Template::parse(
        "{nme}-{projectKey}-{claimName}",
        &meta,
        None,
        SettingsAt::Input,
        &mut findings
    )
    .is_none());
    let messages: Vec<&str> = findings
        .problems
        .iter()
        .map(|p| p.message.as_str())
        .collect();
    assert_eq!(messages.len(), 3);
    assert!(messages[0].contains("unknown placeholder {nme}"));
    assert!(messages[1].contains("{projectKey}, which has no value"));
    assert!(Template::parse("{name", &meta, None, SettingsAt::Input, &mut findings).is_none());
}

#[test]
fn length_limits_per_class_and_type() {
    assert!(problems(&"a".repeat(64), Rclass::Local, "maven").is_empty());
    assert!(problems(&"a".repeat(65), Rclass::Local, "maven")[0].contains("at most 64"));
    assert!(problems(&"a".repeat(59), Rclass::Remote, "maven")[0].contains("at most 58"));
    assert!(problems(&"a".repeat(64), Rclass::Local, "dockerv2")[0].contains("at most 63"));
    assert!(problems(&"a".repeat(64), Rclass::Federated, "oci")[0].contains("at most 63"));
    assert!(problems(&"a".repeat(64), Rclass::Virtual, "docker").is_empty());
}

#[test]
fn characters_case_and_reserved_names() {
    assert!(problems(" a", Rclass::Local, "maven")[0].contains("white space"));
    assert!(problems("a/b", Rclass::Local, "maven")[0].contains("'/'"));
    assert!(problems("Libs_A", Rclass::Local, "dockerv2")[0].contains("upper case or '_'"));
    assert!(problems("Libs_A", Rclass::Local, "maven").is_empty());
    assert!(problems("NGINX", Rclass::Local, "maven")[0].contains("reserved"));
    assert!(problems("jfrog-system-reserved-x", Rclass::Local, "maven")[0].contains("starts with"));
    assert!(problems("libs-cache", Rclass::Local, "maven")[0].contains("-cache"));
}

#[test]
fn label_values() {
    assert_eq!(key_label_value("Team1-Libs"), "team1-libs");
    let long = key_label_value(&"a".repeat(64));
    assert!(long.starts_with("sha256-") && long.len() == 63 && is_label_value(&long));
    assert_eq!(key_label_value("a'b"), key_label_value("A'B"));
    // The Kelvin sign lower-cases to ASCII 'k'.
    assert_eq!(key_label_value("\u{212a}ey"), "key");
}
