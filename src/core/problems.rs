//! Problems and warnings, written for the person who has to fix them.
//!
//! A call collects every problem it finds before it gives up, so one fatal
//! result lists them all. Each problem names the field path, what is wrong
//! (with the offending value and the rule it breaks) and how to fix it.

use serde_json::Value;
use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::hash::BuildHasher;

/// What kind of rule a problem breaks; the fatal result's reason comes from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Category {
    InvalidInput,
    InvalidComposite,
    InvalidKey,
    InvalidWiring,
    InvalidProviderFields,
    UnsafeChange,
    KeyConflict,
}

impl Category {
    /// The PascalCase reason of a fatal result made of this category only.
    pub fn reason(self) -> &'static str {
        match self {
            Category::InvalidInput => "InvalidInput",
            Category::InvalidComposite => "InvalidComposite",
            Category::InvalidKey => "InvalidKey",
            Category::InvalidWiring => "InvalidWiring",
            Category::InvalidProviderFields => "InvalidProviderFields",
            Category::UnsafeChange => "UnsafeChange",
            Category::KeyConflict => "KeyConflict",
        }
    }
}

/// One thing that stops the call.
#[derive(Debug, Clone, PartialEq)]
pub struct Problem {
    pub category: Category,
    /// Field path, `spec.repositories[3].key`.
    pub path: String,
    /// Index of the repository entry the problem belongs to, if any.
    pub entry: Option<usize>,
    /// What is wrong, with the value and the rule.
    pub message: String,
    /// How to fix it.
    pub fix: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}; fix: {}", self.path, self.message, self.fix)
    }
}

/// A finding that does not stop the call, reported in the status.
#[derive(Debug, Clone, PartialEq)]
pub struct Warning {
    pub path: String,
    pub entry: Option<usize>,
    pub message: String,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

/// How many problems a call keeps in full: the fatal result lists them, then says how many more
/// there are ("and 79,900 more"). One claim can hold tens of thousands of mistakes (a
/// `forProvider` of 80,000 unknown fields); listing them all would cost memory and time for a
/// message no one reads to the end, and could exceed what Crossplane accepts. The server,
/// `render` and the WebAssembly module all show the problems the core kept.
pub(crate) const PROBLEM_LIMIT: usize = 100;

/// Each text of a problem (path, message, fix) is cut at this many characters: names and keys
/// are echoed from the claim, which may hold a field name of a megabyte.
pub(crate) const PROBLEM_TEXT_CHARS: usize = 1_000;

/// Everything found so far in one call.
#[derive(Debug, Default, Clone)]
pub struct Findings {
    /// The first [`PROBLEM_LIMIT`] distinct problems, in the order found.
    pub problems: Vec<Problem>,
    /// Distinct problems found beyond [`PROBLEM_LIMIT`], counted only.
    omitted: usize,
    /// Each distinct problem's key (a hash of its path and message): the kept problem it is,
    /// or `None` for an omitted one. Finding a duplicate costs one lookup, not a comparison
    /// with every problem so far (quadratic: 80,000 problems took 10 s that way).
    seen: HashMap<u64, Option<usize>, foldhash::fast::FixedState>,
    /// The key of each kept problem.
    kept_keys: Vec<u64>,
    /// The categories of every problem, kept or omitted, one bit each: the fatal reason.
    categories: u8,
    pub warnings: Vec<Warning>,
    /// What the call rendered, when it did: the provider API and how many repositories
    /// (for the server's metrics, which would otherwise decode the response to tell).
    pub rendered: Option<(crate::core::catalog::ProviderApi, usize)>,
}

/// The key of a problem for finding duplicates. A fixed seed: the same request must give the
/// same bytes. Two distinct problems with one key (about one chance in 10^10 at 80,000
/// problems) would count as one; a kept problem is compared in full.
fn problem_key(path: &str, message: &str) -> u64 {
    foldhash::quality::FixedState::with_seed(0x5eed_0fc0_ffee).hash_one((path, message))
}

impl Findings {
    pub fn problem(
        &mut self,
        category: Category,
        path: impl Into<String>,
        entry: Option<usize>,
        message: impl Into<String>,
        fix: impl Into<String>,
    ) {
        self.problem_with(category, path, entry, message, || fix.into());
    }

    /// [`Findings::problem`] with a fix that is only worked out when the problem is kept: a
    /// suggestion compares the given name with every candidate, which for thousands of
    /// problems (or of candidates) would cost more than the rest of the call.
    pub fn problem_with(
        &mut self,
        category: Category,
        path: impl Into<String>,
        entry: Option<usize>,
        message: impl Into<String>,
        fix: impl FnOnce() -> String,
    ) {
        self.add(category, path.into(), entry, message.into(), fix, false);
    }

    /// A problem about the whole call that its author must see whatever else is wrong (the
    /// response would be too large): kept past [`PROBLEM_LIMIT`], in place of the last problem
    /// kept, which is counted among the omitted.
    pub(crate) fn foremost_problem(
        &mut self,
        category: Category,
        path: impl Into<String>,
        message: impl Into<String>,
        fix: impl Into<String>,
    ) {
        self.add(
            category,
            path.into(),
            None,
            message.into(),
            || fix.into(),
            true,
        );
    }

    fn add(
        &mut self,
        category: Category,
        path: String,
        entry: Option<usize>,
        message: String,
        fix: impl FnOnce() -> String,
        foremost: bool,
    ) {
        // A composite-wide setting is checked once per repository that uses it; report each
        // distinct problem once.
        let key = problem_key(&path, &message);
        if let Some(kept) = self.seen.get(&key) {
            let same = kept.is_none_or(|i| {
                let p = &self.problems[i];
                p.path == cut(&path) && p.message == cut(&message)
            });
            if same {
                return;
            }
        }
        self.categories |= 1 << category as u8;
        let problem = || Problem {
            category,
            path: cut(&path).into_owned(),
            entry,
            message: cut(&message).into_owned(),
            fix: cut(&fix()).into_owned(),
        };
        if self.problems.len() < PROBLEM_LIMIT {
            self.seen.entry(key).or_insert(Some(self.problems.len()));
            self.kept_keys.push(key);
            self.problems.push(problem());
        } else if foremost {
            let last = PROBLEM_LIMIT - 1;
            self.seen.insert(self.kept_keys[last], None);
            self.seen.insert(key, Some(last));
            self.kept_keys[last] = key;
            self.problems[last] = problem();
            self.omitted += 1;
        } else {
            self.seen.entry(key).or_insert(None);
            self.omitted += 1;
        }
    }

    pub fn warning(
        &mut self,
        path: impl Into<String>,
        entry: Option<usize>,
        message: impl Into<String>,
    ) {
        self.warnings.push(Warning {
            path: path.into(),
            entry,
            message: message.into(),
        });
    }

    pub fn has_problems(&self) -> bool {
        !self.problems.is_empty()
    }

    /// Every distinct problem found, kept or not.
    pub fn problem_count(&self) -> usize {
        self.problems.len() + self.omitted
    }

    /// Distinct problems found beyond [`PROBLEM_LIMIT`], which no message lists.
    pub fn omitted_problems(&self) -> usize {
        self.omitted
    }

    /// The reason of the fatal result: the category when all agree.
    pub fn fatal_reason(&self) -> &'static str {
        let first = self.problems.first().map(|p| p.category);
        match first {
            Some(first) if self.categories == 1 << first as u8 => first.reason(),
            _ => "InvalidComposite",
        }
    }

    /// The fatal message bounded: the first `shown` problems, each cut at `chars`
    /// characters, and how many more there are.
    pub fn summary(&self, shown: usize, chars: usize) -> String {
        let mut message = self.headline();
        for problem in self.ordered().into_iter().take(shown) {
            let text = problem.to_string();
            message.push_str("\n- ");
            match text.char_indices().nth(chars) {
                Some((cut, _)) => {
                    message.push_str(&text[..cut]);
                    message.push_str("...");
                }
                None => message.push_str(&text),
            }
        }
        let count = self.problem_count();
        if count > shown {
            let events = if self.omitted == 0 {
                "every problem is in the composite's events".to_owned()
            } else {
                format!("the composite's events list the first {PROBLEM_LIMIT}")
            };
            message.push_str(&format!("\n- and {} more ({events})", count - shown));
        }
        message
    }

    /// `cannot render the Artifactory repositories: 3 problems`.
    fn headline(&self) -> String {
        let count = self.problem_count();
        let noun = if count == 1 { "problem" } else { "problems" };
        format!("cannot render the Artifactory repositories: {count} {noun}")
    }

    /// Composite-wide problems first, then entry by entry in spec order.
    fn ordered(&self) -> Vec<&Problem> {
        let mut ordered: Vec<&Problem> = self.problems.iter().collect();
        ordered.sort_by_key(|p| p.entry.map_or(0, |e| e + 1));
        ordered
    }

    /// The message of the fatal result: every problem kept, one per line, and how many more
    /// were found.
    pub fn fatal_message(&self) -> String {
        let mut message = self.headline();
        for problem in self.ordered() {
            message.push_str("\n- ");
            message.push_str(&problem.to_string());
        }
        if self.omitted > 0 {
            message.push_str(&format!(
                "\n- and {} more (a call lists the first {PROBLEM_LIMIT}; fix these and run again)",
                self.omitted
            ));
        }
        message
    }
}

/// `text` cut at [`PROBLEM_TEXT_CHARS`] characters, with `...` where it was cut.
fn cut(text: &str) -> Cow<'_, str> {
    match text.char_indices().nth(PROBLEM_TEXT_CHARS) {
        Some((end, _)) => Cow::Owned(format!("{}...", &text[..end])),
        None => Cow::Borrowed(text),
    }
}

/// `a` or `an` before a word as it is said: `an npm`, `an OCIRepository`, `a maven`,
/// `an NPMRepository` (a leading acronym is spelled out), `a VCSRepository`. A kind whose first
/// word is an acronym written in lower case after its capital (`NpmRepository`, `RpmRepository`,
/// `SbtRepository`, `VcsRepository`) is said as the acronym is: `an NpmRepository` ("an en-pee-em
/// repository"), `a VcsRepository`. Names said as words (`CRAN`, `PyPI`, `Conan`) are not spelled
/// out.
pub(crate) fn a_or_an(word: &str) -> &'static str {
    let mut letters = word.chars();
    let first = letters.next().unwrap_or('x');
    let spelled_out =
        first.is_ascii_uppercase() && letters.next().is_some_and(|c| c.is_ascii_uppercase());
    // The first word: up to the next capital (`Npm` of `NpmRepository`), or all of it.
    let first_word = word
        .char_indices()
        .skip(1)
        .find(|(_, c)| c.is_ascii_uppercase())
        .map_or(word, |(at, _)| &word[..at]);
    let acronym = SPELLED_OUT_WORDS
        .iter()
        .any(|spelled| first_word.eq_ignore_ascii_case(spelled));
    let vowel_sound = if spelled_out || acronym {
        "AEFHILMNORSXaefhilmnorsx".contains(first)
    } else {
        "AEIOUaeiou".contains(first)
    };
    if vowel_sound {
        "an"
    } else {
        "a"
    }
}

/// Package types and the first words of kinds that are acronyms, said letter by letter.
const SPELLED_OUT_WORDS: [&str; 6] = ["npm", "rpm", "sbt", "vcs", "oci", "opkg"];

/// How close a candidate must be to count as a typo of the given name (Jaro–Winkler).
const TYPO_SCORE: f64 = 0.8;

/// When no candidate is close, up to this many are listed, all of them; beyond, only the
/// [`NEAREST`] nearest, with how many there are: a list of every entry of a claim of 8,000
/// repositories, once per unknown member, made one claim cost hundreds of megabytes.
const LISTED: usize = 12;
const NEAREST: usize = 5;

/// Each candidate with its score against `given`, in the candidates' order.
fn scored<'a>(given: &str, candidates: impl IntoIterator<Item = &'a str>) -> Vec<(f64, &'a str)> {
    let given_lower = lower_case(given);
    candidates
        .into_iter()
        .map(|c| (strsim::jaro_winkler(&given_lower, &lower_case(c)), c))
        .collect()
}

/// `text` in ASCII lower case, borrowed when it is already (entry names always are).
fn lower_case(text: &str) -> Cow<'_, str> {
    if text.bytes().any(|b| b.is_ascii_uppercase()) {
        Cow::Owned(text.to_ascii_lowercase())
    } else {
        Cow::Borrowed(text)
    }
}

/// The best of `scored` if it is close enough to be a typo; of equal scores, the first in
/// alphabetical order.
fn best<'a>(scored: &[(f64, &'a str)]) -> Option<&'a str> {
    scored
        .iter()
        .filter(|(score, _)| *score >= TYPO_SCORE)
        .max_by(|a, b| a.0.total_cmp(&b.0).then_with(|| b.1.cmp(a.1)))
        .map(|(_, c)| *c)
}

/// The closest of `candidates` to `given`, if it is close enough to be a typo.
pub(crate) fn closest<'a>(
    given: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    best(&scored(given, candidates))
}

/// "did you mean X?", or what is allowed: every candidate when they are few, else the nearest.
/// One comparison per candidate: for many candidates, call it only for the problems kept
/// ([`Findings::problem_with`]).
pub(crate) fn suggestion<'a>(given: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    suggestion_of(scored(given, candidates))
}

/// [`suggestion`] once the candidates are scored: not generic, so the WebAssembly builds hold
/// one copy of it and of its sort rather than one for each kind of candidate list.
fn suggestion_of(mut scored: Vec<(f64, &str)>) -> String {
    if let Some(best) = best(&scored) {
        return format!("did you mean \"{best}\"?");
    }
    let count = scored.len();
    if count <= LISTED {
        let all: Vec<&str> = scored.iter().map(|(_, c)| *c).collect();
        return format!("use one of: {}", all.join(", "));
    }
    // Nearest first; a stable sort keeps the candidates' order among equal scores.
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    let nearest: Vec<&str> = scored.iter().take(NEAREST).map(|(_, c)| *c).collect();
    format!(
        "use one of the {count} names allowed here, the nearest of which are {}",
        nearest.join(", ")
    )
}

/// How many items a message lists (entries, renames) before it says how many more there are.
pub(crate) const LISTED_ITEMS: usize = 10;

/// "1 repository", "2 repositories".
pub(crate) fn count(n: usize, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

/// The first [`LISTED_ITEMS`] items joined with ", ", then "and N more": a message about every
/// entry of a claim stays short however many entries it has.
pub(crate) fn some_of(items: &[String]) -> String {
    if items.len() <= LISTED_ITEMS {
        return items.join(", ");
    }
    format!(
        "{} and {} more",
        items[..LISTED_ITEMS].join(", "),
        items.len() - LISTED_ITEMS
    )
}

/// Words of field names that may hold a secret (`password`, `passwordSecretRef`,
/// `accessToken`, ...), compared ignoring case.
const SECRET_WORDS: [&str; 6] = [
    "password",
    "secret",
    "token",
    "credential",
    "apikey",
    "privatekey",
];

/// [`quoted`], unless `path` names a field that may hold a secret: then only what kind of value
/// it is. A claim's author who writes a password inline (`password: hunter2` where a
/// `secretRef` belongs) must not find it repeated in the composite's events and conditions,
/// which more people read than the claim; the Secrets the function reads are never echoed
/// either.
pub(crate) fn quoted_at(path: &impl fmt::Display, value: &Value) -> String {
    let path = path.to_string().to_ascii_lowercase();
    if !SECRET_WORDS.iter().any(|word| path.contains(word)) {
        return quoted(value);
    }
    match value {
        Value::String(text) => format!(
            "a string of {} characters (not repeated here: the field may hold a secret)",
            text.chars().count()
        ),
        other => format!(
            "{} {} (not repeated here: the field may hold a secret)",
            a_or_an(json_kind(other)),
            json_kind(other)
        ),
    }
}

fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "list",
        Value::Object(_) => "object",
    }
}

/// A value quoted for a message, shortened when long, with the secrets a URL in it may carry
/// masked ([`masked`]).
pub(crate) fn quoted(value: &Value) -> String {
    let text = masked(&value.to_string()).into_owned();
    if text.chars().count() > 80 {
        let cut: String = text.chars().take(77).collect();
        format!("{cut}...")
    } else {
        text
    }
}

/// What stands for a masked part of a URL.
pub(crate) const MASK: &str = "***";

/// `text` with what any URL in it may carry as a secret masked, for a message or a status that
/// more people read than the claim or Artifactory (docs/lifecycle.md, "What is said before it
/// happens"): the user information (`https://bob:secret@host/` -> `https://***@host/`), each
/// value of the query (`?token=abc&page=` -> `?token=***&page=`; a part without `=` whole)
/// and the fragment. A URL is what follows `://` up to white space, a quote, `\`, `<`, `>` or
/// the end; its authority (where user information is) ends at the first `/`, `?` or `#`, as
/// RFC 3986 has it, and its user information at the authority's last `@`. The path is kept.
/// Text with nothing to mask is returned borrowed; the scan is linear in the text.
pub(crate) fn masked(text: &str) -> Cow<'_, str> {
    if !text.contains("://") {
        return Cow::Borrowed(text);
    }
    let ends_url = |c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '`' | '\\' | '<' | '>');
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        let (before, after) = rest.split_at(at + 3);
        out.push_str(before);
        let end = after.find(ends_url).unwrap_or(after.len());
        mask_url(&after[..end], &mut out);
        rest = &after[end..];
    }
    out.push_str(rest);
    // Borrowed where nothing was masked, so that a caller can tell.
    if out == text {
        return Cow::Borrowed(text);
    }
    Cow::Owned(out)
}

/// Writes `url` (what follows `://`) with its user information, query values and fragment
/// masked.
fn mask_url(url: &str, out: &mut String) {
    let authority_end = url.find(['/', '?', '#']).unwrap_or(url.len());
    let (authority, rest) = url.split_at(authority_end);
    match authority.rfind('@') {
        Some(at) => {
            out.push_str(MASK);
            out.push_str(&authority[at..]);
        }
        None => out.push_str(authority),
    }
    let (before_fragment, fragment) = match rest.find('#') {
        Some(at) => rest.split_at(at),
        None => (rest, ""),
    };
    let (path, query) = match before_fragment.find('?') {
        Some(at) => (&before_fragment[..at], Some(&before_fragment[at + 1..])),
        None => (before_fragment, None),
    };
    out.push_str(path);
    if let Some(query) = query {
        out.push('?');
        for (i, part) in query.split('&').enumerate() {
            if i > 0 {
                out.push('&');
            }
            match part.split_once('=') {
                Some((name, "")) => {
                    out.push_str(name);
                    out.push('=');
                }
                Some((name, _)) => {
                    out.push_str(name);
                    out.push('=');
                    out.push_str(MASK);
                }
                None if part.is_empty() => {}
                None => out.push_str(MASK),
            }
        }
    }
    if fragment.len() > 1 {
        out.push('#');
        out.push_str(MASK);
    } else {
        out.push_str(fragment);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_lose_their_user_information_query_values_and_fragment() {
        for (text, expected) in [
            ("https://bob:secret@upstream.example/path?token=abc", "https://***@upstream.example/path?token=***"),
            ("https://bob@upstream.example", "https://***@upstream.example"),
            // A password with an unencoded `@`: the authority's last `@` ends it.
            ("https://bob:p@ss@upstream.example:8443/", "https://***@upstream.example:8443/"),
            ("https://upstream.example/x?a=1&b=&c#frag", "https://upstream.example/x?a=***&b=&***#***"),
            ("https://upstream.example/?", "https://upstream.example/?"),
            // An `@` in the path (an npm scope) is not user information.
            ("https://registry.npmjs.org/@types/node", "https://registry.npmjs.org/@types/node"),
            // Provider messages: URLs among words, ended by quotes and white space.
            (
                "apply failed: Put \"https://admin:hunter2@artifactory.example.com/api?sig=x1\": context deadline exceeded, and ftp://u:p@h later",
                "apply failed: Put \"https://***@artifactory.example.com/api?sig=***\": context deadline exceeded, and ftp://***@h later",
            ),
            // Inside JSON text: the closing quote ends the URL.
            (r#"{"url":"https://a:b@h/?k=v"}"#, r#"{"url":"https://***@h/?k=***"}"#),
            ("no url here: bob:secret@host", "no url here: bob:secret@host"),
            ("", ""),
        ] {
            assert_eq!(masked(text), expected, "{text}");
            assert_eq!(masked(expected), expected, "masking is idempotent: {expected}");
            assert_eq!(
                matches!(masked(text), Cow::Borrowed(_)),
                text == expected,
                "borrowed exactly when nothing is masked: {text}"
            );
        }
    }

    #[test]
    fn quoted_values_are_masked_before_they_are_cut() {
        let value = Value::String(format!(
            "https://bob:secret@upstream.example/{}",
            "x".repeat(100)
        ));
        let text = quoted(&value);
        assert!(
            text.starts_with("\"https://***@upstream.example/x"),
            "{text}"
        );
        assert!(!text.contains("secret") && !text.contains("bob"), "{text}");
    }

    #[test]
    fn articles_follow_how_words_are_said() {
        for (word, article) in [
            ("npm", "an"),
            ("maven", "a"),
            ("OCIRepository", "an"),
            ("NPMRepository", "an"),
            ("VCSRepository", "a"),
            ("MavenRepository", "a"),
            ("alpine", "an"),
            ("rpm", "an"),
            ("helm", "a"),
            ("NpmRepository", "an"),
            ("LocalNpmRepository", "a"),
            ("RpmRepository", "an"),
            ("SbtRepository", "an"),
            ("VcsRepository", "a"),
            ("OciRepository", "an"),
            ("CRANRepository", "a"),
            ("CranRepository", "a"),
            ("PypiRepository", "a"),
            ("PyPIRepository", "a"),
            ("HelmOCIRepository", "a"),
            ("", "a"),
        ] {
            assert_eq!(a_or_an(word), article, "{word}");
        }
    }

    #[test]
    fn closest_finds_typos_only() {
        let known = ["description", "repositories", "packageType"];
        assert_eq!(closest("descripton", known), Some("description"));
        assert_eq!(closest("packagetype", known), Some("packageType"));
        assert_eq!(closest("zzz", known), None);
    }

    #[test]
    fn a_call_keeps_the_first_problems_and_counts_the_others_once() {
        let mut findings = Findings::default();
        for round in 0..2 {
            for i in 0..150 {
                let category = if i == 149 {
                    Category::InvalidWiring
                } else {
                    Category::InvalidKey
                };
                findings.problem(category, format!("p{i}"), Some(i), "bad", "good");
            }
            assert_eq!(findings.problems.len(), PROBLEM_LIMIT, "round {round}");
            assert_eq!(
                findings.omitted_problems(),
                50,
                "duplicates are not counted"
            );
        }
        assert_eq!(findings.problem_count(), 150);
        // The omitted problems' categories count for the reason.
        assert_eq!(findings.fatal_reason(), "InvalidComposite");
        let message = findings.fatal_message();
        assert!(message.starts_with(
            "cannot render the Artifactory repositories: 150 problems\n- p0: bad; fix: good"
        ));
        assert!(message.ends_with("\n- p99: bad; fix: good\n- and 50 more (a call lists the first 100; fix these and run again)"));
        assert!(findings
            .summary(5, 400)
            .ends_with("\n- and 145 more (the composite's events list the first 100)"));
    }

    #[test]
    fn a_fix_is_worked_out_only_for_a_problem_kept() {
        let mut findings = Findings::default();
        for i in 0..PROBLEM_LIMIT {
            findings.problem(Category::InvalidKey, format!("p{i}"), None, "bad", "good");
        }
        findings.problem_with(Category::InvalidKey, "late", None, "bad", || {
            panic!("a fix of an omitted problem")
        });
        assert_eq!(findings.omitted_problems(), 1);
    }

    #[test]
    fn a_foremost_problem_takes_the_place_of_the_last_kept() {
        let mut findings = Findings::default();
        for i in 0..PROBLEM_LIMIT + 5 {
            findings.problem(
                Category::InvalidWiring,
                format!("p{i}"),
                Some(i),
                "bad",
                "good",
            );
        }
        findings.foremost_problem(
            Category::InvalidComposite,
            "spec.repositories",
            "too large",
            "split",
        );
        findings.foremost_problem(
            Category::InvalidComposite,
            "spec.repositories",
            "too large",
            "split",
        );
        assert_eq!(findings.problems.len(), PROBLEM_LIMIT);
        assert_eq!(findings.omitted_problems(), 6);
        let message = findings.fatal_message();
        assert!(
            message.contains("\n- spec.repositories: too large; fix: split\n- p0: bad"),
            "{message}"
        );
        assert!(!message.contains("- p99:"), "{message}");
        // The problem it replaced is a duplicate when found again.
        findings.problem(Category::InvalidWiring, "p99", Some(99), "bad", "good");
        assert_eq!(findings.omitted_problems(), 6);
    }

    #[test]
    fn long_texts_are_cut() {
        let mut findings = Findings::default();
        let long = "x".repeat(5_000);
        findings.problem(Category::InvalidKey, long.clone(), None, long.clone(), long);
        let problem = &findings.problems[0];
        for text in [&problem.path, &problem.message, &problem.fix] {
            assert_eq!(text.chars().count(), PROBLEM_TEXT_CHARS + 3);
            assert!(text.ends_with("x..."));
        }
    }

    #[test]
    fn suggestions_list_few_candidates_or_the_nearest_of_many() {
        assert_eq!(
            suggestion("zzz", ["Delete", "Orphan"]),
            "use one of: Delete, Orphan"
        );
        let names: Vec<String> = (0..100).map(|i| format!("entry-{i:03}")).collect();
        let text = suggestion("qqqq", names.iter().map(String::as_str));
        assert!(
            text.starts_with("use one of the 100 names allowed here, the nearest of which are "),
            "{text}"
        );
        let listed = text.rsplit_once(" are ").map_or("", |(_, list)| list);
        assert_eq!(listed.split(", ").count(), NEAREST, "{text}");
    }

    #[test]
    fn lists_of_many_items_are_cut() {
        let items: Vec<String> = (0..25).map(|i| i.to_string()).collect();
        assert_eq!(some_of(&items[..3]), "0, 1, 2");
        assert_eq!(some_of(&items), "0, 1, 2, 3, 4, 5, 6, 7, 8, 9 and 15 more");
    }

    #[test]
    fn fatal_message_lists_every_problem() {
        let mut findings = Findings::default();
        findings.problem(Category::InvalidKey, "a", None, "bad", "good");
        findings.problem(Category::InvalidWiring, "b", Some(1), "worse", "better");
        assert_eq!(findings.fatal_reason(), "InvalidComposite");
        assert_eq!(
            findings.fatal_message(),
            "cannot render the Artifactory repositories: 2 problems\n- a: bad; fix: good\n- b: worse; fix: better"
        );
    }
}
