"""The loop of `toolgate chat`: a session you talk to turn by turn in the terminal.

Each line is a turn of one session on the session service, reviewed with the same prompts as
`toolgate run --approve ask`. Line editing and history come from the standard library's
readline: a prompt is read only between turns, so nothing needs an asynchronous prompt, and no
dependency is added for it. Ctrl-C stops the turn; twice within two seconds leaves.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolgate.agent.events import RUN_STARTED, Event, EventBus
from toolgate.cli.terminal import Printer, TerminalReviewer
from toolgate.config import Config, ConfigError
from toolgate.session import SessionError, SessionService, SetupError
from toolgate.session.customization import BUILTIN_COMMANDS, prompt_commands
from toolgate.session.mentions import IN_TERMINAL, Pointed, completions
from toolgate.workspace import Workspace

if TYPE_CHECKING:
    from toolgate.session.customization import PromptCommand
    from toolgate.session.undo import UndoPlan

DOUBLE_PRESS_SECONDS = 2.0
HELP = """\
/new          start a new session (the next line is its first turn)
/sessions     the workspace's sessions
/load ID      continue session ID
/undo         put back what the last run changed (it asks first)
/rewind N [code|conversation|both]  back to the end of turn N: the later runs' files put
              back (your own later edits left alone), the later turns out of what the model
              sees, or both (the default); /rewind lists the turns, /rewind undo takes it back
/tests [CMD]  run the tests (or CMD, a test command on the allow-list) and show the failures
/review [staged]  the model reviews the working tree's changes (or the staged ones)
/model        which model and endpoint the turns use
/mode [MODE]  the approval mode: ask, auto-edits (file changes without asking) or read-only
/help         this list
/exit         leave (or Ctrl-D; Ctrl-C twice quickly)
Ctrl-C during a turn stops that turn; the session stays."""


def _history_file() -> Path:
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "toolgate" / "chat_history"


def _enable_history(
    names: Callable[[], list[str]] | None = None,
    mentions: Callable[[str], list[str]] | None = None,
) -> None:
    """Line editing, a history kept across chats, and Tab for slash commands and `@` mentions."""
    try:
        import readline
    except ImportError:  # pragma: no cover - readline exists on the platforms we support
        return
    if names is not None:

        def complete(text: str, state: int) -> str | None:
            if text.startswith("@") and mentions is not None:
                found = mentions(text)
            elif text.startswith("/"):
                found = [f"/{name}" for name in names() if f"/{name}".startswith(text)]
            else:
                return None
            return found[state] if state < len(found) else None

        readline.set_completer(complete)
        readline.set_completer_delims(" \t\n")
        readline.parse_and_bind("tab: complete")
    path = _history_file()
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        readline.read_history_file(path)
    readline.set_history_length(1000)

    import atexit

    def save() -> None:
        with contextlib.suppress(OSError):
            readline.write_history_file(path)

    atexit.register(save)


class Chat:
    """One chat: the current session and the turns run in it."""

    def __init__(self, root: Path, config: Config, session_id: str | None = None) -> None:
        """Chat in ROOT with CONFIG, continuing SESSION_ID when given."""
        self.root = root
        self.config = config
        self.current = session_id
        self.service = SessionService(root, lambda: config, notice=self._say)
        self.workspace = Workspace(root, max_file_bytes=config.limits.max_file_bytes)
        self._last_interrupt = 0.0
        self.leaving = False
        self.loop = asyncio.new_event_loop()
        self.used: str | None = None  # the model, endpoint and mode of the last turn

    def _say(self, message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    def _pressed_twice(self) -> bool:
        now = time.monotonic()
        twice = now - self._last_interrupt < DOUBLE_PRESS_SECONDS
        self._last_interrupt = now
        return twice

    def _note_model(self, event: Event) -> None:
        """Remember what the last turn ran on: the endpoint may have chosen the model."""
        if event.type == RUN_STARTED:
            f = event.fields
            self.used = (
                f"model {f.get('model')} at {f.get('base_url')} "
                f"({f.get('tool_calling_mode')} tool calling)"
            )

    async def turn(self, text: str) -> str:
        """Run one turn of the current session; the run's status."""
        bus = EventBus()
        printer = Printer(show_diffs=False, markdown=True)
        bus.subscribe(printer)
        bus.subscribe(self._note_model)
        reviewer = TerminalReviewer(self.workspace)
        claim = self.service.claim(self.current, new=self.current is None)
        self.current = claim.session_id
        loop = asyncio.get_running_loop()

        def interrupted() -> None:
            if self._pressed_twice():
                self.leaving = True
            printer.end_text()  # the answer drawn so far stays; nothing redraws over this line
            if printer.spinner is not None:
                printer.spinner.stop()
            self._say("\n(stopping the turn — Ctrl-C again to leave)")
            claim.cancel("stopped with Ctrl-C")  # while it starts (the model, MCP servers) too

        loop.add_signal_handler(signal.SIGINT, interrupted)
        try:
            outcome = await self.service.turn(
                claim,
                text,
                config=self.config,
                reviewer=reviewer,
                bus=bus,
                pointed=Pointed(unavailable=IN_TERMINAL),
            )
        finally:
            loop.remove_signal_handler(signal.SIGINT)
        return outcome.status

    async def _stoppable(self, work: Coroutine[Any, Any, None]) -> None:
        """Do WORK until it ends or Ctrl-C stops it (the chat stays)."""
        task = asyncio.ensure_future(work)
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGINT, task.cancel)
        try:
            await task
        except asyncio.CancelledError:
            self._say("\n(stopped)")
        finally:
            loop.remove_signal_handler(signal.SIGINT)

    def prompt_commands(self) -> dict[str, PromptCommand]:
        """The workspace's and the person's prompt commands, read now."""
        return prompt_commands(self.workspace.root)

    def is_prompt_command(self, line: str) -> bool:
        """Whether `/NAME …` names a prompt file's command (it runs as a turn)."""
        name = line[1:].partition(" ")[0]
        return name not in BUILTIN_COMMANDS and name in self.prompt_commands()

    def command(self, line: str) -> None:
        """Do one slash command."""
        name, _, arg = line.partition(" ")
        arg = arg.strip()
        if name in ("/exit", "/quit"):
            self.leaving = True
        elif name == "/help":
            self._say(HELP)
            commands = self.prompt_commands()
            if commands:
                self._say("\nthis project's commands (prompt files):")
                for command in commands.values():
                    hint = f" {command.argument_hint}" if command.argument_hint else ""
                    about = f"  {command.description}" if command.description else ""
                    self._say(f"/{command.name}{hint}{about}")
        elif name == "/new":
            self.current = None
            self._say("a new session starts with your next line")
        elif name == "/sessions":
            listed = self.service.sessions()
            for info in listed:
                mark = "*" if info.id == self.current else " "
                rewound = f" ({info.rewound} rewound)" if info.rewound else ""
                self._say(f"{mark} {info.id}  {info.turns:3} turns{rewound}  {info.title}")
            if not listed:
                self._say("no sessions in this workspace yet")
        elif name == "/load":
            if not arg:
                self._say("/load needs a session id (see /sessions)")
                return
            try:
                self.service.load(arg)
            except SessionError as exc:
                self._say(f"cannot load it: {exc}")
                return
            self.current = arg
            self._say(f"continuing session {arg}")
        elif name == "/undo":
            self.undo()
        elif name == "/rewind":
            self.rewind(arg)
        elif name == "/tests":
            self.loop.run_until_complete(self._stoppable(self.tests(arg or None)))
        elif name == "/review":
            if arg not in ("", "staged"):
                self._say("/review takes nothing, or `staged`")
                return
            self.loop.run_until_complete(self._stoppable(self.review(staged=arg == "staged")))
        elif name == "/mode":
            self.mode(arg)
        elif name == "/model":
            self._say(
                self.used
                or (
                    f"model {self.config.model.name or '(the endpoint’s first)'} at "
                    f"{self.config.model.base_url or '(the embedded local model)'}"
                )
            )
        else:
            self._say(f"unknown command {name}; /help lists them")

    def mode(self, name: str) -> None:
        """Say the approval mode, or choose the one the next turns run in."""
        from toolgate.session.modes import DESCRIPTIONS

        if name:
            try:
                self.service.set_mode(name)
            except ValueError as exc:
                self._say(f"{exc}; /mode lists them")
                return
        for mode, description in DESCRIPTIONS.items():
            mark = "*" if mode == self.service.mode else " "
            self._say(f"{mark} {mode:11} {description}")

    async def tests(self, command: str | None) -> None:
        """Run the tests through the gate, as the model's `run_tests` runs them, and show them."""
        from toolgate.session.turns import TestRun, not_run_reason

        bus = EventBus()
        bus.subscribe(Printer(show_diffs=False, model=False))
        runs: list[TestRun] = []
        self._say(f"running {command or 'the tests'}…")
        try:
            result = await self.service.run_tests(
                command, reviewer=TerminalReviewer(self.workspace), bus=bus, on_test_run=runs.append
            )
        except ValueError as exc:
            self._say(f"cannot run them: {exc}")
            return
        if not runs:
            self._say(f"the tests did not run: {result.error or 'no result'}")
            return
        run = runs[-1]
        not_run = not_run_reason(run)
        if not_run is not None:
            self._say(f"the tests did not run: {not_run}")
            return
        s = run.summary
        self._say(
            f"tests: {s.passed} passed, {s.failed} failed, {s.errors} errors, {s.skipped} skipped "
            f"({s.duration_seconds:.1f} s)"
        )
        for failure in run.failures[:20]:
            message = failure.message.replace("\n", "\n      ")  # under its own line
            self._say(f"  ✗ {failure.test_id} ({failure.file}:{failure.line}): {message}")
        if len(run.failures) > 20:
            self._say(f"  … and {len(run.failures) - 20} more")

    async def review(self, staged: bool) -> None:
        """Have the model review the changes, and show its comments and verdict."""
        from toolgate.session import ReviewError

        what = "staged" if staged else "in the working tree"
        self._say(f"reviewing the changes {what}…")
        try:
            _, result = await self.service.review(self.config, self._say, staged=staged)
        except ReviewError as exc:  # ReviewSetupError among them
            self._say(f"no review: {str(exc).removeprefix('no review: ')}")
            return
        if result is None:
            self._say(f"no changes {what}: nothing to review")
            return
        for line in result.comment_lines():
            self._say(f"  {line}")
        self._say(f"review: {result.summary()}")

    def undo(self) -> None:
        """Show what undoing the last run would put back, and do it when the person agrees."""
        from toolgate.session import CheckpointError, SessionBusy

        async def ask(plan: UndoPlan) -> bool:
            self._show_undo(plan)
            answer = _read(f"Undo run {plan.run_id}? [y/N] ")  # nothing else runs meanwhile
            return (answer or "").strip().lower() in ("y", "yes")

        try:
            done = self.loop.run_until_complete(self.service.undo(ask=ask))
        except (CheckpointError, SessionBusy) as exc:
            self._say(f"nothing to undo: {exc}")
            return
        except (OSError, ValueError) as exc:
            self._say(f"the undo failed, nothing was undone: {exc}")
            return
        plan = done.plan
        if not plan.changes:
            self._show_undo(plan)
            self._say(f"run {plan.run_id}: nothing to put back")
        elif done.declined:
            self._say("left as it is")
        else:
            self._say(f"run {plan.run_id}: {plan.outcome()}")

    def rewind(self, arg: str) -> None:
        """`/rewind`: list the turns; `/rewind N [WHAT]`: rewind to turn N; `/rewind undo`."""
        from toolgate.session import REWIND_WHATS, CheckpointError, RewindDone

        words = arg.split()
        if self.current is None:
            self._say("no session yet: there is nothing to rewind")
            return
        if not words:
            self._turns()
            return
        done: RewindDone
        try:
            if words == ["undo"]:
                done = self.loop.run_until_complete(self.service.undo_rewind(self.current))
            else:
                what = words[1] if len(words) > 1 else "both"
                if len(words) > 2 or not words[0].isdigit() or what not in REWIND_WHATS:
                    self._say("/rewind N [code|conversation|both], or /rewind undo")
                    return
                done = self.loop.run_until_complete(
                    self.service.rewind(self.current, int(words[0]), what)
                )
        except (SessionError, CheckpointError) as exc:
            self._say(f"cannot rewind: {exc}")
            return
        except (OSError, ValueError) as exc:
            self._say(f"the rewind failed part-way (what was undone stays undoable): {exc}")
            return
        self._say(done.said())
        for hint in done.revert:
            self._say(f"  {hint}")
        if not done.taken_back:
            self._say("/rewind undo takes it back")

    def _turns(self) -> None:
        """The current session's turns, numbered, those rewound marked."""
        assert self.current is not None
        try:
            entries = self.service.load(self.current)["transcript"]
        except SessionError as exc:
            self._say(f"cannot read the session: {exc}")
            return
        for entry in entries:
            if entry.get("kind") == "user":
                mark = "  (rewound)" if entry.get("rewound") else ""
                self._say(f"  {entry.get('turn')}: {entry['text'][:70]}{mark}")
        self._say("/rewind N [code|conversation|both] goes back to the end of turn N")

    def _show_undo(self, plan: UndoPlan) -> None:
        """What undoing the run would do to each file, and how to revert its commits."""
        from toolgate.session.undo import CONFLICT, REMOVE

        for item in plan.files:
            if item.action == CONFLICT:
                self._say(f"  {item.path}: changed since the run, left alone")
            elif item.action == REMOVE:
                self._say(f"  {item.path}: remove (the run created it)")
            elif item in plan.changes:
                self._say(f"  {item.path}: restore as it was before the run")
        hint = plan.revert_hint()
        if hint:
            self._say(f"  {hint}")


def _read(prompt: str) -> str | None:
    """A line from the person; None for end of input."""
    try:
        return input(prompt)
    except EOFError:
        return None


def run_chat(root: Path, config: Config, session_id: str | None = None) -> int:
    """The chat's loop until /exit, Ctrl-D or Ctrl-C twice; the exit status."""
    chat = Chat(root, config, session_id)
    _enable_history(
        lambda: sorted(BUILTIN_COMMANDS | set(chat.prompt_commands())),
        lambda typed: completions(chat.workspace, typed),
    )
    loop = chat.loop
    print(
        f"toolgate chat in {root} — /help for commands, Ctrl-C stops a turn, /exit leaves",
        file=sys.stderr,
        flush=True,
    )
    status = 0
    try:
        while not chat.leaving:
            try:
                line = _read("› ")
            except KeyboardInterrupt:
                if chat._pressed_twice():
                    break
                print("\n(Ctrl-C again to leave, or /exit)", file=sys.stderr, flush=True)
                continue
            if line is None:
                print(file=sys.stderr)
                break
            line = line.strip()
            if not line:
                continue
            if line.startswith("/") and not chat.is_prompt_command(line):
                chat.command(line)
                continue
            try:
                loop.run_until_complete(chat.turn(line))
            except (SetupError, SessionError) as exc:
                chat._say(f"toolgate: {exc}")
            except ConfigError as exc:
                chat._say(f"toolgate: configuration error: {exc}")
                status = 2
                break
    finally:
        with contextlib.suppress(Exception):
            loop.run_until_complete(chat.service.close())
        loop.close()
    return status
