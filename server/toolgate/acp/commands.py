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
from collections.abc import Callable
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
from toolgate.agent.checkpoints import Checkpoint, CheckpointError, latest_run
from toolgate.agent.undo import (
    REMOVE,
    UndoPlan,
    begin_undo,
    disk_text,
    finish_undo,
    plan_undo,
    restore_on_disk,
)
from toolgate.config import Config
from toolgate.customize.commands import find_commands
from toolgate.session.assembly import Endpoint
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


def undoable(root: Path) -> bool:
    """Whether the workspace has a run whose changes can be put back."""
    run_id = latest_run(root)
    if run_id is None:
        return False
    try:
        return Checkpoint.load(root, run_id).undone_by is None
    except CheckpointError:
        return False


def available(root: Path) -> list[AvailableCommand]:
    """The commands to offer now: the built-in ones, then the project's prompt files'."""
    own = [TESTS, REVIEW, NEW, *([UNDO] if undoable(root) else [])]
    found = find_commands(root, BUILTIN_COMMANDS).commands.values()
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


async def review(root: Path, config: Config, endpoint: Endpoint) -> str:
    """The model's review of the working tree's changes, as the message to show."""
    from toolgate.code_review import ReviewError
    from toolgate.code_review.service import review_working_tree

    try:
        changes, result = await review_working_tree(
            root, config, lambda notice: log.info("review: %s", notice), endpoint=endpoint
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


async def _editor_texts(
    conn: AgentSideConnection, session_id: str, workspace: Workspace, run_id: str
) -> dict[str, str]:
    """The editor's text of each file the run changed (its unsaved buffers count)."""
    texts: dict[str, str] = {}
    try:
        paths = list(Checkpoint.load(workspace.root, run_id).files)
    except CheckpointError:
        return texts
    for path in paths:
        try:
            real = workspace.resolve(path)
        except PathRefused:
            continue
        if not real.is_file():
            continue
        try:
            response = await conn.read_text_file(session_id=session_id, path=str(real))
        except (ConnectionError, RequestError):
            continue  # read from disk instead
        texts[path] = response.content
    return texts


def _content(
    workspace: Workspace, plan: UndoPlan, now: dict[str, str]
) -> list[convert.ToolContent]:
    read = disk_text(workspace)
    content: list[convert.ToolContent] = []
    for item in plan.changes:
        current = now.get(item.path, read(item.path))
        if item.action == REMOVE:
            content.append(convert.text_content(f"{item.path}: removed (the run created it)"))
        elif item.before_text is None:
            content.append(convert.text_content(f"{item.path}: restored (not text)"))
        else:
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
    workspace: Workspace,
    *,
    read_through_client: bool,
    write_through_client: bool,
    updates: Updates,
    keep: Callable[[str, str, list[str]], object],
) -> str:
    """Ask about undoing the last run with its diffs; do it when allowed. Returns what to say.

    `keep(undo run, run undone, files)` keeps the undo in the conversation.
    """
    run_id = latest_run(workspace.root)
    now: dict[str, str] = {}
    if run_id is not None and read_through_client:
        now = await _editor_texts(conn, session_id, workspace, run_id)
    read = disk_text(workspace)
    try:
        plan = plan_undo(workspace, None, current=lambda path: now.get(path, read(path)))
    except CheckpointError as exc:
        return f"Nothing to undo: {exc}."
    if not plan.changes:
        conflicts = ", ".join(item.path for item in plan.conflicts)
        left = f" ({conflicts} changed since, left alone)" if conflicts else ""
        return f"Run {plan.run_id}: nothing to put back{left}."
    call_id = f"undo-{plan.run_id}"
    title = f"undo run {plan.run_id}"
    content = _content(workspace, plan, now)
    locations = [ToolCallLocation(path=str(workspace.root / item.path)) for item in plan.changes]
    updates.put(
        session_id,
        helpers.start_tool_call(call_id, title, kind="edit", status="pending", locations=locations),
    )
    await updates.flush()  # the call is shown before it is asked about
    update = ToolCallUpdate(
        tool_call_id=call_id, title=title, kind="edit", status="pending", content=content
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
    if not isinstance(outcome, AllowedOutcome) or outcome.option_id != "allow_once":
        updates.put(
            session_id, convert.progress(call_id, "failed", [convert.text_content("left as it is")])
        )
        return f"Left as it is: run {plan.run_id} was not undone."
    record = begin_undo(workspace, plan, now)
    by_disk = [item for item in plan.changes if item.action == REMOVE or item.before_text is None]
    through_editor = [item for item in plan.changes if item not in by_disk]
    if not write_through_client:
        by_disk, through_editor = list(plan.changes), []
    restore_on_disk(workspace, by_disk)
    written: dict[str, str] = {}  # what the editor holds now, maybe unsaved
    for item in through_editor:
        real = workspace.resolve(item.path, for_write=True)
        text = item.before_text or ""
        try:
            await conn.write_text_file(session_id=session_id, path=str(real), content=text)
        except (ConnectionError, RequestError) as exc:
            log.warning("fs/write_text_file %s: %s; restored on disk", real, exc)
            restore_on_disk(workspace, [item])
        else:
            written[item.path] = text
    finish_undo(workspace, plan, record, written)
    keep(record.run_id, plan.run_id, [item.path for item in plan.changes])
    done = plan.outcome()
    updates.put(session_id, convert.progress(call_id, "completed", [convert.text_content(done)]))
    said = f"Undid run {plan.run_id}: {done} (recorded as {record.run_id}, itself undoable)."
    untouched = plan.left_alone()
    if untouched:
        said += f" {untouched[0].upper()}{untouched[1:]}."
    return said
