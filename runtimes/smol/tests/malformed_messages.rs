//! The smol client against stdio servers (small `sh` scripts, real child processes) that answer
//! a call with a message it cannot accept: the call fails at once with a typed error, long
//! before its timeout, and the connection goes on.

mod common;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{builder, process_gone, sh_server as server, wait_until, xs};
use mcp_smol::mcp_sansio::schema::CallToolRequestParams;
use mcp_smol::mcp_sansio::{InvalidMessage, ProtocolViolation, RequestError, RequestId};
use mcp_smol::{CallOptions, Client, ClientApi, ClientBuilder, Error, ServerCommand};

/// The timeout of the calls that must fail: far longer than any test may take.
const LONG: Duration = Duration::from_secs(30);

/// How soon "at once" is, on a busy 2-core machine running a debug build.
const PROMPT: Duration = Duration::from_secs(3);

/// Calls the misbehaving tool with a long timeout; returns the outcome and how long it took.
async fn call_bad(
    client: &Client,
) -> (Result<mcp_smol::mcp_sansio::schema::CallToolResult, Error>, Duration) {
    let start = Instant::now();
    let params = CallToolRequestParams::new("bad");
    let result = client.call_tool_with(&params, CallOptions::default().timeout(LONG)).await;
    (result, start.elapsed())
}

/// The connection still works: `echo` and `ping` are answered.
async fn still_answers(client: &Client) {
    let result = client.call_tool_with(&CallToolRequestParams::new("echo"), CallOptions::default()).await;
    assert_eq!(result.expect("echo").content[0].as_text(), Some("echo"));
    client.ping().await.expect("ping");
}

async fn connect(builder: ClientBuilder, command: &ServerCommand) -> (Client, u32) {
    let client = builder.spawn_stdio(command).await.expect("handshake");
    let pid = client.server_pid().expect("a pid");
    (client, pid)
}

async fn close(client: Client, pid: u32) {
    client.close().await;
    assert!(process_gone(pid, false), "server {pid} not reaped");
}

#[test]
fn an_answer_with_result_and_error_fails_its_call_at_once() {
    let answer = r#"printf '%s\n' "{\"jsonrpc\":\"2.0\",\"id\":$id,\"result\":{\"content\":[]},\"error\":{\"code\":-32603,\"message\":\"both\"}}""#;
    smol::block_on(async {
        let (client, pid) = connect(builder(), &server("", answer)).await;
        let (result, took) = call_bad(&client).await;
        match result {
            Err(Error::Request(RequestError::InvalidResponse(why))) => {
                assert!(why.contains("both result and error"), "{why}")
            }
            other => panic!("expected InvalidResponse, got {other:?}"),
        }
        assert!(took < PROMPT, "the failure took {took:?}");
        assert_eq!(client.stats().invalid_messages, 1);
        still_answers(&client).await;
        close(client, pid).await;
    });
}

#[test]
fn an_error_that_is_not_an_error_object_fails_its_call_at_once() {
    let answer = r#"printf '%s\n' "{\"jsonrpc\":\"2.0\",\"id\":$id,\"error\":\"it broke\"}""#;
    smol::block_on(async {
        let (client, pid) = connect(builder(), &server("", answer)).await;
        let (result, took) = call_bad(&client).await;
        match result {
            Err(error @ Error::Request(RequestError::InvalidResponse(_))) => {
                assert!(error.server_error().is_none(), "not the server's own error: {error}");
                assert!(error.to_string().contains("error object"), "{error}");
            }
            other => panic!("expected InvalidResponse, got {other:?}"),
        }
        assert!(took < PROMPT, "the failure took {took:?}");
        still_answers(&client).await;
        close(client, pid).await;
    });
}

#[test]
fn an_oversized_answer_fails_its_call_as_soon_as_it_passes_the_limit() {
    // The answer's id is in its first bytes; the line then goes on (2 MiB) and stays unfinished
    // for 20 s: the call must not wait for its end.
    let answer = format!(
        r#"printf '%s' "{{\"jsonrpc\":\"2.0\",\"id\":$id,\"result\":{{\"content\":[{{\"type\":\"text\",\"text\":\""; {}; sleep 20; printf '"}}]}}}}\n'"#,
        xs(2 << 20)
    );
    let limit = 64 * 1024;
    smol::block_on(async {
        let builder = builder().configure(|c| c.with_max_message_size(limit));
        let (client, pid) = connect(builder, &server("", &answer)).await;
        let (result, took) = call_bad(&client).await;
        match result {
            Err(Error::Request(RequestError::MessageTooLarge { limit: l })) => assert_eq!(l, limit),
            other => panic!("expected MessageTooLarge, got {other:?}"),
        }
        assert!(took < PROMPT, "the failure took {took:?}");
        assert!(client.stats().oversized_messages <= 1);
        close(client, pid).await;
    });
}

#[test]
fn an_oversized_answer_with_its_id_last_fails_its_call_when_it_ends() {
    // The TypeScript SDK writes `result` first and `id` last.
    let answer = format!(
        r#"printf '%s' '{{"result":{{"content":[{{"type":"text","text":"'; {}; printf '%s\n' "\"}}]}},\"jsonrpc\":\"2.0\",\"id\":$id}}""#,
        xs(1 << 20)
    );
    let limit = 64 * 1024;
    smol::block_on(async {
        let builder = builder().configure(|c| c.with_max_message_size(limit));
        let (client, pid) = connect(builder, &server("", &answer)).await;
        let (result, took) = call_bad(&client).await;
        match result {
            Err(Error::Request(RequestError::MessageTooLarge { limit: l })) => assert_eq!(l, limit),
            other => panic!("expected MessageTooLarge, got {other:?}"),
        }
        assert!(took < PROMPT, "the failure took {took:?}");
        let stats = client.stats();
        assert_eq!((stats.oversized_messages, stats.invalid_messages), (1, 1));
        still_answers(&client).await;
        close(client, pid).await;
    });
}

#[test]
fn a_byte_order_mark_before_the_first_message_is_skipped() {
    // UTF-8 BOM, as some Windows-born servers write it at the start of their output.
    smol::block_on(async {
        let (client, pid) = connect(builder(), &server(r"printf '\357\273\277'", "")).await;
        assert_eq!(client.stats().invalid_messages, 0);
        still_answers(&client).await;
        close(client, pid).await;
    });
}

#[test]
fn every_violation_reaches_the_hook_of_its_connection() {
    // Before its first answer the server prints a log line to stdout (a common mistake); the
    // call gets an answer to an id never issued, then an answer with both result and error.
    let answer = r#"printf '%s\n' '{"jsonrpc":"2.0","id":424242,"result":{}}' "{\"jsonrpc\":\"2.0\",\"id\":$id,\"result\":{},\"error\":{\"code\":1,\"message\":\"x\"}}""#;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    let quiet = Arc::new(Mutex::new(Vec::new()));
    let other = quiet.clone();
    smol::block_on(async {
        let hooked = builder().on_protocol_violation(move |v| sink.lock().unwrap().push(v.clone()));
        let command = server("echo 'Starting the server on port 8080...'", answer);
        let (client, pid) = connect(hooked, &command).await;
        // Another connection to the same kind of server sees its own violations only.
        let (second, second_pid) = connect(
            builder().on_protocol_violation(move |v| other.lock().unwrap().push(v.clone())),
            &command,
        )
        .await;
        let (result, took) = call_bad(&client).await;
        assert!(matches!(result, Err(Error::Request(RequestError::InvalidResponse(_)))), "{result:?}");
        assert!(took < PROMPT, "the failure took {took:?}");
        // Hooks run on the driver's task, which the call does not wait for.
        assert!(wait_until(PROMPT, || seen.lock().unwrap().len() >= 3), "{:?}", seen.lock().unwrap());
        let violations = seen.lock().unwrap().clone();
        match &violations[..] {
            [
                ProtocolViolation::Invalid { error: InvalidMessage::Json(_), excerpt: Some(excerpt) },
                ProtocolViolation::UnknownResponse { id: RequestId::Number(424242) },
                ProtocolViolation::InvalidResponse { .. },
            ] => assert_eq!(excerpt, "Starting the server on port 8080..."),
            other => panic!("{other:?}"),
        }
        assert!(wait_until(PROMPT, || !quiet.lock().unwrap().is_empty()));
        let quiet = quiet.lock().unwrap().clone();
        assert!(
            matches!(&quiet[..], [ProtocolViolation::Invalid { .. }]),
            "the second connection only had its own log line: {quiet:?}"
        );
        still_answers(&client).await;
        close(client, pid).await;
        close(second, second_pid).await;
    });
}

#[test]
fn a_panicking_violation_hook_is_dropped_and_the_others_go_on() {
    let panics = Arc::new(Mutex::new(0));
    let counted = panics.clone();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    smol::block_on(async {
        let hooked = builder()
            .on_protocol_violation(move |_| {
                *counted.lock().unwrap() += 1;
                panic!("the hook panicked");
            })
            .on_protocol_violation(move |v| sink.lock().unwrap().push(v.clone()));
        // A log line on stdout, then at every call an answer to an id never issued.
        let stray = r#"printf '%s\n' '{"jsonrpc":"2.0","id":424242,"result":{}}' "{\"jsonrpc\":\"2.0\",\"id\":$id,\"result\":{}}""#;
        let (client, pid) = connect(hooked, &server("echo 'listening'", stray)).await;
        let _ = call_bad(&client).await;
        assert!(wait_until(PROMPT, || seen.lock().unwrap().len() >= 2), "{:?}", seen.lock().unwrap());
        still_answers(&client).await;
        close(client, pid).await;
    });
    assert_eq!(*panics.lock().unwrap(), 1, "the panicking hook is called once, then dropped");
}
