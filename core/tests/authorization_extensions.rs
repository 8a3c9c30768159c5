//! The OAuth extensions on simulated time: an [`HttpSession`] with an [`Authorizer`] against a
//! scripted MCP server, authorization server and identity provider (`World`) that verify what
//! they get as real servers would: the signatures of client assertions and DPoP proofs, their
//! claims, `jti` reuse, the DPoP key's binding, the nonces they ask for.
#![cfg(feature = "jwt")]
#![allow(clippy::unwrap_used)]

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use common::{config, epoch, init_result};
use mcp_sansio::auth::{
    AuthConfig, AuthError, AuthEvent, Authorizer, ClientInfo, IdentityAssertion, SigningKey,
};
use mcp_sansio::http::{HttpAction, HttpConfig, HttpMethod, HttpRequest, HttpSession};
use mcp_sansio::schema::{CallTool, CallToolRequestParams};
use mcp_sansio::{Event, RequestError, RequestId, RequestOptions};
use p256::ecdsa::signature::Verifier;
use p256::ecdsa::{Signature, VerifyingKey};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use url::Url;

const MCP: &str = "https://mcp.test/mcp";
const PRM: &str = "https://mcp.test/.well-known/oauth-protected-resource/mcp";
const ISSUER: &str = "https://auth.test";
const TOKEN: &str = "https://auth.test/token";
const IDP_TOKEN: &str = "https://idp.test/token";
const REDIRECT: &str = "http://127.0.0.1:4321/callback";
/// The wall-clock time the driver hands in at the start.
const UNIX: u64 = 1_800_000_000;

/// How many `use_dpop_nonce` refusals a churning server gives before it answers 500, so that a
/// client that does not stop still ends.
const CHURN_LIMIT: u32 = 50;

/// A P-256 key in PKCS#8 PEM, made for these tests.
const CLIENT_KEY: &str = "-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgXQlU+pcJPUID3HcZ
7cd/W+hx+rOMXMssfb+Rb8miAy6hRANCAASFyBZieFA+hdcal+2jKSJ2IgkncZHX
dxuUdLOvmZbHZwlyPOaD9ILhZP3xy38xEQIjd+ASjABgFxboa9oXZ0CW
-----END PRIVATE KEY-----
";

#[derive(Clone, Default)]
struct Setup {
    /// The authorization server offers DPoP (ES256) and binds tokens to proofs.
    dpop: bool,
    /// The servers want a nonce in the proofs (and ask for it once).
    as_nonce: bool,
    rs_nonce: bool,
    /// The servers refuse every proof with `use_dpop_nonce` and a nonce never seen before (up
    /// to [`CHURN_LIMIT`] times, then with a 500).
    as_churn: bool,
    rs_churn: bool,
    /// The client opens the stream for server-initiated messages (`GET`).
    standalone: bool,
    /// The MCP server lets `initialize` and notifications through without a token (as the
    /// conformance runner's custom middlewares do), and wants one for everything else.
    open_handshake: bool,
    /// The authorization server refuses every JWT bearer assertion.
    refuse_assertions: bool,
    token_ttl: Option<u64>,
}

/// What the servers saw and hold.
struct World {
    setup: Setup,
    log: Vec<String>,
    /// Every request to the token endpoint.
    token_requests: Vec<TokenRequest>,
    /// Forms sent to the identity provider.
    exchanges: Vec<BTreeMap<String, String>>,
    /// Issued tokens: the thumbprint of the key they are bound to, and their expiry.
    tokens: BTreeMap<String, (Option<String>, Option<Instant>)>,
    codes: BTreeSet<String>,
    /// Every DPoP proof `jti` the servers saw.
    jtis: Vec<String>,
    /// Every `Authorization` sent to the MCP server, and what the server made of it.
    mcp_auth: Vec<(String, Result<(), String>)>,
    rs_nonce_challenges: u32,
    as_nonce_challenges: u32,
    next: u32,
    client_key: VerifyingKey,
}

/// A request to the token endpoint: `(grant_type, form, Authorization, DPoP)`.
type TokenRequest = (String, BTreeMap<String, String>, Option<String>, Option<String>);

struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

fn reply(status: u16, body: Value) -> Reply {
    Reply {
        status,
        headers: vec![("Content-Type".into(), "application/json".into())],
        body: body.to_string(),
    }
}

fn form_of(body: &[u8]) -> BTreeMap<String, String> {
    url::form_urlencoded::parse(body).map(|(k, v)| (k.into_owned(), v.into_owned())).collect()
}

fn b64url_decode(text: &str) -> Vec<u8> {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let (mut bits, mut n, mut out) = (0u32, 0, Vec::new());
    for c in text.bytes() {
        bits = bits << 6 | A.iter().position(|&a| a == c).unwrap() as u32;
        n += 6;
        if n >= 8 {
            n -= 8;
            out.push((bits >> n) as u8);
        }
    }
    out
}

fn b64url(bytes: &[u8]) -> String {
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

/// Verifies a compact JWS (ES256) with `key`; its header and claims.
fn verify_jws(jws: &str, key: &VerifyingKey) -> Result<(Value, Value), String> {
    let parts: Vec<&str> = jws.split('.').collect();
    let [head, claims, signature] = parts[..] else { return Err("not a compact JWS".into()) };
    let signature = Signature::from_slice(&b64url_decode(signature)).map_err(|e| e.to_string())?;
    key.verify(format!("{head}.{claims}").as_bytes(), &signature).map_err(|_| "bad signature".to_owned())?;
    let parse = |part: &str| serde_json::from_slice::<Value>(&b64url_decode(part)).map_err(|e| e.to_string());
    Ok((parse(head)?, parse(claims)?))
}

fn jws_header(jws: &str) -> Value {
    serde_json::from_slice(&b64url_decode(jws.split('.').next().unwrap())).unwrap()
}

fn public_key(pem: &str) -> VerifyingKey {
    use p256::pkcs8::DecodePrivateKey;
    *p256::ecdsa::SigningKey::from_pkcs8_pem(pem).unwrap().verifying_key()
}

impl World {
    fn new(setup: Setup) -> Self {
        World {
            setup,
            log: Vec::new(),
            token_requests: Vec::new(),
            exchanges: Vec::new(),
            tokens: BTreeMap::new(),
            codes: BTreeSet::new(),
            jtis: Vec::new(),
            mcp_auth: Vec::new(),
            rs_nonce_challenges: 0,
            as_nonce_challenges: 0,
            next: 0,
            client_key: public_key(CLIENT_KEY),
        }
    }

    fn fresh(&mut self, prefix: &str) -> String {
        self.next += 1;
        format!("{prefix}-{}", self.next)
    }

    fn count(&self, what: &str) -> usize {
        self.log.iter().filter(|l| l.contains(what)).count()
    }

    /// Checks a DPoP proof as RFC 9449 §4.3 says; the thumbprint of its key.
    fn check_proof(
        &mut self,
        proof: Option<&str>,
        method: &str,
        url: &str,
        token: Option<&str>,
        now_unix: u64,
    ) -> Result<(String, Option<String>), String> {
        let proof = proof.ok_or("no DPoP proof")?;
        let head = jws_header(proof);
        if head["typ"] != "dpop+jwt" || head["alg"] != "ES256" || head["jwk"].get("d").is_some() {
            return Err(format!("bad proof header {head}"));
        }
        let jwk = &head["jwk"];
        let mut sec1 = vec![4];
        sec1.extend(b64url_decode(jwk["x"].as_str().unwrap()));
        sec1.extend(b64url_decode(jwk["y"].as_str().unwrap()));
        let key = VerifyingKey::from_sec1_bytes(&sec1).map_err(|e| e.to_string())?;
        let (_, claims) = verify_jws(proof, &key)?;
        if claims["htm"] != method || claims["htu"] != url {
            return Err(format!("proof for {} {}", claims["htm"], claims["htu"]));
        }
        if claims["iat"].as_u64().is_none_or(|iat| iat.abs_diff(now_unix) > 60) {
            return Err(format!("iat {} is not now ({now_unix})", claims["iat"]));
        }
        let ath = token.map(|t| b64url(&Sha256::digest(t.as_bytes())));
        if claims.get("ath").and_then(Value::as_str) != ath.as_deref() {
            return Err("ath does not match".into());
        }
        let jti = claims["jti"].as_str().ok_or("no jti")?.to_owned();
        if self.jtis.contains(&jti) {
            return Err(format!("jti {jti} replayed"));
        }
        self.jtis.push(jti);
        let jkt = b64url(&Sha256::digest(jwk.to_string().as_bytes()));
        Ok((jkt, claims.get("nonce").and_then(Value::as_str).map(str::to_owned)))
    }

    fn respond(&mut self, now: Instant, start: Instant, req: &HttpRequest) -> Reply {
        let now_unix = UNIX + (now - start).as_secs();
        self.log.push(format!("{} {}", req.method(), req.url()));
        match (req.method(), req.url()) {
            (_, MCP) => self.mcp(now, now_unix, req),
            (HttpMethod::Get, PRM) => reply(200, json!({"resource": MCP, "authorization_servers": [ISSUER]})),
            (HttpMethod::Get, "https://auth.test/.well-known/oauth-authorization-server") => {
                let mut metadata = json!({
                    "issuer": ISSUER,
                    "authorization_endpoint": "https://auth.test/authorize",
                    "token_endpoint": TOKEN,
                    "code_challenge_methods_supported": ["S256"],
                    "token_endpoint_auth_methods_supported": ["none", "client_secret_basic", "private_key_jwt"],
                });
                if self.setup.dpop {
                    metadata["dpop_signing_alg_values_supported"] = json!(["ES256"]);
                }
                reply(200, metadata)
            }
            (HttpMethod::Post, TOKEN) => self.token(now, now_unix, req),
            (HttpMethod::Post, IDP_TOKEN) => {
                let form = form_of(req.body());
                self.exchanges.push(form.clone());
                let jag = format!("id-jag-for:{}:{}", form["audience"], form["resource"]);
                reply(
                    200,
                    json!({"access_token": jag, "issued_token_type": "urn:ietf:params:oauth:token-type:id-jag", "token_type": "N_A"}),
                )
            }
            _ => Reply { status: 404, headers: Vec::new(), body: String::new() },
        }
    }

    /// The user approves at once.
    fn authorize(&mut self, url: &str) -> String {
        let query: BTreeMap<String, String> = Url::parse(url).unwrap().query_pairs().into_owned().collect();
        let code = self.fresh("code");
        self.codes.insert(code.clone());
        format!("{REDIRECT}?code={code}&state={}", query["state"])
    }

    fn token(&mut self, now: Instant, now_unix: u64, req: &HttpRequest) -> Reply {
        let form = form_of(req.body());
        let grant = form.get("grant_type").cloned().unwrap_or_default();
        let basic = req.header("authorization").map(str::to_owned);
        let dpop = req.header("dpop").map(str::to_owned);
        self.token_requests.push((grant.clone(), form.clone(), basic.clone(), dpop.clone()));
        let mut bound = None;
        if self.setup.dpop {
            match self.check_proof(dpop.as_deref(), "POST", TOKEN, None, now_unix) {
                Ok((jkt, nonce)) => {
                    if self.setup.as_churn {
                        self.as_nonce_challenges += 1;
                        if self.as_nonce_challenges > CHURN_LIMIT {
                            return reply(500, json!({"error": "server_error"}));
                        }
                        let mut r = reply(400, json!({"error": "use_dpop_nonce"}));
                        r.headers.push(("DPoP-Nonce".into(), format!("as-{}", self.as_nonce_challenges)));
                        return r;
                    }
                    if self.setup.as_nonce && nonce.as_deref() != Some("as-nonce") {
                        let mut r = reply(400, json!({"error": "use_dpop_nonce"}));
                        r.headers.push(("DPoP-Nonce".into(), "as-nonce".into()));
                        return r;
                    }
                    bound = Some(jkt);
                }
                Err(why) => {
                    return reply(400, json!({"error": "invalid_dpop_proof", "error_description": why}));
                }
            }
        }
        match grant.as_str() {
            "authorization_code" if self.codes.contains(&form["code"]) => {}
            "client_credentials" => {
                assert_eq!(
                    form["client_assertion_type"],
                    "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
                );
                let (_, claims) = verify_jws(&form["client_assertion"], &self.client_key).unwrap();
                assert_eq!(
                    (&claims["iss"], &claims["sub"], &claims["aud"]),
                    (&json!("svc"), &json!("svc"), &json!(ISSUER))
                );
                assert_eq!(claims["iat"], now_unix, "iat is the driver's wall clock, run on with `now`");
                assert_eq!(claims["exp"], now_unix + 300);
                let jti = claims["jti"].as_str().unwrap().to_owned();
                assert!(!self.jtis.contains(&jti), "a fresh assertion for each request");
                self.jtis.push(jti);
            }
            "urn:ietf:params:oauth:grant-type:jwt-bearer" => {
                if self.setup.refuse_assertions {
                    return reply(400, json!({"error": "invalid_grant", "error_description": "audience"}));
                }
                if form["assertion"].starts_with("id-jag-for:") {
                    assert_eq!(form["assertion"], format!("id-jag-for:{ISSUER}:{MCP}"));
                    assert_eq!(basic.as_deref(), Some("Basic YXBwOnMzY3JldA=="), "app:s3cret");
                }
            }
            _ => return reply(400, json!({"error": "invalid_grant"})),
        }
        let access = self.fresh("token");
        let expires = self.setup.token_ttl.map(|s| now + Duration::from_secs(s));
        let token_type = if bound.is_some() { "DPoP" } else { "Bearer" };
        self.tokens.insert(access.clone(), (bound, expires));
        let mut body = json!({"access_token": access, "token_type": token_type});
        if let Some(ttl) = self.setup.token_ttl {
            body["expires_in"] = json!(ttl);
        }
        reply(200, body)
    }

    fn mcp(&mut self, now: Instant, now_unix: u64, req: &HttpRequest) -> Reply {
        let message: Value = serde_json::from_slice(req.body()).unwrap_or(Value::Null);
        let method = message["method"].as_str().unwrap_or("").to_owned();
        let scheme = if self.setup.dpop { "DPoP" } else { "Bearer" };
        let challenge = |error: Option<&str>| {
            let error = error.map(|e| format!("error=\"{e}\", ")).unwrap_or_default();
            format!("{scheme} {error}resource_metadata=\"{PRM}\"")
        };
        let open =
            self.setup.open_handshake && (method == "initialize" || method.starts_with("notifications/"));
        let authorization = req.header("authorization").map(str::to_owned);
        if !open {
            let Some(authorization) = authorization else {
                return Reply {
                    status: 401,
                    headers: vec![("WWW-Authenticate".into(), challenge(None))],
                    body: String::new(),
                };
            };
            let verdict = self.check_access(now, now_unix, req, &authorization);
            self.mcp_auth.push((authorization, verdict.clone().map(|_| ())));
            match verdict {
                Ok(true) if !self.setup.rs_churn => {}
                Ok(_) => {
                    self.rs_nonce_challenges += 1;
                    if self.setup.rs_churn && self.rs_nonce_challenges > CHURN_LIMIT {
                        return reply(500, json!({"error": "server_error"}));
                    }
                    let nonce = if self.setup.rs_churn {
                        format!("rs-{}", self.rs_nonce_challenges)
                    } else {
                        "rs-nonce".to_owned()
                    };
                    return Reply {
                        status: 401,
                        headers: vec![
                            ("WWW-Authenticate".into(), challenge(Some("use_dpop_nonce"))),
                            ("DPoP-Nonce".into(), nonce),
                        ],
                        body: json!({"error": "use_dpop_nonce"}).to_string(),
                    };
                }
                Err(_) => {
                    let headers = vec![("WWW-Authenticate".into(), challenge(Some("invalid_token")))];
                    return Reply { status: 401, headers, body: String::new() };
                }
            }
        }
        let id = message["id"].clone();
        match method.as_str() {
            "initialize" => Reply {
                status: 200,
                headers: vec![("Content-Type".into(), "application/json".into())],
                body: init_result("2025-11-25", json!({"tools": {}})),
            },
            _ if id.is_null() => Reply { status: 202, headers: Vec::new(), body: String::new() },
            _ => reply(200, json!({"jsonrpc": "2.0", "id": id, "result": {"content": []}})),
        }
    }

    /// Whether the request's credentials are good (`Ok(false)`: a nonce is missing).
    fn check_access(
        &mut self,
        now: Instant,
        now_unix: u64,
        req: &HttpRequest,
        authorization: &str,
    ) -> Result<bool, String> {
        let (scheme, token) = authorization.split_once(' ').ok_or("no scheme")?;
        let (bound, expires) = self.tokens.get(token).cloned().ok_or("unknown token")?;
        if expires.is_some_and(|at| at <= now) {
            return Err("expired".into());
        }
        let Some(jkt) = bound else {
            return if scheme == "Bearer" { Ok(true) } else { Err(format!("scheme {scheme}")) };
        };
        if scheme != "DPoP" {
            return Err(format!("a bound token presented as {scheme}"));
        }
        let (proof_jkt, nonce) =
            self.check_proof(req.header("dpop"), req.method().as_str(), MCP, Some(token), now_unix)?;
        if proof_jkt != jkt {
            return Err("the proof's key is not the token's".into());
        }
        Ok(!self.setup.rs_nonce || nonce.as_deref() == Some("rs-nonce"))
    }
}

/// A session with an authorizer, wired to a world.
struct Net {
    session: HttpSession,
    world: World,
    start: Instant,
    now: Instant,
    events: Vec<Event>,
    auth_events: Vec<AuthEvent>,
}

impl Net {
    fn new(setup: Setup, auth: AuthConfig) -> Self {
        let now = epoch();
        let http = HttpConfig::new(MCP).standalone_stream(setup.standalone);
        let mut authorizer = Authorizer::new(MCP, auth, counter_random());
        authorizer.set_wall_clock(now, UNIX);
        let session = HttpSession::new(http, config(), now).with_authorizer(authorizer);
        Net {
            session,
            world: World::new(setup),
            start: now,
            now,
            events: Vec::new(),
            auth_events: Vec::new(),
        }
    }

    /// Runs until nothing moves, answering every request and approving every authorization.
    fn run(&mut self) {
        // A session that never settles (a loop against the servers) fails the test, not hangs it.
        for _ in 0..1000 {
            let mut batch = Vec::new();
            while let Some(action) = self.session.poll_action(self.now) {
                if let HttpAction::Send(request) = action {
                    batch.push(request);
                }
            }
            let mut moved = !batch.is_empty();
            for request in batch {
                let r = self.world.respond(self.now, self.start, &request);
                let headers: Vec<(&str, &[u8])> =
                    r.headers.iter().map(|(n, v)| (n.as_str(), v.as_bytes())).collect();
                self.session.handle_response_head(self.now, request.stream(), r.status, headers);
                self.session.handle_response_body(self.now, request.stream(), r.body.as_bytes());
                self.session.handle_response_end(self.now, request.stream());
            }
            while let Some(event) = self.session.poll_auth_event() {
                moved = true;
                if let AuthEvent::AuthorizationRequired { url } = &event {
                    let redirect = self.world.authorize(url);
                    self.session.handle_authorization_redirect(self.now, &redirect).unwrap();
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
        panic!(
            "the session does not settle: {:#?}",
            &self.world.log[self.world.log.len().saturating_sub(20)..]
        );
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

    fn call(&mut self) -> Result<(), RequestError> {
        let params = CallToolRequestParams::new("echo");
        let id =
            self.session.commands().send::<CallTool>(self.now, &params, RequestOptions::default()).unwrap();
        self.run();
        self.outcome(&id).expect("the call is over")
    }

    fn outcome(&self, id: &RequestId) -> Option<Result<(), RequestError>> {
        self.events.iter().find_map(|e| match e {
            Event::Response { id: got, result } if got == id => {
                Some(result.as_ref().map(|_| ()).map_err(Clone::clone))
            }
            _ => None,
        })
    }
}

fn counter_random() -> Box<dyn mcp_sansio::auth::SecureRandom> {
    let mut n = 0u8;
    Box::new(move |buf: &mut [u8]| {
        for b in buf {
            n = n.wrapping_add(37);
            *b = n;
        }
    })
}

fn interactive() -> AuthConfig {
    AuthConfig::authorization_code(REDIRECT).client(ClientInfo::public("app"))
}

#[test]
fn dpop_with_both_nonces_binds_every_request_and_never_authorizes_twice() {
    let setup = Setup { dpop: true, as_nonce: true, rs_nonce: true, ..Setup::default() };
    let mut net = Net::new(setup, interactive());
    net.run();
    assert!(net.ready(), "{:#?}\n{:?}", net.world.log, net.auth_events);
    net.advance(Duration::from_secs(30));
    assert_eq!(net.call(), Ok(()));
    assert_eq!(net.call(), Ok(()));
    let w = &net.world;
    // The token request twice: without the nonce, then with it (same code, new proof).
    assert_eq!(w.token_requests.len(), 2);
    assert!(w.token_requests.iter().all(|(grant, ..)| grant == "authorization_code"));
    assert_eq!(w.token_requests[0].1, w.token_requests[1].1);
    // The MCP server asked for its nonce once; the request went again, and the nonce stayed.
    assert_eq!(w.rs_nonce_challenges, 1);
    assert!(
        w.mcp_auth.iter().all(|(a, verdict)| a.starts_with("DPoP ") && verdict.is_ok()),
        "{:?}",
        w.mcp_auth
    );
    // initialize (twice: without and with the nonce), initialized, two calls.
    assert_eq!(w.mcp_auth.len(), 5);
    assert_eq!(w.count("/authorize"), 0, "the user's page is not in the log (the harness approves)");
    let authorizations =
        net.auth_events.iter().filter(|e| matches!(e, AuthEvent::AuthorizationRequired { .. }));
    assert_eq!(authorizations.count(), 1);
    // Every proof at both servers had its own jti (the world refuses a replay).
    assert_eq!(w.jtis.len(), 2 + 5);
}

#[test]
fn dpop_without_nonces() {
    let setup = Setup { dpop: true, ..Setup::default() };
    let mut net = Net::new(setup, interactive());
    net.run();
    assert!(net.ready());
    assert_eq!(net.call(), Ok(()));
    assert_eq!(net.world.token_requests.len(), 1);
    assert_eq!(net.world.rs_nonce_challenges, 0);
    assert!(net.world.mcp_auth.iter().all(|(a, verdict)| a.starts_with("DPoP ") && verdict.is_ok()));
}

#[test]
fn an_mcp_server_that_gives_a_new_nonce_with_every_refusal_gets_one_retry_per_request() {
    // RFC 9449 §9: a request refused for want of the server's nonce goes again once, with the
    // nonce the refusal gave; refused again (with yet another), it fails, typed, at once.
    let setup = Setup { dpop: true, rs_churn: true, open_handshake: true, ..Setup::default() };
    let mut net = Net::new(setup, interactive());
    net.run();
    assert!(net.ready());
    for call in 1..=2 {
        let outcome = net.call();
        assert_eq!(net.world.rs_nonce_challenges, 2 * call, "{outcome:?}");
        let Err(RequestError::Unauthorized(error)) = &outcome else { panic!("{outcome:?}") };
        assert!(!error.is_retriable());
        assert_eq!(error, &AuthError::DpopNonceRejected { endpoint: "the MCP server" });
        assert!(error.to_string().contains("DPoP nonce"), "{error}");
    }
    // No new authorization for a nonce.
    let authorizations =
        net.auth_events.iter().filter(|e| matches!(e, AuthEvent::AuthorizationRequired { .. })).count();
    assert_eq!(authorizations, 1);
}

#[test]
fn the_stream_for_server_messages_gets_one_retry_for_a_new_nonce_too() {
    // The standalone GET is a request like the others: refused for a new nonce, it is opened
    // again once with it, then given up (a server that churns nonces gets two GETs).
    let setup =
        Setup { dpop: true, rs_churn: true, open_handshake: true, standalone: true, ..Setup::default() };
    let mut net = Net::new(setup, interactive());
    net.run();
    assert!(net.ready());
    net.advance(Duration::from_secs(5));
    let gets_with_token = net.world.log.iter().filter(|l| l.starts_with("GET https://mcp.test/mcp")).count();
    assert_eq!(net.world.rs_nonce_challenges, 2, "{:#?}", net.world.log);
    assert_eq!(gets_with_token, 3, "one without a token, two with: {:#?}", net.world.log);
}

#[test]
fn a_token_endpoint_that_gives_a_new_nonce_with_every_refusal_gets_one_retry() {
    let setup = Setup { dpop: true, as_churn: true, open_handshake: true, ..Setup::default() };
    let mut net = Net::new(setup, interactive());
    net.run();
    let outcome = net.call();
    assert_eq!(net.world.as_nonce_challenges, 2, "{outcome:?}");
    assert_eq!(net.world.token_requests.len(), 2);
    let Err(RequestError::Unauthorized(error)) = &outcome else { panic!("{outcome:?}") };
    assert_eq!(error, &AuthError::DpopNonceRejected { endpoint: "the token endpoint" });
    assert!(!error.is_retriable());
}

#[test]
fn private_key_jwt_signs_a_new_assertion_for_each_token() {
    let key = SigningKey::from_pkcs8_pem(CLIENT_KEY).unwrap();
    let config = AuthConfig::client_credentials(ClientInfo::private_key_jwt("svc", key));
    let setup = Setup { token_ttl: Some(60), ..Setup::default() };
    let mut net = Net::new(setup, config);
    net.run();
    assert!(net.ready());
    // The token expires: a new one, with an assertion signed now (the world checks iat).
    net.advance(Duration::from_secs(600));
    assert_eq!(net.call(), Ok(()));
    assert_eq!(net.world.token_requests.len(), 2);
    assert!(
        net.world
            .token_requests
            .iter()
            .all(|(grant, _, basic, _)| grant == "client_credentials" && basic.is_none())
    );
}

#[test]
fn a_refused_workload_assertion_is_sent_once() {
    let setup = Setup { open_handshake: true, refuse_assertions: true, ..Setup::default() };
    let config = AuthConfig::jwt_bearer("workload.jwt").client(ClientInfo::public("wl"));
    let mut net = Net::new(setup, config);
    net.run();
    assert!(net.ready());
    let refused = |error: &RequestError| matches!(error, RequestError::Unauthorized(AuthError::TokenRefused { error, .. }) if error == "invalid_grant");
    assert!(net.call().is_err_and(|e| refused(&e)));
    net.advance(Duration::from_secs(60));
    assert!(net.call().is_err_and(|e| refused(&e)));
    assert!(net.call().is_err_and(|e| refused(&e)));
    assert_eq!(net.world.token_requests.len(), 1, "no retry, no other grant");
    assert_eq!(net.world.token_requests[0].1["assertion"], "workload.jwt");
}

#[test]
fn a_workload_assertion_gets_a_token() {
    let setup = Setup { open_handshake: true, ..Setup::default() };
    let mut net = Net::new(setup, AuthConfig::jwt_bearer("workload.jwt").client(ClientInfo::public("wl")));
    net.run();
    assert_eq!(net.call(), Ok(()));
    let (grant, form, ..) = &net.world.token_requests[0];
    assert_eq!(grant, "urn:ietf:params:oauth:grant-type:jwt-bearer");
    assert_eq!((form["client_id"].as_str(), form["resource"].as_str()), ("wl", MCP));
}

#[test]
fn enterprise_managed_authorization_exchanges_the_id_token_then_presents_the_id_jag() {
    let idp = IdentityAssertion::new(IDP_TOKEN, "user.id.token").idp_client(ClientInfo::public("idp-client"));
    let config = AuthConfig::identity_assertion(idp, ClientInfo::confidential("app", "s3cret"));
    let mut net = Net::new(Setup::default(), config);
    net.run();
    assert!(net.ready(), "{:#?}\n{:?}", net.world.log, net.auth_events);
    assert_eq!(net.call(), Ok(()));
    let w = &net.world;
    assert_eq!(w.exchanges.len(), 1);
    assert_eq!(w.exchanges[0]["subject_token"], "user.id.token");
    assert_eq!(w.exchanges[0]["client_id"], "idp-client");
    assert_eq!(w.token_requests.len(), 1);
    assert!(w.mcp_auth.iter().all(|(a, verdict)| a.starts_with("Bearer ") && verdict.is_ok()));
}
