"""Slash commands: what the editor offers after `/`, and the prompts that are commands.

`/tests` is a task given to the model. `/review`, `/new` and `/undo` are done by Toolgate
itself, outside a run: `/review` has the model review the working tree's changes and shows its
comments (it changes nothing, and the conversation does not keep it); `/new` sets the
session's earlier turns aside (the model starts afresh; the editor and `session/load` still
show them); `/undo` puts back what the workspace's last run changed, from its checkpoint,
after asking with the diffs. `/undo` is offered only while there is a run to undo. `/rewind N
[code|conversation|both]` takes the session back to the end of turn N (the later runs' files
put back, the later turns out of what the model sees, or both), and `/rewind undo` takes the
latest rewind back.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from acp import RequestError, helpers
from acp.agent.connection import AgentSideConnection
from acp.schema import (
    AllowedOutcome,
    AvailableCommand,
    AvailableCommandInput,
    PermissionOption,
    ToolCallLocation,
    ToolCallUpdate,
    UnstructuredCommandInput,
)

from toolgate.acp import convert
from toolgate.acp.updates import Updates
from toolgate.config import Config
from toolgate.session import (
    REWIND_WHATS,
    CheckpointError,
    ReviewError,
    RewindDone,
    SessionError,
    SessionService,
)
from toolgate.session.customization import prompt_commands
from toolgate.session.undo import REMOVE, UndoPlan, disk_text, restore_on_disk
from toolgate.workspace import PathRefused, Workspace

log = logging.getLogger(__name__)
# A prompt file's command runs as a turn: the session service expands it (docs/CUSTOMIZE.md).

TESTS = AvailableCommand(name="tests", description="run the project's tests and fix what fails")
REVIEW = AvailableCommand(
    name="review", description="have the model review the working tree's changes (changes nothing)"
)
NEW = AvailableCommand(
    name="new", description="start afresh: the model forgets this session's earlier turns"
)
UNDO = AvailableCommand(
    name="undo", description="put back what the last run changed (asks first, with the diffs)"
)
REWIND = AvailableCommand(
    name="rewind",
    description="back to the end of turn N: the later runs' files, the later turns, or both",
    input=AvailableCommandInput(
        root=UnstructuredCommandInput(hint="N [code|conversation|both], or undo")
    ),
)
TASKS = {
    "/tests": "Run the project's tests with run_tests. If any fail, find the cause and fix it, "
    "then run the tests again.",
}


def command_of(text: str) -> str | None:
    """The command a prompt is (`/review`, `/new`, `/undo`, `/rewind …`), or None for a task."""
    word = text.strip()
    if word == "/rewind" or word.startswith("/rewind "):
        return "/rewind"
    return word if word in ("/review", "/new", "/undo") else None


def available(service: SessionService) -> list[AvailableCommand]:
    """The commands to offer now: the built-in ones, then the project's prompt files'."""
    own = [TESTS, REVIEW, NEW, *([UNDO] if service.undoable() else []), REWIND]
    found = prompt_commands(service.root).values()
    return own + [
        AvailableCommand(
            name=command.name,
            description=command.description or f"the prompt of {command.path.name}",
            input=AvailableCommandInput(
                root=UnstructuredCommandInput(hint=command.argument_hint or "arguments")
            ),
        )
        for command in found
    ]


async def review(service: SessionService, config: Config) -> str:
    """The model's review of the working tree's changes, as the message to show."""
    try:
        changes, result = await service.review(
            config, lambda notice: log.info("review: %s", notice)
        )
    except ReviewError as exc:  # ReviewSetupError among them
        return f"No review: {str(exc).removeprefix('no review: ')}"
    if result is None:
        return "Nothing to review: the working tree has no changes against HEAD."
    files = len(changes.files)
    lines = [f"Review of {files} changed file{'' if files == 1 else 's'}: {result.summary()}."]
    for comment in result.comments:
        lines.append(f"- `{comment.path}:{comment.line}` {comment.severity}: {comment.message}")
        if comment.suggestion and "\n" in comment.suggestion.strip():
            fenced = comment.suggestion.strip("\n").replace("\n", "\n  ")
            lines.append(f"  suggested:\n  ```\n  {fenced}\n  ```")
        elif comment.suggestion:
            lines.append(f"  suggested: `{comment.suggestion}`")
    return "\n".join(lines)


def _content(workspace: Workspace, plan: UndoPlan) -> list[convert.ToolContent]:
    """Each file's change as the editor shows it: a diff from what it holds now, or a line."""
    read = disk_text(workspace)  # the editor's text, where it was read, else the disk's
    content: list[convert.ToolContent] = []
    for item in plan.changes:
        if item.action == REMOVE:
            content.append(convert.text_content(f"{item.path}: removed (the run created it)"))
        elif item.before_text is None:
            content.append(convert.text_content(f"{item.path}: restored (not text)"))
        else:
            current = read(item.path)
            content.append(
                convert.diff_content(workspace.root, item.path, current, item.before_text)
            )
    for item in plan.conflicts:
        content.append(convert.text_content(f"{item.path}: changed since the run, left alone"))
    hint = plan.revert_hint()
    if hint:
        content.append(convert.text_content(hint))
    return content


class EditorFiles:
    """How a command outside a run reads and writes the files through the editor, where it can.

    The editor's text of a file is fetched before the plan is made (`fs/read_text_file`), and
    what is put back is written with `fs/write_text_file` (a file to remove, or not text, on
    disk), so an unsaved buffer is what is compared and what is replaced.
    """

    def __init__(
        self,
        conn: AgentSideConnection,
        session_id: str,
        root: Path,
        *,
        read_through_client: bool,
        write_through_client: bool,
    ) -> None:
        self.texts: dict[Path, str] = {}  # the editor's text of the files, by real path
        self.workspace = Workspace(root, buffers=lambda: self.texts)
        self._conn = conn
        self._session_id = session_id
        self._write = write_through_client
        self.read_first = self._read_first if read_through_client else None

    async def _read_first(self, path: str) -> None:
        try:
            real = self.workspace.resolve(path)
        except PathRefused:
            return
        if not real.is_file():
            return
        try:
            response = await self._conn.read_text_file(session_id=self._session_id, path=str(real))
        except (ConnectionError, RequestError):
            return  # read from disk instead
        self.texts[real] = response.content

    async def apply(self, target: Workspace, plan: UndoPlan) -> dict[str, str]:
        """Write the plan's files through the editor where it can, else on disk."""
        by_disk = [i for i in plan.changes if i.action == REMOVE or i.before_text is None]
        through_editor = [item for item in plan.changes if item not in by_disk]
        if not self._write:
            by_disk, through_editor = list(plan.changes), []
        restore_on_disk(target, by_disk)
        written: dict[str, str] = {}  # what the editor holds now, maybe unsaved
        for item in through_editor:
            real = target.resolve(item.path, for_write=True)
            text = item.before_text or ""
            try:
                await self._conn.write_text_file(
                    session_id=self._session_id, path=str(real), content=text
                )
            except (ConnectionError, RequestError) as exc:
                log.warning("fs/write_text_file %s: %s; restored on disk", real, exc)
                restore_on_disk(target, [item])
            else:
                written[item.path] = text
        return written


class UndoQuestion:
    """The undo's question: a tool call showing the diffs, and a permission request on it."""

    def __init__(
        self, conn: AgentSideConnection, session_id: str, updates: Updates, workspace: Workspace
    ) -> None:
        self._conn = conn
        self._session_id = session_id
        self._updates = updates
        self._workspace = workspace
        self.call_id = ""  # the tool call that shows the undo, once asked

    async def __call__(self, plan: UndoPlan) -> bool:
        """Show the plan's diffs as a pending call; whether the person chose Undo."""
        session_id, updates, workspace = self._session_id, self._updates, self._workspace
        call_id = self.call_id = f"undo-{plan.run_id}"
        title = f"undo run {plan.run_id}"
        locations = [ToolCallLocation(path=str(workspace.root / i.path)) for i in plan.changes]
        updates.put(
            session_id,
            helpers.start_tool_call(
                call_id, title, kind="edit", status="pending", locations=locations
            ),
        )
        await updates.flush()  # the call is shown before it is asked about
        update = ToolCallUpdate(
            tool_call_id=call_id,
            title=title,
            kind="edit",
            status="pending",
            content=_content(workspace, plan),
        )
        options = [
            PermissionOption(option_id="allow_once", name="Undo", kind="allow_once"),
            PermissionOption(option_id="reject_once", name="Keep", kind="reject_once"),
        ]
        try:
            response = await self._conn.request_permission(
                session_id=session_id, tool_call=update, options=options
            )
        except (ConnectionError, RequestError) as exc:
            log.warning("permission request failed: %s", exc)
            response = None
        outcome = response.outcome if response is not None else None
        if isinstance(outcome, AllowedOutcome) and outcome.option_id == "allow_once":
            return True
        left = [convert.text_content("left as it is")]
        updates.put(session_id, convert.progress(call_id, "failed", left))
        return False


async def undo(
    conn: AgentSideConnection,
    session_id: str,
    service: SessionService,
    *,
    read_through_client: bool,
    write_through_client: bool,
    updates: Updates,
) -> str:
    """Ask about undoing the last run with its diffs; do it when allowed. Returns what to say.

    The session service does the undo (its record, the undone run marked, the conversation
    told); this says how to ask (a permission request on a tool call showing the diffs) and
    how to write (through the editor's `fs/write_text_file` where it can).
    """
    files = EditorFiles(
        conn,
        session_id,
        service.root,
        read_through_client=read_through_client,
        write_through_client=write_through_client,
    )
    workspace = files.workspace
    ask = UndoQuestion(conn, session_id, updates, workspace)
    try:
        done = await service.undo(
            ask=ask,
            apply=files.apply,
            buffers=workspace.buffers,
            read_first=files.read_first,
        )
    except CheckpointError as exc:
        return f"Nothing to undo: {exc}."
    plan = done.plan
    if not plan.changes:
        conflicts = ", ".join(item.path for item in plan.conflicts)
        left = f" ({conflicts} changed since, left alone)" if conflicts else ""
        return f"Run {plan.run_id}: nothing to put back{left}."
    if done.declined:
        return f"Left as it is: run {plan.run_id} was not undone."
    finished = plan.outcome()
    updates.put(
        session_id, convert.progress(ask.call_id, "completed", [convert.text_content(finished)])
    )
    said = f"Undid run {plan.run_id}: {finished} (recorded as {done.undo_run_id}, itself undoable)."
    untouched = plan.left_alone()
    if untouched:
        said += f" {untouched[0].upper()}{untouched[1:]}."
    return said


async def rewind(
    conn: AgentSideConnection,
    session_id: str,
    service: SessionService,
    words: list[str],
    *,
    read_through_client: bool,
    write_through_client: bool,
) -> str:
    """`/rewind N [WHAT]` or `/rewind undo`, written through the editor; returns what to say."""
    files = EditorFiles(
        conn,
        session_id,
        service.root,
        read_through_client=read_through_client,
        write_through_client=write_through_client,
    )
    io: dict[str, Any] = {
        "apply": files.apply,
        "buffers": files.workspace.buffers,
        "read_first": files.read_first,
    }
    done: RewindDone
    try:
        if words == ["undo"]:
            done = await service.undo_rewind(session_id, **io)
        else:
            what = words[1] if len(words) > 1 else "both"
            if not words or len(words) > 2 or not words[0].isdigit() or what not in REWIND_WHATS:
                return _turns(service, session_id)
            done = await service.rewind(session_id, int(words[0]), what, **io)
    except (SessionError, CheckpointError) as exc:
        return f"Cannot rewind: {exc}."
    said = done.said()
    said = f"{said[0].upper()}{said[1:]}."
    for hint in done.revert:
        said += f" {hint[0].upper()}{hint[1:]}."
    if not done.taken_back:
        said += " `/rewind undo` takes it back."
    return said


def _turns(service: SessionService, session_id: str) -> str:
    """How `/rewind` is used, and the session's turns to choose from."""
    lines = [
        "`/rewind N [code|conversation|both]` goes back to the end of turn N "
        "(both by default); `/rewind undo` takes the latest rewind back."
    ]
    try:
        entries = service.load(session_id)["transcript"]
    except SessionError:
        entries = []
    for entry in entries:
        if entry.get("kind") == "user":
            mark = " (rewound)" if entry.get("rewound") else ""
            lines.append(f"- {entry.get('turn')}: {str(entry['text'])[:70]}{mark}")
    return "\n".join(lines)
