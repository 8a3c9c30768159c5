//! The engine alone, on recorded-shape bytes, each workload beside its raw baselines measured in
//! the same run:
//!
//! - `decode_correlate/{200B,4KiB,64KiB}`: 64 `tools/call` responses fed to a ready connection
//!   with 64 requests pending, and every event drained. Baselines: `serde_json::from_slice` of
//!   each line into a typed envelope with a borrowed `&RawValue` result (the practical parse
//!   limit), and `memchr` over the same bytes (the memory-bandwidth limit).
//! - `framing/*`: the line framer alone over the same bytes, beside `memchr`.
//! - `sse/*`: the same messages as a server-sent-event stream through `SseDecoder`, beside
//!   `memchr`.
//! - `encode/tools_call`: `send_request` of a small `tools/call` and taking its transmit, beside
//!   `serde_json::to_writer` of an equivalent envelope.
//! - `call_tool_result/*`: decoding a `CallToolResult` (what a typed `tools/call` does with the
//!   raw result) with one 64 KiB text block or 256 small ones, each block's `type` first (as
//!   servers write it) or last, beside the same decoding through `serde_json::Value` (how
//!   content blocks decoded before they were read in one pass) and a plain derived struct with
//!   the same members (the practical limit of an owned decode).
//!
//! Run: `cargo bench -p mcp-benches --bench engine` (figures in `docs/performance.md`).

use std::hint::black_box;
use std::time::Duration;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use mcp_benches::engine_workload::{BATCH, Envelope, ready, response, responses, with_pending};
use mcp_sansio::framing::{Frame, LineFramer};
use mcp_sansio::http::SseDecoder;
use mcp_sansio::schema::{
    AudioContent, CallToolResult, ContentBlock, EmbeddedResource, ImageContent, JsonObject, ResourceLink,
    TextContent,
};
use mcp_sansio::{Event, RequestOptions};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

fn sizes() -> [(&'static str, usize); 3] {
    [("200B", 200), ("4KiB", 4 * 1024), ("64KiB", 64 * 1024)]
}

fn decode_correlate(c: &mut Criterion) {
    let mut group = c.benchmark_group("decode_correlate");
    for (name, size) in sizes() {
        let bytes = responses(size);
        let lines: Vec<&[u8]> = bytes.split(|b| *b == b'\n').filter(|l| !l.is_empty()).collect();
        group.throughput(Throughput::Bytes(bytes.len() as u64));
        group.bench_function(format!("engine/{name}"), |b| {
            b.iter_batched(
                with_pending,
                |(mut conn, now)| {
                    conn.feed(now, black_box(&bytes));
                    let mut responses = 0;
                    while let Some(event) = conn.poll_event() {
                        if let Event::Response { result: Ok(raw), .. } = &event {
                            black_box(raw);
                            responses += 1;
                        }
                    }
                    assert_eq!(responses, BATCH);
                    conn
                },
                BatchSize::SmallInput,
            );
        });
        group.bench_function(format!("serde_envelope/{name}"), |b| {
            b.iter(|| {
                let mut ids = 0;
                for line in &lines {
                    let envelope: Envelope<'_> = serde_json::from_slice(black_box(line)).expect("valid");
                    ids += envelope.id;
                    black_box(envelope.result);
                }
                ids
            });
        });
        group.bench_function(format!("memchr/{name}"), |b| {
            b.iter(|| memchr::memchr_iter(b'\n', black_box(&bytes)).count());
        });
    }
    group.finish();
}

fn framing(c: &mut Criterion) {
    let mut group = c.benchmark_group("framing");
    for (name, size) in sizes() {
        let bytes = responses(size);
        group.throughput(Throughput::Bytes(bytes.len() as u64));
        group.bench_function(format!("line_framer/{name}"), |b| {
            let mut framer = LineFramer::new(1 << 20);
            b.iter(|| {
                let mut n = 0;
                framer.feed(black_box(&bytes), &mut |frame| {
                    if let Frame::Message(line) = frame {
                        n += line.len();
                    }
                });
                n
            });
        });
        group.bench_function(format!("memchr/{name}"), |b| {
            b.iter(|| memchr::memchr_iter(b'\n', black_box(&bytes)).count());
        });
    }
    group.finish();
}

fn sse(c: &mut Criterion) {
    let mut group = c.benchmark_group("sse");
    for (name, size) in sizes() {
        let stream: Vec<u8> = (1..=BATCH)
            .flat_map(|id| format!("event: message\ndata: {}\n", response(id, size)).into_bytes())
            .collect();
        group.throughput(Throughput::Bytes(stream.len() as u64));
        group.bench_function(format!("sse_decoder/{name}"), |b| {
            b.iter(|| {
                let mut decoder = SseDecoder::new(1 << 20);
                let mut n = 0;
                decoder.feed(black_box(&stream), &mut |event| {
                    if let Ok(event) = event {
                        n += event.data.len();
                    }
                });
                assert!(n > 0);
                n
            });
        });
        group.bench_function(format!("memchr/{name}"), |b| {
            b.iter(|| memchr::memchr_iter(b'\n', black_box(&stream)).count());
        });
    }
    group.finish();
}

fn encode(c: &mut Criterion) {
    #[derive(Serialize)]
    struct Call<'a> {
        jsonrpc: &'a str,
        id: u64,
        method: &'a str,
        params: &'a RawValue,
    }
    let params = br#"{"name":"echo","arguments":{"message":"hi"}}"#;
    let raw: &RawValue = serde_json::from_slice(params).expect("valid");
    let mut group = c.benchmark_group("encode");
    group.throughput(Throughput::Elements(1));
    group.bench_function("engine/tools_call", |b| {
        // A fresh ready connection per call (made outside the timing), so that the pending
        // table does not grow across iterations.
        b.iter_batched_ref(
            ready,
            |(conn, now)| {
                conn.send_request(*now, "tools/call", Some(black_box(params)), RequestOptions::default())
                    .expect("ready");
                let transmit = conn.poll_transmit().expect("a transmit");
                black_box(transmit.bytes().len())
            },
            BatchSize::SmallInput,
        );
    });
    group.bench_function("serde_to_writer/tools_call", |b| {
        let mut out = Vec::with_capacity(256);
        let mut id = 0;
        b.iter(|| {
            out.clear();
            id += 1;
            serde_json::to_writer(&mut out, &Call { jsonrpc: "2.0", id, method: "tools/call", params: raw })
                .expect("serializes");
            out.push(b'\n');
            black_box(&out);
        });
    });
    group.finish();
}

/// A content block decoded as before the one-pass decoding: the whole object into a
/// `serde_json::Value`, then the variant its `type` names from that value.
struct ThroughValue(ContentBlock);

impl<'de> Deserialize<'de> for ThroughValue {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        use serde_json::Value;
        fn from<T: serde::de::DeserializeOwned, E: Error>(value: Value) -> Result<T, E> {
            serde_json::from_value(value).map_err(E::custom)
        }
        let value = Value::deserialize(deserializer)?;
        let block = match value.get("type").and_then(Value::as_str) {
            Some("text") => ContentBlock::Text(from::<TextContent, _>(value)?),
            Some("image") => ContentBlock::Image(from::<ImageContent, _>(value)?),
            Some("audio") => ContentBlock::Audio(from::<AudioContent, _>(value)?),
            Some("resource_link") => ContentBlock::ResourceLink(from::<ResourceLink, _>(value)?),
            Some("resource") => ContentBlock::Resource(from::<EmbeddedResource, _>(value)?),
            _ => ContentBlock::Unknown(value),
        };
        Ok(ThroughValue(block))
    }
}

/// `CallToolResult` with its blocks decoded [`ThroughValue`].
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
struct ResultThroughValue {
    content: Vec<ThroughValue>,
    #[serde(default)]
    structured_content: Option<serde_json::Value>,
    #[serde(default)]
    is_error: Option<bool>,
    #[serde(rename = "_meta", default)]
    meta: Option<JsonObject>,
}

/// The practical limit: the same members into a plain derived struct, with no dispatch on `type`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
struct PlainResult {
    content: Vec<PlainText>,
    #[serde(default)]
    is_error: Option<bool>,
}

#[derive(Deserialize)]
#[allow(dead_code)]
struct PlainText {
    r#type: String,
    text: String,
}

fn call_tool_result(c: &mut Criterion) {
    let text = |len: usize| -> String { "lorem ipsum dolor sit amet ".chars().cycle().take(len).collect() };
    // Written by hand: `serde_json::json!` sorts the members, which puts `text` before `type`.
    let block = |text: &str, type_last: bool| match type_last {
        false => format!(r#"{{"type":"text","text":"{text}"}}"#),
        true => format!(r#"{{"text":"{text}","type":"text"}}"#),
    };
    let result = |blocks: Vec<String>| format!(r#"{{"content":[{}],"isError":false}}"#, blocks.join(","));
    let small = |type_last: bool| (0..256).map(|i| block(&format!("{i}: {}", text(40)), type_last)).collect();
    let workloads = [
        ("64KiB_text", result(vec![block(&text(64 * 1024), false)])),
        ("64KiB_text_type_last", result(vec![block(&text(64 * 1024), true)])),
        ("256_blocks", result(small(false))),
        ("256_blocks_type_last", result(small(true))),
    ];
    let mut group = c.benchmark_group("call_tool_result");
    for (name, json) in workloads {
        let one_pass: CallToolResult = serde_json::from_str(&json).expect("decodes");
        let through: ResultThroughValue = serde_json::from_str(&json).expect("decodes");
        assert!(one_pass.content.iter().zip(&through.content).all(|(a, b)| *a == b.0), "the same blocks");
        group.throughput(Throughput::Bytes(json.len() as u64));
        group.bench_function(format!("one_pass/{name}"), |b| {
            b.iter(|| serde_json::from_str::<CallToolResult>(black_box(&json)).expect("decodes"));
        });
        group.bench_function(format!("through_value/{name}"), |b| {
            b.iter(|| serde_json::from_str::<ResultThroughValue>(black_box(&json)).expect("decodes"));
        });
        group.bench_function(format!("plain_struct/{name}"), |b| {
            b.iter(|| serde_json::from_str::<PlainResult>(black_box(&json)).expect("decodes"));
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(2));
    targets = decode_correlate, framing, sse, encode, call_tool_result
}
criterion_main!(benches);
