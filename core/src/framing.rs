//! Newline framing for the stdio transport: bytes in, whole messages out.
//!
//! MCP over stdio is newline-delimited JSON: a message never contains a raw newline, so a line is a
//! message. The framer accepts input in chunks of any size (down to one byte), strips a trailing
//! `\r` (CRLF peers), skips blank lines, and enforces a hard maximum message size: a line longer
//! than the maximum is discarded as it streams in, so memory stays bounded by the maximum however
//! long the line grows.
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

/// What the framer found in the input.
#[derive(Debug, PartialEq, Eq)]
pub enum Frame<'a> {
    /// One complete message, without its line terminator.
    Message(&'a [u8]),
    /// A line longer than the maximum was dropped; `len` is how many bytes of it were seen.
    Oversized {
        /// Bytes of the line seen (at least the maximum plus one).
        len: usize,
    },
}

/// Splits a byte stream into lines, with a hard size limit.
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
}

impl LineFramer {
    /// A framer that drops lines longer than `max_len` bytes.
    pub fn new(max_len: usize) -> Self {
        Self { partial: Vec::new(), max_len, discarding: None, discarded_cr: false }
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
        while !input.is_empty() {
            let newline = memchr::memchr(b'\n', input);
            if let Some(seen) = self.discarding {
                match newline {
                    Some(pos) => {
                        self.discarding = None;
                        let cr = if pos > 0 { input[pos - 1] == b'\r' } else { self.discarded_cr };
                        on_frame(Frame::Oversized { len: seen + pos - usize::from(cr) });
                        input = &input[pos + 1..];
                    }
                    None => {
                        self.discarding = Some(seen + input.len());
                        self.discarded_cr = input.last() == Some(&b'\r');
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
                        self.partial.clear();
                        on_frame(Frame::Oversized { len });
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
                        self.partial = Vec::new();
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
        if let Some(seen) = self.discarding.take() {
            on_frame(Frame::Oversized { len: seen - usize::from(self.discarded_cr) });
        }
        let partial = std::mem::take(&mut self.partial);
        self.emit(&partial, on_frame);
    }

    /// Length of the buffered start plus `tail`, without a final `\r`.
    fn joined_len(&self, tail: &[u8]) -> usize {
        let last = tail.last().or(self.partial.last());
        self.partial.len() + tail.len() - usize::from(last == Some(&b'\r'))
    }

    fn emit(&self, line: &[u8], on_frame: &mut dyn FnMut(Frame<'_>)) {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.len() > self.max_len {
            on_frame(Frame::Oversized { len: line.len() });
        } else if !line.iter().all(u8::is_ascii_whitespace) {
            on_frame(Frame::Message(line));
        }
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
                Frame::Oversized { len } => format!("<oversized {len}>"),
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
        assert_eq!(got, vec!["{\"a\":1}"]);
        assert_eq!(f.buffered(), 0, "an oversized line must not be buffered");
        let got = collect(&mut f, &[b"xyz\n{\"b\":2}\n"], false);
        assert_eq!(got, vec!["<oversized 8013>", "{\"b\":2}"]);
    }

    #[test]
    fn limit_is_inclusive_and_ignores_line_terminators() {
        let got = collect(&mut LineFramer::new(4), &[b"abcd\r\nabcde\n"], false);
        assert_eq!(got, vec!["abcd", "<oversized 5>"]);
        let got = collect(&mut LineFramer::new(4), &[b"ab", b"cd\r", b"\nab", b"cde\n"], false);
        assert_eq!(got, vec!["abcd", "<oversized 5>"]);
    }

    #[test]
    fn finish_hands_out_an_unterminated_line() {
        let mut f = LineFramer::new(64);
        assert_eq!(collect(&mut f, &[b"{\"a\":1}"], true), vec!["{\"a\":1}"]);
        assert_eq!(collect(&mut f, &[], true), Vec::<String>::new());
    }
}
