//! Reading the repository configurations from a running Artifactory.
//!
//! `GET <base>/api/repositories/configurations` answers every configuration in one call
//! (Artifactory 7.61.3 and later); where it is missing (404), `GET <base>/api/repositories`
//! lists the keys and `GET <base>/api/repositories/<key>` answers each configuration. TLS is
//! verified against the Mozilla roots that ureq bundles; the token goes only in the
//! `Authorization` header (never to a redirect, ureq's default) and never into a message.

use super::{AdoptArgs, MAX_ANSWER_BYTES};
use super::inventory::configurations_of;
use anyhow::{anyhow, bail, Context as _, Error};
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

/// Where and as whom to read.
pub(super) struct Target {
    /// The Artifactory base URL, ending in `/artifactory`, without a trailing '/'.
    pub base: String,
    token: String,
}

impl Target {
    /// The URL and token from the flags, the environment and the credentials file.
    pub(super) fn from_args(args: &AdoptArgs) -> Result<Target, Error> {
        let env = |names: &[&str]| {
            names
                .iter()
                .find_map(|name| std::env::var(name).ok().filter(|v| !v.trim().is_empty()))
        };
        let credentials = match &args.credentials_file {
            Some(path) => Some(read_credentials(path)?),
            None => None,
        };
        let url = args
            .url
            .clone()
            .or_else(|| env(&["JFROG_URL", "ARTIFACTORY_URL"]))
            .or_else(|| credentials.as_ref().and_then(|c| c.0.clone()))
            .ok_or_else(|| {
                anyhow!("no Artifactory URL; fix: give --url https://host/artifactory, set JFROG_URL, or --credentials-file with a url, or read a saved answer with --from FILE")
            })?;
        let token = match &args.token_file {
            Some(path) => Some(
                std::fs::read_to_string(path)
                    .with_context(|| {
                        format!(
                            "cannot read --token-file {}; fix: give a readable file that holds only the access token",
                            path.display()
                        )
                    })?
                    .trim()
                    .to_owned(),
            ),
            None => env(&["JFROG_ACCESS_TOKEN", "ARTIFACTORY_ACCESS_TOKEN"])
                .or_else(|| credentials.and_then(|c| c.1)),
        }
        .filter(|t| !t.is_empty())
        .ok_or_else(|| {
            anyhow!("no access token for {url}; fix: set JFROG_ACCESS_TOKEN, or give --token-file or --credentials-file (a token is never taken as a flag's value)")
        })?;
        Ok(Target {
            base: base_url(&url)?,
            token,
        })
    }
}

/// The provider's credentials JSON: `url` and `access_token`, each optional here.
fn read_credentials(path: &Path) -> Result<(Option<String>, Option<String>), Error> {
    let text = std::fs::read_to_string(path).with_context(|| {
        format!(
            "cannot read --credentials-file {}; fix: give the provider's credentials JSON file",
            path.display()
        )
    })?;
    let value: Value = serde_json::from_str(&text).map_err(|_| {
        anyhow!(
            "--credentials-file {} is not JSON; fix: give the provider's credentials, {{\"url\": ..., \"access_token\": ...}}",
            path.display()
        )
    })?;
    let field = |name: &str| value.get(name).and_then(Value::as_str).map(str::to_owned);
    Ok((field("url"), field("access_token")))
}

/// `https://host` or `https://host/artifactory/` as `https://host/artifactory`.
fn base_url(url: &str) -> Result<String, Error> {
    let trimmed = url.trim().trim_end_matches('/');
    let Some((scheme, rest)) = trimmed.split_once("://") else {
        bail!("--url {url:?} has no scheme; fix: give https://host/artifactory");
    };
    if !matches!(scheme, "http" | "https") || rest.is_empty() {
        bail!("--url {url:?} is not an http(s) URL; fix: give https://host/artifactory");
    }
    if trimmed.ends_with("/artifactory") {
        Ok(trimmed.to_owned())
    } else {
        Ok(format!("{trimmed}/artifactory"))
    }
}

/// Every repository configuration of the instance.
pub(super) fn fetch(target: &Target, timeout: Duration) -> Result<Vec<Value>, Error> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_per_call(Some(timeout))
        .http_status_as_error(false)
        .user_agent(concat!("function-artifactory/", env!("CARGO_PKG_VERSION")))
        .build()
        .into();
    let configurations = format!("{}/api/repositories/configurations", target.base);
    match get(&agent, target, &configurations, timeout)? {
        Answer::Json(value) => {
            configurations_of(value).map_err(|e| not_documented(&configurations, &e))
        }
        Answer::NotFound => fetch_each(&agent, target, timeout),
    }
}

/// Artifactory before 7.61.3: the list, then each configuration.
fn fetch_each(
    agent: &ureq::Agent,
    target: &Target,
    timeout: Duration,
) -> Result<Vec<Value>, Error> {
    let list_url = format!("{}/api/repositories", target.base);
    let Answer::Json(list) = get(agent, target, &list_url, timeout)? else {
        bail!(
            "{list_url} answered 404 Not Found: neither it nor /api/repositories/configurations is there; fix: check that --url is Artifactory's base URL (https://host/artifactory)"
        );
    };
    let items = list
        .as_array()
        .ok_or_else(|| not_documented(&list_url, "is not a list of repositories"))?;
    let mut configurations = Vec::with_capacity(items.len());
    for item in items {
        let key = item
            .get("key")
            .and_then(Value::as_str)
            .ok_or_else(|| not_documented(&list_url, "has an item without a key"))?;
        let url = format!("{}/api/repositories/{}", target.base, encode(key));
        match get(agent, target, &url, timeout)? {
            Answer::Json(config @ Value::Object(_)) => configurations.push(config),
            Answer::Json(_) => {
                return Err(not_documented(&url, "is not a repository configuration"))
            }
            // Deleted between the list and this call.
            Answer::NotFound => {}
        }
    }
    Ok(configurations)
}

enum Answer {
    Json(Value),
    NotFound,
}

/// One GET: JSON, a 404, or an error that says what happened and what to do.
fn get(
    agent: &ureq::Agent,
    target: &Target,
    url: &str,
    timeout: Duration,
) -> Result<Answer, Error> {
    let response = agent
        .get(url)
        .header("Authorization", format!("Bearer {}", target.token))
        .header("Accept", "application/json")
        .call();
    let mut response = match response {
        Ok(response) => response,
        Err(error) => return Err(transport_error(url, &error, timeout, &target.token)),
    };
    let status = response.status().as_u16();
    let fix = match status {
        200..=299 => None,
        404 => return Ok(Answer::NotFound),
        401 => Some("the access token was refused (expired, revoked or for another instance); fix: give a valid token in JFROG_ACCESS_TOKEN, --token-file or --credentials-file"),
        403 => Some("the token's user may not read repository configurations; fix: use a token of an admin (the provider's own token is one)"),
        500..=599 => Some("Artifactory failed; fix: check its health (GET <base>/api/system/ping) and try again"),
        _ => Some("fix: check that --url is Artifactory's base URL (https://host/artifactory)"),
    };
    if let Some(fix) = fix {
        let reason = response.status().canonical_reason().unwrap_or("");
        bail!("{url} answered {status} {reason}: {fix}");
    }
    let body = response
        .body_mut()
        .with_config()
        .limit(MAX_ANSWER_BYTES)
        .read_to_string()
        .map_err(|error| transport_error(url, &error, timeout, &target.token))?;
    let value = serde_json::from_str(&body)
        .map_err(|e| not_documented(url, &format!("is not JSON ({e})")))?;
    Ok(Answer::Json(value))
}

fn not_documented(url: &str, what: &str) -> Error {
    anyhow!(
        "the answer of {url} {what}, not the repository configuration JSON JFrog documents; fix: check that --url is Artifactory's base URL (https://host/artifactory) and not a proxy's page"
    )
}

/// A failure before or while reading the answer, without the token.
fn transport_error(url: &str, error: &ureq::Error, timeout: Duration, token: &str) -> Error {
    let message = match error {
        ureq::Error::Timeout(_) => format!(
            "{url} did not answer within {}s; fix: check that the host is reachable, or give a longer --timeout",
            timeout.as_secs_f64()
        ),
        ureq::Error::BodyExceedsLimit(limit) => format!(
            "the answer of {url} is larger than {} MiB; fix: read fewer repositories, or save the answer and use --from",
            limit >> 20
        ),
        other => format!(
            "cannot reach {url}: {other}; fix: check the URL, the network and that the server's certificate is trusted (TLS is always verified)"
        ),
    };
    anyhow!(message.replace(token, "<token>"))
}

/// A key as a path segment: every byte outside RFC 3986's unreserved set percent-encoded.
fn encode(key: &str) -> String {
    let mut out = String::with_capacity(key.len());
    for byte in key.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_base_url_ends_in_artifactory() {
        assert_eq!(base_url("https://h").unwrap(), "https://h/artifactory");
        assert_eq!(
            base_url("https://h/artifactory/").unwrap(),
            "https://h/artifactory"
        );
        assert!(base_url("h/artifactory").is_err());
        assert!(base_url("ftp://h").is_err());
    }

    #[test]
    fn keys_are_percent_encoded() {
        assert_eq!(encode("libs-release_1.x"), "libs-release_1.x");
        assert_eq!(encode("a b/c"), "a%20b%2Fc");
    }
}
