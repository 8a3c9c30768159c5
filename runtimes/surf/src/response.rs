//! Turning surf's response into the driver's [`HttpResponse`]: the head as is, the body as a
//! stream of chunks read as they arrive.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures_lite::{AsyncRead, Stream};
use mcp_smol::HttpResponse;

use crate::error;

/// The most bytes one body chunk holds.
pub(crate) const CHUNK_SIZE: usize = 16 * 1024;

/// Converts surf's response: status, headers (names lowercase, every value), and the body.
pub(crate) fn from_surf(mut response: surf::Response) -> HttpResponse {
    let status = u16::from(response.status());
    let mut headers = Vec::new();
    for (name, values) in response.iter() {
        let name = name.as_str().to_ascii_lowercase();
        for value in values.iter() {
            headers.push((name.clone(), value.as_str().as_bytes().to_vec()));
        }
    }
    let body =
        BodyChunks { body: Some(response.take_body()), buffer: vec![0; CHUNK_SIZE].into_boxed_slice() };
    HttpResponse { status, headers, body: Box::pin(body) }
}

/// A response body read in chunks of at most [`CHUNK_SIZE`] bytes, each yielded as soon as
/// libcurl delivered it.
///
/// Dropping it drops surf's body, which tells isahc to abort the transfer: libcurl then closes
/// the connection rather than returning it to its cache (see the crate docs on when that
/// happens).
struct BodyChunks {
    /// `None` once the body ended or failed: surf's body (and with it the transfer) is released
    /// at once.
    body: Option<surf::Body>,
    buffer: Box<[u8]>,
}

impl Stream for BodyChunks {
    type Item = io::Result<Bytes>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        let Some(body) = this.body.as_mut() else { return Poll::Ready(None) };
        loop {
            return match Pin::new(&mut *body).poll_read(cx, &mut this.buffer) {
                Poll::Pending => Poll::Pending,
                Poll::Ready(Ok(0)) => {
                    this.body = None;
                    Poll::Ready(None)
                }
                Poll::Ready(Ok(read)) => Poll::Ready(Some(Ok(Bytes::copy_from_slice(&this.buffer[..read])))),
                Poll::Ready(Err(error)) if error.kind() == io::ErrorKind::Interrupted => continue,
                Poll::Ready(Err(error)) => {
                    this.body = None;
                    Poll::Ready(Some(Err(error::from_body_read(error))))
                }
            };
        }
    }
}
