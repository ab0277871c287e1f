"""A recording proxy on 127.0.0.1 in front of an OpenAI-compatible endpoint.

Every agent of the benchmark is pointed at the proxy, never at the endpoint itself, so all of
them are measured the same way. The proxy forwards each request as it came (only
`Accept-Encoding` is dropped, so the answer can be read) and relays the answer as it arrives,
streamed answers chunk by chunk. For each exchange it records the path, the status, the bytes
each way, the time, and what the answer said: the text, the tool calls, the finish reason and
the endpoint's `usage` when it sent one (in the body, or in a streamed chunk).

    with RecordingProxy("http://127.0.0.1:8000/v1") as proxy:
        proxy.label = "fix-greeting/aider"
        ...  # the agent talks to proxy.base_url
        exchanges = proxy.take("fix-greeting/aider")

Tokens the endpoint did not report are counted afterwards (`count_tokens`): with the
endpoint's own tokenizer where it offers one (llama-cpp-python's `/extras/tokenize/count`),
else from the bytes (4 bytes a token).
"""

from __future__ import annotations

import http.client
import json
import math
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

# Headers that belong to one connection, not to the message (RFC 9110, 7.6.1).
_HOP_BY_HOP = {
    "connection",
    "keep-alive",
    "proxy-connection",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "content-length",
    "host",
    "accept-encoding",
}
# The slow embedded model may think for minutes before its first byte.
UPSTREAM_TIMEOUT = 1800.0
BYTES_PER_TOKEN = 4
# A single-slot server answers the tokenizer only after the answer in progress.
TOKENIZER_TIMEOUT = 300.0


@dataclass
class Exchange:
    """One request through the proxy and what came back."""

    label: str
    method: str
    path: str
    started: float
    seconds: float = 0.0
    status: int = 0
    request_bytes: int = 0
    response_bytes: int = 0
    stream: bool = False
    model: str = ""
    messages: int = 0
    tools: int = 0
    usage: dict[str, Any] | None = None
    text: str = ""
    tool_calls: list[dict[str, str]] = field(default_factory=list)
    finish_reason: str | None = None
    error: str = ""
    # Filled by count_tokens, then the request body is let go.
    prompt_tokens: int = 0
    completion_tokens: int = 0
    token_source: str = ""
    body: dict[str, Any] | None = field(default=None, repr=False)
    finished: threading.Event = field(default_factory=threading.Event, repr=False)

    @property
    def is_chat(self) -> bool:
        """Whether this was a chat completion (the requests that count)."""
        return self.method == "POST" and self.path.rstrip("/").endswith("/chat/completions")

    def summary(self) -> dict[str, Any]:
        """The record kept in the results (without the request body)."""
        return {
            "path": self.path,
            "status": self.status,
            "seconds": round(self.seconds, 2),
            "request_bytes": self.request_bytes,
            "response_bytes": self.response_bytes,
            "stream": self.stream,
            "messages": self.messages,
            "tools": self.tools,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "token_source": self.token_source,
            "finish_reason": self.finish_reason,
            "text": self.text[:2000],
            "tool_calls": [
                {"name": c["name"], "arguments": c["arguments"][:500]} for c in self.tool_calls
            ],
            **({"error": self.error} if self.error else {}),
        }


class RecordingProxy:
    """The proxy server; `label` tags the exchanges of the run in progress."""

    def __init__(self, upstream: str, api_key: str = "") -> None:
        """upstream: the endpoint's OpenAI base URL, e.g. http://127.0.0.1:8000/v1.

        api_key: the key the endpoint wants, sent in place of whatever the agents send (they
        are all given a placeholder), so no agent sees a real key.
        """
        self.upstream = upstream.rstrip("/")
        self.api_key = api_key
        parts = urlsplit(self.upstream)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) URL: {upstream!r}")
        self._scheme = parts.scheme
        self._host = parts.hostname
        self._port = parts.port or (443 if parts.scheme == "https" else 80)
        self._prefix = parts.path.rstrip("/")
        self.label = ""
        self.exchanges: list[Exchange] = []
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._in_flight = 0
        self._server: ThreadingHTTPServer | None = None

    # --- lifecycle --------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        """The OpenAI base URL agents are given: http://127.0.0.1:PORT/v1."""
        assert self._server is not None, "the proxy is not started"
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def start(self) -> RecordingProxy:
        """Listen on a free port of 127.0.0.1."""
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def handle(self) -> None:
                try:
                    super().handle()
                except ConnectionError:
                    pass  # an agent ended (or was ended) with a connection still open

            def do_GET(self) -> None:  # noqa: N802 — the standard library's name
                owner._forward(self)

            do_POST = do_GET  # noqa: N815

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()
        return self

    def stop(self) -> None:
        """Stop listening."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> RecordingProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def wait_idle(self, timeout: float) -> bool:
        """Wait until no request is in flight (an agent ended mid-answer); False on timeout.

        A single-slot server such as llama-cpp-python finishes an answer nobody reads before it
        takes the next request, so the next run waits here rather than inside its own time.
        """
        with self._idle:
            return self._idle.wait_for(lambda: self._in_flight == 0, timeout)

    def take(self, label: str, wait: float = 30.0) -> list[Exchange]:
        """The exchanges recorded under this label, removed from the proxy's record.

        An agent can have read a whole answer a moment before the proxy has finished reading
        it; each exchange is waited for (up to `wait` seconds) so its record is complete.
        """
        with self._lock:
            mine = [e for e in self.exchanges if e.label == label]
            self.exchanges = [e for e in self.exchanges if e.label != label]
        for exchange in mine:
            exchange.finished.wait(wait)
        return mine

    # --- forwarding -------------------------------------------------------------------

    def _target(self, path: str) -> str:
        """The upstream path for a request path: /v1/... maps onto the upstream's base."""
        if path == "/v1" or path.startswith("/v1/") or path.startswith("/v1?"):
            return self._prefix + path[3:]
        return path  # e.g. llama-cpp-python's /extras/tokenize, on the server's root

    def _read_body(self, handler: BaseHTTPRequestHandler) -> bytes:
        """The request body, whether sent with a length or in chunks."""
        if "chunked" in (handler.headers.get("Transfer-Encoding") or "").lower():
            parts = []
            while True:
                size = int(handler.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while handler.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass  # trailers
                    return b"".join(parts)
                parts.append(handler.rfile.read(size))
                handler.rfile.readline()
        length = int(handler.headers.get("Content-Length") or 0)
        return handler.rfile.read(length) if length else b""

    def _forward(self, handler: BaseHTTPRequestHandler) -> None:
        body = self._read_body(handler)
        record = Exchange(
            label=self.label,
            method=handler.command,
            path=handler.path,
            started=time.time(),
            request_bytes=len(body),
        )
        _describe_request(record, body)
        with self._lock:
            self.exchanges.append(record)
            self._in_flight += 1
        began = time.monotonic()
        headers = {k: v for k, v in handler.headers.items() if k.lower() not in _HOP_BY_HOP}
        if self.api_key:
            headers = {k: v for k, v in headers.items() if k.lower() != "authorization"}
            headers["Authorization"] = f"Bearer {self.api_key}"
        conn_type = (
            http.client.HTTPSConnection if self._scheme == "https" else http.client.HTTPConnection
        )
        conn = conn_type(self._host, self._port, timeout=UPSTREAM_TIMEOUT)
        reader = _AnswerReader()
        try:
            try:
                conn.request(handler.command, self._target(handler.path), body or None, headers)
                upstream = conn.getresponse()
            except OSError as exc:
                record.status = 502
                record.error = f"upstream unreachable: {exc}"
                _send_simple(handler, 502, {"error": {"message": record.error}})
                return
            record.status = upstream.status
            handler.send_response(upstream.status)
            for name, value in upstream.getheaders():
                if name.lower() not in _HOP_BY_HOP:
                    handler.send_header(name, value)
            length = upstream.getheader("Content-Length")
            chunked = length is None
            if chunked:
                handler.send_header("Transfer-Encoding", "chunked")
            else:
                handler.send_header("Content-Length", length or "0")
            handler.end_headers()
            try:
                while True:
                    piece = upstream.read1(65536)
                    if not piece:
                        break
                    record.response_bytes += len(piece)
                    reader.feed(piece)
                    if chunked:
                        handler.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                    else:
                        handler.wfile.write(piece)
                    handler.wfile.flush()
                if chunked:
                    handler.wfile.write(b"0\r\n\r\n")
                    handler.wfile.flush()
            except (OSError, http.client.HTTPException) as exc:
                # The agent hung up, or the endpoint broke off: record it, end this connection.
                record.error = f"cut off: {exc}"
                handler.close_connection = True
        finally:
            conn.close()
            record.seconds = time.monotonic() - began
            reader.finish(record)
            record.body = _json_or_none(body)
            record.finished.set()
            with self._idle:
                self._in_flight -= 1
                self._idle.notify_all()


def _send_simple(handler: BaseHTTPRequestHandler, status: int, doc: dict[str, Any]) -> None:
    data = json.dumps(doc).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


def _json_or_none(data: bytes) -> dict[str, Any] | None:
    try:
        doc = json.loads(data) if data else None
    except (ValueError, UnicodeDecodeError):
        return None
    return doc if isinstance(doc, dict) else None


def _describe_request(record: Exchange, body: bytes) -> None:
    doc = _json_or_none(body)
    if doc is None:
        return
    record.stream = bool(doc.get("stream"))
    record.model = str(doc.get("model") or "")
    messages = doc.get("messages") or doc.get("input") or []
    record.messages = len(messages) if isinstance(messages, list) else 1
    record.tools = len(doc.get("tools") or [])


class _AnswerReader:
    """Reads an answer as it passes: a JSON body, or server-sent events."""

    def __init__(self) -> None:
        self._raw = bytearray()

    def feed(self, piece: bytes) -> None:
        # Answers are small next to memory (the model writes a few KB); keep them whole.
        self._raw += piece

    def finish(self, record: Exchange) -> None:
        text = bytes(self._raw).decode("utf-8", errors="replace")
        stripped = text.lstrip()
        if stripped.startswith("{"):
            doc = _json_or_none(stripped.encode())
            if doc is not None:
                _read_message(record, doc)
            return
        calls: dict[int, dict[str, str]] = {}
        for line in text.splitlines():
            if not line.startswith("data:"):
                continue
            payload = line[5:].strip()
            if not payload or payload == "[DONE]":
                continue
            chunk = _json_or_none(payload.encode())
            if chunk is None:
                continue
            if isinstance(chunk.get("usage"), dict):
                record.usage = chunk["usage"]
            for choice in chunk.get("choices") or []:
                delta = choice.get("delta") or {}
                if isinstance(delta.get("content"), str):
                    record.text += delta["content"]
                for call in delta.get("tool_calls") or []:
                    slot = calls.setdefault(
                        int(call.get("index", 0)), {"name": "", "arguments": ""}
                    )
                    fn = call.get("function") or {}
                    if fn.get("name") and not slot["name"]:
                        slot["name"] = str(fn["name"])
                    if isinstance(fn.get("arguments"), str):
                        slot["arguments"] += fn["arguments"]
                if choice.get("finish_reason"):
                    record.finish_reason = str(choice["finish_reason"])
        record.tool_calls = [calls[i] for i in sorted(calls)]


def _read_message(record: Exchange, doc: dict[str, Any]) -> None:
    if isinstance(doc.get("usage"), dict):
        record.usage = doc["usage"]
    if isinstance(doc.get("error"), dict):
        record.error = str(doc["error"].get("message", ""))[:500]
    elif "detail" in doc:
        record.error = str(doc["detail"])[:500]
    for choice in doc.get("choices") or []:
        message = choice.get("message") or {}
        if isinstance(message.get("content"), str):
            record.text += message["content"]
        for call in message.get("tool_calls") or []:
            fn = call.get("function") or {}
            record.tool_calls.append(
                {"name": str(fn.get("name", "")), "arguments": str(fn.get("arguments", ""))}
            )
        if choice.get("finish_reason"):
            record.finish_reason = str(choice["finish_reason"])


# --- counting tokens ----------------------------------------------------------------------


class TokenCounter:
    """Counts text in tokens with the endpoint's tokenizer if it has one, else from bytes."""

    def __init__(self, upstream: str) -> None:
        """upstream: the endpoint's OpenAI base URL."""
        parts = urlsplit(upstream)
        self._url = f"{parts.scheme}://{parts.netloc}/extras/tokenize/count"
        self._works: bool | None = None
        self.source = "bytes"  # how the last count was made: "tokenizer" or "bytes"

    def count(self, text: str) -> int:
        """Tokens in the text (from the bytes if the endpoint cannot count them now)."""
        if not text:
            return 0
        if self._works is not False:
            try:
                request = urllib.request.Request(
                    self._url,
                    json.dumps({"input": text}).encode(),
                    {"Content-Type": "application/json"},
                )
                with urllib.request.urlopen(request, timeout=TOKENIZER_TIMEOUT) as reply:
                    count = int(json.loads(reply.read())["count"])
                self._works, self.source = True, "tokenizer"
                return count
            except urllib.error.HTTPError as exc:
                if exc.code in (404, 405, 501):
                    self._works = False  # no such route: this endpoint has no tokenizer
            except (OSError, ValueError, KeyError, TypeError):
                if self._works is None:
                    self._works = False  # never answered: not a tokenizer
                # else: it counted before and is busy now (still reading a prompt an agent
                # left behind); this one text is counted from its bytes.
        self.source = "bytes"
        return math.ceil(len(text.encode()) / BYTES_PER_TOKEN)


def prompt_text(body: dict[str, Any] | None) -> str:
    """What a request asks the model to read: its messages' text and its tools' schemas."""
    if not body:
        return ""
    parts: list[str] = []
    for message in body.get("messages") or []:
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts.extend(
                str(p.get("text", "")) for p in content if isinstance(p, dict) and "text" in p
            )
        if message.get("tool_calls"):
            parts.append(json.dumps(message["tool_calls"]))
    if body.get("tools"):
        parts.append(json.dumps(body["tools"]))
    return "\n".join(parts)


def count_tokens(exchanges: list[Exchange], counter: TokenCounter) -> None:
    """Fill each exchange's token counts: the endpoint's usage, else counted; drop bodies."""
    for e in exchanges:
        usage = e.usage or {}
        prompt = usage.get("prompt_tokens") if isinstance(usage, dict) else None
        completion = usage.get("completion_tokens") if isinstance(usage, dict) else None
        if isinstance(prompt, int) and isinstance(completion, int):
            e.prompt_tokens, e.completion_tokens, e.token_source = prompt, completion, "usage"
        elif e.is_chat and 200 <= e.status < 300:
            e.prompt_tokens = counter.count(prompt_text(e.body))
            prompt_source = counter.source
            answer = e.text + "".join(c["name"] + c["arguments"] for c in e.tool_calls)
            e.completion_tokens = counter.count(answer)
            sources = {prompt_source, counter.source if answer else prompt_source}
            e.token_source = "bytes" if "bytes" in sources else "tokenizer"
        e.body = None
