//! Hostile authorization servers: the `oauth_*` HTTP modes. The MCP endpoint is an OAuth 2.1
//! protected resource (every request needs a token), and the same listener is its authorization
//! server for the client credentials grant: resource metadata at the RFC 9728 well-known URIs,
//! server metadata at RFC 8414's, and `/token`, which takes any client. Each mode is hostile in
//! one way:
//!
//! - `oauth_dpop_nonce_churn`: tokens are DPoP-bound (ES256 offered), and a call of the tool
//!   named after the mode is refused with `401 use_dpop_nonce` and a nonce never given before,
//!   every time;
//! - `oauth_token_crlf`: the token endpoint's `access_token` holds a CR LF and a header line;
//! - `oauth_prm_without_resource`: the resource metadata has no `resource` and names a second
//!   listener of the process as the authorization server (another origin), which would issue a
//!   token to anyone.
//!
//! `GET /adversary/stats` (no token needed) tells what the servers saw: `token_requests`,
//! `authorized_mcp_requests` (MCP requests with a token), `nonce_refusals`, `foreign_requests`
//! (requests that reached the second listener).

use std::io;
use std::net::TcpStream;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Value, json};

use crate::http::{Next, Request, respond, respond_json};

/// The modes.
pub(crate) const MODES: [&str; 3] =
    ["oauth_dpop_nonce_churn", "oauth_token_crlf", "oauth_prm_without_resource"];

/// The mode of `oauth_prm_without_resource`'s second listener: the foreign authorization server.
pub(crate) const FOREIGN_AS: &str = "oauth_foreign_authorization_server";

/// The access token the endpoint takes (and the token endpoint issues, but in `oauth_token_crlf`).
const TOKEN: &str = "adversary-token";
const RESOURCE_METADATA: &str = "/.well-known/oauth-protected-resource/mcp";

/// `http://127.0.0.1:PORT` of the main listener, and of the second one.
static ORIGIN: OnceLock<String> = OnceLock::new();
static FOREIGN_ORIGIN: OnceLock<String> = OnceLock::new();

static TOKEN_REQUESTS: AtomicU64 = AtomicU64::new(0);
static AUTHORIZED_MCP: AtomicU64 = AtomicU64::new(0);
static NONCE_REFUSALS: AtomicU64 = AtomicU64::new(0);
static FOREIGN_REQUESTS: AtomicU64 = AtomicU64::new(0);

/// Whether `mode` is one of these.
pub(crate) fn is_oauth(mode: &str) -> bool {
    MODES.contains(&mode)
}

/// Whether `mode` needs the second listener.
pub(crate) fn needs_foreign_listener(mode: &str) -> bool {
    mode == "oauth_prm_without_resource"
}

/// Records where the listeners are.
pub(crate) fn set_origins(origin: String, foreign: Option<String>) {
    let _ = ORIGIN.set(origin);
    if let Some(foreign) = foreign {
        let _ = FOREIGN_ORIGIN.set(foreign);
    }
}

fn origin() -> &'static str {
    ORIGIN.get().map_or("http://127.0.0.1:1", String::as_str)
}

/// Answers what the OAuth modes answer: `None` leaves the request to the MCP server.
pub(crate) fn intercept(mode: &str, request: &Request, writer: &mut TcpStream) -> io::Result<Option<Next>> {
    if mode == FOREIGN_AS {
        FOREIGN_REQUESTS.fetch_add(1, Ordering::Relaxed);
        let foreign = FOREIGN_ORIGIN.get().map_or("http://127.0.0.1:1", String::as_str);
        return match request.target.as_str() {
            "/token" => json_reply(writer, 200, &json!({"access_token": TOKEN, "token_type": "Bearer"}), &[]),
            _ => json_reply(writer, 200, &server_metadata(foreign, false), &[]),
        };
    }
    if !is_oauth(mode) {
        return Ok(None);
    }
    match (request.method.as_str(), request.target.as_str()) {
        ("GET", "/adversary/stats") => {
            let stats = json!({
                "token_requests": TOKEN_REQUESTS.load(Ordering::Relaxed),
                "authorized_mcp_requests": AUTHORIZED_MCP.load(Ordering::Relaxed),
                "nonce_refusals": NONCE_REFUSALS.load(Ordering::Relaxed),
                "foreign_requests": FOREIGN_REQUESTS.load(Ordering::Relaxed),
            });
            json_reply(writer, 200, &stats, &[])
        }
        ("GET", RESOURCE_METADATA | "/.well-known/oauth-protected-resource") => {
            let metadata = match FOREIGN_ORIGIN.get() {
                Some(foreign) => json!({"authorization_servers": [foreign]}),
                None => json!({"resource": format!("{}/mcp", origin()), "authorization_servers": [origin()]}),
            };
            json_reply(writer, 200, &metadata, &[])
        }
        ("GET", "/.well-known/oauth-authorization-server") => {
            json_reply(writer, 200, &server_metadata(origin(), mode == "oauth_dpop_nonce_churn"), &[])
        }
        ("POST", "/token") => {
            TOKEN_REQUESTS.fetch_add(1, Ordering::Relaxed);
            let (access, token_type) = match (mode, request.header("dpop")) {
                ("oauth_token_crlf", _) => ("tok\r\nX-Injected: 1", "Bearer"),
                (_, Some(_)) => (TOKEN, "DPoP"),
                (_, None) => (TOKEN, "Bearer"),
            };
            let token = json!({"access_token": access, "token_type": token_type, "expires_in": 3600});
            json_reply(writer, 200, &token, &[])
        }
        ("POST", _) => mcp(mode, request, writer),
        _ => Ok(None),
    }
}

/// Authorization server metadata for the issuer at `origin`.
fn server_metadata(origin: &str, dpop: bool) -> Value {
    let mut metadata = json!({
        "issuer": origin,
        "authorization_endpoint": format!("{origin}/authorize"),
        "token_endpoint": format!("{origin}/token"),
        "grant_types_supported": ["client_credentials"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"],
    });
    if dpop {
        metadata["dpop_signing_alg_values_supported"] = json!(["ES256"]);
    }
    metadata
}

/// The MCP endpoint's checks: a token first; then, in `oauth_dpop_nonce_churn`, the refusal of
/// every call of the mode's tool for want of a nonce never given before.
fn mcp(mode: &str, request: &Request, writer: &mut TcpStream) -> io::Result<Option<Next>> {
    let authorized = request.header("authorization").is_some_and(|a| a.ends_with(&format!(" {TOKEN}")));
    if !authorized {
        let challenge = format!("Bearer resource_metadata=\"{}{RESOURCE_METADATA}\"", origin());
        respond(writer, 401, &[("WWW-Authenticate", &challenge)], b"")?;
        return Ok(Some(Next::KeepAlive));
    }
    AUTHORIZED_MCP.fetch_add(1, Ordering::Relaxed);
    let message: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
    let called = message.pointer("/params/name").and_then(Value::as_str);
    if mode == "oauth_dpop_nonce_churn" && called == Some(mode) {
        let refusals = NONCE_REFUSALS.fetch_add(1, Ordering::Relaxed) + 1;
        let nonce = format!("nonce-{refusals}");
        let challenge = "DPoP error=\"use_dpop_nonce\", error_description=\"a new nonce, every time\"";
        let error = json!({"error": "use_dpop_nonce"});
        return json_reply(writer, 401, &error, &[("WWW-Authenticate", challenge), ("DPoP-Nonce", &nonce)]);
    }
    Ok(None)
}

fn json_reply(
    writer: &mut TcpStream,
    status: u16,
    body: &Value,
    extra: &[(&str, &str)],
) -> io::Result<Option<Next>> {
    if status == 200 {
        return respond_json(writer, body, extra).map(Some);
    }
    let mut headers = vec![("Content-Type", "application/json")];
    headers.extend_from_slice(extra);
    respond(writer, status, &headers, &serde_json::to_vec(body).unwrap_or_default())?;
    Ok(Some(Next::KeepAlive))
}
