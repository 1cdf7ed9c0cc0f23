//! Our evaluator of the `cel` crate's parsed rules: the crate's interpreter recurses without a
//! bound and counts nothing, so a rule is compiled into a [`Node`] tree of bounded depth and
//! evaluated here, with every step charged to a [`Meter`] before it runs.
//!
//! What is evaluated here: literals, variables, field selection, `has()`, `&&`, `||`, `?:`,
//! `!`, `==`, `!=`, `in`, indexing, list literals and the comprehensions (the macros), which is
//! all the provider's rules use. Everything else (functions, arithmetic, comparisons, map
//! literals, optionals) is handed to the crate one call at a time ([`Delegated`]): the call
//! with its operands already evaluated, so the crate never recurses, and its result comes back
//! as the crate computed it. Where this module evaluates, it follows the crate's semantics
//! step for step, errors included (a failure takes the crate's path, for its exact error).

use super::cost;
use super::values::{self, as_bool};
use cel::common::ast::{operators, CallExpr, ComprehensionExpr, EntryExpr, Expr, IdedExpr};
use cel::common::types::{CelBool, CelList, CelMap, CelOptional, CelString};
use cel::common::value::{CowVal, Val};
use cel::context::VariableResolver;
use cel::{Context, Env, ExecutionError};
use std::sync::Arc;

/// A value during evaluation: borrowed from the rule, a variable or a container, or owned.
pub(super) type Cow<'a> = CowVal<'a, 'static>;

/// Why an evaluation stopped early.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Stop {
    /// The expression's own limit (the API server's `PerCallLimit`).
    CallLimit,
    /// What was left of the object's budget (`RuntimeCELCostBudget`).
    Budget,
}

/// An evaluation failure: a CEL error, which `&&`, `||` and `all()`/`exists()` may absorb as
/// CEL says, or a [`Stop`], which nothing absorbs.
#[derive(Debug)]
pub(super) enum Fault {
    Error(ExecutionError),
    Stop(Stop),
}

impl From<ExecutionError> for Fault {
    fn from(error: ExecutionError) -> Self {
        Fault::Error(error)
    }
}

/// Counts cost as cel-go's runtime cost tracker does, and stops once it passes the limit.
pub(super) struct Meter {
    used: u64,
    limit: u64,
    /// Which limit `limit` is, for the message.
    reached: Stop,
}

impl Meter {
    pub(super) fn new(limit: u64, reached: Stop) -> Self {
        Meter {
            used: 0,
            limit,
            reached,
        }
    }

    /// Adds `units`; past the limit, the evaluation stops (cel-go: "actual cost limit
    /// exceeded" once the cost is greater than the limit).
    pub(super) fn charge(&mut self, units: u64) -> Result<(), Fault> {
        self.used = self.used.saturating_add(units);
        if self.used > self.limit {
            return Err(Fault::Stop(self.reached.clone()));
        }
        Ok(())
    }

    pub(super) fn used(&self) -> u64 {
        self.used
    }

    /// What may still be spent: a bound for work whose size is found by walking a value.
    pub(super) fn left(&self) -> u64 {
        self.limit.saturating_sub(self.used)
    }
}

/// The variables in scope: `self` at the root, then each comprehension's accumulator and
/// element. Compiled rules find a variable by how many scopes up it is.
pub(super) struct Scope<'a> {
    name: &'a str,
    value: &'a (dyn Val + 'static),
    parent: Option<&'a Scope<'a>>,
}

impl<'a> Scope<'a> {
    pub(super) fn root(name: &'a str, value: &'a (dyn Val + 'static)) -> Self {
        Scope {
            name,
            value,
            parent: None,
        }
    }

    fn up(&self, hops: usize) -> &'a (dyn Val + 'static) {
        let mut scope = self;
        for _ in 0..hops {
            // Compiled against the same scopes: a variable's hops are always there.
            match scope.parent {
                Some(parent) => scope = parent,
                None => break,
            }
        }
        scope.value
    }

    fn named(&self, name: &str) -> Option<&'a (dyn Val + 'static)> {
        let mut scope = Some(self);
        while let Some(current) = scope {
            if current.name == name {
                return Some(current.value);
            }
            scope = current.parent;
        }
        None
    }
}

/// A compiled expression.
pub(super) enum Node {
    /// A literal: no cost (cel-go's constants).
    Literal(Box<dyn Val + 'static>),
    /// A variable, so many scopes up: one unit.
    Variable(usize),
    /// `operand.field`, or `has(operand.field)`: one unit, none for `has` (the API server
    /// turns presence tests' cost off).
    Select {
        operand: Box<Node>,
        field: CelString<'static>,
        test: bool,
        fallback: Delegated,
    },
    And(Box<[Node; 2]>),
    Or(Box<[Node; 2]>),
    Conditional(Box<[Node; 3]>),
    NotStrictlyFalse(Box<Node>),
    Not(Box<Node>, Delegated),
    Equals(Box<[Node; 2]>, bool),
    In(Box<[Node; 2]>, Delegated),
    Index(Box<[Node; 2]>, Delegated),
    /// A list literal without optional elements: ten units.
    List(Vec<Node>),
    Fold(Box<Fold>),
    /// Anything else: its operands evaluated here, the operation by the crate.
    Call {
        operands: Vec<Node>,
        call: Delegated,
        /// What it costs, by function (see [`cost::call`]), or the base cost of a literal.
        cost: CallCost,
    },
}

/// How a delegated node is charged.
pub(super) enum CallCost {
    Function { name: String, member: bool },
    Fixed(u64),
}

/// A comprehension, the expansion of a macro.
pub(super) struct Fold {
    iter_range: Node,
    accu_init: Node,
    loop_cond: Node,
    loop_step: Node,
    result: Node,
    accu_var: String,
    iter_var: String,
    shape: Shape,
}

/// What a loop step does, as the crate tells it apart.
enum Shape {
    /// `all()`/`exists()`: an error of one element may be absorbed by a later one.
    Fold(bool),
    /// `map()`/`filter()`: appends `[items]` to the result, when `guard` holds.
    Append {
        guard: Option<Box<Node>>,
        items: Box<Node>,
    },
    Other,
}

/// One operation for the crate: the original node with each operand replaced by a variable
/// `$0`, `$1`, ..., bound to the values evaluated here.
pub(super) struct Delegated {
    expr: IdedExpr,
}

impl Delegated {
    fn run(
        &self,
        env: &Arc<Env>,
        operands: &[&(dyn Val + 'static)],
        scope: &Scope<'_>,
    ) -> Result<Cow<'static>, ExecutionError> {
        let bindings = Bindings { operands, scope };
        let mut context = Context::with_env(Arc::clone(env));
        context.set_variable_resolver(&bindings);
        let result = cel::Value::resolve_val(&self.expr, &context)?;
        let value = match result {
            CowVal::Borrowed(value) => values::to_static_ref(value)?,
            CowVal::Owned(value) => values::to_static(value)?,
        };
        Ok(CowVal::Owned(values::shared(value)))
    }
}

/// The operands of a delegated operation, and the variables in scope (a qualified function
/// call such as `lists.range(n)` is handed over as written).
struct Bindings<'r> {
    operands: &'r [&'r (dyn Val + 'static)],
    scope: &'r Scope<'r>,
}

impl VariableResolver for Bindings<'_> {
    fn resolve<'b>(&'b self, name: &str) -> Option<CowVal<'b, 'b>> {
        let value = match name.strip_prefix('$').and_then(|n| n.parse::<usize>().ok()) {
            Some(index) => *self.operands.get(index)?,
            None => self.scope.named(name)?,
        };
        Some(CowVal::Borrowed(value))
    }
}

/// The placeholder of operand `index`.
fn operand(index: usize) -> IdedExpr {
    IdedExpr {
        id: 0,
        expr: Expr::Ident(format!("${index}")),
    }
}

// ---------------------------------------------------------------------------------------
// Compiling
// ---------------------------------------------------------------------------------------

/// The deepest tree evaluated: see `MAX_DEPTH` in the module above.
pub(super) fn depth(root: &IdedExpr) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(root, 1usize)];
    while let Some((node, depth)) = stack.pop() {
        deepest = deepest.max(depth);
        for child in children(node) {
            stack.push((child, depth + 1));
        }
    }
    deepest
}

fn children(node: &IdedExpr) -> Vec<&IdedExpr> {
    match &node.expr {
        Expr::Call(call) => call
            .target
            .as_deref()
            .into_iter()
            .chain(&call.args)
            .collect(),
        Expr::Comprehension(c) => vec![
            &c.iter_range,
            &c.accu_init,
            &c.loop_cond,
            &c.loop_step,
            &c.result,
        ],
        Expr::List(list) => list.elements.iter().collect(),
        Expr::Map(map) => map.entries.iter().flat_map(entry_children).collect(),
        Expr::Struct(s) => s.entries.iter().flat_map(entry_children).collect(),
        Expr::Select(select) => vec![&select.operand],
        Expr::Unspecified | Expr::Ident(_) | Expr::Literal(_) => Vec::new(),
    }
}

fn entry_children(entry: &cel::common::ast::IdedEntryExpr) -> Vec<&IdedExpr> {
    match &entry.expr {
        EntryExpr::MapEntry(e) => vec![&e.key, &e.value],
        EntryExpr::StructField(f) => vec![&f.value],
    }
}

/// Takes a tree apart without recursion: dropping a tree deeper than we evaluate would
/// recurse as deep.
pub(super) fn dismantle(root: IdedExpr) {
    let mut stack = vec![root];
    while let Some(mut node) = stack.pop() {
        match &mut node.expr {
            Expr::Call(call) => {
                stack.extend(call.target.take().map(|t| *t));
                stack.append(&mut call.args);
            }
            Expr::Comprehension(c) => {
                for part in [
                    &mut c.iter_range,
                    &mut c.accu_init,
                    &mut c.loop_cond,
                    &mut c.loop_step,
                    &mut c.result,
                ] {
                    stack.push(std::mem::take(part));
                }
            }
            Expr::List(list) => stack.append(&mut list.elements),
            Expr::Map(map) => {
                for entry in map.entries.drain(..) {
                    if let EntryExpr::MapEntry(e) = entry.expr {
                        stack.push(e.key);
                        stack.push(e.value);
                    }
                }
            }
            Expr::Struct(s) => {
                for entry in s.entries.drain(..) {
                    if let EntryExpr::StructField(f) = entry.expr {
                        stack.push(f.value);
                    }
                }
            }
            Expr::Select(select) => stack.push(std::mem::take(&mut *select.operand)),
            Expr::Unspecified | Expr::Ident(_) | Expr::Literal(_) => {}
        }
    }
}

/// Whether the tree has a node the parser left unspecified (the crate's interpreter panics
/// on one).
pub(super) fn has_unspecified(root: &IdedExpr) -> bool {
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        if matches!(node.expr, Expr::Unspecified) {
            return true;
        }
        stack.extend(children(node));
    }
    false
}

/// Compiles a parsed rule whose depth was checked, with `root` as its only variable.
pub(super) fn compile(expr: IdedExpr, root: &str) -> Node {
    let mut names = vec![root.to_owned()];
    Compiler { names: &mut names }.node(expr)
}

struct Compiler<'n> {
    /// The variables in scope, innermost last.
    names: &'n mut Vec<String>,
}

impl Compiler<'_> {
    fn hops(&self, name: &str) -> Option<usize> {
        let at = self.names.iter().rposition(|n| n == name)?;
        Some(self.names.len() - 1 - at)
    }

    /// Whether `expr` is a name (identifiers and selections) whose root is not a variable:
    /// a namespace like `lists` or a type, which the crate resolves.
    fn is_foreign_name(&self, expr: &IdedExpr) -> bool {
        let mut e = expr;
        loop {
            match &e.expr {
                Expr::Ident(name) => return self.hops(name).is_none(),
                Expr::Select(select) if !select.test => e = &select.operand,
                _ => return false,
            }
        }
    }

    fn node(&mut self, expr: IdedExpr) -> Node {
        let id = expr.id;
        match expr.expr {
            Expr::Literal(literal) => Node::Literal(values::shared(literal.to_val().into_owned())),
            Expr::Ident(name) => match self.hops(&name) {
                Some(hops) => Node::Variable(hops),
                // A type name, or an undeclared one: the crate says which (no cost, as a
                // type is a constant for cel-go).
                None => Node::Call {
                    operands: Vec::new(),
                    call: Delegated {
                        expr: IdedExpr {
                            id,
                            expr: Expr::Ident(name),
                        },
                    },
                    cost: CallCost::Fixed(0),
                },
            },
            Expr::Select(select) => {
                if !select.test && self.is_foreign_name(&select.operand) {
                    let whole = IdedExpr {
                        id,
                        expr: Expr::Select(select),
                    };
                    return self.opaque(whole, 1);
                }
                let fallback = Delegated {
                    expr: IdedExpr {
                        id,
                        expr: Expr::Select(cel::common::ast::SelectExpr {
                            operand: Box::new(operand(0)),
                            field: select.field.clone(),
                            test: select.test,
                        }),
                    },
                };
                Node::Select {
                    operand: Box::new(self.node(*select.operand)),
                    field: CelString::from(select.field),
                    test: select.test,
                    fallback,
                }
            }
            Expr::Call(call) => self.call(id, call),
            Expr::List(list) if list.optional_indices.is_empty() => {
                Node::List(list.elements.into_iter().map(|e| self.node(e)).collect())
            }
            Expr::List(list) => {
                let mut operands = Vec::new();
                let elements = list
                    .elements
                    .into_iter()
                    .map(|element| {
                        operands.push(self.node(element));
                        operand(operands.len() - 1)
                    })
                    .collect();
                let expr = Expr::List(cel::common::ast::ListExpr::new_with_optionals(
                    elements,
                    list.optional_indices,
                ));
                self.delegated(id, expr, operands, CallCost::Fixed(cost::LIST_CREATE))
            }
            Expr::Map(map) => {
                let mut operands = Vec::new();
                let mut entries = Vec::new();
                for entry in map.entries {
                    if let EntryExpr::MapEntry(e) = entry.expr {
                        operands.push(self.node(e.key));
                        let key = operand(operands.len() - 1);
                        operands.push(self.node(e.value));
                        let value = operand(operands.len() - 1);
                        entries.push(cel::common::ast::IdedEntryExpr {
                            id: entry.id,
                            expr: EntryExpr::MapEntry(cel::common::ast::MapEntryExpr {
                                key,
                                value,
                                optional: e.optional,
                            }),
                        });
                    }
                }
                let expr = Expr::Map(cel::common::ast::MapExpr { entries });
                self.delegated(id, expr, operands, CallCost::Fixed(cost::MAP_CREATE))
            }
            // No struct type is declared: the crate fails it before evaluating its fields.
            Expr::Struct(s) => {
                let expr = Expr::Struct(cel::common::ast::StructExpr {
                    type_name: s.type_name,
                    entries: Vec::new(),
                });
                self.delegated(id, expr, Vec::new(), CallCost::Fixed(cost::STRUCT_CREATE))
            }
            Expr::Comprehension(c) => Node::Fold(Box::new(self.fold(*c))),
            // Refused before compiling (`has_unspecified`).
            Expr::Unspecified => Node::Literal(Box::new(cel::common::types::CelNull)),
        }
    }

    /// An expression the crate evaluates whole: a name rooted outside our variables.
    fn opaque(&mut self, expr: IdedExpr, units: u64) -> Node {
        Node::Call {
            operands: Vec::new(),
            call: Delegated { expr },
            cost: CallCost::Fixed(units),
        }
    }

    fn delegated(&mut self, id: u64, expr: Expr, operands: Vec<Node>, cost: CallCost) -> Node {
        Node::Call {
            operands,
            call: Delegated {
                expr: IdedExpr { id, expr },
            },
            cost,
        }
    }

    fn pair(&mut self, mut args: Vec<IdedExpr>) -> Box<[Node; 2]> {
        let b = args.pop().unwrap_or_default();
        let a = args.pop().unwrap_or_default();
        Box::new([self.node(a), self.node(b)])
    }

    fn call(&mut self, id: u64, call: CallExpr) -> Node {
        let CallExpr {
            func_name,
            target,
            args,
        } = call;
        if target.is_none() {
            let native = |name: &str, n: usize| func_name == name && args.len() == n;
            if native(operators::LOGICAL_AND, 2) {
                return Node::And(self.pair(args));
            }
            if native(operators::LOGICAL_OR, 2) {
                return Node::Or(self.pair(args));
            }
            if native(operators::CONDITIONAL, 3) {
                let mut args = args.into_iter();
                let mut next = || self.node(args.next().unwrap_or_default());
                let (c, t, f) = (next(), next(), next());
                return Node::Conditional(Box::new([c, t, f]));
            }
            if native(operators::NOT_STRICTLY_FALSE, 1) {
                let arg = args.into_iter().next().unwrap_or_default();
                return Node::NotStrictlyFalse(Box::new(self.node(arg)));
            }
            if native(operators::EQUALS, 2) || native(operators::NOT_EQUALS, 2) {
                let negated = func_name == operators::NOT_EQUALS;
                return Node::Equals(self.pair(args), negated);
            }
            if native(operators::LOGICAL_NOT, 1)
                || native(operators::IN, 2)
                || native(operators::INDEX, 2)
            {
                let fallback = Delegated {
                    expr: IdedExpr {
                        id,
                        expr: Expr::Call(CallExpr {
                            func_name: func_name.clone(),
                            target: None,
                            args: (0..args.len()).map(operand).collect(),
                        }),
                    },
                };
                if func_name == operators::LOGICAL_NOT {
                    let arg = args.into_iter().next().unwrap_or_default();
                    return Node::Not(Box::new(self.node(arg)), fallback);
                }
                let pair = self.pair(args);
                return if func_name == operators::IN {
                    Node::In(pair, fallback)
                } else {
                    Node::Index(pair, fallback)
                };
            }
        }
        // A function: `f(args)`, `target.f(args)`, or `ns.f(args)` with a namespace.
        let mut operands = Vec::new();
        let mut name = func_name.clone();
        let mut member = false;
        let target = match target {
            Some(target) if self.is_foreign_name(&target) => {
                // `lists.range(n)`: the crate resolves the name (or fails on it).
                if let Some(qualified) = qualified_name(&target) {
                    name = format!("{qualified}.{func_name}");
                }
                member = true;
                Some(target)
            }
            Some(target) => {
                member = true;
                operands.push(self.node(*target));
                Some(Box::new(operand(0)))
            }
            None => None,
        };
        let args = args
            .into_iter()
            .map(|arg| {
                operands.push(self.node(arg));
                operand(operands.len() - 1)
            })
            .collect();
        let expr = Expr::Call(CallExpr {
            func_name,
            target,
            args,
        });
        self.delegated(id, expr, operands, CallCost::Function { name, member })
    }

    fn fold(&mut self, mut c: ComprehensionExpr) -> Fold {
        let shape_fold = logical_fold(&c);
        // map() and filter() on `[]`: their step is compiled once, as its guard and items; it
        // was also compiled whole, which doubled the work at every level of nesting (2^n for a
        // rule of n nested maps). What is taken out is left as defaults in `c.loop_step`.
        let append = match shape_fold {
            None if is_empty_list(&c.accu_init) => take_append_step(&mut c),
            _ => None,
        };
        let iter_range = self.node(c.iter_range);
        let accu_init = self.node(c.accu_init);
        self.names.push(c.accu_var.clone());
        let loop_cond = self.node(c.loop_cond);
        let result = self.node(c.result);
        self.names.push(c.iter_var.clone());
        let (shape, loop_step) = match (shape_fold, append) {
            (Some(absorbing), _) => (Shape::Fold(absorbing), self.node(c.loop_step)),
            (None, Some((guard, items))) => {
                let shape = Shape::Append {
                    guard: guard.map(|g| Box::new(self.node(g))),
                    items: Box::new(self.node(items)),
                };
                // Never evaluated: an `Append` always starts from `[]`.
                (shape, Node::Literal(Box::new(cel::common::types::CelNull)))
            }
            (None, None) => (Shape::Other, self.node(c.loop_step)),
        };
        self.names.pop();
        self.names.pop();
        Fold {
            iter_range,
            accu_init,
            loop_cond,
            loop_step,
            result,
            accu_var: c.accu_var,
            iter_var: c.iter_var,
            shape,
        }
    }
}

/// `a.b.c` as a dotted name.
fn qualified_name(expr: &IdedExpr) -> Option<String> {
    match &expr.expr {
        Expr::Ident(name) => Some(name.clone()),
        Expr::Select(select) if !select.test => Some(format!(
            "{}.{}",
            qualified_name(&select.operand)?,
            select.field
        )),
        _ => None,
    }
}

/// `@result && x` (all: `false` absorbs) or `@result || x` (exists: `true` absorbs).
fn logical_fold(c: &ComprehensionExpr) -> Option<bool> {
    let Expr::Call(call) = &c.loop_step.expr else {
        return None;
    };
    let folds_accu = call.target.is_none()
        && matches!(call.args.first().map(|a| &a.expr), Some(Expr::Ident(n)) if *n == c.accu_var);
    match call.func_name.as_str() {
        operators::LOGICAL_AND if folds_accu => Some(false),
        operators::LOGICAL_OR if folds_accu => Some(true),
        _ => None,
    }
}

/// Whether `expr` is the literal `[]`.
fn is_empty_list(expr: &IdedExpr) -> bool {
    matches!(&expr.expr, Expr::List(list) if list.elements.is_empty())
}

/// The crate's `map`/`filter` step: `@result + [x]`, or `cond ? @result + [x] : @result`,
/// with `@result` as the result and a literal loop condition: whether it has a guard.
fn append_step(c: &ComprehensionExpr) -> Option<bool> {
    let accu = c.accu_var.as_str();
    let is_accu = |e: &IdedExpr| matches!(&e.expr, Expr::Ident(n) if n == accu);
    let appends = |e: &IdedExpr| match &e.expr {
        Expr::Call(call) if call.func_name == operators::ADD && call.target.is_none() => matches!(
            call.args.as_slice(),
            [lhs, rhs] if is_accu(lhs) && matches!(rhs.expr, Expr::List(_))
        ),
        _ => false,
    };
    if !is_accu(&c.result) || !matches!(c.loop_cond.expr, Expr::Literal(_)) {
        return None;
    }
    match &c.loop_step.expr {
        Expr::Call(call) if call.func_name == operators::CONDITIONAL && call.target.is_none() => {
            match call.args.as_slice() {
                [_, step, otherwise] if is_accu(otherwise) && appends(step) => Some(true),
                _ => None,
            }
        }
        _ => appends(&c.loop_step).then_some(false),
    }
}

/// The guard and `[x]` of a `map`/`filter` step ([`append_step`]), taken out of it.
fn take_append_step(c: &mut ComprehensionExpr) -> Option<(Option<IdedExpr>, IdedExpr)> {
    let guarded = append_step(c)?;
    let Expr::Call(call) = &mut c.loop_step.expr else {
        return None;
    };
    let (guard, step) = if guarded {
        let [guard, step, _] = call.args.as_mut_slice() else {
            return None;
        };
        (Some(std::mem::take(guard)), step)
    } else {
        (None, &mut c.loop_step)
    };
    let Expr::Call(add) = &mut step.expr else {
        return None;
    };
    let items = std::mem::take(add.args.get_mut(1)?);
    Some((guard, items))
}

// ---------------------------------------------------------------------------------------
// Evaluating
// ---------------------------------------------------------------------------------------

/// Evaluates compiled rules.
pub(super) struct Evaluator<'m> {
    pub(super) env: &'m Arc<Env>,
    pub(super) meter: &'m mut Meter,
}

/// The crate's `try_bool`.
fn try_bool(value: Result<Cow<'_>, Fault>) -> Result<Result<bool, ExecutionError>, Stop> {
    match value {
        Ok(value) => Ok(
            as_bool(value.as_ref()).ok_or_else(|| ExecutionError::UnexpectedType {
                got: value.get_type().name().to_owned(),
                want: "bool".to_owned(),
            }),
        ),
        Err(Fault::Error(error)) => Ok(Err(error)),
        Err(Fault::Stop(stop)) => Err(stop),
    }
}

fn boolean(value: bool) -> Cow<'static> {
    static TRUE: CelBool = CelBool::TRUE;
    static FALSE: CelBool = CelBool::FALSE;
    CowVal::Borrowed(if value { &TRUE } else { &FALSE })
}

/// The crate's error for `&&`/`||` on a non-bool.
fn boolean_operator_error(
    operator: &str,
    left: Result<bool, ExecutionError>,
    right: &dyn Val,
) -> ExecutionError {
    let right_type = right.get_type().name().to_owned();
    match left {
        Err(ExecutionError::UnexpectedType { got, want }) if want == "bool" => {
            ExecutionError::no_such_overload(operator, vec![got, right_type])
        }
        Err(error) => error,
        Ok(_) => ExecutionError::no_such_overload(operator, vec!["bool".to_owned(), right_type]),
    }
}

impl Evaluator<'_> {
    pub(super) fn eval<'a>(&mut self, node: &'a Node, scope: &Scope<'a>) -> Result<Cow<'a>, Fault> {
        match node {
            Node::Literal(value) => Ok(CowVal::Borrowed(value.as_ref())),
            Node::Variable(hops) => {
                self.meter.charge(1)?;
                Ok(CowVal::Borrowed(scope.up(*hops)))
            }
            Node::Select {
                operand,
                field,
                test,
                fallback,
            } => self.select(operand, field, *test, fallback, scope),
            Node::And(pair) => self.logical(pair, scope, false),
            Node::Or(pair) => self.logical(pair, scope, true),
            Node::Conditional(parts) => {
                let [condition, then, otherwise] = parts.as_ref();
                let condition = try_bool(self.eval(condition, scope)).map_err(Fault::Stop)??;
                self.eval(if condition { then } else { otherwise }, scope)
            }
            Node::NotStrictlyFalse(arg) => {
                let value = try_bool(self.eval(arg, scope)).map_err(Fault::Stop)?;
                self.meter.charge(1)?;
                Ok(boolean(value.unwrap_or(true)))
            }
            Node::Not(arg, fallback) => {
                let value = self.eval(arg, scope)?;
                self.meter.charge(1)?;
                match as_bool(value.as_ref()) {
                    Some(b) => Ok(boolean(!b)),
                    None => Err(self.fail(fallback, &[value.as_ref()], scope)),
                }
            }
            Node::Equals(pair, negated) => {
                let lhs = self.eval(&pair[0], scope)?;
                let rhs = self.eval(&pair[1], scope)?;
                self.meter
                    .charge(self.equality_cost(lhs.as_ref(), rhs.as_ref()))?;
                Ok(boolean(lhs.as_ref().equals(rhs.as_ref()) != *negated))
            }
            Node::In(pair, fallback) => self.contains(pair, fallback, scope),
            Node::Index(pair, fallback) => self.index(pair, fallback, scope),
            Node::List(elements) => self.list(elements, scope),
            Node::Fold(fold) => self.fold(fold, scope),
            Node::Call {
                operands,
                call,
                cost,
            } => self.call(operands, call, cost, scope),
        }
    }

    /// `&&` (`or` false) and `||` (`or` true), absorbing errors as the crate does.
    fn logical<'a>(
        &mut self,
        pair: &'a [Node; 2],
        scope: &Scope<'a>,
        or: bool,
    ) -> Result<Cow<'a>, Fault> {
        let left = try_bool(self.eval(&pair[0], scope)).map_err(Fault::Stop)?;
        if left == Ok(or) {
            return Ok(boolean(or));
        }
        let right_value = self.eval(&pair[1], scope)?;
        let right = as_bool(right_value.as_ref());
        match (left, right) {
            (Ok(l), Some(right)) if l != or => Ok(boolean(right)),
            (Err(_), Some(right)) if right == or => Ok(boolean(or)),
            (left, _) => {
                let operator = if or {
                    operators::LOGICAL_OR
                } else {
                    operators::LOGICAL_AND
                };
                Err(boolean_operator_error(operator, left, right_value.as_ref()).into())
            }
        }
    }

    /// The crate's error for an operation, computed by the crate.
    fn fail(
        &mut self,
        call: &Delegated,
        operands: &[&(dyn Val + 'static)],
        scope: &Scope<'_>,
    ) -> Fault {
        match call.run(self.env, operands, scope) {
            Err(error) => Fault::Error(error),
            // The crate succeeded where we failed: not expected, and reported as such.
            Ok(_) => Fault::Error(ExecutionError::InternalError(
                "evaluation differs from the cel crate's".to_owned(),
            )),
        }
    }

    fn select<'a>(
        &mut self,
        operand: &'a Node,
        field: &'a CelString<'static>,
        test: bool,
        fallback: &Delegated,
        scope: &Scope<'a>,
    ) -> Result<Cow<'a>, Fault> {
        let value = self.eval(operand, scope)?;
        if !test {
            self.meter.charge(1)?;
        }
        if value.downcast_ref::<CelMap>().is_some() {
            if test {
                match value.as_indexer().map(|map| map.get(field).map(|_| ())) {
                    Some(Ok(())) => return Ok(boolean(true)),
                    Some(Err(ExecutionError::NoSuchKey(_))) => return Ok(boolean(false)),
                    _ => {}
                }
            } else if let Some(Ok(found)) = element(&value, field) {
                return Ok(found);
            }
        }
        // Optionals, other types, and failures: as the crate does it.
        Ok(fallback.run(self.env, &[value.as_ref()], scope)?)
    }

    fn contains<'a>(
        &mut self,
        pair: &'a [Node; 2],
        fallback: &Delegated,
        scope: &Scope<'a>,
    ) -> Result<Cow<'a>, Fault> {
        let needle = self.eval(&pair[0], scope)?;
        let haystack = self.eval(&pair[1], scope)?;
        // cel-go: the list's size (its elements are compared), one for a map.
        if let Some(list) = haystack.downcast_ref::<CelList>() {
            let mut units = 0u64;
            for item in list.inner() {
                units = units.saturating_add(self.equality_cost(needle.as_ref(), item.as_ref()));
            }
            self.meter.charge(units.max(list.inner().len() as u64))?;
        } else {
            self.meter.charge(1)?;
        }
        let found = haystack
            .as_container()
            .map(|container| container.contains(needle.as_ref()));
        match found {
            Some(Ok(found)) => Ok(boolean(found)),
            _ => Err(self.fail(fallback, &[needle.as_ref(), haystack.as_ref()], scope)),
        }
    }

    fn index<'a>(
        &mut self,
        pair: &'a [Node; 2],
        fallback: &Delegated,
        scope: &Scope<'a>,
    ) -> Result<Cow<'a>, Fault> {
        let container = self.eval(&pair[0], scope)?;
        // The crate answers an absent optional before it evaluates the index.
        if let Some(optional) = container.downcast_ref::<CelOptional>() {
            if optional.option().is_none() {
                self.meter.charge(1)?;
                return Ok(CowVal::owned(CelOptional::none()));
            }
        }
        let key = self.eval(&pair[1], scope)?;
        self.meter.charge(1)?;
        let plain = container.downcast_ref::<CelList>().is_some()
            || container.downcast_ref::<CelMap>().is_some();
        if plain {
            if let Some(Ok(found)) = element(&container, key.as_ref()) {
                return Ok(found);
            }
        }
        Ok(fallback.run(self.env, &[container.as_ref(), key.as_ref()], scope)?)
    }

    fn list<'a>(&mut self, elements: &'a [Node], scope: &Scope<'a>) -> Result<Cow<'a>, Fault> {
        let mut items = Vec::with_capacity(elements.len());
        for element in elements {
            items.push(self.eval(element, scope)?.into_owned());
        }
        self.meter.charge(cost::LIST_CREATE)?;
        Ok(CowVal::owned(values::Shared::new(CelList::from(items))))
    }

    fn call<'a>(
        &mut self,
        operands: &'a [Node],
        call: &Delegated,
        cost: &CallCost,
        scope: &Scope<'a>,
    ) -> Result<Cow<'a>, Fault> {
        let mut values = Vec::with_capacity(operands.len());
        for operand in operands {
            values.push(self.eval(operand, scope)?);
        }
        let refs: Vec<&(dyn Val + 'static)> = values.iter().map(|v| v.as_ref()).collect();
        let units = match cost {
            CallCost::Fixed(units) => *units,
            CallCost::Function { name, member } => self.function_cost(name, *member, &refs),
        };
        self.meter.charge(units)?;
        Ok(call.run(self.env, &refs, scope)?)
    }

    fn function_cost(&self, name: &str, member: bool, args: &[&(dyn Val + 'static)]) -> u64 {
        let args: Vec<&dyn Val> = args.iter().map(|a| *a as &dyn Val).collect();
        cost::call(name, member, &args, self.meter.left())
    }

    /// cel-go's cost of `==`: the smaller size, a tenth of a unit an entry or character. Two
    /// containers are compared entry by entry down to the leaves: their size is counted that
    /// deep (at most as far as the budget goes), so deep comparisons are paid for.
    fn equality_cost(&self, lhs: &dyn Val, rhs: &dyn Val) -> u64 {
        let deep = |v: &dyn Val| {
            if v.as_iterable().is_some() {
                values::deep_size(v, self.meter.left())
            } else {
                cost::size(v)
            }
        };
        cost::traversal(deep(lhs).min(deep(rhs)))
    }

    fn fold<'a>(&mut self, fold: &'a Fold, scope: &Scope<'a>) -> Result<Cow<'a>, Fault> {
        let accu_init = self.eval(&fold.accu_init, scope)?;
        let range = self.eval(&fold.iter_range, scope)?;
        let Some(iterable) = range.as_iterable() else {
            return Err(ExecutionError::UnexpectedType {
                got: range.get_type().name().to_owned(),
                want: "iterable".to_owned(),
            }
            .into());
        };
        if let Shape::Append { guard, items } = &fold.shape {
            return self.append(fold, guard.as_deref(), items, iterable, scope);
        }
        let mut accu: Box<dyn Val + 'static> = accu_init.into_owned();
        let mut pending: Option<ExecutionError> = None;
        let mut elements = iterable.iter();
        while let Some(element) = elements.next() {
            let accu_scope = Scope {
                name: &fold.accu_var,
                value: accu.as_ref(),
                parent: Some(scope),
            };
            let go_on =
                try_bool(self.eval(&fold.loop_cond, &accu_scope)).map_err(Fault::Stop)??;
            if !go_on {
                break;
            }
            let element_scope = Scope {
                name: &fold.iter_var,
                value: element,
                parent: Some(&accu_scope),
            };
            let step = self.eval(&fold.loop_step, &element_scope);
            let next = match (step, &fold.shape) {
                (Err(Fault::Stop(stop)), _) => return Err(Fault::Stop(stop)),
                (Err(Fault::Error(error)), Shape::Fold(_)) => {
                    pending = Some(error);
                    None
                }
                (Err(Fault::Error(error)), _) => return Err(error.into()),
                (Ok(value), Shape::Fold(absorbing))
                    if pending.is_some() && as_bool(value.as_ref()) != Some(*absorbing) =>
                {
                    None
                }
                (Ok(value), _) => {
                    pending = None;
                    Some(value.into_owned())
                }
            };
            if let Some(next) = next {
                accu = next;
            }
        }
        if let Some(error) = pending {
            return Err(error.into());
        }
        let accu_scope = Scope {
            name: &fold.accu_var,
            value: accu.as_ref(),
            parent: Some(scope),
        };
        let result = self.eval(&fold.result, &accu_scope)?.into_owned();
        Ok(CowVal::Owned(result))
    }

    /// `map()` and `filter()`, appending in place as the crate does, charged as cel-go charges
    /// the step `@result + [x]`: the accumulator (one), the list literal (ten), the addition
    /// (one), and what `x` and the guard cost.
    fn append<'a>(
        &mut self,
        fold: &'a Fold,
        guard: Option<&'a Node>,
        items: &'a Node,
        iterable: &(dyn cel::common::traits::Iterable + 'static),
        scope: &Scope<'a>,
    ) -> Result<Cow<'a>, Fault> {
        let empty = values::Shared::new(CelList::from(Vec::new()));
        let mut result: Vec<Box<dyn Val + 'static>> = Vec::new();
        let mut elements = iterable.iter();
        while let Some(element) = elements.next() {
            let accu_scope = Scope {
                name: &fold.accu_var,
                value: &empty,
                parent: Some(scope),
            };
            let go_on =
                try_bool(self.eval(&fold.loop_cond, &accu_scope)).map_err(Fault::Stop)??;
            if !go_on {
                break;
            }
            let element_scope = Scope {
                name: &fold.iter_var,
                value: element,
                parent: Some(&accu_scope),
            };
            if let Some(guard) = guard {
                let keep = try_bool(self.eval(guard, &element_scope)).map_err(Fault::Stop)??;
                if !keep {
                    self.meter.charge(1)?;
                    continue;
                }
            }
            let appended = self.eval(items, &element_scope)?;
            self.meter.charge(2)?;
            let Some(list) = appended.downcast_ref::<CelList>() else {
                return Err(ExecutionError::UnexpectedType {
                    got: appended.get_type().name().to_owned(),
                    want: "list".to_owned(),
                }
                .into());
            };
            result.extend(list.inner().iter().map(|item| item.clone_as_boxed()));
        }
        Ok(CowVal::owned(values::Shared::new(CelList::from(result))))
    }
}

/// The element at `key` in `container`: borrowed for as long as the container is, copied out
/// of a temporary one (cheap: every value here is).
fn element<'a>(container: &Cow<'a>, key: &dyn Val) -> Option<Result<Cow<'a>, ExecutionError>> {
    match container {
        CowVal::Borrowed(container) => {
            let container: &'a (dyn Val + 'static) = *container;
            container.as_indexer().map(|indexer| indexer.get(key))
        }
        CowVal::Owned(container) => container.as_indexer().map(|indexer| {
            indexer
                .get(key)
                .map(|found| CowVal::Owned(found.into_owned()))
        }),
    }
}
