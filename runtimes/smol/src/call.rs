//! One call in flight: per-call options and the future that resolves with the response.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use mcp_sansio::RawResult;
use mcp_sansio::schema::{JsonObject, ProgressNotificationParams};
use mcp_sansio::{RequestError, RequestId, RequestOptions};

use crate::Error;
use crate::driver::{Connection, Pumper, ROUNDS_PER_PUMP};
use crate::shared::ProgressFn;

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
    pub(crate) on_sent: Option<SentFn>,
}

/// A call's hook for the id it was sent under ([`CallOptions::on_sent`]).
pub(crate) type SentFn = Arc<dyn Fn(&RequestId) + Send + Sync + 'static>;

impl fmt::Debug for CallOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallOptions")
            .field("request", &self.request)
            .field("on_progress", &self.on_progress.is_some())
            .field("on_sent", &self.on_sent.is_some())
            .finish()
    }
}

impl CallOptions {
    /// Idle timeout: how long the call may go without a response or progress.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.request = self.request.timeout(timeout);
        self
    }

    /// Cap on the call's total time, however much progress the server reports, and whatever
    /// task the call becomes (the task is cancelled when the cap passes), unless
    /// [`task_policy`](Self::task_policy) says otherwise.
    pub fn max_total(mut self, max_total: Duration) -> Self {
        self.request = self.request.max_total(max_total);
        self
    }

    /// Follows a task this call becomes with `policy` (poll intervals, its own deadlines, the
    /// input it may ask for) instead of the client's
    /// [`ClientConfig::tasks`](mcp_sansio::ClientConfig::tasks); once the call is a task, the
    /// policy's deadlines replace [`timeout`](Self::timeout) and [`max_total`](Self::max_total).
    ///
    /// ```
    /// use std::time::Duration;
    /// use mcp_smol::CallOptions;
    /// use mcp_smol::mcp_sansio::TaskPolicy;
    ///
    /// let mut policy = TaskPolicy::default();
    /// policy.max_total = Duration::from_secs(2 * 60 * 60); // a build may take two hours
    /// let options = CallOptions::default().max_total(Duration::from_secs(30)).task_policy(policy);
    /// ```
    pub fn task_policy(mut self, policy: mcp_sansio::TaskPolicy) -> Self {
        self.request = self.request.task_policy(policy);
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

    /// Sends this W3C trace context with the call (`traceparent`, `tracestate` as root keys of
    /// `_meta`, SEP-414), so that the server's spans join the caller's trace.
    pub fn trace(mut self, context: &mcp_sansio::schema::TraceContext) -> Self {
        let meta = self.request.meta.get_or_insert_with(JsonObject::new);
        meta.extend(context.to_meta());
        self
    }

    /// Calls `f` with the JSON-RPC id the request goes out under, once, when the call is made
    /// (on the caller's thread, before the call's future is returned): to match the call with
    /// a server's log, or with the ids in a `notifications/cancelled`. (A 2026-07-28 request
    /// sent again, after an input round or a lost response, goes out under a new wire id; this
    /// is the call's own, which its `_meta.progressToken` and the client's logs carry.) It runs
    /// under no lock of the client; a callback that panics is logged, and the call goes on.
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use mcp_smol::CallOptions;
    ///
    /// let sent = Arc::new(Mutex::new(None));
    /// let seen = sent.clone();
    /// let options = CallOptions::default().on_sent(move |id| *seen.lock().unwrap() = Some(id.clone()));
    /// ```
    pub fn on_sent(mut self, f: impl Fn(&RequestId) + Send + Sync + 'static) -> Self {
        self.on_sent = Some(Arc::new(f));
        self
    }

    /// Asks the server for progress and calls `f` with each notification, on the task that
    /// awaits the call, before the call returns. A callback that panics is logged and
    /// dropped; the call goes on. If the task does not poll the call for a while, the 64
    /// newest notifications are kept for it.
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
        if self.on_sent.is_none() {
            self.on_sent = defaults.on_sent.clone();
        }
        self
    }
}

/// Resolves with the raw result of one request. Dropping it before it resolves cancels the
/// request: the engine sends `notifications/cancelled` and forgets the id.
///
/// It only looks at its slot: whoever pumps the response in (where the news lands, or the
/// driver's task: see `source_waker.rs`) wakes it, so nobody but the call itself waits on its
/// being polled. Its progress callback runs here, on its own task, before its result is
/// returned.
pub(crate) struct ResponseFuture {
    shared: Arc<Connection>,
    id: Option<RequestId>,
    /// Whether its request still waits to be written by it.
    write: Write,
    /// The call's progress callback (dropped if it panics).
    on_progress: Option<ProgressFn>,
    /// The request's span, when something listens at `debug` (nothing is measured otherwise).
    trace: Option<(tracing::Span, Instant)>,
}

impl ResponseFuture {
    pub(crate) fn new(
        shared: Arc<Connection>,
        id: RequestId,
        method: &str,
        on_progress: Option<ProgressFn>,
        write: Write,
    ) -> Self {
        // Method and id only: arguments never go into a span (they may hold anything).
        let span = tracing::debug_span!(
            "mcp_request",
            method,
            id = %id,
            outcome = tracing::field::Empty,
            duration_us = tracing::field::Empty,
        );
        let trace = (!span.is_disabled()).then(|| (span, shared.clock.now()));
        Self { shared, id: Some(id), write, on_progress, trace }
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

/// Who writes a call's request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Write {
    /// Written (or left to whoever was pumping) when the call was made.
    Done,
    /// Other calls are in flight: written by the call's second poll (one yield after its
    /// first), or by whoever pumps first, so that the calls made in one turn of the executor
    /// go out in one write. A request whose future is never polled still goes out with the
    /// next pump, at the latest when a call in flight is answered or reaches its deadline.
    /// The number is the request's among those deferred (`Pump::defer`).
    AfterOthers(u32),
    /// Its next poll writes it, unless a write or a round took it meanwhile.
    Now(u32),
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
        match self.write {
            Write::Done => {}
            Write::AfterOthers(deferred) => {
                // Calls made in the same turn of the executor go out in one write.
                self.write = Write::Now(deferred);
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            Write::Now(deferred) => {
                self.write = Write::Done;
                // The first of them to come back writes them all; the others find theirs taken.
                if !self.shared.pump.taken(deferred) {
                    self.shared.send_now();
                }
            }
        }
        let mut looked = self.look(&id, cx);
        if looked.is_none() && self.shared.pump.backlog() {
            // The pump is behind (a flood): this call helps, whoever else is busy.
            let _ = self.shared.pump.run(&self.shared, ROUNDS_PER_PUMP, Pumper::Call);
            looked = self.look(&id, cx);
        }
        let Some(result) = looked else { return Poll::Pending };
        self.id = None;
        if self.trace.is_some() {
            self.finish(outcome(&result));
        }
        Poll::Ready(result)
    }
}

/// How a call ended: its raw result, or why it has none.
type CallOutcome = Result<RawResult, Error>;

impl ResponseFuture {
    /// The call's outcome if it is known (removing its slot); else `None`, with the slot's
    /// waker set to `cx`'s (under the same lock as the look, so a response pumped in after it
    /// wakes the call). Progress that came for the call runs its callback first, outside the
    /// lock.
    fn look(&mut self, id: &RequestId, cx: &Context<'_>) -> Option<CallOutcome> {
        let (progress, ended) = {
            let mut state = self.shared.lock();
            let driver_dropped = state.driver_dropped();
            // The slot is removed only below and in `drop`, both of which end this future.
            let Some(slot) = state.calls.get_mut(id) else { unreachable!("the slot of a live call is gone") };
            let progress = slot.progress.as_mut().filter(|queue| !queue.is_empty()).map(std::mem::take);
            // A response that arrived before the driver was dropped still counts.
            let outcome = match slot.result.take() {
                Some(result) => Some(result.map_err(|error| Error::Request(*error))),
                None if driver_dropped => Some(Err(Error::DriverGone)),
                None => {
                    if !slot.waker.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                        slot.waker = Some(cx.waker().clone());
                    }
                    None
                }
            };
            if outcome.is_some() {
                state.calls.remove(id);
            }
            (progress, outcome)
        };
        if let Some(progress) = progress {
            self.run_progress(&progress);
        }
        ended
    }

    /// Runs the call's progress callback on each notification, in order. A callback that
    /// panics is logged and dropped; the call goes on.
    fn run_progress(&mut self, progress: &[ProgressNotificationParams]) {
        let Some(f) = &self.on_progress else { return };
        for params in progress {
            if !crate::contain::contained("a progress callback", || f(params)) {
                self.on_progress = None;
                return;
            }
        }
    }
}

impl Drop for ResponseFuture {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else { return };
        self.finish("dropped");
        let cancelled = {
            let mut state = self.shared.lock();
            state.calls.remove(&id);
            state.engine.conn().is_pending(&id)
                && state.commands().cancel(&id, Some("the caller dropped the request")).is_ok()
        };
        if cancelled {
            // Written now, from this thread, unless someone is pumping (who writes it).
            self.shared.wake();
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
