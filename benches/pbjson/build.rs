//! The messages of run_function.proto with prost, and their serde JSON mapping with pbjson.
use std::path::PathBuf;

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../proto");
    let file = "apiextensions/fn/proto/v1/run_function.proto";
    println!("cargo:rerun-if-changed={}", root.join(file).display());
    let descriptors = protox::compile([file], [&root]).expect("the protocol compiles");
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    let descriptor_path = out.join("descriptor.bin");
    std::fs::write(
        &descriptor_path,
        prost::Message::encode_to_vec(&descriptors),
    )
    .unwrap();
    prost_build::Config::new()
        .file_descriptor_set_path(&descriptor_path)
        .compile_well_known_types()
        .extern_path(".google.protobuf", "::pbjson_types")
        .skip_protoc_run()
        .compile_protos(&[file], &[&root])
        .expect("prost-build");
    let descriptor_set = std::fs::read(&descriptor_path).unwrap();
    pbjson_build::Builder::new()
        .register_descriptors(&descriptor_set)
        .expect("descriptors")
        .build(&[".apiextensions"])
        .expect("pbjson-build");
}
