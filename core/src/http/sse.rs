//! Server-Sent Events decoding: response-body bytes in, events out.
//!
//! This follows the WHATWG HTML standard's "event stream interpretation" exactly: lines end with
//! CRLF, LF or CR (a CRLF split across chunks is one line end), a leading UTF-8 byte order mark is
//! skipped, lines starting with `:` are comments, `data` lines accumulate, an empty line
//! dispatches, and an event left unterminated when the stream ends is discarded. On top of the
//! standard, an event that grows past a hard size limit is dropped as it streams in, so memory
//! stays bounded however much a peer sends.

use std::time::Duration;

/// The UTF-8 byte order mark, skipped at the very start of a stream.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// One event dispatched by a blank line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The event type: the last `event` field's value, or `"message"` when none was given.
    pub event: String,
    /// The `data` field values joined with `\n` (without a trailing `\n`).
    pub data: String,
    /// The last event ID in effect when the event was dispatched: it persists across events until
    /// an `id` field changes it, and an empty `id` field resets it to `None`.
    pub id: Option<String>,
}

/// Why the decoder dropped (part of) the stream. It keeps decoding after every error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SseError {
    /// An event grew past the maximum size; it is discarded up to the blank line that ends it.
    #[error("server-sent event too large: at least {len_at_least} bytes, the maximum is {max}")]
    EventTooLarge {
        /// Bytes of the event seen when it crossed the limit (more than `max`); the size
        /// measure is described on [`SseDecoder::new`].
        len_at_least: usize,
        /// The maximum the decoder was built with.
        max: usize,
    },
}

/// What the decoder does with the bytes of the line it is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LineMode {
    /// Buffering the line (unless it is complete within one chunk).
    Normal,
    /// The line starts with `:`; its bytes are skipped.
    Comment,
    /// The line alone is longer than the maximum; its bytes are skipped.
    Skipping,
    /// The line is a `data` field split across chunks: its value goes straight into the
    /// event's data, not through the line buffer (a large event is copied once, not twice).
    Data,
}

/// The largest line buffer kept for the next split line once its line is done.
const KEPT_LINE: usize = 64 * 1024;

/// Decodes a `text/event-stream` body into [`SseEvent`]s.
///
/// Feed the body with [`feed`](Self::feed) in chunks of any size (down to one byte) and call
/// [`finish`](Self::finish) when it ends; each call reports complete events and errors in stream
/// order through its callback. The getters [`last_event_id`](Self::last_event_id) (for a
/// reconnection's `Last-Event-ID` header) and [`retry`](Self::retry) (the reconnection delay the
/// server asked for) can be read at any time.
///
/// The decoder never panics, reads no clock and performs no I/O. Whole lines inside a chunk are
/// decoded without copying; only the data of the current event is buffered, and the start of a
/// line split across chunks, both bounded by the maximum event size. A `data` line split across
/// chunks goes straight into the event's data, which the event then carries: an event's data is
/// copied once from the body's chunks, whatever its size.
#[derive(Debug, Clone)]
pub struct SseDecoder {
    max_event_size: usize,
    /// `Some(n)` while the first `n` bytes of the stream matched the start of a byte order mark
    /// and it is not yet known whether the rest follows; `None` once past the start.
    bom_matched: Option<usize>,
    /// The last byte seen was a CR ending a line, so an LF starting the next chunk belongs to it.
    pending_cr: bool,
    mode: LineMode,
    /// The start of a line whose end has not arrived yet.
    line: Vec<u8>,
    /// The current event's data, each value followed by `\n`: bytes, checked as UTF-8 once
    /// when the event is dispatched.
    data: Vec<u8>,
    /// In [`LineMode::Data`]: the length of the line's `data:` or `data: ` (which counts
    /// toward the size, as the whole line does for any other field), and where in `data` the
    /// line's value starts.
    data_prefix: usize,
    data_line_start: usize,
    /// The current event's type; empty means `"message"`.
    event_type: String,
    /// The standard's "last event ID buffer": set by `id` fields, committed at dispatch.
    id_buffer: String,
    /// The standard's "last event ID string": what the last dispatch committed; empty for none.
    last_event_id: String,
    retry: Option<Duration>,
    /// The current event crossed the size limit: it was reported and will not be dispatched.
    dropped: bool,
    /// The length of the data of the last event dispatched with more than [`KEPT_LINE`] bytes:
    /// the next event that long gets that much room at once rather than growing by doubling.
    long_data: usize,
    /// An empty buffer for the next long event's data ([`give_spare`](Self::give_spare)); let
    /// go when a short event is dispatched.
    spare: Vec<u8>,
}

impl SseDecoder {
    /// Creates a decoder for one stream, dropping events larger than `max_event_size` bytes.
    ///
    /// The size measured is the line being read plus the data gathered so far for the event
    /// (without line ends), so an event whose lines total at most `max_event_size` bytes is never
    /// dropped. Comment lines are skipped without being buffered and never count.
    #[must_use]
    pub fn new(max_event_size: usize) -> Self {
        Self {
            max_event_size,
            bom_matched: Some(0),
            pending_cr: false,
            mode: LineMode::Normal,
            line: Vec::new(),
            data: Vec::new(),
            data_prefix: 0,
            data_line_start: 0,
            event_type: String::new(),
            id_buffer: String::new(),
            last_event_id: String::new(),
            retry: None,
            dropped: false,
            long_data: 0,
            spare: Vec::new(),
        }
    }

    /// Feeds a chunk; calls `on_item` for each complete event or error, in order.
    ///
    /// An [`SseError::EventTooLarge`] is reported once, as soon as the event crosses the limit;
    /// the event is then not dispatched and the rest of its data is skipped unbuffered (its `id`
    /// and `retry` fields still take effect, as the standard has them); the next event after its
    /// blank line decodes normally.
    pub fn feed(&mut self, mut bytes: &[u8], on_item: &mut dyn FnMut(Result<SseEvent, SseError>)) {
        if let Some(matched) = self.bom_matched {
            let want = &BOM[matched..];
            let n = want.len().min(bytes.len());
            if bytes[..n] == want[..n] {
                if n < want.len() {
                    // All of `bytes` matched; the rest of the mark may come in the next chunk.
                    self.bom_matched = Some(matched + n);
                    return;
                }
                self.bom_matched = None;
                bytes = &bytes[n..];
            } else {
                // Not a byte order mark after all: what matched of it is ordinary input.
                self.bom_matched = None;
                self.feed_lines(&BOM[..matched], on_item);
            }
        }
        self.feed_lines(bytes, on_item);
    }

    /// The stream ended: an event not yet terminated by a blank line is discarded, as the
    /// standard requires, and nothing is reported for it.
    ///
    /// The decoder is then ready for a new stream (a reconnection): the event being read and its
    /// last event ID buffer start afresh, while [`last_event_id`](Self::last_event_id) and
    /// [`retry`](Self::retry) keep their values.
    pub fn finish(&mut self, on_item: &mut dyn FnMut(Result<SseEvent, SseError>)) {
        // Nothing is pending that could be reported: an oversized event was reported when it
        // crossed the limit. The callback keeps `finish` symmetric with `feed`.
        let _ = on_item;
        self.bom_matched = Some(0);
        self.pending_cr = false;
        self.mode = LineMode::Normal;
        self.line = keep_allocation(std::mem::take(&mut self.line));
        // An event cut short may have grown large: its room is not kept.
        self.data = keep_allocation(std::mem::take(&mut self.data));
        self.event_type.clear();
        self.id_buffer.clear();
        self.dropped = false;
    }

    /// The ID of the last event dispatched, to send as `Last-Event-ID` when reconnecting; `None`
    /// if no event set one or an empty `id` field reset it.
    ///
    /// As in the standard, this is committed when a blank line ends an event, even one with no
    /// data (which dispatches nothing), not when the `id` field is read.
    #[must_use]
    pub fn last_event_id(&self) -> Option<&str> {
        (!self.last_event_id.is_empty()).then_some(self.last_event_id.as_str())
    }

    /// The reconnection time the server last asked for with a `retry` field, if any.
    #[must_use]
    pub fn retry(&self) -> Option<Duration> {
        self.retry
    }

    /// Bytes held for the line being read and the current event's data.
    #[cfg(test)]
    pub(crate) fn buffered(&self) -> usize {
        self.line.len() + self.data.len()
    }

    /// Splits `input` (past any byte order mark) into lines.
    fn feed_lines(&mut self, mut input: &[u8], on_item: &mut dyn FnMut(Result<SseEvent, SseError>)) {
        if input.is_empty() {
            return;
        }
        if std::mem::take(&mut self.pending_cr) && input[0] == b'\n' {
            input = &input[1..];
        }
        while !input.is_empty() {
            let Some(end) = memchr::memchr2(b'\r', b'\n', input) else {
                self.take_partial(input, on_item);
                return;
            };
            let segment = &input[..end];
            let mut next = end + 1;
            if input[end] == b'\r' {
                match input.get(next) {
                    Some(b'\n') => next += 1,
                    Some(_) => {}
                    None => self.pending_cr = true,
                }
            }
            input = &input[next..];
            if self.mode == LineMode::Normal && self.line.is_empty() {
                // The whole line is in this chunk: decode it in place.
                if segment.first() != Some(&b':') && self.admit(segment.len(), on_item) {
                    self.process_line(segment, on_item);
                }
            } else {
                self.take_partial(segment, on_item);
                self.end_line(on_item);
            }
        }
    }

    /// Takes in bytes of a line whose end is not in them.
    fn take_partial(&mut self, segment: &[u8], on_item: &mut dyn FnMut(Result<SseEvent, SseError>)) {
        if segment.is_empty() {
            return;
        }
        match self.mode {
            LineMode::Comment | LineMode::Skipping => {}
            LineMode::Data => {
                // The data holds the line's value so far: the event's size is that, plus the
                // line's field name, plus this segment.
                let total = self.data_prefix.saturating_add(self.data.len()).saturating_add(segment.len());
                if total <= self.max_event_size {
                    self.grow_data(segment.len());
                    self.data.extend_from_slice(segment);
                } else {
                    // Dropped: the value has no use any more (an event too large has no data).
                    self.drop_event(total, on_item);
                    self.mode = LineMode::Skipping;
                }
            }
            LineMode::Normal => {
                if self.line.is_empty() && segment[0] == b':' {
                    self.mode = LineMode::Comment;
                    return;
                }
                let len = self.line.len() + segment.len();
                if !self.admit(len, on_item) {
                    self.line.clear();
                    self.mode = LineMode::Skipping;
                    return;
                }
                if self.line.is_empty() && self.start_data(segment) {
                    return;
                }
                self.line.extend_from_slice(segment);
                if self.line.len() >= DATA_PREFIX_LEN {
                    let line = std::mem::take(&mut self.line);
                    if !self.start_data(&line) {
                        self.line = line;
                    } else {
                        self.line = keep_allocation(line);
                    }
                }
            }
        }
    }

    /// If `start` is the start of a `data` line that goes on in the next chunks, and one byte
    /// of its value at least is in (which tells whether a space follows the colon), takes its
    /// value in and the rest of the line in [`LineMode::Data`].
    fn start_data(&mut self, start: &[u8]) -> bool {
        let Some(value) = start.strip_prefix(b"data:").filter(|v| !v.is_empty() && !self.dropped) else {
            return false;
        };
        let value = value.strip_prefix(b" ").unwrap_or(value);
        self.mode = LineMode::Data;
        self.data_prefix = start.len() - value.len();
        self.data_line_start = self.data.len();
        self.grow_data(value.len());
        self.data.extend_from_slice(value);
        true
    }

    /// Makes room for `more` bytes of data: a long event gets the length of the last long one
    /// at once (within the maximum), in the spare buffer if it is large enough.
    fn grow_data(&mut self, more: usize) {
        let len = self.data.len().saturating_add(more);
        let capacity = self.data.capacity();
        if len <= capacity || len <= KEPT_LINE {
            return;
        }
        let hinted = self.long_data > capacity;
        let room = match hinted {
            true => self.long_data.saturating_add(64).min(self.max_event_size.saturating_add(1)).max(len),
            false => len,
        };
        if self.spare.capacity() >= room {
            let mut spare = std::mem::take(&mut self.spare);
            spare.extend_from_slice(&self.data);
            self.data = spare;
        } else if hinted {
            self.spare = Vec::new();
            self.data.reserve_exact(room - self.data.len());
        }
    }

    /// Whether a spare buffer would be used: none is held. (The session makes a decoder per
    /// response stream: a new one has no length of its own to go by, but a spare serves it.)
    pub(crate) fn wants_spare(&self) -> bool {
        self.spare.capacity() == 0
    }

    /// Gives the decoder an empty buffer (the last long event's, once nothing holds it any
    /// more) for the next long event's data: kept until a short event is dispatched.
    pub(crate) fn give_spare(&mut self, spare: Vec<u8>) {
        if spare.capacity() > KEPT_LINE && spare.is_empty() && self.spare.capacity() == 0 {
            self.spare = spare;
        }
    }

    /// A line buffered across chunks ended.
    fn end_line(&mut self, on_item: &mut dyn FnMut(Result<SseEvent, SseError>)) {
        match std::mem::replace(&mut self.mode, LineMode::Normal) {
            LineMode::Normal => {}
            LineMode::Data => {
                self.data.push(b'\n');
                return;
            }
            LineMode::Comment | LineMode::Skipping => return,
        }
        let line = std::mem::take(&mut self.line);
        self.process_line(&line, on_item);
        self.line = keep_allocation(line);
    }

    /// The current event crossed the limit with `total` bytes: it is dropped and reported, once.
    fn drop_event(&mut self, total: usize, on_item: &mut dyn FnMut(Result<SseEvent, SseError>)) {
        if !self.dropped {
            self.dropped = true;
            self.data.clear();
            on_item(Err(SseError::EventTooLarge { len_at_least: total, max: self.max_event_size }));
        }
    }

    /// Checks the size limit for a line of `len` bytes so far; false if the line must be skipped.
    ///
    /// Crossing the limit drops the event (reported once); the line itself is still decoded if
    /// it fits alone, so that `id` and `retry` fields keep their effect.
    fn admit(&mut self, len: usize, on_item: &mut dyn FnMut(Result<SseEvent, SseError>)) -> bool {
        let total = len.saturating_add(self.data.len());
        if total <= self.max_event_size {
            return true;
        }
        self.drop_event(total, on_item);
        len <= self.max_event_size
    }

    /// Interprets one complete, non-comment line.
    fn process_line(&mut self, line: &[u8], on_item: &mut dyn FnMut(Result<SseEvent, SseError>)) {
        if line.is_empty() {
            self.dispatch(on_item);
            return;
        }
        let (name, value) = match line.iter().position(|&b| b == b':') {
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &[][..]),
        };
        // Decoding the stream as UTF-8 line by line is the same as decoding it whole: line ends
        // are ASCII, so they never fall inside a sequence. The field names are ASCII, so
        // comparing them as bytes is comparing them decoded.
        match name {
            b"event" => {
                self.event_type.clear();
                push_lossy(&mut self.event_type, value);
            }
            // A dropped event's data is not kept, but its other fields still take effect.
            b"data" if !self.dropped => {
                self.data.extend_from_slice(value);
                self.data.push(b'\n');
            }
            b"id" if !value.contains(&0) => {
                self.id_buffer.clear();
                push_lossy(&mut self.id_buffer, value);
            }
            b"retry" if !value.is_empty() && value.iter().all(u8::is_ascii_digit) => {
                let ms = value
                    .iter()
                    .fold(0u64, |ms, &digit| ms.saturating_mul(10).saturating_add(u64::from(digit - b'0')));
                self.retry = Some(Duration::from_millis(ms));
            }
            _ => {}
        }
    }

    /// A blank line: dispatches the event, if it has data and was not dropped.
    fn dispatch(&mut self, on_item: &mut dyn FnMut(Result<SseEvent, SseError>)) {
        self.last_event_id.clone_from(&self.id_buffer);
        let dropped = std::mem::take(&mut self.dropped);
        if dropped || self.data.is_empty() {
            self.data.clear();
            self.event_type.clear();
            return;
        }
        let mut data = std::mem::take(&mut self.data);
        data.pop(); // The `\n` after the last value.
        if data.len() > KEPT_LINE {
            self.long_data = data.len();
            if data.capacity() / 2 > data.len() {
                data.shrink_to_fit();
            }
        } else {
            self.spare = Vec::new();
        }
        // Decoding the data as UTF-8 whole is decoding it line by line: the `\n`s between its
        // values end any sequence, as the line ends they replace did.
        let data = match String::from_utf8(data) {
            Ok(data) => data,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        };
        let event = match std::mem::take(&mut self.event_type) {
            t if t.is_empty() => "message".to_owned(),
            t => t,
        };
        let id = self.last_event_id().map(str::to_owned);
        on_item(Ok(SseEvent { event, data, id }));
    }
}

/// `data:` and the space that may follow it.
const DATA_PREFIX_LEN: usize = 6;

/// `buf` emptied, to be kept for the next line, unless it grew large.
fn keep_allocation(mut buf: Vec<u8>) -> Vec<u8> {
    if buf.capacity() > KEPT_LINE {
        return Vec::new();
    }
    buf.clear();
    buf
}

/// Appends `bytes` decoded as UTF-8, invalid sequences replaced by U+FFFD. Checks with
/// `str::from_utf8` first: on valid input it is many times faster than `from_utf8_lossy`'s
/// chunk-by-chunk walk, which was 86 % of the decoder's time on 64 KiB events.
fn push_lossy(out: &mut String, bytes: &[u8]) {
    match std::str::from_utf8(bytes) {
        Ok(text) => out.push_str(text),
        Err(_) => out.push_str(&String::from_utf8_lossy(bytes)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Item = Result<SseEvent, SseError>;

    fn ev(event: &str, data: &str, id: Option<&str>) -> Item {
        Ok(SseEvent { event: event.to_owned(), data: data.to_owned(), id: id.map(str::to_owned) })
    }

    fn msg(data: &str) -> Item {
        ev("message", data, None)
    }

    fn too_large(len_at_least: usize, max: usize) -> Item {
        Err(SseError::EventTooLarge { len_at_least, max })
    }

    fn run(decoder: &mut SseDecoder, chunks: &[&[u8]], finish: bool) -> Vec<Item> {
        let mut out = Vec::new();
        let mut push = |item: Item| out.push(item);
        for chunk in chunks {
            decoder.feed(chunk, &mut push);
        }
        if finish {
            decoder.finish(&mut push);
        }
        out
    }

    /// Decodes `input` whole, at every split point and byte by byte; all must agree.
    fn decode(input: &[u8]) -> Vec<Item> {
        let whole = run(&mut SseDecoder::new(1 << 16), &[input], true);
        for split in 0..=input.len() {
            let (a, b) = input.split_at(split);
            let got = run(&mut SseDecoder::new(1 << 16), &[a, b], true);
            assert_eq!(got, whole, "split at {split} of {:?}", String::from_utf8_lossy(input));
        }
        let bytes: Vec<&[u8]> = input.chunks(1).collect();
        assert_eq!(run(&mut SseDecoder::new(1 << 16), &bytes, true), whole, "byte by byte");
        whole
    }

    #[test]
    fn spec_example_stock_ticker() {
        let input = b"data: YHOO\ndata: +2\ndata: 10\n\n";
        assert_eq!(decode(input), vec![msg("YHOO\n+2\n10")]);
    }

    #[test]
    fn spec_example_ids_persist_and_reset() {
        let input =
            b": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata:  third event\n";
        let mut d = SseDecoder::new(1024);
        let got = run(&mut d, &[input], false);
        assert_eq!(got, vec![ev("message", "first event", Some("1")), msg("second event")]);
        assert_eq!(d.last_event_id(), None, "the empty id reset it");
        // The third event is unterminated: discarded at the end of the stream.
        assert_eq!(run(&mut d, &[], true), vec![]);
        assert_eq!(decode(input), got);
    }

    #[test]
    fn spec_example_empty_data_lines() {
        let input = b"data\n\ndata\ndata\n\ndata:\n";
        assert_eq!(decode(input), vec![msg(""), msg("\n")]);
    }

    #[test]
    fn spec_example_space_after_colon_is_optional() {
        let input = b"data:test\n\ndata: test\n\n";
        assert_eq!(decode(input), vec![msg("test"), msg("test")]);
    }

    #[test]
    fn only_one_leading_space_is_removed_and_later_colons_stay() {
        let input = b"data:  two spaces\ndata: a: b:c\n\n";
        assert_eq!(decode(input), vec![msg(" two spaces\na: b:c")]);
    }

    #[test]
    fn comments_alone_dispatch_nothing() {
        assert_eq!(decode(b":ping\n\n: keep-alive\r\n\r\n:\r\r"), vec![]);
    }

    #[test]
    fn event_type_applies_to_one_event() {
        let input = b"event: add\ndata: 73857293\n\nevent: remove\ndata: 2153\n\ndata: 113411\n\n";
        assert_eq!(
            decode(input),
            vec![ev("add", "73857293", None), ev("remove", "2153", None), msg("113411")]
        );
    }

    #[test]
    fn event_type_without_data_is_reset_by_the_blank_line() {
        assert_eq!(decode(b"event: x\n\ndata: y\n\n"), vec![msg("y")]);
    }

    #[test]
    fn id_persists_until_changed_and_is_committed_at_dispatch() {
        let mut d = SseDecoder::new(1024);
        let got = run(&mut d, &[b"id: 7\ndata: a\n\ndata: b\n\nid: 8\n"], false);
        assert_eq!(got, vec![ev("message", "a", Some("7")), ev("message", "b", Some("7"))]);
        assert_eq!(d.last_event_id(), Some("7"), "id 8 is not committed before the blank line");
        // A blank line with no data dispatches nothing but still commits the id.
        assert_eq!(run(&mut d, &[b"\n"], false), vec![]);
        assert_eq!(d.last_event_id(), Some("8"));
        assert_eq!(run(&mut d, &[b"id:\ndata: c\n\n"], false), vec![msg("c")]);
        assert_eq!(d.last_event_id(), None);
    }

    #[test]
    fn id_containing_nul_is_ignored() {
        let input = b"id: 1\n\ndata: a\nid: 2\x003\n\n";
        assert_eq!(decode(input), vec![ev("message", "a", Some("1"))]);
    }

    #[test]
    fn retry_accepts_only_ascii_digits() {
        let mut d = SseDecoder::new(1024);
        assert_eq!(d.retry(), None);
        run(&mut d, &[b"retry: 1500\n"], false);
        assert_eq!(d.retry(), Some(Duration::from_millis(1500)));
        for bad in [&b"retry: 15s\n"[..], b"retry: -1\n", b"retry: 1.5\n", b"retry:\n", b"retry\n"] {
            run(&mut d, &[bad], false);
            assert_eq!(d.retry(), Some(Duration::from_millis(1500)), "{bad:?}");
        }
        run(&mut d, &[b"retry:0\n"], false);
        assert_eq!(d.retry(), Some(Duration::ZERO));
        run(&mut d, &[b"retry: 99999999999999999999999999\n"], false);
        assert_eq!(d.retry(), Some(Duration::from_millis(u64::MAX)), "saturates");
        // Retry is not an event.
        assert_eq!(run(&mut d, &[b"\n"], true), vec![]);
    }

    #[test]
    fn field_without_colon_has_an_empty_value() {
        assert_eq!(decode(b"data\ndata\n\n"), vec![msg("\n")]);
        assert_eq!(decode(b"event\ndata: x\n\n"), vec![msg("x")]);
    }

    #[test]
    fn unknown_and_miscased_fields_are_ignored() {
        let input = b"foo: bar\nData: no\ndata : no\n data: no\ndata: yes\nevents: no\n\n";
        assert_eq!(decode(input), vec![msg("yes")]);
    }

    #[test]
    fn all_line_ends_work_and_mix() {
        // The id persists, so "c" carries it too.
        let expected = vec![ev("t", "a\nb", Some("1")), ev("message", "c", Some("1"))];
        for input in [
            &b"event: t\nid: 1\ndata: a\ndata: b\n\ndata: c\n\n"[..],
            b"event: t\r\nid: 1\r\ndata: a\r\ndata: b\r\n\r\ndata: c\r\n\r\n",
            b"event: t\rid: 1\rdata: a\rdata: b\r\rdata: c\r\r",
            b"event: t\rid: 1\r\ndata: a\ndata: b\r\r\ndata: c\n\r",
        ] {
            assert_eq!(decode(input), expected, "{:?}", String::from_utf8_lossy(input));
        }
    }

    #[test]
    fn crlf_split_across_chunks_is_one_line_end() {
        let mut d = SseDecoder::new(1024);
        assert_eq!(run(&mut d, &[b"data: a\r", b"\n", b"\r", b"\n"], false), vec![msg("a")]);
        // With an empty chunk between the CR and the LF as well.
        assert_eq!(run(&mut d, &[b"data: b\r", b"", b"\n\r", b"", b"\n"], false), vec![msg("b")]);
        // CR then CR is two line ends: the second is the blank line.
        assert_eq!(run(&mut d, &[b"data: c\r", b"\r"], false), vec![msg("c")]);
    }

    #[test]
    fn leading_bom_is_skipped_once() {
        assert_eq!(decode(b"\xEF\xBB\xBFdata: a\n\n"), vec![msg("a")]);
        let mut d = SseDecoder::new(1024);
        assert_eq!(run(&mut d, &[b"\xEF", b"\xBB", b"\xBF", b"data: a\n\n"], false), vec![msg("a")]);
        // A second mark is part of the first line: here it spoils the field name.
        assert_eq!(decode(b"\xEF\xBB\xBF\xEF\xBB\xBFdata: a\n\ndata: b\n\n"), vec![msg("b")]);
        // A mark later in the stream is ordinary data.
        assert_eq!(decode(b"data: \xEF\xBB\xBFa\n\n"), vec![msg("\u{FEFF}a")]);
        // The start of a mark that does not complete is ordinary input.
        assert_eq!(decode(b"\xEF\xBBdata: a\n\ndata: b\n\n"), vec![msg("b")]);
        assert_eq!(decode(b"\xEF\ndata: a\n\n"), vec![msg("a")]);
    }

    #[test]
    fn invalid_utf8_is_replaced() {
        assert_eq!(decode(b"data: a\xFFb\xE2\x82\n\n"), vec![msg("a\u{FFFD}b\u{FFFD}")]);
        // A character split across chunks is reassembled.
        let mut d = SseDecoder::new(1024);
        assert_eq!(run(&mut d, &[b"data: \xE2\x82", b"\xAC\n\n"], false), vec![msg("\u{20AC}")]);
    }

    #[test]
    fn unterminated_final_event_is_discarded_at_finish() {
        let mut d = SseDecoder::new(1024);
        assert_eq!(run(&mut d, &[b"data: a\n\ndata: b\n"], true), vec![msg("a")]);
        let mut d = SseDecoder::new(1024);
        assert_eq!(run(&mut d, &[b"data: a\n\ndata: b"], true), vec![msg("a")]);
        // A pending CR does not make the last line complete either.
        let mut d = SseDecoder::new(1024);
        assert_eq!(run(&mut d, &[b"data: a\r"], true), vec![]);
    }

    #[test]
    fn finish_starts_a_fresh_stream_keeping_last_event_id_and_retry() {
        let mut d = SseDecoder::new(1024);
        let got = run(&mut d, &[b"id: 1\nretry: 10\ndata: a\n\nid: 2\nevent: x\ndata: b\n"], true);
        assert_eq!(got, vec![ev("message", "a", Some("1"))]);
        assert_eq!(d.last_event_id(), Some("1"));
        assert_eq!(d.retry(), Some(Duration::from_millis(10)));
        // The new stream may start with a byte order mark; its pending CR and event are gone.
        let got = run(&mut d, &[b"\xEF\xBB\xBF\ndata: c\n\n"], false);
        assert_eq!(got, vec![msg("c")], "the new stream's last event ID buffer starts empty");
        assert_eq!(d.last_event_id(), None);
    }

    #[test]
    fn oversized_event_is_dropped_once_and_the_stream_continues() {
        let input =
            b"data: ok\n\nid: 5\ndata: 0123456789\ndata: 0123456789\nid: 6\nevent: big\n\ndata: after\n\n";
        let mut d = SseDecoder::new(20);
        let got = run(&mut d, &[input], true);
        // "0123456789\n" (11) is buffered; the next line (16) makes 27.
        assert_eq!(
            got,
            vec![msg("ok"), too_large(27, 20), ev("message", "after", Some("6"))],
            "the dropped event's id fields still count"
        );
        // Fed byte by byte the event is caught as soon as it crosses the limit.
        let bytes: Vec<&[u8]> = input.chunks(1).collect();
        let got = run(&mut SseDecoder::new(20), &bytes, true);
        assert_eq!(got, vec![msg("ok"), too_large(21, 20), ev("message", "after", Some("6"))]);
    }

    #[test]
    fn limit_is_inclusive_and_ignores_line_ends_and_comments() {
        // The second line (5) meets the first one's data ("01234\n", 6): 11 bytes at most.
        let input = b"data:01234\r\ndata:\r\n: a comment much longer than the limit\r\n\r\n";
        assert_eq!(decode(input), vec![msg("01234\n")]);
        assert_eq!(run(&mut SseDecoder::new(11), &[input], true), vec![msg("01234\n")]);
        assert_eq!(run(&mut SseDecoder::new(10), &[input], true), vec![too_large(11, 10)]);
        let bytes: Vec<&[u8]> = input.chunks(1).collect();
        assert_eq!(run(&mut SseDecoder::new(11), &bytes, true), vec![msg("01234\n")]);
        assert_eq!(run(&mut SseDecoder::new(10), &bytes, true), vec![too_large(11, 10)]);
    }

    #[test]
    fn zero_limit_drops_every_event_with_fields() {
        let mut d = SseDecoder::new(0);
        let got = run(&mut d, &[b":hi\n\ndata\n\n\ndata: x\n\n"], true);
        assert_eq!(got, vec![too_large(4, 0), too_large(7, 0)]);
    }

    #[test]
    fn oversized_line_is_skipped_without_buffering() {
        let mut d = SseDecoder::new(64);
        let chunk = [b'x'; 1000];
        let mut got = run(&mut d, &[b"id: 1\ndata: "], false);
        for _ in 0..1000 {
            got.extend(run(&mut d, &[&chunk], false));
            assert!(d.buffered() <= 64, "buffered {}", d.buffered());
        }
        // The overlong line ends; the next ones of the same event are still skipped as data.
        got.extend(run(&mut d, &[b"\r", b"\ndata: small\nid: 2\n", b"\n", b"data: next\n\n"], false));
        assert_eq!(got, vec![too_large(1006, 64), ev("message", "next", Some("2"))]);
        assert_eq!(d.buffered(), 0);
    }

    #[test]
    fn many_small_data_lines_stay_within_the_limit() {
        let max = 1000;
        let mut d = SseDecoder::new(max);
        let mut got = Vec::new();
        for _ in 0..10_000 {
            got.extend(run(&mut d, &[b"data: abcdefgh\n"], false));
            assert!(d.buffered() <= max, "buffered {}", d.buffered());
        }
        got.extend(run(&mut d, &[b"\ndata: z\n\n"], true));
        assert_eq!(got, vec![too_large(1004, max), msg("z")]);
    }

    #[test]
    fn a_data_line_in_many_chunks_goes_straight_to_the_data() {
        let value = "v".repeat(100_000);
        let input = format!("event: message\ndata: {value}\r\n\n");
        for first in [1, 5, 6, 7, 20, 21, 22] {
            let mut d = SseDecoder::new(1 << 20);
            let mut got = run(&mut d, &[&input.as_bytes()[..first]], false);
            for chunk in input.as_bytes()[first..].chunks(4096) {
                got.extend(run(&mut d, &[chunk], false));
                assert!(d.line.len() <= DATA_PREFIX_LEN, "the value is not buffered as a line ({first})");
            }
            assert_eq!(got, vec![msg(&value)], "first chunk {first}");
            assert!(d.line.capacity() <= KEPT_LINE);
        }
        // With a second value and a CR line end split from its LF.
        let got =
            run(&mut SseDecoder::new(1 << 20), &[b"data:ab", b"cd\r", b"\ndata: e", b"f\n", b"\n"], true);
        assert_eq!(got, vec![msg("abcd\nef")]);
    }

    #[test]
    fn a_long_event_gets_the_room_of_the_last_long_one_or_the_spare_given() {
        let value = "v".repeat(3 * KEPT_LINE);
        let input = format!("data: {value}\n\n");
        let mut d = SseDecoder::new(1 << 20);
        let feed = |d: &mut SseDecoder| {
            let mut got = Vec::new();
            for chunk in input.as_bytes().chunks(4096) {
                d.feed(chunk, &mut |item| got.push(item));
            }
            got
        };
        assert_eq!(feed(&mut d), vec![msg(&value)]);
        assert!(d.wants_spare());
        // A new decoder (a new response stream) takes one too, as long as it is large enough.
        let mut fresh = SseDecoder::new(1 << 20);
        let spare = Vec::with_capacity(4 * KEPT_LINE);
        let at = spare.as_ptr() as usize;
        fresh.give_spare(spare);
        let got = feed(&mut fresh);
        let Some(Ok(event)) = got.first() else { panic!("{got:?}") };
        assert_eq!(event.data.as_ptr() as usize, at);
        // A spare large enough is the next long event's data.
        let spare = Vec::with_capacity(4 * KEPT_LINE);
        let at = spare.as_ptr() as usize;
        d.give_spare(spare);
        assert!(!d.wants_spare());
        let got = feed(&mut d);
        let Some(Ok(event)) = got.first() else { panic!("{got:?}") };
        assert_eq!((event.data.len(), event.data.as_ptr() as usize), (value.len(), at));
        // Without one: the room of the last long event, at once.
        d.feed(format!("data: {}", &value[..KEPT_LINE + 1]).as_bytes(), &mut |_| {});
        assert!(d.data.capacity() >= value.len() && d.data.capacity() <= value.len() + 64);
        // A short event lets a spare go; a buffer that is not empty or small is not taken.
        d.finish(&mut |_| {});
        assert_eq!(d.data.capacity(), 0, "an event cut short does not keep its room");
        d.give_spare(vec![1; 2 * KEPT_LINE]);
        d.give_spare(Vec::with_capacity(16));
        assert!(d.wants_spare());
        d.give_spare(Vec::with_capacity(2 * KEPT_LINE));
        assert_eq!(run(&mut d, &[b"data: short\n\n"], false), vec![msg("short")]);
        assert!(d.wants_spare());
    }

    #[test]
    fn a_data_line_split_across_chunks_meets_the_limit_as_a_whole_line_does() {
        // "data: " (6) + 14 = 20 bytes: at the limit; one more is too many.
        for (max, want) in [(20, vec![msg("01234567890123")]), (19, vec![too_large(20, 19)])] {
            for split in 0..=20 {
                let input: &[u8] = b"data: 01234567890123\n\n";
                let (a, b) = input.split_at(split);
                let got = run(&mut SseDecoder::new(max), &[a, b], true);
                assert_eq!(got, want, "max {max}, split at {split}");
            }
        }
    }

    #[test]
    fn huge_comment_is_not_buffered() {
        let mut d = SseDecoder::new(16);
        let mut got = run(&mut d, &[b"data: a\n:"], false);
        for _ in 0..100 {
            got.extend(run(&mut d, &[&[b'c'; 1000]], false));
            assert!(d.buffered() <= 2);
        }
        got.extend(run(&mut d, &[b"\n\n"], true));
        assert_eq!(got, vec![msg("a")]);
    }
}
