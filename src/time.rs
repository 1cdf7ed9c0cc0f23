//! RFC 3339 times, as Kubernetes writes them in annotations and conditions.
//!
//! The core compares them (leaked creations) and `render` normalises them to
//! UTC; neither needs a clock or a date library for that.

/// A point in time: seconds since 1970-01-01T00:00:00Z and nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Instant {
    pub seconds: i64,
    pub nanos: u32,
}

/// Parses `2026-11-01T10:00:00Z`, `...:00.5+02:00` and the like; `None` for
/// anything else, including impossible dates.
pub fn parse_rfc3339(text: &str) -> Option<Instant> {
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

/// Seconds since the epoch as `2006-01-02T15:04:05Z`.
pub fn format_utc(seconds: i64) -> String {
    let (days, secs) = (seconds.div_euclid(86_400), seconds.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
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
    fn formats_round_trip() {
        for text in [
            "1970-01-01T00:00:00Z",
            "2024-02-29T23:59:59Z",
            "2026-11-21T21:06:26Z",
        ] {
            assert_eq!(format_utc(parse_rfc3339(text).unwrap().seconds), text);
        }
    }
}
