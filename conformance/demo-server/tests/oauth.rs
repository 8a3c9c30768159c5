//! End-to-end tests of OAuth mode (`mcp-demo-server --http 127.0.0.1:0 --oauth`): the real
//! binary (and once `serve_http` in-process), driven with raw HTTP/1.1 over `TcpStream`, as a
//! client would go: 401 → resource metadata → server metadata → registration → authorization
//! (PKCE S256, computed here) → tokens → `/mcp`.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::thread;
use std::time::Duration;

use common::HttpServer;
use serde_json::{Value, json};

/// How long any single read may block.
const TIMEOUT: Duration = Duration::from_secs(10);
/// Where the tests' clients say they listen for the redirect (nothing listens: the tests read
/// `Location` instead of following it).
const REDIRECT_URI: &str = "http://127.0.0.1:9/callback";

/// `mcp-demo-server --http 127.0.0.1:0 --oauth ...` (killed and reaped when dropped), or the
/// server in this process (no process).
struct Demo {
    /// Held for its `Drop`, which kills the process.
    _process: Option<HttpServer>,
    /// `host:port`.
    address: String,
}

impl Demo {
    fn spawn(extra: &[&str]) -> Self {
        let args: Vec<&str> =
            ["--http", "127.0.0.1:0", "--oauth"].into_iter().chain(extra.iter().copied()).collect();
        let process = HttpServer::spawn(&args);
        Self { address: process.address.clone(), _process: Some(process) }
    }

    fn issuer(&self) -> String {
        format!("http://{}", self.address)
    }

    fn resource(&self) -> String {
        format!("{}/mcp", self.issuer())
    }

    fn resource_metadata_url(&self) -> String {
        format!("{}/.well-known/oauth-protected-resource/mcp", self.issuer())
    }

    /// One request on a fresh connection (closed after the response).
    fn send(&self, method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> Response {
        let mut stream = TcpStream::connect(&self.address).expect("connect");
        stream.set_read_timeout(Some(TIMEOUT)).expect("timeout");
        let mut bytes =
            format!("{method} {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n", self.address);
        for (name, value) in headers {
            bytes.push_str(&format!("{name}: {value}\r\n"));
        }
        bytes.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
        let mut bytes = bytes.into_bytes();
        bytes.extend_from_slice(body);
        stream.write_all(&bytes).expect("write request");
        read_response(BufReader::new(stream))
    }

    fn get(&self, path: &str) -> Response {
        self.send("GET", path, &[], b"")
    }

    fn get_json(&self, path: &str) -> Value {
        let response = self.get(path);
        assert_eq!(response.status, 200, "{path}: {response:?}");
        response.json()
    }

    /// `POST /token` with a form body (and extra headers, such as HTTP Basic).
    fn token(&self, form: &[(&str, &str)], headers: &[(&str, &str)]) -> Response {
        let mut all = vec![("Content-Type", "application/x-www-form-urlencoded")];
        all.extend_from_slice(headers);
        self.send("POST", "/token", &all, encode_form(form).as_bytes())
    }

    /// `POST /register` with JSON client metadata.
    fn register(&self, metadata: &Value) -> Response {
        let headers = [("Content-Type", "application/json")];
        self.send("POST", "/register", &headers, metadata.to_string().as_bytes())
    }

    /// A 2026-07-28 request to `/mcp` with every header it needs, and `token` as bearer.
    fn mcp(&self, token: Option<&str>, method: &str, params: Value) -> Response {
        let mut params = params;
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
        });
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let authorization = token.map(|token| format!("Bearer {token}"));
        let mut headers = vec![
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", method),
        ];
        if let Some(name) = params["name"].as_str() {
            headers.push(("Mcp-Name", name));
        }
        if let Some(authorization) = &authorization {
            headers.push(("Authorization", authorization));
        }
        self.send("POST", "/mcp", &headers, body.to_string().as_bytes())
    }

    fn call_tool(&self, token: &str, name: &str) -> Response {
        self.mcp(Some(token), "tools/call", json!({"name": name, "arguments": {"message": "hi"}}))
    }

    fn stats(&self) -> Value {
        self.get_json("/demo/oauth-stats")
    }

    /// Registers a public client (`token_endpoint_auth_method: none`) for `REDIRECT_URI`.
    fn register_public_client(&self) -> String {
        let metadata = json!({
            "client_name": "oauth-test",
            "redirect_uris": [REDIRECT_URI],
            "grant_types": ["authorization_code", "refresh_token"],
            "token_endpoint_auth_method": "none",
        });
        let response = self.register(&metadata);
        assert_eq!(response.status, 201, "{response:?}");
        response.json()["client_id"].as_str().expect("client_id").to_owned()
    }

    /// `GET /authorize` with `params`; the answer must be a redirect: its `Location`'s base and
    /// query pairs.
    fn authorize(&self, params: &[(&str, &str)]) -> (String, Vec<(String, String)>) {
        let response = self.get(&format!("/authorize?{}", encode_form(params)));
        assert_eq!(response.status, 302, "{response:?}");
        let location = response.header("location").expect("Location");
        let (base, query) = location.split_once('?').expect("a query");
        (base.to_owned(), decode_form(query))
    }

    /// A successful authorization with PKCE for `client_id`: the code.
    fn authorization_code(&self, client_id: &str, verifier: &str, scope: Option<&str>) -> String {
        let challenge = s256(verifier);
        let mut params = vec![
            ("response_type", "code"),
            ("client_id", client_id),
            ("redirect_uri", REDIRECT_URI),
            ("code_challenge", &challenge),
            ("code_challenge_method", "S256"),
            ("state", "st-1"),
        ];
        if let Some(scope) = scope {
            params.push(("scope", scope));
        }
        let (base, query) = self.authorize(&params);
        assert_eq!(base, REDIRECT_URI);
        assert_eq!(value(&query, "state"), Some("st-1"));
        assert_eq!(value(&query, "iss"), Some(self.issuer().as_str()));
        value(&query, "code").expect("code").to_owned()
    }

    /// Redeems `code` (public client); the response.
    fn redeem(&self, client_id: &str, code: &str, verifier: &str) -> Response {
        let form = [
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", REDIRECT_URI),
            ("code_verifier", verifier),
            ("client_id", client_id),
        ];
        self.token(&form, &[])
    }
}

/// A response read completely.
#[derive(Debug)]
struct Response {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Response {
    fn header(&self, name: &str) -> Option<&str> {
        let mut found = self.headers.iter().filter(|(known, _)| known.eq_ignore_ascii_case(name));
        let first = found.next().map(|(_, value)| value.as_str());
        assert!(found.next().is_none(), "{name} is repeated: {self:?}");
        first
    }

    fn json(&self) -> Value {
        assert_eq!(self.header("content-type"), Some("application/json"), "{self:?}");
        serde_json::from_slice(&self.body).expect("JSON body")
    }

    /// An OAuth error response: the status and `error` code.
    fn assert_oauth_error(&self, status: u16, code: &str) {
        assert_eq!(self.status, status, "{self:?}");
        let body = self.json();
        assert_eq!(body["error"], code, "{body}");
        assert!(body["error_description"].is_string(), "{body}");
    }
}

fn read_response(mut reader: BufReader<TcpStream>) -> Response {
    let mut line = String::new();
    reader.read_line(&mut line).expect("status line");
    let status =
        line.split(' ').nth(1).and_then(|code| code.parse().ok()).unwrap_or_else(|| panic!("{line:?}"));
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).expect("header line");
        let line = line.trim_end_matches(['\r', '\n']);
        if line.is_empty() {
            break;
        }
        let (name, value) = line.split_once(':').expect("header");
        headers.push((name.to_owned(), value.trim().to_owned()));
    }
    let length = headers
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case("content-length"))
        .map(|(_, value)| value.parse::<usize>().expect("Content-Length"))
        .expect("these answers all have a Content-Length");
    let mut body = vec![0; length];
    reader.read_exact(&mut body).expect("body");
    Response { status, headers, body }
}

// ---------------------------------------------------------------------------------------------
// Encodings a client needs: form-urlencoding, HTTP Basic, PKCE S256.
// ---------------------------------------------------------------------------------------------

fn encode(text: &str) -> String {
    text.bytes()
        .map(|byte| match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                char::from(byte).to_string()
            }
            b' ' => "+".to_owned(),
            other => format!("%{other:02X}"),
        })
        .collect()
}

fn encode_form(pairs: &[(&str, &str)]) -> String {
    pairs
        .iter()
        .map(|(name, value)| format!("{}={}", encode(name), encode(value)))
        .collect::<Vec<_>>()
        .join("&")
}

fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        match bytes[at] {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = std::str::from_utf8(&bytes[at + 1..at + 3]).expect("escape");
                out.push(u8::from_str_radix(hex, 16).expect("hex"));
                at += 2;
            }
            other => out.push(other),
        }
        at += 1;
    }
    String::from_utf8(out).expect("UTF-8")
}

fn decode_form(query: &str) -> Vec<(String, String)> {
    query
        .split('&')
        .map(|pair| {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            (decode(name), decode(value))
        })
        .collect()
}

fn value<'a>(pairs: &'a [(String, String)], name: &str) -> Option<&'a str> {
    pairs.iter().find(|(known, _)| known == name).map(|(_, value)| value.as_str())
}

fn base64(bytes: &[u8], url: bool) -> String {
    let alphabet: &[u8; 64] = if url {
        b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    } else {
        b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    };
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let value =
            chunk.iter().enumerate().fold(0_u32, |acc, (at, byte)| acc | (u32::from(*byte) << (16 - 8 * at)));
        for at in 0..=chunk.len() {
            out.push(char::from(alphabet[((value >> (18 - 6 * at)) & 63) as usize]));
        }
        if !url {
            out.push_str(&"=".repeat(3 - chunk.len()));
        }
    }
    out
}

/// `Authorization: Basic` for `id` and `secret`, each form-urlencoded first (RFC 6749 §2.3.1).
fn basic(id: &str, secret: &str) -> String {
    format!("Basic {}", base64(format!("{}:{}", encode(id), encode(secret)).as_bytes(), false))
}

/// SHA-256 (RustCrypto's `sha2`).
fn sha256(data: &[u8]) -> [u8; 32] {
    use sha2::Digest;
    sha2::Sha256::digest(data).into()
}

/// The PKCE S256 challenge of `verifier`.
fn s256(verifier: &str) -> String {
    base64(&sha256(verifier.as_bytes()), true)
}

/// A fresh 43-character verifier.
fn verifier(seed: u8) -> String {
    format!("{}{seed:03}", "v".repeat(40))
}

#[test]
fn the_test_encodings_are_right() {
    assert_eq!(
        s256("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
        "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
    );
    assert_eq!(base64(b"ab", false), "YWI=");
    assert_eq!(decode(&encode("a b+c:é")), "a b+c:é");
}

// ---------------------------------------------------------------------------------------------
// The resource: 401 and the metadata documents
// ---------------------------------------------------------------------------------------------

#[test]
fn mcp_without_a_valid_token_is_401_pointing_at_the_metadata() {
    let server = Demo::spawn(&[]);
    let response = server.mcp(None, "tools/list", json!({}));
    assert_eq!(response.status, 401);
    let expected =
        format!("Bearer resource_metadata=\"{}\", scope=\"mcp:tools\"", server.resource_metadata_url());
    assert_eq!(response.header("www-authenticate"), Some(expected.as_str()));
    // Every method of /mcp is protected.
    for method in ["GET", "DELETE"] {
        assert_eq!(
            server.send(method, "/mcp", &[("Accept", "text/event-stream")], b"").status,
            401,
            "{method}"
        );
    }
    // Another scheme counts as no token; an unknown token is invalid_token.
    let basic = server.send("POST", "/mcp", &[("Authorization", "Basic YTpi")], b"{}");
    assert_eq!(basic.header("www-authenticate"), Some(expected.as_str()));
    let unknown = server.mcp(Some("at.1.0123456789abcdef"), "tools/list", json!({}));
    assert_eq!(unknown.status, 401);
    let challenge = unknown.header("www-authenticate").expect("WWW-Authenticate");
    assert!(challenge.starts_with("Bearer error=\"invalid_token\""), "{challenge}");
    assert!(
        challenge.contains(&format!("resource_metadata=\"{}\"", server.resource_metadata_url())),
        "{challenge}"
    );
    assert!(challenge.ends_with("scope=\"mcp:tools\""), "{challenge}");
    // Calling the admin tool without a token names both scopes.
    let admin = server.mcp(None, "tools/call", json!({"name": "admin_echo", "arguments": {"message": "x"}}));
    assert!(
        admin.header("www-authenticate").is_some_and(|value| value.contains("scope=\"mcp:tools mcp:admin\""))
    );
    assert_eq!(
        server.stats()["mcp_requests"],
        json!({"authorized": 0, "unauthorized": 6, "insufficient_scope": 0})
    );
}

#[test]
fn metadata_documents_lead_from_the_resource_to_the_endpoints() {
    let server = Demo::spawn(&[]);
    let issuer = server.issuer();
    let resource_metadata = server.get_json("/.well-known/oauth-protected-resource/mcp");
    assert_eq!(resource_metadata["resource"], server.resource());
    assert_eq!(resource_metadata["authorization_servers"], json!([issuer]));
    assert_eq!(resource_metadata["scopes_supported"], json!(["mcp:tools", "mcp:admin"]));
    assert_eq!(resource_metadata["bearer_methods_supported"], json!(["header"]));
    assert_eq!(server.get_json("/.well-known/oauth-protected-resource"), resource_metadata);
    let metadata = server.get_json("/.well-known/oauth-authorization-server");
    assert_eq!(metadata["issuer"], issuer);
    assert_eq!(metadata["authorization_endpoint"], format!("{issuer}/authorize"));
    assert_eq!(metadata["token_endpoint"], format!("{issuer}/token"));
    assert_eq!(metadata["registration_endpoint"], format!("{issuer}/register"));
    assert_eq!(metadata["response_types_supported"], json!(["code"]));
    assert_eq!(
        metadata["grant_types_supported"],
        json!(["authorization_code", "refresh_token", "client_credentials"])
    );
    assert_eq!(metadata["code_challenge_methods_supported"], json!(["S256"]));
    assert_eq!(
        metadata["token_endpoint_auth_methods_supported"],
        json!(["none", "client_secret_basic", "client_secret_post"])
    );
    assert_eq!(metadata["scopes_supported"], json!(["mcp:tools", "mcp:admin"]));
    assert_eq!(metadata["client_id_metadata_document_supported"], false);
    assert_eq!(metadata["authorization_response_iss_parameter_supported"], true);
    // GET only; other paths are still 404.
    assert_eq!(server.send("POST", "/.well-known/oauth-authorization-server", &[], b"").status, 405);
    assert_eq!(server.get("/.well-known/openid-configuration").status, 404);
}

// ---------------------------------------------------------------------------------------------
// Dynamic client registration
// ---------------------------------------------------------------------------------------------

#[test]
fn registration_validates_and_echoes_the_metadata() {
    let server = Demo::spawn(&[]);
    let metadata = json!({
        "client_name": "Test App",
        "redirect_uris": [REDIRECT_URI, "https://app.example/cb"],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
        "scope": "mcp:tools",
    });
    let response = server.register(&metadata);
    assert_eq!(response.status, 201);
    assert_eq!(response.header("cache-control"), Some("no-store"));
    let client = response.json();
    assert!(client["client_id"].as_str().is_some_and(|id| !id.is_empty()), "{client}");
    assert!(client["client_id_issued_at"].is_u64());
    assert!(client.get("client_secret").is_none(), "a public client has no secret: {client}");
    for field in [
        "client_name",
        "redirect_uris",
        "grant_types",
        "response_types",
        "token_endpoint_auth_method",
        "scope",
    ] {
        assert_eq!(client[field], metadata[field], "{field}");
    }
    // Without an auth method a client is client_secret_basic (RFC 7591), so it gets a secret;
    // the defaults are filled in.
    let confidential = server.register(&json!({"redirect_uris": [REDIRECT_URI]})).json();
    assert_eq!(confidential["token_endpoint_auth_method"], "client_secret_basic");
    assert!(confidential["client_secret"].as_str().is_some_and(|secret| !secret.is_empty()));
    assert_eq!(confidential["client_secret_expires_at"], 0);
    assert_eq!(confidential["grant_types"], json!(["authorization_code"]));
    assert_ne!(confidential["client_id"], client["client_id"]);
    // A client_credentials-only client needs no redirect URI.
    let machine =
        json!({"grant_types": ["client_credentials"], "token_endpoint_auth_method": "client_secret_post"});
    assert_eq!(server.register(&machine).status, 201);

    server
        .register(&json!({"token_endpoint_auth_method": "none"}))
        .assert_oauth_error(400, "invalid_redirect_uri");
    server.register(&json!({"redirect_uris": []})).assert_oauth_error(400, "invalid_redirect_uri");
    server.register(&json!({"redirect_uris": ["/relative"]})).assert_oauth_error(400, "invalid_redirect_uri");
    server
        .register(&json!({"redirect_uris": ["http://127.0.0.1/cb#frag"]}))
        .assert_oauth_error(400, "invalid_redirect_uri");
    server
        .register(&json!({"redirect_uris": "http://127.0.0.1/cb"}))
        .assert_oauth_error(400, "invalid_client_metadata");
    let public_machine = json!({"grant_types": ["client_credentials"], "token_endpoint_auth_method": "none"});
    server.register(&public_machine).assert_oauth_error(400, "invalid_client_metadata");
    let bad_method =
        json!({"redirect_uris": [REDIRECT_URI], "token_endpoint_auth_method": "private_key_jwt"});
    server.register(&bad_method).assert_oauth_error(400, "invalid_client_metadata");
    let implicit = json!({"redirect_uris": [REDIRECT_URI], "grant_types": ["implicit"]});
    server.register(&implicit).assert_oauth_error(400, "invalid_client_metadata");
    let response = server.send("POST", "/register", &[("Content-Type", "application/json")], b"{not json");
    response.assert_oauth_error(400, "invalid_client_metadata");
    assert_eq!(server.get("/register").status, 405);

    let stats = server.stats();
    assert_eq!((stats["registrations"].as_u64(), stats["registration_errors"].as_u64()), (Some(3), Some(9)));
}

// ---------------------------------------------------------------------------------------------
// Authorization code flow with PKCE, refresh rotation, step-up
// ---------------------------------------------------------------------------------------------

#[test]
fn authorization_code_flow_with_pkce_and_refresh_rotation() {
    let server = Demo::spawn(&[]);
    let client_id = server.register_public_client();

    // The redirect carries code, state and iss; a loopback redirect URI may use any port.
    let verifier_a = verifier(1);
    let challenge = s256(&verifier_a);
    let other_port = "http://127.0.0.1:54321/callback";
    let params = [
        ("response_type", "code"),
        ("client_id", client_id.as_str()),
        ("redirect_uri", other_port),
        ("code_challenge", &challenge),
        ("code_challenge_method", "S256"),
        ("state", "xyz ü&="),
        ("resource", &server.resource()),
    ];
    let (base, query) = server.authorize(&params);
    assert_eq!(base, other_port);
    assert_eq!(value(&query, "state"), Some("xyz ü&="));
    assert_eq!(value(&query, "iss"), Some(server.issuer().as_str()));
    let code = value(&query, "code").expect("code").to_owned();
    // Redeemed with the wrong verifier: refused, and the code is used up.
    let form = |code: &str, verifier: &str| {
        let form = [
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", other_port),
            ("code_verifier", verifier),
            ("client_id", client_id.as_str()),
            ("resource", &server.resource()),
        ];
        form.map(|(name, value)| (name, value.to_owned()))
    };
    let send =
        |pairs: [(&str, String); 6]| server.token(&pairs.each_ref().map(|(n, v)| (*n, v.as_str())), &[]);
    send(form(&code, &verifier(2))).assert_oauth_error(400, "invalid_grant");
    send(form(&code, &verifier_a)).assert_oauth_error(400, "invalid_grant");

    // The right verifier: an access token, a refresh token (always, for this grant), the scope.
    let verifier_b = verifier(3);
    let code = server.authorization_code(&client_id, &verifier_b, None);
    let response = server.redeem(&client_id, &code, &verifier_b);
    assert_eq!(response.status, 200, "{response:?}");
    assert_eq!(response.header("cache-control"), Some("no-store"));
    let tokens = response.json();
    assert_eq!(tokens["token_type"], "Bearer");
    assert_eq!(tokens["expires_in"], 3600);
    assert_eq!(tokens["scope"], "mcp:tools");
    let access = tokens["access_token"].as_str().expect("access_token").to_owned();
    let refresh = tokens["refresh_token"].as_str().expect("refresh_token").to_owned();

    // The token opens /mcp, which lists the admin tool in OAuth mode.
    let listed = server.mcp(Some(&access), "tools/list", json!({}));
    assert_eq!(listed.status, 200, "{listed:?}");
    let names: Vec<Value> = listed.json()["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|tool| tool["name"].clone())
        .collect();
    assert!(names.contains(&json!("echo")) && names.contains(&json!("admin_echo")), "{names:?}");
    assert_eq!(server.call_tool(&access, "echo").json()["result"]["content"][0]["text"], "hi");

    // Refresh rotates: new tokens; the old refresh token is refused from then on.
    let refreshed = server.token(
        &[("grant_type", "refresh_token"), ("refresh_token", &refresh), ("client_id", &client_id)],
        &[],
    );
    assert_eq!(refreshed.status, 200, "{refreshed:?}");
    let refreshed = refreshed.json();
    let new_access = refreshed["access_token"].as_str().expect("access_token").to_owned();
    let new_refresh = refreshed["refresh_token"].as_str().expect("refresh_token").to_owned();
    assert_ne!(new_access, access);
    assert_ne!(new_refresh, refresh);
    assert_eq!(refreshed["scope"], "mcp:tools");
    let reused = server.token(
        &[("grant_type", "refresh_token"), ("refresh_token", &refresh), ("client_id", &client_id)],
        &[],
    );
    reused.assert_oauth_error(400, "invalid_grant");
    assert_eq!(server.mcp(Some(&new_access), "tools/list", json!({})).status, 200);
    // A refresh may not widen the scope.
    let wider = [
        ("grant_type", "refresh_token"),
        ("refresh_token", &new_refresh),
        ("client_id", &client_id),
        ("scope", "mcp:tools mcp:admin"),
    ];
    server.token(&wider, &[]).assert_oauth_error(400, "invalid_scope");

    // Reusing the code is refused, and revokes every token of that authorization.
    server.redeem(&client_id, &code, &verifier_b).assert_oauth_error(400, "invalid_grant");
    let revoked = server.mcp(Some(&new_access), "tools/list", json!({}));
    assert_eq!(revoked.status, 401);
    assert!(
        revoked.header("www-authenticate").is_some_and(|value| value.contains("error=\"invalid_token\""))
    );
    let form = [("grant_type", "refresh_token"), ("refresh_token", &new_refresh), ("client_id", &client_id)];
    server.token(&form, &[]).assert_oauth_error(400, "invalid_grant");

    let stats = server.stats();
    assert_eq!(stats["registrations"], 1);
    assert_eq!(stats["authorizations"], 2);
    assert_eq!(stats["token_requests"], json!({"authorization_code": 4, "refresh_token": 4}));
    assert_eq!(stats["token_errors"], json!({"invalid_grant": 5, "invalid_scope": 1}));
    assert_eq!(
        (stats["access_tokens_issued"].as_u64(), stats["refresh_tokens_issued"].as_u64()),
        (Some(2), Some(2))
    );
    assert_eq!(stats["mcp_requests"], json!({"authorized": 3, "unauthorized": 1, "insufficient_scope": 0}));
}

#[test]
fn the_admin_tool_needs_a_step_up_to_mcp_admin() {
    let server = Demo::spawn(&[]);
    let client_id = server.register_public_client();
    let first = verifier(1);
    let code = server.authorization_code(&client_id, &first, None);
    let tokens = server.redeem(&client_id, &code, &first).json();
    let narrow = tokens["access_token"].as_str().expect("access_token");
    let refused = server.call_tool(narrow, "admin_echo");
    assert_eq!(refused.status, 403, "{refused:?}");
    let expected = format!(
        "Bearer error=\"insufficient_scope\", scope=\"mcp:tools mcp:admin\", resource_metadata=\"{}\"",
        server.resource_metadata_url()
    );
    assert_eq!(refused.header("www-authenticate"), Some(expected.as_str()));
    // In a batch too (a legacy-session shape; the scope check comes first).
    let batch =
        json!([{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "admin_echo"}}]);
    let headers = [("Authorization", &*format!("Bearer {narrow}")), ("Content-Type", "application/json")];
    assert_eq!(server.send("POST", "/mcp", &headers, batch.to_string().as_bytes()).status, 403);

    // Step up: authorize again with both scopes.
    let second = verifier(2);
    let code = server.authorization_code(&client_id, &second, Some("mcp:tools mcp:admin"));
    let tokens = server.redeem(&client_id, &code, &second).json();
    assert_eq!(tokens["scope"], "mcp:tools mcp:admin");
    let wide = tokens["access_token"].as_str().expect("access_token");
    let answered = server.call_tool(wide, "admin_echo");
    assert_eq!(answered.status, 200, "{answered:?}");
    assert_eq!(answered.json()["result"]["content"][0]["text"], "hi");
    // A refresh may ask for less than the grant.
    let refresh = tokens["refresh_token"].as_str().expect("refresh_token");
    let form = [
        ("grant_type", "refresh_token"),
        ("refresh_token", refresh),
        ("client_id", &client_id),
        ("scope", "mcp:tools"),
    ];
    let narrowed = server.token(&form, &[]).json();
    assert_eq!(narrowed["scope"], "mcp:tools");
    assert_eq!(server.call_tool(narrowed["access_token"].as_str().expect("token"), "admin_echo").status, 403);
    // A token with mcp:admin only still lacks mcp:tools.
    let third = verifier(3);
    let code = server.authorization_code(&client_id, &third, Some("mcp:admin"));
    let admin_only = server.redeem(&client_id, &code, &third).json();
    let response = server.mcp(admin_only["access_token"].as_str(), "tools/list", json!({}));
    assert_eq!(response.status, 403);
    assert!(response.header("www-authenticate").is_some_and(|value| value.contains("scope=\"mcp:tools\"")));
    assert_eq!(
        server.stats()["mcp_requests"],
        json!({"authorized": 1, "unauthorized": 0, "insufficient_scope": 4})
    );
}

#[test]
fn authorization_errors_redirect_when_the_redirect_uri_is_trusted() {
    let server = Demo::spawn(&[]);
    let client_id = server.register_public_client();
    let challenge = s256(&verifier(1));
    let good: Vec<(&str, String)> = vec![
        ("response_type", "code".into()),
        ("client_id", client_id.clone()),
        ("redirect_uri", REDIRECT_URI.into()),
        ("code_challenge", challenge.clone()),
        ("code_challenge_method", "S256".into()),
        ("state", "s".into()),
    ];
    let with = |changes: &[(&'static str, Option<&str>)]| -> Vec<(&str, String)> {
        let mut params = good.clone();
        for (name, value) in changes {
            params.retain(|(known, _)| known != name);
            if let Some(value) = value {
                params.push((name, (*value).to_owned()));
            }
        }
        params
    };
    let authorize = |params: &[(&str, String)]| {
        let pairs: Vec<(&str, &str)> = params.iter().map(|(name, value)| (*name, value.as_str())).collect();
        server.get(&format!("/authorize?{}", encode_form(&pairs)))
    };
    // Errors the client hears about at its redirect URI, with state and iss.
    let resource = "http://elsewhere.example/mcp";
    for (changes, error) in [
        (&[("code_challenge", None)][..], "invalid_request"),
        (&[("code_challenge_method", None)], "invalid_request"),
        (&[("code_challenge_method", Some("plain"))], "invalid_request"),
        (&[("code_challenge", Some("too-short"))], "invalid_request"),
        (&[("response_type", Some("token"))], "unsupported_response_type"),
        (&[("response_type", None)], "invalid_request"),
        (&[("resource", Some(resource))], "invalid_target"),
        (&[("scope", Some("mcp:tools root"))], "invalid_scope"),
    ] {
        let response = authorize(&with(changes));
        assert_eq!(response.status, 302, "{changes:?}: {response:?}");
        let location = response.header("location").expect("Location");
        let (base, query) = location.split_once('?').expect("query");
        assert_eq!(base, REDIRECT_URI);
        let query = decode_form(query);
        assert_eq!(value(&query, "error"), Some(error), "{changes:?}");
        assert_eq!(value(&query, "state"), Some("s"));
        assert_eq!(value(&query, "iss"), Some(server.issuer().as_str()));
        assert!(value(&query, "code").is_none());
    }
    // A repeated parameter is refused too.
    let mut repeated = good.clone();
    repeated.push(("state", "t".into()));
    assert!(
        authorize(&repeated)
            .header("location")
            .is_some_and(|location| location.contains("error=invalid_request"))
    );
    // Errors that cannot trust the redirect URI: 400, no redirect.
    for changes in [
        &[("client_id", Some("nobody"))][..],
        &[("client_id", None)],
        &[("redirect_uri", Some("http://127.0.0.1:9/elsewhere"))],
        &[("redirect_uri", Some("https://attacker.example/callback"))],
        &[("redirect_uri", Some("http://localhost:9/callback"))],
    ] {
        let response = authorize(&with(changes));
        assert_eq!(response.status, 400, "{changes:?}: {response:?}");
        assert!(response.header("location").is_none());
    }
    // One registered URI: redirect_uri may be left out (then it must be left out at /token too,
    // or be that URI).
    let code_params = with(&[("redirect_uri", None)]);
    let response = authorize(&code_params);
    assert_eq!(response.status, 302);
    assert!(response.header("location").is_some_and(|location| location.starts_with(REDIRECT_URI)));
    assert_eq!(server.send("POST", "/authorize", &[], b"").status, 405);
    let stats = server.stats();
    assert_eq!(stats["authorizations"], 1);
    assert_eq!(
        stats["authorization_errors"],
        json!({"invalid_client": 1, "invalid_request": 10, "invalid_scope": 1, "invalid_target": 1, "unsupported_response_type": 1})
    );
}

#[test]
fn token_requests_check_the_client_and_the_form() {
    let server = Demo::spawn(&["--oauth-client", "ci:pw"]);
    let client_id = server.register_public_client();
    let first = verifier(1);
    let code = server.authorization_code(&client_id, &first, None);
    // Another client cannot redeem it (and does not use it up).
    let form = [
        ("grant_type", "authorization_code"),
        ("code", &code),
        ("redirect_uri", REDIRECT_URI),
        ("code_verifier", &first),
        ("client_id", "ci"),
        ("client_secret", "pw"),
    ];
    server.token(&form, &[]).assert_oauth_error(400, "invalid_grant");
    // A different redirect_uri than at /authorize is refused.
    let form = [
        ("grant_type", "authorization_code"),
        ("code", &code),
        ("redirect_uri", "http://127.0.0.1:10/callback"),
        ("code_verifier", &first),
        ("client_id", &client_id),
    ];
    server.token(&form, &[]).assert_oauth_error(400, "invalid_grant");
    // Not a form, no grant type, an unknown grant type, a public client with a secret.
    let json_body = server.send("POST", "/token", &[("Content-Type", "application/json")], b"{}");
    json_body.assert_oauth_error(400, "invalid_request");
    server.token(&[("client_id", &client_id)], &[]).assert_oauth_error(400, "invalid_request");
    server
        .token(&[("grant_type", "password"), ("client_id", &client_id)], &[])
        .assert_oauth_error(400, "unsupported_grant_type");
    server
        .token(
            &[("grant_type", "authorization_code"), ("client_id", &client_id), ("client_secret", "x")],
            &[],
        )
        .assert_oauth_error(401, "invalid_client");
    server
        .token(&[("grant_type", "authorization_code"), ("client_id", "nobody")], &[])
        .assert_oauth_error(401, "invalid_client");
    server.token(&[("grant_type", "authorization_code")], &[]).assert_oauth_error(401, "invalid_client");
    server
        .token(
            &[
                ("grant_type", "client_credentials"),
                ("grant_type", "client_credentials"),
                ("client_id", "ci"),
                ("client_secret", "pw"),
            ],
            &[],
        )
        .assert_oauth_error(400, "invalid_request");
    assert_eq!(server.get("/token").status, 405);
    let stats = server.stats();
    assert_eq!(
        stats["token_requests"],
        json!({"authorization_code": 5, "client_credentials": 1, "other": 3})
    );
}

// ---------------------------------------------------------------------------------------------
// Client credentials, client authentication, expiry
// ---------------------------------------------------------------------------------------------

#[test]
fn client_credentials_with_basic_and_post() {
    // The secret has characters that HTTP Basic carries form-urlencoded (RFC 6749 §2.3.1).
    let secret = "s3:cr t+%";
    let server = Demo::spawn(&["--oauth-client", &format!("ci:{secret}")]);
    let grant = [("grant_type", "client_credentials")];
    let response = server.token(&grant, &[("Authorization", &basic("ci", secret))]);
    assert_eq!(response.status, 200, "{response:?}");
    let tokens = response.json();
    assert_eq!(tokens["scope"], "mcp:tools");
    assert!(tokens.get("refresh_token").is_none(), "client_credentials gets no refresh token: {tokens}");
    let access = tokens["access_token"].as_str().expect("access_token");
    assert_eq!(server.mcp(Some(access), "tools/list", json!({})).status, 200);

    let post = [
        ("grant_type", "client_credentials"),
        ("client_id", "ci"),
        ("client_secret", secret),
        ("scope", "mcp:tools mcp:admin"),
    ];
    let tokens = server.token(&post, &[]).json();
    assert_eq!(tokens["scope"], "mcp:tools mcp:admin");
    assert_eq!(server.call_tool(tokens["access_token"].as_str().expect("token"), "admin_echo").status, 200);

    // Wrong secrets: 401 invalid_client, with a Basic challenge when Basic was used.
    let response = server.token(&grant, &[("Authorization", &basic("ci", "wrong"))]);
    response.assert_oauth_error(401, "invalid_client");
    assert_eq!(response.header("www-authenticate"), Some("Basic realm=\"mcp-demo-server\""));
    let response = server
        .token(&[("grant_type", "client_credentials"), ("client_id", "ci"), ("client_secret", "wrong")], &[]);
    response.assert_oauth_error(401, "invalid_client");
    assert!(response.header("www-authenticate").is_none());
    server.token(&grant, &[("Authorization", "Basic !!!")]).assert_oauth_error(401, "invalid_client");
    // The raw secret in Basic (not form-urlencoded first) is not the secret: '%' is a bad escape.
    let raw = format!("Basic {}", base64(format!("ci:{secret}").as_bytes(), false));
    server.token(&grant, &[("Authorization", &raw)]).assert_oauth_error(401, "invalid_client");
    // Both methods at once.
    let both = [("grant_type", "client_credentials"), ("client_secret", secret)];
    server
        .token(&both, &[("Authorization", &basic("ci", secret))])
        .assert_oauth_error(400, "invalid_request");

    // Public clients may not use client_credentials; a registered client uses its own method.
    let public = server.register_public_client();
    server
        .token(&[("grant_type", "client_credentials"), ("client_id", &public)], &[])
        .assert_oauth_error(400, "unauthorized_client");
    let registered = server.register(&json!({"grant_types": ["client_credentials"], "token_endpoint_auth_method": "client_secret_post"})).json();
    let (id, secret) = (
        registered["client_id"].as_str().expect("id"),
        registered["client_secret"].as_str().expect("secret"),
    );
    let post = [("grant_type", "client_credentials"), ("client_id", id), ("client_secret", secret)];
    assert_eq!(server.token(&post, &[]).status, 200);
    server.token(&grant, &[("Authorization", &basic(id, secret))]).assert_oauth_error(401, "invalid_client");
    // A client registered for authorization_code only may not use client_credentials.
    let code_only = server.register(&json!({"redirect_uris": [REDIRECT_URI]})).json();
    let (id, secret) =
        (code_only["client_id"].as_str().expect("id"), code_only["client_secret"].as_str().expect("secret"));
    server
        .token(&grant, &[("Authorization", &basic(id, secret))])
        .assert_oauth_error(400, "unauthorized_client");

    let stats = server.stats();
    assert_eq!(stats["token_requests"]["client_credentials"], 11);
    assert_eq!(stats["access_tokens_issued"], 3);
}

#[test]
fn confidential_clients_use_the_code_flow_with_their_secret() {
    let server = Demo::spawn(&["--oauth-client", "ci:pw"]);
    // A pre-registered client may redirect to any loopback URI.
    let verifier = verifier(7);
    let code = server.authorization_code("ci", &verifier, None);
    let form = [
        ("grant_type", "authorization_code"),
        ("code", &code),
        ("redirect_uri", REDIRECT_URI),
        ("code_verifier", &verifier),
    ];
    let without_secret = [("client_id", "ci")];
    server.token(&[&form[..], &without_secret].concat(), &[]).assert_oauth_error(401, "invalid_client");
    let response = server.token(&form, &[("Authorization", &basic("ci", "pw"))]);
    assert_eq!(response.status, 200, "{response:?}");
    assert!(response.json()["refresh_token"].is_string());
}

#[test]
fn expired_tokens_are_invalid_token() {
    let server = Demo::spawn(&["--oauth-client", "ci:pw", "--oauth-token-ttl", "1"]);
    let tokens = server
        .token(&[("grant_type", "client_credentials")], &[("Authorization", &basic("ci", "pw"))])
        .json();
    assert_eq!(tokens["expires_in"], 1);
    let access = tokens["access_token"].as_str().expect("access_token");
    assert_eq!(server.mcp(Some(access), "tools/list", json!({})).status, 200);
    thread::sleep(Duration::from_millis(1100));
    let expired = server.mcp(Some(access), "tools/list", json!({}));
    assert_eq!(expired.status, 401);
    let challenge = expired.header("www-authenticate").expect("WWW-Authenticate");
    assert!(challenge.starts_with("Bearer error=\"invalid_token\""), "{challenge}");
    assert!(challenge.contains("resource_metadata=\""), "{challenge}");
}

#[test]
fn serve_http_takes_oauth_from_the_options_builder() {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let address = listener.local_addr().expect("address").to_string();
    let options = mcp_demo_server::Options::default()
        .with_oauth_client("app", "secret")
        .with_oauth_token_ttl(Duration::from_secs(60));
    // Serves until the test process ends.
    thread::spawn(move || mcp_demo_server::serve_http(listener, options));
    let server = Demo { _process: None, address };
    assert_eq!(server.get_json("/.well-known/oauth-authorization-server")["issuer"], server.issuer());
    assert_eq!(server.mcp(None, "tools/list", json!({})).status, 401);
    let tokens = server
        .token(&[("grant_type", "client_credentials")], &[("Authorization", &basic("app", "secret"))])
        .json();
    assert_eq!(tokens["expires_in"], 60);
    assert_eq!(server.mcp(tokens["access_token"].as_str(), "tools/list", json!({})).status, 200);
    assert_eq!(server.stats()["token_requests"], json!({"client_credentials": 1}));
}
