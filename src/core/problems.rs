//! Problems and warnings, written for the person who has to fix them.
//!
//! A call collects every problem it finds before it gives up, so one fatal
//! result lists them all. Each problem names the field path, what is wrong
//! (with the offending value and the rule it breaks) and how to fix it.

use std::fmt;

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

/// Everything found so far in one call.
#[derive(Debug, Default, Clone)]
pub struct Findings {
    pub problems: Vec<Problem>,
    pub warnings: Vec<Warning>,
    /// What the call rendered, when it did: the provider API and how many repositories
    /// (for the server's metrics, which would otherwise decode the response to tell).
    pub rendered: Option<(crate::core::catalog::ProviderApi, usize)>,
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
        let (path, message) = (path.into(), message.into());
        // A composite-wide setting is checked once per repository that uses
        // it; report each distinct problem once.
        if self
            .problems
            .iter()
            .any(|p| p.path == path && p.message == message)
        {
            return;
        }
        self.problems.push(Problem {
            category,
            path,
            entry,
            message,
            fix: fix.into(),
        });
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

    /// Whether an entry has any problem (so later stages can skip it).
    pub fn entry_has_problems(&self, entry: usize) -> bool {
        self.problems.iter().any(|p| p.entry == Some(entry))
    }

    /// The reason of the fatal result: the category when all agree.
    pub fn fatal_reason(&self) -> &'static str {
        let mut categories = self.problems.iter().map(|p| p.category);
        match categories.next() {
            Some(first) if categories.all(|c| c == first) => first.reason(),
            _ => "InvalidComposite",
        }
    }

    /// The fatal message bounded: the first `shown` problems, each cut at `chars`
    /// characters, and how many more there are.
    pub fn summary(&self, shown: usize, chars: usize) -> String {
        let count = self.problems.len();
        let noun = if count == 1 { "problem" } else { "problems" };
        let mut message = format!("cannot render the Artifactory repositories: {count} {noun}");
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
        if count > shown {
            message.push_str(&format!(
                "\n- and {} more (every problem is in the composite's events)",
                count - shown
            ));
        }
        message
    }

    /// Composite-wide problems first, then entry by entry in spec order.
    fn ordered(&self) -> Vec<&Problem> {
        let mut ordered: Vec<&Problem> = self.problems.iter().collect();
        ordered.sort_by_key(|p| p.entry.map_or(0, |e| e + 1));
        ordered
    }

    /// The message of the fatal result: every problem, one per line.
    pub fn fatal_message(&self) -> String {
        let count = self.problems.len();
        let noun = if count == 1 { "problem" } else { "problems" };
        let mut message = format!("cannot render the Artifactory repositories: {count} {noun}");
        for problem in self.ordered() {
            message.push_str("\n- ");
            message.push_str(&problem.to_string());
        }
        message
    }
}

/// `a` or `an` before a word as it is said: `an npm`, `an OCIRepository`, `a maven`,
/// `an NPMRepository` (a leading acronym is spelled out), `a VCSRepository`.
pub(crate) fn a_or_an(word: &str) -> &'static str {
    let mut letters = word.chars();
    let first = letters.next().unwrap_or('x');
    let spelled_out =
        first.is_ascii_uppercase() && letters.next().is_some_and(|c| c.is_ascii_uppercase());
    // Package types that are acronyms, said letter by letter.
    let acronym = matches!(word, "npm" | "rpm" | "sbt");
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

/// The closest of `candidates` to `given`, if it is close enough to be a typo.
pub(crate) fn closest<'a>(
    given: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let given_lower = given.to_ascii_lowercase();
    candidates
        .into_iter()
        .map(|c| {
            (
                strsim::jaro_winkler(&given_lower, &c.to_ascii_lowercase()),
                c,
            )
        })
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0).then_with(|| b.1.cmp(a.1)))
        .map(|(_, c)| c)
}

/// "did you mean X?" or a list of what is allowed.
pub(crate) fn suggestion<'a>(
    given: &str,
    candidates: impl IntoIterator<Item = &'a str> + Clone,
) -> String {
    match closest(given, candidates.clone()) {
        Some(best) => format!("did you mean \"{best}\"?"),
        None => {
            let all: Vec<&str> = candidates.into_iter().collect();
            format!("use one of: {}", all.join(", "))
        }
    }
}

/// A value quoted for a message, shortened when long.
pub(crate) fn quoted(value: &serde_json::Value) -> String {
    let text = value.to_string();
    if text.chars().count() > 80 {
        let cut: String = text.chars().take(77).collect();
        format!("{cut}...")
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
