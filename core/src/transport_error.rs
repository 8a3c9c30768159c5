//! [`TransportError`]: why a transport lost a request, typed, so that an application can tell a
//! session that expired from a wrong content type, a stream that ended, a head too large or a
//! redirect it refused without reading the message.

use std::time::Duration;

/// Why a transport failed a request (in [`RequestError::Transport`](crate::RequestError)).
///
/// The HTTP session reports most of these; a driver reports what its HTTP client saw
/// ([`HttpSession::handle_response_error`](crate::http::HttpSession::handle_response_error)
/// takes one, or a plain message that becomes [`Io`](Self::Io)). A custom transport uses
/// [`Io`](Self::Io) for its own failures.
///
/// ```
/// use mcp_sansio::{RequestError, TransportError};
///
/// let error = RequestError::Transport(TransportError::UnexpectedContentType {
///     status: 200,
///     content_type: Some("text/html".into()),
/// });
/// assert_eq!(error.http_status(), Some(200));
/// assert!(error.to_string().contains("\"text/html\""));
/// assert!(!error.is_retriable(), "the same request would get the same page");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TransportError {
    /// The connection failed or broke, as the driver's HTTP client (or a custom transport)
    /// reported it: refused, reset, a TLS failure.
    #[error("{0}")]
    Io(String),
    /// No response head within the time the exchange had (`connect_timeout` where no request
    /// deadline applies).
    #[error("no response from the server within {0:?}")]
    NoResponse(Duration),
    /// The response head was larger than the HTTP client accepts (hyper: 408 KiB or 100 header
    /// fields; libcurl: 300 KiB in all, 100 KiB for one header).
    #[error("the server's response head is too large{}", limit_suffix(*.limit))]
    HeadTooLarge {
        /// The HTTP client's limit on the whole head, in bytes, when known.
        limit: Option<usize>,
    },
    /// A response body that is not a message stream grew past the limit
    /// ([`ClientConfig::max_message_size`](crate::ClientConfig)).
    #[error("the response body exceeds the maximum message size ({limit} bytes)")]
    BodyTooLarge {
        /// The limit, in bytes.
        limit: usize,
    },
    /// A success status whose content type cannot carry the response (neither
    /// `application/json` nor `text/event-stream`).
    #[error("the server answered HTTP {status} with {}, which cannot carry the response", content_type_words(.content_type))]
    UnexpectedContentType {
        /// The status code.
        status: u16,
        /// The content type (without parameters, lowercased), or `None` when there was none.
        content_type: Option<String>,
    },
    /// A whole JSON body that is not the response to the request: not JSON, not JSON-RPC, or
    /// another id.
    #[error("the server answered HTTP {status} with {}", json_body_words(.excerpt))]
    NotTheResponse {
        /// The status code.
        status: u16,
        /// The start of the body (at most 512 bytes; empty for an empty body).
        excerpt: String,
    },
    /// The server ended the response stream before the response, and gave no event id to
    /// resume it.
    #[error("the response stream ended without the response, and the server gave no event id to resume it")]
    StreamEnded,
    /// The response stream broke before the response, and the server gave no event id to
    /// resume it.
    #[error(
        "the response stream broke ({0}) without the response, and the server gave no event id to resume it"
    )]
    StreamBroke(Box<TransportError>),
    /// Resuming a response stream (`GET` with `Last-Event-ID`) failed for good.
    #[error("resuming the response stream failed: {0}")]
    ResumeFailed(Box<TransportError>),
    /// A response stream kept ending without a message; the client stopped re-opening it.
    #[error("the event stream ended {attempts} times in a row without a message (last: {last})")]
    TooManyReconnects {
        /// How many times it ended.
        attempts: u32,
        /// How it ended the last time (a status, a broken connection, …).
        last: String,
    },
    /// The server forgot the session (404, or 400 naming the session) again right after the
    /// client re-initialized and re-sent the request. The next request starts a new session.
    #[error("the server forgot the session again right after a re-initialization (HTTP {status})")]
    SessionExpired {
        /// The status that said so.
        status: u16,
    },
    /// The server redirected the request and the client did not follow: only `307` and `308`
    /// are followed (they keep the method and body), within
    /// [`HttpConfig::max_redirects`](crate::http::HttpConfig::max_redirects), and never from
    /// `https` to `http`.
    #[error("the server redirected with HTTP {status} to {location:?}, which is not followed: {reason}")]
    RedirectRefused {
        /// The status code (`301`, `302`, `303`, `307`, `308`, …).
        status: u16,
        /// The `Location` header as the server sent it (at most 512 bytes; empty when absent).
        location: String,
        /// Why the client did not follow.
        reason: RedirectRefusal,
    },
    /// The server redirected more times in a row than
    /// [`HttpConfig::max_redirects`](crate::http::HttpConfig::max_redirects) allows.
    #[error("the server redirected more than {hops} times in a row (the last time to {location:?})")]
    TooManyRedirects {
        /// The redirects followed.
        hops: u32,
        /// The `Location` of the redirect that was not followed (at most 512 bytes).
        location: String,
    },
}

/// Why a redirect was not followed ([`TransportError::RedirectRefused`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RedirectRefusal {
    /// Only `307` and `308` are followed: `301`, `302` and `303` turn a `POST` into a `GET`
    /// (in browsers and most HTTP clients), which cannot carry a JSON-RPC message.
    #[error("only 307 and 308 redirects are followed")]
    Status,
    /// Following redirects is off ([`HttpConfig::max_redirects`](crate::http::HttpConfig::max_redirects) is 0).
    #[error("following redirects is turned off")]
    Disabled,
    /// The response has no `Location`, or one that is not an `http`/`https` URL.
    #[error("the Location is missing or not an http(s) URL")]
    InvalidLocation,
    /// The redirect goes from `https` to `http`: the request would travel in clear.
    #[error("it would downgrade https to http")]
    Downgrade,
}

impl TransportError {
    /// Whether sending the request again may succeed: a connection that failed or broke, a
    /// stream that ended early, no answer in time, a session the server forgot (the next
    /// request starts a new one). What the server answered (a page instead of JSON, a body
    /// that is not the response, a head or body too large, a redirect not followed) would
    /// come again: `false`.
    pub fn is_retriable(&self) -> bool {
        match self {
            TransportError::Io(_)
            | TransportError::NoResponse(_)
            | TransportError::StreamEnded
            | TransportError::StreamBroke(_)
            | TransportError::ResumeFailed(_)
            | TransportError::TooManyReconnects { .. }
            | TransportError::SessionExpired { .. } => true,
            TransportError::HeadTooLarge { .. }
            | TransportError::BodyTooLarge { .. }
            | TransportError::UnexpectedContentType { .. }
            | TransportError::NotTheResponse { .. }
            | TransportError::RedirectRefused { .. }
            | TransportError::TooManyRedirects { .. } => false,
        }
    }

    /// The HTTP status this failure came with, if it came with one: an unexpected content type,
    /// a body that is not the response, an expired session, a refused redirect.
    pub fn http_status(&self) -> Option<u16> {
        match self {
            TransportError::UnexpectedContentType { status, .. }
            | TransportError::NotTheResponse { status, .. }
            | TransportError::SessionExpired { status }
            | TransportError::RedirectRefused { status, .. } => Some(*status),
            TransportError::StreamBroke(inner) | TransportError::ResumeFailed(inner) => inner.http_status(),
            TransportError::Io(_)
            | TransportError::NoResponse(_)
            | TransportError::HeadTooLarge { .. }
            | TransportError::BodyTooLarge { .. }
            | TransportError::StreamEnded
            | TransportError::TooManyReconnects { .. }
            | TransportError::TooManyRedirects { .. } => None,
        }
    }
}

impl From<&str> for TransportError {
    /// A driver's or a custom transport's own failure: [`TransportError::Io`].
    fn from(message: &str) -> Self {
        TransportError::Io(message.to_owned())
    }
}

impl From<String> for TransportError {
    /// A driver's or a custom transport's own failure: [`TransportError::Io`].
    fn from(message: String) -> Self {
        TransportError::Io(message)
    }
}

fn limit_suffix(limit: Option<usize>) -> String {
    limit.map(|limit| format!(" (the HTTP client's limit is {limit} bytes)")).unwrap_or_default()
}

fn content_type_words(content_type: &Option<String>) -> String {
    match content_type.as_deref() {
        None | Some("") => "no content type".to_owned(),
        Some(other) => format!("content type {other:?}"),
    }
}

fn json_body_words(excerpt: &str) -> String {
    if excerpt.is_empty() {
        "an empty JSON body".to_owned()
    } else {
        format!("a JSON body that is not the response: {excerpt:?}")
    }
}

/// Cuts a server-given string (a `Location`, say) to at most 512 bytes, on a character
/// boundary, for an error message.
#[cfg(feature = "http")]
pub(crate) fn bounded(text: &str) -> String {
    const MAX: usize = 512;
    if text.len() <= MAX {
        return text.to_owned();
    }
    let mut end = MAX;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}
