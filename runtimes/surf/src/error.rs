//! Turning surf's and isahc's errors into `io::Error`s with clear messages.
//!
//! Messages name what failed, never a header value: isahc's errors carry none, and the ones made
//! here name headers by their name only.

use std::io;

use mcp_sansio::TransportError;

/// The error for a request that the transport refuses before sending it.
pub(crate) fn invalid_request(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, message)
}

/// libcurl's limit on a whole response head (`MAX_HTTP_RESP_HEADER_SIZE` in curl 8.22, the
/// version `curl-sys` builds); one header may have 100 KiB (`CURL_MAX_HTTP_HEADER`), and there
/// may be 5000 at most.
pub(crate) const HEAD_LIMIT: usize = 300 * 1024;

/// The error for an exchange whose response head never arrived. A head over libcurl's limits
/// (`CURLE_TOO_LARGE`, "A value or data field grew larger than allowed", the only part of a
/// transfer before the body that can grow that much) becomes
/// [`TransportError::HeadTooLarge`].
pub(crate) fn from_surf(error: surf::Error) -> io::Error {
    match error.downcast_ref::<isahc::Error>() {
        Some(isahc::Error::Curl(message)) if message.contains("grew larger than allowed") => io::Error::new(
            io::ErrorKind::InvalidData,
            TransportError::HeadTooLarge { limit: Some(HEAD_LIMIT) },
        ),
        Some(error) => from_isahc("HTTP request failed", error),
        None => io::Error::other(format!("HTTP request failed: {error}")),
    }
}

/// Whether libcurl failed because it could not rewind the request body to re-send it
/// (`CURLE_SEND_FAIL_REWIND`): it found its kept-alive connection dead and wanted to retry.
pub(crate) fn is_rewind_failure(error: &surf::Error) -> bool {
    matches!(error.downcast_ref::<isahc::Error>(), Some(isahc::Error::Curl(message)) if message.contains("rewind"))
}

/// The error for an exchange whose response head could not be converted: the backend
/// (http-client 6's isahc glue) panics on some responses, e.g. a header value that is not
/// visible ASCII.
pub(crate) fn backend_panicked() -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        "HTTP request failed: the HTTP client panicked on the response \
         (a response header value that is not visible ASCII?)",
    )
}

/// The error for a failed read of a response body.
pub(crate) fn from_body_read(error: io::Error) -> io::Error {
    if let Some(isahc_error) = error.get_ref().and_then(|inner| inner.downcast_ref::<isahc::Error>()) {
        return from_isahc("reading the HTTP response body failed", isahc_error);
    }
    io::Error::new(error.kind(), format!("reading the HTTP response body failed: {error}"))
}

fn from_isahc(context: &str, error: &isahc::Error) -> io::Error {
    use io::ErrorKind as K;
    use isahc::Error as E;
    let (kind, what): (K, std::borrow::Cow<'_, str>) = match error {
        E::ConnectFailed => (K::ConnectionRefused, "could not connect to the server".into()),
        E::CouldntResolveHost => (K::NotFound, "could not resolve the host name".into()),
        E::CouldntResolveProxy => (K::NotFound, "could not resolve the proxy's host name".into()),
        E::Timeout => (K::TimedOut, "timed out".into()),
        E::NoResponse => (K::UnexpectedEof, "the server closed the connection without a response".into()),
        E::Aborted => (K::ConnectionAborted, "the transfer was aborted".into()),
        E::InvalidHttpFormat(_) => (K::InvalidInput, "the request could not be encoded".into()),
        E::InvalidUtf8 => (K::InvalidData, "invalid UTF-8".into()),
        E::TooManyRedirects => (K::Other, "too many redirects".into()),
        E::BadServerCertificate(detail) => (K::InvalidData, with_detail("bad server certificate", detail)),
        E::BadClientCertificate(detail) => (K::InvalidInput, with_detail("bad client certificate", detail)),
        E::SSLConnectFailed(detail) => (K::ConnectionAborted, with_detail("TLS handshake failed", detail)),
        E::SSLEngineError(detail) => (K::Other, with_detail("TLS engine error", detail)),
        E::RequestBodyError(detail) => (K::Other, with_detail("sending the request body failed", detail)),
        E::ResponseBodyError(detail) => {
            (K::ConnectionAborted, with_detail("receiving the response body failed", detail))
        }
        E::InvalidContentEncoding(detail) => {
            (K::InvalidData, with_detail("invalid response content encoding", detail))
        }
        E::InvalidCredentials => (K::PermissionDenied, "credentials were rejected".into()),
        E::RangeRequestUnsupported => (K::Unsupported, "range requests unsupported".into()),
        E::Io(inner) => (inner.kind(), inner.to_string().into()),
        E::Curl(message) => (K::Other, format!("libcurl: {message}").into()),
    };
    io::Error::new(kind, format!("{context}: {what}"))
}

fn with_detail<'a>(what: &'a str, detail: &Option<String>) -> std::borrow::Cow<'a, str> {
    match detail {
        Some(detail) => format!("{what}: {detail}").into(),
        None => what.into(),
    }
}
