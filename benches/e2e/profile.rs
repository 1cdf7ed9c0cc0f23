//! gRPC-framed request bodies (what bench-e2e writes to target/bench-e2e/), each decoded, run
//! and encoded CALLS times, in turn: the server's work without the transport, for callgrind.
//! Several bodies make one call of each (a reconcile's first and second call).
//!
//! valgrind --tool=callgrind target/profiling/examples/profile-call target/bench-e2e/ours-100.bin 20
//! valgrind --tool=callgrind target/profiling/examples/profile-call FIRST.bin SECOND.bin 20
//!
//! A body is gRPC-framed, as bench-e2e writes it, or a bare message, as a test vector's
//! `tests/vectors/<name>.request.bin` is (scripts/instructions.sh measures both).
//!
//! `--steady` first turns each body into the call of a reconcile whose resources exist: every
//! resource the function composes for the claim comes back observed, as the provider reports
//! one (uid, generation, owner, finalizer, `managedFields`, `status.atProvider` with every
//! field, Ready and Synced), and a second call's `artifactory-key-*` lookups find them
//! (`requests::with_observed`, as bench-e2e's `steady` scenario). The other scenarios' requests
//! have none, and a claim's reconciles after its first all carry them.
//!
//! valgrind --tool=callgrind target/profiling/examples/profile-call --steady target/bench-e2e/plain-100-0.bin 6
//!
//! `--key` first reads each body for its content key, as the server does before it looks for a
//! remembered answer, and decodes it after (`KeyedRequest`): with it, a call is what a request
//! the server has not seen costs it (`server::memo`; the answer is encoded into a buffer of its
//! own there too). `--hit` (before `--key` and `--steady`) reads each body for its content key
//! and nothing else: what a request the server has answered before costs it, but for the
//! memo's lookup.
//!
//! The content hashes are keyed with a random seed, as the server keys them, unless `--unkeyed`
//! comes first: then they are XXH3's unkeyed hashes, as before they were keyed, and so is the
//! place of each small object in the memo of the schemas' walk (`structpb::hash`), whose slots
//! two objects may share. A random seed moves those collisions from run to run, and the count
//! with them (docs/benchmarks-log.md, "Content hashes keyed per process").

#[path = "../requests.rs"]
mod requests;

use function_artifactory::proto::request_key::KeyedRequest;
use function_artifactory::proto::v1::RunFunctionRequest;
use function_artifactory::run_function;
use prost::bytes::Bytes;
use prost::Message;

/// The server binary's allocator (src/main.rs).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut flag = |name: &str| {
        let given = args.first().is_some_and(|arg| arg == name);
        if given {
            args.remove(0);
        }
        given
    };
    // Keyed as the server keys its content hashes, so that a call hashes as it does there.
    if !flag("--unkeyed") {
        function_artifactory::server::key_content_hashes().expect("a key for the content hashes");
    }
    let hit = flag("--hit");
    let keyed = flag("--key");
    let steady = flag("--steady");
    let calls: usize = match args.last().map(|s| s.parse()) {
        Some(Ok(calls)) if args.len() > 1 => {
            args.pop();
            calls
        }
        _ => 10,
    };
    // As the server holds a request: the bytes received, which the live schemas stay slices of.
    let bodies: Vec<Bytes> = args
        .iter()
        .map(|path| unframed(Bytes::from(std::fs::read(path).expect("a request body"))))
        .map(|body| {
            if steady {
                with_resources_observed(&body)
            } else {
                body
            }
        })
        .collect();
    let mut bytes = 0;
    for _ in 0..calls {
        for body in &bodies {
            if hit {
                let keyed = KeyedRequest::read(body.clone());
                std::hint::black_box(keyed.key().expect("a request with a content key"));
                continue;
            }
            let request = if keyed {
                let keyed = KeyedRequest::read(body.clone());
                std::hint::black_box(keyed.key().expect("a request with a content key"));
                keyed.decode()
            } else {
                RunFunctionRequest::decode(body.clone())
            };
            let request = request.expect("a request");
            bytes += run_function(&request).encode_to_vec().len();
        }
    }
    let (schemas, cache_bytes) = function_artifactory::validation::cache_size();
    println!("{calls} calls, {bytes} response bytes; live schemas cached: {schemas}, about {cache_bytes} bytes");
}

/// The message of a gRPC-framed body (what bench-e2e writes), or the body itself when it is a
/// bare message (a test vector's `.request.bin`): a frame is a zero flag byte and the message's
/// length, big-endian, where a RunFunctionRequest's first byte is a field's tag, never zero.
fn unframed(body: Bytes) -> Bytes {
    let framed = body.len() >= 5
        && body[0] == 0
        && u32::from_be_bytes([body[1], body[2], body[3], body[4]]) as usize == body.len() - 5;
    if framed {
        body.slice(5..)
    } else {
        body
    }
}

/// `body` in a reconcile of a claim whose resources exist (`requests::with_observed`).
fn with_resources_observed(body: &[u8]) -> Bytes {
    let request = RunFunctionRequest::decode(body).expect("a request");
    let observed = requests::observed_as_composed(&request);
    Bytes::from(requests::with_observed(request, &observed).encode_to_vec())
}
