//! The driver's side of OAuth: the session's authorization events, the application's
//! [`AuthorizationHandler`] while the user authorizes, and the [`TokenStore`].

use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use mcp_sansio::auth::{AuthEvent, Credentials};

use super::BoxFuture;
use crate::auth::{AuthorizationHandler, TokenStore, unix_now};
use crate::shared::{Engine, Shared};

/// What the driver does for the session's authorizer.
pub(crate) struct AuthIo {
    handler: Option<Arc<dyn AuthorizationHandler>>,
    store: Arc<dyn TokenStore>,
    /// The handler's work while the user authorizes.
    pending: Option<BoxFuture<Result<String, String>>>,
    /// Taken under the lock, acted on after it.
    events: Vec<AuthEvent>,
    save: Option<Credentials>,
}

impl AuthIo {
    pub(crate) fn new(handler: Option<Arc<dyn AuthorizationHandler>>, store: Arc<dyn TokenStore>) -> Self {
        AuthIo { handler, store, pending: None, events: Vec::new(), save: None }
    }

    /// Takes the session's authorization events (under the lock).
    pub(super) fn collect(&mut self, engine: &mut Engine, now: Instant) {
        let Engine::Http(session) = engine else { return };
        while let Some(event) = session.poll_auth_event() {
            if event == AuthEvent::CredentialsChanged {
                self.save = session.credentials(now, unix_now());
            }
            self.events.push(event);
        }
    }

    /// Acts on the events (outside the lock) and polls the handler: `true` if anything
    /// happened.
    pub(super) fn poll(&mut self, cx: &mut Context<'_>, shared: &Shared, now: Instant) -> bool {
        let mut progressed = !self.events.is_empty();
        for event in std::mem::take(&mut self.events) {
            match event {
                AuthEvent::AuthorizationRequired { url } => match &self.handler {
                    Some(handler) => {
                        tracing::debug!("sending the user to the authorization server");
                        self.pending = Some(handler.authorize(url));
                    }
                    None => with_session(shared, |session| {
                        session.abandon_authorization(now, "the client has no AuthorizationHandler")
                    }),
                },
                AuthEvent::Authorized => tracing::debug!("authorized"),
                AuthEvent::Failed(error) => {
                    tracing::debug!(%error, "authorization failed");
                    // Whatever the handler still waits for is of no use now.
                    self.pending = None;
                }
                AuthEvent::CredentialsChanged => {}
                other => tracing::debug!(?other, "unhandled authorization event"),
            }
        }
        if let Some(credentials) = self.save.take() {
            self.store.save(&credentials);
        }
        if let Some(pending) = self.pending.as_mut() {
            if let Poll::Ready(outcome) = pending.as_mut().poll(cx) {
                self.pending = None;
                progressed = true;
                with_session(shared, |session| match outcome {
                    Ok(redirect) => {
                        if let Err(error) = session.handle_authorization_redirect(now, &redirect) {
                            tracing::debug!(%error, "the authorization redirect was refused");
                        }
                    }
                    Err(reason) => session.abandon_authorization(now, &reason),
                });
            }
        }
        progressed
    }
}

fn with_session(shared: &Shared, f: impl FnOnce(&mut mcp_sansio::http::HttpSession)) {
    let mut state = shared.lock();
    if let Engine::Http(session) = &mut state.engine {
        f(session);
    }
}
