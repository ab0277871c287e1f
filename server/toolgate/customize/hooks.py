"""Hooks: the person's commands run around the agent's steps, in the shape other agents share.

The shape is Claude Code's, which Codex and Gemini CLI read too::

    {"hooks": {"PreToolUse": [{"matcher": "Edit|Write",
                               "hooks": [{"type": "command", "command": "…", "timeout": 30}]}]}}

read from `.claude/settings.json` and from Toolgate's own configuration (`[hooks]`, the same
shape in TOML). A hook gets one JSON object on stdin (`session_id`, `transcript_path`, `cwd`,
`hook_event_name`, and per event `tool_name`, `tool_input`, `tool_response`, `prompt`, …) and
answers by its exit status: 0 goes on (for `UserPromptSubmit` and `SessionStart` its stdout is
added as context), 2 blocks with stderr as the reason the model reads, and JSON on stdout may
say `decision` / `permissionDecision` (`allow`, `deny`, `ask`) with a reason. A hook that fails,
hangs past its timeout or prints something unreadable is reported in one line, and the turn goes
on: a hook never takes a run down.

A hook's command line is the person's own, or one they confirmed (a workspace's hooks wait for
that, as any setting a repository widens does), so it runs through `/bin/sh -c` as those agents
run it. The model never writes one. Its `allow` only turns an ask into a yes; nothing a hook
says lets through what the policy denies.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

EVENTS = ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "PreCompact")
TOOL_EVENTS = frozenset({"PreToolUse", "PostToolUse"})
DEFAULT_TIMEOUT_SECONDS = 60.0
_MAX_OUTPUT_BYTES = 64_000
_SHELL = "/bin/sh"

# The names other agents give the tools of each kind, so that a hook written for one of them
# (`"matcher": "Edit|Write"`) matches Toolgate's tools of the same kind. Keyed by the kind a
# tool declares, never by a tool's name. Names Toolgate's own tools share (`read_file`,
# `write_file`) are left out: a matcher already matches the tool's own name.
KIND_ALIASES: dict[str, tuple[str, ...]] = {
    "read": (
        "Read",
        "Grep",
        "Glob",
        "LS",
        "read_many_files",
        "glob",
        "search_file_content",
    ),
    "change": (
        "Edit",
        "Write",
        "MultiEdit",
        "NotebookEdit",
        "replace",
        "apply_patch",
    ),
    "run": ("Bash", "run_shell_command", "shell"),
    "git": ("Bash", "run_shell_command", "shell"),
}


class HookError(ValueError):
    """A hooks table in the wrong shape; the message names where."""


@dataclass(frozen=True)
class Hook:
    """One command, run on one event for the tools its matcher matches."""

    event: str
    command: str
    matcher: str = ""
    timeout: float = DEFAULT_TIMEOUT_SECONDS
    source: str = ""

    def table(self) -> dict[str, Any]:
        """The hook as the value a trust confirmation remembers (its exact command)."""
        return {"matcher": self.matcher, "command": self.command, "timeout": self.timeout}

    def matches(self, tool_name: str, kind: str) -> bool:
        """Whether this hook is for that tool (an empty matcher or `*` is for every tool)."""
        if self.event not in TOOL_EVENTS or self.matcher in ("", "*"):
            return True
        names = (tool_name, *KIND_ALIASES.get(kind, ()))
        try:
            pattern = re.compile(self.matcher)
        except re.error:
            return self.matcher in names
        return any(pattern.fullmatch(name) for name in names)


def parse_hooks(table: Any, source: str) -> list[Hook]:
    """The hooks a settings file's `hooks` value holds; HookError names a wrong shape."""
    if table is None:
        return []
    if not isinstance(table, Mapping):
        raise HookError(f"{source}: hooks: a table of events")
    found: list[Hook] = []
    for event, groups in table.items():
        if event not in EVENTS:
            raise HookError(f"{source}: hooks.{event}: not an event ({', '.join(EVENTS)})")
        if not isinstance(groups, list):
            raise HookError(f"{source}: hooks.{event}: a list of {{matcher, hooks}} entries")
        for index, group in enumerate(groups):
            where = f"{source}: hooks.{event}[{index}]"
            if not isinstance(group, Mapping) or not isinstance(group.get("hooks"), list):
                raise HookError(f"{where}: a table with a `hooks` list")
            matcher = group.get("matcher", "")
            if not isinstance(matcher, str):
                raise HookError(f"{where}.matcher: a string")
            for inner, hook in enumerate(group["hooks"]):
                found.append(_one_hook(hook, event, matcher, f"{where}.hooks[{inner}]", source))
    return found


def _one_hook(hook: Any, event: str, matcher: str, where: str, source: str) -> Hook:
    if not isinstance(hook, Mapping):
        raise HookError(f"{where}: a table with type and command")
    if hook.get("type", "command") != "command":
        raise HookError(f'{where}.type: only "command" hooks are run')
    command = hook.get("command")
    if not isinstance(command, str) or not command.strip():
        raise HookError(f"{where}.command: a command line, missing")
    timeout = hook.get("timeout", DEFAULT_TIMEOUT_SECONDS)
    if not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or timeout <= 0:
        raise HookError(f"{where}.timeout: a positive number of seconds")
    return Hook(event, command, matcher, float(timeout), source)


def settings_hooks(path: Path) -> list[Hook]:
    """The hooks of a Claude Code `settings.json`; HookError for JSON or shape problems."""
    try:
        doc = json.loads(path.read_text("utf-8"))
    except OSError as exc:
        raise HookError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    except ValueError as exc:
        raise HookError(f"{path}: not valid JSON ({exc})") from None
    if not isinstance(doc, Mapping):
        raise HookError(f"{path}: not a JSON object")
    return parse_hooks(doc.get("hooks"), str(path))


@dataclass
class HookOutcome:
    """What the hooks of one event said, together."""

    decision: str | None = None  # "allow", "deny", "ask" or None (no say)
    reason: str = ""
    context: list[str] = field(default_factory=list)  # text added for the model
    problems: list[str] = field(default_factory=list)  # one line each, for the person
    messages: list[str] = field(default_factory=list)  # `systemMessage`s, for the person

    @property
    def blocked(self) -> bool:
        """A hook said no (exit 2, `deny` or `block`)."""
        return self.decision == "deny"


@dataclass
class _Answer:
    exit_code: int | None
    stdout: str
    stderr: str
    timed_out: bool = False
    start_error: str | None = None


async def _read_capped(stream: asyncio.StreamReader | None) -> str:
    if stream is None:
        return ""
    kept = bytearray()
    while chunk := await stream.read(65536):
        if len(kept) < _MAX_OUTPUT_BYTES:
            kept += chunk[: _MAX_OUTPUT_BYTES - len(kept)]
    return kept.decode("utf-8", errors="replace")


async def _run(hook: Hook, payload: bytes, cwd: Path) -> _Answer:
    env = dict(os.environ)
    for secret in ("OPENAI_API_KEY", "TOOLGATE_API_KEY"):
        env.pop(secret, None)  # the person's key is not a hook's business
    env["CLAUDE_PROJECT_DIR"] = env["TOOLGATE_PROJECT_DIR"] = str(cwd)
    try:
        process = await asyncio.create_subprocess_exec(
            _SHELL,
            "-c",
            hook.command,
            cwd=str(cwd),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
            env=env,
        )
    except OSError as exc:
        return _Answer(None, "", "", start_error=str(exc))

    async def talk() -> tuple[str, str]:
        assert process.stdin is not None
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            process.stdin.write(payload)
            await process.stdin.drain()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            process.stdin.close()
        out, err = await asyncio.gather(_read_capped(process.stdout), _read_capped(process.stderr))
        await process.wait()
        return out, err

    try:
        out, err = await asyncio.wait_for(talk(), hook.timeout)
    except (asyncio.TimeoutError, asyncio.CancelledError) as exc:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            await process.wait()
        if isinstance(exc, asyncio.CancelledError):
            raise
        return _Answer(None, "", "", timed_out=True)
    return _Answer(process.returncode, out, err)


def _first_line(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line[:200]


def _label(hook: Hook) -> str:
    command = hook.command if len(hook.command) <= 60 else hook.command[:57] + "…"
    return f"{hook.event} hook `{command}`"


def _read_json(hook: Hook, answer: _Answer, outcome: HookOutcome) -> dict[str, Any] | None:
    text = answer.stdout.strip()
    if not text.startswith("{"):
        return None
    try:
        doc = json.loads(text)
    except ValueError:
        outcome.problems.append(f"{_label(hook)} printed JSON that cannot be read; ignored")
        return None
    return doc if isinstance(doc, dict) else None


_RANK = {None: 0, "allow": 1, "ask": 2, "deny": 3}


def _say(outcome: HookOutcome, decision: str, reason: str) -> None:
    """Keep the strongest word: deny over ask over allow; reasons of the strongest add up."""
    if _RANK[decision] > _RANK[outcome.decision]:
        outcome.decision, outcome.reason = decision, reason
    elif decision == outcome.decision and reason:
        outcome.reason = f"{outcome.reason}; {reason}" if outcome.reason else reason


def _take(hook: Hook, answer: _Answer, outcome: HookOutcome) -> None:
    if answer.start_error is not None:
        outcome.problems.append(f"{_label(hook)} could not start: {answer.start_error}")
        return
    if answer.timed_out:
        outcome.problems.append(f"{_label(hook)} took longer than {hook.timeout:g} s; ended")
        return
    if answer.exit_code == 2:
        _say(outcome, "deny", answer.stderr.strip() or f"blocked by {_label(hook)}")
        return
    if answer.exit_code != 0:
        detail = _first_line(answer.stderr) or _first_line(answer.stdout) or "no output"
        outcome.problems.append(f"{_label(hook)} failed (exit {answer.exit_code}): {detail}")
        return
    doc = _read_json(hook, answer, outcome)
    if doc is None:
        if hook.event in ("UserPromptSubmit", "SessionStart") and answer.stdout.strip():
            outcome.context.append(answer.stdout.strip())
        return
    _take_json(hook, doc, outcome)


def _take_json(hook: Hook, doc: dict[str, Any], outcome: HookOutcome) -> None:
    specific = doc.get("hookSpecificOutput")
    specific = specific if isinstance(specific, dict) else {}
    if isinstance(doc.get("systemMessage"), str):
        outcome.messages.append(doc["systemMessage"])
    if doc.get("continue") is False:
        _say(outcome, "deny", str(doc.get("stopReason") or f"stopped by {_label(hook)}"))
    decision = specific.get("permissionDecision") or doc.get("decision")
    reason = str(specific.get("permissionDecisionReason") or doc.get("reason") or "").strip()
    mapped = {"allow": "allow", "approve": "allow", "deny": "deny", "block": "deny", "ask": "ask"}
    if isinstance(decision, str) and decision in mapped:
        _say(outcome, mapped[decision], reason or f"{decision} by {_label(hook)}")
    elif decision is not None:
        outcome.problems.append(f"{_label(hook)} said decision {decision!r}; ignored")
    context = specific.get("additionalContext")
    if isinstance(context, str) and context.strip():
        outcome.context.append(context.strip())


def tool_input_for(arguments: Mapping[str, Any], root: Path) -> dict[str, Any]:
    """A call's arguments as hooks read them: plus `file_path`, absolute, as Claude Code's."""
    shown = dict(arguments)
    path = arguments.get("path")
    if isinstance(path, str) and "file_path" not in shown:
        shown["file_path"] = str((root / path).resolve()) if not os.path.isabs(path) else path
    return shown


class HookRunner:
    """The hooks of one workspace's configuration, fired by the session and the gate."""

    def __init__(self, hooks: Iterable[Hook], root: Path) -> None:
        self.hooks = [hook for hook in hooks if hook.event in EVENTS]
        self.root = root

    def __bool__(self) -> bool:
        return bool(self.hooks)

    def wanted(self, event: str, tool_name: str = "", kind: str = "") -> list[Hook]:
        """The hooks that fire on this event (for this tool)."""
        return [h for h in self.hooks if h.event == event and h.matches(tool_name, kind)]

    async def fire(
        self,
        event: str,
        fields: Mapping[str, Any],
        *,
        tool_name: str = "",
        kind: str = "",
    ) -> HookOutcome:
        """Run the matching hooks one after another and put what they said together."""
        outcome = HookOutcome()
        hooks = self.wanted(event, tool_name, kind)
        if not hooks:
            return outcome
        payload = {"hook_event_name": event, "cwd": str(self.root), **fields}
        if tool_name:
            payload.setdefault("tool_name", tool_name)
        data = json.dumps(payload, default=str).encode()
        for hook in hooks:
            _take(hook, await _run(hook, data, self.root), outcome)
        return outcome
