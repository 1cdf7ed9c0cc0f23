//! `wasmfn-pack`: the steps of scripts/build-component.sh that need the component model.
//!
//! - `componentize CORE OUT`: the core module (linked with `--skip-wit-component`, then
//!   optimised) made into a component from the component-type sections it carries;
//! - `wit COMPONENT`: the component's world, imports and exports, as WIT;
//! - `oci COMPONENT MANIFEST DIR`: the artifact in the CNCF Wasm OCI format as an OCI image
//!   layout: the component as an `application/wasm` layer and the module manifest
//!   (`wasmfn.yaml`, as JSON) as an `application/vnd.wasmfn.manifest.v1+json` layer, as
//!   function-wasm reads them. Prints the manifest digest a Composition pins.
//!
//! The layout is reproducible: it holds no time but `SOURCE_DATE_EPOCH` (the epoch without
//! it), and every JSON document is written with a fixed field order.

use anyhow::{bail, Context, Result};
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::Path;
use wit_component::{ComponentEncoder, DecodedWasm, WitPrinter};
use wit_parser::{WorldItem, WorldKey};

const OCI_MANIFEST: &str = "application/vnd.oci.image.manifest.v1+json";
const OCI_INDEX: &str = "application/vnd.oci.image.index.v1+json";
const WASM_CONFIG: &str = "application/vnd.wasm.config.v0+json";
const WASM_LAYER: &str = "application/wasm";
const WASMFN_MANIFEST_LAYER: &str = "application/vnd.wasmfn.manifest.v1+json";

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    match args.as_slice() {
        ["componentize", core, out] => componentize(Path::new(core), Path::new(out)),
        ["wit", component] => {
            print!("{}", world_of(&read(Path::new(component))?)?);
            Ok(())
        }
        ["oci", component, manifest, dir] => {
            let digest = oci_layout(Path::new(component), Path::new(manifest), Path::new(dir))?;
            println!("{digest}");
            Ok(())
        }
        _ => bail!(
            "usage: wasmfn-pack componentize CORE OUT | wit COMPONENT | oci COMPONENT MANIFEST DIR"
        ),
    }
}

fn read(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))
}

fn write(path: &Path, bytes: &[u8]) -> Result<()> {
    std::fs::write(path, bytes).with_context(|| format!("cannot write {}", path.display()))
}

/// The component of a core module, from the component-type sections wit-bindgen and the
/// wasip2 standard library put in it; validated.
fn componentize(core: &Path, out: &Path) -> Result<()> {
    let module = read(core)?;
    let component = ComponentEncoder::default()
        .validate(true)
        .module(&module)
        .with_context(|| format!("{} has no usable component-type sections", core.display()))?
        .encode()
        .with_context(|| format!("cannot make a component of {}", core.display()))?;
    write(out, &component)
}

/// The world a component implements, as WIT.
fn world_of(component: &[u8]) -> Result<String> {
    let DecodedWasm::Component(resolve, world) =
        wit_component::decode(component).context("not a component")?
    else {
        bail!("a WIT package, not a component");
    };
    let package = resolve.worlds[world]
        .package
        .context("the component's world has no package")?;
    let mut printer = WitPrinter::default();
    printer.print(&resolve, package, &[])?;
    Ok(printer.output.to_string())
}

/// The import and export names of a component, for the artifact's config.
fn interface_names(component: &[u8]) -> Result<(Vec<String>, Vec<String>)> {
    let DecodedWasm::Component(resolve, world) =
        wit_component::decode(component).context("not a component")?
    else {
        bail!("a WIT package, not a component");
    };
    let world = &resolve.worlds[world];
    // Functions and interfaces; a type the world names (`log-level`) is neither.
    let names = |items: &wit_parser::IndexMap<WorldKey, WorldItem>| -> Vec<String> {
        items
            .iter()
            .filter(|(_, item)| !matches!(item, WorldItem::Type { .. }))
            .map(|(key, _)| resolve.name_world_key(key))
            .collect()
    };
    Ok((names(&world.imports), names(&world.exports)))
}

#[derive(Serialize)]
struct Descriptor {
    #[serde(rename = "mediaType")]
    media_type: &'static str,
    digest: String,
    size: usize,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    annotations: BTreeMap<&'static str, String>,
}

/// A blob of the layout: written under `blobs/sha256/`, described by its descriptor.
fn blob(dir: &Path, media_type: &'static str, bytes: &[u8]) -> Result<Descriptor> {
    let hex = format!("{:x}", Sha256::digest(bytes));
    write(&dir.join("blobs/sha256").join(&hex), bytes)?;
    Ok(Descriptor {
        media_type,
        digest: format!("sha256:{hex}"),
        size: bytes.len(),
        annotations: BTreeMap::new(),
    })
}

/// The CNCF Wasm OCI config of a component.
#[derive(Serialize)]
struct WasmConfig {
    created: String,
    architecture: &'static str,
    os: &'static str,
    #[serde(rename = "layerDigests")]
    layer_digests: Vec<String>,
    component: ComponentConfig,
}

#[derive(Serialize)]
struct ComponentConfig {
    exports: Vec<String>,
    imports: Vec<String>,
}

#[derive(Serialize)]
struct ImageManifest {
    #[serde(rename = "schemaVersion")]
    schema_version: u32,
    #[serde(rename = "mediaType")]
    media_type: &'static str,
    config: Descriptor,
    layers: Vec<Descriptor>,
    annotations: BTreeMap<&'static str, String>,
}

#[derive(Serialize)]
struct ImageIndex {
    #[serde(rename = "schemaVersion")]
    schema_version: u32,
    #[serde(rename = "mediaType")]
    media_type: &'static str,
    manifests: Vec<Descriptor>,
}

/// Writes the OCI image layout of the artifact in `dir` (emptied first); returns the digest
/// of its manifest.
fn oci_layout(component: &Path, manifest: &Path, dir: &Path) -> Result<String> {
    let wasm = read(component)?;
    if wasm.get(..8) != Some(b"\0asm\x0d\0\x01\0") {
        bail!("{} is not a component (ABI v2)", component.display());
    }
    let module_manifest = module_manifest(manifest)?;
    let string = |field: &str| {
        module_manifest
            .get(field)
            .and_then(|v| v.as_str())
            .map(str::to_owned)
            .with_context(|| format!("{}: no {field}", manifest.display()))
    };
    let (name, version) = (string("name")?, string("version")?);

    if dir.exists() {
        std::fs::remove_dir_all(dir).with_context(|| format!("cannot empty {}", dir.display()))?;
    }
    std::fs::create_dir_all(dir.join("blobs/sha256"))
        .with_context(|| format!("cannot create {}", dir.display()))?;

    let wasm_layer = blob(dir, WASM_LAYER, &wasm)?;
    let manifest_layer = blob(
        dir,
        WASMFN_MANIFEST_LAYER,
        &serde_json::to_vec(&module_manifest)?,
    )?;
    let (imports, exports) = interface_names(&wasm)?;
    let config = WasmConfig {
        created: created()?,
        architecture: "wasm",
        os: "wasip2",
        layer_digests: vec![wasm_layer.digest.clone(), manifest_layer.digest.clone()],
        component: ComponentConfig { exports, imports },
    };
    let config = blob(dir, WASM_CONFIG, &serde_json::to_vec(&config)?)?;
    let mut annotations = BTreeMap::new();
    annotations.insert("org.opencontainers.image.title", name);
    annotations.insert("org.opencontainers.image.version", version.clone());
    for (field, key) in [
        ("description", "org.opencontainers.image.description"),
        ("source", "org.opencontainers.image.source"),
    ] {
        if let Ok(value) = string(field) {
            annotations.insert(key, value);
        }
    }
    let image = ImageManifest {
        schema_version: 2,
        media_type: OCI_MANIFEST,
        config,
        layers: vec![wasm_layer, manifest_layer],
        annotations,
    };
    let mut image = blob(dir, OCI_MANIFEST, &serde_json::to_vec(&image)?)?;
    let digest = image.digest.clone();
    image
        .annotations
        .insert("org.opencontainers.image.ref.name", version);
    let index = ImageIndex {
        schema_version: 2,
        media_type: OCI_INDEX,
        manifests: vec![image],
    };
    write(&dir.join("index.json"), &serde_json::to_vec(&index)?)?;
    write(&dir.join("oci-layout"), br#"{"imageLayoutVersion":"1.0.0"}"#)?;
    Ok(digest)
}

/// The module manifest (`wasmfn.yaml`) as JSON, as the manifest layer carries it.
fn module_manifest(path: &Path) -> Result<serde_json::Map<String, serde_json::Value>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let value: serde_json::Value = serde_yaml_ng::from_str(&text)
        .with_context(|| format!("{} is not YAML", path.display()))?;
    let serde_json::Value::Object(object) = value else {
        bail!("{} is not a mapping", path.display());
    };
    if object.get("abi").and_then(|v| v.as_i64()) != Some(2) {
        bail!("{}: abi must be 2 for a component", path.display());
    }
    Ok(object)
}

/// `SOURCE_DATE_EPOCH` in RFC 3339, or the epoch: the layout holds no time of the build.
fn created() -> Result<String> {
    let seconds: i64 = match std::env::var("SOURCE_DATE_EPOCH") {
        Ok(text) => text
            .parse()
            .with_context(|| format!("SOURCE_DATE_EPOCH {text:?} is not a number of seconds"))?,
        Err(_) => 0,
    };
    Ok(rfc3339(seconds))
}

/// Seconds since the epoch as an RFC 3339 UTC time (civil-from-days, proleptic Gregorian).
fn rfc3339(seconds: i64) -> String {
    let (days, rest) = (seconds.div_euclid(86_400), seconds.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3_600,
        rest % 3_600 / 60,
        rest % 60
    )
}

#[cfg(test)]
mod tests {
    use super::rfc3339;

    #[test]
    fn times_are_rfc3339() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_756_166_461), "2025-08-26T00:01:01Z");
    }
}
