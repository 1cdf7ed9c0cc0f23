//! A YAML emitter that prints JSON values byte for byte as Go's
//! `sigs.k8s.io/yaml` does, which is what `crossplane render` prints.
//!
//! `crossplane render` serialises each object to JSON and converts it with
//! `sigs.k8s.io/yaml.JSONToYAML`: the JSON is parsed by yaml.v2 into generic
//! values and emitted again by yaml.v2's port of libyaml's emitter. To get the
//! same bytes this module reproduces the three parts that decide them:
//!
//! - the value model: how a JSON number comes back from that round trip
//!   (integers stay integers; other numbers become floats printed with Go's
//!   `'g'` format), see [`number_text`];
//! - the encoder: map keys in yaml.v2's "natural" order ([`natural_less`]) and
//!   the style asked for each string (plain, double-quoted when the plain text
//!   would read back as another YAML 1.1 type, literal when it holds a line
//!   break), see [`resolves_to_non_string`];
//! - the emitter: block mappings and sequences, the scalar analysis that may
//!   overrule the style, and the writers that track the column, so that long
//!   scalars wrap at column 80 exactly where libyaml wraps them.
//!
//! The emitter keeps libyaml's state variables (`column`, `indent`,
//! `whitespace`, `indention`, ...) and its writer primitives with the same
//! meaning; the event state machine is replaced by recursion over the value.

use serde_json::{Map, Number, Value};

/// libyaml's `best_indent` and `best_width`; yaml.v2 never changes them and
/// Kubernetes never calls `FutureLineWrap`, so long lines wrap at 80.
const BEST_INDENT: i32 = 2;
const BEST_WIDTH: usize = 80;
/// Longest simple (implicit) key in bytes; longer keys use `? key`.
const MAX_SIMPLE_KEY_LEN: usize = 128;

/// Prints one document (without a `---` line) as `sigs.k8s.io/yaml.Marshal`.
pub(super) fn to_yaml(value: &Value) -> String {
    let mut emitter = Emitter::new();
    emitter.document(value);
    emitter.out
}

// ---- the value model ------------------------------------------------------

/// The text yaml.v2 prints for a JSON number after the JSON-to-YAML round trip.
///
/// Go's `encoding/json` writes a float64 with `'f'` (or `'e'` outside
/// [1e-6, 1e21)); yaml.v2 then reads an integral `'f'` text that fits an int64
/// or uint64 back as an integer and everything else as a float64, which it
/// prints with `strconv.FormatFloat(f, 'g', -1, 64)`.
pub(super) fn number_text(number: &Number) -> String {
    if let Some(i) = number.as_i64() {
        return i.to_string();
    }
    if let Some(u) = number.as_u64() {
        return u.to_string();
    }
    let float = number.as_f64().unwrap_or(0.0);
    integral_text(float).unwrap_or_else(|| go_format_g(float))
}

/// The integer text of an integral float that survives as an integer.
fn integral_text(float: f64) -> Option<String> {
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    const TWO_64: f64 = 18_446_744_073_709_551_616.0;
    if float.fract() != 0.0 || !float.is_finite() {
        return None;
    }
    if (-TWO_63..TWO_63).contains(&float) {
        // `-0` reads back as the integer 0.
        Some((float as i64).to_string())
    } else if (TWO_63..TWO_64).contains(&float) {
        Some((float as u64).to_string())
    } else {
        None
    }
}

/// Go's `strconv.FormatFloat(f, 'g', -1, 64)`: the shortest digits that read
/// back exactly, in `%e` form when the exponent is below -4 or at least 6
/// (Go's fixed threshold for the shortest precision), else in `%f` form.
pub(super) fn go_format_g(float: f64) -> String {
    if float.is_nan() {
        return ".nan".into();
    }
    if float.is_infinite() {
        return if float > 0.0 { ".inf" } else { "-.inf" }.into();
    }
    // Rust's `{:e}` prints the same shortest round-trip digits: `d.ddde-x`.
    let scientific = format!("{:e}", float.abs());
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let exp: i32 = exponent.parse().unwrap_or(0);
    let sign = if float.is_sign_negative() { "-" } else { "" };
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

// ---- key order --------------------------------------------------------------

/// yaml.v2's `keyList.Less` for two string keys: a "natural" order in which
/// runs of digits compare by value (`a2` < `a10`) and, at the first differing
/// character, a non-letter sorts before a letter unless a digit run is being
/// continued, in which case the letter comes first.
pub(super) fn natural_less(a: &str, b: &str) -> bool {
    let ar: Vec<char> = a.chars().collect();
    let br: Vec<char> = b.chars().collect();
    let mut after_digit = false;
    for i in 0..ar.len().min(br.len()) {
        if ar[i] == br[i] {
            after_digit = is_digit(ar[i]);
            continue;
        }
        let (a_letter, b_letter) = (is_letter(ar[i]), is_letter(br[i]));
        if a_letter && b_letter {
            return ar[i] < br[i];
        }
        if a_letter || b_letter {
            return if after_digit { a_letter } else { b_letter };
        }
        return digit_runs_less(&ar, &br, i);
    }
    ar.len() < br.len()
}

/// Compares the digit runs that start at `i` (both differing characters are
/// non-letters): by value, then by run length, then by the characters.
fn digit_runs_less(ar: &[char], br: &[char], i: usize) -> bool {
    let (mut an, mut bn): (i64, i64) = (0, 0);
    // A zero that continues a number with a non-zero digit before it is not
    // a leading zero: count it as part of a larger value.
    if ar[i] == '0' || br[i] == '0' {
        let continues = ar[..i]
            .iter()
            .rev()
            .take_while(|c| is_digit(**c))
            .any(|c| *c != '0');
        if continues {
            an = 1;
            bn = 1;
        }
    }
    let a_end = run_value(ar, i, &mut an);
    let b_end = run_value(br, i, &mut bn);
    if an != bn {
        return an < bn;
    }
    if a_end != b_end {
        return a_end < b_end;
    }
    ar[i] < br[i]
}

/// Accumulates the digit run starting at `start` into `value`; returns its end.
fn run_value(chars: &[char], start: usize, value: &mut i64) -> usize {
    let mut end = start;
    while end < chars.len() && is_digit(chars[end]) {
        let digit = i64::from(chars[end] as u32 - '0' as u32);
        *value = value.wrapping_mul(10).wrapping_add(digit);
        end += 1;
    }
    end
}

/// Go's `unicode.IsDigit`, restricted to ASCII (the digit value is computed
/// as `c - '0'`, which only makes sense there).
fn is_digit(c: char) -> bool {
    c.is_ascii_digit()
}

/// Go's `unicode.IsLetter` (Unicode letters; Rust's alphabetic is the closest).
fn is_letter(c: char) -> bool {
    c.is_alphabetic()
}

/// Maps of up to this many keys are sorted by insertion, as yaml.v2's `sort.Sort` sorts them;
/// larger ones by merging (the insertion sort took time quadratic in the keys: hours for a map
/// of 100,000).
const INSERTION_SORTED: usize = 12;

/// The entries in natural key order. `natural_less` is only as consistent as yaml.v2's
/// comparison, and unlike `sort_by` neither an insertion sort nor [`merge_sort`] can panic on
/// an inconsistent order; for a consistent one both give the same, stable, order.
fn sorted_entries(map: &Map<String, Value>) -> Vec<(&String, &Value)> {
    let mut entries: Vec<(&String, &Value)> = Vec::with_capacity(map.len());
    if map.len() > INSERTION_SORTED {
        entries.extend(map);
        merge_sort(&mut entries, |a, b| natural_less(a.0, b.0));
        return entries;
    }
    for (key, value) in map {
        let at = entries
            .iter()
            .position(|(other, _)| natural_less(key, other))
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

// ---- what a plain scalar would read back as (yaml.v2 resolve.go) ----------

/// Whether `text`, written plain, would be read by yaml.v2 as something other
/// than a string (YAML 1.1 booleans, nulls, numbers, timestamps, the merge
/// key) or is a YAML 1.1 base-60 number. Such strings are double-quoted.
pub(super) fn resolves_to_non_string(text: &str) -> bool {
    resolves_by_hint(text) || is_base60_float(text)
}

fn resolves_by_hint(text: &str) -> bool {
    const IN_MAP: &[&str] = &[
        "y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON", "n", "N", "no",
        "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF", "", "~", "null", "Null",
        "NULL", ".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf",
        "-.Inf", "-.INF",
    ];
    // yaml.v2 only looks further when the first byte hints at a non-string.
    // `<` has no hint, so even the merge key `<<` is written plain.
    let first = text.bytes().next();
    let hint = match first {
        None => return true, // "" is null
        Some(b'+' | b'-') => 'S',
        Some(b'0'..=b'9') => 'D',
        Some(b'y' | b'Y' | b'n' | b'N' | b't' | b'T' | b'f' | b'F' | b'o' | b'O' | b'~') => 'M',
        Some(b'.') => '.',
        Some(_) => return false,
    };
    if IN_MAP.contains(&text) {
        return true;
    }
    match hint {
        '.' => go_parse_float(text),
        'D' | 'S' => is_timestamp(text) || is_number_text(&text.replace('_', "")),
        _ => false,
    }
}

/// The numeric branch of resolve: Go's `ParseInt(s, 0, 64)`, then
/// `ParseUint`, then the YAML float pattern (`ParseFloat` accepts all of it),
/// then `0b`/`-0b` binary. Out-of-range integers still match the float
/// pattern, so range does not matter: the syntax decides.
fn is_number_text(plain: &str) -> bool {
    go_int_syntax(plain) || yaml_style_float(plain) || binary_syntax(plain)
}

/// Go's integer syntax with base prefix (`0x`, `0o`, `0b`, leading `0` octal).
fn go_int_syntax(s: &str) -> bool {
    let unsigned = s.strip_prefix(['+', '-']).unwrap_or(s);
    let lower = unsigned.to_ascii_lowercase();
    let (digits, radix) = if let Some(rest) = lower.strip_prefix("0x") {
        (rest, 16)
    } else if let Some(rest) = lower.strip_prefix("0o") {
        (rest, 8)
    } else if let Some(rest) = lower.strip_prefix("0b") {
        (rest, 2)
    } else if lower.len() > 1 && lower.starts_with('0') {
        (&lower[1..], 8)
    } else {
        (lower.as_str(), 10)
    };
    !digits.is_empty() && digits.chars().all(|c| c.is_digit(radix))
}

fn binary_syntax(s: &str) -> bool {
    let rest = s.strip_prefix("-0b").or_else(|| s.strip_prefix("0b"));
    rest.is_some_and(|r| !r.is_empty() && r.chars().all(|c| c == '0' || c == '1'))
}

/// `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`
fn yaml_style_float(s: &str) -> bool {
    let s = s.strip_prefix(['+', '-']).unwrap_or(s);
    let (mantissa, exponent) = match s.find(['e', 'E']) {
        Some(at) => (&s[..at], Some(&s[at + 1..])),
        None => (s, None),
    };
    let mantissa_ok = match mantissa.split_once('.') {
        Some(("", frac)) => all_digits(frac) && !frac.is_empty(),
        Some((int, frac)) => all_digits(int) && !int.is_empty() && all_digits(frac),
        None => all_digits(mantissa) && !mantissa.is_empty(),
    };
    let exponent_ok = exponent.is_none_or(|e| {
        let e = e.strip_prefix(['+', '-']).unwrap_or(e);
        !e.is_empty() && all_digits(e)
    });
    mantissa_ok && exponent_ok
}

fn all_digits(s: &str) -> bool {
    s.bytes().all(|b| b.is_ascii_digit())
}

/// Go's `strconv.ParseFloat` for a text that starts with `.`: decimal
/// digits with an optional exponent, underscores only between digits.
fn go_parse_float(s: &str) -> bool {
    if s.contains('_') {
        return false; // Go allows `_` only in texts with a base prefix.
    }
    yaml_style_float(s)
}

/// `^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$`
fn is_base60_float(s: &str) -> bool {
    let s = s.strip_prefix(['+', '-']).unwrap_or(s);
    let (main, frac) = match s.split_once('.') {
        Some((main, frac)) => (main, Some(frac)),
        None => (s, None),
    };
    if frac.is_some_and(|f| !f.bytes().all(|b| b.is_ascii_digit() || b == b'_')) {
        return false;
    }
    let mut parts = main.split(':');
    let head = parts.next().unwrap_or("");
    let head_ok = head.bytes().next().is_some_and(|b| b.is_ascii_digit())
        && head.bytes().all(|b| b.is_ascii_digit() || b == b'_');
    let mut sexagesimal = 0;
    for part in parts {
        let ok = match part.as_bytes() {
            [d] => d.is_ascii_digit(),
            [t, d] => (b'0'..=b'5').contains(t) && d.is_ascii_digit(),
            _ => false,
        };
        if !ok {
            return false;
        }
        sexagesimal += 1;
    }
    head_ok && sexagesimal > 0
}

/// yaml.v2's timestamp check: `YYYY-` followed by one of the layouts
/// `2006-1-2`, `2006-1-2T15:4:5.999999999Z07:00` (also with `t`) and
/// `2006-1-2 15:4:5.999999999`, as Go's `time.Parse` reads them.
fn is_timestamp(s: &str) -> bool {
    let bytes = s.as_bytes();
    if bytes.len() < 5 || !bytes[..4].iter().all(u8::is_ascii_digit) || bytes[4] != b'-' {
        return false;
    }
    let year: u32 = s[..4].parse().unwrap_or(0);
    let Some(rest) = parse_date(year, &s[5..]) else {
        return false;
    };
    if rest.is_empty() {
        return true;
    }
    let (separator, time) = rest.split_at(1);
    match separator {
        "T" | "t" => parse_time(time)
            .and_then(parse_zone)
            .is_some_and(str::is_empty),
        " " => parse_time(time).is_some_and(str::is_empty),
        _ => false,
    }
}

/// Month and day after the year (1 or 2 digits each, the day within the
/// month as Go checks it); returns the rest.
fn parse_date(year: u32, s: &str) -> Option<&str> {
    let (month, rest) = take_number(s, 1, 12)?;
    let rest = rest.strip_prefix('-')?;
    let (_, rest) = take_number(rest, 1, days_in_month(year, month))?;
    Some(rest)
}

fn days_in_month(year: u32, month: u32) -> u32 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// `15:4:5` with an optional fraction (`.` or `,` and digits); returns the rest.
fn parse_time(s: &str) -> Option<&str> {
    let (_, rest) = take_number(s, 0, 23)?;
    let (_, rest) = take_number(rest.strip_prefix(':')?, 0, 59)?;
    let (_, rest) = take_number(rest.strip_prefix(':')?, 0, 59)?;
    match rest.strip_prefix(['.', ',']) {
        Some(frac) => {
            let digits = frac.bytes().take_while(u8::is_ascii_digit).count();
            (digits > 0).then(|| &frac[digits..])
        }
        None => Some(rest),
    }
}

/// `Z` or `±hh:mm` (Go allows hours up to 24 and minutes up to 60 there);
/// returns the rest.
fn parse_zone(s: &str) -> Option<&str> {
    if let Some(rest) = s.strip_prefix('Z') {
        return Some(rest);
    }
    let rest = s.strip_prefix(['+', '-'])?;
    let two_digits = |t: &str| t.len() == 2 && all_digits(t);
    let (hours, minutes) = (rest.get(..2)?, rest.get(3..5)?);
    let ok = two_digits(hours)
        && rest.as_bytes()[2] == b':'
        && two_digits(minutes)
        && hours.parse::<u32>().ok()? <= 24
        && minutes.parse::<u32>().ok()? <= 60;
    ok.then(|| &rest[5..])
}

/// One or two digits forming a number in `min..=max`; returns it and the rest.
fn take_number(s: &str, min: u32, max: u32) -> Option<(u32, &str)> {
    let len = s.bytes().take(2).take_while(u8::is_ascii_digit).count();
    let value: u32 = s.get(..len)?.parse().ok()?;
    (len > 0 && (min..=max).contains(&value)).then(|| (value, &s[len..]))
}

// ---- characters as libyaml classifies them ---------------------------------

/// libyaml's printable set as yaml.v2 implements it (4-byte characters are
/// not printable there, so they are escaped in double quotes).
fn is_printable(c: char) -> bool {
    matches!(c as u32, 0x0A | 0x20..=0x7E | 0xA0..=0xD7FF | 0xE000..=0xFFFD) && c != '\u{FEFF}'
}

fn is_break(c: char) -> bool {
    matches!(c, '\r' | '\n' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

fn is_blank(c: char) -> bool {
    c == ' ' || c == '\t'
}

/// Blank, break or the end of the text.
fn is_blankz(c: Option<char>) -> bool {
    c.is_none_or(|c| is_blank(c) || is_break(c))
}

// ---- scalar analysis and style selection (emitterc.go) ---------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Style {
    Plain,
    SingleQuoted,
    DoubleQuoted,
    Literal,
}

/// What `yaml_emitter_analyze_scalar` finds out about a scalar.
/// (libyaml's flow-context verdict is left out: see [`Emitter::empty_flow`].)
#[derive(Debug, Default)]
struct Analysis {
    multiline: bool,
    block_plain_allowed: bool,
    single_quoted_allowed: bool,
    block_allowed: bool,
}

#[derive(Default)]
struct Findings {
    block_indicators: bool,
    line_breaks: bool,
    special_characters: bool,
    leading_space: bool,
    leading_break: bool,
    trailing_space: bool,
    trailing_break: bool,
    break_space: bool,
    space_break: bool,
}

fn analyze(value: &str) -> Analysis {
    if value.is_empty() {
        return Analysis {
            multiline: false,
            block_plain_allowed: true,
            single_quoted_allowed: true,
            block_allowed: false,
        };
    }
    let f = scan(value);
    let mut a = Analysis {
        multiline: f.line_breaks,
        block_plain_allowed: true,
        single_quoted_allowed: true,
        block_allowed: true,
    };
    if f.leading_space || f.leading_break || f.trailing_space || f.trailing_break {
        a.block_plain_allowed = false;
    }
    if f.trailing_space {
        a.block_allowed = false;
    }
    if f.break_space {
        a.block_plain_allowed = false;
        a.single_quoted_allowed = false;
    }
    if f.space_break || f.special_characters {
        a = Analysis {
            multiline: a.multiline,
            ..Analysis::default()
        };
    }
    if f.line_breaks {
        a.block_plain_allowed = false;
    }
    if f.block_indicators {
        a.block_plain_allowed = false;
    }
    a
}

/// The character scan of `yaml_emitter_analyze_scalar`.
fn scan(value: &str) -> Findings {
    let mut f = Findings::default();
    if value.starts_with("---") || value.starts_with("...") {
        f.block_indicators = true;
    }
    let chars: Vec<char> = value.chars().collect();
    let (mut preceded_by_whitespace, mut previous_space, mut previous_break) = (true, false, false);
    for (i, &c) in chars.iter().enumerate() {
        let next = chars.get(i + 1).copied();
        let followed_by_whitespace = next.is_none_or(is_blank);
        indicators(
            &mut f,
            c,
            i == 0,
            followed_by_whitespace,
            preceded_by_whitespace,
        );
        if !is_printable(c) {
            f.special_characters = true;
        }
        let (first, last) = (i == 0, i + 1 == chars.len());
        if c == ' ' {
            f.leading_space |= first;
            f.trailing_space |= last;
            f.break_space |= previous_break;
            (previous_space, previous_break) = (true, false);
        } else if is_break(c) {
            f.line_breaks = true;
            f.leading_break |= first;
            f.trailing_break |= last;
            f.space_break |= previous_space;
            (previous_space, previous_break) = (false, true);
        } else {
            (previous_space, previous_break) = (false, false);
        }
        preceded_by_whitespace = is_blankz(Some(c));
    }
    f
}

/// Whether `c` is a block-context indicator that rules out the plain style:
/// at the start of a scalar most indicator characters do; inside it only
/// `: ` and ` #` do.
fn indicators(f: &mut Findings, c: char, first: bool, followed_by_ws: bool, preceded_by_ws: bool) {
    let block = if first {
        match c {
            '#' | ',' | '[' | ']' | '{' | '}' | '&' | '*' | '!' | '|' | '>' | '\'' | '"' | '%'
            | '@' | '`' => true,
            '?' | ':' | '-' => followed_by_ws,
            _ => false,
        }
    } else {
        match c {
            ':' => followed_by_ws,
            '#' => preceded_by_ws,
            _ => false,
        }
    };
    f.block_indicators |= block;
}

/// The style yaml.v2's encoder asks for a string (`encoder.stringv`).
fn requested_string_style(text: &str) -> Style {
    if text.contains('\n') {
        Style::Literal
    } else if resolves_to_non_string(text) {
        Style::DoubleQuoted
    } else {
        Style::Plain
    }
}

/// Where a node is being emitted; mirrors libyaml's context flags.
#[derive(Debug, Clone, Copy, Default)]
struct NodeContext {
    mapping: bool,
    simple_key: bool,
}

// ---- the emitter --------------------------------------------------------------

struct Emitter {
    out: String,
    column: usize,
    indent: i32,
    indents: Vec<i32>,
    /// The last character written is white space (or nothing on the line).
    whitespace: bool,
    /// Only indentation has been written on the current line.
    indention: bool,
    /// The document may need an explicit end (`...`): after `|+` blocks.
    open_ended: bool,
    mapping_context: bool,
    simple_key_context: bool,
}

impl Emitter {
    fn new() -> Emitter {
        Emitter {
            out: String::new(),
            column: 0,
            indent: -1,
            indents: Vec::new(),
            whitespace: true,
            indention: true,
            open_ended: false,
            mapping_context: false,
            simple_key_context: false,
        }
    }

    /// Stream start, implicit document, the root node, document and stream end.
    fn document(&mut self, value: &Value) {
        self.node(value, NodeContext::default());
        self.write_indent();
        if self.open_ended {
            self.write_indicator("...", true, false, false);
            self.write_indent();
        }
    }

    fn node(&mut self, value: &Value, context: NodeContext) {
        self.mapping_context = context.mapping;
        self.simple_key_context = context.simple_key;
        match value {
            Value::Object(map) if map.is_empty() => self.empty_flow("{", "}"),
            Value::Object(map) => self.block_mapping(map),
            Value::Array(items) if items.is_empty() => self.empty_flow("[", "]"),
            Value::Array(items) => self.block_sequence(items),
            Value::String(text) => self.scalar(text, requested_string_style(text)),
            Value::Number(number) => self.scalar(&number_text(number), Style::Plain),
            Value::Bool(flag) => self.scalar(if *flag { "true" } else { "false" }, Style::Plain),
            Value::Null => self.scalar("null", Style::Plain),
        }
    }

    fn block_mapping(&mut self, map: &Map<String, Value>) {
        self.increase_indent(false, false);
        for (key, value) in sorted_entries(map) {
            self.write_indent();
            if is_simple_key(key) {
                self.node(
                    &Value::String(key.clone()),
                    NodeContext {
                        mapping: true,
                        simple_key: true,
                    },
                );
                self.write_indicator(":", false, false, false);
            } else {
                self.write_indicator("?", true, false, true);
                self.node(
                    &Value::String(key.clone()),
                    NodeContext {
                        mapping: true,
                        simple_key: false,
                    },
                );
                self.write_indent();
                self.write_indicator(":", true, false, true);
            }
            self.node(
                value,
                NodeContext {
                    mapping: true,
                    simple_key: false,
                },
            );
        }
        self.pop_indent();
    }

    fn block_sequence(&mut self, items: &[Value]) {
        // A sequence that is a mapping value starts at its key's column.
        let indentless = self.mapping_context && !self.indention;
        self.increase_indent(false, indentless);
        for item in items {
            self.write_indent();
            self.write_indicator("-", true, false, true);
            self.node(item, NodeContext::default());
        }
        self.pop_indent();
    }

    /// An empty mapping or sequence: libyaml writes it in flow style (`{}`,
    /// `[]`). It is the only flow collection this emitter writes, so scalars
    /// are always in block context (libyaml's `flow_level` is 0).
    fn empty_flow(&mut self, open: &str, close: &str) {
        self.write_indicator(open, true, true, false);
        self.write_indicator(close, false, false, false);
    }

    fn scalar(&mut self, value: &str, requested: Style) {
        let analysis = analyze(value);
        let style = self.select_style(value, requested, &analysis);
        self.increase_indent(true, false);
        let allow_breaks = !self.simple_key_context;
        match style {
            Style::Plain => self.write_plain(value, allow_breaks),
            Style::SingleQuoted => self.write_single_quoted(value, allow_breaks),
            Style::DoubleQuoted => self.write_double_quoted(value, allow_breaks),
            Style::Literal => self.write_literal(value),
        }
        self.pop_indent();
    }

    /// `yaml_emitter_select_scalar_style`: the analysis may overrule the style.
    fn select_style(&self, value: &str, requested: Style, a: &Analysis) -> Style {
        if self.simple_key_context && a.multiline {
            return Style::DoubleQuoted;
        }
        let mut style = requested;
        if style == Style::Plain
            && (!a.block_plain_allowed || (value.is_empty() && self.simple_key_context))
        {
            style = Style::SingleQuoted;
        }
        if style == Style::SingleQuoted && !a.single_quoted_allowed {
            style = Style::DoubleQuoted;
        }
        if style == Style::Literal && (!a.block_allowed || self.simple_key_context) {
            style = Style::DoubleQuoted;
        }
        style
    }

    // ---- writer primitives ----

    fn put(&mut self, c: char) {
        self.out.push(c);
        self.column += 1;
    }

    fn put_break(&mut self) {
        self.out.push('\n');
        self.column = 0;
    }

    /// Copies one character of a scalar; a break character starts a new line.
    fn write_break(&mut self, c: char) {
        if c == '\n' {
            self.put_break();
        } else {
            self.out.push(c);
            self.column = 0;
        }
    }

    fn increase_indent(&mut self, flow: bool, indentless: bool) {
        self.indents.push(self.indent);
        if self.indent < 0 {
            self.indent = if flow { BEST_INDENT } else { 0 };
        } else if !indentless {
            self.indent += BEST_INDENT;
        }
    }

    fn pop_indent(&mut self) {
        self.indent = self.indents.pop().unwrap_or(-1);
    }

    fn write_indent(&mut self) {
        let indent = self.indent.max(0) as usize;
        if !self.indention || self.column > indent || (self.column == indent && !self.whitespace) {
            self.put_break();
        }
        while self.column < indent {
            self.put(' ');
        }
        self.whitespace = true;
        self.indention = true;
    }

    fn write_indicator(
        &mut self,
        indicator: &str,
        need_whitespace: bool,
        is_whitespace: bool,
        is_indention: bool,
    ) {
        if need_whitespace && !self.whitespace {
            self.put(' ');
        }
        for c in indicator.chars() {
            self.put(c);
        }
        self.whitespace = is_whitespace;
        self.indention = self.indention && is_indention;
        self.open_ended = false;
    }

    fn write_plain(&mut self, value: &str, allow_breaks: bool) {
        if !self.whitespace {
            self.put(' ');
        }
        let chars: Vec<char> = value.chars().collect();
        let (mut spaces, mut breaks) = (false, false);
        for (i, &c) in chars.iter().enumerate() {
            if c == ' ' {
                let next_is_space = chars.get(i + 1) == Some(&' ');
                if allow_breaks && !spaces && self.column > BEST_WIDTH && !next_is_space {
                    self.write_indent();
                } else {
                    self.put(c);
                }
                spaces = true;
            } else if is_break(c) {
                if !breaks && c == '\n' {
                    self.put_break();
                }
                self.write_break(c);
                self.indention = true;
                breaks = true;
            } else {
                if breaks {
                    self.write_indent();
                }
                self.put(c);
                self.indention = false;
                (spaces, breaks) = (false, false);
            }
        }
        self.whitespace = false;
        self.indention = false;
    }

    fn write_single_quoted(&mut self, value: &str, allow_breaks: bool) {
        self.write_indicator("'", true, false, false);
        let chars: Vec<char> = value.chars().collect();
        let (mut spaces, mut breaks) = (false, false);
        for (i, &c) in chars.iter().enumerate() {
            if c == ' ' {
                let inner = i > 0 && i + 1 < chars.len() && chars[i + 1] != ' ';
                if allow_breaks && !spaces && self.column > BEST_WIDTH && inner {
                    self.write_indent();
                } else {
                    self.put(c);
                }
                spaces = true;
            } else if is_break(c) {
                if !breaks && c == '\n' {
                    self.put_break();
                }
                self.write_break(c);
                self.indention = true;
                breaks = true;
            } else {
                if breaks {
                    self.write_indent();
                }
                if c == '\'' {
                    self.put('\'');
                }
                self.put(c);
                self.indention = false;
                (spaces, breaks) = (false, false);
            }
        }
        self.write_indicator("'", false, false, false);
        self.whitespace = false;
        self.indention = false;
    }

    fn write_double_quoted(&mut self, value: &str, allow_breaks: bool) {
        self.write_indicator("\"", true, false, false);
        let chars: Vec<char> = value.chars().collect();
        let mut spaces = false;
        for (i, &c) in chars.iter().enumerate() {
            if !is_printable(c) || c == '\u{FEFF}' || is_break(c) || c == '"' || c == '\\' {
                self.write_escape(c);
                spaces = false;
            } else if c == ' ' {
                if allow_breaks
                    && !spaces
                    && self.column > BEST_WIDTH
                    && i > 0
                    && i + 1 < chars.len()
                {
                    self.write_indent();
                    if chars[i + 1] == ' ' {
                        self.put('\\');
                    }
                } else {
                    self.put(c);
                }
                spaces = true;
            } else {
                self.put(c);
                spaces = false;
            }
        }
        self.write_indicator("\"", false, false, false);
        self.whitespace = false;
        self.indention = false;
    }

    fn write_escape(&mut self, c: char) {
        self.put('\\');
        let short = match c {
            '\0' => Some('0'),
            '\u{07}' => Some('a'),
            '\u{08}' => Some('b'),
            '\t' => Some('t'),
            '\n' => Some('n'),
            '\u{0B}' => Some('v'),
            '\u{0C}' => Some('f'),
            '\r' => Some('r'),
            '\u{1B}' => Some('e'),
            '"' => Some('"'),
            '\\' => Some('\\'),
            '\u{85}' => Some('N'),
            '\u{A0}' => Some('_'),
            '\u{2028}' => Some('L'),
            '\u{2029}' => Some('P'),
            _ => None,
        };
        if let Some(letter) = short {
            self.put(letter);
            return;
        }
        let code = c as u32;
        let (letter, width) = match code {
            0..=0xFF => ('x', 2),
            0x100..=0xFFFF => ('u', 4),
            _ => ('U', 8),
        };
        self.put(letter);
        for digit in format!("{code:0width$X}").chars() {
            self.put(digit);
        }
    }

    fn write_literal(&mut self, value: &str) {
        self.write_indicator("|", true, false, false);
        self.write_block_scalar_hints(value);
        self.put_break();
        self.indention = true;
        self.whitespace = true;
        let mut breaks = true;
        for c in value.chars() {
            if is_break(c) {
                self.write_break(c);
                self.indention = true;
                breaks = true;
            } else {
                if breaks {
                    self.write_indent();
                    breaks = false;
                }
                self.put(c);
                self.indention = false;
            }
        }
    }

    /// The indentation hint (when the text starts with a space or break) and
    /// the chomping indicator: `-` without a final break, `+` with several.
    fn write_block_scalar_hints(&mut self, value: &str) {
        let first = value.chars().next();
        if first.is_some_and(|c| c == ' ' || is_break(c)) {
            self.write_indicator(&BEST_INDENT.to_string(), false, false, false);
        }
        self.open_ended = false;
        let mut tail = value.chars().rev();
        let chomp = match (tail.next(), tail.next()) {
            (None, _) => Some("-"),
            (Some(last), _) if !is_break(last) => Some("-"),
            (Some(_), None) => Some("+"),
            (Some(_), Some(before)) if is_break(before) => Some("+"),
            _ => None,
        };
        if let Some(chomp) = chomp {
            if chomp == "+" {
                self.open_ended = true;
            }
            self.write_indicator(chomp, false, false, false);
        }
    }
}

/// `yaml_emitter_check_simple_key` for a string key.
fn is_simple_key(key: &str) -> bool {
    key.len() <= MAX_SIMPLE_KEY_LEN && !key.chars().any(is_break)
}

#[cfg(test)]
mod tests {
    //! Expectations are what sigs.k8s.io/yaml (yaml.v2) prints for the same
    //! JSON, worked out from yaml.v2's encoder, resolver and emitter rules.
    use super::*;
    use serde_json::json;

    fn yaml(value: Value) -> String {
        to_yaml(&value)
    }

    /// The printed form of one string value under the key `k`.
    fn scalar(text: &str) -> String {
        let printed = yaml(json!({ "k": text }));
        printed
            .strip_prefix("k: ")
            .unwrap_or(&printed)
            .trim_end_matches('\n')
            .to_string()
    }

    #[test]
    fn block_style_with_two_space_indent_and_dashes_at_the_key_column() {
        let value = json!({
            "apiVersion": "v1", "kind": "X",
            "metadata": {"name": "x", "labels": {"a": "b"}},
            "spec": {"list": [1, "two", {"k": "v", "j": []}], "empty": {}}
        });
        let expected = "\
apiVersion: v1
kind: X
metadata:
  labels:
    a: b
  name: x
spec:
  empty: {}
  list:
  - 1
  - two
  - j: []
    k: v
";
        assert_eq!(yaml(value), expected);
    }

    #[test]
    fn nested_sequences_and_empty_collections() {
        assert_eq!(
            yaml(json!({"a": [[1, 2], [], {}]})),
            "a:\n- - 1\n  - 2\n- []\n- {}\n"
        );
        assert_eq!(yaml(json!({})), "{}\n");
        assert_eq!(
            yaml(json!({"a": {"b": {"c": []}}})),
            "a:\n  b:\n    c: []\n"
        );
    }

    #[test]
    fn sequence_items_that_are_mappings_of_sequences() {
        let value = json!({"items": [{"name": "a", "ports": [80, 443]}]});
        assert_eq!(
            yaml(value),
            "items:\n- name: a\n  ports:\n  - 80\n  - 443\n"
        );
    }

    #[test]
    fn keys_sort_in_natural_order() {
        let value = json!({"b": 1, "a": 2, "a10": 3, "a2": 4, "A": 5, "_x": 6, "Z": 7});
        assert_eq!(
            yaml(value),
            "_x: 6\nA: 5\nZ: 7\na: 2\na2: 4\na10: 3\nb: 1\n"
        );
    }

    #[test]
    fn natural_order_rules() {
        // Non-letter before letter, except right after a digit.
        assert!(natural_less("_", "a"));
        assert!(natural_less("-x", "Ax"));
        assert!(natural_less("1a", "1_"));
        // Digit runs by value, then shorter run first.
        assert!(natural_less("x2", "x10"));
        assert!(natural_less("a1", "a01"));
        assert!(natural_less("v1beta1", "v1beta2"));
        assert!(natural_less("z9", "z10"));
        // Two letters by code point; prefix first.
        assert!(natural_less("Z", "a"));
        assert!(natural_less("spec", "specs"));
        // Two punctuation characters by code point.
        assert!(natural_less("x-1", "x.1"));
        assert!(!natural_less("a", "a"));
        // Ordinary Kubernetes keys keep byte order.
        assert!(natural_less("apiVersion", "kind"));
        assert!(natural_less(
            "crossplane.io/claim-name",
            "crossplane.io/composite"
        ));
    }

    #[test]
    fn strings_that_read_back_as_other_types_are_double_quoted() {
        for text in [
            "true",
            "True",
            "TRUE",
            "false",
            "yes",
            "Yes",
            "no",
            "NO",
            "on",
            "On",
            "off",
            "y",
            "Y",
            "n",
            "N",
            "null",
            "Null",
            "NULL",
            "~",
            "",
            "123",
            "-7",
            "+1",
            "0x1F",
            "0X1f",
            "0o17",
            "017",
            "08",
            "0b101",
            "1_000",
            "1e3",
            "1.0",
            "1.",
            ".5",
            "-.5e3",
            ".inf",
            "-.Inf",
            ".NaN",
            "1:20",
            "-1:20:30.5",
            "2024-01-01",
            "2024-1-1",
            "2024-02-29",
            "2024-01-01T00:00:00Z",
            "2024-01-01t10:00:00.5+02:00",
            "2024-01-01 10:00:00",
            "99999999999999999999999",
        ] {
            assert_eq!(scalar(text), format!("\"{text}\""), "{text:?}");
        }
    }

    #[test]
    fn strings_that_stay_strings_are_plain() {
        for text in [
            "hello",
            "Yes!",
            "yES",
            "nope",
            "<<",
            "0x",
            "1.2.3",
            "1e",
            "e3",
            "a-b",
            "a:b",
            "a#b",
            "?x",
            ":x",
            "-x",
            "it's",
            "say \"hi\"",
            "2024-13-01",
            "2023-02-29",
            "2024-02-30",
            "2024-01-01T10:00:00",
            "2024-01-01 10:00",
            "12:60",
            "é",
            "x y z",
            "https://example.com/a?b=c#d",
            "v1.2",
            "1.2.3-rc.1",
            "._5",
        ] {
            assert_eq!(scalar(text), text, "{text:?}");
        }
    }

    #[test]
    fn indicators_and_edge_spaces_are_single_quoted() {
        for (text, printed) in [
            ("-", "'-'"),
            ("- a", "'- a'"),
            ("a: b", "'a: b'"),
            ("a:", "'a:'"),
            ("a #b", "'a #b'"),
            ("? x", "'? x'"),
            (": x", "': x'"),
            ("?", "'?'"),
            ("*x", "'*x'"),
            ("&x", "'&x'"),
            ("!x", "'!x'"),
            ("|x", "'|x'"),
            (">x", "'>x'"),
            ("%x", "'%x'"),
            ("@x", "'@x'"),
            ("`x", "'`x'"),
            ("{x", "'{x'"),
            ("[x", "'[x'"),
            ("]x", "']x'"),
            ("}x", "'}x'"),
            ("#x", "'#x'"),
            (",x", "',x'"),
            ("\"x", "'\"x'"),
            ("'x", "'''x'"),
            ("---x", "'---x'"),
            ("...", "'...'"),
            (" lead", "' lead'"),
            ("trail ", "'trail '"),
            ("Unready resources: a, b", "'Unready resources: a, b'"),
        ] {
            assert_eq!(scalar(text), printed, "{text:?}");
        }
    }

    #[test]
    fn special_characters_are_escaped_in_double_quotes() {
        assert_eq!(scalar("a\tb"), r#""a\tb""#);
        assert_eq!(scalar("a\rb"), r#""a\rb""#);
        assert_eq!(scalar("nul\0"), r#""nul\0""#);
        assert_eq!(scalar("bell\u{7}"), r#""bell\a""#);
        assert_eq!(scalar("del\u{7f}"), r#""del\x7F""#);
        assert_eq!(scalar("nel\u{85}"), r#""nel\N""#);
        assert_eq!(scalar("bom\u{feff}"), r#""bom\uFEFF""#);
        // yaml.v2 does not count characters beyond the BMP as printable.
        assert_eq!(scalar("smile 😀"), r#""smile \U0001F600""#);
        // A quote or backslash inside an escaped string is escaped too.
        assert_eq!(scalar("tab\t\"q\" \\"), r#""tab\t\"q\" \\""#);
    }

    #[test]
    fn multi_line_strings_use_literal_blocks() {
        assert_eq!(yaml(json!({"k": "a\nb"})), "k: |-\n  a\n  b\n");
        assert_eq!(yaml(json!({"k": "a\n"})), "k: |\n  a\n");
        assert_eq!(yaml(json!({"k": "a\n\n"})), "k: |+\n  a\n\n");
        assert_eq!(yaml(json!({"k": "a\n\nb"})), "k: |-\n  a\n\n  b\n");
        assert_eq!(yaml(json!({"k": " a\nb"})), "k: |2-\n   a\n  b\n");
        assert_eq!(yaml(json!({"k": "\nx"})), "k: |2-\n\n  x\n");
        assert_eq!(yaml(json!({"k": "a\n b"})), "k: |-\n  a\n   b\n");
        assert_eq!(yaml(json!({"k": "a\n", "l": 1})), "k: |\n  a\nl: 1\n");
        assert_eq!(yaml(json!({"k": "a\n\n", "l": 1})), "k: |+\n  a\n\nl: 1\n");
    }

    #[test]
    fn literal_blocks_indent_below_their_key_or_dash() {
        assert_eq!(
            yaml(json!({"a": {"b": "x\ny"}})),
            "a:\n  b: |-\n    x\n    y\n"
        );
        assert_eq!(yaml(json!({"l": ["x\ny"]})), "l:\n- |-\n  x\n  y\n");
        assert_eq!(
            yaml(json!({"l": [{"m": "x\ny"}]})),
            "l:\n- m: |-\n    x\n    y\n"
        );
    }

    #[test]
    fn multi_line_strings_that_cannot_be_literal_are_double_quoted() {
        // A space before a break, a trailing space, or a special character.
        assert_eq!(scalar("a \nb"), r#""a \nb""#);
        assert_eq!(scalar("a\nb "), r#""a\nb ""#);
        assert_eq!(scalar("a\n\tb"), r#""a\n\tb""#);
        // A key with a line break cannot be a simple key.
        assert_eq!(yaml(json!({"a\nb": 1})), "? |-\n  a\n  b\n: 1\n");
    }

    #[test]
    fn keys_are_quoted_by_the_same_rules() {
        let value = json!({"true": 1, "": 2, "a b": 3, "x: y": 4});
        assert_eq!(yaml(value), "\"\": 2\na b: 3\n\"true\": 1\n'x: y': 4\n");
    }

    #[test]
    fn long_keys_use_the_explicit_key_form() {
        let key = "k".repeat(129);
        assert_eq!(yaml(json!({ key.clone(): "v" })), format!("? {key}\n: v\n"));
        let short = "k".repeat(128);
        assert_eq!(yaml(json!({ short.clone(): "v" })), format!("{short}: v\n"));
    }

    #[test]
    fn long_plain_scalars_wrap_after_column_80() {
        let words = ["aaaaaaaaa"; 10].join(" ");
        let expected = "\
description: aaaaaaaaa aaaaaaaaa aaaaaaaaa aaaaaaaaa aaaaaaaaa aaaaaaaaa aaaaaaaaa
  aaaaaaaaa aaaaaaaaa aaaaaaaaa
";
        assert_eq!(yaml(json!({ "description": words })), expected);
        // Never inside a word, never at a run of spaces, never inside a key.
        let word = "w".repeat(100);
        assert_eq!(yaml(json!({ "k": word.clone() })), format!("k: {word}\n"));
        let spaced = format!("{}  {}", "x".repeat(85), "y");
        assert_eq!(
            yaml(json!({ "k": spaced.clone() })),
            format!("k: {spaced}\n")
        );
        let key = ["key"; 30].join(" ");
        assert_eq!(yaml(json!({ key.clone(): 1 })), format!("{key}: 1\n"));
    }

    #[test]
    fn long_single_quoted_scalars_wrap_with_the_item_indent() {
        let message = format!("a: {}", ["bbbbbbbbb"; 9].join(" "));
        let expected = "\
c:
- message: 'a: bbbbbbbbb bbbbbbbbb bbbbbbbbb bbbbbbbbb bbbbbbbbb bbbbbbbbb bbbbbbbbb
    bbbbbbbbb bbbbbbbbb'
";
        assert_eq!(yaml(json!({"c": [{ "message": message }]})), expected);
    }

    #[test]
    fn long_double_quoted_scalars_wrap_and_keep_double_spaces() {
        let words = ["ccccccccc"; 9].join(" ");
        let expected = "\
k: \"x\\t ccccccccc ccccccccc ccccccccc ccccccccc ccccccccc ccccccccc ccccccccc ccccccccc
  ccccccccc\"
";
        assert_eq!(yaml(json!({ "k": format!("x\t {words}") })), expected);
        let eight = ["ccccccccc"; 8].join(" ");
        let expected = "\
k: \"x\\t ccccccccc ccccccccc ccccccccc ccccccccc ccccccccc ccccccccc ccccccccc ccccccccc
  \\ ccccccccc\"
";
        assert_eq!(
            yaml(json!({ "k": format!("x\t {eight}  ccccccccc") })),
            expected
        );
    }

    #[test]
    fn numbers_print_as_after_the_json_round_trip() {
        let value = json!({
            "i": 3, "neg": -7, "f": 1.5, "big": 1e21, "small": 1.5e-7, "whole": 3.0,
            "u": u64::MAX, "mid": 1_234_567.5, "fixed": 123_456.5, "z": -0.0, "huge": 1e20,
            "tiny": 0.0001, "tinier": 0.00001, "neg_f": -2.5, "third": 1.0 / 3.0,
        });
        let expected = "\
big: 1e+21
f: 1.5
fixed: 123456.5
huge: 1e+20
i: 3
mid: 1.2345675e+06
neg: -7
neg_f: -2.5
small: 1.5e-07
third: 0.3333333333333333
tinier: 1e-05
tiny: 0.0001
u: 18446744073709551615
whole: 3
z: 0
";
        assert_eq!(yaml(value), expected);
    }

    #[test]
    fn go_g_format() {
        assert_eq!(go_format_g(1e21), "1e+21");
        assert_eq!(go_format_g(2.5e-300), "2.5e-300");
        assert_eq!(go_format_g(123456.0), "123456");
        assert_eq!(go_format_g(1234567.0), "1.234567e+06");
        assert_eq!(go_format_g(-0.5), "-0.5");
        assert_eq!(go_format_g(f64::INFINITY), ".inf");
        assert_eq!(go_format_g(f64::NAN), ".nan");
    }

    #[test]
    fn booleans_and_null_are_plain() {
        let value = json!({"t": true, "f": false, "z": null});
        assert_eq!(yaml(value), "f: false\nt: true\nz: null\n");
        // The key `n` is a YAML 1.1 boolean, so it is quoted.
        assert_eq!(yaml(json!({"n": 1})), "\"n\": 1\n");
        assert_eq!(yaml(json!({"l": [null, true]})), "l:\n- null\n- true\n");
    }

    #[test]
    fn base60_and_timestamps() {
        assert!(is_base60_float("1:20"));
        assert!(is_base60_float("190:20:30.15"));
        assert!(!is_base60_float("1:60"));
        assert!(!is_base60_float("a:20"));
        assert!(is_timestamp("2001-12-14t21:59:43.10-05:00"));
        assert!(is_timestamp("2001-12-14 21:59:43.10"));
        assert!(!is_timestamp("2001-12-14 21:59:43.10 -5"));
        assert!(!is_timestamp("20011-12-14"));
    }

    /// The insertion sort of small maps, applied to any number of keys.
    fn insertion_sorted(keys: &[String]) -> Vec<&String> {
        let mut sorted: Vec<&String> = Vec::new();
        for key in keys {
            let at = sorted
                .iter()
                .position(|other| natural_less(key, other))
                .unwrap_or(sorted.len());
            sorted.insert(at, key);
        }
        sorted
    }

    #[test]
    fn large_maps_are_merged_into_the_order_small_ones_are_inserted_into() {
        let keys: Vec<String> = (0..500)
            .map(|i| match i % 4 {
                0 => format!("item{}", i * 7 % 311),
                1 => format!("Item-{i}"),
                2 => format!("_{}x{}", i % 13, i),
                _ => format!("a{}b", i * 3),
            })
            .collect();
        let map: Map<String, Value> = keys.iter().map(|k| (k.clone(), json!(1))).collect();
        let merged: Vec<&String> = sorted_entries(&map).into_iter().map(|(k, _)| k).collect();
        let map_keys: Vec<String> = map.keys().cloned().collect();
        assert_eq!(merged, insertion_sorted(&map_keys));
    }

    #[test]
    fn a_map_of_100000_keys_is_written_in_n_log_n_comparisons() {
        let map: Map<String, Value> = (0..100_000)
            .map(|i| (format!("key{i}"), json!(i)))
            .collect();
        let started = std::time::Instant::now();
        let text = yaml(Value::Object(map));
        // Seconds in a debug build; the insertion sort took hours.
        assert!(started.elapsed() < std::time::Duration::from_secs(60));
        assert!(
            text.starts_with("key0: 0\nkey1: 1\nkey2: 2\n"),
            "{}",
            &text[..40]
        );
        assert!(text.ends_with("key99999: 99999\n"));
    }
}
