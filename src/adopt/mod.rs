//! `function-artifactory adopt`: claims that bring a running Artifactory's repositories under
//! Crossplane, each entry `import: true` (docs/adopt.md).
//!
//! It reads the repository configurations from a saved answer (`--from`) or from Artifactory
//! ([`live`]), turns them into claims ([`inventory`]), prints the claims as YAML on
//! stdout and a summary on stderr.

mod inventory;
mod live;
mod yaml;

use crate::core::catalog::{catalog, ProviderApi, Rclass, ReleaseMatch};
use crate::core::time::parse_go_duration;
use anyhow::{anyhow, bail, Context as _, Error};
use inventory::{shown, Adopter, Inventory, Options, ADMIN_FIELDS, REPOSITORIES_PER_CLAIM};
use regex::Regex;
use std::io::{Read as _, Write as _};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// An answer (saved, piped or live) is read up to this many MiB unless `--max-answer-mib`
/// says otherwise.
pub(crate) const MAX_ANSWER_MIB: u64 = 64;

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
    /// The claim's apiVersion; default the example XRD's for the provider API
    /// (platform.example.org/v1alpha1, examples/cluster/xrd.yaml; for namespaced
    /// artifactory.example.org/v1alpha1, examples/namespaced/xrd.yaml).
    #[arg(long)]
    pub api_version: Option<String>,
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
    /// How long reading every configuration one key at a time (Artifactory before 7.61.3)
    /// may take in all.
    #[arg(long, default_value = "10m", value_parser = parse_go_duration)]
    pub total_timeout: Duration,
    /// The largest answer read, in MiB (the configurations call, the per-key answers together,
    /// or --from).
    #[arg(long, default_value_t = MAX_ANSWER_MIB, value_parser = clap::builder::RangedU64ValueParser::<u64>::new().range(1..=4096))]
    pub max_answer_mib: u64,
    /// A PEM file of CA certificates to trust besides the system's (an internal CA).
    #[arg(long, value_name = "PATH")]
    pub ca_file: Option<PathBuf>,
    /// Allow a plain http:// URL: the token and the configurations cross the network
    /// unencrypted. Only for a trusted network.
    #[arg(long)]
    pub allow_http: bool,
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
    let limits = live::Limits {
        answer_bytes: args.max_answer_mib << 20,
        timeout: args.timeout,
        total: args.total_timeout,
    };
    let mut adopter = Adopter::new(&options);
    let source = match &args.from {
        Some(path) => {
            read_saved(path, limits.answer_bytes, &mut adopter)?;
            format!("file {}", shown(path))
        }
        None => {
            let target = live::Target::from_args(args)?;
            live::fetch(&target, args, &limits, &mut adopter)?
        }
    };
    let inventory = adopter.finish();
    let (partial, count) = &inventory.partial;
    if *count > 0 {
        let keys: Vec<String> = partial.iter().map(|k| shown(k)).collect();
        let more = more(*count, partial.len());
        let fix = if args.from.is_some() {
            "save the answer again with an admin's token"
        } else {
            "use an admin's access token (the provider's own token is one)"
        };
        bail!(
            "{source} is a partial answer: {count} repositories lack {}, which Artifactory answers for every repository to an admin only (JFrog: non-admin users receive partial configuration data), so their claims would miss settings: {}{more}; fix: {fix}",
            ADMIN_FIELDS.join(" or "),
            keys.join(", ")
        );
    }
    let mut out = String::new();
    for claim in &inventory.claims {
        out.push_str("---\n");
        out.push_str(&yaml::document(claim));
    }
    Ok((out, summary(&inventory, &source, args)))
}

/// ", and N more" where a list shows `shown` of `count`.
fn more(count: usize, shown: usize) -> String {
    if count > shown {
        format!(", and {} more", count - shown)
    } else {
        String::new()
    }
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
        api_version: args.api_version.clone().unwrap_or_else(|| {
            match api {
                ProviderApi::Namespaced => "artifactory.example.org/v1alpha1",
                _ => "platform.example.org/v1alpha1",
            }
            .to_owned()
        }),
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

/// Configurations saved from Artifactory (or piped, `-`), given to `adopter`.
fn read_saved(path: &str, limit: u64, adopter: &mut Adopter<'_>) -> Result<(), Error> {
    let shown_path = shown(path);
    let mut text = String::new();
    let read = if path == "-" {
        std::io::stdin().take(limit + 1).read_to_string(&mut text)
    } else {
        std::fs::File::open(path).and_then(|file| file.take(limit + 1).read_to_string(&mut text))
    };
    read.with_context(|| {
        format!("cannot read --from {shown_path}; fix: give a readable file of JSON (UTF-8)")
    })?;
    if text.len() as u64 > limit {
        bail!(
            "--from {shown_path} is larger than {} MiB; fix: give a larger --max-answer-mib (adopt's memory is a small multiple of it: docs/adopt.md, \"Limits\")",
            limit >> 20
        );
    }
    inventory::read_configurations(&text, &mut |config| adopter.add(config)).map_err(|e| {
        anyhow!("--from {shown_path} {e}; fix: save the answer of GET <artifactory>/api/repositories/configurations")
    })
}

/// What was adopted, what was not and why, and what to do next.
fn summary(inventory: &Inventory, source: &str, args: &AdoptArgs) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let total: usize = inventory.adopted.values().sum();
    let _ = writeln!(
        out,
        "adopt: {} repositories read from {source}; {total} in {} claim(s) of at most {} repositories",
        inventory.read,
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
        let _ = writeln!(
            out,
            "skipped ({}):",
            inventory.skipped.len() + inventory.skipped_more
        );
        for skipped in &inventory.skipped {
            let _ = writeln!(out, "  {}: {}", shown(&skipped.key), skipped.reason);
        }
        if inventory.skipped_more > 0 {
            let _ = writeln!(out, "  and {} more", inventory.skipped_more);
        }
    }
    if !inventory.unmapped.is_empty() {
        let _ = writeln!(
            out,
            "settings that no field of the provider's kind holds (not in the claims; a takeover leaves them as Artifactory has them unless the Terraform provider resets them):"
        );
        for (field, (keys, count)) in &inventory.unmapped {
            let listed: Vec<String> = keys.iter().take(5).map(|k| shown(k)).collect();
            let more = more(*count, listed.len());
            let why = inventory::NOT_HELD
                .iter()
                .find(|(_, name, _)| name == field)
                .map_or(String::new(), |(_, _, reason)| format!(" ({reason})"));
            let _ = writeln!(out, "  {}: {}{more}{why}", shown(field), listed.join(", "));
        }
        if inventory.unmapped_more > 0 {
            let _ = writeln!(
                out,
                "  and {} more of settings not listed",
                inventory.unmapped_more
            );
        }
    }
    if !inventory.secrets.is_empty() {
        let _ = writeln!(
            out,
            "Secrets to create in namespace {} before taking over (Artifactory never returns a remote's password):",
            shown(&args.namespace)
        );
        for secret in &inventory.secrets {
            let _ = writeln!(
                out,
                "  kubectl -n {} create secret generic {} --from-literal={}=...   # {} (claim {})",
                shown(&args.namespace),
                secret.name,
                secret.key,
                shown(&secret.repository),
                shown(&secret.claim)
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
