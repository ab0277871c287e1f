"""Whether a run can use an endpoint: reachable, the model served, and how it calls tools.

Two requests at most: the model list, then one tiny chat request offering one tool. A native
tool call in the answer means native tool calling works; an answer without one, or a refusal
of the `tools` parameter, means the text protocol will carry the calls (docs/TEXT_PROTOCOL.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from toolgate.model.client import ModelError, ModelSettings, OpenAIChatModel, ToolsRejected
from toolgate.model.modes import NATIVE, TEXT
from toolgate.setup.local_servers import ModelListError, list_models

LIST_TIMEOUT_SECONDS = 10.0
ANSWER_TIMEOUT_SECONDS = 60.0

# One tool the model is asked to call: the smallest request that shows how it calls tools.
_READY_TOOL = {
    "type": "function",
    "function": {
        "name": "report_ready",
        "description": "Report that you are ready to work.",
        "parameters": {
            "type": "object",
            "properties": {"ready": {"type": "boolean"}},
            "required": ["ready"],
        },
    },
}
_ASK_FOR_CALL = "Call the tool report_ready with ready set to true. Do not write anything else."
_ASK_FOR_WORD = "Answer with the single word: ready"


@dataclass
class EndpointCheck:
    """What one check of an endpoint found; `problem` is None when a run can use it."""

    base_url: str
    model: str | None
    models: list[str] | None = None  # what /models lists; None when it would not say
    tool_calling: str | None = None  # "native" or "text", once the model answered
    problem: str | None = None
    fix: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Whether a run can use this endpoint."""
        return self.problem is None

    def summary(self) -> str:
        """One line for the person: what works, or what does not."""
        if self.problem is not None:
            return self.problem
        calling = (
            "native tool calling works"
            if self.tool_calling == NATIVE
            else "tools are called through Toolgate's text protocol"
        )
        return f"{self.base_url}: model {self.model} answers; {calling}"

    def to_dict(self) -> dict[str, Any]:
        """The JSON form the editor shows."""
        return {
            "ok": self.ok,
            "baseUrl": self.base_url,
            "model": self.model,
            "models": self.models,
            "toolCalling": self.tool_calling,
            "problem": self.problem,
            "fix": self.fix,
            "notes": list(self.notes),
            "summary": self.summary(),
        }


async def check_endpoint(
    base_url: str,
    api_key: str | None,
    model: str | None,
    *,
    mode: str = "auto",
    answer_timeout: float = ANSWER_TIMEOUT_SECONDS,
) -> EndpointCheck:
    """Ask the endpoint for its models, then send one tiny request; never raises for its answer."""
    check = EndpointCheck(base_url, model)
    parts = urlsplit(base_url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        check.problem = f"{base_url!r} is not an http:// or https:// URL"
        check.fix = "give the endpoint's whole URL, such as http://127.0.0.1:8080/v1"
        return check
    try:
        check.models = await list_models(base_url, api_key, LIST_TIMEOUT_SECONDS)
    except ModelListError as exc:
        if exc.status in (401, 403):
            check.problem = f"{base_url} refused the API key (HTTP {exc.status})"
            check.fix = _KEY_FIX
            return check
        if exc.answered:
            check.notes.append(f"it does not list its models ({exc})")
        else:
            check.problem = f"cannot reach the model server at {base_url}: {_reason(exc)}"
        check.fix = (
            "start the model server, or point Toolgate at another one: "
            "toolgate run --base-url URL (or OPENAI_BASE_URL=URL)"
        )
        return check
    if check.model is None:
        if not check.models:
            check.problem = f"no model is configured and {base_url} lists none"
            check.fix = _MODEL_FIX
            return check
        # What a run does too: a server that serves one model is asked for that one.
        check.model = check.models[0]
        check.notes.append(f"no model configured: a run uses the first one listed, {check.model}")
    await _ask(check, api_key, mode, answer_timeout)
    if check.models is not None and check.model not in check.models:
        listed = ", ".join(check.models[:10]) or "none"
        if check.ok:
            # llama.cpp answers to any name; others would have refused it above.
            check.notes.append(f"model {check.model} is not in the list ({listed}) but answers")
        else:
            check.problem = f"{check.problem}; it serves: {listed}"
            check.fix = _MODEL_FIX
    return check


async def _ask(check: EndpointCheck, api_key: str | None, mode: str, timeout: float) -> None:
    """One tiny request; sets how the model calls tools, or the problem."""
    assert check.model is not None
    client = OpenAIChatModel(
        ModelSettings(
            model=check.model,
            base_url=check.base_url,
            api_key=api_key,
            stream=False,
            temperature=0.0,
            max_tokens=64,
            timeout_seconds=timeout,
            max_retries=0,
        )
    )
    offer_tools = mode != TEXT
    messages = [{"role": "user", "content": _ASK_FOR_CALL if offer_tools else _ASK_FOR_WORD}]
    calls: list[Any] = []
    try:
        async for delta in client.stream(messages, [_READY_TOOL] if offer_tools else None):
            if delta.done:
                calls = delta.calls
    except ToolsRejected as exc:
        check.tool_calling = TEXT
        check.notes.append(f"{exc}: the text protocol will be used")
    except ModelError as exc:
        check.problem = str(exc)
        check.fix = _KEY_FIX if exc.kind == "auth" else _MODEL_FIX
    finally:
        await client.close()
    if check.problem is not None or check.tool_calling is not None:
        return
    if not offer_tools:
        check.tool_calling = TEXT
        check.notes.append("tool_calling.mode is text: tools are described in the prompt")
    elif calls:
        check.tool_calling = NATIVE
    else:
        check.tool_calling = TEXT
        check.notes.append(
            "the model answered without a native tool call: the text protocol will be used"
        )
        if mode == NATIVE:
            check.problem = (
                f"tool_calling.mode is native, but {check.model} answered without a native "
                "tool call"
            )
            check.fix = 'set tool_calling.mode = "auto" (or "text") in .toolgate/config.toml'


def _reason(exc: Exception) -> str:
    """The transport's reason, short: 'connection refused', a timeout."""
    text = str(exc) or type(exc).__name__
    if "refused" in text.lower():
        return "connection refused"
    return text[:200]


_KEY_FIX = "set the key: export OPENAI_API_KEY=… (in VS Code: Toolgate: Set API Key)"
_MODEL_FIX = "name a model the server serves: toolgate run --model NAME (or TOOLGATE_MODEL=NAME)"
