//! What the interop tests share: the client's answers to server requests, its capabilities, and
//! small helpers.
#![allow(dead_code)]

use std::time::{Duration, Instant};

use mcp_sansio::schema::{
    CallToolResult, ClientCapabilities, ContentBlock, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequestParams, ElicitResult, ListChangedCapability, ListRootsResult, Root, SamplingContent,
};
use mcp_smol::ClientApi;
use mcp_smol::{Client, ClientHandler, HandlerFuture};
use serde_json::json;

/// The root the client offers.
pub(crate) const ROOT: &str = "file:///tmp/interop";
/// The model name in sampling answers.
pub(crate) const MODEL: &str = "interop-model";

/// Answers every server request: one root, a canned sampling reply, an accepted elicitation.
pub(crate) struct Handler;

impl ClientHandler for Handler {
    fn list_roots(&self) -> HandlerFuture<ListRootsResult> {
        Box::pin(async { Ok(ListRootsResult::new(vec![Root::new(ROOT).with_name("interop")])) })
    }

    fn create_message(&self, params: CreateMessageRequestParams) -> HandlerFuture<CreateMessageResult> {
        let prompt = params.messages[0].content.blocks()[0].as_text().unwrap_or("").to_owned();
        Box::pin(async move {
            Ok(CreateMessageResult::new(MODEL, SamplingContent::text(format!("reply to {prompt}")))
                .with_stop_reason("endTurn"))
        })
    }

    fn elicit(&self, _params: ElicitRequestParams) -> HandlerFuture<ElicitResult> {
        let content = json!({"name": "Ada", "check": true, "integer": 7});
        Box::pin(async move { Ok(ElicitResult::accept(content.as_object().cloned().unwrap_or_default())) })
    }
}

/// Roots, sampling and elicitation.
pub(crate) fn capabilities() -> ClientCapabilities {
    ClientCapabilities {
        roots: Some(ListChangedCapability { list_changed: Some(true) }),
        sampling: Some(Default::default()),
        elicitation: Some(Default::default()),
        ..Default::default()
    }
}

/// The text blocks of a tool result, joined by newlines.
pub(crate) fn text(result: &CallToolResult) -> String {
    result.content.iter().filter_map(ContentBlock::as_text).collect::<Vec<_>>().join("\n")
}

/// Waits (bounded) until `tools/list` shows `name`: server-everything registers the tools that
/// depend on client capabilities only after `notifications/initialized`.
pub(crate) async fn wait_for_tool(client: &Client, name: &str) {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(10) {
        if client.list_all_tools().await.unwrap().iter().any(|t| t.name == name) {
            return;
        }
        async_io::Timer::after(Duration::from_millis(50)).await;
    }
    panic!("tool {name} never appeared");
}

/// A plain HTTP/1.1 GET that does not follow redirects (a browser's step in the OAuth tests):
/// status line, `Location`, body.
pub(crate) fn get(url: &str) -> (String, Option<String>, String) {
    use std::io::{BufRead, BufReader, Read, Write};
    let rest = url.strip_prefix("http://").unwrap();
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let mut stream = std::net::TcpStream::connect(authority).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    write!(stream, "GET {path} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n\r\n").unwrap();
    let mut reader = BufReader::new(stream);
    let mut status = String::new();
    reader.read_line(&mut status).unwrap();
    let mut location = None;
    let mut line = String::new();
    while reader.read_line(&mut line).unwrap() > 2 {
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("location")
        {
            location = Some(value.trim().to_owned());
        }
        line.clear();
    }
    let mut body = String::new();
    let _ = reader.read_to_string(&mut body);
    (status.trim_end().to_owned(), location, body)
}

/// The decoded value of the query parameter `name` of `url`.
pub(crate) fn query_param(url: &str, name: &str) -> Option<String> {
    let query = url.split_once('?')?.1;
    url::form_urlencoded::parse(query.as_bytes()).find(|(k, _)| k == name).map(|(_, v)| v.into_owned())
}
