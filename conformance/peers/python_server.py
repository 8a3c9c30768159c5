#!/usr/bin/env python3
"""A peer MCP server built with the official Python SDK, for the client's interop tests.

Requires `mcp==2.3.0` (installed by `.ci/install-peers` into `.interop/py`). In mcp 2.x the
class formerly known as `FastMCP` is `mcp.server.mcpserver.MCPServer`
(`mcp.server.fastmcp` now raises ModuleNotFoundError on import).

Run (streamable HTTP on http://127.0.0.1:N/mcp):
    PYTHONPATH=.interop/py python3 conformance/peers/python_server.py --port N
Other modes:
    ... --transport stdio                      # newline-delimited JSON-RPC on stdin/stdout
    ... --transport sse --port N               # legacy HTTP+SSE: GET /sse, POST /messages/?session_id=...
    ... --port N --json-response               # streamable HTTP answering POSTs with application/json
    ... --port N --stateless                   # streamable HTTP without sessions
    ... --port N --path /other                 # endpoint path (default /mcp)
    ... --port 0                               # any free port; see the MCP_SERVER_URL line
In the HTTP modes the server prints one line on stdout once its socket is listening:
    MCP_SERVER_URL=http://127.0.0.1:N/mcp      (or .../sse in sse mode)

Features (so a client test-suite can exercise everything):
  tools     echo(message) -> "Echo: <message>"
            add(a, b) -> structured {"sum": a+b} (outputSchema published)
            long_running(steps, delay_ms) -> progress notifications (if the call carries a
                progressToken), then "done <steps>"
            log(message, level="info") -> notifications/message during the call, then "logged"
            sample(prompt, max_tokens=100) -> sampling/createMessage to the client, returns its text
            elicit(message) -> elicitation/create (form) to the client, returns
                structured {"action": ..., "content": ...}
            list_roots() -> roots/list to the client, returns structured {"uris": [...]}
            fail(message="...") -> tool error result (isError: true)
            notify_changes(standalone=False) -> notifications/tools/list_changed and
                notifications/resources/list_changed; on the tools/call response stream by
                default, on the standalone (GET) stream when standalone=true
            trace_context() -> "traceparent=<..> tracestate=<..>" from the request's _meta (SEP-414)
            chart() -> an MCP App tool (_meta.ui.resourceUri ui://charts/bar); plain_chart() ->
                one whose ui:// resource is plain text/html (a client must refuse it)
  resources demo://readme (static, text/plain); template demo://items/{id};
            ui://charts/bar (text/html;profile=mcp-app, _meta.ui csp and permissions);
            ui://charts/plain (text/html)
  prompts   greeting(name)
  logging   logging/setLevel is accepted (so the `logging` capability is advertised)

Server-to-client requests (sampling, elicitation, roots) are sent request-scoped, i.e. on the
tools/call POST's SSE response stream, and use the handshake-era wire (protocol <= 2025-11-25).
"""

import argparse
import sys
import warnings
from typing import Any

try:
    import anyio
    import mcp_types as types
    from mcp.server.lowlevel import NotificationOptions
    from mcp.server.mcpserver import Context, MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.shared.message import ServerMessageMetadata
    from pydantic import BaseModel
except ImportError as exc:  # pragma: no cover - environment problem
    sys.exit(
        f"python_server.py: cannot import the MCP Python SDK ({exc}).\n"
        "Install it with .ci/install-peers and run with PYTHONPATH=.interop/py"
    )

# Logging, sampling and roots are deprecated as of protocol 2026-07-28 and the SDK warns on each
# use; this server exists to exercise them against handshake-era clients.
warnings.filterwarnings("ignore", category=DeprecationWarning)
try:
    from mcp.shared.exceptions import MCPDeprecationWarning

    warnings.filterwarnings("ignore", category=MCPDeprecationWarning)
except ImportError:  # pragma: no cover
    pass


class AddResult(BaseModel):
    sum: float


class ElicitOutcome(BaseModel):
    action: str
    content: dict[str, Any] | None = None


class RootsOutcome(BaseModel):
    uris: list[str]


README_TEXT = "Demo server for MCP client interop tests (official Python SDK, MCPServer).\n"

ELICIT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Name", "description": "Your name"},
        "age": {"type": "integer", "title": "Age", "minimum": 0},
        "subscribe": {"type": "boolean", "title": "Subscribe", "default": False},
    },
    "required": ["name"],
}


def build_server(name: str = "python-interop-peer", log_level: str = "WARNING") -> MCPServer:
    mcp = MCPServer(
        name,
        version="1.0.0",
        instructions="Interop test peer built with the Python SDK.",
        log_level=log_level,  # type: ignore[arg-type]
    )

    # Advertise listChanged for tools/resources/prompts (handshake era). MCPServer has no knob
    # for it; the runner calls server.create_initialization_options() with no arguments.
    low = mcp._lowlevel_server
    orig_init_options = low.create_initialization_options

    def init_options_with_list_changed(notification_options=None, *args, **kwargs):
        if notification_options is None:
            notification_options = NotificationOptions(
                prompts_changed=True, resources_changed=True, tools_changed=True
            )
        return orig_init_options(notification_options, *args, **kwargs)

    low.create_initialization_options = init_options_with_list_changed  # type: ignore[method-assign]

    async def set_level(ctx: Any, params: types.SetLevelRequestParams) -> types.EmptyResult:
        return types.EmptyResult()

    low.add_request_handler("logging/setLevel", types.SetLevelRequestParams, set_level)

    # ---------------------------------------------------------------- tools
    @mcp.tool(description="Echo the message back, prefixed with 'Echo: '", structured_output=False)
    def echo(message: str) -> str:
        return f"Echo: {message}"

    @mcp.tool(description="Add two numbers; structured result {sum}")
    def add(a: float, b: float) -> AddResult:
        return AddResult(sum=a + b)

    @mcp.tool(
        description="Sleep delay_ms between steps, reporting progress after each step",
        structured_output=False,
    )
    async def long_running(steps: int, delay_ms: int, ctx: Context) -> str:
        for i in range(1, steps + 1):
            await anyio.sleep(delay_ms / 1000)
            await ctx.report_progress(i, steps, f"step {i}/{steps}")
        return f"done {steps}"

    @mcp.tool(description="Send a log notification (notifications/message) during the call", structured_output=False)
    async def log(message: str, ctx: Context, level: str = "info") -> str:
        await ctx.log(level, message, logger_name="python-peer")  # type: ignore[arg-type]
        return "logged"

    @mcp.tool(description="Ask the client to sample (sampling/createMessage); returns its text", structured_output=False)
    async def sample(prompt: str, ctx: Context, max_tokens: int = 100) -> str:
        result = await ctx.session.create_message(
            messages=[types.SamplingMessage(role="user", content=types.TextContent(type="text", text=prompt))],
            max_tokens=max_tokens,
            related_request_id=ctx.request_id,
        )
        content = result.content
        if isinstance(content, types.TextContent):
            return content.text
        return f"[{getattr(content, 'type', type(content).__name__)} content]"

    @mcp.tool(description="Ask the client for input (elicitation/create, form mode)")
    async def elicit(message: str, ctx: Context) -> ElicitOutcome:
        result = await ctx.session.elicit_form(message, ELICIT_SCHEMA, related_request_id=ctx.request_id)
        return ElicitOutcome(action=result.action, content=result.content)

    @mcp.tool(description="Ask the client for its roots (roots/list); returns their URIs")
    async def list_roots(ctx: Context) -> RootsOutcome:
        result = await ctx.session.send_request(
            types.ListRootsRequest(),
            types.ListRootsResult,
            metadata=ServerMessageMetadata(related_request_id=ctx.request_id),
        )
        return RootsOutcome(uris=[str(root.uri) for root in result.roots])

    @mcp.tool(description="Always fails with a tool error (isError: true)", structured_output=False)
    def fail(message: str = "this tool always fails") -> str:
        raise ToolError(message)

    @mcp.tool(
        description="Send tools/list_changed and resources/list_changed notifications "
        "(request-scoped, or on the standalone GET stream when standalone=true)",
        structured_output=False,
    )
    async def notify_changes(ctx: Context, standalone: bool = False) -> str:
        related = None if standalone else ctx.request_id
        await ctx.session.send_notification(types.ToolListChangedNotification(), related)
        await ctx.session.send_notification(types.ResourceListChangedNotification(), related)
        return "notified"

    # ------------------------------------------------------------ resources
    @mcp.tool(
        description="Report the W3C trace context (traceparent, tracestate) of this request's _meta",
        structured_output=False,
    )
    def trace_context(ctx: Context) -> str:
        meta = ctx.request_context.meta or {}
        if not isinstance(meta, dict):
            meta = meta.model_dump(by_alias=True)
        return f"traceparent={meta.get('traceparent')} tracestate={meta.get('tracestate')}"

    # MCP Apps (SEP-1865): a tool with a ui:// resource, which asks for a sandbox.
    @mcp.tool(
        description="A bar chart with an MCP App",
        structured_output=False,
        meta={"ui": {"resourceUri": "ui://charts/bar", "visibility": ["model", "app"]}},
    )
    def chart() -> str:
        return "3 bars"

    @mcp.resource(
        "ui://charts/bar",
        name="bar-chart-app",
        mime_type="text/html;profile=mcp-app",
        meta={"ui": {"csp": {"connectDomains": ["https://api.example.com"]}, "permissions": {"clipboardWrite": {}},
                     "prefersBorder": True}},
    )
    def bar_chart_app() -> str:
        return "<!doctype html><html><body><div id=chart>bars</div></body></html>"

    # An app tool whose resource is served as plain HTML: a client must refuse it.
    @mcp.tool(
        description="A tool whose app resource has the wrong MIME type",
        structured_output=False,
        meta={"ui": {"resourceUri": "ui://charts/plain"}},
    )
    def plain_chart() -> str:
        return "plain"

    @mcp.resource("ui://charts/plain", name="plain-html", mime_type="text/html")
    def plain_html() -> str:
        return "<html></html>"

    @mcp.resource("demo://readme", name="readme", description="Static text resource", mime_type="text/plain")
    def readme() -> str:
        return README_TEXT

    @mcp.resource("demo://items/{id}", name="item", description="Item by id", mime_type="text/plain")
    def item(id: str) -> str:
        return f"Item {id}"

    # -------------------------------------------------------------- prompts
    @mcp.prompt(description="Greet someone by name")
    def greeting(name: str) -> str:
        return f"Hello, {name}! Please greet {name} warmly."

    return mcp


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--transport", choices=["streamable-http", "stdio", "sse"], default="streamable-http")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--path", default="/mcp", help="streamable HTTP endpoint path (default /mcp)")
    parser.add_argument("--json-response", action="store_true", help="answer POSTs with application/json, not SSE")
    parser.add_argument("--stateless", action="store_true", help="stateless streamable HTTP (no mcp-session-id)")
    parser.add_argument("--log-level", default="WARNING", choices=["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"])
    args = parser.parse_args()

    mcp = build_server(log_level=args.log_level)  # also uvicorn's log level
    if args.transport == "stdio":
        mcp.run("stdio")
        return

    # HTTP transports: what MCPServer.run() does (a Starlette app served by uvicorn), but on a
    # socket bound here, so that --port 0 works and the URL is known before serving starts.
    import socket

    import uvicorn

    if args.transport == "sse":
        app = mcp.sse_app(host=args.host)
        path = "/sse"
    else:
        app = mcp.streamable_http_app(
            streamable_http_path=args.path,
            json_response=args.json_response,
            stateless_http=args.stateless,
            host=args.host,  # DNS-rebinding protection allows Host 127.0.0.1:*/localhost:*/[::1]:*
        )
        path = args.path
    family = socket.AF_INET6 if ":" in args.host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((args.host, args.port))
    sock.listen(128)  # connections queue from here on, even before uvicorn accepts them
    port = sock.getsockname()[1]
    host = f"[{args.host}]" if family == socket.AF_INET6 else args.host
    # One line on stdout, for harnesses that start the server with --port 0.
    print(f"MCP_SERVER_URL=http://{host}:{port}{path}", flush=True)
    config = uvicorn.Config(app, log_level=args.log_level.lower())
    anyio.run(uvicorn.Server(config).serve, [sock])

if __name__ == "__main__":
    main()
