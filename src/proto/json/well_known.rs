//! The well-known types as the JSON mapping writes them: `Struct` as a plain object,
//! `Duration` as `"1.5s"`, `bytes` in base64.

use super::*;

pub(super) fn struct_to_json(object: &Struct) -> Value {
    Value::Object(object.fields().clone())
}

pub(super) fn struct_from_json(r: &Reader) -> Parsed<Struct> {
    Ok(wire_struct(r.object))
}

/// A JSON object as a `Struct`, its numbers as the wire format would carry them.
pub fn wire_struct(object: &Map<String, Value>) -> Struct {
    Struct::from(normalize_object(object))
}

/// Numbers as the wire format carries them: doubles, integral ones as integers.
pub(super) fn normalize(value: &Value) -> Value {
    match value {
        Value::Number(n) => json_number(n.as_f64().unwrap_or(0.0)),
        Value::Array(items) => Value::Array(items.iter().map(normalize).collect()),
        Value::Object(map) => Value::Object(normalize_object(map)),
        other => other.clone(),
    }
}

pub(super) fn normalize_object(map: &Map<String, Value>) -> Map<String, Value> {
    object_of(map.iter().map(|(k, v)| (k.clone(), normalize(v))))
}

/// A JSON object built by inserting: collecting into one sorts first, one more copy of the sort
/// in the WebAssembly builds (as `core::sorted` says).
pub(super) fn object_of(members: impl IntoIterator<Item = (String, Value)>) -> Map<String, Value> {
    let mut object = Map::new();
    object.extend(members);
    object
}

/// `"60s"`, `"1.500s"`, `"-0.000000001s"`: 0, 3, 6 or 9 fractional digits.
pub fn duration_to_json(duration: &prost_types::Duration) -> String {
    let negative = duration.seconds < 0 || duration.nanos < 0;
    let seconds = duration.seconds.unsigned_abs();
    let nanos = duration.nanos.unsigned_abs();
    let sign = if negative { "-" } else { "" };
    if nanos == 0 {
        format!("{sign}{seconds}s")
    } else if nanos % 1_000_000 == 0 {
        format!("{sign}{seconds}.{:03}s", nanos / 1_000_000)
    } else if nanos % 1_000 == 0 {
        format!("{sign}{seconds}.{:06}s", nanos / 1_000)
    } else {
        format!("{sign}{seconds}.{nanos:09}s")
    }
}

/// The inverse of [`duration_to_json`]; up to 9 fractional digits.
pub fn duration_from_json(text: &str) -> Option<prost_types::Duration> {
    let body = text.strip_suffix('s')?;
    let (negative, body) = match body.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, body),
    };
    let (whole, fraction) = match body.split_once('.') {
        Some((whole, fraction)) => (whole, fraction),
        None => (body, ""),
    };
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() || !digits(whole) || !digits(fraction) || fraction.len() > 9 {
        return None;
    }
    if body.ends_with('.') {
        return None;
    }
    let seconds: i64 = whole.parse().ok()?;
    let nanos: i32 = if fraction.is_empty() {
        0
    } else {
        format!("{fraction:0<9}").parse().ok()?
    };
    // The range of google.protobuf.Duration: about ±10,000 years.
    if seconds > 315_576_000_000 {
        return None;
    }
    Some(if negative {
        prost_types::Duration {
            seconds: -seconds,
            nanos: -nanos,
        }
    } else {
        prost_types::Duration { seconds, nanos }
    })
}

/// Standard base64 with padding, as the JSON mapping writes `bytes`.
pub fn base64_encode(bytes: &[u8]) -> String {
    STANDARD.encode(bytes)
}

/// Standard or URL-safe base64, padding optional, as the JSON mapping reads
/// `bytes`; like Go's decoder, unused bits of the last character are ignored.
pub fn base64_decode(text: &str) -> Option<Vec<u8>> {
    const LENIENT: GeneralPurposeConfig = GeneralPurposeConfig::new()
        .with_decode_padding_mode(DecodePaddingMode::Indifferent)
        .with_decode_allow_trailing_bits(true);
    const STANDARD_LENIENT: GeneralPurpose = GeneralPurpose::new(&alphabet::STANDARD, LENIENT);
    const URL_SAFE_LENIENT: GeneralPurpose = GeneralPurpose::new(&alphabet::URL_SAFE, LENIENT);
    let url_safe = text.bytes().any(|b| b == b'-' || b == b'_');
    let engine = if url_safe {
        &URL_SAFE_LENIENT
    } else {
        &STANDARD_LENIENT
    };
    engine.decode(text).ok()
}
