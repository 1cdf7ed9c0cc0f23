//! Sorted maps and sets built by inserting, not by `collect()`: `BTreeMap`'s and `BTreeSet`'s
//! `FromIterator` (and `From<[_; N]>`, and JSON objects', which are `BTreeMap`s) sort their
//! input with a stable sort first, and the WebAssembly builds then carry one copy of that sort
//! for every iterator type collected from, about 5 kB each before wasm-opt (BENCHMARKS.md, "The
//! WebAssembly builds: size"). Inserting needs none; the result is the same (of equal keys, the
//! last value stays), and these maps are small (one entry a repository at most).

use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};

/// The map of `items`.
pub(crate) fn map<K: Ord, V>(items: impl IntoIterator<Item = (K, V)>) -> BTreeMap<K, V> {
    let mut map = BTreeMap::new();
    map.extend(items);
    map
}

/// The JSON object of `members`.
pub(crate) fn object(members: impl IntoIterator<Item = (String, Value)>) -> Map<String, Value> {
    let mut object = Map::new();
    object.extend(members);
    object
}

/// The set of `items`.
pub(crate) fn set<T: Ord>(items: impl IntoIterator<Item = T>) -> BTreeSet<T> {
    let mut set = BTreeSet::new();
    set.extend(items);
    set
}
