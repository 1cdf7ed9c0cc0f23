//! What Go does to an object between a Crossplane function's reply and the YAML `crossplane
//! render` prints: Go's number formats, go-yaml v2's map key order, and the JSON round trip.
//!
//! `crossplane render` writes each object with the Kubernetes YAML serializer: Go's
//! `encoding/json` turns the object into JSON text, and `sigs.k8s.io/yaml.JSONToYAML` reads that
//! text back with go-yaml v2 (as YAML: JSON is a subset) before go-yaml prints it. The round trip
//! is not neutral:
//! - a number comes back as an integer when its JSON text is one (Go writes a float64 with the
//!   shortest digits, `1152921504606847000` for 2^60, and go-yaml reads an integer that fits an
//!   int64 or uint64), else as a float printed with Go's `'g'` format ([`number_text`]);
//! - `encoding/json` escapes only `"`, `\`, the C0 controls, `<`, `>`, `&`, U+2028 and U+2029, so
//!   any other character reaches go-yaml's reader raw ([`reread`]): DEL, the C1 controls but
//!   U+0085, U+FFFE and U+FFFF are refused (`yaml: control characters are not allowed`); U+0085
//!   (NEL) is a line break inside the double-quoted JSON string, folded as YAML folds lines (one
//!   break and the spaces around it become a space; n breaks become n-1 newlines); after a NEL,
//!   `---` or `...` followed by a space or break is a document marker and an error; and a key
//!   holding a NEL, or longer than 1022 characters once escaped, is no longer a simple key in
//!   the flow mapping, which go-yaml reports as `did not find expected ',' or '}'`.

use super::unicode::{DIGIT, LETTER};
use serde_json::{Map, Number, Value};

// ---- numbers ----------------------------------------------------------------

/// How go-yaml prints a JSON number after the round trip.
pub(super) fn number_text(number: &Number) -> String {
    if let Some(i) = number.as_i64() {
        return i.to_string();
    }
    // A uint64 beyond int64 never reaches an unstructured object (it becomes a float64), but
    // print it as Go would have kept it.
    let float = number.as_f64().unwrap_or(0.0);
    integer_json_text(float).unwrap_or_else(|| format_g64(float))
}

/// The JSON number an unstructured object holds for a float64 (apimachinery's JSON decoding):
/// an int64 when Go's JSON text of the float is an integer that fits, else the float. `None`
/// for NaN and the infinities, which `encoding/json` refuses.
pub(super) fn unstructured_number(float: f64) -> Option<Number> {
    if !float.is_finite() {
        return None;
    }
    match integer_json_text(float).and_then(|text| text.parse::<i64>().ok()) {
        Some(i) => Some(Number::from(i)),
        None => Number::from_f64(float),
    }
}

/// Go's JSON text of a float64 when it is an integer that fits an int64 or a uint64 (what
/// go-yaml then reads as an integer); `-0` reads as `0`.
fn integer_json_text(float: f64) -> Option<String> {
    // encoding/json writes `%f` below 1e21; an integral value then has no point.
    if float.fract() != 0.0 || float.abs() >= 1e21 {
        return None;
    }
    // Rust's Display writes the same shortest digits as Go's 'f' format with precision -1.
    let text = format!("{float}");
    if let Ok(i) = text.parse::<i64>() {
        return Some(i.to_string());
    }
    text.parse::<u64>().ok().map(|u| u.to_string())
}

/// Go's `strconv.FormatFloat(f, 'g', -1, 64)` as go-yaml prints a float (`.inf`, `.nan`).
pub(super) fn format_g64(float: f64) -> String {
    if float.is_nan() {
        return ".nan".into();
    }
    if float.is_infinite() {
        return if float > 0.0 { ".inf" } else { "-.inf" }.into();
    }
    // Rust's `{:e}` prints the shortest round-trip digits as `d.ddde-x`.
    format_g(&format!("{:e}", float.abs()), float.is_sign_negative())
}

/// Go's `strconv.FormatFloat(f, 'g', -1, 32)`: how `sigs.k8s.io/yaml` turns a float map key
/// into a JSON key (through a float32), with go-yaml's names for the infinities and NaN.
pub(super) fn format_g32(float: f64) -> String {
    let single = float as f32;
    if single.is_nan() {
        return ".nan".into();
    }
    if single.is_infinite() {
        return if single > 0.0 { ".inf" } else { "-.inf" }.into();
    }
    format_g(&format!("{:e}", single.abs()), single.is_sign_negative())
}

/// The `'g'` layout of shortest digits (`d.ddde±x` from Rust): `%e` when the exponent is below
/// -4 or at least 6 (Go's threshold for the shortest precision), else `%f`.
fn format_g(scientific: &str, negative: bool) -> String {
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((scientific, "0"));
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let exp: i32 = exponent.parse().unwrap_or(0);
    let sign = if negative { "-" } else { "" };
    if digits == "0" {
        return format!("{sign}0");
    }
    if !(-4..6).contains(&exp) {
        let rest = &digits[1..];
        let dot = if rest.is_empty() { "" } else { "." };
        let exp_sign = if exp < 0 { '-' } else { '+' };
        return format!(
            "{sign}{}{dot}{rest}e{exp_sign}{:02}",
            &digits[..1],
            exp.abs()
        );
    }
    format!("{sign}{}", fixed_notation(&digits, exp))
}

/// `digits` (d.ddd × 10^exp) written without an exponent.
fn fixed_notation(digits: &str, exp: i32) -> String {
    let point = exp + 1; // digits before the decimal point
    if point <= 0 {
        format!("0.{}{digits}", "0".repeat(point.unsigned_abs() as usize))
    } else if point as usize >= digits.len() {
        format!("{digits}{}", "0".repeat(point as usize - digits.len()))
    } else {
        let (int, frac) = digits.split_at(point as usize);
        format!("{int}.{frac}")
    }
}

// ---- key order ----------------------------------------------------------------

/// go-yaml v2's `keyList.Less` for two string keys, rune by rune: at the first difference, two
/// letters compare by code point and a non-letter sorts before a letter; between two
/// non-letters the runs of digits that start there compare by value (a `0` after a non-zero
/// digit counts as a larger number), then by length, then the two runes by code point. Letters
/// and digits are Go's (`unicode.IsLetter`, `unicode.IsDigit`), and a digit's value is its code
/// point minus `'0'`, in wrapping int64 arithmetic, as Go computes it.
///
/// This order is not transitive for every set of keys; Go then sorts them in an order that
/// depends on its randomised map iteration, and this crate keeps the one its sort gives.
pub(super) fn key_less(a: &str, b: &str) -> bool {
    let ar: Vec<char> = a.chars().collect();
    let br: Vec<char> = b.chars().collect();
    for i in 0..ar.len().min(br.len()) {
        if ar[i] == br[i] {
            continue;
        }
        let (a_letter, b_letter) = (is_go_letter(ar[i]), is_go_letter(br[i]));
        if a_letter && b_letter {
            return ar[i] < br[i];
        }
        if a_letter || b_letter {
            return b_letter;
        }
        return digit_runs_less(&ar, &br, i);
    }
    ar.len() < br.len()
}

/// The comparison of two runs of digits starting at `i`.
fn digit_runs_less(ar: &[char], br: &[char], i: usize) -> bool {
    let (mut an, mut bn): (i64, i64) = (0, 0);
    if ar[i] == '0' || br[i] == '0' {
        let continues = ar[..i]
            .iter()
            .rev()
            .take_while(|c| is_go_digit(**c))
            .any(|c| *c != '0');
        if continues {
            (an, bn) = (1, 1);
        }
    }
    let a_end = accumulate_digits(ar, i, &mut an);
    let b_end = accumulate_digits(br, i, &mut bn);
    if an != bn {
        return an < bn;
    }
    if a_end != b_end {
        return a_end < b_end;
    }
    ar[i] < br[i]
}

/// Adds the run of digits from `start` to `value`; returns where the run ends.
fn accumulate_digits(chars: &[char], start: usize, value: &mut i64) -> usize {
    let mut end = start;
    while end < chars.len() && is_go_digit(chars[end]) {
        let digit = i64::from(chars[end] as u32 - '0' as u32);
        *value = value.wrapping_mul(10).wrapping_add(digit);
        end += 1;
    }
    end
}

fn is_go_letter(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_alphabetic();
    }
    in_table(LETTER, c)
}

fn is_go_digit(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_digit();
    }
    in_table(DIGIT, c)
}

fn in_table(table: &[(u32, u32)], c: char) -> bool {
    let code = c as u32;
    let at = table.partition_point(|(_, hi)| *hi < code);
    table.get(at).is_some_and(|(lo, _)| *lo <= code)
}

/// Maps of up to this many keys are sorted by insertion, as go-yaml's `sort.Sort` sorts them;
/// larger ones by merging (an insertion sort takes time quadratic in the keys: hours for a map
/// of 100,000).
const INSERTION_SORTED: usize = 12;

/// The entries in go-yaml's key order. [`key_less`] is only as consistent as go-yaml's
/// comparison, and unlike `sort_by` neither an insertion sort nor [`merge_sort`] can panic on
/// an inconsistent order; for a consistent one both give the same, stable, order.
pub(super) fn sorted_entries(map: &Map<String, Value>) -> Vec<(&String, &Value)> {
    let mut entries: Vec<(&String, &Value)> = Vec::with_capacity(map.len());
    if map.len() > INSERTION_SORTED {
        entries.extend(map);
        merge_sort(&mut entries, |a, b| key_less(a.0, b.0));
        return entries;
    }
    for (key, value) in map {
        let at = entries
            .iter()
            .position(|(other, _)| key_less(key, other))
            .unwrap_or(entries.len());
        entries.insert(at, (key, value));
    }
    entries
}

/// A stable bottom-up merge sort by `less`, which it never trusts to be consistent: each step
/// only picks the next item of one of two runs.
fn merge_sort<T: Copy>(items: &mut Vec<T>, less: impl Fn(&T, &T) -> bool) {
    let count = items.len();
    let mut merged = items.clone();
    let mut width = 1;
    while width < count {
        for start in (0..count).step_by(2 * width) {
            let middle = (start + width).min(count);
            let end = (start + 2 * width).min(count);
            let (mut left, mut right) = (start, middle);
            for slot in &mut merged[start..end] {
                // The right run's item goes first only when it is less: equal items keep
                // their order.
                let take_right =
                    right < end && (left >= middle || less(&items[right], &items[left]));
                if take_right {
                    *slot = items[right];
                    right += 1;
                } else {
                    *slot = items[left];
                    left += 1;
                }
            }
        }
        std::mem::swap(items, &mut merged);
        width *= 2;
    }
}

// ---- the JSON round trip --------------------------------------------------------

/// The go-yaml message for a character its reader refuses.
const CONTROL_CHARACTERS: &str = "yaml: control characters are not allowed";
/// The longest key, in JSON characters between its quotes, that is still a simple key.
const MAX_JSON_KEY_CHARS: usize = 1022;
const NEL: char = '\u{85}';

/// The object as go-yaml reads back Go's JSON text of it, or go-yaml's error.
pub(super) fn reread(value: &Value) -> Result<Value, String> {
    let mut reader = Reread { lines: 0 };
    if contains_refused_character(value) {
        return Err(CONTROL_CHARACTERS.into());
    }
    reader.value(value)
}

/// Characters go-yaml's reader refuses once `encoding/json` has left them raw.
fn is_refused(c: char) -> bool {
    matches!(c as u32, 0x7F..=0x84 | 0x86..=0x9F | 0xFFFE | 0xFFFF)
}

fn contains_refused_character(value: &Value) -> bool {
    match value {
        Value::String(text) => text.chars().any(is_refused),
        Value::Array(items) => items.iter().any(contains_refused_character),
        Value::Object(map) => map
            .iter()
            .any(|(k, v)| k.chars().any(is_refused) || contains_refused_character(v)),
        _ => false,
    }
}

/// Walks the value in the order of its JSON text, counting the lines the raw NELs start.
struct Reread {
    /// Line breaks read so far (go-yaml's 0-based line).
    lines: usize,
}

impl Reread {
    fn value(&mut self, value: &Value) -> Result<Value, String> {
        Ok(match value {
            Value::String(text) => Value::String(self.string(text)?),
            Value::Array(items) => Value::Array(
                items
                    .iter()
                    .map(|item| self.value(item))
                    .collect::<Result<_, _>>()?,
            ),
            // serde_json's map iterates in byte order of the keys: Go's JSON order.
            Value::Object(map) => {
                let opening_line = self.lines;
                let mut out = Map::new();
                for (key, item) in map {
                    self.key(key, opening_line)?;
                    let item = self.value(item)?;
                    // Keys that fold to the same text: the later one wins, as in go-yaml.
                    out.insert(key.clone(), item);
                }
                Value::Object(out)
            }
            other => other.clone(),
        })
    }

    /// A key must stay a simple key of the flow mapping.
    fn key(&mut self, key: &str, opening_line: usize) -> Result<(), String> {
        let breaks = key.chars().filter(|c| *c == NEL).count();
        self.lines += breaks;
        if breaks == 0 && json_length(key) <= MAX_JSON_KEY_CHARS {
            return Ok(());
        }
        // go-yaml names the line of the `:` when it is not the first, else that of the `{`.
        let line = [self.lines, opening_line].into_iter().find(|l| *l != 0);
        Err(match line {
            Some(line) => format!("yaml: line {line}: did not find expected ',' or '}}'"),
            None => "yaml: did not find expected ',' or '}'".into(),
        })
    }

    /// A string value with its NELs folded.
    fn string(&mut self, text: &str) -> Result<String, String> {
        if !text.contains(NEL) {
            return Ok(text.to_string());
        }
        let chars: Vec<char> = text.chars().collect();
        let mut out = String::with_capacity(text.len());
        let mut i = 0;
        while i < chars.len() {
            if chars[i] != ' ' && chars[i] != NEL {
                out.push(chars[i]);
                i += 1;
                continue;
            }
            let end = i + chars[i..]
                .iter()
                .take_while(|c| **c == ' ' || **c == NEL)
                .count();
            let breaks = chars[i..end].iter().filter(|c| **c == NEL).count();
            self.lines += breaks;
            match breaks {
                0 => out.extend(&chars[i..end]),
                1 => out.push(' '),
                n => out.extend(std::iter::repeat_n('\n', n - 1)),
            }
            if breaks > 0 && chars[end - 1] == NEL && starts_document_marker(&chars[end..]) {
                let line = self.lines + 1;
                return Err(format!(
                    "yaml: line {line}: found unexpected document indicator"
                ));
            }
            i = end;
        }
        Ok(out)
    }
}

/// `---` or `...` followed by a space or a (raw) line break, at the start of a line.
fn starts_document_marker(rest: &[char]) -> bool {
    let marker = rest.len() >= 3 && (rest[..3] == ['-'; 3] || rest[..3] == ['.'; 3]);
    marker && matches!(rest.get(3).copied(), Some(' ' | NEL))
}

/// The characters of a string in Go's JSON text, between its quotes (Go 1.19's escapes).
fn json_length(text: &str) -> usize {
    text.chars()
        .map(|c| match c {
            '"' | '\\' | '\n' | '\r' | '\t' => 2,
            '\u{0}'..='\u{1F}' | '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => 6,
            _ => 1,
        })
        .sum()
}

#[cfg(test)]
mod tests {
    //! Expectations are Go's (go-yaml v2, sigs.k8s.io/yaml), checked against Go itself by
    //! tests/go_yaml.rs where Go is installed.
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_after_the_json_round_trip() {
        let text = |value: Value| number_text(value.as_number().unwrap());
        assert_eq!(text(json!(3)), "3");
        assert_eq!(text(json!(-7)), "-7");
        assert_eq!(text(json!(1.5)), "1.5");
        assert_eq!(text(json!(3.0)), "3");
        assert_eq!(text(json!(-0.0)), "0");
        assert_eq!(text(json!(1e20)), "1e+20");
        assert_eq!(text(json!(1e21)), "1e+21");
        assert_eq!(text(json!(1.5e-7)), "1.5e-07");
        assert_eq!(text(json!(1_234_567.5)), "1.2345675e+06");
        // Shortest digits, not the exact value of the double.
        assert_eq!(
            text(json!(1_152_921_504_606_846_976.0)),
            "1152921504606847000"
        );
        assert_eq!(
            text(json!(9_223_372_036_854_775_808.0)),
            "9223372036854776000"
        );
        assert_eq!(text(json!(u64::MAX)), "1.8446744073709552e+19");
    }

    #[test]
    fn unstructured_numbers() {
        assert_eq!(unstructured_number(3.0), Some(Number::from(3)));
        assert_eq!(unstructured_number(-0.0), Some(Number::from(0)));
        assert_eq!(
            unstructured_number(1_152_921_504_606_846_976.0),
            Some(Number::from(1_152_921_504_606_847_000_i64))
        );
        assert_eq!(
            unstructured_number(1e19),
            Number::from_f64(1e19),
            "beyond int64: a float"
        );
        assert_eq!(unstructured_number(0.5), Number::from_f64(0.5));
        assert_eq!(unstructured_number(f64::NAN), None);
        assert_eq!(unstructured_number(f64::INFINITY), None);
    }

    #[test]
    fn go_g_formats() {
        assert_eq!(format_g64(1e21), "1e+21");
        assert_eq!(format_g64(2.5e-300), "2.5e-300");
        assert_eq!(format_g64(123456.0), "123456");
        assert_eq!(format_g64(1234567.0), "1.234567e+06");
        assert_eq!(format_g64(-0.5), "-0.5");
        assert_eq!(format_g64(f64::INFINITY), ".inf");
        assert_eq!(format_g64(f64::NAN), ".nan");
        assert_eq!(format_g32(0.1), "0.1");
        assert_eq!(format_g32(std::f64::consts::PI), "3.1415927");
        assert_eq!(format_g32(123456789.0), "1.2345679e+08");
        assert_eq!(format_g32(1e40), ".inf");
        assert_eq!(format_g32(1.0), "1");
    }

    #[test]
    fn key_order_rules() {
        // A non-letter sorts before a letter, also after a digit.
        assert!(key_less("_", "a"));
        assert!(key_less("1_", "1a"));
        assert!(key_less("-x", "Ax"));
        // Digit runs by value, then the shorter run first.
        assert!(key_less("x2", "x10"));
        assert!(key_less("a1", "a01"));
        assert!(key_less("v1beta1", "v1beta2"));
        assert!(key_less("z9", "z10"));
        // A zero after a non-zero digit is part of a larger number: 10 against 1.
        assert!(key_less("a1_", "a10"));
        assert!(!key_less("a10", "a1_"));
        // Two letters by code point; a prefix first.
        assert!(key_less("Z", "a"));
        assert!(key_less("spec", "specs"));
        assert!(!key_less("a", "a"));
        // Go's letters, not Rust's alphabetic: U+2160 (Ⅰ, a number) is no letter, U+00AA is.
        assert!(key_less("x\u{2160}", "xa"));
        assert!(!key_less("xª", "x\u{2160}"));
        // Go's digits: U+0663 (Arabic-Indic three) is a digit worth 0x663 - 0x30.
        assert!(key_less("k\u{663}", "k1600"));
        assert!(key_less("k1500", "k\u{663}"));
    }

    #[test]
    fn refused_characters() {
        for text in [
            "a\u{7f}", "\u{80}", "\u{84}", "\u{86}", "\u{9f}", "\u{fffe}", "\u{ffff}",
        ] {
            assert_eq!(
                reread(&json!({ "k": text })),
                Err(CONTROL_CHARACTERS.into()),
                "{text:?}"
            );
            assert_eq!(reread(&json!({ text: 1 })), Err(CONTROL_CHARACTERS.into()));
        }
        for text in [
            "\u{85}",
            "\u{a0}",
            "\u{feff}",
            "\u{1f600}",
            "\u{1}\t",
            "\u{2028}",
        ] {
            assert!(reread(&json!({ "k": text })).is_ok(), "{text:?}");
        }
    }

    #[test]
    fn nel_folds_like_a_line_break() {
        let folded = |text: &str| reread(&json!({ "k": text })).map(|v| v["k"].clone());
        assert_eq!(folded("a\u{85}b"), Ok(json!("a b")));
        assert_eq!(folded("a \u{85} b"), Ok(json!("a b")));
        assert_eq!(folded("\u{85}"), Ok(json!(" ")));
        assert_eq!(folded("a\u{85}\u{85}\u{85}b"), Ok(json!("a\n\nb")));
        assert_eq!(folded("a\n\u{85}b"), Ok(json!("a\n b")));
        assert_eq!(folded("a\u{85}...b"), Ok(json!("a ...b")));
        assert_eq!(
            folded("a\u{85}--- b"),
            Err("yaml: line 2: found unexpected document indicator".into())
        );
        assert_eq!(
            reread(&json!({"a": "x\u{85}y", "b": {"q\u{85}": 1}})),
            Err("yaml: line 2: did not find expected ',' or '}'".into())
        );
        assert_eq!(
            reread(&json!({"a\u{85}b": 1})),
            Err("yaml: line 1: did not find expected ',' or '}'".into())
        );
    }

    #[test]
    fn long_keys_stop_being_simple_keys() {
        assert!(reread(&json!({ "k".repeat(1022): 1 })).is_ok());
        assert_eq!(
            reread(&json!({ "k".repeat(1023): 1 })),
            Err("yaml: did not find expected ',' or '}'".into())
        );
        // `<` is six characters in Go's JSON.
        assert!(reread(&json!({ "<".repeat(170): 1 })).is_ok());
        assert!(reread(&json!({ "<".repeat(171): 1 })).is_err());
    }

    /// The insertion sort of small maps, applied to any number of keys.
    fn insertion_sorted(keys: &[String]) -> Vec<&String> {
        let mut sorted: Vec<&String> = Vec::new();
        for key in keys {
            let at = sorted
                .iter()
                .position(|other| key_less(key, other))
                .unwrap_or(sorted.len());
            sorted.insert(at, key);
        }
        sorted
    }

    #[test]
    fn large_maps_are_merged_into_the_order_small_ones_are_inserted_into() {
        // Letters, then digits at the end: where go-yaml's comparison is consistent (it is not
        // for digits followed by letters: "a12b" < "a1b" < "a9b" < "a12b"; Go's own order then
        // follows its random map order).
        let keys: Vec<String> = (0..500)
            .map(|i| match i % 4 {
                0 => format!("item{}", i * 7 % 311),
                1 => format!("Item{i}"),
                2 => format!("key{}", i % 13),
                _ => format!("a{}", i * 3),
            })
            .collect();
        let map: Map<String, Value> = keys.iter().map(|k| (k.clone(), json!(1))).collect();
        let merged: Vec<&String> = sorted_entries(&map).into_iter().map(|(k, _)| k).collect();
        let map_keys: Vec<String> = map.keys().cloned().collect();
        assert_eq!(merged, insertion_sorted(&map_keys));
    }

    #[test]
    fn a_map_of_100000_keys_is_sorted_in_n_log_n_comparisons() {
        let map: Map<String, Value> = (0..100_000)
            .map(|i| (format!("key{i}"), json!(i)))
            .collect();
        let started = std::time::Instant::now();
        let sorted = sorted_entries(&map);
        // Well under a second in a debug build; the insertion sort took hours.
        assert!(started.elapsed() < std::time::Duration::from_secs(60));
        assert_eq!(sorted[2].0, "key2");
        assert_eq!(sorted[99_999].0, "key99999");
    }
}
