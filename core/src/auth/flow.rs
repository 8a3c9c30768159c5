//! The authorizer's steps, in the order a flow takes them: resource metadata, server metadata,
//! client identity, the grant (a user's authorization, then the code exchange; client
//! credentials; a JWT bearer assertion, maybe exchanged for at an identity provider first),
//! token requests (client assertions, DPoP proofs and nonces), and refresh.

use std::time::Instant;

use sha2::{Digest, Sha256};
use url::Url;

use super::exchange::{self, AuthRequest, Endpoint, ErrorResponse, RegistrationResponse, TokenResponse};
use super::jose;
use super::metadata::{self, ResourceMetadata, ServerMetadata};
use super::*;

/// Whether server metadata found for `guessed`, the MCP server's origin, may name `stated` as its
/// issuer although RFC 8414 §3.3 says it must not be used: only on the 2025-03-26 path (no
/// resource metadata, the issuer guessed from the server's origin) and only for an issuer at that
/// same origin, under a path.
///
/// The official conformance runner 0.1.16 needs it: its `auth/2025-03-26-oauth-metadata-backcompat`
/// scenario serves metadata at `http://HOST/.well-known/oauth-authorization-server` stating the
/// issuer `http://HOST/oauth`. The same party runs both, so no other server can be impersonated;
/// an issuer at another origin is refused like any mismatch.
fn legacy_issuer(resource_metadata: &Discovered<ResourceMetadata>, guessed: &str, stated: &str) -> bool {
    let origin = |url: &str| Url::parse(url).ok().map(|u| u.origin());
    matches!(resource_metadata, Discovered::Absent)
        && origin(guessed).is_some_and(|o| Some(o) == origin(stated))
}

/// RFC 8693 token types of enterprise-managed authorization.
const ID_TOKEN_TYPE: &str = "urn:ietf:params:oauth:token-type:id_token";
const ID_JAG_TYPE: &str = "urn:ietf:params:oauth:token-type:id-jag";

impl Authorizer {
    /// Starts (or continues) a full authorization: whatever is not known yet is discovered, the
    /// client identified, then the grant runs.
    pub(super) fn authorize(&mut self, now: Instant) {
        self.budget.authorization();
        self.proceed(now);
    }

    /// Takes the next step towards a token from what is known.
    pub(super) fn proceed(&mut self, now: Instant) {
        if matches!(self.resource_metadata, Discovered::Unknown) {
            let candidates = metadata::resource_metadata_urls(&self.server, self.metadata_hint.as_deref());
            return self.fetch_candidate(now, Step::Resource { candidates, next: 0 });
        }
        let Some(server) = self.metadata.clone() else {
            // The issuer as the resource metadata names it, kept as a string: RFC 8414 §3.3
            // compares it to the metadata's `issuer` exactly.
            let issuer = match &self.resource_metadata {
                Discovered::Found(prm) => match prm.authorization_servers.first() {
                    Some(issuer) => issuer.clone(),
                    None => {
                        return self.fail(AuthError::InvalidResponse {
                            endpoint: Endpoint::ResourceMetadata.as_str(),
                            detail: "no authorization_servers".to_owned(),
                        });
                    }
                },
                // 2025-03-26: the authorization base URL is the server's origin.
                _ => metadata::origin_of(&self.server),
            };
            let url = match Url::parse(&issuer) {
                Ok(url) if metadata::is_secure(&url) => url,
                Ok(_) => return self.fail(AuthError::InsecureEndpoint(issuer)),
                Err(e) => {
                    return self.fail(AuthError::InvalidResponse {
                        endpoint: Endpoint::ResourceMetadata.as_str(),
                        detail: format!("authorization server {issuer:?} is not a URL: {e}"),
                    });
                }
            };
            let candidates = metadata::server_metadata_urls(&url);
            return self.fetch_candidate(now, Step::Server { issuer, candidates, next: 0 });
        };
        for endpoint in
            [&server.authorization_endpoint, &server.token_endpoint, &server.registration_endpoint]
                .into_iter()
                .flatten()
        {
            if !Url::parse(endpoint).is_ok_and(|u| metadata::is_secure(&u)) {
                return self.fail(AuthError::InsecureEndpoint(endpoint.clone()));
            }
        }
        if let Err(error) = self.check_dpop(&server) {
            return self.fail(error);
        }
        match self.client_for(&server) {
            Some(client) => self.client = Some(client),
            None => match (&self.config.grant, &server.registration_endpoint) {
                (Grant::AuthorizationCode { .. }, Some(registration)) => {
                    return self.register(registration.clone());
                }
                // The assertion identifies the workload: a client id is optional (RFC 7523 §3).
                (Grant::JwtBearer { .. }, _) => self.client = None,
                _ => {
                    return self.fail(AuthError::NoClientIdentity(
                        "no pre-registered client, no registration endpoint, and no client metadata \
                         document the server accepts"
                            .into(),
                    ));
                }
            },
        }
        // Restored tokens whose refresh waited for the token endpoint to be known.
        if std::mem::take(&mut self.refresh_after_discovery)
            && self.held.tokens().is_some_and(|t| t.refresh.is_some())
        {
            return self.refresh(now);
        }
        let resource = self.resource();
        let scope = self.requested_scope();
        let mut params = vec![("grant_type", String::new())];
        let grant = match &self.config.grant {
            Grant::AuthorizationCode { redirect_uri } => {
                let redirect_uri = redirect_uri.clone();
                return self.send_user(now, &server, &redirect_uri);
            }
            Grant::ClientCredentials => TokenGrant::ClientCredentials,
            Grant::JwtBearer { assertion } => {
                params.push(("assertion", assertion.expose().to_owned()));
                TokenGrant::JwtBearer
            }
            Grant::IdentityAssertion(assertion) => {
                // SEP-990: the ID-JAG is asked for this authorization server (the audience)
                // and this resource.
                params.extend([
                    ("requested_token_type", ID_JAG_TYPE.to_owned()),
                    ("subject_token", assertion.id_token.expose().to_owned()),
                    ("subject_token_type", ID_TOKEN_TYPE.to_owned()),
                    ("audience", server.issuer.clone()),
                ]);
                TokenGrant::TokenExchange
            }
        };
        params[0].1 = grant.name().to_owned();
        params.push(("resource", resource));
        if let Some(scope) = scope {
            params.push(("scope", scope));
        }
        self.request_token(now, grant, params);
    }

    /// Whether DPoP can be what the configuration asks of this server.
    fn check_dpop(&self, server: &ServerMetadata) -> Result<(), AuthError> {
        if self.config.dpop != DpopPolicy::Required {
            return Ok(());
        }
        if !cfg!(feature = "jwt") {
            return Err(AuthError::Unsupported("DPoP needs mcp-sansio's `jwt` feature".into()));
        }
        match &server.dpop_signing_alg_values_supported {
            Some(algs) if !algs.iter().any(|a| a == "ES256") => Err(AuthError::Unsupported(format!(
                "DPoP is required and the authorization server takes no ES256 proofs (only {algs:?})"
            ))),
            _ => Ok(()),
        }
    }

    /// Whether token requests to the authorization server carry DPoP proofs.
    fn dpop_active(&self) -> bool {
        let offered = self
            .metadata
            .as_ref()
            .and_then(|m| m.dpop_signing_alg_values_supported.as_ref())
            .is_some_and(|algs| algs.iter().any(|a| a == "ES256"));
        let required = matches!(&self.resource_metadata, Discovered::Found(prm) if prm.dpop_bound_access_tokens_required);
        cfg!(feature = "jwt")
            && match self.config.dpop {
                DpopPolicy::Disabled => false,
                DpopPolicy::Required => true,
                DpopPolicy::Auto => offered || required,
            }
    }

    /// The identity the client uses with `server`: pre-registered, registered with this issuer
    /// before, or its metadata document URL where the server accepts one.
    fn client_for(&self, server: &ServerMetadata) -> Option<ClientInfo> {
        if let Some(client) = &self.config.client {
            return Some(client.clone());
        }
        let issuer = metadata::canonical(&server.issuer);
        let redirect_uri = self.config.redirect_uri();
        if let Some(client) = self.client.as_ref().filter(|c| {
            c.issuer.as_deref().and_then(metadata::canonical) == issuer
                && (c.redirect_uri.is_none() || c.redirect_uri.as_deref() == redirect_uri)
        }) {
            return Some(client.clone());
        }
        match &self.config.metadata_url {
            Some(url) if server.client_id_metadata_document_supported => Some(ClientInfo {
                auth_method: Some(TokenEndpointAuth::None),
                issuer: Some(server.issuer.clone()),
                ..ClientInfo::public(url.clone())
            }),
            _ => None,
        }
    }

    /// Queues the request for the candidate the step points at.
    fn fetch_candidate(&mut self, now: Instant, step: Step) {
        let (endpoint, url) = match &step {
            Step::Resource { candidates, next } => (Endpoint::ResourceMetadata, candidates.get(*next)),
            Step::Server { candidates, next, .. } => (Endpoint::ServerMetadata, candidates.get(*next)),
            _ => return,
        };
        match url {
            Some(url) => {
                tracing::debug!(url = url.as_str(), what = endpoint.as_str(), "authorization discovery");
                self.outbox = Some(AuthRequest::metadata(endpoint, url));
                self.step = step;
            }
            None => {
                self.step = step;
                self.candidates_exhausted(now);
            }
        }
    }

    /// The candidate in flight did not give a document: the next one.
    pub(super) fn next_candidate(&mut self, now: Instant) {
        let step = match std::mem::replace(&mut self.step, Step::Idle) {
            Step::Resource { candidates, next } => Step::Resource { candidates, next: next + 1 },
            Step::Server { issuer, candidates, next } => Step::Server { issuer, candidates, next: next + 1 },
            other => other,
        };
        self.fetch_candidate(now, step);
    }

    /// Every candidate location failed.
    fn candidates_exhausted(&mut self, now: Instant) {
        match std::mem::replace(&mut self.step, Step::Idle) {
            Step::Resource { .. } => {
                // No resource metadata: the 2025-03-26 rules (the server's origin is the
                // authorization server).
                tracing::debug!("no protected resource metadata: falling back to the server's origin");
                self.resource_metadata = Discovered::Absent;
                self.proceed(now);
            }
            Step::Server { issuer, .. } => {
                if matches!(self.resource_metadata, Discovered::Absent) {
                    // 2025-03-26: default endpoints at the server's origin.
                    tracing::debug!("no authorization server metadata: default endpoints");
                    let Ok(base) = Url::parse(&issuer) else { return };
                    self.metadata = Some(ServerMetadata::fallback(&base));
                    self.issuer = Some(issuer);
                    self.proceed(now);
                } else {
                    self.fail(AuthError::Discovery(format!(
                        "no authorization server metadata found for {issuer}"
                    )));
                }
            }
            other => self.step = other,
        }
    }

    pub(super) fn on_resource_metadata(
        &mut self,
        now: Instant,
        candidates: Vec<Url>,
        next: usize,
        status: u16,
        body: &[u8],
    ) {
        let parsed = (200..300)
            .contains(&status)
            .then(|| serde_json::from_slice::<ResourceMetadata>(body).ok())
            .flatten();
        let Some(prm) = parsed else {
            self.step = Step::Resource { candidates, next };
            return self.next_candidate(now);
        };
        // RFC 9728 §3.3: metadata that is not shown to be this server's is not used.
        let Some(resource) = &prm.resource else {
            let url = candidates.get(next).map(Url::to_string).unwrap_or_default();
            return self.fail(AuthError::ResourceMissing { url });
        };
        if !metadata::resource_matches(resource, &self.server) {
            return self.fail(AuthError::ResourceMismatch {
                expected: self.server.as_str().to_owned(),
                found: resource.clone(),
            });
        }
        self.resource_metadata = Discovered::Found(prm);
        self.proceed(now);
    }

    pub(super) fn on_server_metadata(
        &mut self,
        now: Instant,
        issuer: String,
        candidates: Vec<Url>,
        next: usize,
        status: u16,
        body: &[u8],
    ) {
        self.step = Step::Server { issuer, candidates, next };
        if !(200..300).contains(&status) {
            return self.next_candidate(now);
        }
        let Ok(server) = serde_json::from_slice::<ServerMetadata>(body) else {
            return self.next_candidate(now);
        };
        let Step::Server { issuer, .. } = std::mem::replace(&mut self.step, Step::Idle) else { return };
        // RFC 8414 §3.3: the metadata must be the issuer's own, compared as strings.
        if server.issuer != issuer && !legacy_issuer(&self.resource_metadata, &issuer, &server.issuer) {
            return self.fail(AuthError::IssuerMismatch { expected: issuer, found: server.issuer.clone() });
        }
        if matches!(self.config.grant, Grant::AuthorizationCode { .. })
            && !server
                .code_challenge_methods_supported
                .as_ref()
                .is_some_and(|m| m.iter().any(|x| x == "S256"))
        {
            return self.fail(AuthError::PkceUnsupported);
        }
        self.issuer = Some(server.issuer.clone());
        self.metadata = Some(server);
        self.proceed(now);
    }

    /// Dynamic client registration (RFC 7591).
    fn register(&mut self, endpoint: String) {
        let Grant::AuthorizationCode { redirect_uri } = &self.config.grant else { return };
        let mut body = serde_json::json!({
            "client_name": self.config.client_name,
            "redirect_uris": [redirect_uri],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
            "application_type": "native",
        });
        if let Some(scope) = self.requested_scope() {
            body["scope"] = scope.into();
        }
        tracing::debug!(endpoint = endpoint.as_str(), "registering the client");
        self.outbox =
            Some(AuthRequest::post_json(Endpoint::Registration, &endpoint, body.to_string().into_bytes()));
        self.step = Step::Register;
    }

    pub(super) fn on_registration(&mut self, now: Instant, status: u16, body: &[u8]) {
        if !(200..300).contains(&status) {
            let (error, description) = ErrorResponse::of(status, body);
            let detail = match description {
                Some(d) => format!("{error} ({d})"),
                None => error,
            };
            return self.fail(AuthError::Registration(detail));
        }
        let registered = match serde_json::from_slice::<RegistrationResponse>(body) {
            Ok(r) => r,
            Err(e) => {
                return self.fail(AuthError::InvalidResponse {
                    endpoint: Endpoint::Registration.as_str(),
                    detail: e.to_string(),
                });
            }
        };
        self.client = Some(ClientInfo {
            client_secret: registered.client_secret.map(Secret::new),
            auth_method: registered.token_endpoint_auth_method.as_deref().and_then(TokenEndpointAuth::parse),
            issuer: self.metadata.as_ref().map(|m| m.issuer.clone()),
            redirect_uri: self.config.redirect_uri().map(str::to_owned),
            ..ClientInfo::public(registered.client_id)
        });
        self.events.push_back(AuthEvent::CredentialsChanged);
        self.proceed(now);
    }

    /// The scope to ask for: the configured one, else the challenge's, else the resource
    /// metadata's `scopes_supported`; plus what step-ups added.
    pub(super) fn requested_scope(&self) -> Option<String> {
        let base = self.config.scope.clone().or_else(|| self.challenge_scope.clone()).or_else(|| match &self
            .resource_metadata
        {
            Discovered::Found(prm) => prm.scopes_supported.as_ref().map(|s| s.join(" ")),
            _ => None,
        });
        union(base.as_deref(), self.step_up_scope.as_deref())
    }

    /// The resource indicator (RFC 8707): the resource metadata's `resource`, else the server's
    /// canonical URI.
    fn resource(&self) -> String {
        match &self.resource_metadata {
            Discovered::Found(ResourceMetadata { resource: Some(resource), .. }) => resource.clone(),
            _ => metadata::canonical(self.server.as_str()).unwrap_or_else(|| self.server.as_str().to_owned()),
        }
    }

    fn random_string(&mut self, bytes: usize) -> String {
        let mut buf = vec![0; bytes];
        self.random.fill(&mut buf);
        crate::base64::encode_url(&buf)
    }

    /// Builds the authorization URL and asks the application to send the user there.
    fn send_user(&mut self, now: Instant, server: &ServerMetadata, redirect_uri: &str) {
        let (Some(client), Some(endpoint)) = (&self.client, &server.authorization_endpoint) else {
            return self.fail(AuthError::InvalidResponse {
                endpoint: Endpoint::ServerMetadata.as_str(),
                detail: "no authorization_endpoint".into(),
            });
        };
        let Ok(mut url) = Url::parse(endpoint) else {
            return self.fail(AuthError::InvalidResponse {
                endpoint: Endpoint::ServerMetadata.as_str(),
                detail: format!("authorization_endpoint {endpoint:?} is not a URL"),
            });
        };
        let client_id = client.client_id.clone();
        let verifier = self.random_string(32);
        let state = self.random_string(16);
        let challenge = crate::base64::encode_url(&Sha256::digest(verifier.as_bytes()));
        let mut scope = self.requested_scope();
        if server.supports_scope("offline_access") {
            scope = union(scope.as_deref(), Some("offline_access"));
        }
        let resource = self.resource();
        {
            let mut query = url.query_pairs_mut();
            query
                .append_pair("response_type", "code")
                .append_pair("client_id", &client_id)
                .append_pair("redirect_uri", redirect_uri)
                .append_pair("code_challenge", &challenge)
                .append_pair("code_challenge_method", "S256")
                .append_pair("state", &state)
                .append_pair("resource", &resource);
            if let Some(scope) = &scope {
                query.append_pair("scope", scope);
            }
        }
        let deadline = crate::deadline::deadline_after(now, self.config.authorization_timeout);
        self.step = Step::Redirect(Box::new(Pending { state, verifier, deadline, code: None }));
        self.events.push_back(AuthEvent::AuthorizationRequired { url: url.into() });
    }

    /// Checks the redirect against the authorization in progress; keeps its code.
    pub(super) fn on_redirect(&mut self, url: &str) -> Result<(), AuthError> {
        let Step::Redirect(pending) = &mut self.step else {
            return Err(AuthError::InvalidRedirect("no authorization is in progress".into()));
        };
        if pending.code.is_some() {
            return Err(AuthError::InvalidRedirect("the redirect was already received".into()));
        }
        let url = Url::parse(url).map_err(|e| AuthError::InvalidRedirect(format!("not a URL: {e}")))?;
        let param = |name: &str| url.query_pairs().find(|(k, _)| k == name).map(|(_, v)| v.into_owned());
        if param("state").as_deref() != Some(pending.state.as_str()) {
            return Err(AuthError::InvalidRedirect("its state does not match the request's".into()));
        }
        let issuer = self
            .metadata
            .as_ref()
            .map(|m| (m.issuer.clone(), m.authorization_response_iss_parameter_supported));
        if let Some((expected, promised)) = issuer {
            let iss = param("iss");
            let matches = iss.as_deref().is_some_and(|iss| iss == expected);
            // RFC 9207 §2.4: an `iss` that is there must match; one promised must be there.
            if (iss.is_some() || promised) && !matches {
                return Err(AuthError::IssuerMixUp { expected, found: iss });
            }
        }
        if let Some(error) = param("error") {
            return Err(AuthError::AuthorizationDenied { error, description: param("error_description") });
        }
        let code = param("code").ok_or_else(|| AuthError::InvalidRedirect("it has no code".into()))?;
        pending.code = Some(code);
        Ok(())
    }

    /// Exchanges the code the redirect brought for tokens.
    pub(super) fn exchange_code(&mut self, now: Instant) {
        let Step::Redirect(pending) = std::mem::replace(&mut self.step, Step::Idle) else { return };
        let (Some(code), Grant::AuthorizationCode { redirect_uri }) = (pending.code, &self.config.grant)
        else {
            return;
        };
        let params = vec![
            ("grant_type", TokenGrant::Code.name().to_owned()),
            ("code", code),
            ("redirect_uri", redirect_uri.clone()),
            ("code_verifier", pending.verifier),
            ("resource", self.resource()),
        ];
        self.request_token(now, TokenGrant::Code, params);
    }

    /// Refreshes the access token (one refresh at a time: callers check `is_busy`).
    pub(super) fn refresh(&mut self, now: Instant) {
        let Some(refresh) = self.held.tokens().and_then(|t| t.refresh.clone()) else { return };
        let params = vec![
            ("grant_type", TokenGrant::Refresh.name().to_owned()),
            ("refresh_token", refresh.expose().to_owned()),
            ("resource", self.resource()),
        ];
        self.request_token(now, TokenGrant::Refresh, params);
    }

    /// Queues a token request for `grant` with its parameters. Requests to the authorization
    /// server carry a DPoP proof when DPoP is on.
    fn request_token(&mut self, now: Instant, grant: TokenGrant, params: Vec<(&'static str, String)>) {
        let proof = (grant != TokenGrant::TokenExchange && self.dpop_active()).then_some(None);
        self.send_token(now, TokenCall { grant, params, proof, nonce_retries: 0 });
    }

    /// Builds the request of `call` (again, for a nonce: a fresh assertion and proof) and
    /// queues it.
    fn send_token(&mut self, now: Instant, mut call: TokenCall) {
        match self.build_token_request(now, &mut call) {
            Ok(request) => {
                self.outbox = Some(request);
                self.step = Step::Token(call);
            }
            Err(error) => self.fail(error),
        }
    }

    fn build_token_request(&mut self, now: Instant, call: &mut TokenCall) -> Result<AuthRequest, AuthError> {
        // Where the request goes, who the client is there, and the `aud` of its assertion.
        let (endpoint, url, client, method, audience) = if call.grant == TokenGrant::TokenExchange {
            let Grant::IdentityAssertion(assertion) = &self.config.grant else {
                return Err(AuthError::Discovery("no identity provider is configured".into()));
            };
            let client = assertion.idp_client.clone();
            let method = client
                .as_ref()
                .map_or(TokenEndpointAuth::None, |c| exchange::auth_method(c, &ServerMetadata::default()));
            let url = assertion.token_endpoint.clone();
            (Endpoint::IdentityProvider, url.clone(), client, method, url)
        } else {
            let Some(server) = &self.metadata else {
                return Err(AuthError::Discovery("no authorization server is known".into()));
            };
            let Some(url) = server.token_endpoint.clone() else {
                return Err(AuthError::InvalidResponse {
                    endpoint: Endpoint::ServerMetadata.as_str(),
                    detail: "no token_endpoint".into(),
                });
            };
            let client = self.client.clone();
            let method =
                client.as_ref().map_or(TokenEndpointAuth::None, |c| exchange::auth_method(c, server));
            (Endpoint::Token, url, client, method, server.issuer.clone())
        };
        // `proceed` checks the endpoints of new metadata, but a refresh goes straight here, with
        // metadata kept from before (whose check may have failed): client credentials and
        // refresh tokens never travel in clear.
        if !Url::parse(&url).is_ok_and(|u| metadata::is_secure(&u)) {
            return Err(AuthError::InsecureEndpoint(url));
        }
        let assertion = match (&client, method) {
            (Some(client), TokenEndpointAuth::PrivateKeyJwt) => {
                let Some(key) = &client.private_key else {
                    return Err(AuthError::InvalidKey(format!(
                        "the client {:?} authenticates with private_key_jwt and has no private key",
                        client.client_id
                    )));
                };
                let jti = self.random_string(16);
                let now_unix = self.unix_time(now)?;
                Some(jose::client_assertion(key, &client.client_id, &audience, now_unix, &jti)?)
            }
            _ => None,
        };
        let mut request =
            AuthRequest::token(endpoint, &url, client.as_ref(), method, &call.params, assertion.as_deref());
        if call.proof.is_some() {
            let nonce = self.dpop.server_nonce.clone();
            let proof = self.proof(now, "POST", &url, None, nonce.as_deref())?;
            request.push_header("DPoP", proof);
            call.proof = Some(nonce);
        }
        tracing::debug!(
            grant = call.grant.name(),
            method = method.as_str(),
            dpop = call.proof.is_some(),
            "token request"
        );
        Ok(request)
    }

    /// A DPoP proof for a request (RFC 9449 §4.2), with the key made at the first one.
    pub(super) fn proof(
        &mut self,
        now: Instant,
        method: &str,
        url: &str,
        access_token: Option<&str>,
        nonce: Option<&str>,
    ) -> Result<String, AuthError> {
        let now_unix = self.unix_time(now)?;
        let key = match self.dpop.key.take() {
            Some(key) => key,
            None => self.new_dpop_key()?,
        };
        let jti = self.random_string(16);
        let proof = jose::Proof { method, url, access_token, nonce, now_unix, jti: &jti }.sign(&key);
        self.dpop.key = Some(key);
        proof
    }

    /// A DPoP key from the random source.
    #[cfg(feature = "jwt")]
    fn new_dpop_key(&mut self) -> Result<SigningKey, AuthError> {
        // A random 256-bit string is a valid P-256 scalar but for a chance in 2^32; a
        // generator that fails four times in a row is broken.
        for _ in 0..4 {
            let mut bytes = [0; 32];
            self.random.fill(&mut bytes);
            if let Some(key) = SigningKey::from_random(&bytes) {
                tracing::debug!(jkt = %key.thumbprint(), "a DPoP key was made");
                return Ok(key);
            }
        }
        Err(AuthError::InvalidKey("the random source gave no valid P-256 key".into()))
    }

    #[cfg(not(feature = "jwt"))]
    fn new_dpop_key(&mut self) -> Result<SigningKey, AuthError> {
        Err(AuthError::Unsupported("DPoP needs mcp-sansio's `jwt` feature".into()))
    }

    pub(super) fn on_token(&mut self, now: Instant, mut call: TokenCall, status: u16, body: &[u8]) {
        let grant = call.grant;
        if !(200..300).contains(&status) {
            let (error, description) = ErrorResponse::of(status, body);
            // RFC 9449 §8: the authorization server wants a nonce in the proof; the request
            // goes again with a new proof (a new `jti`) carrying it. Once: a server that refuses
            // the nonce it gave is not asked again.
            if let (Some(sent), "use_dpop_nonce") = (&call.proof, error.as_str()) {
                if self.dpop.server_nonce.is_some()
                    && self.dpop.server_nonce != *sent
                    && call.nonce_retries < MAX_NONCE_RETRIES
                {
                    tracing::debug!(grant = grant.name(), "the authorization server asks for a DPoP nonce");
                    call.nonce_retries += 1;
                    return self.send_token(now, call);
                }
                return self.fail(AuthError::DpopNonceRejected { endpoint: Endpoint::Token.as_str() });
            }
            if error == "invalid_client" && grant != TokenGrant::TokenExchange && self.forget_registration() {
                // The server forgot the client it registered (RFC 6749 §5.2): register anew.
                return self.authorize(now);
            }
            if grant == TokenGrant::Refresh {
                // The refresh token is spent or revoked: authorize from scratch.
                tracing::debug!(%error, "refresh refused: authorizing again");
                self.held = Held::None;
                return self.authorize(now);
            }
            let error = AuthError::TokenRefused { grant: grant.name(), error, description };
            if grant == TokenGrant::JwtBearer && matches!(self.config.grant, Grant::JwtBearer { .. }) {
                // SEP-1933: the assertion was refused; sending it again (or trying another
                // grant) is not done. Final until the application brings a new assertion.
                self.broken = Some(error.clone());
            }
            return self.fail(error);
        }
        if grant == TokenGrant::TokenExchange {
            return self.on_id_jag(now, body);
        }
        let dpop = call.proof.is_some();
        let response = serde_json::from_slice::<TokenResponse>(body).map_err(|e| e.to_string());
        let response = match response.and_then(|r| r.unusable(dpop).map_or(Ok(r), Err)) {
            Ok(response) => response,
            Err(detail) => {
                return self.fail(AuthError::InvalidResponse { endpoint: Endpoint::Token.as_str(), detail });
            }
        };
        let lifetime = response.lifetime();
        let bound = response.token_type.eq_ignore_ascii_case("dpop");
        // A refresh that brings no new refresh token keeps the old one (RFC 6749 §6).
        let old_refresh = self.held.take().and_then(|t| t.refresh);
        self.held = Held::Fresh(Tokens {
            access: Secret::new(response.access_token),
            refresh: response
                .refresh_token
                .map(Secret::new)
                .or(old_refresh.filter(|_| grant == TokenGrant::Refresh)),
            scope: response.scope.or_else(|| self.requested_scope()),
            expires_at: lifetime.map(|s| crate::deadline::deadline_after(now, Duration::from_secs(s))),
            dpop: bound,
        });
        self.generation = self.generation.saturating_add(1);
        self.budget.token_obtained();
        self.step = Step::Idle;
        tracing::debug!(grant = grant.name(), dpop = bound, "token obtained");
        self.events.push_back(AuthEvent::CredentialsChanged);
        self.events.push_back(AuthEvent::Authorized);
    }

    /// Drops the client registration the authorization server no longer knows, with the tokens
    /// issued to it, so that the next authorization registers again (and the application's
    /// store forgets it: [`AuthEvent::CredentialsChanged`]). Only a registration made (or
    /// restored) by the authorizer, and once until a token is obtained again: a server that
    /// forgets every client is not registered with in a loop. Returns whether it was dropped.
    fn forget_registration(&mut self) -> bool {
        let registered = self.config.client.is_none()
            && self.client.as_ref().is_some_and(|c| Some(&c.client_id) != self.config.metadata_url.as_ref());
        if !registered || !self.budget.reregistration() {
            return false;
        }
        tracing::debug!("the authorization server forgot the client: registering again");
        self.client = None;
        self.held = Held::None;
        self.events.push_back(AuthEvent::CredentialsChanged);
        true
    }

    /// The identity provider answered the token exchange: the ID-JAG, presented to the
    /// authorization server with the JWT bearer grant.
    fn on_id_jag(&mut self, now: Instant, body: &[u8]) {
        let endpoint = Endpoint::IdentityProvider.as_str();
        let response = match serde_json::from_slice::<TokenResponse>(body) {
            Ok(r) => r,
            Err(e) => return self.fail(AuthError::InvalidResponse { endpoint, detail: e.to_string() }),
        };
        if response.issued_token_type.as_deref().is_some_and(|t| t != ID_JAG_TYPE)
            || response.access_token.is_empty()
        {
            let detail = format!("no ID-JAG but a token of type {:?}", response.issued_token_type);
            return self.fail(AuthError::InvalidResponse { endpoint, detail });
        }
        tracing::debug!("ID-JAG obtained from the identity provider");
        let mut params = vec![
            ("grant_type", TokenGrant::JwtBearer.name().to_owned()),
            ("assertion", response.access_token),
            ("resource", self.resource()),
        ];
        if let Some(scope) = self.requested_scope() {
            params.push(("scope", scope));
        }
        self.request_token(now, TokenGrant::JwtBearer, params);
    }

    /// The flow failed: nothing more is sent for it; what waits fails with `error`.
    pub(super) fn fail(&mut self, error: AuthError) {
        tracing::debug!(%error, "authorization failed");
        self.step = Step::Idle;
        self.outbox = None;
        self.in_flight = None;
        self.budget.flow_failed();
        self.refresh_after_discovery = false;
        self.events.push_back(AuthEvent::Failed(error));
    }
}
