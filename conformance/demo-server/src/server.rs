//! The server state and message routing: requests, notifications, batches, cancellation and
//! server→client requests.
//!
//! Every request is routed by era first (see [`Server::select_era`]): legacy requests
//! (`initialize` era) go through [`Server::call_method`] unchanged, 2026-07-28 requests (with
//! per-request `_meta`) through [`Server::call_modern_method`], whose results carry
//! `resultType` and, for lists and reads, the cache hints.
//!
//! Threading model: one reader thread (the caller of [`Server::handle_line`]) routes every
//! message. Quick requests are answered inline, in order. Tool calls that may block (sleeps,
//! progress loops, server→client requests, stderr bursts) run on their own thread, are tracked
//! in `in_flight` by request id and can be cancelled with `notifications/cancelled`; a cancelled
//! request gets no response.
//!
//! Over HTTP several connection threads call [`Server::handle_value`] at once (every piece of
//! state is behind a mutex or atomic), and each request carries a [`Reply`] naming where its
//! response goes; its notifications go to the same place (its [`Outlet`]).

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, mpsc};
use std::thread;
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::exchange::Exchange;
use super::jsonrpc::{
    self, INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, Incoming, PARSE_ERROR, RESOURCE_NOT_FOUND,
    RpcError,
};
use super::logging::LogFilter;
use super::modern::{self, Era, EraCell, Listeners, RequestMeta};
use super::options::Options;
use super::output::{Outlet, Output, Sink};
use super::pagination::paginate;
use super::resources::Subscriptions;
use super::tools::{self, AddedTools, ToolCall};
use super::{completion, lifecycle, prompts, resources, skills, tasks};

/// How often blocked handlers look at their cancel flag.
pub(crate) const CANCEL_POLL: Duration = Duration::from_millis(5);

/// The shared state of one server session.
#[derive(Debug)]
pub(crate) struct Server {
    /// Command-line options.
    pub(crate) options: Options,
    /// Where the messages not tied to a request's stream go (stdout for stdio).
    output: Arc<dyn Sink>,
    /// The level set by `logging/setLevel`.
    pub(crate) log_filter: LogFilter,
    /// Subscribed resource uris.
    pub(crate) subscriptions: Subscriptions,
    /// Cancel flags of the requests running on their own thread, keyed by the id's JSON text.
    in_flight: Mutex<HashMap<String, Arc<AtomicBool>>>,
    /// Every request id named by a `notifications/cancelled`, in arrival order.
    cancelled: Mutex<Vec<Value>>,
    /// Server→client requests awaiting a response, keyed by id.
    pending: Mutex<HashMap<String, mpsc::Sender<Result<Value, Value>>>>,
    /// The counter behind server→client request ids (`srv-1`, `srv-2`, ...).
    next_request: AtomicU64,
    /// How the session opened (`initialize` or a 2026-07-28 request).
    era: EraCell,
    /// The open 2026-07-28 `subscriptions/listen` streams (shared by every session of an HTTP
    /// server).
    listeners: Arc<Listeners>,
    /// The tools `add_tool` added to this session.
    pub(crate) added_tools: AddedTools,
    /// The tasks of the tasks extension (`--tasks`).
    pub(crate) tasks: tasks::Tasks,
}

/// Where the response to one request goes.
#[derive(Clone)]
pub(crate) enum Reply {
    /// To the session's sink (stdout) as its own line.
    Line,
    /// Into the response array of a batch.
    Batch(mpsc::Sender<Value>),
    /// As the last message of the request's own stream (HTTP); its notifications go there too.
    Stream(Arc<Exchange>),
}

impl Reply {
    /// Where the request's notifications go.
    pub(crate) fn outlet(&self) -> Outlet {
        match self {
            Self::Line | Self::Batch(_) => Outlet::Session,
            Self::Stream(exchange) => Outlet::Stream(Arc::clone(exchange)),
        }
    }
}

/// The request was cancelled by the client; it must not be answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Cancelled;

/// Locks a mutex, ignoring poisoning (the protected data stays consistent in this server).
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Server {
    /// A fresh session writing to `output`.
    pub(crate) fn new(options: Options, output: Output) -> Self {
        Self::with_sink(options, Arc::new(output), Arc::new(Listeners::default()), Era::Unknown)
    }

    /// A fresh session in `era` sending to `output`, sharing `listeners`.
    pub(crate) fn with_sink(
        options: Options,
        output: Arc<dyn Sink>,
        listeners: Arc<Listeners>,
        era: Era,
    ) -> Self {
        Self {
            options,
            output,
            log_filter: LogFilter::default(),
            subscriptions: Subscriptions::default(),
            in_flight: Mutex::new(HashMap::new()),
            cancelled: Mutex::new(Vec::new()),
            pending: Mutex::new(HashMap::new()),
            next_request: AtomicU64::new(0),
            era: EraCell::new(era),
            listeners,
            added_tools: AddedTools::default(),
            tasks: tasks::Tasks::default(),
        }
    }

    /// Whether the server is in OAuth mode, which adds the admin tool (the HTTP layer checks
    /// the tokens).
    fn oauth_mode(&self) -> bool {
        self.options.oauth.is_some()
    }

    /// Sends any message to the client, through the session's sink.
    pub(crate) fn send(&self, message: &Value) {
        self.output.send(message, None);
    }

    /// Sends a message that belongs to one request: on its stream, or through the session's sink.
    pub(crate) fn send_on(&self, outlet: &Outlet, message: &Value) {
        match outlet {
            Outlet::Session => self.output.send(message, None),
            Outlet::Stream(exchange) => {
                exchange.send(message);
            }
        }
    }

    /// Sends a message that is not part of a request's stream (a server→client request, a
    /// list-changed notification), caused by the request whose outlet is `origin`.
    pub(crate) fn send_unsolicited(&self, message: &Value, origin: &Outlet) {
        self.output.send(message, origin.stream());
    }

    /// Sends the change notifications every open `subscriptions/listen` stream asked for.
    pub(crate) fn notify_listeners(&self) {
        self.listeners.notify_changes(|outlet, message| self.send_on(outlet, message));
    }

    /// Sends `notifications/tools/list_changed` to every open `subscriptions/listen` stream that
    /// asked for tool list changes (and nothing else: see [`Server::notify_listeners`]).
    pub(crate) fn notify_listeners_of_tools(&self) {
        self.listeners.notify_changes(|outlet, message| {
            if message.get("method").and_then(Value::as_str) == Some("notifications/tools/list_changed") {
                self.send_on(outlet, message);
            }
        });
    }

    /// The ids seen in `notifications/cancelled` so far.
    pub(crate) fn cancelled_ids(&self) -> Vec<Value> {
        lock(&self.cancelled).clone()
    }

    /// Handles one line of input: a message, a batch, or garbage (answered with `-32700`).
    pub(crate) fn handle_line(self: &Arc<Self>, line: &[u8]) {
        let line = line.trim_ascii();
        if line.is_empty() {
            return;
        }
        match serde_json::from_slice::<Value>(line) {
            Ok(value) => self.handle_value(value, Reply::Line),
            Err(error) => {
                let error = RpcError::new(PARSE_ERROR, format!("Parse error: {error}"));
                self.send(&jsonrpc::failure(&Value::Null, &error));
            }
        }
    }

    /// Handles one parsed message or batch; the response (or the batch's array) goes to `reply`.
    pub(crate) fn handle_value(self: &Arc<Self>, value: Value, reply: Reply) {
        match value {
            Value::Array(batch) => self.handle_batch(batch, reply),
            message => {
                self.handle_message(message, reply);
            }
        }
    }

    /// Handles a batch: every request is answered, and the answers are delivered together as one
    /// array once the last of them is ready (nothing is sent if there are none).
    fn handle_batch(self: &Arc<Self>, batch: Vec<Value>, reply: Reply) {
        if batch.is_empty() {
            let error = RpcError::new(INVALID_REQUEST, "Invalid Request: empty batch");
            self.deliver(reply, jsonrpc::failure(&Value::Null, &error));
            return;
        }
        let (sender, receiver) = mpsc::channel();
        let mut deferred = false;
        for message in batch {
            deferred |= self.handle_message(message, Reply::Batch(sender.clone()));
        }
        drop(sender);
        let server = Arc::clone(self);
        let collect = move || {
            let responses: Vec<Value> = receiver.iter().collect();
            if responses.is_empty() {
                abandon(reply);
            } else {
                server.deliver(reply, Value::Array(responses));
            }
        };
        if !deferred {
            collect();
        } else if let Err(error) = thread::Builder::new().name("batch".into()).spawn(collect) {
            eprintln!("demo-server: cannot spawn a batch collector thread: {error}");
        }
    }

    /// Routes one message. Returns whether its response (if any) will be delivered later from
    /// another thread.
    fn handle_message(self: &Arc<Self>, message: Value, reply: Reply) -> bool {
        match jsonrpc::classify(message) {
            Incoming::Request { id, method, params } => self.handle_request(id, &method, params, reply),
            Incoming::Notification { method, params } => {
                self.handle_notification(&method, &params);
                false
            }
            Incoming::Response { id, outcome } => {
                self.handle_response(&id, outcome);
                false
            }
            Incoming::Invalid(Some(error)) => {
                self.deliver(reply, error);
                false
            }
            Incoming::Invalid(None) => false,
        }
    }

    /// Delivers a response.
    pub(crate) fn deliver(&self, reply: Reply, message: Value) {
        match reply {
            Reply::Line => self.send(&message),
            // The receiver lives until every sender is gone; a failed send cannot happen.
            Reply::Batch(sender) => drop(sender.send(message)),
            Reply::Stream(exchange) => exchange.finish(&message),
        }
    }

    /// Answers a request inline, or starts a thread for a blocking tool call (returns `true`).
    fn handle_request(
        self: &Arc<Self>,
        id: Value,
        method: &str,
        params: Map<String, Value>,
        reply: Reply,
    ) -> bool {
        match self.select_era(method, &params) {
            Ok(Some(meta)) => return self.handle_modern_request(id, method, &params, meta, reply),
            Ok(None) => {}
            Err(error) => {
                self.deliver(reply, jsonrpc::failure(&id, &error));
                return false;
            }
        }
        if method == "tools/call" {
            if let Some(later) = self.task_call(&id, &params, None, &reply) {
                return later;
            }
            return match tools::prepare(&params, &self.added_tools, self.oauth_mode()) {
                Ok(call) => self.call_tool(id, call, reply),
                Err(error) => {
                    self.deliver(reply, jsonrpc::failure(&id, &error));
                    false
                }
            };
        }
        let outcome = self.call_method(method, &params);
        self.deliver(reply, jsonrpc::response(&id, outcome));
        false
    }

    /// Decides the era of a request: `Ok(None)` for legacy, `Ok(Some(meta))` for 2026-07-28.
    ///
    /// `initialize` is legacy and makes the session legacy. A request whose `_meta` carries
    /// `io.modelcontextprotocol/protocolVersion` is modern (whatever the session): `-32022` for
    /// a version not spoken with per-request metadata, `-32601` for a method the modern era
    /// lacks, `-32602` for a missing `clientCapabilities` or a bad log level; the first valid
    /// one makes a fresh session modern. Any other request is legacy, except `server/discover`
    /// and every request of a session that opened modern, which are modern requests missing
    /// their `_meta` (`-32602`, or `-32601` for a method the modern era lacks).
    fn select_era(&self, method: &str, params: &Map<String, Value>) -> Result<Option<RequestMeta>, RpcError> {
        if method == "initialize" {
            self.era.initialized();
            return Ok(None);
        }
        if self.options.legacy_only {
            // A server of the initialize era: it knows neither `_meta` nor `server/discover`.
            return if method == "server/discover" {
                Err(RpcError::method_not_found(method))
            } else {
                Ok(None)
            };
        }
        if modern::requested_version(params)?.is_none() {
            if method == "server/discover" || self.era.get() == Era::Modern {
                return Err(if modern::is_method(method) {
                    modern::missing_meta(method)
                } else {
                    RpcError::method_not_found(method)
                });
            }
            return Ok(None);
        }
        self.era.modern_request();
        if !modern::is_method(method) {
            return Err(RpcError::method_not_found(method));
        }
        RequestMeta::parse(method, params).map(Some)
    }

    /// Answers a 2026-07-28 request (its `_meta` validated into `meta`).
    fn handle_modern_request(
        self: &Arc<Self>,
        id: Value,
        method: &str,
        params: &Map<String, Value>,
        meta: RequestMeta,
        reply: Reply,
    ) -> bool {
        if method == "tools/call"
            && let Some(later) = self.task_call(&id, params, Some(&meta), &reply)
        {
            return later;
        }
        match method {
            "tools/call" => match tools::prepare_modern(params, meta, &self.added_tools, self.oauth_mode()) {
                Ok(call) => self.call_tool(id, call, reply),
                Err(error) => {
                    self.deliver(reply, jsonrpc::failure(&id, &error));
                    false
                }
            },
            "subscriptions/listen" => {
                // An open stream is never answered; only a failure to open one is.
                let outlet = reply.outlet();
                let send = |outlet: &Outlet, message: &Value| self.send_on(outlet, message);
                if let Err(error) = self.listeners.listen(&id, params, outlet, send) {
                    self.deliver(reply, jsonrpc::failure(&id, &error));
                }
                false
            }
            _ => {
                let outcome = self.call_modern_method(method, params).map(|r| self.offer_tasks(method, r));
                self.deliver(reply, jsonrpc::response(&id, outcome));
                false
            }
        }
    }

    /// Runs a validated tool call: inline, or on its own thread when it may block (returns
    /// `true`).
    fn call_tool(self: &Arc<Self>, id: Value, call: ToolCall, reply: Reply) -> bool {
        if call.tool.blocking {
            return self.spawn_tool_call(id, call, reply);
        }
        // Nothing can cancel an inline call (the reader thread is busy running it), so the flag
        // stays down and `Err(Cancelled)` cannot happen.
        let never_cancelled = AtomicBool::new(false);
        if let Ok(outcome) = call.run(self, &never_cancelled, &reply.outlet()) {
            self.deliver(reply, jsonrpc::response(&id, outcome));
        }
        false
    }

    /// Answers the 2026-07-28 request methods other than `tools/call` and
    /// `subscriptions/listen`: lists and reads are cacheable (`ttlMs`, `cacheScope`), every
    /// result has `resultType: "complete"`, and an unknown resource is `-32602` (`-32002` is
    /// retired).
    fn call_modern_method(&self, method: &str, params: &Map<String, Value>) -> Result<Value, RpcError> {
        let page_size = self.options.page_size;
        let listed = match method {
            "server/discover" => return Ok(modern::discover(&self.options)),
            "tools/list" => paginate("tools", self.tool_list(), page_size, params),
            "resources/list" => paginate("resources", resources::list(), page_size, params),
            "resources/templates/list" => {
                paginate("resourceTemplates", resources::templates(), page_size, params)
            }
            "resources/read" => self.read_resource(params).map_err(|mut error| {
                if error.code == RESOURCE_NOT_FOUND {
                    error.code = INVALID_PARAMS;
                }
                error
            }),
            "prompts/list" => paginate("prompts", prompts::list(), page_size, params),
            "skills/list" if self.options.skills => skills::list(&self.options, params),
            "skills/get" if self.options.skills => {
                return skills::get(&self.options, params).map(modern::complete);
            }
            "prompts/get" => return prompts::get(params).map(modern::complete),
            "completion/complete" => return completion::complete(params).map(modern::complete),
            method if tasks::METHODS.contains(&method) => return self.task_request(method, params),
            _ => return Err(RpcError::method_not_found(method)),
        };
        listed.map(modern::cacheable)
    }

    /// Answers every request method except `tools/call`.
    fn call_method(&self, method: &str, params: &Map<String, Value>) -> Result<Value, RpcError> {
        let page_size = self.options.page_size;
        match method {
            "initialize" => lifecycle::initialize(params, &self.options),
            "ping" => Ok(json!({})),
            "tools/list" => paginate("tools", self.tool_list(), page_size, params),
            "resources/list" => paginate("resources", resources::list(), page_size, params),
            "resources/templates/list" => {
                paginate("resourceTemplates", resources::templates(), page_size, params)
            }
            "resources/read" => self.read_resource(params),
            "skills/list" if self.options.skills => skills::list(&self.options, params),
            "skills/get" if self.options.skills => skills::get(&self.options, params),
            "resources/subscribe" => self.subscriptions.subscribe(params),
            "resources/unsubscribe" => self.subscriptions.unsubscribe(params),
            "prompts/list" => paginate("prompts", prompts::list(), page_size, params),
            "prompts/get" => prompts::get(params),
            "completion/complete" => completion::complete(params),
            "logging/setLevel" => self.log_filter.set_level(params),
            _ => Err(RpcError::method_not_found(method)),
        }
    }

    /// `resources/read`: a skill's file (with `--skills`), or one of the demo's resources.
    fn read_resource(&self, params: &Map<String, Value>) -> Result<Value, RpcError> {
        let uri = params.get("uri").and_then(Value::as_str);
        match uri.filter(|_| self.options.skills).and_then(|uri| skills::read(&self.options, uri)) {
            Some(read) => Ok(read),
            None => resources::read(params),
        }
    }

    /// Runs a blocking tool call on its own thread, registered in `in_flight`.
    fn spawn_tool_call(self: &Arc<Self>, id: Value, call: ToolCall, reply: Reply) -> bool {
        let key = id.to_string();
        let flag = Arc::new(AtomicBool::new(false));
        match lock(&self.in_flight).entry(key.clone()) {
            Entry::Occupied(_) => {
                let error = RpcError::new(
                    INVALID_REQUEST,
                    format!("Invalid Request: request id {key} is already in flight"),
                );
                self.deliver(reply, jsonrpc::failure(&id, &error));
                return false;
            }
            Entry::Vacant(slot) => {
                slot.insert(Arc::clone(&flag));
            }
        }
        let server = Arc::clone(self);
        let handler_id = id.clone();
        let handler_reply = reply.clone();
        let spawned = thread::Builder::new().name(format!("call {key}")).spawn(move || {
            let outcome = call.run(&server, &flag, &handler_reply.outlet());
            lock(&server.in_flight).remove(&handler_id.to_string());
            match outcome {
                Ok(outcome) if !flag.load(Ordering::SeqCst) => {
                    server.deliver(handler_reply, jsonrpc::response(&handler_id, outcome));
                }
                // Cancelled: per the spec, no response at all (an HTTP stream just ends).
                _ => abandon(handler_reply),
            }
        });
        match spawned {
            Ok(_) => true,
            Err(error) => {
                lock(&self.in_flight).remove(&key);
                let error = RpcError::new(INTERNAL_ERROR, format!("cannot spawn a thread: {error}"));
                self.deliver(reply, jsonrpc::failure(&id, &error));
                false
            }
        }
    }

    /// Handles a client notification; unknown ones are ignored.
    fn handle_notification(&self, method: &str, params: &Map<String, Value>) {
        if method != "notifications/cancelled" {
            return;
        }
        let Some(id) = params.get("requestId").filter(|id| id.is_string() || id.is_number()) else {
            eprintln!("demo-server: ignoring notifications/cancelled without a valid requestId");
            return;
        };
        self.cancel_request(id, None);
    }

    /// Cancels request `id` (a `notifications/cancelled`, or its HTTP client went away): records
    /// it for `cancelled_requests`, closes its `subscriptions/listen` stream and raises its
    /// cancel flag if it is running.
    ///
    /// `on` is the HTTP exchange whose client went away: only a listen stream on it is closed.
    pub(crate) fn cancel_request(&self, id: &Value, on: Option<&Arc<Exchange>>) {
        eprintln!("demo-server: cancelled request {id}");
        lock(&self.cancelled).push(id.clone());
        for outlet in self.listeners.cancel(id, on) {
            if let Outlet::Stream(exchange) = outlet {
                exchange.end();
            }
        }
        if let Some(flag) = lock(&self.in_flight).get(&id.to_string()) {
            flag.store(true, Ordering::SeqCst);
        }
    }

    /// Routes a client response to the server→client request waiting for it.
    fn handle_response(&self, id: &Value, outcome: Result<Value, Value>) {
        let waiter = id.as_str().and_then(|id| lock(&self.pending).remove(id));
        match waiter {
            // The waiter may have given up (cancelled) in the meantime; that is fine.
            Some(waiter) => drop(waiter.send(outcome)),
            None => eprintln!("demo-server: ignoring a response to unknown request id {id}"),
        }
    }

    /// Sends a server→client request and waits for the client's answer (`Ok(result)` or
    /// `Err(error object)`), giving up when `cancel` is raised.
    ///
    /// Giving up sends `notifications/cancelled` for the outstanding request.
    pub(crate) fn request_client(
        &self,
        method: &str,
        params: Value,
        cancel: &AtomicBool,
        origin: &Outlet,
    ) -> Result<Result<Value, Value>, Cancelled> {
        let number = self.next_request.fetch_add(1, Ordering::Relaxed) + 1;
        let id = format!("srv-{number}");
        let (sender, receiver) = mpsc::channel();
        lock(&self.pending).insert(id.clone(), sender);
        self.send_unsolicited(&jsonrpc::request(&Value::String(id.clone()), method, params), origin);
        loop {
            match receiver.recv_timeout(CANCEL_POLL) {
                Ok(outcome) => return Ok(outcome),
                Err(mpsc::RecvTimeoutError::Timeout) if !cancel.load(Ordering::SeqCst) => {}
                Err(_) => {
                    lock(&self.pending).remove(&id);
                    let reason = json!({ "requestId": id, "reason": "the tool call was cancelled" });
                    self.send_unsolicited(&jsonrpc::notification("notifications/cancelled", reason), origin);
                    return Err(Cancelled);
                }
            }
        }
    }
}

/// Gives up on a reply that will never come (a cancelled request): an HTTP stream ends; stdout
/// and batches need nothing.
fn abandon(reply: Reply) {
    if let Reply::Stream(exchange) = reply {
        exchange.end();
    }
}
