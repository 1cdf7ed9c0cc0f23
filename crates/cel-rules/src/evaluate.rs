//! Our evaluator of compiled rules ([`super::compile`]): the crate's interpreter recurses
//! without a bound and counts nothing, so a rule is compiled into a [`Node`] tree of bounded
//! depth and evaluated here, with every step charged to a [`Meter`] before it runs.
//!
//! What is evaluated here: literals, variables, field selection, `has()`, `&&`, `||`, `?:`,
//! `!`, `==`, `!=`, `in`, indexing, list literals and the comprehensions (the macros), which is
//! all the provider's rules use. Everything else (functions, arithmetic, comparisons, map
//! literals, optionals) is handed to the crate one call at a time ([`Delegated`]): the call
//! with its operands already evaluated, so the crate never recurses, and its result comes back
//! as the crate computed it. Where this module evaluates, it follows the crate's semantics
//! step for step, errors included (a failure takes the crate's path, for its exact error).

use super::compile::{CallCost, Delegated, Fold, Node, Shape};
use super::cost;
use super::values::{self, as_bool};
use cel::common::ast::operators;
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
