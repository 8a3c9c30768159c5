#!/usr/bin/env python3
"""A protected MCP server that is its own OAuth 2.1 authorization server, built with the official
Python SDK's auth support, for the client's OAuth interop tests.

Requires `mcp==2.3.0` (installed by `.ci/install-peers` into `.interop/py`).

Run (streamable HTTP on http://127.0.0.1:N/mcp):
    PYTHONPATH=.interop/py python3 conformance/peers/python_oauth_server.py --port N
    ... --port 0                 # any free port; see the MCP_SERVER_URL line
    ... --token-ttl 2            # access tokens live 2 s (default 3600)
    ... --token-ttl 2 --hide-expiry   # ... without telling the client (no expires_in)
Once its socket is listening the server prints one line on stdout:
    MCP_SERVER_URL=http://127.0.0.1:N/mcp

What the SDK mounts (`MCPServer(auth_server_provider=..., auth=AuthSettings(...))`):
    POST /mcp, GET /mcp, DELETE /mcp                  bearer token with scope "mcp" required;
                                                      401/403 + WWW-Authenticate otherwise
    GET  /.well-known/oauth-protected-resource/mcp    RFC 9728 protected resource metadata
    GET  /.well-known/oauth-authorization-server      RFC 8414 authorization server metadata
    GET  /authorize                                   authorization endpoint (PKCE S256 only)
    POST /token                                       authorization_code and refresh_token grants
    POST /register                                    RFC 7591 dynamic client registration
    POST /revoke                                      RFC 7009 revocation
Added here (no authorization needed):
    GET  /peer/stats                                  JSON counters of what the server saw
    POST /peer/revoke-all                             revokes every access and refresh token
                                                      (as an administrator would; clients and
                                                      their registrations stay)

The authorization server is the in-memory `AutoApproveProvider` below:
  - dynamic registration only (no pre-registered clients); registrations without a scope get
    "mcp", the only valid scope;
  - `authorize()` approves at once: it answers the /authorize request with a 302 to the
    client's redirect URI carrying a fresh code and the state (no login page), so a "browser"
    only has to GET the authorization URL and then the Location;
  - the RFC 8707 `resource` parameter is required at /authorize and must be this server's
    /mcp URL; tokens are bound to it and the bearer middleware checks that binding
    (`validate_token_resource=True`);
  - the SDK checks the PKCE verifier, the redirect URI and the client; codes are single-use
    and live 5 minutes;
  - refresh tokens rotate: each refresh answers a new access and refresh token and revokes
    the old pair, so a client that reuses a refresh token gets `invalid_grant`;
  - access tokens expire after --token-ttl seconds (checked to the sub-second here, not only
    at the SDK's whole-second check); token responses carry `expires_in` unless --hide-expiry,
    which makes a client find out from the 401 (as it would after a revocation).

Tools: echo(message) -> "Echo: <message>"; whoami() -> structured {client_id, scopes, resource}
of the token the call came with.
"""

import argparse
import secrets
import sys
import time
from collections import Counter

try:
    import anyio
    from mcp.server.auth.middleware.auth_context import get_access_token
    from mcp.server.auth.provider import (
        AccessToken,
        AuthorizationCode,
        AuthorizationParams,
        AuthorizeError,
        RefreshToken,
        TokenError,
        construct_redirect_uri,
    )
    from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions, RevocationOptions
    from mcp.server.mcpserver import MCPServer
    from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
    from pydantic import BaseModel
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response
except ImportError as exc:  # pragma: no cover - environment problem
    sys.exit(
        f"python_oauth_server.py: cannot import the MCP Python SDK ({exc}).\n"
        "Install it with .ci/install-peers and run with PYTHONPATH=.interop/py"
    )

SCOPE = "mcp"
CODE_TTL = 300
REFRESH_TTL = 24 * 3600


class AutoApproveProvider:
    """An `OAuthAuthorizationServerProvider` in memory that approves every authorization."""

    def __init__(self, resource: str, token_ttl: float, hide_expiry: bool = False) -> None:
        self.resource = resource
        self.token_ttl = token_ttl
        self.hide_expiry = hide_expiry
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}
        # Exact expiry (AccessToken.expires_at is whole seconds).
        self.access_deadline: dict[str, float] = {}
        self.refresh: dict[str, RefreshToken] = {}
        # The refresh token issued with each access token, and back, for rotation and revocation.
        self.pair: dict[str, str] = {}
        self.stats: Counter[str] = Counter()

    # -- clients
    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        self.stats["registrations"] += 1
        self.clients[client_info.client_id] = client_info

    # -- authorization
    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        self.stats["authorizations"] += 1
        if params.resource is None:
            raise AuthorizeError("invalid_request", "the resource parameter (RFC 8707) is required")
        if params.resource.rstrip("/") != self.resource:
            raise AuthorizeError("invalid_target", f"unknown resource {params.resource}")
        scopes = params.scopes if params.scopes is not None else (client.scope or "").split()
        code = secrets.token_urlsafe(32)
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=scopes,
            expires_at=time.time() + CODE_TTL,
            client_id=client.client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
            subject="interop-user",
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        return self.codes.get(authorization_code)

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        self.stats["token_authorization_code"] += 1
        # Single use (RFC 6749 §4.1.2).
        if self.codes.pop(authorization_code.code, None) is None:
            raise TokenError("invalid_grant", "authorization code already used")
        return self._issue(client.client_id, authorization_code.scopes, authorization_code.resource)

    # -- refresh
    async def load_refresh_token(self, client: OAuthClientInformationFull, refresh_token: str) -> RefreshToken | None:
        token = self.refresh.get(refresh_token)
        if token is None:
            self.stats["refresh_unknown"] += 1
        return token

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        self.stats["token_refresh_token"] += 1
        # Rotation: the old refresh token and its access token stop working.
        self._revoke(refresh_token.token)
        return self._issue(client.client_id, scopes, refresh_token.resource)

    # -- access tokens
    async def load_access_token(self, token: str) -> AccessToken | None:
        access = self.access.get(token)
        if access is None:
            self.stats["bearer_unknown"] += 1
            return None
        if time.time() >= self.access_deadline[token]:
            self.stats["bearer_expired"] += 1
            return None
        self.stats["bearer_ok"] += 1
        return access

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        self.stats["revocations"] += 1
        self._revoke(token.token)

    # -- helpers
    def _issue(self, client_id: str, scopes: list[str], resource: str | None) -> OAuthToken:
        now = time.time()
        access = secrets.token_urlsafe(32)
        refresh = secrets.token_urlsafe(32)
        self.access[access] = AccessToken(
            token=access,
            client_id=client_id,
            scopes=scopes,
            expires_at=int(now + self.token_ttl) + 1,
            resource=resource,
            subject="interop-user",
        )
        self.access_deadline[access] = now + self.token_ttl
        self.refresh[refresh] = RefreshToken(
            token=refresh,
            client_id=client_id,
            scopes=scopes,
            expires_at=int(now + REFRESH_TTL),
            resource=resource,
            subject="interop-user",
        )
        self.pair[access] = refresh
        self.pair[refresh] = access
        return OAuthToken(
            access_token=access,
            token_type="Bearer",
            expires_in=None if self.hide_expiry else max(1, round(self.token_ttl)),
            scope=" ".join(scopes),
            refresh_token=refresh,
        )

    def revoke_all(self) -> None:
        self.stats["revoke_all"] += 1
        for table in (self.access, self.access_deadline, self.refresh, self.pair):
            table.clear()

    def _revoke(self, token: str) -> None:
        other = self.pair.pop(token, None)
        for t in (token, other):
            if t is not None:
                self.access.pop(t, None)
                self.access_deadline.pop(t, None)
                self.refresh.pop(t, None)
                self.pair.pop(t, None)


class WhoAmI(BaseModel):
    client_id: str
    scopes: list[str]
    resource: str | None


def build_server(
    base: str, token_ttl: float, hide_expiry: bool, log_level: str
) -> tuple[MCPServer, AutoApproveProvider]:
    resource = f"{base}/mcp"
    provider = AutoApproveProvider(resource, token_ttl, hide_expiry)
    auth = AuthSettings(
        issuer_url=base,  # type: ignore[arg-type]
        resource_server_url=resource,  # type: ignore[arg-type]  # enables RFC 9728 metadata
        validate_token_resource=True,
        required_scopes=[SCOPE],
        client_registration_options=ClientRegistrationOptions(
            enabled=True, valid_scopes=[SCOPE], default_scopes=[SCOPE]
        ),
        revocation_options=RevocationOptions(enabled=True),
    )
    mcp = MCPServer(
        "python-oauth-interop-peer",
        version="1.0.0",
        instructions="OAuth interop test peer built with the Python SDK.",
        auth_server_provider=provider,
        auth=auth,
        log_level=log_level,  # type: ignore[arg-type]
    )

    @mcp.tool(description="Echo the message back, prefixed with 'Echo: '", structured_output=False)
    def echo(message: str) -> str:
        return f"Echo: {message}"

    @mcp.tool(description="The client id, scopes and resource of the access token of this call")
    def whoami() -> WhoAmI:
        token = get_access_token()
        if token is None:  # not reachable: the endpoint requires a token
            return WhoAmI(client_id="", scopes=[], resource=None)
        return WhoAmI(client_id=token.client_id, scopes=token.scopes, resource=token.resource)

    @mcp.custom_route("/peer/stats", methods=["GET"])
    async def stats(request: Request) -> Response:
        return JSONResponse(dict(provider.stats))

    @mcp.custom_route("/peer/revoke-all", methods=["POST"])
    async def revoke_all(request: Request) -> Response:
        provider.revoke_all()
        return JSONResponse(dict(provider.stats))

    return mcp, provider


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host", default="127.0.0.1", help="loopback only: the SDK allows plain HTTP issuers there")
    parser.add_argument("--port", type=int, default=8000, help="0 picks a free port")
    parser.add_argument("--token-ttl", type=float, default=3600.0, metavar="SECS", help="access token lifetime")
    parser.add_argument("--hide-expiry", action="store_true", help="no expires_in in token responses")
    parser.add_argument("--log-level", default="WARNING", choices=["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"])
    args = parser.parse_args()

    import socket

    import uvicorn

    # Bind first: the issuer and resource URLs (in the metadata and in WWW-Authenticate) need
    # the port, which --port 0 only tells once bound.
    family = socket.AF_INET6 if ":" in args.host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((args.host, args.port))
    sock.listen(128)  # connections queue from here on, even before uvicorn accepts them
    port = sock.getsockname()[1]
    host = f"[{args.host}]" if family == socket.AF_INET6 else args.host
    base = f"http://{host}:{port}"

    mcp, _provider = build_server(base, args.token_ttl, args.hide_expiry, args.log_level)
    app = mcp.streamable_http_app(host=args.host)

    print(f"MCP_SERVER_URL={base}/mcp", flush=True)
    config = uvicorn.Config(app, log_level=args.log_level.lower())
    anyio.run(uvicorn.Server(config).serve, [sock])


if __name__ == "__main__":
    main()
