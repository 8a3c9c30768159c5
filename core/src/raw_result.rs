//! [`RawResult`]: the raw `result` of a response, as [`Event::Response`] hands it over, and the
//! batch that lets the small results of one input share one allocation.

// The results of a batch share one immutable buffer, which the application holds and drops. So
// does a large result with the message it came in (the framer's or the HTTP body's buffer,
// handed over rather than copied). The engine keeps the last batch's buffer and the last such
// message only to fill them again once no result holds them (`Arc::get_mut`,
// `Arc::try_unwrap`, which fail while one does): nothing is read or written through a shared
// reference. That is the one `Arc` of the engine, and no state is shared.
#![allow(clippy::disallowed_types)]

use std::collections::VecDeque;
use std::fmt;
use std::sync::Arc;

use serde_json::value::RawValue;

use crate::Event;

/// A result up to this size waits in the batch (copied once into it, as into a buffer of its
/// own, without an allocation of its own); a larger one stays in the message it came in, if the
/// transport handed that over whole, or gets a buffer of its own. The size of the smallest
/// message handed over (`OWNED_MIN` in `connection/incoming.rs`).
const BATCHED_MAX: usize = 4 * 1024;

/// The most a batch reserves for its text up front (more than that grows as it comes).
const MAX_RESERVED: usize = 16 * 1024;

/// The raw JSON `result` member of a response, exactly as the server sent it: one JSON value,
/// in UTF-8. Read it as text with [`get`](Self::get), as with a [`RawValue`], and decode it with
/// `serde_json::from_str`:
///
/// ```
/// # use std::time::Instant;
/// # use mcp_sansio::schema::{CallToolResult, Implementation};
/// # use mcp_sansio::{ClientConfig, ClientConnection, Event, ProtocolVersion, RequestOptions};
/// # let now = Instant::now();
/// # let config = ClientConfig::new(Implementation::new("x", "1")).with_versions(&[ProtocolVersion::V2025_11_25]);
/// # let mut conn = ClientConnection::new(config, now);
/// # while conn.poll_transmit().is_some() {}
/// # conn.feed(now, br#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}
/// # "#);
/// # while conn.poll_event().is_some() {}
/// let id = conn.send_request(now, "tools/call", Some(br#"{"name":"echo"}"#), RequestOptions::default())?;
/// conn.feed(now, b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]}}\n");
/// let Some(Event::Response { id: answered, result: Ok(raw) }) = conn.poll_event() else { panic!() };
/// assert_eq!(answered, id);
/// assert_eq!(raw.get(), r#"{"content":[{"type":"text","text":"hi"}]}"#);
/// let result: CallToolResult = serde_json::from_str(raw.get())?;
/// assert_eq!(result.content[0].as_text(), Some("hi"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// The small results that arrive together (the responses of one read, say, or of every input
/// before the next [`poll_event`](crate::ClientConnection::poll_event)) share one buffer,
/// allocated when the first of them is handed out: a result is a counted reference into it, so
/// cloning one costs no allocation. Holding a result keeps that buffer alive (the other small
/// results of its batch, never more); [`to_raw_value`](Self::to_raw_value) copies it out on its
/// own. A result over 4 KiB has a buffer of its own: the message it came in when the transport
/// handed that over whole (a line read in several pieces, an HTTP body, an event-stream event),
/// so that a large result is not copied out of it; otherwise a copy.
#[derive(Clone)]
pub struct RawResult {
    /// The buffer the result is in. `None` only inside the engine: from the response's arrival
    /// until the batch it waits in is sealed, before `poll_event` hands it out.
    buf: Option<Arc<String>>,
    /// Where in `buf` the result is; `0..0` for the whole of a buffer of its own. (`u32`s keep a
    /// result as small as the `Box<RawValue>` it replaces.)
    start: u32,
    end: u32,
}

impl RawResult {
    /// A result with a buffer of its own.
    pub(crate) fn new(json: &str) -> Self {
        RawResult { buf: Some(Arc::new(json.to_owned())), start: 0, end: 0 }
    }

    /// `json`, a part of `message`, as a result that points into it; `None` past 4 GiB.
    fn within(message: &Arc<String>, json: &str) -> Option<Self> {
        let start = (json.as_ptr() as usize).checked_sub(message.as_ptr() as usize)?;
        let end = start.checked_add(json.len())?;
        // The same bytes, not only equal ones (a result holding its own message's text).
        let inside = message.get(start..end).is_some_and(|part| std::ptr::eq(part, json));
        let (start, end) = (u32::try_from(start).ok()?, u32::try_from(end).ok()?);
        (inside && end > 0).then(|| RawResult { buf: Some(Arc::clone(message)), start, end })
    }

    /// The JSON text of the result.
    pub fn get(&self) -> &str {
        let text = self.buf.as_deref().map(String::as_str).and_then(|buf| match (self.start, self.end) {
            (0, 0) => Some(buf),
            (start, end) => buf.get(start as usize..end as usize),
        });
        debug_assert!(text.is_some(), "a result was handed out before its batch was sealed");
        text.unwrap_or_default()
    }

    /// The result as a [`RawValue`] of its own (a copy).
    pub fn to_raw_value(&self) -> Box<RawValue> {
        // The text came from a `RawValue`, so it is one; `null` is never reached.
        RawValue::from_string(self.get().to_owned()).unwrap_or_else(|_| RawValue::NULL.to_owned())
    }
}

impl From<&RawValue> for RawResult {
    fn from(raw: &RawValue) -> Self {
        RawResult::new(raw.get())
    }
}

impl PartialEq for RawResult {
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get()
    }
}

impl Eq for RawResult {}

impl fmt::Debug for RawResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("RawResult").field(&format_args!("{}", self.get())).finish()
    }
}

impl fmt::Display for RawResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.get())
    }
}

/// A message handed over whole, being decoded ([`ResultBatch::decoding`]): its text, which
/// the large results in it share.
pub(crate) struct WholeMessage(Arc<String>);

impl std::ops::Deref for WholeMessage {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

/// The small results that arrived since the last [`poll_event`](crate::ClientConnection::poll_event),
/// gathered in one text, which becomes the shared buffer of all of them when the first is
/// handed out: one allocation per batch instead of one per response, and none once the
/// application dropped every result of the last batch (its buffer is filled again: calls one
/// after another allocate nothing for their results).
#[derive(Debug, Default)]
pub(crate) struct ResultBatch {
    /// The message being decoded, when the transport handed it over whole: a large result
    /// points into it rather than being copied out.
    message: Option<Arc<String>>,
    /// The last message a result kept: once the application dropped every result of it, its
    /// buffer is the next large message's ([`reclaim`](Self::reclaim)), which then needs no
    /// allocation of its own. (A freed buffer would do as well only with an allocator that
    /// gives it back to whichever thread asks next: glibc keeps it in the arena of the thread
    /// that allocated it, and the transports read on more than one thread.)
    kept: Option<Arc<String>>,
    /// The batch's text, in the buffer its results share once sealed; between batches, the
    /// last batch's (shared with its results until they are dropped).
    text: Arc<String>,
    /// Results of this batch in events not handed out yet.
    waiting: usize,
    /// How many bytes the input being read holds: a bound on what its results need.
    input: usize,
}

impl ResultBatch {
    /// An input of `len` bytes is being read: the results it brings need no more (so the text
    /// grows once, when the first of them comes, rather than step by step).
    pub(crate) fn reading(&mut self, len: usize) {
        self.input = len;
    }

    /// The message `text` is being decoded: a large result of it may keep it. The connection
    /// decodes it from what this returns, then calls [`done`](Self::done).
    pub(crate) fn decoding(&mut self, text: String) -> WholeMessage {
        let message = Arc::new(text);
        self.message = Some(Arc::clone(&message));
        WholeMessage(message)
    }

    /// The message given to [`decoding`](Self::decoding) was decoded: its buffer, unless a
    /// result keeps it.
    pub(crate) fn done(&mut self) -> Option<String> {
        match Arc::try_unwrap(self.message.take()?) {
            Ok(text) => Some(text),
            Err(shared) => {
                self.kept = Some(shared);
                None
            }
        }
    }

    /// The buffer of the last message a result kept, emptied, if no result holds it any more;
    /// if one still does, the buffer is left to it.
    pub(crate) fn reclaim(&mut self) -> Option<Vec<u8>> {
        match Arc::try_unwrap(self.kept.take()?) {
            Ok(text) => {
                let mut buf = text.into_bytes();
                buf.clear();
                Some(buf)
            }
            Err(shared) => {
                self.kept = Some(shared);
                None
            }
        }
    }

    /// The result `json` of a response whose event is about to be queued.
    pub(crate) fn add(&mut self, json: &str) -> RawResult {
        if json.len() > BATCHED_MAX {
            if let Some(raw) = self.message.as_ref().and_then(|message| RawResult::within(message, json)) {
                return raw;
            }
        }
        if json.is_empty() || json.len() > BATCHED_MAX {
            return RawResult::new(json);
        }
        if self.waiting == 0 {
            // A new batch: in the last one's buffer if no result holds it any more (and it did
            // not grow large), else in one of its own.
            match Arc::get_mut(&mut self.text).filter(|text| text.capacity() <= MAX_RESERVED) {
                Some(text) => text.clear(),
                None => self.text = Arc::new(String::new()),
            }
        }
        // Unique: the batch's results are not handed out before it is sealed.
        let Some(text) = Arc::get_mut(&mut self.text) else { return RawResult::new(json) };
        let start = u32::try_from(text.len()).ok();
        let end = u32::try_from(text.len() + json.len()).ok();
        let (Some(start), Some(end)) = (start, end) else { return RawResult::new(json) };
        if text.is_empty() {
            text.reserve(self.input.min(MAX_RESERVED).max(json.len()));
        }
        text.push_str(json);
        self.waiting += 1;
        RawResult { buf: None, start, end }
    }

    /// Gives the waiting results their buffer, before any of them is handed out. They are in the
    /// events queued since the last seal, the latest of `events`: only those are looked at.
    pub(crate) fn seal(&mut self, events: &mut VecDeque<Event>) {
        if self.waiting == 0 {
            return;
        }
        // The text itself becomes the buffer (no copy). What was reserved for the input and not
        // used goes first (it would live as long as the results).
        if let Some(text) = Arc::get_mut(&mut self.text) {
            if text.capacity() - text.len() > BATCHED_MAX {
                text.shrink_to_fit();
            }
        }
        for event in events.iter_mut().rev() {
            let Event::Response { result: Ok(raw), .. } = event else { continue };
            if raw.buf.is_none() {
                raw.buf = Some(Arc::clone(&self.text));
                self.waiting -= 1;
                if self.waiting == 0 {
                    break;
                }
            }
        }
        self.waiting = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RequestId;

    fn response(id: i64, result: RawResult) -> Event {
        Event::Response { id: RequestId::Number(id), result: Ok(result) }
    }

    fn text(event: &Event) -> &str {
        match event {
            Event::Response { result: Ok(raw), .. } => raw.get(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_batch_shares_one_buffer_and_leaves_earlier_results_alone() {
        let mut batch = ResultBatch::default();
        let mut events = VecDeque::new();
        events.push_back(response(1, RawResult::new("{\"a\":1}")));
        batch.seal(&mut events);
        events.push_back(response(2, batch.add("{}")));
        events.push_back(Event::Closed(crate::CloseReason::Local));
        events.push_back(response(3, batch.add("[1,2]")));
        let large = format!("\"{}\"", "x".repeat(BATCHED_MAX));
        events.push_back(response(4, batch.add(&large)));
        batch.seal(&mut events);
        assert_eq!(text(&events[0]), "{\"a\":1}");
        assert_eq!(text(&events[1]), "{}");
        assert_eq!(text(&events[3]), "[1,2]");
        assert_eq!(text(&events[4]), large);
        let shared = |events: &VecDeque<Event>, i: usize| match &events[i] {
            Event::Response { result: Ok(raw), .. } => raw.buf.clone().unwrap(),
            _ => unreachable!(),
        };
        assert!(Arc::ptr_eq(&shared(&events, 1), &shared(&events, 3)), "one buffer for the batch");
        assert!(!Arc::ptr_eq(&shared(&events, 1), &shared(&events, 4)), "a large result has its own");
        assert_eq!(&*shared(&events, 1), "{}[1,2]", "the batch holds its results and nothing else");
        // The next batch starts empty, in a buffer of its own while the last one's is held.
        events.push_back(response(5, batch.add("true")));
        batch.seal(&mut events);
        assert_eq!(text(&events[5]), "true");
        assert_eq!(&*shared(&events, 5), "true");
        assert_eq!(&*shared(&events, 1), "{}[1,2]", "a held batch is left alone");
        // Once its results are dropped, a batch's buffer is filled again: no allocation.
        let last = shared(&events, 5);
        let at = last.as_ptr();
        drop(last);
        events.clear();
        events.push_back(response(6, batch.add("false")));
        batch.seal(&mut events);
        assert_eq!(text(&events[0]), "false");
        assert_eq!(shared(&events, 0).as_ptr(), at);
    }

    #[test]
    fn a_large_result_shares_its_message_and_the_message_comes_back_once_dropped() {
        let mut batch = ResultBatch::default();
        let message = batch.decoding(format!("{{\"result\":\"{}\"}}", "y".repeat(2 * BATCHED_MAX)));
        let json = &message[10..message.len() - 1];
        let large = batch.add(json);
        assert!(std::ptr::eq(large.get(), json), "the message's own bytes");
        // An equal text elsewhere is not the message's: a copy.
        let elsewhere = json.to_owned();
        assert!(!std::ptr::eq(batch.add(&elsewhere).get(), json));
        drop(message);
        assert_eq!(batch.done(), None, "a result keeps it");
        assert_eq!(batch.reclaim(), None, "still held");
        drop(large);
        let buf = batch.reclaim().unwrap();
        assert!(buf.is_empty() && buf.capacity() > 2 * BATCHED_MAX);
        assert_eq!(batch.reclaim(), None, "given once");
        // A message no result kept comes back at once.
        drop(batch.decoding("{}".to_owned()));
        assert_eq!(batch.done().as_deref(), Some("{}"));
    }

    #[test]
    fn a_result_reads_and_converts_as_a_raw_value() {
        let raw = RawResult::new(r#"{"x": [1, "two"]}"#);
        assert_eq!(raw.get(), r#"{"x": [1, "two"]}"#);
        assert_eq!(raw.to_raw_value().get(), raw.get());
        assert_eq!(raw.to_string(), raw.get());
        assert_eq!(format!("{raw:?}"), r#"RawResult({"x": [1, "two"]})"#);
        assert_eq!(raw.clone(), raw);
        let from: RawResult = serde_json::from_str::<&RawValue>("7").unwrap().into();
        assert_eq!(from.get(), "7");
        // As small as the `Box<RawValue>` it replaces.
        assert_eq!(std::mem::size_of::<RawResult>(), 16);
    }
}
