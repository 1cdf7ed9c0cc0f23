//! One gRPC-framed request body (what bench-e2e writes to target/bench-e2e/ours-N.bin), decoded,
//! run and encoded CALLS times: the server's work without the transport, for callgrind.
//!
//! valgrind --tool=callgrind target/profiling/examples/profile-call target/bench-e2e/ours-100.bin 20

use function_artifactory::proto::v1::RunFunctionRequest;
use function_artifactory::run_function;
use prost::Message;

/// The server binary's allocator (src/main.rs).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let body = std::fs::read(&args[1]).expect("a request body");
    let calls: usize = args.get(2).map_or(10, |s| s.parse().expect("CALLS"));
    let mut bytes = 0;
    for _ in 0..calls {
        let request = RunFunctionRequest::decode(&body[5..]).expect("a request");
        bytes += run_function(&request).encode_to_vec().len();
    }
    println!("{calls} calls, {bytes} response bytes");
}
