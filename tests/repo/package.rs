//! The Function package, built without a Docker engine by `scripts/build-xpkg.sh`,
//! checked with standard OCI tools (Debian's skopeo and umoci): the image index of
//! linux/amd64 and linux/arm64, each manifest and its `io.crossplane.xpkg: base`
//! layer annotation, the config (entrypoint, user, port, the layer label crossplane
//! writes), the `.xpkg` tarballs, the content of package.yaml, the amd64 binary
//! unpacked from the image answering RunFunction, and the arm64 one answering it
//! under qemu-user.
//!
//! scripts/test-all.sh installs skopeo, umoci, the aarch64 cross gcc and qemu-user;
//! where one is missing the tests print a SKIP line and pass.

use crate::support;

use function_artifactory::proto::v1::function_runner_service_client::FunctionRunnerServiceClient;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use support::requests::{composite, input, request};
use support::server::{insecure_channel, Server};

const BASE_ANNOTATION: &str = "io.crossplane.xpkg";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// The platforms of the package, as OCI names them.
const PLATFORMS: [&str; 2] = ["amd64", "arm64"];

/// What build-xpkg.sh produced, built once for all tests of this file.
struct Package {
    layout: PathBuf,
    /// The `.xpkg` tarballs, in the order of [`PLATFORMS`].
    xpkgs: Vec<PathBuf>,
    /// The amd64 image unpacked by umoci.
    bundle: PathBuf,
    /// The arm64 image unpacked by umoci.
    bundle_arm64: PathBuf,
}

/// Writes to the process's stderr directly: the test harness captures `eprintln!`.
fn visible(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{line}");
}

fn tools_present() -> bool {
    let tools = [
        "skopeo",
        "umoci",
        "tar",
        "gzip",
        "sha256sum",
        "musl-gcc",
        "aarch64-linux-gnu-gcc",
        "qemu-aarch64",
    ];
    let mut missing: Vec<String> = tools
        .into_iter()
        .filter(|tool| Command::new(tool).arg("--version").output().is_err())
        .map(str::to_owned)
        .collect();
    if !missing.iter().any(|tool| tool == "aarch64-linux-gnu-gcc") && !cross_c_library_present() {
        missing.push("the aarch64 C library headers (libc6-dev-arm64-cross)".to_owned());
    }
    if !missing.is_empty() {
        visible(&format!(
            "SKIP package tests: {} not installed (scripts/test-all.sh installs them)",
            missing.join(", ")
        ));
    }
    missing.is_empty()
}

/// Whether the cross compiler finds a C library to compile against: ring's C code needs one,
/// and Debian's cross gcc only recommends it.
fn cross_c_library_present() -> bool {
    use std::io::Write;
    let child = Command::new("aarch64-linux-gnu-gcc")
        .args(["-fsyntax-only", "-x", "c", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    let Ok(mut child) = child else { return false };
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(b"#include <string.h>\nint main(void) { return 0; }\n");
    }
    child.wait().is_ok_and(|status| status.success())
}

fn run(command: &mut Command) -> String {
    try_run(command).unwrap_or_else(|e| panic!("{e}"))
}

/// Runs a command; its standard output, or why it failed.
fn try_run(command: &mut Command) -> Result<String, String> {
    let output = command.output().map_err(|e| format!("{command:?}: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "{command:?} failed: {}\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    String::from_utf8(output.stdout).map_err(|e| format!("{command:?}: output is not UTF-8: {e}"))
}

fn json_of(command: &mut Command) -> Value {
    let text = run(command);
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{command:?}: {e}: {text}"))
}

/// Unpacks the image of one platform (its tag VERSION-ARCH) into a fresh folder.
fn unpack(layout: &Path, arch: &str, bundle: &Path) -> Result<(), String> {
    if bundle.exists() {
        std::fs::remove_dir_all(bundle)
            .map_err(|e| format!("cannot remove the last run's {}: {e}", bundle.display()))?;
    }
    try_run(
        Command::new("umoci")
            .args(["unpack", "--rootless", "--image"])
            .arg(format!("{}:{}-{arch}", layout.display(), version()))
            .arg(bundle),
    )
    .map(drop)
}

/// Builds the package and unpacks both images with umoci; `None` where the tools are missing.
fn build_package() -> Result<Option<Package>, String> {
    if !tools_present() {
        return Ok(None);
    }
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("xpkg");
    let printed = try_run(
        Command::new(root().join("scripts/build-xpkg.sh"))
            .arg("--output")
            .arg(&out),
    )?;
    let xpkgs: Vec<PathBuf> = printed.lines().map(PathBuf::from).collect();
    let layout = out.join("oci");
    let (bundle, bundle_arm64) = (out.join("bundle"), out.join("bundle-arm64"));
    unpack(&layout, "amd64", &bundle)?;
    unpack(&layout, "arm64", &bundle_arm64)?;
    Ok(Some(Package {
        layout,
        xpkgs,
        bundle,
        bundle_arm64,
    }))
}

/// The package, built once for every test of this file. A build that failed is not tried
/// again: each later test fails at once with the first failure's cause.
fn package() -> Option<&'static Package> {
    static PACKAGE: OnceLock<Result<Option<Package>, String>> = OnceLock::new();
    match PACKAGE.get_or_init(build_package) {
        Ok(package) => package.as_ref(),
        Err(cause) => panic!("the package could not be built (not retried for each test): {cause}"),
    }
}

/// The image of one platform in the layout.
fn image_ref(package: &Package, arch: &str) -> String {
    format!("oci:{}:{}-{arch}", package.layout.display(), version())
}

/// The amd64 image, which the tests of one image's content read.
fn oci_ref(package: &Package) -> String {
    image_ref(package, "amd64")
}

/// What `skopeo inspect --raw` prints of an image's manifest (or, with `config`, its config):
/// the bytes their digests are taken of.
fn skopeo_raw(reference: &str, config: bool) -> String {
    let mut command = Command::new("skopeo");
    command.args(["inspect", "--raw"]);
    if config {
        command.arg("--config");
    }
    run(command.arg(reference))
}

fn skopeo_inspect(reference: &str, config: bool) -> Value {
    let raw = skopeo_raw(reference, config);
    serde_json::from_str(&raw).unwrap_or_else(|e| panic!("skopeo inspect {reference}: {e}: {raw}"))
}

#[test]
fn the_manifest_annotates_the_package_layer_as_base() {
    let Some(package) = package() else { return };
    let manifest = skopeo_inspect(&oci_ref(package), false);
    assert_eq!(manifest["schemaVersion"], 2);
    assert_eq!(
        manifest["mediaType"],
        "application/vnd.oci.image.manifest.v1+json"
    );
    let layers = manifest["layers"].as_array().unwrap();
    assert_eq!(layers.len(), 2, "the runtime layer, then package.yaml");
    for layer in layers {
        assert_eq!(
            layer["mediaType"],
            "application/vnd.oci.image.layer.v1.tar+gzip"
        );
    }
    assert!(layers[0].get("annotations").is_none());
    assert_eq!(layers[1]["annotations"][BASE_ANNOTATION], "base");
    // Exactly one base layer, as the xpkg specification requires.
    let bases = layers
        .iter()
        .filter(|l| l["annotations"][BASE_ANNOTATION] == "base")
        .count();
    assert_eq!(bases, 1);
}

#[test]
fn the_config_runs_the_function_as_non_root_on_9443() {
    let Some(package) = package() else { return };
    let manifest = skopeo_inspect(&oci_ref(package), false);
    let config = skopeo_inspect(&oci_ref(package), true);
    assert_eq!(config["os"], "linux");
    assert_eq!(config["architecture"], "amd64");
    let runtime = &config["config"];
    assert_eq!(runtime["Entrypoint"], json!(["/function"]));
    assert!(runtime.get("Cmd").is_none());
    assert_eq!(runtime["User"], "65532:65532");
    assert_eq!(runtime["ExposedPorts"], json!({"9443/tcp": {}}));
    // As `crossplane xpkg build` records it: a label naming the base layer's digest.
    let package_layer = manifest["layers"][1]["digest"].as_str().unwrap();
    assert_eq!(
        runtime["Labels"][format!("{BASE_ANNOTATION}:{package_layer}")],
        "base"
    );
    assert_eq!(config["rootfs"]["diff_ids"].as_array().unwrap().len(), 2);
    // The human-readable view agrees.
    let summary = json_of(Command::new("skopeo").arg("inspect").arg(oci_ref(package)));
    assert_eq!(summary["Os"], "linux");
    assert_eq!(summary["Layers"].as_array().unwrap().len(), 2);
}

#[test]
fn each_xpkg_tarball_holds_its_platforms_image() {
    let Some(package) = package() else { return };
    assert_eq!(package.xpkgs.len(), PLATFORMS.len(), "{:?}", package.xpkgs);
    for (arch, xpkg) in PLATFORMS.into_iter().zip(&package.xpkgs) {
        assert!(xpkg.ends_with(format!("function-artifactory-{}-{arch}.xpkg", version())));
        the_xpkg_tarball_holds_the_image(package, arch, xpkg);
    }
}

fn the_xpkg_tarball_holds_the_image(package: &Package, arch: &str, xpkg: &Path) {
    let archive = format!("docker-archive:{}", xpkg.display());
    let oci_config = skopeo_inspect(&image_ref(package, arch), true);
    let archive_config = skopeo_inspect(&archive, true);
    assert_eq!(archive_config, oci_config);
    assert_eq!(archive_config["architecture"], arch);
    let oci_manifest = skopeo_inspect(&image_ref(package, arch), false);
    let archive_manifest = skopeo_inspect(&archive, false);
    assert_eq!(
        archive_manifest["config"]["digest"],
        oci_manifest["config"]["digest"]
    );
    assert_eq!(archive_manifest["layers"].as_array().unwrap().len(), 2);
    // The files go-containerregistry's tarball format names: crossplane reads them.
    let listing = run(Command::new("tar").arg("-tf").arg(xpkg));
    let mut files: Vec<&str> = listing.lines().collect();
    files.sort_unstable();
    let config_digest = oci_manifest["config"]["digest"].as_str().unwrap();
    let mut expected: Vec<String> = vec!["manifest.json".into(), config_digest.into()];
    for layer in oci_manifest["layers"].as_array().unwrap() {
        let digest = layer["digest"].as_str().unwrap();
        expected.push(format!("{}.tar.gz", digest.trim_start_matches("sha256:")));
    }
    expected.sort_unstable();
    assert_eq!(files, expected);
}

/// The licence the package and the crate name is the one in LICENSE: Cargo.toml and
/// package/crossplane.yaml say Apache-2.0, and LICENSE holds its text. The package names no
/// source repository: there is no public one (`meta.crossplane.io/source` named one that does
/// not exist). Needs no package build.
#[test]
fn the_licence_is_apache_2_0_in_license_cargo_toml_and_the_package() {
    let license = std::fs::read_to_string(root().join("LICENSE")).expect("LICENSE");
    let head: Vec<&str> = license
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .take(2)
        .collect();
    assert_eq!(head, ["Apache License", "Version 2.0, January 2004"]);
    assert!(license.contains("TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION"));
    assert!(license.contains("END OF TERMS AND CONDITIONS"));
    let cargo = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
    assert!(
        cargo.lines().any(|l| l == "license = \"Apache-2.0\""),
        "Cargo.toml's licence"
    );
    let meta: Value = serde_yaml_ng::from_str(
        &std::fs::read_to_string(root().join("package/crossplane.yaml")).unwrap(),
    )
    .unwrap();
    let annotations = &meta["metadata"]["annotations"];
    assert_eq!(annotations["meta.crossplane.io/license"], "Apache-2.0");
    assert!(annotations.get("meta.crossplane.io/source").is_none());
}

#[test]
fn package_yaml_is_the_meta_object_then_the_input_crd() {
    let Some(package) = package() else { return };
    let rootfs = package.bundle.join("rootfs");
    let text = std::fs::read_to_string(rootfs.join("package.yaml")).unwrap();
    let documents: Vec<Value> = serde_yaml_ng::Deserializer::from_str(&text)
        .map(|d| serde::Deserialize::deserialize(d).unwrap())
        .collect();
    assert_eq!(documents.len(), 2, "{text}");
    let meta = &documents[0];
    assert_eq!(meta["apiVersion"], "meta.pkg.crossplane.io/v1");
    assert_eq!(meta["kind"], "Function");
    assert_eq!(meta["metadata"]["name"], "function-artifactory");
    assert_eq!(meta["spec"]["capabilities"], json!(["composition"]));
    assert!(meta["spec"]["crossplane"]["version"].is_string());
    for annotation in ["maintainer", "license", "description", "readme"] {
        let key = format!("meta.crossplane.io/{annotation}");
        assert!(meta["metadata"]["annotations"][&key].is_string(), "{key}");
    }
    let committed: Value = serde_yaml_ng::from_str(
        &std::fs::read_to_string(
            root().join("package/input/artifactory.fn.crossplane.io_inputs.yaml"),
        )
        .unwrap(),
    )
    .unwrap();
    assert_eq!(documents[1], committed);
    assert_eq!(documents[1]["kind"], "CustomResourceDefinition");
    assert_eq!(documents[1]["spec"]["names"]["kind"], "Input");
    // The runtime layer holds only the binary; the base layer only package.yaml.
    let mut entries: Vec<String> = std::fs::read_dir(&rootfs)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    entries.sort_unstable();
    assert_eq!(entries, ["function", "package.yaml"]);
}

/// The ELF machine of an executable: 62 for x86-64, 183 for AArch64.
fn elf_machine(elf: &[u8]) -> u16 {
    assert_eq!(&elf[..4], b"\x7fELF", "an ELF executable");
    u16::from_le_bytes([elf[0x12], elf[0x13]])
}

/// Whether an ELF executable asks for a program interpreter (a dynamic loader).
fn has_interpreter(elf: &[u8]) -> bool {
    assert_eq!(&elf[..4], b"\x7fELF", "an ELF executable");
    assert_eq!(elf[4], 2, "64-bit");
    let u16_at = |o: usize| u16::from_le_bytes([elf[o], elf[o + 1]]) as usize;
    let phoff = u64::from_le_bytes(elf[0x20..0x28].try_into().unwrap()) as usize;
    let (phentsize, phnum) = (u16_at(0x36), u16_at(0x38));
    (0..phnum).any(|i| {
        let header = phoff + i * phentsize;
        u32::from_le_bytes(elf[header..header + 4].try_into().unwrap()) == 3 // PT_INTERP
    })
}

/// Whether build-xpkg.sh can build the static binary here: the musl target and musl-gcc.
fn musl_build_possible() -> bool {
    Command::new("musl-gcc").arg("--version").output().is_ok()
        && Command::new("rustup")
            .args(["target", "list", "--installed"])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).contains("x86_64-unknown-linux-musl"))
            .unwrap_or(false)
}

#[tokio::test]
async fn the_unpacked_binary_answers_run_function() {
    let Some(package) = package() else { return };
    let binary = package.bundle.join("rootfs/function");
    let elf = std::fs::read(&binary).unwrap();
    assert_eq!(elf_machine(&elf), 62, "x86-64");
    if musl_build_possible() {
        assert!(!has_interpreter(&elf), "the packaged binary is static");
    } else {
        visible("NOTE: no musl target or musl-gcc here: the package holds a dynamic binary");
    }
    // The runtime spec umoci derives from the image config.
    let runtime: Value =
        serde_json::from_str(&std::fs::read_to_string(package.bundle.join("config.json")).unwrap())
            .unwrap();
    assert_eq!(runtime["process"]["args"], json!(["/function"]));
    assert_eq!(runtime["process"]["user"]["uid"], 65532);

    // Crossplane's render starts it like this (with --insecure); in a cluster, with TLS.
    let server = Server::start_program(&binary, &["--insecure"], &[]);
    answers_run_function(&server).await;
}

/// A RunFunction call over gRPC to a packaged binary renders a Maven repository.
async fn answers_run_function(server: &Server) {
    let mut client = FunctionRunnerServiceClient::new(insecure_channel(server).await);
    let spec = json!({"projectKey": "team1", "repositories": [
        {"name": "libs-release", "rclass": "local", "packageType": "maven"}
    ]});
    let mut call = request(composite(spec))
        .input(input(json!({"providerApi": "cluster"})))
        .build();
    call.meta.as_mut().unwrap().tag = "from-the-package".into();
    let response = client.run_function(call).await.unwrap().into_inner();
    assert_eq!(response.meta.unwrap().tag, "from-the-package");
    let desired = response.desired.unwrap();
    let libs = desired.resources["libs-release"]
        .resource
        .clone()
        .unwrap()
        .into_value();
    assert_eq!(libs["kind"], "MavenRepository");
    assert_eq!(
        libs["metadata"]["annotations"]["crossplane.io/external-name"],
        "team1-libs-release"
    );
}

#[tokio::test]
async fn the_arm64_binary_answers_run_function_under_qemu() {
    let Some(package) = package() else { return };
    let binary = package.bundle_arm64.join("rootfs/function");
    let elf = std::fs::read(&binary).unwrap();
    assert_eq!(elf_machine(&elf), 183, "AArch64");
    assert!(!has_interpreter(&elf), "the packaged binary is static");
    let help = run(Command::new("qemu-aarch64").arg(&binary).arg("--help"));
    assert!(
        help.contains("Crossplane composition function for JFrog Artifactory"),
        "{help}"
    );
    let server = Server::start_emulated("qemu-aarch64", &binary, &["--insecure"]);
    answers_run_function(&server).await;
}

/// The tag VERSION names an image index of both platforms, each an image of the
/// same package layer; `skopeo copy --all` checks every blob against its digest.
#[test]
fn the_index_holds_an_amd64_and_an_arm64_image() {
    let Some(package) = package() else { return };
    let index_ref = format!("oci:{}:{}", package.layout.display(), version());
    let index = skopeo_inspect(&index_ref, false);
    assert_eq!(
        index["mediaType"],
        "application/vnd.oci.image.index.v1+json"
    );
    let members = index["manifests"].as_array().unwrap();
    let platforms: Vec<(&str, &str)> = members
        .iter()
        .map(|m| {
            let platform = &m["platform"];
            (
                platform["os"].as_str().unwrap(),
                platform["architecture"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(platforms, [("linux", "amd64"), ("linux", "arm64")]);
    let mut package_layers = Vec::new();
    for (member, arch) in members.iter().zip(PLATFORMS) {
        let raw = skopeo_raw(&image_ref(package, arch), false);
        assert_eq!(member["size"], raw.len(), "{arch}: the descriptor's size");
        let manifest: Value = serde_json::from_str(&raw).unwrap();
        let config = skopeo_inspect(&image_ref(package, arch), true);
        assert_eq!(config["architecture"], arch);
        assert_eq!(
            manifest["layers"][1]["annotations"][BASE_ANNOTATION],
            "base"
        );
        package_layers.push(manifest["layers"][1]["digest"].clone());
    }
    assert_eq!(package_layers[0], package_layers[1], "one package layer");
    let copy = Path::new(env!("CARGO_TARGET_TMPDIR")).join("xpkg-copy");
    let _ = std::fs::remove_dir_all(&copy);
    run(Command::new("skopeo")
        .args(["copy", "--all", "--quiet", &index_ref])
        .arg(format!("oci:{}:copy", copy.display())));
}

/// The digest of the image tagged TAG in a layout's index.json.
fn tagged_digest(layout: &Path, tag: &str) -> String {
    let index: Value =
        serde_json::from_str(&std::fs::read_to_string(layout.join("index.json")).unwrap()).unwrap();
    let tagged = index["manifests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["annotations"]["org.opencontainers.image.ref.name"] == tag);
    tagged.unwrap_or_else(|| panic!("no tag {tag}: {index}"))["digest"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[test]
fn the_build_is_reproducible_from_the_same_binary() {
    let Some(package) = package() else { return };
    let again = Path::new(env!("CARGO_TARGET_TMPDIR")).join("xpkg-again");
    let xpkg = run(Command::new(root().join("scripts/build-xpkg.sh"))
        .arg("--binary")
        .arg(package.bundle.join("rootfs/function"))
        .arg("--output")
        .arg(&again));
    let amd64 = format!("{}-amd64", version());
    assert_eq!(
        tagged_digest(&again.join("oci"), &amd64),
        tagged_digest(&package.layout, &amd64)
    );
    let bytes = |path: &Path| std::fs::read(path).unwrap();
    assert!(
        bytes(Path::new(xpkg.trim())) == bytes(&package.xpkgs[0]),
        "the .xpkg tarballs differ"
    );
}

/// The Dockerfile builds the runtime image the script assembles: same entrypoint,
/// user and port (it cannot be built here without a Docker engine).
#[test]
fn the_dockerfile_matches_the_package_image() {
    let dockerfile = std::fs::read_to_string(root().join("Dockerfile")).unwrap();
    let last_stage = dockerfile.rsplit("\nFROM ").next().unwrap();
    assert!(
        last_stage.starts_with("gcr.io/distroless/static"),
        "{last_stage}"
    );
    for line in [
        "COPY --from=build /function /function",
        "USER 65532:65532",
        "EXPOSE 9443",
        "ENTRYPOINT [\"/function\"]",
    ] {
        assert!(last_stage.lines().any(|l| l == line), "missing {line:?}");
    }
    assert!(
        dockerfile.contains("-unknown-linux-musl"),
        "a static musl build"
    );
}
