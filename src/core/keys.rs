//! Repository keys (docs/design.md, "Keys"): computed from the naming format or
//! given, then checked against Artifactory's rules.
//!
//! A key never depends on generated names, UIDs, time or map order: the same
//! spec always yields the same key, which is what makes it safe to write
//! into `crossplane.io/external-name`.

use crate::core::catalog::{package_family, Rclass};
use crate::core::composite::{CompositeMeta, Entry};
use crate::core::input::SettingsAt;
use crate::core::problems::{Category, Findings};
use sha2::{Digest, Sha256};
use std::borrow::Cow;
use std::fmt::{self, Write};

mod bound;
pub(crate) use bound::Bound;

pub(crate) const PLACEHOLDERS: [&str; 8] = [
    "name",
    "projectKey",
    "packageType",
    "rclass",
    "xrName",
    "namespace",
    "claimName",
    "claimNamespace",
];

/// Keys Artifactory reserves, compared case-insensitively.
pub(crate) const RESERVED_KEYS: [&str; 16] = [
    ".",
    "..",
    "&",
    "jfrog-usage-logs",
    "jfrog-billing-logs",
    "jfrog-logs",
    "artifactory-build-info",
    "artifactory-pipe-info",
    "auto-trashcan",
    "jfrog-support-bundle",
    "_intransit",
    "artifactory-edge-uploads",
    "release-bundles",
    "nginx",
    "apache",
    "direct",
];
const RESERVED_PREFIXES: [&str; 2] = ["jfrog-system-reserved", "jfrog-artifactory-system"];
const FORBIDDEN: &str = " !@#$%^&*()+={}[]:;<>,/?~`|\\\"";

/// The label that carries a rendered repository's key (see [`key_label_value`]).
pub(crate) const KEY_LABEL: &str = "artifactory.fn.crossplane.io/key";

/// The default format: `{name}`, or `{projectKey}-{name}` when a project key is set.
pub(crate) fn default_format(project_key: Option<&str>) -> &'static str {
    if project_key.is_some() {
        "{projectKey}-{name}"
    } else {
        "{name}"
    }
}

/// A key template, checked once for the whole composite.
#[derive(Debug, Clone)]
pub(crate) struct Template {
    pub format: String,
    parts: Vec<Part>,
}

#[derive(Debug, Clone)]
enum Part {
    Text(String),
    Placeholder(&'static str),
}

impl Template {
    /// Parses `format`; reports unknown placeholders and those with no value
    /// for this composite. `None` when the template cannot be used.
    pub(crate) fn parse(
        format: &str,
        meta: &CompositeMeta,
        project_key: Option<&str>,
        at: SettingsAt,
        findings: &mut Findings,
    ) -> Option<Template> {
        let mut parts = Vec::new();
        let mut rest = format;
        let mut usable = true;
        while let Some(open) = rest.find('{') {
            parts.push(Part::Text(rest[..open].to_owned()));
            let Some(close) = rest[open..].find('}') else {
                report_format(
                    findings,
                    at,
                    format,
                    "has a '{' without its '}'",
                    "close every placeholder, as in {projectKey}-{name}",
                );
                return None;
            };
            let name = &rest[open + 1..open + close];
            match PLACEHOLDERS.iter().find(|p| **p == name) {
                Some(placeholder) => {
                    if !composite_value_present(placeholder, meta, project_key) {
                        usable = false;
                        report_missing_value(findings, at, format, placeholder);
                    }
                    parts.push(Part::Placeholder(placeholder));
                }
                None => {
                    usable = false;
                    let known: Vec<String> =
                        PLACEHOLDERS.iter().map(|p| format!("{{{p}}}")).collect();
                    report_format(
                        findings,
                        at,
                        format,
                        &format!("uses the unknown placeholder {{{name}}}"),
                        &format!("use only {}", known.join(", ")),
                    );
                }
            }
            rest = &rest[open + close + 1..];
        }
        parts.push(Part::Text(rest.to_owned()));
        usable.then(|| Template {
            format: format.to_owned(),
            parts,
        })
    }

    /// The key for an entry whose name, class and package type are known.
    pub(crate) fn fill(
        &self,
        name: &str,
        rclass: Rclass,
        package_type: &str,
        meta: &CompositeMeta,
        project_key: Option<&str>,
    ) -> String {
        let texts = self.parts.iter().map(|part| match part {
            Part::Text(text) => text.as_str(),
            Part::Placeholder(p) => match *p {
                "name" => name,
                "packageType" => package_type,
                "rclass" => rclass.as_str(),
                other => composite_value(other, meta, project_key).unwrap_or_default(),
            },
        });
        // Measured first, so that a key is one allocation.
        let mut key = String::with_capacity(texts.clone().map(str::len).sum());
        key.extend(texts);
        key
    }
}

/// A naming format that gives `key` for this entry: each run of the key that is the value of
/// a placeholder (the longest at each place; on a tie, the first of [`PLACEHOLDERS`]) becomes
/// that placeholder. Used to name the format live keys were made with, for a message.
pub(crate) fn format_of_key(
    key: &str,
    name: &str,
    rclass: Rclass,
    package_type: &str,
    meta: &CompositeMeta,
    project_key: Option<&str>,
) -> String {
    let values: Vec<(&str, &str)> = PLACEHOLDERS
        .iter()
        .filter_map(|placeholder| {
            let value = match *placeholder {
                "name" => Some(name),
                "packageType" => Some(package_type),
                "rclass" => Some(rclass.as_str()),
                other => composite_value(other, meta, project_key),
            }?;
            (!value.is_empty()).then_some((*placeholder, value))
        })
        .collect();
    let mut format = String::with_capacity(key.len());
    let mut rest = key;
    while let Some(first) = rest.chars().next() {
        let longest = values
            .iter()
            .filter(|(_, value)| rest.starts_with(value))
            .fold(None::<(&str, &str)>, |best, candidate| match best {
                Some(best) if best.1.len() >= candidate.1.len() => Some(best),
                _ => Some(*candidate),
            });
        match longest {
            Some((placeholder, value)) => {
                let _ = write!(format, "{{{placeholder}}}");
                rest = &rest[value.len()..];
            }
            None => {
                format.push(first);
                rest = &rest[first.len_utf8()..];
            }
        }
    }
    format
}

fn composite_value<'a>(
    placeholder: &str,
    meta: &'a CompositeMeta,
    project_key: Option<&'a str>,
) -> Option<&'a str> {
    match placeholder {
        "projectKey" => project_key,
        "xrName" => Some(meta.name.as_str()).filter(|n| !n.is_empty()),
        "namespace" => meta.namespace.as_deref(),
        "claimName" => meta.claim_name.as_deref(),
        "claimNamespace" => meta.claim_namespace.as_deref(),
        _ => None,
    }
}

fn composite_value_present(
    placeholder: &str,
    meta: &CompositeMeta,
    project_key: Option<&str>,
) -> bool {
    matches!(placeholder, "name" | "packageType" | "rclass")
        || composite_value(placeholder, meta, project_key).is_some()
}

fn report_format(findings: &mut Findings, at: SettingsAt, format: &str, what: &str, fix: &str) {
    findings.problem(
        Category::InvalidInput,
        at.path_of("naming.format"),
        None,
        format!("naming format \"{format}\" {what}"),
        fix,
    );
}

fn report_missing_value(findings: &mut Findings, at: SettingsAt, format: &str, placeholder: &str) {
    let source = match placeholder {
        "projectKey" => "the composite has no spec.projectKey",
        "xrName" => "the composite has no metadata.name",
        "namespace" => "the composite is not namespaced",
        "claimName" => {
            "the composite has no crossplane.io/claim-name label (it is not bound to a claim)"
        }
        _ => {
            "the composite has no crossplane.io/claim-namespace label (it is not bound to a claim)"
        }
    };
    report_format(
        findings,
        at,
        format,
        &format!("uses {{{placeholder}}}, which has no value: {source}"),
        &format!("set what {{{placeholder}}} reads, or remove it from the format"),
    );
}

/// The longest key Artifactory accepts for this class and package type.
pub(crate) fn max_key_length(rclass: Rclass, package_type: &str) -> usize {
    let oci_like = is_oci_like(package_type);
    match rclass {
        Rclass::Remote => 58,
        Rclass::Local | Rclass::Federated if oci_like => 63,
        _ => 64,
    }
}

/// docker (any version), oci and helmoci keys are image names: lower case, no `_`.
fn is_oci_like(package_type: &str) -> bool {
    package_family(package_type) == "docker" || package_type == "oci" || package_type == "helmoci"
}

/// Where a key came from, as messages say it.
#[derive(Debug, Clone, Copy)]
pub(crate) enum KeyOrigin<'a> {
    /// The entry's `key`.
    Given,
    /// Filled in from this naming format.
    Format(&'a str),
}

impl fmt::Display for KeyOrigin<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeyOrigin::Given => f.write_str("from key"),
            KeyOrigin::Format(format) => write!(f, "from naming format \"{format}\""),
        }
    }
}

/// Checks one key; every broken rule is reported. The messages (and `origin`
/// in them) are formatted only when a rule is broken.
pub(crate) fn check_key(
    key: &str,
    entry: &Entry,
    rclass: Rclass,
    package_type: &str,
    origin: impl fmt::Display,
    findings: &mut Findings,
) {
    // An import names a repository Artifactory already holds: a rule Artifactory did not
    // enforce when the repository was made is said, never a reason to refuse the key it has.
    let import = entry.import;
    let mut report = |what: String, fix: String| {
        let message = format!("{}: key \"{key}\" ({origin}) {what}", entry.label());
        if import {
            findings.warning(
                key_path(entry),
                Some(entry.index),
                format!("{message}; the repository is imported, so it keeps the key Artifactory holds it under"),
            );
        } else {
            findings.problem(
                Category::InvalidKey,
                key_path(entry),
                Some(entry.index),
                message,
                fix,
            );
        }
    };
    if key.is_empty() {
        report(
            "is empty".into(),
            "set key, or a naming format that yields a key".into(),
        );
        return;
    }
    let scan = KeyScan::of(key);
    let max = max_key_length(rclass, package_type);
    let length = scan.length;
    if length > max {
        report(
            format!(
                "is {length} characters long; {rclass} {package_type} keys may have at most {max}"
            ),
            "shorten the entry's name or the naming format, or set a shorter key".into(),
        );
    }
    if key.trim() != key {
        report(
            "starts or ends with white space".into(),
            format!("use \"{}\"", key.trim()),
        );
    }
    if scan.forbidden {
        let listed: String = key
            .chars()
            .filter(|c| is_forbidden(*c))
            .map(|c| format!("'{c}' "))
            .collect();
        report(
            format!(
                "contains characters Artifactory forbids in keys: {}",
                listed.trim_end()
            ),
            format!(
                "use letters, digits, '-', '_' and '.', for example \"{}\"",
                sanitize(key, false)
            ),
        );
    }
    if scan.upper_or_underscore && is_oci_like(package_type) {
        report(
            format!("has upper case or '_', which {package_type} keys may not have"),
            format!("use \"{}\"", sanitize(key, true)),
        );
    }
    check_reserved(key, scan.classes, &mut report);
}

/// What [`check_key`] needs from a key's characters, found in one pass. Nearly every key is
/// ASCII, and for those the pass is over bytes, with no character decoding.
struct KeyScan {
    /// The [`byte_classes`] of the key, for the checks that follow.
    classes: u8,
    /// In characters.
    length: usize,
    forbidden: bool,
    upper_or_underscore: bool,
}

impl KeyScan {
    fn of(key: &str) -> KeyScan {
        let classes = byte_classes(key);
        if classes & NON_ASCII == 0 {
            return KeyScan {
                classes,
                length: key.len(),
                forbidden: classes & FORBIDDEN_BYTE != 0,
                upper_or_underscore: classes & (UPPER | UNDERSCORE) != 0,
            };
        }
        KeyScan {
            classes,
            length: key.chars().count(),
            forbidden: key.chars().any(is_forbidden),
            upper_or_underscore: key.chars().any(|c| c.is_uppercase() || c == '_'),
        }
    }
}

/// The classes of a byte that the checks of keys and labels ask about, one bit each: every
/// check is an OR of the classes of a text's bytes, a table lookup a byte with no branch.
const FORBIDDEN_BYTE: u8 = 1;
const UPPER: u8 = 2;
const UNDERSCORE: u8 = 4;
const NON_ASCII: u8 = 8;
/// Not a character of a label value: not an ASCII letter or digit, '-', '_' or '.'.
const NOT_IN_LABEL: u8 = 16;

/// The classes of each byte. Forbidden are the ASCII characters of [`FORBIDDEN`] and the ASCII
/// white space of `char::is_whitespace` (tab, line feed, vertical tab, form feed, carriage
/// return, space); other characters [`is_forbidden`] decides.
const BYTE_CLASSES: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut byte = 0;
    while byte < 256 {
        let b = byte as u8;
        if b.is_ascii_uppercase() {
            table[byte] |= UPPER;
        }
        if b >= 0x80 {
            table[byte] |= NON_ASCII;
        }
        if !(b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.')) {
            table[byte] |= NOT_IN_LABEL;
        }
        if (b >= 0x09 && b <= 0x0d) || b == b' ' {
            table[byte] |= FORBIDDEN_BYTE;
        }
        byte += 1;
    }
    table[b'_' as usize] |= UNDERSCORE;
    let forbidden = FORBIDDEN.as_bytes();
    let mut i = 0;
    while i < forbidden.len() {
        table[forbidden[i] as usize] |= FORBIDDEN_BYTE;
        i += 1;
    }
    table
};

/// The classes of all of `text`'s bytes together.
fn byte_classes(text: &str) -> u8 {
    text.bytes()
        .fold(0, |classes, byte| classes | BYTE_CLASSES[usize::from(byte)])
}

/// Whether Artifactory forbids `c` in keys: the characters of [`FORBIDDEN`] and white space.
fn is_forbidden(c: char) -> bool {
    if c.is_ascii() {
        BYTE_CLASSES[c as usize] & FORBIDDEN_BYTE != 0
    } else {
        c.is_whitespace()
    }
}

/// `text.to_lowercase()`, borrowed when it is already lower case ASCII, as nearly every key is.
fn lower_case(text: &str) -> Cow<'_, str> {
    lower_case_classified(text, byte_classes(text))
}

/// [`lower_case`] of a text whose [`byte_classes`] are known.
fn lower_case_classified(text: &str, classes: u8) -> Cow<'_, str> {
    if classes & (UPPER | NON_ASCII) == 0 {
        Cow::Borrowed(text)
    } else if classes & NON_ASCII != 0 {
        Cow::Owned(text.to_lowercase())
    } else {
        Cow::Owned(text.to_ascii_lowercase())
    }
}

/// `classes` are the key's [`byte_classes`].
fn check_reserved(key: &str, classes: u8, report: &mut impl FnMut(String, String)) {
    let lower = lower_case_classified(key, classes);
    if RESERVED_KEYS.contains(&&*lower) {
        report(
            "is reserved by Artifactory".into(),
            "choose another key".into(),
        );
    }
    if let Some(prefix) = RESERVED_PREFIXES.iter().find(|p| lower.starts_with(*p)) {
        report(
            format!("starts with \"{prefix}\", which Artifactory reserves"),
            "choose another key".into(),
        );
    }
    if lower.ends_with("-cache") {
        report(
            "ends in \"-cache\", which Artifactory reserves for the caches of remote repositories"
                .into(),
            format!(
                "choose another ending, such as \"{}-cached\"",
                key.trim_end_matches("-cache").trim_end_matches("-CACHE")
            ),
        );
    }
}

/// A key with the forbidden characters replaced by '-' (and lower-cased for image keys).
fn sanitize(key: &str, image: bool) -> String {
    let replaced: String = key
        .trim()
        .chars()
        .map(|c| {
            if is_forbidden(c) || (image && c == '_') {
                '-'
            } else {
                c
            }
        })
        .collect();
    if image {
        replaced.to_lowercase()
    } else {
        replaced
    }
}

/// Where a key problem points: the `key` field when given, else the name it came from.
pub(crate) fn key_path(entry: &Entry) -> String {
    entry.field_path(if entry.key.is_some() { "key" } else { "name" })
}

/// Two repositories whose keys are equal ignoring case are one repository to Artifactory.
pub(crate) fn check_unique_keys<'a>(
    keyed: impl IntoIterator<Item = (&'a Entry<'a>, &'a str)>,
    findings: &mut Findings,
) {
    use std::collections::hash_map::{Entry as Slot, HashMap};
    // Hashed, not ordered: only the first entry of each key is looked up.
    let keyed = keyed.into_iter();
    // foldhash, not SipHash, which cost more than the rest of the check.
    let mut seen: HashMap<Cow<str>, &Entry, foldhash::fast::RandomState> =
        HashMap::with_capacity_and_hasher(keyed.size_hint().0, Default::default());
    for (entry, key) in keyed {
        match seen.entry(lower_case(key)) {
            Slot::Vacant(slot) => {
                slot.insert(entry);
            }
            Slot::Occupied(first) => {
                let first = *first.get();
                findings.problem(
                    Category::InvalidKey,
                    key_path(entry),
                    Some(entry.index),
                    format!(
                        "{}: key \"{key}\" is also the key of {} at {} (keys are compared ignoring case)",
                        entry.label(),
                        first.label(),
                        first.path()
                    ),
                    "give each repository its own key",
                );
            }
        }
    }
}

/// Warnings that do not stop the call.
pub(crate) fn key_warnings(
    key: &str,
    entry: &Entry,
    project_key: Option<&str>,
    findings: &mut Findings,
) {
    if key.starts_with(|c: char| c.is_ascii_digit()) {
        findings.warning(
            key_path(entry),
            Some(entry.index),
            format!("key \"{key}\" starts with a digit, which some clients handle badly"),
        );
    }
    if let Some(project) = project_key {
        if !has_project_prefix(key, project) {
            findings.warning(
                key_path(entry),
                Some(entry.index),
                format!("key \"{key}\" does not start with the project key prefix \"{project}-\""),
            );
        }
    }
}

/// Whether `key` starts with the project key and a dash, as the provider's CRDs say a key in
/// a JFrog project must ("repository key must be prefixed with project key, separated by a
/// dash").
pub(crate) fn has_project_prefix(key: &str, project: &str) -> bool {
    key.strip_prefix(project)
        .is_some_and(|rest| rest.starts_with('-'))
}

/// The value of [`KEY_LABEL`]: the lower-cased key when it is a valid label
/// value, else `sha256-` and the first 56 hex digits of its digest. Lower case
/// because Artifactory compares keys ignoring case.
pub(crate) fn key_label_value(key: &str) -> String {
    key_label(key).into_owned()
}

/// [`key_label_value`], borrowed from the key when that is the value, as it is for a key in
/// lower case that is a valid label value.
pub(crate) fn key_label(key: &str) -> Cow<'_, str> {
    let classes = byte_classes(key);
    let lower = lower_case_classified(key, classes);
    // Lower-casing ASCII changes no byte's label class, so the key's classes are its lower
    // case's; other characters may lower-case to ASCII (the Kelvin sign to 'k'): scanned again.
    let lower_classes = if classes & NON_ASCII == 0 {
        classes
    } else {
        byte_classes(&lower)
    };
    if is_label_value_classified(&lower, lower_classes) {
        return lower;
    }
    let digest = Sha256::digest(lower.as_bytes());
    let mut label = String::with_capacity(63);
    label.push_str("sha256-");
    for byte in &digest[..28] {
        write!(label, "{byte:02x}").expect("writing to a String cannot fail");
    }
    Cow::Owned(label)
}

/// `(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?`, at most 63 characters.
#[cfg(test)]
fn is_label_value(text: &str) -> bool {
    is_label_value_classified(text, byte_classes(text))
}

/// [`is_label_value`] of a text whose [`byte_classes`] are known.
fn is_label_value_classified(text: &str, classes: u8) -> bool {
    let bytes = text.as_bytes();
    if bytes.is_empty() {
        return true;
    }
    bytes.len() <= 63
        && bytes[0].is_ascii_alphanumeric()
        && bytes[bytes.len() - 1].is_ascii_alphanumeric()
        && classes & NOT_IN_LABEL == 0
}

#[cfg(test)]
mod tests;
