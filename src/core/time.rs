//! Time as Kubernetes and Go write it: RFC 3339 times in annotations and
//! conditions, and Go durations (`60s`, `1m30s`) in the function input and in
//! `render`'s flags.
//!
//! The core compares times (leaked creations) and reads the input's `ttl`;
//! `render` normalises times to UTC and reads and prints durations. None of it
//! needs a clock or a date library.

use std::time::Duration;

/// A point in time: seconds since 1970-01-01T00:00:00Z and nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Instant {
    /// Whole seconds since the epoch.
    pub seconds: i64,
    /// Nanoseconds past `seconds`, below 1,000,000,000.
    pub nanos: u32,
}

/// Parses `2026-11-01T10:00:00Z`, `...:00.5+02:00` and the like; `None` for
/// anything else, including impossible dates.
pub(crate) fn parse_rfc3339(text: &str) -> Option<Instant> {
    let b = text.as_bytes();
    let digits = |range: std::ops::Range<usize>| -> Option<i64> {
        let part = text.get(range)?;
        part.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| part.parse().ok())?
    };
    let separators = b.len() >= 20
        && b[4] == b'-'
        && b[7] == b'-'
        && matches!(b[10], b'T' | b't')
        && b[13] == b':'
        && b[16] == b':';
    if !separators {
        return None;
    }
    let (year, month, day) = (digits(0..4)?, digits(5..7)?, digits(8..10)?);
    let (hour, minute, second) = (digits(11..13)?, digits(14..16)?, digits(17..19)?);
    let valid = (1..=12).contains(&month)
        && day >= 1
        && day <= days_in_month(year, month)
        && hour < 24
        && minute < 60
        && second < 60;
    let mut rest = &text[19..];
    let mut nanos = 0;
    if let Some(fraction) = rest.strip_prefix('.') {
        let len = fraction.bytes().take_while(u8::is_ascii_digit).count();
        if len == 0 {
            return None;
        }
        nanos = format!("{:0<9}", &fraction[..len.min(9)]).parse().ok()?;
        rest = &fraction[len..];
    }
    let offset = zone_offset(rest)?;
    if !valid {
        return None;
    }
    let seconds =
        days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second - offset;
    Some(Instant { seconds, nanos })
}

/// `Z` or `±hh:mm` as seconds east of UTC.
fn zone_offset(zone: &str) -> Option<i64> {
    if zone == "Z" || zone == "z" {
        return Some(0);
    }
    let sign = match zone.as_bytes().first()? {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    let b = zone.as_bytes();
    let ok = b.len() == 6 && b[3] == b':' && [1, 2, 4, 5].iter().all(|i| b[*i].is_ascii_digit());
    let (hours, minutes): (i64, i64) =
        (zone.get(1..3)?.parse().ok()?, zone.get(4..6)?.parse().ok()?);
    (ok && hours < 24 && minutes < 60).then_some(sign * (hours * 3600 + minutes * 60))
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// A text that is not a Go duration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid duration {0:?}")]
pub(crate) struct InvalidDuration(pub String);

/// Nanoseconds in each unit Go's `time.ParseDuration` knows.
const UNITS: [(&str, u128); 8] = [
    ("ns", 1),
    ("us", 1_000),
    ("µs", 1_000),
    ("μs", 1_000),
    ("ms", 1_000_000),
    ("s", 1_000_000_000),
    ("m", 60_000_000_000),
    ("h", 3_600_000_000_000),
];

/// Parses a duration as Go's `time.ParseDuration` does: `0`, or a sequence of
/// decimal numbers, each with a unit (`ns`, `us`, `µs`, `ms`, `s`, `m`, `h`),
/// such as `1m30s`, `1.5h` or `250ms`, with an optional leading `+`. Exact
/// (integer arithmetic); negative durations and those over Go's limit (about
/// 292 years) are refused.
pub(crate) fn parse_go_duration(text: &str) -> Result<Duration, InvalidDuration> {
    let invalid = || InvalidDuration(text.to_owned());
    let mut rest = text.strip_prefix('+').unwrap_or(text);
    if rest == "0" {
        return Ok(Duration::ZERO);
    }
    if rest.is_empty() {
        return Err(invalid());
    }
    let mut nanos: u128 = 0;
    while !rest.is_empty() {
        let (whole, after) = split_digits(rest);
        let (fraction, after) = match after.strip_prefix('.') {
            Some(after) => split_digits(after),
            None => ("", after),
        };
        if whole.is_empty() && fraction.is_empty() {
            return Err(invalid());
        }
        let unit_len = after
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(after.len());
        let (unit, after) = after.split_at(unit_len);
        let (_, scale) = UNITS
            .iter()
            .find(|(name, _)| *name == unit)
            .ok_or_else(invalid)?;
        nanos = nanos
            .checked_add(component_nanos(whole, fraction, *scale).ok_or_else(invalid)?)
            .ok_or_else(invalid)?;
        rest = after;
    }
    if nanos > i64::MAX as u128 {
        return Err(invalid());
    }
    Ok(Duration::from_nanos(nanos as u64))
}

/// `text` split after its leading ASCII digits.
fn split_digits(text: &str) -> (&str, &str) {
    text.split_at(
        text.find(|c: char| !c.is_ascii_digit())
            .unwrap_or(text.len()),
    )
}

/// `whole.fraction` units of `scale` nanoseconds each, the fraction truncated
/// to whole nanoseconds as Go does; `None` on overflow.
fn component_nanos(whole: &str, fraction: &str, scale: u128) -> Option<u128> {
    let whole: u128 = if whole.is_empty() {
        0
    } else {
        whole.parse().ok()?
    };
    let mut total = whole.checked_mul(scale)?;
    let mut divisor: u128 = 1;
    let mut part: u128 = 0;
    // 18 digits are finer than a nanosecond of an hour; Go drops the rest too.
    for digit in fraction.bytes().take(18) {
        part = part * 10 + u128::from(digit - b'0');
        divisor *= 10;
    }
    total = total.checked_add(part * scale / divisor)?;
    Some(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_compare_across_fractions_and_offsets() {
        let a = parse_rfc3339("2026-11-01T10:00:00Z").unwrap();
        let b = parse_rfc3339("2026-11-01T10:00:00.5Z").unwrap();
        let c = parse_rfc3339("2026-11-01T11:00:01+01:00").unwrap();
        assert!(a < b && b < c);
        assert_eq!(
            parse_rfc3339("1970-01-01T00:00:00Z"),
            Some(Instant {
                seconds: 0,
                nanos: 0
            })
        );
        assert_eq!(parse_rfc3339("yesterday"), None);
        assert_eq!(parse_rfc3339("2024-02-30T00:00:00Z"), None);
    }

    #[test]
    fn go_durations_parse_as_go_parses_them() {
        let ok = |text: &str, nanos: u64| {
            assert_eq!(
                parse_go_duration(text),
                Ok(Duration::from_nanos(nanos)),
                "{text}"
            );
        };
        ok("0", 0);
        ok("+0", 0);
        ok("0s", 0);
        ok("60s", 60_000_000_000);
        ok("1m30s", 90_000_000_000);
        ok("1.5h", 5_400_000_000_000);
        ok("1.5s", 1_500_000_000);
        ok(".5s", 500_000_000);
        ok("5.s", 5_000_000_000);
        ok("250ms", 250_000_000);
        ok("1µs", 1_000);
        ok("1us2ns", 1_002);
        ok("0.1s", 100_000_000);
        ok("1.0000000009s", 1_000_000_000);
        ok("2562047h47m16.854775807s", i64::MAX as u64);
        for text in [
            "",
            "+",
            "-1s",
            "60",
            "s",
            "1d",
            "1.5",
            ".s",
            "1..5s",
            "1s5",
            "soon",
            "1 s",
            "2562047h47m16.854775808s",
            "99999999999999999999999999999999999999999h",
        ] {
            assert_eq!(
                parse_go_duration(text),
                Err(InvalidDuration(text.to_owned())),
                "{text}"
            );
        }
        assert_eq!(
            parse_go_duration("soon").unwrap_err().to_string(),
            "invalid duration \"soon\""
        );
    }
}
