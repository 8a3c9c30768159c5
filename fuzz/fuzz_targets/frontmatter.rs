//! The skills frontmatter reader (`mcp_sansio::schema::parse_frontmatter`) compared with
//! saphyr, a maintained YAML 1.2 library (here only, as a reference: the engine has no YAML
//! crate), on arbitrary frontmatter text.
//!
//! Input: the text between the two `---` lines, verbatim. The target writes
//! `---\n{input}\n---\nbody\n` for our reader and gives saphyr `{input}\n`.
//!
//! Asserted:
//! - no panic, for any bytes (not UTF-8 included);
//! - reading is deterministic (a second read gives the same answer);
//! - where both accept the input (ours gives a mapping; saphyr gives one document, a mapping,
//!   or none at all, which is an empty mapping), they agree on every value: strings, booleans
//!   and nulls equal; a number equal to saphyr's integer (`i64`) exactly, or to its float by
//!   value (`2` and `2.0` are one number to JSON); sequences element by element; mappings key by
//!   key.
//!
//! Not compared, on purpose (each is a documented difference, not a finding):
//! - inputs our reader refuses: it reads a subset of YAML and refuses the rest by name
//!   (anchors, tags, multi-line flow collections, ...); a refusal is never wrong for a skill,
//!   whose verification then fails closed;
//! - inputs saphyr refuses (it is strict about control characters, for one);
//! - inputs with a line that starts a new document (`---`, `...`): the first `---` line closes
//!   the frontmatter for our reader and nothing after it is YAML to it;
//! - inputs with a lone carriage return (a line break to YAML, text to our line splitter,
//!   which only strips the `\r` of a CRLF);
//! - mappings where saphyr reads a key that is not a string (`1: a`, `true: b`, `~: c`): JSON
//!   keys are strings, so our reader keeps the key's text; saphyr's value loses that text;
//! - plain hexadecimal or octal integers past `i64` (`0x8000000000000000`): saphyr keeps them as
//!   strings, our reader as the nearest number (as it does for decimals, like saphyr);
//! - numbers past a float's range and `.inf`/`.nan`: our reader refuses them (JSON has none).
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_sansio::schema::parse_frontmatter;
use saphyr::{LoadableYamlNode, Scalar, Yaml};
use serde_json::{Map, Value};

/// How a comparison ended without a disagreement.
enum Verdict {
    Same,
    /// A documented difference (above): the input says nothing.
    Incomparable,
}

fuzz_target!(|data: &[u8]| {
    let mut file = b"---\n".to_vec();
    file.extend_from_slice(data);
    file.extend_from_slice(b"\n---\nbody\n");
    let ours = parse_frontmatter(&file);
    assert_eq!(ours, parse_frontmatter(&file), "not deterministic");

    let Ok(ours) = ours else { return };
    let Ok(text) = std::str::from_utf8(data) else { return };
    let starts_document = |line: &str| line.starts_with("---") || line.starts_with("...");
    if text.split('\n').any(starts_document) || text.replace("\r\n", "\n").contains('\r') {
        return;
    }
    // A byte order mark inside the stream is refused by YAML and read by our reader as text
    // (only one before the opening `---` is skipped).
    if text.contains('\u{feff}') {
        return;
    }
    // With the line break that ends the frontmatter's last line, as our reader sees it (the
    // closing `---` follows it).
    let text = format!("{text}\n");
    let Ok(documents) = Yaml::load_from_str(&text) else { return };
    let theirs = match documents.as_slice() {
        [] => None,
        [one] => Some(one),
        _ => panic!("several documents in {text:?}, but no document marker"),
    };
    let verdict = match theirs {
        None => same_map(&ours, &Default::default()),
        Some(Yaml::Mapping(mapping)) => same_map(&ours, mapping),
        // An empty document read as null: saphyr found no content where ours found none either.
        Some(Yaml::Value(Scalar::Null)) if ours.is_empty() => Ok(Verdict::Same),
        Some(other) => Err(format!("ours is a mapping, theirs is {other:?}")),
    };
    if let Err(why) = verdict {
        panic!(
            "the frontmatter reader and saphyr disagree on {text:?}\n{why}\nours: {}\ntheirs: {theirs:?}",
            Value::Object(ours)
        );
    }
});

fn same_map(ours: &Map<String, Value>, theirs: &saphyr::Mapping<'_>) -> Result<Verdict, String> {
    if ours.len() != theirs.len() {
        return Err(format!("{} keys in ours, {} in theirs", ours.len(), theirs.len()));
    }
    let mut verdict = Verdict::Same;
    for (key, value) in theirs {
        let key = match key {
            Yaml::Value(Scalar::String(key)) => key,
            _ => return Ok(Verdict::Incomparable),
        };
        let Some(mine) = ours.get(key.as_ref()) else {
            return Err(format!("the key {key:?} is not in ours"));
        };
        match same(mine, value).map_err(|why| format!("under {key:?}: {why}"))? {
            Verdict::Same => {}
            Verdict::Incomparable => verdict = Verdict::Incomparable,
        }
    }
    Ok(verdict)
}

fn same(ours: &Value, theirs: &Yaml<'_>) -> Result<Verdict, String> {
    let differ = || Err(format!("ours {ours}, theirs {theirs:?}"));
    match (ours, theirs) {
        (Value::Null, Yaml::Value(Scalar::Null)) => Ok(Verdict::Same),
        (Value::Bool(a), Yaml::Value(Scalar::Boolean(b))) if a == b => Ok(Verdict::Same),
        (Value::String(a), Yaml::Value(Scalar::String(b))) if a == b.as_ref() => Ok(Verdict::Same),
        (Value::Number(a), Yaml::Value(Scalar::Integer(b))) if a.as_i64() == Some(*b) => Ok(Verdict::Same),
        (Value::Number(a), Yaml::Value(Scalar::FloatingPoint(b))) if a.as_f64() == Some(b.0) => {
            Ok(Verdict::Same)
        }
        (Value::Number(a), Yaml::Value(Scalar::String(b)))
            if is_radix_integer(b) && a.as_f64().is_some_and(|a| a >= 2_f64.powi(63)) =>
        {
            Ok(Verdict::Incomparable)
        }
        (Value::Array(a), Yaml::Sequence(b)) => {
            if a.len() != b.len() {
                return differ();
            }
            let mut verdict = Verdict::Same;
            for (a, b) in a.iter().zip(b) {
                if let Verdict::Incomparable = same(a, b)? {
                    verdict = Verdict::Incomparable;
                }
            }
            Ok(verdict)
        }
        (Value::Object(a), Yaml::Mapping(b)) => same_map(a, b),
        _ => differ(),
    }
}

/// `0x` and hexadecimal digits, or `0o` and octal digits: the core schema's other integers.
fn is_radix_integer(text: &str) -> bool {
    let digits = |rest: &str, radix| !rest.is_empty() && rest.chars().all(|c: char| c.is_digit(radix));
    text.strip_prefix("0x").is_some_and(|rest| digits(rest, 16))
        || text.strip_prefix("0o").is_some_and(|rest| digits(rest, 8))
}
