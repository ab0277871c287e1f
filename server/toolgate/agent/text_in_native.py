"""A call written as text, with no call made: a failed call, never the model's final answer.

Seen with the embedded runtime's own server (llama-cpp-python 0.3.36, `python -m
llama_cpp.server`) and Qwen2.5-Coder-0.5B: with `--chat_format chatml-function-calling` the
answer was `functions.write_file:` and nothing more; with the model's own template,
`{"name": "run_greet", "arguments": {…}}` for a tool that does not exist. Ollama's and vLLM's
tool parsers hand back as plain `content` what they cannot read, too. The run took such text
for the final answer and ended `completed` with nothing done.

Now it is a failed call. The model is told once, in the words of native tool calling. If it
happens again in `auto` mode, the endpoint is asked through the text protocol for the rest of
the run, and the run remembers that (`.toolgate/state.json`) as it remembers the other quirks of
an endpoint, so the next run starts in text mode. In text mode each such answer gets the
corrective message. An explicit `native` mode is never overridden. After `max_tool_retries`
such answers in a row the run ends `failed`: it never ends `completed` on one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from toolgate.calls.parser import StreamingCallParser
from toolgate.calls.prompt import corrective_message
from toolgate.calls.records import CallParseError
from toolgate.calls.written import WrittenCall, written_call
from toolgate.model.modes import AUTO, NATIVE, TEXT

# The mark of such a call in the run log: `never_ran` reads it.
WRITTEN = "written_as_text"
SWITCH_REASON = "the model wrote its tool calls as text again after it was told to call the tools"


@dataclass(frozen=True)
class Unmade:
    """What the run does with an answer that was a call written as text."""

    error: CallParseError  # the failed call, as the run log and the events record it
    message: str  # what the model is told, in the words of the mode it is asked in next
    switch: str | None  # why the run goes on in text mode (None: its mode stays)
    stop: str | None  # why the run ends here (None: the model is asked again)

    def log_entry(self) -> dict[str, Any]:
        """The failed call as a step of the run log records a call that could not be read."""
        return {
            "id": None,
            "name": None,
            "decision": "denied",
            "error": self.error.error,
            "raw_excerpt": self.error.raw_excerpt,
            WRITTEN: True,
        }


class CallsInText:
    """The judge of each answer that made no call: was it a call written as text."""

    def __init__(self, parser: Callable[[], StreamingCallParser], max_retries: int) -> None:
        """Judge with fresh parsers for the run's tools; end the run after `max_retries` in a row.

        `parser` gives a fresh parser for the run's tools (its syntaxes and settings).
        """
        self._parser = parser
        self._max_retries = max_retries
        self._count = 0  # such answers in this run
        self._streak = 0  # such answers in a row, ending at `_last_step`
        self._last_step = -1

    def judge(self, text: str, mode: str, step: int) -> Unmade | None:
        """None when `text` (the answer of step `step`, asked in `mode`) holds no call."""
        if mode not in (AUTO, NATIVE, TEXT) or not text.strip():
            return None  # tool calling is off: every answer is words
        found = written_call(text, self._parser())
        if found is None:
            return None
        self._count += 1
        self._streak = self._streak + 1 if step == self._last_step + 1 else 1
        self._last_step = step
        switch = None
        if mode == AUTO and self._count > 1:
            switch, mode = SWITCH_REASON, TEXT
        error = CallParseError(_error(found, mode), found.excerpt)
        stop = None
        if self._streak > self._max_retries:
            stop = (
                f"the model wrote its tool calls as text {self._streak} times in a row, so no "
                f"tool ran (the last: {_snippet(found.excerpt)})"
            )
        message = corrective_message([error]) if mode == TEXT else _told(found)
        return Unmade(error, message, switch, stop)


def never_ran(calls: Sequence[Mapping[str, Any]]) -> str | None:
    """Why a run is not complete when the last call in its log (`calls`) was written as text.

    The model was told and answered in words after it; those words may claim what never ran.
    """
    if not calls or not calls[-1].get(WRITTEN):
        return None
    said = _snippet(str(calls[-1].get("raw_excerpt") or ""))
    return (
        f"the model's last tool call was written as text and never ran ({said}); its answer "
        "may say otherwise"
    )


def _error(found: WrittenCall, mode: str) -> str:
    if found.problem:
        return found.problem
    if mode == TEXT:
        # The text protocol is the channel; the form was not one it reads as a call.
        return f"the call to '{found.name}' is not written in a form that runs, so it did not run"
    return f"the call to '{found.name}' was written as text, so it did not run"


def _told(found: WrittenCall) -> str:
    """The message for a model asked with native tools: the interface, not the text."""
    why = f": {found.problem}" if found.problem else ""
    return "\n".join(
        [
            f"Your answer was a tool call written as text, so no tool ran{why}.",
            f"You wrote: {_snippet(found.excerpt)}",
            "Call tools through the tool-calling interface (tool_calls), never in the words of "
            "your answer. When the task is done, answer in plain words without any call.",
        ]
    )


def _snippet(text: str) -> str:
    one_line = " ".join(text.split())
    return one_line if len(one_line) <= 120 else one_line[:117] + "..."
