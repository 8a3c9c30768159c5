//! The token endpoint, `POST /token`: client authentication (`none`, `client_secret_basic`,
//! `client_secret_post`), then the `authorization_code` (with PKCE), `refresh_token` (rotating)
//! and `client_credentials` grants.

use std::time::Instant;

use serde_json::{Value, json};

use super::super::wire::Request;
use super::encoding::{Form, form_decode, pkce_shaped, s256};
use super::store::{AccessToken, AuthMethod, Client, MAX_ENTRIES, RefreshToken, Scopes, Store, bump};
use super::{Answer, GRANT_TYPES, OAuth};
use crate::assets::base64_decode;

/// A failed token request (RFC 6749 §5.2).
struct Refusal {
    status: u16,
    code: &'static str,
    description: String,
    /// Whether the client authenticated with HTTP Basic: a 401 then says `WWW-Authenticate`.
    basic: bool,
}

fn refuse(code: &'static str, description: impl Into<String>) -> Refusal {
    Refusal { status: 400, code, description: description.into(), basic: false }
}

/// `invalid_client` is 401 (RFC 6749 §5.2).
fn bad_client(description: impl Into<String>) -> Refusal {
    Refusal { status: 401, code: "invalid_client", description: description.into(), basic: false }
}

/// An authenticated client.
struct Authenticated {
    id: String,
    client: Client,
}

/// `Authorization: Basic <base64(urlencoded id ":" urlencoded secret)>` (RFC 6749 §2.3.1):
/// `None` without Basic credentials, `Some(Err)` for malformed ones.
fn basic_credentials(request: &Request) -> Option<Result<(String, String), ()>> {
    let value = std::str::from_utf8(request.header("authorization")?).ok()?;
    let (scheme, encoded) = value.split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let decoded = base64_decode(encoded.trim()).and_then(|bytes| String::from_utf8(bytes).ok());
    let credentials = decoded.as_deref().and_then(|text| text.split_once(':')).and_then(|(id, secret)| {
        Some((form_decode(id)?, form_decode(secret)?)).filter(|(id, _)| !id.is_empty())
    });
    Some(credentials.ok_or(()))
}

impl OAuth {
    /// `POST /token` with a form body: a token response, or an error per RFC 6749 §5.2.
    pub(super) fn token(&self, request: &Request) -> Answer {
        if request.method != "POST" {
            return Answer::method_not_allowed("POST");
        }
        let form = std::str::from_utf8(&request.body).ok().and_then(Form::parse);
        let grant = form
            .as_ref()
            .and_then(|form| form.value("grant_type"))
            .and_then(|grant| GRANT_TYPES.into_iter().find(|known| *known == grant))
            .unwrap_or("other");
        bump(&mut self.store().stats.token_requests, grant);
        let result = match form {
            Some(form) => self.try_token(request, &form),
            None => Err(refuse("invalid_request", "the body is not valid form-urlencoded UTF-8")),
        };
        result.unwrap_or_else(|refusal| {
            bump(&mut self.store().stats.token_errors, refusal.code);
            let answer = Answer::error(refusal.status, refusal.code, refusal.description);
            if refusal.basic && refusal.status == 401 {
                answer.header("WWW-Authenticate", "Basic realm=\"mcp-demo-server\"")
            } else {
                answer
            }
        })
    }

    fn try_token(&self, request: &Request, form: &Form) -> Result<Answer, Refusal> {
        let form_type = request.header("content-type").and_then(|kind| std::str::from_utf8(kind).ok());
        let form_type = form_type.and_then(|kind| kind.split(';').next()).map(str::trim);
        if !form_type.is_some_and(|kind| kind.eq_ignore_ascii_case("application/x-www-form-urlencoded")) {
            return Err(refuse("invalid_request", "the body must be application/x-www-form-urlencoded"));
        }
        if let Some(name) = form.repeated() {
            return Err(refuse("invalid_request", format!("the parameter {name} is repeated")));
        }
        let basic = basic_credentials(request);
        let client = self.authenticate(basic.clone(), form).map_err(|mut refusal| {
            refusal.basic = basic.is_some();
            refusal
        })?;
        self.check_resource(form.value("resource")).map_err(|message| refuse("invalid_target", message))?;
        match form.value("grant_type") {
            None => Err(refuse("invalid_request", "grant_type is missing")),
            Some("authorization_code") => self.authorization_code(&client, form),
            Some("refresh_token") => self.refresh_token(&client, form),
            Some("client_credentials") => self.client_credentials(&client, form),
            Some(other) => Err(refuse("unsupported_grant_type", format!("unsupported grant_type {other:?}"))),
        }
    }

    /// Who is asking: HTTP Basic, else `client_id` with `client_secret` in the form, else a
    /// public client's `client_id`. A registered client must use its registered method; a
    /// pre-registered one either secret method.
    fn authenticate(
        &self,
        basic: Option<Result<(String, String), ()>>,
        form: &Form,
    ) -> Result<Authenticated, Refusal> {
        let (id, secret, method) = match basic {
            Some(Err(())) => return Err(bad_client("malformed HTTP Basic credentials")),
            Some(Ok((id, secret))) => {
                if form.get("client_secret").is_some() {
                    return Err(refuse("invalid_request", "more than one client authentication method"));
                }
                if form.value("client_id").is_some_and(|named| named != id) {
                    return Err(refuse("invalid_request", "client_id differs from the HTTP Basic user"));
                }
                (id, Some(secret), AuthMethod::SecretBasic)
            }
            None => match (form.value("client_id"), form.get("client_secret")) {
                (None, _) => return Err(bad_client("no client authentication and no client_id")),
                (Some(id), Some(secret)) => (id.to_owned(), Some(secret.to_owned()), AuthMethod::SecretPost),
                (Some(id), None) => (id.to_owned(), None, AuthMethod::None),
            },
        };
        let Some(client) = self.store().clients.get(&id).cloned() else {
            return Err(bad_client(format!("unknown client_id {id:?}")));
        };
        match (&client.secret, &secret) {
            (None, Some(_)) => return Err(bad_client("a public client must not send a client secret")),
            (Some(_), None) => return Err(bad_client("a confidential client must authenticate")),
            (Some(expected), Some(sent)) if expected != sent => {
                return Err(bad_client("wrong client secret"));
            }
            _ => {}
        }
        if let Some(registered) = client.method.filter(|registered| *registered != method) {
            let message = format!(
                "the client registered token_endpoint_auth_method {} but used {}",
                registered.name(),
                method.name()
            );
            return Err(bad_client(message));
        }
        Ok(Authenticated { id, client })
    }

    /// `grant_type=authorization_code`: `code`, `code_verifier`, `redirect_uri` when the
    /// authorization request had one. A code is good once: a second use fails and revokes what
    /// the first one got.
    fn authorization_code(&self, client: &Authenticated, form: &Form) -> Result<Answer, Refusal> {
        let Some(code) = form.value("code") else { return Err(refuse("invalid_request", "code is missing")) };
        let Some(verifier) = form.value("code_verifier") else {
            return Err(refuse("invalid_request", "code_verifier is missing (PKCE is required)"));
        };
        let now = Instant::now();
        let mut store = self.store();
        let Some(entry) = store.codes.get_mut(code) else {
            return Err(refuse("invalid_grant", "unknown or expired authorization code"));
        };
        if entry.client_id != client.id {
            return Err(refuse("invalid_grant", "the authorization code was issued to another client"));
        }
        if entry.used {
            let grant = entry.grant;
            store.revoke_grant(grant);
            let message = "the authorization code was already used; the tokens it gave are revoked";
            return Err(refuse("invalid_grant", message));
        }
        if now >= entry.expires {
            return Err(refuse("invalid_grant", "the authorization code expired"));
        }
        // Any attempt with the right client uses the code up: a wrong verifier cannot be retried.
        entry.used = true;
        let expected = entry.redirect_uri.as_deref();
        match (expected, form.value("redirect_uri")) {
            (Some(expected), Some(sent)) if expected == sent => {}
            (Some(_), _) => {
                return Err(refuse(
                    "invalid_grant",
                    "redirect_uri must be the one of the authorization request",
                ));
            }
            (None, Some(sent)) if sent != entry.effective_redirect_uri => {
                return Err(refuse("invalid_grant", "redirect_uri is not the one the code was sent to"));
            }
            (None, _) => {}
        }
        if !pkce_shaped(verifier) {
            return Err(refuse(
                "invalid_grant",
                "code_verifier must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~",
            ));
        }
        if s256(verifier) != entry.challenge {
            return Err(refuse(
                "invalid_grant",
                "PKCE verification failed: S256(code_verifier) != code_challenge",
            ));
        }
        let (scopes, grant) = (entry.scopes, entry.grant);
        let refresh = Some(RefreshToken { client_id: client.id.clone(), scopes, grant });
        self.issue(&mut store, now, scopes, Some(grant), refresh)
    }

    /// `grant_type=refresh_token`: `refresh_token`, optionally a narrower `scope`. The refresh
    /// token is replaced (rotation): the old one no longer works.
    fn refresh_token(&self, client: &Authenticated, form: &Form) -> Result<Answer, Refusal> {
        let Some(token) = form.value("refresh_token") else {
            return Err(refuse("invalid_request", "refresh_token is missing"));
        };
        let now = Instant::now();
        let mut store = self.store();
        let Some(entry) = store.refresh.get(token) else {
            return Err(refuse("invalid_grant", "unknown refresh token (or one already used: they rotate)"));
        };
        if entry.client_id != client.id {
            return Err(refuse("invalid_grant", "the refresh token was issued to another client"));
        }
        let granted = entry.scopes;
        let scopes = Scopes::parse(form.value("scope"), granted)
            .map_err(|unknown| refuse("invalid_scope", format!("unknown scope {unknown:?}")))?;
        if !granted.contains(scopes) {
            let message = format!("scope {:?} exceeds the grant ({:?})", scopes.text(), granted.text());
            return Err(refuse("invalid_scope", message));
        }
        let Some(old) = store.refresh.remove(token) else {
            return Err(refuse("invalid_grant", "unknown refresh token"));
        };
        let refresh =
            Some(RefreshToken { client_id: client.id.clone(), scopes: old.scopes, grant: old.grant });
        self.issue(&mut store, now, scopes, Some(old.grant), refresh)
    }

    /// `grant_type=client_credentials`: confidential clients only; an access token, no refresh
    /// token (RFC 6749 §4.4.3).
    fn client_credentials(&self, client: &Authenticated, form: &Form) -> Result<Answer, Refusal> {
        if client.client.secret.is_none() {
            return Err(refuse("unauthorized_client", "client_credentials is for confidential clients"));
        }
        if !client.client.may_use("client_credentials") {
            return Err(refuse(
                "unauthorized_client",
                "the client did not register the client_credentials grant",
            ));
        }
        let scopes = Scopes::parse(form.value("scope"), Scopes::TOOLS)
            .map_err(|unknown| refuse("invalid_scope", format!("unknown scope {unknown:?}")))?;
        let now = Instant::now();
        let mut store = self.store();
        self.issue(&mut store, now, scopes, None, None)
    }

    /// Stores a new access token (and `refresh`, if any) and answers with them.
    fn issue(
        &self,
        store: &mut Store,
        now: Instant,
        scopes: Scopes,
        grant: Option<u64>,
        refresh: Option<RefreshToken>,
    ) -> Result<Answer, Refusal> {
        store.sweep(now);
        if store.access.len() >= MAX_ENTRIES || (refresh.is_some() && store.refresh.len() >= MAX_ENTRIES) {
            return Err(Refusal {
                status: 503,
                code: "temporarily_unavailable",
                description: format!("this demo server holds at most {MAX_ENTRIES} tokens of each kind"),
                basic: false,
            });
        }
        let access_token = store.mint("at.");
        store.access.insert(
            access_token.clone(),
            AccessToken { scopes, expires: now.checked_add(self.token_ttl), grant },
        );
        store.stats.access_tokens_issued += 1;
        let mut body = json!({
            "access_token": access_token,
            "token_type": "Bearer",
            "expires_in": self.token_ttl.as_secs(),
            "scope": scopes.text(),
        });
        if let Some(refresh) = refresh {
            let refresh_token = store.mint("rt.");
            store.refresh.insert(refresh_token.clone(), refresh);
            store.stats.refresh_tokens_issued += 1;
            body["refresh_token"] = Value::String(refresh_token);
        }
        Ok(Answer::no_store(200, body))
    }
}
