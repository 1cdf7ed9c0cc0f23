//! Reading the repository configurations from a running Artifactory.
//!
//! `GET <base>/api/repositories/configurations` answers every configuration in one call
//! (Artifactory 7.61.3 and later); where it is missing (404), `GET <base>/api/repositories`
//! lists the keys and `GET <base>/api/repositories/<key>` answers each configuration.
//!
//! What the network cannot do to the claims or the token (docs/adopt.md, "Export"): TLS is
//! verified against the system's trust store (`SSL_CERT_FILE`, `SSL_CERT_DIR`, else the
//! distribution's bundle) and `--ca-file`, or Mozilla's roots where the system has none; no
//! redirect is followed; plain `http://` is refused unless `--allow-http` says the network is
//! trusted; a URL's user and password are refused and never printed; the token goes only in
//! the `Authorization` header and never into a message; every answer and all of the per-key
//! answers together are read up to the answer limit, and the per-key path within
//! `--total-timeout`.

use super::inventory::{read_configurations, shown, Adopter};
use super::AdoptArgs;
use anyhow::{anyhow, bail, Context as _, Error};
use serde_json::Value;
use std::path::Path;
use std::time::{Duration, Instant};

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
        let base = base_url(&url)?;
        let token = match &args.token_file {
            // The path is never printed: a token given by mistake as the path would be.
            Some(path) => Some(
                std::fs::read_to_string(path)
                    .map_err(|e| {
                        anyhow!(
                            "cannot read the file given to --token-file ({}; the value is not shown, in case it is a token); fix: give the path of a readable file that holds only the access token",
                            e.kind()
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
            anyhow!("no access token for {base}; fix: set JFROG_ACCESS_TOKEN, or give --token-file or --credentials-file (a token is never taken as a flag's value)")
        })?;
        if !token.bytes().all(|b| b.is_ascii_graphic()) {
            bail!("the access token holds a space or a control character (not shown); fix: give the token alone, as JFrog printed it");
        }
        if base.starts_with("http://") && !args.allow_http {
            bail!(
                "{base} is plain HTTP: the admin token and every repository's settings would cross the network readable and changeable by anyone on the path; fix: use https://, or add --allow-http where the network is trusted (a loopback, a private link)"
            );
        }
        Ok(Target { base, token })
    }
}

/// The provider's credentials JSON: `url` and `access_token`, each optional here.
fn read_credentials(path: &Path) -> Result<(Option<String>, Option<String>), Error> {
    let text = std::fs::read_to_string(path).with_context(|| {
        format!(
            "cannot read --credentials-file {}; fix: give the provider's credentials JSON file",
            shown(&path.display().to_string())
        )
    })?;
    let value: Value = serde_json::from_str(&text).map_err(|_| {
        anyhow!(
            "--credentials-file {} is not JSON; fix: give the provider's credentials, {{\"url\": ..., \"access_token\": ...}}",
            shown(&path.display().to_string())
        )
    })?;
    let field = |name: &str| value.get(name).and_then(Value::as_str).map(str::to_owned);
    Ok((field("url"), field("access_token")))
}

/// `https://host` or `https://host/artifactory/` as `https://host/artifactory`. A URL with a
/// user and password is refused, and shown with them masked.
fn base_url(url: &str) -> Result<String, Error> {
    let trimmed = url.trim().trim_end_matches('/');
    let Some((scheme, rest)) = trimmed.split_once("://") else {
        bail!(
            "--url {} has no scheme; fix: give https://host/artifactory",
            masked(trimmed)
        );
    };
    if !matches!(scheme, "http" | "https") || rest.is_empty() {
        bail!(
            "--url {} is not an http(s) URL; fix: give https://host/artifactory",
            masked(trimmed)
        );
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    if authority.contains('@') {
        bail!(
            "--url {} holds a user and password: adopt authenticates with an access token only, and a password in a URL ends up in shell histories and logs; fix: remove them from the URL and give an admin's token in JFROG_ACCESS_TOKEN, --token-file or --credentials-file",
            masked(trimmed)
        );
    }
    if rest.contains(['?', '#']) || !rest.chars().all(|c| c.is_ascii_graphic()) {
        bail!(
            "--url {} has a query, a fragment, a space or a character outside ASCII; fix: give Artifactory's base URL alone, https://host/artifactory",
            masked(trimmed)
        );
    }
    if trimmed.ends_with("/artifactory") {
        Ok(trimmed.to_owned())
    } else {
        Ok(format!("{trimmed}/artifactory"))
    }
}

/// A URL for a message: its user and password (`user:pass@`) as `***@`, its characters
/// escaped where they are not printable.
pub(super) fn masked(url: &str) -> String {
    let text = match url.split_once("://") {
        Some((scheme, rest)) => {
            let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
            match rest[..end].rfind('@') {
                Some(at) => format!("{scheme}://***{}", &rest[at..]),
                None => url.to_owned(),
            }
        }
        None => match url.rfind('@') {
            Some(at) => format!("***{}", &url[at..]),
            None => url.to_owned(),
        },
    };
    shown(&text)
}

/// How much adopt reads, and for how long.
pub(super) struct Limits {
    /// Bytes of one answer, and of all the per-key answers together.
    pub answer_bytes: u64,
    /// Each call.
    pub timeout: Duration,
    /// The per-key path as a whole.
    pub total: Duration,
}

/// Every repository configuration of the instance, given to `adopter`; what was read, for
/// the summary.
pub(super) fn fetch(
    target: &Target,
    args: &AdoptArgs,
    limits: &Limits,
    adopter: &mut Adopter<'_>,
) -> Result<String, Error> {
    let tls = ureq::tls::TlsConfig::builder()
        .root_certs(roots(args.ca_file.as_deref())?)
        .build();
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_per_call(Some(limits.timeout))
        .http_status_as_error(false)
        // A redirect is answered, not followed: its target would get the request, and its
        // answer become the claims.
        .max_redirects(0)
        .https_only(!args.allow_http)
        .tls_config(tls)
        .user_agent(concat!("function-artifactory/", env!("CARGO_PKG_VERSION")))
        .build()
        .into();
    let reader = Reader {
        agent,
        target,
        limits,
        ca_file: args.ca_file.is_some(),
    };
    let configurations = format!("{}/api/repositories/configurations", target.base);
    match reader.get(&configurations, limits.timeout, limits.answer_bytes)? {
        Some(body) => {
            read_configurations(&body, &mut |config| adopter.add(config))
                .map_err(|e| not_documented(&configurations, &e))?;
            Ok(configurations)
        }
        None => reader.fetch_each(adopter),
    }
}

struct Reader<'a> {
    agent: ureq::Agent,
    target: &'a Target,
    limits: &'a Limits,
    ca_file: bool,
}

impl Reader<'_> {
    /// Artifactory before 7.61.3: the list, then each configuration, within the answer limit
    /// and `--total-timeout` together.
    fn fetch_each(&self, adopter: &mut Adopter<'_>) -> Result<String, Error> {
        let started = Instant::now();
        let list_url = format!("{}/api/repositories", self.target.base);
        let Some(list) = self.get(&list_url, self.limits.timeout, self.limits.answer_bytes)? else {
            bail!(
                "{list_url} answered 404 Not Found: neither it nor /api/repositories/configurations is there; fix: check that --url is Artifactory's base URL (https://host/artifactory)"
            );
        };
        let mut budget = self.limits.answer_bytes.saturating_sub(list.len() as u64);
        let list: Value = serde_json::from_str(&list)
            .map_err(|e| not_documented(&list_url, &format!("is not JSON ({e})")))?;
        let Some(items) = list.as_array() else {
            return Err(not_documented(&list_url, "is not a list of repositories"));
        };
        let over_time = |read: usize| {
            anyhow!(
                "reading {} configurations one by one took longer than --total-timeout {}s ({read} read); fix: give a longer --total-timeout, or save the answers and use --from",
                items.len(),
                self.limits.total.as_secs_f64()
            )
        };
        for (i, item) in items.iter().enumerate() {
            let key = item
                .get("key")
                .and_then(Value::as_str)
                .ok_or_else(|| not_documented(&list_url, "has an item without a key"))?;
            let url = format!("{}/api/repositories/{}", self.target.base, encode(key));
            let left = self.limits.total.saturating_sub(started.elapsed());
            if left.is_zero() {
                return Err(over_time(i));
            }
            let answer = self.get(&url, self.limits.timeout.min(left), budget);
            if answer.is_err() && started.elapsed() >= self.limits.total {
                return Err(over_time(i));
            }
            let Some(body) = answer? else {
                // Deleted between the list and this call.
                continue;
            };
            budget = budget.saturating_sub(body.len() as u64);
            if !body.trim_start().starts_with('{') {
                return Err(not_documented(&url, "is not a repository configuration"));
            }
            read_configurations(&body, &mut |config| adopter.add(config))
                .map_err(|e| not_documented(&url, &e))?;
        }
        Ok(format!(
            "{list_url} and {}/api/repositories/<key> for each of its {} keys",
            self.target.base,
            items.len()
        ))
    }

    /// One GET: the answer's text, `None` for a 404, or an error that says what happened and
    /// what to do.
    fn get(&self, url: &str, timeout: Duration, limit: u64) -> Result<Option<String>, Error> {
        let response = self
            .agent
            .get(url)
            .config()
            .timeout_per_call(Some(timeout))
            .build()
            .header("Authorization", format!("Bearer {}", self.target.token))
            .header("Accept", "application/json")
            .call();
        let mut response = match response {
            Ok(response) => response,
            Err(error) => return Err(self.transport_error(url, &error, timeout)),
        };
        let status = response.status().as_u16();
        let reason = response.status().canonical_reason().unwrap_or("");
        let fix = match status {
            200..=299 => None,
            404 => return Ok(None),
            300..=399 => {
                let location = response
                    .headers()
                    .get("location")
                    .map(|l| masked(&String::from_utf8_lossy(l.as_bytes())))
                    .unwrap_or_else(|| "nowhere".to_owned());
                bail!(
                    "{url} answered {status} {reason}, a redirect to {location}: adopt follows no redirect (the token is for {} alone, and another server's answer would become the claims); fix: give --url the address the redirect names, if you trust it",
                    self.target.base
                );
            }
            401 => Some("the access token was refused (expired, revoked or for another instance); fix: give a valid token in JFROG_ACCESS_TOKEN, --token-file or --credentials-file"),
            403 => Some("the token's user may not read repository configurations; fix: use a token of an admin (the provider's own token is one)"),
            500..=599 => Some("Artifactory failed; fix: check its health (GET <base>/api/system/ping) and try again"),
            _ => Some("fix: check that --url is Artifactory's base URL (https://host/artifactory)"),
        };
        if let Some(fix) = fix {
            bail!("{url} answered {status} {reason}: {fix}");
        }
        let body = response
            .body_mut()
            .with_config()
            .limit(limit)
            .read_to_string()
            .map_err(|error| self.transport_error(url, &error, timeout))?;
        Ok(Some(body))
    }

    /// A failure before or while reading the answer, without the token.
    fn transport_error(&self, url: &str, error: &ureq::Error, timeout: Duration) -> Error {
        let text = error.to_string();
        let message = match error {
            ureq::Error::Timeout(_) => format!(
                "{url} did not answer within {}s; fix: check that the host is reachable, or give a longer --timeout",
                timeout.as_secs_f64()
            ),
            ureq::Error::BodyExceedsLimit(_) => format!(
                "the answer of {url} (with the answers read before it, on the per-key path) is larger than the answer limit, {} MiB; fix: give a larger --max-answer-mib (adopt's memory is a small multiple of it: docs/adopt.md, \"Limits\")",
                self.limits.answer_bytes >> 20
            ),
            _ if text.contains("UnknownIssuer") || text.contains("invalid peer certificate") => {
                let using = if self.ca_file {
                    "the system's trust store and --ca-file"
                } else {
                    "the system's trust store (SSL_CERT_FILE, SSL_CERT_DIR or the distribution's bundle)"
                };
                format!(
                    "{url}: the server's certificate is not trusted by {using} ({text}); fix: give the certificate of the CA that signed it with --ca-file ca.pem (or SSL_CERT_FILE=ca.pem), or save the answer with `curl --cacert ca.pem -H \"Authorization: Bearer $JFROG_ACCESS_TOKEN\" {url} > answer.json` and run adopt --from answer.json"
                )
            }
            _ if text.contains("InvalidContentType") || text.contains("corrupt message") => format!(
                "{url}: the server did not answer TLS (its answer looks like plain HTTP); fix: check the port, or use http:// with --allow-http if the server only speaks plain HTTP on a trusted network"
            ),
            _ if text.contains("https_only") || text.contains("RequireHttpsOnly") => format!(
                "{url} is not https; fix: use https://, or add --allow-http where the network is trusted"
            ),
            _ => format!(
                "cannot reach {url}: {text}; fix: check the URL, the network and that the server's certificate is trusted (the system's store, SSL_CERT_FILE or --ca-file)"
            ),
        };
        anyhow!(message.replace(&self.target.token, "<token>"))
    }
}

fn not_documented(url: &str, what: &str) -> Error {
    anyhow!(
        "the answer of {url} {what}, not the repository configuration JSON JFrog documents; fix: check that --url is Artifactory's base URL (https://host/artifactory) and not a proxy's page"
    )
}

/// The roots TLS is verified against: the system's trust store (as OpenSSL finds it:
/// `SSL_CERT_FILE` or `SSL_CERT_DIR` where set, else the distribution's bundle) and
/// `--ca-file`; Mozilla's roots (bundled) where neither gives a certificate.
fn roots(ca_file: Option<&Path>) -> Result<ureq::tls::RootCerts, Error> {
    let mut certs = Vec::new();
    if let Some(path) = ca_file {
        let pem = std::fs::read(path).with_context(|| {
            format!(
                "cannot read --ca-file {}; fix: give the PEM file of the CA that signed the server's certificate",
                shown(&path.display().to_string())
            )
        })?;
        let found = pem_certificates(&pem);
        if found.is_empty() {
            bail!(
                "--ca-file {} holds no PEM certificate (-----BEGIN CERTIFICATE-----); fix: give the CA's certificate in PEM",
                shown(&path.display().to_string())
            );
        }
        certs.extend(found);
    }
    certs.extend(system_certificates());
    Ok(if certs.is_empty() {
        ureq::tls::RootCerts::WebPki
    } else {
        ureq::tls::RootCerts::from(certs)
    })
}

/// The system's trust store as OpenSSL reads it on Linux.
fn system_certificates() -> Vec<ureq::tls::Certificate<'static>> {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    let mut files: Vec<std::path::PathBuf> = Vec::new();
    match (var("SSL_CERT_FILE"), var("SSL_CERT_DIR")) {
        (None, None) => {
            if let Some(bundle) = [
                "/etc/ssl/certs/ca-certificates.crt",
                "/etc/pki/tls/certs/ca-bundle.crt",
                "/etc/ssl/ca-bundle.pem",
                "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
                "/etc/ssl/cert.pem",
            ]
            .iter()
            .map(Path::new)
            .find(|p| p.is_file())
            {
                files.push(bundle.to_owned());
            }
        }
        (file, dirs) => {
            files.extend(file.map(Into::into));
            for dir in dirs.iter().flat_map(std::env::split_paths) {
                if let Ok(entries) = std::fs::read_dir(dir) {
                    files.extend(entries.flatten().map(|e| e.path()));
                }
            }
        }
    }
    files
        .iter()
        .filter_map(|path| std::fs::read(path).ok())
        .flat_map(|pem| pem_certificates(&pem))
        .collect()
}

fn pem_certificates(pem: &[u8]) -> Vec<ureq::tls::Certificate<'static>> {
    ureq::tls::parse_pem(pem)
        .filter_map(|item| match item {
            Ok(ureq::tls::PemItem::Certificate(cert)) => Some(cert),
            _ => None,
        })
        .collect()
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
    fn a_user_and_password_in_the_url_are_refused_and_never_shown() {
        let error = base_url("http://ops7:s3cret@h/artifactory")
            .unwrap_err()
            .to_string();
        assert!(error.contains("http://***@h/artifactory"), "{error}");
        assert!(!error.contains("s3cret") && !error.contains("ops7"));
        assert_eq!(
            masked("https://u:p@h:8443/a?b@c"),
            "https://***@h:8443/a?b@c"
        );
        assert_eq!(masked("https://h/x@y"), "https://h/x@y");
    }

    #[test]
    fn keys_are_percent_encoded() {
        assert_eq!(encode("libs-release_1.x"), "libs-release_1.x");
        assert_eq!(encode("a b/c"), "a%20b%2Fc");
    }
}
