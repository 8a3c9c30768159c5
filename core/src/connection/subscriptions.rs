//! 2026-07-28 `subscriptions/listen`: the state behind the notifications that the `initialize`
//! era sent unasked (list changes) or after `resources/subscribe` (resource updates).
//!
//! A modern server sends them only on a listen stream that asked for them. The connection keeps
//! one such stream open while there is anything to listen to: the list changes the server offers
//! and the resources the application subscribed to. Changing the resources replaces the stream
//! with one asking for the new set; the old one stays until the new one is acknowledged, so no
//! notification falls between them. `resources/subscribe` and `resources/unsubscribe` complete
//! when the stream that includes the change is acknowledged.

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use super::ClientConnection;
use super::meta::{decode_params, empty_object};
use super::pending::{CallId, Pending, PendingKind, Timing};
use crate::RequestId;
use crate::config::RequestOptions;
use crate::error::UsageError;
use crate::event::RequestError;
use crate::json_scan::JsonText;
use crate::schema::{self, SubscriptionFilter};

/// The first delay before listening again after the server ended a stream; doubled per stream
/// ended in a row without an acknowledgement, up to [`MAX_DELAY`].
const FIRST_DELAY: Duration = Duration::from_secs(1);
const MAX_DELAY: Duration = Duration::from_secs(30);

/// One `subscriptions/listen` request.
#[derive(Debug)]
pub(crate) struct Stream {
    /// The request's id: the `subscriptionId` of its notifications.
    pub(crate) id: CallId,
    /// What it asked for.
    pub(crate) asked: SubscriptionFilter,
    /// What the server agreed to, once acknowledged.
    pub(crate) honoured: Option<SubscriptionFilter>,
}

/// A `resources/subscribe` (or `unsubscribe`) call waiting for an acknowledgement.
#[derive(Debug)]
pub(crate) struct Waiting {
    /// The call's request id.
    pub(crate) id: CallId,
    pub(crate) uri: String,
    pub(crate) subscribe: bool,
}

/// The listen state of a modern connection.
#[derive(Debug, Default)]
pub(crate) struct Listen {
    /// The resources the application subscribed to.
    pub(crate) resources: BTreeSet<String>,
    /// The newest stream.
    pub(crate) current: Option<Stream>,
    /// The acknowledged stream that `current` replaces, until `current` is acknowledged.
    pub(crate) previous: Option<CallId>,
    pub(crate) waiting: Vec<Waiting>,
    /// When to listen again after the server ended the stream.
    pub(crate) again_at: Option<Instant>,
    /// Streams ended in a row without an acknowledgement.
    pub(crate) failures: u32,
    /// The server refused to listen (an error answer): not tried again until the application
    /// subscribes to something.
    pub(crate) refused: bool,
}

impl Listen {
    /// Whether `id` is one of the live listen streams (so a notification tagged with it is
    /// delivered).
    pub(crate) fn owns(&self, id: i64) -> bool {
        self.current.as_ref().is_some_and(|s| s.id.0 == id) || self.previous.is_some_and(|p| p.0 == id)
    }

    /// The stream ended (by the server, or broken): schedules listening again.
    pub(crate) fn ended(&mut self, now: Instant, id: CallId) {
        if self.previous == Some(id) {
            self.previous = None;
            return;
        }
        if self.current.as_ref().is_some_and(|s| s.id == id) {
            self.current = None;
            self.again_at = Some(crate::deadline::deadline_after(now, delay(self.failures)));
            self.failures += 1;
        }
    }

    /// The acknowledged filter of the current stream, if any.
    pub(crate) fn honoured(&self) -> Option<&SubscriptionFilter> {
        self.current.as_ref().and_then(|s| s.honoured.as_ref())
    }
}

impl ClientConnection {
    /// What a modern connection listens to now: the list changes the server offers (unless
    /// turned off in the configuration) and the subscribed resources.
    fn listen_filter(&self) -> SubscriptionFilter {
        let Some(caps) = self.session().map(|s| &s.capabilities) else {
            return SubscriptionFilter::default();
        };
        let lists = self.config.listen_for_list_changes;
        let offers = |c: Option<&schema::ListChangedCapability>| {
            lists && c.is_some_and(|c| c.list_changed == Some(true))
        };
        let resources = caps.resources.as_ref();
        SubscriptionFilter {
            tools_list_changed: offers(caps.tools.as_ref()),
            prompts_list_changed: offers(caps.prompts.as_ref()),
            resources_list_changed: lists && resources.is_some_and(|r| r.list_changed == Some(true)),
            resource_subscriptions: match resources.is_some_and(|r| r.subscribe == Some(true)) {
                true => self.listen.resources.iter().cloned().collect(),
                false => Vec::new(),
            },
            task_ids: match self.config.tasks.listen && caps.has_extension(schema::TASKS_EXTENSION) {
                true => self.tasks.task_ids().map(str::to_owned).collect(),
                false => Vec::new(),
            },
        }
    }

    /// Opens, replaces or ends the listen stream so that it asks for what there is to listen to.
    pub(super) fn update_listen(&mut self, now: Instant) {
        if !self.session().is_some_and(|s| s.version.is_modern()) {
            return;
        }
        let filter = self.listen_filter();
        if filter.is_empty() {
            if let Some(stream) = self.listen.current.take() {
                self.stop_listen(stream.id);
            }
            if let Some(id) = self.listen.previous.take() {
                self.stop_listen(id);
            }
            self.listen.again_at = None;
            return self.settle_waiting(now, Ok(&SubscriptionFilter::default()));
        }
        if self.listen.refused || self.listen.again_at.is_some() {
            return;
        }
        if let Some(current) = &self.listen.current {
            if current.asked == filter {
                if let Some(honoured) = current.honoured.clone() {
                    self.settle_waiting(now, Ok(&honoured));
                }
                return;
            }
        }
        match self.listen.current.take() {
            // Kept until its replacement is acknowledged, so that no notification is missed.
            Some(old) if old.honoured.is_some() => {
                if let Some(older) = self.listen.previous.replace(old.id) {
                    self.stop_listen(older);
                }
            }
            Some(old) => self.stop_listen(old.id),
            None => {}
        }
        let Some(meta) = self.session().and_then(|s| s.meta.clone()) else { return };
        let params = serde_json::json!({"notifications": &filter, "_meta": meta});
        let Ok(params) = serde_json::to_vec(&params) else { return };
        // A listen stream has no deadline: it lasts until one side ends it.
        let pending = Pending::new(PendingKind::Listen, now, None);
        let id = self.start_request(pending, Cow::Borrowed("subscriptions/listen"), Some(&params), None);
        tracing::debug!(id = id.0, ?filter, "listening");
        self.listen.current = Some(Stream { id, asked: filter, honoured: None });
    }

    /// Ends the listen streams, when the application closes the connection: a server that
    /// waits for them to end before it exits on end of input need not wait.
    pub(super) fn end_listen(&mut self) {
        if self.is_closed() {
            return;
        }
        if let Some(stream) = self.listen.current.take() {
            self.stop_listen(stream.id);
        }
        if let Some(id) = self.listen.previous.take() {
            self.stop_listen(id);
        }
    }

    /// Ends listen stream `id`: on stdio with `notifications/cancelled`; the HTTP session aborts
    /// the stream instead.
    fn stop_listen(&mut self, id: CallId) {
        if let Some(wire) = self.pending.remove(id).and_then(|p| p.wire()) {
            self.send_cancelled(wire, None);
        }
    }

    /// The transport lost listen stream `id` (out of the table): refused (a 4xx status), or
    /// broken and to be opened again.
    pub(super) fn listen_lost(&mut self, now: Instant, id: CallId, error: RequestError) {
        let refused =
            matches!(error, RequestError::HttpStatus { status, .. } if (400..500).contains(&status));
        if refused {
            self.on_listen_answer(now, id, Err(error));
        } else {
            tracing::debug!(id = id.0, %error, "listen stream lost");
            self.listen.ended(now, id);
        }
    }

    /// Completes the `resources/subscribe` and `unsubscribe` calls waiting for a listen stream:
    /// with the filter the server acknowledged, or with why there is no stream.
    fn settle_waiting(&mut self, now: Instant, outcome: Result<&SubscriptionFilter, RequestError>) {
        let mut refused = false;
        for waiting in std::mem::take(&mut self.listen.waiting) {
            let Some(pending) = self.pending.remove(waiting.id) else { continue };
            let result = match &outcome {
                Err(error) => Err(error.clone()),
                Ok(honoured)
                    if waiting.subscribe && !honoured.resource_subscriptions.contains(&waiting.uri) =>
                {
                    refused |= self.listen.resources.remove(&waiting.uri);
                    Err(RequestError::SubscriptionRefused { uri: waiting.uri })
                }
                Ok(_) => Ok(empty_object().get()),
            };
            self.finish(waiting.id, pending, result);
        }
        if refused {
            // Listen again without the resources the server would not follow.
            self.update_listen(now);
        }
    }

    /// `resources/subscribe` or `resources/unsubscribe` on a modern connection: the resource set
    /// of the listen stream changes, and the call completes when the server acknowledges it.
    pub(super) fn modern_subscribe(
        &mut self,
        now: Instant,
        params: Option<&[u8]>,
        subscribe: bool,
        options: &RequestOptions,
    ) -> Result<RequestId, UsageError> {
        let params: schema::SubscribeRequestParams = serde_json::from_slice(params.unwrap_or(b"{}"))
            .map_err(|e| UsageError::InvalidParams(e.to_string()))?;
        // Nothing of it is on the wire: no progress can be for it.
        let timing = Timing { reset_on_progress: false, ..Timing::for_request(options, &self.config) };
        // Nothing goes on the wire for it: the listen stream carries the change.
        self.stats.requests_tracked += 1;
        let id = self.pending.start_local(Pending::new(PendingKind::User, now, Some(timing)));
        let uri = params.uri;
        if subscribe {
            self.listen.resources.insert(uri.clone());
        } else {
            self.listen.resources.remove(&uri);
        }
        self.listen.waiting.push(Waiting { id, uri, subscribe });
        // Asked for by the application: worth trying now, even after a refusal or an end.
        self.listen.refused = false;
        self.listen.again_at = None;
        self.update_listen(now);
        Ok(RequestId::Number(id.0))
    }

    /// The server answered listen stream `id`: a result ends it gracefully, an error refuses it.
    pub(super) fn on_listen_answer(
        &mut self,
        now: Instant,
        id: CallId,
        result: Result<JsonText<'_>, RequestError>,
    ) {
        let current = self.listen.current.as_ref().is_some_and(|s| s.id == id);
        match result {
            Err(error) if current => {
                tracing::warn!(%error, "subscriptions/listen refused: no list-changed or resource notifications");
                self.listen.current = None;
                self.listen.refused = true;
                self.settle_waiting(now, Err(error));
            }
            _ => {
                tracing::debug!(id = id.0, "the server ended a listen stream");
                self.listen.ended(now, id);
            }
        }
    }

    /// `notifications/subscriptions/acknowledged`: the stream is up, with what the server honours.
    fn on_acknowledged(&mut self, now: Instant, params: schema::SubscriptionsAcknowledgedParams) {
        let id =
            params.meta.as_ref().and_then(|m| m.get(schema::META_SUBSCRIPTION_ID)).and_then(|v| v.as_i64());
        let Some(current) = self.listen.current.as_mut().filter(|s| Some(s.id.0) == id) else { return };
        if params.notifications != current.asked {
            tracing::debug!(asked = ?current.asked, honoured = ?params.notifications, "listen stream acknowledged in part");
        }
        current.honoured = Some(params.notifications.clone());
        self.listen.failures = 0;
        if let Some(previous) = self.listen.previous.take() {
            self.stop_listen(previous);
        }
        self.settle_waiting(now, Ok(&params.notifications));
    }

    /// The filter the server acknowledged for the current `subscriptions/listen` stream
    /// (2026-07-28), if one is up.
    pub fn subscription(&self) -> Option<&SubscriptionFilter> {
        self.listen.honoured()
    }

    /// What a modern connection does with a notification before the usual handling: the
    /// listen streams' own notifications are handled here, and those of a stream that is no
    /// longer wanted are dropped. Returns whether the notification goes on.
    pub(super) fn modern_notification(
        &mut self,
        now: Instant,
        method: &str,
        params: Option<JsonText<'_>>,
    ) -> bool {
        match method {
            "notifications/subscriptions/acknowledged" => {
                match decode_params::<schema::SubscriptionsAcknowledgedParams>(method, params) {
                    Ok(p) => self.on_acknowledged(now, p),
                    Err(e) => self.invalid(e),
                }
                false
            }
            "notifications/tools/list_changed"
            | "notifications/prompts/list_changed"
            | "notifications/resources/list_changed"
            | "notifications/resources/updated" => {
                let meta = params.and_then(|p| serde_json::from_str::<schema::WithMeta>(p.get()).ok());
                match meta.as_ref().and_then(|m| m.get(schema::META_SUBSCRIPTION_ID)) {
                    // Untagged: delivered, as the `initialize` era would.
                    None => true,
                    Some(id) => id.as_i64().is_some_and(|id| self.listen.owns(id)),
                }
            }
            "notifications/cancelled" => {
                // On stdio a server may end a listen stream this way.
                let cancelled = decode_params::<schema::CancelledNotificationParams>(method, params).ok();
                let id = match cancelled.and_then(|c| c.request_id) {
                    Some(RequestId::Number(id)) => Some(id),
                    _ => None,
                };
                match id.filter(|&id| self.listen.owns(id)) {
                    Some(id) => {
                        self.pending.remove(CallId(id));
                        self.listen.ended(now, CallId(id));
                        false
                    }
                    None => true,
                }
            }
            _ => true,
        }
    }
}

/// How long to wait before listening again after `failures` streams ended in a row without an
/// acknowledgement.
fn delay(failures: u32) -> Duration {
    let factor = 2u32.saturating_pow(failures.min(16));
    FIRST_DELAY.saturating_mul(factor).min(MAX_DELAY)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_delay_doubles_from_one_second_to_thirty() {
        let secs: Vec<u64> = (0..7).chain([40]).map(|f| delay(f).as_secs()).collect();
        assert_eq!(secs, [1, 2, 4, 8, 16, 30, 30, 30]);
    }
}
