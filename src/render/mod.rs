//! `function-artifactory render`: a Composition's pipeline without a cluster.
//!
//! It does what `crossplane render` (Crossplane v2, in-tree CLI up to v2.2)
//! does for a pipeline that uses this function, without Docker: it loads the
//! composite resource, the Composition, the Functions and the observed
//! resources ([`load`]), runs the steps in order, this function in process
//! and others over gRPC at their development target ([`pipeline`]), adds the
//! metadata Crossplane adds ([`output`]) and prints the documents exactly as
//! `crossplane render` prints them (with the [`go_yaml`] crate).
//!
//! Where Crossplane 1.17 and v2 differ, v2 is followed (see [`output`]):
//! the desired composite's readiness, function conditions on the XR,
//! `generateName` only for unnamed resources, the observed name, namespace
//! and `generateName` copied, the XR namespace forced, the compositeTypeRef
//! and composition-selector checks, `meta.capabilities`, `required_resources`
//! and YAML-or-JSON `--context-values`.
//!
//! Deliberate differences from `crossplane render`:
//! - This function always runs in process; other functions only through the
//!   Development runtime (no Docker). Only Functions that a step uses are
//!   looked at.
//! - Requests carry `meta.tag`, computed as Crossplane's reconciler does
//!   (hex SHA-256 of the request), where render sends none.
//! - Requirements are met from the `--required-resources` files and also from
//!   the observed resources (a cluster would return those too); a selector's
//!   namespace is honoured.
//!
//! YAML is read and printed as Go's `sigs.k8s.io/yaml` reads and prints it
//! ([`go_yaml`]: YAML 1.1, merge keys, Go's JSON round trip), a claim is rendered
//! through the XR `crossplane xr generate` makes of it ([`claim`]), and a flag given twice
//! does what kong does ([`RenderArgs`]). The user's reference: docs/render.md.
//!
//! render holds no `unsafe` code: the YAML engine's, over libyaml, stays in its crate.
#![forbid(unsafe_code)]

mod claim;
mod load;
mod output;
mod pipeline;
mod secrets;
mod time;
mod xrd;

use crate::core::time::parse_go_duration;
use anyhow::{Context as _, Error};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// Arguments of `function-artifactory render`, spelled as `crossplane render`.
///
/// Given twice, a flag does what kong does in `crossplane render`: a flag of one value keeps
/// the last (`-o`, `--xrd`, `--timeout`, ..., and `-e`/`--required-resources` and
/// `--extra-resources`, which take one path there; render says on stderr which path it
/// dropped), a switch stays on (`-r -r`) and takes an explicit `--switch=false` (`true`, `1`,
/// `yes`, `false`, `0` or `no`), the last one winning, and the lists add up
/// (`--context-values`, `--context-files`, `--required-schemas`).
#[derive(Debug, Clone, clap::Args)]
#[command(args_override_self = true)]
pub struct RenderArgs {
    /// A YAML file with the composite resource (XR) to render, or a claim of it (then
    /// `--xrd` is needed: the XR is built from the claim as Crossplane builds it).
    pub composite_resource: PathBuf,
    /// A YAML file with the Composition (mode: Pipeline) to render it with.
    pub composition: PathBuf,
    /// A YAML file or folder of the Functions the pipeline uses. This
    /// function runs in process; others need the annotations
    /// `render.crossplane.io/runtime: Development` and
    /// `render.crossplane.io/runtime-development-target`.
    pub functions: Option<PathBuf>,
    /// A YAML file or folder of observed composed resources.
    #[arg(short = 'o', long, value_name = "PATH")]
    pub observed_resources: Option<PathBuf>,
    /// A YAML file or folder of resources that functions may require.
    /// Observed resources are offered too. Repeatable: every file is read.
    #[arg(short = 'e', long, value_name = "PATH")]
    pub required_resources: Vec<PathBuf>,
    /// Deprecated name of --required-resources. Repeatable: every file is read.
    #[arg(long, value_name = "PATH")]
    pub extra_resources: Vec<PathBuf>,
    /// A YAML file or folder of CustomResourceDefinitions whose schemas functions may
    /// require (Crossplane's required schemas): the provider's CRDs, so that what is
    /// rendered is checked against exactly the release you run. Given, render advertises the
    /// capability; a kind without a CRD here is answered as not served. Repeatable.
    #[arg(long, value_name = "PATH")]
    pub required_schemas: Vec<PathBuf>,
    /// Print Normal and Warning results as documents of kind Result.
    #[arg(
        short = 'r',
        long,
        value_name = "BOOL",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "true",
        default_value = "false",
        hide_default_value = true,
        value_parser = parse_switch
    )]
    pub include_function_results: bool,
    /// Print the final pipeline context as a document of kind Context.
    #[arg(
        short = 'c',
        long,
        value_name = "BOOL",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "true",
        default_value = "false",
        hide_default_value = true,
        value_parser = parse_switch
    )]
    pub include_context: bool,
    /// Print the input XR's spec and metadata in the rendered XR.
    #[arg(
        short = 'x',
        long = "include-full-xr",
        value_name = "BOOL",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "true",
        default_value = "false",
        hide_default_value = true,
        value_parser = parse_switch
    )]
    pub include_full_xr: bool,
    /// Context values, KEY=VALUE with a JSON or YAML value; several pairs may
    /// be separated by `;`. Repeatable. Wins over --context-files.
    #[arg(long, value_name = "KEY=VALUE")]
    pub context_values: Vec<String>,
    /// Context values read from files, KEY=FILE. Repeatable.
    #[arg(long, value_name = "KEY=FILE")]
    pub context_files: Vec<String>,
    /// How long the whole render may take (Go duration syntax, e.g. 30s, 1m).
    #[arg(long, default_value = "1m", value_parser = parse_go_duration)]
    pub timeout: Duration,
    /// A YAML file or folder of Secrets that steps receive as credentials (a
    /// step's `credentials` of source Secret, by name and namespace).
    #[arg(long, value_name = "PATH")]
    pub function_credentials: Option<PathBuf>,
    /// A YAML file with the CompositeResourceDefinition (XRD) of the XR: its
    /// schema's defaults are applied to the XR, which is validated against it,
    /// before the pipeline runs. Needed to render a claim.
    #[arg(long, value_name = "PATH")]
    pub xrd: Option<PathBuf>,
    /// Print what render does, step by step, to stderr (never a request's
    /// contents, so no credentials or Secret values).
    #[arg(
        short = 'd',
        long,
        value_name = "BOOL",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "true",
        default_value = "false",
        hide_default_value = true,
        value_parser = parse_switch
    )]
    pub debug: bool,
}

/// A switch's explicit value, as kong reads one (`--include-context=false`).
fn parse_switch(text: &str) -> std::result::Result<bool, String> {
    match text.to_lowercase().as_str() {
        "true" | "1" | "yes" => Ok(true),
        "false" | "0" | "no" => Ok(false),
        other => Err(format!(
            "bool value must be true, 1, yes, false, 0 or no but got {other:?}"
        )),
    }
}

/// Runs the command: the documents on stdout, or an error on stderr and
/// exit code 1, as `crossplane render`.
pub fn run(args: RenderArgs) -> ExitCode {
    match render(&args) {
        Ok(stream) => {
            let mut stdout = std::io::stdout().lock();
            // A closed pipe (e.g. `| head`) is not worth a panic.
            let _ = stdout
                .write_all(stream.as_bytes())
                .and_then(|()| stdout.flush());
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("function-artifactory: error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

/// Everything from the files to the printed YAML stream.
pub fn render(args: &RenderArgs) -> Result<String> {
    render_with(args, &pipeline::in_process)
}

/// This function as a step runs it: a `RunFunctionRequest`'s bytes in, the response's bytes
/// out, or an error that fails the step. [`render`] runs the core in process; the WebAssembly
/// component's tests (`tests/component-host/`) render the examples with the component.
pub type ThisFunction<'a> = &'a (dyn Fn(&[u8]) -> std::result::Result<Vec<u8>, String> + 'a);

/// [`render`], with this function's steps run by `this`.
pub fn render_with(args: &RenderArgs, this: ThisFunction<'_>) -> Result<String> {
    let inputs = pipeline::Inputs::load(args)?;
    let outcome =
        pipeline::run(&inputs, args.timeout, this).context("cannot render composite resource")?;
    let options = output::Options {
        include_results: args.include_function_results,
        include_context: args.include_context,
        include_full_xr: args.include_full_xr,
    };
    let documents = output::documents(&inputs, &outcome, &options)?;
    let mut stream = String::new();
    for document in &documents {
        let text = go_yaml::to_yaml(&document.value)
            .map_err(Error::msg)
            .with_context(|| document.what.clone())?;
        stream.push_str("---\n");
        stream.push_str(&text);
    }
    Ok(stream)
}

/// One YAML document read as render reads its files and printed as render prints an object
/// (without the `---` line), or the error either step gives; with `as_doubles` every number
/// first becomes a double, as in a function's reply. For tests/cli/go_yaml_render.rs, which
/// compares both steps with Go's sigs.k8s.io/yaml byte for byte.
#[doc(hidden)]
pub fn reprint_yaml(document: &str, as_doubles: bool) -> std::result::Result<String, String> {
    let mut value = go_yaml::read_first(document).map_err(|e| e.to_string())?;
    if as_doubles {
        value = through_doubles(value);
    }
    go_yaml::to_yaml(&value).map_err(|e| e.to_string())
}

/// Every number as a function's reply carries it (`google.protobuf.Struct` has only doubles).
fn through_doubles(value: serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match value {
        Value::Number(n) => crate::proto::json_number(n.as_f64().unwrap_or(0.0)),
        Value::Array(items) => Value::Array(items.into_iter().map(through_doubles).collect()),
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| (k, through_doubles(v)))
                .collect(),
        ),
        other => other,
    }
}

/// What render's steps return: an error with its context in front of its cause, printed with
/// `{:#}` as Go's `errors.Wrap` prints (`context: cause`), as `crossplane render` does.
pub type Result<T> = anyhow::Result<T>;

#[cfg(test)]
mod tests {
    #[test]
    fn errors_print_like_go_wrapped_errors() {
        let error = anyhow::Error::msg("boom")
            .context("cannot run pipeline step \"a\"")
            .context("cannot render");
        assert_eq!(
            format!("{error:#}"),
            "cannot render: cannot run pipeline step \"a\": boom"
        );
    }
}
