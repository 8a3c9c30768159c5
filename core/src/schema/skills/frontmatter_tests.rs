//! Tests of the frontmatter reader.
#![allow(clippy::unwrap_used)]

use serde_json::json;

use super::*;

fn read(yaml: &str) -> Parsed<Value> {
    parse_frontmatter(format!("---\n{yaml}---\nbody\n").as_bytes()).map(Value::Object)
}

fn error(yaml: &str) -> FrontmatterError {
    read(yaml).unwrap_err()
}

#[test]
fn the_fields_skills_use() {
    let yaml = "\
name: pdf-processing   # the name
description: Extract, fill, and assemble PDF documents
license: Apache-2.0
allowed-tools: Bash(git:*) Read
compatibility: \"Needs \\\"pdftk\\\"\\tand python\"
metadata:
  version: '2.1.0'
  author: it's me
  io.modelcontextprotocol/x: 1

";
    assert_eq!(
        read(yaml).unwrap(),
        json!({
            "name": "pdf-processing",
            "description": "Extract, fill, and assemble PDF documents",
            "license": "Apache-2.0",
            "allowed-tools": "Bash(git:*) Read",
            "compatibility": "Needs \"pdftk\"\tand python",
            "metadata": {"version": "2.1.0", "author": "it's me", "io.modelcontextprotocol/x": 1},
        })
    );
}

#[test]
fn scalars_resolve_as_the_core_schema_says() {
    let yaml = "a: 12\nb: -7\nc: 1.5\nd: 2e3\ne: .5\nf: true\ng: False\nh: ~\ni:\nj: null\nk: 0x1F\nl: 0o17\n\
                m: 007\nn: yes\no: 1.2.3\np: 2024-01-01\nq: '12'\nr: \"true\"\ns: 18446744073709551616\n";
    assert_eq!(
        read(yaml).unwrap(),
        json!({"a": 12, "b": -7, "c": 1.5, "d": 2000.0, "e": 0.5, "f": true, "g": false, "h": null,
               "i": null, "j": null, "k": 31, "l": 15, "m": 7, "n": "yes", "o": "1.2.3",
               "p": "2024-01-01", "q": "12", "r": "true", "s": 18446744073709551616.0})
    );
    assert!(matches!(error("a: .inf\n"), FrontmatterError::Unsupported { line: 2, .. }));
    assert!(matches!(error("a: -.INF\n"), FrontmatterError::Unsupported { .. }));
    assert!(matches!(error("a: .nan\n"), FrontmatterError::Unsupported { .. }));
}

#[test]
fn plain_values_fold_over_lines() {
    let yaml = "description: Extract text\n  and tables\n\n  from PDFs\nname: x\n";
    assert_eq!(
        read(yaml).unwrap(),
        json!({"description": "Extract text and tables\nfrom PDFs", "name": "x"})
    );
}

#[test]
fn block_scalars_with_their_chomping() {
    let yaml = "a: |\n  one\n   two\n\n  three\n\nb: >\n  one\n  two\n\n  three\n    four\n  five\nc: |-\n  x\n\
                d: >+\n  y\n\n\ne: |2\n    indented\nf: |\n";
    assert_eq!(
        read(yaml).unwrap(),
        json!({"a": "one\n two\n\nthree\n", "b": "one two\nthree\n  four\nfive\n", "c": "x",
               "d": "y\n\n\n", "e": "  indented\n", "f": ""})
    );
    assert!(matches!(error("a: |x\n  y\n"), FrontmatterError::Syntax { line: 2, .. }));
}

#[test]
fn sequences_block_and_flow() {
    let yaml = "tools:\n  - Read\n  - 'Bash'\nsame:\n- 1\n- [2, \"3\"]\nmaps:\n  - name: a\n    level: 2\n  - - x\n    - y\n\
                flow: {a: 1, b: [x, {c: d}], e: , 'f g': \"h\"}\nempty: []\nnone: {}\n";
    assert_eq!(
        read(yaml).unwrap(),
        json!({"tools": ["Read", "Bash"], "same": [1, [2, "3"]],
               "maps": [{"name": "a", "level": 2}, ["x", "y"]],
               "flow": {"a": 1, "b": ["x", {"c": "d"}], "e": null, "f g": "h"}, "empty": [], "none": {}})
    );
}

#[test]
fn double_quoted_escapes() {
    let yaml = "a: \"\\x41\\u00e9\\U0001F600\\n\\\\\\/\"\nb: 'it''s'\n\"quoted key\": 1\n";
    assert_eq!(read(yaml).unwrap(), json!({"a": "Aé😀\n\\/", "b": "it's", "quoted key": 1}));
    assert!(matches!(error("a: \"\\q\"\n"), FrontmatterError::Syntax { .. }));
    assert!(matches!(error("a: \"\\ud800\"\n"), FrontmatterError::Syntax { .. }));
}

#[test]
fn the_delimiters() {
    assert_eq!(parse_frontmatter(b"---\n---\n").unwrap(), Map::new());
    assert_eq!(
        parse_frontmatter(b"\xEF\xBB\xBF---\r\nname: a\r\n---  \r\nbody").unwrap(),
        json!({"name": "a"}).as_object().unwrap().clone()
    );
    assert_eq!(parse_frontmatter(b"# Title\n"), Err(FrontmatterError::Missing));
    assert_eq!(parse_frontmatter(b" ---\nname: a\n---\n"), Err(FrontmatterError::Missing));
    assert_eq!(parse_frontmatter(b"---\nname: a\n"), Err(FrontmatterError::Unterminated));
    assert_eq!(parse_frontmatter(b"---\nname: \xff\n---\n"), Err(FrontmatterError::NotUtf8));
    // Invalid UTF-8 in the body is the body's business.
    assert!(parse_frontmatter(b"---\nname: a\n---\n\xff").is_ok());
}

#[test]
fn what_is_refused_is_named() {
    let cases: &[(&str, FrontmatterError)] = &[
        ("- a\n", FrontmatterError::NotAMapping),
        ("just text\n", FrontmatterError::NotAMapping),
        ("%YAML 1.2\n", FrontmatterError::Unsupported { line: 2, feature: "a directive" }),
        ("a: 1\na: 2\n", FrontmatterError::DuplicateKey { line: 3, key: "a".into() }),
        ("a: {b: 1, b: 2}\n", FrontmatterError::DuplicateKey { line: 2, key: "b".into() }),
        ("a: &x 1\n", FrontmatterError::Unsupported { line: 2, feature: "an anchor (`&`)" }),
        ("a: *x\n", FrontmatterError::Unsupported { line: 2, feature: "an alias (`*`)" }),
        ("a: !!str 1\n", FrontmatterError::Unsupported { line: 2, feature: "a tag (`!`)" }),
        ("? a\n: b\n", FrontmatterError::NotAMapping),
        (
            "a: \"open\n  end\"\n",
            FrontmatterError::Unsupported { line: 2, feature: "a quoted value over several lines" },
        ),
        (
            "a: [1,\n  2]\n",
            FrontmatterError::Unsupported { line: 2, feature: "a flow collection over several lines" },
        ),
    ];
    for (yaml, expected) in cases {
        assert_eq!(&error(yaml), expected, "{yaml:?}");
    }
    for yaml in [
        "a: b: c\n",
        "a: b:\n",
        "a: 1\n  b: 2\n",
        "a:\n  b: 1\n c: 2\n",
        "a: - b\n",
        "a:\n\t- b\n",
        "a: 'x' y\n",
        "a: [1] 2\n",
        "a: @x\n",
        "a: `x`\n",
        ": b\n",
        "a: 1\n- b\n",
        "a: [1, , 2]\n",
    ] {
        assert!(matches!(error(yaml), FrontmatterError::Syntax { .. }), "{yaml:?}: {:?}", read(yaml));
    }
}

#[test]
fn nesting_is_bounded() {
    let deep_flow = format!("a: {}{}\n", "[".repeat(100), "]".repeat(100));
    assert!(matches!(error(&deep_flow), FrontmatterError::TooDeep { line: 2 }));
    let deep_block: String = (0..100).map(|i| format!("{}k{i}:\n", " ".repeat(i))).collect();
    assert!(matches!(error(&deep_block), FrontmatterError::TooDeep { .. }));
    let fine: String = (0..10).map(|i| format!("{}k{i}:\n", " ".repeat(i))).collect();
    assert!(read(&fine).is_ok());
}

#[test]
fn arbitrary_bytes_never_panic() {
    let samples: &[&[u8]] = &[
        b"---\n",
        b"---\n|",
        b"---\na: |\n",
        b"---\na: >-\n\n\n---\n",
        b"---\na: \"\\",
        b"---\n- - - \n---\n",
        b"---\na: {\n---\n",
        b"---\na: [\"\n---\n",
        b"---\n'\n---\n",
        b"---\n\"a\" b\n---\n",
        b"---\n   \n\t\n---\n",
    ];
    for sample in samples {
        let _ = parse_frontmatter(sample);
    }
    // Every prefix of a rich document.
    let doc = "---\nname: a\nlist:\n  - x: 1\n    y: [1, {z: \"q\\u0041\"}]\n  - |+\n    text\n\nb: >2\n   c\n---\n";
    for end in 0..=doc.len() {
        if doc.is_char_boundary(end) {
            let _ = parse_frontmatter(&doc.as_bytes()[..end]);
        }
    }
}

proptest::proptest! {
    /// Whatever the frontmatter holds, reading it ends with a value or an error, never a panic;
    /// the alphabet is YAML's indicators, blanks and line breaks.
    #[test]
    fn any_text_is_read_or_refused(body in "[a-z0-9 \t\n:#'\"|>+\\-\\[\\]{},.&*!?%@`~]{0,200}") {
        let _ = parse_frontmatter(format!("---\n{body}\n---\n").as_bytes());
    }

    #[test]
    fn any_bytes_are_read_or_refused(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..300)) {
        let mut file = b"---\n".to_vec();
        file.extend(bytes);
        let _ = parse_frontmatter(&file);
    }
}

#[test]
fn octal_and_hexadecimal_past_64_bits_keep_their_radix() {
    // 2^64 and 2^64 + 2^12: past u64, read as the nearest float in their own radix; they were
    // read as the decimal 10000000000000000 and 10000000000001000.
    let yaml = "a: 0x10000000000000000\nb: 0o2000000000000000000000\nc: 0x10000000000001000\n\
                d: 0xFFFFFFFFFFFFFFFFF\ne: 0o7777777777777777777777777\n";
    let value = read(yaml).unwrap();
    assert_eq!(value["a"].as_f64(), Some(2_f64.powi(64)));
    assert_eq!(value["b"].as_f64(), Some(2_f64.powi(64)));
    assert_eq!(value["c"].as_f64(), Some(2_f64.powi(64) + 4096.0));
    // 2^68 - 1 and 2^75 - 1 round up to the next power of two.
    assert_eq!(value["d"].as_f64(), Some(2_f64.powi(68)));
    assert_eq!(value["e"].as_f64(), Some(2_f64.powi(75)));
    // Rounding to nearest even across the bits that are not kept: 2^120 + 2^67 + 1 is above
    // the half-way point between two floats (2^120 and 2^120 + 2^68), so it rounds up.
    let halfway_and_a_bit = format!("a: 0x1{}8{}1\n", "0".repeat(13), "0".repeat(15));
    assert_eq!(read(&halfway_and_a_bit).unwrap()["a"].as_f64(), Some(2_f64.powi(120) + 2_f64.powi(68)));
    let halfway = format!("a: 0x1{}8{}0\n", "0".repeat(13), "0".repeat(15));
    assert_eq!(read(&halfway).unwrap()["a"].as_f64(), Some(2_f64.powi(120)));
    // Within 64 bits, integers as before.
    assert_eq!(read("a: 0xFFFFFFFFFFFFFFFF\n").unwrap()["a"], json!(u64::MAX));
    // Past a float's range: refused like `.inf`, not read as text.
    for yaml in [format!("a: 0x1{}\n", "0".repeat(300)), format!("a: 1{}\n", "0".repeat(400))] {
        assert!(
            matches!(
                error(&yaml),
                FrontmatterError::Unsupported { feature: "a number too large for JSON", .. }
            ),
            "{yaml}"
        );
    }
}

/// Found by the `frontmatter` fuzz target (compared with saphyr): a line of a block scalar that
/// holds only spaces, more than the indentation, is content, not an empty line.
#[test]
fn spaces_past_a_block_scalars_indentation_are_content() {
    let yaml = "a: >-\n  one\n  two\n    \n  three\nb: |\n  x\n    \n  y\n";
    assert_eq!(read(yaml).unwrap(), json!({"a": "one two\n  \nthree", "b": "x\n  \ny\n"}));
}

/// Found by the `frontmatter` fuzz target: a block scalar with no content but lines of spaces
/// is empty (the lines set its indentation), whatever their number of spaces.
#[test]
fn a_block_scalar_of_lines_of_spaces_is_empty() {
    assert_eq!(read("a: >-\n  \nb: 1\n").unwrap(), json!({"a": "", "b": 1}));
    assert_eq!(read("a: |+\n    \n  \nb: 1\n").unwrap(), json!({"a": "\n\n", "b": 1}));
}

/// Found by the `frontmatter` fuzz target: the line break before the closing `---` ends the
/// last line; a kept (`+`) block scalar counted one empty line more.
#[test]
fn the_line_break_before_the_closing_marker_is_no_empty_line() {
    assert_eq!(read("a: >+\n  x\n").unwrap(), json!({"a": "x\n"}));
    assert_eq!(read("a: |+\n  x\n\n").unwrap(), json!({"a": "x\n\n"}));
}

/// Found by the `frontmatter` fuzz target: a line starting with a tab is no empty line of a
/// block scalar (a tab is not indentation); it ends the scalar.
#[test]
fn a_tab_line_ends_a_block_scalar() {
    assert_eq!(read("a: >+\n\n\n\t\t\n\nb: 1\n").unwrap(), json!({"a": "\n\n", "b": 1}));
    assert_eq!(read("a: |\n  x\n\t\nb: 1\n").unwrap(), json!({"a": "x\n", "b": 1}));
}
