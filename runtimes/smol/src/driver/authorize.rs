//! The driver's side of OAuth: the session's authorization events, the application's
//! [`AuthorizationHandler`] while the user authorizes, and the [`TokenStore`]. User code: run
//! by dispatch, on the driver's task only.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::task::{Context, Poll};

use mcp_sansio::auth::{AuthEvent, Credentials};

use super::BoxFuture;
use crate::auth::{AuthorizationHandler, TokenStore};
use crate::contain::panic_message;
use crate::shared::{HttpKey, Shared};

/// What the driver does for the session's authorizer.
pub(crate) struct AuthIo {
    /// Reaches the engine's HTTP session (see [`Engine::http`](crate::shared::Engine::http)).
    key: HttpKey,
    handler: Option<Arc<dyn AuthorizationHandler>>,
    store: Arc<dyn TokenStore>,
    /// The handler's work while the user authorizes.
    pending: Option<BoxFuture<Result<String, String>>>,
}

impl AuthIo {
    pub(crate) fn new(
        handler: Option<Arc<dyn AuthorizationHandler>>,
        store: Arc<dyn TokenStore>,
        key: HttpKey,
    ) -> Self {
        AuthIo { key, handler, store, pending: None }
    }

    /// Drops the handler's work (the connection is over).
    pub(super) fn clear(&mut self) {
        self.pending = None;
    }

    /// Acts on one of the session's events: `true` if the engine got input.
    pub(super) fn on_event(&mut self, event: AuthEvent, shared: &Shared) -> bool {
        match event {
            AuthEvent::AuthorizationRequired { url } => match &self.handler {
                Some(handler) => {
                    tracing::debug!("sending the user to the authorization server");
                    match catch_unwind(AssertUnwindSafe(|| handler.authorize(url))) {
                        Ok(pending) => {
                            self.pending = Some(pending);
                            false
                        }
                        Err(panic) => abandon(shared, &self.key, &handler_panicked(&*panic)),
                    }
                }
                None => abandon(shared, &self.key, "the client has no AuthorizationHandler"),
            },
            AuthEvent::Authorized => {
                tracing::debug!("authorized");
                false
            }
            AuthEvent::Failed(error) => {
                tracing::debug!(%error, "authorization failed");
                // Whatever the handler still waits for is of no use now.
                self.pending = None;
                false
            }
            AuthEvent::CredentialsChanged => false,
            other => {
                tracing::debug!(?other, "unhandled authorization event");
                false
            }
        }
    }

    /// Saves new credentials. A store that panics closes the connection
    /// ([`CloseReason::Aborted`](mcp_sansio::CloseReason::Aborted)): tokens it failed to keep
    /// would be lost at the next run, and the next save would likely fail the same way.
    /// `true` if the engine got input (it closed).
    pub(super) fn save(&mut self, credentials: &Credentials, shared: &Shared) -> bool {
        let store = &self.store;
        let Err(panic) = catch_unwind(AssertUnwindSafe(|| store.save(credentials))) else { return false };
        let message = panic_message(&*panic);
        tracing::error!(panic = message, "the token store panicked: closing the connection");
        shared.lock().engine.abort(format!("the token store panicked: {message}"));
        self.pending = None;
        true
    }

    /// Polls the handler's work: `true` once it ended (the engine got its outcome).
    pub(super) fn poll(&mut self, cx: &mut Context<'_>, shared: &Shared) -> bool {
        let Some(pending) = self.pending.as_mut() else { return false };
        let outcome = match catch_unwind(AssertUnwindSafe(|| pending.as_mut().poll(cx))) {
            Ok(Poll::Pending) => return false,
            Ok(Poll::Ready(outcome)) => outcome,
            Err(panic) => Err(handler_panicked(&*panic)),
        };
        self.pending = None;
        let now = shared.clock.now();
        with_session(shared, &self.key, |session| match outcome {
            Ok(redirect) => {
                if let Err(error) = session.handle_authorization_redirect(now, &redirect) {
                    tracing::debug!(%error, "the authorization redirect was refused");
                }
            }
            Err(reason) => session.abandon_authorization(now, &reason),
        });
        true
    }
}

fn handler_panicked(panic: &(dyn std::any::Any + Send)) -> String {
    let message = panic_message(panic);
    tracing::error!(panic = message, "the authorization handler panicked");
    format!("the authorization handler panicked: {message}")
}

/// Abandons the authorization with `reason`: `true` (the engine got input).
fn abandon(shared: &Shared, key: &HttpKey, reason: &str) -> bool {
    let now = shared.clock.now();
    with_session(shared, key, |session| session.abandon_authorization(now, reason));
    true
}

fn with_session(shared: &Shared, key: &HttpKey, f: impl FnOnce(&mut mcp_sansio::http::HttpSession)) {
    f(shared.lock().engine.http(key));
}
