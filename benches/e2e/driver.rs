//! End-to-end benchmark driver (run by `scripts/bench-e2e.sh`): starts each server on loopback,
//! measures cold start, checks one answer, loads it with h2load and reads its CPU time and peak
//! RSS from /proc, then prints a table and the ratios against the peers and the floor.
//!
//! bench-e2e --ours BIN --noop BIN [--ts "node SCRIPT"] [--python "PY SCRIPT"]
//!           [--peer-requests DIR] [--sizes 10,100,1000] [--requests 2000] [--concurrency 8]
//!           [--rounds 1] [--before BIN] [--out DIR]
//!
//! With `--rounds R`, each size is measured R times, every server once a round in turn, and the
//! table holds the medians: the machine is shared and one run of a server can fall on a noisy
//! spell that the next server misses.
//!
//! A peer's requests are DIR/peer-N.bin (gRPC-framed, `make_request.py --bin`); ours and the
//! floors' are generated here: the same N repositories and package types, in our contract.
//!
//! Two floors, both `noop-function`: `floor` echoes the request's desired state (the least a
//! server can move), `floor-reply` answers with our own reply to the request, computed here
//! with the library, so it moves the same bytes as ours and the ratio to it is the function's
//! own work.

use function_artifactory::proto::v1::{
    function_runner_service_client::FunctionRunnerServiceClient, RequestMeta, Resource,
    RunFunctionRequest, Severity, State,
};
use function_artifactory::proto::Struct;
use prost::Message;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const TYPES: [&str; 10] = [
    "maven", "npm", "docker", "pypi", "generic", "gradle", "helm", "go", "nuget", "cargo",
];

fn layout(t: &str) -> &'static str {
    match t {
        "maven" => "maven-2-default",
        "gradle" => "gradle-default",
        "npm" => "npm-default",
        "go" => "go-default",
        "nuget" => "nuget-default",
        "cargo" => "cargo-default",
        _ => "simple-default",
    }
}

/// make_request.py's repositories, in function-artifactory's contract.
fn our_request(n: usize) -> RunFunctionRequest {
    let repositories: Vec<Value> = (0..n)
        .map(|i| {
            let t = TYPES[i % TYPES.len()];
            json!({
                "name": format!("team-a-{t}-local-{i:04}"),
                "rclass": "local",
                "packageType": t,
                "description": format!("Local {t} repository #{i} for team A"),
                "forProvider": {
                    "includesPattern": "**/*",
                    "excludesPattern": "**/*.tmp",
                    "repoLayoutRef": layout(t),
                    "xrayIndex": i % 2 == 0,
                },
            })
        })
        .collect();
    let composite = json!({
        "apiVersion": "platform.example.org/v1alpha1",
        "kind": "XRepositories",
        "metadata": {"name": "team-a-repos", "uid": "0b6f4c1e-6a0e-4e63-9d6c-3a7a4f7f3c11",
                     "labels": {"crossplane.io/composite": "team-a-repos"}},
        "spec": {"providerConfigRef": {"name": "artifactory-prod"}, "repositories": repositories},
    });
    RunFunctionRequest {
        meta: Some(RequestMeta {
            tag: "bench".into(),
            capabilities: vec![],
        }),
        observed: Some(State {
            composite: Some(Resource {
                resource: Some(Struct::from_value(composite)),
                ..Resource::default()
            }),
            resources: BTreeMap::new(),
        }),
        desired: Some(State::default()),
        ..RunFunctionRequest::default()
    }
}

fn framed(message: &[u8]) -> Vec<u8> {
    let mut out = vec![0u8];
    out.extend_from_slice(&(message.len() as u32).to_be_bytes());
    out.extend_from_slice(message);
    out
}

struct Server {
    name: &'static str,
    command: Vec<String>,
    /// Peers read the make_request.py body; ours and the floor read ours.
    peer_format: bool,
    /// Desired resources a good answer holds, for N repositories.
    expected: fn(usize) -> usize,
}

#[derive(Default, Clone)]
struct Figures {
    cold_start_ms: f64,
    cpu_us_per_call: f64,
    /// The share of that CPU time spent in the kernel (socket reads and writes), in percent;
    /// none when the run took too few clock ticks to tell.
    kernel_percent: Option<f64>,
    rps: f64,
    p50_ms: f64,
    p99_ms: f64,
    peak_rss_mb: f64,
    ok: bool,
    note: String,
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// CPU time of all the threads of a process, in ns (schedstat's first field).
fn cpu_ns(pid: u32) -> u64 {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return 0;
    };
    tasks
        .filter_map(|t| t.ok())
        .filter_map(|t| std::fs::read_to_string(t.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .sum()
}

/// Clock ticks (10 ms) a run must take for its kernel share to be told: 0.3 s, to within 3%.
const MIN_TICKS: u64 = 30;

/// User and system CPU time of a process, all threads, in clock ticks (fields 14 and 15 of
/// /proc/PID/stat). Ticks are coarse (10 ms), so they only split schedstat's total.
fn user_system_ticks(pid: u32) -> (u64, u64) {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return (0, 0);
    };
    // The command name (field 2) is in parentheses and may hold spaces: count after it.
    let after_name = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let mut fields = after_name.split_whitespace().skip(11);
    let mut next = || fields.next().and_then(|f| f.parse().ok()).unwrap_or(0);
    (next(), next())
}

fn peak_rss_kb(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

fn stop(child: &mut Child) {
    // SIGTERM, then SIGKILL after 5 s; only our own child.
    let _ = Command::new("kill")
        .arg(child.id().to_string())
        .stderr(Stdio::null())
        .status();
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// One RunFunction call; Ok(desired resources) if grpc-status is OK and no result is fatal.
async fn call(address: &str, request: RunFunctionRequest) -> Result<usize, String> {
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{address}"))
        .map_err(|e| e.to_string())?
        .connect()
        .await
        .map_err(|e| format!("transport error: {e}"))?;
    let mut client = FunctionRunnerServiceClient::new(channel).max_decoding_message_size(256 << 20);
    let response = client
        .run_function(request)
        .await
        .map_err(|s| format!("grpc-status {:?}: {}", s.code(), s.message()))?
        .into_inner();
    if let Some(fatal) = response
        .results
        .iter()
        .find(|r| r.severity == Severity::Fatal as i32)
    {
        return Err(format!("fatal result: {}", fatal.message));
    }
    Ok(response.desired.map_or(0, |d| d.resources.len()))
}

/// h2load: (requests per second, p50 ms, p99 ms, non-200 count).
fn h2load(
    address: &str,
    body: &Path,
    requests: usize,
    concurrency: usize,
) -> (f64, f64, f64, usize) {
    let log = body.with_extension(format!("h2load-{}.log", std::process::id()));
    let output = Command::new("h2load")
        .args([
            "-n",
            &requests.to_string(),
            "-c",
            "1",
            "-m",
            &concurrency.to_string(),
        ])
        .arg("-d")
        .arg(body)
        .args(["-H", "content-type: application/grpc", "-H", "te: trailers"])
        .arg(format!("--log-file={}", log.display()))
        .arg(format!(
            "http://{address}/apiextensions.fn.proto.v1.FunctionRunnerService/RunFunction"
        ))
        .output()
        .expect("h2load runs");
    let text = String::from_utf8_lossy(&output.stdout);
    let rps = text
        .lines()
        .find(|l| l.starts_with("finished in"))
        .and_then(|l| {
            l.split(", ")
                .nth(1)?
                .split_whitespace()
                .next()?
                .parse()
                .ok()
        })
        .unwrap_or(0.0);
    let log_text = std::fs::read_to_string(&log).unwrap_or_default();
    let _ = std::fs::remove_file(&log);
    let mut durations = Vec::new();
    let mut bad = 0;
    for line in log_text.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.len() < 3 {
            continue;
        }
        if fields[1] != "200" {
            bad += 1;
        }
        durations.push(fields[2].parse::<f64>().unwrap_or(0.0) / 1000.0);
    }
    durations.sort_by(f64::total_cmp);
    let pct = |p: f64| {
        if durations.is_empty() {
            0.0
        } else {
            durations[((durations.len() as f64 * p).ceil() as usize).clamp(1, durations.len()) - 1]
        }
    };
    bad += requests.saturating_sub(durations.len());
    (rps, pct(0.50), pct(0.99), bad)
}

#[allow(clippy::too_many_arguments)]
fn measure(
    runtime: &tokio::runtime::Runtime,
    server: &Server,
    n: usize,
    body: &Path,
    request: &RunFunctionRequest,
    requests: usize,
    concurrency: usize,
    log_dir: &Path,
) -> Figures {
    let mut figures = Figures::default();
    let port = free_port();
    let address = format!("127.0.0.1:{port}");
    let log = std::fs::File::create(log_dir.join(format!("{}-{n}.log", server.name))).unwrap();
    let started = Instant::now();
    let mut child = match Command::new(&server.command[0])
        .args(&server.command[1..])
        .args(["--insecure", "--address", &address])
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .spawn()
    {
        Ok(child) => child,
        Err(e) => {
            figures.note = format!("did not start: {e}");
            return figures;
        }
    };
    let pid = child.id();
    // Cold start: launch to the first good answer.
    let answer = loop {
        match runtime.block_on(call(&address, request.clone())) {
            Ok(resources) => break Ok(resources),
            Err(e) if started.elapsed() > Duration::from_secs(30) => break Err(e),
            Err(e) if !e.contains("transport error") => break Err(e),
            Err(_) => std::thread::sleep(Duration::from_millis(1)),
        }
    };
    figures.cold_start_ms = started.elapsed().as_secs_f64() * 1e3;
    match answer {
        Ok(resources) if resources == (server.expected)(n) => figures.ok = true,
        Ok(resources) => {
            figures.note = format!(
                "{resources} desired resources, expected {}",
                (server.expected)(n)
            )
        }
        Err(e) => figures.note = e,
    }
    if figures.ok {
        // Warm up, then measure.
        h2load(&address, body, (requests / 10).max(50), concurrency);
        let before = cpu_ns(pid);
        let (user_before, system_before) = user_system_ticks(pid);
        let (rps, p50, p99, bad) = h2load(&address, body, requests, concurrency);
        let after = cpu_ns(pid);
        let (user_after, system_after) = user_system_ticks(pid);
        figures.cpu_us_per_call = (after - before) as f64 / requests as f64 / 1e3;
        let (user, system) = (user_after - user_before, system_after - system_before);
        figures.kernel_percent =
            (user + system >= MIN_TICKS).then(|| 100.0 * system as f64 / (user + system) as f64);
        figures.rps = rps;
        figures.p50_ms = p50;
        figures.p99_ms = p99;
        if bad > 0 {
            figures.ok = false;
            figures.note = format!("{bad} of {requests} calls failed under load");
        }
        // A good answer after the load too.
        if let Err(e) = runtime.block_on(call(&address, request.clone())) {
            figures.ok = false;
            figures.note = format!("after the load: {e}");
        }
    }
    figures.peak_rss_mb = peak_rss_kb(pid) as f64 / 1024.0;
    stop(&mut child);
    figures
}

/// One row from the rounds of one server: the median of each time and rate, the largest peak
/// RSS, correct only if every round was.
fn combined(rounds: &[Figures]) -> Figures {
    // `rounds` is never empty, so every time and rate has a median.
    let of_rounds = |figure: fn(&Figures) -> f64| median(rounds.iter().map(figure)).unwrap_or(0.0);
    let wrong = rounds.iter().find(|f| !f.ok);
    Figures {
        cold_start_ms: of_rounds(|f| f.cold_start_ms),
        cpu_us_per_call: of_rounds(|f| f.cpu_us_per_call),
        // Only the rounds long enough to tell it.
        kernel_percent: median(rounds.iter().filter_map(|f| f.kernel_percent)),
        rps: of_rounds(|f| f.rps),
        p50_ms: of_rounds(|f| f.p50_ms),
        p99_ms: of_rounds(|f| f.p99_ms),
        peak_rss_mb: rounds.iter().map(|f| f.peak_rss_mb).fold(0.0, f64::max),
        ok: wrong.is_none(),
        note: wrong.map(|f| f.note.clone()).unwrap_or_default(),
    }
}

/// The middle value (the upper one of an even count), none of no values.
fn median(values: impl Iterator<Item = f64>) -> Option<f64> {
    let mut values: Vec<f64> = values.collect();
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied()
}

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .cloned()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let ours = arg(&args, "--ours").expect("--ours BIN");
    let noop = arg(&args, "--noop").expect("--noop BIN");
    let sizes: Vec<usize> = arg(&args, "--sizes")
        .unwrap_or_else(|| "10,100,1000".into())
        .split(',')
        .map(|s| s.parse().expect("sizes are numbers"))
        .collect();
    let requests: usize = arg(&args, "--requests").map_or(2000, |s| s.parse().unwrap());
    let concurrency: usize = arg(&args, "--concurrency").map_or(8, |s| s.parse().unwrap());
    let rounds: usize = arg(&args, "--rounds").map_or(1, |s| s.parse().unwrap());
    assert!((1..=9).contains(&rounds), "--rounds from 1 to 9");
    assert!(requests <= 100_000, "bounded counts");
    let out = PathBuf::from(arg(&args, "--out").unwrap_or_else(|| "target/bench-e2e".into()));
    std::fs::create_dir_all(&out).unwrap();
    let peer_requests = arg(&args, "--peer-requests").map(PathBuf::from);

    let mut servers = vec![
        Server {
            name: "ours",
            command: vec![ours],
            peer_format: false,
            expected: |n| n,
        },
        Server {
            name: "floor",
            command: vec![noop.clone()],
            peer_format: false,
            expected: |_| 0,
        },
        Server {
            name: "floor-reply",
            command: vec![noop, "--replies".into(), out.display().to_string()],
            peer_format: false,
            expected: |n| n,
        },
    ];
    // Another build of ours (`--before BIN`, such as main's before a change): before and after
    // side by side in one run.
    if let Some(before) = arg(&args, "--before") {
        servers.push(Server {
            name: "before",
            command: vec![before],
            peer_format: false,
            expected: |n| n,
        });
    }
    for (flag, name) in [("--ts", "ts"), ("--python", "python")] {
        match (arg(&args, flag), &peer_requests) {
            (Some(command), Some(_)) => servers.push(Server {
                name,
                command: command.split_whitespace().map(String::from).collect(),
                peer_format: true,
                expected: |n| n,
            }),
            _ => println!("peer {name}: skipped (no {flag} or no --peer-requests)"),
        }
    }

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut table: Vec<(usize, &'static str, Figures)> = Vec::new();
    for &n in &sizes {
        let ours_request = our_request(n);
        let ours_bytes = ours_request.encode_to_vec();
        let ours_body = out.join(format!("ours-{n}.bin"));
        std::fs::write(&ours_body, framed(&ours_bytes)).unwrap();
        // The reply floor's answer at this size: ours, byte for byte.
        let reply = function_artifactory::run_function(&ours_request).encode_to_vec();
        std::fs::write(out.join(format!("reply-{n}.request.bin")), ours_bytes).unwrap();
        std::fs::write(out.join(format!("reply-{n}.response.bin")), reply).unwrap();
        // Each server's request at this size, read once for all rounds; none when a peer's
        // file is missing.
        let inputs: Vec<Option<(PathBuf, RunFunctionRequest)>> = servers
            .iter()
            .map(|server| {
                if !server.peer_format {
                    return Some((ours_body.clone(), ours_request.clone()));
                }
                let body = peer_requests
                    .as_ref()
                    .unwrap()
                    .join(format!("peer-{n}.bin"));
                let Ok(bytes) = std::fs::read(&body) else {
                    println!("{} at {n}: skipped (no {})", server.name, body.display());
                    return None;
                };
                let request = RunFunctionRequest::decode(&bytes[5..]).expect("a peer request");
                Some((body, request))
            })
            .collect();
        // Rounds take every server in turn, so a noisy spell of the machine falls on all.
        let mut rounds_of: Vec<Vec<Figures>> = vec![Vec::new(); servers.len()];
        for round in 1..=rounds {
            for ((server, input), measured) in servers.iter().zip(&inputs).zip(&mut rounds_of) {
                let Some((body, request)) = input else {
                    continue;
                };
                let figures = measure(
                    &runtime,
                    server,
                    n,
                    body,
                    request,
                    requests,
                    concurrency,
                    &out,
                );
                eprintln!(
                    "{:>6} {:<11} round {round}: cpu {:>9.1} us/call  {}",
                    n,
                    server.name,
                    figures.cpu_us_per_call,
                    if figures.ok { "ok" } else { &figures.note }
                );
                measured.push(figures);
            }
        }
        for (server, measured) in servers.iter().zip(&rounds_of) {
            if !measured.is_empty() {
                table.push((n, server.name, combined(measured)));
            }
        }
    }

    println!(
        "\n{requests} calls per row and round, {concurrency} in flight on one HTTP/2 connection, loopback; {rounds} round(s), medians (peak RSS: the largest)\n"
    );
    println!("| repos | server | correct | cold start ms | CPU us/call | kernel % | req/s | p50 ms | p99 ms | peak RSS MB |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for (n, name, f) in &table {
        println!(
            "| {n} | {name} | {} | {:.1} | {:.1} | {} | {:.0} | {:.2} | {:.2} | {:.1} |",
            if f.ok {
                "yes".to_string()
            } else {
                format!("NO: {}", f.note)
            },
            f.cold_start_ms,
            f.cpu_us_per_call,
            f.kernel_percent
                .map_or_else(|| "-".to_owned(), |share| format!("{share:.0}")),
            f.rps,
            f.p50_ms,
            f.p99_ms,
            f.peak_rss_mb
        );
    }
    print_ratios(&table, &sizes);
    print_goals(&table);
    if table.iter().any(|(_, _, f)| !f.ok) {
        println!("\nSOME SERVERS ANSWERED WRONGLY (see the table)");
        std::process::exit(1);
    }
}

/// The figures of `server` at `n` repositories, if it answered correctly.
fn find<'t>(table: &'t [(usize, &str, Figures)], n: usize, server: &str) -> Option<&'t Figures> {
    table
        .iter()
        .find(|(m, s, f)| *m == n && *s == server && f.ok)
        .map(|(_, _, f)| f)
}

/// CPU per call and requests per second against each peer and the floor, and the floor's own
/// ratio to TypeScript: how far below TypeScript a function that did nothing would be.
fn print_ratios(table: &[(usize, &str, Figures)], sizes: &[usize]) {
    println!("\nRatios (CPU per call: theirs / ours, ours / floor; req/s: ours / theirs)\n");
    for &n in sizes {
        let Some(ours) = find(table, n, "ours") else {
            continue;
        };
        let mut parts = Vec::new();
        for peer in ["before", "ts", "python"] {
            if let Some(p) = find(table, n, peer) {
                parts.push(format!(
                    "{peer}/ours CPU {:.1}x, req/s {:.1}x",
                    p.cpu_us_per_call / ours.cpu_us_per_call,
                    ours.rps / p.rps
                ));
            }
        }
        if let Some(floor) = find(table, n, "floor-reply") {
            parts.push(format!(
                "ours/floor-reply CPU {:.2}x",
                ours.cpu_us_per_call / floor.cpu_us_per_call
            ));
        }
        if let Some(floor) = find(table, n, "floor") {
            parts.push(format!(
                "ours/floor CPU {:.2}x",
                ours.cpu_us_per_call / floor.cpu_us_per_call
            ));
            if let Some(ts) = find(table, n, "ts") {
                parts.push(format!(
                    "ts/floor CPU {:.1}x",
                    ts.cpu_us_per_call / floor.cpu_us_per_call
                ));
            }
        }
        println!("- {n} repos: {}", parts.join("; "));
    }
}

/// The goals of issue #6, checked against this run, each where the run measured what it needs.
fn print_goals(table: &[(usize, &str, Figures)]) {
    println!("\nGoals (issue #6), this run\n");
    let verdict = |met: bool| if met { "met" } else { "NOT met" };
    for n in [10, 100] {
        if let (Some(ours), Some(ts)) = (find(table, n, "ours"), find(table, n, "ts")) {
            let ratio = ts.cpu_us_per_call / ours.cpu_us_per_call;
            let budget = ts.cpu_us_per_call / 20.0;
            let floor = find(table, n, "floor").map_or_else(String::new, |floor| {
                format!("; the floor costs {:.1}", floor.cpu_us_per_call)
            });
            println!(
                "- CPU per call >= 20x below TypeScript at {n} repos: {ratio:.1}x, {} (20x is {budget:.1} us a call{floor})",
                verdict(ratio >= 20.0)
            );
        }
    }
    for n in [10, 100] {
        if let (Some(ours), Some(floor)) = (find(table, n, "ours"), find(table, n, "floor-reply")) {
            let ratio = ours.cpu_us_per_call / floor.cpu_us_per_call;
            println!(
                "- within 1.6x of the reply floor (same bytes) at {n} repos: {ratio:.2}x, {}",
                verdict(ratio <= 1.6)
            );
        }
    }
    if let (Some(ours), Some(floor)) = (find(table, 10, "ours"), find(table, 10, "floor")) {
        let ratio = ours.cpu_us_per_call / floor.cpu_us_per_call;
        println!(
            "- within 1.5x of the floor at 10 repos: {ratio:.2}x, {}",
            verdict(ratio <= 1.5)
        );
    }
    for n in [10, 100] {
        if let Some(ours) = find(table, n, "ours") {
            println!(
                "- peak RSS <= 15 MB at {n} repos: {:.1} MB, {}",
                ours.peak_rss_mb,
                verdict(ours.peak_rss_mb <= 15.0)
            );
        }
    }
    let worst_cold = table
        .iter()
        .filter(|(_, s, f)| *s == "ours" && f.ok)
        .map(|(_, _, f)| f.cold_start_ms)
        .reduce(f64::max);
    if let Some(worst_cold) = worst_cold {
        println!(
            "- cold start <= 50 ms: at most {worst_cold:.1} ms, {}",
            verdict(worst_cold <= 50.0)
        );
    }
    if let Some(ours) = find(table, 1000, "ours") {
        println!(
            "- 1,000 repos in <= 5 ms of server time: {:.2} ms, {}",
            ours.cpu_us_per_call / 1000.0,
            verdict(ours.cpu_us_per_call <= 5000.0)
        );
    }
}
