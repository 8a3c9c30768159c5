//! The authorization endpoint, `GET /authorize`: no user interaction (the user always
//! approves), so a valid request is answered at once with a redirect carrying a code.

use std::time::{Duration, Instant};

use super::super::wire::Request;
use super::encoding::{Form, percent_encode, pkce_shaped};
use super::store::{Code, MAX_ENTRIES, Scopes, bump};
use super::{Answer, OAuth};

/// How long an authorization code may wait to be redeemed.
const CODE_TTL: Duration = Duration::from_secs(60);

/// Why an authorization request failed.
enum Failure {
    /// The redirect URI cannot be trusted (unknown client, unregistered URI): a 400 page.
    Page(&'static str, String),
    /// Reported to the client at its redirect URI (RFC 6749 §4.1.2.1).
    Redirect { redirect_uri: String, state: Option<String>, code: &'static str, description: String },
}

/// `base` with `params` appended to its query.
fn with_query(base: &str, params: &[(&str, &str)]) -> String {
    let mut location = base.to_owned();
    let mut separator = if !base.contains('?') {
        "?"
    } else if base.ends_with(['?', '&']) {
        ""
    } else {
        "&"
    };
    for (name, value) in params {
        location.push_str(separator);
        location.push_str(name);
        location.push('=');
        location.push_str(&percent_encode(value));
        separator = "&";
    }
    location
}

impl OAuth {
    /// `GET /authorize`: a 302 to the redirect URI with `code`, `state` and `iss`, or with
    /// `error` (and `state`, `iss`); a 400 when the client or redirect URI is not valid.
    pub(super) fn authorize(&self, request: &Request) -> Answer {
        if request.method != "GET" {
            return Answer::method_not_allowed("GET");
        }
        match self.try_authorize(request) {
            Ok(location) => Answer { status: 302, headers: vec![("Location", location)], body: None },
            Err(Failure::Page(code, description)) => {
                bump(&mut self.store().stats.authorization_errors, code);
                Answer::error(400, code, description)
            }
            Err(Failure::Redirect { redirect_uri, state, code, description }) => {
                bump(&mut self.store().stats.authorization_errors, code);
                let mut params = vec![("error", code), ("error_description", description.as_str())];
                if let Some(state) = &state {
                    params.push(("state", state));
                }
                params.push(("iss", &self.issuer));
                Answer {
                    status: 302,
                    headers: vec![("Location", with_query(&redirect_uri, &params))],
                    body: None,
                }
            }
        }
    }

    /// The `Location` of a successful authorization.
    fn try_authorize(&self, request: &Request) -> Result<String, Failure> {
        let query = request.target.split_once('?').map_or("", |(_, query)| query);
        let Some(form) = Form::parse(query) else {
            return Err(Failure::Page(
                "invalid_request",
                "the query is not valid form-urlencoded UTF-8".into(),
            ));
        };
        // Which client, and where to report errors, must be unambiguous before anything is
        // redirected.
        if let Some(name) = ["client_id", "redirect_uri"].into_iter().find(|name| form.repeats(name)) {
            return Err(Failure::Page("invalid_request", format!("the parameter {name} is repeated")));
        }
        let Some(client_id) = form.value("client_id") else {
            return Err(Failure::Page("invalid_request", "client_id is missing".into()));
        };
        let Some(client) = self.store().clients.get(client_id).cloned() else {
            return Err(Failure::Page("invalid_client", format!("unknown client_id {client_id:?}")));
        };
        // OAuth 2.1 §4.1.1: redirect_uri may be left out only when one URI is registered.
        let sent_redirect = form.value("redirect_uri");
        let redirect_uri = match (sent_redirect, client.redirect_uris.as_slice()) {
            (Some(uri), _) if client.allows_redirect(uri) => uri.to_owned(),
            (Some(uri), _) => {
                let message = format!("redirect_uri {uri:?} is not registered for this client");
                return Err(Failure::Page("invalid_request", message));
            }
            (None, [only]) => only.clone(),
            (None, _) => {
                let message = "redirect_uri is required (the client has no single registered redirect URI)";
                return Err(Failure::Page("invalid_request", message.into()));
            }
        };
        let state = form.get("state").map(str::to_owned);
        let fail = |code: &'static str, description: String| Failure::Redirect {
            redirect_uri: redirect_uri.clone(),
            state: state.clone(),
            code,
            description,
        };
        if let Some(name) = form.repeated() {
            return Err(fail("invalid_request", format!("the parameter {name} is repeated")));
        }
        match form.value("response_type") {
            None => return Err(fail("invalid_request", "response_type is missing".into())),
            Some("code") => {}
            Some(other) => {
                return Err(fail(
                    "unsupported_response_type",
                    format!("response_type {other:?}: only \"code\""),
                ));
            }
        }
        if !client.may_use("authorization_code") {
            let message = "the client did not register the authorization_code grant";
            return Err(fail("unauthorized_client", message.into()));
        }
        let Some(challenge) = form.value("code_challenge") else {
            return Err(fail("invalid_request", "code_challenge is required (PKCE with S256)".into()));
        };
        match form.value("code_challenge_method") {
            Some("S256") => {}
            None => {
                let message = "code_challenge_method is required and must be S256 (plain is not supported)";
                return Err(fail("invalid_request", message.into()));
            }
            Some(other) => {
                let message = format!("code_challenge_method {other:?} is not supported: only S256");
                return Err(fail("invalid_request", message));
            }
        }
        if !pkce_shaped(challenge) {
            let message = "code_challenge must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~";
            return Err(fail("invalid_request", message.into()));
        }
        let resource = form.value("resource");
        self.check_resource(resource).map_err(|message| fail("invalid_target", message))?;
        let scopes = Scopes::parse(form.value("scope"), Scopes::TOOLS)
            .map_err(|unknown| fail("invalid_scope", format!("unknown scope {unknown:?}")))?;
        let now = Instant::now();
        let mut store = self.store();
        store.sweep(now);
        if store.codes.len() >= MAX_ENTRIES {
            let message = "too many authorization codes are waiting to be redeemed".to_owned();
            return Err(fail("temporarily_unavailable", message));
        }
        let code = store.mint("code.");
        let grant = store.new_grant();
        store.codes.insert(
            code.clone(),
            Code {
                client_id: client_id.to_owned(),
                redirect_uri: sent_redirect.map(str::to_owned),
                effective_redirect_uri: redirect_uri.clone(),
                challenge: challenge.to_owned(),
                scopes,
                expires: now + CODE_TTL,
                grant,
                used: false,
            },
        );
        store.stats.authorizations += 1;
        let mut params = vec![("code", code.as_str())];
        if let Some(state) = &state {
            params.push(("state", state));
        }
        params.push(("iss", &self.issuer));
        Ok(with_query(&redirect_uri, &params))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_are_appended() {
        assert_eq!(with_query("http://h/cb", &[("a", "1 2"), ("b", "x")]), "http://h/cb?a=1%202&b=x");
        assert_eq!(with_query("http://h/cb?k=v", &[("a", "1")]), "http://h/cb?k=v&a=1");
        assert_eq!(with_query("http://h/cb?", &[("a", "1")]), "http://h/cb?a=1");
    }
}
