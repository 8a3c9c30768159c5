//! 2026-07-28 requests that go on after an answer: multi round-trip input (`input_required`),
//! a version refusal (`-32022`) naming another version, and a re-send after a transport lost
//! the response.
//!
//! Such a request keeps its call id; each send gets a fresh wire id from the pending table.
//! Between input rounds nothing of it is in flight (it is parked); its deadline covers the
//! whole exchange.

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::time::Instant;

use serde_json::value::RawValue;

use super::handshake::offered_versions;
use super::incoming::server_request;
use super::pending::{CallId, Pending, WireId};
use super::{ClientConnection, request_transmit};
use crate::capability;
use crate::error::UsageError;
use crate::event::{Event, RequestError};
use crate::jsonrpc::{self, ErrorObject, error_codes};
use crate::transmit::Route;
use crate::{ProtocolVersion, RequestId, schema};

/// How often a 2026-07-28 request is sent again after its response was lost (a version refusal
/// only sends it again once).
const MAX_REISSUES: u8 = 2;

/// A 2026-07-28 request that may be sent again: with `inputResponses` (multi round-trip), or
/// as it was under a new id.
#[derive(Debug)]
pub(crate) struct Retry {
    method: Cow<'static, str>,
    /// The params as first sent (with `_meta`).
    params: Vec<u8>,
    /// The params of the latest round, when they differ from the first (they carry
    /// `inputResponses`): what a re-send after a lost response sends again.
    round_params: Option<Vec<u8>>,
    route: Option<Box<Route>>,
    rounds: u32,
    /// The round in progress: the opaque state to echo and the answers gathered so far.
    state: Option<Box<RawValue>>,
    waiting: BTreeSet<String>,
    answers: schema::JsonObject,
    /// What a task answer does (the tasks extension).
    pub(crate) task_mode: crate::TaskMode,
}

impl Retry {
    pub(crate) fn new(method: Cow<'static, str>, params: Vec<u8>, route: Option<Box<Route>>) -> Self {
        Retry {
            method,
            params,
            round_params: None,
            route,
            rounds: 0,
            state: None,
            waiting: BTreeSet::new(),
            answers: schema::JsonObject::new(),
            task_mode: crate::TaskMode::default(),
        }
    }

    /// Whether the method may answer `input_required` (only these three may).
    fn takes_input(&self) -> bool {
        matches!(&*self.method, "tools/call" | "resources/read" | "prompts/get")
    }
}

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

/// `params` (an object with the request's `_meta`) with the protocol version in `_meta` set to
/// `version`; `None` if they are not an object.
fn with_version(params: &[u8], version: ProtocolVersion) -> Option<Vec<u8>> {
    let mut params = serde_json::from_slice::<schema::JsonObject>(params).ok()?;
    if let Some(serde_json::Value::Object(meta)) = params.get_mut("_meta") {
        meta.insert(schema::META_PROTOCOL_VERSION.into(), version.as_str().into());
    }
    serde_json::to_vec(&params).ok()
}

impl ClientConnection {
    /// An answer arrived for the application's request `id` (out of the table): a 2026-07-28
    /// request may go on instead of finishing. Returns the request back when it finishes with
    /// this answer.
    pub(super) fn before_answer(
        &mut self,
        now: Instant,
        id: CallId,
        pending: Pending,
        result: &Result<&RawValue, ErrorObject>,
    ) -> Option<Pending> {
        if self.tasks.asked_for_task(id) {
            return self.on_experimental_answer(now, id, pending, result);
        }
        let Some(retry) = pending.retry.as_ref() else { return self.refuse_modern_task(id, pending, result) };
        match result {
            Ok(raw) if retry.method == "tools/call" && raw.get().contains("\"task\"") => {
                let mode = retry.task_mode;
                self.on_task_answer(now, id, pending, raw, mode)
            }
            Ok(raw) if retry.takes_input() && raw.get().contains("\"input_required\"") => {
                self.on_input_required(id, pending, raw)
            }
            Err(error)
                if error.code == error_codes::UNSUPPORTED_PROTOCOL_VERSION && pending.reissues == 0 =>
            {
                self.after_version_refusal(id, pending, error)
            }
            Ok(raw) if retry.method == "server/discover" => {
                self.on_rediscover(now, raw);
                Some(pending)
            }
            _ => Some(pending),
        }
    }

    /// A 2026-07-28 `input_required` result for request `n`: hands the input requests to the
    /// application (as [`Event::Request`]s) and retries once they are all answered. Returns the
    /// pending request back when the result is not `input_required` after all.
    fn on_input_required(&mut self, n: CallId, mut pending: Pending, raw: &RawValue) -> Option<Pending> {
        let parsed = match serde_json::from_str::<schema::InputRequired<'_>>(raw.get()) {
            Ok(parsed) if parsed.result_type == Some("input_required") => parsed,
            _ => return Some(pending),
        };
        let max_rounds = self.config.max_input_rounds;
        let retry = pending.retry.as_mut()?;
        retry.rounds += 1;
        if retry.rounds > max_rounds {
            self.finish(n, pending, Err(RequestError::TooManyInputRounds(max_rounds)));
            return None;
        }
        retry.state = parsed.request_state.map(RawValue::to_owned);
        retry.answers.clear();
        retry.waiting.clear();
        let mut requests = Vec::new();
        for (key, raw_input) in parsed.input_requests.unwrap_or_default() {
            match decode_input(&self.config.capabilities, &key, raw_input.get()) {
                Ok(request) => requests.push((key, request)),
                Err(error) => {
                    self.finish(n, pending, Err(error));
                    return None;
                }
            }
        }
        let retry = pending.retry.as_mut()?;
        for (key, request) in requests {
            let id = self.input_id(n, &key);
            retry.waiting.insert(key.clone());
            self.inputs.insert(id.clone(), (n, key));
            self.events.push_back(Event::Request { id, request });
        }
        let ready = retry.waiting.is_empty();
        // This round is over on the wire: until the retry goes out, nothing is in flight. The
        // whole exchange stays under the request's deadline.
        pending.park();
        self.pending.insert(n, pending);
        if ready {
            self.send_round(n);
        }
        None
    }

    /// The application answered input request `key` of request `owner` (2026-07-28).
    pub(super) fn answer_input(
        &mut self,
        owner: CallId,
        key: String,
        outcome: Result<serde_json::Result<serde_json::Value>, ErrorObject>,
    ) -> Result<(), UsageError> {
        let value = match outcome {
            Ok(Ok(value)) => value,
            Ok(Err(e)) => return Err(UsageError::InvalidParams(e.to_string())),
            Err(error) => {
                // No per-input error exists on the wire: the request is abandoned.
                if let Some(pending) = self.pending.remove(owner) {
                    self.finish(owner, pending, Err(RequestError::InputRefused(error)));
                }
                return Ok(());
            }
        };
        let Some(retry) = self.pending.get_mut(owner).and_then(|p| p.retry.as_mut()) else { return Ok(()) };
        retry.waiting.remove(&key);
        retry.answers.insert(key, value);
        if retry.waiting.is_empty() {
            self.send_round(owner);
        }
        Ok(())
    }

    /// Sends request `n` again under a new wire id, with the inputs gathered and the state to
    /// echo (when there are any).
    fn send_round(&mut self, n: CallId) {
        let Some(retry) = self.pending.get_mut(n).and_then(|p| p.retry.as_mut()) else { return };
        let mut params: schema::JsonObject = serde_json::from_slice(&retry.params).unwrap_or_default();
        if !retry.answers.is_empty() {
            params.insert(
                "inputResponses".into(),
                serde_json::Value::Object(std::mem::take(&mut retry.answers)),
            );
        }
        if let Some(state) = retry.state.take() {
            if let Ok(value) = serde_json::from_str::<serde_json::Value>(state.get()) {
                params.insert("requestState".into(), value);
            }
        }
        retry.round_params = Some(serde_json::to_vec(&params).unwrap_or_else(|_| b"{}".to_vec()));
        self.send_latest_round(n);
    }

    /// Sends request `n`'s latest round (its first params if it had no input round) under a
    /// fresh wire id.
    fn send_latest_round(&mut self, n: CallId) -> Option<WireId> {
        let wire = self.pending.rewire(n)?;
        let retry = self.pending.get(n)?.retry.as_ref()?;
        let params = retry.round_params.as_deref().unwrap_or(&retry.params);
        let transmit = request_transmit(n, wire, retry.method.clone(), Some(params), retry.route.clone());
        self.push_transmit(transmit);
        Some(wire)
    }

    /// The transport lost the response to `wire`: a 2026-07-28 request is sent again as it was
    /// under a new id (at most [`MAX_REISSUES`] times). Returns whether it was.
    pub(super) fn send_again(&mut self, wire: WireId) -> bool {
        let Some(n) = self.pending.owner(wire) else { return false };
        let Some(pending) = self.pending.get_mut(n) else { return false };
        let sendable = pending.kind.answers_caller() && pending.retry.is_some();
        if !sendable || pending.reissues >= MAX_REISSUES {
            return false;
        }
        pending.reissues += 1;
        let Some(new) = self.send_latest_round(n) else { return false };
        tracing::debug!(
            id = wire.get(),
            new = new.get(),
            "the response was lost: the request is sent again under a new id"
        );
        true
    }

    /// A 2026-07-28 request refused with `-32022`: when the server names another version this
    /// client speaks, the connection moves to it and the request is sent again with it (the
    /// server may have been upgraded under a live connection). Returns the request back when
    /// there is no such version.
    fn after_version_refusal(
        &mut self,
        n: CallId,
        mut pending: Pending,
        error: &ErrorObject,
    ) -> Option<Pending> {
        let supported: Vec<ProtocolVersion> =
            offered_versions(error).iter().filter_map(|v| v.parse().ok()).collect();
        let Some(version) = self.switch_version(&supported) else { return Some(pending) };
        let Some(retry) = pending.retry.as_mut() else { return Some(pending) };
        // The round that was refused goes again as it was (with the answers the user gave and
        // the state to echo, if it had them), under the new version: nobody is asked again.
        let Some(params) = with_version(&retry.params, version) else { return Some(pending) };
        retry.params = params;
        if let Some(round) = &retry.round_params {
            let Some(round) = with_version(round, version) else { return Some(pending) };
            retry.round_params = Some(round);
        }
        pending.reissues += 1;
        pending.park();
        self.pending.insert(n, pending);
        self.send_latest_round(n);
        None
    }

    /// A fresh id for input request `key` of request `n`: `input/<n>/<key>`, or, when the server
    /// has a request open under that id (ids are the server's to choose), the first of
    /// `input/<n>/<key>/1`, `/2`, … that is free. The loop ends within one step more than there
    /// are requests open.
    pub(super) fn input_id(&self, n: CallId, key: &str) -> RequestId {
        let base = format!("input/{}/{key}", n.0);
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
