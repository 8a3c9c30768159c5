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

/// What [`LineFramer::feed_owned`] hands out: a frame that borrows the input, or a message
/// that was assembled across chunks, given away whole so that it is not copied again.
#[derive(Debug)]
pub(crate) enum Framed<'a> {
    /// A frame, as [`LineFramer::feed`] hands it out.
    Frame(Frame<'a>),
    /// A complete message (not blank, within the maximum, without its line terminator) that
    /// came in more than one chunk: the framer's buffer itself. The callback returns it if it
    /// did not keep it, so that a small allocation serves the next line.
    Owned(Vec<u8>),
}

/// The callback of [`LineFramer::feed_owned`].
type Sink<'s> = dyn FnMut(Framed<'_>) -> Option<Vec<u8>> + 's;

/// The largest line buffer the framer keeps for the next line once its line was handed out;
/// a larger one goes (a connection that once read a large result does not hold its size).
pub(crate) const KEPT_CAPACITY: usize = 64 * 1024;

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
    /// The length of the last line longer than [`KEPT_CAPACITY`] that was handed over: the
    /// next long line gets that much room at once, rather than growing by doubling (each step a
    /// copy, and the old and the new buffer resident together).
    long_line: usize,
    /// An empty buffer to take for the next long line rather than allocating one
    /// ([`give_spare`](Self::give_spare)); let go when a short line ends.
    spare: Vec<u8>,
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
            long_line: 0,
            spare: Vec::new(),
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
    pub fn feed(&mut self, input: &[u8], on_frame: &mut dyn FnMut(Frame<'_>)) {
        self.feed_owned(input, &mut |framed| lend(framed, on_frame));
    }

    /// [`feed`](Self::feed), but a message assembled from several chunks is handed over as
    /// the buffer it was assembled in ([`Framed::Owned`]), to be kept rather than copied.
    pub(crate) fn feed_owned(&mut self, mut input: &[u8], on_frame: &mut Sink<'_>) {
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
                        self.grow_for(self.partial.len() + line.len());
                        let mut partial = std::mem::take(&mut self.partial);
                        partial.extend_from_slice(line);
                        self.emit_owned(partial, on_frame);
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
                        self.grow_for(len);
                        self.partial.extend_from_slice(input);
                    }
                    return;
                }
            }
        }
    }

    /// The input ended: hands out an unterminated last line, if any, as a message.
    pub fn finish(&mut self, on_frame: &mut dyn FnMut(Frame<'_>)) {
        self.finish_owned(&mut |framed| lend(framed, on_frame));
    }

    /// [`finish`](Self::finish), handing over an unterminated last line as
    /// [`feed_owned`](Self::feed_owned) does.
    pub(crate) fn finish_owned(&mut self, on_frame: &mut Sink<'_>) {
        if let Some(matched) = self.bom.take() {
            // The stream was the start of a byte order mark and nothing else: that is data.
            self.partial.extend_from_slice(&BOM[..matched]);
        }
        if let Some(seen) = self.discarding.take() {
            self.end_discarding(seen - usize::from(self.discarded_cr), on_frame);
        }
        let partial = std::mem::take(&mut self.partial);
        if !partial.is_empty() {
            self.emit_owned(partial, on_frame);
        }
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
    fn start_discarding(&mut self, more: &[u8], on_frame: &mut Sink<'_>) {
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
    fn keep_ends(&mut self, more: &[u8], on_frame: &mut Sink<'_>) {
        if !self.head_reported {
            let room = HEAD_LEN - self.head.len();
            self.head.extend_from_slice(&more[..more.len().min(room)]);
            if self.head.len() == HEAD_LEN {
                self.head_reported = true;
                report(on_frame, Frame::TooLong { head: &self.head });
            }
        }
        keep_tail(&mut self.tail, more);
    }

    /// The dropped line ended after `len` bytes: reports it with the ends kept.
    fn end_discarding(&mut self, len: usize, on_frame: &mut Sink<'_>) {
        if !std::mem::replace(&mut self.head_reported, false) {
            // A line shorter than the head: all of it is in.
            let head = self.head.strip_suffix(b"\r").unwrap_or(&self.head);
            report(on_frame, Frame::TooLong { head });
        }
        let tail = self.tail.strip_suffix(b"\r").unwrap_or(&self.tail);
        let tail = &tail[tail.len() - tail.len().min(TAIL_LEN)..];
        let head = if self.head.len() < HEAD_LEN {
            self.head.strip_suffix(b"\r").unwrap_or(&self.head)
        } else {
            &self.head
        };
        report(on_frame, Frame::Oversized { len, head, tail });
        self.head.clear();
        self.tail.clear();
    }

    /// Length of the buffered start plus `tail`, without a final `\r`.
    fn joined_len(&self, tail: &[u8]) -> usize {
        let last = tail.last().or(self.partial.last());
        self.partial.len() + tail.len() - usize::from(last == Some(&b'\r'))
    }

    fn emit(&mut self, line: &[u8], on_frame: &mut Sink<'_>) {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.len() > self.max_len {
            let head = &line[..line.len().min(HEAD_LEN)];
            report(on_frame, Frame::TooLong { head });
            let tail = &line[line.len() - line.len().min(TAIL_LEN)..];
            report(on_frame, Frame::Oversized { len: line.len(), head, tail });
        } else if !is_blank(line) {
            // A short line: the stream may be past its long ones; a spare is not kept for them.
            self.spare = Vec::new();
            report(on_frame, Frame::Message(line));
        }
    }

    /// Makes room for a partial line of `len` bytes: a long line gets the length of the last
    /// long line at once (within the maximum).
    fn grow_for(&mut self, len: usize) {
        let capacity = self.partial.capacity();
        if len > capacity && len > KEPT_CAPACITY && self.long_line > capacity {
            // Room for a line terminator too (CRLF) and a little more: lines of one kind of
            // result differ in their ids.
            let room = self.long_line.saturating_add(64).min(self.max_len.saturating_add(2)).max(len);
            if self.spare.capacity() >= room {
                let mut spare = std::mem::take(&mut self.spare);
                spare.extend_from_slice(&self.partial);
                self.partial = spare;
            } else {
                self.spare = Vec::new();
                self.partial.reserve_exact(room - self.partial.len());
            }
        }
    }

    /// Whether a spare buffer would be used: a long line came before, and none is held.
    pub(crate) fn wants_spare(&self) -> bool {
        self.long_line > 0 && self.spare.capacity() == 0
    }

    /// Gives the framer an empty buffer (the last long line's, once nothing holds it any more)
    /// for the next long line, which then needs no allocation: kept until a short line ends.
    pub(crate) fn give_spare(&mut self, spare: Vec<u8>) {
        if spare.capacity() > KEPT_CAPACITY && spare.is_empty() {
            self.spare = spare;
        }
    }

    /// [`emit`](Self::emit) for a line assembled in the framer's buffer: handed over whole.
    fn emit_owned(&mut self, mut line: Vec<u8>, on_frame: &mut Sink<'_>) {
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        if line.len() <= KEPT_CAPACITY {
            self.spare = Vec::new();
        } else {
            self.long_line = line.len();
            if line.capacity() / 2 > line.len() {
                // Room reserved for a longer line is not kept with the result (shrinking a
                // large buffer moves nothing).
                line.shrink_to_fit();
            }
        }
        let back = if line.len() > self.max_len || is_blank(&line) {
            self.emit(&line, on_frame);
            Some(line)
        } else {
            on_frame(Framed::Owned(line))
        };
        if let Some(mut buf) = back.filter(|buf| buf.capacity() <= KEPT_CAPACITY) {
            if self.partial.capacity() == 0 {
                buf.clear();
                self.partial = buf;
            }
        }
    }
}

/// Whether a line holds only whitespace (skipped, not a message).
fn is_blank(line: &[u8]) -> bool {
    line.iter().all(u8::is_ascii_whitespace)
}

/// Hands a borrowed frame to a [`feed_owned`](LineFramer::feed_owned) callback.
fn report(on_frame: &mut Sink<'_>, frame: Frame<'_>) {
    // Only `Framed::Owned` is ever given back.
    let _ = on_frame(Framed::Frame(frame));
}

/// What [`LineFramer::feed`] makes of a [`Framed`]: every message lent as a [`Frame::Message`].
fn lend(framed: Framed<'_>, on_frame: &mut dyn FnMut(Frame<'_>)) -> Option<Vec<u8>> {
    match framed {
        Framed::Frame(frame) => {
            on_frame(frame);
            None
        }
        Framed::Owned(line) => {
            on_frame(Frame::Message(&line));
            Some(line)
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

    /// What `feed_owned` hands out: `("lent" | "owned", text)`, giving back every owned buffer.
    fn owned(framer: &mut LineFramer, chunks: &[&[u8]], finish: bool) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        let mut push = |framed: Framed<'_>| match framed {
            Framed::Frame(Frame::Message(m)) => {
                out.push(("lent", text(m)));
                None
            }
            Framed::Frame(other) => {
                out.push(("other", format!("{other:?}")));
                None
            }
            Framed::Owned(line) => {
                out.push(("owned", text(&line)));
                Some(line)
            }
        };
        for c in chunks {
            framer.feed_owned(c, &mut push);
        }
        if finish {
            framer.finish_owned(&mut push);
        }
        out
    }

    #[test]
    fn a_line_in_several_chunks_is_handed_over_in_its_buffer() {
        let got = owned(
            &mut LineFramer::new(64),
            &[b"{\"a\":1}\n{\"b\"", b":2}\r\n{\"c\":3}\n{\"d\"", b":4}"],
            true,
        );
        let want =
            [("lent", "{\"a\":1}"), ("owned", "{\"b\":2}"), ("lent", "{\"c\":3}"), ("owned", "{\"d\":4}")];
        assert_eq!(got, want.map(|(k, t)| (k, t.to_owned())));
        // Blank, too long: never handed over.
        let got = owned(&mut LineFramer::new(4), &[b"  ", b" \n", b"abc", b"de\n"], true);
        assert_eq!(got.iter().filter(|(k, _)| *k == "owned").count(), 0, "{got:?}");
    }

    #[test]
    fn a_large_line_buffer_is_not_kept_for_the_next_line() {
        let big = vec![b'x'; 3 * KEPT_CAPACITY];
        let mut f = LineFramer::new(4 * KEPT_CAPACITY);
        // Handed back (as `feed` does) yet not kept: it is larger than what is worth keeping.
        let got = collect(&mut f, &[&big, b"\n"], false);
        assert_eq!(got.len(), 1);
        assert_eq!(f.partial.capacity(), 0);
        // A small one is kept and reused.
        collect(&mut f, &[b"{\"a\"", b":1}\n"], false);
        assert!(f.partial.capacity() > 0 && f.partial.capacity() <= KEPT_CAPACITY);
        // Kept by the taker: the framer starts afresh.
        let mut kept = Vec::new();
        f.feed_owned(b"{\"b\"", &mut |_| None);
        f.feed_owned(b":2}\n", &mut |framed| {
            if let Framed::Owned(line) = framed {
                kept.push(line);
            }
            None
        });
        assert_eq!(kept, [b"{\"b\":2}".to_vec()]);
        assert_eq!((f.partial.capacity(), f.buffered()), (0, 0));
    }

    #[test]
    fn a_long_line_gets_the_room_of_the_last_long_line_at_once() {
        let line = vec![b'x'; 4 * KEPT_CAPACITY];
        let mut f = LineFramer::new(8 * KEPT_CAPACITY);
        let kept = std::cell::RefCell::new(Vec::new());
        let mut keep = |framed: Framed<'_>| {
            if let Framed::Owned(line) = framed {
                kept.borrow_mut().push(line);
            }
            None
        };
        for piece in line.chunks(1000) {
            f.feed_owned(piece, &mut keep);
        }
        f.feed_owned(b"\n", &mut keep);
        assert_eq!(kept.borrow()[0].len(), line.len());
        // The next long line: one allocation of the last one's size once it is long.
        f.feed_owned(&line[..KEPT_CAPACITY + 1], &mut keep);
        let room = f.partial.capacity();
        assert!(room >= line.len() && room <= line.len() + 64, "{room}");
        f.feed_owned(&line[KEPT_CAPACITY + 1..], &mut keep);
        assert_eq!(f.partial.capacity(), room, "no growth for a line as long as the last");
        // A shorter one does not keep the room it did not use.
        f.feed_owned(b"\n", &mut keep);
        f.feed_owned(&line[..KEPT_CAPACITY + 1], &mut keep);
        f.feed_owned(b"\n", &mut keep);
        let (len, capacity) = kept.borrow().last().map(|l| (l.len(), l.capacity())).unwrap();
        assert_eq!(len, KEPT_CAPACITY + 1);
        assert!(capacity < 2 * len, "{capacity}");
        // Never more than the maximum allows.
        let mut f = LineFramer::new(KEPT_CAPACITY + 10);
        f.long_line = usize::MAX;
        f.feed_owned(&line[..KEPT_CAPACITY + 5], &mut |_| None);
        assert!(f.partial.capacity() <= KEPT_CAPACITY + 12 + 64);
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
