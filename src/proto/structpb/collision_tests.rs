//! Two label maps whose content hashes are one under the fixed key (XXH3's default secret), and
//! the search that found them: why the server keys its hashes (`proto::hash_key`).
//!
//! An object's hash sums its entries' hashes. Anyone can hash entries under the fixed key, so
//! finding two objects with one hash is the k-sum problem, which Wagner's k-tree algorithm
//! solves: 128 lists of 2^17 candidate entries, merged pairwise seven times, each merge keeping
//! the pairs whose sums are zero in 16 more bits (32 at the last), leave a choice of one
//! candidate a list whose sum is zero. Half the lists hold the entries of one map, the other
//! half the negated entries of the other, so a sum of zero is two maps with one sum.
//!
//! `cargo test --lib write_labels_that_collide -- --ignored` writes
//! `tests/collision/labels.json`, which the other tests read (`tests/server/grpc.rs` sends two
//! composites labelled with them to the server).

use super::hash::{tree_entry, tree_under};
use super::*;
use crate::proto::hash_key::HashKey;
use prost::Message;
use std::path::Path;

/// Where the two maps are written, from the crate's root.
const FIXTURE: &str = "tests/collision/labels.json";

/// The label the two maps differ in where it counts: the claim's name, which a naming format
/// of `{claimName}-{name}` puts in every key.
const CLAIM_NAME: &str = "crossplane.io/claim-name";
const CLAIM_NAMES: [&str; 2] = ["alpha", "bravo"];

/// Lists of candidates, a power of two: one merge a level.
const LISTS: usize = 1 << LEVELS;
const LEVELS: u32 = 7;
/// Candidates a list, and the most pairs a merge keeps.
const CANDIDATES: usize = 1 << 17;
/// Bits a merge below the last zeroes: 128 / (LEVELS + 1).
const BITS: u32 = 16;

/// The pad label of a list's pair, and its value for candidate `j` in map `side`.
fn pad(list: usize, j: usize) -> (String, String) {
    let (pair, side) = (list % (LISTS / 2), list / (LISTS / 2));
    let letter = ["a", "b"][side];
    (
        format!("example.org/pad-{pair:02}"),
        format!("{letter}{j:05x}"),
    )
}

fn entry_hash(name: &str, value: &str, scratch: &mut Vec<u8>) -> u128 {
    tree_entry(HashKey::fixed(), name, &Value::from(value), scratch)
}

/// The candidates of a list: an entry's hash in the first map, its negation in the second;
/// the first list carries the claim names' difference.
fn candidates(list: usize) -> Vec<u128> {
    let mut scratch = Vec::new();
    let offset = if list == 0 {
        entry_hash(CLAIM_NAME, CLAIM_NAMES[0], &mut scratch).wrapping_sub(entry_hash(
            CLAIM_NAME,
            CLAIM_NAMES[1],
            &mut scratch,
        ))
    } else {
        0
    };
    (0..CANDIDATES)
        .map(|j| {
            let (name, value) = pad(list, j);
            let hash = entry_hash(&name, &value, &mut scratch);
            let signed = if list < LISTS / 2 {
                hash
            } else {
                hash.wrapping_neg()
            };
            signed.wrapping_add(offset)
        })
        .collect()
}

/// The pairs of `left` and `right` (sums zero below bit `low`) whose sums are zero below bit
/// `low + width` too, at most [`CANDIDATES`]: their sums, and where each came from.
fn merge(left: &[u128], right: &[u128], low: u32, width: u32) -> (Vec<u128>, Vec<(u32, u32)>) {
    let mask = if width == 128 - low {
        u128::MAX >> low
    } else {
        (1u128 << width) - 1
    };
    let window = |sum: u128| (sum >> low) & mask;
    let mut by_window: Vec<u32> = (0..right.len() as u32).collect();
    by_window.sort_unstable_by_key(|&r| window(right[r as usize]));
    let (mut sums, mut from) = (Vec::new(), Vec::new());
    for (l, &sum) in left.iter().enumerate() {
        // Below `low` both are zero, so the window of the sum carries nothing in from below.
        let wanted = window(sum).wrapping_neg() & mask;
        let start = by_window.partition_point(|&r| window(right[r as usize]) < wanted);
        for &r in &by_window[start..] {
            if window(right[r as usize]) != wanted || sums.len() == CANDIDATES {
                break;
            }
            sums.push(sum.wrapping_add(right[r as usize]));
            from.push((l as u32, r));
        }
    }
    (sums, from)
}

/// The merge tree: where each pair kept at each node came from, by level and node.
type Origins = Vec<Vec<Vec<(u32, u32)>>>;

/// The sums kept at node `index` of `level` (level 0: a list's candidates), depth first.
fn node(level: u32, index: usize, origins: &mut Origins) -> Vec<u128> {
    if level == 0 {
        return candidates(index);
    }
    let left = node(level - 1, 2 * index, origins);
    let right = node(level - 1, 2 * index + 1, origins);
    let low = BITS * (level - 1);
    let width = if level == LEVELS { 128 - low } else { BITS };
    let (sums, from) = merge(&left, &right, low, width);
    origins[level as usize][index] = from;
    sums
}

/// The candidate of each list that pair `at` of node `index` of `level` was made of.
fn chosen(level: u32, index: usize, at: u32, origins: &Origins, out: &mut [usize]) {
    if level == 0 {
        out[index] = at as usize;
        return;
    }
    let (l, r) = origins[level as usize][index][at as usize];
    chosen(level - 1, 2 * index, l, origins, out);
    chosen(level - 1, 2 * index + 1, r, origins, out);
}

/// The two maps of the fixture.
fn committed() -> [Map<String, Value>; 2] {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(FIXTURE))
        .expect("the committed fixture");
    let value: Value = serde_json::from_str(&text).expect("JSON");
    ["a", "b"].map(|side| value[side].as_object().expect("a map").clone())
}

#[test]
#[ignore = "writes the fixture; a minute or so"]
fn write_labels_that_collide_under_the_fixed_key() {
    let mut origins: Origins = (0..=LEVELS)
        .map(|level| vec![Vec::new(); LISTS >> level])
        .collect();
    let roots = node(LEVELS, 0, &mut origins);
    assert!(
        !roots.is_empty(),
        "no sum of zero this time: try more candidates"
    );
    assert_eq!(roots[0], 0);
    let mut picks = vec![0; LISTS];
    chosen(LEVELS, 0, 0, &origins, &mut picks);
    let mut maps = [Map::new(), Map::new()];
    for (side, map) in maps.iter_mut().enumerate() {
        map.insert(CLAIM_NAME.into(), CLAIM_NAMES[side].into());
    }
    for (list, &j) in picks.iter().enumerate() {
        let (name, value) = pad(list, j);
        maps[list / (LISTS / 2)].insert(name, value.into());
    }
    let [a, b] = maps;
    let text = serde_json::to_string_pretty(&serde_json::json!({"a": a, "b": b})).unwrap();
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(FIXTURE);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text + "\n").unwrap();
}

#[test]
fn the_committed_labels_collide_under_the_fixed_key_and_under_no_other() {
    let [a, b] = committed();
    assert_ne!(a, b);
    assert_eq!(a.len(), b.len());
    let fixed = HashKey::fixed();
    assert_eq!(tree_under(fixed, &a), tree_under(fixed, &b));
    // As the maps come on the wire, and inside the rest of a composite's metadata.
    let wire = |map: &Map<String, Value>| {
        let bytes = Struct::from(map.clone()).encode_to_vec();
        hash::wire_under(fixed, &bytes, direct::DEPTH).expect("canonical bytes")
    };
    assert_eq!(wire(&a), wire(&b));
    let within = |labels: &Map<String, Value>| {
        let metadata = serde_json::json!({"name": "xr", "labels": labels});
        tree_under(fixed, &object(serde_json::json!({"metadata": metadata})))
    };
    assert_eq!(within(&a), within(&b));

    let keyed = HashKey::with_seed(0x5eed_c011_1de5);
    assert_ne!(tree_under(keyed, &a), tree_under(keyed, &b));
}

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => unreachable!("an object"),
    }
}
