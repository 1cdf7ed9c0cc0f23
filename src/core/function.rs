//! The entry point: one RunFunction call, read top to bottom.
//!
//! The desired state a function returns is the whole intent of the pipeline
//! so far: whatever it leaves out, Crossplane deletes. So the response starts
//! as a copy of the request's desired state and context, and this function
//! adds only the resources and status it owns.

use crate::core::adoption;
use crate::core::catalog::{catalog, Kind, ProviderApi, Rclass};
use crate::core::compose::Composer;
use crate::core::composite::{self, CompositeMeta, CompositeSpec};
use crate::core::consequences;
use crate::core::credentials;
use crate::core::drift;
use crate::core::input::{read_input, ApiChoice, Input, SettingsAt};
use crate::core::lifecycle::{self, Retirement};
use crate::core::observed::Observed;
use crate::core::plan::{self, Planned};
use crate::core::problems::{some_of, Category, Findings};
use crate::core::size::ResponseSize;
use crate::core::sorted;
use crate::core::status;
use crate::core::takeover;
use crate::core::validation::live::{self, LiveSchema, LiveSchemas};
use crate::core::wiring;
use crate::proto::v1::{
    Capability, Condition, Ready, Requirements, Resource, ResourceSelector, ResponseMeta,
    Result as FnResult, RunFunctionRequest, RunFunctionResponse, Severity, State,
    Status as ConditionStatus, Target,
};
use crate::proto::{ObjectView, Struct};
use std::cell::OnceCell;
use std::collections::{BTreeMap, BTreeSet, HashSet};

/// No desired resources: what a request without a desired state passes on.
static NO_RESOURCES: BTreeMap<String, Resource> = BTreeMap::new();

/// Runs the function for one request. Pure: no I/O, clock or environment.
pub fn run_function(request: &RunFunctionRequest) -> RunFunctionResponse {
    run_function_at(request, SettingsAt::Input)
}

/// [`run_function`] with the settings at `at` in the step's input: the WebAssembly
/// component reads them from function-wasm's `config`.
pub fn run_function_at(request: &RunFunctionRequest, at: SettingsAt) -> RunFunctionResponse {
    let mut findings = Findings::default();
    run(request, at, &mut findings)
}

/// [`run_function`], also returning the problems and warnings it found, each
/// with its field path and repository entry, for tools that show them next to
/// the entries (the fatal result's message is made of the same problems).
pub fn run_function_with_findings(request: &RunFunctionRequest) -> (RunFunctionResponse, Findings) {
    let mut findings = Findings::default();
    let response = run(request, SettingsAt::Input, &mut findings);
    (response, findings)
}

fn run(
    request: &RunFunctionRequest,
    at: SettingsAt,
    findings: &mut Findings,
) -> RunFunctionResponse {
    // Read the input first: it sets the TTL even of a failed call.
    let step_input = request.input.as_ref().map(Struct::view);
    let input = read_input(step_input, at, findings);
    let mut response = start_response(request, &input);

    let Some(composite) = observed_composite(request) else {
        findings.problem(
            Category::InvalidComposite,
            "observed.composite",
            None,
            "the request has no observed composite resource",
            "run the function as a step of a Composition pipeline",
        );
        return fatal(request, response, findings);
    };

    // Plan keys, kinds and wiring for every entry, then check them against
    // what is live: nothing may rename, replace or take over a repository.
    let meta = composite::read_meta(composite);
    let spec = composite::read_spec(composite, findings);
    // Every schema Crossplane sent, read once: found by its hash, compiled only if new.
    let schemas = LiveSchemas::read(&request.required_schemas);
    let auto_kinds = AutoKinds::new(&input, &spec);
    let api = resolve_api(&schemas, &input, &meta, &auto_kinds);
    if !release_has_api(&input, api, findings) {
        return fatal(request, response, findings);
    }
    let ctx = plan::Context {
        spec: &spec,
        input: &input,
        meta: &meta,
        api,
    };
    let mut planned = plan::plan(&ctx, findings);
    wiring::wire(&mut planned, &spec.repositories, findings);
    // The first step of the v0.7.0 group move: nothing of the flat API is rendered, and its
    // live resources are retired below, orphaned first (docs/upgrading.md).
    if input.release_flat {
        planned.retain(|p| p.kind.api != ProviderApi::Flat);
    }
    let live: Vec<Option<Observed>> = planned
        .iter()
        .map(|p| observed_resource(request, p.name).map(Observed::read))
        .collect();
    let renamed_by_project_key =
        lifecycle::check_project_key_change(&planned, &live, spec.project_key, findings)
            || lifecycle::check_naming_format_change(
                &planned,
                &live,
                &lifecycle::Naming {
                    format: input
                        .naming_format
                        .as_deref()
                        .unwrap_or(crate::core::keys::default_format(spec.project_key)),
                    given: input.naming_format.is_some(),
                    path: input.at.path_of("naming.format"),
                    meta: &meta,
                    project_key: spec.project_key,
                },
                findings,
            );
    lifecycle::check_group_move(&planned, &live, input.at.path_of("providerApi"), findings);
    for (p, live) in planned.iter().zip(&live) {
        if let Some(live) = live {
            lifecycle::check_immutable(p, live, renamed_by_project_key, findings);
        }
    }
    // What the previous call said, for results about changes, and the phases a key went
    // through: a new key is created, never taken over (docs/design.md, "Adoption").
    let previous = status::PreviousStatus::read(composite);
    let mut adoptions = adoption::adopt(
        &mut planned,
        &live,
        &adoption::Context {
            guard: input.create_guard,
            previous: previous.phases(),
        },
    );
    // The kinds of the other provider API that could hold the same keys (a Crossplane v1
    // claim's resources next to a v2 composite's): looked up only where the cluster serves them.
    let other_kinds: Vec<Option<&Kind>> = planned
        .iter()
        .map(|p| lifecycle::other_api_kind(p, input.provider_release))
        .collect();
    // Their schemas tell whether they are served; asked for only when the lookup can be made.
    let looks_up_keys = advertises(request, Capability::RequiredResources);
    let schema_kinds = advertises(request, Capability::RequiredSchemas).then(|| {
        let mut kinds = schema_kinds(&ctx, &planned, &auto_kinds);
        if looks_up_keys {
            kinds.extend(
                other_kinds
                    .iter()
                    .flatten()
                    .map(|k| (k.api_version.as_str(), k.kind.as_str())),
            );
        }
        kinds
    });
    if let Some(kinds) = &schema_kinds {
        response
            .requirements
            .get_or_insert_with(Requirements::default)
            .schemas = live::requirements(kinds.iter().copied());
    }
    check_served(&planned, &schemas, findings);
    credentials::settle_write_only(&mut planned, &schemas, findings);
    let served_others: Vec<Option<&Kind>> = other_kinds
        .iter()
        .map(|other| other.filter(|kind| served(kind, &schemas, &input)))
        .collect();
    let resources = looks_up_keys.then(|| {
        let mut resources = lifecycle::key_requirements(&planned, &served_others);
        resources.extend(credentials::secret_requirements(&planned));
        resources
    });

    // A first call: Crossplane will call again with what this one asks for, and keeps only
    // the last answer, so rendering now would be thrown away. Only the requirements go back.
    // A call that found problems already answers them in full, as it always did.
    if !findings.has_problems()
        && asks_for_more(request, &schemas, schema_kinds.as_ref(), resources.as_ref())
    {
        if let Some(resources) = resources {
            response
                .requirements
                .get_or_insert_with(Requirements::default)
                .resources = resources;
        }
        return response;
    }
    if let Some(resources) = resources {
        credentials::read_versions(&mut planned, &request.required_resources, findings);
        response
            .requirements
            .get_or_insert_with(Requirements::default)
            .resources = resources;
        for (p, other) in planned.iter().zip(&served_others) {
            let found = request
                .required_resources
                .get(&lifecycle::requirement_name(p));
            lifecycle::check_conflicts(p, found, &meta, findings);
            if let Some(other) = other {
                let found = request
                    .required_resources
                    .get(&lifecycle::other_requirement_name(p, other));
                lifecycle::check_conflicts(p, found, &meta, findings);
            }
        }
    } else {
        credentials::warn_unversioned(&planned, findings);
    }

    // Render and check every resource; any problem fails the whole call and
    // leaves the desired state as it came in, so nothing is ever dropped.
    // Resources are kept only while the response would still be small enough for Crossplane
    // to read; past that, they are measured and dropped, and the call fails.
    let mut composer = Composer::new(&input, spec.project_key).with_live(&schemas);
    let mut size = ResponseSize::of(&response);
    let mut resources: Vec<Struct> = Vec::with_capacity(planned.len());
    for ((p, adoption), live) in planned.iter().zip(&adoptions).zip(&live) {
        let origin = adoption.origin.map(adoption::Origin::as_str);
        let at_provider = live.as_ref().and_then(Observed::at_provider);
        let resource = composer.compose(p, origin, at_provider, findings);
        if size.add(p.name, &resource) {
            resources.push(resource);
        }
    }
    size.check(findings);
    check_name_collisions(request, &planned, findings);
    if !findings.has_problems() {
        consequences::check_replacements(&planned, &resources, &live, findings);
    }
    if findings.has_problems() {
        return fatal(request, response, findings);
    }

    // Repositories gone from the spec are retired without deleting them by accident.
    let observed = observed_resources(request);
    let earlier_steps = request
        .desired
        .as_ref()
        .map(|desired| &desired.resources)
        .unwrap_or(&NO_RESOURCES);
    // Released flat resources are always orphaned first: their repositories stay.
    let retirements = lifecycle::retire(
        observed,
        earlier_steps,
        &planned,
        input.deletion_protection || input.release_flat,
    );
    let moves = lifecycle::moves(&retirements, &planned);
    let held_back: HashSet<&str> = moves.iter().map(|m| m.to).collect();
    for (p, adoption) in planned.iter().zip(adoptions.iter_mut()) {
        if held_back.contains(p.name) {
            adoption.phase = adoption::Phase::Waiting(adoption::Wait::Moving);
        }
    }
    let previews = takeover::previews(&planned, &resources, &live, &adoptions);
    let consequential = consequences::consequences(&planned, &resources, &live, &adoptions);
    let desired = response.desired.get_or_insert_with(State::default);
    for (((p, resource), live), adoption) in
        planned.iter().zip(resources).zip(&live).zip(&adoptions)
    {
        // A moved key is handed over once the old resource is gone; a new virtual waits for
        // its members.
        if !adoption.phase.is_waiting() {
            let ready = status::readiness(live.as_ref(), &adoption.phase);
            insert_desired(desired, p.name, resource, ready);
        }
    }
    for retirement in &retirements {
        if let Retirement::Orphaning {
            name,
            desired: resource,
            ..
        } = retirement
        {
            let live = observed_resource(request, name).map(Observed::read);
            insert_desired(
                desired,
                name,
                Struct::from_value(resource.clone()),
                status::readiness(live.as_ref(), &adoption::Phase::Managed),
            );
        }
    }

    // Readiness, status, conditions, and results for what changed.
    let leaks: Vec<bool> = live
        .iter()
        .map(|l| l.as_ref().is_some_and(lifecycle::leak_suspected))
        .collect();
    // The input's warnings, taken before drift adds its own (which carry their own results).
    let input_warnings: Vec<FnResult> = composite_warnings(findings).collect();
    let drift_results = drift::drift_warnings(&planned, &live, &input, spec.project_key, findings);
    let report = status::Report {
        planned: &planned,
        live: &live,
        adoptions: &adoptions,
        leaks: &leaks,
        retirements: &retirements,
        previews: &previews,
        input: &input,
        findings,
    };
    status::set_composite_status(desired, &report);
    response
        .conditions
        .push(status::repositories_condition(&report));
    response
        .results
        .extend(status::change_results(&report, &previous));
    response.results.extend(moves.iter().map(move_result));
    response.results.extend(renamed_result(&planned, &live));
    response
        .results
        .extend(consequential_result(&consequential));
    response.results.extend(input_warnings);
    response.results.extend(drift_results);
    if size.near_limit() {
        size.measured(&response);
        size.check(findings);
        if findings.has_problems() {
            return fatal(request, start_response(request, &input), findings);
        }
    }
    findings.rendered = Some((api, planned.len()));
    response
}

/// Whether the request lacks an answer to something this call asks for: a schema (by its kind,
/// under our requirement name) or a required resource. The caller advertised the capability,
/// so it will call again with the answers (Crossplane's `FetchingFunctionRunner` fetches what
/// the requirements name and calls again while they are not all in the request: docs/design.md,
/// "Protocol").
fn asks_for_more(
    request: &RunFunctionRequest,
    answered: &LiveSchemas<'_>,
    schema_kinds: Option<&BTreeSet<(&str, &str)>>,
    resources: Option<&BTreeMap<String, ResourceSelector>>,
) -> bool {
    let lacks_schema =
        schema_kinds.is_some_and(|kinds| kinds.iter().any(|(v, k)| answered.get(v, k).is_none()));
    let lacks_resource = resources.is_some_and(|wanted| {
        wanted
            .keys()
            .any(|name| !request.required_resources.contains_key(name))
    });
    lacks_schema || lacks_resource
}

/// A Normal result for a key that moves to a renamed entry.
fn move_result(m: &lifecycle::Move) -> FnResult {
    FnResult {
        severity: Severity::Normal as i32,
        message: format!(
            "repository key \"{}\" moves from composed resource \"{}\" to \"{}\": \"{}\" is released first (the repository is kept), then \"{}\" takes the repository over",
            m.key, m.from, m.to, m.from, m.to
        ),
        reason: Some("RepositoryMoving".to_owned()),
        target: Some(Target::Composite as i32),
    }
}

/// A Normal result for the live resources whose kind the provider renamed, rendered under the
/// new name: the same managed resource, key and repository.
fn renamed_result(planned: &[Planned], live: &[Option<Observed>]) -> Option<FnResult> {
    let renamed: Vec<String> = planned
        .iter()
        .zip(live)
        .filter_map(|(p, live)| lifecycle::renamed_kind(p, live.as_ref()?))
        .collect();
    if renamed.is_empty() {
        return None;
    }
    Some(FnResult {
        severity: Severity::Normal as i32,
        message: format!(
            "rendered under the kind names of the provider release targeted, the same managed resources, keys and repositories: {}",
            some_of(&renamed)
        ),
        reason: Some("KindRenamed".to_owned()),
        target: Some(Target::Composite as i32),
    })
}

/// One Warning for every consequential change this answer makes (docs/design.md, "Lifecycle").
fn consequential_result(lines: &[String]) -> Option<FnResult> {
    const SHOWN: usize = 20;
    if lines.is_empty() {
        return None;
    }
    let mut message = lines[..lines.len().min(SHOWN)].join("; ");
    if lines.len() > SHOWN {
        message.push_str(&format!("; and {} more", lines.len() - SHOWN));
    }
    Some(FnResult {
        severity: Severity::Warning as i32,
        message,
        reason: Some("ConsequentialChange".to_owned()),
        target: Some(Target::CompositeAndClaim as i32),
    })
}

/// Warnings about the whole call (the input's, such as a provider release the catalog has
/// not got) have no repository status to go to: each is a Warning result.
fn composite_warnings(findings: &Findings) -> impl Iterator<Item = FnResult> + '_ {
    findings
        .warnings
        .iter()
        .filter(|w| w.entry.is_none())
        .map(|w| FnResult {
            severity: Severity::Warning as i32,
            message: format!("{}: {}", w.path, w.message),
            reason: Some("InputWarning".to_owned()),
            target: Some(Target::Composite as i32),
        })
}

fn insert_desired(desired: &mut State, name: &str, resource: Struct, ready: Ready) {
    desired.resources.insert(
        name.to_owned(),
        Resource {
            resource: Some(resource),
            ready: ready as i32,
            ..Resource::default()
        },
    );
}

fn advertises(request: &RunFunctionRequest, capability: Capability) -> bool {
    request
        .meta
        .as_ref()
        .is_some_and(|m| m.capabilities.contains(&(capability as i32)))
}

fn observed_resources(request: &RunFunctionRequest) -> Vec<(&String, ObjectView<'_>)> {
    let Some(observed) = request.observed.as_ref() else {
        return Vec::new();
    };
    observed
        .resources
        .iter()
        .filter_map(|(name, r)| r.resource.as_ref().map(|s| (name, s.view())))
        .collect()
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
                // At most a billion seconds (input::MAX_TTL): both fit.
                seconds: input.ttl.as_secs() as i64,
                nanos: input.ttl.subsec_nanos() as i32,
            }),
        }),
        desired: Some(request.desired.clone().unwrap_or_default()),
        context: request.context.clone(),
        ..RunFunctionResponse::default()
    }
}

/// How many problems the claim's condition and event show, and how long each may be: a
/// condition message is stored in the object, events are cut by the API server.
const CLAIM_PROBLEMS: usize = 5;
const CLAIM_PROBLEM_CHARS: usize = 400;

/// A fatal result lists every problem; the desired state stays as it came in.
///
/// Crossplane applies a fatal response's conditions, and sets those a function did not return
/// to Unknown: where it honours conditions, `RepositoriesReady` says False with the problems
/// (the first of them, and how many), and a Warning result takes them to the claim's events,
/// so that a claim's author sees what to fix without the composite.
fn fatal(
    request: &RunFunctionRequest,
    mut response: RunFunctionResponse,
    findings: &Findings,
) -> RunFunctionResponse {
    if advertises(request, Capability::Conditions) {
        let summary = findings.summary(CLAIM_PROBLEMS, CLAIM_PROBLEM_CHARS);
        response.conditions.push(Condition {
            r#type: status::CONDITION_TYPE.to_owned(),
            status: ConditionStatus::ConditionFalse as i32,
            reason: findings.fatal_reason().to_owned(),
            message: Some(summary.clone()),
            target: Some(Target::CompositeAndClaim as i32),
        });
        response.results.push(FnResult {
            severity: Severity::Warning as i32,
            message: summary,
            reason: Some(findings.fatal_reason().to_owned()),
            target: Some(Target::CompositeAndClaim as i32),
        });
    }
    response.results.push(FnResult {
        severity: Severity::Fatal as i32,
        message: findings.fatal_message(),
        reason: Some(findings.fatal_reason().to_owned()),
        target: Some(Target::Composite as i32),
    });
    response
}

/// The observed composite, read as a view of the request's bytes: nothing of it is decoded.
fn observed_composite(request: &RunFunctionRequest) -> Option<ObjectView<'_>> {
    let resource = request
        .observed
        .as_ref()?
        .composite
        .as_ref()?
        .resource
        .as_ref()?;
    Some(resource.view())
}

/// An observed composed resource, read as a view of the request's bytes, as the composite is.
fn observed_resource<'r>(request: &'r RunFunctionRequest, name: &str) -> Option<ObjectView<'r>> {
    let resource = request
        .observed
        .as_ref()?
        .resources
        .get(name)?
        .resource
        .as_ref()?;
    Some(resource.view())
}

/// `auto`: namespaced when the composite is namespaced (a namespaced composite composes only
/// namespaced resources); else cluster, unless the cluster's live schemas say that it serves
/// the flat kinds of the entries and not the cluster ones (a provider of v0.6.0 or before).
fn resolve_api(
    live: &LiveSchemas<'_>,
    input: &Input,
    meta: &CompositeMeta,
    auto_kinds: &AutoKinds<'_, '_>,
) -> ProviderApi {
    match input.provider_api {
        ApiChoice::Fixed(api) => api,
        ApiChoice::Auto if meta.namespace.is_some() => ProviderApi::Namespaced,
        ApiChoice::Auto if live.is_empty() => ProviderApi::Cluster,
        ApiChoice::Auto => {
            let [cluster, flat] = auto_kinds.get();
            let served = |kinds: &KindSet| {
                let (mut any, mut all) = (false, true);
                for answer in kinds.iter().filter_map(|(v, k)| live.get(v, k)) {
                    let served = matches!(answer, LiveSchema::Served(_));
                    any |= served;
                    all &= served;
                }
                (any, all)
            };
            match (served(cluster), served(flat)) {
                ((false, _), (true, true)) => ProviderApi::Flat,
                _ => ProviderApi::Cluster,
            }
        }
    }
}

/// Kinds by apiVersion and kind, sorted.
type KindSet = BTreeSet<(&'static str, &'static str)>;

/// The entries' kinds in the cluster and in the flat API, which `providerApi: auto` weighs and
/// asks for: found at most once a call, and only when the call needs them.
struct AutoKinds<'i, 's> {
    input: &'i Input,
    spec: &'i CompositeSpec<'s>,
    kinds: OnceCell<[KindSet; 2]>,
}

impl<'i, 's> AutoKinds<'i, 's> {
    fn new(input: &'i Input, spec: &'i CompositeSpec<'s>) -> Self {
        AutoKinds {
            input,
            spec,
            kinds: OnceCell::new(),
        }
    }

    /// The cluster kinds, then the flat ones.
    fn get(&self) -> &[KindSet; 2] {
        self.kinds.get_or_init(|| {
            [ProviderApi::Cluster, ProviderApi::Flat]
                .map(|api| entry_kinds(self.input, self.spec, api))
        })
    }
}

/// The kinds the entries render to in `api` (of the input's release), each once, sorted.
/// Entries share a few (class, package type) pairs: each pair is looked up once.
fn entry_kinds(input: &Input, spec: &CompositeSpec<'_>, api: ProviderApi) -> KindSet {
    let catalog = catalog();
    if input
        .provider_release
        .is_some_and(|release| !catalog.has_api(release, api))
    {
        return BTreeSet::new();
    }
    let mut pairs: Vec<(Rclass, &str)> = spec
        .repositories
        .iter()
        .filter_map(|entry| Some((entry.rclass?, entry.package_type?)))
        .collect();
    pairs.sort_unstable();
    pairs.dedup();
    sorted::set(pairs.into_iter().filter_map(|(rclass, package_type)| {
        let kind = catalog.kind_in(input.provider_release, api, rclass, package_type)?;
        Some((kind.api_version.as_str(), kind.kind.as_str()))
    }))
}

/// The kinds whose schemas the call asks for: those it renders; with `providerApi: auto` for
/// a cluster-scoped composite, the entries' cluster and flat kinds both, so that the
/// requirements do not change with what the answers decide.
fn schema_kinds<'c>(
    ctx: &plan::Context<'_>,
    planned: &[Planned<'c>],
    auto_kinds: &AutoKinds<'_, '_>,
) -> BTreeSet<(&'c str, &'c str)> {
    let mut kinds: BTreeSet<(&str, &str)> = sorted::set(
        planned
            .iter()
            .map(|p| (p.kind.api_version.as_str(), p.kind.kind.as_str())),
    );
    if ctx.input.provider_api == ApiChoice::Auto && ctx.meta.namespace.is_none() {
        for api_kinds in auto_kinds.get() {
            kinds.extend(api_kinds.iter().copied());
        }
    }
    kinds
}

/// Whether the cluster is known to serve `kind`: its live schema says so, or, without live
/// schemas, `providerVersion` names a release from before SafeStart that has it (such a
/// release serves every kind it installs). Never guessed: Crossplane fails the whole call when
/// a kind it is asked for is not served.
fn served(kind: &Kind, schemas: &LiveSchemas<'_>, input: &Input) -> bool {
    if !schemas.is_empty() {
        return matches!(
            schemas.get(&kind.api_version, &kind.kind),
            Some(LiveSchema::Served(_))
        );
    }
    input
        .provider_release
        .is_some_and(|release| lifecycle::serves_every_kind(release) && kind.in_release(release))
}

/// A kind the cluster does not serve fails the call, once per kind with every entry of it:
/// the provider would never create those repositories.
fn check_served(planned: &[Planned], live: &LiveSchemas<'_>, findings: &mut Findings) {
    if live.is_empty() {
        return;
    }
    let mut unserved: BTreeMap<(&str, &str), Vec<&Planned>> = BTreeMap::new();
    for p in planned {
        if let Some(LiveSchema::NotServed) = live.get(&p.kind.api_version, &p.kind.kind) {
            unserved
                .entry((p.kind.api_version.as_str(), p.kind.kind.as_str()))
                .or_default()
                .push(p);
        }
    }
    for ((api_version, kind), entries) in unserved {
        let labels: Vec<String> = entries.iter().map(|p| p.entry.label()).collect();
        findings.problem(
            Category::InvalidComposite,
            entries[0].entry.field_path("packageType"),
            Some(entries[0].entry.index),
            format!(
                "the cluster does not serve {kind} ({api_version}), which {} {}",
                some_of(&labels),
                if labels.len() == 1 { "needs" } else { "need" }
            ),
            "install or upgrade provider-jfrog-artifactory to a release that has this kind (set providerVersion to the release installed), or activate the kind with a ManagedResourceActivationPolicy if the provider runs with SafeStart",
        );
    }
}

/// A release named by `providerVersion` must have the provider API rendered for: every
/// entry would fail otherwise, each for the same reason.
fn release_has_api(input: &Input, api: ProviderApi, findings: &mut Findings) -> bool {
    let catalog = catalog();
    let Some(release) = input.provider_release else {
        return true;
    };
    if catalog.has_api(release, api) {
        return true;
    }
    let spans: Vec<String> = ProviderApi::ALL
        .into_iter()
        .map(|api| {
            let (first, last) = catalog.api_releases(api);
            format!(
                "{api}: {} to {}",
                catalog.release_name(first),
                catalog.release_name(last)
            )
        })
        .collect();
    findings.problem(
        Category::InvalidInput,
        input.at.path_of("providerVersion"),
        None,
        format!(
            "provider release {} has no {api} API ({})",
            catalog.release_name(release),
            spans.join("; ")
        ),
        "set providerApi to an API of that release, or providerVersion to the release the cluster runs",
    );
    false
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
