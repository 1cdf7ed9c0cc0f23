//! The kind catalog, extracted from the provider CRDs of every release (`crds/`).
//!
//! For each provider release, API generation (`flat`, `cluster`, `namespaced`) and
//! repository CRD it records: the repository class and package type the CRD is for, its
//! apiVersion and kind as the CRD spells them, its scope, the schema of
//! `spec` (descriptions dropped; identical sub-schemas stored once), and the
//! fields its CEL rules require while the resource is managed. A CRD whose kind name changes
//! from one release to the next (same group and plural) is recorded as a rename, with its
//! old and new names and the release of the new one. The core reads
//! this file at run time, so the function never needs the CRDs themselves.
//!
//! The generator is strict: a schema keyword or a CEL rule it does not know
//! fails the generation instead of being dropped, so a new provider release
//! cannot change the rules behind our back.

use super::GeneratedFile;
use anyhow::{bail, Context as _};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Where the generated catalog lives in the repository.
pub(super) const CATALOG_PATH: &str = "src/core/catalog/catalog.json";

/// `spec` fields the function never renders; leaving them out keeps the catalog small.
const UNRENDERED_SPEC_FIELDS: [&str; 3] = [
    "initProvider",
    "writeConnectionSecretToRef",
    "publishConnectionDetailsTo",
];
/// Schema keywords the catalog keeps; `description` is dropped; anything else is an error.
const KEPT_KEYWORDS: [&str; 9] = [
    "type",
    "properties",
    "items",
    "required",
    "default",
    "enum",
    "additionalProperties",
    "x-kubernetes-list-type",
    "x-kubernetes-validations",
];

/// Generates the catalog from the provider CRDs in the repository (see [`super::crds`]).
///
/// A kind is recorded once for the run of consecutive releases in which it is the same
/// (same kind name, apiVersion, schema and rules), with the first and last release of the
/// run: the 19 releases since v0.1.0 then take about 700 records, not 19 copies of 300.
pub(super) fn generate(root: &Path) -> anyhow::Result<Vec<GeneratedFile>> {
    let releases = super::crds::releases(root)?;
    Ok(vec![GeneratedFile {
        path: PathBuf::from(CATALOG_PATH),
        contents: catalog_of(&releases)?,
    }])
}

/// The catalog text for `releases` (oldest first).
pub(super) fn catalog_of(releases: &[super::crds::ReleaseCrds]) -> anyhow::Result<String> {
    let mut nodes = NodeTable::default();
    // (api, rclass, packageType) -> index in `kinds` of the record of the last release seen.
    let mut open: BTreeMap<(String, String, String), (usize, usize)> = BTreeMap::new();
    let mut kinds: Vec<Value> = Vec::new();
    // (api, rclass, packageType), which is the CRD's group and plural, -> its kind name in
    // the last release seen: a CRD whose kind name changes was renamed.
    let mut kind_names: BTreeMap<(String, String, String), String> = BTreeMap::new();
    let mut renames: Vec<Value> = Vec::new();
    let names: Vec<&str> = releases.iter().map(|r| r.release.as_str()).collect();
    for (r, release) in releases.iter().enumerate() {
        for (file, crd) in &release.crds {
            let where_ = format!("{}/{file}", release.release);
            let Some(mut kind) = extract_kind(crd, &where_, &mut nodes)? else {
                continue;
            };
            let key = (
                kind["api"].as_str().unwrap_or_default().to_owned(),
                kind["rclass"].as_str().unwrap_or_default().to_owned(),
                kind["packageType"].as_str().unwrap_or_default().to_owned(),
            );
            let name = kind["kind"].as_str().unwrap_or_default().to_owned();
            if let Some(old) = kind_names.insert(key.clone(), name.clone()) {
                if old != name {
                    renames.push(rename_of(crd, &old, &name, &release.release));
                }
            }
            match open.get(&key) {
                Some(&(i, last)) if last + 1 == r && same_kind(&kinds[i], &kind) => {
                    kinds[i]["releases"][1] = json!(release.release);
                    open.insert(key, (i, r));
                }
                _ => {
                    kind["releases"] = json!([release.release, release.release]);
                    kinds.push(kind);
                    open.insert(key, (kinds.len() - 1, r));
                }
            }
        }
    }
    let order = |kind: &Value| {
        let first = kind["releases"][0].as_str().unwrap_or_default();
        (sort_key(kind), names.iter().position(|n| *n == first))
    };
    kinds.sort_by_key(order);
    renames.sort_by_key(|r| (r[0].to_string(), r[1].to_string()));
    render(&names, &nodes.nodes, &kinds, &renames)
}

/// A renamed CRD: `[group, plural, old kind, new kind, first release of the new kind]`. The
/// group and plural stay, so the API server serves the objects made under the old name as the
/// new kind: the provider's new controller reconciles them.
fn rename_of(crd: &Value, old: &str, new: &str, release: &str) -> Value {
    let spec = &crd["spec"];
    json!([spec["group"], spec["names"]["plural"], old, new, release])
}

/// Two records of one kind in two releases are the same but for the releases.
fn same_kind(a: &Value, b: &Value) -> bool {
    let without_releases = |v: &Value| {
        let mut v = v.clone();
        if let Some(o) = v.as_object_mut() {
            o.remove("releases");
        }
        v
    };
    without_releases(a) == without_releases(b)
}

fn sort_key(kind: &Value) -> (String, String, String) {
    let text = |k: &str| kind[k].as_str().unwrap_or_default().to_owned();
    (text("api"), text("rclass"), text("packageType"))
}

/// The catalog record of one CRD, or `None` for a CRD that is not a repository kind.
fn extract_kind(crd: &Value, where_: &str, nodes: &mut NodeTable) -> anyhow::Result<Option<Value>> {
    let spec = &crd["spec"];
    let group = spec["group"]
        .as_str()
        .with_context(|| format!("{where_}: no spec.group"))?;
    let plural = spec["names"]["plural"]
        .as_str()
        .with_context(|| format!("{where_}: no plural"))?;
    let kind = spec["names"]["kind"]
        .as_str()
        .with_context(|| format!("{where_}: no kind"))?;
    let Some((api, rclass, package_type)) = super::crds::class_and_type(group, plural) else {
        return Ok(None);
    };
    let version = served_version(spec).with_context(|| format!("{where_}: no served version"))?;
    let resource_spec = &version["schema"]["openAPIV3Schema"]["properties"]["spec"];
    let required_when_managed =
        required_when_managed(resource_spec).with_context(|| where_.to_string())?;
    let spec_node = nodes
        .intern_spec(resource_spec)
        .with_context(|| where_.to_string())?;
    Ok(Some(json!({
        "api": api,
        "rclass": rclass,
        "packageType": package_type,
        "apiVersion": format!("{group}/{}", version["name"].as_str().unwrap_or_default()),
        "kind": kind,
        "namespaced": spec["scope"] == "Namespaced",
        "spec": spec_node,
        "requiredWhenManaged": required_when_managed,
    })))
}

fn served_version(spec: &Value) -> Option<&Value> {
    let versions = spec["versions"].as_array()?;
    let served: Vec<&Value> = versions.iter().filter(|v| v["served"] == true).collect();
    served
        .iter()
        .find(|v| v["storage"] == true)
        .or(served.first())
        .copied()
}

/// The `forProvider` fields that the CRD's CEL rules require while managed.
///
/// Every rule of these CRDs has one shape: unless the management policies
/// allow neither creating nor updating, `forProvider.X` (or `initProvider.X`)
/// must be set. Any other rule is an error, so it cannot be missed.
fn required_when_managed(spec: &Value) -> anyhow::Result<Vec<String>> {
    let rules = spec["x-kubernetes-validations"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    rules
        .iter()
        .map(|rule| {
            let text = rule["rule"].as_str().unwrap_or_default();
            parse_required_rule(text).with_context(|| format!("unknown CEL rule shape: {text}"))
        })
        .collect()
}

fn parse_required_rule(rule: &str) -> Option<String> {
    const GUARD: &str = "!('*' in self.managementPolicies || 'Create' in self.managementPolicies || 'Update' in self.managementPolicies) || has(self.forProvider.";
    let rest = rule.strip_prefix(GUARD)?;
    let (field, rest) = rest.split_once(')')?;
    let expected = format!(" || (has(self.initProvider) && has(self.initProvider.{field}))");
    (rest == expected && field.chars().all(|c| c.is_ascii_alphanumeric()))
        .then(|| field.to_string())
}

/// Schema nodes, each stored once; children come before their parents.
#[derive(Default)]
struct NodeTable {
    nodes: Vec<Value>,
    ids: BTreeMap<String, usize>,
}

impl NodeTable {
    fn intern_spec(&mut self, spec: &Value) -> anyhow::Result<usize> {
        let mut spec = spec.clone();
        if let Some(props) = spec.get_mut("properties").and_then(Value::as_object_mut) {
            for field in UNRENDERED_SPEC_FIELDS {
                props.remove(field);
            }
        }
        // The CEL rules are kept as `requiredWhenManaged`, in a form the core can apply.
        if let Some(object) = spec.as_object_mut() {
            object.remove("x-kubernetes-validations");
        }
        self.intern(&spec, "spec")
    }

    fn intern(&mut self, schema: &Value, path: &str) -> anyhow::Result<usize> {
        let object = schema
            .as_object()
            .with_context(|| format!("{path}: schema is not an object"))?;
        let mut node = Map::new();
        for (keyword, value) in object {
            let kept = match keyword.as_str() {
                "description" => continue,
                "properties" => Value::Object(self.intern_properties(value, path)?),
                "items" | "additionalProperties" if value.is_object() => {
                    json!(self.intern(value, &format!("{path}.{keyword}"))?)
                }
                "x-kubernetes-validations" => {
                    bail!("{path}: CEL rules below spec are not supported")
                }
                k if KEPT_KEYWORDS.contains(&k) => value.clone(),
                other => bail!("{path}: unknown schema keyword {other}"),
            };
            node.insert(keyword.clone(), kept);
        }
        let node = Value::Object(node);
        let canonical = node.to_string();
        if let Some(id) = self.ids.get(&canonical) {
            return Ok(*id);
        }
        self.nodes.push(node);
        self.ids.insert(canonical, self.nodes.len() - 1);
        Ok(self.nodes.len() - 1)
    }

    fn intern_properties(
        &mut self,
        properties: &Value,
        path: &str,
    ) -> anyhow::Result<Map<String, Value>> {
        let properties = properties
            .as_object()
            .with_context(|| format!("{path}: properties is not an object"))?;
        properties
            .iter()
            .map(|(name, schema)| {
                Ok((
                    name.clone(),
                    json!(self.intern(schema, &format!("{path}.{name}"))?),
                ))
            })
            .collect()
    }
}

/// One node or kind per line: small diffs when the provider changes.
/// The catalog's text: compact, and read by the core in two steps (`core::catalog`). The
/// renames come first, one a line as `[group, plural, old kind, new kind, release]`. Every
/// name (property, required field, package type, apiVersion, kind) is written once, in
/// `names`, and referred to by its index; a kind is one array, `[api, rclass, packageType,
/// apiVersion, kind, namespaced, spec, requiredWhenManaged, first release, last release]`; a
/// node keeps its schema keywords, with `properties` as a flat list of name and node indexes
/// and `required` as name indexes. One kind or node a line, so a diff shows what changed. The
/// names take a quarter of what they took when each node spelled them (205 kB before).
fn render(
    releases: &[&str],
    nodes: &[Value],
    kinds: &[Value],
    renames: &[Value],
) -> anyhow::Result<String> {
    let names = Names::of(nodes, kinds);
    let nodes: Vec<Value> = nodes
        .iter()
        .map(|node| compact_node(node, &names))
        .collect::<anyhow::Result<_>>()?;
    let kinds: Vec<Value> = kinds
        .iter()
        .map(|kind| compact_kind(kind, releases, &names))
        .collect::<anyhow::Result<_>>()?;
    let lines = |items: &[Value]| {
        items
            .iter()
            .map(|v| format!("  {v}"))
            .collect::<Vec<_>>()
            .join(",\n")
    };
    Ok(format!(
        "{{\n\"generatedBy\": \"cargo run --features codegen --bin codegen (from crds/)\",\n\"releases\": {},\n\"renames\": [\n{}\n],\n\"names\": [\n{}\n],\n\"kinds\": [\n{}\n],\n\"nodes\": [\n{}\n]\n}}\n",
        json!(releases),
        lines(renames),
        names
            .sorted
            .chunks(8)
            .map(|chunk| format!("  {}", json!(chunk).to_string().trim_matches(['[', ']'])))
            .collect::<Vec<_>>()
            .join(",\n"),
        lines(&kinds),
        lines(&nodes)
    ))
}

/// Every name of the catalog, sorted, and each one's index.
struct Names {
    sorted: Vec<String>,
    index: BTreeMap<String, usize>,
}

impl Names {
    fn of(nodes: &[Value], kinds: &[Value]) -> Names {
        let mut all = std::collections::BTreeSet::new();
        let strings = |value: &Value| -> Vec<String> {
            value
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        };
        for node in nodes {
            if let Some(properties) = node["properties"].as_object() {
                all.extend(properties.keys().cloned());
            }
            all.extend(strings(&node["required"]));
        }
        for kind in kinds {
            for field in ["packageType", "apiVersion", "kind"] {
                all.extend(kind[field].as_str().map(str::to_owned));
            }
            all.extend(strings(&kind["requiredWhenManaged"]));
        }
        let sorted: Vec<String> = all.into_iter().collect();
        let index = sorted
            .iter()
            .enumerate()
            .map(|(i, n)| (n.clone(), i))
            .collect();
        Names { sorted, index }
    }

    fn of_name(&self, name: &Value) -> anyhow::Result<Value> {
        let name = name.as_str().context("a name that is not a string")?;
        Ok(json!(self.index[name]))
    }

    fn of_names(&self, names: &Value) -> anyhow::Result<Value> {
        let names = names
            .as_array()
            .context("a list of names that is not a list")?;
        names.iter().map(|n| self.of_name(n)).collect()
    }
}

/// A node with its names as indexes.
fn compact_node(node: &Value, names: &Names) -> anyhow::Result<Value> {
    let mut node = node
        .as_object()
        .context("a node that is not an object")?
        .clone();
    if let Some(properties) = node.get("properties").and_then(Value::as_object) {
        let mut flat = Vec::new();
        for (name, id) in properties {
            flat.push(json!(names.index[name]));
            flat.push(id.clone());
        }
        node.insert("properties".to_owned(), Value::Array(flat));
    }
    if let Some(required) = node.get("required") {
        let required = names.of_names(required)?;
        node.insert("required".to_owned(), required);
    }
    Ok(Value::Object(node))
}

/// A kind as one array.
fn compact_kind(kind: &Value, releases: &[&str], names: &Names) -> anyhow::Result<Value> {
    let release = |i: usize| {
        let name = kind["releases"][i]
            .as_str()
            .context("a kind without its releases")?;
        releases
            .iter()
            .position(|r| *r == name)
            .with_context(|| format!("{name} is not a release of the catalog"))
    };
    Ok(json!([
        kind["api"],
        kind["rclass"],
        names.of_name(&kind["packageType"])?,
        names.of_name(&kind["apiVersion"])?,
        names.of_name(&kind["kind"])?,
        kind["namespaced"],
        kind["spec"],
        names.of_names(&kind["requiredWhenManaged"])?,
        release(0)?,
        release(1)?,
    ]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_the_required_field_rule() {
        let rule = "!('*' in self.managementPolicies || 'Create' in self.managementPolicies || 'Update' in self.managementPolicies) || has(self.forProvider.url) || (has(self.initProvider) && has(self.initProvider.url))";
        assert_eq!(parse_required_rule(rule).as_deref(), Some("url"));
        assert_eq!(parse_required_rule("self.x == 1"), None);
        let mismatched = rule.replace("initProvider.url", "initProvider.member");
        assert_eq!(parse_required_rule(&mismatched), None);
    }
}
