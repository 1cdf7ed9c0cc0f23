//! The server with `--debug` (issue 18): a request that carries credentials and a
//! required Secret is answered and logged without any of their values.
#![cfg(feature = "server")]

use crate::support;

use function_artifactory::proto::v1::function_runner_service_client::FunctionRunnerServiceClient;
use function_artifactory::proto::v1::{
    credentials, Capability, CredentialData, Credentials, RequestMeta, Resource, Resources,
    RunFunctionRequest, State,
};
use function_artifactory::proto::Struct;
use serde_json::json;
use std::collections::BTreeMap;
use std::time::Duration;
use support::server::{insecure_channel, Server};

const TOKEN: &str = "tok-51de-Never-Log-Me";
const PASSWORD: &str = "pw-0b7e-Never-Log-Me";

fn request() -> RunFunctionRequest {
    let composite = json!({
        "apiVersion": "platform.example.org/v1alpha1", "kind": "Repositories",
        "metadata": {"name": "repos", "namespace": "team1"},
        "spec": {"repositories": [{
            "name": "vendor", "rclass": "remote", "packageType": "maven",
            "url": "https://maven.vendor.example.com/releases", "username": "ci",
            "password": {"secretRef": {"name": "vendor", "key": "password"}}
        }]}
    });
    let secret = json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "vendor", "namespace": "team1", "resourceVersion": "7"},
        "stringData": {"password": PASSWORD}
    });
    RunFunctionRequest {
        meta: Some(RequestMeta {
            tag: "secrets".into(),
            capabilities: vec![Capability::RequiredResources as i32],
        }),
        observed: Some(State {
            composite: Some(Resource {
                resource: Some(Struct::from_value(composite)),
                ..Resource::default()
            }),
            ..State::default()
        }),
        input: Some(Struct::from_value(json!({
            "apiVersion": "artifactory.fn.crossplane.io/v1beta1", "kind": "Input",
            "writeOnlyPasswords": true
        }))),
        credentials: BTreeMap::from([(
            "admin".to_owned(),
            Credentials {
                source: Some(credentials::Source::CredentialData(CredentialData {
                    data: BTreeMap::from([("token".to_owned(), TOKEN.as_bytes().to_vec())]),
                })),
            },
        )]),
        // The call that renders: the Secret answered, and no managed resource holding the key.
        required_resources: BTreeMap::from([
            (
                "artifactory-password-vendor".to_owned(),
                Resources {
                    items: vec![Resource {
                        resource: Some(Struct::from_value(secret)),
                        ..Resource::default()
                    }],
                },
            ),
            ("artifactory-key-vendor".to_owned(), Resources::default()),
        ]),
        ..RunFunctionRequest::default()
    }
}

#[tokio::test]
async fn debug_logs_and_responses_carry_no_secret_value() {
    let server = Server::start(&["--insecure", "--debug"]);
    let mut client = FunctionRunnerServiceClient::new(insecure_channel(&server).await);
    let response = client.run_function(request()).await.unwrap().into_inner();
    server
        .wait_for_log(Duration::from_secs(5), |l| {
            l["message"] == "RunFunction" && l["tag"] == "secrets"
        })
        .unwrap_or_else(|| panic!("no call line; log: {:#?}", server.log()));
    let desired = &response.desired.as_ref().unwrap().resources["vendor"];
    let rendered = desired.resource.clone().unwrap().into_value();
    assert_eq!(rendered["spec"]["forProvider"]["username"], "ci");
    let everything = format!("{response:?}\n{}", server.log().join("\n"));
    for secret in [TOKEN, PASSWORD] {
        assert!(
            !everything.contains(secret),
            "{secret} leaked:\n{everything}"
        );
    }
    assert!(!everything.contains("Never-Log"), "{everything}");
}
