//! YAML parse events from libyaml, behind a safe interface.
//!
//! go-yaml v2 is a Go port of libyaml, so libyaml's parser accepts and refuses the same texts
//! and reports the same problems. unsafe-libyaml (libyaml translated to Rust, already under
//! serde_yaml_ng) is that parser; its interface is libyaml's C one, so this module holds the
//! only `unsafe` code of the crate (the crate root denies it everywhere else). What the reader
//! needs and serde_yaml_ng does not give: each scalar's style and tag as written, so that plain
//! scalars can be resolved by YAML 1.1 rules ([`crate::resolve`]).
#![allow(unsafe_code)]

use std::borrow::Cow;
use std::ffi::CStr;
use std::mem::MaybeUninit;

/// One parse event, with the strings copied out of libyaml.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Event {
    StreamStart,
    StreamEnd,
    DocumentStart,
    DocumentEnd,
    Alias(String),
    Scalar(Scalar),
    SequenceStart(Collection),
    SequenceEnd,
    MappingStart(Collection),
    MappingEnd,
}

#[derive(Debug, Clone, PartialEq)]
pub(super) struct Scalar {
    pub(crate) anchor: Option<String>,
    /// The tag as libyaml resolved its handle (`!!int` is `tag:yaml.org,2002:int`).
    pub(crate) tag: Option<String>,
    pub(crate) value: String,
    /// libyaml's `plain_implicit`: written plain without a tag (or with the tag `!`).
    pub(crate) plain: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub(super) struct Collection {
    pub(crate) anchor: Option<String>,
}

/// A libyaml parser over a text it borrows.
pub(super) struct Parser<'input> {
    /// Initialised by `yaml_parser_initialize` in [`Parser::new`]; boxed so that its address,
    /// which libyaml keeps pointers into, never moves.
    raw: Box<MaybeUninit<unsafe_libyaml::yaml_parser_t>>,
    /// The text after any byte order mark (libyaml's marks count from there, in bytes).
    text: &'input [u8],
}

impl<'input> Parser<'input> {
    pub(super) fn new(input: &'input [u8]) -> Parser<'input> {
        // go-yaml reads an empty text as one line break.
        let input: &'input [u8] = if input.is_empty() { b"\n" } else { input };
        let mut raw = Box::new(MaybeUninit::<unsafe_libyaml::yaml_parser_t>::uninit());
        let parser = raw.as_mut_ptr();
        // SAFETY: `parser` points to memory for one parser, which `yaml_parser_initialize`
        // initialises (it fails only when it cannot allocate). The input outlives the parser
        // (`'input`), which only reads it.
        unsafe {
            let initialised = unsafe_libyaml::yaml_parser_initialize(parser);
            assert!(initialised.ok, "libyaml could not allocate a parser");
            unsafe_libyaml::yaml_parser_set_input_string(
                parser,
                input.as_ptr(),
                input.len() as u64,
            );
        }
        let text = input.strip_prefix("\u{FEFF}".as_bytes()).unwrap_or(input);
        Parser { raw, text }
    }

    /// The next event and the 0-based line it starts on, or the problem as go-yaml words it.
    pub(super) fn next(&mut self) -> Result<(Event, usize), String> {
        let parser = self.raw.as_mut_ptr();
        let mut event = MaybeUninit::<unsafe_libyaml::yaml_event_t>::uninit();
        // SAFETY: the parser was initialised in `new`. `yaml_parser_parse` initialises the
        // event when it succeeds (after an error or the stream's end it hands out an empty
        // one); the event is read only then, and deleted once its strings are copied.
        unsafe {
            if unsafe_libyaml::yaml_parser_parse(parser, event.as_mut_ptr()).fail {
                return Err(problem(&*parser));
            }
            let event = event.as_mut_ptr();
            let converted = convert(&*event);
            let (start, end) = ((*event).start_mark, (*event).end_mark);
            let double_quoted = matches!((*event).type_, unsafe_libyaml::YAML_SCALAR_EVENT)
                && matches!(
                    (*event).data.scalar.style,
                    unsafe_libyaml::YAML_DOUBLE_QUOTED_SCALAR_STYLE
                );
            unsafe_libyaml::yaml_event_delete(event);
            if double_quoted {
                self.check_escapes(start.index as usize, end.index as usize, start.line)?;
            }
            Ok((converted, start.line as usize))
        }
    }
}

impl Parser<'_> {
    /// go-yaml refuses the escape `\/` that libyaml accepts in a double-quoted scalar (the
    /// bytes from `start` to `end`, starting on the 0-based `line`).
    fn check_escapes(&self, start: usize, end: usize, line: u64) -> Result<(), String> {
        let Some(raw) = self.text.get(start..end) else {
            return Ok(());
        };
        let mut line = line;
        let mut i = 1;
        while i < raw.len() {
            match raw[i] {
                b'\\' if raw.get(i + 1) == Some(&b'/') => {
                    // go-yaml's line rule, as in `problem`: none for the first line.
                    return Err(if line == 0 {
                        "yaml: found unknown escape character".into()
                    } else {
                        format!("yaml: line {}: found unknown escape character", line + 1)
                    });
                }
                b'\\' => i += 2,
                b'\n' => {
                    line += 1;
                    i += 1;
                }
                b'\r' if raw.get(i + 1) != Some(&b'\n') => {
                    line += 1;
                    i += 1;
                }
                _ => i += 1,
            }
        }
        Ok(())
    }
}

impl Drop for Parser<'_> {
    fn drop(&mut self) {
        // SAFETY: initialised in `new`, deleted once.
        unsafe { unsafe_libyaml::yaml_parser_delete(self.raw.as_mut_ptr()) }
    }
}

/// go-yaml's wording of a parse error: `yaml: line N: problem`, with go-yaml's choice of line
/// (a scanner error names the 1-based line of the problem, a parser error the 0-based one, and
/// none is named when that is 0).
///
/// # Safety
/// `parser` must be an initialised parser whose last call failed.
unsafe fn problem(parser: &unsafe_libyaml::yaml_parser_t) -> String {
    let text = unsafe { c_string(parser.problem.cast()) };
    let text = text
        .as_deref()
        .unwrap_or("unknown problem parsing YAML content");
    let line = if parser.problem_mark.line != 0 {
        let scanner = matches!(parser.error, unsafe_libyaml::YAML_SCANNER_ERROR);
        parser.problem_mark.line + u64::from(scanner)
    } else {
        parser.context_mark.line
    };
    if line == 0 {
        format!("yaml: {text}")
    } else {
        format!("yaml: line {line}: {text}")
    }
}

/// # Safety
/// `event` must be an event `yaml_parser_parse` produced and that is not deleted yet.
unsafe fn convert(event: &unsafe_libyaml::yaml_event_t) -> Event {
    // SAFETY: each arm reads the union member that belongs to the event's type; the strings
    // are NUL-terminated or, for a scalar's value, `length` bytes long.
    unsafe {
        match event.type_ {
            unsafe_libyaml::YAML_STREAM_START_EVENT => Event::StreamStart,
            unsafe_libyaml::YAML_DOCUMENT_START_EVENT => Event::DocumentStart,
            unsafe_libyaml::YAML_DOCUMENT_END_EVENT => Event::DocumentEnd,
            unsafe_libyaml::YAML_ALIAS_EVENT => {
                Event::Alias(c_string(event.data.alias.anchor).unwrap_or_default())
            }
            unsafe_libyaml::YAML_SCALAR_EVENT => {
                let scalar = event.data.scalar;
                let length = scalar.length as usize;
                let value = if length == 0 || scalar.value.is_null() {
                    String::new()
                } else {
                    let bytes = std::slice::from_raw_parts(scalar.value, length);
                    String::from_utf8_lossy(bytes).into_owned()
                };
                Event::Scalar(Scalar {
                    anchor: c_string(scalar.anchor),
                    tag: c_string(scalar.tag),
                    value,
                    plain: scalar.plain_implicit,
                })
            }
            unsafe_libyaml::YAML_SEQUENCE_START_EVENT => Event::SequenceStart(Collection {
                anchor: c_string(event.data.sequence_start.anchor),
            }),
            unsafe_libyaml::YAML_SEQUENCE_END_EVENT => Event::SequenceEnd,
            unsafe_libyaml::YAML_MAPPING_START_EVENT => Event::MappingStart(Collection {
                anchor: c_string(event.data.mapping_start.anchor),
            }),
            unsafe_libyaml::YAML_MAPPING_END_EVENT => Event::MappingEnd,
            // The stream's end, or the empty event handed out after it.
            _ => Event::StreamEnd,
        }
    }
}

/// # Safety
/// `text` must be null or point to a NUL-terminated string.
unsafe fn c_string(text: *const u8) -> Option<String> {
    if text.is_null() {
        return None;
    }
    // SAFETY: as the caller promises.
    let bytes = unsafe { CStr::from_ptr(text.cast()) }.to_bytes();
    Some(match String::from_utf8_lossy(bytes) {
        Cow::Borrowed(text) => text.to_string(),
        Cow::Owned(text) => text,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(text: &str) -> Result<Vec<Event>, String> {
        let mut parser = Parser::new(text.as_bytes());
        let mut out = Vec::new();
        loop {
            let (event, _) = parser.next()?;
            let end = event == Event::StreamEnd;
            out.push(event);
            if end {
                return Ok(out);
            }
        }
    }

    #[test]
    fn scalars_carry_their_style_and_tag() {
        let found = events("a: yes\n'b': !!int \"12\"\nc: &x [*x]\n").unwrap();
        let scalars: Vec<(String, Option<String>, bool)> = found
            .iter()
            .filter_map(|e| match e {
                Event::Scalar(s) => Some((s.value.clone(), s.tag.clone(), s.plain)),
                _ => None,
            })
            .collect();
        assert_eq!(
            scalars,
            [
                ("a".into(), None, true),
                ("yes".into(), None, true),
                ("b".into(), None, false),
                ("12".into(), Some("tag:yaml.org,2002:int".into()), false),
                ("c".into(), None, true),
            ]
        );
        assert!(found.contains(&Event::Alias("x".into())));
        assert!(found.contains(&Event::SequenceStart(Collection {
            anchor: Some("x".into())
        })));
    }

    #[test]
    fn problems_are_worded_as_go_yaml_words_them() {
        // go-yaml names no line for a problem on the first.
        assert_eq!(
            events("a: b: c\n"),
            Err("yaml: mapping values are not allowed in this context".into())
        );
        assert_eq!(
            events("a: [1, 2\n"),
            Err("yaml: line 1: did not find expected ',' or ']'".into())
        );
        assert_eq!(
            events("a: \"\u{7f}\"\n"),
            Err("yaml: control characters are not allowed".into())
        );
        assert_eq!(
            events("a: \"http:\\/\\/x\"\n"),
            Err("yaml: found unknown escape character".into())
        );
        assert_eq!(
            events("a: 1\nb: \"x\n  y\\/\"\n"),
            Err("yaml: line 3: found unknown escape character".into())
        );
        assert!(
            events("a: \"\\\\/\"\n").is_ok(),
            "an escaped backslash, then /"
        );
        assert_eq!(
            events("a:\n  - b\n  c: d\n"),
            Err("yaml: line 2: did not find expected '-' indicator".into())
        );
    }
}
