//! What render reads, loaded in `crossplane render`'s order with its checks: the composite (or
//! the XR built from a claim and its XRD), the Composition and the checks that it fits the XR,
//! the Functions, credentials, observed and required resources, required schemas and context.

use super::requirements::SchemaPool;
use crate::render::load::{self, object_at, str_at, Composition, Function, Object};
use crate::render::{claim, RenderArgs, Result};
use anyhow::{Context as _, Error};

/// Everything render reads, loaded and checked.
#[derive(Debug, Clone)]
pub(in crate::render) struct Inputs {
    pub composite: Object,
    pub composition: Composition,
    pub functions: Vec<Function>,
    pub observed: Vec<Object>,
    pub required: Vec<Object>,
    /// The schemas of `--required-schemas`; `None` without the flag (the capability is then
    /// not advertised).
    pub schemas: Option<SchemaPool>,
    pub context: Object,
    /// The Secrets of `--function-credentials`.
    pub credentials: Vec<Object>,
    /// `--debug`: a line per step call on stderr.
    pub debug: bool,
}

impl Inputs {
    /// Loads the files in `crossplane render`'s order, with its checks.
    pub(in crate::render) fn load(args: &RenderArgs) -> Result<Inputs> {
        let document = load::composite(&args.composite_resource)?;
        let composition = load::composition(&args.composition)?;
        // A document of another kind than the Composition's may be a claim of the XRD's.
        let mut definition = None;
        let mut composite = document;
        if let Some(path) = &args.xrd {
            if str_at(&composite, &["kind"]) != composition.composite_kind {
                let xrd = load::xrd(path)?;
                if let Some(built) = claim::composite_of(&composite, &xrd)? {
                    eprintln!("{}", built.note);
                    composite = built.xr;
                }
                definition = Some(xrd);
            }
        }
        check_composition(&composite, &composition, args.xrd.is_some())?;
        let functions = match &args.functions {
            Some(path) => load::functions(path)?,
            None => Vec::new(),
        };
        if let Some(path) = &args.xrd {
            let definition = match definition {
                Some(definition) => definition,
                None => load::xrd(path)?,
            };
            crate::render::xrd::apply(&mut composite, &definition)?;
        }
        let credentials = match &args.function_credentials {
            Some(path) => load::secrets(path)?,
            None => Vec::new(),
        };
        let observed = match &args.observed_resources {
            Some(path) => load::resources(path, "observed composed resources")?,
            None => Vec::new(),
        };
        // Every path given, the required resources' then the extra resources', as the CLI
        // (v2.4.0 and later) reads them.
        let mut required = Vec::new();
        for path in &args.required_resources {
            required.extend(load::resources(path, "required resources")?);
        }
        for path in &args.extra_resources {
            required.extend(load::resources(path, "extra resources")?);
        }
        let schemas = if args.required_schemas.is_empty() {
            None
        } else {
            let mut crds = Vec::new();
            for path in &args.required_schemas {
                crds.extend(load::resources(path, "required schemas")?);
            }
            Some(SchemaPool::new(&crds)?)
        };
        let context = load::context(&args.context_files, &args.context_values)
            .context("cannot build context data")?;
        Ok(Inputs {
            composite,
            composition,
            functions,
            observed,
            required,
            schemas,
            context,
            credentials,
            debug: args.debug,
        })
    }
}

/// The checks `crossplane render` (v2) makes before running anything. A kind of the
/// Composition's group may be a claim: without `--xrd`, the error says how to render one.
fn check_composition(xr: &Object, composition: &Composition, xrd_given: bool) -> Result<()> {
    let (xr_kind, xr_api_version) = (str_at(xr, &["kind"]), str_at(xr, &["apiVersion"]));
    if composition.composite_kind != xr_kind {
        let group = |api_version: &str| api_version.split_once('/').map(|(g, _)| g.to_owned());
        let same_group = group(xr_api_version) == group(&composition.composite_api_version);
        let hint = if same_group && !xrd_given {
            format!(
                "; if {xr_kind} is a claim, give its CompositeResourceDefinition with --xrd to \
                 render the XR crossplane xr generate makes of it"
            )
        } else {
            String::new()
        };
        return Err(Error::msg(format!(
            "composition's compositeTypeRef.kind ({}) does not match XR's kind ({xr_kind}){hint}",
            composition.composite_kind
        )));
    }
    if composition.composite_api_version != xr_api_version {
        return Err(Error::msg(format!(
            "composition's compositeTypeRef.apiVersion ({}) does not match XR's apiVersion ({xr_api_version})",
            composition.composite_api_version
        )));
    }
    check_selector(xr, composition)?;
    if composition.mode != "Pipeline" {
        return Err(Error::msg(format!(
            "render only supports Composition Function pipelines: Composition {:?} must use spec.mode: Pipeline",
            composition.name
        )));
    }
    Ok(())
}

/// The XR's `compositionSelector.matchLabels` must select the Composition.
fn check_selector(xr: &Object, composition: &Composition) -> Result<()> {
    let selector = object_at(
        xr,
        &["spec", "crossplane", "compositionSelector", "matchLabels"],
    )
    .or_else(|| object_at(xr, &["spec", "compositionSelector", "matchLabels"]));
    for (key, want) in selector.into_iter().flatten() {
        let want = want.as_str().unwrap_or_default();
        match composition.labels.get(key) {
            None => {
                let msg = format!(
                    "composition {:?} is missing required label {key:?}",
                    composition.name
                );
                return Err(Error::msg(msg));
            }
            Some(got) if got != want => {
                return Err(Error::msg(format!(
                    "composition {:?} has incorrect value for label {key:?}: want {want:?}, got {got:?}",
                    composition.name
                )));
            }
            Some(_) => {}
        }
    }
    Ok(())
}
