//! Drives the Server-Sent Events decoder ([`SseDecoder`]) with an arbitrary byte stream, split
//! into arbitrary chunks.
//!
//! The stream is decoded three ways, each with a fresh decoder of the same maximum event size,
//! followed by `finish`: whole (one chunk), cut at the input's split points, and one byte at a
//! time. Asserted:
//! - no panic (the decoder "never panics");
//! - differential: the three give the same items in the same order (events equal, errors equal
//!   except `len_at_least`, which depends on where a chunk ended), the same `last_event_id` and
//!   the same `retry`;
//! - after `finish` the decoder is ready for a new stream: decoding the same bytes again on it
//!   gives the same items as a fresh decoder, except that the ids of events carry over
//!   (`last_event_id` persists across streams), so events are compared without ids there.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use mcp_sansio::http::{SseDecoder, SseError, SseEvent};

#[derive(Arbitrary, Debug)]
struct Input<'a> {
    /// The maximum event size: 0 → 1 MiB, else this many bytes.
    max: u16,
    /// Where to cut the stream (indexes modulo its length + 1, in any order).
    splits: Vec<u16>,
    /// The stream.
    stream: &'a [u8],
}

type Item = Result<SseEvent, SseError>;

/// What one decoding gave: the items, `last_event_id`, `retry`.
type Outcome = (Vec<Item>, Option<String>, Option<std::time::Duration>);

fn decode(decoder: &mut SseDecoder, chunks: &[&[u8]]) -> Outcome {
    let mut items = Vec::new();
    for chunk in chunks {
        decoder.feed(chunk, &mut |item| items.push(item));
    }
    decoder.finish(&mut |item| items.push(item));
    (normalized(items), decoder.last_event_id().map(str::to_owned), decoder.retry())
}

/// `len_at_least` depends on where the chunks end; nothing else may.
fn normalized(items: Vec<Item>) -> Vec<Item> {
    items
        .into_iter()
        .map(|item| match item {
            Err(SseError::EventTooLarge { max, .. }) => Err(SseError::EventTooLarge { len_at_least: 0, max }),
            other => other,
        })
        .collect()
}

fn without_ids(items: &[Item]) -> Vec<Item> {
    items
        .iter()
        .map(|item| match item {
            Ok(event) => Ok(SseEvent { id: None, ..event.clone() }),
            other => other.clone(),
        })
        .collect()
}

fuzz_target!(|input: Input<'_>| {
    let max = if input.max == 0 { 1 << 20 } else { usize::from(input.max) };
    let stream = input.stream;

    let whole = decode(&mut SseDecoder::new(max), &[stream]);

    let mut cuts: Vec<usize> = input.splits.iter().map(|&s| usize::from(s) % (stream.len() + 1)).collect();
    cuts.sort_unstable();
    let mut chunks = Vec::with_capacity(cuts.len() + 1);
    let mut start = 0;
    for cut in cuts {
        chunks.push(&stream[start..cut]);
        start = cut;
    }
    chunks.push(&stream[start..]);
    let split = decode(&mut SseDecoder::new(max), &chunks);
    assert_eq!(
        split,
        whole,
        "split at {:?} differs from whole",
        chunks.iter().map(|c| c.len()).collect::<Vec<_>>()
    );

    let bytes: Vec<&[u8]> = stream.chunks(1).collect();
    let one_by_one = decode(&mut SseDecoder::new(max), &bytes);
    assert_eq!(one_by_one, whole, "byte by byte differs from whole");

    // A second stream on the same decoder (a reconnection) decodes like a first one, ids aside.
    let mut decoder = SseDecoder::new(max);
    decode(&mut decoder, &[stream]);
    let again = decode(&mut decoder, &chunks);
    assert_eq!(without_ids(&again.0), without_ids(&whole.0), "a second stream decodes differently");
    assert_eq!(again.2, whole.2, "retry differs on the second stream");
});
