"""The LLM log: every model request and response, written as JSON lines when asked for.

`TOOLGATE_LLM_LOG=1` (the workspace's `.toolgate/llm-log.jsonl`) or `TOOLGATE_LLM_LOG=FILE`,
or `--llm-log FILE` on the command line. Each HTTP attempt is a `request` line (call id,
attempt, URL, payload) and a `response` line (status, raw body, the content extracted from it)
or an `error` line; a retry is a new attempt of the same call id. The API key and the
`Authorization` header never reach the file.

It sits in the HTTP client as a transport that passes every byte on as it arrives, so a
streamed answer still streams while it is logged.
"""

from __future__ import annotations

import json
import os
import threading
import time
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import httpx2 as http
else:
    try:  # the HTTP package the installed openai client is built on
        import httpx2 as http
    except ImportError:  # pragma: no cover - older openai releases are built on httpx
        import httpx as http

ENV = "TOOLGATE_LLM_LOG"
DEFAULT_FILE = Path(".toolgate") / "llm-log.jsonl"
_SECRET_HEADERS = {"authorization", "api-key", "x-api-key", "openai-api-key", "cookie"}
_MAX_BODY_CHARS = 2_000_000
_lock = threading.Lock()


def enable_for(root: Path, path: str | None) -> Path | None:
    """Turn the log on for this process from a flag or the environment; returns its file."""
    value = path or os.environ.get(ENV, "")
    if not value or value.lower() in ("0", "false", "no"):
        return None
    target = root / DEFAULT_FILE if value.lower() in ("1", "true", "yes") else Path(value)
    target = target.resolve()
    os.environ[ENV] = str(target)
    return target


def log_file() -> Path | None:
    """Where the log goes, from the environment; None when it is off."""
    value = os.environ.get(ENV, "")
    if not value or value.lower() in ("0", "false", "no"):
        return None
    if value.lower() in ("1", "true", "yes"):
        return Path.cwd() / DEFAULT_FILE
    return Path(value)


class LLMLog:
    """Appends redacted JSON lines to one file."""

    def __init__(self, path: Path, redact: Callable[[str], str]) -> None:
        self.path = path
        self.redact = redact

    def write(self, entry: dict[str, Any]) -> None:
        """Append one entry, redacted."""
        line = self.redact(json.dumps({"time": time.time(), **entry}, ensure_ascii=False))
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with _lock, self.path.open("a", encoding="utf-8") as handle:
            handle.write(line + "\n")


def _headers(headers: Any) -> dict[str, str]:
    return {k: ("[redacted]" if k.lower() in _SECRET_HEADERS else v) for k, v in headers.items()}


def _json_or_text(data: bytes) -> Any:
    text = data.decode("utf-8", "replace")
    try:
        return json.loads(text)
    except ValueError:
        return text[:_MAX_BODY_CHARS]


def extract_content(raw: str) -> dict[str, Any]:
    """The text and tool-call arguments in a response body (streamed or not)."""
    text: list[str] = []
    calls: dict[int, dict[str, str]] = {}
    docs: list[Any] = []
    if raw.lstrip().startswith("data:") or "\ndata:" in raw:
        for line in raw.splitlines():
            if line.startswith("data:") and line[5:].strip() not in ("", "[DONE]"):
                try:
                    docs.append(json.loads(line[5:]))
                except ValueError:
                    continue
    else:
        try:
            docs.append(json.loads(raw))
        except ValueError:
            return {"content": None, "tool_calls": []}
    for doc in docs:
        for choice in (doc.get("choices") or []) if isinstance(doc, dict) else []:
            part = choice.get("delta") or choice.get("message") or {}
            if part.get("content"):
                text.append(part["content"])
            for n, call in enumerate(part.get("tool_calls") or []):
                slot = calls.setdefault(call.get("index", n), {"name": "", "arguments": ""})
                function = call.get("function") or {}
                if function.get("name"):
                    slot["name"] = function["name"]
                slot["arguments"] += function.get("arguments") or ""
    return {"content": "".join(text) or None, "tool_calls": [calls[i] for i in sorted(calls)]}


class _TeeStream(http.AsyncByteStream):
    """Hands the body on chunk by chunk and logs the whole of it when it ends."""

    def __init__(self, inner: Any, done: Callable[[bytes], None]) -> None:
        self._inner = inner
        self._done = done
        self._buffer = bytearray()
        self._logged = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._inner:
            if len(self._buffer) < _MAX_BODY_CHARS:
                self._buffer += chunk
            yield chunk

    async def aclose(self) -> None:
        if not self._logged:
            self._logged = True
            self._done(bytes(self._buffer))
        await self._inner.aclose()


class LoggingTransport(http.AsyncBaseTransport):
    """An HTTP transport that writes every request and response to the LLM log."""

    def __init__(self, inner: Any, log: LLMLog) -> None:
        self._inner = inner
        self._log = log

    async def handle_async_request(self, request: Any) -> Any:
        """Log the request, pass it on, and log the response as it is read."""
        call_id = request.headers.get("x-stainless-request-id") or uuid.uuid4().hex[:12]
        attempt = int(request.headers.get("x-stainless-retry-count", "0") or 0)
        try:
            body = request.content
        except Exception:  # a streamed request body: not one the chat API sends
            body = b""
        self._log.write(
            {
                "event": "request",
                "call_id": call_id,
                "attempt": attempt,
                "retry": attempt > 0,
                "method": request.method,
                "url": str(request.url),
                "headers": _headers(request.headers),
                "payload": _json_or_text(body),
            }
        )
        started = time.monotonic()
        try:
            response = await self._inner.handle_async_request(request)
        except Exception as exc:
            self._log.write(
                {
                    "event": "error",
                    "call_id": call_id,
                    "attempt": attempt,
                    "error": f"{type(exc).__name__}: {exc}",
                }
            )
            raise

        def done(raw: bytes) -> None:
            text = raw.decode("utf-8", "replace")
            self._log.write(
                {
                    "event": "response",
                    "call_id": call_id,
                    "attempt": attempt,
                    "status": response.status_code,
                    "seconds": round(time.monotonic() - started, 3),
                    "headers": _headers(response.headers),
                    "raw_body": text,
                    "extracted": extract_content(text),
                }
            )

        return http.Response(
            status_code=response.status_code,
            headers=response.headers,
            stream=_TeeStream(response.stream, done),
            extensions=response.extensions,
            request=request,
        )


def http_client(redact: Callable[[str], str]) -> Any | None:
    """An HTTP client for the openai package that logs, when the log is on; else None."""
    path = log_file()
    if path is None:
        return None
    import openai

    log = LLMLog(path, redact)
    return openai.DefaultAsyncHttpxClient(
        transport=LoggingTransport(http.AsyncHTTPTransport(), log)
    )
