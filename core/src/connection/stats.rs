//! [`Stats`]: what a connection counted.

/// Counters of what the engine saw and discarded; for diagnostics and tests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Stats {
    /// Messages received (a batch counts each element).
    pub messages_received: u64,
    /// Bytes received: every byte fed, framing included.
    pub bytes_received: u64,
    /// Messages sent.
    pub messages_sent: u64,
    /// Invalid messages discarded (including oversized ones and invalid responses, which also
    /// fail the request they answer).
    pub invalid_messages: u64,
    /// Messages discarded because they were not JSON at all (a subset of `invalid_messages`).
    pub parse_errors: u64,
    /// Messages discarded for exceeding `max_message_size`.
    pub oversized_messages: u64,
    /// Responses to ids the engine issued but no longer waits for (timed out, cancelled, answered twice).
    pub late_responses: u64,
    /// Responses to ids the engine never issued.
    pub unknown_responses: u64,
    /// Requests that timed out, the engine's own (`initialize`, keep-alive `ping`) included.
    pub timeouts: u64,
    /// The application's requests: every id handed out by [`ClientConnection::send`](crate::ClientConnection::send) and
    /// [`ClientConnection::send_request`](crate::ClientConnection::send_request). Each ends in exactly one of the four outcomes below,
    /// or is still pending.
    pub requests_tracked: u64,
    /// The application's requests answered with a result.
    pub requests_completed: u64,
    /// The application's requests that failed: an error answer, a lost transport, a closed
    /// connection.
    pub requests_failed: u64,
    /// The application's requests that hit their idle timeout or their cap on total time.
    pub requests_timed_out: u64,
    /// The application's requests cancelled with [`ClientConnection::cancel`](crate::ClientConnection::cancel).
    pub requests_cancelled: u64,
    /// Server requests refused at once because
    /// [`max_open_server_requests`](crate::ClientConfig::max_open_server_requests) were open.
    pub server_requests_refused: u64,
    /// Server requests for roots, sampling or elicitation refused with `-32601` because the
    /// client did not declare the capability (each also an
    /// [`Event::UndeclaredServerRequest`](crate::Event::UndeclaredServerRequest)): a handler
    /// method implemented but not declared shows here, without a log subscriber.
    pub server_requests_undeclared: u64,
}
