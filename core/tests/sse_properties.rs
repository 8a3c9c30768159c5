//! Property tests for the Server-Sent Events decoder: (a) generated events, serialized with
//! arbitrary line ends, comments, unknown fields, optional spaces and field orders, decode to
//! exactly those events however the bytes are split; (b) arbitrary bytes in arbitrary chunks never
//! panic, give the same items however they are split, respect the size limit, and (without a
//! limit) match a straightforward reference reading of the standard.
#![allow(clippy::unwrap_used)]
// `prop_oneof!` builds its weighted union on `Arc`; the ban is for the engine, not its tests.
#![allow(clippy::disallowed_types)]

use std::time::Duration;

use mcp_sansio::http::{SseDecoder, SseError, SseEvent};
use proptest::prelude::*;
use proptest::sample::Index;

type Item = Result<SseEvent, SseError>;

/// Decodes `chunks` with a fresh decoder, then finishes the stream.
fn decode(max: usize, chunks: &[&[u8]]) -> (Vec<Item>, Option<String>, Option<Duration>) {
    let mut decoder = SseDecoder::new(max);
    let mut items = Vec::new();
    for chunk in chunks {
        decoder.feed(chunk, &mut |item| items.push(item));
    }
    decoder.finish(&mut |item| items.push(item));
    (items, decoder.last_event_id().map(str::to_owned), decoder.retry())
}

/// Splits `bytes` at the given points (in any order, duplicates allowed).
fn split<'a>(bytes: &'a [u8], points: &[Index]) -> Vec<&'a [u8]> {
    let mut cuts: Vec<usize> = points.iter().map(|i| i.index(bytes.len() + 1)).collect();
    cuts.sort_unstable();
    let mut chunks = Vec::new();
    let mut start = 0;
    for cut in cuts {
        chunks.push(&bytes[start..cut]);
        start = cut;
    }
    chunks.push(&bytes[start..]);
    chunks
}

/// `len_at_least` depends on where the chunks end; everything else must not.
fn normalized(items: &[Item]) -> Vec<Item> {
    items
        .iter()
        .map(|item| match item {
            Err(SseError::EventTooLarge { max, .. }) => {
                Err(SseError::EventTooLarge { len_at_least: 0, max: *max })
            }
            other => other.clone(),
        })
        .collect()
}

/// One event as the server means it.
#[derive(Debug, Clone)]
struct GenEvent {
    event: Option<String>,
    data: Vec<String>,
    /// `None`: no `id` field. A value with a NUL must be ignored; an empty one resets the id.
    id: Option<String>,
    retry: Option<String>,
    unknown: Option<(String, String)>,
    comment: Option<String>,
    /// Shuffles the fields; the data values keep their order.
    order: Vec<Index>,
}

fn gen_event() -> impl Strategy<Value = GenEvent> {
    let id = prop_oneof![
        3 => Just(None),
        1 => Just(Some(String::new())),
        3 => "[^\r\n\0]{1,6}".prop_map(Some),
        1 => "[^\r\n]{0,3}\0[^\r\n]{0,3}".prop_map(Some),
    ];
    let retry =
        prop_oneof![2 => Just(None), 1 => "[0-9]{1,25}".prop_map(Some), 1 => "[^\r\n]{0,5}".prop_map(Some)];
    let unknown = proptest::option::of((
        "[a-zA-Z ]{1,6}"
            .prop_filter("a known field", |n| !["event", "data", "id", "retry"].contains(&n.as_str())),
        "[^\r\n]{0,6}",
    ));
    (
        proptest::option::of("[a-zA-Z_.]{1,8}"),
        prop::collection::vec("[^\r\n]{0,12}", 0..4),
        id,
        retry,
        unknown,
        proptest::option::of("[^\r\n]{0,10}"),
        prop::collection::vec(any::<Index>(), 8),
    )
        .prop_map(|(event, data, id, retry, unknown, comment, order)| GenEvent {
            event,
            data,
            id,
            retry,
            unknown,
            comment,
            order,
        })
}

/// Per-line serialization choices: line end, space after the colon, bare field name.
#[derive(Debug, Clone, Copy)]
struct Style(u8);

struct Writer<'a> {
    out: Vec<u8>,
    styles: &'a [Style],
    n: usize,
    last_was_cr: bool,
}

impl Writer<'_> {
    fn style(&mut self) -> u8 {
        let s = self.styles[self.n % self.styles.len()].0;
        self.n += 1;
        s
    }

    fn line(&mut self, line: &str) {
        let style = self.style();
        self.out.extend_from_slice(line.as_bytes());
        let mut end: &[u8] = match style % 4 {
            0 | 3 => b"\n",
            1 => b"\r\n",
            _ => b"\r",
        };
        // A CR then an LF is one line end, so a blank line after a CR must not be a lone LF.
        if self.last_was_cr && line.is_empty() && end == b"\n" {
            end = b"\r\n";
        }
        self.out.extend_from_slice(end);
        self.last_was_cr = end == b"\r";
    }

    fn field(&mut self, name: &str, value: &str) {
        let style = self.style();
        let line = if value.is_empty() && style & 8 != 0 {
            name.to_owned()
        } else if value.starts_with(' ') || style & 4 != 0 {
            format!("{name}: {value}")
        } else {
            format!("{name}:{value}")
        };
        self.line(&line);
    }
}

enum Line<'a> {
    Field(&'a str, &'a str),
    Data,
    Comment(&'a str),
}

/// Serializes the events and computes what the decoder must report.
fn serialize(
    events: &[GenEvent],
    styles: &[Style],
    bom: bool,
    trailer: &[String],
) -> (Vec<u8>, Vec<Item>, Option<String>, Option<Duration>) {
    let mut w = Writer { out: Vec::new(), styles, n: 0, last_was_cr: false };
    if bom {
        w.out.extend_from_slice(b"\xEF\xBB\xBF");
    }
    let (mut expected, mut id, mut retry) = (Vec::new(), String::new(), None);
    for e in events {
        let mut lines = Vec::new();
        lines.extend(e.event.as_deref().map(|t| Line::Field("event", t)));
        lines.extend(e.data.iter().map(|_| Line::Data));
        lines.extend(e.id.as_deref().map(|v| Line::Field("id", v)));
        lines.extend(e.retry.as_deref().map(|v| Line::Field("retry", v)));
        lines.extend(e.unknown.as_ref().map(|(n, v)| Line::Field(n, v)));
        lines.extend(e.comment.as_deref().map(Line::Comment));
        for (i, pick) in e.order.iter().enumerate().take(lines.len()) {
            let j = i + pick.index(lines.len() - i);
            lines.swap(i, j);
        }
        let mut data = e.data.iter();
        for line in &lines {
            match line {
                Line::Field(name, value) => w.field(name, value),
                Line::Data => w.field("data", data.next().unwrap()),
                Line::Comment(text) => w.line(&format!(":{text}")),
            }
        }
        w.line("");
        if w.style() & 16 != 0 {
            w.line(""); // An extra blank line changes nothing.
        }

        if let Some(v) = e.id.as_deref().filter(|v| !v.contains('\0')) {
            id = v.to_owned();
        }
        if let Some(v) = e.retry.as_deref().filter(|v| v.bytes().all(|b| b.is_ascii_digit())) {
            if !v.is_empty() {
                retry = Some(Duration::from_millis(v.parse().unwrap_or(u64::MAX)));
            }
        }
        if !e.data.is_empty() {
            expected.push(Ok(SseEvent {
                event: e.event.clone().unwrap_or_else(|| "message".to_owned()),
                data: e.data.join("\n"),
                id: (!id.is_empty()).then(|| id.clone()),
            }));
        }
    }
    // An event cut off by the end of the stream is discarded.
    for value in trailer {
        w.field("data", value);
    }
    let id = (!id.is_empty()).then_some(id);
    (w.out, expected, id, retry)
}

/// The standard's algorithm, read literally, on a whole stream and without a size limit.
fn reference(bytes: &[u8]) -> (Vec<Item>, Option<String>, Option<Duration>) {
    let text = String::from_utf8_lossy(bytes);
    let text = text.strip_prefix('\u{FEFF}').unwrap_or(&text);
    let mut lines = Vec::new();
    let mut line = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' => {
                if chars.peek() == Some(&'\n') {
                    chars.next();
                }
                lines.push(std::mem::take(&mut line));
            }
            '\n' => lines.push(std::mem::take(&mut line)),
            c => line.push(c),
        }
    }
    let (mut data, mut event, mut id_buffer, mut last_id) =
        (String::new(), String::new(), String::new(), String::new());
    let (mut items, mut retry) = (Vec::new(), None);
    for line in lines {
        if line.is_empty() {
            last_id.clone_from(&id_buffer);
            if !data.is_empty() {
                data.pop();
                items.push(Ok(SseEvent {
                    event: if event.is_empty() { "message".to_owned() } else { event.clone() },
                    data: data.clone(),
                    id: (!last_id.is_empty()).then(|| last_id.clone()),
                }));
            }
            data.clear();
            event.clear();
            continue;
        }
        if line.starts_with(':') {
            continue;
        }
        let (name, value) = match line.split_once(':') {
            Some((n, v)) => (n, v.strip_prefix(' ').unwrap_or(v)),
            None => (line.as_str(), ""),
        };
        match name {
            "event" => event = value.to_owned(),
            "data" => {
                data.push_str(value);
                data.push('\n');
            }
            "id" if !value.contains('\0') => id_buffer = value.to_owned(),
            "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                retry = Some(Duration::from_millis(value.parse().unwrap_or(u64::MAX)));
            }
            _ => {}
        }
    }
    (items, (!last_id.is_empty()).then_some(last_id), retry)
}

/// Bytes likely to matter to the decoder, mixed with anything.
fn noise() -> impl Strategy<Value = Vec<u8>> {
    let token = prop_oneof![
        4 => any::<u8>().prop_map(|b| vec![b]),
        4 => prop::sample::select(vec![
            &b"\n"[..], b"\r", b"\r\n", b":", b": ", b" ", b"\0", b"\xEF\xBB\xBF", b"\xEF", b"\xE2\x82",
        ])
        .prop_map(<[u8]>::to_vec),
        3 => prop::sample::select(vec![&b"data"[..], b"id", b"event", b"retry", b"123", b"x"])
            .prop_map(<[u8]>::to_vec),
    ];
    prop::collection::vec(token, 0..120).prop_map(|tokens| tokens.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn generated_events_decode_exactly_however_split(
        events in prop::collection::vec(gen_event(), 0..8),
        styles in prop::collection::vec(any::<u8>().prop_map(Style), 1..40),
        bom in any::<bool>(),
        trailer in prop::collection::vec("[^\r\n]{0,8}", 0..3),
        points in prop::collection::vec(any::<Index>(), 0..10),
    ) {
        let (bytes, expected, id, retry) = serialize(&events, &styles, bom, &trailer);
        let want = (expected, id, retry);
        prop_assert_eq!(&decode(usize::MAX, &[&bytes]), &want, "whole");
        prop_assert_eq!(&decode(usize::MAX, &split(&bytes, &points)), &want, "split");
        let bytes_one_by_one: Vec<&[u8]> = bytes.chunks(1).collect();
        prop_assert_eq!(&decode(usize::MAX, &bytes_one_by_one), &want, "byte by byte");
        prop_assert_eq!(&reference(&bytes), &want, "the reference agrees");
    }

    #[test]
    fn arbitrary_bytes_never_panic_and_chunking_does_not_matter(
        bytes in noise(),
        max in 0usize..80,
        points in prop::collection::vec(any::<Index>(), 0..12),
    ) {
        let whole = decode(max, &[&bytes]);
        let chunked = decode(max, &split(&bytes, &points));
        let bytes_one_by_one: Vec<&[u8]> = bytes.chunks(1).collect();
        let single = decode(max, &bytes_one_by_one);
        for (items, ..) in [&whole, &chunked, &single] {
            for item in items {
                match item {
                    Ok(event) => prop_assert!(event.data.len() < max.max(1)),
                    Err(SseError::EventTooLarge { len_at_least, max: m }) => {
                        prop_assert_eq!(*m, max);
                        prop_assert!(*len_at_least > max);
                    }
                    Err(other) => prop_assert!(false, "unexpected {:?}", other),
                }
            }
        }
        prop_assert_eq!(normalized(&chunked.0), normalized(&whole.0));
        prop_assert_eq!(normalized(&single.0), normalized(&whole.0));
        prop_assert_eq!(&chunked.1, &whole.1);
        prop_assert_eq!(&chunked.2, &whole.2);

        // Without a limit, the decoder is the standard's algorithm.
        let unlimited = decode(usize::MAX, &split(&bytes, &points));
        prop_assert_eq!(unlimited, reference(&bytes));
    }
}
