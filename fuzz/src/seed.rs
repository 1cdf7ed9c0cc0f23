//! Writes the seed corpus of both fuzz targets from the examples and the shared test vectors:
//! `cargo run --manifest-path fuzz/Cargo.toml --bin seed-corpus` (scripts/fuzz.sh runs it).
//! The files are named after their source, so running it again rewrites the same files.

use function_artifactory::proto::json::{base64_decode, request_from_json};
use prost::Message;
use serde_json::{json, Value};
use std::fs;
use std::path::{Path, PathBuf};

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let bytes_dir = root.join("fuzz/corpus/run_function_bytes");
    let spec_dir = root.join("fuzz/corpus/composite_spec");
    fs::create_dir_all(&bytes_dir).unwrap();
    fs::create_dir_all(&spec_dir).unwrap();
    let mut written = 0;
    let mut write = |path: PathBuf, bytes: &[u8]| {
        fs::write(&path, bytes).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
        written += 1;
    };

    // The shared vectors: each request as sent, its composite's spec and its input.
    for path in sorted(&root.join("tests/vectors"), ".request.json") {
        let name = file_stem(&path, ".request.json");
        let request: Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
        let bin = fs::read(root.join(format!("tests/vectors/{name}.request.bin"))).unwrap();
        write(bytes_dir.join(format!("vector-{name}.bin")), &bin);
        let spec = &request["observed"]["composite"]["resource"]["spec"];
        if !spec.is_null() {
            write(spec_dir.join(format!("vector-{name}.spec.json")), &pretty(spec));
        }
        if request["input"].is_object() {
            write(spec_dir.join(format!("vector-{name}.input.json")), &pretty(&request["input"]));
        }
    }
    // The undecodable requests of the vectors: decoding must fail without a panic.
    let undecodable: Value =
        serde_json::from_slice(&fs::read(root.join("tests/vectors/undecodable.json")).unwrap()).unwrap();
    for case in undecodable.as_array().unwrap() {
        let bytes = base64_decode(case["requestBase64"].as_str().unwrap()).unwrap();
        write(bytes_dir.join(format!("undecodable-{}.bin", case["name"].as_str().unwrap())), &bytes);
    }

    // The examples: each composite with its Composition's input, without and with the observed
    // resources of the example.
    for dir in sorted(&root.join("examples"), "") {
        let xr_path = dir.join("xr.yaml");
        let composition_path = dir.join("composition.yaml");
        if !xr_path.exists() || !composition_path.exists() {
            continue;
        }
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let xr = yaml_documents(&xr_path).remove(0);
        let input = yaml_documents(&composition_path)
            .iter()
            .flat_map(|c| c["spec"]["pipeline"].as_array().cloned().unwrap_or_default())
            .find(|step| step["functionRef"]["name"] == "function-artifactory")
            .map(|step| step["input"].clone())
            .unwrap_or(Value::Null);
        write(spec_dir.join(format!("example-{name}.spec.json")), &pretty(&xr["spec"]));
        if input.is_object() {
            write(spec_dir.join(format!("example-{name}.input.json")), &pretty(&input));
        }
        let mut request = json!({
            "meta": {"tag": format!("example-{name}"), "capabilities": ["CAPABILITY_CAPABILITIES", "CAPABILITY_CONDITIONS"]},
            "observed": {"composite": {"resource": xr}},
        });
        if input.is_object() {
            request["input"] = input;
        }
        write(bytes_dir.join(format!("example-{name}.bin")), &encode(&request));
        let observed_path = dir.join("observed.yaml");
        if observed_path.exists() {
            let mut resources = serde_json::Map::new();
            for resource in yaml_documents(&observed_path) {
                let annotations = &resource["metadata"]["annotations"];
                let key = annotations["crossplane.io/composition-resource-name"]
                    .as_str()
                    .unwrap_or("unnamed")
                    .to_owned();
                resources.insert(key, json!({"resource": resource}));
            }
            request["observed"]["resources"] = Value::Object(resources);
            write(bytes_dir.join(format!("example-{name}-observed.bin")), &encode(&request));
        }
    }
    println!("seed-corpus: wrote {written} files under fuzz/corpus/");
}

fn encode(request: &Value) -> Vec<u8> {
    request_from_json(request).expect("an example request").encode_to_vec()
}

fn pretty(value: &Value) -> Vec<u8> {
    serde_json::to_vec_pretty(value).unwrap()
}

fn yaml_documents(path: &Path) -> Vec<Value> {
    let text = fs::read_to_string(path).unwrap();
    serde_yaml_ng::Deserializer::from_str(&text)
        .map(|doc| {
            let value = serde_yaml_ng::Value::deserialize(doc).unwrap();
            serde_json::to_value(value).unwrap()
        })
        .filter(|v| !v.is_null())
        .collect()
}

use serde::Deserialize as _;

fn sorted(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            if suffix.is_empty() {
                p.is_dir()
            } else {
                p.to_string_lossy().ends_with(suffix)
            }
        })
        .collect();
    paths.sort();
    paths
}

fn file_stem(path: &Path, suffix: &str) -> String {
    let name = path.file_name().unwrap().to_string_lossy();
    name.strip_suffix(suffix).unwrap().to_owned()
}
