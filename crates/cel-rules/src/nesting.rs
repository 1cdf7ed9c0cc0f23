//! How deep a rule nests, estimated from its tokens before it is parsed: a long chain such as
//! `1+1+…+1` nests one level a term (the tree is as deep as the chain is long), and the parser
//! counts only brackets against its own limit, so a chain far past [`super::MAX_DEPTH`] is
//! refused here unparsed, at the cost of a scan, before it is built to be measured. The tree of
//! a rule that is parsed is measured exactly afterwards.
//!
//! The estimate follows the grammar: operators of one chain (arithmetic, comparison, `in`,
//! selection, calls, indexing, `?:`) nest one level each; `&&`, `||` and commas do not (the
//! parser balances the first two, and the third separates arguments); a bracketed expression
//! adds its own depth to the chain it is part of.

/// One bracket level being scanned: the deepest finished segment, and the current one.
#[derive(Default)]
struct Level {
    deepest: usize,
    operators: usize,
    deepest_child: usize,
}

impl Level {
    /// Ends the current segment (at a separator or at the closing bracket).
    fn end_segment(&mut self) {
        let depth = self.operators + self.deepest_child + 1;
        self.deepest = self.deepest.max(depth);
        self.operators = 0;
        self.deepest_child = 0;
    }
}

/// The estimated depth of `source`'s expression tree.
pub(super) fn estimate(source: &str) -> usize {
    let bytes = source.as_bytes();
    let mut levels = vec![Level::default()];
    let mut i = 0;
    // Whether the previous token ends an operand, so `(` and `[` are a call and an index.
    let mut after_operand = false;
    while i < bytes.len() {
        let c = bytes[i];
        let level = levels.len() - 1;
        match c {
            b' ' | b'\t' | b'\n' | b'\r' | b'\x0c' => i += 1,
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            b'\'' | b'"' => {
                i = skip_string(bytes, i, false);
                after_operand = true;
            }
            b'`' => {
                i += 1;
                while i < bytes.len() && bytes[i] != b'`' {
                    i += 1;
                }
                i += 1;
                after_operand = true;
            }
            b'0'..=b'9' => {
                i = skip_number(bytes, i);
                after_operand = true;
            }
            c if c.is_ascii_alphabetic() || c == b'_' => {
                let start = i;
                while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                    i += 1;
                }
                let word = &bytes[start..i];
                let raw_or_bytes = matches!(word, b"r" | b"R" | b"b" | b"B")
                    || matches!(
                        word,
                        b"rb" | b"rB" | b"Rb" | b"RB" | b"br" | b"bR" | b"Br" | b"BR"
                    );
                if raw_or_bytes && matches!(bytes.get(i), Some(b'\'' | b'"')) {
                    let raw = word.iter().any(|c| c.eq_ignore_ascii_case(&b'r'));
                    i = skip_string(bytes, i, raw);
                    after_operand = true;
                } else if word == b"in" {
                    levels[level].operators += 1;
                    after_operand = false;
                } else {
                    after_operand = true;
                }
            }
            b'(' | b'[' | b'{' => {
                if after_operand && c != b'{' {
                    levels[level].operators += 1;
                }
                levels.push(Level::default());
                after_operand = false;
                i += 1;
            }
            b')' | b']' | b'}' => {
                if levels.len() > 1 {
                    let mut closed = levels.pop().unwrap_or_default();
                    closed.end_segment();
                    let parent = levels.len() - 1;
                    let child = &mut levels[parent].deepest_child;
                    *child = (*child).max(closed.deepest);
                }
                after_operand = true;
                i += 1;
            }
            b',' => {
                levels[level].end_segment();
                after_operand = false;
                i += 1;
            }
            b'&' | b'|' if bytes.get(i + 1) == Some(&c) => {
                levels[level].end_segment();
                after_operand = false;
                i += 2;
            }
            b'!' if bytes.get(i + 1) != Some(&b'=') => {
                // Negations collapse: `!!x` is `x`.
                after_operand = false;
                i += 1;
            }
            _ => {
                // `+ - * / % < > = ! . ? :` and the two-character forms: one operator.
                levels[level].operators += 1;
                after_operand = false;
                i += 1;
                if matches!(bytes.get(i), Some(b'=')) {
                    i += 1;
                }
            }
        }
    }
    // Unclosed brackets are a syntax error the parser reports; count them as closed.
    while levels.len() > 1 {
        let mut closed = levels.pop().unwrap_or_default();
        closed.end_segment();
        let parent = levels.len() - 1;
        levels[parent].deepest_child = levels[parent].deepest_child.max(closed.deepest);
    }
    let mut root = levels.pop().unwrap_or_default();
    root.end_segment();
    root.deepest
}

/// Past the string literal starting at `start` (a quote, or three).
fn skip_string(bytes: &[u8], start: usize, raw: bool) -> usize {
    let quote = bytes[start];
    let triple = bytes.get(start + 1) == Some(&quote) && bytes.get(start + 2) == Some(&quote);
    let mut i = start + if triple { 3 } else { 1 };
    while i < bytes.len() {
        if bytes[i] == b'\\' && !raw {
            i += 2;
            continue;
        }
        if bytes[i] == quote {
            if !triple {
                return i + 1;
            }
            if bytes.get(i + 1) == Some(&quote) && bytes.get(i + 2) == Some(&quote) {
                return i + 3;
            }
        }
        i += 1;
    }
    i
}

/// Past the number starting at `start`: digits, a fraction, an exponent, a hex form, a `u`.
fn skip_number(bytes: &[u8], start: usize) -> usize {
    let mut i = start;
    let mut previous = 0u8;
    while i < bytes.len() {
        let c = bytes[i];
        let fraction = c == b'.' && bytes.get(i + 1).is_some_and(u8::is_ascii_digit);
        let exponent_sign = matches!(c, b'+' | b'-') && matches!(previous, b'e' | b'E');
        if c.is_ascii_alphanumeric() || fraction || exponent_sign {
            previous = c;
            i += 1;
        } else {
            break;
        }
    }
    i
}

#[cfg(test)]
mod tests {
    use super::estimate;

    #[test]
    fn a_chain_nests_an_operator_a_level() {
        assert_eq!(estimate("1"), 1);
        assert_eq!(estimate("1+1+1"), 3);
        assert_eq!(estimate(&vec!["1"; 2000].join("+")), 2000);
        assert_eq!(estimate("self.a.b.c"), 4);
        assert_eq!(estimate("f(1)"), 3, "the call, then its argument");
    }

    #[test]
    fn and_or_and_commas_do_not_nest() {
        assert_eq!(estimate(&vec!["true"; 2000].join(" && ")), 1);
        assert_eq!(estimate(&format!("[{}]", vec!["1"; 2000].join(", "))), 2);
        assert!(estimate(&"!".repeat(2000)) <= 2);
    }

    #[test]
    fn brackets_add_their_depth_to_their_chain() {
        assert_eq!(estimate("(1+1)+1"), 4);
        let nested = format!("{}1{}", "(1+".repeat(95), ")".repeat(95));
        assert!(estimate(&nested) >= 95 * 2, "{}", estimate(&nested));
    }

    #[test]
    fn literals_and_comments_are_skipped() {
        assert_eq!(estimate("'a+b+c' + \"d.e\""), 2);
        assert_eq!(estimate("r'\\\\' + '''x+y'''"), 2);
        assert_eq!(estimate("1.5e+3 + 2u // a + b + c"), 2);
        assert_eq!(estimate("a.`b-c`"), 2);
    }

    #[test]
    fn the_provider_rule_is_shallow() {
        let rule = "!('*' in self.managementPolicies || 'Create' in self.managementPolicies || \
            'Update' in self.managementPolicies) || has(self.forProvider.url) || \
            (has(self.initProvider) && has(self.initProvider.url))";
        assert!(estimate(rule) < 10, "{}", estimate(rule));
    }
}
