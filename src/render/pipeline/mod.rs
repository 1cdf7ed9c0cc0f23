//! Running the Composition's pipeline as `crossplane render` does
//! (`cmd/crank/render/render.go`, `internal/xfn/required_resources.go`).
//!
//! Each step gets the observed state (the XR and the observed composed
//! resources), the desired state and context the previous step returned, and
//! its own input. A step that asks for resources is called again with them,
//! until its requirements stop changing. This function runs in process; any
//! other function is called over insecure gRPC at its development target.
//!
//! - [`inputs`]: the files loaded and checked before anything runs;
//! - this module: the run loop over the steps, each step's request, each step called again
//!   until its requirements stabilise, and what it returned;
//! - [`requirements`]: the answers to a step's requirements, from the resources and schemas
//!   render can offer;
//! - [`runners`]: how each function runs, in process or over gRPC.
//!
//! The dependencies go one way: this module names the three others, [`inputs`] names
//! [`requirements`] (the schema pool it loads), and the others name no module of the pipeline.

mod inputs;
mod requirements;
mod runners;

pub(super) use inputs::Inputs;
pub(super) use runners::in_process;

use super::load::{resource_name, Step};
use super::{secrets, Result, ThisFunction};
use crate::proto::v1::{
    Capability, Condition, RequestMeta, Requirements, RunFunctionRequest, RunFunctionResponse,
    Severity, State,
};
use crate::proto::Struct;
use anyhow::{Context as _, Error};
use prost::Message;
use requirements::{resource, Answers, ResourcePool, SchemaPool};
use runners::Runners;
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::time::Duration;
use tokio::time::Instant;

/// How often a step is called again for changed requirements.
const MAX_REQUIREMENTS_ITERATIONS: usize = 5;

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
    let steps = &inputs.composition.steps;
    let mut runners =
        Runners::start(steps, &inputs.functions, this).context("cannot start function runtimes")?;
    let pool = ResourcePool::new(&inputs.required, &inputs.observed);
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

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::load::Object;
    use serde_json::json;

    fn object(value: Value) -> Object {
        value.as_object().cloned().unwrap()
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
}
