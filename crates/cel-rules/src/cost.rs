//! What a call costs, counted as the API server counts it: cel-go's runtime cost tracker
//! (`interpreter/runtimecost.go`), with the Kubernetes library's estimates for the string
//! extension (`k8s.io/apiserver/pkg/cel/library/cost.go`) and cel-go's own for the list
//! extension (`ext/lists.go`).
//!
//! One difference in kind: cel-go charges a call after it ran; a call that allocates here is
//! charged before, from the sizes it will produce, so a call over budget never allocates. Where
//! cel-go's figure does not cover what the call allocates (a `replace` that grows its string,
//! a list concatenation, which cel-go makes in constant time as a view and the `cel` crate
//! copies), the charge is the larger of cel-go's figure and the size of the result, one unit a
//! list element or ten bytes of string (the crate's documentation, "Where we differ from cel-go").

use cel::common::types::{CelInt, CelList, CelString};
use cel::common::value::Val;

/// cel-go's `common.StringTraversalCostFactor`: a tenth of a unit a character.
const TRAVERSAL: f64 = 0.1;
/// cel-go's `common.RegexStringLengthCostFactor`.
const REGEX_LENGTH: f64 = 0.25;
/// cel-go's `common.ListCreateBaseCost` and the one unit of a call (`ext/lists.go`).
pub(super) const LIST_CREATE: u64 = 10;
/// cel-go's `common.MapCreateBaseCost`.
pub(super) const MAP_CREATE: u64 = 30;
/// cel-go's `common.StructCreateBaseCost`.
pub(super) const STRUCT_CREATE: u64 = 40;

fn ceil(x: f64) -> u64 {
    // Saturating: a size near u64::MAX is over any limit anyway.
    x.ceil() as u64
}

/// `ceil(size × 0.1)`: traversing a string of `size` characters, or comparing so many.
pub(super) fn traversal(size: u64) -> u64 {
    ceil(size as f64 * TRAVERSAL)
}

/// cel-go's `actualSize`: a string's characters, a list's or map's entries, else one.
pub(super) fn size(value: &dyn Val) -> u64 {
    if let Some(s) = value.downcast_ref::<CelString>() {
        return s.inner().chars().count() as u64;
    }
    match value.as_sizer() {
        Some(sizer) => u64::try_from(*sizer.size().inner()).unwrap_or(0),
        None => 1,
    }
}

fn string_len(value: &dyn Val) -> Option<u64> {
    value
        .downcast_ref::<CelString>()
        .map(|s| s.inner().chars().count() as u64)
}

fn str_of(value: &dyn Val) -> Option<&str> {
    value.downcast_ref::<CelString>().map(|s| s.inner())
}

fn int_of(value: &dyn Val) -> Option<i64> {
    value.downcast_ref::<CelInt>().map(|i| *i.inner())
}

/// The cost of calling `function` (its name as written, `lists.range` for a qualified one)
/// with `args` (the target first for a member call), charged before the call runs. `None`
/// when the arguments are not of the types the function takes: the call then fails without
/// doing any work, for the default unit. `left` bounds the walks that size an argument: past
/// it, the call is over budget whatever it costs.
pub(super) fn call(function: &str, member: bool, args: &[&dyn Val], left: u64) -> u64 {
    let first = args.first().copied();
    let second = args.get(1).copied();
    match (function, args.len()) {
        // cel-go's own table (runtimecost.go).
        ("startsWith" | "endsWith", 2) => traversal(size(args[0])),
        ("string" | "bytes", 1) if !member => traversal(size(args[0])),
        ("_<_" | "_<=_" | "_>_" | "_>=_", 2) => match (string_len(args[0]), string_len(args[1])) {
            (Some(a), Some(b)) => traversal(a.min(b)),
            _ => 1,
        },
        ("_+_", 2) => add(args[0], args[1]),
        ("matches", 2) => matches(args[0], args[1]),
        ("contains", 2) if member => match (string_len(args[0]), string_len(args[1])) {
            (Some(a), Some(b)) => traversal(a).saturating_mul(traversal(b)),
            _ => 1,
        },
        // The Kubernetes library (cost.go), for the strings extension.
        ("indexOf" | "lastIndexOf", _) => traversal(size(args[0])),
        ("lowerAscii" | "upperAscii" | "substring" | "trim" | "charAt" | "reverse", _)
            if first.and_then(string_len).is_some() =>
        {
            traversal(size(args[0]))
        }
        ("replace", 3 | 4) => replace(args),
        ("split", 2 | 3) => split(args),
        ("join", 1 | 2) => join(args[0], second),
        ("format", 2) => format(args[0], args[1], left),
        ("strings.quote", 1) => {
            // At most two bytes a character, plus the quotes.
            let len = string_len(args[0]).unwrap_or(1);
            traversal(len).max(traversal(len.saturating_mul(2).saturating_add(2)))
        }
        // cel-go's list extension (ext/lists.go): the result's size, a call and a list.
        ("lists.range", 1) => {
            let n = int_of(args[0]).map_or(0, |n| u64::try_from(n).unwrap_or(0));
            allocating_list(n)
        }
        ("slice", 3) => {
            let (start, end) = (int_of(args[1]), int_of(args[2]));
            match (start, end) {
                (Some(start), Some(end)) if end >= start => allocating_list((end - start) as u64),
                _ => 1,
            }
        }
        ("reverse", 1) => allocating_list(size(args[0])),
        ("flatten", 1 | 2) => flatten(args, left),
        ("distinct" | "sort", 1) => self_compare(args[0]),
        ("@sortByAssociatedKeys", 2) => self_compare(args[1]),
        _ => 1,
    }
}

/// `n` elements allocated by a list function: cel-go's `trackAllocatingListCall`.
pub(super) fn allocating_list(n: u64) -> u64 {
    n.saturating_add(1).saturating_add(LIST_CREATE)
}

/// `+`: strings and bytes by their sizes (cel-go); lists by their elements, as the result is
/// a copy here (cel-go's list is a view, one unit).
fn add(lhs: &dyn Val, rhs: &dyn Val) -> u64 {
    let lists = lhs.downcast_ref::<CelList>().zip(rhs.as_sizer());
    if let Some((lhs, rhs)) = lists {
        let n = lhs.inner().len() as u64 + u64::try_from(*rhs.size().inner()).unwrap_or(0);
        return n.max(1);
    }
    let sized = |v: &dyn Val| {
        v.as_sizer()
            .filter(|_| v.as_iterable().is_none())
            .map(|_| size(v))
    };
    match (sized(lhs), sized(rhs)) {
        (Some(a), Some(b)) => traversal(a.saturating_add(b)),
        _ => 1,
    }
}

/// `matches`: cel-go's string length times pattern length, which fits the automata RE2 and Go
/// build. Ours has as many states as the pattern's repetitions expand to (`(a{100}){100}` is
/// 14 characters and 10,000 states) and runs in time proportional to the states times the
/// string: the charge is the larger of the two (a tenth of a unit a step), plus compiling the
/// pattern (`re2::Pattern::cost`).
fn matches(text: &dyn Val, pattern: &dyn Val) -> u64 {
    let (Some(text), Some(pattern)) = (str_of(text), str_of(pattern)) else {
        return 1;
    };
    let chars = text.chars().count() as u64;
    let string_cost = traversal(chars + 1);
    let regex_cost = ceil(pattern.chars().count() as f64 * REGEX_LENGTH);
    let (matching, compiling) = super::re2::steps(pattern, chars);
    string_cost
        .saturating_mul(regex_cost)
        .max(matching)
        .saturating_add(compiling)
}

/// `replace`: the Kubernetes figure (twice a traversal of the string), or the result's size
/// when the replacement makes it longer.
fn replace(args: &[&dyn Val]) -> u64 {
    let (Some(text), Some(from), Some(to)) = (str_of(args[0]), str_of(args[1]), str_of(args[2]))
    else {
        return 1;
    };
    let limit = args.get(3).and_then(|n| int_of(*n));
    let k8s = ceil(text.chars().count() as f64 * 2.0 * TRAVERSAL);
    let count = occurrences(text, from, limit);
    let grown = (text.len() as u64)
        .saturating_sub(count.saturating_mul(from.len() as u64))
        .saturating_add(count.saturating_mul(to.len() as u64));
    k8s.max(traversal(grown))
}

/// How many times `needle` is replaced in `text` (an empty needle matches between
/// characters), at most `limit` when it is not negative.
fn occurrences(text: &str, needle: &str, limit: Option<i64>) -> u64 {
    let all = if needle.is_empty() {
        text.chars().count() as u64 + 1
    } else {
        text.matches(needle).count() as u64
    };
    match limit.and_then(|n| u64::try_from(n).ok()) {
        Some(n) => all.min(n),
        None => all,
    }
}

/// `split`: the Kubernetes figure, or one unit a part when there are more parts.
fn split(args: &[&dyn Val]) -> u64 {
    let (Some(text), Some(separator)) = (str_of(args[0]), str_of(args[1])) else {
        return 1;
    };
    let limit = args.get(2).and_then(|n| int_of(*n));
    let k8s = ceil(text.chars().count() as f64 * 2.0 * TRAVERSAL);
    let parts = occurrences(text, separator, limit).saturating_add(1);
    k8s.max(parts)
}

/// `join`: twice a traversal of the result (Kubernetes), sized before it is built.
fn join(list: &dyn Val, separator: Option<&dyn Val>) -> u64 {
    let Some(items) = list.as_iterable() else {
        return 1;
    };
    let mut chars = 0u64;
    let mut count = 0u64;
    let mut iter = items.iter();
    while let Some(item) = iter.next() {
        chars = chars.saturating_add(string_len(item).unwrap_or(0));
        count += 1;
    }
    let separator = separator.and_then(string_len).unwrap_or(0);
    chars = chars.saturating_add(separator.saturating_mul(count.saturating_sub(1)));
    ceil(chars as f64 * 2.0 * TRAVERSAL).max(1)
}

/// `format`: a traversal of the format string (cel-go), or of the longest the result can be:
/// each argument written out (a number in at most 410 characters at the largest precision).
fn format(pattern: &dyn Val, args: &dyn Val, left: u64) -> u64 {
    let pattern_len = string_len(pattern).unwrap_or(1);
    let mut longest = pattern_len;
    if let Some(items) = args.as_iterable() {
        let mut iter = items.iter();
        while let Some(item) = iter.next() {
            longest = longest.saturating_add(written_size(item, left));
        }
    }
    traversal(pattern_len).max(traversal(longest))
}

/// The most characters `%s` (or a number's conversion) can write for `value`.
fn written_size(value: &dyn Val, left: u64) -> u64 {
    if let Some(len) = string_len(value) {
        return len;
    }
    super::values::deep_size(value, left).saturating_mul(410)
}

/// `flatten`: the flattened list's size (cel-go charges the input's times the depth; the
/// result can be larger, and is what is allocated).
fn flatten(args: &[&dyn Val], left: u64) -> u64 {
    let depth = args.get(1).and_then(|d| int_of(*d)).unwrap_or(1).max(0) as u64;
    let cel_go = size(args[0]).saturating_mul(depth);
    allocating_list(cel_go.max(super::values::flattened_len(args[0], depth, left)))
}

/// `distinct`, `sort`, `sortBy`: n² comparisons, two units each and a traversal more for
/// strings (cel-go's `trackListSelfCompare`).
fn self_compare(list: &dyn Val) -> u64 {
    let n = size(list);
    let first_is_string = list
        .as_iterable()
        .and_then(|items| items.iter().next().map(|first| string_len(first).is_some()))
        .unwrap_or(false);
    let factor = if first_is_string {
        2.0 + TRAVERSAL
    } else {
        2.0
    };
    // cel-go truncates here.
    allocating_list((n.saturating_mul(n) as f64 * factor) as u64)
}
