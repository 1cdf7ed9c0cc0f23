//! Our parser (`cel_rules::parse`: a lexer and a recursive-descent parser of our own, macros and
//! `sortBy` expanded by us) under test, against the `cel` crate's ANTLR-generated parser as our
//! environment configured it before, kept here as the oracle: the same tree for every rule and
//! message expression of every provider release in the repository's crds/, every expression of
//! tests/cel_limits.rs, and random expressions; and where the oracle refuses a source, a refusal.
//!
//! "The same tree" is the same shape, names, operators and literals, with node ids distinct:
//! the two parsers number some nodes in another order (a map entry before or after its key,
//! `a.?b`, a message literal, `--x`, `sortBy`'s expansion), and nothing reads the numbers (the
//! crate's interpreter never looks at an id; our evaluator only passes them on to it).

use cel::common::ast::{EntryExpr, Expr, IdedExpr};
use cel_rules::parse::parse;
use proptest::prelude::*;
use std::sync::{Arc, OnceLock};

/// The ANTLR parser of the environment the rules were parsed with before: the standard
/// library, the strings and lists extensions (`sortBy`), optional syntax on.
fn oracle(source: &str) -> Result<IdedExpr, String> {
    static ENV: OnceLock<Arc<cel::Env>> = OnceLock::new();
    let env = ENV.get_or_init(|| {
        let mut env = cel::Env::stdlib();
        env.add_extension(cel::extensions::strings).unwrap();
        env.add_extension(cel::extensions::lists).unwrap();
        Arc::new(env)
    });
    env.parser().parse(source).map_err(|e| e.to_string())
}

/// The children of `node`, in the order the parsers number them.
fn children(node: &IdedExpr) -> Vec<&IdedExpr> {
    fn entries(entries: &[cel::common::ast::IdedEntryExpr]) -> Vec<&IdedExpr> {
        entries
            .iter()
            .flat_map(|entry| match &entry.expr {
                EntryExpr::MapEntry(e) => vec![&e.key, &e.value],
                EntryExpr::StructField(f) => vec![&f.value],
            })
            .collect()
    }
    match &node.expr {
        Expr::Call(call) => call
            .target
            .as_deref()
            .into_iter()
            .chain(&call.args)
            .collect(),
        Expr::Comprehension(c) => vec![
            &c.iter_range,
            &c.accu_init,
            &c.loop_cond,
            &c.loop_step,
            &c.result,
        ],
        Expr::List(list) => list.elements.iter().collect(),
        Expr::Map(map) => entries(&map.entries),
        Expr::Struct(s) => entries(&s.entries),
        Expr::Select(select) => vec![&select.operand],
        _ => Vec::new(),
    }
}

/// `root` with every node id replaced by its rank in a depth-first walk: the shape, the names
/// and the values, whatever order the parser numbered them in.
fn renumbered(root: &IdedExpr) -> IdedExpr {
    fn walk(node: &mut IdedExpr, next: &mut u64) {
        node.id = *next;
        *next += 1;
        let entries = |entries: &mut Vec<cel::common::ast::IdedEntryExpr>, next: &mut u64| {
            for entry in entries {
                entry.id = *next;
                *next += 1;
                match &mut entry.expr {
                    EntryExpr::MapEntry(e) => {
                        walk(&mut e.key, next);
                        walk(&mut e.value, next);
                    }
                    EntryExpr::StructField(f) => walk(&mut f.value, next),
                }
            }
        };
        match &mut node.expr {
            Expr::Call(call) => {
                if let Some(target) = call.target.as_deref_mut() {
                    walk(target, next);
                }
                for arg in &mut call.args {
                    walk(arg, next);
                }
            }
            Expr::Comprehension(c) => {
                for child in [
                    &mut c.iter_range,
                    &mut c.accu_init,
                    &mut c.loop_cond,
                    &mut c.loop_step,
                    &mut c.result,
                ] {
                    walk(child, next);
                }
            }
            Expr::List(list) => {
                for element in &mut list.elements {
                    walk(element, next);
                }
            }
            Expr::Map(map) => entries(&mut map.entries, next),
            Expr::Struct(s) => entries(&mut s.entries, next),
            Expr::Select(select) => walk(&mut select.operand, next),
            _ => {}
        }
    }
    let mut copy = root.clone();
    walk(&mut copy, &mut 1);
    copy
}

/// Every node id of the tree is distinct (the evaluator hands ids to the crate).
fn ids_are_distinct(root: &IdedExpr) -> bool {
    let mut seen = std::collections::HashSet::new();
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        if !seen.insert(node.id) {
            return false;
        }
        if let Expr::Map(map) = &node.expr {
            if !map.entries.iter().all(|e| seen.insert(e.id)) {
                return false;
            }
        }
        if let Expr::Struct(s) = &node.expr {
            if !s.entries.iter().all(|e| seen.insert(e.id)) {
                return false;
            }
        }
        stack.extend(children(node));
    }
    true
}

/// How the two parsers differ on `source`, if they do.
fn difference(source: &str) -> Option<String> {
    match (parse(source), oracle(source)) {
        (Ok(ours), Ok(theirs)) => {
            if renumbered(&ours) == renumbered(&theirs) && ids_are_distinct(&ours) {
                return None;
            }
            Some(format!(
                "{source:?}: different trees\n ours: {ours:?}\n ANTLR: {theirs:?}"
            ))
        }
        (Err(_), Err(_)) => None,
        (Ok(ours), Err(theirs)) => Some(format!(
            "{source:?}: ours parses ({ours:?}), ANTLR refuses: {theirs}"
        )),
        (Err(ours), Ok(_)) => Some(format!("{source:?}: ours refuses ({ours}), ANTLR parses")),
    }
}

fn assert_agree(sources: &[String]) {
    // The ANTLR parser recurses once a level of the long chains below: a large stack for it.
    let owned = sources.to_vec();
    let differences: Vec<String> = std::thread::Builder::new()
        .stack_size(1 << 28)
        .spawn(move || owned.iter().filter_map(|s| difference(s)).collect())
        .expect("a thread")
        .join()
        .expect("no panic");
    assert!(
        differences.is_empty(),
        "{} of {} differ:\n{}",
        differences.len(),
        sources.len(),
        differences.join("\n")
    );
}

/// The `rule` and `messageExpression` of every `x-kubernetes-validations` under `value`.
fn collect_rules(value: &serde_json::Value, out: &mut Vec<String>) {
    match value {
        serde_json::Value::Object(fields) => {
            if let Some(serde_json::Value::Array(rules)) = fields.get("x-kubernetes-validations") {
                for rule in rules {
                    for key in ["rule", "messageExpression"] {
                        if let Some(source) = rule.get(key).and_then(|s| s.as_str()) {
                            out.push(source.to_owned());
                        }
                    }
                }
            }
            fields.values().for_each(|v| collect_rules(v, out));
        }
        serde_json::Value::Array(items) => items.iter().for_each(|v| collect_rules(v, out)),
        _ => {}
    }
}

/// The documents of the YAML files of the repository's crds/: every release in
/// crds/provider-crds.tar.zst (`<release>/<file>.yaml`), and every release added as a folder.
fn provider_crds() -> Vec<serde_json::Value> {
    use std::io::Read;
    let crds = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../crds"));
    let mut texts = Vec::new();
    let compressed = std::fs::read(crds.join("provider-crds.tar.zst")).expect("the archive");
    let decoder = ruzstd::decoding::StreamingDecoder::new(&compressed[..]).expect("zstd");
    let mut archive = tar::Archive::new(decoder);
    for entry in archive.entries().expect("a tar") {
        let mut entry = entry.expect("an entry");
        if entry.header().entry_type().is_file() {
            let mut text = String::new();
            entry.read_to_string(&mut text).expect("UTF-8");
            texts.push(text);
        }
    }
    for folder in std::fs::read_dir(crds).expect("crds/") {
        let folder = folder.expect("an entry").path();
        if !folder.is_dir() {
            continue;
        }
        for file in std::fs::read_dir(&folder).expect("a release folder") {
            let file = file.expect("an entry").path();
            if file.extension().is_some_and(|e| e == "yaml" || e == "yml") {
                texts.push(std::fs::read_to_string(&file).expect("UTF-8"));
            }
        }
    }
    texts
        .iter()
        .flat_map(|text| serde_yaml_ng::Deserializer::from_str(text))
        .map(|document| serde::Deserialize::deserialize(document).expect("YAML"))
        .collect()
}

#[test]
fn every_provider_rule_of_every_release_parses_as_antlr_does() {
    let crds = provider_crds();
    let mut rules = Vec::new();
    for crd in &crds {
        collect_rules(crd, &mut rules);
    }
    rules.sort();
    rules.dedup();
    // The provider's CRDs have two rule shapes (a required field, with and without
    // initProvider), the same in every release so far.
    assert!(!rules.is_empty(), "no rules found in crds/");
    eprintln!("{} distinct rules in {} documents", rules.len(), crds.len());
    assert_agree(&rules);
}

/// The string literals of a Rust source file (plain `"..."` ones: the escapes `\"` and `\\`
/// undone).
fn string_literals(source: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = source.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '/' && chars.peek() == Some(&'/') {
            for c in chars.by_ref() {
                if c == '\n' {
                    break;
                }
            }
            continue;
        }
        if c == '\'' {
            // A char literal such as '"': skip it whole.
            let mut lookahead = chars.clone();
            let first = lookahead.next();
            let second = if first == Some('\\') {
                lookahead.next();
                lookahead.next()
            } else {
                lookahead.next()
            };
            if second == Some('\'') {
                chars = lookahead;
            }
            continue;
        }
        if c != '"' {
            continue;
        }
        let mut literal = String::new();
        while let Some(c) = chars.next() {
            match c {
                '"' => break,
                '\\' => match chars.next() {
                    Some('n') => literal.push('\n'),
                    Some('t') => literal.push('\t'),
                    Some(other) => literal.push(other),
                    None => break,
                },
                other => literal.push(other),
            }
        }
        out.push(literal);
    }
    out
}

#[test]
fn every_expression_of_the_limit_tests_parses_as_antlr_does() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/cel_limits.rs");
    let source = std::fs::read_to_string(path).expect("tests/cel_limits.rs");
    let expressions = string_literals(&source);
    assert!(expressions.len() > 150, "{}", expressions.len());
    assert!(expressions.iter().any(|e| e.contains("sortBy")));
    assert_agree(&expressions);
}

#[test]
fn the_limits_own_shapes_parse_as_antlr_does() {
    // The generated rules of tests/cel_limits.rs, at sizes under the nesting limit.
    let sources = vec![
        format!("{} > 0", vec!["1"; 200].join("+")),
        format!("{}1{}", "(1+".repeat(90), ")".repeat(90)),
        format!("{}1{}", "[".repeat(60), "]".repeat(60)),
        format!("{}true", "!".repeat(100)),
        format!("{}1", "-".repeat(100)),
        format!("self{}", ".a".repeat(200)),
        format!("self.s{}", ".replace('a', 'aa')".repeat(30)),
        format!("{} == 1", vec!["self.n"; 100].join(" * ")),
        vec!["true"; 300].join(" && "),
        vec!["false"; 300].join(" || "),
        format!("{}1{}", "true ? ".repeat(40), " : 0".repeat(40)),
    ];
    assert_agree(&sources);
}

#[test]
fn sort_by_and_its_mistakes_parse_as_antlr_does() {
    let sources: Vec<String> = [
        "self.objs.sortBy(o, -o.v)",
        "self.objs.sortBy(o, o.v).map(o, o.name)",
        "[3, 1, 2].sortBy(x, x)",
        "self.a.sortBy(x, x).sortBy(y, -y)",
        "self.a.sortBy(x, self.b.sortBy(y, y)[0])",
        "{'a': [1].sortBy(x, x)}",
        "self.a.map(x, x.sortBy(y, y))",
        "1.sortBy(x, x)",
        "{}.sortBy(x, x)",
        "self.a.sortBy(x.y, x)",
        "self.a.sortBy(x)",
        "sortBy(self.a, x, x)",
        "self.a.sortBy(x, x, x)",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    assert_agree(&sources);
}

#[test]
fn the_grammars_corners_parse_as_antlr_does() {
    let mut sources: Vec<String> = [
        // A sign is the literal's; runs of `!` and `-` are taken whole.
        "-5",
        "- 5",
        "--5",
        "---5",
        "-5.abs()",
        "--5.abs()",
        "-5u",
        "-x",
        "--x",
        "!-5",
        "!--5",
        "!-x",
        "-!x",
        "!!x",
        "-9223372036854775808",
        "--9223372036854775808",
        "9223372036854775808",
        "-0x8000000000000000",
        "0x8000000000000000",
        "18446744073709551615u",
        "18446744073709551616u",
        "0xFFFFFFFFFFFFFFFFu",
        "1e999",
        "-1e999",
        "1e-999",
        "-.5",
        "-.5e3",
        // Numbers as the lexer cuts them.
        "1.",
        "1.e5",
        "1.5u",
        "1e5u",
        "0x",
        "0xu",
        "0X1",
        "1abc",
        "1u2",
        "08",
        ".5",
        "x.5",
        "1.5.5",
        "1..5",
        "1e+",
        "1e+5",
        "1E-5",
        "0x1e5",
        // Strings and bytes.
        r#""""a""""#,
        r#""""""#,
        r#"""""#,
        r#"""""""#,
        r"'''a\nb'''",
        "'''a\nb'''",
        "'a\nb'",
        r"r'\d'",
        r#"R"x""#,
        "rb'x'",
        "br'x'",
        r"Br'\x'",
        "bR'x'",
        "RB'x'",
        r"b'\u0041'",
        r"b'\xff'",
        r"'\xff'",
        r"'\ud800'",
        r"'\U0010FFFF'",
        r"'\U00110000'",
        r"'\400'",
        r"'\377'",
        r"b'\377'",
        r"'\d'",
        "'a\r\nb'",
        "r'a\r\nb'",
        "'''a\r\nb'''",
        "'é'",
        r"'\`'",
        "`a`",
        "a.`b`",
        "é",
        "#",
        "a = b",
        "a & b",
        "a | b",
        // Lists, maps, messages.
        "[]",
        "[,]",
        "[1,]",
        "[1,,]",
        "[,1]",
        "{}",
        "{,}",
        "{1:2,}",
        "{?1:2}",
        "[?1]",
        "A{}",
        "A{,}",
        "a.b.C{f: 1}",
        ".a.B{?f: 1, g: 2,}",
        "a.b{}",
        "A{f: 1, f: 2}",
        "A{`f`: 1}",
        "a.?b{}",
        "a{}.b",
        "f(){}",
        // Calls, selections, reserved words.
        "f()",
        "f(1,)",
        ".f(1)",
        ".x",
        ".x.y",
        "a.if",
        "a.if()",
        "if",
        "if(1)",
        "a.in",
        "a.true",
        "in",
        "a in b in c",
        "a < b < c",
        "a == b != c",
        "a ? b : c ? d : e",
        "a ? b ? c : d : e",
        "a.?b",
        "a.?b.c",
        "a[?b]",
        "a.?b(1)",
        "a.b(1)(2)",
        "has(a)",
        "has(a.b)",
        "has(a.?b)",
        ".has(a.b)",
        "a.has(b.c)",
        "x.all(y)",
        "x.map(a, b, c)",
        "x.map(a, b, c, d)",
        "x.filter(1, y)",
        "x.exists(.y, y)",
        "x.existsOne(y, y)",
        "x.sortBy(y, y)",
        "1 + 2 * 3 - 4 / 5 % 6",
        "a || b && c || d && e || f",
        "a && b && c && d && e",
        "// a comment\n1",
        "1 // a comment",
        "1 /",
        "",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    // Nesting at and past the parsers' limit.
    for depth in [94, 95, 96, 97] {
        sources.push(format!("{}1{}", "(".repeat(depth), ")".repeat(depth)));
        sources.push(format!("{}1{}", "[".repeat(depth), "]".repeat(depth)));
        sources.push(format!("{}1{}", "f(".repeat(depth), ")".repeat(depth)));
        sources.push(format!("{}1{}", "a[".repeat(depth), "]".repeat(depth)));
        sources.push(format!("{}0", "true ? 1 : ".repeat(depth)));
        sources.push(format!("{}1{}", "{1: ".repeat(depth), "}".repeat(depth)));
    }
    assert_agree(&sources);
}

/// A random CEL expression of at most `depth` levels, valid in the main but not always.
fn expression() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        Just("self".to_owned()),
        Just("x".to_owned()),
        Just("null".to_owned()),
        Just("true".to_owned()),
        Just("false".to_owned()),
        (0u64..u64::MAX).prop_map(|n| n.to_string()),
        (0u64..1000).prop_map(|n| format!("{n}u")),
        (0u64..1000).prop_map(|n| format!("0x{n:X}")),
        (0u32..1000, 0u32..1000).prop_map(|(a, b)| format!("{a}.{b}")),
        (0u32..100, -5i32..5).prop_map(|(a, e)| format!("{a}e{e}")),
        Just("1.".to_owned()),
        Just(".5".to_owned()),
        Just("9223372036854775808".to_owned()),
        Just("-9223372036854775808".to_owned()),
        Just("18446744073709551616u".to_owned()),
        "[a-zA-Z_][a-zA-Z0-9_]{0,6}",
        "'[a-z \\\\\"'%0-9]{0,6}'".prop_map(|s| s),
        "\"[a-z '\\\\]{0,6}\"",
        "[rRbB]{1,2}'[a-z\\\\]{0,4}'",
        "'''[a-z\n']{0,5}'''",
        Just("'\\x41\\u00e9\\U0001F600\\101\\a\\b\\f\\n\\r\\t\\v\\\\\\'\\\"\\`\\?'".to_owned()),
        Just("b'\\xff\\377'".to_owned()),
        Just("'\\u00'".to_owned()),
        Just("'\\400'".to_owned()),
        Just("`a.b`".to_owned()),
        Just(".x".to_owned()),
        Just("in".to_owned()),
        Just("while".to_owned()),
    ];
    leaf.prop_recursive(5, 48, 4, |inner| {
        let binary = prop::sample::select(vec![
            "+", "-", "*", "/", "%", "==", "!=", "<", "<=", ">", ">=", "&&", "||", "in",
        ]);
        prop_oneof![
            (inner.clone(), binary, inner.clone()).prop_map(|(a, op, b)| format!("{a} {op} {b}")),
            (
                prop::sample::select(vec!["!", "-", "!!", "--"]),
                inner.clone()
            )
                .prop_map(|(op, a)| format!("{op}{a}")),
            (inner.clone(), inner.clone(), inner.clone())
                .prop_map(|(a, b, c)| format!("{a} ? {b} : {c}")),
            inner.clone().prop_map(|a| format!("({a})")),
            (inner.clone(), "[a-z]{1,4}", prop::bool::weighted(0.2))
                .prop_map(|(a, f, opt)| format!("{a}.{}{f}", if opt { "?" } else { "" })),
            (inner.clone(), inner.clone(), prop::bool::weighted(0.2))
                .prop_map(|(a, i, opt)| format!("{a}[{}{i}]", if opt { "?" } else { "" })),
            (
                prop::sample::select(vec![
                    "size", "has", "int", "string", "f", "dyn", "type", "matches"
                ]),
                prop::collection::vec(inner.clone(), 0..3)
            )
                .prop_map(|(f, args)| format!("{f}({})", args.join(", "))),
            (
                inner.clone(),
                prop::sample::select(vec![
                    "all",
                    "exists",
                    "exists_one",
                    "existsOne",
                    "map",
                    "filter",
                    "sortBy",
                    "size",
                    "contains",
                    "orValue"
                ]),
                prop::sample::select(vec!["x", "y", "x.y", "1"]),
                prop::collection::vec(inner.clone(), 0..3)
            )
                .prop_map(|(t, f, v, rest)| {
                    let mut args = vec![v.to_owned()];
                    args.extend(rest);
                    format!("{t}.{f}({})", args.join(", "))
                }),
            (
                prop::collection::vec((prop::bool::weighted(0.2), inner.clone()), 0..4),
                prop::bool::weighted(0.1)
            )
                .prop_map(|(items, trailing)| format!(
                    "[{}{}]",
                    items
                        .iter()
                        .map(|(o, e)| format!("{}{e}", if *o { "?" } else { "" }))
                        .collect::<Vec<_>>()
                        .join(", "),
                    if trailing { "," } else { "" }
                )),
            prop::collection::vec(
                (prop::bool::weighted(0.2), inner.clone(), inner.clone()),
                0..3
            )
            .prop_map(|entries| format!(
                "{{{}}}",
                entries
                    .iter()
                    .map(|(o, k, v)| format!("{}{k}: {v}", if *o { "?" } else { "" }))
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
            (
                "[A-Z][a-z]{0,3}",
                prop::collection::vec(("[a-z]{1,3}", inner.clone()), 0..3)
            )
                .prop_map(|(name, fields)| format!(
                    "{name}{{{}}}",
                    fields
                        .iter()
                        .map(|(f, v)| format!("{f}: {v}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
        ]
    })
}

/// Token soup: mostly broken sources, for the refusals.
fn soup() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop::sample::select(vec![
            "(",
            ")",
            "[",
            "]",
            "{",
            "}",
            ".",
            ",",
            ":",
            "?",
            "!",
            "-",
            "+",
            "*",
            "/",
            "%",
            "==",
            "=",
            "<",
            ">=",
            "&&",
            "||",
            "&",
            "|",
            "in",
            "x",
            "self",
            "1",
            "1u",
            "1.5",
            "'s'",
            "\"",
            "'",
            "`",
            "#",
            "@",
            "$",
            " ",
            "\n",
            "//c\n",
            "has",
            "all",
            "true",
            "null",
            "'''",
            "\"\"\"",
            "r",
            "b",
            "br",
            "R",
            "0x",
            "1e",
            "e5",
            ".5",
            "u",
            "\\",
            "\\x4",
            "?.",
            "[?",
            "{?",
            "A{",
            ".B",
            "if",
            "--",
            "!!",
            "9223372036854775808",
            "0",
            "é",
            "\r",
            "\t",
            "map",
            "(x, x)",
        ]),
        0..16,
    )
    .prop_map(|tokens| tokens.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, .. ProptestConfig::default() })]

    #[test]
    fn random_expressions_parse_as_antlr_does(source in expression()) {
        if let Some(difference) = difference(&source) {
            prop_assert!(false, "{}", difference);
        }
    }

    #[test]
    fn random_token_soup_is_refused_or_parsed_as_antlr_does(source in soup()) {
        if let Some(difference) = difference(&source) {
            prop_assert!(false, "{}", difference);
        }
    }
}
