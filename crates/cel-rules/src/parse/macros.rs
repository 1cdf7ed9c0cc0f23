//! The macros of the API server's CEL environment, expanded as they are parsed into the trees
//! cel-go (and the `cel` crate) build for them: `has(a.b)`, and on a target `all`, `exists`,
//! `exists_one` (`existsOne`), `map` (two or three arguments), `filter`, and the lists
//! extension's `sortBy`.

use super::Ids;
use cel::common::ast::{
    operators, CallExpr, ComprehensionExpr, Expr, IdedExpr, ListExpr, LiteralValue,
};

/// The accumulator the comprehensions name.
const RESULT: &str = "@result";
/// The variable `sortBy` binds its list to.
const SORT_BY_INPUT: &str = "@__sortBy_input__";
/// The overload `sortBy` sorts with.
const SORT_BY_KEYS: &str = "@sortByAssociatedKeys";

/// Whether the call `name(args)` (on a target when `receiver`) is a macro.
pub(super) fn is_macro(name: &str, receiver: bool, args: usize) -> bool {
    match (receiver, name) {
        (false, operators::HAS) => args == 1,
        (true, "all" | "exists" | "exists_one" | "existsOne" | "filter" | "sortBy") => args == 2,
        (true, "map") => args == 2 || args == 3,
        _ => false,
    }
}

/// The expansion of a call [`is_macro`] accepted; the error names what is wrong with it.
pub(super) fn expand(
    ids: &mut Ids,
    name: &str,
    target: Option<IdedExpr>,
    mut args: Vec<IdedExpr>,
) -> Result<IdedExpr, &'static str> {
    let Some(target) = target else {
        return has(ids, args.remove(0));
    };
    match name {
        "all" => quantifier(ids, target, args, true),
        "exists" => quantifier(ids, target, args, false),
        "exists_one" | "existsOne" => exists_one(ids, target, args),
        "map" => map(ids, target, args),
        "filter" => filter(ids, target, args),
        _ => sort_by(ids, target, args),
    }
}

fn has(ids: &mut Ids, arg: IdedExpr) -> Result<IdedExpr, &'static str> {
    match arg.expr {
        Expr::Select(mut select) => {
            select.test = true;
            Ok(ids.node(Expr::Select(select)))
        }
        _ => Err("has() takes a field selection, such as has(self.field)"),
    }
}

fn variable(arg: IdedExpr) -> Result<String, &'static str> {
    match arg.expr {
        Expr::Ident(name) => Ok(name),
        _ => Err("a macro's variable must be a simple name"),
    }
}

fn call(ids: &mut Ids, function: &str, args: Vec<IdedExpr>) -> IdedExpr {
    ids.node(Expr::Call(CallExpr {
        func_name: function.to_owned(),
        target: None,
        args,
    }))
}

fn result(ids: &mut Ids) -> IdedExpr {
    ids.node(Expr::Ident(RESULT.to_owned()))
}

fn literal(ids: &mut Ids, value: LiteralValue) -> IdedExpr {
    ids.node(Expr::Literal(value))
}

/// The comprehension over `range` with `variable`, accumulating into [`RESULT`].
fn fold(ids: &mut Ids, range: IdedExpr, variable: String, parts: [IdedExpr; 4]) -> IdedExpr {
    let [init, condition, step, result] = parts;
    ids.node(Expr::Comprehension(Box::new(ComprehensionExpr {
        iter_range: range,
        iter_var: variable,
        iter_var2: None,
        accu_var: RESULT.to_owned(),
        accu_init: init,
        loop_cond: condition,
        loop_step: step,
        result,
    })))
}

/// `all` (`@result && p`, while not strictly false) and `exists` (`@result || p`, while
/// `!@result` is not strictly false).
fn quantifier(
    ids: &mut Ids,
    range: IdedExpr,
    mut args: Vec<IdedExpr>,
    all: bool,
) -> Result<IdedExpr, &'static str> {
    let predicate = args.remove(1);
    let variable = variable(args.remove(0))?;
    let init = literal(ids, LiteralValue::Boolean(all.into()));
    let accumulated = result(ids);
    let condition = if all {
        call(ids, operators::NOT_STRICTLY_FALSE, vec![accumulated])
    } else {
        let negated = call(ids, operators::LOGICAL_NOT, vec![accumulated]);
        call(ids, operators::NOT_STRICTLY_FALSE, vec![negated])
    };
    let accumulated = result(ids);
    let combine = if all {
        operators::LOGICAL_AND
    } else {
        operators::LOGICAL_OR
    };
    let step = call(ids, combine, vec![accumulated, predicate]);
    let result = result(ids);
    Ok(fold(ids, range, variable, [init, condition, step, result]))
}

fn exists_one(
    ids: &mut Ids,
    range: IdedExpr,
    mut args: Vec<IdedExpr>,
) -> Result<IdedExpr, &'static str> {
    let predicate = args.remove(1);
    let variable = variable(args.remove(0))?;
    let init = literal(ids, LiteralValue::Int(0.into()));
    let condition = literal(ids, LiteralValue::Boolean(true.into()));
    let accumulated = result(ids);
    let one = literal(ids, LiteralValue::Int(1.into()));
    let counted = call(ids, operators::ADD, vec![accumulated, one]);
    let unchanged = result(ids);
    let step = call(
        ids,
        operators::CONDITIONAL,
        vec![predicate, counted, unchanged],
    );
    let accumulated = result(ids);
    let one = literal(ids, LiteralValue::Int(1.into()));
    let result = call(ids, operators::EQUALS, vec![accumulated, one]);
    Ok(fold(ids, range, variable, [init, condition, step, result]))
}

/// `map(x, f)` and `map(x, p, f)`: `@result + [f]`, under `p ? … : @result` for three.
fn map(ids: &mut Ids, range: IdedExpr, mut args: Vec<IdedExpr>) -> Result<IdedExpr, &'static str> {
    let transform = args.pop().unwrap_or_default();
    let variable = variable(args.remove(0))?;
    let filter = args.pop();
    let init = ids.node(Expr::List(ListExpr::new(Vec::new())));
    let condition = literal(ids, LiteralValue::Boolean(true.into()));
    let accumulated = result(ids);
    let appended = ids.node(Expr::List(ListExpr::new(vec![transform])));
    let mut step = call(ids, operators::ADD, vec![accumulated, appended]);
    if let Some(filter) = filter {
        let unchanged = result(ids);
        step = call(ids, operators::CONDITIONAL, vec![filter, step, unchanged]);
    }
    let result = result(ids);
    Ok(fold(ids, range, variable, [init, condition, step, result]))
}

/// `filter(x, p)`: `p ? @result + [x] : @result`.
fn filter(
    ids: &mut Ids,
    range: IdedExpr,
    mut args: Vec<IdedExpr>,
) -> Result<IdedExpr, &'static str> {
    let item = args.remove(0);
    let predicate = args.remove(0);
    let variable = variable(item.clone())?;
    let init = ids.node(Expr::List(ListExpr::new(Vec::new())));
    let condition = literal(ids, LiteralValue::Boolean(true.into()));
    let accumulated = result(ids);
    let appended = ids.node(Expr::List(ListExpr::new(vec![item])));
    let added = call(ids, operators::ADD, vec![accumulated, appended]);
    let unchanged = result(ids);
    let step = call(
        ids,
        operators::CONDITIONAL,
        vec![predicate, added, unchanged],
    );
    let result = result(ids);
    Ok(fold(ids, range, variable, [init, condition, step, result]))
}

/// `list.sortBy(x, key)`: the list bound to [`SORT_BY_INPUT`] (a comprehension over an empty
/// list), sorted by the keys `map(x, key)` gives.
fn sort_by(ids: &mut Ids, list: IdedExpr, args: Vec<IdedExpr>) -> Result<IdedExpr, &'static str> {
    if matches!(list.expr, Expr::Literal(_) | Expr::Map(_) | Expr::Struct(_)) {
        return Err(
            "sortBy can only be applied to a list, identifier, comprehension, call or select \
             expression",
        );
    }
    let input = |ids: &mut Ids| ids.node(Expr::Ident(SORT_BY_INPUT.to_owned()));
    let mapped = input(ids);
    let keys = map(ids, mapped, args)?;
    let sorted_input = input(ids);
    let sorted = Expr::Call(CallExpr {
        func_name: SORT_BY_KEYS.to_owned(),
        target: Some(Box::new(sorted_input)),
        args: vec![keys],
    });
    let range = ids.node(Expr::List(ListExpr::new(Vec::new())));
    let condition = literal(ids, LiteralValue::Boolean(false.into()));
    let step = input(ids);
    let result = ids.node(sorted);
    Ok(ids.node(Expr::Comprehension(Box::new(ComprehensionExpr {
        iter_range: range,
        iter_var: "#unused".to_owned(),
        iter_var2: None,
        accu_var: SORT_BY_INPUT.to_owned(),
        accu_init: list,
        loop_cond: condition,
        loop_step: step,
        result,
    }))))
}
