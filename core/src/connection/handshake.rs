//! The connection's phases and how it moves between them: the 2026-07-28 `server/discover`
//! probe, the `initialize` handshake, version negotiation and the fallback between the eras,
//! the ready session, the keep-alive `ping`.
//!
//! ```text
//!  new ──► Discovering ──(discover result)──────────────► Ready (modern)
//!   │         │  └─(-32022 naming a mutual version: once)─► Discovering
//!   │         └─(anything else, timeout, transport failure: when legacy is accepted)─┐
//!   └────────────────────────────────────────────────────────► Initializing ──► Ready (legacy)
//!  every phase ──(close, EOF, fatal failure)──► Closed
//! ```

use std::borrow::Cow;
use std::time::{Duration, Instant};

use super::ClientConnection;
use super::meta::empty_object;
use super::pending::{Pending, PendingKind, Timing};
use crate::deadline::deadline_after;
use crate::error::UsageError;
use crate::event::{CloseReason, ConnectionRequest, Event, RequestError};
use crate::json_scan::JsonText;
use crate::jsonrpc::{self, ErrorObject, error_codes};
use crate::schema::{self, InitializeRequestParams, InitializeResult, ServerCapabilities};
use crate::transmit::TransmitKind;
use crate::{ProtocolVersion, RequestId};

/// What the connection knows once the handshake is done.
#[derive(Debug)]
pub(super) struct Session {
    pub(super) version: ProtocolVersion,
    pub(super) capabilities: ServerCapabilities,
    pub(super) server_info: Option<schema::Implementation>,
    pub(super) instructions: Option<String>,
    pub(super) init: Option<InitializeResult>,
    pub(super) discover: Option<schema::DiscoverResult>,
    /// 2026-07-28: when the discover result stops being fresh (`ttlMs` after it arrived).
    pub(super) discover_fresh_until: Option<Instant>,
    /// 2026-07-28: the `_meta` every request carries.
    pub(super) meta: Option<schema::JsonObject>,
}

/// Where the connection is in its life.
#[derive(Debug)]
pub(super) enum Phase {
    /// 2026-07-28: `server/discover` sent (a probe when legacy versions are accepted too).
    Discovering {
        requested: ProtocolVersion,
        /// Already sent again once after `-32022`.
        retried: bool,
    },
    /// `initialize` sent.
    Initializing {
        requested: ProtocolVersion,
    },
    Ready(Box<Session>),
    Closed(CloseReason),
}

/// An answer the `server/discover` probe got, as the connection or its transport saw it (the
/// rows of [`ClientConnection::classify_probe`]'s table).
#[derive(Debug)]
pub(super) enum ProbeAnswer<'a> {
    /// A result with the probe's id.
    Result(JsonText<'a>),
    /// A JSON-RPC error with the probe's id, or with a `null` id while the probe was the only
    /// request out.
    Error(ErrorObject),
    /// An answer with the probe's id that is no valid response, or too large to read.
    Unusable(RequestError),
    /// An HTTP `401`; `challenged` when it carries a `Bearer` or `DPoP` challenge.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    Http401 { challenged: bool },
    /// The transport failed the request: an HTTP status, a content type, a broken stream, a
    /// refused connection, or authorization that failed.
    Failed(RequestError),
    /// Nothing within the discover timeout.
    Silence(Duration),
}

/// What a probe answer means.
#[derive(Debug)]
pub(super) enum ProbeVerdict {
    /// A 2026-07-28 server: ready with this version.
    ThisEra(ProtocolVersion, Box<schema::DiscoverResult>),
    /// `-32022` naming a version the client speaks: discover again with it.
    Again(ProtocolVersion),
    /// Not a 2026-07-28 server (the reason, for the log): `initialize`.
    FallBack(CloseReason),
    /// An authorization demand: the HTTP session's authorizer takes it.
    Authorize,
    /// The connection closes.
    Fail(CloseReason),
}

/// What a 2026-07-28 connection does with a method that era removed.
pub(super) enum Removed {
    /// Refused locally, naming the replacement if there is one.
    Gone(Option<&'static str>),
    /// `logging/setLevel`: the level moves into each request's `_meta`.
    LogLevel,
}

pub(super) fn removed_in_modern(method: &str) -> Option<Removed> {
    match method {
        "ping" => Some(Removed::Gone(Some("any request: every request is answered or times out"))),
        "logging/setLevel" => Some(Removed::LogLevel),
        // The tasks extension (SEP-2663) polls with `tasks/get`, whose answer carries the result.
        "tasks/result" => Some(Removed::Gone(Some("tasks/get"))),
        "tasks/list" => Some(Removed::Gone(None)),
        _ => None,
    }
}

impl ClientConnection {
    /// Queues the first request: `server/discover` when a 2026-07-28 version is accepted, else
    /// `initialize`.
    pub(super) fn start_handshake(&mut self, now: Instant) {
        match self.config.versions.iter().copied().filter(|v| v.is_modern()).max() {
            Some(modern) => self.start_discover(now, modern, false),
            None => self.start_initialize(now, self.preferred_legacy()),
        }
    }

    /// Queues `initialize` for `requested`.
    fn start_initialize(&mut self, now: Instant, requested: ProtocolVersion) {
        self.phase = Phase::Initializing { requested };
        let params = InitializeRequestParams {
            protocol_version: requested.as_str().to_owned(),
            capabilities: self.config.capabilities.clone(),
            client_info: self.config.client_info.clone(),
            meta: None,
        };
        let mut params_json = Vec::new();
        // Plain data structs serialize infallibly into a Vec.
        let _ = serde_json::to_writer(&mut params_json, &params);
        let timing = Timing::fixed(self.config.handshake_timeout);
        let pending = Pending::new(PendingKind::Initialize, now, Some(timing));
        self.start_request(pending, Cow::Borrowed("initialize"), Some(&params_json), None);
    }

    /// Queues `server/discover` for `requested`: a probe with the (short) discover timeout when
    /// legacy versions are accepted too, else the first request with the handshake timeout.
    fn start_discover(&mut self, now: Instant, requested: ProtocolVersion, retried: bool) {
        self.phase = Phase::Discovering { requested, retried };
        let meta = self.modern_meta(requested);
        let mut params = Vec::new();
        let _ = serde_json::to_writer(&mut params, &serde_json::json!({ "_meta": meta }));
        // The probe never waits longer than the whole handshake may take: a caller who sets a
        // handshake timeout shorter than the discover timeout must not wait for the latter
        // before `initialize` even starts (a silent server then took discover_timeout plus the
        // handshake timeout to fail, with an error naming the handshake timeout).
        let timeout = if self.accepts_legacy() {
            self.config.discover_timeout.min(self.config.handshake_timeout)
        } else {
            self.config.handshake_timeout
        };
        let pending = Pending::new(PendingKind::Discover, now, Some(Timing::fixed(timeout)));
        self.start_request(pending, Cow::Borrowed("server/discover"), Some(&params), None);
    }

    /// The legacy version to request: the newest accepted.
    fn preferred_legacy(&self) -> ProtocolVersion {
        self.config
            .versions
            .iter()
            .copied()
            .filter(|v| !v.is_modern())
            .max()
            .unwrap_or(ProtocolVersion::LATEST_LEGACY)
    }

    /// Whether the configuration accepts an `initialize`-era version.
    fn accepts_legacy(&self) -> bool {
        self.config.versions.iter().any(|v| !v.is_modern())
    }

    /// The `_meta` every 2026-07-28 request carries: version, capabilities, client info.
    pub(super) fn modern_meta(&self, version: ProtocolVersion) -> schema::JsonObject {
        let mut meta = schema::JsonObject::new();
        meta.insert(schema::META_PROTOCOL_VERSION.into(), version.as_str().into());
        let capabilities = serde_json::to_value(&self.config.capabilities).unwrap_or_default();
        meta.insert(schema::META_CLIENT_CAPABILITIES.into(), capabilities);
        let info = serde_json::to_value(&self.config.client_info).unwrap_or_default();
        meta.insert(schema::META_CLIENT_INFO.into(), info);
        meta
    }

    /// When the next keep-alive `ping` is due: `keep_alive` after the last message received,
    /// while none is out (2026-07-28 has no `ping`).
    pub(super) fn keep_alive_at(&self) -> Option<Instant> {
        match (self.config.keep_alive, self.keep_alive_ping, &self.phase) {
            (Some(interval), None, Phase::Ready(session)) if !session.version.is_modern() => {
                Some(deadline_after(self.last_received, interval))
            }
            _ => None,
        }
    }

    /// `logging/setLevel` on a 2026-07-28 connection: the level goes into every later
    /// request's `_meta` instead, and the call succeeds at once without a message.
    pub(super) fn set_modern_log_level(
        &mut self,
        now: Instant,
        params: Option<&[u8]>,
    ) -> Result<RequestId, UsageError> {
        let params: schema::SetLevelRequestParams = serde_json::from_slice(params.unwrap_or(b"{}"))
            .map_err(|e| UsageError::InvalidParams(e.to_string()))?;
        self.log_level = Some(params.level);
        let id = self.pending.settled();
        self.stats.requests_tracked += 1;
        let pending = Pending::new(PendingKind::User, now, None);
        self.finish(id, pending, Ok(empty_object().get()));
        Ok(RequestId::Number(id.0))
    }

    /// No answer to the probe within its timeout.
    pub(super) fn discover_timed_out(&mut self, now: Instant, timeout: Duration) {
        if matches!(self.phase, Phase::Discovering { .. }) {
            return self.on_probe_answer(now, ProbeAnswer::Silence(timeout));
        }
        self.shut(CloseReason::HandshakeTimeout(timeout));
    }

    pub(super) fn on_discover_result(&mut self, now: Instant, result: Result<JsonText<'_>, ErrorObject>) {
        let answer = match result {
            Ok(raw) => ProbeAnswer::Result(raw),
            Err(error) => ProbeAnswer::Error(error),
        };
        self.on_probe_answer(now, answer);
    }

    /// Acts on what the `server/discover` request got (see [`classify_probe`](Self::classify_probe)).
    pub(super) fn on_probe_answer(&mut self, now: Instant, answer: ProbeAnswer<'_>) {
        if !matches!(self.phase, Phase::Discovering { .. }) {
            return;
        }
        match self.classify_probe(answer) {
            ProbeVerdict::ThisEra(version, discover) => self.ready_modern(now, version, *discover),
            ProbeVerdict::Again(version) => self.start_discover(now, version, true),
            ProbeVerdict::FallBack(reason) => {
                tracing::debug!(%reason, "not a 2026-07-28 server: falling back to initialize");
                self.start_initialize(now, self.preferred_legacy());
            }
            // The HTTP session's authorizer has it; nothing changes here.
            ProbeVerdict::Authorize => {}
            ProbeVerdict::Fail(reason) => self.shut(reason),
        }
    }

    /// Whether the `server/discover` probe is the only request out: an error without an id
    /// (a server that could not parse something) can then only be about the probe.
    pub(super) fn probe_alone(&self) -> bool {
        matches!(self.phase, Phase::Discovering { .. }) && self.pending.len() == 1
    }

    /// Takes the probe out of the pending table when it was answered without its id.
    pub(super) fn take_probe(&mut self) {
        for (id, pending) in self.pending.drain() {
            if pending.kind != PendingKind::Discover {
                self.pending.insert(id, pending);
            }
        }
    }

    /// Whether an HTTP `401` to the probe is a legacy server's way of refusing a method it does
    /// not know rather than a demand for authorization (`challenged`: it carries a `Bearer` or
    /// `DPoP` challenge). `false` when the connection is not probing.
    #[cfg(feature = "http")]
    pub(crate) fn probe_401_falls_back(&self, challenged: bool) -> bool {
        matches!(self.phase, Phase::Discovering { .. })
            && !matches!(self.classify_probe(ProbeAnswer::Http401 { challenged }), ProbeVerdict::Authorize)
    }

    /// What an answer to `server/discover` means: the one place that decides between this era,
    /// the `initialize` era, authorization and failure. `docs/robustness.md` has the same
    /// table from the user's side.
    ///
    /// | answer | verdict |
    /// |---|---|
    /// | a result whose `supportedVersions` names the version asked for | this era, that version |
    /// | a result whose `supportedVersions` names only other versions: a modern one the client accepts | this era, the newest such |
    /// | … only versions the client does not speak, a legacy one among them | fall back |
    /// | … only versions the client does not speak, none legacy | fail, [`UnsupportedVersion`](CloseReason::UnsupportedVersion) naming both sides |
    /// | a result with no `supportedVersions`, an empty list, or `{}` | fall back (a legacy server answering an unknown method sloppily); with no legacy version accepted, this era with the version asked for (nothing to fall back to) |
    /// | a result that does not decode as a discover result (`null`, `[]`, wrong types) | fall back |
    /// | `-32022` naming a modern version the client accepts, the first time | discover again with it |
    /// | `-32022` otherwise | fall back when it names a legacy version or none; else fail, `UnsupportedVersion` |
    /// | `-32020` or `-32021` | fail, [`InitializeRefused`](CloseReason::InitializeRefused): a modern server refused |
    /// | any other error (`-32601`, `-32600`, `-32700`, `-32603`, `1`, …), with the probe's id, or with a `null` id while the probe is the only request out, or in the body of the probe's own HTTP exchange | fall back |
    /// | an answer with the probe's id that is no valid response (`result` and `error`, an `error` that is a string) or is too large | fall back |
    /// | HTTP `401` with a `Bearer` or `DPoP` challenge | authorization: the authorizer takes it (the OAuth flow, or [`NotConfigured`](crate::auth::AuthError::NotConfigured) without one) |
    /// | HTTP `401` without such a challenge | fall back; a `401` to `initialize` too is then an authorization demand (with no legacy version accepted: the authorizer's) |
    /// | authorization failed (the flow, or no OAuth configured) | fail, [`Unauthorized`](CloseReason::Unauthorized) |
    /// | any other refusal by the transport: an HTTP error status (`400`, `403`, `404`, `405`, `500`, …), `text/html`, an empty `200`, `202` or `204`, a body that is not the response, a broken stream, a refused connection | fall back |
    /// | an answer with another id | not an answer: counted as unknown, the probe still waits |
    /// | nothing within [`discover_timeout`](crate::ClientConfig::discover_timeout) (10 s, never more than the handshake timeout) | fall back |
    /// | the server closes its stdout or exits | the connection closes ([`Eof`](CloseReason::Eof), [`Exited`](CloseReason::Exited)) and [`ended_on_probe`](Self::ended_on_probe) says why: a driver may start the server again with `initialize` (mcp-smol's `spawn_stdio` does, once) |
    ///
    /// "Fall back" is `initialize` when the configuration accepts an `initialize`-era version,
    /// else a failure with the answer as its reason.
    fn classify_probe(&self, answer: ProbeAnswer<'_>) -> ProbeVerdict {
        let Phase::Discovering { requested, retried } = self.phase else {
            return ProbeVerdict::Fail(CloseReason::Local);
        };
        // The server's JSON-RPC error in the body of the probe's own exchange, whatever its id
        // (a server that could not read the request answers with `null`), when it is one of
        // the modern refusals; any other keeps the HTTP status as the reason.
        if let ProbeAnswer::Failed(RequestError::HttpStatus { error: Some(error), .. }) = &answer {
            let modern = [
                error_codes::UNSUPPORTED_PROTOCOL_VERSION,
                error_codes::HEADER_MISMATCH,
                error_codes::MISSING_REQUIRED_CLIENT_CAPABILITY,
            ];
            if modern.contains(&error.code) {
                return self.classify_probe(ProbeAnswer::Error(error.clone()));
            }
        }
        let fall_back = |reason: CloseReason| {
            if self.accepts_legacy() { ProbeVerdict::FallBack(reason) } else { ProbeVerdict::Fail(reason) }
        };
        match answer {
            ProbeAnswer::Result(raw) => {
                let discover = match serde_json::from_str::<schema::DiscoverResult>(raw.get()) {
                    Ok(discover) => discover,
                    Err(e) => {
                        return fall_back(CloseReason::InvalidInitializeResult(format!(
                            "server/discover: {e}"
                        )));
                    }
                };
                if discover.supported_versions.is_empty() {
                    if self.accepts_legacy() {
                        return ProbeVerdict::FallBack(CloseReason::InvalidInitializeResult(
                            "server/discover: the result has no supportedVersions".into(),
                        ));
                    }
                    // Modern-only: nothing to fall back to, and the version asked for is the
                    // one the server would have to refuse (-32022) if it did not speak it.
                    return ProbeVerdict::ThisEra(requested, Box::new(discover));
                }
                let supported: Vec<ProtocolVersion> =
                    discover.supported_versions.iter().filter_map(|v| v.parse().ok()).collect();
                let version = if supported.contains(&requested) {
                    Some(requested)
                } else {
                    self.mutual_modern(&supported)
                };
                match version {
                    Some(version) => ProbeVerdict::ThisEra(version, Box::new(discover)),
                    None => self.unsupported(requested, &discover.supported_versions),
                }
            }
            ProbeAnswer::Error(error) if error.code == error_codes::UNSUPPORTED_PROTOCOL_VERSION => {
                let offered = offered_versions(&error);
                let supported: Vec<ProtocolVersion> = offered.iter().filter_map(|v| v.parse().ok()).collect();
                match self.mutual_modern(&supported) {
                    // Retried once, even with the same version (the server asked for a retry).
                    Some(version) if !retried => ProbeVerdict::Again(version),
                    _ => self.unsupported(requested, &offered),
                }
            }
            // A modern server that refused: not a reason to try the legacy handshake.
            ProbeAnswer::Error(error)
                if error.code == error_codes::HEADER_MISMATCH
                    || error.code == error_codes::MISSING_REQUIRED_CLIENT_CAPABILITY =>
            {
                ProbeVerdict::Fail(CloseReason::InitializeRefused(error))
            }
            // Anything else: a legacy server (which answers unknown methods as it likes).
            ProbeAnswer::Error(error) => fall_back(CloseReason::InitializeRefused(error)),
            ProbeAnswer::Unusable(error) => {
                fall_back(CloseReason::InvalidInitializeResult(format!("server/discover: {error}")))
            }
            ProbeAnswer::Http401 { challenged: false } if self.accepts_legacy() => {
                let error = RequestError::HttpStatus { status: 401, body: String::new(), error: None };
                let request = ConnectionRequest::Discover;
                ProbeVerdict::FallBack(CloseReason::RequestFailed { request, error: Box::new(error) })
            }
            // A challenge, or nothing to fall back to (the authorizer then looks for the
            // metadata at the well-known locations).
            ProbeAnswer::Http401 { .. } => ProbeVerdict::Authorize,
            ProbeAnswer::Failed(RequestError::Unauthorized(error)) => {
                // No handshake without authorization, in either era: nothing to fall back to.
                ProbeVerdict::Fail(CloseReason::Unauthorized(error))
            }
            // No answer that a modern server would give.
            ProbeAnswer::Failed(error) => fall_back(CloseReason::RequestFailed {
                request: ConnectionRequest::Discover,
                error: Box::new(error),
            }),
            // A legacy server that ignores unknown requests before `initialize` (or a modern
            // one too slow for the probe).
            ProbeAnswer::Silence(timeout) => fall_back(CloseReason::HandshakeTimeout(timeout)),
        }
    }

    /// A modern server that offers no modern version the client accepts.
    fn unsupported(&self, requested: ProtocolVersion, offered: &[String]) -> ProbeVerdict {
        let legacy_offered =
            offered.iter().filter_map(|v| v.parse::<ProtocolVersion>().ok()).any(|v| !v.is_modern());
        if self.accepts_legacy() && (offered.is_empty() || legacy_offered) {
            return ProbeVerdict::FallBack(CloseReason::InitializeRefused(ErrorObject::new(
                error_codes::UNSUPPORTED_PROTOCOL_VERSION,
                format!("the server offers {}", offered.join(", ")),
            )));
        }
        let accepted = self.config.versions.iter().map(|v| v.as_str()).collect::<Vec<_>>().join(", ");
        ProbeVerdict::Fail(CloseReason::UnsupportedVersion {
            requested,
            offered: offered.join(", "),
            accepted,
        })
    }

    /// The newest modern version the client accepts that `supported` has.
    pub(super) fn mutual_modern(&self, supported: &[ProtocolVersion]) -> Option<ProtocolVersion> {
        self.config.versions.iter().copied().filter(|v| v.is_modern() && supported.contains(v)).max()
    }

    fn ready_modern(&mut self, now: Instant, version: ProtocolVersion, discover: schema::DiscoverResult) {
        let session = Session {
            version,
            capabilities: discover.capabilities.clone(),
            server_info: discover.server_info(),
            instructions: discover.instructions.clone(),
            init: None,
            meta: Some(self.modern_meta(version)),
            discover_fresh_until: Some(fresh_until(now, &discover)),
            discover: Some(discover),
        };
        tracing::debug!(%version, "ready (2026-07-28, no initialize)");
        self.phase = Phase::Ready(Box::new(session));
        self.handshake_completed = true;
        self.events.push_back(Event::Ready { protocol_version: version });
        self.update_listen(now);
    }

    /// The answer to a `server/discover` the application sent on a ready modern connection: it
    /// replaces what the connection knows of the server.
    pub(super) fn on_rediscover(&mut self, now: Instant, raw: JsonText<'_>) {
        let Ok(discover) = serde_json::from_str::<schema::DiscoverResult>(raw.get()) else { return };
        let Phase::Ready(session) = &mut self.phase else { return };
        session.capabilities = discover.capabilities.clone();
        session.server_info = discover.server_info().or(session.server_info.take());
        session.instructions = discover.instructions.clone();
        session.discover_fresh_until = Some(fresh_until(now, &discover));
        session.discover = Some(discover);
        // The server may offer other notifications now.
        self.update_listen(now);
    }

    /// The server refused our version with `-32022` naming `supported`: when it names another
    /// modern version this client speaks, the session moves to it. Returns the version to send
    /// requests under from now on.
    pub(super) fn switch_version(&mut self, supported: &[ProtocolVersion]) -> Option<ProtocolVersion> {
        let version = self.mutual_modern(supported)?;
        let meta = self.modern_meta(version);
        let Phase::Ready(session) = &mut self.phase else { return None };
        if session.version != version {
            tracing::info!(from = %session.version, to = %version, "the server refused the protocol version; switching");
            session.version = version;
            session.meta = Some(meta);
        }
        Some(version)
    }

    pub(super) fn on_initialize_result(&mut self, result: Result<JsonText<'_>, ErrorObject>) {
        let Phase::Initializing { requested } = self.phase else { return };
        let init = match result {
            Err(error) => return self.shut(CloseReason::InitializeRefused(error)),
            Ok(raw) => match serde_json::from_str::<InitializeResult>(raw.get()) {
                Ok(init) => init,
                Err(e) => return self.shut(CloseReason::InvalidInitializeResult(e.to_string())),
            },
        };
        let version = match init.protocol_version.parse::<ProtocolVersion>() {
            Ok(v) if self.config.versions.contains(&v) && !v.is_modern() => v,
            _ => {
                let accepted = self.config.versions.iter().map(|v| v.as_str()).collect::<Vec<_>>().join(", ");
                return self.shut(CloseReason::UnsupportedVersion {
                    requested,
                    offered: init.protocol_version,
                    accepted,
                });
            }
        };
        let bytes = [jsonrpc::INITIALIZED, b"\n"].concat();
        self.queue(bytes, TransmitKind::Notification { method: Cow::Borrowed("notifications/initialized") });
        tracing::debug!(%version, server = %init.server_info.name, "initialized");
        let session = Session {
            version,
            capabilities: init.capabilities.clone(),
            server_info: Some(init.server_info.clone()),
            instructions: init.instructions.clone(),
            init: Some(init),
            discover: None,
            discover_fresh_until: None,
            meta: None,
        };
        self.phase = Phase::Ready(Box::new(session));
        self.handshake_completed = true;
        self.events.push_back(Event::Ready { protocol_version: version });
    }
}

/// The versions a `-32022` error says the server supports (`data.supported`; whatever of it is
/// readable, leniently: the error is acted on even when `data.requested` is missing).
pub(super) fn offered_versions(error: &ErrorObject) -> Vec<String> {
    let supported = error.data.as_ref().and_then(|d| d.get("supported")).and_then(|s| s.as_array());
    supported.map(|a| a.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect()).unwrap_or_default()
}

/// When a discover result received at `now` stops being fresh.
fn fresh_until(now: Instant, discover: &schema::DiscoverResult) -> Instant {
    let ttl = u64::try_from(discover.ttl_ms.unwrap_or(0)).unwrap_or(0);
    deadline_after(now, Duration::from_millis(ttl))
}
