"""The terminal front end's reviewer and printer: coloured diffs, y / n / a reason."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import sys
import threading
import time
from typing import Any, TextIO

from toolgate.agent.events import (
    ASSISTANT_TEXT,
    LATENT_REQUEST,
    LLM_CALL,
    LLM_USAGE,
    MODE_CHANGED,
    NOTICE,
    PROPOSAL_CREATED,
    PROPOSAL_RESOLVED,
    RULES_USED,
    RUN_FINISHED,
    RUN_STARTED,
    TESTS_FINISHED,
    TOOL_CALL_EXECUTED,
    TOOL_CALL_PARSE_ERROR,
    TOOL_CALL_PROPOSED,
    TOOL_PROGRESS,
    Event,
)
from toolgate.cli.answer_view import MarkdownView
from toolgate.review.proposal import Proposal
from toolgate.review.questions import Question, Reply, choices, read_value
from toolgate.review.reviewer import Approval, ApprovalRequest, DiskReviewer
from toolgate.session.run_logs import account_lines, decision_words
from toolgate.workspace import Workspace

_RESET, _RED, _GREEN, _CYAN, _DIM, _BOLD = (
    "\033[0m",
    "\033[31m",
    "\033[32m",
    "\033[36m",
    "\033[2m",
    "\033[1m",
)


def wants_colour(stream: TextIO) -> bool:
    """Colour for a terminal, unless NO_COLOR is set (https://no-color.org)."""
    return stream.isatty() and not os.environ.get("NO_COLOR")


def colour_diff(diff: str, enabled: bool) -> str:
    """A unified diff with + and - lines coloured."""
    if not enabled:
        return diff
    out = []
    for line in diff.splitlines():
        if line.startswith(("+++", "---")):
            out.append(_BOLD + line + _RESET)
        elif line.startswith("+"):
            out.append(_GREEN + line + _RESET)
        elif line.startswith("-"):
            out.append(_RED + line + _RESET)
        elif line.startswith("@@"):
            out.append(_CYAN + line + _RESET)
        else:
            out.append(line)
    return "\n".join(out)


class TerminalReviewer(DiskReviewer):
    """Asks the person at the terminal about each gated call."""

    def __init__(
        self,
        workspace: Workspace,
        *,
        out: TextIO = sys.stderr,
        inp: TextIO = sys.stdin,
        colour: bool | None = None,
    ) -> None:
        super().__init__(workspace)
        self.out = out
        self.inp = inp
        self.colour = wants_colour(out) if colour is None else colour

    async def _ask(self, prompt: str) -> str:
        self.out.write(prompt)
        self.out.flush()
        return (await read_line(self.inp)).strip()

    async def decide(self, proposal: Proposal) -> tuple[set[int] | None, str | None]:
        """Show the diff and read y / n / h (hunk by hunk) / a reason."""
        title = f"{proposal.tool}: {proposal.path}" + (
            " (new file)" if proposal.is_new_file else ""
        )
        self.out.write(
            f"\n{_BOLD if self.colour else ''}── proposed {title}{_RESET if self.colour else ''}\n"
        )
        if proposal.why:
            self.out.write(f"why: {proposal.why}\n")
        self.out.write(colour_diff(proposal.diff, self.colour) + "\n")
        answer = await self._ask(
            "Apply? [y]es / [n]o / [h]unk by hunk / or type a reason to reject: "
        )
        low = answer.lower()
        if low in ("y", "yes"):
            return None, None
        if low in ("h", "hunks"):  # one hunk too: "h" asks, it never applies unasked
            chosen: set[int] = set()
            for hunk in proposal.hunks:
                self.out.write(colour_diff(hunk.unified(), self.colour) + "\n")
                if (
                    await self._ask(f"Apply hunk {hunk.index + 1}/{len(proposal.hunks)}? [y/n] ")
                ).lower() in ("y", "yes"):
                    chosen.add(hunk.index)
            reason = None
            if len(chosen) < len(proposal.hunks):
                reason = await self._ask("Reason for the rejected hunks (optional): ") or None
            return chosen, reason
        if low in ("", "n", "no"):
            return set(), None
        return set(), answer

    async def confirm(self, request: ApprovalRequest) -> Approval:
        """Show the command or git operation and read y / n / a reason."""
        warn = " (not on the allow-list)" if request.off_allow_list else ""
        self.out.write(f"\n── {request.tool}{warn}: {request.summary}\n")
        if request.why:
            self.out.write(f"why: {request.why}\n")
        answer = await self._ask("Allow? [y]es / [n]o / or type a reason to refuse: ")
        if answer.lower() in ("y", "yes"):
            return Approval(True)
        return Approval(False, None if answer.lower() in ("", "n", "no") else answer)

    async def answer(self, question: Question) -> Reply:
        """A server's question (MCP elicitation): each field in turn, then send or not.

        Enter keeps a field's default; three unusable answers to one field decline the form.
        """
        self.out.write(f"\n── {question.asker} asks: {question.message}\n")
        if question.url is not None:
            self.out.write(f"open: {question.url}\n")
            done = await self._ask("Done there? [y]es / [n]o: ")
            return Reply("accept" if done.lower() in ("y", "yes") else "decline")
        values: dict[str, Any] = {}
        required = question.required()
        for name, schema in question.fields().items():
            value = await self._field(name, schema, name in required)
            if value is _DECLINED:
                return Reply("decline")
            if value is not _SKIPPED:
                values[name] = value
        send = await self._ask("Send this answer? [y]es / [n]o: ")
        return Reply("accept", values) if send.lower() in ("y", "yes") else Reply("decline")

    async def _field(self, name: str, schema: dict[str, Any], required: bool) -> Any:
        title = str(schema.get("title") or name)
        hint = " / ".join(map(str, choices(schema)))
        if schema.get("type") == "boolean":
            hint = "y / n"
        default = schema.get("default")
        prompt = (
            title
            + (f" — {schema['description']}" if schema.get("description") else "")
            + (f" ({hint})" if hint else "")
            + (f" [{default}]" if default is not None else "")
            + ("" if required else " (optional)")
            + ": "
        )
        for _ in range(3):
            text = await self._ask(prompt)
            if not text:
                if default is not None:
                    return default
                if not required:
                    return _SKIPPED
                self.out.write("an answer is needed\n")
                continue
            try:
                return read_value(schema, text)
            except ValueError as exc:
                self.out.write(f"expected {exc}\n")
        return _DECLINED


_SKIPPED = object()  # an optional field left empty
_DECLINED = object()  # no usable answer after three tries


def wants_spinner(stream: TextIO) -> bool:
    """A spinner only on a terminal that can redraw a line."""
    return stream.isatty() and os.environ.get("TERM", "") != "dumb"


class Spinner:
    """One redrawn line while the model thinks: the model, the step and the seconds waited."""

    FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"

    def __init__(self, err: TextIO) -> None:
        """Draw on ERR (a terminal)."""
        self.err = err
        self.model = "the model"
        self.step = 1  # the model request the run is waiting for
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Begin drawing, unless already drawing or outside an event loop."""
        if self._task is not None:
            return
        try:
            self._task = asyncio.get_running_loop().create_task(self._spin())
        except RuntimeError:  # no loop: nothing waits asynchronously here
            self._task = None

    def stop(self) -> None:
        """Stop and clear the line."""
        if self._task is None:
            return
        self._task.cancel()
        self._task = None
        self.err.write("\r\033[K")
        self.err.flush()

    async def _spin(self) -> None:
        started = time.monotonic()
        for frame in itertools.cycle(self.FRAMES):
            waited = time.monotonic() - started
            self.err.write(
                f"\r{frame} waiting for {self.model} · step {self.step} · {waited:.0f} s\033[K"
            )
            self.err.flush()
            await asyncio.sleep(0.1)


def brief_args(args: dict[str, Any]) -> str:
    """A call's arguments in one short line: long text is counted, never cut mid-string."""
    parts = []
    for key, value in args.items():
        if key.startswith("_"):
            continue
        if isinstance(value, str) and ("\n" in value or len(value) > 60):
            lines = value.count("\n") + (0 if value.endswith("\n") else 1)
            parts.append(f"{key}=[{lines} line{'s' if lines != 1 else ''}]")
        else:
            parts.append(f"{key}={json.dumps(value, ensure_ascii=False)[:60]}")
    return " ".join(parts)


async def read_line(inp: TextIO) -> str:
    """One line from INP without holding up the process's exit.

    A daemon thread, not asyncio's executor: asyncio.run waits for its executor's threads on
    the way out, so Ctrl-C at a prompt would hang until Enter and swallow the next line.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[str] = loop.create_future()
    if inp.isatty():
        # A terminal hands over a whole line at Enter; read it only once it is there, so a
        # prompt given up (Ctrl-C) leaves the next line to whoever asks next.
        fd = inp.fileno()

        def ready() -> None:
            if not future.done():
                future.set_result(os.read(fd, 65536).decode(errors="replace"))

        loop.add_reader(fd, ready)
        try:
            return await future
        finally:
            loop.remove_reader(fd)

    def settle(line: str | None, error: BaseException | None) -> None:
        if future.done():
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(line or "")

    def read() -> None:
        try:
            line, error = inp.readline(), None
        except Exception as exc:  # a closed stdin is the caller's to report
            line, error = None, exc
        try:
            loop.call_soon_threadsafe(settle, line, error)
        except RuntimeError:  # the loop is gone: nobody waits for this line
            pass

    threading.Thread(target=read, name="toolgate-stdin", daemon=True).start()
    return await future


_WAITING_AFTER = (RUN_STARTED, TOOL_CALL_EXECUTED, NOTICE, MODE_CHANGED, TESTS_FINISHED)
_SHOWN = (
    ASSISTANT_TEXT,
    TOOL_CALL_PROPOSED,
    TOOL_CALL_EXECUTED,
    TOOL_CALL_PARSE_ERROR,
    PROPOSAL_CREATED,
    TESTS_FINISHED,
    MODE_CHANGED,
    NOTICE,
    TOOL_PROGRESS,
    RULES_USED,
    LLM_USAGE,
    RUN_FINISHED,
)


class Printer:
    """Prints a run's transcript to stderr, and its events as JSON lines when asked."""

    def __init__(
        self,
        *,
        err: TextIO = sys.stderr,
        out: TextIO = sys.stdout,
        json_lines: bool = False,
        colour: bool | None = None,
        show_diffs: bool = True,
        markdown: bool = False,
        model: bool = True,
    ) -> None:
        """`model`: a model answers after the events (False: nothing waits for one, no spinner)."""
        self.err = err
        self.out = out
        self.json_lines = json_lines
        self.show_diffs = show_diffs  # off when a TerminalReviewer shows each diff itself
        self.colour = wants_colour(err) if colour is None else colour
        self._mid_text = False
        self.spinner = Spinner(err) if model and wants_spinner(err) else None
        # The model's words drawn as markdown while they stream, on a terminal with colour.
        self.answer_view: MarkdownView | None = None
        if markdown and self.colour and wants_spinner(err):
            self.answer_view = MarkdownView(err)
        self._hunks: dict[str, int] = {}  # proposal id → its hunk count
        self._partly: str | None = None  # how the last proposal was partly accepted

    def _label(self, fields: dict[str, Any]) -> str:
        """What decided a call, in words a person does not misread."""
        decision = fields["decision"]
        partly, self._partly = self._partly, None
        if partly and decision in ("approved", "auto"):
            return partly
        return decision_words(str(decision), fields.get("error"), fields.get("rule"))

    def end_text(self) -> None:
        """Close the model's words: the markdown view draws its last frame, a line ends."""
        if self.answer_view is not None:
            self.answer_view.end()
        if self._mid_text:
            self.err.write("\n")
            self.err.flush()
            self._mid_text = False

    def _line(self, text: str, style: str = "") -> None:
        self.end_text()
        if self.colour and style:
            text = style + text + _RESET
        self.err.write(text + "\n")
        self.err.flush()

    def __call__(self, event: Event) -> None:
        """Print one event."""
        if self.json_lines:
            self.out.write(json.dumps(event.to_dict(), ensure_ascii=False, default=str) + "\n")
            self.out.flush()
        f = event.fields
        if event.type == LLM_CALL and f.get("mode") != LATENT_REQUEST:
            self.end_text()  # a new request: the last one's words never run into the next's
        if self.spinner is not None:
            if event.type == RUN_STARTED:
                self.spinner.model = str(f.get("model"))
            elif event.type == LLM_CALL and isinstance(f.get("n"), int):
                self.spinner.step = f["n"]
            # Anything printed clears the spinner's line first; other events pass unseen.
            if event.type in _SHOWN:
                self.spinner.stop()
        self._show(event)
        # The model is thought to be thinking after the run starts and after each result.
        if self.spinner is not None and event.type in _WAITING_AFTER:
            if self._mid_text:  # the spinner redraws its own line, never the model's words
                self.err.write("\n")
                self._mid_text = False
            self.spinner.start()

    def _show(self, event: Event) -> None:
        f = event.fields
        if event.type == ASSISTANT_TEXT:
            if self.answer_view is not None:
                self.answer_view.feed(f["text"])
                return
            self.err.write(f["text"])
            self.err.flush()
            self._mid_text = not f["text"].endswith("\n")
        elif event.type == TOOL_CALL_PROPOSED:
            self._line(f"→ {f['tool_name']} {brief_args(f.get('raw_args') or {})}", _CYAN)
        elif event.type == TOOL_CALL_EXECUTED:
            mark = "✓" if f["success"] else "✗"
            detail = f" — {f['error']}" if f.get("error") else ""
            label = self._label(f)
            self._line(
                f"  {mark} {f['tool_name']} [{label}] {f['latency_ms']:.0f} ms{detail}",
                _GREEN if f["success"] else _RED,
            )
        elif event.type == TOOL_CALL_PARSE_ERROR:
            self._line(f"  ✗ unreadable tool call: {f['error']}", _RED)
        elif event.type == PROPOSAL_CREATED:
            self._hunks[f["proposal_id"]] = int(f.get("hunks") or 0)
            if self.show_diffs:
                self._line(colour_diff(f["diff"], self.colour))
        elif event.type == PROPOSAL_RESOLVED:
            if f.get("status") == "partially_accepted":
                total = self._hunks.get(f["proposal_id"], 0)
                self._partly = (
                    f"partly accepted: {len(f.get('hunks_applied') or [])} of {total} hunks"
                )
        elif event.type == TESTS_FINISHED and f.get("not_run"):
            self._line(f"  tests did not run: {f['not_run']}", _RED)
        elif event.type == TESTS_FINISHED:
            s = f.get("summary", {})
            failing = f.get("failing") or []
            bad = bool(s.get("failed") or s.get("errors") or failing)
            self._line(
                f"  tests: {s.get('passed', 0)} passed, {s.get('failed', 0)} failed, "
                f"{s.get('errors', 0)} errors"
                + (f" — failing: {', '.join(failing)}" if failing else ""),
                _RED if bad else _GREEN,
            )
        elif event.type == MODE_CHANGED:
            self._line(f"(tool calling switched to {f['mode']} mode: {f['reason']})", _DIM)
        elif event.type == NOTICE:
            self._line(f["message"], _DIM)
        elif event.type == TOOL_PROGRESS:
            self._line(f"  [{f['tool_name']}] {f['line']}", _DIM)
        elif event.type == RUN_STARTED:
            rules = f"; rules: {', '.join(f['rules'])}" if f.get("rules") else ""
            self._line(
                f"{f.get('model')} at {f.get('base_url')} ({f.get('tool_calling_mode')} tool "
                f"calling{rules}); waiting for the model…",
                _DIM,
            )
        elif event.type == LLM_USAGE and not f.get("mode") and f.get("prompt_tokens"):
            # What a step's request cost; where the server says so, how much it read again.
            cached = f.get("cached_tokens")
            said = f", {cached} cached" if isinstance(cached, int) else ""
            self._line(f"  (request {f.get('n')}: {f['prompt_tokens']} prompt tokens{said})", _DIM)
        elif event.type == RULES_USED:
            self._line(f"(rules for the files touched: {', '.join(f['rules'])})", _DIM)
        elif event.type == RUN_FINISHED:
            self.end_text()
            for line in account_lines(f.get("account") or {}):
                self._line(f"  {line}", _DIM)
            if f.get("done") and not f.get("account"):  # a plan's steps; a run says it in words
                self._line(f"  done: {', '.join(f['done'])}", _DIM)
            if f.get("missing"):
                self._line(f"  missing: {', '.join(f['missing'])}", _DIM)
            reason = f" — {f['reason']}" if f.get("reason") else ""
            self._line(f"run {event.run_id} {f['status']}{reason}", _BOLD)
