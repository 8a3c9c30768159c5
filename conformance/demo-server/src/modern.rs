//! MCP 2026-07-28 (the "modern" era, no `initialize`): which era a request belongs to, the
//! per-request `_meta` keys, `server/discover`, the `resultType`/cache fields of results, the
//! multi round-trip (MRTR) helpers and `subscriptions/listen`.
//!
//! A request is modern when its `params._meta` carries `io.modelcontextprotocol/protocolVersion`.
//! Everything else is legacy and handled exactly as before, except in a session that opened
//! modern (see [`Era`]), where a request without that key is malformed.

use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{Map, Value, json};

use super::exchange::Exchange;
use super::jsonrpc::{INVALID_REQUEST, RpcError, UNSUPPORTED_PROTOCOL_VERSION};
use super::lifecycle::{self, SUPPORTED_VERSIONS};
use super::output::Outlet;
use super::{logging, resources};

/// The per-request metadata versions this server speaks (newest first).
pub(crate) const MODERN_VERSIONS: [&str; 1] = ["2026-07-28"];

/// `_meta` key: the protocol version of a modern request (required).
pub(crate) const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key: the client's capabilities for this one request (required).
pub(crate) const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key: the minimum level of the log messages wanted for this request (optional).
pub(crate) const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
/// `_meta` key on results: the server's identity.
pub(crate) const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
/// `_meta` key on the notifications of a `subscriptions/listen` stream.
pub(crate) const META_SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// `ttlMs` of cacheable results (one minute: nothing here ever changes).
pub(crate) const TTL_MS: u64 = 60_000;
/// `cacheScope` of cacheable results (nothing here is user-specific).
pub(crate) const CACHE_SCOPE: &str = "public";

/// The methods of the modern era (no `initialize`, `ping`, `logging/setLevel`,
/// `resources/subscribe` or `resources/unsubscribe`).
const MODERN_METHODS: [&str; 12] = [
    "server/discover",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "subscriptions/listen",
    // With `--skills` only (`-32601` otherwise, as for an unknown method).
    "skills/list",
    "skills/get",
];

/// Whether `method` exists in the modern era.
pub(crate) fn is_method(method: &str) -> bool {
    MODERN_METHODS.contains(&method) || super::tasks::METHODS.contains(&method)
}

/// How the session opened: it decides what a request without per-request `_meta` means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Era {
    /// Neither `initialize` nor a modern request yet: requests without `_meta` are legacy (and
    /// answered even before `initialize`, as always).
    Unknown,
    /// `initialize` was received: requests without `_meta` are legacy.
    Legacy,
    /// The first era-selecting request was modern: a request without the required `_meta` is
    /// rejected (`-32602`, or `-32601` for a method the modern era does not have).
    Modern,
}

/// The session's [`Era`], shared between threads.
#[derive(Debug)]
pub(crate) struct EraCell(Mutex<Era>);

impl EraCell {
    /// A session starting in `era` (stdio sessions start [`Era::Unknown`]; the shared
    /// 2026-07-28 HTTP server is [`Era::Modern`] from the start).
    pub(crate) fn new(era: Era) -> Self {
        Self(Mutex::new(era))
    }

    /// The current era.
    pub(crate) fn get(&self) -> Era {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// `initialize` always selects legacy semantics (also after a modern probe: the client fell
    /// back).
    pub(crate) fn initialized(&self) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = Era::Legacy;
    }

    /// A valid modern request selects modern semantics, unless `initialize` came first.
    pub(crate) fn modern_request(&self) {
        let mut era = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if *era == Era::Unknown {
            *era = Era::Modern;
        }
    }
}

/// Every version this server speaks: modern first, then the legacy ones, newest first (the
/// `supportedVersions` of `server/discover` and the `supported` of `-32022`).
pub(crate) fn supported_versions() -> Vec<&'static str> {
    MODERN_VERSIONS.iter().chain(SUPPORTED_VERSIONS.iter().rev()).copied().collect()
}

/// `-32022 UnsupportedProtocolVersion` for the version a request asked for.
pub(crate) fn unsupported_version(requested: &str) -> RpcError {
    let message = if SUPPORTED_VERSIONS.contains(&requested) {
        format!("Unsupported protocol version: {requested} is only spoken after initialize")
    } else {
        "Unsupported protocol version".to_owned()
    };
    RpcError::new(UNSUPPORTED_PROTOCOL_VERSION, message)
        .with_data(json!({ "supported": supported_versions(), "requested": requested }))
}

/// `-32602` for a modern request that lacks its required `_meta`.
pub(crate) fn missing_meta(method: &str) -> RpcError {
    RpcError::invalid_params(format!(
        "{method} needs params._meta with \"{META_PROTOCOL_VERSION}\" (one of {}) and \
         \"{META_CLIENT_CAPABILITIES}\" (an object)",
        MODERN_VERSIONS.join(", ")
    ))
}

/// The `_meta` object of a request's params, if any.
fn meta_of(params: &Map<String, Value>) -> Option<&Map<String, Value>> {
    params.get("_meta").and_then(Value::as_object)
}

/// The modern version a request asks for: `Ok(None)` when it carries no
/// `io.modelcontextprotocol/protocolVersion` (a legacy request), `-32022` for a version this
/// server does not speak with per-request metadata, `-32602` for a non-string.
pub(crate) fn requested_version(params: &Map<String, Value>) -> Result<Option<&'static str>, RpcError> {
    let Some(version) = meta_of(params).and_then(|meta| meta.get(META_PROTOCOL_VERSION)) else {
        return Ok(None);
    };
    let version = version.as_str().ok_or_else(|| {
        RpcError::invalid_params(format!("_meta[\"{META_PROTOCOL_VERSION}\"] must be a string"))
    })?;
    MODERN_VERSIONS
        .iter()
        .copied()
        .find(|known| *known == version)
        .map(Some)
        .ok_or_else(|| unsupported_version(version))
}

/// Validates a request routed as modern without a session (HTTP) the way a session that opened
/// modern would: `-32022` for an unsupported `_meta` version, `-32601` for a method the modern
/// era lacks, `-32602` for a missing or invalid `_meta` (version, capabilities, log level).
pub(crate) fn check_request(method: &str, params: &Map<String, Value>) -> Result<(), RpcError> {
    if requested_version(params)?.is_none() {
        return Err(if is_method(method) {
            missing_meta(method)
        } else {
            RpcError::method_not_found(method)
        });
    }
    if !is_method(method) {
        return Err(RpcError::method_not_found(method));
    }
    RequestMeta::parse(method, params).map(drop)
}

/// The validated per-request metadata of a modern request.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RequestMeta {
    /// `io.modelcontextprotocol/clientCapabilities`: what the client can do for this request.
    pub(crate) client_capabilities: Map<String, Value>,
    /// The rank (see [`logging::rank`]) of `io.modelcontextprotocol/logLevel`; `None`: no logs.
    pub(crate) log_level: Option<u8>,
}

impl RequestMeta {
    /// Reads the rest of the `_meta` of a modern request (its version already checked by
    /// [`requested_version`]): the client capabilities are required, the log level must be a
    /// known level when present.
    pub(crate) fn parse(method: &str, params: &Map<String, Value>) -> Result<Self, RpcError> {
        let meta = meta_of(params).ok_or_else(|| missing_meta(method))?;
        let client_capabilities = meta
            .get(META_CLIENT_CAPABILITIES)
            .and_then(Value::as_object)
            .cloned()
            .ok_or_else(|| missing_meta(method))?;
        let log_level = match meta.get(META_LOG_LEVEL) {
            None | Some(Value::Null) => None,
            Some(level) => Some(level.as_str().and_then(logging::rank).ok_or_else(|| {
                RpcError::invalid_params(format!(
                    "_meta[\"{META_LOG_LEVEL}\"] must be one of {}",
                    logging::LEVELS.join(", ")
                ))
            })?),
        };
        Ok(Self { client_capabilities, log_level })
    }

    /// Whether the client declared the capability `name` (an object) for this request.
    pub(crate) fn declares(&self, name: &str) -> bool {
        self.client_capabilities.get(name).is_some_and(Value::is_object)
    }

    /// Whether the client accepts form-mode elicitation: `elicitation: {}` (form only) or
    /// `elicitation: {form: {}, ...}`.
    pub(crate) fn declares_form_elicitation(&self) -> bool {
        self.client_capabilities
            .get("elicitation")
            .and_then(Value::as_object)
            .is_some_and(|elicitation| elicitation.is_empty() || elicitation.contains_key("form"))
    }
}

/// Marks a modern result: `resultType: "complete"` unless it already has a type, and the
/// server's identity in `_meta["io.modelcontextprotocol/serverInfo"]`.
pub(crate) fn complete(mut result: Value) -> Value {
    if let Some(object) = result.as_object_mut() {
        object.entry("resultType").or_insert_with(|| "complete".into());
        let meta = object.entry("_meta").or_insert_with(|| Value::Object(Map::new()));
        if let Some(meta) = meta.as_object_mut() {
            meta.entry(META_SERVER_INFO).or_insert_with(lifecycle::server_info);
        }
    }
    result
}

/// [`complete`] plus the cache hints of a `CacheableResult` (`ttlMs`, `cacheScope`).
pub(crate) fn cacheable(result: Value) -> Value {
    let mut result = complete(result);
    if let Some(object) = result.as_object_mut() {
        object.insert("ttlMs".into(), TTL_MS.into());
        object.insert("cacheScope".into(), CACHE_SCOPE.into());
    }
    result
}

/// `server/discover` → the `DiscoverResult`.
pub(crate) fn discover(options: &super::options::Options) -> Value {
    cacheable(json!({
        "supportedVersions": supported_versions(),
        "capabilities": lifecycle::capabilities(options),
        "instructions": lifecycle::INSTRUCTIONS,
    }))
}

/// The `requestState` of an MRTR round of `tool` asking for input `key`: names the tool and the
/// input and binds both to the call's arguments (64-bit FNV-1a of their canonical JSON), so a
/// retry is recognised without any server-side state.
pub(crate) fn request_state(tool: &str, key: &str, arguments: &Map<String, Value>) -> String {
    let mut text = String::new();
    canonical_json(&Value::Object(arguments.clone()), &mut text);
    let digest = text.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    format!("mrtr1:{tool}:{key}:{digest:016x}")
}

/// JSON text with object keys sorted at every level (independent of map ordering).
fn canonical_json(value: &Value, out: &mut String) {
    match value {
        Value::Object(object) => {
            let mut keys: Vec<&String> = object.keys().collect();
            keys.sort_unstable();
            out.push('{');
            for (index, key) in keys.into_iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                canonical_json(&object[key.as_str()], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                canonical_json(item, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

/// The notifications one `subscriptions/listen` stream asked for and the server honours.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Filter {
    tools: bool,
    resources: bool,
    prompts: bool,
    /// Readable resource uris (unknown ones are not honoured).
    uris: Vec<String>,
}

impl Filter {
    /// Reads `params.notifications` (a `SubscriptionFilter`), keeping what is honoured.
    fn parse(params: &Map<String, Value>) -> Result<Self, RpcError> {
        let filter = params.get("notifications").and_then(Value::as_object).ok_or_else(|| {
            RpcError::invalid_params("subscriptions/listen needs an object `notifications`")
        })?;
        let flag = |name: &str| match filter.get(name) {
            None | Some(Value::Null) => Ok(false),
            Some(Value::Bool(flag)) => Ok(*flag),
            Some(_) => Err(RpcError::invalid_params(format!("notifications.{name} must be a boolean"))),
        };
        let uris = match filter.get("resourceSubscriptions") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(uris)) => {
                let mut honoured = Vec::new();
                for uri in uris {
                    let uri = uri.as_str().ok_or_else(|| {
                        RpcError::invalid_params("notifications.resourceSubscriptions must hold strings")
                    })?;
                    if resources::exists(uri) && !honoured.iter().any(|known| known == uri) {
                        honoured.push(uri.to_owned());
                    }
                }
                honoured
            }
            Some(_) => {
                return Err(RpcError::invalid_params("notifications.resourceSubscriptions must be an array"));
            }
        };
        Ok(Self {
            tools: flag("toolsListChanged")?,
            resources: flag("resourcesListChanged")?,
            prompts: flag("promptsListChanged")?,
            uris,
        })
    }

    /// The honoured subset, as a `SubscriptionFilter`.
    fn to_value(&self) -> Value {
        let mut filter = Map::new();
        for (name, on) in [
            ("toolsListChanged", self.tools),
            ("resourcesListChanged", self.resources),
            ("promptsListChanged", self.prompts),
        ] {
            if on {
                filter.insert(name.into(), true.into());
            }
        }
        if !self.uris.is_empty() {
            filter.insert("resourceSubscriptions".into(), json!(self.uris));
        }
        Value::Object(filter)
    }
}

/// One open `subscriptions/listen` stream.
#[derive(Debug)]
struct Listener {
    /// The listen request's id: the stream's `subscriptionId`.
    id: Value,
    filter: Filter,
    /// Where its notifications go (stdout, or the listen request's HTTP response stream).
    outlet: Outlet,
}

/// The open `subscriptions/listen` streams, in the order they were opened.
///
/// A stream is never answered: it stays open until `notifications/cancelled` names its id (or
/// the session ends; over HTTP, until its client closes it).
#[derive(Debug, Default)]
pub(crate) struct Listeners {
    open: Mutex<Vec<Listener>>,
}

impl Listeners {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Listener>> {
        self.open.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// `subscriptions/listen {notifications}`: opens a stream sending to `outlet` and sends
    /// (through `send`) its `notifications/subscriptions/acknowledged` with the honoured filter,
    /// before any other notification of the stream can be sent.
    pub(crate) fn listen(
        &self,
        id: &Value,
        params: &Map<String, Value>,
        outlet: Outlet,
        send: impl Fn(&Outlet, &Value),
    ) -> Result<(), RpcError> {
        let filter = Filter::parse(params)?;
        let mut open = self.lock();
        // Over HTTP every stream is its own client's: two clients may well pick the same id.
        let same_client = |other: &Outlet| matches!((other, &outlet), (Outlet::Session, Outlet::Session));
        if open.iter().any(|listener| listener.id == *id && same_client(&listener.outlet)) {
            return Err(RpcError::new(
                INVALID_REQUEST,
                format!("Invalid Request: subscription {id} is already open"),
            ));
        }
        send(
            &outlet,
            &super::jsonrpc::notification(
                "notifications/subscriptions/acknowledged",
                json!({ "notifications": filter.to_value(), "_meta": { META_SUBSCRIPTION_ID: id } }),
            ),
        );
        open.push(Listener { id: id.clone(), filter, outlet });
        Ok(())
    }

    /// Closes the stream opened by request `id`, if any, returning where it was sending. With
    /// `on`, only a stream sending to that HTTP exchange (another client may use the same id).
    pub(crate) fn cancel(&self, id: &Value, on: Option<&Arc<Exchange>>) -> Vec<Outlet> {
        let mut open = self.lock();
        let mut closed = Vec::new();
        open.retain(|listener| {
            let ours = match (on, listener.outlet.stream()) {
                (None, _) => true,
                (Some(exchange), Some(stream)) => Arc::ptr_eq(exchange, stream),
                (Some(_), None) => false,
            };
            let keep = listener.id != *id || !ours;
            if !keep {
                closed.push(listener.outlet.clone());
            }
            keep
        });
        closed
    }

    /// Sends the list-changed notifications (tools, resources, prompts) and one
    /// `notifications/resources/updated` per subscribed uri to every stream that asked for them
    /// (`send` gets the stream's outlet).
    pub(crate) fn notify_changes(&self, send: impl Fn(&Outlet, &Value)) {
        for listener in self.lock().iter() {
            let meta = json!({ META_SUBSCRIPTION_ID: listener.id });
            let filter = &listener.filter;
            for (method, on) in [
                ("notifications/tools/list_changed", filter.tools),
                ("notifications/resources/list_changed", filter.resources),
                ("notifications/prompts/list_changed", filter.prompts),
            ] {
                if on {
                    send(&listener.outlet, &super::jsonrpc::notification(method, json!({ "_meta": meta })));
                }
            }
            for uri in &filter.uris {
                send(
                    &listener.outlet,
                    &super::jsonrpc::notification(
                        "notifications/resources/updated",
                        json!({ "uri": uri, "_meta": meta }),
                    ),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;

    use super::*;
    use crate::jsonrpc::INVALID_PARAMS;

    fn object(value: Value) -> Map<String, Value> {
        value.as_object().cloned().expect("object")
    }

    #[test]
    fn reads_the_requested_version() {
        assert_eq!(requested_version(&Map::new()), Ok(None));
        assert_eq!(requested_version(&object(json!({"_meta": {"progressToken": 1}}))), Ok(None));
        let modern = object(json!({"_meta": {META_PROTOCOL_VERSION: "2026-07-28"}}));
        assert_eq!(requested_version(&modern), Ok(Some("2026-07-28")));
        for requested in ["1900-01-01", "2025-11-25"] {
            let error = requested_version(&object(json!({"_meta": {META_PROTOCOL_VERSION: requested}})))
                .expect_err("unsupported");
            assert_eq!(error.code, UNSUPPORTED_PROTOCOL_VERSION);
            assert_eq!(
                error.data,
                Some(json!({
                    "supported": ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"],
                    "requested": requested,
                }))
            );
        }
        let error = requested_version(&object(json!({"_meta": {META_PROTOCOL_VERSION: 2026}})));
        assert_eq!(error.map_err(|error| error.code), Err(INVALID_PARAMS));
    }

    #[test]
    fn validates_the_rest_of_meta() {
        let parse = |meta: Value| RequestMeta::parse("tools/list", &object(json!({"_meta": meta})));
        assert_eq!(parse(json!({})).map_err(|error| error.code), Err(INVALID_PARAMS));
        assert_eq!(
            parse(json!({META_CLIENT_CAPABILITIES: []})).map_err(|error| error.code),
            Err(INVALID_PARAMS)
        );
        let meta = parse(json!({META_CLIENT_CAPABILITIES: {"roots": {}, "elicitation": {}}})).expect("meta");
        assert!(meta.declares("roots") && !meta.declares("sampling"));
        assert!(meta.declares_form_elicitation());
        assert_eq!(meta.log_level, None);
        let meta =
            parse(json!({META_CLIENT_CAPABILITIES: {"elicitation": {"url": {}}}, META_LOG_LEVEL: "error"}))
                .expect("meta");
        assert!(!meta.declares_form_elicitation());
        assert_eq!(meta.log_level, logging::rank("error"));
        let loud = parse(json!({META_CLIENT_CAPABILITIES: {}, META_LOG_LEVEL: "loud"}));
        assert_eq!(loud.map_err(|error| error.code), Err(INVALID_PARAMS));
    }

    #[test]
    fn decorates_results() {
        let listed = cacheable(json!({"tools": []}));
        assert_eq!(listed["resultType"], "complete");
        assert_eq!(listed["ttlMs"], TTL_MS);
        assert_eq!(listed["cacheScope"], "public");
        assert_eq!(listed["_meta"][META_SERVER_INFO]["name"], lifecycle::SERVER_NAME);
        let asked = complete(json!({"resultType": "input_required", "requestState": "x"}));
        assert_eq!(asked["resultType"], "input_required");
        let options = super::super::options::Options::default();
        let discovered = discover(&options);
        assert_eq!(discovered["capabilities"], lifecycle::capabilities(&options));
        assert_eq!(discovered["supportedVersions"][0], "2026-07-28");
    }

    #[test]
    fn request_state_depends_on_arguments_not_key_order() {
        let a = object(json!({"x": 1, "y": {"b": [1, "two"], "a": null}}));
        let b = object(json!({"y": {"a": null, "b": [1, "two"]}, "x": 1}));
        assert_eq!(request_state("elicit", "elicitation", &a), request_state("elicit", "elicitation", &b));
        assert_ne!(
            request_state("elicit", "elicitation", &a),
            request_state("elicit", "elicitation", &Map::new())
        );
        assert!(request_state("sample", "sampling", &a).starts_with("mrtr1:sample:sampling:"));
        let mut text = String::new();
        canonical_json(&Value::Object(b), &mut text);
        assert_eq!(text, r#"{"x":1,"y":{"a":null,"b":[1,"two"]}}"#);
    }

    #[test]
    fn http_clients_may_listen_with_the_same_id() {
        let listeners = Listeners::default();
        let send = |_: &Outlet, _: &Value| {};
        let params = object(json!({"notifications": {"toolsListChanged": true}}));
        let (first, second) = (Exchange::new(), Exchange::new());
        assert_eq!(listeners.listen(&json!(1), &params, Outlet::Stream(Arc::clone(&first)), send), Ok(()));
        assert_eq!(listeners.listen(&json!(1), &params, Outlet::Stream(Arc::clone(&second)), send), Ok(()));
        // The first client going away closes its own stream only.
        assert_eq!(listeners.cancel(&json!(1), Some(&first)).len(), 1);
        assert_eq!(listeners.cancel(&json!(1), Some(&first)).len(), 0);
        assert_eq!(listeners.cancel(&json!(1), Some(&second)).len(), 1);
    }

    #[test]
    fn listeners_acknowledge_filter_and_cancel() {
        let listeners = Listeners::default();
        let sent = RefCell::new(Vec::new());
        let send = |_: &Outlet, message: &Value| sent.borrow_mut().push(message.clone());
        let params = object(json!({"notifications": {
            "toolsListChanged": true, "promptsListChanged": false,
            "resourceSubscriptions": ["demo://readme", "demo://nope", "demo://readme"],
        }}));
        assert_eq!(listeners.listen(&json!("l1"), &params, Outlet::Session, send), Ok(()));
        assert_eq!(
            sent.borrow()[0]["params"],
            json!({
                "notifications": {"toolsListChanged": true, "resourceSubscriptions": ["demo://readme"]},
                "_meta": {META_SUBSCRIPTION_ID: "l1"},
            })
        );
        let again =
            listeners.listen(&json!("l1"), &params, Outlet::Session, send).map_err(|error| error.code);
        assert_eq!(again, Err(INVALID_REQUEST));
        let bad = object(json!({"notifications": {"toolsListChanged": "yes"}}));
        let bad = listeners.listen(&json!(2), &bad, Outlet::Session, send).map_err(|error| error.code);
        assert_eq!(bad, Err(INVALID_PARAMS));
        sent.borrow_mut().clear();
        listeners.notify_changes(send);
        let methods: Vec<Value> = sent.borrow().iter().map(|message| message["method"].clone()).collect();
        assert_eq!(
            methods,
            [json!("notifications/tools/list_changed"), json!("notifications/resources/updated")]
        );
        assert_eq!(listeners.cancel(&json!("l1"), None).len(), 1);
        assert!(listeners.cancel(&json!("l1"), None).is_empty());
        sent.borrow_mut().clear();
        listeners.notify_changes(send);
        assert!(sent.borrow().is_empty());
    }
}
