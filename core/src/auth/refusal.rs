//! What the authorizer does when the MCP server refuses a request (`401`, or `403` with
//! `insufficient_scope`): the refusal is read into a [`Refusal`], the token's standing is a
//! [`Held`], and every bound on what a server can make the authorizer do is here, in
//! [`Budget`] and the constants beside it (`docs/robustness.md` lists them).

use std::time::Instant;

use super::challenge::BearerChallenge;
use super::*;

/// Refreshes after the server refused the token, between two requests that succeeded.
const MAX_REFRESHES: u32 = 2;
/// Full authorizations (discovery, the user, a token) between two requests that succeeded: a
/// server that refuses every token it was just given is not authorized with in a loop.
const MAX_AUTHORIZATIONS: u32 = 2;
/// How often one request (to the MCP server, or to a token endpoint) is sent again for a DPoP
/// nonce the server asked for (RFC 9449 §8, §9): once per new nonce, and a server that refuses
/// the nonce it gave, with another one or the same, is not asked again.
pub(super) const MAX_NONCE_RETRIES: u8 = 1;
/// How often a client registration the authorization server forgot (`invalid_client`) is
/// dropped and made again before a token is obtained.
const MAX_REREGISTRATIONS: u32 = 1;

/// The counts against the bounds that hold between successes; the per-request ones (nonce
/// retries) are counted in [`Stamp`] and `TokenCall`. Step-ups are also bounded by what they
/// ask for: a step-up runs only for scope not asked for before.
#[derive(Debug, Default)]
pub(super) struct Budget {
    /// Refreshes after a refusal ([`MAX_REFRESHES`]).
    refreshes: u32,
    /// Full authorizations ([`MAX_AUTHORIZATIONS`]).
    authorizations: u32,
    /// Step-ups ([`AuthConfig::max_step_ups`]).
    step_ups: u32,
    /// Registrations dropped after `invalid_client` ([`MAX_REREGISTRATIONS`]).
    reregistrations: u32,
}

impl Budget {
    /// Takes a refresh, if one is left.
    fn refresh(&mut self) -> bool {
        take(&mut self.refreshes, MAX_REFRESHES)
    }

    /// Counts a full authorization (they are checked where a fresh token was refused).
    pub(super) fn authorization(&mut self) {
        self.authorizations = self.authorizations.saturating_add(1);
    }

    /// Whether another full authorization may follow the refusal of a fresh token.
    fn authorizations_left(&self) -> bool {
        self.authorizations < MAX_AUTHORIZATIONS
    }

    /// Takes a step-up, if one is left under `limit`.
    fn step_up(&mut self, limit: u32) -> bool {
        take(&mut self.step_ups, limit)
    }

    /// Takes a re-registration, if one is left.
    pub(super) fn reregistration(&mut self) -> bool {
        take(&mut self.reregistrations, MAX_REREGISTRATIONS)
    }

    /// A request succeeded with the current token: the loops it ends start again from zero.
    fn succeeded(&mut self) {
        self.refreshes = 0;
        self.authorizations = 0;
        self.step_ups = 0;
    }

    /// A token was obtained: the registration works.
    pub(super) fn token_obtained(&mut self) {
        self.reregistrations = 0;
    }

    /// The flow failed and what waited for it failed too: the next request may start another.
    pub(super) fn flow_failed(&mut self) {
        self.authorizations = 0;
    }
}

/// Increments `count` if it is under `limit`; whether it was.
fn take(count: &mut u32, limit: u32) -> bool {
    let left = *count < limit;
    if left {
        *count += 1;
    }
    left
}

/// The access token the authorizer holds, and how the MCP server took it.
#[derive(Default)]
pub(super) enum Held {
    /// None: a request goes without one, and its `401` starts an authorization.
    #[default]
    None,
    /// Obtained, and no request succeeded with it yet.
    Fresh(Tokens),
    /// A request succeeded with it (or it was restored from an earlier run).
    Proven(Tokens),
}

impl Held {
    pub(super) fn tokens(&self) -> Option<&Tokens> {
        match self {
            Held::None => None,
            Held::Fresh(tokens) | Held::Proven(tokens) => Some(tokens),
        }
    }

    /// Gives the tokens up (`Held::None` from now on).
    pub(super) fn take(&mut self) -> Option<Tokens> {
        match std::mem::take(self) {
            Held::None => None,
            Held::Fresh(tokens) | Held::Proven(tokens) => Some(tokens),
        }
    }

    fn is_fresh(&self) -> bool {
        matches!(self, Held::Fresh(_))
    }

    /// The refresh token, if there is one.
    fn refresh(&self) -> Option<&Secret> {
        self.tokens()?.refresh.as_ref()
    }
}

/// What a refusal by the MCP server is, read from its status, its challenge and the credentials
/// the request carried.
enum Refusal {
    /// A `403` that is no `insufficient_scope`: the status stands.
    Forbidden,
    /// The request carried an older token than the one held now.
    StaleToken,
    /// RFC 9449 §9: the server wants its DPoP nonce (a new one may have come with the refusal).
    DpopNonce(Stamp),
    /// `403 insufficient_scope`: the scope the server says the request needs.
    InsufficientScope(Option<String>),
    /// `401`: the request carried no token, or the server refused it.
    Unauthorized { carried: bool },
}

impl Authorizer {
    /// A request to the MCP server that carried `stamp` succeeded.
    pub fn accepted(&mut self, stamp: Stamp) {
        if stamp.generation != self.generation {
            return;
        }
        self.held = match std::mem::take(&mut self.held) {
            Held::Fresh(tokens) => Held::Proven(tokens),
            held => held,
        };
        if self.held.tokens().is_some() {
            self.budget.succeeded();
        }
    }

    /// The MCP server refused a request with `status` (401 or 403), this `WWW-Authenticate`
    /// value and this `DPoP-Nonce` header; `sent` is the stamp of the
    /// [`authorization`](Self::authorization) the request carried (`None` if it carried no
    /// token). Says what to do with the request, and starts what is needed (discovery,
    /// refresh, a new authorization, a step-up).
    ///
    /// A DPoP `use_dpop_nonce` challenge is no reason to authorize again: the request is sent
    /// again ([`Verdict::Retry`]) with a proof carrying the new nonce, once.
    pub fn challenge(
        &mut self,
        now: Instant,
        status: u16,
        www_authenticate: Option<&str>,
        dpop_nonce: Option<&str>,
        sent: Option<Stamp>,
    ) -> Verdict {
        let (refusal, challenge) = self.read(status, www_authenticate, sent);
        // A configuration that cannot work says so at the first refusal that is its business.
        if let (false, Some(error)) = (matches!(refusal, Refusal::Forbidden), &self.broken) {
            return Verdict::Fail(error.clone());
        }
        match refusal {
            Refusal::Forbidden => Verdict::NotAuthorization,
            Refusal::StaleToken => Verdict::Retry,
            Refusal::DpopNonce(sent) => self.nonce_retry(sent, dpop_nonce),
            _ if self.is_busy() => Verdict::Wait,
            Refusal::InsufficientScope(scope) => {
                self.note(&challenge);
                self.step_up(now, scope)
            }
            Refusal::Unauthorized { carried } => {
                self.note(&challenge);
                if challenge.scope.is_some() {
                    self.challenge_scope = challenge.scope;
                }
                self.recover(now, carried, status)
            }
        }
    }

    /// Reads a refusal: what it is, and the challenge it came with (a server that speaks both
    /// schemes may name the error in either; the DPoP one wins).
    fn read(
        &self,
        status: u16,
        www_authenticate: Option<&str>,
        sent: Option<Stamp>,
    ) -> (Refusal, BearerChallenge) {
        let bearer = www_authenticate.and_then(BearerChallenge::parse);
        let dpop = www_authenticate.and_then(|h| BearerChallenge::parse_scheme(h, "DPoP"));
        let wants_nonce = |c: &Option<BearerChallenge>| {
            c.as_ref().is_some_and(|c| c.error.as_deref() == Some("use_dpop_nonce"))
        };
        let use_dpop_nonce = wants_nonce(&dpop) || wants_nonce(&bearer);
        let challenge = match (dpop, bearer) {
            (Some(dpop), _) if dpop.error.is_some() => dpop,
            (dpop, Some(bearer)) => BearerChallenge {
                resource_metadata: bearer.resource_metadata.or(dpop.and_then(|d| d.resource_metadata)),
                ..bearer
            },
            (Some(dpop), None) => dpop,
            (None, None) => BearerChallenge::default(),
        };
        let held = self.held.tokens();
        let refusal = match (status, sent) {
            (403, _) if challenge.error.as_deref() != Some("insufficient_scope") => Refusal::Forbidden,
            (_, Some(sent)) if sent.generation < self.generation && held.is_some() => Refusal::StaleToken,
            (401, Some(sent)) if use_dpop_nonce && held.is_some_and(|t| t.dpop) => Refusal::DpopNonce(sent),
            (403, _) => Refusal::InsufficientScope(challenge.scope.clone()),
            (_, sent) => Refusal::Unauthorized { carried: sent.is_some() && held.is_some() },
        };
        (refusal, challenge)
    }

    /// Keeps where the challenge says the resource metadata is.
    fn note(&mut self, challenge: &BearerChallenge) {
        if challenge.resource_metadata.is_some() {
            self.metadata_hint = challenge.resource_metadata.clone();
        }
    }

    /// `use_dpop_nonce`: the request goes again with the nonce that came, once per request.
    fn nonce_retry(&mut self, sent: Stamp, dpop_nonce: Option<&str>) -> Verdict {
        if let Some(nonce) = dpop_nonce {
            self.handle_resource_nonce(nonce);
        }
        if sent.nonce < self.dpop.epoch && sent.nonce_retries < MAX_NONCE_RETRIES {
            tracing::debug!("the server asks for a DPoP nonce: sending the request again");
            return Verdict::Retry;
        }
        Verdict::Fail(AuthError::DpopNonceRejected { endpoint: RESOURCE_SERVER })
    }

    /// `insufficient_scope`: authorize again for the union of what was asked and what is
    /// needed, when something is needed that was neither asked for nor granted (a step-up that
    /// did not help is not run again: MCP 2025-11-25, scope challenge handling), within
    /// [`AuthConfig::max_step_ups`] between successes.
    fn step_up(&mut self, now: Instant, scope: Option<String>) -> Verdict {
        let granted = self.held.tokens().and_then(|t| t.scope.clone());
        let asked = union(self.requested_scope().as_deref(), granted.as_deref()).unwrap_or_default();
        let asked: Vec<&str> = asked.split_whitespace().collect();
        let new = scope.as_deref().is_some_and(|s| s.split_whitespace().any(|s| !asked.contains(&s)));
        if !new || !self.budget.step_up(self.config.max_step_ups) {
            return Verdict::Fail(AuthError::InsufficientScope { scope, attempts: self.budget.step_ups });
        }
        let previous = granted.or_else(|| self.requested_scope());
        self.step_up_scope = union(previous.as_deref(), scope.as_deref());
        self.challenge_scope = scope;
        tracing::debug!(attempt = self.budget.step_ups, "insufficient scope: authorizing again for more");
        self.held = Held::None;
        self.authorize(now);
        Verdict::Wait
    }

    /// A `401`: refresh a refused token (it may have expired before its first use), else
    /// authorize from the start (the server may have moved to another authorization server),
    /// unless the token refused was fresh and the authorizations are spent.
    fn recover(&mut self, now: Instant, carried: bool, status: u16) -> Verdict {
        if carried && self.held.refresh().is_some() && self.budget.refresh() {
            tracing::debug!("the server refused the access token: refreshing it");
            self.refresh_or_discover(now);
            return Verdict::Wait;
        }
        if carried && self.held.is_fresh() && !self.budget.authorizations_left() {
            return Verdict::Fail(AuthError::TokenRejected { status });
        }
        self.held = Held::None;
        self.resource_metadata = Discovered::Unknown;
        self.metadata = None;
        self.issuer = None;
        self.authorize(now);
        Verdict::Wait
    }

    /// Refreshes the token; tokens restored from an earlier run come without the authorization
    /// server's metadata, so it is discovered first (the refresh follows, not the user).
    pub(super) fn refresh_or_discover(&mut self, now: Instant) {
        if self.metadata.is_some() {
            self.refresh(now);
        } else {
            self.refresh_after_discovery = true;
            self.proceed(now);
        }
    }
}
