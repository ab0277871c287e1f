"""`toolgate mcp --http`: the same MCP server over Streamable HTTP, safe to leave running.

- **Stateful.** Each client gets a session (`Mcp-Session-Id`); its SSE streams' events are kept
  (`mcp/event_store.py`) so a client that lost a stream resumes it with `Last-Event-ID`, after
  the `retry` the server suggests. The SDK's transport answers methods, status codes and
  `Accept` as the specification says.
- **Loopback by default.** A request whose `Host` is not the address the server listens on, or
  whose `Origin` is another site's, is refused (421 / 403): a web page cannot reach the server
  through DNS rebinding.
- **A bearer token off loopback.** Bound to any other address, every request must carry
  `Authorization: Bearer TOKEN`: the token from `TOOLGATE_MCP_TOKEN`, else a random one printed
  once at start. On loopback the token is asked for only when that variable is set.
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
import os
import secrets
import socket
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

log = logging.getLogger(__name__)

PATH = "/mcp"
TOKEN_ENV = "TOOLGATE_MCP_TOKEN"
# Extra names the server answers to (a reverse proxy's, say), comma-separated, each `name` or
# `name:port`.
HOSTS_ENV = "TOOLGATE_MCP_ALLOWED_HOSTS"
# The reconnection delay the server suggests in its SSE streams (`retry`), in milliseconds.
RETRY_MS = 1_000


def is_loopback(host: str) -> bool:
    """Whether `host` (a name or an address) is this machine's loopback interface."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _wildcard(host: str) -> bool:
    try:
        return ipaddress.ip_address(host.strip("[]")).is_unspecified
    except ValueError:
        return False


def _bracketed(name: str) -> str:
    return f"[{name}]" if ":" in name and not name.startswith("[") else name


def own_names(host: str) -> list[str]:
    """The host names a request may address this server by, bound to `host`."""
    names = {host}
    if is_loopback(host) or _wildcard(host):
        names |= {"127.0.0.1", "localhost", "::1"}
    if _wildcard(host):
        # Bound to every interface: this machine's names and addresses.
        for name in (socket.gethostname(), socket.getfqdn()):
            names.add(name)
            try:
                names |= {str(info[4][0]) for info in socket.getaddrinfo(name, None)}
            except OSError:
                pass
    return sorted(_bracketed(n) for n in names if n and not _wildcard(n))


def allowed_hosts(host: str, port: int, environ: Mapping[str, str]) -> list[str]:
    """The `Host` header values this server accepts: its own names with its port, and extras."""
    hosts = [f"{name}:{port}" for name in own_names(host)]
    for extra in environ.get(HOSTS_ENV, "").split(","):
        extra = extra.strip()
        if extra:
            hosts.append(extra if extra.rsplit(":", 1)[-1].isdigit() else f"{extra}:{port}")
    return hosts


def bearer_token(host: str, environ: Mapping[str, str]) -> tuple[str | None, bool]:
    """The token requests must carry, and whether it was made up here (so must be shown)."""
    chosen = environ.get(TOKEN_ENV, "").strip()
    if chosen:
        return chosen, False
    if is_loopback(host):
        return None, False
    return secrets.token_urlsafe(32), True


class BearerGuard:
    """Refuses, with 401, any HTTP request that does not carry the server's bearer token."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self._token = token.encode("utf-8")

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        """Let the request through only with the right `Authorization: Bearer` header."""
        if scope["type"] == "http" and not self._authorized(scope):
            from starlette.responses import JSONResponse

            response = JSONResponse(
                {"error": "invalid_token", "error_description": "a bearer token is required"},
                status_code=401,
                headers={"WWW-Authenticate": 'Bearer error="invalid_token"'},
            )
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)

    def _authorized(self, scope: Any) -> bool:
        for key, value in scope.get("headers", []):
            if key == b"authorization":
                scheme, _, given = value.partition(b" ")
                return scheme.lower() == b"bearer" and hmac.compare_digest(
                    given.strip(), self._token
                )
        return False


@dataclass(frozen=True)
class HttpEndpoint:
    """Where the server listens and what a client must send to be let in."""

    host: str
    port: int
    token: str | None

    @property
    def url(self) -> str:
        """The URL a client connects to."""
        host = "127.0.0.1" if _wildcard(self.host) else _bracketed(self.host)
        return f"http://{host}:{self.port}{PATH}"


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on `host:port` (port 0: one the system picks)."""
    family, kind, proto, _, address = socket.getaddrinfo(
        host.strip("[]"), port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


def asgi_app(server: Any, host: str, port: int, token: str | None) -> Any:
    """The server's Streamable HTTP app: sessions, resumable streams, Host/Origin checks."""
    from mcp.server.transport_security import TransportSecuritySettings

    from toolgate.mcp.event_store import event_store

    hosts = allowed_hosts(host, port, os.environ)
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=hosts,
        allowed_origins=[f"{scheme}://{h}" for h in hosts for scheme in ("http", "https")],
    )
    app = server.streamable_http_app(
        streamable_http_path=PATH,
        event_store=event_store(),
        retry_interval=RETRY_MS,
        transport_security=security,
        host=host,
    )
    return BearerGuard(app, token) if token is not None else app


async def serve_http(
    server: Any, host: str, port: int, say: Callable[[str], None], environ: Mapping[str, str]
) -> None:
    """Serve until interrupted (SIGINT, SIGTERM); `say` tells the person where, and the token."""
    import uvicorn

    token, made_up = bearer_token(host, environ)
    sock = bind(host, port)
    endpoint = HttpEndpoint(host, sock.getsockname()[1], token)
    app = asgi_app(server, host, endpoint.port, token)
    config = uvicorn.Config(app, log_config=None, access_log=False, lifespan="on")
    say(f"serving MCP over Streamable HTTP at {endpoint.url}")
    if made_up:
        say(
            f"clients must send 'Authorization: Bearer {token}' (shown only now; set "
            f"{TOKEN_ENV} to choose the token)"
        )
    elif token is not None:
        say(f"clients must send the bearer token from {TOKEN_ENV}")
    try:
        await uvicorn.Server(config).serve(sockets=[sock])
    finally:
        sock.close()
