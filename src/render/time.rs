//! Times and durations as `render` prints them: the core parses them (`core::time`), and only
//! this face writes them.

use std::time::Duration;

/// Seconds since the epoch as `2006-01-02T15:04:05Z`.
pub(super) fn format_utc(seconds: i64) -> String {
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

/// A duration as Go's `time.Duration.String` prints whole seconds and up
/// (`1m0s`, `1h0m0s`, `30s`, `1.5s`); below a second, in milliseconds.
pub(super) fn format_go_duration(duration: Duration) -> String {
    let secs = duration.as_secs();
    if secs == 0 {
        return format!("{}ms", duration.as_millis());
    }
    let (hours, minutes, seconds) = (secs / 3600, secs / 60 % 60, secs % 60);
    let frac = duration.subsec_millis();
    let seconds = match frac {
        0 => format!("{seconds}s"),
        _ => format!("{seconds}.{}s", format!("{frac:03}").trim_end_matches('0')),
    };
    match (hours, minutes) {
        (0, 0) => seconds,
        (0, m) => format!("{m}m{seconds}"),
        (h, m) => format!("{h}h{m}m{seconds}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::time::{parse_go_duration, parse_rfc3339};

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

    #[test]
    fn go_durations_print_as_go_prints_them() {
        for (duration, text) in [
            (Duration::from_secs(60), "1m0s"),
            (Duration::from_secs(30), "30s"),
            (Duration::from_secs(3725), "1h2m5s"),
            (Duration::from_millis(1500), "1.5s"),
            (Duration::from_millis(250), "250ms"),
        ] {
            assert_eq!(format_go_duration(duration), text);
            assert_eq!(parse_go_duration(text), Ok(duration));
        }
    }
}
