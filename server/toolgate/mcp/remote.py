"""Remote MCP servers: a `url` in `[mcp.servers.NAME]`, over Streamable HTTP or SSE.

Headers (and `env` values, and OAuth's client settings) may name the environment as
`${env:NAME}`: the value is read when the server is connected to, so the configuration, the
trust store and the run log keep the name, never the secret. OAuth is used when the server
asks for it (a 401), unless the table sends its own `Authorization` header or says
`oauth.enabled = false` (`mcp/oauth.py`).
"""

from __future__ import annotations

import os
import re
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

# How long a response stream may stay silent (a tool call's own time limit is shorter).
READ_SECONDS = 300.0
ENV_REFERENCE = re.compile(r"\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}")


class MissingVariable(ValueError):
    """A `${env:NAME}` whose variable is not set."""


def expand(value: str, where: str, environ: Mapping[str, str] | None = None) -> str:
    """`value` with each `${env:NAME}` replaced by the variable's value."""
    environ = os.environ if environ is None else environ

    def replace(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in environ:
            raise MissingVariable(f"{where} names ${{env:{name}}}, which is not set")
        return environ[name]

    return ENV_REFERENCE.sub(replace, value)


def expand_all(values: Mapping[str, str], where: str) -> dict[str, str]:
    """Every value of a table expanded (`where` names the table in errors)."""
    return {key: expand(value, f"{where}.{key}") for key, value in values.items()}


def uses_oauth(headers: Mapping[str, str], oauth: Mapping[str, Any]) -> bool:
    """Whether OAuth answers the server's 401: not when the table brings its own credentials."""
    if oauth.get("enabled") is False:
        return False
    return not any(key.lower() == "authorization" for key in headers)


@asynccontextmanager
async def transport(url: str, kind: str, headers: dict[str, str], auth: Any) -> AsyncIterator[Any]:
    """The SDK's client transport to `url`: Streamable HTTP (`http`) or the older SSE."""
    if kind == "sse":
        from mcp.client.sse import sse_client

        async with sse_client(url, headers=headers, auth=auth) as streams:
            yield streams
        return
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    # The SDK's own timeouts: a response stream may stay open for minutes.
    http = httpx2.AsyncClient(
        headers=headers, auth=auth, timeout=httpx2.Timeout(30.0, read=READ_SECONDS)
    )
    async with http, streamable_http_client(url, http_client=http) as streams:
        yield streams
