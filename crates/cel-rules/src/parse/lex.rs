//! CEL's tokens, as the grammar's lexer (CEL.g4, which cel-go and the `cel` crate generate
//! theirs from) cuts them: at each place the longest token that matches, a keyword before an
//! identifier of the same text; whitespace and `//` comments between tokens; a character no
//! token starts with, or a string that does not end, is an error.

use super::Error;

/// The operators and punctuation.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Op {
    Equals,
    NotEquals,
    Less,
    LessEquals,
    GreaterEquals,
    Greater,
    And,
    Or,
    LeftBracket,
    RightBracket,
    LeftBrace,
    RightBrace,
    LeftParen,
    RightParen,
    Dot,
    Comma,
    Minus,
    Not,
    Question,
    Colon,
    Plus,
    Star,
    Slash,
    Percent,
    In,
}

/// One token; the literals keep their source text, which [`super::literal`] reads.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Token<'s> {
    Op(Op),
    Identifier(&'s str),
    /// A backquoted identifier, which the API server's parser does not enable.
    EscapedIdentifier,
    Int(&'s str),
    Uint(&'s str),
    Float(&'s str),
    String(&'s str),
    Bytes(&'s str),
    True,
    False,
    Null,
    End,
}

/// A token and the byte offset it starts at.
#[derive(Clone, Copy, Debug)]
pub(super) struct Spanned<'s> {
    pub token: Token<'s>,
    pub at: usize,
}

/// The tokens of `source`, ending with [`Token::End`].
pub(super) fn tokens(source: &str) -> Result<Vec<Spanned<'_>>, Error> {
    let bytes = source.as_bytes();
    let mut out = Vec::new();
    let mut at = 0;
    loop {
        at = skip_hidden(bytes, at);
        let Some(&first) = bytes.get(at) else {
            out.push(Spanned {
                token: Token::End,
                at,
            });
            return Ok(out);
        };
        let (token, len) = token(source, at, first).ok_or_else(|| {
            Error::at(
                at,
                format!("unexpected character {:?}", char_at(source, at)),
            )
        })?;
        out.push(Spanned { token, at });
        at += len;
    }
}

fn char_at(source: &str, at: usize) -> char {
    source[at..].chars().next().unwrap_or('\0')
}

/// The offset of the next token: past whitespace and comments.
fn skip_hidden(bytes: &[u8], mut at: usize) -> usize {
    loop {
        match bytes.get(at) {
            Some(b' ' | b'\t' | b'\r' | b'\n' | b'\x0c') => at += 1,
            Some(b'/') if bytes.get(at + 1) == Some(&b'/') => {
                while at < bytes.len() && bytes[at] != b'\n' {
                    at += 1;
                }
            }
            _ => return at,
        }
    }
}

/// The token at `at` and its length, if one starts there.
fn token(source: &str, at: usize, first: u8) -> Option<(Token<'_>, usize)> {
    let rest = &source.as_bytes()[at..];
    let op = |op, len| Some((Token::Op(op), len));
    let second = rest.get(1).copied();
    match first {
        b'=' if second == Some(b'=') => op(Op::Equals, 2),
        b'!' if second == Some(b'=') => op(Op::NotEquals, 2),
        b'<' if second == Some(b'=') => op(Op::LessEquals, 2),
        b'>' if second == Some(b'=') => op(Op::GreaterEquals, 2),
        b'&' if second == Some(b'&') => op(Op::And, 2),
        b'|' if second == Some(b'|') => op(Op::Or, 2),
        b'<' => op(Op::Less, 1),
        b'>' => op(Op::Greater, 1),
        b'[' => op(Op::LeftBracket, 1),
        b']' => op(Op::RightBracket, 1),
        b'{' => op(Op::LeftBrace, 1),
        b'}' => op(Op::RightBrace, 1),
        b'(' => op(Op::LeftParen, 1),
        b')' => op(Op::RightParen, 1),
        b'.' if second.is_some_and(|c| c.is_ascii_digit()) => number(source, at),
        b'.' => op(Op::Dot, 1),
        b',' => op(Op::Comma, 1),
        b'-' => op(Op::Minus, 1),
        b'!' => op(Op::Not, 1),
        b'?' => op(Op::Question, 1),
        b':' => op(Op::Colon, 1),
        b'+' => op(Op::Plus, 1),
        b'*' => op(Op::Star, 1),
        b'/' => op(Op::Slash, 1),
        b'%' => op(Op::Percent, 1),
        b'0'..=b'9' => number(source, at),
        b'"' | b'\'' => string(rest, false).map(|len| (Token::String(&source[at..at + len]), len)),
        b'`' => escaped_identifier(rest).map(|len| (Token::EscapedIdentifier, len)),
        c if c.is_ascii_alphabetic() || c == b'_' => Some(word(source, at)),
        _ => None,
    }
}

/// An identifier, a keyword, or a string or bytes literal with its prefix (`r`, `b`, `br`...),
/// whichever is longest.
fn word(source: &str, at: usize) -> (Token<'_>, usize) {
    let rest = &source.as_bytes()[at..];
    let len = rest
        .iter()
        .position(|c| !(c.is_ascii_alphanumeric() || *c == b'_'))
        .unwrap_or(rest.len());
    let text = &source[at..at + len];
    let prefixed = match text {
        "r" | "R" => {
            string(&rest[1..], true).map(|n| (Token::String(&source[at..at + 1 + n]), 1 + n))
        }
        "b" | "B" => {
            string(&rest[1..], false).map(|n| (Token::Bytes(&source[at..at + 1 + n]), 1 + n))
        }
        "br" | "bR" | "Br" | "BR" => {
            string(&rest[2..], true).map(|n| (Token::Bytes(&source[at..at + 2 + n]), 2 + n))
        }
        _ => None,
    };
    if let Some(literal) = prefixed {
        return literal;
    }
    let token = match text {
        "in" => Token::Op(Op::In),
        "true" => Token::True,
        "false" => Token::False,
        "null" => Token::Null,
        _ => Token::Identifier(text),
    };
    (token, len)
}

/// The length of the string literal at the start of `rest` (quotes included, prefix not), if
/// one is there: triple-quoted (`'''`, `"""`) when it closes, else single-quoted on one line;
/// escapes checked as the lexer checks them, unless `raw`.
fn string(rest: &[u8], raw: bool) -> Option<usize> {
    let &quote = rest.first()?;
    if quote != b'"' && quote != b'\'' {
        return None;
    }
    if rest.len() >= 3 && rest[1] == quote && rest[2] == quote {
        if let Some(len) = triple_quoted(rest, quote, raw) {
            return Some(len);
        }
    }
    let mut at = 1;
    loop {
        match *rest.get(at)? {
            c if c == quote => return Some(at + 1),
            b'\n' | b'\r' => return None,
            b'\\' if !raw => at += escape(&rest[at..])?,
            _ => at += 1,
        }
    }
}

/// The length of a triple-quoted literal: it ends at the first closing triple quote.
fn triple_quoted(rest: &[u8], quote: u8, raw: bool) -> Option<usize> {
    let mut at = 3;
    loop {
        match *rest.get(at)? {
            c if c == quote
                && rest.get(at + 1) == Some(&quote)
                && rest.get(at + 2) == Some(&quote) =>
            {
                return Some(at + 3)
            }
            b'\\' if !raw => at += escape(&rest[at..])?,
            _ => at += 1,
        }
    }
}

/// The length of the escape sequence at the start of `rest` (a backslash), if it is one the
/// grammar has.
fn escape(rest: &[u8]) -> Option<usize> {
    let hex = |from: usize, count: usize| {
        rest.get(from..from + count)
            .is_some_and(|digits| digits.iter().all(u8::is_ascii_hexdigit))
            .then_some(from + count)
    };
    match *rest.get(1)? {
        b'a' | b'b' | b'f' | b'n' | b'r' | b't' | b'v' | b'"' | b'\'' | b'\\' | b'?' | b'`' => {
            Some(2)
        }
        b'x' | b'X' => hex(2, 2),
        b'u' => hex(2, 4),
        b'U' => hex(2, 8),
        b'0'..=b'3' => rest
            .get(2..4)
            .is_some_and(|digits| digits.iter().all(|d| (b'0'..=b'7').contains(d)))
            .then_some(4),
        _ => None,
    }
}

/// The length of a backquoted identifier.
fn escaped_identifier(rest: &[u8]) -> Option<usize> {
    let inner = rest[1..]
        .iter()
        .position(|c| !(c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-' | b'/' | b' ')))
        .unwrap_or(rest.len() - 1);
    (inner > 0 && rest.get(1 + inner) == Some(&b'`')).then_some(inner + 2)
}

/// The longest number at `at`: a float (`1.5`, `1e3`, `.5`, `1.5e-3`), an int (`15`,
/// `0x1F`) or a uint (`15u`, `0x1Fu`).
fn number(source: &str, at: usize) -> Option<(Token<'_>, usize)> {
    let rest = &source.as_bytes()[at..];
    let digits = |from: usize| {
        rest[from..]
            .iter()
            .position(|c| !c.is_ascii_digit())
            .map_or(rest.len(), |n| from + n)
    };
    let exponent = |from: usize| {
        if !matches!(rest.get(from), Some(b'e' | b'E')) {
            return from;
        }
        let sign = usize::from(matches!(rest.get(from + 1), Some(b'+' | b'-')));
        let end = digits(from + 1 + sign);
        if end > from + 1 + sign {
            end
        } else {
            from
        }
    };
    let text = |len: usize| &source[at..at + len];
    if rest[0] == b'.' {
        let end = exponent(digits(1));
        return Some((Token::Float(text(end)), end));
    }
    if rest.starts_with(b"0x") && rest.get(2).is_some_and(u8::is_ascii_hexdigit) {
        let end = rest[2..]
            .iter()
            .position(|c| !c.is_ascii_hexdigit())
            .map_or(rest.len(), |n| 2 + n);
        return Some(if matches!(rest.get(end), Some(b'u' | b'U')) {
            (Token::Uint(text(end + 1)), end + 1)
        } else {
            (Token::Int(text(end)), end)
        });
    }
    let whole = digits(0);
    if rest.get(whole) == Some(&b'.') && rest.get(whole + 1).is_some_and(u8::is_ascii_digit) {
        let end = exponent(digits(whole + 1));
        return Some((Token::Float(text(end)), end));
    }
    let end = exponent(whole);
    if end > whole {
        return Some((Token::Float(text(end)), end));
    }
    if matches!(rest.get(whole), Some(b'u' | b'U')) {
        return Some((Token::Uint(text(whole + 1)), whole + 1));
    }
    Some((Token::Int(text(whole)), whole))
}
