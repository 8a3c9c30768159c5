//! The HTTP requests the authorizer needs ([`AuthRequest`]) and what it reads from their
//! responses: token responses, OAuth error responses, registrations, form encoding.

use std::fmt;

use serde::Deserialize;

use super::config::{ClientInfo, Secret, TokenEndpointAuth};
use super::metadata::ServerMetadata;
use crate::http::HttpMethod;

/// What an [`AuthRequest`] is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Endpoint {
    /// Protected Resource Metadata (RFC 9728).
    ResourceMetadata,
    /// Authorization Server Metadata (RFC 8414 / OpenID Connect Discovery).
    ServerMetadata,
    /// Dynamic client registration (RFC 7591).
    Registration,
    /// The token endpoint.
    Token,
    /// The enterprise identity provider's token endpoint (a token exchange, RFC 8693).
    IdentityProvider,
}

impl Endpoint {
    /// A name for messages.
    pub const fn as_str(self) -> &'static str {
        match self {
            Endpoint::ResourceMetadata => "protected resource metadata",
            Endpoint::ServerMetadata => "authorization server metadata",
            Endpoint::Registration => "the registration endpoint",
            Endpoint::Token => "the token endpoint",
            Endpoint::IdentityProvider => "the identity provider's token endpoint",
        }
    }
}

/// One HTTP request the [`Authorizer`](super::Authorizer) needs executed (not to the MCP
/// server's endpoint: to metadata documents and the authorization server). Redirects are not
/// followed; the whole response body is handed back.
///
/// `Debug` shows the method, URL and purpose only: bodies and headers carry codes, secrets and
/// refresh tokens.
#[derive(Clone)]
pub struct AuthRequest {
    pub(crate) endpoint: Endpoint,
    pub(crate) method: HttpMethod,
    pub(crate) url: String,
    pub(crate) headers: Vec<(&'static str, String)>,
    pub(crate) body: Vec<u8>,
}

impl AuthRequest {
    fn get(endpoint: Endpoint, url: &url::Url) -> Self {
        AuthRequest {
            endpoint,
            method: HttpMethod::Get,
            url: url.as_str().to_owned(),
            headers: vec![("Accept", "application/json".to_owned())],
            body: Vec::new(),
        }
    }

    pub(crate) fn metadata(endpoint: Endpoint, url: &url::Url) -> Self {
        Self::get(endpoint, url)
    }

    pub(crate) fn post_json(endpoint: Endpoint, url: &str, body: Vec<u8>) -> Self {
        AuthRequest {
            endpoint,
            method: HttpMethod::Post,
            url: url.to_owned(),
            headers: vec![
                ("Accept", "application/json".to_owned()),
                ("Content-Type", "application/json".to_owned()),
            ],
            body,
        }
    }

    /// A token request to `endpoint` at `url`: the grant's parameters, and the client's
    /// authentication by `method` (none at all without a client). `assertion` is the signed
    /// JWT of `private_key_jwt`.
    pub(crate) fn token<K: AsRef<str>, V: AsRef<str>>(
        endpoint: Endpoint,
        url: &str,
        client: Option<&ClientInfo>,
        method: TokenEndpointAuth,
        params: &[(K, V)],
        assertion: Option<&str>,
    ) -> Self {
        let mut form = url::form_urlencoded::Serializer::new(String::new());
        form.extend_pairs(params.iter().map(|(k, v)| (k.as_ref(), v.as_ref())));
        let mut headers = vec![
            ("Accept", "application/json".to_owned()),
            ("Content-Type", "application/x-www-form-urlencoded".to_owned()),
        ];
        let Some(client) = client else {
            return AuthRequest {
                endpoint,
                method: HttpMethod::Post,
                url: url.to_owned(),
                headers,
                body: form.finish().into_bytes(),
            };
        };
        let secret = client.client_secret.as_ref().map_or("", Secret::expose);
        match method {
            TokenEndpointAuth::None => {
                form.append_pair("client_id", &client.client_id);
            }
            TokenEndpointAuth::ClientSecretPost => {
                form.append_pair("client_id", &client.client_id);
                form.append_pair("client_secret", secret);
            }
            TokenEndpointAuth::ClientSecretBasic => {
                // RFC 6749 §2.3.1: each part form-urlencoded, then Basic.
                let encode = |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
                let pair = format!("{}:{}", encode(&client.client_id), encode(secret));
                headers.push(("Authorization", format!("Basic {}", crate::base64::encode(pair.as_bytes()))));
            }
            TokenEndpointAuth::PrivateKeyJwt => {
                form.append_pair("client_id", &client.client_id);
                form.append_pair("client_assertion_type", CLIENT_ASSERTION_TYPE);
                form.append_pair("client_assertion", assertion.unwrap_or_default());
            }
        }
        AuthRequest {
            endpoint,
            method: HttpMethod::Post,
            url: url.to_owned(),
            headers,
            body: form.finish().into_bytes(),
        }
    }

    /// Adds a header (DPoP).
    pub(crate) fn push_header(&mut self, name: &'static str, value: String) {
        self.headers.push((name, value));
    }

    /// What the request is for.
    pub fn endpoint(&self) -> Endpoint {
        self.endpoint
    }

    /// `GET` or `POST`.
    pub fn method(&self) -> HttpMethod {
        self.method
    }

    /// The absolute URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The headers (name, value). Values may be credentials: never log them.
    pub fn headers(&self) -> impl ExactSizeIterator<Item = (&str, &str)> + '_ {
        self.headers.iter().map(|(n, v)| (*n, v.as_str()))
    }

    /// The body (a form or JSON; empty for `GET`). May hold credentials: never log it.
    pub fn body(&self) -> &[u8] {
        &self.body
    }
}

impl fmt::Debug for AuthRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuthRequest")
            .field("endpoint", &self.endpoint)
            .field("method", &self.method)
            .field("url", &self.url)
            .field("body_len", &self.body.len())
            .finish()
    }
}

/// `client_assertion_type` of `private_key_jwt` (RFC 7523 §2.2).
pub(crate) const CLIENT_ASSERTION_TYPE: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

/// A successful token response (RFC 6749 §5.1; RFC 8693 §2.2.1 adds `issued_token_type`).
#[derive(Deserialize)]
pub(crate) struct TokenResponse {
    pub(crate) access_token: String,
    pub(crate) token_type: String,
    #[serde(default)]
    pub(crate) expires_in: Option<serde_json::Value>,
    #[serde(default)]
    pub(crate) refresh_token: Option<String>,
    #[serde(default)]
    pub(crate) scope: Option<String>,
    #[serde(default)]
    pub(crate) issued_token_type: Option<String>,
}

impl TokenResponse {
    /// Why the response cannot be used as an access token for a request with a proof of
    /// possession (`dpop`) or without: an empty token, one that cannot go in an `Authorization`
    /// header, a token type the request did not ask for. The message never quotes the token.
    pub(crate) fn unusable(&self, dpop: bool) -> Option<String> {
        if self.access_token.is_empty() {
            return Some("empty access_token".to_owned());
        }
        if !is_b64token(&self.access_token) {
            return Some(
                "the access_token is not an RFC 6750 b64token (a byte that cannot go in an \
                 Authorization header)"
                    .to_owned(),
            );
        }
        let bearer = self.token_type.eq_ignore_ascii_case("bearer");
        let bound = dpop && self.token_type.eq_ignore_ascii_case("dpop");
        (!bearer && !bound).then(|| format!("unsupported token type {:?}", self.token_type))
    }

    /// `expires_in` in seconds: a number, or a numeric string as some servers send.
    pub(crate) fn lifetime(&self) -> Option<u64> {
        match self.expires_in.as_ref()? {
            serde_json::Value::Number(n) => n.as_u64().or_else(|| n.as_f64().map(|f| f.max(0.0) as u64)),
            serde_json::Value::String(s) => s.trim().parse().ok(),
            _ => None,
        }
    }
}

/// Whether `token` is an RFC 6750 §2.1 `b64token`: `1*( ALPHA / DIGIT / "-" / "." / "_" / "~" /
/// "+" / "/" ) *"="`, what `Authorization: Bearer` (and `DPoP`) can carry.
pub(crate) fn is_b64token(token: &str) -> bool {
    let body = token.trim_end_matches('=');
    !body.is_empty()
        && body
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'+' | b'/'))
}

/// An OAuth error response (RFC 6749 §5.2, RFC 7591 §3.2.2).
#[derive(Deserialize, Default)]
pub(crate) struct ErrorResponse {
    #[serde(default)]
    pub(crate) error: Option<String>,
    #[serde(default)]
    pub(crate) error_description: Option<String>,
}

impl ErrorResponse {
    /// The error of a failed response: its `error` and `error_description` when the body is
    /// one, else the status.
    pub(crate) fn of(status: u16, body: &[u8]) -> (String, Option<String>) {
        let parsed: ErrorResponse = serde_json::from_slice(body).unwrap_or_default();
        (parsed.error.unwrap_or_else(|| format!("HTTP {status}")), parsed.error_description)
    }
}

/// A dynamic registration's answer (RFC 7591 §3.2.1): the fields the client keeps.
#[derive(Deserialize)]
pub(crate) struct RegistrationResponse {
    pub(crate) client_id: String,
    #[serde(default)]
    pub(crate) client_secret: Option<String>,
    #[serde(default)]
    pub(crate) token_endpoint_auth_method: Option<String>,
}

/// How `client` authenticates at the token endpoint of `server`: as it was registered, else the
/// best the server offers for what the client has (a secret or not).
pub(crate) fn auth_method(client: &ClientInfo, server: &ServerMetadata) -> TokenEndpointAuth {
    if let Some(method) = client.auth_method {
        return method;
    }
    if client.private_key.is_some() {
        return TokenEndpointAuth::PrivateKeyJwt;
    }
    if client.client_secret.is_none() {
        return TokenEndpointAuth::None;
    }
    match &server.token_endpoint_auth_methods_supported {
        // RFC 8414: absent means client_secret_basic.
        None => TokenEndpointAuth::ClientSecretBasic,
        Some(methods) => {
            let has = |m: &str| methods.iter().any(|x| x == m);
            if has("client_secret_basic") {
                TokenEndpointAuth::ClientSecretBasic
            } else if has("client_secret_post") {
                TokenEndpointAuth::ClientSecretPost
            } else {
                TokenEndpointAuth::ClientSecretBasic
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_requests_authenticate_the_client_three_ways() {
        let client = ClientInfo::confidential("id:1", "s&cret");
        let params = [("grant_type", "client_credentials")];
        let token = |method| {
            AuthRequest::token(Endpoint::Token, "https://as/token", Some(&client), method, &params, None)
        };
        let basic = token(TokenEndpointAuth::ClientSecretBasic);
        assert_eq!(basic.body(), b"grant_type=client_credentials");
        let auth = basic.headers().find(|(n, _)| *n == "Authorization").unwrap().1;
        let decoded = crate::base64::decode(auth.strip_prefix("Basic ").unwrap()).unwrap();
        assert_eq!(decoded, b"id%3A1:s%26cret");
        let post = token(TokenEndpointAuth::ClientSecretPost);
        assert_eq!(post.body(), b"grant_type=client_credentials&client_id=id%3A1&client_secret=s%26cret");
        assert!(post.headers().all(|(n, _)| n != "Authorization"));
        let none = token(TokenEndpointAuth::None);
        assert_eq!(none.body(), b"grant_type=client_credentials&client_id=id%3A1");
        assert!(!format!("{post:?}").contains("cret"));
        let jwt = AuthRequest::token(
            Endpoint::Token,
            "https://as/token",
            Some(&client),
            TokenEndpointAuth::PrivateKeyJwt,
            &params,
            Some("a.b.c"),
        );
        assert_eq!(
            jwt.body(),
            b"grant_type=client_credentials&client_id=id%3A1&client_assertion_type=\
              urn%3Aietf%3Aparams%3Aoauth%3Aclient-assertion-type%3Ajwt-bearer&client_assertion=a.b.c"
        );
        assert!(jwt.headers().all(|(n, _)| n != "Authorization"));
        let anonymous = AuthRequest::token(
            Endpoint::Token,
            "https://as/token",
            None,
            TokenEndpointAuth::None,
            &params,
            None,
        );
        assert_eq!(anonymous.body(), b"grant_type=client_credentials");
    }

    #[test]
    fn picks_the_auth_method_from_the_metadata() {
        let mut server = ServerMetadata::default();
        assert_eq!(auth_method(&ClientInfo::public("p"), &server), TokenEndpointAuth::None);
        let confidential = ClientInfo::confidential("c", "s");
        assert_eq!(auth_method(&confidential, &server), TokenEndpointAuth::ClientSecretBasic);
        server.token_endpoint_auth_methods_supported = Some(vec!["client_secret_post".into()]);
        assert_eq!(auth_method(&confidential, &server), TokenEndpointAuth::ClientSecretPost);
        let pinned = confidential.with_auth_method(TokenEndpointAuth::ClientSecretBasic);
        assert_eq!(auth_method(&pinned, &server), TokenEndpointAuth::ClientSecretBasic);
    }

    #[test]
    fn b64tokens() {
        for good in ["a", "A-z.0_9~+/", "abc==", "x="] {
            assert!(is_b64token(good), "{good}");
        }
        for bad in ["", "=", "=abc", "a=b", "a b", "a\r\nb", "a\"b", "\u{e9}", "a,b"] {
            assert!(!is_b64token(bad), "{bad:?}");
        }
    }

    #[test]
    fn reads_expires_in_as_number_or_string() {
        let parse = |json: &str| serde_json::from_str::<TokenResponse>(json).unwrap().lifetime();
        assert_eq!(parse(r#"{"access_token":"a","token_type":"Bearer","expires_in":60}"#), Some(60));
        assert_eq!(parse(r#"{"access_token":"a","token_type":"Bearer","expires_in":"60"}"#), Some(60));
        assert_eq!(parse(r#"{"access_token":"a","token_type":"Bearer"}"#), None);
    }
}
