//! A strict reader of a `SKILL.md`'s YAML frontmatter, for comparing it with a skill entry.
//!
//! It reads the part of YAML that frontmatter is written in, and refuses the rest with a typed
//! [`FrontmatterError`] rather than guessing:
//!
//! - block mappings (`key: value`, nested by indentation) and block sequences (`- item`, also
//!   `key:` followed by `- item` at the key's own indentation, and `- key: value` items);
//! - plain scalars, also over several more-indented lines (folded with spaces), resolved as the
//!   YAML 1.2 core schema says (`null`/`~`, `true`/`false`, integers, floats, else a string);
//! - single- and double-quoted scalars (with every escape of YAML 1.2) on one line;
//! - literal (`|`) and folded (`>`) block scalars with their chomping (`-`, `+`) and
//!   indentation indicators;
//! - flow sequences and mappings (`[a, b]`, `{k: v}`) on one line, nested;
//! - comments and blank lines.
//!
//! Refused: anchors, aliases and tags (`&`, `*`, `!`), complex keys (`?`), directives, quoted
//! scalars or flow collections over several lines, tabs as indentation, a key given twice,
//! `.inf`/`.nan` and numbers past a float's range (no JSON number holds them), nesting deeper
//! than [`MAX_DEPTH`], and anything that is not valid YAML (`a: b: c`, a value starting with a
//! reserved indicator, ...).
//!
//! # Which YAML
//!
//! YAML 1.2, with its core schema for plain scalars. Servers written in Python often read the
//! frontmatter with PyYAML, which implements YAML 1.1; where the two disagree this reader says
//! what 1.2 says, and nothing is guessed:
//!
//! - `yes`, `no`, `on`, `off`, `y`, `n` (1.1 booleans) are strings here;
//! - `0777` (1.1 octal, 511) is the decimal 777 here; `0o777` is octal in 1.2 only;
//! - `0b1010`, `1_000`, `1:20` (1.1 binary, digit groups, base 60) and timestamps are strings;
//! - integers past 64 bits are the nearest float (JSON readers do the same), in their own radix.
//!
//! So an entry whose `frontmatter` a 1.1 reader made can differ from the file on such a value:
//! the skill is then refused ([`SkillVerifyError::FrontmatterMismatch`](super::SkillVerifyError)
//! names the field), never accepted on a guess. Quoting the value in the file removes the doubt
//! for both readers.
//!
//! # Why not a YAML crate
//!
//! A `SKILL.md` comes from a server the host does not trust, and what this reader decides is
//! whether the file matches the entry the user approved. A general YAML library brings what
//! frontmatter never needs and a hostile file can use: anchors and aliases (the "billion
//! laughs" expansion), tags that construct types, multi-document streams, and a large parser
//! whose own limits the engine does not choose. `serde_yaml` is no longer maintained, and the
//! maintained ones differ on YAML 1.1 vs 1.2. This reader is a few hundred lines with no
//! dependency, bounded in depth, that refuses the rest
//! by name. The fuzz target `frontmatter` (`fuzz/fuzz_targets/frontmatter.rs`) compares it with
//! a maintained YAML 1.2 crate on every input both accept.

use serde_json::{Map, Number, Value};

use crate::schema::JsonObject;

/// The deepest nesting of mappings, sequences and flow collections read.
pub const MAX_DEPTH: usize = 32;

/// Why a `SKILL.md`'s frontmatter cannot be read. Line numbers count from 1, the opening `---`
/// being line 1.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FrontmatterError {
    /// The file does not begin with a `---` line (a UTF-8 byte order mark before it is allowed).
    #[error("the file does not begin with a `---` line")]
    Missing,
    /// No `---` line closes the frontmatter.
    #[error("no `---` line closes the frontmatter")]
    Unterminated,
    /// The frontmatter is not UTF-8.
    #[error("the frontmatter is not UTF-8")]
    NotUtf8,
    /// The frontmatter is YAML, but not a mapping (a list, a lone scalar).
    #[error("the frontmatter is not a mapping of fields")]
    NotAMapping,
    /// Not valid YAML.
    #[error("frontmatter line {line}: {message}")]
    Syntax {
        /// Where.
        line: usize,
        /// What is wrong.
        message: &'static str,
    },
    /// Valid YAML this reader does not read.
    #[error("frontmatter line {line}: {feature} is not supported")]
    Unsupported {
        /// Where.
        line: usize,
        /// What it is.
        feature: &'static str,
    },
    /// A mapping has the same key twice.
    #[error("frontmatter line {line}: the key {key:?} is given twice")]
    DuplicateKey {
        /// Where the second one is.
        line: usize,
        /// The key.
        key: String,
    },
    /// Nested deeper than [`MAX_DEPTH`].
    #[error("frontmatter line {line}: nested deeper than {MAX_DEPTH} levels")]
    TooDeep {
        /// Where.
        line: usize,
    },
}

/// Reads the frontmatter at the start of `file` (a whole `SKILL.md`) as a JSON object.
///
/// ```
/// use mcp_sansio::schema::parse_frontmatter;
///
/// let file = b"---\nname: pdf-processing\ndescription: >-\n  Extract, fill\n  and assemble PDFs\nmetadata: {version: \"2.1\"}\n---\n# Body\n";
/// let fields = parse_frontmatter(file).unwrap();
/// assert_eq!(fields["name"], "pdf-processing");
/// assert_eq!(fields["description"], "Extract, fill and assemble PDFs");
/// assert_eq!(fields["metadata"]["version"], "2.1");
/// assert!(parse_frontmatter(b"# no frontmatter").is_err());
/// ```
///
/// # Errors
///
/// A [`FrontmatterError`] when the file has no frontmatter, or one this reader refuses.
pub fn parse_frontmatter(file: &[u8]) -> Result<JsonObject, FrontmatterError> {
    let file = file.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(file);
    let mut rest = first_line_is_marker(file).ok_or(FrontmatterError::Missing)?;
    let mut block_end = None;
    let mut offset = file.len() - rest.len();
    while !rest.is_empty() {
        let (line, next) = match memchr::memchr(b'\n', rest) {
            Some(at) => (&rest[..at], &rest[at + 1..]),
            None => (rest, &rest[rest.len()..]),
        };
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.strip_prefix(b"---").is_some_and(|tail| tail.iter().all(|b| matches!(b, b' ' | b'\t'))) {
            block_end = Some(offset);
            break;
        }
        offset += rest.len() - next.len();
        rest = next;
    }
    let end = block_end.ok_or(FrontmatterError::Unterminated)?;
    let start = file.len() - first_line_is_marker(file).map_or(0, <[u8]>::len);
    let block = std::str::from_utf8(&file[start..end]).map_err(|_| FrontmatterError::NotUtf8)?;
    Parser::new(block).document()
}

/// What follows the opening `---` line, if the file starts with one.
fn first_line_is_marker(file: &[u8]) -> Option<&[u8]> {
    let rest = file.strip_prefix(b"---")?;
    rest.strip_prefix(b"\n").or_else(|| rest.strip_prefix(b"\r\n"))
}

/// One line of the frontmatter: its number in the file, the line itself, its indentation
/// (spaces) and what follows the indentation.
#[derive(Debug, Clone, Copy)]
struct Line<'a> {
    no: usize,
    raw: &'a str,
    indent: usize,
    text: &'a str,
}

impl Line<'_> {
    /// Blank, or only a comment: no content.
    fn is_void(&self) -> bool {
        let trimmed = self.text.trim_start_matches([' ', '\t']);
        trimmed.is_empty() || trimmed.starts_with('#')
    }
}

struct Parser<'a> {
    lines: Vec<Line<'a>>,
    pos: usize,
}

type Parsed<T> = Result<T, FrontmatterError>;

fn syntax(line: usize, message: &'static str) -> FrontmatterError {
    FrontmatterError::Syntax { line, message }
}

fn unsupported(line: usize, feature: &'static str) -> FrontmatterError {
    FrontmatterError::Unsupported { line, feature }
}

/// Whether `text` is a block sequence item (`-` then a space, a tab or nothing).
fn is_item(text: &str) -> bool {
    text.strip_prefix('-').is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '\t']))
}

impl<'a> Parser<'a> {
    fn new(block: &'a str) -> Self {
        // The block ends with the line break before the closing `---`, which ends the last
        // line and starts none (a kept block scalar would count it as an empty line).
        let block = block.strip_suffix('\n').unwrap_or(block);
        let lines = block
            .split('\n')
            .enumerate()
            .map(|(i, raw)| {
                let raw = raw.strip_suffix('\r').unwrap_or(raw);
                let text = raw.trim_start_matches(' ');
                // The opening `---` is line 1.
                Line { no: i + 2, raw, indent: raw.len() - text.len(), text }
            })
            .collect();
        Parser { lines, pos: 0 }
    }

    /// The index of the next line with content, from the current position (not consumed).
    fn peek(&self) -> Option<usize> {
        (self.pos..self.lines.len()).find(|&i| !self.lines[i].is_void())
    }

    fn document(mut self) -> Parsed<JsonObject> {
        let Some(first) = self.peek() else { return Ok(Map::new()) };
        let line = self.lines[first];
        if line.text.starts_with('%') {
            return Err(unsupported(line.no, "a directive"));
        }
        if is_item(line.text) || !is_mapping_entry(line.text) {
            return Err(FrontmatterError::NotAMapping);
        }
        let map = self.mapping(line.indent, 1)?;
        match self.peek() {
            None => Ok(map),
            Some(i) => Err(syntax(self.lines[i].no, "this line belongs to no field (check its indentation)")),
        }
    }

    /// A block mapping whose keys are at `indent`.
    fn mapping(&mut self, indent: usize, depth: usize) -> Parsed<JsonObject> {
        let mut map = Map::new();
        while let Some(i) = self.peek() {
            let line = self.lines[i];
            if line.indent < indent {
                break;
            }
            if line.indent > indent {
                return Err(syntax(line.no, "unexpected indentation"));
            }
            if line.text.starts_with('\t') {
                return Err(syntax(line.no, "a tab cannot indent YAML"));
            }
            if is_item(line.text) {
                if map.is_empty() {
                    return Err(syntax(line.no, "a list item where a key was expected"));
                }
                // `key:` followed by items at the key's indentation was read with the key; an item
                // here follows a scalar value.
                return Err(syntax(line.no, "a list item after a field that has a value"));
            }
            self.pos = i + 1;
            let (key, rest) = split_key(line.text, line.no)?;
            if map.contains_key(&key) {
                return Err(FrontmatterError::DuplicateKey { line: line.no, key });
            }
            let value = self.value_of_key(line, rest, depth)?;
            map.insert(key, value);
        }
        Ok(map)
    }

    /// The value of the key on `line` (at that line's indentation), `rest` being what follows its
    /// colon.
    fn value_of_key(&mut self, line: Line<'a>, rest: &'a str, depth: usize) -> Parsed<Value> {
        let rest = rest.trim_start_matches([' ', '\t']);
        if !(rest.is_empty() || rest.starts_with('#')) {
            return self.inline(rest, line.no, line.indent, depth);
        }
        let Some(next) = self.peek() else { return Ok(Value::Null) };
        let next = self.lines[next];
        if next.indent > line.indent || (next.indent == line.indent && is_item(next.text)) {
            self.nested(next, depth + 1)
        } else {
            Ok(Value::Null)
        }
    }

    /// A block collection starting at `line` (not consumed), at its indentation.
    fn nested(&mut self, line: Line<'a>, depth: usize) -> Parsed<Value> {
        if depth > MAX_DEPTH {
            return Err(FrontmatterError::TooDeep { line: line.no });
        }
        if line.text.starts_with('\t') {
            return Err(syntax(line.no, "a tab cannot indent YAML"));
        }
        if is_item(line.text) {
            self.sequence(line.indent, depth).map(Value::Array)
        } else if is_mapping_entry(line.text) {
            self.mapping(line.indent, depth).map(Value::Object)
        } else {
            Err(syntax(line.no, "a value on a line of its own must follow its key on the key's line"))
        }
    }

    /// A block sequence whose `-` are at `indent`.
    fn sequence(&mut self, indent: usize, depth: usize) -> Parsed<Vec<Value>> {
        let mut items = Vec::new();
        while let Some(i) = self.peek() {
            let line = self.lines[i];
            if line.indent < indent || (line.indent == indent && !is_item(line.text)) {
                break;
            }
            if line.indent > indent {
                return Err(syntax(line.no, "unexpected indentation"));
            }
            self.pos = i + 1;
            let after = &line.text[1..];
            let content = after.trim_start_matches([' ', '\t']);
            if content.is_empty() || content.starts_with('#') {
                let nested = match self.peek() {
                    Some(next) if self.lines[next].indent > indent => {
                        self.nested(self.lines[next], depth + 1)?
                    }
                    _ => Value::Null,
                };
                items.push(nested);
                continue;
            }
            let content_indent = indent + 1 + (after.len() - content.len());
            if is_item(content) || is_mapping_entry(content) {
                // A compact collection (`- key: value`, `- - item`): read as if it began on a line
                // of its own at the column where it starts.
                self.pos = i;
                self.lines[i] = Line { indent: content_indent, text: content, ..line };
                items.push(self.nested(self.lines[i], depth + 1)?);
            } else {
                items.push(self.inline(content, line.no, indent, depth + 1)?);
            }
        }
        Ok(items)
    }

    /// A value that starts on the line of its key or `-`: `text`, on line `no`, in a node at
    /// `parent` indentation (continuation lines must be indented more).
    fn inline(&mut self, text: &'a str, no: usize, parent: usize, depth: usize) -> Parsed<Value> {
        if depth > MAX_DEPTH {
            return Err(FrontmatterError::TooDeep { line: no });
        }
        match text.as_bytes()[0] {
            b'|' | b'>' => self.block_scalar(text, no, parent).map(Value::String),
            b'"' | b'\'' => {
                let (value, rest) = quoted(text, no)?;
                end_of_line(rest, no)?;
                Ok(Value::String(value))
            }
            b'[' | b'{' => {
                let mut flow = Flow { text, at: 0, no };
                let value = flow.value(depth)?;
                end_of_line(&text[flow.at..], no)?;
                Ok(value)
            }
            b'&' => Err(unsupported(no, "an anchor (`&`)")),
            b'*' => Err(unsupported(no, "an alias (`*`)")),
            b'!' => Err(unsupported(no, "a tag (`!`)")),
            b'?' => Err(unsupported(no, "a complex key (`?`)")),
            b'-' if is_item(text) => Err(syntax(no, "a list cannot begin on the line of its key")),
            b',' | b']' | b'}' | b'%' | b'@' | b'`' => {
                Err(syntax(no, "a value cannot begin with this character"))
            }
            b':' if text.len() == 1 || text[1..].starts_with([' ', '\t']) => {
                Err(syntax(no, "a value cannot begin with `: `"))
            }
            _ => self.plain(text, no, parent),
        }
    }

    /// A plain scalar, with its continuation lines (indented more than `parent`).
    fn plain(&mut self, first: &'a str, no: usize, parent: usize) -> Parsed<Value> {
        let first = plain_line(first, no)?;
        let mut folded: Option<String> = None;
        let mut blanks = 0;
        while let Some(line) = self.lines.get(self.pos) {
            let trimmed = line.text.trim_matches([' ', '\t']);
            if trimmed.is_empty() {
                blanks += 1;
                self.pos += 1;
                continue;
            }
            if line.indent <= parent || trimmed.starts_with('#') {
                break;
            }
            let more = plain_line(trimmed, line.no)?;
            let text = folded.get_or_insert_with(|| first.to_owned());
            if blanks == 0 {
                text.push(' ');
            } else {
                text.extend(std::iter::repeat_n('\n', blanks));
            }
            text.push_str(more);
            blanks = 0;
            self.pos += 1;
        }
        if blanks > 0 {
            // Blank lines after the scalar belong to no one; give them back.
            self.pos -= blanks;
        }
        match folded {
            Some(text) => Ok(Value::String(text)),
            None => resolve(first, no),
        }
    }

    /// A literal (`|`) or folded (`>`) block scalar; `header` is the indicator and what follows
    /// it on its line, in a node at `parent` indentation.
    fn block_scalar(&mut self, header: &str, no: usize, parent: usize) -> Parsed<String> {
        let literal = header.starts_with('|');
        let (mut chomp, mut explicit) = (None, None);
        let mut tail = "";
        for (i, c) in header.char_indices().skip(1) {
            match c {
                '-' | '+' if chomp.is_none() => chomp = Some(c),
                '1'..='9' if explicit.is_none() => explicit = c.to_digit(10),
                _ => {
                    tail = &header[i..];
                    break;
                }
            }
        }
        if !(tail.is_empty() || tail.starts_with([' ', '\t'])) {
            return Err(syntax(
                no,
                "a block scalar's header is `|` or `>`, a chomping and an indentation indicator",
            ));
        }
        end_of_line(tail, no)?;
        // An empty line of a block scalar holds spaces only: a tab is not indentation, so a line
        // that starts with one (after fewer spaces than the indentation) ends the scalar.
        let blank = |line: &Line<'_>| line.raw.bytes().all(|b| b == b' ');
        // The content's indentation: given, or that of its first line with content.
        let indent = match explicit {
            Some(n) => parent + n as usize,
            None => {
                let rest = &self.lines[self.pos..];
                let first = rest.iter().position(|line| !blank(line));
                match first.map(|i| rest[i]) {
                    Some(line) if line.indent > parent => line.indent,
                    // No content: the empty lines are all the scalar has, and the most indented
                    // of them sets the indentation (so none holds a space of content).
                    _ => rest[..first.unwrap_or(rest.len())]
                        .iter()
                        .map(|line| line.indent)
                        .max()
                        .unwrap_or(0)
                        .max(parent + 1),
                }
            }
        };
        let mut body: Vec<&str> = Vec::new();
        while let Some(line) = self.lines.get(self.pos) {
            if line.indent >= indent {
                // Spaces past the indentation are content, even on a line with nothing else
                // (YAML's empty lines have at most the indentation).
                body.push(&line.raw[indent..]);
            } else if blank(line) {
                body.push("");
            } else {
                break;
            }
            self.pos += 1;
        }
        let trailing = body.iter().rev().take_while(|l| l.is_empty()).count();
        let content = &body[..body.len() - trailing];
        let mut text = if literal { content.join("\n") } else { fold(content) };
        match chomp {
            Some('-') => {}
            Some('+') => text.extend(std::iter::repeat_n('\n', trailing + usize::from(!content.is_empty()))),
            _ if !content.is_empty() => text.push('\n'),
            _ => {}
        }
        Ok(text)
    }
}

/// The lines of a folded block scalar, folded: a line break between two lines of text becomes
/// a space, `n` empty lines between them `n` line breaks; around more-indented lines every line
/// break is kept.
fn fold(lines: &[&str]) -> String {
    let mut text = String::new();
    let mut previous: Option<bool> = None;
    let mut empty = 0;
    for line in lines {
        if line.is_empty() {
            empty += 1;
            continue;
        }
        let more = line.starts_with([' ', '\t']);
        match previous {
            None => text.extend(std::iter::repeat_n('\n', empty)),
            Some(false) if !more && empty == 0 => text.push(' '),
            Some(false) if !more => text.extend(std::iter::repeat_n('\n', empty)),
            Some(_) => text.extend(std::iter::repeat_n('\n', empty + 1)),
        }
        text.push_str(line);
        previous = Some(more);
        empty = 0;
    }
    text
}

/// What may follow a value on its line: blanks, then a comment.
fn end_of_line(rest: &str, no: usize) -> Parsed<()> {
    let rest = rest.trim_start_matches([' ', '\t']);
    if rest.is_empty() || rest.starts_with('#') {
        Ok(())
    } else {
        Err(syntax(no, "unexpected text after a value"))
    }
}

/// One line of a plain scalar, without its comment and blanks; it must not hold `: ` (that
/// would make it a mapping) nor end in `:`.
fn plain_line(text: &str, no: usize) -> Parsed<&str> {
    let text = strip_comment(text).trim_end_matches([' ', '\t']);
    if text.contains(": ") || text.contains(":\t") || text.ends_with(':') {
        return Err(syntax(no, "a plain value cannot hold `: ` (quote it)"));
    }
    Ok(text)
}

/// `text` up to a comment (a `#` after a blank).
fn strip_comment(text: &str) -> &str {
    let bytes = text.as_bytes();
    (1..bytes.len())
        .find(|&i| bytes[i] == b'#' && matches!(bytes[i - 1], b' ' | b'\t'))
        .map_or(text, |i| &text[..i])
}

/// Whether a line's content is `key: value` (or `key:`), the key plain or quoted.
fn is_mapping_entry(text: &str) -> bool {
    if text.starts_with(['"', '\'']) {
        return quoted(text, 0).is_ok_and(|(_, rest)| is_colon(rest));
    }
    if text.starts_with(['[', '{', '#', '&', '*', '!', '?', '|', '>']) {
        return false;
    }
    key_end(text).is_some()
}

/// Whether `rest` begins with the colon that ends a key.
fn is_colon(rest: &str) -> bool {
    rest.strip_prefix(':').is_some_and(|after| after.is_empty() || after.starts_with([' ', '\t']))
}

/// Where the colon ending a plain key is: the first `:` followed by a blank or the end, before
/// any comment.
fn key_end(text: &str) -> Option<usize> {
    let visible = strip_comment(text);
    let bytes = visible.as_bytes();
    (0..bytes.len())
        .find(|&i| bytes[i] == b':' && (i + 1 == bytes.len() || matches!(bytes[i + 1], b' ' | b'\t')))
}

/// Splits `key: rest` into the key and what follows its colon.
fn split_key(text: &str, no: usize) -> Parsed<(String, &str)> {
    match text.as_bytes()[0] {
        b'"' | b'\'' => {
            let (key, rest) = quoted(text, no)?;
            if !is_colon(rest) {
                return Err(syntax(no, "expected `:` after a quoted key"));
            }
            Ok((key, &rest[1..]))
        }
        b'?' => Err(unsupported(no, "a complex key (`?`)")),
        b'&' => Err(unsupported(no, "an anchor (`&`)")),
        b'*' => Err(unsupported(no, "an alias (`*`)")),
        b'!' => Err(unsupported(no, "a tag (`!`)")),
        b'[' | b'{' => Err(unsupported(no, "a flow collection as a key")),
        _ => {
            let end = key_end(text).ok_or_else(|| syntax(no, "expected `key: value`"))?;
            let key = text[..end].trim_end_matches([' ', '\t']);
            if key.is_empty() {
                return Err(syntax(no, "a key cannot be empty"));
            }
            Ok((key.to_owned(), &text[end + 1..]))
        }
    }
}

/// A single- or double-quoted scalar at the start of `text`, and what follows it.
fn quoted(text: &str, no: usize) -> Parsed<(String, &str)> {
    let quote = text.as_bytes()[0];
    let mut value = String::new();
    let mut chars = text.char_indices().skip(1).peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            '\'' if quote == b'\'' => {
                if chars.peek().is_some_and(|&(_, next)| next == '\'') {
                    chars.next();
                    value.push('\'');
                } else {
                    return Ok((value, &text[i + 1..]));
                }
            }
            '"' if quote == b'"' => return Ok((value, &text[i + 1..])),
            '\\' if quote == b'"' => {
                let (_, escape) =
                    chars.next().ok_or_else(|| unsupported(no, "a quoted value over several lines"))?;
                let simple = match escape {
                    '0' => Some('\0'),
                    'a' => Some('\u{7}'),
                    'b' => Some('\u{8}'),
                    't' | '\t' => Some('\t'),
                    'n' => Some('\n'),
                    'v' => Some('\u{b}'),
                    'f' => Some('\u{c}'),
                    'r' => Some('\r'),
                    'e' => Some('\u{1b}'),
                    ' ' => Some(' '),
                    '"' => Some('"'),
                    '/' => Some('/'),
                    '\\' => Some('\\'),
                    'N' => Some('\u{85}'),
                    '_' => Some('\u{a0}'),
                    'L' => Some('\u{2028}'),
                    'P' => Some('\u{2029}'),
                    _ => None,
                };
                if let Some(c) = simple {
                    value.push(c);
                    continue;
                }
                let digits = match escape {
                    'x' => 2,
                    'u' => 4,
                    'U' => 8,
                    _ => return Err(syntax(no, "an unknown escape in a double-quoted value")),
                };
                let mut code = 0_u32;
                for _ in 0..digits {
                    let digit = chars.next().and_then(|(_, d)| d.to_digit(16));
                    code = code * 16 + digit.ok_or_else(|| syntax(no, "a bad hexadecimal escape"))?;
                }
                value.push(char::from_u32(code).ok_or_else(|| syntax(no, "an escape that is no character"))?);
            }
            c => value.push(c),
        }
    }
    Err(unsupported(no, "a quoted value over several lines"))
}

/// The value of a plain scalar on one line, per the YAML 1.2 core schema.
fn resolve(text: &str, no: usize) -> Parsed<Value> {
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return Ok(Value::Null),
        "true" | "True" | "TRUE" => return Ok(Value::Bool(true)),
        "false" | "False" | "FALSE" => return Ok(Value::Bool(false)),
        _ => {}
    }
    let unsigned = text.strip_prefix(['-', '+']).unwrap_or(text);
    if matches!(unsigned, ".inf" | ".Inf" | ".INF") || matches!(text, ".nan" | ".NaN" | ".NAN") {
        return Err(unsupported(no, "an infinite or NaN number (JSON has none)"));
    }
    let negative = text.starts_with('-');
    let too_large = || unsupported(no, "a number too large for JSON");
    let integer = |digits: &str, radix: u32| -> Option<Parsed<Value>> {
        if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
            return None;
        }
        Some(match (u64::from_str_radix(digits, radix), negative) {
            (Ok(n), false) => Ok(Value::from(n)),
            (Ok(n), true) if n <= i64::MAX as u64 + 1 => Ok(Value::from((n as i128).wrapping_neg() as i64)),
            // Past 64 bits: the nearest float, as a JSON reader would make it, read in the
            // number's own radix (`0x1` then 16 zeros is 2^64, not 10^16).
            _ => {
                let magnitude =
                    if radix == 10 { digits.parse().ok() } else { power_of_two_radix(digits, radix) };
                let signed = magnitude.map(|m: f64| if negative { -m } else { m });
                signed.and_then(Number::from_f64).map(Value::Number).ok_or_else(too_large)
            }
        })
    };
    if let Some(value) = integer(unsigned, 10) {
        return value;
    }
    if text == unsigned {
        let radix = [("0o", 8), ("0x", 16)].into_iter().find(|(prefix, _)| text.starts_with(prefix));
        if let Some(value) = radix.and_then(|(prefix, radix)| integer(&text[prefix.len()..], radix)) {
            return value;
        }
    }
    if is_float(unsigned) {
        let number = text.parse::<f64>().ok().and_then(Number::from_f64);
        return number.map(Value::Number).ok_or_else(|| unsupported(no, "a number too large for JSON"));
    }
    Ok(Value::String(text.to_owned()))
}

/// The value of `digits` (octal or hexadecimal: `radix` is 8 or 16, every digit valid) as the
/// nearest `f64`, infinite when past its range; for numbers past 64 bits.
///
/// Exact, without a big integer: the first 116 to 120 significant bits are kept in a `u128`,
/// a bit standing for any non-zero bit after them (so that `as f64`, which rounds to nearest
/// even, rounds as the whole number would), and the rest becomes a power of two.
fn power_of_two_radix(digits: &str, radix: u32) -> Option<f64> {
    let bits = radix.trailing_zeros();
    let (mut kept, mut sticky, mut dropped) = (0_u128, false, 0_i32);
    for digit in digits.chars() {
        let digit = digit.to_digit(radix)?;
        if kept < 1 << 116 {
            kept = (kept << bits) | u128::from(digit);
        } else {
            sticky |= digit != 0;
            // Past 2^31 bits the number is infinite anyway.
            dropped = dropped.saturating_add(bits as i32);
        }
    }
    let mantissa = (kept | u128::from(sticky)) as f64;
    Some(if dropped > 2048 { f64::INFINITY } else { mantissa * 2_f64.powi(dropped) })
}

/// `(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?`, the core schema's float (sign removed).
fn is_float(text: &str) -> bool {
    let (mantissa, exponent) = match text.find(['e', 'E']) {
        Some(at) => (&text[..at], Some(&text[at + 1..])),
        None => (text, None),
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let mantissa_ok = match mantissa.split_once('.') {
        Some(("", fraction)) => digits(fraction),
        Some((whole, fraction)) => digits(whole) && (fraction.is_empty() || digits(fraction)),
        None => digits(mantissa),
    };
    let exponent_ok = exponent.is_none_or(|e| digits(e.strip_prefix(['-', '+']).unwrap_or(e)));
    mantissa_ok && exponent_ok && (mantissa.contains('.') || exponent.is_some())
}

/// A flow collection on one line, read from `text[at..]`.
struct Flow<'a> {
    text: &'a str,
    at: usize,
    no: usize,
}

impl Flow<'_> {
    fn skip_blanks(&mut self) {
        let rest = &self.text[self.at..];
        self.at += rest.len() - rest.trim_start_matches([' ', '\t']).len();
    }

    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    /// Consumes the `,` between entries or the closing `close`; true when closed.
    fn separator(&mut self, close: u8) -> Parsed<bool> {
        self.skip_blanks();
        match self.peek() {
            Some(b',') => {
                self.at += 1;
                Ok(false)
            }
            Some(c) if c == close => {
                self.at += 1;
                Ok(true)
            }
            Some(_) => Err(syntax(self.no, "expected `,` or the end of a flow collection")),
            None => Err(unsupported(self.no, "a flow collection over several lines")),
        }
    }

    fn value(&mut self, depth: usize) -> Parsed<Value> {
        if depth > MAX_DEPTH {
            return Err(FrontmatterError::TooDeep { line: self.no });
        }
        self.skip_blanks();
        match self.peek() {
            Some(b'[') => {
                self.at += 1;
                let mut items = Vec::new();
                loop {
                    self.skip_blanks();
                    if self.peek() == Some(b']') {
                        self.at += 1;
                        return Ok(Value::Array(items));
                    }
                    items.push(self.value(depth + 1)?);
                    self.skip_blanks();
                    if self.peek() == Some(b':') {
                        return Err(unsupported(self.no, "a mapping inside a flow sequence"));
                    }
                    if self.separator(b']')? {
                        return Ok(Value::Array(items));
                    }
                }
            }
            Some(b'{') => {
                self.at += 1;
                let mut map = Map::new();
                loop {
                    self.skip_blanks();
                    if self.peek() == Some(b'}') {
                        self.at += 1;
                        return Ok(Value::Object(map));
                    }
                    let key = match self.scalar(true)? {
                        Value::String(key) => key,
                        other => other.to_string(),
                    };
                    self.skip_blanks();
                    let value = if self.peek() == Some(b':') {
                        self.at += 1;
                        self.skip_blanks();
                        if matches!(self.peek(), Some(b',' | b'}')) {
                            Value::Null
                        } else {
                            self.value(depth + 1)?
                        }
                    } else {
                        Value::Null
                    };
                    if map.contains_key(&key) {
                        return Err(FrontmatterError::DuplicateKey { line: self.no, key });
                    }
                    map.insert(key, value);
                    if self.separator(b'}')? {
                        return Ok(Value::Object(map));
                    }
                }
            }
            Some(_) => self.scalar(false),
            None => Err(unsupported(self.no, "a flow collection over several lines")),
        }
    }

    /// A scalar in a flow collection: quoted, or plain up to a flow indicator (and, for a key,
    /// up to its colon). A key stays text.
    fn scalar(&mut self, key: bool) -> Parsed<Value> {
        let rest = &self.text[self.at..];
        match rest.as_bytes().first() {
            Some(b'"' | b'\'') => {
                let (value, after) = quoted(rest, self.no)?;
                self.at += rest.len() - after.len();
                return Ok(Value::String(value));
            }
            Some(b'&') => return Err(unsupported(self.no, "an anchor (`&`)")),
            Some(b'*') => return Err(unsupported(self.no, "an alias (`*`)")),
            Some(b'!') => return Err(unsupported(self.no, "a tag (`!`)")),
            Some(b'?') => return Err(unsupported(self.no, "a complex key (`?`)")),
            Some(b'[' | b'{') if key => return Err(unsupported(self.no, "a flow collection as a key")),
            _ => {}
        }
        let bytes = rest.as_bytes();
        let mut end = 0;
        while end < bytes.len() {
            let b = bytes[end];
            let colon = b == b':'
                && bytes.get(end + 1).is_none_or(|next| matches!(next, b' ' | b'\t' | b',' | b']' | b'}'));
            let comment = b == b'#' && end > 0 && matches!(bytes[end - 1], b' ' | b'\t');
            if matches!(b, b',' | b'[' | b']' | b'{' | b'}') || colon || comment {
                break;
            }
            end += 1;
        }
        let text = rest[..end].trim_end_matches([' ', '\t']);
        if text.is_empty() {
            return Err(syntax(self.no, "an empty entry in a flow collection"));
        }
        self.at += end;
        if key { Ok(Value::String(text.to_owned())) } else { resolve(text, self.no) }
    }
}

#[cfg(test)]
#[path = "frontmatter_tests.rs"]
mod tests;
