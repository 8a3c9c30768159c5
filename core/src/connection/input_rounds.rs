//! 2026-07-28 requests that go on after an answer: multi round-trip input (`input_required`),
//! a version refusal (`-32022`) naming another version, and a re-send after a transport lost
//! the response.
//!
//! Such a request keeps its call id; each send gets a fresh wire id from the pending table.
//! Between input rounds nothing of it is in flight (it is parked); its deadline covers the
//! whole exchange.

use std::time::Instant;

use serde_json::value::RawValue;

use super::handshake::offered_versions;
use super::pending::{CallId, Pending, WireId};
use super::retry::Gathering;
use super::{ClientConnection, request_transmit};
use crate::error::UsageError;
use crate::event::RequestError;
use crate::json_scan::JsonText;
use crate::jsonrpc::{ErrorObject, error_codes};
use crate::schema::task_peek::{self, ResultKind};
use crate::{ProtocolVersion, schema};

/// How often a 2026-07-28 request is sent again after its response was lost (a version refusal
/// only sends it again once).
const MAX_REISSUES: u8 = 2;

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
        result: &Result<JsonText<'_>, ErrorObject>,
    ) -> Option<Pending> {
        if self.tasks.asked_for_task(id) {
            return self.on_experimental_answer(now, id, pending, result);
        }
        let Some(retry) = pending.retry.as_ref() else {
            return self.refuse_modern_task(now, id, pending, result);
        };
        // What the answer is, from its parsed `resultType` (an escaped name reads the same).
        let kind = match result {
            Ok(raw) if retry.method == "tools/call" || retry.takes_input() => task_peek::result_kind(*raw),
            _ => ResultKind::Other,
        };
        match result {
            Ok(raw) if retry.method == "tools/call" && kind == ResultKind::Task => {
                let terms = retry.task;
                self.on_task_answer(now, id, pending, *raw, terms)
            }
            Ok(raw) if retry.takes_input() && kind == ResultKind::InputRequired => {
                self.on_input_required(id, pending, *raw)
            }
            Err(error)
                if error.code == error_codes::UNSUPPORTED_PROTOCOL_VERSION && pending.reissues == 0 =>
            {
                self.after_version_refusal(id, pending, error)
            }
            Ok(raw) if retry.method == "server/discover" => {
                self.on_rediscover(now, *raw);
                Some(pending)
            }
            _ => Some(pending),
        }
    }

    /// A 2026-07-28 `input_required` result for request `n`: hands the input requests to the
    /// application (as [`Event::Request`](crate::Event::Request)s) and retries once they are all
    /// answered. Returns the pending request back when the result is not `input_required` after
    /// all.
    fn on_input_required(&mut self, n: CallId, mut pending: Pending, raw: JsonText<'_>) -> Option<Pending> {
        let parsed = match serde_json::from_str::<schema::InputRequired<'_>>(raw.get()) {
            Ok(parsed) if parsed.result_type.as_deref() == Some("input_required") => parsed,
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
        retry.input = Gathering::default();
        let requests = parsed.input_requests.unwrap_or_default();
        // Filed first (parked: this round is over on the wire, and until the retry goes out
        // nothing is in flight), so that the keys handed out find their request.
        pending.park();
        self.pending.insert(n, pending);
        let handed =
            self.hand_out_inputs(n, requests.into_iter().map(|(key, raw)| (key, raw.get())), |this, key| {
                if let Some(retry) = this.pending.get_mut(n).and_then(|p| p.retry.as_mut()) {
                    retry.input.ask(key.to_owned());
                }
            });
        match handed {
            Ok(_)
                if self
                    .pending
                    .get(n)
                    .and_then(|p| p.retry.as_ref())
                    .is_some_and(|r| r.input.is_complete()) =>
            {
                self.send_round(n);
            }
            Ok(_) => {}
            Err(refusal) => {
                if let Some(pending) = self.pending.remove(n) {
                    self.finish(n, pending, Err(refusal.into_error()));
                }
            }
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
        if retry.input.answer(key, value) {
            self.send_round(owner);
        }
        Ok(())
    }

    /// Sends request `n` again under a new wire id, with the inputs gathered and the state to
    /// echo (when there are any).
    fn send_round(&mut self, n: CallId) {
        let Some(retry) = self.pending.get_mut(n).and_then(|p| p.retry.as_mut()) else { return };
        let mut params: schema::JsonObject = serde_json::from_slice(&retry.params).unwrap_or_default();
        let answers = retry.input.take_answers();
        if !answers.is_empty() {
            params.insert("inputResponses".into(), serde_json::Value::Object(answers));
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
}
