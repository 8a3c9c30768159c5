//! How the client authorizes: [`AuthConfig`] (the grant, how the client is identified, scopes,
//! DPoP, limits), the credentials it keeps ([`ClientInfo`], [`Credentials`]) and [`Secret`],
//! the string type that never prints.

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::jose::SigningKey;

/// A source of cryptographically secure random bytes (PKCE verifiers, `state`, JWT ids, the DPoP
/// key).
///
/// The engine has no randomness of its own, as it has no clock: the driver hands one in, as
/// rustls takes its crypto provider. `mcp-smol` passes the operating system's generator.
pub trait SecureRandom: Send {
    /// Fills `dest` with random bytes.
    fn fill(&mut self, dest: &mut [u8]);
}

impl<F: FnMut(&mut [u8]) + Send> SecureRandom for F {
    fn fill(&mut self, dest: &mut [u8]) {
        self(dest)
    }
}

/// A credential (a token, a client secret): `Debug` and `Display` print `<redacted>`, so it
/// can sit in structures that are logged. [`expose`](Self::expose) gives the value.
///
/// ```
/// use mcp_sansio::auth::Secret;
///
/// let secret = Secret::new("s3cr3t");
/// assert_eq!(format!("{secret:?}"), "<redacted>");
/// assert_eq!(secret.expose(), "s3cr3t");
/// ```
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Secret(String);

impl Secret {
    /// Wraps a value.
    pub fn new(value: impl Into<String>) -> Self {
        Secret(value.into())
    }

    /// The value. Never log it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

/// How the client proves its identity at the token endpoint (RFC 7591 names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum TokenEndpointAuth {
    /// A public client: its `client_id` in the form, no secret.
    None,
    /// HTTP Basic with the client id and secret (RFC 6749 §2.3.1).
    ClientSecretBasic,
    /// The client id and secret in the form.
    ClientSecretPost,
    /// A JWT signed with the client's private key (RFC 7523 §2.2): the key is
    /// [`ClientInfo::private_key`].
    PrivateKeyJwt,
}

impl TokenEndpointAuth {
    /// The RFC 7591 name, e.g. `"client_secret_basic"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            TokenEndpointAuth::None => "none",
            TokenEndpointAuth::ClientSecretBasic => "client_secret_basic",
            TokenEndpointAuth::ClientSecretPost => "client_secret_post",
            TokenEndpointAuth::PrivateKeyJwt => "private_key_jwt",
        }
    }

    pub(crate) fn parse(name: &str) -> Option<Self> {
        match name {
            "none" => Some(TokenEndpointAuth::None),
            "client_secret_basic" => Some(TokenEndpointAuth::ClientSecretBasic),
            "client_secret_post" => Some(TokenEndpointAuth::ClientSecretPost),
            "private_key_jwt" => Some(TokenEndpointAuth::PrivateKeyJwt),
            _ => None,
        }
    }
}

/// A client identity at an authorization server: pre-registered, registered dynamically, or a
/// Client ID Metadata Document URL.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClientInfo {
    /// The client id.
    pub client_id: String,
    /// The client secret of a confidential client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<Secret>,
    /// How it authenticates at the token endpoint; chosen from the server's metadata when
    /// `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth_method: Option<TokenEndpointAuth>,
    /// The authorization server it belongs to (its issuer). A registration is only used with the
    /// server that issued it; `None` for a pre-registered client, used with any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issuer: Option<String>,
    /// The redirect URI it was registered with (dynamic registration). A stored registration
    /// is not used with another one (a loopback redirect on another port): the client registers
    /// again, since servers may compare redirect URIs exactly. `None`: any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redirect_uri: Option<String>,
    /// The private key of a client that authenticates with `private_key_jwt`. Never stored
    /// (a pre-registered client's key comes from the application's configuration).
    #[serde(skip)]
    pub private_key: Option<SigningKey>,
}

impl ClientInfo {
    /// A pre-registered public client.
    pub fn public(client_id: impl Into<String>) -> Self {
        ClientInfo {
            client_id: client_id.into(),
            client_secret: None,
            auth_method: None,
            issuer: None,
            redirect_uri: None,
            private_key: None,
        }
    }

    /// A pre-registered confidential client.
    pub fn confidential(client_id: impl Into<String>, secret: impl Into<String>) -> Self {
        ClientInfo {
            client_id: client_id.into(),
            client_secret: Some(Secret::new(secret)),
            auth_method: None,
            issuer: None,
            redirect_uri: None,
            private_key: None,
        }
    }

    /// A pre-registered client that authenticates with a JWT signed by `key`
    /// (`private_key_jwt`, RFC 7523 §2.2; the authorization server knows the public key). The
    /// assertion names the client as `iss` and `sub` and the authorization server's issuer as
    /// `aud`, and lives five minutes.
    ///
    /// ```
    /// use mcp_sansio::auth::{AuthConfig, ClientInfo, SigningKey};
    ///
    /// # fn pem() -> String { String::new() }
    /// let pem: String = pem(); // -----BEGIN PRIVATE KEY----- … (PKCS#8, P-256)
    /// match SigningKey::from_pkcs8_pem(&pem) {
    ///     Ok(key) => {
    ///         let _config = AuthConfig::client_credentials(ClientInfo::private_key_jwt("svc", key));
    ///     }
    ///     Err(error) => eprintln!("bad key: {error}"),
    /// }
    /// ```
    pub fn private_key_jwt(client_id: impl Into<String>, key: SigningKey) -> Self {
        ClientInfo {
            client_id: client_id.into(),
            client_secret: None,
            auth_method: Some(TokenEndpointAuth::PrivateKeyJwt),
            issuer: None,
            redirect_uri: None,
            private_key: Some(key),
        }
    }

    /// Sets how the client authenticates at the token endpoint.
    #[must_use]
    pub fn with_auth_method(mut self, method: TokenEndpointAuth) -> Self {
        self.auth_method = Some(method);
        self
    }
}

/// Tokens as a store keeps them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredTokens {
    /// The access token.
    pub access_token: Secret,
    /// `Bearer`.
    pub token_type: String,
    /// The refresh token, if the server issued one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<Secret>,
    /// The scope granted, space-separated, if the server said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// Seconds since the Unix epoch when the access token expires, if known. The engine has no
    /// wall clock: [`Authorizer::credentials`](super::Authorizer::credentials) leaves this
    /// `None` and gives the remaining lifetime instead; the driver converts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<u64>,
}

/// What a client keeps between runs for one server: its registration and its tokens.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Credentials {
    /// The client's registration (from dynamic registration), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<ClientInfo>,
    /// The tokens, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<StoredTokens>,
}

/// Which OAuth grant obtains tokens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Grant {
    /// Authorization code with PKCE: a user approves in a browser, which is redirected to
    /// `redirect_uri`.
    AuthorizationCode { redirect_uri: String },
    /// Client credentials: a machine client, no user.
    ClientCredentials,
    /// The JWT bearer grant (RFC 7523 §2.1) with an assertion the application has (a workload
    /// identity token).
    JwtBearer { assertion: Secret },
    /// Enterprise-managed authorization: an identity assertion exchanged at the identity
    /// provider for an ID-JAG (RFC 8693), then the JWT bearer grant with it.
    IdentityAssertion(IdentityAssertion),
}

/// Enterprise-managed authorization (the MCP `enterprise-managed-authorization` extension,
/// SEP-990): the user's identity assertion from the enterprise identity provider (an OpenID
/// Connect ID token), which the client exchanges at the identity provider's token endpoint
/// (RFC 8693 token exchange) for an Identity Assertion JWT Authorization Grant (ID-JAG) for the
/// MCP server's authorization server, then presents there with the JWT bearer grant (RFC 7523).
///
/// ```
/// use mcp_sansio::auth::{AuthConfig, ClientInfo, IdentityAssertion};
///
/// let idp = IdentityAssertion::new("https://idp.example/token", "eyJ…id-token")
///     .idp_client(ClientInfo::public("my-app-at-the-idp"));
/// let _config = AuthConfig::identity_assertion(idp, ClientInfo::confidential("my-app", "secret"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdentityAssertion {
    pub(crate) token_endpoint: String,
    pub(crate) id_token: Secret,
    pub(crate) idp_client: Option<ClientInfo>,
}

impl IdentityAssertion {
    /// The identity provider's token endpoint and the user's ID token from it.
    pub fn new(idp_token_endpoint: impl Into<String>, id_token: impl Into<String>) -> Self {
        IdentityAssertion {
            token_endpoint: idp_token_endpoint.into(),
            id_token: Secret::new(id_token),
            idp_client: None,
        }
    }

    /// How the client is known at the identity provider (its `client_id` is sent with the
    /// exchange; with a secret it authenticates as the identity provider's metadata would
    /// have it, `client_secret_basic`).
    #[must_use]
    pub fn idp_client(mut self, client: ClientInfo) -> Self {
        self.idp_client = Some(client);
        self
    }
}

/// When access tokens are bound to a key of the client with DPoP (RFC 9449; the MCP DPoP
/// extension, SEP-1932).
///
/// With DPoP the client makes an EC P-256 key (from its [`SecureRandom`]) and signs a proof
/// for every token request and every request to the MCP server; a token stolen from a log or
/// a proxy is useless without the key. The key lives as long as the
/// [`Authorizer`](super::Authorizer): a DPoP-bound token is not part of
/// [`Credentials`] (it could not be used after a restart).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DpopPolicy {
    /// DPoP when the authorization server offers it for ES256
    /// (`dpop_signing_alg_values_supported`) or the resource requires it
    /// (`dpop_bound_access_tokens_required`); plain bearer tokens otherwise. The default.
    #[default]
    Auto,
    /// Always DPoP: an authorization server that lists DPoP algorithms without ES256 is
    /// refused ([`AuthError::Unsupported`](super::AuthError::Unsupported)).
    Required,
    /// Never DPoP: bearer tokens only.
    Disabled,
}

/// How the client authorizes with an OAuth-protected MCP server (the MCP authorization spec:
/// OAuth 2.1 with PKCE, RFC 9728 / 8414 discovery, RFC 7591 registration, RFC 8707 resource
/// indicators).
///
/// ```
/// use mcp_sansio::auth::{AuthConfig, ClientInfo};
///
/// // A desktop app: authorization code, redirected to a loopback port, registered dynamically.
/// let interactive = AuthConfig::authorization_code("http://127.0.0.1:8765/callback")
///     .client_name("My MCP app");
/// // A pre-registered client, with a Client ID Metadata Document where the server takes one.
/// let registered = AuthConfig::authorization_code("http://127.0.0.1:8765/callback")
///     .client(ClientInfo::public("my-app"));
/// // A service: client credentials.
/// let machine = AuthConfig::client_credentials(ClientInfo::confidential("svc", "secret"));
/// // A workload with an identity token from its platform (RFC 7523 JWT bearer grant).
/// let workload = AuthConfig::jwt_bearer("eyJ…workload-token").client(ClientInfo::public("wl"));
/// # let _ = (interactive, registered, machine, workload);
/// ```
#[derive(Debug, Clone)]
pub struct AuthConfig {
    pub(crate) grant: Grant,
    pub(crate) client: Option<ClientInfo>,
    pub(crate) metadata_url: Option<String>,
    pub(crate) client_name: String,
    pub(crate) scope: Option<String>,
    pub(crate) max_step_ups: u32,
    pub(crate) authorization_timeout: Duration,
    pub(crate) dpop: DpopPolicy,
}

impl AuthConfig {
    /// The authorization code grant with PKCE: the user approves in a browser, which the
    /// authorization server redirects to `redirect_uri` (a loopback URL for desktop and
    /// command-line apps). The client registers dynamically unless [`client`](Self::client) or
    /// [`client_metadata_url`](Self::client_metadata_url) says otherwise.
    pub fn authorization_code(redirect_uri: impl Into<String>) -> Self {
        Self::with_grant(Grant::AuthorizationCode { redirect_uri: redirect_uri.into() })
    }

    /// The client credentials grant (OAuth client credentials extension): no user, a
    /// pre-registered confidential client.
    pub fn client_credentials(client: ClientInfo) -> Self {
        Self::with_grant(Grant::ClientCredentials).client(client)
    }

    /// The JWT bearer grant (RFC 7523 §2.1) with `assertion`, a JWT the application obtained
    /// elsewhere (workload identity federation, SEP-1933: a Kubernetes service account token,
    /// a cloud instance identity token). Add [`client`](Self::client) if the authorization
    /// server wants a `client_id`.
    ///
    /// One attempt: if the authorization server refuses the assertion, the error is final
    /// (the same assertion would be refused again, and a retry or another grant is what
    /// an attacker's client would do): every later request fails with it until
    /// [`Authorizer::set_assertion`](super::Authorizer::set_assertion) brings a new one.
    pub fn jwt_bearer(assertion: impl Into<String>) -> Self {
        Self::with_grant(Grant::JwtBearer { assertion: Secret::new(assertion) })
    }

    /// Enterprise-managed authorization (SEP-990; see [`IdentityAssertion`]): `client` is how
    /// the client is registered with the MCP server's authorization server.
    pub fn identity_assertion(assertion: IdentityAssertion, client: ClientInfo) -> Self {
        Self::with_grant(Grant::IdentityAssertion(assertion)).client(client)
    }

    fn with_grant(grant: Grant) -> Self {
        AuthConfig {
            grant,
            client: None,
            metadata_url: None,
            client_name: "mcp-sansio client".to_owned(),
            scope: None,
            max_step_ups: 2,
            authorization_timeout: Duration::from_secs(600),
            dpop: DpopPolicy::Auto,
        }
    }

    /// A pre-registered client (its id, and its secret if it is confidential).
    #[must_use]
    pub fn client(mut self, client: ClientInfo) -> Self {
        self.client = Some(client);
        self
    }

    /// The HTTPS URL of this client's Client ID Metadata Document, used as its `client_id` with
    /// authorization servers that support them (`client_id_metadata_document_supported`).
    #[must_use]
    pub fn client_metadata_url(mut self, url: impl Into<String>) -> Self {
        self.metadata_url = Some(url.into());
        self
    }

    /// The `client_name` sent with dynamic registration.
    #[must_use]
    pub fn client_name(mut self, name: impl Into<String>) -> Self {
        self.client_name = name.into();
        self
    }

    /// The scope to request, space-separated, instead of the server's (from
    /// `WWW-Authenticate`, else the resource metadata's `scopes_supported`).
    #[must_use]
    pub fn scope(mut self, scope: impl Into<String>) -> Self {
        self.scope = Some(scope.into());
        self
    }

    /// How many times in a row the client re-authorizes for more scope after a
    /// `403 insufficient_scope` (default 2) before failing the request.
    #[must_use]
    pub fn max_step_ups(mut self, limit: u32) -> Self {
        self.max_step_ups = limit;
        self
    }

    /// How long the client waits for the user to come back from the authorization page
    /// (default 10 minutes).
    #[must_use]
    pub fn authorization_timeout(mut self, timeout: Duration) -> Self {
        self.authorization_timeout = timeout;
        self
    }

    /// When tokens are bound to the client's key with DPoP (default
    /// [`DpopPolicy::Auto`]).
    #[must_use]
    pub fn dpop(mut self, policy: DpopPolicy) -> Self {
        self.dpop = policy;
        self
    }

    /// The redirect URI of the authorization code grant, if that is the grant.
    pub fn redirect_uri(&self) -> Option<&str> {
        match &self.grant {
            Grant::AuthorizationCode { redirect_uri } => Some(redirect_uri),
            _ => None,
        }
    }
}
