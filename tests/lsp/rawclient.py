"""A raw JSON-RPC client over the server's stdio pipes, for messages no LSP library would send.

It writes any bytes (wrong types, missing `jsonrpc`, 10 MB bodies, 10,000-level nesting) and
reads every frame back: responses by id, notifications in order, and requests from the server
answered the way a plain client would (edits applied to disk or refused, questions dismissed).
stderr is read as it comes and only its tail kept, so a chatty server never blocks on it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pygls.uris import to_fs_path
from tests.support.jsonrpc import shape_problem

SERVER = [sys.executable, "-m", "toolgate", "lsp"]


def frame(body: bytes) -> bytes:
    """A body with its Content-Length header."""
    return f"Content-Length: {len(body)}\r\n\r\n".encode() + body


def encode(message: Any) -> bytes:
    """A message framed as JSON."""
    return frame(json.dumps(message).encode())


def nested(depth: int) -> str:
    """JSON text of arrays nested `depth` levels deep (no Python object that deep is built)."""
    return "[" * depth + "]" * depth


class RawClient:
    """One server process and the messages exchanged with it."""

    def __init__(self, env: dict[str, str] | None = None) -> None:
        self.env = env
        self.process: asyncio.subprocess.Process | None = None
        self.notifications: list[dict[str, Any]] = []
        self.server_requests: list[dict[str, Any]] = []
        self.stderr_tail = b""
        self.apply_edits = True
        self._responses: dict[Any, asyncio.Future[dict[str, Any]]] = {}
        self._unmatched: list[dict[str, Any]] = []
        # Every frame the server wrote that is no JSON-RPC 2.0 message: (why, the frame).
        self.misshapen: list[tuple[str, str]] = []
        self._next_id = 0
        self._tasks: list[asyncio.Task[None]] = []
        self.on_request: Callable[[dict[str, Any]], Any] | None = None

    async def start(self) -> RawClient:
        """Start the server."""
        env = dict(os.environ, **(self.env or {}))
        self.process = await asyncio.create_subprocess_exec(
            *SERVER,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=env,
            limit=64 * 1024 * 1024,
        )
        self._tasks = [
            asyncio.ensure_future(self._read_stdout()),
            asyncio.ensure_future(self._read_stderr()),
        ]
        return self

    @property
    def alive(self) -> bool:
        """Whether the process is still running."""
        return self.process is not None and self.process.returncode is None

    # -- writing ---------------------------------------------------------------------------------

    async def write(self, data: bytes) -> None:
        """Bytes onto the server's stdin, as they are."""
        assert self.process is not None and self.process.stdin is not None
        self.process.stdin.write(data)
        await self.process.stdin.drain()

    def new_id(self) -> int:
        """A request id not used before."""
        self._next_id += 1
        return self._next_id

    def expect(self, msg_id: Any) -> asyncio.Future[dict[str, Any]]:
        """The future of the response to `msg_id` (made before the request is written)."""
        future = asyncio.get_running_loop().create_future()
        self._responses[msg_id] = future
        return future

    async def request(
        self, method: str, params: Any = None, *, timeout: float = 60.0, **fields: Any
    ) -> dict[str, Any]:
        """Send a request and wait for its response (the whole JSON-RPC message)."""
        msg_id = self.new_id()
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None or "params" in fields:
            message["params"] = fields.pop("params", params)
        message.update(fields)
        return await self.send_for(msg_id, json.dumps(message).encode(), timeout=timeout)

    async def send_for(self, msg_id: Any, body: bytes, *, timeout: float = 60.0) -> dict[str, Any]:
        """Write a body (any bytes) framed, and wait for the response with `msg_id`."""
        future = self.expect(msg_id)
        await self.write(frame(body))
        try:
            return await asyncio.wait_for(future, timeout)
        finally:
            self._responses.pop(msg_id, None)

    async def notify(self, method: str, params: Any = None) -> None:
        """Send a notification."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        await self.write(encode(message))

    def unmatched(self) -> list[dict[str, Any]]:
        """Responses that came for no id the client waits on (e.g. `id: null`)."""
        return list(self._unmatched)

    # -- reading ---------------------------------------------------------------------------------

    async def _read_stdout(self) -> None:
        assert self.process is not None and self.process.stdout is not None
        stdout = self.process.stdout
        while True:
            length = None
            while True:
                line = await stdout.readline()
                if not line:
                    return
                if not line.strip():
                    break
                name, _, value = line.decode("ascii", "replace").partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            if length is None:
                continue
            message = json.loads(await stdout.readexactly(length))
            problem = shape_problem(message)
            if problem is not None:
                self.misshapen.append((problem, json.dumps(message)[:300]))
            await self._dispatch(message)

    async def _dispatch(self, message: dict[str, Any]) -> None:
        if "method" in message and "id" in message:
            self.server_requests.append(message)
            await self._answer(message)
        elif "method" in message:
            self.notifications.append(message)
        else:
            future = self._responses.get(message.get("id"))
            if future is not None and not future.done():
                future.set_result(message)
            else:
                self._unmatched.append(message)

    async def _answer(self, request: dict[str, Any]) -> None:
        method = request["method"]
        result: Any = None
        if self.on_request is not None:
            result = self.on_request(request)
        elif method == "workspace/applyEdit":
            result = {"applied": self.apply_edits and _apply(request["params"]["edit"])}
        elif method == "workspace/configuration":
            result = [None for _ in request["params"]["items"]]
        elif method == "toolgate/saveDocuments":
            result = {"saved": []}
        response = {"jsonrpc": "2.0", "id": request["id"], "result": result}
        with contextlib.suppress(ConnectionError):
            await self.write(encode(response))

    async def _read_stderr(self) -> None:
        assert self.process is not None and self.process.stderr is not None
        while True:
            chunk = await self.process.stderr.read(65536)
            if not chunk:
                return
            self.stderr_tail = (self.stderr_tail + chunk)[-65536:]

    # -- ending ----------------------------------------------------------------------------------

    async def close(self) -> int | None:
        """Close stdin and wait for the process (killed after a while)."""
        if self.process is None:
            return None
        if self.process.stdin is not None and not self.process.stdin.is_closing():
            self.process.stdin.close()
        try:
            await asyncio.wait_for(self.process.wait(), 20)
        except asyncio.TimeoutError:
            self.process.kill()
            await self.process.wait()
        for task in self._tasks:
            task.cancel()
        return self.process.returncode


def _apply(edit: dict[str, Any]) -> bool:
    """Apply a workspace edit to the files on disk (no buffers are open in these tests)."""
    changes: list[tuple[str, list[dict[str, Any]]]] = list((edit.get("changes") or {}).items())
    for change in edit.get("documentChanges") or []:
        if change.get("kind") == "create":
            path = Path(to_fs_path(change["uri"]) or "")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.touch()
        elif "edits" in change:
            changes.append((change["textDocument"]["uri"], change["edits"]))
    for uri, edits in changes:
        path = Path(to_fs_path(uri) or "")
        text = path.read_text() if path.exists() else ""
        lines = text.splitlines(keepends=True)
        for item in sorted(
            edits, key=lambda e: (e["range"]["start"]["line"], e["range"]["start"]["character"])
        )[::-1]:
            start = _offset(lines, item["range"]["start"])
            end = _offset(lines, item["range"]["end"])
            text = text[:start] + item["newText"] + text[end:]
            lines = text.splitlines(keepends=True)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return True


def _offset(lines: list[str], position: dict[str, int]) -> int:
    return sum(len(line) for line in lines[: position["line"]]) + position["character"]
