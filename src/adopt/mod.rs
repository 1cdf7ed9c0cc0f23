//! `function-artifactory adopt`: claims that bring a running Artifactory's repositories under
//! Crossplane, each entry `import: true` (docs/adopt.md).
//!
//! It reads the repository configurations from a saved answer (`--from`) or from Artifactory
//! ([`live`]), turns them into claims ([`inventory`]), prints the claims as YAML on
//! stdout and a summary on stderr.

mod inventory;
mod live;

use crate::core::catalog::{catalog, ProviderApi, Rclass, ReleaseMatch};
use inventory::{Inventory, Options, REPOSITORIES_PER_CLAIM};
use crate::core::time::parse_go_duration;
use anyhow::{anyhow, bail, Context as _, Error};
use go_yaml::to_yaml;
use regex::Regex;
use std::io::{Read as _, Write as _};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// A saved answer or a piped one is read up to this size, as a live answer is.
pub(crate) const MAX_ANSWER_BYTES: u64 = 64 * 1024 * 1024;

/// How the claims are cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum GroupBy {
    /// By size alone: at most `--per-claim` repositories a claim.
    Size,
    /// One claim a JFrog project (its `spec.projectKey` set), each also cut by size.
    Project,
}

/// Arguments of `function-artifactory adopt`.
#[derive(Debug, Clone, clap::Args)]
pub struct AdoptArgs {
    /// Artifactory's URL, `https://host/artifactory` (`/artifactory` is added where the path
    /// lacks it). Else JFROG_URL, ARTIFACTORY_URL, or the `url` of --credentials-file.
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,
    /// A file holding the access token. Else JFROG_ACCESS_TOKEN, ARTIFACTORY_ACCESS_TOKEN,
    /// or the `access_token` of --credentials-file. Never given as a flag's value.
    #[arg(long, value_name = "PATH")]
    pub token_file: Option<PathBuf>,
    /// The provider's credentials JSON, `{"url": ..., "access_token": ...}`.
    #[arg(long, value_name = "PATH")]
    pub credentials_file: Option<PathBuf>,
    /// Read the configurations from this file (`-`: stdin) instead of Artifactory: the
    /// answer of GET /api/repositories/configurations, or a list of configurations.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["url", "token_file", "credentials_file"])]
    pub from: Option<String>,
    /// Only repositories whose key matches this regular expression.
    #[arg(long, value_name = "REGEX")]
    pub include: Option<String>,
    /// No repository whose key matches this regular expression.
    #[arg(long, value_name = "REGEX")]
    pub exclude: Option<String>,
    /// Only repositories of this JFrog project.
    #[arg(long, value_name = "KEY")]
    pub project: Option<String>,
    /// How repositories are put in claims.
    #[arg(long, value_enum, default_value = "size")]
    pub group_by: GroupBy,
    /// Repositories a claim holds at most (also at most 256 KiB of entries).
    #[arg(long, default_value_t = REPOSITORIES_PER_CLAIM, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1000))]
    pub per_claim: usize,
    /// The claim's name; several claims get `-1`, `-2`, ... (and the project with
    /// --group-by project).
    #[arg(long, default_value = "adopted-repositories")]
    pub name: String,
    /// The claim's namespace.
    #[arg(long, default_value = "default")]
    pub namespace: String,
    /// The claim's apiVersion (examples/cluster/xrd.yaml).
    #[arg(long, default_value = "platform.example.org/v1alpha1")]
    pub api_version: String,
    /// The claim's kind (examples/cluster/xrd.yaml).
    #[arg(long, default_value = "Repositories")]
    pub kind: String,
    /// The Composition input's providerApi: flat, cluster or namespaced.
    #[arg(long, default_value = "cluster")]
    pub provider_api: String,
    /// The Composition input's providerVersion (vX.Y.Z); default the newest.
    #[arg(long)]
    pub provider_version: Option<String>,
    /// The Composition input's naming.format; default the function's (`{name}`, or
    /// `{projectKey}-{name}` in a claim with a projectKey).
    #[arg(long, value_name = "FORMAT")]
    pub naming_format: Option<String>,
    /// How long each call to Artifactory may take (Go duration syntax, e.g. 30s).
    #[arg(long, default_value = "60s", value_parser = parse_go_duration)]
    pub timeout: Duration,
}

/// Runs the command: the claims on stdout and the summary on stderr, or an error and exit 1.
pub fn run(args: AdoptArgs) -> ExitCode {
    match adopt(&args) {
        Ok((yaml, summary)) => {
            eprint!("{summary}");
            let mut stdout = std::io::stdout().lock();
            let _ = stdout
                .write_all(yaml.as_bytes())
                .and_then(|()| stdout.flush());
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("function-artifactory adopt: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn adopt(args: &AdoptArgs) -> Result<(String, String), Error> {
    let options = options(args)?;
    let (configurations, source) = match &args.from {
        Some(path) => (read_saved(path)?, format!("file {path}")),
        None => {
            let target = live::Target::from_args(args)?;
            let source = target.base.clone();
            (live::fetch(&target, args.timeout)?, source)
        }
    };
    let inventory = inventory::adopt(&configurations, &options);
    let mut yaml = String::new();
    for claim in &inventory.claims {
        yaml.push_str("---\n");
        yaml.push_str(&to_yaml(claim).map_err(|e| anyhow!("cannot print a claim as YAML: {e}"))?);
        if !yaml.ends_with('\n') {
            yaml.push('\n');
        }
    }
    Ok((
        yaml,
        summary(&inventory, configurations.len(), &source, args),
    ))
}

fn options(args: &AdoptArgs) -> Result<Options, Error> {
    let api = ProviderApi::parse(&args.provider_api).ok_or_else(|| {
        anyhow!(
            "--provider-api {:?} is not a provider API; fix: use flat, cluster or namespaced, as the Composition's input says",
            args.provider_api
        )
    })?;
    let release = match &args.provider_version {
        None => None,
        Some(version) => match catalog().match_release(version) {
            Some(ReleaseMatch::Exact(r) | ReleaseMatch::Nearest(r) | ReleaseMatch::Newer(r)) => {
                Some(r)
            }
            None => bail!(
                "--provider-version {version:?} names no provider release; fix: use vX.Y.Z from {} on",
                catalog().release_names().first().map_or("v0.1.0", String::as_str)
            ),
        },
    };
    if let Some(release) = release {
        if !catalog().has_api(release, api) {
            bail!(
                "--provider-version {} has no {api} API; fix: choose the API the release has (docs/provider-releases.md)",
                catalog().release_name(release)
            );
        }
    }
    let regex = |flag: &str, text: &Option<String>| -> Result<Option<Regex>, Error> {
        text.as_deref()
            .map(|text| {
                Regex::new(text).map_err(|e| {
                    anyhow!("--{flag} {text:?} is not a regular expression: {e}; fix: use the syntax of the regex crate, e.g. '^team1-'")
                })
            })
            .transpose()
    };
    Ok(Options {
        api,
        release,
        naming_format: args.naming_format.clone(),
        api_version: args.api_version.clone(),
        kind: args.kind.clone(),
        name: args.name.clone(),
        namespace: Some(args.namespace.clone()),
        include: regex("include", &args.include)?,
        exclude: regex("exclude", &args.exclude)?,
        project: args.project.clone(),
        group_by_project: args.group_by == GroupBy::Project,
        per_claim: args.per_claim,
    })
}

/// Configurations saved from Artifactory (or piped, `-`).
fn read_saved(path: &str) -> Result<Vec<serde_json::Value>, Error> {
    let mut text = String::new();
    let read = if path == "-" {
        std::io::stdin()
            .take(MAX_ANSWER_BYTES + 1)
            .read_to_string(&mut text)
    } else {
        std::fs::File::open(path)
            .and_then(|file| file.take(MAX_ANSWER_BYTES + 1).read_to_string(&mut text))
    };
    read.with_context(|| format!("cannot read --from {path}"))?;
    if text.len() as u64 > MAX_ANSWER_BYTES {
        bail!(
            "--from {path} is larger than {} MiB; fix: select fewer repositories (--include, --project) when saving it",
            MAX_ANSWER_BYTES >> 20
        );
    }
    inventory::read_configurations(&text).map_err(|e| {
        anyhow!("--from {path} {e}; fix: save the answer of GET <artifactory>/api/repositories/configurations")
    })
}

/// What was adopted, what was not and why, and what to do next.
fn summary(inventory: &Inventory, read: usize, source: &str, args: &AdoptArgs) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let total: usize = inventory.adopted.values().sum();
    let _ = writeln!(
        out,
        "adopt: {read} repositories read from {source}; {total} in {} claim(s) of at most {} repositories",
        inventory.claims.len(),
        args.per_claim
    );
    for rclass in Rclass::ALL {
        let _ = writeln!(
            out,
            "  {rclass}: {}",
            inventory.adopted.get(&rclass).copied().unwrap_or(0)
        );
    }
    if inventory.not_selected > 0 {
        let _ = writeln!(
            out,
            "  not selected (--include, --exclude, --project): {}",
            inventory.not_selected
        );
    }
    if inventory.explicit_keys > 0 {
        let _ = writeln!(
            out,
            "  entries with an explicit key (the naming format cannot give it back): {}",
            inventory.explicit_keys
        );
    }
    if !inventory.skipped.is_empty() {
        let _ = writeln!(out, "skipped ({}):", inventory.skipped.len());
        for skipped in &inventory.skipped {
            let _ = writeln!(out, "  {}: {}", skipped.key, skipped.reason);
        }
    }
    if !inventory.unmapped.is_empty() {
        let _ = writeln!(
            out,
            "settings that no field of the provider's kind holds (not in the claims; a takeover leaves them as Artifactory has them unless the Terraform provider resets them):"
        );
        for (field, keys) in &inventory.unmapped {
            let shown: Vec<&str> = keys.iter().take(5).map(String::as_str).collect();
            let more = if keys.len() > 5 {
                format!(", and {} more", keys.len() - 5)
            } else {
                String::new()
            };
            let _ = writeln!(out, "  {field}: {}{more}", shown.join(", "));
        }
    }
    if !inventory.secrets.is_empty() {
        let _ = writeln!(
            out,
            "Secrets to create in namespace {} before taking over (Artifactory never returns a remote's password):",
            args.namespace
        );
        for secret in &inventory.secrets {
            let _ = writeln!(
                out,
                "  kubectl -n {} create secret generic {} --from-literal={}=...   # {} (claim {})",
                args.namespace, secret.name, secret.key, secret.repository, secret.claim
            );
        }
    }
    let _ = writeln!(
        out,
        "next: review the claims, kubectl apply -f them (every entry is observed only), watch \
         status.repositories[].takeover until each preview is empty, then widen the policies \
         (remove import or set managementPolicies) a few repositories at a time (docs/adopt.md)"
    );
    out
}
