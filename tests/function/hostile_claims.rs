//! Hostile claims (issue 27): what any namespace user who can write a claim could send to make
//! one call freeze the function or balloon its memory, and what the function does instead.
//! RELIABILITY.md ("Hostile input") has the table of attacks, bounds and these tests' names.
//!
//! Time bounds are on the CPU time of the thread that runs the core (not wall time, which
//! other builds on a shared machine would stretch), in the debug build the test command uses,
//! and generous: only a cost that grows with the square of the claim misses them (the checks
//! these tests guard took minutes that way). `cargo bench --bench core` prints the figures.

use crate::support;

use function_artifactory::proto::v1::{RunFunctionRequest, RunFunctionResponse, Severity};
use function_artifactory::run_function;
use prost::Message;
use serde_json::{json, Map, Value};
use std::time::Duration;
use support::requests::{
    composite, fatal_message, five_thousand_repositories, live, request, status_repositories,
    FIVE_THOUSAND_ADVICE,
};

/// The CPU time of the calling thread.
fn thread_cpu_time() -> Duration {
    let mut time = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec it is given; nothing else is touched.
    let result = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut time) };
    assert_eq!(result, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
    Duration::new(time.tv_sec as u64, time.tv_nsec as u32)
}

/// A bound only a cost quadratic in the claim misses, in the debug build (see the module's
/// documentation).
const CPU_BOUND: Duration = Duration::from_secs(10);

/// Runs the request as the server does (decoded from its bytes, then the core) and returns the
/// response with the CPU time the thread spent.
fn timed_call(request: &RunFunctionRequest) -> (RunFunctionResponse, Duration) {
    let bytes = request.encode_to_vec();
    let before = thread_cpu_time();
    let decoded = RunFunctionRequest::decode(bytes.as_slice()).expect("the request decodes");
    let response = run_function(&decoded);
    (response, thread_cpu_time() - before)
}

/// The fatal message of a call that must fail within [`CPU_BOUND`].
fn fatal_within_bound(request: &RunFunctionRequest, what: &str) -> String {
    let (response, took) = timed_call(request);
    println!("{what}: {:.2} s of CPU time", took.as_secs_f64());
    assert!(took < CPU_BOUND, "{what} took {took:?} of CPU time");
    fatal_message(&response).unwrap_or_else(|| panic!("{what}: no fatal result"))
}

fn local(name: &str) -> Value {
    json!({"name": name, "rclass": "local", "packageType": "maven"})
}

#[test]
fn a_set_of_200000_items_is_checked_for_repeats_in_linear_time() {
    // `propertySets` is an `x-kubernetes-list-type: set`; the last item repeats the first.
    let mut items: Vec<String> = (0..200_000).map(|i| format!("set-{i}")).collect();
    items.push("set-0".to_owned());
    let mut entry = local("libs");
    entry["forProvider"] = json!({ "propertySets": items });
    let claim = request(composite(json!({ "repositories": [entry] }))).build();
    let message = fatal_within_bound(&claim, "200,001 set items");
    assert!(
        message.starts_with("cannot render the Artifactory repositories: 1 problem\n- spec.repositories[0].forProvider.propertySets[200000]: \"set-0\" appears twice in a list that is a set"),
        "{message}"
    );
}

#[test]
fn eighty_thousand_unknown_fields_are_reported_up_to_the_cap_in_linear_time() {
    let fields: Map<String, Value> = (0..80_000)
        .map(|i| (format!("unknown{i:05}"), json!(i)))
        .collect();
    let mut entry = local("libs");
    entry["forProvider"] = Value::Object(fields);
    let claim = request(composite(json!({ "repositories": [entry] }))).build();
    let message = fatal_within_bound(&claim, "80,000 unknown fields");
    let lines: Vec<&str> = message.lines().collect();
    assert_eq!(
        lines[0],
        "cannot render the Artifactory repositories: 80000 problems"
    );
    // The first 100 in full, then how many more; the same cap in render and the npm module,
    // which show the same problems (tests/cli/render_command.rs, wasm/test).
    assert_eq!(lines.len(), 1 + 100 + 1, "{}", &message[..2000]);
    assert!(lines[1].starts_with("- spec.repositories[0].forProvider.unknown00000: repository \"libs\": MavenRepository has no forProvider field \"unknown00000\"; fix: remove it or correct its name: "), "{}", lines[1]);
    assert_eq!(
        lines[101],
        "- and 79900 more (a call lists the first 100; fix these and run again)"
    );
    assert!(message.len() < 64 * 1024, "{} bytes", message.len());
}

/// 8,000 local entries and a virtual that lists 8,000 names no entry has: each unknown member's
/// fix listed every entry's name, and each was compared with every name (268 to 307 MB, minutes
/// of CPU time in a debug build).
fn unknown_members_claim(entries: usize) -> RunFunctionRequest {
    let mut repositories: Vec<Value> = (0..entries)
        .map(|i| local(&format!("local-{i:05}")))
        .collect();
    let members: Vec<String> = (0..entries).map(|i| format!("missing-{i:05}")).collect();
    repositories.push(json!({"name": "all", "rclass": "virtual", "packageType": "maven", "repositories": members}));
    request(composite(json!({ "repositories": repositories }))).build()
}

#[test]
fn unknown_members_among_thousands_of_entries_cost_bounded_time_and_message_size() {
    let claim = unknown_members_claim(8_000);
    let message = fatal_within_bound(&claim, "8,000 unknown members of 8,000 entries");
    let lines: Vec<&str> = message.lines().collect();
    // 8,000 unknown members, and a response too large for Crossplane (see the next test).
    assert_eq!(
        lines[0],
        "cannot render the Artifactory repositories: 8001 problems"
    );
    assert!(lines[1].starts_with("- spec.repositories: the response would be about "));
    let member = lines
        .iter()
        .find(|l| l.starts_with("- spec.repositories[8000].repositories[0]: "))
        .expect("the first unknown member");
    // The nearest names only, not the 8,000 entries.
    assert!(member.contains("member \"missing-00000\" names no repository entry of this composite; fix: name an entry of spec.repositories (use one of the 8000 names allowed here, the nearest of which are "), "{member}");
    assert!(member.len() < 600, "{member}");
    assert!(message.len() < 64 * 1024, "{} bytes", message.len());
}

/// Peak RSS of a process, from /proc (VmHWM, kB).
fn peak_rss_kb(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc status");
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM")
}

#[tokio::test]
async fn a_claim_whose_response_crossplane_could_not_read_fails_naming_the_limit_in_64_mb() {
    use function_artifactory::proto::v1::function_runner_service_client::FunctionRunnerServiceClient;
    use support::server::{insecure_channel, Server};
    let server = Server::start(&["--insecure"]);
    let mut client = FunctionRunnerServiceClient::new(insecure_channel(&server).await);
    let claim = unknown_members_claim(8_000);
    println!(
        "request: {} bytes; server VmHWM before: {} kB",
        claim.encoded_len(),
        peak_rss_kb(server.pid())
    );
    let response = client
        .run_function(claim)
        .await
        .expect("answered")
        .into_inner();
    let peak = peak_rss_kb(server.pid());
    println!("server VmHWM after: {peak} kB");
    let fatal = response
        .results
        .iter()
        .find(|r| r.severity == Severity::Fatal as i32)
        .expect("a fatal result");
    let size_problem = fatal
        .message
        .lines()
        .nth(1)
        .expect("the size problem first");
    assert!(
        size_problem.starts_with("- spec.repositories: the response would be about ")
            && size_problem.contains(" for 8001 repositories: more than the 4.0 MiB (4,194,304 bytes) Crossplane reads (its function runner uses gRPC's default receive limit), so Crossplane would fail the call without saying why; fix: split the repositories over several composites: about "),
        "{size_problem}"
    );
    assert!(
        peak < 64 * 1024,
        "peak RSS {peak} kB for a claim of 8,000 entries"
    );
}

#[test]
fn a_response_too_large_for_crossplane_is_refused_before_it_is_built() {
    // 7,000 valid entries: nothing else is wrong, and the response would be over 4 MiB.
    let repositories: Vec<Value> = (0..7_000)
        .map(|i| local(&format!("local-{i:05}")))
        .collect();
    let claim = request(composite(json!({ "repositories": repositories }))).build();
    let (response, _) = timed_call(&claim);
    let message = fatal_message(&response).expect("a fatal result");
    assert!(
        message.starts_with("cannot render the Artifactory repositories: 1 problem\n- spec.repositories: the response would be about "),
        "{message}"
    );
    assert_eq!(
        response.desired.as_ref().map_or(0, |d| d.resources.len()),
        0,
        "the desired state is left as it came"
    );
    // And one that fits renders whole.
    let fits: Vec<Value> = (0..3_000)
        .map(|i| local(&format!("local-{i:05}")))
        .collect();
    let response = request(composite(json!({ "repositories": fits }))).run();
    assert!(fatal_message(&response).is_none());
    assert!(response.encoded_len() < 4 * 1024 * 1024);
}

/// The advice for a claim too large for one composite is the same from every face (issue 47: on
/// wasm32 a product of counts and sizes overflowed, and the component advised "about 876 fit in
/// one"). `tests/server/grpc.rs` sends the same claim to the server, the npm module
/// (`wasm/test/size.test.mjs`) and the component (`tests/component-host/tests/component/limits.rs`)
/// build it too; all expect these same words.
#[test]
fn the_advice_for_5000_repositories_is_the_one_every_face_gives() {
    let response = run_function(&five_thousand_repositories());
    let message = fatal_message(&response).expect("a fatal result");
    let advice = message.lines().nth(1).expect("the size problem");
    assert_eq!(advice, FIVE_THOUSAND_ADVICE, "{message}");
}

#[test]
fn a_chain_of_50000_virtuals_is_checked_for_cycles_in_linear_time() {
    // v0 -> v1 -> ... -> v49999 -> v0: one cycle through them all, reported once.
    let count = 50_000;
    let repositories: Vec<Value> = (0..count)
        .map(|i| {
            let next = format!("v{:05}", (i + 1) % count);
            json!({"name": format!("v{i:05}"), "rclass": "virtual", "packageType": "maven", "repositories": [next]})
        })
        .collect();
    let claim = request(composite(json!({ "repositories": repositories }))).build();
    let message = fatal_within_bound(&claim, "a cycle of 50,000 virtuals");
    let cycles: Vec<&str> = message
        .lines()
        .filter(|l| l.contains("virtual repositories form a cycle"))
        .collect();
    assert_eq!(cycles.len(), 1, "{}", &message[..message.len().min(3000)]);
    assert!(cycles[0].starts_with("- spec.repositories[0].repositories: repository \"v00000\": virtual repositories form a cycle: v00000 -> v00001 -> v00002"));
}

#[test]
fn forty_thousand_renamed_repositories_are_retired_in_linear_time() {
    // Every entry renamed: 40,000 live resources leave the spec and 40,000 new ones come.
    let count = 40_000;
    let repositories: Vec<Value> = (0..count).map(|i| local(&format!("new-{i:05}"))).collect();
    let mut builder = request(composite(json!({ "repositories": repositories })));
    for i in 0..count {
        let key = format!("old-{i:05}");
        builder = builder.observed(
            &key,
            live(
                "artifactory.jfrog.crossplane.io/v1alpha1",
                "LocalMavenRepository",
                &key,
                true,
            ),
        );
    }
    let claim = builder.build();
    let (response, took) = timed_call(&claim);
    println!(
        "40,000 renamed repositories: {:.2} s of CPU time",
        took.as_secs_f64()
    );
    assert!(took < CPU_BOUND, "took {took:?} of CPU time");
    // More than Crossplane reads, in the end: the bound holds on the whole path all the same.
    assert!(fatal_message(&response).is_some_and(|m| m.contains("the response would be about ")));
}

#[test]
fn forty_thousand_property_sets_are_previewed_in_linear_time() {
    // An import whose claim and live repository hold the same 40,000 property sets in opposite
    // orders: the takeover preview compares them as sets (issue 56; each item looked up in the
    // other list took 5 s of CPU, on every reconcile).
    let sets: Vec<String> = (0..40_000)
        .map(|i| format!("property-set-{i:05}"))
        .collect();
    let mut reversed = sets.clone();
    reversed.reverse();
    let mut entry = local("libs");
    entry["key"] = json!("legacy-libs");
    entry["import"] = json!(true);
    entry["forProvider"] = json!({ "propertySets": sets });
    let claim = |live_sets: &[String]| {
        let mut observed = live(
            "local.artifactory.jfrog.crossplane.io/v1alpha1",
            "MavenRepository",
            "legacy-libs",
            true,
        );
        observed["metadata"]["annotations"]["artifactory.fn.crossplane.io/origin"] =
            json!("imported");
        observed["spec"]["managementPolicies"] = json!(["Observe"]);
        observed["status"]["atProvider"] = json!({ "propertySets": live_sets });
        request(composite(json!({ "repositories": [entry.clone()] })))
            .observed("libs", observed)
            .build()
    };
    let (response, took) = timed_call(&claim(&reversed));
    println!(
        "40,000 property sets previewed: {:.2} s of CPU time",
        took.as_secs_f64()
    );
    assert!(took < CPU_BOUND, "took {took:?} of CPU time");
    assert_eq!(fatal_message(&response), None);
    let status = status_repositories(&response);
    assert_eq!(status[0]["phase"], "adopted");
    assert_eq!(
        status[0]["takeoverChanges"], 0,
        "the same sets: {}",
        status[0]
    );

    // One set that differs is a change.
    let mut other = reversed;
    other[0] = "property-set-40000".to_owned();
    let (response, took) = timed_call(&claim(&other));
    assert!(took < CPU_BOUND, "took {took:?} of CPU time");
    let status = status_repositories(&response);
    assert_eq!(status[0]["takeoverChanges"], 1);
    assert_eq!(
        status[0]["takeover"][0]["path"],
        "spec.forProvider.propertySets"
    );
}

const PASSWORD: &str = "pw-5e1f-Never-Echo-Me";

#[test]
fn a_password_written_inline_is_not_repeated_in_any_message() {
    let entry = json!({
        "name": "vendor", "rclass": "remote", "packageType": "maven",
        "url": "https://maven.vendor.example.com/releases", "username": "ci",
        "password": PASSWORD,
        "forProvider": {"passwordSecretRef": PASSWORD}
    });
    let response = request(composite(json!({ "repositories": [entry] }))).run();
    let message = fatal_message(&response).expect("a fatal result");
    assert!(message.contains("- spec.repositories[0].password: expected an object, got a string of 21 characters (not repeated here: the field may hold a secret)"), "{message}");
    assert!(
        message.contains("spec.repositories[0].forProvider.passwordSecretRef: expected an object, got a string of 21 characters (not repeated here: the field may hold a secret)"),
        "{message}"
    );
    let everything = format!("{response:?}");
    assert!(!everything.contains(PASSWORD), "{everything}");
}
