//! OAuth against a real authorization server and protected MCP server: the demo server in OAuth
//! mode on 127.0.0.1 (its own thread), reached through `HyperTransport` and the smol driver.
//! What the server saw is read from its `/demo/oauth-stats` counters.
#![allow(clippy::unwrap_used)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::time::Duration;

use mcp_demo_server::Options;
use mcp_hyper::HyperTransport;
use mcp_smol::mcp_sansio::CloseReason;
use mcp_smol::mcp_sansio::auth::{AuthConfig, AuthError, ClientInfo};
use mcp_smol::mcp_sansio::http::HttpConfig;
use mcp_smol::mcp_sansio::schema::Implementation;
use mcp_smol::{ClientApi, ClientBuilder, Error, LoopbackRedirect, MemoryTokenStore, OAuth};
use serde_json::{Value, json};

/// Starts the demo server in OAuth mode; returns its MCP URL.
fn server(options: Options) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    std::thread::spawn(move || mcp_demo_server::serve_http(listener, options));
    url
}

/// A plain HTTP/1.1 GET: status line, `Location`, body.
fn get(url: &str) -> (String, Option<String>, String) {
    let rest = url.strip_prefix("http://").unwrap();
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let mut stream = TcpStream::connect(authority).unwrap();
    write!(stream, "GET {path} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n\r\n").unwrap();
    let mut reader = BufReader::new(stream);
    let mut status = String::new();
    reader.read_line(&mut status).unwrap();
    let mut location = None;
    let mut line = String::new();
    while reader.read_line(&mut line).unwrap() > 2 {
        if let Some((name, value)) = line.split_once(':') {
            if name.eq_ignore_ascii_case("location") {
                location = Some(value.trim().to_owned());
            }
        }
        line.clear();
    }
    let mut body = String::new();
    let _ = reader.read_to_string(&mut body);
    (status, location, body)
}

fn stats(url: &str) -> Value {
    let (_, _, body) = get(&url.replace("/mcp", "/demo/oauth-stats"));
    // The body may be chunked; the JSON object is all that matters.
    let start = body.find('{').unwrap();
    let end = body.rfind('}').unwrap();
    serde_json::from_str(&body[start..=end]).unwrap()
}

/// The browser of a user who approves: follows the authorization URL to the redirect.
fn approve(authorization_url: &str) {
    let url = authorization_url.to_owned();
    std::thread::spawn(move || {
        let (status, location, _) = get(&url);
        let location = location.unwrap_or_else(|| panic!("no redirect: {status}"));
        let (status, _, body) = get(&location);
        assert!(status.contains("200"), "{status}");
        assert!(body.contains("close this window"));
    });
}

fn builder() -> ClientBuilder {
    ClientBuilder::new(Implementation::new("oauth-test", "1.0.0"))
}

fn interactive(store: Arc<MemoryTokenStore>) -> OAuth {
    let redirect = LoopbackRedirect::bind(approve).unwrap();
    OAuth::new(AuthConfig::authorization_code(redirect.redirect_uri())).handler(redirect).store(store)
}

/// One `LoopbackRedirect` serves every authorization of the connection, as its doc says: the
/// first one and the step-up that `admin_echo`'s `insufficient_scope` asks for both come back
/// through it.
#[test]
fn authorization_code_with_the_loopback_redirect_and_a_step_up() {
    let url = server(Options::default().with_oauth());
    smol::block_on(async {
        let store = Arc::new(MemoryTokenStore::default());
        let client = builder()
            .oauth(interactive(store.clone()))
            .spawn_http(HttpConfig::new(url.as_str()), HyperTransport::new())
            .await
            .unwrap();
        let tools = client.list_all_tools().await.unwrap();
        assert!(tools.iter().any(|t| t.name == "admin_echo"));
        let result = client.call_tool("admin_echo", json!({"message": "hi"})).await.unwrap();
        assert_eq!(result.is_error, None);
        client.close().await;

        let stats = stats(&url);
        assert_eq!(stats["registrations"], 1, "{stats}");
        assert_eq!(stats["authorizations"], 2, "first authorization and one step-up: {stats}");
        assert_eq!(stats["token_requests"]["authorization_code"], 2, "{stats}");
        assert_eq!(stats["mcp_requests"]["insufficient_scope"], 1, "{stats}");

        // A second client starts with the stored token: no new authorization.
        let client = builder()
            .oauth(interactive(store.clone()))
            .spawn_http(HttpConfig::new(url.as_str()), HyperTransport::new())
            .await
            .unwrap();
        client.call_tool("echo", json!({"message": "again"})).await.unwrap();
        client.close().await;
        let stats = self::stats(&url);
        assert_eq!(stats["authorizations"], 2, "{stats}");
        assert_eq!(stats["registrations"], 1, "{stats}");
    });
}

#[test]
fn client_credentials_with_a_pre_registered_client() {
    let url = server(Options::default().with_oauth_client("svc", "pw"));
    smol::block_on(async {
        let oauth = OAuth::new(AuthConfig::client_credentials(ClientInfo::confidential("svc", "pw")));
        let client = builder()
            .oauth(oauth)
            .spawn_http(HttpConfig::new(url.as_str()), HyperTransport::new())
            .await
            .unwrap();
        client.list_all_tools().await.unwrap();
        client.close().await;
        let stats = stats(&url);
        assert_eq!(stats["token_requests"]["client_credentials"], 1, "{stats}");
        assert_eq!(stats["authorizations"], 0, "{stats}");
    });
}

#[test]
fn a_wrong_client_secret_fails_the_connection_typed() {
    let url = server(Options::default().with_oauth_client("svc", "pw"));
    smol::block_on(async {
        let oauth = OAuth::new(AuthConfig::client_credentials(ClientInfo::confidential("svc", "wrong")));
        let error = builder()
            .oauth(oauth)
            .spawn_http(HttpConfig::new(url.as_str()), HyperTransport::new())
            .await
            .unwrap_err();
        assert!(
            matches!(&error, Error::Connect(CloseReason::Unauthorized(AuthError::TokenRefused { error, .. })) if error == "invalid_client"),
            "{error:?}"
        );
    });
}

#[test]
fn short_lived_tokens_are_refreshed() {
    let url = server(Options::default().with_oauth().with_oauth_token_ttl(Duration::from_secs(1)));
    smol::block_on(async {
        let client = builder()
            .oauth(interactive(Arc::new(MemoryTokenStore::default())))
            .spawn_http(HttpConfig::new(url.as_str()), HyperTransport::new())
            .await
            .unwrap();
        for i in 0..3 {
            async_io::Timer::after(Duration::from_millis(1100)).await;
            client.call_tool("echo", json!({"message": format!("call {i}")})).await.unwrap();
        }
        client.close().await;
        let stats = stats(&url);
        assert_eq!(stats["authorizations"], 1, "{stats}");
        assert!(stats["token_requests"]["refresh_token"].as_u64().unwrap() >= 3, "{stats}");
    });
}

#[test]
fn without_oauth_a_protected_server_fails_the_connection_typed() {
    let url = server(Options::default().with_oauth());
    smol::block_on(async {
        let error =
            builder().spawn_http(HttpConfig::new(url.as_str()), HyperTransport::new()).await.unwrap_err();
        assert!(
            matches!(
                error,
                Error::Connect(CloseReason::Unauthorized(AuthError::NotConfigured { status: 401 }))
            ),
            "{error:?}"
        );
    });
}

/// A token store whose `save` panics.
struct PanickingStore;

impl mcp_smol::TokenStore for PanickingStore {
    fn load(&self) -> Option<mcp_smol::mcp_sansio::auth::Credentials> {
        None
    }

    fn save(&self, _: &mcp_smol::mcp_sansio::auth::Credentials) {
        panic!("the disk is on fire");
    }
}

#[test]
fn a_panicking_token_store_closes_the_connection_typed() {
    let url = server(Options::default().with_oauth_client("svc", "pw"));
    smol::block_on(async {
        let oauth = OAuth::new(AuthConfig::client_credentials(ClientInfo::confidential("svc", "pw")))
            .store(PanickingStore);
        // The store is called on the driver's task, once the token came; the connection closes
        // then, whether or not the handshake finished first. This thread never unwinds.
        let reason = match builder()
            .oauth(oauth)
            .spawn_http(HttpConfig::new(url.as_str()), HyperTransport::new())
            .await
        {
            Err(Error::Connect(reason)) => reason,
            Err(other) => panic!("{other:?}"),
            Ok(client) => {
                client.closed().await;
                match client.status() {
                    mcp_smol::mcp_sansio::Status::Closed(reason) => reason,
                    other => panic!("{other:?}"),
                }
            }
        };
        match &reason {
            CloseReason::Aborted(detail) => assert!(detail.contains("the disk is on fire"), "{detail}"),
            other => panic!("{other:?}"),
        }
        assert!(!reason.is_retriable());
    });
}
