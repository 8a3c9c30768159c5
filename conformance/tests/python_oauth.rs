//! OAuth 2.1 against another SDK: the client (mcp-smol's `OAuth` over `mcp-hyper`, and once over
//! `mcp-surf`) authorizes with an MCP server built with the official Python SDK that is its own
//! authorization server (`conformance/peers/python_oauth_server.py`): RFC 9728 resource
//! metadata from the 401's `WWW-Authenticate`, RFC 8414 metadata, dynamic registration,
//! authorization code with PKCE (checked by the SDK), RFC 8707 resource binding (the server
//! refuses tokens issued for another resource), rotating refresh tokens, and the typed failure of
//! a client without OAuth.
//!
//! The "browser" is a thread that GETs the authorization URL (the peer approves at once with a
//! 302) and then the `Location`, i.e. the client's loopback redirect. What the server saw is
//! read from its `/peer/stats` counters.
//!
//! Each test starts the peer with `--port 0`, reads its `MCP_SERVER_URL=` line, and kills it by
//! PID when done (also when the test fails). They need the Python SDK (`.ci/install-peers`);
//! `.ci/interop` runs them with `MCP_PYTHON_PATH` set. Plain `cargo test` skips them.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{get, query_param, text};
use mcp_hyper::HyperTransport;
use mcp_sansio::CloseReason;
use mcp_sansio::ProtocolVersion;
use mcp_sansio::auth::{AuthConfig, AuthError};
use mcp_sansio::http::HttpConfig;
use mcp_sansio::schema::Implementation;
use mcp_smol::{ClientApi, ClientBuilder, Error, HttpTransport, LoopbackRedirect, MemoryTokenStore, OAuth};
use serde_json::{Value, json};

/// The peer process, killed (by PID) and reaped when dropped.
struct Peer {
    child: Child,
    /// `http://127.0.0.1:<port>/mcp`.
    url: String,
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Peer {
    /// Starts the peer on a free port (`extra` are more arguments); returns once it listens.
    fn start(extra: &[&str]) -> Peer {
        let pythonpath = std::env::var("MCP_PYTHON_PATH")
            .expect("MCP_PYTHON_PATH must point at the Python SDK's install dir: run .ci/interop");
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/peers/python_oauth_server.py");
        let mut command = Command::new("python3");
        command.arg(script).args(["--port", "0"]).args(extra).env("PYTHONPATH", pythonpath);
        // stderr stays the test's: the SDK's warnings (a token refused for its resource) show.
        command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::inherit());
        let mut child = command.spawn().unwrap_or_else(|e| panic!("starting {command:?}: {e}"));
        // The socket is listening once the line is printed; EOF means the peer died.
        let mut line = String::new();
        let stdout = child.stdout.take().unwrap();
        let mut stdout = BufReader::new(stdout);
        let read = stdout.read_line(&mut line);
        // The rest (uvicorn's access log at --log-level INFO) goes to stderr: a closed pipe
        // would make every later write of the peer fail.
        std::thread::spawn(move || {
            for line in stdout.lines().map_while(Result::ok) {
                eprintln!("{line}");
            }
        });
        // Owned before the check, so that a failed start is killed too.
        let mut peer = Peer { child, url: String::new() };
        let url = line.trim().strip_prefix("MCP_SERVER_URL=").map(str::to_owned);
        peer.url = url.unwrap_or_else(|| panic!("{command:?} did not print its URL ({read:?}: {line:?})"));
        peer
    }

    /// The issuer: scheme, host and port.
    fn base(&self) -> &str {
        self.url.strip_suffix("/mcp").unwrap()
    }

    /// Revokes every token the server issued (`POST /peer/revoke-all`).
    fn revoke_all(&self) -> String {
        let authority = self.base().strip_prefix("http://").unwrap();
        let mut stream = TcpStream::connect(authority).unwrap();
        write!(stream, "POST /peer/revoke-all HTTP/1.1\r\nHost: {authority}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            .unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).unwrap();
        assert!(response.starts_with("HTTP/1.1 200"), "{response}");
        response
    }

    /// The counters of `/peer/stats` (absent ones are 0).
    fn stats(&self) -> Stats {
        let (status, _, body) = get(&format!("{}/peer/stats", self.base()));
        assert!(status.contains("200"), "{status}");
        Stats(serde_json::from_str(&body).unwrap())
    }
}

struct Stats(Value);

impl Stats {
    fn get(&self, name: &str) -> u64 {
        self.0.get(name).and_then(Value::as_u64).unwrap_or(0)
    }
}

impl std::fmt::Display for Stats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// The browser of a user who approves: GETs the authorization URL (the peer answers with a 302
/// to the redirect URI), then the `Location`, which is the client's loopback listener. When the
/// authorization server does not redirect, the browser reports what it saw to the redirect URI
/// as an OAuth error, so the connection fails at once with it instead of waiting for a redirect
/// that never comes. Every authorization URL is recorded in `seen`.
fn browser(seen: Arc<Mutex<Vec<String>>>) -> impl Fn(&str) + Send + Sync + 'static {
    move |authorization_url: &str| {
        seen.lock().unwrap().push(authorization_url.to_owned());
        let url = authorization_url.to_owned();
        std::thread::spawn(move || {
            let (status, location, body) = get(&url);
            let location = location.unwrap_or_else(|| {
                let redirect = query_param(&url, "redirect_uri").unwrap();
                let state = query_param(&url, "state").unwrap_or_default();
                let description: String = format!("{status}: {body}")
                    .bytes()
                    .map(|b| {
                        if b.is_ascii_alphanumeric() {
                            char::from(b).to_string()
                        } else {
                            format!("%{b:02X}")
                        }
                    })
                    .collect();
                format!(
                    "{redirect}?error=browser_saw_no_redirect&error_description={description}&state={state}"
                )
            });
            let (status, _, body) = get(&location);
            assert!(status.contains("200"), "{status}");
            assert!(body.contains("close this window"), "{body}");
        });
    }
}

fn builder() -> ClientBuilder {
    ClientBuilder::new(Implementation::new("mcp-sansio-oauth-interop", "0.1.0"))
}

/// `OAuth` with the authorization code grant, the loopback redirect and `browser`.
fn interactive(store: Arc<MemoryTokenStore>, seen: Arc<Mutex<Vec<String>>>) -> OAuth {
    let redirect = LoopbackRedirect::bind(browser(seen)).unwrap();
    let config = AuthConfig::authorization_code(redirect.redirect_uri())
        .client_name("mcp-sansio interop")
        .authorization_timeout(Duration::from_secs(30));
    OAuth::new(config).handler(redirect).store(store)
}

/// Discovery, registration, authorization and the calls, then a second client on the stored
/// credentials that needs no authorization.
async fn authorization_code_suite(transport: impl HttpTransport + Clone) {
    let peer = Peer::start(&[]);
    let store = Arc::new(MemoryTokenStore::default());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let client = builder()
        .oauth(interactive(store.clone(), seen.clone()))
        .spawn_http(HttpConfig::new(peer.url.as_str()), transport.clone())
        .await
        .unwrap_or_else(|e| panic!("connecting to {}: {e} ({e:?}); server saw {}", peer.url, peer.stats()));
    assert_eq!(client.server_info().unwrap().name, "python-oauth-interop-peer");
    assert_eq!(client.protocol_version(), Some(ProtocolVersion::V2026_07_28));

    let tools = client.list_all_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "echo"), "{tools:?}");
    let echo = client.call_tool("echo", json!({"message": "hi"})).await.unwrap();
    assert_eq!(text(&echo), "Echo: hi");
    // The token the server holds: issued for its /mcp URL (RFC 8707) with the scope from the
    // resource metadata's `scopes_supported`.
    let who = client.call_tool("whoami", json!({})).await.unwrap();
    let who =
        who.structured_content.clone().unwrap_or_else(|| panic!("no structured content: {}", text(&who)));
    assert_eq!(who["resource"], peer.url.as_str(), "{who}");
    assert_eq!(who["scopes"], json!(["mcp"]), "{who}");
    assert!(client.close_within(Duration::from_secs(10)).await, "close took too long");

    // The authorization request the client made.
    let urls = seen.lock().unwrap().clone();
    assert_eq!(urls.len(), 1, "{urls:?}");
    let url = &urls[0];
    assert!(url.starts_with(&format!("{}/authorize?", peer.base())), "{url}");
    assert_eq!(query_param(url, "response_type").as_deref(), Some("code"), "{url}");
    assert_eq!(query_param(url, "code_challenge_method").as_deref(), Some("S256"), "{url}");
    assert_eq!(query_param(url, "resource").as_deref(), Some(peer.url.as_str()), "{url}");
    assert_eq!(query_param(url, "scope").as_deref(), Some("mcp"), "{url}");

    let stats = peer.stats();
    assert_eq!(stats.get("registrations"), 1, "{stats}");
    assert_eq!(stats.get("authorizations"), 1, "{stats}");
    assert_eq!(stats.get("token_authorization_code"), 1, "{stats}");
    assert_eq!(stats.get("token_refresh_token"), 0, "{stats}");

    // A second client starts with the stored registration and token: no new authorization
    // (its loopback redirect has another port, which the registration would not accept).
    let client = builder()
        .oauth(interactive(store.clone(), seen.clone()))
        .spawn_http(HttpConfig::new(peer.url.as_str()), transport)
        .await
        .unwrap_or_else(|e| panic!("reconnecting: {e} ({e:?}); server saw {}", peer.stats()));
    assert_eq!(text(&client.call_tool("echo", json!({"message": "again"})).await.unwrap()), "Echo: again");
    assert!(client.close_within(Duration::from_secs(10)).await, "close took too long");
    let stats = peer.stats();
    assert_eq!(stats.get("registrations"), 1, "{stats}");
    assert_eq!(stats.get("authorizations"), 1, "{stats}");
    assert_eq!(seen.lock().unwrap().len(), 1);
}

/// Access tokens that live two seconds, and calls two seconds apart: each needs a new token,
/// and each refresh rotates the refresh token (a reused one would show as `refresh_unknown`).
/// When the token responses announce the lifetime (`expires_in`), the client refreshes before
/// the server refuses anything; with `--hide-expiry` it learns from the 401, refreshes, and
/// sends the call again.
async fn refresh_suite(versions: &[ProtocolVersion], announced: bool) {
    let mut args = vec!["--token-ttl", "2"];
    if !announced {
        args.push("--hide-expiry");
    }
    let peer = Peer::start(&args);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let client = builder()
        .configure(|c| c.with_versions(versions))
        .oauth(interactive(Arc::new(MemoryTokenStore::default()), seen.clone()))
        .spawn_http(HttpConfig::new(peer.url.as_str()), HyperTransport::new())
        .await
        .unwrap_or_else(|e| panic!("connecting to {}: {e} ({e:?}); server saw {}", peer.url, peer.stats()));
    for i in 0..3 {
        async_io::Timer::after(Duration::from_millis(2200)).await;
        let result = client.call_tool("echo", json!({"message": format!("call {i}")})).await;
        let result = result.unwrap_or_else(|e| panic!("call {i}: {e} ({e:?}); server saw {}", peer.stats()));
        assert_eq!(text(&result), format!("Echo: call {i}"));
    }
    assert!(client.close_within(Duration::from_secs(10)).await, "close took too long");
    let stats = peer.stats();
    assert_eq!(stats.get("authorizations"), 1, "{stats}");
    assert_eq!(seen.lock().unwrap().len(), 1);
    assert!(stats.get("token_refresh_token") >= 3, "{stats}");
    assert_eq!(stats.get("refresh_unknown"), 0, "a rotated refresh token was reused: {stats}");
    if announced {
        assert_eq!(stats.get("bearer_expired"), 0, "refreshed too late: {stats}");
    } else {
        assert!(stats.get("bearer_expired") >= 3, "{stats}");
    }
}

#[test]
#[ignore = "needs the Python SDK: run .ci/interop"]
fn hyper_authorization_code_with_dynamic_registration() {
    smol::block_on(authorization_code_suite(HyperTransport::new()));
}

#[test]
#[ignore = "needs the Python SDK: run .ci/interop"]
fn surf_authorization_code_with_dynamic_registration() {
    smol::block_on(authorization_code_suite(mcp_surf::SurfTransport::new()));
}

#[test]
#[ignore = "needs the Python SDK: run .ci/interop"]
fn hyper_short_lived_tokens_are_refreshed() {
    smol::block_on(refresh_suite(ProtocolVersion::DUAL_ERA, true));
}

/// The same in the `initialize` era, where the SDK also binds the session to the token's
/// principal: refreshed tokens keep the session (and its GET stream).
#[test]
#[ignore = "needs the Python SDK: run .ci/interop"]
fn hyper_short_lived_tokens_are_refreshed_in_a_session() {
    let legacy: Vec<_> = ProtocolVersion::LEGACY.iter().rev().copied().collect();
    smol::block_on(refresh_suite(&legacy, true));
}

#[test]
#[ignore = "needs the Python SDK: run .ci/interop"]
fn hyper_tokens_expiring_unannounced_are_refreshed_on_the_401() {
    smol::block_on(refresh_suite(ProtocolVersion::DUAL_ERA, false));
}

/// A client that starts from stored credentials the server no longer honours (every token
/// revoked): it discovers the token endpoint, tries the refresh (refused), and authorizes again.
/// Its loopback redirect has a new port, so it registers again too: the SDK compares redirect
/// URIs exactly, port included.
#[test]
#[ignore = "needs the Python SDK: run .ci/interop"]
fn hyper_restored_credentials_recover_after_a_revocation() {
    let peer = Peer::start(&[]);
    smol::block_on(async {
        let store = Arc::new(MemoryTokenStore::default());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let client = builder()
            .oauth(interactive(store.clone(), seen.clone()))
            .spawn_http(HttpConfig::new(peer.url.as_str()), HyperTransport::new())
            .await
            .unwrap_or_else(|e| {
                panic!("connecting to {}: {e} ({e:?}); server saw {}", peer.url, peer.stats())
            });
        client.call_tool("echo", json!({"message": "first run"})).await.unwrap();
        assert!(client.close_within(Duration::from_secs(10)).await, "close took too long");
        drop(client);
        peer.revoke_all();
        let client = builder()
            .oauth(interactive(store.clone(), seen.clone()))
            .spawn_http(HttpConfig::new(peer.url.as_str()), HyperTransport::new())
            .await
            .unwrap_or_else(|e| panic!("second run: {e} ({e:?}); server saw {}", peer.stats()));
        let result = client.call_tool("echo", json!({"message": "second run"})).await.unwrap();
        assert_eq!(text(&result), "Echo: second run");
        assert!(client.close_within(Duration::from_secs(10)).await, "close took too long");
    });
    let stats = peer.stats();
    assert_eq!(stats.get("authorizations"), 2, "{stats}");
    assert_eq!(stats.get("registrations"), 2, "a new redirect port, a new registration: {stats}");
    assert_eq!(stats.get("refresh_unknown"), 1, "the revoked refresh token was tried once: {stats}");
}

/// An administrator revokes every token: the next call gets a 401, the refresh is refused
/// (`invalid_grant`), and the client authorizes again (same registration, same redirect URI),
/// then sends the call again.
#[test]
#[ignore = "needs the Python SDK: run .ci/interop"]
fn hyper_revoked_tokens_lead_to_a_new_authorization() {
    let peer = Peer::start(&[]);
    smol::block_on(async {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let client = builder()
            .oauth(interactive(Arc::new(MemoryTokenStore::default()), seen.clone()))
            .spawn_http(HttpConfig::new(peer.url.as_str()), HyperTransport::new())
            .await
            .unwrap_or_else(|e| {
                panic!("connecting to {}: {e} ({e:?}); server saw {}", peer.url, peer.stats())
            });
        assert_eq!(
            text(&client.call_tool("echo", json!({"message": "before"})).await.unwrap()),
            "Echo: before"
        );
        peer.revoke_all();
        let after = client.call_tool("echo", json!({"message": "after"})).await;
        let after = after
            .unwrap_or_else(|e| panic!("after the revocation: {e} ({e:?}); server saw {}", peer.stats()));
        assert_eq!(text(&after), "Echo: after");
        assert!(client.close_within(Duration::from_secs(10)).await, "close took too long");
    });
    let stats = peer.stats();
    assert_eq!(stats.get("registrations"), 1, "{stats}");
    assert_eq!(stats.get("authorizations"), 2, "{stats}");
    assert_eq!(stats.get("token_authorization_code"), 2, "{stats}");
    assert_eq!(stats.get("refresh_unknown"), 1, "the revoked refresh token was tried once: {stats}");
}

#[test]
#[ignore = "needs the Python SDK: run .ci/interop"]
fn without_oauth_the_connection_fails_typed() {
    let peer = Peer::start(&[]);
    smol::block_on(async {
        let error = builder()
            .spawn_http(HttpConfig::new(peer.url.as_str()), HyperTransport::new())
            .await
            .unwrap_err();
        assert!(
            matches!(
                error,
                Error::Connect(CloseReason::Unauthorized(AuthError::NotConfigured { status: 401 }))
            ),
            "{error:?}"
        );
    });
    assert_eq!(peer.stats().get("registrations"), 0);
}
