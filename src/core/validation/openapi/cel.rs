//! The schema's CEL rules (`x-kubernetes-validations`): the objects they see, typed by the
//! schema as the API server types them, and their verdicts and messages.

use super::check::Checker;
use super::*;

impl CompiledSchema {
    /// The compiled `source` (every rule of the schema was compiled with it).
    fn program(&self, source: &str) -> Result<&Rule, RuleError> {
        match self.programs.get(source) {
            Some(program) => program.as_ref().map_err(Clone::clone),
            None => Err(RuleError::Compile("not a rule of this schema".to_owned())),
        }
    }
}

impl<'e> Checker<'e> {
    /// Every `x-kubernetes-validations` rule at or below `value`; subtrees whose schema has
    /// none are not walked.
    pub(super) fn rules(&mut self, value: Instance<'e>, node: &'e Node, path: &Path) {
        if !node.rules_below || value.kind() == Kind::Null || self.stopped {
            return;
        }
        let node_rules = &node.extra().rules;
        if !node_rules.is_empty() {
            // `self` is built once for the rules of this node.
            let subject = to_cel(value, node, self.compiled);
            for rule in node_rules.iter() {
                if self.stopped {
                    return;
                }
                self.rule(rule, &subject, path);
            }
        }
        let compiled = self.compiled;
        match value.kind() {
            Kind::Array => {
                let item_node = compiled.at(node.items);
                for (i, item) in value.items().enumerate() {
                    self.rules(item, item_node, &Path::Index(path, i));
                }
            }
            Kind::Object => {
                for (key, child) in value.members(node, compiled) {
                    if let Some(property) = node.property(key) {
                        self.rules(child, compiled.at(property), &Path::Field(path, key));
                    } else if let Additional::Schema(map_values) = node.additional {
                        self.rules(child, compiled.at(map_values), &Path::Key(path, key));
                    }
                }
            }
            _ => {}
        }
    }

    /// One rule with `self` bound to `subject`. A rule that cannot be compiled or evaluated
    /// is reported, never taken as passed; one over a cost limit ends the object's rules, as
    /// in the API server.
    pub(super) fn rule(&mut self, rule: &Value, subject: &Subject, path: &Path) {
        let Some(source) = rule["rule"].as_str() else {
            return self.error(path, format!("validation without a rule: {rule}"));
        };
        match self.eval(source, subject) {
            Ok(Verdict::Bool(true)) => {}
            Ok(Verdict::Bool(false)) => {
                if let Some(message) = self.rule_message(rule, source, subject, path) {
                    self.error(path, message);
                }
            }
            Ok(Verdict::String(other)) => self.error(
                path,
                format!(
                    "rule {} gave String({other:?}), not a bool",
                    shown_rule(source)
                ),
            ),
            Ok(Verdict::Other(other)) => self.error(
                path,
                format!("rule {} gave {other}, not a bool", shown_rule(source)),
            ),
            Err(Failure::Error(e)) => self.error(path, format!("rule {}: {e}", shown_rule(source))),
            Err(Failure::CallLimit) => {
                self.stopped = true;
                self.error(
                    path,
                    format!(
                        "rule {}: operation cancelled: actual cost limit exceeded: no further \
                         validation rules will be run due to call cost exceeds limit for rule \
                         (it costs more than {} units, the API server's PerCallLimit)",
                        shown_rule(source),
                        cel_rules::PER_CALL_LIMIT
                    ),
                );
            }
            Err(Failure::Budget) => self.out_of_budget(path),
        }
    }

    /// The message of a failed rule: `messageExpression` if it gives a string, else
    /// `message`, else the rule itself (as the API server does). `None` when evaluating the
    /// message expression went over a cost limit (reported instead).
    fn rule_message(
        &mut self,
        rule: &Value,
        source: &str,
        subject: &Subject,
        path: &Path,
    ) -> Option<String> {
        if let Some(expression) = rule["messageExpression"].as_str() {
            match self.message(expression, subject) {
                Ok(Some(message)) => return Some(message),
                Ok(None) => {}
                Err(Failure::CallLimit) => {
                    self.stopped = true;
                    self.error(
                        path,
                        format!(
                            "no further validation rules will be run due to call cost exceeds \
                             limit for messageExpression: {}",
                            shown_rule(expression)
                        ),
                    );
                    return None;
                }
                Err(_) => {
                    self.stopped = true;
                    self.error(
                        path,
                        "messageExpression evaluation failed due to running out of cost \
                         budget, no further validation rules will be run",
                    );
                    return None;
                }
            }
        }
        Some(match rule["message"].as_str() {
            Some(message) => message.to_string(),
            None => failed_rule(source),
        })
    }

    /// Runs the compiled `source` with `self` bound to `subject`.
    fn eval(&mut self, source: &str, subject: &Subject) -> Result<Verdict, Failure> {
        let program = self
            .compiled
            .program(source)
            .map_err(|e| Failure::Error(e.to_string()))?;
        program.evaluate(subject, &mut self.budget)
    }

    fn message(&mut self, source: &str, subject: &Subject) -> Result<Option<String>, Failure> {
        match self.compiled.program(source) {
            Ok(program) => program.message(subject, &mut self.budget),
            Err(_) => Ok(None),
        }
    }
}

// ---------------------------------------------------------------------------------------
// JSON to CEL, typed by the schema as the API server does
// ---------------------------------------------------------------------------------------

/// `value` as CEL sees it, defaults in place: `number` fields are doubles even when written as
/// integers, properties are escaped (`namespace` is `__namespace__`, `a-b` is `a__dash__b`)
/// and unknown fields are absent because the server would have pruned them.
fn to_cel(value: Instance, node: &Node, schema: &CompiledSchema) -> Subject {
    match value.kind() {
        Kind::Null => Subject::null(),
        Kind::Bool => Subject::boolean(value.as_bool() == Some(true)),
        Kind::Number => match value.as_number() {
            Some(n) => Subject::number(&n, node.type_ == Type::Number),
            None => Subject::null(),
        },
        Kind::String => Subject::string(value.as_str().unwrap_or_default()),
        Kind::Array => {
            let item_node = schema.at(node.items);
            Subject::list(value.items().map(|item| to_cel(item, item_node, schema)))
        }
        Kind::Object => object_to_cel(value, node, schema),
    }
}

fn object_to_cel(value: Instance, node: &Node, schema: &CompiledSchema) -> Subject {
    let keep_unknown = node.properties.is_none() || node.allows_unknown();
    let members = value.members(node, schema).filter_map(|(key, child)| {
        let declared = node.property(key).is_some();
        if !declared && !keep_unknown {
            return None;
        }
        let child_node = schema.at(node.child(key).unwrap_or(EMPTY));
        // Only declared properties are escaped; map keys are looked up as written.
        Some((key, declared, to_cel(child, child_node, schema)))
    });
    Subject::object(members)
}
