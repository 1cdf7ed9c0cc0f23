//! Field paths for messages, such as `spec.repositories[3].forProvider.xrayIndex`.
//!
//! Nearly every check passes, so a path is not text until a problem or warning
//! needs it: it is a chain of borrowed segments on the stack, and formatting it
//! (`to_string`, `{}`) writes the text.

use std::fmt;

/// A field path, formatted only when a message needs it.
#[derive(Debug, Clone, Copy)]
pub(crate) enum FieldPath<'a> {
    /// A path written out: `spec`, `input.defaults`, `spec.projectKey`.
    Root(&'a str),
    /// A repository entry: `spec.repositories[3]`.
    Entry(usize),
    /// A field of a repository entry: `spec.repositories[3].name`.
    EntryField(usize, &'a str),
    /// A field of the parent: `<parent>.name`.
    Field(&'a FieldPath<'a>, &'a str),
    /// An item of the parent list: `<parent>[3]`.
    Index(&'a FieldPath<'a>, usize),
}

impl<'a> FieldPath<'a> {
    /// `<self>.name`.
    pub(crate) fn field(&'a self, name: &'a str) -> FieldPath<'a> {
        FieldPath::Field(self, name)
    }

    /// `<self>[index]`.
    pub(crate) fn index(&'a self, index: usize) -> FieldPath<'a> {
        FieldPath::Index(self, index)
    }
}

impl fmt::Display for FieldPath<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FieldPath::Root(text) => f.write_str(text),
            FieldPath::Entry(index) => write!(f, "spec.repositories[{index}]"),
            FieldPath::EntryField(index, name) => write!(f, "spec.repositories[{index}].{name}"),
            FieldPath::Field(parent, name) => write!(f, "{parent}.{name}"),
            FieldPath::Index(parent, index) => write!(f, "{parent}[{index}]"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_like_the_messages_spell_paths() {
        let entry = FieldPath::Entry(3);
        let members = entry.field("members");
        let member = members.index(0);
        assert_eq!(
            member.field("url").to_string(),
            "spec.repositories[3].members[0].url"
        );
        assert_eq!(
            FieldPath::EntryField(3, "forProvider")
                .field("x")
                .to_string(),
            "spec.repositories[3].forProvider.x"
        );
        assert_eq!(
            FieldPath::Root("input.defaults").field("x").to_string(),
            "input.defaults.x"
        );
    }
}
