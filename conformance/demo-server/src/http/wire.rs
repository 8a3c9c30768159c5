//! A small HTTP/1.1 server-side codec: reading requests (head limit, `Content-Length` or chunked
//! bodies, `Expect: 100-continue`) and writing responses (fixed bodies, or chunked event
//! streams).

use std::io::{self, BufRead, Read, Write};

use serde_json::Value;

/// The largest request head (request line and headers, with their line ends) accepted: 64 KiB.
pub(crate) const MAX_HEAD_BYTES: usize = 64 * 1024;
/// The largest request body accepted: 16 MiB.
pub(crate) const MAX_BODY_BYTES: usize = 16 * 1024 * 1024;
/// The longest chunk-size line of a chunked body.
const MAX_CHUNK_LINE: usize = 1024;

/// One request, with its body read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Request {
    /// The method (`GET`, `POST`, ...), case-sensitive.
    pub(crate) method: String,
    /// The request target as sent (origin form: path and query).
    pub(crate) target: String,
    /// `HTTP/1.0` (no keep-alive by default, no chunked responses).
    pub(crate) http10: bool,
    /// The header fields: names lower-cased, values with surrounding white space trimmed.
    pub(crate) headers: Vec<(String, Vec<u8>)>,
    /// The body (decoded when it was chunked).
    pub(crate) body: Vec<u8>,
}

impl Request {
    /// Every value of the header `name` (case-insensitive), in order.
    pub(crate) fn all(&self, name: &str) -> impl Iterator<Item = &[u8]> {
        self.headers
            .iter()
            .filter(move |(known, _)| known.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_slice())
    }

    /// The first value of the header `name`, if any.
    pub(crate) fn header(&self, name: &str) -> Option<&[u8]> {
        self.all(name).next()
    }

    /// The first value of the header `name` as text (lossy).
    pub(crate) fn header_text(&self, name: &str) -> Option<String> {
        self.header(name).map(|value| String::from_utf8_lossy(value).into_owned())
    }

    /// Whether the comma-separated list in header(s) `name` holds `token` (case-insensitive).
    pub(crate) fn has_token(&self, name: &str, token: &str) -> bool {
        self.all(name).any(|value| {
            value.split(|byte| *byte == b',').any(|item| {
                let item = item.trim_ascii();
                let item = item.split(|byte| *byte == b';').next().unwrap_or(item).trim_ascii();
                item.eq_ignore_ascii_case(token.as_bytes())
            })
        })
    }

    /// The path of the target (without the query).
    pub(crate) fn path(&self) -> &str {
        self.target.split(['?', '#']).next().unwrap_or_default()
    }

    /// Whether the connection stays open after the response.
    pub(crate) fn keep_alive(&self) -> bool {
        if self.http10 {
            self.has_token("connection", "keep-alive")
        } else {
            !self.has_token("connection", "close")
        }
    }
}

/// Why no request was read.
#[derive(Debug)]
pub(crate) enum ReadError {
    /// The peer closed the connection between requests.
    Closed,
    /// Reading failed (or the peer closed in the middle of a request).
    Io(io::Error),
    /// A bad request: answer with this status and message, then close the connection.
    Reject(u16, String),
}

impl From<io::Error> for ReadError {
    fn from(error: io::Error) -> Self {
        Self::Io(error)
    }
}

fn reject(status: u16, message: impl Into<String>) -> ReadError {
    ReadError::Reject(status, message.into())
}

/// RFC 9110 `tchar`.
fn is_token_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&byte)
}

/// Reads one line (up to `\n`) of at most `*budget` bytes, charging it to the budget; the line
/// end (`\r\n` or `\n`) is removed. `Ok(None)` at EOF before any byte.
fn read_line(
    reader: &mut impl BufRead,
    budget: &mut usize,
    too_long: impl Fn() -> ReadError,
) -> Result<Option<Vec<u8>>, ReadError> {
    let mut line = Vec::new();
    let limit = u64::try_from(*budget).unwrap_or(u64::MAX).saturating_add(1);
    let read = reader.by_ref().take(limit).read_until(b'\n', &mut line)?;
    if read == 0 {
        return Ok(None);
    }
    if read > *budget {
        return Err(too_long());
    }
    *budget -= read;
    if line.pop() != Some(b'\n') {
        return Err(ReadError::Io(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "connection closed mid-line",
        )));
    }
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    Ok(Some(line))
}

/// Reads one request. `interim` receives `100 Continue` when the client waits for it.
pub(crate) fn read_request(
    reader: &mut impl BufRead,
    interim: &mut impl Write,
) -> Result<Request, ReadError> {
    let mut budget = MAX_HEAD_BYTES;
    let head_too_large = || reject(431, "Request Header Fields Too Large: the request head exceeds 64 KiB");
    // RFC 9112 §2.2: empty lines before the request line are ignored.
    let line = loop {
        match read_line(reader, &mut budget, head_too_large)? {
            None => return Err(ReadError::Closed),
            Some(line) if line.is_empty() => {}
            Some(line) => break line,
        }
    };
    let (method, target, http10) = parse_request_line(&line)?;
    let mut headers = Vec::new();
    loop {
        let Some(line) = read_line(reader, &mut budget, head_too_large)? else {
            return Err(ReadError::Io(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "connection closed in the head",
            )));
        };
        if line.is_empty() {
            break;
        }
        headers.push(parse_header(&line)?);
    }
    let mut request = Request { method, target, http10, headers, body: Vec::new() };
    request.body = read_body(reader, interim, &request)?;
    Ok(request)
}

/// `METHOD SP target SP HTTP/1.x`.
fn parse_request_line(line: &[u8]) -> Result<(String, String, bool), ReadError> {
    let bad = || reject(400, "Bad Request: malformed request line");
    let text = std::str::from_utf8(line).map_err(|_| bad())?;
    let mut parts = text.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(bad());
    };
    if method.is_empty() || !method.bytes().all(is_token_byte) {
        return Err(bad());
    }
    if target.is_empty() || !target.bytes().all(|byte| byte.is_ascii_graphic()) {
        return Err(bad());
    }
    let http10 = match version {
        "HTTP/1.1" => false,
        "HTTP/1.0" => true,
        other if other.starts_with("HTTP/") && other.len() == 8 => {
            return Err(reject(505, format!("HTTP Version Not Supported: {other}")));
        }
        _ => return Err(bad()),
    };
    Ok((method.to_owned(), target.to_owned(), http10))
}

/// `name: value`.
fn parse_header(line: &[u8]) -> Result<(String, Vec<u8>), ReadError> {
    let bad = || reject(400, "Bad Request: malformed header field");
    if line.first().is_some_and(|byte| *byte == b' ' || *byte == b'\t') {
        return Err(reject(400, "Bad Request: obsolete header line folding"));
    }
    let colon = line.iter().position(|byte| *byte == b':').ok_or_else(bad)?;
    let (name, value) = (&line[..colon], &line[colon + 1..]);
    if name.is_empty() || !name.iter().copied().all(is_token_byte) {
        return Err(bad());
    }
    let value = value.trim_ascii();
    if value.iter().any(|byte| matches!(byte, b'\r' | b'\n' | 0)) {
        return Err(bad());
    }
    let name = String::from_utf8_lossy(name).to_ascii_lowercase();
    Ok((name, value.to_vec()))
}

/// Reads the body announced by the head.
fn read_body(
    reader: &mut impl BufRead,
    interim: &mut impl Write,
    request: &Request,
) -> Result<Vec<u8>, ReadError> {
    let chunked = match request.header("transfer-encoding") {
        None => false,
        Some(_) if request.header("content-length").is_some() => {
            return Err(reject(400, "Bad Request: both Transfer-Encoding and Content-Length"));
        }
        Some(_) => {
            let codings: Vec<&[u8]> = request
                .all("transfer-encoding")
                .flat_map(|value| value.split(|b| *b == b','))
                .map(<[u8]>::trim_ascii)
                .collect();
            if codings.len() != 1 || !codings[0].eq_ignore_ascii_case(b"chunked") {
                return Err(reject(501, "Not Implemented: only Transfer-Encoding: chunked is supported"));
            }
            true
        }
    };
    let length = if chunked {
        None
    } else {
        let mut lengths = request.all("content-length");
        match lengths.next() {
            None => Some(0),
            Some(first) => {
                if lengths.any(|other| other != first) {
                    return Err(reject(400, "Bad Request: conflicting Content-Length headers"));
                }
                let text = std::str::from_utf8(first)
                    .ok()
                    .filter(|text| !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()));
                let length = text
                    .and_then(|text| text.parse::<u64>().ok())
                    .ok_or_else(|| reject(400, "Bad Request: invalid Content-Length"))?;
                Some(length)
            }
        }
    };
    if length.is_some_and(|length| length > MAX_BODY_BYTES as u64) {
        return Err(reject(413, "Content Too Large: the body exceeds 16 MiB"));
    }
    if let Some(expect) = request.header("expect") {
        if !expect.eq_ignore_ascii_case(b"100-continue") {
            return Err(reject(417, "Expectation Failed: only 100-continue is supported"));
        }
        if !request.http10 && length != Some(0) {
            interim.write_all(b"HTTP/1.1 100 Continue\r\n\r\n")?;
            interim.flush()?;
        }
    }
    match length {
        Some(length) => {
            let mut body = vec![0; usize::try_from(length).unwrap_or(MAX_BODY_BYTES)];
            reader.read_exact(&mut body)?;
            Ok(body)
        }
        None => read_chunked(reader),
    }
}

/// A `Transfer-Encoding: chunked` body (extensions ignored, trailers read and dropped).
fn read_chunked(reader: &mut impl BufRead) -> Result<Vec<u8>, ReadError> {
    let mut body = Vec::new();
    let eof =
        || ReadError::Io(io::Error::new(io::ErrorKind::UnexpectedEof, "connection closed in a chunked body"));
    loop {
        let mut budget = MAX_CHUNK_LINE;
        let line = read_line(reader, &mut budget, || reject(400, "Bad Request: chunk-size line too long"))?
            .ok_or_else(eof)?;
        let size = line.split(|byte| *byte == b';').next().unwrap_or_default().trim_ascii();
        let size = std::str::from_utf8(size)
            .ok()
            .filter(|size| !size.is_empty() && size.len() <= 8 && size.bytes().all(|b| b.is_ascii_hexdigit()))
            .and_then(|size| usize::from_str_radix(size, 16).ok())
            .ok_or_else(|| reject(400, "Bad Request: invalid chunk size"))?;
        if size == 0 {
            let mut budget = MAX_HEAD_BYTES;
            loop {
                let trailer = read_line(reader, &mut budget, || {
                    reject(431, "Request Header Fields Too Large: trailers exceed 64 KiB")
                })?
                .ok_or_else(eof)?;
                if trailer.is_empty() {
                    return Ok(body);
                }
            }
        }
        if body.len().saturating_add(size) > MAX_BODY_BYTES {
            return Err(reject(413, "Content Too Large: the body exceeds 16 MiB"));
        }
        let start = body.len();
        body.resize(start + size, 0);
        reader.read_exact(&mut body[start..])?;
        let mut budget = 2;
        let end =
            read_line(reader, &mut budget, || reject(400, "Bad Request: chunk data longer than its size"))?
                .ok_or_else(eof)?;
        if !end.is_empty() {
            return Err(reject(400, "Bad Request: chunk data longer than its size"));
        }
    }
}

/// The reason phrase of the statuses this server sends.
pub(crate) fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        201 => "Created",
        202 => "Accepted",
        302 => "Found",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        406 => "Not Acceptable",
        409 => "Conflict",
        413 => "Content Too Large",
        417 => "Expectation Failed",
        431 => "Request Header Fields Too Large",
        501 => "Not Implemented",
        503 => "Service Unavailable",
        505 => "HTTP Version Not Supported",
        _ => "Internal Server Error",
    }
}

/// The status line and headers of a response (`headers` plus `Connection: close` when `close`).
fn head(status: u16, headers: &[(&str, &str)], close: bool) -> Vec<u8> {
    let mut head = format!("HTTP/1.1 {status} {}\r\n", reason(status));
    for (name, value) in headers {
        head.push_str(name);
        head.push_str(": ");
        head.push_str(value);
        head.push_str("\r\n");
    }
    if close {
        head.push_str("Connection: close\r\n");
    }
    head.into_bytes()
}

/// Writes a complete response with a `Content-Length` body (`content_type` omitted when `None`).
pub(crate) fn write_response(
    out: &mut impl Write,
    status: u16,
    headers: &[(&str, &str)],
    content_type: Option<&str>,
    body: &[u8],
    close: bool,
) -> io::Result<()> {
    let mut bytes = head(status, headers, close);
    if let Some(content_type) = content_type {
        bytes.extend_from_slice(format!("Content-Type: {content_type}\r\n").as_bytes());
    }
    bytes.extend_from_slice(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes());
    bytes.extend_from_slice(body);
    out.write_all(&bytes)?;
    out.flush()
}

/// Writes a JSON response.
pub(crate) fn write_json(
    out: &mut impl Write,
    status: u16,
    headers: &[(&str, &str)],
    body: &Value,
    close: bool,
) -> io::Result<()> {
    write_response(out, status, headers, Some("application/json"), body.to_string().as_bytes(), close)
}

/// An event stream being written: chunked (HTTP/1.1), or raw until the connection closes
/// (HTTP/1.0).
#[derive(Debug, Clone, Copy)]
pub(crate) struct EventStream {
    chunked: bool,
}

impl EventStream {
    /// Writes the head of a `200 text/event-stream` response.
    pub(crate) fn start(out: &mut impl Write, http10: bool, close: bool) -> io::Result<Self> {
        let mut headers = vec![("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache")];
        if !http10 {
            headers.push(("Transfer-Encoding", "chunked"));
        }
        let mut bytes = head(200, &headers, close || http10);
        bytes.extend_from_slice(b"\r\n");
        out.write_all(&bytes)?;
        out.flush()?;
        Ok(Self { chunked: !http10 })
    }

    /// Writes raw stream bytes (one chunk).
    fn write(self, out: &mut impl Write, data: &[u8]) -> io::Result<()> {
        if self.chunked {
            let mut chunk = format!("{:x}\r\n", data.len()).into_bytes();
            chunk.extend_from_slice(data);
            chunk.extend_from_slice(b"\r\n");
            out.write_all(&chunk)?;
        } else {
            out.write_all(data)?;
        }
        out.flush()
    }

    /// Writes one SSE `message` event carrying `message` (no `id:`: not resumable).
    pub(crate) fn event(self, out: &mut impl Write, message: &Value) -> io::Result<()> {
        self.write(out, format!("event: message\ndata: {message}\n\n").as_bytes())
    }

    /// Writes an SSE comment, as a keep-alive.
    pub(crate) fn comment(self, out: &mut impl Write) -> io::Result<()> {
        self.write(out, b":\n\n")
    }

    /// Ends the stream (the last chunk); the connection may then carry another request.
    pub(crate) fn finish(self, out: &mut impl Write) -> io::Result<()> {
        if self.chunked {
            out.write_all(b"0\r\n\r\n")?;
        }
        out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(bytes: &[u8]) -> (Result<Request, ReadError>, Vec<u8>) {
        let mut interim = Vec::new();
        let mut reader = bytes;
        (read_request(&mut reader, &mut interim), interim)
    }

    fn status(result: Result<Request, ReadError>) -> u16 {
        match result {
            Err(ReadError::Reject(status, _)) => status,
            other => panic!("not rejected: {other:?}"),
        }
    }

    #[test]
    fn reads_a_request_with_a_body() {
        let (request, interim) = read(b"\r\nPOST /mcp?x=1 HTTP/1.1\r\nHost: a\r\nMcp-Method:  tools/list \r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n{}");
        let request = request.expect("request");
        assert_eq!((request.method.as_str(), request.path(), request.http10), ("POST", "/mcp", false));
        assert_eq!(request.header("MCP-METHOD"), Some(&b"tools/list"[..]));
        assert_eq!(request.body, b"{}");
        assert!(request.keep_alive());
        assert_eq!(interim, b"HTTP/1.1 100 Continue\r\n\r\n");
    }

    #[test]
    fn reads_chunked_bodies_and_connection_tokens() {
        let (request, _) = read(b"POST /mcp HTTP/1.1\nTransfer-Encoding: chunked\nConnection: keep-alive, Close\n\n3;x=y\r\nabc\r\n1\r\nd\r\n0\r\nTrailer: 1\r\n\r\n");
        let request = request.expect("request");
        assert_eq!(request.body, b"abcd");
        assert!(!request.keep_alive());
        let (request, _) = read(b"GET /mcp HTTP/1.0\r\n\r\n");
        assert!(!request.expect("request").keep_alive());
        assert!(matches!(read(b"").0, Err(ReadError::Closed)));
    }

    #[test]
    fn rejects_bad_requests() {
        for bad in [
            &b"garbage\r\n\r\n"[..],
            b"GET  /mcp HTTP/1.1\r\n\r\n",
            b"GET /mcp HTTP/1.1\r\nno colon\r\n\r\n",
            b"GET /mcp HTTP/1.1\r\nA: b\r\n folded\r\n\r\n",
            b"GET /mcp HTTP/1.1\r\nBad Name: b\r\n\r\n",
            b"POST /mcp HTTP/1.1\r\nContent-Length: 1x\r\n\r\n",
            b"POST /mcp HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
            b"POST /mcp HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 2\r\n\r\n",
            b"POST /mcp HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
            b"POST /mcp HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nab\r\n0\r\n\r\n",
        ] {
            assert_eq!(status(read(bad).0), 400, "{}", String::from_utf8_lossy(bad));
        }
        assert_eq!(status(read(b"GET /mcp HTTP/2.0\r\n\r\n").0), 505);
        assert_eq!(status(read(b"POST /mcp HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n").0), 501);
        assert_eq!(status(read(b"POST /mcp HTTP/1.1\r\nExpect: magic\r\n\r\n").0), 417);
        assert_eq!(status(read(b"POST /mcp HTTP/1.1\r\nContent-Length: 16777217\r\n\r\n").0), 413);
        let mut huge = b"GET /mcp HTTP/1.1\r\nX: ".to_vec();
        huge.resize(MAX_HEAD_BYTES + 10, b'a');
        huge.extend_from_slice(b"\r\n\r\n");
        assert_eq!(status(read(&huge).0), 431);
        let chunked = b"POST /mcp HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1000001\r\n";
        assert_eq!(status(read(chunked).0), 413);
    }

    #[test]
    fn writes_responses_and_event_streams() {
        let mut out = Vec::new();
        write_json(&mut out, 400, &[("Mcp-Session-Id", "s")], &serde_json::json!({"a": 1}), true)
            .expect("write");
        let text = String::from_utf8(out).expect("utf-8");
        assert_eq!(
            text,
            "HTTP/1.1 400 Bad Request\r\nMcp-Session-Id: s\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: 7\r\n\r\n{\"a\":1}"
        );
        let mut out = Vec::new();
        let stream = EventStream::start(&mut out, false, false).expect("start");
        stream.event(&mut out, &serde_json::json!(1)).expect("event");
        stream.comment(&mut out).expect("comment");
        stream.finish(&mut out).expect("finish");
        let text = String::from_utf8(out).expect("utf-8");
        assert!(
            text.ends_with("\r\n\r\n18\r\nevent: message\ndata: 1\n\n\r\n3\r\n:\n\n\r\n0\r\n\r\n"),
            "{text}"
        );
        assert!(text.contains("Transfer-Encoding: chunked\r\n"));
    }
}
