//! What a scalar means under YAML 1.1 as go-yaml v2 resolves it (`resolve.go`), the YAML
//! library under `sigs.k8s.io/yaml`, so under kubectl and `crossplane render`.
//!
//! One resolver serves both directions: the reader ([`super::read`]) gives an untagged plain
//! scalar the type it resolves to, and the writer ([`super::emit`]) double-quotes a string whose
//! plain text would resolve to anything but a string.
//!
//! The rules, in go-yaml's order, for a scalar that is neither quoted nor tagged:
//! - the first character gives a hint; a scalar whose first character hints at nothing (a
//!   letter other than `yYnNtTfFoO`, `<`, `_`, ...) is a string without further checks;
//! - exact words: `y Y yes Yes YES true True TRUE on On ON` are true, the same with `n no false
//!   off` false, `"" ~ null Null NULL` null, `.inf .Inf .INF` (optionally signed) and `.nan .NaN
//!   .NAN` floats;
//! - starting with `.`: Go's `strconv.ParseFloat` of the whole text (`.5`, `.5e3`);
//! - starting with a digit or sign: a timestamp (`2006-1-2` and the time layouts) stays a string
//!   when read into a generic value but is quoted when written; otherwise, with every `_` removed,
//!   Go's `strconv.ParseInt(text, 0, 64)` (signs, `0x`, `0o`, `0b` and a leading `0` for octal),
//!   then `ParseUint` (up to 2^64-1), then the YAML float pattern with `ParseFloat`. A number out of
//!   range for all of them (`1e400`, `0x1_0000_0000_0000_0000`) stays a string.
//!
//! Base-60 numbers (`1:20`) are not resolved (go-yaml dropped them) but are still quoted when
//! written ([`is_base60_float`]).

/// What a scalar resolves to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Resolved {
    Null,
    Bool(bool),
    /// An integer that fits an int64.
    Int(i64),
    /// An integer from 2^63 to 2^64-1.
    Uint(u64),
    Float(f64),
    /// A YAML 1.1 timestamp: read into a generic value it stays the string it is.
    Timestamp,
    Str,
}

impl Resolved {
    /// go-yaml's short name of the resolved tag, for error messages.
    fn tag_name(self) -> &'static str {
        match self {
            Resolved::Null => "!!null",
            Resolved::Bool(_) => "!!bool",
            Resolved::Int(_) | Resolved::Uint(_) => "!!int",
            Resolved::Float(_) => "!!float",
            Resolved::Timestamp => "!!timestamp",
            Resolved::Str => "!!str",
        }
    }
}

/// The long tags of the YAML 1.1 types go-yaml resolves.
pub(super) const TAG_PREFIX: &str = "tag:yaml.org,2002:";
const RESOLVABLE: [&str; 6] = ["str", "bool", "int", "float", "null", "timestamp"];

/// An untagged plain scalar (go-yaml's `resolve("", text)`).
pub(super) fn resolve_plain(text: &str) -> Resolved {
    resolve_hinted(text, true)
}

/// A scalar with an explicit tag (`!!int "12"`, `!!str 12`), given in its long form. Tags
/// go-yaml does not resolve (`!custom`, `!`) leave the text a string; `!!binary` is decoded by
/// the reader. A tag that does not fit the text is an error, as in go-yaml, except that an
/// integer is accepted as `!!float`.
pub(super) fn resolve_tagged(tag: &str, text: &str) -> Result<Resolved, String> {
    let Some(name) = tag
        .strip_prefix(TAG_PREFIX)
        .filter(|n| RESOLVABLE.contains(n))
    else {
        return Ok(Resolved::Str);
    };
    if name == "str" {
        return Ok(Resolved::Str);
    }
    let resolved = resolve_hinted(text, name == "timestamp");
    let fits = match (name, resolved) {
        ("bool", Resolved::Bool(_))
        | ("int", Resolved::Int(_) | Resolved::Uint(_))
        | ("float", Resolved::Float(_))
        | ("null", Resolved::Null)
        | ("timestamp", Resolved::Timestamp) => true,
        ("float", Resolved::Int(i)) => return Ok(Resolved::Float(i as f64)),
        _ => false,
    };
    if fits {
        Ok(resolved)
    } else {
        Err(format!(
            "cannot decode {} `{text}` as a !!{name}",
            resolved.tag_name()
        ))
    }
}

/// go-yaml's `resolve` for a text that may resolve; `timestamps` says whether a timestamp is
/// looked for (only untagged scalars and `!!timestamp` ones).
fn resolve_hinted(text: &str, timestamps: bool) -> Resolved {
    let hint = match text.bytes().next() {
        None => return Resolved::Null,
        Some(b'+' | b'-') => Hint::Sign,
        Some(b'0'..=b'9') => Hint::Digit,
        Some(b'y' | b'Y' | b'n' | b'N' | b't' | b'T' | b'f' | b'F' | b'o' | b'O' | b'~') => {
            Hint::Word
        }
        Some(b'.') => Hint::Dot,
        Some(_) => return Resolved::Str,
    };
    if let Some(word) = known_word(text) {
        return word;
    }
    match hint {
        Hint::Word => Resolved::Str,
        Hint::Dot => go_parse_dot_float(text).map_or(Resolved::Str, Resolved::Float),
        Hint::Sign | Hint::Digit => {
            if timestamps && is_timestamp(text) {
                return Resolved::Timestamp;
            }
            number(&text.replace('_', "")).unwrap_or(Resolved::Str)
        }
    }
}

#[derive(Clone, Copy)]
enum Hint {
    Sign,
    Digit,
    Word,
    Dot,
}

/// The words go-yaml looks up before anything else.
fn known_word(text: &str) -> Option<Resolved> {
    Some(match text {
        "y" | "Y" | "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => {
            Resolved::Bool(true)
        }
        "n" | "N" | "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => {
            Resolved::Bool(false)
        }
        "~" | "null" | "Null" | "NULL" => Resolved::Null,
        ".nan" | ".NaN" | ".NAN" => Resolved::Float(f64::NAN),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => Resolved::Float(f64::INFINITY),
        "-.inf" | "-.Inf" | "-.INF" => Resolved::Float(f64::NEG_INFINITY),
        _ => return None,
    })
}

/// An integer or float from a text without underscores, tried as go-yaml tries them. (go-yaml
/// then tries `0b`/`-0b` binary once more; `ParseInt` with base 0 already accepted every such
/// text that fits, so that branch never resolves anything new.)
fn number(plain: &str) -> Option<Resolved> {
    if let Some(i) = go_parse_int(plain) {
        return Some(Resolved::Int(i));
    }
    if let Some(u) = go_parse_uint(plain) {
        return Some(Resolved::Uint(u));
    }
    if is_yaml_style_float(plain) {
        return go_parse_decimal_float(plain).map(Resolved::Float);
    }
    None
}

// ---- Go's strconv, as far as resolution uses it ----

/// `strconv.ParseInt(s, 0, 64)`: an optional sign, then `ParseUint` with base 0.
fn go_parse_int(s: &str) -> Option<i64> {
    let (negative, digits) = match s.as_bytes().first()? {
        b'+' => (false, &s[1..]),
        b'-' => (true, &s[1..]),
        _ => (false, s),
    };
    let magnitude = go_parse_uint(digits)?;
    if negative {
        0i64.checked_sub_unsigned(magnitude)
    } else {
        i64::try_from(magnitude).ok()
    }
}

/// `strconv.ParseUint(s, 0, 64)` for a text without underscores: `0b`, `0o` or `0x` (either
/// case, with at least one digit after it) picks the base, any other leading `0` means octal.
fn go_parse_uint(s: &str) -> Option<u64> {
    let bytes = s.as_bytes();
    let (radix, digits) = match bytes {
        [] => return None,
        [b'0', b'b' | b'B', _, ..] => (2, &s[2..]),
        [b'0', b'o' | b'O', _, ..] => (8, &s[2..]),
        [b'0', b'x' | b'X', _, ..] => (16, &s[2..]),
        [b'0', ..] => (8, &s[1..]),
        _ => (10, s),
    };
    let mut value: u64 = 0;
    for c in digits.chars() {
        let digit = c.to_digit(radix)?;
        value = value
            .checked_mul(u64::from(radix))?
            .checked_add(u64::from(digit))?;
    }
    Some(value)
}

/// `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`, go-yaml's float pattern.
fn is_yaml_style_float(s: &str) -> bool {
    let s = s.strip_prefix(['+', '-']).unwrap_or(s);
    let (mantissa, exponent) = match s.find(['e', 'E']) {
        Some(at) => (&s[..at], Some(&s[at + 1..])),
        None => (s, None),
    };
    let mantissa_ok = match mantissa.split_once('.') {
        Some(("", fraction)) => !fraction.is_empty() && all_digits(fraction),
        Some((whole, fraction)) => !whole.is_empty() && all_digits(whole) && all_digits(fraction),
        None => !mantissa.is_empty() && all_digits(mantissa),
    };
    let exponent_ok = exponent.is_none_or(|e| {
        let e = e.strip_prefix(['+', '-']).unwrap_or(e);
        !e.is_empty() && all_digits(e)
    });
    mantissa_ok && exponent_ok
}

/// `strconv.ParseFloat(s, 64)` for a text of the float pattern: `None` when it overflows (Go
/// reports a range error; an underflow to zero is no error).
fn go_parse_decimal_float(s: &str) -> Option<f64> {
    s.parse::<f64>().ok().filter(|f| f.is_finite())
}

/// `strconv.ParseFloat(s, 64)` for a text that starts with `.`: digits after the point, an
/// optional exponent, and no `_` (Go accepts underscores only after a base prefix).
fn go_parse_dot_float(s: &str) -> Option<f64> {
    let rest = s.strip_prefix('.')?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let exponent = &rest[digits..];
    let exponent_ok = exponent.is_empty()
        || exponent
            .strip_prefix(['e', 'E'])
            .map(|e| e.strip_prefix(['+', '-']).unwrap_or(e))
            .is_some_and(|e| !e.is_empty() && all_digits(e));
    if digits == 0 || !exponent_ok {
        return None;
    }
    go_parse_decimal_float(s)
}

fn all_digits(s: &str) -> bool {
    s.bytes().all(|b| b.is_ascii_digit())
}

// ---- base 60 and timestamps ----

/// `^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$`: a YAML 1.1 base-60 number, which
/// go-yaml no longer reads as a number but still quotes when it writes one.
pub(super) fn is_base60_float(s: &str) -> bool {
    let s = s.strip_prefix(['+', '-']).unwrap_or(s);
    let (main, fraction) = match s.split_once('.') {
        Some((main, fraction)) => (main, Some(fraction)),
        None => (s, None),
    };
    if fraction.is_some_and(|f| !f.bytes().all(|b| b.is_ascii_digit() || b == b'_')) {
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

/// go-yaml's timestamp check: `YYYY-` followed by one of the layouts `2006-1-2`,
/// `2006-1-2T15:4:5.999999999Z07:00` (also with `t`) and `2006-1-2 15:4:5.999999999`, as Go's
/// `time.Parse` reads them.
pub(super) fn is_timestamp(s: &str) -> bool {
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

/// Month and day after the year (1 or 2 digits each, the day within the month as Go checks
/// it); returns the rest.
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
        Some(fraction) => {
            let digits = fraction.bytes().take_while(u8::is_ascii_digit).count();
            (digits > 0).then(|| &fraction[digits..])
        }
        None => Some(rest),
    }
}

/// `Z` or `±hh:mm` (Go allows hours up to 24 and minutes up to 60 there); returns the rest.
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

#[cfg(test)]
mod tests {
    //! Expectations are go-yaml v2's, checked against Go by tests/go_yaml.rs where Go is
    //! installed.
    use super::*;

    #[test]
    fn yaml_1_1_booleans_and_nulls() {
        for word in [
            "y", "Y", "yes", "Yes", "YES", "on", "On", "ON", "true", "True", "TRUE",
        ] {
            assert_eq!(resolve_plain(word), Resolved::Bool(true), "{word}");
        }
        for word in [
            "n", "N", "no", "No", "NO", "off", "Off", "OFF", "false", "False", "FALSE",
        ] {
            assert_eq!(resolve_plain(word), Resolved::Bool(false), "{word}");
        }
        for word in ["", "~", "null", "Null", "NULL"] {
            assert_eq!(resolve_plain(word), Resolved::Null, "{word}");
        }
        for word in ["yES", "oN", "nULL", "Nope", "tru", "<<", "_1"] {
            assert_eq!(resolve_plain(word), Resolved::Str, "{word}");
        }
    }

    #[test]
    fn integers_with_bases_signs_and_separators() {
        let cases = [
            ("012", 10),
            ("0o17", 15),
            ("0O17", 15),
            ("0x1F", 31),
            ("0X1f", 31),
            ("0b101", 5),
            ("-0b101", -5),
            ("1_000", 1000),
            ("1__0_", 10),
            ("+12", 12),
            ("-0x10", -16),
            ("0", 0),
            ("-0", 0),
            ("-9223372036854775808", i64::MIN),
            ("9223372036854775807", i64::MAX),
        ];
        for (text, value) in cases {
            assert_eq!(resolve_plain(text), Resolved::Int(value), "{text}");
        }
        assert_eq!(
            resolve_plain("18446744073709551615"),
            Resolved::Uint(u64::MAX)
        );
        assert_eq!(resolve_plain("0x8000000000000000"), Resolved::Uint(1 << 63));
    }

    #[test]
    fn floats_and_what_overflows() {
        assert_eq!(resolve_plain("08"), Resolved::Float(8.0));
        assert_eq!(resolve_plain("1.5"), Resolved::Float(1.5));
        assert_eq!(resolve_plain("1."), Resolved::Float(1.0));
        assert_eq!(resolve_plain(".5"), Resolved::Float(0.5));
        assert_eq!(resolve_plain("-.5e3"), Resolved::Float(-500.0));
        assert_eq!(resolve_plain("1_0.5"), Resolved::Float(10.5));
        assert_eq!(
            resolve_plain("-18446744073709551616"),
            Resolved::Float(-18446744073709551616.0)
        );
        assert!(matches!(resolve_plain(".NaN"), Resolved::Float(f) if f.is_nan()));
        assert_eq!(resolve_plain("-.inf"), Resolved::Float(f64::NEG_INFINITY));
        // Out of range for every parser: a string.
        for text in [
            "1e400",
            ".5e400",
            "0x10000000000000000",
            "0b2",
            "0x",
            "._5",
            ".5_0",
            ".",
        ] {
            assert_eq!(resolve_plain(text), Resolved::Str, "{text}");
        }
    }

    #[test]
    fn timestamps_and_base_60() {
        assert_eq!(resolve_plain("2001-12-14"), Resolved::Timestamp);
        assert_eq!(
            resolve_plain("2001-12-14t21:59:43.10-05:00"),
            Resolved::Timestamp
        );
        assert_eq!(resolve_plain("2001-12-14 21:59:43.10"), Resolved::Timestamp);
        assert_eq!(resolve_plain("2001-12-14 21:59:43.10 -5"), Resolved::Str);
        assert_eq!(resolve_plain("2023-02-29"), Resolved::Str);
        assert_eq!(resolve_plain("1:20"), Resolved::Str);
        assert!(is_base60_float("1:20"));
        assert!(is_base60_float("190:20:30.15"));
        assert!(!is_base60_float("1:60"));
        assert!(!is_base60_float("a:20"));
    }

    #[test]
    fn explicit_tags() {
        let int = format!("{TAG_PREFIX}int");
        let float = format!("{TAG_PREFIX}float");
        let string = format!("{TAG_PREFIX}str");
        assert_eq!(resolve_tagged(&int, "12"), Ok(Resolved::Int(12)));
        assert_eq!(resolve_tagged(&float, "1"), Ok(Resolved::Float(1.0)));
        assert_eq!(resolve_tagged(&string, "yes"), Ok(Resolved::Str));
        assert_eq!(resolve_tagged("!custom", "12"), Ok(Resolved::Str));
        assert_eq!(
            resolve_tagged(&int, "abc"),
            Err("cannot decode !!str `abc` as a !!int".into())
        );
        assert_eq!(
            resolve_tagged(&float, "18446744073709551615"),
            Err("cannot decode !!int `18446744073709551615` as a !!float".into())
        );
    }
}
