"""Slash commands: what the editor offers after `/`, and the prompts that are commands.

`/tests` is a task given to the model. `/review`, `/new` and `/undo` are done by Toolgate
itself, outside a run: `/review` has the model review the working tree's changes and shows its
comments (it changes nothing, and the conversation does not keep it); `/new` sets the
session's earlier turns aside (the model starts afresh; the editor and `session/load` still
show them); `/undo` puts back what the workspace's last run changed, from its checkpoint,
after asking with the diffs. `/undo` is offered only while there is a run to undo.
"""

from __future__ import annotations

import logging
from pathlib import Path

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
from toolgate.agent.undo import REMOVE, UndoPlan, disk_text, restore_on_disk
from toolgate.config import Config
from toolgate.customize.commands import find_commands
from toolgate.session import CheckpointError, ReviewError, SessionService
from toolgate.session.customization import BUILTIN_COMMANDS
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
TASKS = {
    "/tests": "Run the project's tests with run_tests. If any fail, find the cause and fix it, "
    "then run the tests again.",
}


def command_of(text: str) -> str | None:
    """The command a prompt is (`/review`, `/new`, `/undo`), or None for a task for the model."""
    word = text.strip()
    return word if word in ("/review", "/new", "/undo") else None


def available(service: SessionService) -> list[AvailableCommand]:
    """The commands to offer now: the built-in ones, then the project's prompt files'."""
    own = [TESTS, REVIEW, NEW, *([UNDO] if service.undoable() else [])]
    found = find_commands(service.root, BUILTIN_COMMANDS).commands.values()
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
    texts: dict[Path, str] = {}  # the editor's text of the run's files, by real path
    workspace = Workspace(service.root, buffers=lambda: texts)
    call_id = ""

    async def read_first(path: str) -> None:
        try:
            real = workspace.resolve(path)
        except PathRefused:
            return
        if not real.is_file():
            return
        try:
            response = await conn.read_text_file(session_id=session_id, path=str(real))
        except (ConnectionError, RequestError):
            return  # read from disk instead
        texts[real] = response.content

    async def ask(plan: UndoPlan) -> bool:
        nonlocal call_id
        call_id = f"undo-{plan.run_id}"
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
            response = await conn.request_permission(
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

    async def apply(target: Workspace, plan: UndoPlan) -> dict[str, str]:
        by_disk = [i for i in plan.changes if i.action == REMOVE or i.before_text is None]
        through_editor = [item for item in plan.changes if item not in by_disk]
        if not write_through_client:
            by_disk, through_editor = list(plan.changes), []
        restore_on_disk(target, by_disk)
        written: dict[str, str] = {}  # what the editor holds now, maybe unsaved
        for item in through_editor:
            real = target.resolve(item.path, for_write=True)
            text = item.before_text or ""
            try:
                await conn.write_text_file(session_id=session_id, path=str(real), content=text)
            except (ConnectionError, RequestError) as exc:
                log.warning("fs/write_text_file %s: %s; restored on disk", real, exc)
                restore_on_disk(target, [item])
            else:
                written[item.path] = text
        return written

    try:
        done = await service.undo(
            ask=ask,
            apply=apply,
            buffers=workspace.buffers,
            read_first=read_first if read_through_client else None,
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
        session_id, convert.progress(call_id, "completed", [convert.text_content(finished)])
    )
    said = f"Undid run {plan.run_id}: {finished} (recorded as {done.undo_run_id}, itself undoable)."
    untouched = plan.left_alone()
    if untouched:
        said += f" {untouched[0].upper()}{untouched[1:]}."
    return said
