//! The values of literal tokens, as cel-go reads them: numbers that must fit their type, and
//! strings and bytes with their escapes undone.

/// An int literal, `negative` when the grammar's sign came before it.
pub(super) fn int(text: &str, negative: bool) -> Option<i64> {
    let (radix, digits) = match text.strip_prefix("0x") {
        Some(hex) => (16, hex),
        None => (10, text),
    };
    let magnitude = u64::from_str_radix(digits, radix).ok()?;
    if negative {
        0i64.checked_sub_unsigned(magnitude)
    } else {
        i64::try_from(magnitude).ok()
    }
}

/// A uint literal (its `u` suffix included).
pub(super) fn uint(text: &str) -> Option<u64> {
    let digits = &text[..text.len() - 1];
    match digits.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => digits.parse().ok(),
    }
}

/// A double literal; an infinite one is refused.
pub(super) fn double(text: &str, negative: bool) -> Option<f64> {
    let value: f64 = text.parse().ok()?;
    let value = if negative { -value } else { value };
    value.is_finite().then_some(value)
}

/// A string literal's text (quotes and prefix included) as a string.
pub(super) fn string(literal: &str) -> Result<String, String> {
    String::from_utf8(unescape(literal, false)?)
        .map_err(|_| "the escapes make invalid UTF-8".to_owned())
}

/// A bytes literal's text (its `b` prefix included) as bytes.
pub(super) fn bytes(literal: &str) -> Result<Vec<u8>, String> {
    unescape(&literal[1..], true)
}

/// The content of a literal: its quotes and raw prefix taken off, its line breaks made `\n`,
/// and its escapes undone unless it is raw. In bytes, `\x` and octal escapes are bytes and
/// `\u` is refused; in strings they are code points.
fn unescape(literal: &str, in_bytes: bool) -> Result<Vec<u8>, String> {
    let (raw, quoted) = match literal.strip_prefix(['r', 'R']) {
        Some(rest) => (true, rest),
        None => (false, literal),
    };
    let quotes = if quoted.len() >= 6 && (quoted.starts_with("'''") || quoted.starts_with("\"\"\""))
    {
        3
    } else {
        1
    };
    let content = &quoted[quotes..quoted.len() - quotes];
    let content = content.replace("\r\n", "\n").replace('\r', "\n");
    if raw || !content.contains('\\') {
        return Ok(content.into_bytes());
    }
    let mut out = Vec::with_capacity(content.len());
    let mut chars = content.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            let mut buf = [0u8; 4];
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            continue;
        }
        let escape = chars.next().unwrap_or('\\');
        let code = match escape {
            'a' => 0x07,
            'b' => 0x08,
            'f' => 0x0c,
            'n' => 0x0a,
            'r' => 0x0d,
            't' => 0x09,
            'v' => 0x0b,
            '\\' | '\'' | '"' | '`' | '?' => escape as u32,
            'x' | 'X' => digits(&mut chars, 2, 16)?,
            'u' | 'U' if in_bytes => return Err(format!("\\{escape} is not allowed in bytes")),
            'u' => digits(&mut chars, 4, 16)?,
            'U' => digits(&mut chars, 8, 16)?,
            '0'..='3' => (escape as u32 - '0' as u32) * 64 + digits(&mut chars, 2, 8)?,
            other => return Err(format!("\\{other} is not an escape")),
        };
        let is_byte = in_bytes && !matches!(escape, 'u' | 'U');
        if is_byte && code <= 0xff {
            out.push(code as u8);
        } else {
            let c = char::from_u32(code)
                .ok_or_else(|| format!("\\{escape} names {code:#x}, which is not a character"))?;
            let mut buf = [0u8; 4];
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
        }
    }
    Ok(out)
}

/// The value of the next `count` digits in `radix`.
fn digits(chars: &mut std::str::Chars<'_>, count: usize, radix: u32) -> Result<u32, String> {
    (0..count).try_fold(0u32, |value, _| {
        let digit = chars
            .next()
            .and_then(|c| c.to_digit(radix))
            .ok_or_else(|| "an escape is cut short".to_owned())?;
        Ok(value * radix + digit)
    })
}
