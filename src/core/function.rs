//! The entry point: one RunFunction call, read top to bottom.
//!
//! The desired state a function returns is the whole intent of the pipeline
//! so far: whatever it leaves out, Crossplane deletes. So the response starts
//! as a copy of the request's desired state and context, and this function
//! adds only the resources and status it owns.

use crate::core::catalog::{catalog, Kind, ProviderApi, Rclass};
use crate::core::compose::Composer;
use crate::core::composite::{self, CompositeMeta, CompositeSpec};
use crate::core::credentials;
use crate::core::drift;
use crate::core::input::{read_input, ApiChoice, Input, SettingsAt};
use crate::core::lifecycle::observed::Observed;
use crate::core::lifecycle::phase::{Origin, Phase};
use crate::core::lifecycle::previous::PreviousStatus;
use crate::core::lifecycle::retirement::{self, Retirement};
use crate::core::lifecycle::{
    adoption, conflicts, consequences, guards, takeover, words, Repository,
};
use crate::core::plan::{self, Planned};
use crate::core::problems::{some_of, Category, Findings};
use crate::core::size::ResponseSize;
use crate::core::sorted;
use crate::core::status;
use crate::core::validation::live::{self, LiveSchema, LiveSchemas};
use crate::core::wiring;
use crate::proto::v1::{
    Capability, Condition, Ready, Requirements, Resource, ResourceSelector, ResponseMeta,
    Result as FnResult, RunFunctionRequest, RunFunctionResponse, Severity, State,
    Status as ConditionStatus, Target,
};
use crate::proto::{ObjectView, Struct};
use std::cell::OnceCell;
use std::collections::{BTreeMap, BTreeSet};

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

    // Plan keys, kinds and wiring for every entry, then check them against what is live:
    // nothing may rename, replace or take over a repository.
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
    // What the previous call said, for results about changes, and the phases a key went
    // through: a new key is created, never taken over (docs/design.md, "Adoption").
    let previous = PreviousStatus::read(composite);
    let mut repositories = plan_repositories(request, &ctx, &previous, findings);
    check_live_changes(&repositories, &ctx, findings);
    // Repositories gone from the spec are retired without deleting them by accident; a key
    // that moves to a renamed entry is observed only, as what it was, until its old resource
    // is gone.
    let retirements = retire(request, &input, &repositories);
    let moves = retirement::moves(&retirements, &repositories, |name| {
        let live = observed_resource(request, name).map(Observed::read)?;
        Origin::parse(live.annotations.origin?)
    });
    adoption::decide_phases(
        &mut repositories,
        &adoption::Context {
            guard: input.create_guard,
            previous: previous.phases(),
        },
        &moves,
    );
    if input.never_delete {
        for r in &mut repositories {
            retirement::orphan_on_delete(&mut r.planned, true);
        }
    }
    words::warn_stuck(&repositories, findings);

    // What this call asks Crossplane for: schemas, other composites' resources of the same
    // keys, Secrets. A first call gets only its requirements back: Crossplane calls again with
    // the answers and keeps only the last answer. A call that found problems answers them in
    // full, as it always did.
    let asked = ask(
        request,
        &ctx,
        &auto_kinds,
        &schemas,
        &mut repositories,
        &mut response,
        findings,
    );
    if asked == Asked::ForMore {
        return response;
    }

    // Render and check every resource; any problem fails the whole call and leaves the
    // desired state as it came in, so nothing is ever dropped. Resources are kept only while
    // the response would still be small enough for Crossplane to read; past that, they are
    // measured and dropped, and the call fails.
    let mut composer = Composer::new(&input, spec.project_key).with_live(&schemas);
    let mut size = ResponseSize::of(&response);
    for r in &mut repositories {
        let origin = r.adoption.origin.map(Origin::as_str);
        let at_provider = r.observed.as_ref().and_then(Observed::at_provider);
        let kept = takeover::Kept::of(r);
        let resource = composer.compose(&r.planned, origin, at_provider, kept.fields(), findings);
        if size.add(r.planned.name, &resource) {
            r.resource = Some(resource);
        }
    }
    size.check(findings);
    check_name_collisions(request, &repositories, findings);
    if !findings.has_problems() {
        consequences::check_replacements(&repositories, findings);
    }
    if findings.has_problems() {
        return fatal(request, response, findings);
    }

    takeover::preview_takeovers(&mut repositories);
    let consequential = consequences::consequences(&repositories);
    let desired = response.desired.get_or_insert_with(State::default);
    insert_rendered(desired, &mut repositories);
    insert_retiring(desired, request, &retirements);

    // Readiness, status, conditions, and results for what changed.
    // The input's warnings, taken before drift adds its own (which carry their own results).
    let input_warnings: Vec<FnResult> = composite_warnings(findings).collect();
    let drift_results = drift::drift_warnings(&repositories, &input, spec.project_key, findings);
    let report = status::Report {
        repositories: &repositories,
        retirements: &retirements,
        input: &input,
        findings,
    };
    status::set_composite_status(desired, &report);
    response
        .conditions
        .push(status::repositories_condition(&report));
    let results = &mut response.results;
    results.extend(words::change_results(
        &repositories,
        &retirements,
        &previous,
    ));
    results.extend(moves.iter().map(words::move_result));
    results.extend(words::renamed_result(&repositories));
    results.extend(words::consequential_result(&consequential));
    results.extend(input_warnings);
    results.extend(drift_results);
    if size.near_limit() {
        size.measured(&response);
        size.check(findings);
        if findings.has_problems() {
            return fatal(request, start_response(request, &input), findings);
        }
    }
    findings.rendered = Some((api, repositories.len()));
    response
}

/// One entry per repository: its key, kind and wiring planned, and its observed resource read.
fn plan_repositories<'c>(
    request: &'c RunFunctionRequest,
    ctx: &plan::Context<'c>,
    previous: &PreviousStatus,
    findings: &mut Findings,
) -> Vec<Repository<'c>> {
    let mut planned = plan::plan(ctx, findings);
    wiring::wire(&mut planned, &ctx.spec.repositories, findings);
    // The first step of the v0.7.0 group move: nothing of the flat API is rendered, and its
    // live resources are retired, orphaned first (docs/upgrading.md).
    if ctx.input.release_flat {
        planned.retain(|p| p.kind.api != ProviderApi::Flat);
    }
    planned
        .into_iter()
        .map(|p| {
            let live = observed_resource(request, p.name).map(Observed::read);
            Repository::new(p, live, previous)
        })
        .collect()
}

/// The guards on live repositories: a change of key (each cause said once: the claim's
/// `spec.projectKey`, the Composition's naming format, or the entry), of kind, or of the
/// provider's API group.
fn check_live_changes(
    repositories: &[Repository],
    ctx: &plan::Context<'_>,
    findings: &mut Findings,
) {
    let (input, project_key) = (ctx.input, ctx.spec.project_key);
    let naming = guards::Naming {
        format: input
            .naming_format
            .as_deref()
            .unwrap_or(crate::core::keys::default_format(project_key)),
        given: input.naming_format.is_some(),
        path: input.at.path_of("naming.format"),
        meta: ctx.meta,
        project_key,
    };
    let renamed_by_project_key =
        guards::check_project_key_change(repositories, project_key, findings)
            || guards::check_naming_format_change(repositories, &naming, findings);
    guards::check_group_move(repositories, input.at.path_of("providerApi"), findings);
    for r in repositories {
        if let Some(live) = &r.observed {
            guards::check_immutable(&r.planned, live, renamed_by_project_key, findings);
        }
    }
}

/// Whether the call answers now, or only asks for more.
#[derive(Debug, PartialEq, Eq)]
enum Asked {
    /// Everything asked for is in the request (or nothing is asked for).
    Answered,
    /// A first call: only the requirements go back.
    ForMore,
}

/// Sets the call's requirements in `response` and reads the answers the request carries: the
/// live schemas of the kinds rendered (and, for key lookups, of the other provider API's),
/// the managed resources that carry the rendered keys, and the Secrets of write-only passwords.
fn ask(
    request: &RunFunctionRequest,
    ctx: &plan::Context<'_>,
    auto_kinds: &AutoKinds<'_, '_>,
    schemas: &LiveSchemas<'_>,
    repositories: &mut [Repository],
    response: &mut RunFunctionResponse,
    findings: &mut Findings,
) -> Asked {
    // The kinds of the other provider API that could hold the same keys (a Crossplane v1
    // claim's resources next to a v2 composite's): looked up only where the cluster serves them.
    for r in repositories.iter_mut() {
        r.other_kind = conflicts::other_api_kind(&r.planned, ctx.input.provider_release);
    }
    // Their schemas tell whether they are served; asked for only when the lookup can be made.
    let looks_up_keys = advertises(request, Capability::RequiredResources);
    let schema_kinds = advertises(request, Capability::RequiredSchemas).then(|| {
        let mut kinds = schema_kinds(ctx, repositories, auto_kinds);
        if looks_up_keys {
            kinds.extend(
                repositories
                    .iter()
                    .filter_map(|r| r.other_kind)
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
    check_served(repositories, schemas, findings);
    let planned = repositories.iter_mut().map(|r| &mut r.planned);
    credentials::settle_write_only(planned, schemas, findings);
    for r in repositories.iter_mut() {
        r.other_kind = r.other_kind.filter(|kind| served(kind, schemas, ctx.input));
    }
    let resources = looks_up_keys.then(|| {
        let mut resources = conflicts::key_requirements(repositories);
        resources.extend(credentials::secret_requirements(
            repositories.iter().map(|r| &r.planned),
        ));
        resources
    });
    if !findings.has_problems()
        && asks_for_more(request, schemas, schema_kinds.as_ref(), resources.as_ref())
    {
        if let Some(resources) = resources {
            response
                .requirements
                .get_or_insert_with(Requirements::default)
                .resources = resources;
        }
        return Asked::ForMore;
    }
    let answered = &request.required_resources;
    if let Some(resources) = resources {
        credentials::read_versions(
            repositories.iter_mut().map(|r| &mut r.planned),
            answered,
            findings,
        );
        response
            .requirements
            .get_or_insert_with(Requirements::default)
            .resources = resources;
        conflicts::check_conflicts(repositories, answered, ctx.meta, findings);
    } else {
        credentials::warn_unversioned(repositories.iter().map(|r| &r.planned), findings);
    }
    Asked::Answered
}

/// The managed resources of this function that no entry claims any more, and what becomes of
/// each. Released flat resources are always orphaned first: their repositories stay.
fn retire(
    request: &RunFunctionRequest,
    input: &Input,
    repositories: &[Repository],
) -> Vec<Retirement> {
    let earlier_steps = request
        .desired
        .as_ref()
        .map(|desired| &desired.resources)
        .unwrap_or(&NO_RESOURCES);
    retirement::retire(
        observed_resources(request),
        earlier_steps,
        repositories,
        input.deletion_protection || input.release_flat || input.never_delete,
    )
}

/// Each rendered resource into the desired state, with its readiness; an entry that waits
/// (for its name, or a new virtual's members) is left out.
fn insert_rendered(desired: &mut State, repositories: &mut [Repository]) {
    for r in repositories {
        if r.adoption.phase.is_waiting() {
            continue;
        }
        if let Some(resource) = r.resource.take() {
            let ready = status::readiness(r.observed.as_ref(), &r.adoption.phase);
            insert_desired(desired, r.planned.name, resource, ready);
        }
    }
}

/// A retiring resource stays in the desired state, unchanged but for its deletion, until the
/// orphaning is applied.
fn insert_retiring(desired: &mut State, request: &RunFunctionRequest, retirements: &[Retirement]) {
    for retirement in retirements {
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
                status::readiness(live.as_ref(), &Phase::Managed),
            );
        }
    }
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
    repositories: &[Repository<'c>],
    auto_kinds: &AutoKinds<'_, '_>,
) -> BTreeSet<(&'c str, &'c str)> {
    let mut kinds: BTreeSet<(&str, &str)> = sorted::set(repositories.iter().map(|r| {
        let kind = r.planned.kind;
        (kind.api_version.as_str(), kind.kind.as_str())
    }));
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
        .is_some_and(|release| conflicts::serves_every_kind(release) && kind.in_release(release))
}

/// A kind the cluster does not serve fails the call, once per kind with every entry of it:
/// the provider would never create those repositories.
fn check_served(repositories: &[Repository], live: &LiveSchemas<'_>, findings: &mut Findings) {
    if live.is_empty() {
        return;
    }
    let mut unserved: BTreeMap<(&str, &str), Vec<&Planned>> = BTreeMap::new();
    for p in repositories.iter().map(|r| &r.planned) {
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
    repositories: &[Repository],
    findings: &mut Findings,
) {
    let Some(desired) = request.desired.as_ref() else {
        return;
    };
    for p in repositories
        .iter()
        .map(|r| &r.planned)
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
