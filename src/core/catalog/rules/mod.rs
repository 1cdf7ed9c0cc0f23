//! CEL rules (`x-kubernetes-validations`) compiled and evaluated as the API server does, with
//! the API server's limits: a cost counted as cel-go counts it, stopped at `PerCallLimit` for
//! one expression and at `RuntimeCELCostBudget` for all the rules of one object; a bounded
//! nesting depth; and regular expressions (`matches()`, and the schemas' `pattern`) in RE2's
//! syntax and meaning, bounded in size ([`re2`]).
//!
//! [`parse`] parses into the `cel` crate's tree (the crate's ANTLR-generated parser is a fifth
//! of a WebAssembly build); [`eval`] evaluates, because the crate's interpreter neither counts
//! cost nor bounds its recursion: docs/design.md, "CEL rules and their limits", says why and
//! how the two differ from cel-go.

mod cost;
mod eval;
mod nesting;
pub mod parse;
pub mod re2;
pub(crate) mod values;

use cel::common::types::{CelBool, CelString};
use cel::common::value::{CowVal, Val};
use cel::{Env, ExecutionError};
use eval::{Evaluator, Fault, Meter, Node, Scope, Stop};
use serde_json::Value;
use std::fmt;
use std::sync::{Arc, OnceLock};

/// The API server's limit on one expression's cost (`PerCallLimit`, k8s.io/apiserver
/// pkg/apis/cel/config.go: "roughly 0.1 second").
pub const PER_CALL_LIMIT: u64 = 1_000_000;

/// The API server's budget for all the rules of one object (`RuntimeCELCostBudget`).
pub const OBJECT_BUDGET: u64 = 10_000_000;

/// The longest rule compiled, in characters: cel-go's default expression size limit, which the
/// API server keeps.
pub const MAX_RULE_CHARS: usize = 100_000;

/// The deepest expression tree evaluated. cel-go's parser refuses expressions nested deeper
/// than 250 (its default `MaxRecursionDepth`, which the API server keeps; a chain `1+1+…`
/// nests one level a term), and a macro adds a few levels to what it expands: every rule the
/// API server accepts fits. The evaluator needs about 1 KiB of stack a level
/// (`tests/cel_limits.rs` measures it), so the deepest rule fits in 512 KiB: half the stack a
/// WebAssembly module gets by default, a quarter of a tokio blocking thread's.
pub const MAX_DEPTH: usize = 320;

/// The API server's limit on a message expression's result, in bytes.
const MAX_MESSAGE_BYTES: usize = 5 * 1024;

/// The CEL environment of the API server, as far as the `cel` crate has it: the standard
/// library, the strings and lists extensions, and `matches()` through [`re2`]. Built once per
/// process.
fn env() -> &'static Arc<Env> {
    static ENV: OnceLock<Arc<Env>> = OnceLock::new();
    ENV.get_or_init(|| {
        let mut env = Env::stdlib();
        // Each registration is of names the crate leaves free (its `regex` feature is off):
        // none can fail, and a failure would only leave `matches()` undeclared.
        let _ = env.add_extension(cel::extensions::strings);
        let _ = env.add_extension(cel::extensions::lists);
        let _ = env.add_overload(
            "matches",
            "matches",
            vec![
                cel::common::types::STRING_TYPE,
                cel::common::types::STRING_TYPE,
            ],
            matches,
        );
        let _ = env.add_member_overload(
            "matches",
            "string.matches(string)",
            cel::common::types::STRING_TYPE,
            vec![cel::common::types::STRING_TYPE],
            matches,
        );
        Arc::new(env)
    })
}

/// Builds now the CEL environment a live schema's first rule would build: for the WebAssembly
/// component, pre-initialised when it is built (docs/design.md, "The WebAssembly component").
pub fn prepare() {
    env();
}

/// `matches()`, for the crate: the same function as the schemas' `pattern`.
fn matches<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let text = args.first().and_then(|a| a.downcast_ref::<CelString>());
    let pattern = args.get(1).and_then(|a| a.downcast_ref::<CelString>());
    let (Some(text), Some(pattern)) = (text, pattern) else {
        return Err(ExecutionError::function_error(
            "matches",
            "expects two strings",
        ));
    };
    re2::matches(text.inner(), pattern.inner())
        .map(|found| CowVal::owned(CelBool::from(found)))
        .map_err(|error| ExecutionError::function_error("matches", error))
}

/// Why a rule gives no verdict; the text goes into the problem at the rule's field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RuleError {
    /// The rule is not valid CEL.
    #[error("does not compile: {0}")]
    Compile(String),
    /// Transition rules compare with the stored object, which a rendered object has not got.
    #[error("transition rules (oldSelf) are not supported")]
    Transition,
    /// Longer than the API server compiles.
    #[error(
        "is {chars} characters long; the API server compiles rules of at most {MAX_RULE_CHARS}"
    )]
    TooLong {
        /// The rule's length.
        chars: usize,
    },
    /// Nested deeper than we evaluate (and than the API server's parser accepts).
    #[error(
        "nests {depth} levels deep; at most {MAX_DEPTH} are evaluated (the API server's \
         parser refuses expressions nested more than 250 deep)"
    )]
    TooDeep {
        /// The rule's depth.
        depth: usize,
    },
    /// The rule failed as it ran (a missing field, a type mismatch, ...).
    #[error("evaluation failed: {0}")]
    Evaluation(String),
}

/// A compiled rule.
pub struct Rule {
    node: Node,
}

impl fmt::Debug for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Rule")
    }
}

/// Compiles `source`, a rule or message expression, with `self` as its variable.
pub fn compile(source: &str) -> Result<Rule, RuleError> {
    let chars = source.chars().count();
    if chars > MAX_RULE_CHARS {
        return Err(RuleError::TooLong { chars });
    }
    // A long operator chain overflows the parser's stack: refused before it is parsed.
    let estimate = nesting::estimate(source);
    if estimate > MAX_DEPTH {
        return Err(RuleError::TooDeep { depth: estimate });
    }
    let parsed = parse::parse(source).map_err(RuleError::Compile)?;
    let depth = eval::depth(&parsed);
    if depth > MAX_DEPTH {
        eval::dismantle(parsed);
        return Err(RuleError::TooDeep { depth });
    }
    if eval::has_unspecified(&parsed) {
        return Err(RuleError::Compile(
            "an expression the parser could not complete".to_owned(),
        ));
    }
    if mentions(&parsed, "oldSelf") {
        return Err(RuleError::Transition);
    }
    Ok(Rule {
        node: eval::compile(parsed, "self"),
    })
}

/// Whether the identifier `name` appears in the tree.
fn mentions(root: &cel::IdedExpr, name: &str) -> bool {
    use cel::common::ast::Expr;
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        match &node.expr {
            Expr::Ident(n) if n == name => return true,
            Expr::Call(call) => {
                stack.extend(call.target.as_deref());
                stack.extend(&call.args);
            }
            Expr::Comprehension(c) => stack.extend([
                &c.iter_range,
                &c.accu_init,
                &c.loop_cond,
                &c.loop_step,
                &c.result,
            ]),
            Expr::List(list) => stack.extend(&list.elements),
            Expr::Map(map) => {
                for entry in &map.entries {
                    if let cel::common::ast::EntryExpr::MapEntry(e) = &entry.expr {
                        stack.push(&e.key);
                        stack.push(&e.value);
                    }
                }
            }
            Expr::Select(select) => stack.push(&select.operand),
            _ => {}
        }
    }
    false
}

/// What is left of one object's budget, across its rules.
#[derive(Debug)]
pub struct Budget {
    left: u64,
}

impl Budget {
    /// The API server's budget for one object.
    pub fn object() -> Self {
        Budget {
            left: OBJECT_BUDGET,
        }
    }

    /// A budget of `units` (for tests).
    pub fn of(units: u64) -> Self {
        Budget { left: units }
    }

    /// What is left.
    pub fn left(&self) -> u64 {
        self.left
    }
}

/// Why an evaluation gave no value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// A CEL error: the rule fails, the others are evaluated.
    Error(String),
    /// The expression cost more than [`PER_CALL_LIMIT`]: no further rule is evaluated.
    CallLimit,
    /// The object's rules cost more than [`OBJECT_BUDGET`]: no further rule is evaluated.
    Budget,
}

/// What a rule gave.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// A bool: what a rule must give.
    Bool(bool),
    /// A string: what a message expression must give.
    String(String),
    /// Anything else, as the crate shows it.
    Other(String),
}

/// The value `self` is bound to: an object's node typed by its schema, built once for every
/// rule at that node.
pub struct Subject(Box<dyn Val + 'static>);

impl Subject {
    /// `value` as CEL sees JSON without a schema: numbers and names as written.
    pub fn new(value: &Value) -> Self {
        Subject(values::from_json(value))
    }

    /// A value built under its schema (`catalog::openapi`).
    pub(crate) fn typed(value: values::Boxed) -> Self {
        Subject(value)
    }
}

impl Rule {
    /// Evaluates the rule with `self` bound to `subject`, charging `budget`.
    pub fn evaluate(&self, subject: &Subject, budget: &mut Budget) -> Result<Verdict, Failure> {
        let (limit, reached) = if budget.left < PER_CALL_LIMIT {
            (budget.left, Stop::Budget)
        } else {
            (PER_CALL_LIMIT, Stop::CallLimit)
        };
        let mut meter = Meter::new(limit, reached);
        let scope = Scope::root("self", subject.0.as_ref());
        let result = Evaluator {
            env: env(),
            meter: &mut meter,
        }
        .eval(&self.node, &scope);
        budget.left = budget.left.saturating_sub(meter.used());
        match result {
            Ok(value) => Ok(verdict(value.as_ref())),
            Err(Fault::Error(error)) => Err(Failure::Error(
                RuleError::Evaluation(error.to_string()).to_string(),
            )),
            Err(Fault::Stop(Stop::CallLimit)) => Err(Failure::CallLimit),
            Err(Fault::Stop(Stop::Budget)) => {
                budget.left = 0;
                Err(Failure::Budget)
            }
        }
    }

    /// Evaluates a message expression: its string, trimmed, if it is one the API server would
    /// show (non-empty, one line, at most 5 KiB).
    pub fn message(
        &self,
        subject: &Subject,
        budget: &mut Budget,
    ) -> Result<Option<String>, Failure> {
        match self.evaluate(subject, budget) {
            Ok(Verdict::String(message)) => {
                let message = message.trim();
                let shown = !message.is_empty()
                    && message.len() <= MAX_MESSAGE_BYTES
                    && !message.contains('\n');
                Ok(shown.then(|| message.to_owned()))
            }
            Ok(_) | Err(Failure::Error(_)) => Ok(None),
            Err(stop) => Err(stop),
        }
    }
}

fn verdict(value: &dyn Val) -> Verdict {
    if let Some(b) = value.downcast_ref::<CelBool>() {
        return Verdict::Bool(*b.inner());
    }
    // Shown as the crate's value shows itself, unless it is too large to show.
    const SHOWN: u64 = 10_000;
    if values::deep_size(value, SHOWN) > SHOWN {
        return Verdict::Other(format!("a {} too large to show", value.get_type().name()));
    }
    match cel::Value::try_from(value) {
        Ok(cel::Value::String(s)) => Verdict::String(s.to_string()),
        Ok(value) => Verdict::Other(format!("{value:?}")),
        Err(_) => Verdict::Other(value.get_type().name().to_owned()),
    }
}
