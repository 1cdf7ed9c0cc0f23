//! Decoding the test vectors' requests from JSON values (as the WebAssembly face receives
//! them) with our mapping and with pbjson's, and what each says of a bad field.

#[allow(dead_code, clippy::all)]
mod generated {
    include!(concat!(env!("OUT_DIR"), "/apiextensions.r#fn.proto.v1.rs"));
    include!(concat!(
        env!("OUT_DIR"),
        "/apiextensions.r#fn.proto.v1.serde.rs"
    ));
}

use function_artifactory::proto::json::request_from_json;
use serde_json::{json, Value};
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Instant;

const CALLS: u32 = 2000;

/// Microseconds a call of `decode`, over CALLS calls.
fn per_call(mut decode: impl FnMut()) -> f64 {
    let started = Instant::now();
    for _ in 0..CALLS {
        decode();
    }
    started.elapsed().as_secs_f64() * 1e6 / f64::from(CALLS)
}

fn pbjson_decode(value: Value) -> Result<generated::RunFunctionRequest, serde_json::Error> {
    serde_json::from_value(value)
}

fn main() {
    let vectors = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/vectors");
    let mut requests: Vec<PathBuf> = std::fs::read_dir(&vectors)
        .expect("tests/vectors")
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.to_string_lossy().ends_with(".request.json"))
        .collect();
    requests.sort();
    let (mut ours_total, mut pbjson_total) = (0.0, 0.0);
    println!("| request | ours us | pbjson us |\n|---|---|---|");
    for path in &requests {
        let value: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        assert!(pbjson_decode(value.clone()).is_ok(), "{}", path.display());
        let ours = per_call(|| {
            black_box(request_from_json(black_box(&value)).unwrap());
        });
        // serde's from_value takes the value: its clone is timed apart and taken out.
        let clone = per_call(|| {
            black_box(black_box(&value).clone());
        });
        let pbjson = per_call(|| {
            black_box(pbjson_decode(black_box(&value).clone()).unwrap());
        }) - clone;
        ours_total += ours;
        pbjson_total += pbjson;
        let name = path.file_name().unwrap().to_string_lossy();
        println!("| {name} | {ours:.1} | {pbjson:.1} |");
    }
    println!(
        "| all {} | {ours_total:.1} | {pbjson_total:.1} |",
        requests.len()
    );
    println!("\nA bad field:\n");
    for bad in [
        json!({"observed": {"resources": {"a": {"ready": "YES"}}}}),
        json!({"meta": {"tag": 7}}),
        json!({"observed": {"composite": {"resource": 5}}}),
    ] {
        let ours = request_from_json(&bad).unwrap_err();
        let pbjson = pbjson_decode(bad.clone()).unwrap_err();
        println!(
            "- `{bad}`\n  - ours: `{}: {}`\n  - pbjson: `{pbjson}`",
            ours.path, ours.message
        );
    }
}
