//! The command-line tools: `render` (golden files, pipelines with other functions over gRPC,
//! its flags, hostile files), `adopt`, and the examples rendered and validated. The binary runs
//! as a child process. One test binary (docs/development.md, "Tests", indexes every module).

#[path = "../support/mod.rs"]
mod support;

/// `adopt`: claims from live repository configurations, and their round trip through the
/// function.
mod adopt_command;
/// `adopt` against instances as companies run them and as a hostile one answers (issue 59):
/// internal CAs, partial answers, bounded work, redirects, forged output, exact YAML, and a
/// 300-repository round trip.
mod adopt_hostile;
/// Every example composite renders without problems, valid against its API's CRDs.
mod examples;
/// `render` reads and prints the examples and function replies' numbers as Go's
/// sigs.k8s.io/yaml does (the harness of crates/go-yaml's Go comparison).
mod go_yaml_render;
/// Hostile files for `render`: a clear error in bounded time and memory.
mod hostile_render;
/// `render`: golden examples (`examples/**/*.args`) and pipelines that mix this function with
/// functions served over gRPC.
mod render_command;
/// `render --function-credentials`, `--xrd`, `--debug` and repeated flags.
mod render_flags;
