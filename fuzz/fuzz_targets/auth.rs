//! Drives an [`HttpSession`] with an OAuth [`Authorizer`] (`HttpSession::with_authorizer`) as an
//! arbitrary MCP server, authorization server, identity provider and user would: whatever the
//! session sends, any of them may answer anything, in any order, while time passes and the
//! application sends, cancels and closes.
//!
//! Configurations: the authorization code grant (dynamic registration, a pre-registered public
//! or confidential client, a Client ID Metadata Document URL), client credentials (secret basic,
//! secret post, chosen from the metadata, `private_key_jwt`, `private_key_jwt` without a key),
//! the JWT bearer grant (with or without a client), enterprise-managed authorization (ID-JAG);
//! DPoP `Auto`, `Required` or `Disabled`; a wall clock (realistic, zero, near `u64::MAX`, none);
//! a configured scope, step-up limit and authorization timeout; credentials restored from an
//! earlier run (with or without a refresh token, expiring or not); a random source that is a
//! counter (splitmix64) or, rarely, all zeros (no valid DPoP key); the server URL (mostly `https`
//! with a path; at the root, loopback `http`, plain `http`: refused); Streamable HTTP on
//! 2025-11-25 / dual-era / 2026-07-28, GET stream and legacy fallback on or off.
//!
//! The script's operations:
//! - the MCP server answers one of its exchanges: a challenge (`401`/`403`/any status with
//!   `WWW-Authenticate` values from a list of realistic ones (`Bearer`/`DPoP`,
//!   `resource_metadata`, `scope`, `error=insufficient_scope|invalid_token|use_dpop_nonce`) or raw
//!   bytes, one or two headers, and a `DPoP-Nonce`), a JSON or SSE answer to the request it
//!   carries (with `DPoP-Nonce` and a session id), a legacy `endpoint` event, raw body bytes,
//!   the end or a failure;
//! - the authorization server (or identity provider) answers the authorizer's exchange: any
//!   status, a `DPoP-Nonce`, and a body built from arbitrary pieces: resource metadata,
//!   server metadata (its issuer derived from the URL asked, or not), a registration, a token
//!   response, an ID-JAG, an OAuth error, junk JSON, or raw bytes from the pool (by default the
//!   document and the status the request asks for); or only a head, the end, a failure;
//! - the user comes back through `handle_authorization_redirect` with a query built from the
//!   real or a forged `state`, a code or none, the issuer or another, an `error`, or raw bytes;
//!   or the application abandons the authorization;
//! - time moves (`handle_timeout` after a step or at the next deadline); the application sends
//!   a request, cancels one, reads `credentials`, closes.
//!
//! Then, if the input says so, nobody answers anything and the clock runs to each deadline
//! (512 times at most) until no request is pending (the handshake's included); then the session
//! closes and the clock runs out. An exchange the script ends before its head fails instead
//! (`handle_response_error`), as an HTTP client reports it.
//!
//! Asserted:
//! - no panic; every `poll_action`, `poll_event` and `poll_auth_event` drain ends within a bound
//!   (no action loop);
//! - every `Send` has a new stream id, every `Abort` names a stream that was sent, at most once;
//!   every `POST` to the MCP server carries JSON;
//! - at most one authorizer exchange is in flight at a time, and one input starts at most one;
//!   the authorization server's answers alone (no challenge, command, redirect or time between
//!   them) start at most 32 authorizer exchanges (no request loop without new input);
//! - tokens never leak: an `Authorization: Bearer`/`DPoP` header only goes on requests to the
//!   MCP server (its origin, and never on the authorizer's own requests), no access token the
//!   scripted servers issued appears in a header sent to another origin, and credentials
//!   (`Authorization`, `DPoP`, any `POST` of the authorizer) only go over `https` or to loopback;
//!   the authorization URL the user is sent to is `https` or loopback too;
//! - the connection's events keep their contract (one `Response` per request, `Ready` and
//!   `Closed` at most once, `Closed` after every answer);
//! - after `handle_timeout(now)`, `poll_timeout()` is `None` or later than `now`;
//! - with nobody answering, while a request is pending (`connection().pending()`, the handshake
//!   and the session's own requests included, 2026-07-28 listen streams excepted: they have no
//!   deadline by design) `poll_timeout()` is `Some`, and running the clock to each deadline
//!   answers every request (nothing waits for ever, a request held for a token included);
//! - after `close` and running the clock to each deadline (256 times at most), the session is
//!   `is_finished()` and every request was answered.
#![no_main]

use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use mcp_sansio::auth::{
    AuthConfig, AuthEvent, Authorizer, ClientInfo, Credentials, DpopPolicy, IdentityAssertion, SecureRandom,
    SigningKey, StoredTokens, TokenEndpointAuth,
};
use mcp_sansio::http::{HttpAction, HttpConfig, HttpMethod, HttpRequest, HttpSession, StreamId};
use mcp_sansio::schema::Implementation;
use mcp_sansio::{ClientConfig, ProtocolVersion, RequestId, RequestOptions};
use mcp_sansio_fuzz::{
    ALL_CAPABILITIES, Contract, discover_result, epoch, initialize_result, notification, result_body,
    server_capabilities,
};
use serde_json::{Value, json};
use url::Url;

/// A header only the session's requests to the MCP server carry (it is a custom header of the
/// `HttpConfig`): how the harness tells them from the authorizer's.
const MARK: &str = "X-Fuzz-Mcp";
const REDIRECT: &str = "http://127.0.0.1:4321/callback";
const CIMD: &str = "https://client.example/oauth/metadata.json";
const IDP_TOKEN: &str = "https://idp.example/token";
const ID_JAG_TYPE: &str = "urn:ietf:params:oauth:token-type:id-jag";
/// Wall-clock time of the epoch, for the realistic setting.
const UNIX: u64 = 1_800_000_000;
/// The most actions or events one drain may produce.
const MAX_ACTIONS: usize = 10_000;
/// The most authorizer exchanges the authorization server's answers alone may start.
const MAX_AUTH_WITHOUT_INPUT: usize = 32;
/// A P-256 key for `private_key_jwt` (generated for these tests only).
const CLIENT_KEY: &str = "-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgXQlU+pcJPUID3HcZ
7cd/W+hx+rOMXMssfb+Rb8miAy6hRANCAASFyBZieFA+hdcal+2jKSJ2IgkncZHX
dxuUdLOvmZbHZwlyPOaD9ILhZP3xy38xEQIjd+ASjABgFxboa9oXZ0CW
-----END PRIVATE KEY-----
";

/// Issuers a resource metadata document may name: the usual one, one with a path, the MCP
/// server's origin, a trailing slash, plain `http`, loopback, another host, not a URL.
const ISSUERS: [&str; 8] = [
    "https://as.example",
    "https://as.example/tenant",
    "https://mcp.example",
    "https://as.example/",
    "http://as.example",
    "http://127.0.0.1:9000",
    "https://evil.example",
    "not a url",
];

/// `WWW-Authenticate` values a server sends (and some it should not).
const CHALLENGES: [&str; 16] = [
    r#"Bearer resource_metadata="https://mcp.example/.well-known/oauth-protected-resource/mcp""#,
    r#"Bearer resource_metadata="https://mcp.example/custom/prm", scope="mcp""#,
    r#"Bearer error="invalid_token", error_description="The access token expired""#,
    r#"Bearer error="insufficient_scope", scope="mcp admin", resource_metadata="/custom/prm""#,
    r#"DPoP error="use_dpop_nonce", error_description="nonce required", algs="ES256""#,
    r#"Bearer error="use_dpop_nonce""#,
    r#"DPoP algs="ES256", Bearer resource_metadata="https://mcp.example/custom/prm""#,
    "Bearer",
    r#"Basic realm="mcp""#,
    r#"Bearer resource_metadata="https://evil.example/prm""#,
    r#"Bearer resource_metadata="http://mcp.example/prm", scope="mcp""#,
    r#"Bearer scope="a b c", error="insufficient_scope""#,
    r#"DPoP error="invalid_token", resource_metadata="https://mcp.example/custom/prm""#,
    r#"Bearer resource_metadata=unquoted, scope=, error"#,
    r#"Bearer error="insufficient_scope", scope="mcp""#,
    r#"Bearer realm="x", error="invalid_token", Bearer error="insufficient_scope""#,
];

/// JSON that is no document of any kind, or of the wrong shape.
const JUNK: [&str; 12] = [
    "null",
    "[]",
    "{}",
    "\"x\"",
    r#"{"issuer":5}"#,
    r#"{"access_token":"t"}"#,
    "1e400",
    r#"{"resource":null,"authorization_servers":null}"#,
    r#"{"client_id":"#,
    r#"{"access_token":"fuzz-junk","token_type":"Bearer","expires_in":-1e308}"#,
    r#"{"issuer":"https://as.example","token_endpoint":"https://as.example/token","code_challenge_methods_supported":"S256"}"#,
    r#"{"error":{"nested":true},"error_description":7}"#,
];

#[derive(Arbitrary, Debug, Clone, Copy)]
enum ClientAuth {
    Basic,
    Post,
    /// A confidential client whose method comes from the server's metadata.
    FromMetadata,
    PrivateKeyJwt,
    /// `private_key_jwt` without a key: refused at the first challenge.
    PrivateKeyJwtWithoutKey,
}

#[derive(Arbitrary, Debug, Clone, Copy)]
enum Grant {
    /// Authorization code, registered dynamically.
    CodeRegister,
    CodePublic,
    CodeConfidential,
    /// Authorization code with a Client ID Metadata Document URL (registration where the
    /// server takes none).
    CodeCimd,
    ClientCredentials(ClientAuth),
    JwtBearer {
        client: bool,
    },
    IdentityAssertion {
        idp_client: bool,
    },
}

#[derive(Arbitrary, Debug, Clone, Copy)]
enum Dpop {
    Auto,
    Required,
    Disabled,
}

#[derive(Arbitrary, Debug, Clone, Copy)]
enum WallClock {
    Realistic,
    Zero,
    NearMax,
    /// `set_wall_clock` is not called.
    Unset,
}

#[derive(Arbitrary, Debug, Clone, Copy)]
enum Versions {
    Legacy,
    Dual,
    Modern,
}

/// The MCP server's URL, picked by a fuzzer byte: mostly `https` with a path; at the root,
/// loopback `http`, or plain `http` to another host (which the authorizer refuses).
fn server_url(pick: u8) -> &'static str {
    match pick % 8 {
        0..=4 => "https://mcp.example/mcp",
        5 => "https://mcp.example/",
        6 => "http://127.0.0.1:8931/mcp",
        _ => "http://mcp.example/mcp",
    }
}

/// Credentials kept from an earlier run.
#[derive(Arbitrary, Debug, Clone, Copy)]
struct Restore {
    refresh: bool,
    /// Seconds from now until the access token expires (it may have expired).
    expires_in: Option<i16>,
    /// A registration from an earlier run.
    client: bool,
}

#[derive(Arbitrary, Debug)]
struct Setup {
    /// See [`server_url`].
    server: u8,
    grant: Grant,
    dpop: Dpop,
    wall_clock: WallClock,
    /// The random source: splitmix64 over a counter started at this seed; all zeros (no valid
    /// P-256 key can be made) when it is 63 modulo 64.
    random: u16,
    /// The configured scope: none, or one of a few.
    scope: Option<u8>,
    max_step_ups: u8,
    /// The authorization timeout, in seconds (1 + this, modulo 900).
    authorization_timeout: u16,
    restore: Option<Restore>,
    versions: Versions,
    standalone_stream: bool,
    legacy_fallback: bool,
}

#[derive(Arbitrary, Debug, Clone, Copy)]
enum ChallengeStatus {
    Unauthorized,
    Forbidden,
    Other(u16),
}

#[derive(Arbitrary, Debug, Clone, Copy)]
enum Www {
    /// One of [`CHALLENGES`].
    Listed(u8),
    /// The next `n` bytes of the pool.
    Raw(u8),
}

#[derive(Arbitrary, Debug, Clone, Copy)]
enum Nonce {
    None,
    N1,
    N2,
    /// A value not seen before.
    Fresh,
    /// Not a valid nonce (a space, a control character).
    Invalid,
    /// The next `n` bytes of the pool.
    Raw(u8),
}

#[derive(Arbitrary, Debug, Clone, Copy)]
enum AuthStatus {
    Ok,
    Created,
    BadRequest,
    Unauthorized,
    NotFound,
    ServerError,
    Other(u16),
}

impl AuthStatus {
    fn code(self) -> u16 {
        match self {
            AuthStatus::Ok => 200,
            AuthStatus::Created => 201,
            AuthStatus::BadRequest => 400,
            AuthStatus::Unauthorized => 401,
            AuthStatus::NotFound => 404,
            AuthStatus::ServerError => 500,
            AuthStatus::Other(s) => s,
        }
    }
}

#[derive(Arbitrary, Debug, Clone, Copy)]
enum Doc {
    ResourceMetadata,
    ServerMetadata,
    Registration,
    Token,
    IdJag,
    OAuthError,
    Junk,
}

/// What a document is made of: each builder reads its fields from bits of these (all zero: a
/// valid document; see `resource_metadata`, `server_metadata`, `registration`, `token`).
#[derive(Arbitrary, Debug, Clone, Copy, Default)]
struct Pieces {
    a: u8,
    b: u8,
    c: u8,
}

#[derive(Arbitrary, Debug)]
enum Op {
    /// The MCP server refuses exchange `pick` (a head, and the end unless `open`).
    Challenge {
        pick: u8,
        status: ChallengeStatus,
        www: Option<Www>,
        www2: Option<Www>,
        nonce: Nonce,
        open: bool,
    },
    /// The MCP server answers exchange `pick`: the response to its request (or a notification
    /// on a stream), as JSON or an event stream; the end unless `open`.
    Answer {
        pick: u8,
        sse: bool,
        kind: u8,
        arg: u8,
        nonce: Nonce,
        session: bool,
        open: bool,
    },
    /// A legacy `endpoint` event on exchange `pick` (with a 200 event-stream head first).
    Endpoint {
        pick: u8,
        url: u8,
    },
    /// The next `n` bytes of the pool as a body chunk of MCP exchange `pick`.
    McpBody {
        pick: u8,
        n: u16,
    },
    McpEnd(u8),
    McpError(u8),
    /// The authorization server answers the authorizer's exchange: head (unless sent; `None`:
    /// 200, or 201 to a registration), a document (`None`: the one the request asks for, by its
    /// URL and method) built from pieces (`None`: all zero, a valid document), the end.
    AuthReply {
        status: Option<AuthStatus>,
        doc: Option<Doc>,
        pieces: Option<Pieces>,
        nonce: Nonce,
        json: bool,
    },
    /// The same with the next `n` bytes of the pool as the body.
    AuthRaw {
        status: Option<AuthStatus>,
        n: u16,
        nonce: Nonce,
    },
    /// Only the head of the authorizer's exchange.
    AuthHead {
        status: Option<AuthStatus>,
        nonce: Nonce,
    },
    AuthEnd,
    AuthError,
    /// The user's browser comes back to the redirect URI.
    Redirect {
        state: u8,
        code: u8,
        iss: u8,
        error: u8,
    },
    /// The next `n` bytes of the pool as the redirect URL.
    RedirectRaw(u8),
    Abandon,
    Advance(u32),
    ToDeadline,
    Send {
        method: u8,
        timeout_ms: Option<u16>,
    },
    Cancel(u8),
    Credentials,
    Close,
}

impl Op {
    /// Whether the op is the authorization server's (which alone must not keep the authorizer
    /// going for ever).
    fn is_authorization_server(&self) -> bool {
        matches!(
            self,
            Op::AuthReply { .. } | Op::AuthRaw { .. } | Op::AuthHead { .. } | Op::AuthEnd | Op::AuthError
        )
    }
}

#[derive(Arbitrary, Debug)]
struct Input<'a> {
    setup: Setup,
    /// Before closing: nobody answers anything, and the clock runs until every request is
    /// answered.
    settle: bool,
    ops: Vec<Op>,
    /// Raw bytes for `Raw` values and bodies.
    pool: &'a [u8],
}

/// An exchange of the session with the MCP server.
#[derive(Debug)]
struct McpExchange {
    method: HttpMethod,
    /// The JSON-RPC request id its body carries, if any.
    request_id: Option<Value>,
    /// The JSON-RPC method of its body, if any.
    rpc_method: Option<String>,
    /// The `protocolVersion` its params ask for (`initialize`).
    version: Option<String>,
    /// The head was given.
    head: bool,
}

/// One of the authorizer's exchanges.
#[derive(Debug)]
struct AuthExchange {
    method: HttpMethod,
    url: Url,
    /// Its body is JSON (a registration).
    json: bool,
    head: bool,
}

struct Run<'a> {
    session: HttpSession,
    now: Instant,
    pool: &'a [u8],
    /// The MCP server's origin.
    origin: String,
    mcp: BTreeMap<StreamId, McpExchange>,
    auth: BTreeMap<StreamId, AuthExchange>,
    sent_streams: BTreeSet<StreamId>,
    aborted: BTreeSet<StreamId>,
    contract: Contract,
    /// Access tokens the scripted servers issued (and the restored one).
    issued: Vec<String>,
    /// For fresh values.
    counter: u32,
    /// The `state` of the last authorization URL the user was sent to.
    state: Option<String>,
    /// The issuer of the last server metadata served.
    issuer: Option<String>,
    /// Authorizer exchanges started since the last input that was not the authorization
    /// server's.
    auth_without_input: usize,
    /// The application's wall clock at the epoch (for `credentials`).
    unix: u64,
    /// The ids of the 2026-07-28 `subscriptions/listen` requests sent: streams with no deadline
    /// by design (they last until one side ends them).
    listens: BTreeSet<RequestId>,
}

/// Whether `url` may carry credentials: `https`, or `http` to loopback.
fn is_secure(url: &Url) -> bool {
    match url.scheme() {
        "https" => true,
        "http" => match url.host() {
            Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
            Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
            Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
            None => false,
        },
        _ => false,
    }
}

/// The issuer whose metadata `url` is (RFC 8414 path insertion, OpenID Connect appended).
fn issuer_of(url: &Url) -> String {
    let origin = url.origin().ascii_serialization();
    let path = url.path();
    for prefix in ["/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"] {
        if let Some(rest) = path.strip_prefix(prefix) {
            return format!("{origin}{rest}");
        }
    }
    match path.strip_suffix("/.well-known/openid-configuration") {
        Some(base) => format!("{origin}{base}"),
        None => origin,
    }
}

/// `FUZZ_TRACE=1` prints what the session sends and the authorization events (to check what
/// a seed or a crash does).
fn tracing() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("FUZZ_TRACE").is_some())
}

macro_rules! trace {
    ($($arg:tt)*) => {
        if tracing() {
            eprintln!($($arg)*);
        }
    };
}

fn signing_key() -> SigningKey {
    static KEY: OnceLock<SigningKey> = OnceLock::new();
    KEY.get_or_init(|| SigningKey::from_pkcs8_pem(CLIENT_KEY).expect("the test key parses")).clone()
}

fn random(seed: u16) -> Box<dyn SecureRandom> {
    match seed % 64 {
        63 => Box::new(|dest: &mut [u8]| dest.fill(0)),
        _ => {
            let mut state = u64::from(seed);
            Box::new(move |dest: &mut [u8]| {
                for chunk in dest.chunks_mut(8) {
                    state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
                    let mut z = state;
                    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
                    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
                    z ^= z >> 31;
                    chunk.copy_from_slice(&z.to_le_bytes()[..chunk.len()]);
                }
            })
        }
    }
}

fn auth_config(setup: &Setup) -> AuthConfig {
    let confidential = |auth: ClientAuth| match auth {
        ClientAuth::Basic => ClientInfo::confidential("svc", "fuzz-cs-svc")
            .with_auth_method(TokenEndpointAuth::ClientSecretBasic),
        ClientAuth::Post => ClientInfo::confidential("svc", "fuzz-cs-svc")
            .with_auth_method(TokenEndpointAuth::ClientSecretPost),
        ClientAuth::FromMetadata => ClientInfo::confidential("svc", "fuzz-cs-svc"),
        ClientAuth::PrivateKeyJwt => ClientInfo::private_key_jwt("svc", signing_key()),
        ClientAuth::PrivateKeyJwtWithoutKey => {
            ClientInfo::public("svc").with_auth_method(TokenEndpointAuth::PrivateKeyJwt)
        }
    };
    let mut config = match setup.grant {
        Grant::CodeRegister => AuthConfig::authorization_code(REDIRECT).client_name("fuzz"),
        Grant::CodePublic => AuthConfig::authorization_code(REDIRECT).client(ClientInfo::public("app")),
        Grant::CodeConfidential => {
            AuthConfig::authorization_code(REDIRECT).client(ClientInfo::confidential("app", "fuzz-cs-app"))
        }
        Grant::CodeCimd => AuthConfig::authorization_code(REDIRECT).client_metadata_url(CIMD),
        Grant::ClientCredentials(auth) => AuthConfig::client_credentials(confidential(auth)),
        Grant::JwtBearer { client } => {
            let config = AuthConfig::jwt_bearer("fuzz-workload-assertion");
            if client { config.client(ClientInfo::public("wl")) } else { config }
        }
        Grant::IdentityAssertion { idp_client } => {
            let mut idp = IdentityAssertion::new(IDP_TOKEN, "fuzz-id-token");
            if idp_client {
                idp = idp.idp_client(ClientInfo::confidential("app-at-idp", "fuzz-cs-idp"));
            }
            AuthConfig::identity_assertion(idp, ClientInfo::confidential("app", "fuzz-cs-app"))
        }
    };
    config = config.dpop(match setup.dpop {
        Dpop::Auto => DpopPolicy::Auto,
        Dpop::Required => DpopPolicy::Required,
        Dpop::Disabled => DpopPolicy::Disabled,
    });
    if let Some(scope) = setup.scope {
        config = config.scope(["mcp", "mcp offline_access", "admin", ""][usize::from(scope % 4)]);
    }
    config
        .max_step_ups(u32::from(setup.max_step_ups % 4))
        .authorization_timeout(Duration::from_secs(1 + u64::from(setup.authorization_timeout % 900)))
}

impl<'a> Run<'a> {
    fn take(&mut self, n: usize) -> &'a [u8] {
        let n = n.min(self.pool.len());
        let (head, rest) = self.pool.split_at(n);
        self.pool = rest;
        head
    }

    fn fresh(&mut self) -> u32 {
        self.counter += 1;
        self.counter
    }

    /// Checks the credentials a request carries against where it goes.
    fn check_credentials(&self, request: &HttpRequest, to_mcp: bool) {
        let url = Url::parse(request.url())
            .unwrap_or_else(|e| panic!("a request to {:?}, which is no URL: {e}", request.url()));
        let same_origin = url.origin().ascii_serialization() == self.origin;
        let authorization = request.header("authorization");
        let token_scheme = authorization.is_some_and(|a| {
            let scheme = a.split(' ').next().unwrap_or("");
            scheme.eq_ignore_ascii_case("bearer") || scheme.eq_ignore_ascii_case("dpop")
        });
        if token_scheme {
            assert!(same_origin, "an access token sent to another origin: {} {}", request.method(), url);
            assert!(
                to_mcp,
                "an access token on one of the authorizer's requests: {} {}",
                request.method(),
                url
            );
        }
        if !same_origin {
            for (name, value) in request.headers() {
                let leaked = self.issued.iter().find(|t| value.contains(t.as_str()));
                assert!(
                    leaked.is_none(),
                    "an access token in header {name} of a request to another origin: {} {url}",
                    request.method()
                );
            }
            assert!(
                !request.url().contains("fuzz-at-"),
                "an access token in the URL of a request to another origin: {url}"
            );
        }
        let credentials = authorization.is_some()
            || request.header("dpop").is_some()
            || (!to_mcp && request.method() == HttpMethod::Post);
        if credentials {
            assert!(is_secure(&url), "credentials sent in clear: {} {url}", request.method());
        }
    }

    /// Drains the session's actions and events, checking them.
    fn pump(&mut self) {
        let mut n = 0;
        let mut auth_sends = 0;
        while let Some(action) = self.session.poll_action(self.now) {
            n += 1;
            assert!(n < MAX_ACTIONS, "poll_action does not run dry");
            match action {
                HttpAction::Send(request) => {
                    let stream = request.stream();
                    assert!(self.sent_streams.insert(stream), "stream {stream:?} sent twice");
                    let to_mcp = request.header(MARK).is_some();
                    trace!(
                        "send {stream:?} {} {} ({}{})",
                        request.method(),
                        request.url(),
                        if to_mcp { request.header("mcp-method").unwrap_or("mcp") } else { "authorizer" },
                        match request.header("authorization") {
                            Some(a) => format!(", {}", a.split(' ').next().unwrap_or("")),
                            None => String::new(),
                        }
                    );
                    self.check_credentials(&request, to_mcp);
                    if to_mcp {
                        let body: Option<Value> = serde_json::from_slice(request.body()).ok();
                        if request.method() == HttpMethod::Post {
                            assert!(
                                body.is_some(),
                                "a POST body is not JSON: {:?}",
                                String::from_utf8_lossy(request.body())
                            );
                        }
                        let field = |name: &str| body.as_ref().and_then(|b| b.get(name)).cloned();
                        let rpc_method = field("method").and_then(|m| m.as_str().map(str::to_owned));
                        let request_id = field("id").filter(|_| rpc_method.is_some());
                        if let (Some("subscriptions/listen"), Some(id)) =
                            (rpc_method.as_deref(), request_id.as_ref().and_then(Value::as_i64))
                        {
                            self.listens.insert(RequestId::Number(id));
                        }
                        let version = body
                            .as_ref()
                            .and_then(|b| b.pointer("/params/protocolVersion"))
                            .and_then(Value::as_str)
                            .map(str::to_owned);
                        let exchange = McpExchange {
                            method: request.method(),
                            request_id,
                            rpc_method,
                            version,
                            head: false,
                        };
                        self.mcp.insert(stream, exchange);
                    } else {
                        assert!(
                            self.auth.is_empty(),
                            "two authorizer exchanges in flight: {:?} and {} {}",
                            self.auth.values().next(),
                            request.method(),
                            request.url()
                        );
                        auth_sends += 1;
                        let json = request.header("content-type") == Some("application/json");
                        let url = Url::parse(request.url()).expect("checked");
                        self.auth.insert(
                            stream,
                            AuthExchange { method: request.method(), url, json, head: false },
                        );
                    }
                }
                HttpAction::Abort(stream) => {
                    trace!("abort {stream:?}");
                    assert!(self.sent_streams.contains(&stream), "abort of {stream:?}, which was never sent");
                    assert!(self.aborted.insert(stream), "{stream:?} aborted twice");
                    self.mcp.remove(&stream);
                    self.auth.remove(&stream);
                }
                other => panic!("unknown action {other:?}"),
            }
        }
        assert!(auth_sends <= 1, "one input started {auth_sends} authorizer exchanges");
        self.auth_without_input += auth_sends;
        assert!(
            self.auth_without_input <= MAX_AUTH_WITHOUT_INPUT,
            "the authorization server's answers alone started {} authorizer exchanges",
            self.auth_without_input
        );
        while let Some(event) = self.session.poll_event() {
            n += 1;
            assert!(n < MAX_ACTIONS, "poll_event does not run dry");
            trace!("event {event:?}");
            self.contract.event(event);
        }
        while let Some(event) = self.session.poll_auth_event() {
            n += 1;
            assert!(n < MAX_ACTIONS, "poll_auth_event does not run dry");
            trace!("auth event {event:?}");
            if let AuthEvent::AuthorizationRequired { url } = event {
                let url = Url::parse(&url).unwrap_or_else(|e| panic!("an authorization URL {url:?} ({e})"));
                assert!(is_secure(&url), "the user is sent to {url}, in clear");
                self.state = url.query_pairs().find(|(k, _)| k == "state").map(|(_, v)| v.into_owned());
            }
        }
        if self.session.connection().is_closed() {
            assert!(self.contract.closed, "closed without an Event::Closed");
        }
    }

    /// Requests pending in the connection (the handshake's and the session's own included),
    /// but for the listen streams.
    fn waiting(&self) -> usize {
        let conn = self.session.connection();
        let listening = self.listens.iter().filter(|id| conn.awaits(id)).count();
        conn.pending() - listening
    }

    fn handle_timeout(&mut self, at: Instant) {
        self.now = self.now.max(at);
        self.session.handle_timeout(self.now);
        self.pump();
        if let Some(at) = self.session.poll_timeout() {
            assert!(at > self.now, "after handle_timeout(now) a deadline at or before now is left");
        }
    }

    fn pick_mcp(&self, pick: u8) -> Option<StreamId> {
        match self.mcp.len() {
            0 => None,
            n => self.mcp.keys().nth(usize::from(pick) % n).copied(),
        }
    }

    fn nonce(&mut self, nonce: Nonce) -> Option<Vec<u8>> {
        match nonce {
            Nonce::None => None,
            Nonce::N1 => Some(b"nonce-1".to_vec()),
            Nonce::N2 => Some(b"nonce-2".to_vec()),
            Nonce::Fresh => {
                let n = self.fresh();
                Some(format!("nonce-f{n}").into_bytes())
            }
            Nonce::Invalid => Some(b"bad nonce\x01".to_vec()),
            Nonce::Raw(n) => Some(self.take(n.into()).to_vec()),
        }
    }

    fn www(&mut self, www: Www) -> Vec<u8> {
        match www {
            Www::Listed(i) => CHALLENGES[usize::from(i) % CHALLENGES.len()].as_bytes().to_vec(),
            Www::Raw(n) => self.take(n.into()).to_vec(),
        }
    }

    /// A head for MCP exchange `stream`.
    fn mcp_head(&mut self, stream: StreamId, status: u16, headers: &[(&str, &[u8])]) {
        if let Some(exchange) = self.mcp.get_mut(&stream) {
            if exchange.head {
                return;
            }
            exchange.head = true;
        }
        self.session.handle_response_head(self.now, stream, status, headers.iter().copied());
    }

    /// The end of MCP exchange `stream`: a failure if it had no head (what an HTTP client
    /// reports when the connection closes before the response; a driver never ends an exchange
    /// without one).
    fn mcp_end(&mut self, stream: StreamId) {
        match self.mcp.remove(&stream) {
            Some(McpExchange { head: false, .. }) => {
                self.session.handle_response_error(self.now, stream, "closed before the response head")
            }
            _ => self.session.handle_response_end(self.now, stream),
        }
    }

    /// The result for the request exchange `stream` carries.
    fn result_for(&self, stream: StreamId, kind: u8, arg: u8) -> Value {
        let exchange = &self.mcp[&stream];
        match exchange.rpc_method.as_deref() {
            Some("initialize") => {
                let version = exchange.version.clone().unwrap_or_else(|| "2025-11-25".to_owned());
                initialize_result(&version, server_capabilities(ALL_CAPABILITIES))
            }
            Some("server/discover") => {
                discover_result(&["2026-07-28", "2025-11-25"], server_capabilities(ALL_CAPABILITIES))
            }
            _ => result_body(kind, arg),
        }
    }

    // ----- the authorization server's documents -----

    /// Protected resource metadata, from pieces.
    fn resource_metadata(&self, a: u8, b: u8, c: u8) -> Value {
        let server = self.session.url().to_owned();
        let mut prm = serde_json::Map::new();
        let resource = match a % 8 {
            0..=2 => Some(server),
            3 => Some(self.origin.clone()),
            4 => Some(server.to_ascii_uppercase()),
            5 => Some("https://evil.example/mcp".to_owned()),
            6 => None,
            _ => Some("not a url".to_owned()),
        };
        if let Some(resource) = resource {
            prm.insert("resource".into(), resource.into());
        }
        let servers: Vec<&str> = match b % 10 {
            0..=2 => vec![ISSUERS[0]],
            8 => vec![],
            9 => vec![ISSUERS[4], ISSUERS[0]],
            i => vec![ISSUERS[usize::from(i) - 2]],
        };
        prm.insert("authorization_servers".into(), json!(servers));
        match c % 4 {
            0 => {}
            1 => drop(prm.insert("scopes_supported".into(), json!(["mcp"]))),
            2 => drop(prm.insert("scopes_supported".into(), json!(["mcp", "offline_access"]))),
            _ => drop(prm.insert("scopes_supported".into(), json!([]))),
        }
        if c & 0x04 != 0 {
            prm.insert("dpop_bound_access_tokens_required".into(), true.into());
        }
        if c & 0x80 != 0 {
            // A field of the wrong type.
            prm.insert("authorization_servers".into(), json!(ISSUERS[0]));
        }
        Value::Object(prm)
    }

    /// Authorization server metadata for the URL asked, from pieces.
    fn server_metadata(&mut self, url: &Url, a: u8, b: u8, c: u8) -> Value {
        let derived = issuer_of(url);
        let issuer = match a % 8 {
            0..=4 => Some(derived.clone()),
            5 => Some(format!("{derived}/")),
            6 => Some("https://evil.example".to_owned()),
            _ => None,
        };
        let base = match b % 4 {
            0 | 1 => Url::parse(&derived).map(|u| u.origin().ascii_serialization()).unwrap_or(derived),
            2 => self.origin.clone(),
            _ => "http://insecure.example".to_owned(),
        };
        let mut m = serde_json::Map::new();
        if let Some(issuer) = &issuer {
            m.insert("issuer".into(), issuer.clone().into());
        }
        self.issuer = issuer;
        if b & 0x10 == 0 {
            m.insert("authorization_endpoint".into(), format!("{base}/authorize").into());
        }
        if b & 0x20 == 0 {
            m.insert("token_endpoint".into(), format!("{base}/token").into());
        }
        if b & 0x40 == 0 {
            m.insert("registration_endpoint".into(), format!("{base}/register").into());
        }
        if b & 0x80 != 0 {
            m.insert("authorization_endpoint".into(), "no url at all".into());
        }
        m.insert("response_types_supported".into(), json!(["code"]));
        match c % 4 {
            0 | 1 => drop(m.insert("code_challenge_methods_supported".into(), json!(["S256"]))),
            2 => drop(m.insert("code_challenge_methods_supported".into(), json!(["plain"]))),
            _ => {}
        }
        match (c >> 2) % 4 {
            0 => {}
            1 => drop(m.insert("dpop_signing_alg_values_supported".into(), json!(["ES256"]))),
            2 => drop(m.insert("dpop_signing_alg_values_supported".into(), json!(["RS256"]))),
            _ => drop(m.insert("dpop_signing_alg_values_supported".into(), json!(["RS256", "ES256"]))),
        }
        match (c >> 4) % 4 {
            0 => {}
            1 => drop(m.insert("token_endpoint_auth_methods_supported".into(), json!(["none"]))),
            2 => {
                drop(m.insert("token_endpoint_auth_methods_supported".into(), json!(["client_secret_post"])))
            }
            _ => drop(m.insert(
                "token_endpoint_auth_methods_supported".into(),
                json!(["client_secret_basic", "private_key_jwt", "none"]),
            )),
        }
        if c & 0x40 != 0 {
            m.insert("client_id_metadata_document_supported".into(), true.into());
        }
        if c & 0x80 != 0 {
            m.insert("authorization_response_iss_parameter_supported".into(), true.into());
        }
        if a & 0x10 != 0 {
            m.insert("scopes_supported".into(), json!(["mcp", "offline_access", "admin"]));
        }
        if a & 0x20 != 0 {
            m.insert(
                "grant_types_supported".into(),
                json!(["authorization_code", "refresh_token", "client_credentials"]),
            );
        }
        Value::Object(m)
    }

    fn registration(&mut self, a: u8, b: u8) -> Value {
        let n = self.fresh();
        let mut r = serde_json::Map::new();
        if a % 4 != 3 {
            r.insert("client_id".into(), format!("client-{n}").into());
        }
        if b & 0x01 != 0 {
            r.insert("client_secret".into(), format!("fuzz-cs-{n}").into());
        }
        match (b >> 1) % 4 {
            0 => {}
            1 => drop(r.insert("token_endpoint_auth_method".into(), "none".into())),
            2 => drop(r.insert("token_endpoint_auth_method".into(), "client_secret_post".into())),
            _ => drop(r.insert("token_endpoint_auth_method".into(), "weird".into())),
        }
        if b & 0x80 != 0 {
            r.insert("client_id".into(), 5.into());
        }
        Value::Object(r)
    }

    /// A token response; its access token is remembered (it must not leak).
    fn token(&mut self, a: u8, b: u8, c: u8) -> Value {
        let n = self.fresh();
        let mut t = serde_json::Map::new();
        match a % 8 {
            0..=5 => {
                let token = format!("fuzz-at-{n}");
                self.issued.push(token.clone());
                t.insert("access_token".into(), token.into());
            }
            6 => drop(t.insert("access_token".into(), "".into())),
            _ => {}
        }
        let token_type = match b % 8 {
            0..=2 => Some("Bearer"),
            3 => Some("bearer"),
            4 | 5 => Some("DPoP"),
            6 => Some("mac"),
            _ => None,
        };
        if let Some(token_type) = token_type {
            t.insert("token_type".into(), token_type.into());
        }
        let expires_in = match c % 8 {
            0 => None,
            1 => Some(json!(3600)),
            2 => Some(json!("3600")),
            3 => Some(json!(0)),
            4 => Some(json!(1)),
            5 => Some(json!(-5)),
            6 => Some(json!(1e30)),
            _ => Some(json!("soon")),
        };
        if let Some(expires_in) = expires_in {
            t.insert("expires_in".into(), expires_in);
        }
        if c & 0x08 != 0 {
            t.insert("refresh_token".into(), format!("fuzz-rt-{n}").into());
        }
        match (c >> 4) % 4 {
            0 => {}
            1 => drop(t.insert("scope".into(), "mcp".into())),
            2 => drop(t.insert("scope".into(), "mcp admin".into())),
            _ => drop(t.insert("scope".into(), "".into())),
        }
        if b & 0x40 != 0 {
            t.insert("issued_token_type".into(), "urn:ietf:params:oauth:token-type:access_token".into());
        }
        Value::Object(t)
    }

    /// The identity provider's answer to the token exchange.
    fn id_jag(&mut self, a: u8, b: u8) -> Value {
        let n = self.fresh();
        let mut t = serde_json::Map::new();
        if a % 4 != 3 {
            t.insert("access_token".into(), format!("fuzz-jag-{n}").into());
        }
        t.insert("token_type".into(), "N_A".into());
        match b % 4 {
            0 | 1 => drop(t.insert("issued_token_type".into(), ID_JAG_TYPE.into())),
            2 => {
                drop(t.insert("issued_token_type".into(), "urn:ietf:params:oauth:token-type:id_token".into()))
            }
            _ => {}
        }
        Value::Object(t)
    }

    fn oauth_error(a: u8) -> Value {
        let errors =
            ["invalid_grant", "use_dpop_nonce", "invalid_client", "invalid_request", "unauthorized_client"];
        let mut e = json!({"error": errors[usize::from(a) % errors.len()]});
        if a & 0x80 != 0 {
            e["error_description"] = "refused".into();
        }
        e
    }

    fn document(&mut self, doc: Option<Doc>, a: u8, b: u8, c: u8) -> Vec<u8> {
        let Some(exchange) = self.auth.values().next() else { return Vec::new() };
        let url = exchange.url.clone();
        let doc = match doc {
            Some(doc) => doc,
            None if exchange.method == HttpMethod::Get => {
                let path = url.path();
                if path.contains("oauth-protected-resource") || path.contains("prm") {
                    Doc::ResourceMetadata
                } else {
                    Doc::ServerMetadata
                }
            }
            None if url.as_str() == IDP_TOKEN => Doc::IdJag,
            None if exchange.json => Doc::Registration,
            None => Doc::Token,
        };
        let value = match doc {
            Doc::ResourceMetadata => self.resource_metadata(a, b, c),
            Doc::ServerMetadata => self.server_metadata(&url, a, b, c),
            Doc::Registration => self.registration(a, b),
            Doc::Token => self.token(a, b, c),
            Doc::IdJag => self.id_jag(a, b),
            Doc::OAuthError => Self::oauth_error(a),
            Doc::Junk => return JUNK[usize::from(a) % JUNK.len()].as_bytes().to_vec(),
        };
        value.to_string().into_bytes()
    }

    /// The head of the authorizer's exchange, unless it was given.
    fn auth_head(&mut self, status: Option<AuthStatus>, nonce: Nonce, json: bool) -> Option<StreamId> {
        let (&stream, exchange) = self.auth.iter_mut().next()?;
        if exchange.head {
            return Some(stream);
        }
        exchange.head = true;
        let status = status.map_or(if exchange.json { 201 } else { 200 }, AuthStatus::code);
        let nonce = self.nonce(nonce);
        let content_type: &[u8] = if json { b"application/json" } else { b"text/plain" };
        let mut headers: Vec<(&str, &[u8])> = vec![("Content-Type", content_type)];
        if let Some(nonce) = &nonce {
            headers.push(("DPoP-Nonce", nonce));
        }
        self.session.handle_response_head(self.now, stream, status, headers);
        Some(stream)
    }

    /// The body and the end of the authorizer's exchange (a failure without a head, as for
    /// [`mcp_end`](Self::mcp_end)).
    fn auth_finish(&mut self, stream: StreamId, body: &[u8]) {
        if !body.is_empty() {
            self.session.handle_response_body(self.now, stream, body);
        }
        match self.auth.remove(&stream) {
            Some(AuthExchange { head: false, .. }) => {
                self.session.handle_response_error(self.now, stream, "closed before the response head")
            }
            Some(_) => self.session.handle_response_end(self.now, stream),
            None => {}
        }
    }

    fn op(&mut self, op: Op) {
        trace!("op {op:?}");
        if !op.is_authorization_server() {
            self.auth_without_input = 0;
        }
        match op {
            Op::Challenge { pick, status, www, www2, nonce, open } => {
                let Some(stream) = self.pick_mcp(pick) else { return };
                let status = match status {
                    ChallengeStatus::Unauthorized => 401,
                    ChallengeStatus::Forbidden => 403,
                    ChallengeStatus::Other(s) => s,
                };
                let www = www.map(|w| self.www(w));
                let www2 = www2.map(|w| self.www(w));
                let nonce = self.nonce(nonce);
                let mut headers: Vec<(&str, &[u8])> = vec![("Content-Type", b"application/json")];
                if let Some(www) = &www {
                    headers.push(("WWW-Authenticate", www));
                }
                if let Some(www) = &www2 {
                    headers.push(("www-authenticate", www));
                }
                if let Some(nonce) = &nonce {
                    headers.push(("DPoP-Nonce", nonce));
                }
                self.mcp_head(stream, status, &headers);
                if !open && self.mcp.contains_key(&stream) {
                    self.mcp_end(stream);
                }
            }
            Op::Answer { pick, sse, kind, arg, nonce, session, open } => {
                let Some(stream) = self.pick_mcp(pick) else { return };
                let nonce = self.nonce(nonce);
                let exchange = &self.mcp[&stream];
                let (status, content_type): (u16, &[u8]) = match (exchange.method, &exchange.request_id) {
                    (HttpMethod::Get, _) => (200, b"text/event-stream"),
                    (HttpMethod::Post, None) => (202, b""),
                    (HttpMethod::Delete, _) => (200, b""),
                    _ if sse => (200, b"text/event-stream"),
                    _ => (200, b"application/json"),
                };
                let message = match &exchange.request_id {
                    Some(id) if exchange.method == HttpMethod::Post => {
                        json!({"jsonrpc": "2.0", "id": id, "result": self.result_for(stream, kind, arg)})
                    }
                    _ => notification(kind, json!(arg), arg),
                };
                let head_given = exchange.head;
                if !head_given {
                    self.mcp.get_mut(&stream).expect("picked").head = true;
                    let mut headers: Vec<(&str, &[u8])> = vec![("Content-Type", content_type)];
                    if session {
                        headers.push(("Mcp-Session-Id", b"s1"));
                    }
                    if let Some(nonce) = &nonce {
                        headers.push(("DPoP-Nonce", nonce));
                    }
                    self.session.handle_response_head(self.now, stream, status, headers);
                }
                if self.mcp.contains_key(&stream) && status == 200 && !content_type.is_empty() {
                    let body = if content_type == b"text/event-stream" {
                        format!("event: message\ndata: {message}\n\n")
                    } else {
                        message.to_string()
                    };
                    self.session.handle_response_body(self.now, stream, body.as_bytes());
                }
                if !open && self.mcp.contains_key(&stream) {
                    self.mcp_end(stream);
                }
            }
            Op::Endpoint { pick, url } => {
                let Some(stream) = self.pick_mcp(pick) else { return };
                let url = match url % 5 {
                    0 | 1 => "/messages?sessionId=1",
                    2 => "https://evil.example/messages",
                    3 => "messages",
                    _ => "",
                };
                self.mcp_head(stream, 200, &[("Content-Type", b"text/event-stream")]);
                if self.mcp.contains_key(&stream) {
                    let body = format!("event: endpoint\ndata: {url}\n\n");
                    self.session.handle_response_body(self.now, stream, body.as_bytes());
                }
            }
            Op::McpBody { pick, n } => {
                let Some(stream) = self.pick_mcp(pick) else { return };
                let chunk = self.take(n.into());
                self.session.handle_response_body(self.now, stream, chunk);
            }
            Op::McpEnd(pick) => {
                let Some(stream) = self.pick_mcp(pick) else { return };
                self.mcp_end(stream);
            }
            Op::McpError(pick) => {
                let Some(stream) = self.pick_mcp(pick) else { return };
                self.mcp.remove(&stream);
                self.session.handle_response_error(self.now, stream, "connection reset");
            }
            Op::AuthReply { status, doc, pieces, nonce, json } => {
                let Pieces { a, b, c } = pieces.unwrap_or_default();
                let body = self.document(doc, a, b, c);
                let Some(stream) = self.auth_head(status, nonce, json) else { return };
                self.auth_finish(stream, &body);
            }
            Op::AuthRaw { status, n, nonce } => {
                let Some(stream) = self.auth_head(status, nonce, true) else { return };
                let body = self.take(n.into());
                self.auth_finish(stream, body);
            }
            Op::AuthHead { status, nonce } => {
                self.auth_head(status, nonce, true);
            }
            Op::AuthEnd => {
                if let Some(&stream) = self.auth.keys().next() {
                    self.auth_finish(stream, b"");
                }
            }
            Op::AuthError => {
                if let Some(&stream) = self.auth.keys().next() {
                    self.auth.remove(&stream);
                    self.session.handle_response_error(self.now, stream, "connection refused");
                }
            }
            Op::Redirect { state, code, iss, error } => {
                let mut url = Url::parse(REDIRECT).expect("a URL");
                let n = self.fresh();
                {
                    let mut query = url.query_pairs_mut();
                    match code % 4 {
                        0 | 1 => drop(query.append_pair("code", &format!("code-{n}"))),
                        2 => drop(query.append_pair("code", "")),
                        _ => {}
                    }
                    match (state % 4, &self.state) {
                        (0 | 1, Some(state)) => drop(query.append_pair("state", state)),
                        (2, _) => drop(query.append_pair("state", "forged")),
                        _ => {}
                    }
                    match (iss % 4, &self.issuer) {
                        (1 | 2, Some(issuer)) => drop(query.append_pair("iss", issuer)),
                        (3, _) => drop(query.append_pair("iss", "https://evil.example")),
                        _ => {}
                    }
                    if error % 4 == 3 {
                        query.append_pair("error", "access_denied").append_pair("error_description", "no");
                    }
                }
                let _ = self.session.handle_authorization_redirect(self.now, url.as_str());
            }
            Op::RedirectRaw(n) => {
                let raw = String::from_utf8_lossy(self.take(n.into())).into_owned();
                let _ = self.session.handle_authorization_redirect(self.now, &raw);
            }
            Op::Abandon => self.session.abandon_authorization(self.now, "the user closed the window"),
            Op::Advance(ms) => return self.handle_timeout(self.now + Duration::from_millis(ms.into())),
            Op::ToDeadline => {
                let at = self.session.poll_timeout().unwrap_or(self.now);
                return self.handle_timeout(at);
            }
            Op::Send { method, timeout_ms } => {
                let (method, params) = match method % 4 {
                    0 => ("tools/list", json!({})),
                    1 => ("tools/call", json!({"name": "echo", "arguments": {"text": "hi"}})),
                    2 => ("resources/read", json!({"uri": "file:///a"})),
                    _ => ("prompts/get", json!({"name": "p"})),
                };
                let mut options = RequestOptions::default();
                if let Some(ms) = timeout_ms {
                    options = options.timeout(Duration::from_millis(ms.into()));
                }
                let params = params.to_string();
                let sent =
                    self.session.commands().send_request(self.now, method, Some(params.as_bytes()), options);
                if let Ok(id) = sent {
                    self.contract.issued(id);
                }
            }
            Op::Cancel(pick) => {
                let outstanding = &self.contract.outstanding;
                if let Some(id) =
                    outstanding.iter().nth(usize::from(pick) % outstanding.len().max(1)).cloned()
                {
                    let _ = self.session.commands().cancel(&id, None);
                }
            }
            Op::Credentials => {
                if let Some(credentials) = self.session.credentials(self.now, self.unix) {
                    // What a store writes, and reads back.
                    let text = serde_json::to_string(&credentials).expect("credentials serialize");
                    let back: Credentials = serde_json::from_str(&text).expect("credentials deserialize");
                    assert_eq!(back.tokens, credentials.tokens);
                }
            }
            Op::Close => self.session.commands().close(),
        }
        self.pump();
    }
}

fuzz_target!(|input: Input<'_>| {
    let Input { setup, settle, ops, pool } = input;
    let now = epoch();
    let server = server_url(setup.server);
    let unix = match setup.wall_clock {
        WallClock::Realistic | WallClock::Unset => UNIX,
        WallClock::Zero => 0,
        WallClock::NearMax => u64::MAX - 100,
    };
    let mut issued = Vec::new();
    let mut authorizer = Authorizer::new(server, auth_config(&setup), random(setup.random));
    if !matches!(setup.wall_clock, WallClock::Unset) {
        authorizer.set_wall_clock(now, unix);
    }
    if let Some(restore) = setup.restore {
        issued.push("fuzz-at-restored".to_owned());
        let tokens = StoredTokens {
            access_token: mcp_sansio::auth::Secret::new("fuzz-at-restored"),
            token_type: "Bearer".to_owned(),
            refresh_token: restore.refresh.then(|| mcp_sansio::auth::Secret::new("fuzz-rt-restored")),
            scope: Some("mcp".to_owned()),
            expires_at: restore.expires_in.map(|s| unix.saturating_add_signed(s.into())),
        };
        let client = restore.client.then(|| ClientInfo {
            issuer: Some(ISSUERS[0].to_owned()),
            redirect_uri: Some(REDIRECT.to_owned()),
            ..ClientInfo::public("restored-client")
        });
        authorizer.restore(now, unix, Credentials { client, tokens: Some(tokens) });
    }
    let versions: &[ProtocolVersion] = match setup.versions {
        Versions::Legacy => &[ProtocolVersion::V2025_11_25, ProtocolVersion::V2025_03_26],
        Versions::Dual => ProtocolVersion::DUAL_ERA,
        Versions::Modern => ProtocolVersion::MODERN,
    };
    let config = ClientConfig::new(Implementation::new("fuzz-client", "0.1.0"))
        .with_versions(versions)
        .with_request_timeout(Duration::from_secs(30))
        .with_max_total(Duration::from_secs(600));
    let http = HttpConfig::new(server)
        .header(MARK, "1")
        .standalone_stream(setup.standalone_stream)
        .legacy_fallback(setup.legacy_fallback);
    let origin = Url::parse(server).expect("a URL").origin().ascii_serialization();
    let mut run = Run {
        session: HttpSession::new(http, config, now).with_authorizer(authorizer),
        now,
        pool,
        origin,
        mcp: BTreeMap::new(),
        auth: BTreeMap::new(),
        sent_streams: BTreeSet::new(),
        aborted: BTreeSet::new(),
        contract: Contract::default(),
        issued,
        counter: 0,
        state: None,
        issuer: None,
        auth_without_input: 0,
        unix,
        listens: BTreeSet::new(),
    };
    run.pump();
    for op in ops {
        run.op(op);
    }

    if settle {
        // Nobody answers: every request (the handshake's and the session's own included) must
        // still be answered, by its deadline or the authorization's.
        for _ in 0..512 {
            if run.waiting() == 0 {
                break;
            }
            run.auth_without_input = 0;
            match run.session.poll_timeout() {
                Some(at) => run.handle_timeout(at),
                None => panic!(
                    "{} requests wait for ever (no deadline; the application's: {:?}); authorizer {:?}, \
                     {} exchanges in flight",
                    run.waiting(),
                    run.contract.outstanding,
                    run.session.authorizer(),
                    run.session.streams_in_flight()
                ),
            }
        }
        assert_eq!(
            run.waiting(),
            0,
            "requests unanswered after running the clock 512 times (the application's: {:?})",
            run.contract.outstanding
        );
        assert!(run.contract.outstanding.is_empty(), "{:?}", run.contract.outstanding);
    }

    // Close, and run the clock out: the session must finish.
    run.auth_without_input = 0;
    run.session.commands().close();
    run.pump();
    for _ in 0..256 {
        if run.session.is_finished() {
            break;
        }
        run.auth_without_input = 0;
        match run.session.poll_timeout() {
            Some(at) => run.handle_timeout(at),
            None => break,
        }
    }
    assert!(
        run.contract.outstanding.is_empty(),
        "requests unanswered after close: {:?}",
        run.contract.outstanding
    );
    assert!(
        run.session.is_finished(),
        "not finished after close and the clock ran out: {} streams in flight, next deadline {:?}",
        run.session.streams_in_flight(),
        run.session.poll_timeout().map(|at| at - run.now)
    );
});
