//! One call in flight: per-call options and the future that resolves with the response.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use mcp_sansio::RawResult;
use mcp_sansio::schema::{JsonObject, ProgressNotificationParams};
use mcp_sansio::{RequestError, RequestId, RequestOptions};

use crate::Error;
use crate::shared::{ProgressFn, Shared, State};

/// Options for one call: timeouts, progress, `_meta`. Defaults come from the connection's
/// [`ClientConfig`](mcp_sansio::ClientConfig).
///
/// ```
/// use std::time::Duration;
/// use mcp_smol::CallOptions;
///
/// let options = CallOptions::default()
///     .timeout(Duration::from_secs(10))
///     .on_progress(|p| eprintln!("{} of {:?}", p.progress, p.total));
/// ```
#[derive(Clone, Default)]
pub struct CallOptions {
    pub(crate) request: RequestOptions,
    pub(crate) on_progress: Option<ProgressFn>,
}

impl fmt::Debug for CallOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallOptions")
            .field("request", &self.request)
            .field("on_progress", &self.on_progress.is_some())
            .finish()
    }
}

impl CallOptions {
    /// Idle timeout: how long the call may go without a response or progress.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.request = self.request.timeout(timeout);
        self
    }

    /// Cap on the call's total time, however much progress the server reports.
    pub fn max_total(mut self, max_total: Duration) -> Self {
        self.request = self.request.max_total(max_total);
        self
    }

    /// Whether progress notifications reset the idle timeout (default: yes).
    pub fn reset_on_progress(mut self, reset: bool) -> Self {
        self.request = self.request.reset_on_progress(reset);
        self
    }

    /// Extra `_meta` members sent with the request.
    pub fn meta(mut self, meta: JsonObject) -> Self {
        self.request = self.request.meta(meta);
        self
    }

    /// Asks the server for progress and calls `f` with each notification (on the task
    /// driving the connection: keep it short).
    pub fn on_progress(mut self, f: impl Fn(&ProgressNotificationParams) + Send + Sync + 'static) -> Self {
        self.request = self.request.with_progress();
        self.on_progress = Some(Arc::new(f));
        self
    }

    /// These options, with what they leave unset taken from `defaults`: the timeouts, the
    /// progress callback, and each `_meta` member these do not name.
    pub(crate) fn over(mut self, defaults: &CallOptions) -> Self {
        let (mine, theirs) = (&mut self.request, &defaults.request);
        mine.timeout = mine.timeout.or(theirs.timeout);
        mine.max_total = mine.max_total.or(theirs.max_total);
        mine.reset_on_progress = mine.reset_on_progress.or(theirs.reset_on_progress);
        if let Some(default_meta) = &theirs.meta {
            let mut meta = default_meta.clone();
            meta.extend(mine.meta.take().unwrap_or_default());
            mine.meta = Some(meta);
        }
        if self.on_progress.is_none() {
            self.on_progress = defaults.on_progress.clone();
            mine.progress |= theirs.progress;
        }
        self
    }
}

/// Resolves with the raw result of one request. Dropping it before it resolves cancels the
/// request: the engine sends `notifications/cancelled` and forgets the id.
///
/// While it waits, it drives the connection itself when nobody else is (see
/// [`Drive::drive_for`](crate::driver::Drive::drive_for)): its response then wakes it directly.
pub(crate) struct ResponseFuture {
    shared: Arc<Shared>,
    id: Option<RequestId>,
    /// Tells this call apart while it drives the connection.
    token: u64,
    /// The request's span, when something listens at `debug` (nothing is measured otherwise).
    trace: Option<(tracing::Span, Instant)>,
}

impl ResponseFuture {
    pub(crate) fn new(shared: Arc<Shared>, id: RequestId, method: &str) -> Self {
        // Method and id only: arguments never go into a span (they may hold anything).
        let span = tracing::debug_span!(
            "mcp_request",
            method,
            id = %id,
            outcome = tracing::field::Empty,
            duration_us = tracing::field::Empty,
        );
        let trace = (!span.is_disabled()).then(|| (span, shared.clock.now()));
        let token = shared.call_token();
        Self { shared, id: Some(id), token, trace }
    }

    /// Records how the request ended in its span.
    fn finish(&mut self, outcome: &str) {
        if let Some((span, started)) = self.trace.take() {
            let elapsed = self.shared.clock.now().saturating_duration_since(started);
            let duration_us = u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX);
            span.record("outcome", outcome).record("duration_us", duration_us);
            tracing::debug!(parent: &span, outcome, duration_us, "request finished");
        }
    }
}

/// A short name for how a request ended, for its span.
fn outcome(result: &Result<RawResult, Error>) -> &'static str {
    match result {
        Ok(_) => "ok",
        Err(Error::Request(RequestError::Server(_))) => "server_error",
        Err(Error::Request(RequestError::Timeout(_) | RequestError::MaxTotalExceeded(_))) => "timeout",
        Err(Error::Request(RequestError::Cancelled(_))) => "cancelled",
        Err(Error::Request(RequestError::ConnectionClosed(_))) => "connection_closed",
        Err(Error::DriverGone) => "driver_gone",
        Err(_) => "failed",
    }
}

impl Future for ResponseFuture {
    type Output = Result<RawResult, Error>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // Only `Decode` and the crate's own wrappers poll it, never again after it resolved.
        let Some(id) = self.id.clone() else { panic!("a call's response was polled after it resolved") };
        // The response may be here already; if not, the call drives the connection while
        // nobody else does, and looks again. Its waker is taken out meanwhile, so that its own
        // round delivering the response does not wake it for nothing; it is put back below,
        // under the same lock as the last look, so a response delivered by another driver
        // after that look wakes it.
        let (result, successor) = match self.take_result(&id, None) {
            Some(done) => done,
            None => {
                self.shared.drive.drive_for(self.token, cx);
                match self.take_result(&id, Some(cx)) {
                    Some(done) => done,
                    None => return Poll::Pending,
                }
            }
        };
        self.id = None;
        self.shared.drive.release(self.token, successor);
        if self.trace.is_some() {
            self.finish(outcome(&result));
        }
        Poll::Ready(result)
    }
}

impl ResponseFuture {
    /// The call's outcome if it is known (removing its slot), with the waker of another call
    /// still waiting, to hand the connection's route to; else `None`, with the slot's waker
    /// set to `cx`'s, or cleared without one.
    fn take_result(&self, id: &RequestId, cx: Option<&Context<'_>>) -> Option<(CallOutcome, Option<Waker>)> {
        let mut state = self.shared.lock();
        let driver_dropped = state.driver_dropped();
        // The slot is removed only below and in `drop`, both of which end this future.
        let Some(slot) = state.calls.get_mut(id) else { unreachable!("the slot of a live call is gone") };
        // A response that arrived before the driver was dropped still counts.
        let result = match slot.result.take() {
            Some(result) => result.map_err(|error| Error::Request(*error)),
            None if driver_dropped => Err(Error::DriverGone),
            None => {
                match cx {
                    Some(cx) if !slot.waker.as_ref().is_some_and(|w| w.will_wake(cx.waker())) => {
                        slot.waker = Some(cx.waker().clone());
                    }
                    Some(_) => {}
                    None => slot.waker = None,
                }
                return None;
            }
        };
        state.calls.remove(id);
        Some((result, self.successor(&state)))
    }
}

/// How a call ended: its raw result, or why it has none.
type CallOutcome = Result<RawResult, Error>;

/// How many calls an ending call looks at for one still waiting, to hand the route to: a
/// bounded look keeps the end of a call O(1) with thousands in flight (found none: the driver's
/// task takes the route, which costs a hop, not a call).
const SUCCESSOR_LOOKUP: usize = 16;

impl ResponseFuture {
    /// If this call drives the connection, the waker of a call still waiting for its response
    /// (the one to hand the route to when this one ends), if one is found among the first
    /// [`SUCCESSOR_LOOKUP`].
    fn successor(&self, state: &State) -> Option<Waker> {
        if !self.shared.drive.route.drives(self.token) {
            return None;
        }
        state
            .calls
            .values()
            .take(SUCCESSOR_LOOKUP)
            .find_map(|slot| if slot.result.is_none() { slot.waker.clone() } else { None })
    }
}

impl Drop for ResponseFuture {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else { return };
        self.finish("dropped");
        // Synchronous bookkeeping only: the driver writes the cancellation.
        let mut state = self.shared.lock();
        state.calls.remove(&id);
        let successor = self.successor(&state);
        self.shared.drive.release(self.token, successor);
        if state.engine.conn().is_pending(&id) {
            let _ = state.commands().cancel(&id, Some("the caller dropped the request"));
            state.wake_driver();
        }
    }
}

/// The future of one typed call: the engine's refusal (known when the call was made), or the
/// response, decoded when it arrives.
///
/// A plain state machine rather than an `async` block: it is no bigger than the
/// [`ResponseFuture`] it holds, and nothing is copied around it per call (nested `async` blocks
/// around the refusal made a `call_tool` future several KiB, moved several times per call).
pub(crate) struct Decode<T> {
    state: CallState,
    method: &'static str,
    _result: std::marker::PhantomData<fn() -> T>,
}

enum CallState {
    Refused(Error),
    Sent(ResponseFuture),
    Done,
}

impl<T> Decode<T> {
    /// A call that was sent: its response, decoded as `T` for `method`.
    pub(crate) fn sent(response: ResponseFuture, method: &'static str) -> Self {
        Decode { state: CallState::Sent(response), method, _result: std::marker::PhantomData }
    }

    /// A call that was refused before anything was sent.
    pub(crate) fn refused(error: Error, method: &'static str) -> Self {
        Decode { state: CallState::Refused(error), method, _result: std::marker::PhantomData }
    }

    /// The call as made: sent, or refused.
    pub(crate) fn from_result(made: Result<Self, Error>, method: &'static str) -> Self {
        made.unwrap_or_else(|error| Self::refused(error, method))
    }
}

impl<T: serde::de::DeserializeOwned> Future for Decode<T> {
    type Output = Result<T, Error>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        let result = match &mut this.state {
            CallState::Sent(response) => match Pin::new(response).poll(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(result) => result.and_then(|raw| {
                    serde_json::from_str(raw.get())
                        .map_err(|source| Error::Decode { method: this.method, source })
                }),
            },
            CallState::Refused(_) => match std::mem::replace(&mut this.state, CallState::Done) {
                CallState::Refused(error) => Err(error),
                _ => unreachable!("matched Refused just above"),
            },
            // The contract of `Future`: a resolved future is not polled again.
            CallState::Done => panic!("a call's future was polled after it resolved"),
        };
        this.state = CallState::Done;
        Poll::Ready(result)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn meta(value: serde_json::Value) -> JsonObject {
        value.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn a_calls_options_go_over_the_handles() {
        let handle = CallOptions::default()
            .timeout(Duration::from_secs(5))
            .max_total(Duration::from_secs(50))
            .meta(meta(json!({"tenant": "a", "trace": "1"})))
            .on_progress(|_| {});
        let call = CallOptions::default().timeout(Duration::from_secs(1)).meta(meta(json!({"trace": "2"})));
        let both = call.over(&handle);
        assert_eq!(both.request.timeout, Some(Duration::from_secs(1)), "the call's own");
        assert_eq!(both.request.max_total, Some(Duration::from_secs(50)), "the handle's");
        assert_eq!(both.request.meta, Some(meta(json!({"tenant": "a", "trace": "2"}))), "merged");
        assert!(both.request.progress && both.on_progress.is_some(), "the handle's progress callback");

        let plain = CallOptions::default().over(&CallOptions::default());
        assert_eq!(plain.request.timeout, None);
        assert_eq!(plain.request.meta, None);
        assert!(!plain.request.progress && plain.on_progress.is_none());
    }
}
