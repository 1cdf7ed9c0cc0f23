//! What the emitter asks of a scalar before writing it: the style yaml.v2's encoder requests
//! ([`requested_string_style`]) and libyaml's analysis of the text (`yaml_emitter_analyze_scalar`),
//! which may overrule that style; with the character classes libyaml uses for both.

use crate::resolve::{is_base60_float, resolve_plain, Resolved};

/// Whether `text`, written plain, would be read by go-yaml as something other than a string
/// (YAML 1.1 booleans, nulls, numbers in range, timestamps) or is a YAML 1.1 base-60 number:
/// go-yaml double-quotes such strings.
pub(super) fn resolves_to_non_string(text: &str) -> bool {
    !matches!(resolve_plain(text), Resolved::Str) || is_base60_float(text)
}

// ---- characters as libyaml classifies them ---------------------------------

/// libyaml's printable set as yaml.v2 implements it (4-byte characters are
/// not printable there, so they are escaped in double quotes).
pub(super) fn is_printable(c: char) -> bool {
    matches!(c as u32, 0x0A | 0x20..=0x7E | 0xA0..=0xD7FF | 0xE000..=0xFFFD) && c != '\u{FEFF}'
}

pub(super) fn is_break(c: char) -> bool {
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
pub(super) enum Style {
    Plain,
    SingleQuoted,
    DoubleQuoted,
    Literal,
}

/// What `yaml_emitter_analyze_scalar` finds out about a scalar.
/// (libyaml's flow-context verdict is left out: see [`super::Emitter::empty_flow`].)
#[derive(Debug, Default)]
pub(super) struct Analysis {
    pub(super) multiline: bool,
    pub(super) block_plain_allowed: bool,
    pub(super) single_quoted_allowed: bool,
    pub(super) block_allowed: bool,
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

pub(super) fn analyze(value: &str) -> Analysis {
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
pub(super) fn requested_string_style(text: &str) -> Style {
    if text.contains('\n') {
        Style::Literal
    } else if resolves_to_non_string(text) {
        Style::DoubleQuoted
    } else {
        Style::Plain
    }
}
