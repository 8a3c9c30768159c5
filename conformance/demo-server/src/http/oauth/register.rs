//! Dynamic Client Registration (RFC 7591) at `POST /register`, and the redirect URI rules the
//! authorization endpoint applies to registered clients.

use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value};

use super::super::wire::Request;
use super::store::{AuthMethod, Client, MAX_ENTRIES};
use super::{Answer, GRANT_TYPES, OAuth};

/// A registration error (RFC 7591 §3.2.2): always 400.
fn refuse(code: &str, description: impl Into<String>) -> Answer {
    Answer::error(400, code, description)
}

/// Whether `uri` may be registered as a redirect URI: an absolute URI (a scheme, then
/// something), without a fragment (RFC 6749 §3.1.2), white space or control characters.
fn valid_redirect_uri(uri: &str) -> bool {
    let Some((scheme, rest)) = uri.split_once(':') else { return false };
    let scheme_ok = scheme.bytes().next().is_some_and(|first| first.is_ascii_alphabetic())
        && scheme.bytes().all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'+' | b'-' | b'.'));
    scheme_ok && !rest.is_empty() && uri.bytes().all(|byte| byte.is_ascii_graphic() && byte != b'#')
}

/// A loopback redirect URI `http://127.0.0.1|localhost|[::1][:port]<rest>` split into its
/// lower-cased host and what follows the authority; `None` for any other URI.
pub(super) fn loopback(uri: &str) -> Option<(String, &str)> {
    let after_scheme =
        uri.get(..7).filter(|scheme| scheme.eq_ignore_ascii_case("http://")).map(|_| &uri[7..])?;
    let end = after_scheme.find(['/', '?', '#']).unwrap_or(after_scheme.len());
    let (authority, rest) = after_scheme.split_at(end);
    let (host, port) = match authority.strip_prefix('[') {
        Some(inner) => {
            let close = inner.find(']')?;
            (&authority[..close + 2], &inner[close + 1..])
        }
        None => authority.split_at(authority.find(':').unwrap_or(authority.len())),
    };
    let port_ok = match port.strip_prefix(':') {
        None => port.is_empty(),
        Some(digits) => (1..=5).contains(&digits.len()) && digits.bytes().all(|byte| byte.is_ascii_digit()),
    };
    let host = host.to_ascii_lowercase();
    (port_ok && ["127.0.0.1", "localhost", "[::1]"].contains(&host.as_str())).then_some((host, rest))
}

impl Client {
    /// Whether an authorization request may redirect to `uri`: a registered URI exactly, or,
    /// for a registered loopback URI, the same host and path with any port (RFC 8252 §7.3). A
    /// pre-registered client (no URIs) may use any loopback URI without a fragment.
    pub(super) fn allows_redirect(&self, uri: &str) -> bool {
        // The URI goes into a Location header: no white space or control characters (which a
        // percent-encoded query could carry), no fragment.
        if !valid_redirect_uri(uri) {
            return false;
        }
        let Some((host, rest)) = loopback(uri) else {
            return self.redirect_uris.iter().any(|known| known == uri);
        };
        if self.redirect_uris.is_empty() && self.method.is_none() {
            return true;
        }
        self.redirect_uris.iter().any(|known| known == uri || loopback(known) == Some((host.clone(), rest)))
    }
}

/// A list of strings in the client metadata (`None` when absent; `Err` when not such a list).
fn strings(metadata: &Map<String, Value>, name: &str) -> Result<Option<Vec<String>>, Answer> {
    let Some(value) = metadata.get(name) else { return Ok(None) };
    let list = value.as_array().and_then(|items| {
        items.iter().map(|item| item.as_str().map(str::to_owned)).collect::<Option<Vec<_>>>()
    });
    list.map(Some)
        .ok_or_else(|| refuse("invalid_client_metadata", format!("{name} must be an array of strings")))
}

impl OAuth {
    /// `POST /register`: validates the client metadata and answers 201 with the client
    /// information (the metadata as sent, completed with the defaults and credentials).
    pub(super) fn register(&self, request: &Request) -> Answer {
        if request.method != "POST" {
            return Answer::method_not_allowed("POST");
        }
        let answer = self.try_register(request).unwrap_or_else(|refusal| refusal);
        let mut store = self.store();
        if answer.status == 201 {
            store.stats.registrations += 1;
        } else {
            store.stats.registration_errors += 1;
        }
        answer
    }

    fn try_register(&self, request: &Request) -> Result<Answer, Answer> {
        let metadata = match serde_json::from_slice::<Value>(&request.body) {
            Ok(Value::Object(metadata)) => metadata,
            Ok(_) => return Err(refuse("invalid_client_metadata", "the body must be a JSON object")),
            Err(error) => {
                return Err(refuse("invalid_client_metadata", format!("the body is not JSON: {error}")));
            }
        };
        // RFC 7591 §2: the default method is client_secret_basic.
        let method = match metadata.get("token_endpoint_auth_method") {
            None => AuthMethod::SecretBasic,
            Some(value) => value.as_str().and_then(AuthMethod::from_name).ok_or_else(|| {
                let supported = AuthMethod::ALL.map(AuthMethod::name).join(", ");
                refuse(
                    "invalid_client_metadata",
                    format!("token_endpoint_auth_method must be one of {supported}"),
                )
            })?,
        };
        let grant_types =
            strings(&metadata, "grant_types")?.unwrap_or_else(|| vec!["authorization_code".into()]);
        if let Some(unknown) = grant_types.iter().find(|grant| !GRANT_TYPES.contains(&grant.as_str())) {
            return Err(refuse("invalid_client_metadata", format!("unsupported grant type {unknown:?}")));
        }
        if method == AuthMethod::None && grant_types.iter().any(|grant| grant == "client_credentials") {
            let message =
                "client_credentials needs a confidential client (token_endpoint_auth_method other than none)";
            return Err(refuse("invalid_client_metadata", message));
        }
        let response_types = strings(&metadata, "response_types")?.unwrap_or_else(|| vec!["code".into()]);
        if response_types.iter().any(|kind| kind != "code") {
            return Err(refuse("invalid_client_metadata", "the only response type is \"code\""));
        }
        let redirect_uris = strings(&metadata, "redirect_uris")?.unwrap_or_default();
        if let Some(bad) = redirect_uris.iter().find(|uri| !valid_redirect_uri(uri)) {
            let message = format!("redirect URI {bad:?} is not an absolute URI without a fragment");
            return Err(refuse("invalid_redirect_uri", message));
        }
        if redirect_uris.is_empty() && grant_types.iter().any(|grant| grant == "authorization_code") {
            let message = "an authorization_code client needs at least one redirect URI";
            return Err(refuse("invalid_redirect_uri", message));
        }
        let mut store = self.store();
        if store.registered >= MAX_ENTRIES {
            let message = format!("this demo server holds at most {MAX_ENTRIES} registered clients");
            return Err(refuse("invalid_client_metadata", message));
        }
        let client_id = store.mint("client.");
        let secret = (method != AuthMethod::None).then(|| store.mint("secret."));
        let client = Client {
            secret: secret.clone(),
            method: Some(method),
            redirect_uris: redirect_uris.clone(),
            grant_types: Some(grant_types.clone()),
        };
        store.clients.insert(client_id.clone(), client);
        store.registered += 1;
        drop(store);
        let issued_at = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |elapsed| elapsed.as_secs());
        let mut information = metadata;
        information.insert("client_id".into(), client_id.into());
        information.insert("client_id_issued_at".into(), issued_at.into());
        if let Some(secret) = secret {
            information.insert("client_secret".into(), secret.into());
            information.insert("client_secret_expires_at".into(), 0.into());
        }
        information.insert("token_endpoint_auth_method".into(), method.name().into());
        information.insert("grant_types".into(), grant_types.into());
        information.insert("response_types".into(), response_types.into());
        if !redirect_uris.is_empty() {
            information.insert("redirect_uris".into(), redirect_uris.into());
        }
        Ok(Answer::no_store(201, Value::Object(information)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn client(uris: &[&str]) -> Client {
        Client {
            secret: None,
            method: Some(AuthMethod::None),
            redirect_uris: uris.iter().map(|uri| (*uri).to_owned()).collect(),
            grant_types: None,
        }
    }

    #[test]
    fn redirect_uris() {
        for good in ["http://127.0.0.1:8080/cb", "https://app.example/cb?x=1", "com.example.app:/cb"] {
            assert!(valid_redirect_uri(good), "{good}");
        }
        for bad in ["/cb", "http://x/cb#frag", "1http://x", "http://x/a b", "", "x:"] {
            assert!(!valid_redirect_uri(bad), "{bad}");
        }
        assert_eq!(loopback("http://127.0.0.1:33/cb?a"), Some(("127.0.0.1".into(), "/cb?a")));
        assert_eq!(loopback("HTTP://LocalHost/cb"), Some(("localhost".into(), "/cb")));
        assert_eq!(loopback("http://[::1]:9/"), Some(("[::1]".into(), "/")));
        for other in [
            "https://127.0.0.1/cb",
            "http://127.0.0.2/cb",
            "http://localhost.evil/cb",
            "http://127.0.0.1:x/",
            "http://[::1",
        ] {
            assert_eq!(loopback(other), None, "{other}");
        }
    }

    #[test]
    fn loopback_redirects_allow_any_port() {
        let registered = client(&["http://127.0.0.1:5000/callback", "https://app.example/cb"]);
        assert!(registered.allows_redirect("http://127.0.0.1:5000/callback"));
        assert!(registered.allows_redirect("http://127.0.0.1:61234/callback"));
        assert!(registered.allows_redirect("http://127.0.0.1/callback"));
        assert!(registered.allows_redirect("https://app.example/cb"));
        assert!(!registered.allows_redirect("http://127.0.0.1:5000/other"));
        assert!(!registered.allows_redirect("http://localhost:5000/callback"));
        assert!(!registered.allows_redirect("https://app.example:444/cb"));
        assert!(!registered.allows_redirect("http://127.0.0.1:5000/callback#x"));
        let preregistered =
            Client { secret: Some("s".into()), method: None, redirect_uris: Vec::new(), grant_types: None };
        assert!(preregistered.allows_redirect("http://localhost:1234/anything"));
        assert!(!preregistered.allows_redirect("https://app.example/cb"));
        assert!(!preregistered.allows_redirect("http://127.0.0.1/cb\r\nSet-Cookie: a=b"));
        assert!(!preregistered.allows_redirect("http://127.0.0.1/cb#x"));
    }
}
