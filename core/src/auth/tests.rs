//! The OAuth extensions on the bare [`Authorizer`], its requests answered by hand: client
//! assertions, the JWT bearer grant's one attempt, the identity assertion exchange, DPoP proofs
//! and nonces at both servers.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::jose::tests::{TEST_KEY_PEM, jwk_key, verify};
use super::*;

const MCP: &str = "https://mcp.example/mcp";
const PRM: &str = "https://mcp.example/.well-known/oauth-protected-resource/mcp";
const ISSUER: &str = "https://as.example";
const TOKEN: &str = "https://as.example/token";
const UNIX: u64 = 1_700_000_000;

/// The one reading of the real clock: each test moves time by hand from it.
#[allow(clippy::disallowed_methods)]
fn epoch() -> Instant {
    Instant::now()
}

fn counter_random() -> Box<dyn SecureRandom> {
    let mut n = 0u8;
    Box::new(move |buf: &mut [u8]| {
        for b in buf {
            n = n.wrapping_add(1);
            *b = n;
        }
    })
}

fn form(request: &AuthRequest) -> BTreeMap<String, String> {
    url::form_urlencoded::parse(request.body()).map(|(k, v)| (k.into_owned(), v.into_owned())).collect()
}

fn header<'a>(request: &'a AuthRequest, name: &str) -> Option<&'a str> {
    request.headers().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v)
}

/// An authorizer for [`MCP`] with the wall clock at [`UNIX`] at `now`.
fn authorizer(config: AuthConfig, now: Instant) -> Authorizer {
    let mut auth = Authorizer::new(MCP, config, counter_random());
    auth.set_wall_clock(now, UNIX);
    auth
}

fn respond(auth: &mut Authorizer, now: Instant, status: u16, headers: &[(&str, &str)], body: Value) {
    let headers = headers.iter().map(|(n, v)| (*n, v.as_bytes()));
    auth.handle_response(now, status, headers, body.to_string().as_bytes());
}

/// Answers the discovery (resource metadata, then the server's with `metadata` added) and
/// returns the request that follows.
fn discover(auth: &mut Authorizer, now: Instant, metadata: Value) -> AuthRequest {
    let challenge = format!(r#"Bearer resource_metadata="{PRM}""#);
    assert_eq!(auth.challenge(now, 401, Some(&challenge), None, None), Verdict::Wait);
    let prm = auth.poll_request().unwrap();
    assert_eq!(prm.url(), PRM);
    respond(auth, now, 200, &[], json!({"resource": MCP, "authorization_servers": [ISSUER]}));
    let meta = auth.poll_request().unwrap();
    assert_eq!(meta.url(), "https://as.example/.well-known/oauth-authorization-server");
    let mut body = json!({
        "issuer": ISSUER,
        "authorization_endpoint": "https://as.example/authorize",
        "token_endpoint": TOKEN,
        "code_challenge_methods_supported": ["S256"],
    });
    body.as_object_mut().unwrap().extend(metadata.as_object().unwrap().clone());
    respond(auth, now, 200, &[], body);
    auth.poll_request().expect("the request after discovery")
}

fn events(auth: &mut Authorizer) -> Vec<AuthEvent> {
    std::iter::from_fn(|| auth.poll_event()).collect()
}

#[test]
fn private_key_jwt_signs_a_fresh_assertion_for_the_issuer() {
    let start = epoch();
    let later = start + Duration::from_secs(90);
    let key = SigningKey::from_pkcs8_pem(TEST_KEY_PEM).unwrap();
    let public = key.verifying_key();
    let mut auth = authorizer(AuthConfig::client_credentials(ClientInfo::private_key_jwt("svc", key)), start);
    let metadata = json!({"token_endpoint_auth_methods_supported": ["private_key_jwt"]});
    let request = discover(&mut auth, later, metadata);
    assert_eq!(request.url(), TOKEN);
    let form = form(&request);
    assert_eq!(form["grant_type"], "client_credentials");
    assert_eq!(form["client_assertion_type"], "urn:ietf:params:oauth:client-assertion-type:jwt-bearer");
    assert_eq!(form["resource"], MCP);
    assert!(header(&request, "authorization").is_none());
    assert!(header(&request, "dpop").is_none(), "the server offers no DPoP");
    let (head, claims) = verify(&form["client_assertion"], &public);
    assert_eq!(head["alg"], "ES256");
    assert_eq!((claims["iss"].as_str(), claims["sub"].as_str()), (Some("svc"), Some("svc")));
    assert_eq!(claims["aud"], ISSUER);
    // The wall clock runs on from its anchor with `now`.
    assert_eq!(claims["iat"], UNIX + 90);
    assert_eq!(claims["exp"], UNIX + 90 + 300);
    assert!(claims["jti"].as_str().is_some_and(|j| j.len() >= 16));
    respond(&mut auth, later, 200, &[], json!({"access_token": "t", "token_type": "Bearer"}));
    assert_eq!(events(&mut auth), [AuthEvent::CredentialsChanged, AuthEvent::Authorized]);
    let authorization = auth.authorization(later, HttpMethod::Post, MCP, None).unwrap();
    assert_eq!(authorization.header(), "Bearer t");
    assert_eq!(authorization.dpop(), None);
}

#[test]
fn signing_without_a_wall_clock_fails_typed() {
    let now = epoch();
    let key = SigningKey::from_pkcs8_pem(TEST_KEY_PEM).unwrap();
    let mut auth = Authorizer::new(
        MCP,
        AuthConfig::client_credentials(ClientInfo::private_key_jwt("svc", key)),
        counter_random(),
    );
    let challenge = format!(r#"Bearer resource_metadata="{PRM}""#);
    auth.challenge(now, 401, Some(&challenge), None, None);
    auth.poll_request().unwrap();
    respond(&mut auth, now, 200, &[], json!({"resource": MCP, "authorization_servers": [ISSUER]}));
    auth.poll_request().unwrap();
    respond(&mut auth, now, 200, &[], json!({"issuer": ISSUER, "token_endpoint": TOKEN}));
    assert!(auth.poll_request().is_none());
    assert_eq!(events(&mut auth), [AuthEvent::Failed(AuthError::NoWallClock)]);
}

#[test]
fn private_key_jwt_without_a_key_is_refused_at_once() {
    let client = ClientInfo::public("svc").with_auth_method(TokenEndpointAuth::PrivateKeyJwt);
    let auth = Authorizer::new(MCP, AuthConfig::client_credentials(client), counter_random());
    assert!(matches!(auth.check(), Err(AuthError::InvalidKey(_))));
}

#[test]
fn the_jwt_bearer_grant_makes_one_attempt_and_its_refusal_is_final() {
    let now = epoch();
    let config = AuthConfig::jwt_bearer("workload.jwt").client(ClientInfo::public("wl"));
    let mut auth = authorizer(config, now);
    let request = discover(&mut auth, now, json!({}));
    let sent = form(&request);
    assert_eq!(sent["grant_type"], "urn:ietf:params:oauth:grant-type:jwt-bearer");
    assert_eq!(sent["assertion"], "workload.jwt");
    assert_eq!(sent["client_id"], "wl");
    assert!(!sent.contains_key("scope"));
    respond(&mut auth, now, 400, &[], json!({"error": "invalid_grant", "error_description": "expired"}));
    let refused = AuthError::TokenRefused {
        grant: "urn:ietf:params:oauth:grant-type:jwt-bearer",
        error: "invalid_grant".into(),
        description: Some("expired".into()),
    };
    assert_eq!(events(&mut auth), [AuthEvent::Failed(refused.clone())]);
    // Later requests fail with it: no second token request, no other grant.
    assert_eq!(auth.challenge(now, 401, Some("Bearer"), None, None), Verdict::Fail(refused.clone()));
    assert!(auth.poll_request().is_none());
    assert_eq!(auth.check(), Err(refused));
    // A new assertion from the application is tried once.
    auth.set_assertion("renewed.jwt");
    let again = discover(&mut auth, now, json!({}));
    assert_eq!(form(&again)["assertion"], "renewed.jwt");
}

#[test]
fn a_workload_without_a_client_id_sends_none() {
    let now = epoch();
    let mut auth = authorizer(AuthConfig::jwt_bearer("a.b.c"), now);
    let request = discover(&mut auth, now, json!({}));
    let sent = form(&request);
    assert!(!sent.contains_key("client_id"));
    assert_eq!(sent["assertion"], "a.b.c");
}

#[test]
fn an_identity_assertion_is_exchanged_for_an_id_jag_then_presented() {
    let now = epoch();
    let idp = IdentityAssertion::new("https://idp.example/token", "id.token")
        .idp_client(ClientInfo::public("at-idp"));
    let config = AuthConfig::identity_assertion(idp, ClientInfo::confidential("app", "secret"));
    let mut auth = authorizer(config, now);
    let metadata = json!({"token_endpoint_auth_methods_supported": ["client_secret_basic"]});
    let exchange = discover(&mut auth, now, metadata);
    assert_eq!(exchange.url(), "https://idp.example/token");
    assert_eq!(exchange.endpoint(), Endpoint::IdentityProvider);
    assert!(header(&exchange, "authorization").is_none(), "the app's secret is for the AS only");
    let sent = form(&exchange);
    assert_eq!(sent["grant_type"], "urn:ietf:params:oauth:grant-type:token-exchange");
    assert_eq!(sent["requested_token_type"], "urn:ietf:params:oauth:token-type:id-jag");
    assert_eq!(sent["subject_token"], "id.token");
    assert_eq!(sent["subject_token_type"], "urn:ietf:params:oauth:token-type:id_token");
    assert_eq!(sent["audience"], ISSUER);
    assert_eq!(sent["resource"], MCP);
    assert_eq!(sent["client_id"], "at-idp");
    let id_jag = json!({
        "access_token": "the.id.jag",
        "issued_token_type": "urn:ietf:params:oauth:token-type:id-jag",
        "token_type": "N_A",
    });
    respond(&mut auth, now, 200, &[], id_jag);
    let grant = auth.poll_request().unwrap();
    assert_eq!(grant.url(), TOKEN);
    let sent = form(&grant);
    assert_eq!(sent["grant_type"], "urn:ietf:params:oauth:grant-type:jwt-bearer");
    assert_eq!(sent["assertion"], "the.id.jag");
    assert!(header(&grant, "authorization").is_some_and(|h| h.starts_with("Basic ")));
    respond(&mut auth, now, 200, &[], json!({"access_token": "t", "token_type": "bearer"}));
    assert!(events(&mut auth).contains(&AuthEvent::Authorized));
}

#[test]
fn an_identity_provider_that_issues_something_else_fails() {
    let now = epoch();
    let idp = IdentityAssertion::new("https://idp.example/token", "id.token");
    let config = AuthConfig::identity_assertion(idp, ClientInfo::confidential("app", "secret"));
    let mut auth = authorizer(config, now);
    discover(&mut auth, now, json!({}));
    let wrong = json!({"access_token": "x", "issued_token_type": "urn:ietf:params:oauth:token-type:access_token", "token_type": "Bearer"});
    respond(&mut auth, now, 200, &[], wrong);
    assert!(auth.poll_request().is_none());
    assert!(matches!(events(&mut auth)[..], [AuthEvent::Failed(AuthError::InvalidResponse { .. })]));
}

#[test]
fn an_insecure_identity_provider_is_refused() {
    let idp = IdentityAssertion::new("http://idp.example/token", "id.token");
    let config = AuthConfig::identity_assertion(idp, ClientInfo::confidential("app", "secret"));
    let auth = Authorizer::new(MCP, config, counter_random());
    assert_eq!(auth.check(), Err(AuthError::InsecureEndpoint("http://idp.example/token".into())));
}

/// Runs the authorization code grant with a pre-registered public client up to the token
/// request.
fn code_flow(auth: &mut Authorizer, now: Instant, metadata: Value) -> AuthRequest {
    assert!(discover_for_code(auth, now, metadata).is_none());
    let url = match events(auth).pop() {
        Some(AuthEvent::AuthorizationRequired { url }) => url,
        other => panic!("{other:?}"),
    };
    let state =
        url::Url::parse(&url).unwrap().query_pairs().find(|(k, _)| k == "state").unwrap().1.into_owned();
    auth.handle_redirect(now, &format!("http://127.0.0.1:9/cb?code=c1&state={state}")).unwrap();
    auth.poll_request().unwrap()
}

fn discover_for_code(auth: &mut Authorizer, now: Instant, metadata: Value) -> Option<AuthRequest> {
    let challenge = format!(r#"DPoP resource_metadata="{PRM}""#);
    assert_eq!(auth.challenge(now, 401, Some(&challenge), None, None), Verdict::Wait);
    auth.poll_request().unwrap();
    respond(auth, now, 200, &[], json!({"resource": MCP, "authorization_servers": [ISSUER]}));
    auth.poll_request().unwrap();
    let mut body = json!({
        "issuer": ISSUER,
        "authorization_endpoint": "https://as.example/authorize",
        "token_endpoint": TOKEN,
        "code_challenge_methods_supported": ["S256"],
    });
    body.as_object_mut().unwrap().extend(metadata.as_object().unwrap().clone());
    respond(auth, now, 200, &[], body);
    auth.poll_request()
}

fn interactive() -> AuthConfig {
    AuthConfig::authorization_code("http://127.0.0.1:9/cb").client(ClientInfo::public("app"))
}

/// The claims of a DPoP proof, checked against the key it carries; and that key's thumbprint.
fn proof_claims(proof: &str) -> (Value, String) {
    let head: Value = {
        let part = proof.split('.').next().unwrap().replace('-', "+").replace('_', "/");
        serde_json::from_slice(&crate::base64::decode(&part).unwrap()).unwrap()
    };
    assert_eq!(head["typ"], "dpop+jwt");
    assert_eq!(head["alg"], "ES256");
    assert!(head["jwk"].get("d").is_none());
    let (_, claims) = verify(proof, &jwk_key(&head["jwk"]));
    use sha2::{Digest, Sha256};
    let jkt = crate::base64::encode_url(&Sha256::digest(head["jwk"].to_string().as_bytes()));
    (claims, jkt)
}

#[test]
fn dpop_binds_the_token_and_takes_both_servers_nonces() {
    let start = epoch();
    let mut auth = authorizer(interactive(), start);
    let now = start + Duration::from_secs(5);
    let token_request = code_flow(&mut auth, now, json!({"dpop_signing_alg_values_supported": ["ES256"]}));
    let (first, jkt) = proof_claims(header(&token_request, "dpop").expect("a proof at the token endpoint"));
    assert_eq!((first["htm"].as_str(), first["htu"].as_str()), (Some("POST"), Some(TOKEN)));
    assert_eq!(first["iat"], UNIX + 5);
    assert!(first.get("ath").is_none() && first.get("nonce").is_none());

    // The authorization server wants its nonce: the same grant again, with a new proof.
    let nonce_error = json!({"error": "use_dpop_nonce", "error_description": "nonce"});
    respond(&mut auth, now, 400, &[("DPoP-Nonce", "as-n1")], nonce_error);
    assert!(events(&mut auth).is_empty(), "no failure");
    let again = auth.poll_request().expect("the token request again");
    assert_eq!(form(&again), form(&token_request), "the same code and verifier");
    let (second, jkt2) = proof_claims(header(&again, "dpop").unwrap());
    assert_eq!(second["nonce"], "as-n1");
    assert_ne!(second["jti"], first["jti"]);
    assert_eq!(jkt, jkt2, "one key");
    respond(
        &mut auth,
        now,
        200,
        &[],
        json!({"access_token": "bound", "token_type": "DPoP", "expires_in": 3600}),
    );
    assert!(events(&mut auth).contains(&AuthEvent::Authorized));
    assert!(auth.credentials(now, UNIX).tokens.is_none(), "a bound token is not stored without its key");

    // Every request to the MCP server: the DPoP scheme and its own proof.
    let a = auth.authorization(now, HttpMethod::Post, MCP, None).unwrap();
    assert_eq!(a.header(), "DPoP bound");
    let (claims, jkt3) = proof_claims(a.dpop().unwrap());
    assert_eq!(jkt3, jkt);
    use sha2::{Digest, Sha256};
    assert_eq!(claims["ath"], crate::base64::encode_url(&Sha256::digest(b"bound")));
    assert_eq!((claims["htm"].as_str(), claims["htu"].as_str()), (Some("POST"), Some(MCP)));
    assert!(claims.get("nonce").is_none());
    assert!(!format!("{a:?}").contains("bound"), "Debug shows no token");

    // The MCP server wants its nonce: the request goes again, no new authorization.
    let challenge = r#"DPoP error="use_dpop_nonce", error_description="nonce""#;
    assert_eq!(auth.challenge(now, 401, Some(challenge), Some("rs-n1"), Some(a.stamp())), Verdict::Retry);
    assert!(auth.poll_request().is_none() && !auth.is_busy());
    let b = auth.authorization(now, HttpMethod::Post, MCP, Some(a.stamp())).unwrap();
    let (retried, _) = proof_claims(b.dpop().unwrap());
    assert_eq!(retried["nonce"], "rs-n1");
    assert_ne!(retried["jti"], claims["jti"]);
    // A request sent before the nonce came is sent again too.
    assert_eq!(auth.challenge(now, 401, Some(challenge), Some("rs-n1"), Some(a.stamp())), Verdict::Retry);
    // Refused with the nonce it carried: no loop.
    assert_eq!(
        auth.challenge(now, 401, Some(challenge), Some("rs-n1"), Some(b.stamp())),
        Verdict::Fail(AuthError::DpopNonceRejected { endpoint: "the MCP server" })
    );
    // A new nonce on a success is used from then on.
    auth.accepted(b.stamp());
    auth.handle_resource_nonce("rs-n2");
    let c = auth.authorization(now, HttpMethod::Get, MCP, None).unwrap();
    let (claims, _) = proof_claims(c.dpop().unwrap());
    assert_eq!((claims["nonce"].as_str(), claims["htm"].as_str()), (Some("rs-n2"), Some("GET")));
}

#[test]
fn an_authorization_server_that_keeps_asking_for_nonces_is_not_asked_forever() {
    let now = epoch();
    let mut auth = authorizer(interactive(), now);
    code_flow(&mut auth, now, json!({"dpop_signing_alg_values_supported": ["ES256"]}));
    let nonce_error = json!({"error": "use_dpop_nonce"});
    respond(&mut auth, now, 400, &[("DPoP-Nonce", "n1")], nonce_error.clone());
    auth.poll_request().unwrap();
    // The same nonce again: refused as it is.
    respond(&mut auth, now, 400, &[("DPoP-Nonce", "n1")], nonce_error);
    assert!(auth.poll_request().is_none());
    assert_eq!(
        events(&mut auth),
        [AuthEvent::Failed(AuthError::DpopNonceRejected { endpoint: "the token endpoint" })]
    );
}

#[test]
fn without_dpop_on_offer_tokens_are_bearer() {
    let now = epoch();
    let mut auth = authorizer(interactive(), now);
    let token_request = code_flow(&mut auth, now, json!({}));
    assert!(header(&token_request, "dpop").is_none());
    // An authorization server that binds anyway gets its DPoP token refused: no proof was sent.
    respond(&mut auth, now, 200, &[], json!({"access_token": "x", "token_type": "DPoP"}));
    assert!(matches!(&events(&mut auth)[..], [AuthEvent::Failed(AuthError::InvalidResponse { .. })]));
}

#[test]
fn dpop_policies() {
    let now = epoch();
    // Disabled: no proof even where it is offered.
    let mut auth = authorizer(interactive().dpop(DpopPolicy::Disabled), now);
    let token_request = code_flow(&mut auth, now, json!({"dpop_signing_alg_values_supported": ["ES256"]}));
    assert!(header(&token_request, "dpop").is_none());
    // Required: proofs where nothing is advertised; refused where ES256 is not taken.
    let mut auth = authorizer(interactive().dpop(DpopPolicy::Required), now);
    let token_request = code_flow(&mut auth, now, json!({}));
    assert!(header(&token_request, "dpop").is_some());
    let mut auth = authorizer(interactive().dpop(DpopPolicy::Required), now);
    assert!(
        discover_for_code(&mut auth, now, json!({"dpop_signing_alg_values_supported": ["RS256"]})).is_none()
    );
    assert!(matches!(&events(&mut auth)[..], [AuthEvent::Failed(AuthError::Unsupported(_))]));
    // A bearer token answered to a proof is used as a bearer token.
    let mut auth = authorizer(interactive(), now);
    code_flow(&mut auth, now, json!({"dpop_signing_alg_values_supported": ["ES256"]}));
    respond(&mut auth, now, 200, &[], json!({"access_token": "plain", "token_type": "Bearer"}));
    let a = auth.authorization(now, HttpMethod::Post, MCP, None).unwrap();
    assert_eq!((a.header(), a.dpop()), ("Bearer plain", None));
}
