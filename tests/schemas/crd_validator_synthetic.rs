//! The validator against small CRDs written here, for the schema features the provider's
//! CRDs do not use (patterns, list maps, maps, escaping, broken rules) and for load errors.

use crate::support;

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

use serde_json::{json, Value};
use support::crd::Crds;

const WIDGET_CRD: &str = r#"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.test.example.org
spec:
  group: test.example.org
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        required: [spec]
        properties:
          apiVersion: {type: string}
          kind: {type: string}
          metadata: {type: object}
          spec:
            type: object
            x-kubernetes-validations:
            - rule: self.mode == 'auto' || has(self.size)
              message: size is required unless mode is auto
            - rule: "!has(self.__namespace__) || self.__namespace__ != 'kube-system'"
              message: namespace must not be kube-system
            - rule: "!has(self.ratio) || self.ratio < 1.5"
              message: ratio must be below 1.5
            properties:
              mode: {type: string, default: auto, enum: [auto, manual]}
              namespace: {type: string}
              size: {type: integer}
              ratio: {type: number}
              name: {type: string, minLength: 3, maxLength: 8, pattern: '^[a-z]+$'}
              tags:
                type: array
                maxItems: 2
                items: {type: string}
                x-kubernetes-list-type: set
              ports:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [name]
                items:
                  type: object
                  required: [name]
                  properties:
                    name: {type: string}
                    port: {type: integer, default: 80}
                  x-kubernetes-validations:
                  - rule: self.port > 0
                    message: port must be positive
              selector:
                type: object
                additionalProperties: {type: string}
              extra:
                type: object
                x-kubernetes-preserve-unknown-fields: true
              strict:
                type: object
                properties:
                  a: {type: string}
                x-kubernetes-validations:
                - rule: self.a == 'x'
                  message: a must be x
              label:
                type: string
                x-kubernetes-validations:
                - rule: self.startsWith('a')
                  messageExpression: "'label ' + self + ' must start with a'"
              broken:
                type: string
                x-kubernetes-validations:
                - rule: "self =="
                  message: never shown
              transition:
                type: string
                x-kubernetes-validations:
                - rule: self == oldSelf
                  message: immutable
          status:
            type: object
"#;

/// A fresh directory holding `files`, removed again when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn with(name: &str, files: &[(&str, &str)]) -> TempDir {
        // Tests run in parallel: a counter keeps their directories apart.
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let unique = format!("crdcheck-{}-{n}-{name}", std::process::id());
        let dir = std::env::temp_dir().join(unique);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        for (file, text) in files {
            std::fs::write(dir.join(file), text).unwrap();
        }
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The widget CRD, loaded once; `notes.txt` shows that only *.yaml files are read.
fn widgets() -> &'static Crds {
    static CRDS: OnceLock<Crds> = OnceLock::new();
    CRDS.get_or_init(|| {
        let files = [("widget.yaml", WIDGET_CRD), ("notes.txt", "ignored")];
        let dir = TempDir::with("widgets", &files);
        Crds::load_dir(&dir.0).unwrap()
    })
}

fn widget(spec: Value) -> Value {
    json!({
        "apiVersion": "test.example.org/v1",
        "kind": "Widget",
        "metadata": {"name": "w1", "namespace": "default"},
        "spec": spec,
    })
}

fn errors(spec: Value) -> Vec<String> {
    widgets().validate(&widget(spec))
}

#[test]
fn kinds_lists_api_version_kind_and_scope() {
    let expected = vec![(
        "test.example.org/v1".into(),
        "Widget".into(),
        "Namespaced".into(),
    )];
    assert_eq!(widgets().kinds(), expected);
}

#[test]
fn defaults_apply_before_cel() {
    // mode defaults to auto, so size is not needed; ports[0].port defaults to 80 (> 0).
    assert_eq!(
        errors(json!({"ports": [{"name": "http"}]})),
        Vec::<String>::new()
    );
    let manual = errors(json!({"mode": "manual"}));
    assert_eq!(manual, ["spec: size is required unless mode is auto"]);
}

#[test]
fn null_takes_the_default_or_is_reported() {
    assert_eq!(errors(json!({"mode": null})), Vec::<String>::new());
    let null_size = errors(json!({"size": null}));
    assert_eq!(
        null_size,
        ["spec.size: must not be null (the API server would drop it)"]
    );
}

#[test]
fn number_fields_accept_integers_and_are_doubles_in_cel() {
    assert_eq!(errors(json!({"ratio": 1})), Vec::<String>::new());
    assert_eq!(errors(json!({"ratio": 1.25})), Vec::<String>::new());
    assert_eq!(
        errors(json!({"ratio": 2})),
        ["spec: ratio must be below 1.5"]
    );
}

#[test]
fn integer_fields_reject_fractions() {
    let found = errors(json!({"size": 1.5}));
    assert_eq!(
        found[0],
        "spec.size: expected integer, got non-integer number"
    );
}

#[test]
fn reserved_property_names_are_escaped_for_cel() {
    let found = errors(json!({"namespace": "kube-system"}));
    assert_eq!(found, ["spec: namespace must not be kube-system"]);
}

#[test]
fn string_length_and_pattern_are_checked() {
    assert_eq!(errors(json!({"name": "abcd"})), Vec::<String>::new());
    assert_eq!(
        errors(json!({"name": "ab"})),
        ["spec.name: must have at least 3 characters"]
    );
    let long = errors(json!({"name": "abcdefghi"}));
    assert_eq!(long, ["spec.name: must have at most 8 characters"]);
    let upper = errors(json!({"name": "Abcd"}));
    assert_eq!(
        upper,
        ["spec.name: \"Abcd\" does not match pattern \"^[a-z]+$\""]
    );
}

#[test]
fn list_types_and_sizes_are_checked() {
    let tags = errors(json!({"tags": ["a", "b", "a"]}));
    assert_eq!(
        tags,
        [
            "spec.tags: must have at most 2 items",
            "spec.tags[2]: duplicate entry \"a\" in a set",
        ]
    );
    let ports = errors(json!({"ports": [{"name": "http"}, {"name": "http", "port": 81}]}));
    assert_eq!(
        ports,
        ["spec.ports[1]: duplicate entry with key name=\"http\""]
    );
}

#[test]
fn rules_run_on_list_items_with_their_path() {
    let found = errors(json!({"ports": [{"name": "http", "port": 0}]}));
    assert_eq!(found, ["spec.ports[0]: port must be positive"]);
}

#[test]
fn maps_and_preserved_fields_follow_their_schema() {
    let ok = json!({"selector": {"team": "a"}, "extra": {"anything": {"goes": [1]}}});
    assert_eq!(errors(ok), Vec::<String>::new());
    let bad = errors(json!({"selector": {"team": 1}}));
    assert_eq!(bad[0], "spec.selector[team]: expected string, got number");
}

#[test]
fn message_expression_is_used_when_present() {
    let found = errors(json!({"label": "blue"}));
    assert_eq!(found, ["spec.label: label blue must start with a"]);
}

#[test]
fn rules_that_cannot_run_are_reported_not_passed() {
    let broken = errors(json!({"broken": "x"}));
    assert_eq!(broken.len(), 1, "{broken:?}");
    assert!(
        broken[0].starts_with("spec.broken: rule \"self ==\": does not compile"),
        "{broken:?}"
    );

    // `self.a` is absent: evaluating the rule fails, which must show.
    let missing = errors(json!({"strict": {}}));
    assert_eq!(missing.len(), 1, "{missing:?}");
    assert!(missing[0].starts_with("spec.strict: rule \"self.a == 'x'\": evaluation failed"));

    let transition = errors(json!({"transition": "x"}));
    assert_eq!(transition.len(), 1, "{transition:?}");
    assert!(transition[0].contains("transition rules (oldSelf) are not supported"));
}

#[test]
fn metadata_is_checked_as_object_meta() {
    let crds = widgets();
    let mut object = widget(json!({}));
    object["metadata"] = json!({
        "name": "Not_A_Name",
        "generateName": "w-",
        "namespace": "default",
        "labels": {"example.org/ok": "", "bad key!": "x", "n": 3},
        "annotations": {"crossplane.io/external-name": "Any value at all!", "/x": "y"},
        "finalizers": ["example.org/cleanup"],
        "ownerReferences": [{"apiVersion": "v1", "kind": "X", "name": "x", "uid": "1", "extra": 1}],
        "managedFields": []
    });
    let found = crds.validate(&object);
    let prefixes = [
        "metadata.annotations[/x]: invalid annotation key",
        "metadata.labels[bad key!]: invalid label key",
        "metadata.labels[n]: expected string, got number",
        "metadata.managedFields: unknown or unsupported metadata field",
        "metadata.name: invalid name \"Not_A_Name\"",
        "metadata.ownerReferences[0].extra: unknown field",
    ];
    assert_eq!(found.len(), prefixes.len(), "{found:#?}");
    for (error, prefix) in found.iter().zip(prefixes) {
        assert!(
            error.starts_with(prefix),
            "{error:?} should start with {prefix:?}"
        );
    }
}

#[test]
fn long_label_values_are_rejected() {
    let crds = widgets();
    let mut object = widget(json!({}));
    object["metadata"]["labels"] = json!({"a": "x".repeat(63)});
    assert_eq!(crds.validate(&object), Vec::<String>::new());
    object["metadata"]["labels"] = json!({"a": "x".repeat(64)});
    assert!(crds.validate(&object)[0].starts_with("metadata.labels[a]: invalid label value"));
}

#[test]
fn status_is_ignored_and_unknown_top_level_fields_are_not() {
    let crds = widgets();
    let mut object = widget(json!({}));
    object["status"] = json!({"anything": true});
    assert_eq!(crds.validate(&object), Vec::<String>::new());
    object["data"] = json!({});
    assert_eq!(crds.validate(&object), ["data: unknown field"]);
}

#[test]
fn non_objects_and_unknown_kinds_are_reported() {
    let crds = widgets();
    assert_eq!(
        crds.validate(&json!([])),
        ["<root>: expected object, got array"]
    );
    let mut object = widget(json!({}));
    object["kind"] = json!("Gadget");
    let found = crds.validate(&object);
    assert_eq!(
        found,
        ["apiVersion/kind: \"test.example.org/v1\" \"Gadget\" is not served by any loaded CRD; kinds of test.example.org/v1: Widget"]
    );
}

#[test]
fn load_errors_name_the_file() {
    let not_crd = TempDir::with(
        "not-crd",
        &[("cm.yaml", "apiVersion: v1\nkind: ConfigMap\n")],
    );
    let error = Crds::load_dir(&not_crd.0).unwrap_err();
    assert!(
        error.contains("cm.yaml: not a CustomResourceDefinition"),
        "{error}"
    );

    let bad_yaml = TempDir::with("bad-yaml", &[("bad.yaml", "spec: [unclosed\n")]);
    let error = Crds::load_dir(&bad_yaml.0).unwrap_err();
    assert!(error.contains("bad.yaml: invalid YAML"), "{error}");

    let twice = TempDir::with("twice", &[("a.yaml", WIDGET_CRD), ("b.yaml", WIDGET_CRD)]);
    let error = Crds::load_dir(&twice.0).unwrap_err();
    assert!(
        error.contains("b.yaml") && error.contains("also defined by") && error.contains("a.yaml"),
        "{error}"
    );

    let empty = TempDir::with("empty", &[]);
    let error = Crds::load_dir(&empty.0).unwrap_err();
    assert!(error.contains("no *.yaml CRD found"), "{error}");

    let missing = Crds::load_dir(&not_crd.0.join("missing")).unwrap_err();
    assert!(missing.contains("missing"), "{missing}");
}
