//! Compiling a schema: its nodes, with only the keywords checked, and every CEL rule in it.

use super::*;

impl CompiledSchema {
    /// Compiles `schema` (an object's `openAPIV3Schema`) and every CEL rule in it.
    pub fn new(schema: Value) -> CompiledSchema {
        CompiledSchema::compile(&schema)
    }

    /// [`CompiledSchema::new`] of a borrowed schema.
    pub fn compile(schema: &Value) -> CompiledSchema {
        CompiledSchema::compile_with(|compiled| compiled.node(schema))
    }

    /// [`CompiledSchema::new`] of a borrowed schema object, such as a live schema's fields.
    pub fn compile_object(schema: &Map<String, Value>) -> CompiledSchema {
        CompiledSchema::compile_with(|compiled| compiled.object_node(schema))
    }

    fn compile_with(root: impl FnOnce(&mut CompiledSchema) -> NodeId) -> CompiledSchema {
        let mut compiled = CompiledSchema {
            nodes: vec![Node::default()],
            programs: HashMap::new(),
            heap_bytes: 0,
        };
        root(&mut compiled);
        let mut sources = Vec::new();
        for node in &compiled.nodes {
            collect_rules(&node.extra().rules, &mut sources);
        }
        compiled.programs = sources
            .into_iter()
            .map(|source| {
                let program = cel_rules::compile(&source);
                (source, program)
            })
            .collect();
        compiled.heap_bytes = compiled.measure();
        compiled
    }

    /// Compiles one schema object and those below it; its id.
    fn node(&mut self, schema: &Value) -> NodeId {
        match schema.as_object() {
            Some(object) => self.object_node(object),
            None => {
                self.nodes.push(Node::default());
                (self.nodes.len() - 1) as NodeId
            }
        }
    }

    fn object_node(&mut self, object: &Map<String, Value>) -> NodeId {
        let id = self.nodes.len() as NodeId;
        self.nodes.push(Node::default());
        let keyword = |name: &str| object.get(name).unwrap_or(&Value::Null);
        let flag = |name: &str| keyword(name) == &Value::Bool(true);
        let mut node = Node {
            type_: match object.get("type").and_then(Value::as_str) {
                None => Type::Absent,
                Some("string") => Type::String,
                Some("boolean") => Type::Boolean,
                Some("number") => Type::Number,
                Some("integer") => Type::Integer,
                Some("object") => Type::Object,
                Some("array") => Type::Array,
                Some(other) => Type::Unsupported(other.into()),
            },
            nullable: flag("nullable"),
            int_or_string: flag("x-kubernetes-int-or-string"),
            preserve_unknown: flag("x-kubernetes-preserve-unknown-fields"),
            list_type: match keyword("x-kubernetes-list-type").as_str() {
                Some("set") => ListType::Set,
                Some("map") => ListType::Map,
                _ => ListType::Other,
            },
            required: keyword("required")
                .as_array()
                .into_iter()
                .flatten()
                .map(|name| name.as_str().unwrap_or_default().into())
                .collect(),
            ..Node::default()
        };
        let extra = Extra {
            enum_values: keyword("enum").as_array().cloned(),
            min_length: keyword("minLength").as_u64(),
            max_length: keyword("maxLength").as_u64(),
            min_items: keyword("minItems").as_u64(),
            max_items: keyword("maxItems").as_u64(),
            pattern: keyword("pattern").as_str().map(Into::into),
            list_map_keys: keyword("x-kubernetes-list-map-keys")
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(Into::into)
                .collect(),
            default: object.get("default").cloned(),
            rules: keyword("x-kubernetes-validations")
                .as_array()
                .cloned()
                .unwrap_or_default(),
        };
        node.rules_below = !extra.rules.is_empty();
        if let Some(items) = object.get("items") {
            node.items = self.node(items);
            node.rules_below |= self.nodes[node.items as usize].rules_below;
        }
        node.additional = match object.get("additionalProperties") {
            Some(Value::Bool(true)) => Additional::True,
            Some(map_values @ Value::Object(_)) => {
                let values = self.node(map_values);
                node.rules_below |= self.nodes[values as usize].rules_below;
                Additional::Schema(values)
            }
            _ => Additional::No,
        };
        if let Some(properties) = object.get("properties").and_then(Value::as_object) {
            let mut compiled: Vec<(Box<str>, NodeId)> = Vec::with_capacity(properties.len());
            let mut defaulted = Vec::new();
            for (i, (name, property)) in properties.iter().enumerate() {
                let child = self.node(property);
                node.rules_below |= self.nodes[child as usize].rules_below;
                if property.get("default").is_some() {
                    defaulted.push(i as u32);
                }
                compiled.push((name.as_str().into(), child));
            }
            let mut by_length = compiled.clone();
            by_length.sort_unstable_by(|(a, _), (b, _)| (a.len(), a).cmp(&(b.len(), b)));
            node.properties = Some(compiled.into_boxed_slice());
            node.by_length = by_length.into_boxed_slice();
            node.defaulted = defaulted.into_boxed_slice();
        }
        let plain = extra.enum_values.is_none()
            && extra.min_length.is_none()
            && extra.max_length.is_none()
            && extra.min_items.is_none()
            && extra.max_items.is_none()
            && extra.pattern.is_none()
            && extra.list_map_keys.is_empty()
            && extra.default.is_none()
            && extra.rules.is_empty();
        node.extra = (!plain).then(|| Box::new(extra));
        self.nodes[id as usize] = node;
        id
    }

    fn measure(&self) -> usize {
        /// Not measurable from outside the `cel` crate: a compiled rule's expression tree, of
        /// a few hundred bytes for the provider's rules.
        const PROGRAM: usize = 1024;
        let value = |value: &Value| serde_json::to_string(value).map_or(0, |text| 2 * text.len());
        let nodes: usize = self
            .nodes
            .iter()
            .map(|node| {
                let names: usize = node
                    .properties
                    .iter()
                    .flatten()
                    .map(|(n, _)| 2 * (n.len() + 24))
                    .sum();
                let required: usize = node.required.iter().map(|n| n.len() + 16).sum();
                let extra = node.extra.as_deref().map_or(0, |extra| {
                    std::mem::size_of::<Extra>()
                        + extra.enum_values.iter().flatten().map(value).sum::<usize>()
                        + extra.default.as_ref().map_or(0, value)
                        + extra.rules.iter().map(value).sum::<usize>()
                        + extra.pattern.as_ref().map_or(0, |p| p.len())
                });
                std::mem::size_of::<Node>() + names + required + 4 * node.defaulted.len() + extra
            })
            .sum();
        let programs: usize = self
            .programs
            .keys()
            .map(|source| PROGRAM + 2 * source.len())
            .sum();
        nodes + programs
    }
}

/// Every `rule` and `messageExpression` of a node's `x-kubernetes-validations`.
fn collect_rules(rules: &[Value], sources: &mut Vec<String>) {
    for rule in rules {
        for key in ["rule", "messageExpression"] {
            if let Some(source) = rule[key].as_str() {
                sources.push(source.to_owned());
            }
        }
    }
}
