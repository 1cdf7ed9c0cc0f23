//! The provider CRDs that the kind catalog and the tests are built from.
//!
//! They live in the repository, so a clone builds and tests with nothing beside it:
//! - `crds/provider-crds.tar.zst`: the repository CRDs of every provider release since v0.1.0,
//!   as `<release>/<file>.yaml` (written by `scripts/update-provider-crds.sh` from the
//!   provider's git history);
//! - `crds/<release>/`: a release added by hand or by `codegen --provider-package`, one CRD per
//!   file (a release in both places is an error).
//!
//! A provider package as users download it is read too ([`read_package`]): an `.xpkg` tarball
//! (an image tarball whose layer holds `package.yaml`), an OCI image layout folder, or a folder
//! of CRD files.

use anyhow::{anyhow, bail, Context as _};
use serde::Deserialize;
use serde_json::Value;
use std::cmp::Ordering;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The archive of every provider release's CRDs, relative to the repository root.
pub const ARCHIVE_PATH: &str = "crds/provider-crds.tar.zst";
/// Folder of the archive and of releases added as folders.
pub const CRDS_DIR: &str = "crds";

/// The CRDs of one provider release.
#[derive(Debug, Clone)]
pub struct ReleaseCrds {
    /// `v0.14.0`.
    pub release: String,
    /// The CRDs, each a parsed YAML document, sorted by their file name.
    pub crds: Vec<(String, Value)>,
}

/// A release name as the provider tags them: `v` and three numbers.
pub(crate) use crate::core::catalog::parse_version as parse_release;

/// Orders release names by version; names that are not versions sort last, by text.
pub fn compare_releases(a: &str, b: &str) -> Ordering {
    match (parse_release(a), parse_release(b)) {
        (Some(x), Some(y)) => x.cmp(&y),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => a.cmp(b),
    }
}

/// Every release under `<root>/crds`, oldest first.
pub fn releases(root: &Path) -> anyhow::Result<Vec<ReleaseCrds>> {
    let archive = root.join(ARCHIVE_PATH);
    let bytes =
        std::fs::read(&archive).with_context(|| format!("cannot read {}", archive.display()))?;
    let mut releases = read_archive(&bytes).with_context(|| archive.display().to_string())?;
    for folder in release_folders(&root.join(CRDS_DIR))? {
        let release = folder
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_owned();
        if releases.iter().any(|r| r.release == release) {
            bail!(
                "release {release} is both in {ARCHIVE_PATH} and in {}",
                folder.display()
            );
        }
        let crds = read_folder(&folder)?;
        releases.push(ReleaseCrds { release, crds });
    }
    releases.sort_by(|a, b| compare_releases(&a.release, &b.release));
    Ok(releases)
}

/// The folders `vX.Y.Z` of `crds/`.
fn release_folders(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let entries =
        std::fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))?;
    let mut folders: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.is_dir())
        .filter(|path| {
            path.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| parse_release(n).is_some())
        })
        .collect();
    folders.sort();
    Ok(folders)
}

/// The CRDs of one release under `<root>/crds` (the archive or a folder).
pub fn release(root: &Path, name: &str) -> anyhow::Result<ReleaseCrds> {
    let folder = root.join(CRDS_DIR).join(name);
    if folder.is_dir() {
        let crds = read_folder(&folder)?;
        return Ok(ReleaseCrds {
            release: name.to_owned(),
            crds,
        });
    }
    let archive = root.join(ARCHIVE_PATH);
    let bytes =
        std::fs::read(&archive).with_context(|| format!("cannot read {}", archive.display()))?;
    read_archive_filtered(&bytes, |release| release == name)
        .with_context(|| archive.display().to_string())?
        .pop()
        .with_context(|| format!("no release {name} in {}", archive.display()))
}

/// Reads the zstd-compressed tar of `<release>/<file>.yaml`.
pub fn read_archive(compressed: &[u8]) -> anyhow::Result<Vec<ReleaseCrds>> {
    read_archive_filtered(compressed, |_| true)
}

/// [`read_archive`], parsing only the releases `wanted` picks.
fn read_archive_filtered(
    compressed: &[u8],
    wanted: impl Fn(&str) -> bool,
) -> anyhow::Result<Vec<ReleaseCrds>> {
    let decoder =
        ruzstd::decoding::StreamingDecoder::new(compressed).context("not a zstd stream")?;
    let mut archive = tar::Archive::new(decoder);
    let mut releases: Vec<ReleaseCrds> = Vec::new();
    let entries = archive.entries().context("not a tar")?;
    for entry in entries {
        let mut entry = entry.context("broken tar entry")?;
        if !entry.header().entry_type().is_file() {
            continue;
        }
        let path = entry
            .path()
            .context("bad path in tar")?
            .to_string_lossy()
            .into_owned();
        let Some((release, file)) = path.split_once('/') else {
            bail!("{path}: expected <release>/<file>.yaml");
        };
        if !wanted(release) {
            continue;
        }
        let mut text = String::new();
        entry
            .read_to_string(&mut text)
            .with_context(|| path.to_string())?;
        let crd = parse_crd(&text).with_context(|| path.to_string())?;
        match releases.iter_mut().find(|r| r.release == release) {
            Some(r) => r.crds.push((file.to_owned(), crd)),
            None => releases.push(ReleaseCrds {
                release: release.to_owned(),
                crds: vec![(file.to_owned(), crd)],
            }),
        }
    }
    for release in &mut releases {
        release.crds.sort_by(|a, b| a.0.cmp(&b.0));
    }
    Ok(releases)
}

fn parse_crd(text: &str) -> anyhow::Result<Value> {
    let crd: Value = serde_yaml_ng::from_str(text).context("invalid YAML")?;
    if crd["kind"] != "CustomResourceDefinition" {
        bail!("not a CustomResourceDefinition (kind {})", crd["kind"]);
    }
    Ok(crd)
}

/// Every CRD in the `*.yaml` / `*.yml` files of a folder (not below it), by file name.
pub fn read_folder(dir: &Path) -> anyhow::Result<Vec<(String, Value)>> {
    let entries =
        std::fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "yaml" || x == "yml"))
        .collect();
    files.sort();
    let mut crds = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file)
            .with_context(|| format!("cannot read {}", file.display()))?;
        let name = file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let documents = crd_documents(&text).with_context(|| file.display().to_string())?;
        let several = documents.len() > 1;
        for (i, crd) in documents.into_iter().enumerate() {
            let name = if several {
                format!("{name}#{i}")
            } else {
                name.clone()
            };
            crds.push((name, crd));
        }
    }
    if crds.is_empty() {
        bail!("no CustomResourceDefinition in {}", dir.display());
    }
    Ok(crds)
}

/// The CustomResourceDefinitions among the documents of a multi-document YAML stream.
pub fn crd_documents(text: &str) -> anyhow::Result<Vec<Value>> {
    let mut crds = Vec::new();
    for document in serde_yaml_ng::Deserializer::from_str(text) {
        let value = Value::deserialize(document).context("invalid YAML")?;
        if value["kind"] == "CustomResourceDefinition" {
            crds.push(value);
        }
    }
    Ok(crds)
}

/// The CRDs of a provider package: an `.xpkg` file (a tarball of an image, its layers plain or
/// gzip tarballs), an OCI image layout folder (`index.json`, `blobs/`), or a folder of CRDs.
/// In a package, the CRDs are the CustomResourceDefinition documents of `package.yaml`.
pub fn read_package(path: &Path) -> anyhow::Result<Vec<(String, Value)>> {
    if path.is_dir() && !path.join("blobs").is_dir() {
        return read_folder(path);
    }
    let mut found = None;
    if path.is_dir() {
        for blob in blob_files(&path.join("blobs"))? {
            let bytes =
                std::fs::read(&blob).with_context(|| format!("cannot read {}", blob.display()))?;
            search_layer(&bytes, &mut found, 0)?;
        }
    } else {
        let bytes =
            std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
        search_layer(&bytes, &mut found, 0)?;
    }
    let text =
        found.with_context(|| format!("{}: no package.yaml in any layer", path.display()))?;
    let crds = crd_documents(&text).with_context(|| format!("{}: package.yaml", path.display()))?;
    if crds.is_empty() {
        bail!(
            "{}: package.yaml has no CustomResourceDefinition",
            path.display()
        );
    }
    Ok(crds
        .into_iter()
        .map(|crd| {
            let name = format!(
                "{}_{}.yaml",
                crd["spec"]["group"].as_str().unwrap_or_default(),
                crd["spec"]["names"]["plural"].as_str().unwrap_or_default()
            );
            (name, crd)
        })
        .collect())
}

/// The files `codegen --provider-package` writes for a release: the repository CRDs of the
/// package, one YAML file each, named as the provider's repository names them.
pub fn package_release_files(
    package: &Path,
    release: &str,
) -> anyhow::Result<Vec<(String, String)>> {
    if parse_release(release).is_none() {
        bail!("release {release:?}: write it as the provider tags it, e.g. v0.15.0");
    }
    let mut files = Vec::new();
    for (name, crd) in read_package(package)? {
        let spec = &crd["spec"];
        let group = spec["group"].as_str().unwrap_or_default();
        let plural = spec["names"]["plural"].as_str().unwrap_or_default();
        if is_repository_crd(group, plural) {
            let text = serde_yaml_ng::to_string(&crd).with_context(|| name.to_string())?;
            files.push((format!("{group}_{plural}.yaml"), text));
        }
    }
    if files.is_empty() {
        bail!("{}: no repository CRD in the package", package.display());
    }
    Ok(files)
}

/// Writes the repository CRDs of a provider package to `<root>/crds/<release>/`, where
/// [`releases`] then finds them beside the archive; returns the folder and how many CRDs it
/// holds. A release the repository already has is refused before anything is written.
pub fn import_package(
    root: &Path,
    package: &Path,
    release: &str,
) -> anyhow::Result<(PathBuf, usize)> {
    let files = package_release_files(package, release)?;
    if self::release(root, release).is_ok() {
        bail!(
            "release {release} is already in {CRDS_DIR}/; fix: give the package a release the \
             repository has not got, or remove {CRDS_DIR}/{release}/ to import it again"
        );
    }
    let dir = root.join(CRDS_DIR).join(release);
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    for (name, text) in &files {
        std::fs::write(dir.join(name), text).with_context(|| format!("cannot write {name}"))?;
    }
    Ok((dir, files.len()))
}

fn blob_files(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let entries =
            std::fs::read_dir(&dir).with_context(|| format!("cannot list {}", dir.display()))?;
        for entry in entries.filter_map(Result::ok) {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else {
                files.push(path);
            }
        }
    }
    files.sort();
    Ok(files)
}

/// Looks for `package.yaml` in a tarball, plain or gzip, and in the tarballs inside it (an
/// image tarball holds its layers as tarballs). `depth` bounds the nesting.
fn search_layer(bytes: &[u8], found: &mut Option<String>, depth: usize) -> anyhow::Result<()> {
    if depth > 3 || found.is_some() {
        return Ok(());
    }
    if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut plain = Vec::new();
        flate2::read::GzDecoder::new(bytes)
            .read_to_end(&mut plain)
            .context("broken gzip layer")?;
        return search_layer(&plain, found, depth + 1);
    }
    if !is_tar(bytes) {
        return Ok(());
    }
    let mut archive = tar::Archive::new(bytes);
    let entries = archive.entries().context("broken tarball")?;
    for entry in entries {
        let mut entry = entry.context("broken tarball entry")?;
        if !entry.header().entry_type().is_file() {
            continue;
        }
        let name = entry
            .path()
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut content = Vec::new();
        entry
            .read_to_end(&mut content)
            .with_context(|| name.to_string())?;
        if name == "package.yaml" || name.ends_with("/package.yaml") {
            let text = String::from_utf8(content).map_err(|_| anyhow!("{name}: not UTF-8"))?;
            *found = Some(text);
            return Ok(());
        }
        search_layer(&content, found, depth + 1)?;
    }
    Ok(())
}

/// A POSIX tar: `ustar` at offset 257 of the first header.
fn is_tar(bytes: &[u8]) -> bool {
    bytes.len() >= 512 && &bytes[257..262] == b"ustar"
}

// The CRDs' names that make a repository kind, in each API generation.
const FLAT_GROUP: &str = "artifactory.jfrog.crossplane.io";
const NAMESPACED_GROUP: &str = "artifactory.jfrog.m.crossplane.io";
const RCLASSES: [&str; 4] = ["local", "remote", "virtual", "federated"];
const SUFFIX: &str = "repositories";

/// Whether a CRD (by group and plural) is one of the repository kinds the catalog records.
fn is_repository_crd(group: &str, plural: &str) -> bool {
    class_and_type(group, plural).is_some()
}

/// The API generation, repository class and package type a CRD is for, from its group and
/// plural; `None` for a CRD that is not a repository kind.
///
/// `flat` spells the class in the plural (`localmavenrepositories` in
/// `artifactory.jfrog.crossplane.io`); the later generations put it in the group
/// (`local.artifactory.jfrog.crossplane.io`, namespaced: `local.artifactory.jfrog.m.crossplane.io`).
pub(super) fn class_and_type(group: &str, plural: &str) -> Option<(&'static str, String, String)> {
    let stem = plural.strip_suffix(SUFFIX)?;
    if group == FLAT_GROUP {
        return RCLASSES.iter().find_map(|rc| {
            stem.strip_prefix(rc)
                .filter(|t| !t.is_empty())
                .map(|t| ("flat", rc.to_string(), t.to_string()))
        });
    }
    let (rclass, rest) = group.split_once('.')?;
    let api = match rest {
        FLAT_GROUP => "cluster",
        NAMESPACED_GROUP => "namespaced",
        _ => return None,
    };
    RCLASSES
        .contains(&rclass)
        .then(|| (api, rclass.to_string(), stem.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn releases_sort_by_version() {
        let mut names = vec!["v0.10.0", "v0.9.1", "v0.1.0", "v0.11.3", "custom"];
        names.sort_by(|a, b| compare_releases(a, b));
        assert_eq!(names, ["v0.1.0", "v0.9.1", "v0.10.0", "v0.11.3", "custom"]);
        assert_eq!(parse_release("v1.2"), None);
        assert_eq!(parse_release("v1.2.3.4"), None);
    }

    /// A provider package as `crossplane xpkg build` makes it: `package.yaml` with the
    /// Provider's meta object and its CRDs, in a gzip layer of an image.
    fn package_yaml() -> String {
        let repository_crd = |group: &str, plural: &str, kind: &str| {
            format!(
                "---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: {plural}.{group}\nspec:\n  group: {group}\n  names: {{kind: {kind}, plural: {plural}}}\n  scope: Cluster\n  versions:\n  - name: v1alpha1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema: {{type: object}}\n"
            )
        };
        let mut text = "apiVersion: meta.pkg.crossplane.io/v1\nkind: Provider\nmetadata:\n  name: provider-jfrog-artifactory\n".to_owned();
        text += &repository_crd(
            "local.artifactory.jfrog.crossplane.io",
            "mavenrepositories",
            "MavenRepository",
        );
        text += &repository_crd("artifact.artifactory.jfrog.crossplane.io", "items", "Item");
        text
    }

    fn tar_of(files: &[(&str, &[u8])]) -> Vec<u8> {
        let mut builder = tar::Builder::new(Vec::new());
        for (name, bytes) in files {
            let mut header = tar::Header::new_ustar();
            header.set_size(bytes.len() as u64);
            header.set_mode(0o644);
            header.set_cksum();
            builder.append_data(&mut header, name, *bytes).unwrap();
        }
        builder.into_inner().unwrap()
    }

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        use std::io::Write;
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        encoder.write_all(bytes).unwrap();
        encoder.finish().unwrap()
    }

    fn check_release_files(files: &[(String, String)]) {
        let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
        // The repository CRD only, named as the provider's repository names it.
        assert_eq!(
            names,
            ["local.artifactory.jfrog.crossplane.io_mavenrepositories.yaml"]
        );
        assert!(files[0].1.contains("kind: MavenRepository"));
    }

    #[test]
    fn an_xpkg_tarball_gives_its_repository_crds() {
        let layer = gzip(&tar_of(&[("package.yaml", package_yaml().as_bytes())]));
        let image = tar_of(&[("manifest.json", b"[]"), ("0123abcd.tar.gz", &layer)]);
        let dir = std::env::temp_dir().join(format!("fa-xpkg-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let xpkg = dir.join("provider.xpkg");
        std::fs::write(&xpkg, image).unwrap();
        assert_eq!(read_package(&xpkg).unwrap().len(), 2);
        check_release_files(&package_release_files(&xpkg, "v0.15.0").unwrap());
        let wrong = format!("{:#}", package_release_files(&xpkg, "latest").unwrap_err());
        assert!(wrong.contains("e.g. v0.15.0"), "{wrong}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_oci_layout_gives_its_repository_crds() {
        let dir = std::env::temp_dir().join(format!("fa-oci-{}", std::process::id()));
        let blobs = dir.join("blobs").join("sha256");
        std::fs::create_dir_all(&blobs).unwrap();
        std::fs::write(dir.join("index.json"), "{}").unwrap();
        std::fs::write(blobs.join("aaaa"), "{\"config\": {}}").unwrap();
        let layer = gzip(&tar_of(&[("package.yaml", package_yaml().as_bytes())]));
        std::fs::write(blobs.join("bbbb"), layer).unwrap();
        check_release_files(&package_release_files(&dir, "v0.15.0").unwrap());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_package_without_package_yaml_is_refused() {
        let dir = std::env::temp_dir().join(format!("fa-empty-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let xpkg = dir.join("empty.xpkg");
        std::fs::write(&xpkg, tar_of(&[("manifest.json", b"[]")])).unwrap();
        let error = format!("{:#}", read_package(&xpkg).unwrap_err());
        assert!(error.contains("no package.yaml in any layer"), "{error}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_release_added_as_a_folder_joins_the_catalog() {
        let releases = releases(Path::new(env!("CARGO_MANIFEST_DIR"))).unwrap();
        let mut with_new = releases.clone();
        let mut next = releases.last().unwrap().clone();
        next.release = "v0.15.0".to_owned();
        // The new release renames a kind: the catalog records a new run for it.
        for (_, crd) in next.crds.iter_mut() {
            if crd["spec"]["names"]["kind"] == "GenericRepository"
                && crd["spec"]["group"] == "local.artifactory.jfrog.crossplane.io"
            {
                crd["spec"]["names"]["kind"] = serde_json::json!("GenericV2Repository");
            }
        }
        with_new.push(next);
        let catalog = super::super::catalog::catalog_of(&with_new).unwrap();
        assert!(catalog.contains("\"v0.15.0\"]"));
        assert!(catalog.contains("\"GenericV2Repository\""));
    }

    /// What `codegen --provider-package` does, in a copy of the repository's `crds/`: the
    /// package's CRDs land in the folder `v0.15.0` of `crds/`, the release list gains it after
    /// the archive's, and the catalog generated from that list names its kinds and its release.
    #[test]
    fn an_imported_package_joins_the_releases_and_the_catalog() {
        let root = std::env::temp_dir().join(format!("fa-import-{}", std::process::id()));
        std::fs::create_dir_all(root.join(CRDS_DIR)).unwrap();
        let repository = Path::new(env!("CARGO_MANIFEST_DIR"));
        std::fs::copy(repository.join(ARCHIVE_PATH), root.join(ARCHIVE_PATH)).unwrap();
        // The package of a next release: v0.14.0's local Maven CRD, with a field it lacks.
        let v0_14 = release(repository, "v0.14.0").unwrap();
        let (_, maven) = v0_14
            .crds
            .iter()
            .find(|(name, _)| {
                name == "local.artifactory.jfrog.crossplane.io_mavenrepositories.yaml"
            })
            .unwrap();
        let mut maven = maven.clone();
        let versions = maven["spec"]["versions"].as_array_mut().unwrap();
        for version in versions {
            let for_provider = &mut version["schema"]["openAPIV3Schema"]["properties"]["spec"]
                ["properties"]["forProvider"]["properties"];
            for_provider["fieldOfTheNextRelease"] = serde_json::json!({"type": "string"});
        }
        let package = format!(
            "apiVersion: meta.pkg.crossplane.io/v1\nkind: Provider\nmetadata:\n  name: p\n---\n{}",
            serde_yaml_ng::to_string(&maven).unwrap()
        );
        let layer = gzip(&tar_of(&[("package.yaml", package.as_bytes())]));
        let xpkg = root.join("provider.xpkg");
        std::fs::write(&xpkg, tar_of(&[("0123abcd.tar.gz", &layer)])).unwrap();

        let (dir, count) = import_package(&root, &xpkg, "v0.15.0").unwrap();
        assert_eq!((dir.clone(), count), (root.join("crds").join("v0.15.0"), 1));
        let all = releases(&root).unwrap();
        let newest = all.last().unwrap();
        assert_eq!(newest.release, "v0.15.0");
        assert_eq!(newest.crds.len(), 1);
        assert_eq!(all[all.len() - 2].release, "v0.14.0");
        let catalog = super::super::catalog::catalog_of(&all).unwrap();
        assert!(catalog.contains("\"v0.15.0\""), "the catalog lacks v0.15.0");
        assert!(
            catalog.contains("fieldOfTheNextRelease"),
            "the catalog lacks the new field"
        );

        // Importing it again, or a release the archive has, is refused and writes nothing.
        let again = format!("{:#}", import_package(&root, &xpkg, "v0.15.0").unwrap_err());
        assert!(
            again.contains("release v0.15.0 is already in crds/"),
            "{again}"
        );
        let archived = format!("{:#}", import_package(&root, &xpkg, "v0.14.0").unwrap_err());
        assert!(
            archived.contains("release v0.14.0 is already"),
            "{archived}"
        );
        assert!(!root.join("crds").join("v0.14.0").exists());
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn the_committed_archive_has_every_release() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let releases = releases(root).unwrap();
        let names: Vec<&str> = releases.iter().map(|r| r.release.as_str()).collect();
        assert_eq!(names.first(), Some(&"v0.1.0"));
        assert!(names.len() >= 19, "{names:?}");
        let v0_14 = releases.iter().find(|r| r.release == "v0.14.0").unwrap();
        assert_eq!(v0_14.crds.len(), 278);
    }

    #[test]
    fn class_and_type_for_each_generation() {
        let flat = class_and_type(
            "artifactory.jfrog.crossplane.io",
            "localdockerv2repositories",
        );
        assert_eq!(flat, Some(("flat", "local".into(), "dockerv2".into())));
        let cluster = class_and_type(
            "federated.artifactory.jfrog.crossplane.io",
            "mavenrepositories",
        );
        assert_eq!(
            cluster,
            Some(("cluster", "federated".into(), "maven".into()))
        );
        let namespaced = class_and_type(
            "remote.artifactory.jfrog.m.crossplane.io",
            "npmrepositories",
        );
        assert_eq!(
            namespaced,
            Some(("namespaced", "remote".into(), "npm".into()))
        );
        assert_eq!(
            class_and_type("other.example.io", "mavenrepositories"),
            None
        );
        assert_eq!(
            class_and_type(
                "artifact.artifactory.jfrog.crossplane.io",
                "itemrepositories"
            ),
            None
        );
    }
}
