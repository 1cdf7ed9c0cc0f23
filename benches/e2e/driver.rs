//! End-to-end benchmark driver (run by `scripts/bench-e2e.sh`): starts each server on loopback,
//! measures cold start, checks one answer, loads it with h2load and reads its CPU time and peak
//! RSS from /proc, then prints a table and the ratios against the peers and the floor.
//!
//! bench-e2e --ours BIN --noop BIN [--ts "node SCRIPT"] [--python "PY SCRIPT"]
//!           [--peer-requests DIR] [--sizes 10,100,1000] [--requests 2000] [--concurrency 8]
//!           [--rounds 1] [--before BIN [--before-name NAME]] [--out DIR]
//!           [--scenarios plain,live,reconcile,steady]
//!           [--write-only]
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
//!
//! Four scenarios (`benches/requests.rs`; `--scenarios plain,live,reconcile,steady`): `plain`, a
//! request without capabilities, for every server; `live`, the call carrying the live schemas
//! (`OUT/live-schemas.bin`, written by `bench-schemas`); `reconcile`, the two calls of a
//! claim's first reconcile; and `steady`, the two calls of a reconcile once its resources
//! exist: each but `plain` for ours and the reply floor (and `--before`). A reconcile's CPU is
//! that of its two calls added, the latencies and rate those of its second call. Ours and the
//! reply floor must answer each request with the library's reply, byte for byte, before the load
//! and after it.
//!
//! Ours runs twice: `ours` as it is deployed, and `ours-computed` with `--answer-memo-size 0`.
//! The load sends one request over and over, as Crossplane does on every reconcile of an
//! unchanged claim, so `ours` answers all but the first from its memo of answers (after one walk
//! over the request that reads its content whatever the order of its maps); `ours-computed`
//! renders every call, as for a request never seen before.

#[path = "../requests.rs"]
mod requests;

use function_artifactory::proto::v1::{
    function_runner_service_client::FunctionRunnerServiceClient, RunFunctionRequest, Severity,
};
use prost::Message;
use requests::{framed, our_request};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The scenarios, in the order they run and are reported (`benches/requests.rs`).
const SCENARIOS: [&str; 4] = ["plain", "live", "reconcile", "steady"];

struct Server {
    name: &'static str,
    command: Vec<String>,
    /// Peers read the make_request.py body; ours and the floor read ours.
    peer_format: bool,
    /// What a good answer is.
    answer: Answer,
    /// Whether it runs the live, reconcile and steady scenarios too (ours, the reply floor, before).
    every_scenario: bool,
}

/// What a good answer to one of our requests is.
#[derive(Clone, Copy, PartialEq)]
enum Answer {
    /// The library's reply, byte for byte (ours, the reply floor).
    Ours,
    /// The request's desired state echoed (the floor): no resource.
    Echo,
    /// As many desired resources as the library's reply (another build of ours, a peer).
    SameCount,
}

/// One request of a scenario: its framed body, the request, and the library's reply to it.
#[derive(Clone)]
struct Call {
    body: PathBuf,
    request: RunFunctionRequest,
    reply: Vec<u8>,
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

/// One RunFunction call; Ok(the response) if grpc-status is OK and no result is fatal.
async fn call(
    address: &str,
    request: RunFunctionRequest,
) -> Result<function_artifactory::proto::v1::RunFunctionResponse, String> {
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
    Ok(response)
}

/// Whether `response` is a good answer to `call` from `server`; else what is wrong.
fn check_answer(
    server: &Server,
    call: &Call,
    response: &function_artifactory::proto::v1::RunFunctionResponse,
) -> Result<(), String> {
    let resources = |r: &function_artifactory::proto::v1::RunFunctionResponse| {
        r.desired.as_ref().map_or(0, |d| d.resources.len())
    };
    let reply = function_artifactory::proto::v1::RunFunctionResponse::decode(call.reply.as_slice())
        .map_err(|e| e.to_string())?;
    let expected = match server.answer {
        Answer::Echo => 0,
        _ => resources(&reply),
    };
    if resources(response) != expected {
        return Err(format!(
            "{} desired resources, expected {expected}",
            resources(response)
        ));
    }
    if server.answer == Answer::Ours && response.encode_to_vec() != call.reply {
        return Err("the answer differs from the library's reply".to_owned());
    }
    Ok(())
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

/// One server on one scenario at one size: started fresh, its cold start to the first good
/// answer, every call's answer checked, then each call loaded in turn; CPU a call is that of
/// the scenario's calls added.
fn measure(
    runtime: &tokio::runtime::Runtime,
    server: &Server,
    label: &str,
    calls: &[Call],
    requests: usize,
    concurrency: usize,
    log_dir: &Path,
) -> Figures {
    let mut figures = Figures::default();
    let port = free_port();
    let address = format!("127.0.0.1:{port}");
    let log = std::fs::File::create(log_dir.join(format!("{}-{label}.log", server.name))).unwrap();
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
        match runtime.block_on(call(&address, calls[0].request.clone())) {
            Ok(response) => break Ok(response),
            Err(e) if started.elapsed() > Duration::from_secs(30) => break Err(e),
            Err(e) if !e.contains("transport error") => break Err(e),
            Err(_) => std::thread::sleep(Duration::from_millis(1)),
        }
    };
    figures.cold_start_ms = started.elapsed().as_secs_f64() * 1e3;
    let mut checked = answer.and_then(|response| check_answer(server, &calls[0], &response));
    for later in &calls[1..] {
        checked = checked.and_then(|()| {
            let response = runtime.block_on(call(&address, later.request.clone()))?;
            check_answer(server, later, &response)
        });
    }
    match checked {
        Ok(()) => figures.ok = true,
        Err(e) => figures.note = e,
    }
    if figures.ok {
        let mut cpu_ns_total = 0;
        let (mut user_total, mut system_total) = (0, 0);
        for one in calls {
            // Warm up, then measure.
            h2load(&address, &one.body, (requests / 10).max(50), concurrency);
            let before = cpu_ns(pid);
            let (user_before, system_before) = user_system_ticks(pid);
            let (rps, p50, p99, bad) = h2load(&address, &one.body, requests, concurrency);
            let after = cpu_ns(pid);
            let (user_after, system_after) = user_system_ticks(pid);
            cpu_ns_total += after - before;
            user_total += user_after - user_before;
            system_total += system_after - system_before;
            figures.rps = rps;
            figures.p50_ms = p50;
            figures.p99_ms = p99;
            if bad > 0 {
                figures.ok = false;
                figures.note = format!("{bad} of {requests} calls failed under load");
            }
        }
        figures.cpu_us_per_call = cpu_ns_total as f64 / requests as f64 / 1e3;
        figures.kernel_percent = (user_total + system_total >= MIN_TICKS)
            .then(|| 100.0 * system_total as f64 / (user_total + system_total) as f64);
        // Good answers after the load too, checked as before it: ours answers these from its
        // memo of answers by now.
        for one in calls {
            let checked = runtime
                .block_on(call(&address, one.request.clone()))
                .and_then(|response| check_answer(server, one, &response));
            if let Err(e) = checked {
                figures.ok = false;
                figures.note = format!("after the load: {e}");
            }
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
    // `--write-only`: the request bodies and replies written, for profile-call; nothing run.
    let write_only = args.iter().any(|a| a == "--write-only");
    let mut scenarios: Vec<&str> = arg(&args, "--scenarios")
        .map(|s| s.split(',').map(|s| s.to_owned().leak() as &str).collect())
        .unwrap_or_else(|| SCENARIOS.to_vec());
    // The live schemas, as `bench-schemas` wrote them.
    let answers = match std::fs::read(out.join("live-schemas.bin")) {
        Ok(bytes) => {
            RunFunctionRequest::decode(bytes.as_slice())
                .expect("live-schemas.bin")
                .required_schemas
        }
        Err(_) => {
            println!(
                "live, reconcile and steady scenarios: skipped (no {}/live-schemas.bin; run bench-schemas)",
                out.display()
            );
            scenarios.retain(|s| *s == "plain");
            Default::default()
        }
    };

    let server = |name, command: Vec<String>, answer, every_scenario| Server {
        name,
        command,
        peer_format: false,
        answer,
        every_scenario,
    };
    let mut servers = vec![
        server("ours", vec![ours.clone()], Answer::Ours, true),
        // Ours rendering every call: the same binary with the memo of answers off, as a
        // request Crossplane never sent before is answered (a claim's first reconcile, or one
        // after a change).
        server(
            "ours-computed",
            vec![ours, "--answer-memo-size".into(), "0".into()],
            Answer::Ours,
            true,
        ),
        server("floor", vec![noop.clone()], Answer::Echo, false),
        server(
            "floor-reply",
            vec![noop, "--replies".into(), out.display().to_string()],
            Answer::Ours,
            true,
        ),
    ];
    // Another build of ours (`--before BIN`, such as main's before a change, or the host's
    // glibc build beside the packaged one: `--before-name glibc`), side by side in one run.
    if let Some(before) = arg(&args, "--before") {
        let name = arg(&args, "--before-name").map_or("before", |name| name.leak());
        servers.push(server(name, vec![before], Answer::SameCount, true));
    }
    for (flag, name) in [("--ts", "ts"), ("--python", "python")] {
        match (arg(&args, flag), &peer_requests) {
            (Some(command), Some(_)) => servers.push(Server {
                name,
                command: command.split_whitespace().map(String::from).collect(),
                peer_format: true,
                answer: Answer::SameCount,
                every_scenario: false,
            }),
            _ => println!("peer {name}: skipped (no {flag} or no --peer-requests)"),
        }
    }

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut table: Vec<Row> = Vec::new();
    for &n in &sizes {
        for &scenario in &scenarios {
            let requests_of_scenario: Vec<RunFunctionRequest> = match scenario {
                "plain" => vec![our_request(n)],
                "live" => vec![requests::live_request(n, &answers)],
                "reconcile" => requests::reconcile_requests(n, &answers).to_vec(),
                "steady" => requests::steady_requests(n, &answers).to_vec(),
                other => panic!("unknown scenario {other}"),
            };
            // Each request's body and our reply to it, which the reply floor answers with.
            let calls: Vec<Call> = requests_of_scenario
                .into_iter()
                .enumerate()
                .map(|(i, request)| {
                    let label = format!("{scenario}-{n}-{i}");
                    let bytes = request.encode_to_vec();
                    let body = out.join(format!("{label}.bin"));
                    std::fs::write(&body, framed(&bytes)).unwrap();
                    let reply = function_artifactory::run_function(&request).encode_to_vec();
                    std::fs::write(out.join(format!("reply-{label}.request.bin")), &bytes).unwrap();
                    std::fs::write(out.join(format!("reply-{label}.response.bin")), &reply)
                        .unwrap();
                    Call {
                        body,
                        request,
                        reply,
                    }
                })
                .collect();
            if scenario == "plain" {
                // The name profile-call and BENCHMARKS.md use.
                std::fs::copy(&calls[0].body, out.join(format!("ours-{n}.bin"))).unwrap();
            }
            if write_only {
                continue;
            }
            // Each server's calls at this size, read once for all rounds; none when a peer's
            // file is missing or the server is not in this scenario.
            let inputs: Vec<Option<Vec<Call>>> = servers
                .iter()
                .map(|server| {
                    if scenario != "plain" && !server.every_scenario {
                        return None;
                    }
                    if !server.peer_format {
                        return Some(calls.clone());
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
                    Some(vec![Call {
                        body,
                        request,
                        reply: calls[0].reply.clone(),
                    }])
                })
                .collect();
            // Rounds take every server in turn, so a noisy spell of the machine falls on all.
            let mut rounds_of: Vec<Vec<Figures>> = vec![Vec::new(); servers.len()];
            for round in 1..=rounds {
                for ((server, input), measured) in servers.iter().zip(&inputs).zip(&mut rounds_of) {
                    let Some(calls) = input else {
                        continue;
                    };
                    let label = format!("{scenario}-{n}");
                    let figures =
                        measure(&runtime, server, &label, calls, requests, concurrency, &out);
                    eprintln!(
                        "{:>6} {:<9} {:<11} round {round}: cpu {:>9.1} us/call  {}",
                        n,
                        scenario,
                        server.name,
                        figures.cpu_us_per_call,
                        if figures.ok { "ok" } else { &figures.note }
                    );
                    measured.push(figures);
                }
            }
            for (server, measured) in servers.iter().zip(&rounds_of) {
                if !measured.is_empty() {
                    table.push(Row {
                        n,
                        scenario,
                        server: server.name,
                        figures: combined(measured),
                    });
                }
            }
        }
    }

    println!(
        "\n{requests} calls per row, call and round, {concurrency} in flight on one HTTP/2 connection, loopback; {rounds} round(s), medians (peak RSS: the largest); reconcile: CPU of both calls added, rate and latencies of the second\n"
    );
    println!("| repos | scenario | server | correct | cold start ms | CPU us/call | kernel % | req/s | p50 ms | p99 ms | peak RSS MB |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    for row in &table {
        let f = &row.figures;
        println!(
            "| {} | {} | {} | {} | {:.1} | {:.1} | {} | {:.0} | {:.2} | {:.2} | {:.1} |",
            row.n,
            row.scenario,
            row.server,
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
    if write_only {
        println!("request bodies and replies written to {}", out.display());
        return;
    }
    print_ratios(&table, &sizes);
    print_goals(&table);
    if table.iter().any(|row| !row.figures.ok) {
        println!("\nSOME SERVERS ANSWERED WRONGLY (see the table)");
        std::process::exit(1);
    }
}

/// One line of the table.
struct Row {
    n: usize,
    scenario: &'static str,
    server: &'static str,
    figures: Figures,
}

/// The figures of `server` at `n` repositories in `scenario`, if it answered correctly.
fn find<'t>(table: &'t [Row], n: usize, scenario: &str, server: &str) -> Option<&'t Figures> {
    table
        .iter()
        .find(|row| {
            row.n == n && row.scenario == scenario && row.server == server && row.figures.ok
        })
        .map(|row| &row.figures)
}

/// CPU per call and requests per second against each peer and the floor, and the floor's own
/// ratio to TypeScript: how far below TypeScript a function that did nothing would be.
fn print_ratios(table: &[Row], sizes: &[usize]) {
    println!("\nRatios (CPU per call: theirs / ours, ours / floor; req/s: ours / theirs)\n");
    for scenario in SCENARIOS {
        for &n in sizes {
            let Some(ours) = find(table, n, scenario, "ours") else {
                continue;
            };
            let mut parts = Vec::new();
            for peer in others(table) {
                if let Some(p) = find(table, n, scenario, peer) {
                    parts.push(format!(
                        "{peer}/ours CPU {:.1}x, req/s {:.1}x",
                        p.cpu_us_per_call / ours.cpu_us_per_call,
                        ours.rps / p.rps
                    ));
                }
            }
            if let Some(floor) = find(table, n, scenario, "floor-reply") {
                parts.push(format!(
                    "ours/floor-reply CPU {:.2}x",
                    ours.cpu_us_per_call / floor.cpu_us_per_call
                ));
                if let Some(computed) = find(table, n, scenario, "ours-computed") {
                    parts.push(format!(
                        "ours-computed/floor-reply CPU {:.2}x",
                        computed.cpu_us_per_call / floor.cpu_us_per_call
                    ));
                }
            }
            if let Some(floor) = find(table, n, scenario, "floor") {
                parts.push(format!(
                    "ours/floor CPU {:.2}x",
                    ours.cpu_us_per_call / floor.cpu_us_per_call
                ));
                if let Some(ts) = find(table, n, scenario, "ts") {
                    parts.push(format!(
                        "ts/floor CPU {:.1}x",
                        ts.cpu_us_per_call / floor.cpu_us_per_call
                    ));
                }
            }
            println!("- {scenario}, {n} repos: {}", parts.join("; "));
        }
    }
}

/// The servers of the table other than ours and the floors (another build, the peers), in the
/// order they ran.
fn others(table: &[Row]) -> Vec<&'static str> {
    let mut names: Vec<&'static str> = Vec::new();
    for row in table {
        if !["ours", "ours-computed", "floor", "floor-reply"].contains(&row.server)
            && !names.contains(&row.server)
        {
            names.push(row.server);
        }
    }
    names
}

/// The goals of issues #6 and #26, checked against this run, each where the run measured what
/// it needs.
fn print_goals(table: &[Row]) {
    println!("\nGoals (issues #6 and #26), this run\n");
    let verdict = |met: bool| if met { "met" } else { "NOT met" };
    let plain = |n, server| find(table, n, "plain", server);
    for n in [10, 100] {
        if let (Some(ours), Some(ts)) = (plain(n, "ours"), plain(n, "ts")) {
            let ratio = ts.cpu_us_per_call / ours.cpu_us_per_call;
            let budget = ts.cpu_us_per_call / 20.0;
            let floor = plain(n, "floor").map_or_else(String::new, |floor| {
                format!("; the floor costs {:.1}", floor.cpu_us_per_call)
            });
            println!(
                "- CPU per call >= 20x below TypeScript at {n} repos: {ratio:.1}x, {} (20x is {budget:.1} us a call{floor})",
                verdict(ratio >= 20.0)
            );
        }
    }
    // Issue #26: each scenario against the reply floor of the same bytes, and its peak RSS.
    let goals = [
        ("plain", 10, 1.5, 10.0),
        ("plain", 100, 1.5, 10.0),
        ("live", 10, 2.0, 20.0),
        ("live", 100, 2.5, 20.0),
    ];
    for (scenario, n, ratio_goal, rss_goal) in goals {
        // Ours as Crossplane calls it, a request repeated on every reconcile, and ours
        // rendering every call (the memo off), each against the same floor.
        for server in ["ours", "ours-computed"] {
            let (Some(ours), Some(floor)) = (
                find(table, n, scenario, server),
                find(table, n, scenario, "floor-reply"),
            ) else {
                continue;
            };
            let ratio = ours.cpu_us_per_call / floor.cpu_us_per_call;
            println!(
                "- {scenario}, {server}, within {ratio_goal}x of the reply floor (same bytes) at {n} repos: {ratio:.2}x, {}; peak RSS <= {rss_goal} MB: {:.1} MB, {}",
                verdict(ratio <= ratio_goal),
                ours.peak_rss_mb,
                verdict(ours.peak_rss_mb <= rss_goal)
            );
        }
    }
    for n in [10, 100] {
        for server in ["ours", "ours-computed"] {
            if let (Some(ours), Some(floor)) = (
                find(table, n, "reconcile", server),
                find(table, n, "reconcile", "floor-reply"),
            ) {
                println!(
                    "- the whole reconcile (both calls), {server}, at {n} repos: {:.1} us against the reply floor's {:.1} us, {:.2}x (reported, no goal)",
                    ours.cpu_us_per_call,
                    floor.cpu_us_per_call,
                    ours.cpu_us_per_call / floor.cpu_us_per_call
                );
            }
        }
    }
    if let (Some(ours), Some(floor)) = (plain(10, "ours"), plain(10, "floor")) {
        let ratio = ours.cpu_us_per_call / floor.cpu_us_per_call;
        println!(
            "- within 1.5x of the echo floor at 10 repos (issue #6): {ratio:.2}x, {}",
            verdict(ratio <= 1.5)
        );
    }
    let worst_cold = table
        .iter()
        .filter(|row| row.server == "ours" && row.figures.ok)
        .map(|row| row.figures.cold_start_ms)
        .reduce(f64::max);
    if let Some(worst_cold) = worst_cold {
        println!(
            "- cold start <= 50 ms: at most {worst_cold:.1} ms, {}",
            verdict(worst_cold <= 50.0)
        );
    }
    if let Some(ours) = plain(1000, "ours") {
        println!(
            "- 1,000 repos in <= 5 ms of server time: {:.2} ms, {}",
            ours.cpu_us_per_call / 1000.0,
            verdict(ours.cpu_us_per_call <= 5000.0)
        );
    }
}
