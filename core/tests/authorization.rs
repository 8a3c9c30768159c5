//! OAuth on simulated time: an [`HttpSession`] with an [`Authorizer`] against a scripted MCP
//! server and authorization server (`World`), which answer every request the session makes
//! and count what they saw. Each test varies the world (where metadata lives, how clients are
//! identified, what tokens last) and checks what went on the wire and what the application saw.
#![allow(clippy::unwrap_used)]

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use common::{config, epoch, init_result};
use mcp_sansio::auth::{AuthConfig, AuthError, AuthEvent, Authorizer, ClientInfo, Credentials};
use mcp_sansio::http::{HttpAction, HttpConfig, HttpMethod, HttpRequest, HttpSession};
use mcp_sansio::schema::{CallTool, CallToolRequestParams};
use mcp_sansio::{CloseReason, Event, RequestError, RequestId, RequestOptions};
use serde_json::{Value, json};
use url::Url;

const MCP: &str = "https://mcp.test/mcp";
const REDIRECT: &str = "http://127.0.0.1:4321/callback";

/// Where the world publishes what, and how it behaves.
#[derive(Clone)]
struct Setup {
    /// `resource_metadata` in the 401's `WWW-Authenticate`.
    prm_in_header: bool,
    /// Where the resource metadata is served (a path on the MCP origin), if anywhere.
    prm_path: Option<&'static str>,
    /// The metadata's `resource` (left out when empty).
    prm_resource: String,
    prm_scopes: Option<Vec<&'static str>>,
    /// The authorization server's issuer (no metadata when `metadata_path` is `None`).
    issuer: String,
    /// Where its metadata is served (a path on the issuer's origin).
    metadata_path: Option<String>,
    /// The `issuer` the metadata states (normally `issuer`).
    metadata_issuer: Option<String>,
    /// Endpoints live under this URL (the issuer, or the MCP origin for the 2025-03-26 rules).
    endpoints_base: String,
    registration: bool,
    cimd: bool,
    pkce: bool,
    send_iss: bool,
    /// The scope the MCP server needs (in its 401), if any.
    required_scope: Option<&'static str>,
    /// A tool whose calls need this scope too (403 `insufficient_scope` otherwise).
    admin_scope: Option<&'static str>,
    /// Access token lifetime.
    token_ttl: Option<u64>,
    refresh_tokens: bool,
    /// Pre-registered clients (id → secret).
    clients: BTreeMap<String, String>,
    as_scopes: Option<Vec<&'static str>>,
    /// The most the authorization server grants, whatever is asked.
    grantable: Option<Vec<&'static str>>,
    /// The `access_token` every token response carries, instead of a fresh one.
    access_token: Option<&'static str>,
}

impl Default for Setup {
    fn default() -> Self {
        Setup {
            prm_in_header: true,
            prm_path: Some("/.well-known/oauth-protected-resource/mcp"),
            prm_resource: MCP.to_owned(),
            prm_scopes: None,
            issuer: "https://auth.test".to_owned(),
            metadata_path: Some("/.well-known/oauth-authorization-server".to_owned()),
            metadata_issuer: None,
            endpoints_base: "https://auth.test".to_owned(),
            registration: true,
            cimd: false,
            pkce: true,
            send_iss: true,
            required_scope: Some("mcp"),
            admin_scope: None,
            token_ttl: Some(3600),
            refresh_tokens: true,
            clients: BTreeMap::new(),
            as_scopes: None,
            grantable: None,
            access_token: None,
        }
    }
}

/// A token the world issued.
struct Issued {
    scope: BTreeSet<String>,
    expires: Option<Instant>,
}

/// The scripted servers.
struct World {
    setup: Setup,
    /// Every request, as `METHOD url`.
    log: Vec<String>,
    /// `Authorization` headers sent to anything but the MCP server.
    leaked: Vec<String>,
    tokens: BTreeMap<String, Issued>,
    refresh: BTreeMap<String, BTreeSet<String>>,
    codes: BTreeMap<String, (String, BTreeSet<String>)>,
    registered: BTreeMap<String, Option<String>>,
    next: u32,
    /// Every token request.
    token_requests: Vec<TokenRequest>,
    /// Query of every authorization URL the user was sent to.
    authorizations: Vec<BTreeMap<String, String>>,
    /// What the user does at the authorization page: approve (default), or redirect with
    /// something else.
    tamper: Option<Tamper>,
    /// The redirect URI registrations must carry (else [`REDIRECT`]).
    registration_redirect: Option<&'static str>,
    /// Requests to URLs starting with this get no answer at all.
    silent: Option<&'static str>,
    /// This path answers 200 with a body of a megabyte.
    huge: Option<&'static str>,
    /// The authorization server forgets every client it registered once the user authorized it.
    forgetful: bool,
    /// Each 403 for the `admin` tool asks for another scope (`admin1`, `admin2`, …).
    escalating: bool,
    /// `initialize` answers with an `Mcp-Session-Id`.
    session_ids: bool,
    /// Tool calls get no answer at all.
    hang_calls: bool,
    /// The 403s sent for the `admin` tool.
    scope_refusals: u32,
}

/// Where the user's browser goes instead of approving, given the authorization URL.
type Tamper = Box<dyn Fn(&str) -> String>;

/// A token request as the world saw it: the grant type, the form, the `Authorization` header.
type TokenRequest = (String, BTreeMap<String, String>, Option<String>);

struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
    /// The body ends (else it streams on for ever).
    ends: bool,
}

fn reply(status: u16, body: Value) -> Reply {
    Reply {
        status,
        headers: vec![("Content-Type".into(), "application/json".into())],
        body: body.to_string(),
        ends: true,
    }
}

fn query_of(url: &str) -> BTreeMap<String, String> {
    Url::parse(url).unwrap().query_pairs().map(|(k, v)| (k.into_owned(), v.into_owned())).collect()
}

fn form_of(body: &[u8]) -> BTreeMap<String, String> {
    url::form_urlencoded::parse(body).map(|(k, v)| (k.into_owned(), v.into_owned())).collect()
}

fn scopes(s: Option<&String>) -> BTreeSet<String> {
    s.map(|s| s.split_whitespace().map(str::to_owned).collect()).unwrap_or_default()
}

impl World {
    fn new(setup: Setup) -> Self {
        World {
            setup,
            log: Vec::new(),
            leaked: Vec::new(),
            tokens: BTreeMap::new(),
            refresh: BTreeMap::new(),
            codes: BTreeMap::new(),
            registered: BTreeMap::new(),
            next: 0,
            token_requests: Vec::new(),
            authorizations: Vec::new(),
            tamper: None,
            registration_redirect: None,
            silent: None,
            huge: None,
            forgetful: false,
            escalating: false,
            session_ids: false,
            hang_calls: false,
            scope_refusals: 0,
        }
    }

    fn fresh(&mut self, prefix: &str) -> String {
        self.next += 1;
        format!("{prefix}-{}", self.next)
    }

    fn count(&self, what: &str) -> usize {
        self.log.iter().filter(|l| l.contains(what)).count()
    }

    fn respond(&mut self, now: Instant, req: &HttpRequest) -> Option<Reply> {
        let call = String::from_utf8_lossy(req.body()).contains("\"tools/call\"");
        let silent = self.silent.is_some_and(|prefix| req.url().starts_with(prefix));
        if silent || (self.hang_calls && call) {
            self.log.push(format!("{} {} (no answer)", req.method(), req.url()));
            return None;
        }
        let url = Url::parse(req.url()).unwrap();
        if self.huge == Some(url.path()) {
            return Some(Reply {
                status: 200,
                headers: vec![("Content-Type".into(), "application/json".into())],
                body: format!("{{\"issuer\": \"{}\"}}", "x".repeat(1 << 20)),
                ends: false,
            });
        }
        Some(self.answer(now, req))
    }

    fn answer(&mut self, now: Instant, req: &HttpRequest) -> Reply {
        let url = Url::parse(req.url()).unwrap();
        self.log.push(format!("{} {}", req.method(), req.url()));
        let bare = format!("{}{}", url.origin().ascii_serialization(), url.path());
        if bare == MCP {
            return self.mcp(now, req);
        }
        if let Some(auth) = req.header("authorization").filter(|a| a.starts_with("Bearer")) {
            self.leaked.push(auth.to_owned());
        }
        let origin = url.origin().ascii_serialization();
        let s = self.setup.clone();
        if origin == "https://mcp.test" && Some(url.path()) == s.prm_path {
            let mut prm = json!({"resource": s.prm_resource, "authorization_servers": [s.issuer]});
            if s.prm_resource.is_empty() {
                prm.as_object_mut().unwrap().remove("resource");
            }
            if let Some(scopes) = &s.prm_scopes {
                prm["scopes_supported"] = json!(scopes);
            }
            return reply(200, prm);
        }
        let issuer_origin = Url::parse(&s.issuer).unwrap().origin().ascii_serialization();
        if origin == issuer_origin && s.metadata_path.as_deref() == Some(url.path()) {
            let base = &s.endpoints_base;
            let mut metadata = json!({
                "issuer": s.metadata_issuer.clone().unwrap_or(s.issuer.clone()),
                "authorization_endpoint": format!("{base}/authorize"),
                "token_endpoint": format!("{base}/token"),
                "response_types_supported": ["code"],
                "token_endpoint_auth_methods_supported": ["none", "client_secret_basic", "client_secret_post"],
                "client_id_metadata_document_supported": s.cimd,
                "authorization_response_iss_parameter_supported": s.send_iss,
            });
            if s.registration {
                metadata["registration_endpoint"] = json!(format!("{base}/register"));
            }
            if s.pkce {
                metadata["code_challenge_methods_supported"] = json!(["S256"]);
            }
            if let Some(scopes) = &s.as_scopes {
                metadata["scopes_supported"] = json!(scopes);
            }
            return reply(200, metadata);
        }
        let endpoint = req.url().strip_prefix(&s.endpoints_base).unwrap_or("");
        match (req.method(), endpoint) {
            (HttpMethod::Post, "/register") if s.registration => {
                let body: Value = serde_json::from_slice(req.body()).unwrap();
                assert_eq!(body["redirect_uris"], json!([self.registration_redirect.unwrap_or(REDIRECT)]));
                assert!(body["grant_types"].as_array().unwrap().contains(&json!("refresh_token")));
                let id = self.fresh("client");
                self.registered.insert(id.clone(), None);
                reply(201, json!({"client_id": id, "token_endpoint_auth_method": "none"}))
            }
            (HttpMethod::Post, "/token") => self.token(now, req),
            _ => Reply { status: 404, headers: Vec::new(), body: "not found".into(), ends: true },
        }
    }

    /// The authorization page: the user approves, the server redirects. A client the server
    /// does not know gets an error page and no redirect (RFC 6749 §4.1.2.1): `None`.
    fn authorize(&mut self, url: &str) -> Option<String> {
        self.log.push(format!("GET {url}"));
        let q = query_of(url);
        self.authorizations.push(q.clone());
        if let Some(tamper) = &self.tamper {
            return Some(tamper(url));
        }
        assert_eq!(q["response_type"], "code");
        assert_eq!(q["code_challenge_method"], "S256");
        assert_eq!(q["redirect_uri"], self.registration_redirect.unwrap_or(REDIRECT));
        if !self.knows(&q["client_id"]) {
            return None;
        }
        if self.forgetful {
            self.registered.clear();
        }
        let code = self.fresh("code");
        let mut granted = scopes(q.get("scope"));
        if let Some(cap) = &self.setup.grantable {
            granted.retain(|s| cap.contains(&s.as_str()));
        }
        self.codes.insert(code.clone(), (q["code_challenge"].clone(), granted));
        let mut redirect = Url::parse(&q["redirect_uri"]).unwrap();
        redirect.query_pairs_mut().append_pair("code", &code).append_pair("state", &q["state"]);
        if self.setup.send_iss {
            redirect.query_pairs_mut().append_pair("iss", &self.setup.issuer);
        }
        Some(redirect.into())
    }

    /// Whether the authorization server knows this client: registered, pre-registered, or a
    /// metadata document URL.
    fn knows(&self, client: &str) -> bool {
        self.registered.contains_key(client)
            || self.setup.clients.contains_key(client)
            || client.starts_with("https://")
    }

    fn token(&mut self, now: Instant, req: &HttpRequest) -> Reply {
        let form = form_of(req.body());
        let basic = req.header("authorization").map(str::to_owned);
        let grant = form.get("grant_type").cloned().unwrap_or_default();
        self.token_requests.push((grant.clone(), form.clone(), basic.clone()));
        if let Some(basic) = &basic {
            let decoded =
                String::from_utf8(mcp_sansio_base64(basic.strip_prefix("Basic ").unwrap())).unwrap();
            let (id, secret) = decoded.split_once(':').unwrap();
            if self.setup.clients.get(id).map(String::as_str) != Some(secret) {
                return reply(401, json!({"error": "invalid_client"}));
            }
        } else if form.get("client_id").is_some_and(|id| !self.knows(id)) {
            return reply(401, json!({"error": "invalid_client"}));
        }
        let granted = match grant.as_str() {
            "authorization_code" => {
                let Some((challenge, scope)) = self.codes.remove(&form["code"]) else {
                    return reply(400, json!({"error": "invalid_grant"}));
                };
                use sha2::Digest;
                let digest = sha2::Sha256::digest(form["code_verifier"].as_bytes());
                assert_eq!(challenge, base64url(&digest), "PKCE verifier does not match");
                assert_eq!(form["resource"], self.setup.prm_resource);
                scope
            }
            "refresh_token" => match self.refresh.remove(&form["refresh_token"]) {
                Some(scope) => scope,
                None => return reply(400, json!({"error": "invalid_grant"})),
            },
            "client_credentials" => scopes(form.get("scope")),
            _ => return reply(400, json!({"error": "unsupported_grant_type"})),
        };
        let access = self.setup.access_token.map_or_else(|| self.fresh("token"), str::to_owned);
        let expires = self.setup.token_ttl.map(|s| now + Duration::from_secs(s));
        self.tokens.insert(access.clone(), Issued { scope: granted.clone(), expires });
        let mut body = json!({"access_token": access, "token_type": "Bearer"});
        if let Some(ttl) = self.setup.token_ttl {
            body["expires_in"] = json!(ttl);
        }
        if self.setup.refresh_tokens && grant != "client_credentials" {
            let refresh = self.fresh("refresh");
            self.refresh.insert(refresh.clone(), granted.clone());
            body["refresh_token"] = json!(refresh);
        }
        if !granted.is_empty() {
            body["scope"] = json!(granted.iter().cloned().collect::<Vec<_>>().join(" "));
        }
        reply(200, body)
    }

    fn challenge(&self, error: Option<&str>, scope: Option<&str>) -> String {
        let mut parts = Vec::new();
        if let Some(error) = error {
            parts.push(format!("error=\"{error}\""));
        }
        if let Some(scope) = scope {
            parts.push(format!("scope=\"{scope}\""));
        }
        if self.setup.prm_in_header {
            if let Some(path) = self.setup.prm_path {
                parts.push(format!("resource_metadata=\"https://mcp.test{path}\""));
            }
        }
        format!("Bearer {}", parts.join(", "))
    }

    fn mcp(&mut self, now: Instant, req: &HttpRequest) -> Reply {
        let token = req.header("authorization").and_then(|a| a.strip_prefix("Bearer ")).map(str::to_owned);
        let message: Value = serde_json::from_slice(req.body()).unwrap_or(Value::Null);
        let method = message["method"].as_str().unwrap_or("").to_owned();
        let required = self.setup.required_scope;
        let unauthorized = |world: &World, error: Option<&str>| Reply {
            status: 401,
            headers: vec![("WWW-Authenticate".into(), world.challenge(error, required))],
            body: json!({"error": "invalid_token"}).to_string(),
            ends: true,
        };
        let Some(token) = token else { return unauthorized(self, None) };
        let Some(issued) = self.tokens.get(&token) else { return unauthorized(self, Some("invalid_token")) };
        if issued.expires.is_some_and(|at| at <= now) {
            return unauthorized(self, Some("invalid_token"));
        }
        let name = message["params"]["name"].as_str().unwrap_or("");
        if let (Some(admin), "tools/call", "admin") = (self.setup.admin_scope, method.as_str(), name) {
            let admin = if self.escalating {
                format!("{admin}{}", self.scope_refusals + 1)
            } else {
                admin.to_owned()
            };
            if !issued.scope.contains(&admin) {
                self.scope_refusals += 1;
                let scope = format!("{} {admin}", required.unwrap_or(""));
                return Reply {
                    status: 403,
                    headers: vec![(
                        "WWW-Authenticate".into(),
                        self.challenge(Some("insufficient_scope"), Some(scope.trim())),
                    )],
                    body: json!({"error": "insufficient_scope"}).to_string(),
                    ends: true,
                };
            }
        }
        let id = message["id"].clone();
        let result = match method.as_str() {
            "initialize" => {
                let mut headers = vec![("Content-Type".into(), "application/json".into())];
                if self.session_ids {
                    headers.push(("Mcp-Session-Id".into(), self.fresh("session")));
                }
                return Reply {
                    status: 200,
                    headers,
                    body: init_result("2025-11-25", json!({"tools": {}})),
                    ends: true,
                };
            }
            "tools/call" => json!({"content": [{"type": "text", "text": "ok"}]}),
            _ if id.is_null() => {
                return Reply { status: 202, headers: Vec::new(), body: String::new(), ends: true };
            }
            _ => json!({}),
        };
        reply(200, json!({"jsonrpc": "2.0", "id": id, "result": result}))
    }
}

/// RFC 4648 base64url without padding (for the PKCE check).
fn base64url(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            out.push(char::from(A[(n >> (18 - 6 * i)) as usize & 63]));
        }
    }
    out
}

/// Standard base64 decoding (for HTTP Basic).
fn mcp_sansio_base64(text: &str) -> Vec<u8> {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut bits = 0u32;
    let mut n = 0;
    let mut out = Vec::new();
    for c in text.bytes().filter(|&c| c != b'=') {
        bits = bits << 6 | A.iter().position(|&a| a == c).unwrap() as u32;
        n += 6;
        if n >= 8 {
            n -= 8;
            out.push((bits >> n) as u8);
        }
    }
    out
}

/// Deterministic "randomness" for the tests.
fn counter_random() -> Box<dyn mcp_sansio::auth::SecureRandom> {
    let mut n = 0u8;
    Box::new(move |buf: &mut [u8]| {
        for b in buf {
            n = n.wrapping_add(37);
            *b = n;
        }
    })
}

/// A session with an authorizer, wired to a world.
struct Net {
    session: HttpSession,
    world: World,
    now: Instant,
    events: Vec<Event>,
    auth_events: Vec<AuthEvent>,
    /// Redirects handed back, and what `handle_authorization_redirect` said.
    redirects: Vec<Result<(), AuthError>>,
    /// Answer the authorization page (else leave the user away).
    user_returns: bool,
}

impl Net {
    fn new(setup: Setup, auth: AuthConfig) -> Self {
        Self::with_credentials(setup, auth, None)
    }

    fn with_credentials(setup: Setup, auth: AuthConfig, credentials: Option<Credentials>) -> Self {
        let now = epoch();
        let http = HttpConfig::new(MCP).standalone_stream(false);
        let mut authorizer = Authorizer::new(MCP, auth, counter_random());
        if let Some(credentials) = credentials {
            authorizer.restore(now, 1_000_000, credentials);
        }
        let session = HttpSession::new(http, config(), now).with_authorizer(authorizer);
        Net {
            session,
            world: World::new(setup),
            now,
            events: Vec::new(),
            auth_events: Vec::new(),
            redirects: Vec::new(),
            user_returns: true,
        }
    }

    /// Runs until nothing moves: every request the session makes is answered (all those of a
    /// round first, then the next round's), and the user approves every authorization.
    fn run(&mut self) {
        loop {
            let mut batch = Vec::new();
            while let Some(action) = self.session.poll_action(self.now) {
                if let HttpAction::Send(request) = action {
                    batch.push(request);
                }
            }
            let mut moved = !batch.is_empty();
            for request in batch {
                let Some(r) = self.world.respond(self.now, &request) else { continue };
                if std::env::var("AUTH_DEBUG").is_ok() {
                    eprintln!(
                        "{} {} -> {} {:?} auth={:?}",
                        request.method(),
                        request.url().split('?').next().unwrap(),
                        r.status,
                        String::from_utf8_lossy(request.body()).chars().take(60).collect::<String>(),
                        request.header("authorization")
                    );
                }
                let headers: Vec<(&str, &[u8])> =
                    r.headers.iter().map(|(n, v)| (n.as_str(), v.as_bytes())).collect();
                self.session.handle_response_head(self.now, request.stream(), r.status, headers);
                self.session.handle_response_body(self.now, request.stream(), r.body.as_bytes());
                if r.ends {
                    self.session.handle_response_end(self.now, request.stream());
                }
            }
            while let Some(event) = self.session.poll_auth_event() {
                moved = true;
                if let (AuthEvent::AuthorizationRequired { url }, true) = (&event, self.user_returns) {
                    if let Some(redirect) = self.world.authorize(url) {
                        let outcome = self.session.handle_authorization_redirect(self.now, &redirect);
                        self.redirects.push(outcome);
                    }
                }
                self.auth_events.push(event);
            }
            while let Some(event) = self.session.poll_event() {
                moved = true;
                self.events.push(event);
            }
            if !moved {
                return;
            }
        }
    }

    fn advance(&mut self, by: Duration) {
        self.now += by;
        if self.session.poll_timeout().is_some_and(|at| at <= self.now) {
            self.session.handle_timeout(self.now);
        }
        self.run();
    }

    fn ready(&self) -> bool {
        self.events.iter().any(|e| matches!(e, Event::Ready { .. }))
    }

    fn closed(&self) -> Option<&CloseReason> {
        self.events.iter().find_map(|e| match e {
            Event::Closed(reason) => Some(reason),
            _ => None,
        })
    }

    fn call(&mut self, tool: &str) -> RequestId {
        let params = CallToolRequestParams::new(tool);
        self.session.commands().send::<CallTool>(self.now, &params, RequestOptions::default()).unwrap()
    }

    fn outcome(&self, id: &RequestId) -> Option<Result<(), RequestError>> {
        self.events.iter().find_map(|e| match e {
            Event::Response { id: got, result } if got == id => {
                Some(result.as_ref().map(|_| ()).map_err(Clone::clone))
            }
            _ => None,
        })
    }

    fn failed(&self) -> Option<&AuthError> {
        self.auth_events.iter().find_map(|e| match e {
            AuthEvent::Failed(error) => Some(error),
            _ => None,
        })
    }
}

fn interactive() -> AuthConfig {
    AuthConfig::authorization_code(REDIRECT).client_name("tests")
}

/// The whole flow with the world as set up: ready, and a tool call that succeeds.
fn authorizes(setup: Setup, auth: AuthConfig) -> Net {
    let mut net = Net::new(setup, auth);
    net.run();
    assert!(net.ready(), "not ready: {:?} {:?}\n{:#?}", net.closed(), net.failed(), net.world.log);
    let id = net.call("echo");
    net.run();
    assert_eq!(net.outcome(&id), Some(Ok(())));
    assert!(net.world.leaked.is_empty(), "a bearer token went elsewhere: {:?}", net.world.leaked);
    net
}

// ----- discovery -----

#[test]
fn discovers_through_the_header_and_registers_dynamically() {
    let net = authorizes(Setup::default(), interactive());
    let w = &net.world;
    assert_eq!(w.count("/.well-known/oauth-protected-resource/mcp"), 1);
    assert_eq!(w.count("/.well-known/oauth-authorization-server"), 1);
    assert_eq!(w.count("POST https://auth.test/register"), 1);
    assert_eq!(w.authorizations.len(), 1);
    let q = &w.authorizations[0];
    assert_eq!(q["resource"], MCP);
    assert_eq!(q["scope"], "mcp");
    assert_eq!(q["code_challenge"].len(), 43);
    assert_eq!(w.token_requests.len(), 1);
    // initialize: once without a token (401), once with.
    assert_eq!(w.count("POST https://mcp.test/mcp"), 4, "{:#?}", w.log);
    assert!(net.auth_events.contains(&AuthEvent::Authorized));
    assert!(net.auth_events.contains(&AuthEvent::CredentialsChanged));
}

#[test]
fn finds_resource_metadata_at_the_path_based_well_known_uri() {
    let setup = Setup { prm_in_header: false, ..Setup::default() };
    let net = authorizes(setup, interactive());
    assert_eq!(net.world.count("/.well-known/oauth-protected-resource/mcp"), 1);
    assert_eq!(net.world.count("GET https://mcp.test/.well-known/oauth-protected-resource\n"), 0);
}

#[test]
fn falls_back_to_the_root_well_known_uri() {
    let setup = Setup {
        prm_in_header: false,
        prm_path: Some("/.well-known/oauth-protected-resource"),
        prm_resource: "https://mcp.test".to_owned(),
        ..Setup::default()
    };
    let net = authorizes(setup, interactive());
    let log = &net.world.log;
    let path_based = log.iter().position(|l| l.ends_with("/oauth-protected-resource/mcp")).unwrap();
    let root = log.iter().position(|l| l.ends_with("/oauth-protected-resource")).unwrap();
    assert!(path_based < root);
    // The resource indicator is the metadata's, byte for byte (no slash added).
    assert_eq!(net.world.authorizations[0]["resource"], "https://mcp.test");
}

#[test]
fn server_metadata_with_a_path_tries_the_inserted_then_the_appended_forms() {
    for (path, tried_before) in [
        ("/.well-known/oauth-authorization-server/tenant1", 0),
        ("/.well-known/openid-configuration/tenant1", 1),
        ("/tenant1/.well-known/openid-configuration", 2),
    ] {
        let setup = Setup {
            issuer: "https://auth.test/tenant1".to_owned(),
            endpoints_base: "https://auth.test/tenant1".to_owned(),
            metadata_path: Some(path.to_owned()),
            ..Setup::default()
        };
        let net = authorizes(setup, interactive());
        let metadata_requests =
            net.world.log.iter().filter(|l| l.contains("well-known/o") && !l.contains("protected")).count();
        assert_eq!(metadata_requests, tried_before + 1, "{path}: {:#?}", net.world.log);
        // Never the root: the issuer has a path.
        assert_eq!(net.world.count("https://auth.test/.well-known/oauth-authorization-server\n"), 0);
        assert!(!net.world.log.iter().any(|l| l.ends_with("test/.well-known/oauth-authorization-server")));
    }
}

#[test]
fn without_resource_metadata_the_server_origin_is_the_authorization_server() {
    // 2025-03-26: metadata at the server's origin; its own issuer, at that origin under a path,
    // is taken as is (the official runner 0.1.16's back-compat scenario serves such metadata).
    let setup = Setup {
        prm_in_header: false,
        prm_path: None,
        prm_resource: MCP.to_owned(),
        issuer: "https://mcp.test".to_owned(),
        metadata_issuer: Some("https://mcp.test/oauth".to_owned()),
        endpoints_base: "https://mcp.test/oauth".to_owned(),
        send_iss: false,
        ..Setup::default()
    };
    let net = authorizes(setup, interactive());
    assert_eq!(net.world.count("POST https://mcp.test/oauth/register"), 1);
    assert_eq!(net.world.authorizations[0]["resource"], MCP);
}

#[test]
fn without_resource_metadata_server_metadata_for_another_origin_is_refused() {
    // RFC 8414 §3.3: metadata fetched for the issuer https://mcp.test that names another issuer
    // is not used. (One at the same origin under a path is kept for the 2025-03-26 rules, as
    // the test above shows.)
    let setup = Setup {
        prm_in_header: false,
        prm_path: None,
        issuer: "https://mcp.test".to_owned(),
        metadata_issuer: Some("https://evil.test".to_owned()),
        endpoints_base: "https://evil.test".to_owned(),
        send_iss: false,
        ..Setup::default()
    };
    let mut net = Net::new(setup, interactive());
    net.run();
    let mismatch =
        AuthError::IssuerMismatch { expected: "https://mcp.test".into(), found: "https://evil.test".into() };
    assert_eq!(net.world.count("evil.test"), 0, "{:#?}", net.world.log);
    assert_eq!(net.failed(), Some(&mismatch));
    assert!(net.world.authorizations.is_empty());
}

#[test]
fn without_any_metadata_the_default_endpoints_are_used() {
    let setup = Setup {
        prm_in_header: false,
        prm_path: None,
        issuer: "https://mcp.test".to_owned(),
        metadata_path: None,
        endpoints_base: "https://mcp.test".to_owned(),
        send_iss: false,
        ..Setup::default()
    };
    let net = authorizes(setup, interactive());
    assert_eq!(net.world.count("POST https://mcp.test/register"), 1);
    assert_eq!(net.world.count("POST https://mcp.test/token"), 1);
}

#[test]
fn a_resource_mismatch_stops_before_anything_is_sent_to_the_authorization_server() {
    let setup = Setup { prm_resource: "https://evil.test/mcp".to_owned(), ..Setup::default() };
    let mut net = Net::new(setup, interactive());
    net.run();
    assert!(matches!(net.failed(), Some(AuthError::ResourceMismatch { .. })));
    assert!(matches!(net.closed(), Some(CloseReason::Unauthorized(AuthError::ResourceMismatch { .. }))));
    assert_eq!(net.world.count("auth.test"), 0, "{:#?}", net.world.log);
    assert!(net.world.authorizations.is_empty());
}

#[test]
fn resource_metadata_without_a_resource_is_not_used() {
    // RFC 9728 §2: `resource` is required; without it nothing shows the metadata is this
    // server's, and its authorization server (here a foreign one) gets nothing.
    let setup = Setup {
        prm_resource: String::new(),
        issuer: "https://foreign.test".to_owned(),
        endpoints_base: "https://foreign.test".to_owned(),
        ..Setup::default()
    };
    let mut net = Net::new(setup, interactive());
    net.run();
    assert_eq!(net.world.count("foreign.test"), 0, "{:#?}", net.world.log);
    let prm = "https://mcp.test/.well-known/oauth-protected-resource/mcp";
    assert_eq!(net.failed(), Some(&AuthError::ResourceMissing { url: prm.to_owned() }));
    assert!(net.failed().unwrap().to_string().contains("names no resource"));
    assert!(matches!(net.closed(), Some(CloseReason::Unauthorized(AuthError::ResourceMissing { .. }))));
    assert!(net.world.authorizations.is_empty() && net.world.token_requests.is_empty());
}

#[test]
fn an_issuer_mismatch_stops_before_registration() {
    let setup = Setup { metadata_issuer: Some("https://attacker.test".to_owned()), ..Setup::default() };
    let mut net = Net::new(setup, interactive());
    net.run();
    assert!(matches!(net.failed(), Some(AuthError::IssuerMismatch { .. })));
    assert_eq!(net.world.count("/register"), 0);
    assert!(net.world.authorizations.is_empty());
}

#[test]
fn a_server_without_pkce_s256_is_refused() {
    let setup = Setup { pkce: false, ..Setup::default() };
    let mut net = Net::new(setup, interactive());
    net.run();
    assert_eq!(net.failed(), Some(&AuthError::PkceUnsupported));
    assert!(net.world.authorizations.is_empty());
}

#[test]
fn plain_http_to_a_remote_host_is_refused_before_anything_is_sent() {
    let now = epoch();
    let url = "http://mcp.example/mcp";
    let authorizer = Authorizer::new(url, interactive(), counter_random());
    assert_eq!(authorizer.check(), Err(AuthError::InsecureEndpoint(url.to_owned())));
    let mut session = HttpSession::new(HttpConfig::new(url), config(), now).with_authorizer(authorizer);
    let Some(HttpAction::Send(init)) = session.poll_action(now) else { panic!() };
    let challenge: Vec<(&str, &[u8])> = vec![("WWW-Authenticate", b"Bearer")];
    session.handle_response_head(now, init.stream(), 401, challenge);
    while session.poll_action(now).is_some() {}
    let events: Vec<Event> = std::iter::from_fn(|| session.poll_event()).collect();
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::Closed(CloseReason::Unauthorized(AuthError::InsecureEndpoint(_))))),
        "{events:?}"
    );
}

#[test]
fn an_endpoint_that_is_not_http_is_refused_naming_its_scheme() {
    for (base, scheme) in
        [("javascript:alert(1)", "javascript"), ("file:///etc", "file"), ("data:text/plain,x", "data")]
    {
        let setup = Setup { endpoints_base: base.to_owned(), ..Setup::default() };
        let mut net = Net::new(setup, interactive());
        net.run();
        let Some(error @ AuthError::InsecureEndpoint(url)) = net.failed() else {
            panic!("{base}: {:?}", net.failed())
        };
        assert!(url.starts_with(base), "{url}");
        let message = error.to_string();
        assert!(message.contains(&format!("{scheme}:")), "{message}");
        assert!(!message.contains("plain http"), "{message}");
        assert!(net.world.authorizations.is_empty());
    }
    // Plain http to a remote host is still called that.
    let error = AuthError::InsecureEndpoint("http://as.example/token".to_owned());
    assert!(error.to_string().contains("over plain http"), "{error}");
}

// ----- client identity -----

#[test]
fn a_pre_registered_client_authenticates_with_basic_and_skips_registration() {
    let mut setup = Setup::default();
    setup.clients.insert("app".to_owned(), "s3cret".to_owned());
    setup.registration = false;
    let net = authorizes(setup, interactive().client(ClientInfo::confidential("app", "s3cret")));
    assert_eq!(net.world.count("/register"), 0);
    let (grant, form, basic) = &net.world.token_requests[0];
    assert_eq!(grant, "authorization_code");
    assert!(basic.as_deref().is_some_and(|b| b.starts_with("Basic ")));
    assert!(!form.contains_key("client_secret"));
    assert_eq!(net.world.authorizations[0]["client_id"], "app");
}

#[test]
fn a_client_metadata_document_url_is_the_client_id_where_the_server_takes_one() {
    let doc = "https://app.test/client.json";
    let setup = Setup { cimd: true, ..Setup::default() };
    let net = authorizes(setup, interactive().client_metadata_url(doc));
    assert_eq!(net.world.count("/register"), 0);
    assert_eq!(net.world.authorizations[0]["client_id"], doc);
    assert_eq!(net.world.token_requests[0].1["client_id"], doc);
    // Without the server's support, the client registers instead.
    let net = authorizes(Setup::default(), interactive().client_metadata_url(doc));
    assert_eq!(net.world.count("/register"), 1);
}

#[test]
fn no_way_to_identify_the_client_fails_typed() {
    let setup = Setup { registration: false, ..Setup::default() };
    let mut net = Net::new(setup, interactive());
    net.run();
    assert!(matches!(net.failed(), Some(AuthError::NoClientIdentity(_))));
}

#[test]
fn client_credentials_need_no_user() {
    let mut setup = Setup::default();
    setup.clients.insert("svc".to_owned(), "pw".to_owned());
    let net = authorizes(setup, AuthConfig::client_credentials(ClientInfo::confidential("svc", "pw")));
    assert!(net.world.authorizations.is_empty());
    assert_eq!(net.world.token_requests[0].0, "client_credentials");
    assert_eq!(net.world.token_requests[0].1["scope"], "mcp");
}

// ----- the redirect -----

#[test]
fn a_redirect_with_another_state_is_refused_and_no_token_is_requested() {
    let mut net = Net::new(Setup::default(), interactive());
    net.world.tamper =
        Some(Box::new(|_| format!("{REDIRECT}?code=x&state=forged&iss=https%3A%2F%2Fauth.test")));
    net.run();
    assert!(matches!(net.redirects[..], [Err(AuthError::InvalidRedirect(_))]));
    assert!(net.world.token_requests.is_empty());
    assert!(matches!(net.closed(), Some(CloseReason::Unauthorized(_))));
}

#[test]
fn the_issuer_of_the_redirect_is_compared_as_a_string() {
    for iss in [Some("https://auth.test/"), Some("https://evil.test"), None] {
        let mut net = Net::new(Setup::default(), interactive());
        net.world.tamper = Some(Box::new(move |url| {
            let q = query_of(url);
            let mut redirect = format!("{REDIRECT}?code=c&state={}", q["state"]);
            if let Some(iss) = iss {
                redirect.push_str(&format!("&iss={iss}"));
            }
            redirect
        }));
        net.run();
        assert!(
            matches!(net.redirects[..], [Err(AuthError::IssuerMixUp { .. })]),
            "{iss:?}: {:?}",
            net.redirects
        );
        assert!(net.world.token_requests.is_empty());
    }
}

#[test]
fn a_refusal_by_the_user_fails_what_waits_with_the_servers_error() {
    let mut net = Net::new(Setup::default(), interactive());
    net.world.tamper = Some(Box::new(|url| {
        let q = query_of(url);
        format!("{REDIRECT}?error=access_denied&state={}&iss=https://auth.test", q["state"])
    }));
    net.run();
    let denied = AuthError::AuthorizationDenied { error: "access_denied".into(), description: None };
    assert_eq!(net.closed(), Some(&CloseReason::Unauthorized(denied)));
}

#[test]
fn a_user_who_never_comes_back_fails_the_authorization_at_its_deadline() {
    let auth = interactive().authorization_timeout(Duration::from_secs(120));
    let mut net = Net::new(Setup::default(), auth);
    net.user_returns = false;
    net.run();
    assert!(net.auth_events.iter().any(|e| matches!(e, AuthEvent::AuthorizationRequired { .. })));
    assert!(net.session.poll_timeout().is_some());
    net.advance(Duration::from_secs(121));
    assert_eq!(net.failed(), Some(&AuthError::AuthorizationTimeout(Duration::from_secs(120))));
    assert!(net.closed().is_some());
}

// ----- scopes -----

#[test]
fn scope_comes_from_the_challenge_else_the_resource_metadata_else_none() {
    let net = authorizes(Setup::default(), interactive());
    assert_eq!(net.world.authorizations[0]["scope"], "mcp");
    let setup = Setup { required_scope: None, prm_scopes: Some(vec!["a", "b"]), ..Setup::default() };
    let net = authorizes(setup, interactive());
    assert_eq!(net.world.authorizations[0]["scope"], "a b");
    let setup = Setup { required_scope: None, ..Setup::default() };
    let net = authorizes(setup, interactive());
    assert!(!net.world.authorizations[0].contains_key("scope"));
    // offline_access only where the authorization server offers it.
    let setup = Setup { as_scopes: Some(vec!["mcp", "offline_access"]), ..Setup::default() };
    let net = authorizes(setup, interactive());
    assert_eq!(net.world.authorizations[0]["scope"], "mcp offline_access");
}

#[test]
fn insufficient_scope_steps_up_with_the_union_and_retries_once() {
    let setup = Setup { admin_scope: Some("admin"), ..Setup::default() };
    let mut net = authorizes(setup, interactive());
    let id = net.call("admin");
    net.run();
    assert_eq!(net.outcome(&id), Some(Ok(())));
    assert_eq!(net.world.authorizations.len(), 2);
    assert_eq!(net.world.authorizations[1]["scope"], "mcp admin");
    let admin_calls = net.world.log.iter().filter(|l| l.starts_with("POST https://mcp.test/mcp")).count();
    // initialize ×2, initialized, echo, admin ×2.
    assert_eq!(admin_calls, 6, "{:#?}", net.world.log);
}

#[test]
fn step_ups_stop_at_the_limit() {
    // Every 403 asks for a scope never asked for before: each is a step-up, up to the limit.
    let setup = Setup { admin_scope: Some("admin"), ..Setup::default() };
    let mut net = authorizes(setup, interactive().max_step_ups(2));
    net.world.escalating = true;
    let id = net.call("admin");
    net.run();
    let outcome = net.outcome(&id).unwrap();
    assert!(
        matches!(outcome, Err(RequestError::Unauthorized(AuthError::InsufficientScope { attempts: 2, .. }))),
        "{outcome:?}"
    );
    // The first authorization, then two step-ups.
    assert_eq!(net.world.authorizations.len(), 3);
    // A later call that succeeds resets the count.
    let id = net.call("echo");
    net.run();
    assert_eq!(net.outcome(&id), Some(Ok(())));
}

// ----- token responses -----

#[test]
fn an_access_token_that_cannot_go_in_a_header_is_refused_at_the_token_response() {
    // RFC 6750 §2.1: b64token. A CR or LF would split the header; a space or a byte outside
    // ASCII makes an invalid one (hyper refuses it, later, as a retriable transport error).
    for bad in ["tok\r\nX-Injected: 1", "tok en", "t\u{f6}k", "=abc", "tok\"en"] {
        let setup = Setup { access_token: Some(bad), ..Setup::default() };
        let mut net = Net::new(setup, interactive());
        net.run();
        let failed = net.failed().cloned();
        let Some(AuthError::InvalidResponse { endpoint, detail }) = &failed else {
            panic!("{bad:?}: {failed:?}\n{:#?}", net.world.log)
        };
        assert_eq!(*endpoint, "the token endpoint");
        assert!(detail.contains("b64token"), "{detail}");
        assert!(!detail.contains(bad), "the token is a secret: {detail}");
        assert!(!failed.as_ref().unwrap().is_retriable());
        assert!(matches!(net.closed(), Some(CloseReason::Unauthorized(AuthError::InvalidResponse { .. }))));
        // Only the first initialize, without a token, went to the server.
        assert_eq!(net.world.count("POST https://mcp.test/mcp"), 1, "{bad:?}: {:#?}", net.world.log);
        assert_eq!(net.world.token_requests.len(), 1);
    }
    // Padding is part of b64token.
    let net = authorizes(Setup { access_token: Some("a-b.c_d~e+f/g=="), ..Setup::default() }, interactive());
    assert!(net.failed().is_none());
}

#[test]
fn an_empty_access_token_is_refused_saying_so() {
    let setup = Setup { access_token: Some(""), ..Setup::default() };
    let mut net = Net::new(setup, interactive());
    net.run();
    let Some(AuthError::InvalidResponse { detail, .. }) = net.failed() else { panic!("{:?}", net.failed()) };
    assert!(detail.contains("empty access_token"), "{detail}");
    assert_eq!(net.world.count("POST https://mcp.test/mcp"), 1, "{:#?}", net.world.log);
}

#[test]
fn a_stored_access_token_that_cannot_go_in_a_header_is_not_used() {
    let mut first = authorizes(Setup::default(), interactive());
    let mut credentials = first.session.credentials(first.now, 1_000_000).unwrap();
    let tokens = credentials.tokens.as_mut().unwrap();
    tokens.access_token = mcp_sansio::auth::Secret::new("tok\r\nX-Injected: 1");
    let world = std::mem::replace(&mut first.world, World::new(Setup::default()));
    let mut net = Net::with_credentials(Setup::default(), interactive(), Some(credentials));
    net.world = world;
    let Some(HttpAction::Send(init)) = net.session.poll_action(net.now) else { panic!() };
    assert_eq!(init.header("authorization"), None, "the corrupt token is not sent");
}

#[test]
fn a_step_up_that_did_not_help_is_not_repeated() {
    // The server never grants `admin`. The first admin call steps up once; the 403 that comes
    // back asks for nothing the client has not asked for, so the call fails. Later admin calls
    // fail the same way at once, successes in between or not: no authorization runs again.
    let setup = Setup { admin_scope: Some("admin"), grantable: Some(vec!["mcp"]), ..Setup::default() };
    let mut net = authorizes(setup, interactive());
    for round in 0..3 {
        let id = net.call("admin");
        net.run();
        let outcome = net.outcome(&id).unwrap();
        // The first fails after its step-up; the later ones at once, remembered (the test
        // below).
        assert!(
            match &outcome {
                Err(RequestError::Unauthorized(AuthError::InsufficientScope { scope: Some(s), .. })) =>
                    round == 0 && s == "mcp admin",
                Err(RequestError::Unauthorized(AuthError::ScopeRefusedRecently {
                    scope: Some(s), ..
                })) => round > 0 && s == "mcp admin",
                _ => false,
            },
            "round {round}: {outcome:?}"
        );
        let id = net.call("echo");
        net.run();
        assert_eq!(net.outcome(&id), Some(Ok(())));
    }
    // The first authorization and one step-up (7 before: two step-ups per call).
    assert_eq!(net.world.authorizations.len(), 2, "{:#?}", net.world.authorizations);
}

// ----- tokens: expiry and refresh -----

#[test]
fn an_expired_token_is_refreshed_before_the_request_goes() {
    let mut net = authorizes(Setup::default(), interactive());
    net.advance(Duration::from_secs(3600));
    let id = net.call("echo");
    net.run();
    assert_eq!(net.outcome(&id), Some(Ok(())));
    let grants: Vec<&str> = net.world.token_requests.iter().map(|(g, _, _)| g.as_str()).collect();
    assert_eq!(grants, ["authorization_code", "refresh_token"]);
    assert_eq!(net.world.authorizations.len(), 1);
    // The refresh carried the resource indicator.
    assert_eq!(net.world.token_requests[1].1["resource"], MCP);
}

#[test]
fn a_token_that_expires_during_a_call_is_refreshed_and_the_call_sent_again_once() {
    let mut net = authorizes(Setup::default(), interactive());
    // The server revokes the token behind the client's back.
    net.world.tokens.clear();
    let id = net.call("echo");
    net.run();
    assert_eq!(net.outcome(&id), Some(Ok(())));
    assert_eq!(net.world.token_requests.len(), 2);
    assert_eq!(net.world.token_requests[1].0, "refresh_token");
}

#[test]
fn a_refused_refresh_authorizes_again() {
    let mut net = authorizes(Setup::default(), interactive());
    net.world.tokens.clear();
    net.world.refresh.clear();
    let id = net.call("echo");
    net.run();
    assert_eq!(net.outcome(&id), Some(Ok(())));
    let grants: Vec<&str> = net.world.token_requests.iter().map(|(g, _, _)| g.as_str()).collect();
    assert_eq!(grants, ["authorization_code", "refresh_token", "authorization_code"]);
    assert_eq!(net.world.authorizations.len(), 2);
}

#[test]
fn twenty_requests_wait_on_one_refresh() {
    let mut net = authorizes(Setup::default(), interactive());
    net.world.tokens.clear();
    let before = net.world.count("POST https://mcp.test/mcp");
    let ids: Vec<RequestId> = (0..20).map(|_| net.call("echo")).collect();
    net.run();
    for id in &ids {
        assert_eq!(net.outcome(id), Some(Ok(())));
    }
    assert_eq!(net.world.token_requests.len(), 2, "one refresh for all twenty");
    // Each sent twice: refused with the old token, then with the new one.
    assert_eq!(net.world.count("POST https://mcp.test/mcp") - before, 40);
}

#[test]
fn credentials_survive_a_restart() {
    let mut first = authorizes(Setup::default(), interactive());
    let credentials = first.session.credentials(first.now, 1_000_000).unwrap();
    assert!(credentials.client.is_some());
    let tokens = credentials.tokens.clone().unwrap();
    assert_eq!(tokens.expires_at, Some(1_000_000 + 3600));
    assert!(!format!("{credentials:?}").contains(tokens.access_token.expose()));
    // A new session on the same world starts with the token: no discovery, no authorization.
    let world = std::mem::replace(&mut first.world, World::new(Setup::default()));
    let mut net = Net::with_credentials(Setup::default(), interactive(), Some(credentials));
    net.world = world;
    net.world.log.clear();
    net.run();
    assert!(net.ready());
    assert_eq!(net.world.log.len(), 2, "{:#?}", net.world.log);
}

// ----- with a session that expires -----

#[test]
fn a_request_held_for_a_token_during_a_re_initialization_keeps_its_deadline() {
    let mut net = Net::new(Setup::default(), interactive());
    net.world.session_ids = true;
    net.run();
    assert!(net.ready());
    assert!(net.session.session_id().is_some());
    let a = net.call("echo");
    let b = net.call("echo");
    let sends: Vec<HttpRequest> = std::iter::from_fn(|| net.session.poll_action(net.now))
        .filter_map(|action| match action {
            HttpAction::Send(request) => Some(request),
            _ => None,
        })
        .collect();
    assert_eq!(sends.len(), 2);
    // At once, the server forgets the session (a: 404) and refuses b's token (401): b waits for
    // a refresh (its deadline suspended meanwhile) while the session is re-initialized.
    net.session.handle_response_head(net.now, sends[0].stream(), 404, Vec::<(&str, &[u8])>::new());
    net.session.handle_response_end(net.now, sends[0].stream());
    let challenge: Vec<(&str, &[u8])> = vec![("WWW-Authenticate", b"Bearer error=\"invalid_token\"")];
    net.session.handle_response_head(net.now, sends[1].stream(), 401, challenge);
    net.session.handle_response_end(net.now, sends[1].stream());
    // The refresh and the new session succeed; both calls go again, and the server never answers.
    net.world.hang_calls = true;
    net.run();
    assert_eq!(net.world.token_requests.last().unwrap().0, "refresh_token");
    assert_eq!(net.world.count("POST https://mcp.test/mcp (no answer)"), 2, "{:#?}", net.world.log);
    // Both fail at their deadlines: b's started again when it was sent again.
    net.advance(Duration::from_secs(61));
    assert!(matches!(net.outcome(&a), Some(Err(RequestError::Timeout(_)))), "{:?}", net.outcome(&a));
    assert!(matches!(net.outcome(&b), Some(Err(RequestError::Timeout(_)))), "{:?}", net.outcome(&b));
}

// ----- without an authorizer -----

#[test]
fn a_401_without_oauth_fails_typed_at_once() {
    let now = epoch();
    let mut session = HttpSession::new(HttpConfig::new(MCP), config(), now);
    let Some(HttpAction::Send(init)) = session.poll_action(now) else { panic!() };
    session.handle_response_head(now, init.stream(), 401, Vec::<(&str, &[u8])>::new());
    while session.poll_action(now).is_some() {}
    let events: Vec<Event> = std::iter::from_fn(|| session.poll_event()).collect();
    assert!(
        events.iter().any(|e| matches!(
            e,
            Event::Closed(CloseReason::Unauthorized(AuthError::NotConfigured { status: 401 }))
        )),
        "{events:?}"
    );
}

#[test]
fn authorization_requests_never_carry_the_bearer_token() {
    let mut net = authorizes(Setup::default(), interactive());
    net.world.tokens.clear();
    net.call("echo");
    net.run();
    assert!(net.world.leaked.is_empty());
}

#[test]
fn tokens_shorter_than_the_refresh_margin_are_refreshed_once_per_expiry() {
    let setup = Setup { token_ttl: Some(1), ..Setup::default() };
    let mut net = authorizes(setup, interactive());
    for _ in 0..3 {
        net.advance(Duration::from_millis(1100));
        let id = net.call("echo");
        net.run();
        assert_eq!(net.outcome(&id), Some(Ok(())));
    }
    assert_eq!(net.world.authorizations.len(), 1, "{:#?}", net.world.log);
}

#[test]
fn a_user_slower_than_the_handshake_timeout_is_waited_for() {
    let mut net = Net::new(Setup::default(), interactive());
    net.user_returns = false;
    net.run();
    let url = net
        .auth_events
        .iter()
        .find_map(|e| match e {
            AuthEvent::AuthorizationRequired { url } => Some(url.clone()),
            _ => None,
        })
        .unwrap();
    // Five minutes in the browser: far past the 60 s handshake timeout, within the 10 min
    // authorization timeout. The held `initialize` does not time out meanwhile.
    net.advance(Duration::from_secs(300));
    assert!(net.closed().is_none(), "{:?}", net.closed());
    let redirect = net.world.authorize(&url).unwrap();
    net.session.handle_authorization_redirect(net.now, &redirect).unwrap();
    net.run();
    assert!(net.ready());
    // Its deadline started again when it was sent again: silence now is a timeout as usual.
    let id = net.call("echo");
    net.run();
    assert_eq!(net.outcome(&id), Some(Ok(())));
}

#[test]
fn restored_tokens_refused_by_the_server_are_refreshed_after_discovery() {
    let mut first = authorizes(Setup::default(), interactive());
    let credentials = first.session.credentials(first.now, 1_000_000).unwrap();
    // The server forgot the access token (restarted, revoked it); the refresh token still works.
    let mut world = std::mem::replace(&mut first.world, World::new(Setup::default()));
    world.tokens.clear();
    let mut net = Net::with_credentials(Setup::default(), interactive(), Some(credentials));
    net.world = world;
    net.world.log.clear();
    net.run();
    assert!(net.ready(), "{:?} {:?}", net.closed(), net.failed());
    // Discovery (the token endpoint was not known), then a refresh: no user, no registration.
    assert_eq!(net.world.authorizations.len(), 1, "only the first run's");
    assert_eq!(net.world.count("/register"), 0, "{:#?}", net.world.log);
    assert_eq!(net.world.token_requests.last().unwrap().0, "refresh_token");
}

#[test]
fn a_stored_registration_is_not_used_with_another_redirect_uri() {
    let mut first = authorizes(Setup::default(), interactive());
    let mut credentials = first.session.credentials(first.now, 1_000_000).unwrap();
    credentials.tokens = None;
    let world = std::mem::replace(&mut first.world, World::new(Setup::default()));
    // The same redirect URI: the registration is used again.
    let mut net = Net::with_credentials(Setup::default(), interactive(), Some(credentials.clone()));
    net.world = world;
    net.run();
    assert!(net.ready());
    assert_eq!(net.world.count("/register"), 1, "the first run's only");
    // Another loopback port: servers may compare redirect URIs exactly, so register again.
    let world = std::mem::replace(&mut net.world, World::new(Setup::default()));
    let other = AuthConfig::authorization_code("http://127.0.0.1:9999/callback");
    let mut net = Net::with_credentials(Setup::default(), other, Some(credentials));
    net.world = world;
    net.world.registration_redirect = Some("http://127.0.0.1:9999/callback");
    net.run();
    assert!(net.ready(), "{:?} {:?}", net.closed(), net.failed());
    assert_eq!(net.world.count("/register"), 2);
}

#[test]
fn a_registration_the_server_forgot_is_dropped_and_made_again_once() {
    let first = authorizes(Setup::default(), interactive());
    let credentials = first.session.credentials(first.now, 1_000_000).unwrap();
    let old_client = credentials.client.clone().unwrap().client_id;
    // The authorization server lost its database: clients, tokens, refresh tokens.
    let mut net = Net::with_credentials(Setup::default(), interactive(), Some(credentials));
    net.world.next = first.world.next;
    net.run();
    assert!(net.ready(), "{:?} {:?}\n{:#?}", net.closed(), net.failed(), net.world.log);
    // The refresh was refused with invalid_client: the registration was dropped (and the
    // application told to store that), a new one made, and the user sent with it.
    assert_eq!(net.world.token_requests[0].0, "refresh_token");
    assert_eq!(net.world.count("POST https://auth.test/register"), 1, "{:#?}", net.world.log);
    let new_client = net.session.credentials(net.now, 1_000_000).unwrap().client.unwrap().client_id;
    assert_ne!(new_client, old_client);
    assert_eq!(net.world.authorizations.len(), 1);
    assert_eq!(net.world.authorizations[0]["client_id"], new_client);
    let changed = net.auth_events.iter().filter(|e| matches!(e, AuthEvent::CredentialsChanged)).count();
    assert!(changed >= 2, "{:?}", net.auth_events);

    // A server that forgets every client at once: registered again once, then the refusal
    // stands (no registration loop).
    let mut net = Net::new(Setup::default(), interactive());
    net.world.forgetful = true;
    net.run();
    let Some(AuthError::TokenRefused { error, .. }) = net.failed() else { panic!("{:?}", net.failed()) };
    assert_eq!(error, "invalid_client");
    assert_eq!(net.world.count("POST https://auth.test/register"), 2, "{:#?}", net.world.log);
    assert_eq!(net.world.token_requests.len(), 2);
}

#[test]
fn an_authorization_server_that_never_answers_fails_typed_within_the_connect_timeout() {
    let mut net = Net::new(Setup::default(), interactive());
    net.world.silent = Some("https://auth.test");
    net.run();
    assert!(net.closed().is_none());
    // The metadata request hangs: after the connect timeout (30 s) the next location is tried,
    // and then the flow fails; nothing waits for ever.
    for _ in 0..4 {
        net.advance(Duration::from_secs(31));
    }
    assert!(matches!(net.failed(), Some(AuthError::Discovery(_))), "{:?}", net.failed());
    assert!(matches!(net.closed(), Some(CloseReason::Unauthorized(AuthError::Discovery(_)))));
}

#[test]
fn an_oversized_metadata_document_is_not_read_to_its_end() {
    let mut net = Net::new(Setup::default(), interactive());
    net.world.huge = Some("/.well-known/oauth-authorization-server");
    net.run();
    // The endless document is cut at 256 KiB and counts as no document: the next location
    // (OpenID) is tried, which has none either; discovery fails at once, not at a timeout.
    assert!(matches!(net.failed(), Some(AuthError::Discovery(_))), "{:?}", net.failed());
}

#[test]
fn an_operation_refused_for_want_of_scope_fails_at_once_for_a_while() {
    // The server never grants `admin`. After the admin call failed (its step-up did not help),
    // the next admin calls fail at once, typed, and send nothing: MCP 2025-11-25 has clients
    // track scope upgrade attempts per resource and operation. Other tools are not affected;
    // the memory lasts SCOPE_REFUSAL_MEMORY, or until the application forgets it.
    let setup = Setup { admin_scope: Some("admin"), grantable: Some(vec!["mcp"]), ..Setup::default() };
    let mut net = authorizes(setup, interactive());
    let id = net.call("admin");
    net.run();
    assert!(matches!(
        net.outcome(&id),
        Some(Err(RequestError::Unauthorized(AuthError::InsufficientScope { .. })))
    ));
    let posts = |net: &Net| net.world.count("POST https://mcp.test/mcp");
    let sent = posts(&net);
    let id = net.call("admin");
    net.run();
    let outcome = net.outcome(&id);
    let Some(Err(RequestError::Unauthorized(AuthError::ScopeRefusedRecently { operation, scope }))) =
        &outcome
    else {
        panic!("{outcome:?}")
    };
    assert_eq!(operation, "tools/call admin");
    assert_eq!(scope.as_deref(), Some("mcp admin"));
    assert_eq!(posts(&net), sent, "nothing sent");
    let id = net.call("echo");
    net.run();
    assert_eq!(net.outcome(&id), Some(Ok(())));

    // Forgotten on request: the call goes to the server again.
    net.session.forget_scope_refusals();
    let sent = posts(&net);
    let id = net.call("admin");
    net.run();
    assert!(matches!(
        net.outcome(&id),
        Some(Err(RequestError::Unauthorized(AuthError::InsufficientScope { .. })))
    ));
    assert_eq!(posts(&net), sent + 1);
    // And after SCOPE_REFUSAL_MEMORY.
    net.advance(mcp_sansio::http::SCOPE_REFUSAL_MEMORY);
    let sent = posts(&net);
    let id = net.call("admin");
    net.run();
    assert!(matches!(
        net.outcome(&id),
        Some(Err(RequestError::Unauthorized(AuthError::InsufficientScope { .. })))
    ));
    assert_eq!(posts(&net), sent + 1);
    assert_eq!(net.world.authorizations.len(), 2, "the first authorization and one step-up, ever");
}
