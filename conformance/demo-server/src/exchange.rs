//! One response stream (the messages of one HTTP exchange), independent of HTTP itself.
//!
//! The server side (handlers, any thread) pushes messages: notifications and server→client
//! requests with [`Exchange::send`], the final response with [`Exchange::finish`], or ends the
//! stream without a response with [`Exchange::end`] (a cancelled request, a closed
//! subscription, a deleted session). The transport side (the connection's thread) takes them
//! with [`Exchange::next`] and writes them out; when the peer goes away it calls
//! [`Exchange::close`], after which every message pushed is dropped.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use serde_json::Value;

/// A queue of outgoing messages with an end, shared by producers and one consumer.
#[derive(Debug, Default)]
pub(crate) struct Exchange {
    state: Mutex<State>,
    changed: Condvar,
}

#[derive(Debug, Default)]
struct State {
    /// Messages not taken yet, oldest first.
    queue: VecDeque<Value>,
    /// No message follows the queued ones.
    ended: bool,
    /// The consumer is gone: nothing is queued any more.
    closed: bool,
}

/// What [`Exchange::next`] found.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Next {
    /// A message, and whether it is the last one (the stream ends after it).
    Message(Value, bool),
    /// The stream ended (after every message already taken).
    End,
    /// Nothing arrived in time.
    Idle,
}

impl Exchange {
    /// A new, open stream.
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Queues a message; `false` (and the message is dropped) when the stream has ended or its
    /// consumer is gone.
    pub(crate) fn send(&self, message: &Value) -> bool {
        let mut state = self.lock();
        if state.ended || state.closed {
            return false;
        }
        state.queue.push_back(message.clone());
        self.changed.notify_all();
        true
    }

    /// Queues the last message (the response) and ends the stream.
    pub(crate) fn finish(&self, message: &Value) {
        let mut state = self.lock();
        if !state.ended && !state.closed {
            state.queue.push_back(message.clone());
        }
        state.ended = true;
        self.changed.notify_all();
    }

    /// Ends the stream without another message.
    pub(crate) fn end(&self) {
        self.lock().ended = true;
        self.changed.notify_all();
    }

    /// The consumer is gone: drops what is queued and everything sent later.
    pub(crate) fn close(&self) {
        let mut state = self.lock();
        state.closed = true;
        state.queue.clear();
        self.changed.notify_all();
    }

    /// Whether messages are still accepted.
    pub(crate) fn is_open(&self) -> bool {
        let state = self.lock();
        !state.ended && !state.closed
    }

    /// Takes the next message, waiting at most `timeout` for one.
    pub(crate) fn next(&self, timeout: Duration) -> Next {
        let mut state = self.lock();
        if state.queue.is_empty() && !state.ended && !timeout.is_zero() {
            state = self
                .changed
                .wait_timeout_while(state, timeout, |state| state.queue.is_empty() && !state.ended)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        match state.queue.pop_front() {
            Some(message) => {
                let last = state.ended && state.queue.is_empty();
                Next::Message(message, last)
            }
            None if state.ended => Next::End,
            None => Next::Idle,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::thread;

    use serde_json::json;

    use super::*;

    #[test]
    fn messages_then_the_last_one() {
        let exchange = Exchange::new();
        assert_eq!(exchange.next(Duration::ZERO), Next::Idle);
        assert!(exchange.send(&json!(1)));
        exchange.finish(&json!(2));
        assert!(!exchange.send(&json!(3)) && !exchange.is_open());
        assert_eq!(exchange.next(Duration::ZERO), Next::Message(json!(1), false));
        assert_eq!(exchange.next(Duration::ZERO), Next::Message(json!(2), true));
        assert_eq!(exchange.next(Duration::from_secs(5)), Next::End);
    }

    #[test]
    fn wakes_the_consumer_and_drops_after_close() {
        let exchange = Exchange::new();
        let producer = Arc::clone(&exchange);
        let handle = thread::spawn(move || {
            thread::sleep(Duration::from_millis(20));
            producer.end();
        });
        assert_eq!(exchange.next(Duration::from_secs(10)), Next::End);
        handle.join().expect("producer");
        let closed = Exchange::new();
        closed.send(&json!(1));
        closed.close();
        assert!(!closed.send(&json!(2)));
        assert_eq!(closed.next(Duration::ZERO), Next::Idle);
    }
}
