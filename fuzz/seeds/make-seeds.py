#!/usr/bin/env python3
"""Writes the seed corpus: fuzz/seeds/<target>/<name>.

The feed, sse, http_session and auth targets decode their input with `arbitrary` (1.5, pinned by
fuzz/Cargo.lock): enums are a u32 (little-endian; variant = value * count >> 32), integers are
little-endian, bools one byte (& 1), Option a bool then the value, a Vec that is not the last
field a 0x01 byte before each element and 0x00 after the last, and the last field (`&[u8]`) the
rest of the input verbatim. So a seed is a short script header followed by real protocol bytes.
Check a seed with `cargo fuzz fmt <target> fuzz/seeds/<target>/<name>`.

The model target takes one selector byte and then JSON text.

Run from anywhere: python3 fuzz/seeds/make-seeds.py
"""
import json
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


def variant(index, count):
    """The u32 that the derive maps to variant `index` of `count`."""
    value = -(-(index << 32) // count)  # ceil(index * 2^32 / count)
    assert (value * count) >> 32 == index
    return struct.pack("<I", value)


def u8(v):
    return struct.pack("<B", v)


def u16(v):
    return struct.pack("<H", v)


def u32(v):
    return struct.pack("<I", v)


def boolean(b):
    return b"\x01" if b else b"\x00"


def option(value_bytes):
    return b"\x00" if value_bytes is None else b"\x01" + value_bytes


def vec(items):
    return b"".join(b"\x01" + item for item in items) + b"\x00"


def line(message):
    return json.dumps(message, separators=(",", ":")).encode() + b"\n"


def write(target, name, data):
    directory = os.path.join(HERE, target)
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, name), "wb") as f:
        f.write(data)


CAPS = {
    "tools": {"listChanged": True},
    "resources": {"subscribe": True, "listChanged": True},
    "prompts": {"listChanged": True},
    "logging": {},
    "completions": {},
}
INIT_RESULT = {
    "protocolVersion": "2025-11-25",
    "capabilities": CAPS,
    "serverInfo": {"name": "seed-server", "version": "1.0.0"},
    "instructions": "Use the tools.",
}
DISCOVER_RESULT = {
    "resultType": "complete",
    "supportedVersions": ["2026-07-28", "2025-11-25"],
    "capabilities": CAPS,
    "ttlMs": 60000,
    "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "seed-modern", "version": "1.0"}},
}
TOOLS = {
    "tools": [
        {"name": "echo", "description": "Echoes", "inputSchema": {"type": "object",
         "properties": {"text": {"type": "string"}}}},
        {"name": "add", "inputSchema": {"type": "object"}, "outputSchema": {"type": "object"},
         "annotations": {"readOnlyHint": True}},
    ],
    "nextCursor": "page-2",
}
CALL_RESULT = {
    "content": [
        {"type": "text", "text": "hello"},
        {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
        {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "a"}},
        {"type": "resource_link", "uri": "file:///b", "name": "b"},
    ],
    "structuredContent": {"sum": 3},
    "isError": False,
}

# ----- feed -----------------------------------------------------------------------------------
FEED_STARTS = 5  # Fresh, AwaitingInitialize, AwaitingInitializeAfterProbe, ReadyLegacy, ReadyModern
FEED_OPS = 15


def feed_op(index, *fields):
    return variant(index, FEED_OPS) + b"".join(fields)


def feed_knobs(max_message_size=0, keep_alive=0, client_caps=True, listen=True):
    return u16(max_message_size) + u8(keep_alive) + boolean(client_caps) + boolean(listen)


def opts(timeout_ms=None, max_total_ms=None, progress=False, reset=None, meta=False):
    return (option(None if timeout_ms is None else u16(timeout_ms))
            + option(None if max_total_ms is None else u32(max_total_ms))
            + boolean(progress)
            + option(None if reset is None else boolean(reset))
            + boolean(meta))


def Feed(n): return feed_op(0, u16(n))
def FeedMessage(n): return feed_op(1, u16(n))
def Advance(ms): return feed_op(2, u32(ms))
def ToDeadline(): return feed_op(3)
def Reply(to, error, kind, arg, split): return feed_op(4, u8(to), boolean(error), u8(kind), u8(arg), u8(split))
def Notify(to, kind, arg, split): return feed_op(5, u8(to), u8(kind), u8(arg), u8(split))
def ServerRequest(id, kind, split): return feed_op(6, u8(id), u8(kind), u8(split))
def Send(method, o): return feed_op(7, u8(method), o)
def SendRaw(method, n, progress=False): return feed_op(8, u8(method), u16(n), boolean(progress))
def SendMethod(n, progress=False): return feed_op(9, u8(n), boolean(progress))
def Cancel(pick): return feed_op(10, u8(pick))
def Respond(pick, ok): return feed_op(11, u8(pick), boolean(ok))
def Close(): return feed_op(13)
def Eof(): return feed_op(14)


def feed_seed(start, knobs, ops, pool):
    return variant(start, FEED_STARTS) + knobs + vec(ops) + pool


# 1. The legacy handshake, then tools/list and its answer, from raw bytes.
init = line({"jsonrpc": "2.0", "id": 0, "result": INIT_RESULT})
tools = line({"jsonrpc": "2.0", "id": 1, "result": TOOLS})
write("feed", "legacy-handshake-tools-list",
      feed_seed(1, feed_knobs(), [Feed(len(init)), Send(0, opts())], init + tools))
# 2. The same bytes one byte at a time for the first 40, CRLF line ends, then the rest.
crlf = init.replace(b"\n", b"\r\n")
write("feed", "legacy-handshake-bytewise",
      feed_seed(1, feed_knobs(), [Feed(1)] * 40, crlf + tools.replace(b"\n", b"\r\n")))
# 3. The dual-era probe answered by a modern server, a call with progress and a result.
discover = line({"jsonrpc": "2.0", "id": 0, "result": DISCOVER_RESULT})
progress = line({"jsonrpc": "2.0", "method": "notifications/progress",
                 "params": {"progressToken": 2, "progress": 1, "total": 2}})
call = line({"jsonrpc": "2.0", "id": 2, "result": CALL_RESULT})
write("feed", "modern-discover-call",
      feed_seed(0, feed_knobs(), [Feed(len(discover)), Send(1, opts(progress=True)), Feed(len(progress))],
                discover + progress + call))
# 4. Ready legacy: server requests, a batch, notifications, a cancel, time, EOF.
batch = (b'[{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}},'
         b'{"jsonrpc":"2.0","id":"s1","method":"roots/list"},{"jsonrpc":"2.0","id":7,"result":{}}]\n')
garbage = b'{"jsonrpc":"2.0","id":0,"result":}\nnot json\n\n{"jsonrpc":"1.0","method":"x"}\n'
write("feed", "legacy-server-requests-batch",
      feed_seed(3, feed_knobs(keep_alive=5), [
          ServerRequest(3, 1, 10), Respond(0, True), ServerRequest(0x81, 2, 200), Send(1, opts(timeout_ms=500)),
          Feed(len(batch)), Respond(1, False), Advance(600), Send(3, opts()), Cancel(0),
          Notify(0, 0, 1, 5), Advance(10_000), ToDeadline(), Eof()], batch + garbage))
# 5. Ready modern: a multi round-trip tools/call (input_required, answered), subscriptions.
write("feed", "modern-input-required",
      feed_seed(4, feed_knobs(), [
          Send(1, opts(progress=True)), Reply(0, False, 6, 3, 40), Respond(0, True), Respond(0, True),
          Reply(0, False, 5, 0, 0), Send(5, opts()), Notify(1, 2, 0, 9), Reply(0, True, 1, 4, 3),
          Send(7, opts()), Send(10, opts()), Reply(0, False, 3, 5, 17), Close()], b""))
# 6. A small maximum message size: oversized lines, in chunks, and a partial line at EOF.
big = line({"jsonrpc": "2.0", "method": "notifications/message",
            "params": {"level": "info", "data": "x" * 300}})
write("feed", "oversized-small-max",
      feed_seed(3, feed_knobs(max_message_size=128), [Feed(100), Feed(100), FeedMessage(200), Feed(50)],
                big + big + b'{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}'))
# 7. The probe refused, then initialize answered; raw params sent by the application.
refused = line({"jsonrpc": "2.0", "id": 0, "error": {"code": -32601, "message": "Method not found"}})
init1 = line({"jsonrpc": "2.0", "id": 1, "result": INIT_RESULT})
write("feed", "probe-refused-then-initialize",
      feed_seed(0, feed_knobs(), [Feed(len(refused)), Feed(len(init1)), SendRaw(15, 9), SendMethod(10, True), Advance(30_000)],
                refused + init1 + b'{"a":[1]}' + b'vendor/\x01"\\x'))

# ----- sse ------------------------------------------------------------------------------------
def sse_seed(max_size, splits, stream):
    return u16(max_size) + vec([u16(s) for s in splits]) + stream


stream = (b"\xef\xbb\xbf: comment\r\n"
          b"event: message\r\nid: 1\r\nretry: 3000\r\n"
          + b"data: " + json.dumps({"jsonrpc": "2.0", "id": 1, "result": TOOLS}).encode() + b"\r\n\r\n"
          b"data: line one\ndata: line two\n\n"
          b"id\rdata:no space\r\r"
          b"event: endpoint\ndata: /messages?sessionId=abc\n\n"
          b"data: unterminated")
write("sse", "mixed-line-ends", sse_seed(0, [5, 17, 40, 41, 200], stream))
write("sse", "spec-examples", sse_seed(0, [3], b": test stream\n\ndata: first event\nid: 1\n\n"
                                          b"data:second event\nid\n\ndata:  third event\n"
                                          b"data\n\ndata\ndata\n\ndata:\n"))
write("sse", "too-large", sse_seed(32, [10, 33], b"data: " + b"y" * 40 + b"\nid: 7\nretry: 10\n\n"
                                   b"data: small\n\n"))
write("sse", "init-response", sse_seed(0, [], b"event: message\nid: ev-1\ndata: "
                                      + json.dumps({"jsonrpc": "2.0", "id": 0, "result": INIT_RESULT}).encode()
                                      + b"\n\n"))

# ----- http_session ---------------------------------------------------------------------------
HTTP_OPS = 14
VERSIONS = {"legacy": 0, "dual": 1, "modern": 2, "v2024": 3}


def http_setup(versions, standalone=True, legacy_fallback=True, max_message_size=0, client_caps=True,
               max_reconnects=2):
    return (variant(VERSIONS[versions], 4) + boolean(standalone) + boolean(legacy_fallback)
            + u16(max_message_size) + boolean(client_caps) + u8(max_reconnects))


def http_op(index, *fields):
    return variant(index, HTTP_OPS) + b"".join(fields)


STATUS = {200: 0, 202: 1, 400: 2, 404: 3, 405: 4, 500: 5}


def Head(pick, status, content_type_variant, session_variant):
    return http_op(0, u8(pick), variant(STATUS[status], 7), variant(content_type_variant, 6),
                   variant(session_variant, 4))
def GoodHead(pick, sse, session): return http_op(1, u8(pick), boolean(sse), boolean(session))
def Body(pick, n): return http_op(2, u8(pick), u16(n))
def HReply(pick, sse, error, kind, arg, event_id=None, retry=None):
    return http_op(3, u8(pick), boolean(sse), boolean(error), u8(kind), u8(arg),
                   option(None if event_id is None else u8(event_id)),
                   option(None if retry is None else u16(retry)))
def ServerMessage(pick, request, kind, arg): return http_op(4, u8(pick), boolean(request), u8(kind), u8(arg))
def Endpoint(pick, url): return http_op(5, u8(pick), u8(url))
def End(pick): return http_op(6, u8(pick))
def Error(pick): return http_op(7, u8(pick))
def HAdvance(ms): return http_op(8, u32(ms))
def HToDeadline(): return http_op(9)
def HSend(method, timeout_ms=None): return http_op(10, u8(method), option(None if timeout_ms is None else u16(timeout_ms)))
def HCancel(pick): return http_op(11, u8(pick))
def HRespond(pick, ok): return http_op(12, u8(pick), boolean(ok))
def HClose(): return http_op(13)


def http_seed(setup, ops, pool):
    return setup + vec(ops) + pool


init_json = json.dumps({"jsonrpc": "2.0", "id": 0, "result": INIT_RESULT}).encode()
tools_sse = (b"id: e1\nretry: 500\nevent: message\ndata: "
             + json.dumps({"jsonrpc": "2.0", "id": 1, "result": TOOLS}).encode() + b"\n\n")
# 1. Streamable HTTP, legacy era: initialize as JSON with a session id, the notice, tools/list as SSE.
write("http_session", "streamable-json-then-sse",
      http_seed(http_setup("legacy", standalone=False), [
          GoodHead(0, False, True), Body(0, len(init_json)), End(0), GoodHead(0, False, False), End(0),
          HSend(0), GoodHead(0, True, False), Body(0, len(tools_sse)), End(0)], init_json + tools_sse))
# 2. Only the pool: the initialize response as an SSE stream (answers the oldest exchange).
write("http_session", "pool-initialize-sse",
      http_seed(http_setup("legacy"), [], b"event: message\nid: 1\ndata: " + init_json + b"\n\n"))
# 3. Modern: discover as JSON, tools/call answered with input_required over SSE, then a result.
write("http_session", "modern-discover-input-required",
      http_seed(http_setup("modern"), [
          GoodHead(0, False, False), HReply(0, False, False, 3, 5), End(0), HSend(1), GoodHead(0, True, False),
          HReply(0, True, False, 6, 1, event_id=1), End(0), HRespond(0, True), GoodHead(0, True, False),
          HReply(0, True, False, 5, 0), End(0), HSend(2), GoodHead(0, False, False), HReply(0, False, True, 2, 0),
          End(0)], b""))
# 4. Fallback to HTTP+SSE: initialize refused with 405, the GET stream names the endpoint.
write("http_session", "legacy-fallback-endpoint",
      http_seed(http_setup("v2024"), [
          Head(0, 405, 5, 0), End(0), GoodHead(0, True, False), Endpoint(0, 0), GoodHead(1, False, False),
          End(1), ServerMessage(0, False, 3, 0), HReply(0, True, False, 2, 0)], b""))
# 5. Session expiry (404) and re-initialization, a standalone GET stream that ends early, timeouts.
write("http_session", "session-expired-and-resume",
      http_seed(http_setup("legacy"), [
          GoodHead(0, False, True), HReply(0, False, False, 2, 3), End(0), HSend(0), Head(1, 404, 4, 0), End(1),
          GoodHead(0, True, False), ServerMessage(0, True, 1, 2), End(0), HAdvance(2000), HToDeadline(),
          HAdvance(60_000)], b""))

# ----- model ----------------------------------------------------------------------------------
# The selector byte: index into the type list of fuzz_targets/model.rs (modulo its length), or
# b'E' (ErrorObject), b'D' (DiscoverResult), b'B' (ContentBlock) for the arms with helpers.
MODEL = {
    "initialize-result": (0, {"jsonrpc": None, **INIT_RESULT}),
    "call-tool-result": (1, CALL_RESULT),
    "list-tools-result": (2, TOOLS),
    "read-resource-result": (3, {"contents": [{"uri": "file:///a", "mimeType": "text/plain", "text": "a"},
                                              {"uri": "file:///b", "blob": "AAEC"}, {"uri": "file:///c"}]}),
    "get-prompt-result": (4, {"description": "d", "messages": [
        {"role": "user", "content": {"type": "text", "text": "hi"}},
        {"role": "assistant", "content": {"type": "audio", "data": "AA==", "mimeType": "audio/wav"}}]}),
    "server-capabilities": (10, {**CAPS, "experimental": {"x": {}}, "vendor": {"y": 1}}),
    "create-message-params": (13, {"messages": [{"role": "user", "content": {"type": "text", "text": "q"}}],
                                   "maxTokens": 100, "temperature": 0.7, "stopSequences": ["\n"],
                                   "modelPreferences": {"hints": [{"name": "claude"}], "speedPriority": 0.5}}),
    "elicit-params": (15, {"message": "Name?", "requestedSchema": {"type": "object", "properties": {
        "name": {"type": "string"}}, "required": ["name"]}}),
    "progress-params": (18, {"progressToken": "t1", "progress": 0.5, "total": 1.0, "message": "half"}),
}
for name, (selector, value) in MODEL.items():
    value = {k: v for k, v in value.items() if v is not None}
    write("model", name, bytes([selector]) + json.dumps(value).encode())
write("model", "error-unsupported-version", b"E" + json.dumps(
    {"code": -32022, "message": "Unsupported protocol version",
     "data": {"supported": ["2026-07-28"], "requested": "1900-01-01"}}).encode())
write("model", "discover-result", b"D" + json.dumps(DISCOVER_RESULT).encode())
write("model", "content-block-unknown", b"B" + json.dumps(
    {"type": "vendor_block", "payload": [1, 2.5, None, True]}).encode())

# ----- auth -----------------------------------------------------------------------------------
# Setup: server, grant, dpop, wall clock, random, scope, max_step_ups, authorization_timeout,
# restore, versions, standalone_stream, legacy_fallback; then `settle`, the ops, the pool.
SERVERS = {"https": 0, "root": 5, "loopback": 6, "insecure": 7}  # a byte, modulo 8
GRANTS = 7
CLIENT_AUTHS = {"basic": 0, "post": 1, "metadata": 2, "private_key_jwt": 3, "no_key": 4}
DPOP = {"auto": 0, "required": 1, "disabled": 2}


def grant(kind, arg=None):
    if kind == "code_register":
        return variant(0, GRANTS)
    if kind == "code_public":
        return variant(1, GRANTS)
    if kind == "code_confidential":
        return variant(2, GRANTS)
    if kind == "code_cimd":
        return variant(3, GRANTS)
    if kind == "client_credentials":
        return variant(4, GRANTS) + variant(CLIENT_AUTHS[arg], 5)
    if kind == "jwt_bearer":
        return variant(5, GRANTS) + boolean(arg)
    return variant(6, GRANTS) + boolean(arg)  # identity_assertion


def restore(refresh, expires_in=None, client=False):
    return boolean(refresh) + option(None if expires_in is None else struct.pack("<h", expires_in)) + boolean(client)


def auth_setup(grant_bytes, server="https", dpop="disabled", wall_clock=0, seed=7, scope=None, max_step_ups=2,
               authorization_timeout=599, restored=None, versions="legacy", standalone=False, legacy_fallback=False):
    return (u8(SERVERS[server]) + grant_bytes + variant(DPOP[dpop], 3) + variant(wall_clock, 4) + u16(seed)
            + option(None if scope is None else u8(scope)) + u8(max_step_ups) + u16(authorization_timeout)
            + option(restored) + variant({"legacy": 0, "dual": 1, "modern": 2}[versions], 3)
            + boolean(standalone) + boolean(legacy_fallback))


AUTH_OPS = 20
NONCES = {None: 0, "n1": 1, "n2": 2, "fresh": 3, "invalid": 4}
AUTH_STATUS = {200: 0, 201: 1, 400: 2, 401: 3, 404: 4, 500: 5}
DOCS = {"prm": 0, "as": 1, "registration": 2, "token": 3, "id_jag": 4, "error": 5, "junk": 6}


def aop(index, *fields):
    return variant(index, AUTH_OPS) + b"".join(fields)


def nonce(n):
    return variant(NONCES[n], 6)


def challenge_status(status):
    return {401: variant(0, 3), 403: variant(1, 3)}.get(status) or variant(2, 3) + u16(status)


def www(listed):
    return option(None if listed is None else variant(0, 2) + u8(listed))


def auth_status(status):
    """`None`: the status the request asks for (200, 201 to a registration)."""
    if status is None:
        return option(None)
    return option(variant(AUTH_STATUS[status], 7) if status in AUTH_STATUS else variant(6, 7) + u16(status))


def Challenge(pick, status, listed=None, listed2=None, n=None, open_=False):
    return aop(0, u8(pick), challenge_status(status), www(listed), www(listed2), nonce(n), boolean(open_))
def Answer(pick, sse=False, kind=0, arg=0, n=None, session=True, open_=False):
    return aop(1, u8(pick), boolean(sse), u8(kind), u8(arg), nonce(n), boolean(session), boolean(open_))
def AEndpoint(pick, url=0): return aop(2, u8(pick), u8(url))
def AuthReply(status=None, doc=None, a=0, b=0, c=0, n=None, json_=True):
    """`doc=None`: the document the request asks for; pieces all zero: `None`."""
    pieces = None if (a, b, c) == (0, 0, 0) else u8(a) + u8(b) + u8(c)
    return aop(6, auth_status(status), option(None if doc is None else variant(DOCS[doc], 7)), option(pieces),
               nonce(n), boolean(json_))
def AuthError(): return aop(10)
def Redirect(state=0, code=0, iss=1, error=0): return aop(11, u8(state), u8(code), u8(iss), u8(error))
def AAdvance(ms): return aop(14, u32(ms))
def AToDeadline(): return aop(15)
def ASend(method, timeout_ms=None): return aop(16, u8(method), option(None if timeout_ms is None else u16(timeout_ms)))
def ACredentials(): return aop(18)
def AClose(): return aop(19)


def auth_seed(setup, ops, settle=False, pool=b""):
    return setup + boolean(settle) + vec(ops) + pool


# AS metadata pieces (`c`): S256 in the low bits, ES256 DPoP algorithms at bit 2.
S256 = 0
DPOP_ES256 = 1 << 2
# Token pieces: `b` 0 Bearer, 4 DPoP; `c` 1 = expires in 3600 s, 8 = with a refresh token.
# 1. Authorization code, dynamic registration: resource metadata, server metadata, registration,
#    the user's redirect, the token; initialize sent again and answered, a call, a step-up.
write("auth", "code-dynamic-registration",
      auth_seed(auth_setup(grant("code_register")), [
          Challenge(0, 401, 0), AuthReply(c=1), AuthReply(c=S256), AuthReply(),
          Redirect(), AuthReply(c=1 | 8), Answer(0), Answer(0), ASend(1), Answer(0),
          ASend(0), Challenge(0, 403, 3), AuthReply(c=S256), Redirect(), AuthReply(c=1 | 8), Answer(0),
          ACredentials(), AClose()]))
# 2. Client credentials with private_key_jwt and DPoP: the AS asks for a nonce, then the MCP
#    server asks for its own.
write("auth", "client-credentials-dpop-nonces",
      auth_seed(auth_setup(grant("client_credentials", "private_key_jwt"), dpop="required"), [
          Challenge(0, 401, 0), AuthReply(c=4), AuthReply(c=DPOP_ES256),
          AuthReply(400, "error", a=1, n="n1"), AuthReply(b=4, c=1), Challenge(0, 401, 4, n="n2"),
          Answer(0, n="fresh"), Answer(0), ASend(0), Answer(0)], settle=True))
# 3. The JWT bearer grant, refused: the requests held fail, the next challenge fails at once.
write("auth", "jwt-bearer-refused",
      auth_seed(auth_setup(grant("jwt_bearer", True)), [
          Challenge(0, 401, 1), AuthReply(), AuthReply(), AuthReply(400, "error", a=0), ASend(0),
          Challenge(0, 401, 2), AAdvance(1000)], settle=True))
# 4. Enterprise-managed authorization: the ID-JAG from the identity provider, then the token.
write("auth", "identity-assertion",
      auth_seed(auth_setup(grant("identity_assertion", True), dpop="auto"), [
          Challenge(0, 401, 6), AuthReply(), AuthReply(c=(2 << 4)), AuthReply(), AuthReply(c=1), Answer(0),
          Answer(0)]))
# 5. Tokens restored from an earlier run, expiring: discovery first (without metadata), then the
#    refresh; the server refuses the new token, refreshed again.
write("auth", "restored-refresh-after-discovery",
      auth_seed(auth_setup(grant("code_public"), restored=restore(True, 10, True)), [
          AuthReply(), AuthReply(c=S256), AuthReply(c=1 | 8), Answer(0), Answer(0), ASend(2),
          Challenge(0, 401, 2), AuthReply(c=1), Answer(0), AAdvance(4_000_000)], settle=True))
# 6. The HTTP+SSE fallback: initialize refused with 405, the endpoint event, then a 401 on a
#    message posted to the endpoint: it waits for the token, and must go again once authorized.
write("auth", "legacy-endpoint-challenge",
      auth_seed(auth_setup(grant("client_credentials", "basic"), legacy_fallback=True), [
          Challenge(0, 405), AEndpoint(0), Challenge(1, 401, 0), AuthReply(), AuthReply(c=S256),
          AuthReply(c=1)], settle=True))
# 7. No metadata anywhere (the 2025-03-26 fallback endpoints), a forged redirect, then a timeout.
write("auth", "no-metadata-forged-redirect",
      auth_seed(auth_setup(grant("code_confidential"), authorization_timeout=30), [
          Challenge(0, 401), AuthReply(404), AuthReply(404), AuthReply(404), AuthReply(404),
          Redirect(state=2), ASend(0), AToDeadline(), AToDeadline()], settle=True))
