//! The entry point: one RunFunction call, read top to bottom.
//!
//! The desired state a function returns is the whole intent of the pipeline
//! so far: whatever it leaves out, Crossplane deletes. So the response starts
//! as a copy of the request's desired state and context, and this function
//! adds only the resources and status it owns.

use crate::catalog::ProviderApi;
use crate::compose::compose;
use crate::contract::{self, CompositeMeta};
use crate::input::{read_input, ApiChoice, Input};
use crate::plan::{self, Planned};
use crate::problems::{Category, Findings};
use crate::proto::v1::{
    Resource, ResponseMeta, Result as FnResult, RunFunctionRequest, RunFunctionResponse, Severity,
    State, Target,
};
use crate::proto::Struct;
use crate::status;
use serde_json::{json, Map, Value};

type Object = Map<String, Value>;

/// Runs the function for one request. Pure: no I/O, clock or environment.
pub fn run_function(request: &RunFunctionRequest) -> RunFunctionResponse {
    let mut findings = Findings::default();
    let input_value = request.input.as_ref().map(|s| Value::Object(s.0.clone()));
    let input = read_input(input_value.as_ref(), &mut findings);
    let mut response = start_response(request, &input);

    let Some(composite) = observed_composite(request) else {
        findings.problem(
            Category::InvalidComposite,
            "observed.composite",
            None,
            "the request has no observed composite resource",
            "run the function as a step of a Composition pipeline",
        );
        return fatal(response, &findings);
    };
    let meta = contract::read_meta(composite);
    let spec = contract::read_spec(composite, &mut findings);
    let api = resolve_api(input.provider_api, &meta);
    let ctx = plan::Context {
        spec: &spec,
        input: &input,
        meta: &meta,
        api,
    };
    let planned = plan::plan(&ctx, &mut findings);
    let resources: Vec<Value> = planned
        .iter()
        .map(|p| compose(p, &input, spec.project_key.as_deref(), &mut findings))
        .collect();
    check_name_collisions(request, &planned, &mut findings);
    if findings.has_problems() {
        return fatal(response, &findings);
    }

    let observed: Vec<Option<&Object>> = planned
        .iter()
        .map(|p| observed_resource(request, p.name))
        .collect();
    let desired = response.desired.get_or_insert_with(State::default);
    for ((p, resource), observed) in planned.iter().zip(resources).zip(&observed) {
        desired.resources.insert(
            p.name.to_owned(),
            Resource {
                resource: Some(Struct::from_value(resource)),
                ready: status::readiness(*observed) as i32,
                ..Resource::default()
            },
        );
    }
    set_composite_status(desired, &planned, &observed, &input, &findings);
    response
        .conditions
        .push(status::repositories_condition(&planned, &observed));
    report_creations(&mut response, &planned, &observed);
    response
}

/// The response before any work: tag, TTL, and the request's desired state and context.
fn start_response(request: &RunFunctionRequest, input: &Input) -> RunFunctionResponse {
    RunFunctionResponse {
        meta: Some(ResponseMeta {
            tag: request
                .meta
                .as_ref()
                .map(|m| m.tag.clone())
                .unwrap_or_default(),
            ttl: Some(prost_types::Duration {
                seconds: input.ttl.0,
                nanos: input.ttl.1,
            }),
        }),
        desired: Some(request.desired.clone().unwrap_or_default()),
        context: request.context.clone(),
        ..RunFunctionResponse::default()
    }
}

/// A fatal result lists every problem; the desired state stays as it came in.
fn fatal(mut response: RunFunctionResponse, findings: &Findings) -> RunFunctionResponse {
    response.results.push(FnResult {
        severity: Severity::Fatal as i32,
        message: findings.fatal_message(),
        reason: Some(findings.fatal_reason().to_owned()),
        target: Some(Target::Composite as i32),
    });
    response
}

fn observed_composite(request: &RunFunctionRequest) -> Option<&Object> {
    let resource = request
        .observed
        .as_ref()?
        .composite
        .as_ref()?
        .resource
        .as_ref()?;
    Some(&resource.0)
}

fn observed_resource<'r>(request: &'r RunFunctionRequest, name: &str) -> Option<&'r Object> {
    let resource = request
        .observed
        .as_ref()?
        .resources
        .get(name)?
        .resource
        .as_ref()?;
    Some(&resource.0)
}

/// `auto`: namespaced when the composite is namespaced, else cluster.
fn resolve_api(choice: ApiChoice, meta: &CompositeMeta) -> ProviderApi {
    match choice {
        ApiChoice::Fixed(api) => api,
        ApiChoice::Auto if meta.namespace.is_some() => ProviderApi::Namespaced,
        ApiChoice::Auto => ProviderApi::Cluster,
    }
}

/// Our resources are named after the entries; an earlier step must not own one of those names.
fn check_name_collisions(
    request: &RunFunctionRequest,
    planned: &[Planned],
    findings: &mut Findings,
) {
    let Some(desired) = request.desired.as_ref() else {
        return;
    };
    for p in planned
        .iter()
        .filter(|p| desired.resources.contains_key(p.name))
    {
        findings.problem(
            Category::InvalidComposite,
            p.entry.field_path("name"),
            Some(p.entry.index),
            format!(
                "{}: an earlier pipeline step already renders a composed resource named \"{}\"",
                p.entry.label(),
                p.name
            ),
            "rename the entry, or the other step's resource",
        );
    }
}

fn set_composite_status(
    desired: &mut State,
    planned: &[Planned],
    observed: &[Option<&Object>],
    input: &Input,
    findings: &Findings,
) {
    let repositories: Vec<Value> = planned
        .iter()
        .zip(observed)
        .map(|(p, o)| {
            let warnings: Vec<String> = findings
                .warnings
                .iter()
                .filter(|w| w.entry == Some(p.entry.index))
                .map(|w| w.message.clone())
                .collect();
            status::repository_status(p, *o, input, &warnings)
        })
        .collect();
    let composite = desired.composite.get_or_insert_with(Resource::default);
    let object = composite.resource.get_or_insert_with(Struct::default);
    let status = object.0.entry("status").or_insert_with(|| json!({}));
    if !status.is_object() {
        *status = json!({});
    }
    status["repositories"] = Value::Array(repositories);
}

/// A Normal result for repositories that are not observed yet.
fn report_creations(
    response: &mut RunFunctionResponse,
    planned: &[Planned],
    observed: &[Option<&Object>],
) {
    let new: Vec<String> = planned
        .iter()
        .zip(observed)
        .filter(|(_, o)| o.is_none())
        .map(|(p, _)| format!("{} ({} {})", p.key, p.kind.rclass, p.kind.package_type))
        .collect();
    if new.is_empty() {
        return;
    }
    response.results.push(FnResult {
        severity: Severity::Normal as i32,
        message: format!("creating {} repositories: {}", new.len(), new.join(", ")),
        reason: Some("CreatingRepositories".into()),
        target: Some(Target::CompositeAndClaim as i32),
    });
}
