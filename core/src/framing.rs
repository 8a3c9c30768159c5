//! Newline framing for the stdio transport: bytes in, whole messages out.
//!
//! MCP over stdio is newline-delimited JSON: a message never contains a raw newline, so a line is a
//! message. The framer accepts input in chunks of any size (down to one byte), strips a trailing
//! `\r` (CRLF peers), skips blank lines and a UTF-8 byte order mark at the very start, and
//! enforces a hard maximum message size: a line longer than the maximum is discarded as it
//! streams in, so memory stays bounded by the maximum however long the line grows. Only its first
//! and last bytes are kept ([`HEAD_LEN`], [`TAIL_LEN`]), so that the request it answers can be
//! told and failed.
//!
//! [`ClientConnection::feed`](crate::ClientConnection::feed) uses it; it is public for drivers
//! and tools that frame a stdio stream themselves.
//!
//! ```
//! use mcp_sansio::framing::{Frame, LineFramer};
//!
//! let mut framer = LineFramer::new(1024);
//! let mut lines = Vec::new();
//! framer.feed(b"{\"a\":1}\r\n{\"b\"", &mut |frame| {
//!     if let Frame::Message(line) = frame {
//!         lines.push(line.to_vec());
//!     }
//! });
//! assert_eq!(lines, [br#"{"a":1}"#.to_vec()]);
//! assert_eq!(framer.buffered(), 4);
//! ```

/// How many first bytes of a dropped line [`Frame::TooLong`] and [`Frame::Oversized`] show: enough
/// for the envelope's first members (`"jsonrpc"`, `"id"`, `"result"`), to tell whose it is.
pub const HEAD_LEN: usize = 256;

/// How many last bytes of a dropped line [`Frame::Oversized`] shows: enough for an `"id"` written
/// last (as the TypeScript SDK does).
pub const TAIL_LEN: usize = 64;

/// The UTF-8 byte order mark, skipped at the very start of the stream.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// What the framer found in the input.
#[derive(Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Frame<'a> {
    /// One complete message, without its line terminator.
    Message(&'a [u8]),
    /// A line grew past the maximum: it is dropped from here on, and
    /// [`Oversized`](Self::Oversized) follows when it ends. Comes as soon as the line is known to
    /// be too long and its first [`HEAD_LEN`] bytes have arrived (or it ended), so that the
    /// request it answers can fail without waiting for the rest.
    TooLong {
        /// The line's first bytes (at most [`HEAD_LEN`]).
        head: &'a [u8],
    },
    /// A line longer than the maximum was dropped; `len` is how many bytes of it were seen.
    Oversized {
        /// Bytes of the line seen (at least the maximum plus one).
        len: usize,
        /// The line's first bytes (at most [`HEAD_LEN`]).
        head: &'a [u8],
        /// The line's last bytes (at most [`TAIL_LEN`]), without its terminator.
        tail: &'a [u8],
    },
}

/// Splits a byte stream into lines, with a hard size limit.
///
/// A UTF-8 byte order mark at the very start of the stream (some servers born on Windows write
/// one) is skipped; anywhere else it is data.
#[derive(Debug)]
pub struct LineFramer {
    /// The start of a line whose end has not arrived yet.
    partial: Vec<u8>,
    max_len: usize,
    /// `Some(seen)` while skipping the rest of an oversized line.
    discarding: Option<usize>,
    /// While discarding: whether the last byte seen was `\r`, so that a CRLF split across
    /// chunks is not counted in the reported length (as it is not when the line comes whole).
    discarded_cr: bool,
    /// While discarding: the line's first and last bytes (at most [`HEAD_LEN`], and
    /// [`TAIL_LEN`] plus a possible `\r`), for [`Frame::Oversized`].
    head: Vec<u8>,
    tail: Vec<u8>,
    /// While discarding: whether [`Frame::TooLong`] went out (once the head was complete).
    head_reported: bool,
    /// How many bytes of a byte order mark the stream started with so far; `None` once past
    /// the start.
    bom: Option<usize>,
}

impl LineFramer {
    /// A framer that drops lines longer than `max_len` bytes.
    pub fn new(max_len: usize) -> Self {
        Self {
            partial: Vec::new(),
            max_len,
            discarding: None,
            discarded_cr: false,
            head: Vec::new(),
            tail: Vec::new(),
            head_reported: false,
            bom: Some(0),
        }
    }

    /// Bytes held for an incomplete line.
    pub fn buffered(&self) -> usize {
        self.partial.len()
    }

    /// Feeds a chunk, calling `on_frame` for every complete message or dropped oversized line.
    ///
    /// Complete lines inside `input` are handed out without copying; only an incomplete tail is
    /// buffered until the next call.
    pub fn feed(&mut self, mut input: &[u8], on_frame: &mut dyn FnMut(Frame<'_>)) {
        if let Some(matched) = self.bom {
            input = self.skip_bom(matched, input);
        }
        while !input.is_empty() {
            let newline = memchr::memchr(b'\n', input);
            if let Some(seen) = self.discarding {
                match newline {
                    Some(pos) => {
                        self.discarding = None;
                        let cr = if pos > 0 { input[pos - 1] == b'\r' } else { self.discarded_cr };
                        self.keep_ends(&input[..pos], on_frame);
                        self.end_discarding(seen + pos - usize::from(cr), on_frame);
                        input = &input[pos + 1..];
                    }
                    None => {
                        self.discarding = Some(seen + input.len());
                        self.discarded_cr = input.last() == Some(&b'\r');
                        self.keep_ends(input, on_frame);
                        return;
                    }
                }
                continue;
            }
            match newline {
                Some(pos) => {
                    let (line, rest) = (&input[..pos], &input[pos + 1..]);
                    input = rest;
                    if self.partial.is_empty() {
                        self.emit(line, on_frame);
                    } else if self.joined_len(line) > self.max_len {
                        let len = self.joined_len(line);
                        self.start_discarding(line, on_frame);
                        self.end_discarding(len, on_frame);
                    } else {
                        let mut partial = std::mem::take(&mut self.partial);
                        partial.extend_from_slice(line);
                        self.emit(&partial, on_frame);
                        // Keep the allocation for the next partial line.
                        partial.clear();
                        self.partial = partial;
                    }
                }
                None => {
                    let len = self.partial.len() + input.len();
                    // A trailing '\r' does not count: it may be the first half of a CRLF.
                    let body = len - usize::from(input.last() == Some(&b'\r'));
                    if body > self.max_len {
                        self.start_discarding(input, on_frame);
                        self.discarding = Some(len);
                        self.discarded_cr = input.last() == Some(&b'\r');
                    } else {
                        self.partial.extend_from_slice(input);
                    }
                    return;
                }
            }
        }
    }

    /// The input ended: hands out an unterminated last line, if any, as a message.
    pub fn finish(&mut self, on_frame: &mut dyn FnMut(Frame<'_>)) {
        if let Some(matched) = self.bom.take() {
            // The stream was the start of a byte order mark and nothing else: that is data.
            self.partial.extend_from_slice(&BOM[..matched]);
        }
        if let Some(seen) = self.discarding.take() {
            self.end_discarding(seen - usize::from(self.discarded_cr), on_frame);
        }
        let partial = std::mem::take(&mut self.partial);
        self.emit(&partial, on_frame);
    }

    /// Skips what `input` holds of a byte order mark at the start of the stream, `matched`
    /// bytes of which came in earlier chunks; returns the rest.
    fn skip_bom<'i>(&mut self, matched: usize, input: &'i [u8]) -> &'i [u8] {
        let more = BOM[matched..].iter().zip(input).take_while(|(a, b)| a == b).count();
        if matched + more == BOM.len() {
            self.bom = None;
            return &input[more..];
        }
        if more == input.len() {
            // Still a byte order mark so far: wait for the next chunk.
            self.bom = Some(matched + more);
            return &[];
        }
        // Not a byte order mark after all: what was taken for one is the first line's start.
        self.bom = None;
        self.partial.extend_from_slice(&BOM[..matched]);
        input
    }

    /// The line in `partial` followed by `more` is too long: drops `partial` and keeps the
    /// ends of both.
    fn start_discarding(&mut self, more: &[u8], on_frame: &mut dyn FnMut(Frame<'_>)) {
        self.head.clear();
        self.tail.clear();
        self.head_reported = false;
        let partial = std::mem::take(&mut self.partial);
        self.keep_ends(&partial, on_frame);
        // `partial`'s allocation goes: it may be as large as the maximum.
        drop(partial);
        self.keep_ends(more, on_frame);
    }

    /// Keeps what `more`, the next bytes of the line being dropped, adds to its first and last
    /// bytes; reports the line once its first [`HEAD_LEN`] bytes are in.
    fn keep_ends(&mut self, more: &[u8], on_frame: &mut dyn FnMut(Frame<'_>)) {
        if !self.head_reported {
            let room = HEAD_LEN - self.head.len();
            self.head.extend_from_slice(&more[..more.len().min(room)]);
            if self.head.len() == HEAD_LEN {
                self.head_reported = true;
                on_frame(Frame::TooLong { head: &self.head });
            }
        }
        keep_tail(&mut self.tail, more);
    }

    /// The dropped line ended after `len` bytes: reports it with the ends kept.
    fn end_discarding(&mut self, len: usize, on_frame: &mut dyn FnMut(Frame<'_>)) {
        if !std::mem::replace(&mut self.head_reported, false) {
            // A line shorter than the head: all of it is in.
            let head = self.head.strip_suffix(b"\r").unwrap_or(&self.head);
            on_frame(Frame::TooLong { head });
        }
        let tail = self.tail.strip_suffix(b"\r").unwrap_or(&self.tail);
        let tail = &tail[tail.len() - tail.len().min(TAIL_LEN)..];
        let head = if self.head.len() < HEAD_LEN {
            self.head.strip_suffix(b"\r").unwrap_or(&self.head)
        } else {
            &self.head
        };
        on_frame(Frame::Oversized { len, head, tail });
        self.head.clear();
        self.tail.clear();
    }

    /// Length of the buffered start plus `tail`, without a final `\r`.
    fn joined_len(&self, tail: &[u8]) -> usize {
        let last = tail.last().or(self.partial.last());
        self.partial.len() + tail.len() - usize::from(last == Some(&b'\r'))
    }

    fn emit(&self, line: &[u8], on_frame: &mut dyn FnMut(Frame<'_>)) {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.len() > self.max_len {
            let head = &line[..line.len().min(HEAD_LEN)];
            on_frame(Frame::TooLong { head });
            let tail = &line[line.len() - line.len().min(TAIL_LEN)..];
            on_frame(Frame::Oversized { len: line.len(), head, tail });
        } else if !line.iter().all(u8::is_ascii_whitespace) {
            on_frame(Frame::Message(line));
        }
    }
}

/// Keeps in `tail` the last bytes of what it held followed by `more`: [`TAIL_LEN`] of them and
/// one more, which may be the `\r` of the line's CRLF.
fn keep_tail(tail: &mut Vec<u8>, more: &[u8]) {
    const KEPT: usize = TAIL_LEN + 1;
    if more.len() >= KEPT {
        tail.clear();
        tail.extend_from_slice(&more[more.len() - KEPT..]);
    } else {
        let excess = (tail.len() + more.len()).saturating_sub(KEPT);
        tail.drain(..excess);
        tail.extend_from_slice(more);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(framer: &mut LineFramer, chunks: &[&[u8]], finish: bool) -> Vec<String> {
        let mut out = Vec::new();
        let mut push = |f: Frame<'_>| {
            out.push(match f {
                Frame::Message(m) => String::from_utf8_lossy(m).into_owned(),
                Frame::TooLong { .. } => "<too long>".to_owned(),
                Frame::Oversized { len, .. } => format!("<oversized {len}>"),
            })
        };
        for c in chunks {
            framer.feed(c, &mut push);
        }
        if finish {
            framer.finish(&mut push);
        }
        out
    }

    #[test]
    fn whole_lines_crlf_and_blank_lines() {
        let mut f = LineFramer::new(100);
        let got = collect(&mut f, &[b"{\"a\":1}\n\r\n  \n{\"b\":2}\r\n{\"c\""], false);
        assert_eq!(got, vec!["{\"a\":1}", "{\"b\":2}"]);
        assert_eq!(f.buffered(), 4);
        assert_eq!(collect(&mut f, &[b":3}\n"], false), vec!["{\"c\":3}"]);
        assert_eq!(f.buffered(), 0);
    }

    #[test]
    fn every_split_point_gives_the_same_frames() {
        let input: &[u8] = b"{\"x\":\"first\"}\r\n\n{\"y\":2}\n" as &[u8];
        let whole = collect(&mut LineFramer::new(64), &[input], true);
        for split in 0..=input.len() {
            let (a, b) = input.split_at(split);
            assert_eq!(collect(&mut LineFramer::new(64), &[a, b], true), whole, "split at {split}");
        }
        let bytes: Vec<&[u8]> = input.chunks(1).collect();
        assert_eq!(collect(&mut LineFramer::new(64), &bytes, true), whole);
    }

    #[test]
    fn oversized_line_is_dropped_and_memory_stays_bounded() {
        let mut f = LineFramer::new(8);
        let mut chunks: Vec<&[u8]> = vec![b"{\"a\":1}\n", b"0123456789"];
        chunks.extend(std::iter::repeat_n(b"abcdefgh" as &[u8], 1000));
        let got = collect(&mut f, &chunks, false);
        assert_eq!(got, vec!["{\"a\":1}", "<too long>"], "reported as soon as it is too long");
        assert_eq!(f.buffered(), 0, "an oversized line must not be buffered");
        let got = collect(&mut f, &[b"xyz\n{\"b\":2}\n"], false);
        assert_eq!(got, vec!["<oversized 8013>", "{\"b\":2}"]);
    }

    #[test]
    fn limit_is_inclusive_and_ignores_line_terminators() {
        let got = collect(&mut LineFramer::new(4), &[b"abcd\r\nabcde\n"], false);
        assert_eq!(got, vec!["abcd", "<too long>", "<oversized 5>"]);
        let got = collect(&mut LineFramer::new(4), &[b"ab", b"cd\r", b"\nab", b"cde\n"], false);
        assert_eq!(got, vec!["abcd", "<too long>", "<oversized 5>"]);
    }

    #[test]
    fn finish_hands_out_an_unterminated_line() {
        let mut f = LineFramer::new(64);
        assert_eq!(collect(&mut f, &[b"{\"a\":1}"], true), vec!["{\"a\":1}"]);
        assert_eq!(collect(&mut f, &[], true), Vec::<String>::new());
    }

    /// Every frame with its bytes, the ends of dropped lines included.
    fn frames(framer: &mut LineFramer, chunks: &[&[u8]], finish: bool) -> Vec<String> {
        let mut out = Vec::new();
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        let mut push = |f: Frame<'_>| {
            out.push(match f {
                Frame::Message(m) => text(m),
                Frame::TooLong { head } => format!("<too long {}>", text(head)),
                Frame::Oversized { len, head, tail } => {
                    format!("<oversized {len} {}..{}>", text(head), text(tail))
                }
            })
        };
        for c in chunks {
            framer.feed(c, &mut push);
        }
        if finish {
            framer.finish(&mut push);
        }
        out
    }

    #[test]
    fn a_dropped_line_shows_its_first_and_last_bytes_however_it_is_split() {
        let mut line = b"{\"id\":7,\"result\":\"".to_vec();
        line.extend(std::iter::repeat_n(b'x', 1000));
        line.extend_from_slice(b"\",\"end\":9}\r\n{\"b\":2}\n");
        let max = 100;
        let whole = frames(&mut LineFramer::new(max), &[&line], true);
        let head: String = String::from_utf8_lossy(&line[..HEAD_LEN]).into_owned();
        let body_len = 1000 + 28;
        let tail = String::from_utf8_lossy(&line[body_len - TAIL_LEN..body_len]).into_owned();
        assert!(tail.ends_with("\"end\":9}"), "{tail}");
        assert_eq!(
            whole,
            [
                format!("<too long {head}>"),
                format!("<oversized {body_len} {head}..{tail}>"),
                "{\"b\":2}".into()
            ]
        );
        for split in 0..=line.len() {
            let (a, b) = line.split_at(split);
            assert_eq!(frames(&mut LineFramer::new(max), &[a, b], true), whole, "split at {split}");
        }
        let bytes: Vec<&[u8]> = line.chunks(1).collect();
        assert_eq!(frames(&mut LineFramer::new(max), &bytes, true), whole);
        // Too long is reported once the head is in, not before.
        let mut f = LineFramer::new(8);
        assert_eq!(frames(&mut f, &[&line[..HEAD_LEN - 1]], false), Vec::<String>::new());
        assert_eq!(frames(&mut f, &[&line[HEAD_LEN - 1..HEAD_LEN]], false), [format!("<too long {head}>")]);
        // A line too long but shorter than the head: reported whole when it ends.
        let got = frames(&mut LineFramer::new(8), &[b"0123456789\r", b"\n"], true);
        assert_eq!(got, ["<too long 0123456789>", "<oversized 10 0123456789..0123456789>"]);
    }

    #[test]
    fn a_byte_order_mark_is_skipped_at_the_start_only() {
        let input: &[u8] = b"\xEF\xBB\xBF{\"a\":1}\n\xEF\xBB\xBF{\"b\":2}\n";
        let whole = collect(&mut LineFramer::new(64), &[input], true);
        assert_eq!(whole[0], "{\"a\":1}");
        assert_eq!(whole[1], "\u{FEFF}{\"b\":2}", "a byte order mark past the start is data");
        for split in 0..=input.len() {
            let (a, b) = input.split_at(split);
            assert_eq!(collect(&mut LineFramer::new(64), &[a, b], true), whole, "split at {split}");
        }
        let bytes: Vec<&[u8]> = input.chunks(1).collect();
        assert_eq!(collect(&mut LineFramer::new(64), &bytes, true), whole);
        // The start of one, then something else: all of it is data.
        let got = collect(&mut LineFramer::new(64), &[b"\xEF", b"\xBBx\n"], true);
        assert_eq!(got, ["\u{FFFD}x"]);
        assert_eq!(collect(&mut LineFramer::new(64), &[b"\xEF\xBB"], true), ["\u{FFFD}"]);
        assert_eq!(collect(&mut LineFramer::new(64), &[b"\xEF\xBB\xBF"], true), Vec::<String>::new());
    }
}
