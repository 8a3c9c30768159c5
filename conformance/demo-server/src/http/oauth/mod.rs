//! OAuth mode (`--oauth`): `/mcp` becomes an OAuth 2.1 protected resource, and the same
//! listener is its authorization server (issuer `http://HOST:PORT`).
//!
//! - [`OAuth::guard`] checks the bearer token of every `/mcp` request (401 without a valid one,
//!   403 without the scope the request needs).
//! - [`OAuth::endpoint`] answers the OAuth paths: the two metadata documents, `/register`
//!   ([`register`]), `/authorize` ([`authorize`]), `/token` ([`token`]) and `/demo/oauth-stats`.
//!
//! The state ([`store::Store`]) is in memory behind one mutex: a demo server serves a handful of
//! clients, and one lock keeps every check-then-update atomic (a code is redeemed once).
//!
//! See the crate documentation ("OAuth") for the rules as a client sees them.

mod authorize;
mod encoding;
mod register;
mod store;
mod token;

use std::io::{self, Write};
use std::net::SocketAddr;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use self::store::{AuthMethod, Client, SCOPES, Scopes, Store};
use super::wire::{self, Request};
use super::{ENDPOINT, TRANSPORT_ERROR, error_body};
use crate::options::OAuthOptions;
use crate::tools::ADMIN_TOOL;

/// Protected Resource Metadata of `/mcp` (RFC 9728 §3.1: the well-known prefix, then the
/// resource's path).
const RESOURCE_METADATA_PATH: &str = "/.well-known/oauth-protected-resource/mcp";
/// The same document at the root, for clients that look there.
const RESOURCE_METADATA_ROOT: &str = "/.well-known/oauth-protected-resource";
/// Authorization Server Metadata (RFC 8414; the issuer has no path).
const SERVER_METADATA_PATH: &str = "/.well-known/oauth-authorization-server";
const AUTHORIZE_PATH: &str = "/authorize";
const TOKEN_PATH: &str = "/token";
const REGISTER_PATH: &str = "/register";
/// The counters, for tests.
const STATS_PATH: &str = "/demo/oauth-stats";

/// Every path besides `/mcp` that OAuth mode serves.
const PATHS: [&str; 7] = [
    RESOURCE_METADATA_PATH,
    RESOURCE_METADATA_ROOT,
    SERVER_METADATA_PATH,
    AUTHORIZE_PATH,
    TOKEN_PATH,
    REGISTER_PATH,
    STATS_PATH,
];

/// The grant types the token endpoint knows.
const GRANT_TYPES: [&str; 3] = ["authorization_code", "refresh_token", "client_credentials"];

/// The authorization server and resource-server checks of one HTTP listener.
#[derive(Debug)]
pub(crate) struct OAuth {
    /// `http://HOST:PORT` (the bound address).
    issuer: String,
    /// The `/mcp` URL: the resource indicator tokens are for (RFC 8707).
    resource: String,
    /// The URL of the resource's Protected Resource Metadata.
    resource_metadata: String,
    token_ttl: Duration,
    store: Mutex<Store>,
}

/// An HTTP answer built by OAuth mode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Answer {
    pub(crate) status: u16,
    pub(crate) headers: Vec<(&'static str, String)>,
    /// A JSON body, or none (an empty body).
    pub(crate) body: Option<Value>,
}

impl Answer {
    fn json(status: u16, body: Value) -> Self {
        Self { status, headers: Vec::new(), body: Some(body) }
    }

    fn header(mut self, name: &'static str, value: impl Into<String>) -> Self {
        self.headers.push((name, value.into()));
        self
    }

    /// A JSON answer that must not be cached (tokens, credentials, errors about them).
    fn no_store(status: u16, body: Value) -> Self {
        Self::json(status, body).header("Cache-Control", "no-store").header("Pragma", "no-cache")
    }

    /// An OAuth error response (RFC 6749 §5.2 shape).
    fn error(status: u16, code: &str, description: impl Into<String>) -> Self {
        Self::no_store(status, json!({"error": code, "error_description": description.into()}))
    }

    fn method_not_allowed(allow: &'static str) -> Self {
        Self::error(405, "invalid_request", format!("this endpoint takes {allow} only"))
            .header("Allow", allow)
    }

    /// Writes the answer on a connection.
    pub(crate) fn write(&self, out: &mut impl Write, close: bool) -> io::Result<()> {
        let headers: Vec<(&str, &str)> =
            self.headers.iter().map(|(name, value)| (*name, value.as_str())).collect();
        match &self.body {
            Some(body) => wire::write_json(out, self.status, &headers, body, close),
            None => wire::write_response(out, self.status, &headers, None, b"", close),
        }
    }
}

/// The bearer token of `Authorization: Bearer <token>`: `None` without one (no header, or
/// another scheme); an empty string for a malformed one.
fn bearer_token(request: &Request) -> Option<&str> {
    let value = std::str::from_utf8(request.header("authorization")?).ok()?;
    let (scheme, token) = value.split_once(' ').unwrap_or((value, ""));
    if !scheme.eq_ignore_ascii_case("bearer") {
        return None;
    }
    let token = token.trim_start_matches(' ');
    // RFC 6750 §2.1 b64token.
    let body = token.trim_end_matches('=');
    let valid = !body.is_empty()
        && body.bytes().all(|byte| byte.is_ascii_alphanumeric() || b"-._~+/".contains(&byte));
    Some(if valid { token } else { "" })
}

/// Whether a POST to `/mcp` calls the admin tool (alone or in a batch). Unparsable bodies do
/// not: the endpoint refuses them anyway.
fn calls_admin_tool(request: &Request) -> bool {
    if request.method != "POST" {
        return false;
    }
    let Ok(value) = serde_json::from_slice::<Value>(&request.body) else { return false };
    let calls = |message: &Value| {
        message.get("method").and_then(Value::as_str) == Some("tools/call")
            && message.pointer("/params/name").and_then(Value::as_str) == Some(ADMIN_TOOL)
    };
    match &value {
        Value::Array(batch) => batch.iter().any(calls),
        single => calls(single),
    }
}

impl OAuth {
    /// OAuth mode for a listener bound at `address`, with `options`' clients and token lifetime.
    pub(crate) fn new(address: SocketAddr, options: &OAuthOptions) -> Self {
        let issuer = format!("http://{address}");
        let mut store = Store::default();
        for (id, secret) in &options.clients {
            let client = Client {
                secret: Some(secret.clone()),
                method: None,
                redirect_uris: Vec::new(),
                grant_types: None,
            };
            store.clients.insert(id.clone(), client);
        }
        Self {
            resource: format!("{issuer}{ENDPOINT}"),
            resource_metadata: format!("{issuer}{RESOURCE_METADATA_PATH}"),
            issuer,
            token_ttl: options.token_ttl,
            store: Mutex::new(store),
        }
    }

    /// The issuer, `http://HOST:PORT`.
    pub(crate) fn issuer(&self) -> &str {
        &self.issuer
    }

    fn store(&self) -> MutexGuard<'_, Store> {
        self.store.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether `path` is one of the OAuth paths (answered by [`Self::endpoint`]).
    pub(crate) fn serves(path: &str) -> bool {
        PATHS.contains(&path)
    }

    /// Checks the bearer token of a request to `/mcp`: `None` lets it through; otherwise the
    /// 401 (no token, or an unknown or expired one) or 403 (a scope missing) to send.
    pub(crate) fn guard(&self, request: &Request) -> Option<Answer> {
        let needed = if calls_admin_tool(request) { Scopes::ADMIN } else { Scopes::TOOLS };
        let now = Instant::now();
        let mut store = self.store();
        let granted = match bearer_token(request) {
            None => Err(None),
            Some(token) => match store.access.get(token) {
                Some(entry) if !entry.expired(now) => Ok(entry.scopes),
                Some(_) => {
                    store.access.remove(token);
                    Err(Some("the access token expired"))
                }
                None => Err(Some("the access token is not one this server issued (or it was revoked)")),
            },
        };
        let metadata = &self.resource_metadata;
        let scope = needed.text();
        match granted {
            Ok(scopes) if scopes.contains(needed) => {
                store.stats.mcp_authorized += 1;
                None
            }
            Ok(scopes) => {
                store.stats.mcp_insufficient_scope += 1;
                let message = format!(
                    "Forbidden: this request needs the scope \"{scope}\"; the token has \"{}\"",
                    scopes.text()
                );
                let challenge = format!(
                    "Bearer error=\"insufficient_scope\", scope=\"{scope}\", resource_metadata=\"{metadata}\""
                );
                let body = error_body(&Value::Null, TRANSPORT_ERROR, &message);
                Some(Answer::json(403, body).header("WWW-Authenticate", challenge))
            }
            Err(problem) => {
                store.stats.mcp_unauthorized += 1;
                let (challenge, message) = match problem {
                    None => (
                        format!("Bearer resource_metadata=\"{metadata}\", scope=\"{scope}\""),
                        "Unauthorized: /mcp needs Authorization: Bearer <access token>".to_owned(),
                    ),
                    Some(why) => (
                        format!(
                            "Bearer error=\"invalid_token\", error_description=\"{why}\", \
                             resource_metadata=\"{metadata}\", scope=\"{scope}\""
                        ),
                        format!("Unauthorized: {why}"),
                    ),
                };
                let body = error_body(&Value::Null, TRANSPORT_ERROR, &message);
                Some(Answer::json(401, body).header("WWW-Authenticate", challenge))
            }
        }
    }

    /// Answers a request to one of the OAuth paths (see [`Self::serves`]).
    pub(crate) fn endpoint(&self, request: &Request) -> Answer {
        let path = request.path();
        let get_only = [RESOURCE_METADATA_PATH, RESOURCE_METADATA_ROOT, SERVER_METADATA_PATH, STATS_PATH];
        if get_only.contains(&path) && request.method != "GET" {
            return Answer::method_not_allowed("GET");
        }
        match path {
            RESOURCE_METADATA_PATH | RESOURCE_METADATA_ROOT => Answer::json(200, self.resource_metadata()),
            SERVER_METADATA_PATH => Answer::json(200, self.server_metadata()),
            STATS_PATH => Answer::no_store(200, self.store().stats.to_json()),
            AUTHORIZE_PATH => self.authorize(request),
            TOKEN_PATH => self.token(request),
            REGISTER_PATH => self.register(request),
            _ => Answer::error(404, "invalid_request", format!("no OAuth endpoint at {path}")),
        }
    }

    /// RFC 9728 Protected Resource Metadata of `/mcp`.
    fn resource_metadata(&self) -> Value {
        json!({
            "resource": self.resource,
            "authorization_servers": [self.issuer],
            "scopes_supported": SCOPES,
            "bearer_methods_supported": ["header"],
            "resource_name": "mcp-demo-server",
        })
    }

    /// RFC 8414 Authorization Server Metadata.
    fn server_metadata(&self) -> Value {
        let issuer = &self.issuer;
        json!({
            "issuer": issuer,
            "authorization_endpoint": format!("{issuer}{AUTHORIZE_PATH}"),
            "token_endpoint": format!("{issuer}{TOKEN_PATH}"),
            "registration_endpoint": format!("{issuer}{REGISTER_PATH}"),
            "response_types_supported": ["code"],
            "grant_types_supported": GRANT_TYPES,
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": AuthMethod::ALL.map(AuthMethod::name),
            "scopes_supported": SCOPES,
            "client_id_metadata_document_supported": false,
            "authorization_response_iss_parameter_supported": true,
        })
    }

    /// A `resource` parameter (RFC 8707) must name `/mcp`, the only resource here.
    fn check_resource(&self, resource: Option<&str>) -> Result<(), String> {
        match resource {
            Some(resource) if resource != self.resource => {
                Err(format!("unknown resource {resource:?}; this server protects only {}", self.resource))
            }
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(method: &str, headers: &[(&str, &str)], body: &str) -> Request {
        Request {
            method: method.into(),
            target: "/mcp".into(),
            http10: false,
            headers: headers
                .iter()
                .map(|(name, value)| (name.to_ascii_lowercase(), value.as_bytes().to_vec()))
                .collect(),
            body: body.as_bytes().to_vec(),
        }
    }

    #[test]
    fn bearer_tokens() {
        let token =
            |value: &str| bearer_token(&request("GET", &[("Authorization", value)], "")).map(str::to_owned);
        assert_eq!(token("Bearer at.1.abc"), Some("at.1.abc".to_owned()));
        assert_eq!(token("bearer  a+b/c=="), Some("a+b/c==".to_owned()));
        assert_eq!(token("Basic YTpi"), None);
        assert_eq!(token("Bearer"), Some(String::new()));
        assert_eq!(token("Bearer a b"), Some(String::new()));
        assert_eq!(token("Bearer ==="), Some(String::new()));
        assert_eq!(bearer_token(&request("GET", &[], "")), None);
    }

    #[test]
    fn admin_calls_are_recognised() {
        let call = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"admin_echo"}}"#;
        assert!(calls_admin_tool(&request("POST", &[], call)));
        assert!(calls_admin_tool(&request("POST", &[], &format!("[{{}}, {call}]"))));
        assert!(!calls_admin_tool(&request("GET", &[], call)));
        assert!(!calls_admin_tool(&request("POST", &[], &call.replace("admin_echo", "echo"))));
        assert!(!calls_admin_tool(&request("POST", &[], "{not json")));
    }

    #[test]
    fn guard_without_a_token_points_at_the_metadata() {
        let oauth = OAuth::new(SocketAddr::from(([127, 0, 0, 1], 8080)), &OAuthOptions::default());
        let answer = oauth.guard(&request("POST", &[], "{}")).expect("refused");
        assert_eq!(answer.status, 401);
        assert_eq!(
            answer.headers,
            [(
                "WWW-Authenticate",
                "Bearer resource_metadata=\"http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp\", \
                 scope=\"mcp:tools\""
                    .to_owned()
            )]
        );
        let answer =
            oauth.guard(&request("POST", &[("Authorization", "Bearer nope")], "{}")).expect("refused");
        assert!(answer.headers[0].1.starts_with("Bearer error=\"invalid_token\""), "{answer:?}");
        assert_eq!(oauth.store().stats.mcp_unauthorized, 2);
    }
}
