"""A scripted OpenAI-compatible chat server on 127.0.0.1, for end-to-end tests.

It speaks real HTTP (chat.completions with and without SSE streaming, and /v1/models), so the
real `openai` client is exercised. Each request is answered by the next entry of a script; an
entry is a dict, or a callable taking the request body and returning one:

    {"content": "text"}                                   plain answer
    {"tool_calls": [{"name": "read_file", "arguments": {"path": "a.py"}}], "content": ""}
    {"status": 400, "error": "tools not supported"}       an HTTP error

Options model the quirks of real local servers: `reject_tools` (HTTP 400 to any request that
carries `tools`), `repeat_name` (every tool-call delta repeats the function name),
`omit_done` (the stream ends without [DONE]), `null_content_500` (HTTP 500 when an assistant
message has content null), `chunk` (characters per streamed text delta), `empty_tool_stream`
(a streamed request with `tools` gets an empty stream, or this text when it is a string, as
llama-cpp-python's `chatml-function-calling` answers; without streaming it answers as scripted),
`json_schema_500` (HTTP 500 with a validation error to a `response_format` other than `text` or
`json_object`, as llama-cpp-python's server answers `json_schema`).

Faults, per entry: `"headers"` adds headers to an HTTP error (`Retry-After`), `"sleep"` waits
that many seconds before answering, `"cut_after"` closes a stream after that many tool-call
argument pieces, `"piece"` sets the characters per argument delta (10); a call's
`"arguments"` given as a string are sent as they are (not JSON); `"usage"` is the token counts
the answer reports (in a last chunk when the request asks with `stream_options`), and
`"timings"` what llama.cpp's server adds to that chunk (`cache_n`: prompt tokens it had cached).
`models_status` answers /v1/models with that HTTP error instead of the list.

Reasoning models, per entry: `"reasoning"` is thinking sent before the content, in
`reasoning_content` deltas as vLLM and llama.cpp send it (or in the field `"reasoning_field"`
names: `"reasoning"`, as newer vLLM and Ollama do); `"finish_reason"` replaces the one the
answer ends with (`"length"` when max_tokens cut it, `"content_filter"`).

Refusals, per entry: `"refusal"` is the text OpenAI sends when the model refuses, streamed in
`refusal` deltas (in the message's `refusal` field without streaming), with finish reason
`stop` unless `"finish_reason"` says otherwise.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Entry = dict[str, Any] | Callable[[dict[str, Any]], dict[str, Any]]


@dataclass
class ScriptedModel:
    """The server's script, options and a record of every request."""

    script: list[Entry] = field(default_factory=list)
    reject_tools: bool | str = False
    repeat_name: bool = False
    omit_done: bool = False
    null_content_500: bool = False
    empty_tool_stream: bool | str = False
    json_schema_500: bool = False
    chunk: int = 7
    model: str = "scripted-model"
    requests: list[dict[str, Any]] = field(default_factory=list)
    fallback: Entry | None = None
    delay: float = 0.0
    models_status: int | None = None

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        """The /v1 URL to give the client."""
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> ScriptedModel:
        """Listen on a free port of 127.0.0.1."""
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models") and owner.models_status:
                    owner._json(self, owner.models_status, {"error": {"message": "no list"}})
                elif self.path.rstrip("/").endswith("/models"):
                    owner._json(
                        self,
                        200,
                        {
                            "object": "list",
                            "data": [{"id": owner.model, "object": "model", "owned_by": "tests"}],
                        },
                    )
                else:
                    owner._json(self, 404, {"error": {"message": "not found"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                owner._answer(self, body)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        # serve_forever's default 0.5 s poll makes every shutdown() wait up to half a second.
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop listening."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def __enter__(self) -> ScriptedModel:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- answering ---------------------------------------------------------------------------

    def _next(self, body: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            self.requests.append(body)
            if self.script:
                entry = self.script.pop(0)
            elif self.fallback is not None:
                entry = self.fallback
            else:
                entry = {"content": "(script exhausted)"}
        return entry(body) if callable(entry) else entry

    def _json(
        self,
        handler: BaseHTTPRequestHandler,
        status: int,
        doc: dict[str, Any],
        headers: dict[str, str] | None = None,
    ) -> None:
        data = json.dumps(doc).encode()
        handler.send_response(status)
        for name, value in (headers or {}).items():
            handler.send_header(name, value)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)

    def _answer(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        if not handler.path.rstrip("/").endswith("/chat/completions"):
            self._json(handler, 404, {"error": {"message": "not found"}})
            return
        if self.delay:
            time.sleep(self.delay)
        if self.reject_tools and body.get("tools"):
            with self._lock:
                self.requests.append(body)
            message = (
                self.reject_tools
                if isinstance(self.reject_tools, str)
                else "this model does not support tools"
            )
            status = 500 if "jinja" in message else 400
            self._json(handler, status, {"error": {"message": message, "type": "invalid_request"}})
            return
        if self.null_content_500 and any(
            m.get("role") == "assistant" and m.get("content") is None
            for m in body.get("messages", [])
        ):
            with self._lock:
                self.requests.append(body)
            self._json(handler, 500, {"error": {"message": "content must not be null"}})
            return
        form = (body.get("response_format") or {}).get("type")
        if self.json_schema_500 and form not in (None, "text", "json_object"):
            with self._lock:
                self.requests.append(body)
            # llama_cpp.server's words, from its request validation
            message = (
                "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', "
                "'response_format', 'type'), 'msg': \"Input should be 'text' or 'json_object'\", "
                f"'input': '{form}'}}"
            )
            self._json(
                handler, 500, {"error": {"message": message, "type": "internal_server_error"}}
            )
            return
        if self.empty_tool_stream and body.get("stream") and body.get("tools"):
            with self._lock:
                self.requests.append(body)
            stub = self.empty_tool_stream if isinstance(self.empty_tool_stream, str) else ""
            self._stream(handler, stub, [])
            return
        entry = self._next(body)
        if entry.get("sleep"):
            time.sleep(entry["sleep"])
        if "status" in entry:
            self._json(
                handler,
                entry["status"],
                {"error": {"message": entry.get("error", "")}},
                entry.get("headers"),
            )
            return
        calls = [
            {
                "id": c.get("id", f"call_{i}"),
                "name": c["name"],
                "arguments": c["arguments"]
                if isinstance(c["arguments"], str)
                else json.dumps(c["arguments"]),
            }
            for i, c in enumerate(entry.get("tool_calls", []))
        ]
        content = entry.get("content", "")
        finish = entry.get("finish_reason") or ("tool_calls" if calls else "stop")
        thought = (entry.get("reasoning_field", "reasoning_content"), entry.get("reasoning", ""))
        refusal = str(entry.get("refusal") or "")
        if body.get("stream"):
            usage = entry.get("usage")
            asked = (body.get("stream_options") or {}).get("include_usage")
            self._stream(
                handler,
                content,
                calls,
                entry.get("cut_after"),
                entry.get("piece", 10),
                usage if asked else None,
                finish,
                thought,
                refusal,
                entry.get("timings"),
            )
        else:
            message: dict[str, Any] = {"role": "assistant", "content": content or None}
            if thought[1]:
                message[thought[0]] = thought[1]
            if refusal:
                message["refusal"] = refusal
            if calls:
                message["tool_calls"] = [
                    {
                        "id": c["id"],
                        "type": "function",
                        "function": {"name": c["name"], "arguments": c["arguments"]},
                    }
                    for c in calls
                ]
            self._json(
                handler,
                200,
                {
                    "id": "chatcmpl-1",
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": self.model,
                    "choices": [
                        {
                            "index": 0,
                            "message": message,
                            "finish_reason": finish,
                        }
                    ],
                    **({"usage": entry["usage"]} if entry.get("usage") else {}),
                },
            )

    def _stream(
        self,
        handler: BaseHTTPRequestHandler,
        content: str,
        calls: list[dict[str, Any]],
        cut_after: int | None = None,
        piece_size: int = 10,
        usage: dict[str, int] | None = None,
        finish: str | None = None,
        thought: tuple[str, str] = ("reasoning_content", ""),
        refusal: str = "",
        timings: dict[str, Any] | None = None,
    ) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.send_header("Cache-Control", "no-cache")
        handler.send_header("Connection", "close")
        handler.end_headers()

        def send(delta: dict[str, Any], finish: str | None = None) -> None:
            chunk = {
                "id": "chatcmpl-1",
                "object": "chat.completion.chunk",
                "created": int(time.time()),
                "model": self.model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }
            handler.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
            handler.wfile.flush()

        send({"role": "assistant", "content": ""})
        field_name, reasoning = thought
        for i in range(0, len(reasoning), max(1, self.chunk)):
            send({field_name: reasoning[i : i + self.chunk]})
        for i in range(0, len(content), max(1, self.chunk)):
            send({"content": content[i : i + self.chunk]})
        for i in range(0, len(refusal), max(1, self.chunk)):
            send({"refusal": refusal[i : i + self.chunk]})
        for index, call in enumerate(calls):
            args = call["arguments"]
            step = max(1, piece_size)
            pieces = [args[i : i + step] for i in range(0, len(args), step)] or [""]
            for n, piece in enumerate(pieces):
                fn: dict[str, Any] = {"arguments": piece}
                if n == 0 or self.repeat_name:
                    fn["name"] = call["name"]
                tc: dict[str, Any] = {"index": index, "function": fn}
                if n == 0:
                    tc["id"] = call["id"]
                    tc["type"] = "function"
                send({"tool_calls": [tc]})
                if cut_after is not None and n + 1 >= cut_after:
                    handler.close_connection = True
                    return  # the connection ends mid-call, as when a server dies
        send({}, finish or ("tool_calls" if calls else "stop"))
        if usage:
            last = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 0}
            last.update(model=self.model, choices=[], usage=usage)
            if timings:  # llama.cpp's server adds these to its last chunk
                last["timings"] = timings
            handler.wfile.write(f"data: {json.dumps(last)}\n\n".encode())
        if not self.omit_done:
            handler.wfile.write(b"data: [DONE]\n\n")
        handler.wfile.flush()
        handler.close_connection = True


def tool_call(name: str, **arguments: Any) -> dict[str, Any]:
    """A script entry with one native tool call."""
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def last_tool_result(body: dict[str, Any]) -> dict[str, Any]:
    """The most recent role=tool message's parsed content in a request."""
    for message in reversed(body.get("messages", [])):
        if message.get("role") == "tool":
            return json.loads(message["content"])
    raise AssertionError("no tool message in the request")
