//! Input the server asks of the application in the middle of one of the client's requests:
//! the input requests of a 2026-07-28 multi round-trip result (`input_required`) and those of a
//! task (the tasks extension). Both are decoded the same way ([`decode_input`]), handed to the
//! application under ids of the engine's ([`ClientConnection::input_id`]), gathered the same
//! way ([`Gathering`](super::retry::Gathering), kept in `retry.rs`), and count against the one budget of everything the server asks of the
//! application ([`ClientConnection::open_asks`]).

use super::ClientConnection;
use super::incoming::server_request;
use super::pending::CallId;
use crate::capability;
use crate::event::{Event, RequestError};
use crate::jsonrpc;
use crate::{RequestId, schema};

/// Decodes input request `key` (a member of `inputRequests`, of a multi round-trip result or of
/// a task): a request the client can answer, or why it cannot (malformed, a capability the client
/// did not declare, a kind it does not know).
pub(super) fn decode_input(
    capabilities: &schema::ClientCapabilities,
    key: &str,
    raw: &str,
) -> Result<crate::ServerRequest, RequestError> {
    let invalid = |why: String| RequestError::InvalidInputRequest(format!("input request {key:?}{why}"));
    let (method, params) = jsonrpc::decode_call(raw).map_err(|e| invalid(format!(": {e}")))?;
    if !capability::client_declared(&method, capabilities) {
        return Err(invalid(format!(" is {method}, a capability the client did not declare")));
    }
    match server_request(&method, params) {
        Some(Ok(request)) => Ok(request),
        Some(Err(e)) => Err(invalid(format!(": {e}"))),
        None => Err(invalid(format!(": unknown kind {method}"))),
    }
}

/// Why a batch of input requests is not handed to the application.
#[derive(Debug)]
pub(super) enum InputRefusal {
    /// One of them cannot be answered by this client.
    Invalid(RequestError),
    /// Handing them out would pass
    /// [`max_open_server_requests`](crate::ClientConfig::max_open_server_requests).
    OverBudget(RequestError),
}

impl InputRefusal {
    pub(super) fn into_error(self) -> RequestError {
        match self {
            InputRefusal::Invalid(error) | InputRefusal::OverBudget(error) => error,
        }
    }
}

impl ClientConnection {
    /// How many things the server has asked of the application that are still open: its wire
    /// requests, the input requests of multi round-trip requests and tasks, the tasks the client
    /// hosts that have not ended, and the server's `tasks/result` requests waiting for them.
    /// One budget, [`max_open_server_requests`](crate::ClientConfig::max_open_server_requests),
    /// bounds them all.
    pub(super) fn open_asks(&self) -> usize {
        self.server_requests.len() + self.inputs.len() + self.hosted.open()
    }

    /// Decodes `requests` (key → raw input request) and, when every one can be answered and the
    /// budget has room for them all, hands them to the application as [`Event::Request`]s of
    /// request `owner`, each under a fresh id; `ask` records each key handed out. Nothing is
    /// handed out when the batch is refused: one request the client cannot answer fails the
    /// whole round, and a round past the budget is counted and reported once.
    pub(super) fn hand_out_inputs<'a>(
        &mut self,
        owner: CallId,
        requests: impl IntoIterator<Item = (String, &'a str)>,
        mut ask: impl FnMut(&mut Self, &str),
    ) -> Result<usize, InputRefusal> {
        let mut decoded = Vec::new();
        for (key, raw) in requests {
            match decode_input(&self.config.capabilities, &key, raw) {
                Ok(request) => decoded.push((key, request)),
                Err(error) => return Err(InputRefusal::Invalid(error)),
            }
        }
        let limit = self.config.max_open_server_requests;
        if self.open_asks().saturating_add(decoded.len()) > limit {
            let refused = decoded.len() as u64;
            self.stats.server_requests_refused = self.stats.server_requests_refused.saturating_add(refused);
            if let Some((key, request)) = decoded.first() {
                let (id, method) = (self.input_id(owner, key), request.method().to_owned());
                self.events.push_back(Event::ServerRequestRefused { id, method, limit });
            }
            tracing::debug!(id = owner.0, refused, limit, "input requests past the budget: refused");
            return Err(InputRefusal::OverBudget(RequestError::ServerRequestLimit { limit }));
        }
        let count = decoded.len();
        for (key, request) in decoded {
            let id = self.input_id(owner, &key);
            ask(self, &key);
            self.inputs.insert(id.clone(), (owner, key));
            self.events.push_back(Event::Request { id, request });
        }
        Ok(count)
    }

    /// A fresh id for input request `key` of request `n`: `input/<n>/<key>`, or, when the server
    /// has a request open under that id (ids are the server's to choose), the first of
    /// `input/<n>/<key>/1`, `/2`, … that is free. The loop ends within one step more than there
    /// are ids in use, which the budget bounds.
    pub(super) fn input_id(&self, n: CallId, key: &str) -> RequestId {
        self.free_id(format!("input/{}/{key}", n.0))
    }

    /// `base`, or the first of `base/1`, `base/2`, … that no open request of the server's or
    /// the engine's uses.
    pub(super) fn free_id(&self, base: String) -> RequestId {
        let mut id = RequestId::String(base.clone());
        let mut suffix = 0u64;
        while self.id_in_use(&id) {
            suffix += 1;
            id = RequestId::String(format!("{base}/{suffix}"));
        }
        id
    }

    /// Drops the input requests of request `id` (now finished).
    pub(super) fn forget_inputs(&mut self, id: CallId) {
        if !self.inputs.is_empty() {
            self.inputs.retain(|_, (owner, _)| *owner != id);
        }
    }
}
