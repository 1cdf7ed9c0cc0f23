//! What a step may ask for and how it is answered: a step's bootstrap answers and those to
//! what it asked for, from the resources offered (the `--required-resources` files and the
//! observed resources, indexed) and the schemas of `--required-schemas`.

use crate::proto::v1::{
    resource_selector, Requirements, Resource, ResourceSelector, Resources, RunFunctionRequest,
    Schema, SchemaSelector,
};
use crate::proto::Struct;
use crate::render::load::{object_at, str_at, Object, Step};
use crate::render::Result;
use anyhow::Error;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap, HashSet};

/// What a step asked for, answered: the resources, the deprecated extra resources and the
/// schemas.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Answers {
    resources: BTreeMap<String, Resources>,
    extra: BTreeMap<String, Resources>,
    schemas: BTreeMap<String, Schema>,
}

impl Answers {
    /// A step's bootstrap requirements (`requirements.requiredResources` and
    /// `requiredSchemas`), answered before its first call; a schema no CRD given serves (or
    /// any, without `--required-schemas`) is answered empty, as `crossplane render` answers it.
    pub(super) fn bootstrap(
        step: &Step,
        pool: &ResourcePool,
        schemas: Option<&SchemaPool>,
    ) -> Answers {
        let empty = SchemaPool::default();
        let schemas = schemas.unwrap_or(&empty);
        Answers {
            resources: step
                .required_resources
                .iter()
                .map(|(name, selector)| (name.clone(), pool.fetch(selector)))
                .collect(),
            extra: BTreeMap::new(),
            schemas: step
                .required_schemas
                .iter()
                .map(|(name, selector)| (name.clone(), schemas.fetch(selector)))
                .collect(),
        }
    }

    /// The bootstrap answers and those to `requirements`, fetched (a name of both: the
    /// fetched answer); schemas from `schemas`, where render advertises them.
    pub(super) fn with(
        &self,
        requirements: &Requirements,
        pool: &ResourcePool,
        schemas: Option<&SchemaPool>,
    ) -> Answers {
        let mut answers = self.clone();
        answers
            .resources
            .extend(pool.fetch_all(&requirements.resources));
        answers.extra = pool.fetch_all(&requirements.extra_resources);
        if let Some(schemas) = schemas {
            answers
                .schemas
                .extend(schemas.fetch_all(&requirements.schemas));
        }
        answers
    }

    pub(super) fn put_in(self, request: &mut RunFunctionRequest) {
        request.required_resources = self.resources;
        request.extra_resources = self.extra;
        request.required_schemas = self.schemas;
    }
}

/// The schemas of `--required-schemas`: each served version of each CRD given, by apiVersion
/// and kind, as the API server would serve its `openAPIV3Schema`.
#[derive(Debug, Clone, Default)]
pub(in crate::render) struct SchemaPool {
    schemas: BTreeMap<(String, String), Object>,
}

impl SchemaPool {
    pub(super) fn new(crds: &[Object]) -> Result<SchemaPool> {
        let mut pool = SchemaPool::default();
        for crd in crds {
            if str_at(crd, &["kind"]) != "CustomResourceDefinition" {
                continue;
            }
            let group = str_at(crd, &["spec", "group"]);
            let kind = str_at(crd, &["spec", "names", "kind"]);
            let versions = object_at(crd, &["spec"])
                .and_then(|spec| spec.get("versions"))
                .and_then(Value::as_array);
            for version in versions.into_iter().flatten() {
                let served = version.get("served") == Some(&Value::Bool(true));
                let schema = version
                    .pointer("/schema/openAPIV3Schema")
                    .and_then(Value::as_object);
                let name = version.get("name").and_then(Value::as_str);
                if let (true, Some(schema), Some(name)) = (served, schema, name) {
                    let key = (format!("{group}/{name}"), kind.to_owned());
                    pool.schemas.insert(key, schema.clone());
                }
            }
        }
        if pool.schemas.is_empty() {
            return Err(Error::msg(
                "cannot load required schemas: no served CustomResourceDefinition version in the files given",
            ));
        }
        Ok(pool)
    }

    /// The answer to each schema requirement: see [`SchemaPool::fetch`].
    fn fetch_all(&self, selectors: &BTreeMap<String, SchemaSelector>) -> BTreeMap<String, Schema> {
        selectors
            .iter()
            .map(|(name, selector)| (name.clone(), self.fetch(selector)))
            .collect()
    }

    /// The schema of a kind, or an empty one for a kind no CRD given serves (as Crossplane
    /// answers for a kind the cluster does not serve).
    fn fetch(&self, selector: &SchemaSelector) -> Schema {
        let key = (selector.api_version.clone(), selector.kind.clone());
        Schema {
            openapi_v3: self.schemas.get(&key).cloned().map(Struct::from),
        }
    }
}

/// The resources offered to requirements: the `--required-resources` (and
/// `--extra-resources`) files, as `crossplane render` offers, and also the
/// observed composed resources, which a cluster would return too. Sorted by
/// name, as Crossplane's `FilteringFetcher` sorts them.
///
/// Indexed by kind, name and label: this function asks for one selector per repository (its
/// key label), and a scan of every resource for each selector made a pipeline of thousands of
/// repositories cost time quadratic in their number.
pub(super) struct ResourcePool {
    resources: Vec<Object>,
    /// Resources of each (apiVersion, kind), in order.
    by_kind: HashMap<(String, String), Vec<usize>>,
    /// Resources of each (apiVersion, kind, name), in order.
    by_name: HashMap<(String, String, String), Vec<usize>>,
    /// Resources of each (apiVersion, kind, label, value), in order.
    by_label: HashMap<(String, String, String, String), Vec<usize>>,
}

impl ResourcePool {
    pub(super) fn new(required: &[Object], observed: &[Object]) -> ResourcePool {
        let mut resources = required.to_vec();
        let mut given: HashSet<[String; 4]> = resources.iter().map(identity).collect();
        for object in observed {
            if given.insert(identity(object)) {
                resources.push(object.clone());
            }
        }
        resources
            .sort_by(|a, b| str_at(a, &["metadata", "name"]).cmp(str_at(b, &["metadata", "name"])));
        ResourcePool::of(resources)
    }

    /// The pool of `resources`, in their order, indexed.
    fn of(resources: Vec<Object>) -> ResourcePool {
        let (mut by_kind, mut by_name, mut by_label) =
            (HashMap::new(), HashMap::new(), HashMap::new());
        for (i, r) in resources.iter().enumerate() {
            let (api_version, kind) = (str_at(r, &["apiVersion"]), str_at(r, &["kind"]));
            let kind_key = (api_version.to_owned(), kind.to_owned());
            by_kind
                .entry(kind_key.clone())
                .or_insert_with(Vec::new)
                .push(i);
            let name = str_at(r, &["metadata", "name"]).to_owned();
            by_name
                .entry((kind_key.0.clone(), kind_key.1.clone(), name))
                .or_insert_with(Vec::new)
                .push(i);
            let labels = object_at(r, &["metadata", "labels"]).into_iter().flatten();
            for (label, value) in labels {
                let Some(value) = value.as_str() else {
                    continue;
                };
                let key = (
                    kind_key.0.clone(),
                    kind_key.1.clone(),
                    label.clone(),
                    value.to_owned(),
                );
                by_label.entry(key).or_insert_with(Vec::new).push(i);
            }
        }
        ResourcePool {
            resources,
            by_kind,
            by_name,
            by_label,
        }
    }

    fn fetch_all(
        &self,
        selectors: &BTreeMap<String, ResourceSelector>,
    ) -> BTreeMap<String, Resources> {
        selectors
            .iter()
            .map(|(name, selector)| (name.clone(), self.fetch(selector)))
            .collect()
    }

    /// The resources a selector picks: the first with the name, or all with
    /// the labels (an empty label set picks every resource of the kind).
    fn fetch(&self, selector: &ResourceSelector) -> Resources {
        let (api_version, kind) = (selector.api_version.clone(), selector.kind.clone());
        let in_namespace = |r: &&Object| {
            selector
                .namespace
                .as_deref()
                .is_none_or(|ns| ns.is_empty() || str_at(r, &["metadata", "namespace"]) == ns)
        };
        let found = |indexes: Option<&Vec<usize>>| -> Vec<&Object> {
            indexes
                .into_iter()
                .flatten()
                .map(|i| &self.resources[*i])
                .filter(in_namespace)
                .collect()
        };
        let picked: Vec<&Object> = match &selector.r#match {
            Some(resource_selector::Match::MatchName(name)) => {
                let mut named = found(self.by_name.get(&(api_version, kind, name.clone())));
                named.truncate(1);
                named
            }
            Some(resource_selector::Match::MatchLabels(labels)) => {
                let candidates = match labels.labels.iter().next() {
                    Some((label, value)) => {
                        found(
                            self.by_label
                                .get(&(api_version, kind, label.clone(), value.clone())),
                        )
                    }
                    None => found(self.by_kind.get(&(api_version, kind))),
                };
                candidates
                    .into_iter()
                    .filter(|r| {
                        labels
                            .labels
                            .iter()
                            .all(|(k, v)| str_at(r, &["metadata", "labels", k]) == v)
                    })
                    .collect()
            }
            None => Vec::new(),
        };
        Resources {
            items: picked.into_iter().map(|r| resource(r.clone())).collect(),
        }
    }
}

/// An object as a request carries it.
pub(super) fn resource(object: Object) -> Resource {
    Resource {
        resource: Some(Struct::from(object)),
        ..Default::default()
    }
}

/// What names an object: apiVersion, kind, namespace and name.
fn identity(object: &Object) -> [String; 4] {
    [
        str_at(object, &["apiVersion"]),
        str_at(object, &["kind"]),
        str_at(object, &["metadata", "namespace"]),
        str_at(object, &["metadata", "name"]),
    ]
    .map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::v1;
    use serde_json::json;

    fn object(value: Value) -> Object {
        value.as_object().cloned().unwrap()
    }

    #[test]
    fn selectors_pick_by_name_or_labels() {
        let cm = |name: &str, team: &str| {
            object(
                json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "labels": {"team": team}}}),
            )
        };
        let pool = ResourcePool::of(vec![cm("a", "x"), cm("b", "y"), cm("c", "x")]);
        let by_name = ResourceSelector {
            api_version: "v1".into(),
            kind: "ConfigMap".into(),
            r#match: Some(resource_selector::Match::MatchName("b".into())),
            ..Default::default()
        };
        assert_eq!(pool.fetch(&by_name).items, vec![resource(cm("b", "y"))]);
        let labels = v1::MatchLabels {
            labels: [("team".to_string(), "x".to_string())].into(),
        };
        let by_labels = ResourceSelector {
            r#match: Some(resource_selector::Match::MatchLabels(labels)),
            ..by_name.clone()
        };
        assert_eq!(
            pool.fetch(&by_labels).items,
            vec![resource(cm("a", "x")), resource(cm("c", "x"))]
        );
        let other_kind = ResourceSelector {
            kind: "Secret".into(),
            ..by_labels
        };
        assert!(pool.fetch(&other_kind).items.is_empty());
    }

    #[test]
    fn schemas_are_answered_from_the_crds_given_and_empty_for_other_kinds() {
        let crd = object(json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "spec": {"group": "example.org", "names": {"kind": "Thing"}, "versions": [
                {"name": "v1", "served": true, "schema": {"openAPIV3Schema": {"type": "object"}}},
                {"name": "v0", "served": false, "schema": {"openAPIV3Schema": {"type": "object"}}},
            ]},
        }));
        let pool = SchemaPool::new(&[crd]).unwrap();
        let wanted = |api_version: &str| SchemaSelector {
            api_version: api_version.into(),
            kind: "Thing".into(),
        };
        let selectors = BTreeMap::from([
            ("served".to_owned(), wanted("example.org/v1")),
            ("not-served".to_owned(), wanted("example.org/v0")),
        ]);
        let answers = pool.fetch_all(&selectors);
        assert_eq!(
            answers["served"].openapi_v3.as_ref().unwrap().fields()["type"],
            "object"
        );
        assert_eq!(answers["not-served"].openapi_v3, None);
        let not_crds = SchemaPool::new(&[object(json!({"kind": "ConfigMap"}))]);
        assert!(not_crds.is_err());
    }
}
