//! Regular expressions as the API server runs them: RE2 syntax and meaning (Go's `regexp`), for
//! CEL's `matches()` and for the schemas' `pattern`, through [`matches`] and [`compiled`] in
//! one configuration, so every build of every caller gives the same answers.
//!
//! The `regex` crate is built without its speed-ups and with only the Unicode tables RE2 has
//! (case folding, general categories, scripts: the crate's Cargo.toml). Where the two syntaxes
//! mean different things, a pattern is rewritten to RE2's meaning before it is compiled:
//! `\d`, `\w`, `\s` and `\b` are ASCII in RE2 (Unicode-aware in `regex`), and `\p{Greek}` is
//! the script (its extensions in `regex`). Unicode properties RE2 lacks (`\p{Alphabetic}`,
//! `\p{Age=..}`) are refused, whatever features another part of the build turned on.
//!
//! Compiling is bounded ([`COMPILED_SIZE_LIMIT`]) and compiled patterns are kept in a bounded
//! cache, so a schema or a rule that tries thousands of fresh patterns pays for each once and
//! cannot hold memory.

use regex_syntax::ast::{self, Ast, ClassPerlKind, ClassSetItem, ClassUnicodeKind};
use regex_syntax::hir::{Class, Hir, HirKind};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

/// The most states a pattern may expand to, as [`states`] estimates them before compiling:
/// `regex` builds a byte automaton, in which a counted repetition is that many copies and a
/// Unicode class a few hundred states (`\pL{100}` is about 30,000), and compiling takes time
/// in proportion (about a microsecond a state). Go's regexp keeps a class as one instruction
/// and accepts `\pL{1000}`; we refuse patterns that would take more than about 50 ms to
/// compile. No pattern in the provider's CRDs or the examples comes near (the largest has 67
/// states; `tests/cel_limits.rs`).
pub const MAX_STATES: u64 = 100_000;

/// The backstop on what `regex` builds, in bytes, should [`states`] underestimate (its forward
/// and reverse automata of a pattern of [`MAX_STATES`] take a few megabytes).
const COMPILED_SIZE_LIMIT: usize = 32 << 20;

/// How many compiled patterns the process keeps, and how many states in all (a compiled
/// state takes about 50 bytes, twice); past either, the least recently used go.
const CACHE_CAPACITY: usize = 256;
const CACHE_STATES: u64 = 4 * MAX_STATES;

/// A pattern `regex` cannot compile, or one RE2 would read differently that we refuse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{pattern:?} is not a valid RE2 expression: {reason}")]
pub struct PatternError {
    /// The pattern, as written.
    pub pattern: String,
    /// What is wrong with it.
    pub reason: String,
}

/// A compiled pattern.
#[derive(Debug)]
pub struct Pattern {
    regex: regex::Regex,
    states: u64,
}

impl Pattern {
    /// Whether the pattern matches somewhere in `text` (unanchored, as RE2's `PartialMatch`
    /// and Go's `MatchString`).
    pub fn is_match(&self, text: &str) -> bool {
        self.regex.is_match(text)
    }

    /// What matching `chars` characters costs, in the units of the CEL budget: a tenth of a
    /// unit for each state at each character (the worst the matcher can do), and a unit a
    /// state for compiling it, charged on every use so that the cost of a call does not depend
    /// on what the process compiled before (about a microsecond a state: the API server
    /// reckons a unit at a tenth of that). See `cost::matches`.
    pub fn cost(&self, chars: u64) -> u64 {
        self.matching(chars).saturating_add(self.states)
    }

    /// The matching part of [`Pattern::cost`].
    pub(super) fn matching(&self, chars: u64) -> u64 {
        (self.states.saturating_mul(chars.saturating_add(1)) as f64 * 0.1).ceil() as u64
    }

    /// The compiling part of [`Pattern::cost`].
    pub(super) fn compiling(&self) -> u64 {
        self.states
    }
}

/// Whether `pattern` matches somewhere in `text`.
pub fn matches(text: &str, pattern: &str) -> Result<bool, PatternError> {
    Ok(compiled(pattern)?.is_match(text))
}

/// What `matches()` costs beyond cel-go's figure: `(matching, compiling)`, none for a pattern
/// that does not compile (the call fails without matching).
pub(super) fn steps(pattern: &str, chars: u64) -> (u64, u64) {
    compiled(pattern).map_or((0, 0), |p| (p.matching(chars), p.compiling()))
}

/// Compiled patterns, with the use stamp of each.
struct Cache {
    entries: HashMap<Box<str>, Entry, foldhash::fast::RandomState>,
    clock: u64,
    states: u64,
}

struct Entry {
    compiled: Result<Arc<Pattern>, PatternError>,
    used: u64,
}

static CACHE: Mutex<Option<Cache>> = Mutex::new(None);

/// The pattern compiled, from the cache when it came before (an invalid one keeps its error).
pub fn compiled(pattern: &str) -> Result<Arc<Pattern>, PatternError> {
    let mut guard = CACHE.lock().unwrap_or_else(PoisonError::into_inner);
    let cache = guard.get_or_insert_with(|| Cache {
        entries: HashMap::default(),
        clock: 0,
        states: 0,
    });
    cache.clock += 1;
    let now = cache.clock;
    if let Some(entry) = cache.entries.get_mut(pattern) {
        entry.used = now;
        return entry.compiled.clone();
    }
    // Compiled under the lock: two threads asking for the same fresh pattern compile it once,
    // and a compile is bounded by MAX_STATES.
    let compiled = compile(pattern).map(Arc::new);
    let states = compiled.as_ref().map_or(0, |p| p.states);
    while cache.entries.len() >= CACHE_CAPACITY || cache.states + states > CACHE_STATES {
        let oldest = cache
            .entries
            .iter()
            .min_by_key(|(_, entry)| entry.used)
            .map(|(key, _)| key.clone());
        let Some(oldest) = oldest else { break };
        if let Some(Ok(evicted)) = cache.entries.remove(&oldest).map(|e| e.compiled) {
            cache.states -= evicted.states;
        }
    }
    cache.states += states;
    cache.entries.insert(
        pattern.into(),
        Entry {
            compiled: compiled.clone(),
            used: now,
        },
    );
    compiled
}

/// `pattern` in RE2's meaning, compiled by `regex`.
fn compile(pattern: &str) -> Result<Pattern, PatternError> {
    let invalid = |reason: String| PatternError {
        pattern: pattern.to_owned(),
        reason,
    };
    let rewritten = to_regex_syntax(pattern).map_err(invalid)?;
    let hir = regex_syntax::ParserBuilder::new()
        .build()
        .parse(&rewritten)
        .map_err(|error| invalid(error.to_string()))?;
    let states = states(&hir);
    if states > MAX_STATES {
        return Err(invalid(format!(
            "it expands to about {states} automaton states; at most {MAX_STATES} are compiled \
             (a counted repetition is that many copies, a Unicode class hundreds of states)"
        )));
    }
    let regex = regex::RegexBuilder::new(&rewritten)
        .size_limit(COMPILED_SIZE_LIMIT)
        .build()
        .map_err(|error| invalid(error.to_string()))?;
    Ok(Pattern { regex, states })
}

/// About how many states `regex`'s byte automaton has for `hir`.
fn states(hir: &Hir) -> u64 {
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => 1,
        HirKind::Literal(literal) => literal.0.len() as u64,
        HirKind::Class(Class::Bytes(_)) => 1,
        // A class of ASCII ranges is a state or so; each wider range takes a state or more
        // for each length of UTF-8 encoding it spans (the compiler shares the rest).
        HirKind::Class(Class::Unicode(class)) => {
            let wide = class.ranges().iter().filter(|r| r.end() > '\x7f');
            let spans = wide.map(|r| {
                (r.end().len_utf8() - r.start().len_utf8().min(r.end().len_utf8()) + 1) as u64
            });
            1 + spans.sum::<u64>()
        }
        HirKind::Repetition(repetition) => {
            let copies = match repetition.max {
                Some(max) => u64::from(max.max(1)),
                None => u64::from(repetition.min) + 1,
            };
            states(&repetition.sub)
                .saturating_mul(copies)
                .saturating_add(1)
        }
        HirKind::Capture(capture) => states(&capture.sub).saturating_add(2),
        HirKind::Concat(parts) | HirKind::Alternation(parts) => parts
            .iter()
            .map(states)
            .fold(1u64, |sum, part| sum.saturating_add(part)),
    }
}

/// The pattern spelled so that `regex` reads it as RE2 does.
fn to_regex_syntax(pattern: &str) -> Result<String, String> {
    let parsed = ast::parse::Parser::new()
        .parse(pattern)
        .map_err(|error| error.to_string())?;
    let edits = ast::visit(&parsed, Rewrites::default())?;
    if edits.is_empty() {
        return Ok(pattern.to_owned());
    }
    let mut out = String::with_capacity(pattern.len() + 16 * edits.len());
    let mut at = 0;
    for (span, replacement) in edits {
        out.push_str(&pattern[at..span.start.offset]);
        out.push_str(&replacement);
        at = span.end.offset;
    }
    out.push_str(&pattern[at..]);
    Ok(out)
}

/// RE2's ASCII classes, as `regex` spells them inside brackets.
fn ascii_class(kind: &ClassPerlKind) -> &'static str {
    match kind {
        ClassPerlKind::Digit => "0-9",
        ClassPerlKind::Word => "0-9A-Za-z_",
        ClassPerlKind::Space => r"\t\n\x0C\r ",
    }
}

/// Collects, in pattern order, the spans to replace and what replaces them.
#[derive(Default)]
struct Rewrites {
    edits: Vec<(ast::Span, String)>,
}

impl Rewrites {
    fn perl(&mut self, class: &ast::ClassPerl, in_brackets: bool) {
        let set = ascii_class(&class.kind);
        let replacement = match (class.negated, in_brackets) {
            (false, true) => set.to_owned(),
            (false, false) => format!("[{set}]"),
            (true, _) => format!("[^{set}]"),
        };
        self.edits.push((class.span, replacement));
    }

    fn unicode(&mut self, class: &ast::ClassUnicode) -> Result<(), String> {
        let negated = if class.negated { 'P' } else { 'p' };
        match &class.kind {
            // `\pL`, `\pN`: general categories, read alike.
            ClassUnicodeKind::OneLetter(_) => Ok(()),
            ClassUnicodeKind::Named(name) if name == "Any" => Ok(()),
            // RE2's names are the categories' one- and two-letter abbreviations and the scripts.
            ClassUnicodeKind::Named(name) if is_category(name) => {
                let replacement = format!(r"\{negated}{{gc={name}}}");
                self.edits.push((class.span, replacement));
                Ok(())
            }
            ClassUnicodeKind::Named(name) => {
                let replacement = format!(r"\{negated}{{sc={name}}}");
                self.edits.push((class.span, replacement));
                Ok(())
            }
            ClassUnicodeKind::NamedValue { .. } => Err(format!(
                "{} is not RE2 syntax (RE2 knows \\pL, \\p{{Lu}} and scripts such as \\p{{Greek}})",
                class_text(class)
            )),
        }
    }

    fn assertion(&mut self, assertion: &ast::Assertion) -> Result<(), String> {
        use ast::AssertionKind::*;
        let replacement = match assertion.kind {
            WordBoundary => r"(?-u:\b)",
            NotWordBoundary => r"(?-u:\B)",
            StartLine | EndLine | StartText | EndText => return Ok(()),
            _ => return Err("word boundaries other than \\b and \\B are not RE2 syntax".to_owned()),
        };
        self.edits.push((assertion.span, replacement.to_owned()));
        Ok(())
    }
}

/// A class as written, for messages.
fn class_text(class: &ast::ClassUnicode) -> String {
    match &class.kind {
        ClassUnicodeKind::OneLetter(c) => format!(r"\p{c}"),
        ClassUnicodeKind::Named(name) => format!(r"\p{{{name}}}"),
        ClassUnicodeKind::NamedValue { name, value, .. } => format!(r"\p{{{name}={value}}}"),
    }
}

/// A general category's abbreviation (`L`, `Lu`, `Nd`): one capital and at most one lower case
/// letter, where scripts are longer words (`Greek`, `Han`, `Old_Italic`).
fn is_category(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_uppercase())
        && chars.clone().all(|c| c.is_ascii_lowercase())
        && chars.count() <= 1
}

impl ast::Visitor for Rewrites {
    type Output = Vec<(ast::Span, String)>;
    type Err = String;

    fn finish(mut self) -> Result<Self::Output, String> {
        self.edits.sort_by_key(|(span, _)| span.start.offset);
        Ok(self.edits)
    }

    fn visit_pre(&mut self, node: &Ast) -> Result<(), String> {
        match node {
            Ast::ClassPerl(class) => self.perl(class, false),
            Ast::ClassUnicode(class) => self.unicode(class)?,
            Ast::Assertion(assertion) => self.assertion(assertion)?,
            _ => {}
        }
        Ok(())
    }

    fn visit_class_set_item_pre(&mut self, item: &ClassSetItem) -> Result<(), String> {
        match item {
            ClassSetItem::Perl(class) => self.perl(class, true),
            ClassSetItem::Unicode(class) => self.unicode(class)?,
            _ => {}
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rewritten(pattern: &str) -> String {
        to_regex_syntax(pattern).unwrap()
    }

    #[test]
    fn perl_classes_are_ascii_as_in_re2() {
        assert_eq!(rewritten(r"^\d+$"), "^[0-9]+$");
        assert_eq!(rewritten(r"\W"), "[^0-9A-Za-z_]");
        assert_eq!(rewritten(r"[\s,]"), r"[\t\n\x0C\r ,]");
        assert_eq!(rewritten(r"[^\S]"), r"[^[^\t\n\x0C\r ]]");
        assert_eq!(rewritten(r"\\d"), r"\\d", "an escaped backslash stays");
        assert!(matches("٣", r"^\d$") == Ok(false), "Arabic-Indic digit");
        assert!(matches("\u{a0}", r"\s") == Ok(false), "no-break space");
        assert!(matches("é", r"^\w$") == Ok(false));
        assert_eq!(matches("a b", r"\ba\b"), Ok(true));
        assert_eq!(
            matches("éa", r"\ba"),
            Ok(true),
            "é is not a word character in RE2"
        );
    }

    #[test]
    fn unicode_categories_and_scripts_are_re2s() {
        assert_eq!(matches("é", r"^\pL$"), Ok(true));
        assert_eq!(matches("É", r"^\p{Lu}$"), Ok(true));
        assert_eq!(matches("α", r"^\p{Greek}$"), Ok(true));
        assert_eq!(matches("a", r"^\P{Greek}$"), Ok(true));
        assert_eq!(rewritten(r"\p{Greek}"), r"\p{sc=Greek}");
        assert_eq!(rewritten(r"[\p{Lu}x]"), r"[\p{gc=Lu}x]");
        assert_eq!(matches("É", "(?i)é"), Ok(true), "Unicode case folding");
    }

    #[test]
    fn what_re2_lacks_is_refused_in_every_build() {
        for pattern in [r"\p{Alphabetic}", r"\p{Age=3.0}", r"\p{gc=L}", r"\b{start}"] {
            let error = matches("a", pattern).unwrap_err();
            assert_eq!(error.pattern, pattern);
        }
        let error = matches("a", "(").unwrap_err();
        assert!(error
            .to_string()
            .starts_with(r#""(" is not a valid RE2 expression"#));
    }

    #[test]
    fn a_pattern_too_big_to_compile_is_refused_before_it_is_compiled() {
        let error = matches("a", r"((\pL{100}){100}){100}").unwrap_err();
        assert!(error.reason.contains("automaton states"), "{error}");
        let p = matches("a", r"\pL{100}");
        assert!(p.is_ok(), "about 30,000 states: {p:?}");
    }
}
