"""Other MCP servers' tools inside a run: listed when the run is assembled, called through the gate.

Each server in `[tool.toolgate.mcp.servers.NAME]` (or `[mcp.servers.NAME]` in the user's and
`.toolgate/config.toml` files) is a program spoken to over stdio (`command`) or a remote server
(`url`, over Streamable HTTP or SSE: `mcp/remote.py`, with OAuth: `mcp/oauth.py`). When a run
is assembled, each server is started (or connected to) in the run's event loop and lists its
tools, which join the registry as `NAME__tool` command tools with the server's own input
schemas. The run's calls go to that same session; a server that dies or drops the connection
is started (connected to) again by the next call, and every session is closed when the run
ends. A server's questions (`elicitation/create`) go to the run's reviewer
(`mcp/elicitation.py`).
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from toolgate.config import Config, ConfigError
from toolgate.mcp import elicitation, oauth, remote, sdk
from toolgate.mcp.convert import from_mcp
from toolgate.mcp.oauth import SIGN_IN_SECONDS
from toolgate.records import ToolResult
from toolgate.tools.activity import ActivityContext
from toolgate.tools.registry import ToolRegistry
from toolgate.tools.schema import FRESH, OTHER, READ, Tool

if sys.version_info < (3, 11):  # pragma: no cover
    from exceptiongroup import BaseExceptionGroup

log = logging.getLogger(__name__)

SEPARATOR = "__"
START_TIMEOUT_SECONDS = 60.0
_MAX_NAME = 64  # OpenAI function names: ^[a-zA-Z0-9_-]{1,64}$
_MAX_PAGES = 20
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


class McpUnavailable(Exception):
    """A server could not be started or stopped answering; the message says why in one line."""


@dataclass(frozen=True)
class McpServerSpec:
    """One configured MCP server: the argv that starts it or its URL, and the gate default."""

    name: str
    command: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    approval: str = "ask"  # auto | ask | deny
    url: str | None = None
    transport: str = "stdio"  # stdio | http | sse
    headers: dict[str, str] = field(default_factory=dict)
    oauth: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_table(cls, name: str, table: dict[str, Any]) -> McpServerSpec:
        """Read a validated `[mcp.servers.NAME]` table."""
        url = table.get("url")
        return cls(
            name=name,
            command=list(table.get("command", [])),
            env=dict(table.get("env", {})),
            approval=str(table.get("approval", "ask")),
            url=str(url) if url else None,
            transport=str(table.get("type", "http" if url else "stdio")),
            headers=dict(table.get("headers", {})),
            oauth=dict(table.get("oauth", {})),
        )

    def describe(self) -> str:
        """What the person recognises the server by: its argv, or its URL (never a header)."""
        return self.url if self.url is not None else " ".join(self.command)

    @property
    def start_timeout(self) -> float:
        """How long starting the session may take: a remote one may wait for a sign-in."""
        if self.url is not None and remote.uses_oauth(self.headers, self.oauth):
            return SIGN_IN_SECONDS + START_TIMEOUT_SECONDS
        return START_TIMEOUT_SECONDS


def tool_name(server: str, remote: str) -> str:
    """The registry name of a server's tool: `server__tool`, safe for every chat API."""
    return f"{server}{SEPARATOR}{_UNSAFE.sub('_', remote)}"[:_MAX_NAME]


def _parameters(spec: McpServerSpec, root: Path) -> Any:
    from mcp import StdioServerParameters

    # The SDK passes only HOME, PATH, LOGNAME, SHELL, TERM and USER on, so the person's API
    # keys never reach a server unless its `env` table names them.
    env = remote.expand_all(spec.env, f"mcp.servers.{spec.name}.env")
    return StdioServerParameters(
        command=spec.command[0], args=spec.command[1:], env=env or None, cwd=str(root)
    )


def _client(spec: McpServerSpec, root: Path, errlog: TextIO, person: object) -> Any:
    """The SDK client of one server's session (an async context manager)."""
    from mcp.client.stdio import stdio_client

    from mcp import Client

    asked = elicitation.callback(spec.name, person)
    if spec.url is not None:
        return _remote_client(spec, person, asked)
    # The initialize handshake every MCP server speaks, old or new.
    return Client(
        stdio_client(_parameters(spec, root), errlog=errlog),
        mode="legacy",
        elicitation_callback=asked,
    )


@asynccontextmanager
async def _remote_client(spec: McpServerSpec, person: object, asked: Any) -> AsyncIterator[Any]:
    from mcp import Client

    assert spec.url is not None
    where = f"mcp.servers.{spec.name}"
    headers = remote.expand_all(spec.headers, f"{where}.headers")
    auth = None
    if remote.uses_oauth(spec.headers, spec.oauth):
        settings = {
            key: remote.expand(value, f"{where}.oauth.{key}") if isinstance(value, str) else value
            for key, value in spec.oauth.items()
        }
        auth = oauth.provider(spec.name, spec.url, settings, _browser(person, spec.name))
    async with Client(
        remote.transport(spec.url, spec.transport, headers, auth),
        # `server/discover` first: protocol 2026-07-28 where the server has it, else the
        # initialize handshake.
        mode="auto",
        elicitation_callback=asked,
    ) as client:
        yield client


def _browser(person: object, name: str) -> oauth.ShowUrl:
    """How the sign-in URL reaches the person: their front end's way, else the terminal's."""
    server = f"the MCP server {name!r}"
    open_url = getattr(person, "open_url", None)
    if open_url is None:
        return oauth.default_show(server)

    async def show(url: str) -> None:
        await open_url(url, server)

    return show


def _leaf(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _tail(errlog: TextIO, limit: int = 400) -> str:
    """The end of a server's stderr file, read without moving the offset the server writes at."""
    try:
        fd = errlog.fileno()
        size = os.fstat(fd).st_size
        data = os.pread(fd, limit, max(0, size - limit))
    except (OSError, ValueError):
        return ""
    return data.decode("utf-8", "replace").strip().replace("\n", " | ")


def describe_failure(exc: BaseException, errlog: TextIO | None = None) -> str:
    """One line for the person: the error, and the end of the server's stderr when it said any."""
    leaf = _leaf(exc)
    if isinstance(leaf, (asyncio.TimeoutError, TimeoutError)):
        message = "timed out"
    else:
        message = f"{type(leaf).__name__}: {leaf}" if str(leaf) else type(leaf).__name__
    said = _tail(errlog) if errlog is not None else ""
    return f"{message} (its stderr: {said})" if said else message


def _connection_lost(exc: BaseException) -> bool:
    import anyio
    import httpx2
    from mcp_types import CONNECTION_CLOSED

    from mcp import MCPError

    leaf = _leaf(exc)
    if isinstance(leaf, MCPError):
        return leaf.error.code == CONNECTION_CLOSED
    return isinstance(
        leaf,
        (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError, httpx2.TransportError),
    )


class McpConnection:
    """One server's session for one run: started to list the tools, closed when the run ends."""

    def __init__(self, spec: McpServerSpec, root: Path, person: object = None) -> None:
        self.spec = spec
        self.root = root
        self.person = person  # the run's reviewer: who answers the server's questions
        self.starts = 0
        self._client: Any = None
        self._owner: asyncio.Task[None] | None = None
        self._stop: asyncio.Event | None = None
        self._lock: asyncio.Lock | None = None
        self._errlog: TextIO | None = None
        self._last_tail = ""

    @property
    def open(self) -> bool:
        """Whether a session is up."""
        return self._client is not None and self._owner is not None and not self._owner.done()

    async def list_tools(self, timeout: float = START_TIMEOUT_SECONDS) -> list[Any]:
        """Start the session (it stays open for the run's calls) and list the server's tools.

        Raises McpUnavailable, with the end of the server's stderr, when that fails.
        """
        try:
            client = await self._session()
            return await asyncio.wait_for(self._pages(client), timeout)
        except McpUnavailable:
            await self.aclose()
            raise
        except Exception as exc:
            said = self.stderr_tail()
            await self.aclose()
            raise McpUnavailable(
                f"MCP server {self.spec.name!r} ({self.spec.describe()}) did not list "
                f"its tools: {describe_failure(exc)}" + (f" (its stderr: {said})" if said else "")
            ) from None

    @staticmethod
    async def _pages(client: Any) -> list[Any]:
        tools: list[Any] = []
        cursor = None
        for _ in range(_MAX_PAGES):
            page = await client.list_tools(cursor=cursor)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                break
        return tools

    async def call(self, tool: str, arguments: dict[str, Any], timeout: float) -> Any:
        """Call one tool; raises McpUnavailable when the server cannot be reached."""
        client = await self._session()
        try:
            return await asyncio.wait_for(
                client.call_tool(tool, arguments, read_timeout_seconds=timeout), timeout + 5
            )
        except Exception as exc:
            if _connection_lost(exc):
                # The server is gone: end this session so that the next call starts a new one.
                await self.aclose()
            raise

    async def _session(self) -> Any:
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self.open:
                return self._client
            loop = asyncio.get_running_loop()
            ready: asyncio.Future[Any] = loop.create_future()
            self._stop = asyncio.Event()
            self._errlog = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")
            # The SDK's transport lives in task groups that must be left by the task that
            # entered them, so one owner task holds the session and calls come from anywhere.
            self._owner = loop.create_task(self._own(ready, self._stop, self._errlog))
            self.starts += 1
            try:
                self._client = await asyncio.wait_for(ready, self.spec.start_timeout)
            except asyncio.CancelledError:
                self.close()
                raise
            except Exception as exc:
                self.close()
                said = self.stderr_tail()
                failed = "did not start" if self.spec.url is None else "could not be reached"
                raise McpUnavailable(
                    f"MCP server {self.spec.name!r} ({self.spec.describe()}) {failed}: "
                    f"{describe_failure(exc)}" + (f" (its stderr: {said})" if said else "")
                ) from None
            return self._client

    async def _own(self, ready: asyncio.Future[Any], stop: asyncio.Event, errlog: TextIO) -> None:
        try:
            async with _client(self.spec, self.root, errlog, self.person) as client:
                if not ready.done():
                    ready.set_result(client)
                await stop.wait()
        except Exception as exc:
            if not ready.done():
                ready.set_exception(exc)
            else:
                log.warning(
                    "MCP server %r ended: %s", self.spec.name, describe_failure(exc, errlog)
                )
        finally:
            self._client = None
            if not ready.done():
                ready.cancel()
            self._last_tail = _tail(errlog)
            errlog.close()
            if self._errlog is errlog:
                self._errlog = None

    def close(self) -> None:
        """Ask the session to end (the owner task stops the server); safe to call twice."""
        if self._stop is not None:
            self._stop.set()
        if self._owner is not None and not self._owner.done() and self._client is None:
            # Still starting: a server stuck in the handshake never lets it reach the stop.
            self._owner.cancel()

    async def aclose(self) -> None:
        """End the session and wait until the server has stopped."""
        self.close()
        if self._owner is not None:
            await asyncio.gather(self._owner, return_exceptions=True)

    def stderr_tail(self) -> str:
        """The end of what the server wrote to stderr in this run."""
        return _tail(self._errlog) if self._errlog is not None else self._last_tail


class McpToolCall:
    """The activity behind `server__tool`: one `tools/call` on the run's session."""

    def __init__(self, connection: McpConnection, remote: str) -> None:
        self.connection = connection
        self.remote = remote

    async def run(self, ctx: ActivityContext, args: dict[str, Any]) -> ToolResult:
        """Call the tool and turn its content into the result the model reads."""
        server = self.connection.spec.name
        if not ctx.settings.trusted:
            return ToolResult.fail("this workspace is not trusted, so MCP servers may not run")
        timeout = ctx.settings.command_timeout_seconds
        start = time.perf_counter()
        try:
            result = await self.connection.call(self.remote, args, timeout)
        except McpUnavailable as exc:
            return ToolResult.fail(str(exc))
        except Exception as exc:  # the server's failure is a result the model reads
            said = self.connection.stderr_tail()
            message = describe_failure(exc)
            if _connection_lost(exc):
                message = f"the server stopped or closed the connection ({message})"
            if said:
                message += f" (its stderr: {said})"
            return ToolResult.fail(
                f"the MCP tool {self.remote} of server {server!r} could not be called: {message}",
                duration_seconds=round(time.perf_counter() - start, 6),
            )
        return from_mcp(
            result, server=server, tool=self.remote, duration=round(time.perf_counter() - start, 6)
        )


def _tool(spec: McpServerSpec, remote: Any) -> Tool | None:
    schema = dict(remote.input_schema or {"type": "object", "properties": {}})
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        log.warning(
            "MCP tool %s of %r skipped: bad schema: %s", remote.name, spec.name, exc.message
        )
        return None
    if schema.get("type", "object") != "object":
        log.warning(
            "MCP tool %s of %r skipped: arguments are not an object", remote.name, spec.name
        )
        return None
    description = (remote.description or remote.name).strip()
    return Tool(
        name=tool_name(spec.name, remote.name),
        description=f"{description}\n(The tool {remote.name!r} of the MCP server {spec.name!r}.)",
        parameters=schema,
        kind=kind_of(getattr(remote, "annotations", None)),
        asks=True,  # a hint is the server's word, not the person's: the gate still asks
        executes=True,
        repeat=FRESH,  # run by another program: its answer may change with anything
    )


def kind_of(annotations: Any) -> str:
    """A tool's kind from its MCP annotations: a read only when it says so (`readOnlyHint`).

    Without annotations it is a tool that may change anything (MCP's own default), which the
    approval mode "read-only" refuses; so is one that says it is read-only and destructive.
    """
    said = getattr(annotations, "read_only_hint", None) is True
    if said and getattr(annotations, "destructive_hint", None) is not True:
        return READ
    return OTHER


def servers_to_start(config: Config, *, trusted: bool = True) -> list[McpServerSpec]:
    """The servers a run starts: none in an untrusted workspace, none whose approval is deny."""
    if not trusted:
        return []
    return [
        McpServerSpec.from_table(name, table)
        for name, table in sorted(config.mcp.servers.items())
        if table.get("approval", "ask") != "deny"
    ]


async def add_mcp_tools(
    registry: ToolRegistry,
    config: Config,
    root: Path,
    *,
    trusted: bool = True,
    person: object = None,
) -> list[McpConnection]:
    """Start the configured servers and register their tools; returns the open connections.

    The connections stay open for the run's calls: the caller closes them when the run ends.
    Nothing starts in an untrusted workspace, or for a server whose approval is `deny`.
    A server that cannot be started or listed is a ConfigError naming it (and none stays open).
    `person` (the run's reviewer) answers the servers' questions and shows their sign-in pages.
    """
    specs = servers_to_start(config, trusted=trusted)
    if not specs:
        return []
    if not sdk.available():
        raise ConfigError(f"MCP servers are configured, but {sdk.MISSING}")
    connections = [McpConnection(spec, root, person) for spec in specs]
    try:
        # All at once, each to its end, so that a failure leaves no start half done behind it.
        listed = await asyncio.gather(
            *(c.list_tools() for c in connections), return_exceptions=True
        )
        for outcome in listed:
            if isinstance(outcome, BaseException):
                raise outcome
        for connection, remotes in zip(connections, listed, strict=True):
            assert isinstance(remotes, list)
            spec = connection.spec
            for remote in remotes:
                tool = _tool(spec, remote)
                if tool is None:
                    continue
                if tool.name in registry:
                    raise ConfigError(f"MCP tool {tool.name!r} clashes with another tool")
                registry.add(tool, McpToolCall(connection, remote.name))
                if spec.approval == "auto":
                    # The person's own table said so; an explicit per-tool approval still wins.
                    config.policy.approvals.setdefault(tool.name, "auto")
    except BaseException as exc:
        await close_all(connections)
        if isinstance(exc, McpUnavailable):
            raise ConfigError(str(exc)) from None
        raise
    return connections


async def close_all(connections: list[McpConnection]) -> None:
    """End every session and wait until its server has stopped."""
    await asyncio.gather(*(c.aclose() for c in connections), return_exceptions=True)
