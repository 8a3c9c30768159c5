//! A check of JSON text of our own, for the JSON-RPC envelope: where a value ends, and that it
//! is one valid JSON value (RFC 8259), in one pass and without building anything.
//!
//! The envelope keeps `params`, `result` and `error.data` as text for their consumer to decode
//! ([`JsonText`]). Checking that text with serde_json (a `&RawValue`) reads a string eight bytes
//! at a time; a large tool result is mostly one string, so that check was a second full scan
//! beside the decode. Here a string's plain run is read 32 bytes at a time, with the same
//! word-wise test for `"`, `\` and control bytes as serde_json's, and the first special byte
//! found within the block's words: three times faster on a plain text, at least as fast on a
//! text with escapes. The grammar is serde_json's, and a test holds the two to the same verdict
//! on every text (`accepts_exactly_what_serde_json_accepts`).
//!
//! Nesting is not recursion: a stack of one bit per level (in place up to 128 levels, then on
//! the heap, at most one bit per byte of the text).

use std::fmt;

use serde_json::value::RawValue;

/// One JSON value's text, checked by [`value_end`]: no white space around it. What a
/// `&RawValue` is, without serde_json's second scan to make one.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct JsonText<'a>(&'a str);

impl<'a> JsonText<'a> {
    /// The value's text.
    pub(crate) fn get(self) -> &'a str {
        self.0
    }

    /// A `RawValue` of its own (a copy, checked again by serde_json: only for small values).
    pub(crate) fn to_raw_value(self) -> Box<RawValue> {
        RawValue::from_string(self.0.to_owned()).unwrap_or_else(|_| RawValue::NULL.to_owned())
    }

    /// Checks `text` as one JSON value, white space around it allowed (and left out).
    pub(crate) fn parse(text: &'a str) -> Result<Self, ScanError> {
        let bytes = text.as_bytes();
        let start = skip_space(bytes, 0);
        let end = value_end(bytes, start)?;
        text_ends(bytes, end)?;
        Ok(JsonText(&text[start..end]))
    }

    /// The value of `text` from `start` (no white space there) to `end`, as [`value_end`]
    /// found them.
    pub(crate) fn within(text: &'a str, start: usize, end: usize) -> Self {
        JsonText(&text[start..end])
    }
}

impl fmt::Debug for JsonText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

/// Why a text is not JSON, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ScanError {
    /// The byte offset where reading stopped.
    pub(crate) at: usize,
    /// What was wrong there.
    pub(crate) what: &'static str,
}

impl ScanError {
    pub(crate) fn at(at: usize, what: &'static str) -> Self {
        ScanError { at, what }
    }
}

impl fmt::Display for ScanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {}", self.what, self.at)
    }
}

/// The first byte at or after `at` that is not JSON white space.
pub(crate) fn skip_space(bytes: &[u8], mut at: usize) -> usize {
    while let Some(b' ' | b'\t' | b'\n' | b'\r') = bytes.get(at) {
        at += 1;
    }
    at
}

/// Checks that nothing but white space follows `at`, where a whole text's one value ended.
pub(crate) fn text_ends(bytes: &[u8], at: usize) -> Result<(), ScanError> {
    if skip_space(bytes, at) == bytes.len() { Ok(()) } else { Err(ScanError::at(at, "trailing characters")) }
}

/// Where reading an object (`object`) or an array stands after one of its elements.
pub(crate) enum After {
    /// A comma: the next element (a member's name, in an object) starts here, white space
    /// skipped.
    Next(usize),
    /// The container closed; its text ends here.
    Closed(usize),
}

/// Reads what follows an element of an object (`object`) or an array, from `at`: a comma or
/// the container's close, white space allowed before either.
#[inline]
pub(crate) fn after_element(bytes: &[u8], at: usize, object: bool) -> Result<After, ScanError> {
    let at = skip_space(bytes, at);
    match bytes.get(at) {
        Some(b',') => Ok(After::Next(skip_space(bytes, at + 1))),
        Some(b'}') if object => Ok(After::Closed(at + 1)),
        Some(b']') if !object => Ok(After::Closed(at + 1)),
        None if object => Err(ScanError::at(at, "EOF while parsing an object")),
        None => Err(ScanError::at(at, "EOF while parsing a list")),
        Some(_) if object => Err(ScanError::at(at, "expected `,` or `}`")),
        Some(_) => Err(ScanError::at(at, "expected `,` or `]`")),
    }
}

const ONES: u64 = u64::MAX / 255;

/// The high bit of each byte of `word` that is `"`, `\` or a control byte (below 0x20). Only
/// the lowest set bit is exact (a borrow can set bits above it), which is all the callers use.
#[inline(always)]
fn specials(word: u64) -> u64 {
    let control = word.wrapping_sub(ONES * 0x20) & !word;
    let quote = word ^ (ONES * u64::from(b'"'));
    let quote = quote.wrapping_sub(ONES) & !quote;
    let backslash = word ^ (ONES * u64::from(b'\\'));
    let backslash = backslash.wrapping_sub(ONES) & !backslash;
    (control | quote | backslash) & (ONES << 7)
}

fn word(bytes: &[u8]) -> u64 {
    let mut eight = [0u8; 8];
    eight.copy_from_slice(&bytes[..8]);
    u64::from_le_bytes(eight)
}

/// The next `"`, `\` or control byte at or after `at`, or the end of `bytes`.
#[inline]
fn next_special(bytes: &[u8], mut at: usize) -> usize {
    while let Some(block) = bytes.get(at..at + 32) {
        if specials(word(block))
            | specials(word(&block[8..]))
            | specials(word(&block[16..]))
            | specials(word(&block[24..]))
            != 0
        {
            break;
        }
        at += 32;
    }
    while let Some(eight) = bytes.get(at..at + 8) {
        let found = specials(word(eight));
        if found != 0 {
            return at + (found.trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    while let Some(&byte) = bytes.get(at) {
        if byte == b'"' || byte == b'\\' || byte < 0x20 {
            break;
        }
        at += 1;
    }
    at
}

/// The end (past the closing quote) of the string whose opening quote is at `at - 1`.
pub(crate) fn string_end(bytes: &[u8], mut at: usize) -> Result<usize, ScanError> {
    loop {
        at = next_special(bytes, at);
        match bytes.get(at) {
            None => return Err(ScanError::at(at, "EOF while parsing a string")),
            Some(b'"') => return Ok(at + 1),
            Some(b'\\') => {
                at += 1;
                match bytes.get(at) {
                    None => return Err(ScanError::at(at, "EOF while parsing a string")),
                    Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => at += 1,
                    Some(b'u') => {
                        let hex = bytes
                            .get(at + 1..at + 5)
                            .ok_or(ScanError::at(at, "EOF while parsing a string"))?;
                        if !hex.iter().all(u8::is_ascii_hexdigit) {
                            return Err(ScanError::at(at, "invalid escape"));
                        }
                        at += 5;
                    }
                    Some(_) => return Err(ScanError::at(at, "invalid escape")),
                }
            }
            Some(_) => {
                return Err(ScanError::at(
                    at,
                    "control character (\\u0000-\\u001F) found while parsing a string",
                ));
            }
        }
    }
}

/// The end of the number that starts at `at` (a `-` or a digit).
fn number_end(bytes: &[u8], mut at: usize) -> Result<usize, ScanError> {
    let digits = |bytes: &[u8], from: usize| {
        from + bytes[from.min(bytes.len())..].iter().take_while(|b| b.is_ascii_digit()).count()
    };
    if bytes.get(at) == Some(&b'-') {
        at += 1;
    }
    match bytes.get(at) {
        Some(b'0') => at += 1,
        Some(b'1'..=b'9') => at = digits(bytes, at + 1),
        _ => return Err(ScanError::at(at, "invalid number")),
    }
    if bytes.get(at) == Some(&b'.') {
        let end = digits(bytes, at + 1);
        if end == at + 1 {
            return Err(ScanError::at(end, "invalid number"));
        }
        at = end;
    }
    if let Some(b'e' | b'E') = bytes.get(at) {
        at += 1;
        if let Some(b'+' | b'-') = bytes.get(at) {
            at += 1;
        }
        let end = digits(bytes, at);
        if end == at {
            return Err(ScanError::at(end, "invalid number"));
        }
        at = end;
    }
    Ok(at)
}

/// The open objects and arrays, innermost last: one bit per level, set for an object.
struct Nesting {
    inline: u128,
    spilled: Vec<u64>,
    depth: usize,
}

impl Nesting {
    const INLINE: usize = 128;

    fn new() -> Self {
        Nesting { inline: 0, spilled: Vec::new(), depth: 0 }
    }

    fn push(&mut self, object: bool) {
        let level = self.depth;
        if level < Self::INLINE {
            self.inline = self.inline & !(1 << level) | (u128::from(object) << level);
        } else {
            let (word, bit) = ((level - Self::INLINE) / 64, (level - Self::INLINE) % 64);
            if word == self.spilled.len() {
                self.spilled.push(0);
            }
            self.spilled[word] = self.spilled[word] & !(1 << bit) | (u64::from(object) << bit);
        }
        self.depth += 1;
    }

    /// The innermost level: `Some(true)` for an object, `None` at the top.
    fn top(&self) -> Option<bool> {
        let level = self.depth.checked_sub(1)?;
        Some(if level < Self::INLINE {
            self.inline >> level & 1 == 1
        } else {
            let (word, bit) = ((level - Self::INLINE) / 64, (level - Self::INLINE) % 64);
            self.spilled[word] >> bit & 1 == 1
        })
    }

    fn pop(&mut self) {
        self.depth -= 1;
    }
}

/// Checks the JSON value that starts at `at` (no white space there) and returns its end.
pub(crate) fn value_end(bytes: &[u8], mut at: usize) -> Result<usize, ScanError> {
    let mut nesting = Nesting::new();
    loop {
        // A value starts here.
        at = skip_space(bytes, at);
        let opened = match bytes.get(at) {
            None => return Err(ScanError::at(at, "EOF while parsing a value")),
            Some(b'"') => {
                at = string_end(bytes, at + 1)?;
                None
            }
            Some(b'-' | b'0'..=b'9') => {
                at = number_end(bytes, at)?;
                None
            }
            Some(b't') => {
                at = literal_end(bytes, at, b"true")?;
                None
            }
            Some(b'f') => {
                at = literal_end(bytes, at, b"false")?;
                None
            }
            Some(b'n') => {
                at = literal_end(bytes, at, b"null")?;
                None
            }
            Some(&open @ (b'{' | b'[')) => {
                at = skip_space(bytes, at + 1);
                let object = open == b'{';
                let close = if object { b'}' } else { b']' };
                if bytes.get(at) == Some(&close) {
                    at += 1;
                    None
                } else {
                    nesting.push(object);
                    Some(object)
                }
            }
            Some(_) => return Err(ScanError::at(at, "expected value")),
        };
        if opened == Some(true) {
            at = member(bytes, at)?.1;
            continue;
        }
        if opened == Some(false) {
            continue;
        }
        // A value ended here: a comma, a close, or the end of the outermost value.
        loop {
            let Some(object) = nesting.top() else { return Ok(at) };
            match after_element(bytes, at, object)? {
                After::Next(next) => {
                    at = if object { member(bytes, next)?.1 } else { next };
                    break;
                }
                After::Closed(end) => {
                    at = end;
                    nesting.pop();
                }
            }
        }
    }
}

/// Checks a member's name and colon at `at` (no white space there); returns where the name's
/// string ends (past its closing quote) and where its value may start (past the colon).
pub(crate) fn member(bytes: &[u8], at: usize) -> Result<(usize, usize), ScanError> {
    if bytes.get(at) != Some(&b'"') {
        return Err(ScanError::at(at, "key must be a string"));
    }
    let name_end = string_end(bytes, at + 1)?;
    let colon = skip_space(bytes, name_end);
    if bytes.get(colon) != Some(&b':') {
        return Err(ScanError::at(colon, "expected `:`"));
    }
    Ok((name_end, colon + 1))
}

fn literal_end(bytes: &[u8], at: usize, literal: &[u8]) -> Result<usize, ScanError> {
    match bytes.get(at..at + literal.len()) {
        Some(found) if found == literal => Ok(at + literal.len()),
        _ => Err(ScanError::at(at, "expected ident")),
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn serde_accepts(text: &str) -> bool {
        serde_json::from_str::<&RawValue>(text).is_ok()
    }

    fn ours_accepts(text: &str) -> bool {
        JsonText::parse(text).is_ok()
    }

    #[test]
    fn the_same_verdict_as_serde_json_on_the_corners() {
        let texts = [
            "",
            " ",
            "0",
            "-0",
            "-",
            "01",
            "1.",
            "1.5",
            "1e",
            "1e+",
            "1E-7",
            "-0.0e0",
            ".5",
            "+1",
            "1x",
            "true",
            "tru",
            "truex",
            "nul",
            "null",
            "false ",
            " [ ] ",
            "[",
            "]",
            "[1,]",
            "[,1]",
            "[1 2]",
            "{}",
            "{\"a\"}",
            "{\"a\":}",
            "{\"a\":1,}",
            "{\"a\":1 \"b\":2}",
            "{1:2}",
            "{\"a\":1}}",
            "[[[[]]]]",
            "\"\"",
            "\"",
            "\"\\\"",
            "\"\\u12\"",
            "\"\\u12G4\"",
            "\"\\u1234\"",
            "\"\\x\"",
            "\"\t\"",
            "\"\u{7f}\"",
            "\"é\"",
            "\"\\/\"",
            "[\"a\",{\"b\":[null,true,false,-1.5e10]}]",
            "{\"a\":[1,2,{\"c\":\"d\"}],\"e\":{}}",
            "1 2",
            "[1]x",
            "\"a\"\"b\"",
            "{\"a\" : 1 , \"b\" :[ ] }",
            "[\r\n\t1]",
            "[\u{b}1]",
        ];
        for text in texts {
            assert_eq!(ours_accepts(text), serde_accepts(text), "{text:?}");
        }
    }

    #[test]
    fn a_value_ends_where_serde_json_ends_it() {
        let text = r#"  {"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"a \"quoted\" } ]"}]},"id":7}  "#;
        let value = JsonText::parse(text).unwrap();
        assert_eq!(value.get(), serde_json::from_str::<&RawValue>(text).unwrap().get());
        let start = text.find("{\"content").unwrap();
        let end = value_end(text.as_bytes(), start).unwrap();
        assert_eq!(&text[end..end + 6], r#","id":"#);
    }

    #[test]
    fn long_strings_are_read_in_blocks_and_still_stop_at_the_first_special_byte() {
        for len in [0, 1, 7, 8, 9, 31, 32, 33, 63, 64, 65, 200] {
            for special in ["\\n", "\\\"", "\\u00e9", "\u{1}", "\"", "\\q"] {
                for at in [0, len / 2, len] {
                    let mut body = "x".repeat(len);
                    body.insert_str(at, special);
                    let text = format!("\"{body}\"");
                    assert_eq!(ours_accepts(&text), serde_accepts(&text), "{text:?}");
                }
            }
        }
    }

    #[test]
    fn deep_nesting_past_the_inline_levels_is_checked_on_the_heap() {
        for depth in [127, 128, 129, 200, 1000] {
            let text = format!("{}{}", "[{\"a\":".repeat(depth), "}]".repeat(depth));
            assert!(!ours_accepts(&text));
            let text = format!("{}1{}", "[{\"a\":".repeat(depth), "}]".repeat(depth));
            assert!(ours_accepts(&text), "{depth}");
            let text = format!("{}1{}", "[{\"a\":".repeat(depth), "]}".repeat(depth));
            assert!(!ours_accepts(&text), "{depth}");
        }
    }

    /// JSON-ish texts: valid values from a small grammar, then bytes changed, cut or inserted.
    // `prop_oneof!` shares its strategies in an `Arc`: test code only.
    #[allow(clippy::disallowed_types)]
    fn jsonish() -> impl Strategy<Value = String> {
        let leaf = prop_oneof![
            Just("null".to_owned()),
            Just("true".to_owned()),
            any::<f64>().prop_map(|x| serde_json::json!(x).to_string()),
            any::<i64>().prop_map(|x| x.to_string()),
            "[ -~\\u{80}-\\u{10ffff}\\\\\"]{0,40}".prop_map(|s| serde_json::Value::String(s).to_string()),
        ];
        let value = leaf.prop_recursive(6, 64, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5).prop_map(|items| format!("[{}]", items.join(","))),
                prop::collection::vec(("[a-z\\\\\"]{0,5}", inner), 0..5).prop_map(|members| {
                    let members: Vec<String> = members
                        .into_iter()
                        .map(|(k, v)| format!("{}:{v}", serde_json::Value::String(k)))
                        .collect();
                    format!("{{{}}}", members.join(" , "))
                }),
            ]
        });
        (
            value,
            prop::collection::vec((any::<usize>(), 0u8..4, "[\\[\\]{}:,\"\\\\ \\n0-9a-z.eE+\\-\u{1}]"), 0..3),
        )
            .prop_map(|(text, edits)| {
                let mut text = text.into_bytes();
                for (at, kind, with) in edits {
                    let at = if text.is_empty() { 0 } else { at % text.len() };
                    match kind {
                        0 => text.truncate(at),
                        1 if at < text.len() => {
                            text.remove(at);
                        }
                        _ => text.splice(at..at, with.bytes()).for_each(drop),
                    }
                }
                String::from_utf8_lossy(&text).into_owned()
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4096))]
        #[test]
        fn accepts_exactly_what_serde_json_accepts(text in jsonish()) {
            prop_assert_eq!(ours_accepts(&text), serde_accepts(&text), "{:?}", text);
            if let (Ok(ours), Ok(theirs)) = (JsonText::parse(&text), serde_json::from_str::<&RawValue>(&text)) {
                prop_assert_eq!(ours.get(), theirs.get());
            }
        }
    }
}
