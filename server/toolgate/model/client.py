"""A ChatModel interface in front of any OpenAI-compatible chat completions endpoint."""

from __future__ import annotations

import re
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from toolgate.model.tool_deltas import NativeCall, ToolCallDeltas

if TYPE_CHECKING:
    import openai

_TOOLS_REJECTED = re.compile(r"tool|function|jinja|tool_choice|does not support", re.IGNORECASE)
# What some servers stream instead of the calls when a request offers tools (llama-cpp-python
# with `chatml-function-calling`): nothing, or only the start of a call, `functions.NAME:`.
_STUB = re.compile(r"\s*(?:functions\.[\w.-]+:?)?\s*")
_STUB_PREFIX = re.compile(
    r"\s*(?:f(?:u(?:n(?:c(?:t(?:i(?:o(?:n(?:s(?:\.[\w.-]*(?::\s*)?)?)?)?)?)?)?)?)?)?)?"
)


class ModelError(Exception):
    """The endpoint failed; the message is one plain line meant for the person."""

    def __init__(self, kind: str, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.status = status


class ToolsRejected(ModelError):
    """The endpoint refused the `tools` parameter: the model needs the text protocol."""


@dataclass
class StreamDelta:
    """A piece of a streamed turn: text, or a finished turn."""

    text: str = ""
    reasoning: str = ""  # the model's thinking, where the server streams it apart from text
    # The model's refusal (OpenAI's `refusal` field), streamed apart from the text: it is the
    # answer the person reads, and it ends the run as refused.
    refusal: str = ""
    done: bool = False
    calls: list[NativeCall] = field(default_factory=list)
    finish_reason: str | None = None
    prompt_tokens: int | None = None  # the endpoint's own count (`usage`), where it gives one
    usage: dict[str, int] | None = None  # the tokens the endpoint said the request used


class ChatModel(Protocol):
    """What the agent needs from a model."""

    model: str
    base_url: str

    def stream(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None
    ) -> AsyncIterator[StreamDelta]:
        """Stream one assistant turn; the last delta has done=True and the native calls."""
        ...

    async def close(self) -> None:
        """Release connections."""
        ...


@dataclass
class ModelSettings:
    """How to reach the model."""

    model: str
    base_url: str
    api_key: str | None = None
    tool_choice: str = "auto"
    stream: bool = True
    temperature: float | None = None
    max_tokens: int | None = None
    timeout_seconds: float = 600.0
    max_retries: int = 1
    # Fields the endpoint reads beyond the OpenAI API (the embedded model's `grammar`).
    extra_body: dict[str, Any] | None = None
    # Structured output (`{"type": "json_schema", …}`) for callers that want one JSON answer.
    response_format: dict[str, Any] | None = None
    # The `response_format` type the endpoint is known to take ("text": none), so that a plan
    # or a review does not ask in the forms it refuses (the embedded model: "json_object").
    structured_output: str | None = None


@dataclass
class _Ending:
    """What the last delta of a turn reports, gathered while the turn streams."""

    calls: ToolCallDeltas = field(default_factory=ToolCallDeltas)
    finish: str | None = None
    prompt_tokens: int | None = None
    usage: dict[str, int] | None = None


def _whole(thought: str, text: str, refusal: str) -> list[StreamDelta]:
    """An answer given whole, as the deltas a stream would have given, in the same order."""
    deltas = []
    if thought:
        deltas.append(StreamDelta(reasoning=thought))
    if text:
        deltas.append(StreamDelta(text=text))
    if refusal:
        deltas.append(StreamDelta(refusal=refusal))
    return deltas


class OpenAIChatModel:
    """The `openai` package against any base URL."""

    def __init__(self, settings: ModelSettings, redact: Callable[[str], str] = lambda s: s) -> None:
        self.settings = settings
        # Whether a request that offers tools is streamed; False once this endpoint answered
        # such a stream with nothing (then `on_no_tool_streaming` is told why, to remember it).
        self.stream_tools = True
        self.on_no_tool_streaming: Callable[[str], None] | None = None
        # Whether a stream asks for its usage (`stream_options`); False once refused here.
        self.stream_usage = True
        self.model = settings.model
        self.base_url = settings.base_url
        self._redact = redact
        # Imported here: the openai package takes seconds to import, and the language server
        # must answer `initialize` long before any run needs it.
        import openai

        from toolgate.model.llm_log import http_client

        self._client = openai.AsyncOpenAI(
            base_url=settings.base_url,
            # Local servers need no key, but the client insists on one.
            api_key=settings.api_key or "not-needed",
            timeout=settings.timeout_seconds,
            max_retries=settings.max_retries,
            http_client=http_client(redact),  # None unless the LLM log is on
        )

    async def close(self) -> None:
        """Close the HTTP client."""
        await self._client.close()

    async def served_models(self) -> list[str]:
        """The ids the endpoint's `/models` lists, in its order."""
        page = await self._client.models.list()
        return [model.id for model in page.data]

    def _request(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None
    ) -> dict[str, Any]:
        request: dict[str, Any] = {"model": self.model, "messages": _sanitise(messages)}
        if tools:
            request["tools"] = tools
            request["tool_choice"] = self.settings.tool_choice
        if self.settings.temperature is not None:
            request["temperature"] = self.settings.temperature
        if self.settings.max_tokens is not None:
            request["max_tokens"] = self.settings.max_tokens
        if self.settings.extra_body:
            request["extra_body"] = dict(self.settings.extra_body)
        if self.settings.response_format is not None:
            request["response_format"] = self.settings.response_format
        return request

    async def stream(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None
    ) -> AsyncIterator[StreamDelta]:
        """Stream one turn, assembling native tool calls from their deltas."""
        import openai

        request = self._request(messages, tools)
        end = _Ending()
        try:
            if not self.settings.stream or (tools and not self.stream_tools):
                answer = self._whole_answer(request, end)
            else:
                answer = self._streamed(request, bool(tools), end)
            async with aclosing(answer):
                async for delta in answer:
                    yield delta
        except openai.APIStatusError as exc:
            error = self._status_error(exc, bool(tools))
            if error.kind == "not_found":
                error = await self._name_served_models(error)
            raise error from None
        except openai.APITimeoutError:
            raise ModelError(
                "timeout", f"the model at {self.base_url} did not answer in time"
            ) from None
        except openai.APIConnectionError as exc:
            raise await self._connection_error(exc.__cause__ or exc) from None
        except Exception:
            # A stream cut off midway surfaces as the HTTP library's own error; if the embedded
            # model server died, that is what the person is told.
            report = await self._local_exit_report()
            if report is None:
                raise
            raise ModelError("local_server_exited", report) from None
        yield StreamDelta(
            done=True,
            calls=end.calls.calls(),
            finish_reason=end.finish,
            prompt_tokens=end.prompt_tokens or (end.usage or {}).get("prompt_tokens") or None,
            usage=end.usage,
        )

    async def _whole_answer(
        self, request: dict[str, Any], end: _Ending
    ) -> AsyncGenerator[StreamDelta, None]:
        """One unstreamed request, given as the deltas a stream would have given."""
        text, end.finish, end.usage, thought, refusal = await self._once(request, end.calls)
        for delta in _whole(thought, text, refusal):
            yield delta

    async def _streamed(
        self, request: dict[str, Any], tools: bool, end: _Ending
    ) -> AsyncGenerator[StreamDelta, None]:
        """One streamed request, passed on delta by delta; its calls and counts go to `end`."""
        held: str | None = ""  # held back while it may be only a call stub
        refused = False
        stream = await self._open_stream(request)
        async for chunk in stream:
            end.prompt_tokens = _prompt_tokens(chunk) or end.prompt_tokens
            end.usage = _usage(chunk) or end.usage
            if not chunk.choices:
                continue
            choice = chunk.choices[0]
            delta = choice.delta
            thought = _reasoning(delta)
            if thought:
                yield StreamDelta(reasoning=thought)
            refused_now = getattr(delta, "refusal", None)
            if isinstance(refused_now, str) and refused_now:
                refused = True
                yield StreamDelta(refusal=refused_now)
            if delta is not None and delta.content:
                if tools and held is not None:
                    held += delta.content
                    if not _STUB_PREFIX.fullmatch(held):
                        yield StreamDelta(text=held)
                        held = None
                else:
                    yield StreamDelta(text=delta.content)
            for tool_delta in (delta.tool_calls if delta is not None else None) or []:
                end.calls.add(tool_delta)
            if choice.finish_reason:
                end.finish = choice.finish_reason
        # A refusal is an answer: only a stream with neither calls, words nor a refusal is the
        # stub some servers send in place of calls.
        if tools and held is not None and not end.calls and not refused and _STUB.fullmatch(held):
            # Nothing, or a stub, where calls or an answer were due: ask once more without
            # streaming, which such servers answer correctly, and say so.
            self.stream_tools = False
            if self.on_no_tool_streaming is not None:
                self.on_no_tool_streaming(
                    f"a streamed request with tools got {held.strip()!r} or nothing; "
                    "the same request without streaming is answered"
                )
            async for whole in self._whole_answer(request, end):
                yield whole
        elif held:
            yield StreamDelta(text=held)

    async def _open_stream(self, request: dict[str, Any]) -> Any:
        """A streamed request that asks for its usage, or without, where that is refused."""
        import openai

        if self.stream_usage:
            try:
                return await self._client.chat.completions.create(
                    **request, stream=True, stream_options={"include_usage": True}
                )
            except openai.BadRequestError as exc:
                if "stream_options" not in _error_message(exc):
                    raise
                # An older server that knows no stream_options: the run goes on uncounted.
                self.stream_usage = False
        return await self._client.chat.completions.create(**request, stream=True)

    async def _name_served_models(self, error: ModelError) -> ModelError:
        """A 404 told with the models the endpoint serves, or that it would not say."""
        try:
            served = await self.served_models()
        except Exception as exc:
            extra = f"; asking it which models it serves failed too ({type(exc).__name__})"
        else:
            extra = (
                f"; it serves: {', '.join(served[:20])}"
                if served
                else "; it lists no models at /models"
            )
        return ModelError(error.kind, str(error) + extra, error.status)

    async def _local_exit_report(self) -> str | None:
        from toolgate.model.local import exit_report_for

        return await exit_report_for(self.base_url)

    async def _connection_error(self, cause: BaseException) -> ModelError:
        # When the embedded model server died, say that (signal, log, what to do), not the
        # transport's view of it.
        report = await self._local_exit_report()
        if report is not None:
            return ModelError("local_server_exited", report)
        return ModelError(
            "connection",
            f"cannot reach the model at {self.base_url}: {self._redact(str(cause))[:200]}",
        )

    async def _once(
        self, request: dict[str, Any], calls: ToolCallDeltas
    ) -> tuple[str, str | None, dict[str, int] | None, str, str]:
        """One unstreamed request: text, finish reason, usage, reasoning, refusal; fills `calls`."""
        response = await self._client.chat.completions.create(**request)
        choice = response.choices[0]
        for i, tc in enumerate(choice.message.tool_calls or []):
            fn = getattr(tc, "function", None)
            if fn is not None:
                calls.add_whole(
                    i,
                    NativeCall(id=tc.id or f"call_{i}", name=fn.name, arguments=fn.arguments or ""),
                )
        return (
            choice.message.content or "",
            choice.finish_reason,
            _usage(response),
            _reasoning(choice.message),
            getattr(choice.message, "refusal", None) or "",
        )

    def _status_error(self, exc: openai.APIStatusError, sent_tools: bool) -> ModelError:
        message = _error_message(exc)
        status = exc.status_code
        text = self._redact(message)[:300]
        if status in (401, 403):
            return ModelError(
                "auth",
                f"the model endpoint {self.base_url} refused the API key (HTTP {status}): {text}",
                status,
            )
        if status == 429:
            return ModelError(
                "rate_limit", f"rate-limited by {self.base_url} (HTTP 429): {text}", status
            )
        if status == 404:
            return ModelError(
                "not_found",
                f"model {self.model!r} or endpoint not found at {self.base_url} (HTTP 404): {text}",
                status,
            )
        if sent_tools and status >= 400 and _TOOLS_REJECTED.search(message):
            return ToolsRejected(
                "tools_rejected", f"the endpoint rejected tools (HTTP {status}): {text}", status
            )
        return ModelError(
            "server" if status >= 500 else "bad_request",
            f"the model endpoint answered HTTP {status}: {text}",
            status,
        )


def _reasoning(message: Any) -> str:
    """The reasoning a server sends beside the text ("" when there is none)."""
    # vLLM and llama.cpp name it `reasoning_content`, newer vLLM and Ollama `reasoning`: fields
    # beyond the OpenAI API, which the openai package keeps as extra attributes.
    for name in ("reasoning_content", "reasoning"):
        value = getattr(message, name, None)
        if isinstance(value, str) and value:
            return value
    return ""


def _prompt_tokens(response: Any) -> int | None:
    usage = getattr(response, "usage", None)
    count = getattr(usage, "prompt_tokens", None)
    return count if isinstance(count, int) and count > 0 else None


def _usage(response: Any) -> dict[str, int] | None:
    """The token counts a response or the last chunk of a stream carries, if any."""
    usage = getattr(response, "usage", None)
    if usage is None:
        return None
    counts = {
        key: value
        for key in ("prompt_tokens", "completion_tokens", "total_tokens")
        if isinstance(value := getattr(usage, key, None), int)
    }
    # How much of the prompt the server had cached: OpenAI's and vLLM's count, else the
    # `timings` llama.cpp's server adds to its last chunk (`cache_n`: tokens not read again).
    cached = getattr(getattr(usage, "prompt_tokens_details", None), "cached_tokens", None)
    if not isinstance(cached, int):
        timings = getattr(response, "timings", None)
        cached = timings.get("cache_n") if isinstance(timings, dict) else None
    if isinstance(cached, int) and counts:
        counts["cached_tokens"] = cached
    return counts or None


def _error_message(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])
        if isinstance(inner, str):
            return inner
        if body.get("detail"):
            return str(body["detail"])
    try:
        return exc.response.text or str(exc)
    except Exception:
        return str(exc)


def _sanitise(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    # llama-cpp-python answers HTTP 500 to an assistant message whose content is null.
    out = []
    for message in messages:
        if message.get("content") is None:
            message = {**message, "content": ""}
        out.append(message)
    return out
