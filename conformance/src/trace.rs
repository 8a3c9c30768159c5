//! The trace format: a recorded MCP session as JSON Lines.
//!
//! A trace is one header line, then one line per message in the order they crossed the wire:
//!
//! ```text
//! {"mcpTrace":1,"transport":"stdio","server":{"command":["node","index.js","stdio"],"name":"mcp-servers/everything","version":"2.0.0"},"protocolVersion":"2025-11-25","recordedAt":"2026-11-21T09:30:00Z","recordedWith":"mcp-conformance 0.1.0 record"}
//! {"dir":"client","ms":0,"msg":{"jsonrpc":"2.0","id":1,"method":"initialize","params":{…}}}
//! {"dir":"server","ms":41,"msg":{"jsonrpc":"2.0","id":1,"result":{…}}}
//! {"dir":"server","ms":45,"raw":"Starting server…"}
//! ```
//!
//! - `dir` is who sent the line: `client` or `server`.
//! - `ms` is the time since the recording started, in whole milliseconds.
//! - `msg` is the JSON-RPC message exactly as it was sent (re-encoded on one line only when the
//!   original spanned several); `raw` holds a line that was not JSON, verbatim.
//! - Over HTTP an entry also has `http`: which exchange carried it and its status (see
//!   [`HttpMeta`]). An entry with `http` but neither `msg` nor `raw` records an exchange that
//!   carried no message (a `202 Accepted`, a `DELETE`, a refusal without a body).
//!
//! Field order is fixed, so re-recording a session gives a small diff; lines can be edited by
//! hand (see `docs/conformance.md`).

use std::fmt;
use std::io::{self, BufRead, Write};
use std::path::Path;
use std::time::SystemTime;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

/// The format version written in [`TraceHeader::mcp_trace`].
pub const FORMAT_VERSION: u32 = 1;

/// The transport a trace was recorded on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Transport {
    /// Newline-delimited JSON over a child process's stdin/stdout.
    Stdio,
    /// Streamable HTTP (or the 2024-11-05 HTTP+SSE transport).
    Http,
}

impl fmt::Display for Transport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Transport::Stdio => "stdio",
            Transport::Http => "http",
        })
    }
}

/// Which server was recorded.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerIdentity {
    /// The command line that started a stdio server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<Vec<String>>,
    /// The endpoint of an HTTP server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// `serverInfo.name` from the handshake.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `serverInfo.version` from the handshake.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

/// The first line of a trace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TraceHeader {
    /// The format version, [`FORMAT_VERSION`].
    pub mcp_trace: u32,
    /// The transport.
    pub transport: Transport,
    /// The server.
    pub server: ServerIdentity,
    /// The protocol version the session negotiated, when it got that far.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<String>,
    /// When the recording started (RFC 3339, UTC).
    pub recorded_at: String,
    /// What recorded it, e.g. `mcp-conformance 0.1.0 record --proxy`.
    pub recorded_with: String,
    /// Free text: what the session exercises, or the property a `check` failure violated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Rules (lines of a rules file) that `replay` applies to this trace besides its
    /// `--rules`: a `check` failure trace holds answers the server owed rather than the ones it
    /// gave, and their error messages are not the server's own.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<String>,
}

impl TraceHeader {
    /// A header for a recording starting now.
    pub fn new(transport: Transport, server: ServerIdentity, recorded_with: impl Into<String>) -> Self {
        Self {
            mcp_trace: FORMAT_VERSION,
            transport,
            server,
            protocol_version: None,
            recorded_at: rfc3339_utc(SystemTime::now()),
            recorded_with: recorded_with.into(),
            note: None,
            rules: Vec::new(),
        }
    }
}

/// Who sent a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// The client (host application) sent it to the server.
    Client,
    /// The server sent it to the client.
    Server,
}

impl fmt::Display for Direction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Direction::Client => "client",
            Direction::Server => "server",
        })
    }
}

/// The HTTP exchange an entry travelled in.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HttpMeta {
    /// `POST`, `GET` or `DELETE`.
    pub method: String,
    /// The exchange's number within the recording (1, 2, …): a request and the messages in its
    /// response share it.
    pub exchange: u64,
    /// The response status (server entries).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// The response content type (server entries), without parameters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_type: Option<String>,
    /// The MCP request headers that matter to the protocol (client entries), lowercase names:
    /// `mcp-protocol-version`, `mcp-method`, `mcp-name`, `mcp-param-*`. The session id and
    /// credentials are never recorded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub headers: Vec<(String, String)>,
}

/// The body of an entry: a JSON message or a line that was not JSON.
#[derive(Debug, Clone)]
pub enum Payload {
    /// A JSON value (normally a JSON-RPC message), verbatim.
    Json(Box<RawValue>),
    /// A line that did not parse as JSON, verbatim (lossily decoded when not UTF-8).
    Text(String),
    /// No body (an HTTP exchange without a message).
    None,
}

impl Payload {
    /// The payload for the bytes of one message or line.
    pub fn from_bytes(bytes: &[u8]) -> Self {
        match serde_json::from_slice::<&RawValue>(bytes) {
            Ok(raw) if !raw.get().contains(['\n', '\r']) => Payload::Json(raw.to_owned()),
            Ok(raw) => {
                // Inside a JSON string a line break is always escaped, so a raw one is white
                // space between tokens and can go, leaving everything else as it was.
                let one_line: String = raw.get().chars().filter(|c| !matches!(c, '\n' | '\r')).collect();
                match RawValue::from_string(one_line) {
                    Ok(raw) => Payload::Json(raw),
                    Err(_) => Payload::Text(String::from_utf8_lossy(bytes).into_owned()),
                }
            }
            Err(_) => Payload::Text(String::from_utf8_lossy(bytes).into_owned()),
        }
    }

    /// The message parsed, if the payload is JSON.
    pub fn value(&self) -> Option<Value> {
        match self {
            Payload::Json(raw) => serde_json::from_str(raw.get()).ok(),
            _ => None,
        }
    }

    /// The bytes to put on the wire: the JSON text or the raw line.
    pub fn wire(&self) -> &[u8] {
        match self {
            Payload::Json(raw) => raw.get().as_bytes(),
            Payload::Text(text) => text.as_bytes(),
            Payload::None => b"",
        }
    }
}

impl PartialEq for Payload {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Payload::Json(a), Payload::Json(b)) => a.get() == b.get(),
            (Payload::Text(a), Payload::Text(b)) => a == b,
            (Payload::None, Payload::None) => true,
            _ => false,
        }
    }
}

/// One message line of a trace.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceEntry {
    /// Who sent it.
    pub dir: Direction,
    /// Milliseconds since the recording started.
    pub ms: u64,
    /// The message.
    pub payload: Payload,
    /// The HTTP exchange that carried it (HTTP traces only).
    pub http: Option<HttpMeta>,
}

impl TraceEntry {
    /// A stdio entry.
    pub fn new(dir: Direction, ms: u64, payload: Payload) -> Self {
        Self { dir, ms, payload, http: None }
    }

    /// The message as JSON, if it is JSON.
    pub fn value(&self) -> Option<Value> {
        self.payload.value()
    }

    /// An entry for bytes as they crossed the wire; with `http` and no bytes, an exchange that
    /// carried no message.
    pub(crate) fn recorded(dir: Direction, ms: u64, bytes: &[u8], http: Option<HttpMeta>) -> Self {
        let payload =
            if bytes.is_empty() && http.is_some() { Payload::None } else { Payload::from_bytes(bytes) };
        Self { dir, ms, payload, http }
    }

    /// The entry as one line of JSON (without the newline).
    pub fn to_line(&self) -> String {
        #[derive(Serialize)]
        struct Line<'a> {
            dir: Direction,
            ms: u64,
            #[serde(skip_serializing_if = "Option::is_none")]
            msg: Option<&'a RawValue>,
            #[serde(skip_serializing_if = "Option::is_none")]
            raw: Option<&'a str>,
            #[serde(skip_serializing_if = "Option::is_none")]
            http: Option<&'a HttpMeta>,
        }
        let (msg, raw) = match &self.payload {
            Payload::Json(raw) => (Some(&**raw), None),
            Payload::Text(text) => (None, Some(text.as_str())),
            Payload::None => (None, None),
        };
        let line = Line { dir: self.dir, ms: self.ms, msg, raw, http: self.http.as_ref() };
        serde_json::to_string(&line).expect("trace entries serialize")
    }

    /// Parses one entry line.
    pub fn from_line(line: &str) -> Result<Self, String> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Line {
            dir: Direction,
            #[serde(default)]
            ms: u64,
            #[serde(default)]
            msg: Option<Box<RawValue>>,
            #[serde(default)]
            raw: Option<String>,
            #[serde(default)]
            http: Option<HttpMeta>,
        }
        let line: Line = serde_json::from_str(line).map_err(|e| e.to_string())?;
        let payload = match (line.msg, line.raw) {
            (Some(_), Some(_)) => return Err("an entry has `msg` or `raw`, not both".into()),
            (Some(msg), None) => Payload::from_bytes(msg.get().as_bytes()),
            (None, Some(raw)) => Payload::Text(raw),
            (None, None) if line.http.is_some() => Payload::None,
            (None, None) => return Err("an entry needs `msg`, `raw` or `http`".into()),
        };
        Ok(Self { dir: line.dir, ms: line.ms, payload, http: line.http })
    }
}

/// A whole trace: its header and its entries.
#[derive(Debug, Clone, PartialEq)]
pub struct Trace {
    /// The header line.
    pub header: TraceHeader,
    /// The message lines, in wire order.
    pub entries: Vec<TraceEntry>,
}

/// A trace that could not be read.
#[derive(Debug)]
pub struct TraceError {
    /// The 1-based line number, 0 for an I/O error.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            f.write_str(&self.message)
        } else {
            write!(f, "line {}: {}", self.line, self.message)
        }
    }
}

impl std::error::Error for TraceError {}

impl Trace {
    /// Reads a trace from JSON Lines. Blank lines and lines starting with `#` or `//` are
    /// skipped, so a hand-edited trace can carry comments.
    pub fn parse(text: &str) -> Result<Self, TraceError> {
        let mut lines = text
            .lines()
            .enumerate()
            .map(|(i, line)| (i + 1, line.trim()))
            .filter(|(_, line)| !line.is_empty() && !line.starts_with('#') && !line.starts_with("//"));
        let (n, first) = lines.next().ok_or(TraceError { line: 1, message: "the trace is empty".into() })?;
        let header: TraceHeader = serde_json::from_str(first)
            .map_err(|e| TraceError { line: n, message: format!("not a trace header: {e}") })?;
        if header.mcp_trace != FORMAT_VERSION {
            return Err(TraceError {
                line: n,
                message: format!("trace format {} (this tool reads {FORMAT_VERSION})", header.mcp_trace),
            });
        }
        let entries = lines
            .map(|(n, line)| TraceEntry::from_line(line).map_err(|message| TraceError { line: n, message }))
            .collect::<Result<_, _>>()?;
        Ok(Self { header, entries })
    }

    /// Reads a trace file.
    pub fn read(path: impl AsRef<Path>) -> Result<Self, TraceError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path)
            .map_err(|e| TraceError { line: 0, message: format!("cannot read {}: {e}", path.display()) })?;
        Self::parse(&text)
    }

    /// The trace as JSON Lines.
    pub fn to_jsonl(&self) -> String {
        let mut out = serde_json::to_string(&self.header).expect("headers serialize");
        out.push('\n');
        for entry in &self.entries {
            out.push_str(&entry.to_line());
            out.push('\n');
        }
        out
    }

    /// Writes the trace to a file.
    pub fn write(&self, path: impl AsRef<Path>) -> io::Result<()> {
        std::fs::write(path, self.to_jsonl())
    }

    /// The entries sent by `dir`.
    pub fn sent_by(&self, dir: Direction) -> impl Iterator<Item = &TraceEntry> {
        self.entries.iter().filter(move |e| e.dir == dir)
    }
}

/// Writes a trace line by line as a session goes, flushing each line, so that a recording cut
/// short (the host killed the proxy) keeps everything up to that point.
///
/// The header comes first in the file but is only complete after the handshake (server name
/// and version, protocol version), so entries are held back until the handshake result (or 16
/// entries, or [`finish`](Self::finish)) and written after the header.
pub struct TraceWriter {
    out: Box<dyn Write + Send>,
    started: std::time::Instant,
    header: TraceHeader,
    held: Option<Vec<TraceEntry>>,
}

impl TraceWriter {
    /// A writer to `out`.
    pub fn new(out: impl Write + Send + 'static, header: TraceHeader) -> Self {
        Self { out: Box::new(out), started: std::time::Instant::now(), header, held: Some(Vec::new()) }
    }

    /// A writer to a new file at `path`.
    pub fn create(path: impl AsRef<Path>, header: TraceHeader) -> io::Result<Self> {
        let file = std::fs::File::create(path)?;
        Ok(Self::new(io::BufWriter::new(file), header))
    }

    /// Milliseconds since the writer was created.
    pub fn elapsed_ms(&self) -> u64 {
        u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// Records one message (or, with `http` and no bytes, an exchange without one).
    pub fn record(&mut self, dir: Direction, bytes: &[u8], http: Option<HttpMeta>) -> io::Result<()> {
        let entry = TraceEntry::recorded(dir, self.elapsed_ms(), bytes, http);
        let Some(held) = &mut self.held else { return self.write_line(&entry) };
        let handshake = match (dir, entry.value()) {
            (Direction::Server, Some(message)) => {
                learn_from_handshake(&mut self.header, &message);
                self.header.protocol_version.is_some()
            }
            _ => false,
        };
        held.push(entry);
        if handshake || held.len() >= 16 { self.release() } else { Ok(()) }
    }

    /// Writes everything held back (the header first), and flushes. Entries recorded later
    /// are written as they come.
    pub fn finish(&mut self) -> io::Result<()> {
        self.release()?;
        self.out.flush()
    }

    fn release(&mut self) -> io::Result<()> {
        let Some(held) = self.held.take() else { return Ok(()) };
        let line = serde_json::to_string(&self.header).expect("headers serialize");
        self.out.write_all(line.as_bytes())?;
        self.out.write_all(b"\n")?;
        for entry in &held {
            self.write_line(entry)?;
        }
        self.out.flush()
    }

    fn write_line(&mut self, entry: &TraceEntry) -> io::Result<()> {
        self.out.write_all(entry.to_line().as_bytes())?;
        self.out.write_all(b"\n")?;
        self.out.flush()
    }
}

/// Sets the header's protocol version and server name/version from an `initialize` or
/// `server/discover` result.
pub fn learn_from_handshake(header: &mut TraceHeader, message: &Value) {
    let Some(result) = message.get("result") else { return };
    let version = result
        .get("protocolVersion")
        .and_then(Value::as_str)
        // A discover result lists versions; the client takes the newest (dates sort as text).
        .or_else(|| result.get("supportedVersions")?.as_array()?.iter().filter_map(Value::as_str).max());
    if let Some(version) = version {
        header.protocol_version.get_or_insert_with(|| version.to_owned());
    }
    let info = result
        .get("serverInfo")
        .or_else(|| result.get("_meta").and_then(|meta| meta.get("io.modelcontextprotocol/serverInfo")));
    if let Some(info) = info {
        if let Some(name) = info.get("name").and_then(Value::as_str) {
            header.server.name.get_or_insert_with(|| name.to_owned());
        }
        if let Some(version) = info.get("version").and_then(Value::as_str) {
            header.server.version.get_or_insert_with(|| version.to_owned());
        }
    }
}

/// A buffered trace writer: entries are held in memory and the header is written first, with
/// everything learned during the session. Use for recordings that end cleanly.
#[derive(Debug)]
pub struct TraceBuffer {
    trace: Trace,
    started: std::time::Instant,
}

impl TraceBuffer {
    /// An empty recording starting now.
    pub fn new(header: TraceHeader) -> Self {
        Self { trace: Trace { header, entries: Vec::new() }, started: std::time::Instant::now() }
    }

    /// Records one message now.
    pub fn record(&mut self, dir: Direction, bytes: &[u8], http: Option<HttpMeta>) {
        let ms = u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let entry = TraceEntry::recorded(dir, ms, bytes, http);
        if dir == Direction::Server
            && let Some(message) = entry.value()
        {
            learn_from_handshake(&mut self.trace.header, &message);
        }
        self.trace.entries.push(entry);
    }

    /// The header, to fill in details.
    pub fn header_mut(&mut self) -> &mut TraceHeader {
        &mut self.trace.header
    }

    /// The trace so far.
    pub fn trace(&self) -> &Trace {
        &self.trace
    }

    /// The finished trace.
    pub fn into_trace(self) -> Trace {
        self.trace
    }
}

/// `time` as an RFC 3339 UTC timestamp with second precision.
pub fn rfc3339_utc(time: SystemTime) -> String {
    let secs = time.duration_since(SystemTime::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let days = i64::try_from(secs / 86_400).unwrap_or(0);
    let rem = secs % 86_400;
    let (y, m, d) = civil_from_days(days);
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z", rem / 3600, rem % 3600 / 60, rem % 60)
}

/// Days since 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = u32::try_from(doy - (153 * mp + 2) / 5 + 1).unwrap_or(1);
    let m = u32::try_from(if mp < 10 { mp + 3 } else { mp - 9 }).unwrap_or(1);
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// Reads a trace from any reader (for `-` as standard input).
pub fn read_from(reader: impl BufRead) -> Result<Trace, TraceError> {
    let mut text = String::new();
    for line in reader.lines() {
        let line = line.map_err(|e| TraceError { line: 0, message: e.to_string() })?;
        text.push_str(&line);
        text.push('\n');
    }
    Trace::parse(&text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trace_survives_a_round_trip_through_jsonl() {
        let mut header = TraceHeader::new(
            Transport::Stdio,
            ServerIdentity { command: Some(vec!["srv".into()]), ..Default::default() },
            "test",
        );
        header.recorded_at = "2026-11-21T09:30:00Z".into();
        let trace = Trace {
            header,
            entries: vec![
                TraceEntry::new(
                    Direction::Client,
                    0,
                    Payload::from_bytes(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#),
                ),
                TraceEntry::new(Direction::Server, 3, Payload::from_bytes(b"not json \xff")),
                TraceEntry {
                    dir: Direction::Server,
                    ms: 4,
                    payload: Payload::None,
                    http: Some(HttpMeta {
                        method: "POST".into(),
                        exchange: 2,
                        status: Some(202),
                        ..Default::default()
                    }),
                },
            ],
        };
        let text = trace.to_jsonl();
        assert_eq!(Trace::parse(&text).unwrap(), trace);
        assert!(
            text.lines().nth(1).unwrap().ends_with(r#""msg":{"jsonrpc":"2.0","id":1,"method":"ping"}}"#),
            "{text}"
        );
        assert!(text.contains(r#""raw":"not json �""#), "{text}");
    }

    #[test]
    fn multi_line_messages_are_stored_on_one_line_and_comments_are_skipped() {
        let payload = Payload::from_bytes(b"{\r\n\"jsonrpc\": \"2.0\",\n\"id\": 7\n}");
        assert_eq!(payload.wire(), br#"{"jsonrpc": "2.0","id": 7}"#);
        let text = "# a comment\n{\"mcpTrace\":1,\"transport\":\"http\",\"server\":{\"url\":\"http://x/mcp\"},\"recordedAt\":\"x\",\"recordedWith\":\"hand\"}\n\n// another\n{\"dir\":\"server\",\"ms\":1,\"raw\":\"x\"}\n";
        let trace = Trace::parse(text).unwrap();
        assert_eq!(trace.entries.len(), 1);
        assert_eq!(trace.header.transport, Transport::Http);
    }

    #[test]
    fn malformed_traces_name_the_line() {
        let header = r#"{"mcpTrace":1,"transport":"stdio","server":{},"recordedAt":"x","recordedWith":"y"}"#;
        let err = Trace::parse(&format!("{header}\n{{\"dir\":\"sideways\",\"msg\":1}}\n")).unwrap_err();
        assert_eq!(err.line, 2, "{err}");
        let err = Trace::parse(&format!("{header}\n{{\"dir\":\"client\"}}\n")).unwrap_err();
        assert!(err.to_string().contains("needs `msg`"), "{err}");
        let err = Trace::parse(
            r#"{"mcpTrace":2,"transport":"stdio","server":{},"recordedAt":"x","recordedWith":"y"}"#,
        )
        .unwrap_err();
        assert!(err.to_string().contains("format 2"), "{err}");
    }

    #[test]
    fn the_handshake_fills_in_the_header() {
        let mut header = TraceHeader::new(Transport::Stdio, ServerIdentity::default(), "t");
        let init = serde_json::json!({"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","serverInfo":{"name":"s","version":"9"},"capabilities":{}}});
        learn_from_handshake(&mut header, &init);
        assert_eq!(header.protocol_version.as_deref(), Some("2025-06-18"));
        assert_eq!((header.server.name.as_deref(), header.server.version.as_deref()), (Some("s"), Some("9")));
    }

    #[test]
    fn timestamps_are_rfc3339() {
        let t = SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_795_253_400);
        assert_eq!(rfc3339_utc(t), "2026-11-21T09:30:00Z");
        assert_eq!(rfc3339_utc(SystemTime::UNIX_EPOCH), "1970-01-01T00:00:00Z");
    }
}
