//! The response body as a stream of chunks, returning its connection to the pool when (and only
//! when) it was read to the end.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures_lite::Stream;
use hyper::body::{Body, Incoming};

use crate::error;
use crate::pool::{Pool, Sender};
use crate::quickack::QuickAck;
use crate::target::Key;

/// A connection on loan to one exchange, to give back once its response is complete.
pub(crate) struct Loan {
    pub(crate) pool: Arc<Pool>,
    pub(crate) key: Key,
    pub(crate) sender: Sender,
    pub(crate) ack: QuickAck,
}

impl Loan {
    /// Returns the connection to the pool.
    pub(crate) fn give_back(self) {
        self.pool.checkin(self.key, self.sender, self.ack);
    }
}

/// Data frames as they arrive (trailers are skipped). Dropped before the end, it drops the
/// connection's sender with it, which closes the connection.
pub(crate) struct ResponseBody {
    body: Incoming,
    /// `None` once given back, or after an error.
    loan: Option<Loan>,
    done: bool,
}

impl ResponseBody {
    pub(crate) fn new(body: Incoming, loan: Loan) -> Self {
        let mut this = Self { body, loan: Some(loan), done: false };
        this.give_back_if_complete();
        this
    }

    /// Gives the connection back as soon as hyper knows the body is complete (an empty body, or
    /// the last byte of a `Content-Length` one), without waiting for the caller's final poll.
    /// A reused connection is still awaited with `ready()` before its next request.
    fn give_back_if_complete(&mut self) {
        if self.body.is_end_stream() {
            if let Some(loan) = self.loan.take() {
                loan.give_back();
            }
        }
    }
}

impl Stream for ResponseBody {
    type Item = io::Result<Bytes>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        loop {
            if this.done {
                return Poll::Ready(None);
            }
            let frame = match Pin::new(&mut this.body).poll_frame(cx) {
                Poll::Ready(frame) => frame,
                Poll::Pending => {
                    // Waiting for the server, which may be waiting for our ACK of what it sent
                    // so far (Nagle's algorithm): send it now (see `quickack.rs`).
                    if let Some(loan) = &this.loan {
                        loan.ack.now();
                    }
                    return Poll::Pending;
                }
            };
            match frame {
                Some(Ok(frame)) => {
                    let Ok(data) = frame.into_data() else { continue }; // trailers
                    this.give_back_if_complete();
                    if !data.is_empty() {
                        return Poll::Ready(Some(Ok(data)));
                    }
                }
                Some(Err(e)) => {
                    this.done = true;
                    this.loan = None; // never reuse a connection that failed
                    return Poll::Ready(Some(Err(error::from_hyper("reading the response body", e))));
                }
                None => {
                    this.done = true;
                    if let Some(loan) = this.loan.take() {
                        loan.give_back();
                    }
                    return Poll::Ready(None);
                }
            }
        }
    }
}
