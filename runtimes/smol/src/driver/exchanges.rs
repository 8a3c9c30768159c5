//! The HTTP transport of a driver: the session's requests run as exchanges of an
//! [`HttpTransport`]; their heads and body chunks go back to the session.

use std::io;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use mcp_sansio::http::{HttpAction, StreamId};

use super::BoxFuture;
use crate::http::{BodyStream, HttpResponse, HttpTransport, transport_error};
use crate::shared::{Engine, HttpKey, Shared};

/// Most body chunks read from one HTTP exchange per round, so one busy stream cannot starve
/// the others.
const CHUNKS_PER_ROUND: usize = 16;

/// The transport executing the session's requests, and the exchanges in flight.
pub(super) struct HttpIo {
    /// Reaches the engine's HTTP session (see [`Engine::http`]).
    key: HttpKey,
    transport: Arc<dyn HttpTransport>,
    exchanges: Vec<Exchange>,
    /// What the session asked for in the locked section, started after it.
    actions: Vec<HttpAction>,
}

struct Exchange {
    id: StreamId,
    state: ExchangeState,
}

enum ExchangeState {
    Head(BoxFuture<io::Result<HttpResponse>>),
    Body(BodyStream),
}

impl HttpIo {
    pub(super) fn new(key: HttpKey, transport: Arc<dyn HttpTransport>) -> Self {
        Self { key, transport, exchanges: Vec::new(), actions: Vec::new() }
    }

    /// The key to the engine's HTTP session.
    pub(super) fn key(&self) -> &HttpKey {
        &self.key
    }

    /// Moves what the exchanges received into the session.
    pub(super) fn receive(&mut self, cx: &mut Context<'_>, shared: &Shared, now: Instant) -> bool {
        let mut progressed = false;
        let mut i = 0;
        while i < self.exchanges.len() {
            let (moved, over) = self.exchanges[i].poll(cx, shared, &self.key, now);
            progressed |= moved;
            if over {
                self.exchanges.swap_remove(i);
            } else {
                i += 1;
            }
        }
        progressed
    }

    /// Takes the session's actions (under the lock).
    pub(super) fn collect(&mut self, engine: &mut Engine, now: Instant) {
        let session = engine.http(&self.key);
        while let Some(action) = session.poll_action(now) {
            self.actions.push(action);
        }
    }

    /// Starts the session's new requests and drops the exchanges it aborted.
    pub(super) fn send(&mut self) -> bool {
        let progressed = !self.actions.is_empty();
        for action in self.actions.drain(..) {
            match action {
                HttpAction::Send(request) => {
                    tracing::trace!(?request, "HTTP request");
                    let id = request.stream();
                    let state = ExchangeState::Head(self.transport.send(request));
                    self.exchanges.push(Exchange { id, state });
                }
                HttpAction::Abort(id) => self.exchanges.retain(|e| e.id != id),
                other => tracing::debug!(?other, "unhandled HTTP action"),
            }
        }
        progressed
    }
}

impl Exchange {
    /// Polls the head, then the body, into the session: whether anything arrived, and whether
    /// the exchange is over.
    fn poll(&mut self, cx: &mut Context<'_>, shared: &Shared, key: &HttpKey, now: Instant) -> (bool, bool) {
        match &mut self.state {
            ExchangeState::Body(body) => poll_body(self.id, body, cx, shared, key, now),
            ExchangeState::Head(future) => match future.as_mut().poll(cx) {
                Poll::Pending => (false, false),
                Poll::Ready(Ok(response)) => {
                    let HttpResponse { status, headers, mut body } = response;
                    let headers = headers.iter().map(|(n, v)| (n.as_str(), v.as_slice()));
                    shared.lock().engine.http(key).handle_response_head(now, self.id, status, headers);
                    let (_, over) = poll_body(self.id, &mut body, cx, shared, key, now);
                    self.state = ExchangeState::Body(body);
                    (true, over)
                }
                Poll::Ready(Err(error)) => {
                    shared.lock().engine.http(key).handle_response_error(
                        now,
                        self.id,
                        transport_error(&error),
                    );
                    (true, true)
                }
            },
        }
    }
}

/// Reads up to [`CHUNKS_PER_ROUND`] chunks of exchange `id`'s body into the session: whether
/// any came, and whether the body is over.
fn poll_body(
    id: StreamId,
    body: &mut BodyStream,
    cx: &mut Context<'_>,
    shared: &Shared,
    key: &HttpKey,
    now: Instant,
) -> (bool, bool) {
    let mut progressed = false;
    for _ in 0..CHUNKS_PER_ROUND {
        let Poll::Ready(item) = body.as_mut().poll_next(cx) else { return (progressed, false) };
        progressed = true;
        let mut state = shared.lock();
        let session = state.engine.http(key);
        match item {
            Some(Ok(chunk)) => session.handle_response_body(now, id, &chunk),
            Some(Err(error)) => {
                session.handle_response_error(now, id, transport_error(&error));
                return (true, true);
            }
            None => {
                session.handle_response_end(now, id);
                return (true, true);
            }
        }
    }
    // This one has more; the others get their turn first.
    (progressed, false)
}
