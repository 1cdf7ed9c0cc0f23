//! Rules compiled for our evaluator ([`super::evaluate`]): the `cel` crate's parsed tree
//! measured (its depth, its unspecified nodes), taken apart without recursion when it is
//! refused, and turned into a [`Node`] tree in which each node knows how it is charged and each
//! variable is found by how many scopes up it is.
//!
//! What [`super::evaluate`] evaluates itself gets a node of its own; anything else (functions,
//! arithmetic, comparisons, map literals, optionals) becomes a [`Delegated`] operation: the
//! original node with each operand replaced by a placeholder variable, handed to the crate
//! once its operands are evaluated.

use super::cost;
use super::values;
use cel::common::ast::{operators, CallExpr, ComprehensionExpr, EntryExpr, Expr, IdedExpr};
use cel::common::types::CelString;
use cel::common::value::Val;

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
    pub(super) iter_range: Node,
    pub(super) accu_init: Node,
    pub(super) loop_cond: Node,
    pub(super) loop_step: Node,
    pub(super) result: Node,
    pub(super) accu_var: String,
    pub(super) iter_var: String,
    pub(super) shape: Shape,
}

/// What a loop step does, as the crate tells it apart.
pub(super) enum Shape {
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
    pub(super) expr: IdedExpr,
}

/// The placeholder of operand `index`.
fn operand(index: usize) -> IdedExpr {
    IdedExpr {
        id: 0,
        expr: Expr::Ident(format!("${index}")),
    }
}

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
