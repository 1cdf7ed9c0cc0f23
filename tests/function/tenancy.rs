//! A claim stays inside its team (issue 57; docs/claim.md, "Several teams"): every key it
//! touches inside `allowedKeys`, Secrets from its own namespace only. Each attack of the issue,
//! as a hostile claim's author would try it, through the server over gRPC for the cluster,
//! namespaced and flat provider APIs, with the legitimate form next to it.

use crate::support;

use function_artifactory::proto::v1::{RunFunctionResponse, Severity};
use serde_json::{json, Value};
use support::requests::{
    assert_valid, composite, desired_resources, fatal_message, input, namespaced_composite,
    request, RequestBuilder,
};
use support::server::Function;

/// One provider API as these tests need it.
#[derive(Clone, Copy)]
struct Api {
    /// Its name, which is also the folder of its CRDs.
    name: &'static str,
    /// A namespaced composite (the namespaced API), else a claim's cluster-scoped composite.
    namespaced: bool,
}

const APIS: [Api; 3] = [
    Api {
        name: "cluster",
        namespaced: false,
    },
    Api {
        name: "namespaced",
        namespaced: true,
    },
    Api {
        name: "flat",
        namespaced: false,
    },
];

impl Api {
    /// The team's namespace placeholder: the claim's, or the namespaced composite's own.
    fn bound(self) -> &'static str {
        if self.namespaced {
            "{namespace}-*"
        } else {
            "{claimNamespace}-*"
        }
    }

    /// A request of team1's composite with `entries` and the input's `fields`.
    fn request(self, spec: Value, fields: Value) -> RequestBuilder {
        let mut fields = fields;
        fields["providerApi"] = json!(self.name);
        let composite = if self.namespaced {
            namespaced_composite(spec)
        } else {
            composite(spec)
        };
        request(composite).input(input(fields))
    }

    fn bounded(self, spec: Value) -> RequestBuilder {
        self.request(spec, json!({"allowedKeys": self.bound()}))
    }
}

fn local(name: &str) -> Value {
    json!({"name": name, "rclass": "local", "packageType": "maven"})
}

/// The fatal message, which must be there.
fn refused(response: &RunFunctionResponse) -> String {
    let message = fatal_message(response).expect("a fatal result");
    let desired = response.desired.as_ref().expect("the desired state");
    assert!(desired.resources.is_empty(), "nothing is rendered");
    message
}

/// Rendered without problems, each resource valid against the API's CRDs.
fn accepted(api: Api, response: &RunFunctionResponse) -> std::collections::BTreeMap<String, Value> {
    let resources = desired_resources(response);
    assert!(assert_valid(api.name, &resources) || resources.is_empty());
    resources
}

fn assert_has(text: &str, part: &str) {
    assert!(text.contains(part), "{part:?} is not in:\n{text}");
}

/// The bound as messages name it, for team1.
fn bound_words(api: Api) -> String {
    let placeholder = if api.namespaced {
        "namespace"
    } else {
        "claimNamespace"
    };
    format!(
        "is outside the keys this composite may use: the function's input allows only keys matching allowedKeys \"{{{placeholder}}}-*\", here \"team1-*\" ({{{placeholder}}} is \"team1\")"
    )
}

// ---- 1. every key of the claim inside the bound ----------------------------------

#[tokio::test]
async fn a_computed_key_outside_the_bound_is_refused() {
    let mut function = Function::start().await;
    for api in APIS {
        // Attack: the claim chooses projectKey, and so the key the default format computes.
        let spec = json!({"projectKey": "payments", "repositories": [local("mirror")]});
        let message = refused(&function.call(api.bounded(spec)).await);
        assert_has(
            &message,
            &format!("spec.repositories[0].name: repository \"mirror\": key \"payments-mirror\" (from naming format \"{{projectKey}}-{{name}}\") {}", bound_words(api)),
        );
        assert_has(&message, "fix: the naming format \"{projectKey}-{name}\" is filled with the entry's name and the claim's spec.projectKey: choose them so that the key matches \"team1-*\", or set key to one that does");
        // Without a project key, `{name}`: a team squatting another team's future key.
        let spec = json!({"repositories": [local("team2-libs")]});
        let message = refused(&function.call(api.bounded(spec)).await);
        assert_has(
            &message,
            "key \"team2-libs\" (from naming format \"{name}\")",
        );
        // The team's own project key, and a name with the team's prefix: inside.
        let spec = json!({"projectKey": "team1", "repositories": [
            local("mirror"),
            {"name": "libs", "rclass": "local", "packageType": "maven", "key": "TEAM1-libs"}
        ]});
        let resources = accepted(api, &function.call(api.bounded(spec)).await);
        let key = |name: &str| {
            resources[name]["metadata"]["annotations"]["crossplane.io/external-name"].clone()
        };
        assert_eq!(key("mirror"), "team1-mirror", "{}", api.name);
        assert_eq!(
            key("libs"),
            "TEAM1-libs",
            "case is ignored, as Artifactory ignores it"
        );
    }
}

#[tokio::test]
async fn a_given_or_imported_key_outside_the_bound_is_refused() {
    let mut function = Function::start().await;
    for api in APIS {
        let spec = json!({"repositories": [
            {"name": "mine", "rclass": "local", "packageType": "maven", "key": "team1-mine"},
            {"name": "theirs", "rclass": "local", "packageType": "maven", "key": "team2-libs", "import": true}
        ]});
        let message = refused(&function.call(api.bounded(spec)).await);
        assert_has(
            &message,
            &format!("spec.repositories[1].key: repository \"theirs\": key \"team2-libs\" (from key) {}; fix: use a key that matches \"team1-*\", or ask the platform team that owns the Composition to allow this one", bound_words(api)),
        );
        assert!(!message.contains("team1-mine"), "{message}");
        assert!(
            message.contains("1 problem") || !message.contains("problems"),
            "{message}"
        );
    }
}

#[tokio::test]
async fn a_virtual_names_only_keys_inside_the_bound() {
    let mut function = Function::start().await;
    for api in APIS {
        // Attack: another team's repository as a member, and as the default deployment
        // repository, written where the provider takes it (forProvider).
        let spec = json!({"repositories": [
            {"name": "team1-libs", "rclass": "local", "packageType": "maven"},
            {"name": "team1-all", "rclass": "virtual", "packageType": "maven",
             "repositories": ["team1-libs"], "externalRepositories": ["team1-shared", "team2-libs"]},
            {"name": "team1-raw", "rclass": "virtual", "packageType": "maven",
             "forProvider": {"repositories": ["team2-libs"], "defaultDeploymentRepo": "team2-libs"}}
        ]});
        let message = refused(&function.call(api.bounded(spec)).await);
        let words = bound_words(api);
        for (path, name) in [
            ("spec.repositories[1].externalRepositories[1]", "team1-all"),
            (
                "spec.repositories[2].forProvider.repositories[0]",
                "team1-raw",
            ),
            (
                "spec.repositories[2].forProvider.defaultDeploymentRepo",
                "team1-raw",
            ),
        ] {
            assert_has(
                &message,
                &format!("{path}: repository \"{name}\": repository key \"team2-libs\" {words}; fix: name only repositories whose keys match \"team1-*\""),
            );
        }
        assert!(!message.contains("\"team1-shared\""), "{message}");
        assert_has(&message, "3 problems");
        // The team's own keys, outside the claim too: inside.
        let spec = json!({"repositories": [
            {"name": "team1-libs", "rclass": "local", "packageType": "maven"},
            {"name": "team1-all", "rclass": "virtual", "packageType": "maven",
             "repositories": ["team1-libs"], "externalRepositories": ["team1-shared"]},
            {"name": "team1-raw", "rclass": "virtual", "packageType": "maven",
             "forProvider": {"repositories": ["team1-shared"], "defaultDeploymentRepo": "team1-shared"}}
        ]});
        let resources = accepted(api, &function.call(api.bounded(spec)).await);
        // team1-all waits for team1-libs to be created; team1-raw names no entry.
        assert_eq!(
            resources["team1-raw"]["spec"]["forProvider"]["defaultDeploymentRepo"],
            "team1-shared"
        );
    }
}

/// The Warning result of the input, if any, that says the bound bounds nothing.
fn bound_warning(response: &RunFunctionResponse) -> Option<String> {
    response
        .results
        .iter()
        .find(|r| r.severity == Severity::Warning as i32 && r.message.contains("bounds nothing"))
        .map(|r| r.message.clone())
}

#[tokio::test]
async fn a_bound_of_placeholders_the_claim_chooses_is_warned_about() {
    let mut function = Function::start().await;
    for api in APIS {
        let spec = json!({"projectKey": "payments", "repositories": [local("mirror")]});
        let response = function
            .call(api.request(spec.clone(), json!({"allowedKeys": "{projectKey}-*"})))
            .await;
        // The claim chose its own bound: accepted, and the platform is told.
        accepted(api, &response);
        let warning = bound_warning(&response).expect("a warning");
        assert_eq!(warning, "input.allowedKeys: allowedKeys \"{projectKey}-*\" is made only of placeholders that the claim's author chooses ({projectKey}): a claim can set them to reach any key, so it bounds nothing; use {claimNamespace} (a claim's namespace) or {namespace} (a namespaced composite's), which the platform controls, as in \"{claimNamespace}-*\"");
        let spec = json!({"repositories": [
            {"name": "libs", "rclass": "local", "packageType": "maven", "key": "team1-repos-x7k2p-libs"}
        ]});
        let response = function
            .call(api.request(spec, json!({"allowedKeys": "{xrName}*"})))
            .await;
        accepted(api, &response);
        assert!(bound_warning(&response).is_some(), "{}", api.name);
        // A bound of the team's namespace: no warning.
        let spec = json!({"projectKey": "team1", "repositories": [local("mirror")]});
        let response = function.call(api.bounded(spec)).await;
        accepted(api, &response);
        assert_eq!(bound_warning(&response), None);
    }
}

// ---- 2. Secrets from the claim's own namespace --------------------------------

fn remote(secret_ref: Value, for_provider: Value) -> Value {
    json!({"repositories": [{
        "name": "team1-central", "rclass": "remote", "packageType": "maven",
        "url": "https://upstream.example.com/maven", "username": "ci",
        "password": {"secretRef": secret_ref}, "forProvider": for_provider
    }]})
}

fn secret(namespace: Option<&str>) -> Value {
    let mut reference = json!({"name": "upstream", "key": "password"});
    if let Some(namespace) = namespace {
        reference["namespace"] = json!(namespace);
    }
    reference
}

fn password_ref(resources: &std::collections::BTreeMap<String, Value>) -> &Value {
    &resources["team1-central"]["spec"]["forProvider"]["passwordSecretRef"]
}

#[tokio::test]
async fn a_claim_references_secrets_in_its_own_namespace_only() {
    let mut function = Function::start().await;
    for api in APIS {
        // Attack: the provider's own credentials, sent as basic auth to a url the claim chose.
        let spec = remote(secret(Some("crossplane-system")), json!({}));
        let message = refused(&function.call(api.request(spec, json!({}))).await);
        let expected = if api.namespaced {
            "spec.repositories[0].password.secretRef.namespace: repository \"team1-central\": the Secret's namespace \"crossplane-system\" is not the composite's (team1)".to_owned()
        } else {
            "spec.repositories[0].password.secretRef.namespace: repository \"team1-central\": the Secret's namespace \"crossplane-system\" is not the claim's (\"team1\"): the provider reads a Secret in any namespace and sends its value to the upstream, so a claim references Secrets in its own namespace only; fix: put the Secret in namespace \"team1\" and name no other namespace, or ask the platform team to list \"crossplane-system\" in the function input's allowedSecretNamespaces".to_owned()
        };
        assert_has(&message, &expected);
        // Attack: the provider's field itself, past the entry's password.
        let reference = if api.namespaced {
            json!({"name": "artifactory-credentials", "key": "credentials"})
        } else {
            json!({"name": "artifactory-credentials", "key": "credentials", "namespace": "kube-system"})
        };
        for field in ["passwordSecretRef", "passwordWoSecretRef"] {
            let spec = remote(secret(None), json!({field: reference}));
            let message = refused(&function.call(api.request(spec, json!({}))).await);
            assert_has(&message, &format!("spec.repositories[0].forProvider.{field}: repository \"team1-central\": a claim may not set forProvider.{field}: it names a Secret in any namespace, which the provider reads and sends to the upstream; fix: remove it, and give the password as password: {{secretRef: {{name, key}}}} of a Secret in the claim's namespace \"team1\""));
        }
        // The claim's own namespace, named or not: accepted.
        for namespace in [None, Some("team1")] {
            let spec = remote(secret(namespace), json!({}));
            let resources = accepted(api, &function.call(api.request(spec, json!({}))).await);
            let expected = if api.namespaced {
                json!({"name": "upstream", "key": "password"})
            } else {
                json!({"name": "upstream", "key": "password", "namespace": "team1"})
            };
            assert_eq!(password_ref(&resources), &expected, "{}", api.name);
        }
    }
}

#[tokio::test]
async fn the_platform_may_allow_other_secret_namespaces() {
    let mut function = Function::start().await;
    let allowed = json!({"allowedSecretNamespaces": ["shared-mirrors"]});
    for api in APIS {
        let spec = remote(secret(Some("shared-mirrors")), json!({}));
        let response = function.call(api.request(spec, allowed.clone())).await;
        if api.namespaced {
            // The namespaced API's references are local: no list can reach another namespace.
            assert_has(
                &refused(&response),
                "the Secret's namespace \"shared-mirrors\" is not the composite's (team1)",
            );
            continue;
        }
        let resources = accepted(api, &response);
        assert_eq!(password_ref(&resources)["namespace"], "shared-mirrors");
        // Only those listed.
        let spec = remote(secret(Some("crossplane-system")), json!({}));
        let message = refused(&function.call(api.request(spec, allowed.clone())).await);
        assert_has(
            &message,
            "the Secret's namespace \"crossplane-system\" is not the claim's (\"team1\")",
        );
    }
}

#[tokio::test]
async fn every_secret_reference_of_a_claim_names_its_namespace() {
    let mut function = Function::start().await;
    // A federated member's token (the cluster API's references carry a namespace).
    let api = APIS[0];
    let spec = json!({"repositories": [{
        "name": "team1-fed", "rclass": "federated", "packageType": "maven",
        "members": [{"url": "https://eu.example.com/artifactory/team1-fed", "enabled": true,
                     "accessTokenSecretRef": {"name": "artifactory-credentials", "key": "token", "namespace": "crossplane-system"}}]
    }]});
    let message = refused(&function.call(api.request(spec, json!({}))).await);
    assert_has(&message, "spec.repositories[0].members[0].accessTokenSecretRef.namespace: repository \"team1-fed\": the Secret's namespace \"crossplane-system\" is not the claim's (\"team1\")");
    let spec = json!({"repositories": [{
        "name": "team1-fed", "rclass": "federated", "packageType": "maven",
        "members": [{"url": "https://eu.example.com/artifactory/team1-fed", "enabled": true,
                     "accessTokenSecretRef": {"name": "eu-token", "key": "token", "namespace": "team1"}}]
    }]});
    accepted(api, &function.call(api.request(spec, json!({}))).await);
}

#[tokio::test]
async fn a_composite_that_is_no_claim_keeps_its_references() {
    let mut function = Function::start().await;
    // Cluster-scoped, without claim labels: the platform wrote it, and names any namespace.
    for api in [APIS[0], APIS[2]] {
        let spec = remote(secret(Some("crossplane-system")), json!({}));
        let mut request = api.request(spec, json!({})).build();
        let observed = request.observed.as_mut().unwrap();
        let resource = observed.composite.as_mut().unwrap();
        let mut xr = resource.resource.take().unwrap().into_value();
        xr["metadata"].as_object_mut().unwrap().remove("labels");
        resource.resource = Some(function_artifactory::proto::Struct::from_value(xr));
        let resources = accepted(api, &function.call(request.into()).await);
        assert_eq!(password_ref(&resources)["namespace"], "crossplane-system");
    }
}
