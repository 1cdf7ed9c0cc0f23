//! Running the Composition's pipeline as `crossplane render` does
//! (`cmd/crank/render/render.go`, `internal/xfn/required_resources.go`).
//!
//! Each step gets the observed state (the XR and the observed composed
//! resources), the desired state and context the previous step returned, and
//! its own input. A step that asks for resources is called again with them,
//! until its requirements stop changing. This function runs in process; any
//! other function is called over insecure gRPC at its development target.

use super::load::{self, object_at, resource_name, str_at, Composition, Function, Object, Step};
use super::{claim, secrets, RenderArgs, Result, ThisFunction};
use crate::core::time::format_go_duration;
use crate::proto::v1::{
    self, resource_selector, Capability, Condition, RequestMeta, Requirements, Resource,
    ResourceSelector, Resources, RunFunctionRequest, RunFunctionResponse, Schema, SchemaSelector,
    Severity, State,
};
use crate::proto::{v1beta1, Struct};
use anyhow::{Context as _, Error};
use prost::Message;
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::Duration;
use tokio::time::Instant;

/// The name under which this function runs in process.
pub(super) const THIS_FUNCTION: &str = "function-artifactory";
pub(super) const ANNOTATION_RUNTIME: &str = "render.crossplane.io/runtime";
pub(super) const ANNOTATION_TARGET: &str = "render.crossplane.io/runtime-development-target";
pub(super) const DEFAULT_TARGET: &str = "localhost:9443";
/// How often a step is called again for changed requirements.
pub(super) const MAX_REQUIREMENTS_ITERATIONS: usize = 5;

/// Everything render reads, loaded and checked.
#[derive(Debug, Clone)]
pub(super) struct Inputs {
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
    pub(super) fn load(args: &RenderArgs) -> Result<Inputs> {
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
            super::xrd::apply(&mut composite, &definition)?;
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

/// What the pipeline produced.
#[derive(Debug, Clone, Default)]
pub(super) struct Outcome {
    /// The desired state the last step returned.
    pub desired: State,
    /// The context the last step returned (`None` if it returned none).
    pub context: Option<Struct>,
    /// Non-fatal results of every step, in pipeline order.
    pub results: Vec<StepResult>,
    /// Conditions of every step, in pipeline order.
    pub conditions: Vec<Condition>,
}

/// A result together with the step that returned it.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct StepResult {
    pub step: String,
    pub severity: i32,
    pub message: String,
}

/// Runs every step; stops at the first error or fatal result.
pub(super) fn run(inputs: &Inputs, timeout: Duration, this: ThisFunction<'_>) -> Result<Outcome> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::msg(format!("cannot start the async runtime: {e}")))?;
    runtime.block_on(run_steps(inputs, timeout, this))
}

async fn run_steps(inputs: &Inputs, timeout: Duration, this: ThisFunction<'_>) -> Result<Outcome> {
    let deadline = Instant::now() + timeout;
    let mut runners = Runners::start(inputs, this).context("cannot start function runtimes")?;
    let pool = ResourcePool::new(inputs);
    let observed = observed_state(inputs);
    // The pipeline starts with an empty desired state and the user's context.
    let mut desired = Some(State::default());
    let mut context = Some(Struct::from(inputs.context.clone()));
    let mut outcome = Outcome::default();
    for step in &inputs.composition.steps {
        let mut request = step_request(step, &observed, desired, context)?;
        request.credentials = secrets::for_step(&step.credentials, &inputs.credentials)?;
        let bootstrap = Answers::bootstrap(step, &pool, inputs.schemas.as_ref());
        bootstrap.clone().put_in(&mut request);
        let schemas = inputs.schemas.as_ref();
        let call = run_with_requirements(
            &mut runners,
            step,
            request,
            &bootstrap,
            &pool,
            schemas,
            inputs.debug,
        );
        let response = tokio::time::timeout_at(deadline, call)
            .await
            .map_err(|_| runners.timed_out(&step.function, timeout))
            .and_then(|r| r)
            .with_context(|| format!("cannot run pipeline step {:?}", step.name))?;
        desired = response.desired.clone();
        context = response.context.clone();
        record(&mut outcome, step, response)?;
    }
    outcome.desired = desired.unwrap_or_default();
    outcome.context = context;
    Ok(outcome)
}

/// Keeps a step's conditions and results; a fatal result ends the render.
fn record(outcome: &mut Outcome, step: &Step, response: RunFunctionResponse) -> Result<()> {
    outcome.conditions.extend(response.conditions);
    for result in response.results {
        if result.severity == Severity::Fatal as i32 {
            let msg = format!(
                "pipeline step {:?} returned a fatal result: {}",
                step.name, result.message
            );
            return Err(Error::msg(msg));
        }
        outcome.results.push(StepResult {
            step: step.name.clone(),
            severity: result.severity,
            message: result.message,
        });
    }
    Ok(())
}

/// The observed state: the XR as given and the observed composed resources,
/// keyed by their composition-resource-name annotation (`""` without one).
fn observed_state(inputs: &Inputs) -> State {
    let resources = inputs
        .observed
        .iter()
        .map(|object| (resource_name(object), resource(object.clone())))
        .collect();
    State {
        composite: Some(resource(inputs.composite.clone())),
        resources,
    }
}

fn resource(object: Object) -> Resource {
    Resource {
        resource: Some(Struct::from(object)),
        ..Default::default()
    }
}

/// The request of one step before requirements are met.
fn step_request(
    step: &Step,
    observed: &State,
    desired: Option<State>,
    context: Option<Struct>,
) -> Result<RunFunctionRequest> {
    let input = match &step.input {
        None => None,
        Some(Value::Object(input)) => Some(Struct::from(input.clone())),
        Some(_) => {
            let msg = "the input is not an object";
            return Err(Error::msg(msg).context(format!(
                "cannot unmarshal input for Composition pipeline step {:?}",
                step.name
            )));
        }
    };
    Ok(RunFunctionRequest {
        observed: Some(observed.clone()),
        desired,
        input,
        context,
        ..Default::default()
    })
}

/// What a step asked for, answered: the resources, the deprecated extra resources and the
/// schemas.
#[derive(Debug, Clone, Default, PartialEq)]
struct Answers {
    resources: BTreeMap<String, Resources>,
    extra: BTreeMap<String, Resources>,
    schemas: BTreeMap<String, Schema>,
}

impl Answers {
    /// A step's bootstrap requirements (`requirements.requiredResources` and
    /// `requiredSchemas`), answered before its first call; a schema no CRD given serves (or
    /// any, without `--required-schemas`) is answered empty, as `crossplane render` answers it.
    fn bootstrap(step: &Step, pool: &ResourcePool, schemas: Option<&SchemaPool>) -> Answers {
        let empty = SchemaPool::default();
        let schemas = schemas.unwrap_or(&empty);
        Answers {
            resources: step
                .required_resources
                .iter()
                .map(|(name, selector)| (name.clone(), pool.fetch(selector)))
                .collect(),
            extra: BTreeMap::new(),
            schemas: step
                .required_schemas
                .iter()
                .map(|(name, selector)| (name.clone(), schemas.fetch(selector)))
                .collect(),
        }
    }

    /// The bootstrap answers and those to `requirements`, fetched (a name of both: the
    /// fetched answer); schemas from `schemas`, where render advertises them.
    fn with(
        &self,
        requirements: &Requirements,
        pool: &ResourcePool,
        schemas: Option<&SchemaPool>,
    ) -> Answers {
        let mut answers = self.clone();
        answers
            .resources
            .extend(pool.fetch_all(&requirements.resources));
        answers.extra = pool.fetch_all(&requirements.extra_resources);
        if let Some(schemas) = schemas {
            answers
                .schemas
                .extend(schemas.fetch_all(&requirements.schemas));
        }
        answers
    }

    fn put_in(self, request: &mut RunFunctionRequest) {
        request.required_resources = self.resources;
        request.extra_resources = self.extra;
        request.required_schemas = self.schemas;
    }
}

/// Calls a step, whose request holds its `bootstrap` answers, until its requirements stabilise
/// (Crossplane's `FetchingFunctionRunner`): a response whose requirements equal the previous
/// ones (none on the first call) or that is fatal ends the loop; otherwise the step is called
/// again with what it asked for, its bootstrap answers kept, and the context it returned.
async fn run_with_requirements(
    runners: &mut Runners<'_>,
    step: &Step,
    mut request: RunFunctionRequest,
    bootstrap: &Answers,
    pool: &ResourcePool,
    schemas: Option<&SchemaPool>,
    debug: bool,
) -> Result<RunFunctionResponse> {
    // Required schemas are advertised with `--required-schemas`, or when the step declares
    // some; then every schema asked for is answered, if only as not served, as Crossplane
    // answers: a function may count on being called again with an answer to each.
    let no_crds = SchemaPool::default();
    let advertise_schemas = schemas.is_some() || !step.required_schemas.is_empty();
    let schemas = schemas.or(advertise_schemas.then_some(&no_crds));
    let mut previous: Option<Requirements> = None;
    for call in 1..=MAX_REQUIREMENTS_ITERATIONS + 1 {
        if debug {
            debug_line(step, &request, call);
        }
        let response = runners
            .run(
                &step.function,
                with_meta(request.clone(), advertise_schemas),
            )
            .await?;
        let fatal = response
            .results
            .iter()
            .any(|r| r.severity == Severity::Fatal as i32);
        if fatal || response.requirements == previous {
            return Ok(response);
        }
        let requirements = response.requirements.clone().unwrap_or_default();
        bootstrap
            .with(&requirements, pool, schemas)
            .put_in(&mut request);
        request.context = response.context;
        previous = response.requirements;
    }
    Err(Error::msg(format!(
        "requirements didn't stabilize after the maximum number of iterations ({MAX_REQUIREMENTS_ITERATIONS})"
    )))
}

/// The `--debug` line of one call of a step, with what the call carries as it is sent (a later
/// call carries the answers to the requirements of the one before): names and counts only, as a
/// request may carry credentials.
fn debug_line(step: &Step, request: &RunFunctionRequest, call: usize) {
    let resources: usize = request
        .required_resources
        .values()
        .chain(request.extra_resources.values())
        .map(|answer| answer.items.len())
        .sum();
    eprintln!(
        "render: step {:?} (function {:?}): {} credentials, {resources} required resources, {} required schemas (call {call})",
        step.name,
        step.function,
        request.credentials.len(),
        request.required_schemas.len()
    );
}

/// Adds the request metadata. The tag identifies the request as Crossplane's
/// reconciler computes it (hex SHA-256 of the request's deterministic
/// encoding without `meta`), so a function that echoes or caches by tag sees
/// what it would in a cluster; `crossplane render` itself sends no tag. The
/// capabilities are those Crossplane v2 advertises that render honours: required schemas only
/// when `--required-schemas` gives them or a step declares some.
fn with_meta(mut request: RunFunctionRequest, schemas: bool) -> RunFunctionRequest {
    request.meta = None;
    let tag = hex(&Sha256::digest(request.encode_to_vec()));
    let mut capabilities = vec![
        Capability::Capabilities,
        Capability::RequiredResources,
        Capability::Credentials,
        Capability::Conditions,
    ];
    if schemas {
        capabilities.push(Capability::RequiredSchemas);
    }
    request.meta = Some(RequestMeta {
        tag,
        capabilities: capabilities.iter().map(|c| *c as i32).collect(),
    });
    request
}

// ---- schemas a function may require ----

/// The schemas of `--required-schemas`: each served version of each CRD given, by apiVersion
/// and kind, as the API server would serve its `openAPIV3Schema`.
#[derive(Debug, Clone, Default)]
pub(super) struct SchemaPool {
    schemas: BTreeMap<(String, String), Object>,
}

impl SchemaPool {
    fn new(crds: &[Object]) -> Result<SchemaPool> {
        let mut pool = SchemaPool::default();
        for crd in crds {
            if str_at(crd, &["kind"]) != "CustomResourceDefinition" {
                continue;
            }
            let group = str_at(crd, &["spec", "group"]);
            let kind = str_at(crd, &["spec", "names", "kind"]);
            let versions = object_at(crd, &["spec"])
                .and_then(|spec| spec.get("versions"))
                .and_then(Value::as_array);
            for version in versions.into_iter().flatten() {
                let served = version.get("served") == Some(&Value::Bool(true));
                let schema = version
                    .pointer("/schema/openAPIV3Schema")
                    .and_then(Value::as_object);
                let name = version.get("name").and_then(Value::as_str);
                if let (true, Some(schema), Some(name)) = (served, schema, name) {
                    let key = (format!("{group}/{name}"), kind.to_owned());
                    pool.schemas.insert(key, schema.clone());
                }
            }
        }
        if pool.schemas.is_empty() {
            return Err(Error::msg(
                "cannot load required schemas: no served CustomResourceDefinition version in the files given",
            ));
        }
        Ok(pool)
    }

    /// The answer to each schema requirement: see [`SchemaPool::fetch`].
    fn fetch_all(&self, selectors: &BTreeMap<String, SchemaSelector>) -> BTreeMap<String, Schema> {
        selectors
            .iter()
            .map(|(name, selector)| (name.clone(), self.fetch(selector)))
            .collect()
    }

    /// The schema of a kind, or an empty one for a kind no CRD given serves (as Crossplane
    /// answers for a kind the cluster does not serve).
    fn fetch(&self, selector: &SchemaSelector) -> Schema {
        let key = (selector.api_version.clone(), selector.kind.clone());
        Schema {
            openapi_v3: self.schemas.get(&key).cloned().map(Struct::from),
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

// ---- resources a function may require ----

/// The resources offered to requirements: the `--required-resources` (and
/// `--extra-resources`) files, as `crossplane render` offers, and also the
/// observed composed resources, which a cluster would return too. Sorted by
/// name, as Crossplane's `FilteringFetcher` sorts them.
///
/// Indexed by kind, name and label: this function asks for one selector per repository (its
/// key label), and a scan of every resource for each selector made a pipeline of thousands of
/// repositories cost time quadratic in their number.
struct ResourcePool {
    resources: Vec<Object>,
    /// Resources of each (apiVersion, kind), in order.
    by_kind: HashMap<(String, String), Vec<usize>>,
    /// Resources of each (apiVersion, kind, name), in order.
    by_name: HashMap<(String, String, String), Vec<usize>>,
    /// Resources of each (apiVersion, kind, label, value), in order.
    by_label: HashMap<(String, String, String, String), Vec<usize>>,
}

impl ResourcePool {
    fn new(inputs: &Inputs) -> ResourcePool {
        let mut resources = inputs.required.clone();
        let mut given: HashSet<[String; 4]> = resources.iter().map(identity).collect();
        for object in &inputs.observed {
            if given.insert(identity(object)) {
                resources.push(object.clone());
            }
        }
        resources
            .sort_by(|a, b| str_at(a, &["metadata", "name"]).cmp(str_at(b, &["metadata", "name"])));
        ResourcePool::of(resources)
    }

    /// The pool of `resources`, in their order, indexed.
    fn of(resources: Vec<Object>) -> ResourcePool {
        let (mut by_kind, mut by_name, mut by_label) =
            (HashMap::new(), HashMap::new(), HashMap::new());
        for (i, r) in resources.iter().enumerate() {
            let (api_version, kind) = (str_at(r, &["apiVersion"]), str_at(r, &["kind"]));
            let kind_key = (api_version.to_owned(), kind.to_owned());
            by_kind
                .entry(kind_key.clone())
                .or_insert_with(Vec::new)
                .push(i);
            let name = str_at(r, &["metadata", "name"]).to_owned();
            by_name
                .entry((kind_key.0.clone(), kind_key.1.clone(), name))
                .or_insert_with(Vec::new)
                .push(i);
            let labels = object_at(r, &["metadata", "labels"]).into_iter().flatten();
            for (label, value) in labels {
                let Some(value) = value.as_str() else {
                    continue;
                };
                let key = (
                    kind_key.0.clone(),
                    kind_key.1.clone(),
                    label.clone(),
                    value.to_owned(),
                );
                by_label.entry(key).or_insert_with(Vec::new).push(i);
            }
        }
        ResourcePool {
            resources,
            by_kind,
            by_name,
            by_label,
        }
    }

    fn fetch_all(
        &self,
        selectors: &BTreeMap<String, ResourceSelector>,
    ) -> BTreeMap<String, Resources> {
        selectors
            .iter()
            .map(|(name, selector)| (name.clone(), self.fetch(selector)))
            .collect()
    }

    /// The resources a selector picks: the first with the name, or all with
    /// the labels (an empty label set picks every resource of the kind).
    fn fetch(&self, selector: &ResourceSelector) -> Resources {
        let (api_version, kind) = (selector.api_version.clone(), selector.kind.clone());
        let in_namespace = |r: &&Object| {
            selector
                .namespace
                .as_deref()
                .is_none_or(|ns| ns.is_empty() || str_at(r, &["metadata", "namespace"]) == ns)
        };
        let found = |indexes: Option<&Vec<usize>>| -> Vec<&Object> {
            indexes
                .into_iter()
                .flatten()
                .map(|i| &self.resources[*i])
                .filter(in_namespace)
                .collect()
        };
        let picked: Vec<&Object> = match &selector.r#match {
            Some(resource_selector::Match::MatchName(name)) => {
                let mut named = found(self.by_name.get(&(api_version, kind, name.clone())));
                named.truncate(1);
                named
            }
            Some(resource_selector::Match::MatchLabels(labels)) => {
                let candidates = match labels.labels.iter().next() {
                    Some((label, value)) => {
                        found(
                            self.by_label
                                .get(&(api_version, kind, label.clone(), value.clone())),
                        )
                    }
                    None => found(self.by_kind.get(&(api_version, kind))),
                };
                candidates
                    .into_iter()
                    .filter(|r| {
                        labels
                            .labels
                            .iter()
                            .all(|(k, v)| str_at(r, &["metadata", "labels", k]) == v)
                    })
                    .collect()
            }
            None => Vec::new(),
        };
        Resources {
            items: picked.into_iter().map(|r| resource(r.clone())).collect(),
        }
    }
}

/// What names an object: apiVersion, kind, namespace and name.
fn identity(object: &Object) -> [String; 4] {
    [
        str_at(object, &["apiVersion"]),
        str_at(object, &["kind"]),
        str_at(object, &["metadata", "namespace"]),
        str_at(object, &["metadata", "name"]),
    ]
    .map(str::to_owned)
}

// ---- runners ----

/// How a function runs.
#[derive(Debug, Clone, PartialEq)]
enum Runtime {
    /// This function, through `crate::run_function`.
    InProcess,
    /// Another function, served by the user at a gRPC target.
    Development(GrpcFunction),
}

/// The runtimes of the functions the pipeline uses, by function name.
struct Runners<'a> {
    runtimes: BTreeMap<String, Runtime>,
    /// What runs this function.
    this: ThisFunction<'a>,
}

impl<'a> Runners<'a> {
    /// Decides how each function that a step names runs. A function that
    /// Functions does not list gets no runtime: its step fails when it is
    /// reached, as in `crossplane render`.
    fn start(inputs: &Inputs, this: ThisFunction<'a>) -> Result<Runners<'a>> {
        let mut runtimes = BTreeMap::new();
        for step in &inputs.composition.steps {
            if runtimes.contains_key(&step.function) {
                continue;
            }
            let function = inputs.functions.iter().find(|f| f.name == step.function);
            if let Some(runtime) = runtime_for(&step.function, function)? {
                runtimes.insert(step.function.clone(), runtime);
            }
        }
        Ok(Runners { runtimes, this })
    }

    async fn run(
        &mut self,
        function: &str,
        request: RunFunctionRequest,
    ) -> Result<RunFunctionResponse> {
        match self.runtimes.get_mut(function) {
            Some(Runtime::InProcess) => run_in_process(self.this, &request),
            Some(Runtime::Development(grpc)) => grpc.run(request).await,
            None => Err(Error::msg(format!(
                "unknown Function {function:?} - does it exist in your Functions file?"
            ))),
        }
    }

    fn timed_out(&self, function: &str, timeout: Duration) -> Error {
        let hint = match self.runtimes.get(function) {
            Some(Runtime::Development(grpc)) => {
                format!(": is Function {function:?} serving at {:?}?", grpc.target)
            }
            _ => String::new(),
        };
        Error::msg(format!(
            "context deadline exceeded (--timeout {}){hint}",
            format_go_duration(timeout)
        ))
    }
}

/// This function runs in process when a step names it or when its Function's
/// package is this function's, whatever the runtime annotation says; other
/// functions need the Development runtime.
fn runtime_for(name: &str, function: Option<&Function>) -> Result<Option<Runtime>> {
    if name == THIS_FUNCTION {
        return Ok(Some(Runtime::InProcess));
    }
    let Some(function) = function else {
        return Ok(None);
    };
    if function.package.contains(THIS_FUNCTION) {
        return Ok(Some(Runtime::InProcess));
    }
    let annotation = |key: &str| {
        function
            .annotations
            .get(key)
            .map(String::as_str)
            .unwrap_or_default()
    };
    match annotation(ANNOTATION_RUNTIME) {
        "Development" => {
            let target = Some(annotation(ANNOTATION_TARGET)).filter(|t| !t.is_empty()).unwrap_or(DEFAULT_TARGET);
            Ok(Some(Runtime::Development(GrpcFunction::new(name, target))))
        }
        "" | "Docker" => Err(Error::msg(format!(
            "function-artifactory render does not use Docker: annotate the Function with \
             {ANNOTATION_RUNTIME}: Development and {ANNOTATION_TARGET}: <host:port>, and serve it there"
        ))
        .context(format!("cannot start Function {name:?}"))),
        other => Err(Error::msg(format!("unsupported {ANNOTATION_RUNTIME:?} annotation value {other:?} (unknown runtime)"))
            .context(format!("cannot get runtime for Function {name:?}"))),
    }
}

/// Runs this function on the request as a gRPC server would receive it: the
/// request and the response go through the protobuf wire format, so the
/// function sees exactly the values it would see in a cluster.
fn run_in_process(
    this: ThisFunction<'_>,
    request: &RunFunctionRequest,
) -> Result<RunFunctionResponse> {
    let response = this(&request.encode_to_vec()).map_err(Error::msg)?;
    RunFunctionResponse::decode(response.as_slice())
        .map_err(|e| Error::msg(format!("cannot decode protobuf: {e}")))
}

/// This function in process, as the server runs it: the request's bytes decoded, the core,
/// the response encoded.
pub(super) fn in_process(request: &[u8]) -> std::result::Result<Vec<u8>, String> {
    let request =
        RunFunctionRequest::decode(request).map_err(|e| format!("cannot decode protobuf: {e}"))?;
    Ok(crate::run_function(&request).encode_to_vec())
}

/// A function served over insecure gRPC, connected at first use.
#[derive(Debug, Clone)]
struct GrpcFunction {
    name: String,
    target: String,
    channel: Option<tonic::transport::Channel>,
}

impl PartialEq for GrpcFunction {
    fn eq(&self, other: &Self) -> bool {
        (&self.name, &self.target) == (&other.name, &other.target)
    }
}

impl GrpcFunction {
    fn new(name: &str, target: &str) -> GrpcFunction {
        GrpcFunction {
            name: name.to_string(),
            target: target.to_string(),
            channel: None,
        }
    }

    /// Calls `apiextensions.fn.proto.v1`, and the same bytes on `v1beta1`
    /// when the server does not implement v1 (Crossplane's beta fallback).
    async fn run(&mut self, request: RunFunctionRequest) -> Result<RunFunctionResponse> {
        let channel = self.channel().await?;
        let mut client =
            v1::function_runner_service_client::FunctionRunnerServiceClient::new(channel.clone());
        match client.run_function(request.clone()).await {
            Ok(response) => Ok(response.into_inner()),
            Err(status) if status.code() == tonic::Code::Unimplemented => {
                let mut beta =
                    v1beta1::function_runner_service_client::FunctionRunnerServiceClient::new(
                        channel,
                    );
                beta.run_function(request)
                    .await
                    .map(tonic::Response::into_inner)
                    .map_err(rpc_error)
            }
            Err(status) => Err(rpc_error(status)),
        }
    }

    /// Connects, retrying until it succeeds: Crossplane dials with gRPC's
    /// `waitForReady`, so a function that is still starting is waited for
    /// until the render's deadline.
    async fn channel(&mut self) -> Result<tonic::transport::Channel> {
        if let Some(channel) = &self.channel {
            return Ok(channel.clone());
        }
        let uri = endpoint_uri(&self.target)?;
        let endpoint = tonic::transport::Endpoint::from_shared(uri.clone())
            .map_err(|e| {
                Error::msg(format!(
                    "cannot dial Function {:?} at address {:?}: {e}",
                    self.name, self.target
                ))
            })?
            .connect_timeout(Duration::from_secs(5));
        loop {
            if let Ok(channel) = endpoint.connect().await {
                self.channel = Some(channel.clone());
                return Ok(channel);
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

/// The HTTP/2 URI of a gRPC target (`host:port`, `dns:///host:port`,
/// `passthrough:///host:port`, `ipv4:addr:port`, `ipv6:[addr]:port`).
fn endpoint_uri(target: &str) -> Result<String> {
    let address = if let Some(rest) = target.strip_prefix("dns:") {
        // dns:[//authority/]host:port
        rest.strip_prefix("//")
            .map_or(rest, |r| r.split_once('/').map_or(r, |(_, host)| host))
    } else if let Some(rest) = target.strip_prefix("passthrough:") {
        rest.trim_start_matches('/')
    } else if let Some(rest) = target
        .strip_prefix("ipv4:")
        .or_else(|| target.strip_prefix("ipv6:"))
    {
        rest
    } else if target.starts_with("unix:") {
        return Err(Error::msg(format!(
            "unsupported gRPC target {target:?}: use host:port"
        )));
    } else {
        target
    };
    Ok(format!("http://{address}"))
}

/// A gRPC error as Go's grpc-go prints it.
fn rpc_error(status: tonic::Status) -> Error {
    Error::msg(format!(
        "rpc error: code = {:?} desc = {}",
        status.code(),
        status.message()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(value: Value) -> Object {
        value.as_object().cloned().unwrap()
    }

    #[test]
    fn targets_become_http_uris() {
        assert_eq!(
            endpoint_uri("localhost:9443").unwrap(),
            "http://localhost:9443"
        );
        assert_eq!(
            endpoint_uri("dns:///fn.ns:9443").unwrap(),
            "http://fn.ns:9443"
        );
        assert_eq!(
            endpoint_uri("dns://8.8.8.8/fn:9443").unwrap(),
            "http://fn:9443"
        );
        assert_eq!(
            endpoint_uri("passthrough:///127.0.0.1:1").unwrap(),
            "http://127.0.0.1:1"
        );
        assert_eq!(
            endpoint_uri("ipv6:[::1]:9443").unwrap(),
            "http://[::1]:9443"
        );
        assert!(endpoint_uri("unix:///tmp/fn.sock").is_err());
    }

    #[test]
    fn this_function_runs_in_process_whatever_its_annotations() {
        let by_package = Function {
            name: "fn".into(),
            package: "xpkg.example.io/org/function-artifactory:v0.1.0".into(),
            annotations: [(ANNOTATION_RUNTIME.to_string(), "Development".to_string())].into(),
        };
        assert_eq!(
            runtime_for("fn", Some(&by_package)).unwrap(),
            Some(Runtime::InProcess)
        );
        assert_eq!(
            runtime_for(THIS_FUNCTION, None).unwrap(),
            Some(Runtime::InProcess)
        );
        assert_eq!(runtime_for("other", None).unwrap(), None);
    }

    #[test]
    fn other_functions_need_the_development_runtime() {
        let mut function = Function {
            name: "other".into(),
            package: "xpkg/other:v1".into(),
            ..Default::default()
        };
        let error = format!("{:#}", runtime_for("other", Some(&function)).unwrap_err());
        assert!(error.starts_with(
            "cannot start Function \"other\": function-artifactory render does not use Docker"
        ));
        function
            .annotations
            .insert(ANNOTATION_RUNTIME.into(), "Development".into());
        let Some(Runtime::Development(grpc)) = runtime_for("other", Some(&function)).unwrap()
        else {
            panic!()
        };
        assert_eq!(grpc.target, DEFAULT_TARGET);
        function
            .annotations
            .insert(ANNOTATION_RUNTIME.into(), "Podman".into());
        let error = format!("{:#}", runtime_for("other", Some(&function)).unwrap_err());
        assert!(error
            .contains("unsupported \"render.crossplane.io/runtime\" annotation value \"Podman\""));
    }

    #[test]
    fn selectors_pick_by_name_or_labels() {
        let cm = |name: &str, team: &str| {
            object(
                json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "labels": {"team": team}}}),
            )
        };
        let pool = ResourcePool::of(vec![cm("a", "x"), cm("b", "y"), cm("c", "x")]);
        let by_name = ResourceSelector {
            api_version: "v1".into(),
            kind: "ConfigMap".into(),
            r#match: Some(resource_selector::Match::MatchName("b".into())),
            ..Default::default()
        };
        assert_eq!(pool.fetch(&by_name).items, vec![resource(cm("b", "y"))]);
        let labels = v1::MatchLabels {
            labels: [("team".to_string(), "x".to_string())].into(),
        };
        let by_labels = ResourceSelector {
            r#match: Some(resource_selector::Match::MatchLabels(labels)),
            ..by_name.clone()
        };
        assert_eq!(
            pool.fetch(&by_labels).items,
            vec![resource(cm("a", "x")), resource(cm("c", "x"))]
        );
        let other_kind = ResourceSelector {
            kind: "Secret".into(),
            ..by_labels
        };
        assert!(pool.fetch(&other_kind).items.is_empty());
    }

    #[test]
    fn the_tag_is_a_hash_of_the_request() {
        let request = RunFunctionRequest {
            input: Some(Struct::from(object(json!({"a": 1})))),
            ..Default::default()
        };
        let first = with_meta(request.clone(), false).meta.unwrap();
        assert_eq!(first.tag.len(), 64);
        assert_eq!(
            with_meta(with_meta(request.clone(), false).clone(), false)
                .meta
                .unwrap()
                .tag,
            first.tag
        );
        assert_eq!(first.capabilities, vec![1, 2, 3, 4]);
        // Required schemas only with --required-schemas.
        let with_schemas = with_meta(request, true).meta.unwrap();
        assert_eq!(with_schemas.capabilities, vec![1, 2, 3, 4, 5]);
    }

    #[test]
    fn schemas_are_answered_from_the_crds_given_and_empty_for_other_kinds() {
        let crd = object(json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "spec": {"group": "example.org", "names": {"kind": "Thing"}, "versions": [
                {"name": "v1", "served": true, "schema": {"openAPIV3Schema": {"type": "object"}}},
                {"name": "v0", "served": false, "schema": {"openAPIV3Schema": {"type": "object"}}},
            ]},
        }));
        let pool = SchemaPool::new(&[crd]).unwrap();
        let wanted = |api_version: &str| SchemaSelector {
            api_version: api_version.into(),
            kind: "Thing".into(),
        };
        let selectors = BTreeMap::from([
            ("served".to_owned(), wanted("example.org/v1")),
            ("not-served".to_owned(), wanted("example.org/v0")),
        ]);
        let answers = pool.fetch_all(&selectors);
        assert_eq!(
            answers["served"].openapi_v3.as_ref().unwrap().fields()["type"],
            "object"
        );
        assert_eq!(answers["not-served"].openapi_v3, None);
        let not_crds = SchemaPool::new(&[object(json!({"kind": "ConfigMap"}))]);
        assert!(not_crds.is_err());
    }
}
