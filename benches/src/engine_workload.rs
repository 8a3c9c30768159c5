//! The `decode_correlate` workload of the engine bench, shared with `engine-profile` (the same
//! work run a fixed number of times, for profilers): `tools/call` response lines of a given
//! size, a ready connection with [`BATCH`] requests pending, and the practical parse limit.

use std::time::Instant;

use mcp_sansio::schema::Implementation;
use mcp_sansio::{ClientConfig, ClientConnection, ProtocolVersion, RequestOptions};
use serde::Deserialize;
use serde_json::value::RawValue;

/// Responses per batch.
pub const BATCH: usize = 64;

/// The practical parse limit: a JSON-RPC response envelope with the result left unparsed.
#[derive(Deserialize)]
pub struct Envelope<'a> {
    /// `"2.0"`.
    pub jsonrpc: &'a str,
    /// The request's id.
    pub id: u64,
    /// The raw result.
    #[serde(borrow)]
    pub result: Option<&'a RawValue>,
}

/// A `tools/call` response line of about `size` bytes for request `id`.
pub fn response(id: usize, size: usize) -> String {
    let head = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":""#);
    let tail = r#""}],"isError":false}}"#;
    let fill = size.saturating_sub(head.len() + tail.len() + 1).max(1);
    let text: String = "lorem ipsum dolor sit amet ".chars().cycle().take(fill).collect();
    format!("{head}{text}{tail}\n")
}

/// [`BATCH`] response lines of about `size` bytes, for ids 1 to [`BATCH`].
pub fn responses(size: usize) -> Vec<u8> {
    (1..=BATCH).flat_map(|id| response(id, size).into_bytes()).collect()
}

/// A connection after the `initialize` handshake, with its transmits drained.
pub fn ready() -> (ClientConnection, Instant) {
    let now = Instant::now();
    let config = ClientConfig::new(Implementation::new("bench", "1"))
        .with_versions(&[ProtocolVersion::V2025_11_25])
        .with_max_message_size(1 << 20);
    let mut conn = ClientConnection::new(config, now);
    while conn.poll_transmit().is_some() {}
    let init = r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"bench","version":"1"}}}"#;
    conn.feed(now, format!("{init}\n").as_bytes());
    while conn.poll_transmit().is_some() {}
    while conn.poll_event().is_some() {}
    (conn, now)
}

/// A ready connection with [`BATCH`] `tools/call` requests pending (ids 1 to [`BATCH`]).
pub fn with_pending() -> (ClientConnection, Instant) {
    let (mut conn, now) = ready();
    let params = br#"{"name":"echo","arguments":{"message":"hi"}}"#;
    for _ in 0..BATCH {
        conn.send_request(now, "tools/call", Some(params), RequestOptions::default()).expect("ready");
    }
    while conn.poll_transmit().is_some() {}
    (conn, now)
}
