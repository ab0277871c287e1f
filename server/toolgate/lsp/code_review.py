"""Code review in the editor: `toolgate.review`, its quick fixes, and `toolgate.reviewLoop`.

`toolgate.review` has the model review the working tree's diff (or the staged one, or a
pending proposal before it is accepted) and publishes each comment as a diagnostic on the
line it is about, with source `toolgate-review` and the comment's severity. A comment with a
suggestion offers a quick fix, `toolgate.applyReviewSuggestion`, which turns the suggestion
into a proposal through the gate, reviewed like any other. `toolgate.reviewLoop` runs the
review loop (implement, review, implement again, test) as the editor's active run.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from toolgate.lsp.arguments import (
    ReviewArguments,
    ReviewLoopArguments,
    ReviewSuggestionArguments,
)
from toolgate.lsp.convert import line_range, path_to_uri, uri_to_path

if TYPE_CHECKING:
    from toolgate.lsp.state import ToolgateServer
    from toolgate.review.proposal import Proposal
    from toolgate.session.code_review import CodeReview

log = logging.getLogger(__name__)

SOURCE = "toolgate-review"
LOOP_FINISHED = "toolgate/reviewLoop"
_SEVERITY = {
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "info": types.DiagnosticSeverity.Information,
    "hint": types.DiagnosticSeverity.Hint,
}
# Quick fixes still making their proposal (kept so the tasks are not collected mid-way).
_pending_fixes: set[asyncio.Task[Any]] = set()


def register(server: ToolgateServer) -> None:
    """Add `toolgate.review`, `toolgate.applyReviewSuggestion` and `toolgate.reviewLoop`."""

    # `ls` is typed Any as in lsp/planning.py: pygls resolves the hints at run time.
    @server.command("toolgate.review")
    async def review(ls: Any, args: ReviewArguments) -> dict[str, Any]:
        """`[{"staged"?, "proposalId"?, "focus"?}]` → the review; comments become diagnostics."""
        return await _review(ls, args)

    @server.command("toolgate.applyReviewSuggestion")
    async def apply_suggestion(ls: Any, args: ReviewSuggestionArguments) -> dict[str, Any]:
        """`[{"uri", "line", "original", "suggestion"}]` → `{proposalId}` of the fix."""
        return await _apply_suggestion(ls, args)

    @server.command("toolgate.reviewLoop")
    async def review_loop(ls: Any, args: ReviewLoopArguments) -> dict[str, Any]:
        """`[{"task", "sessionId"?}]` → `{loopId}` at once; `toolgate/reviewLoop` at its end."""
        return await _start_loop(ls, args)


# -- toolgate.review ------------------------------------------------------------------------


async def _review(ls: ToolgateServer, args: ReviewArguments) -> dict[str, Any]:
    from toolgate.session import ConfigError, ReviewError
    from toolgate.session.code_review import Changes

    root = ls.workspace_root()
    proposal: Proposal | None = None
    changes: Changes | None = None
    if args.proposal_id is not None:
        proposal = next(
            (e.proposal for e in ls.pending_entries() if e.proposal.id == args.proposal_id), None
        )
        if proposal is None:
            raise JsonRpcInvalidParams(f"no pending proposal {args.proposal_id[:80]!r}")
        changes = Changes(proposal.diff, [proposal.path])
    try:
        config = ls.config()
        _, review = await ls.service.review(
            config, ls.log, staged=args.staged, focus=list(args.focus), changes=changes
        )
    except (ConfigError, ReviewError) as exc:  # ReviewSetupError among them
        raise JsonRpcInvalidParams(ls.redactor.text(str(exc))) from None
    if review is None:
        publish_review(ls, None, root, None)
        return {"approved": True, "comments": [], "metrics": {}, "summary": "no changes"}
    placed = publish_review(ls, review, root, proposal)
    return {
        **review.to_dict(),
        "summary": review.summary(),
        "proposalId": proposal.id if proposal is not None else None,
        "diagnostics": placed,
    }


def publish_review(
    ls: ToolgateServer, review: CodeReview | None, root: Path, proposal: Proposal | None
) -> int:
    """Replace the review diagnostics with this review's comments; how many were placed.

    A comment on a file outside the workspace is not placed. For a pending proposal the
    comment's line (in the proposed text) is moved to where that change sits in the file now,
    and no quick fix is offered: the line it would replace is not in the file yet.
    """
    by_uri: dict[str, list[types.Diagnostic]] = {}
    for comment in review.comments if review is not None else []:
        try:
            path = (root / comment.path).resolve()
            path.relative_to(root)
        except (ValueError, OSError):
            continue
        uri = path_to_uri(path)
        line = comment.line - 1
        if proposal is not None and proposal.path == comment.path:
            line = _original_line(proposal, line)
        text = _text(ls, uri, path)
        lines = text.splitlines()
        line = max(0, min(line, len(lines) - 1)) if lines else 0
        data: dict[str, Any] = {"severity": comment.severity}
        message = comment.message
        if comment.suggestion:
            message += f"\nSuggested: {comment.suggestion}"
            if proposal is None and lines:
                data.update(line=line, original=lines[line], suggestion=comment.suggestion)
        by_uri.setdefault(uri, []).append(
            types.Diagnostic(
                range=line_range(line, line + 1),
                severity=_SEVERITY.get(comment.severity, types.DiagnosticSeverity.Warning),
                source=SOURCE,
                code=comment.severity,
                message=message,
                data=data,
            )
        )
    gone = set(ls.review_diagnostics) - set(by_uri)
    ls.review_diagnostics = by_uri
    for uri in [*gone, *by_uri]:
        ls.publish_diagnostics(uri)
    return sum(len(d) for d in by_uri.values())


def _text(ls: ToolgateServer, uri: str, path: Path) -> str:
    text = ls.open_text(uri)
    if text is not None:
        return text
    try:
        return path.read_text("utf-8", errors="replace")
    except OSError:
        return ""


def _original_line(proposal: Proposal, new_line: int) -> int:
    """Where a 0-based line of the proposed text sits in the file before the change."""
    shift = 0  # proposed line minus original line, below the hunks passed so far
    for hunk in proposal.hunks:
        start = hunk.start + shift
        if new_line < start:
            break
        if new_line < start + len(hunk.new_lines):
            return hunk.start
        shift += len(hunk.new_lines) - (hunk.end - hunk.start)
    return max(0, new_line - shift)


def review_actions(
    diagnostics: list[types.Diagnostic], uri: str, lines: types.Range
) -> list[types.CodeAction]:
    """The quick fix "Apply the review's suggestion" for each comment with one on these lines."""
    actions = []
    for diagnostic in diagnostics:
        data = diagnostic.data if isinstance(diagnostic.data, dict) else {}
        line = diagnostic.range.start.line
        if "suggestion" not in data or not lines.start.line <= line <= lines.end.line:
            continue
        first = str(data["suggestion"]).strip().splitlines()[0] if data["suggestion"] else ""
        title = f"Apply the review's suggestion: {first[:60]}"
        arguments = {
            "uri": uri,
            "line": data["line"],
            "original": data["original"],
            "suggestion": data["suggestion"],
        }
        actions.append(
            types.CodeAction(
                title=title,
                kind=types.CodeActionKind.QuickFix,
                diagnostics=[diagnostic],
                command=types.Command(
                    title=title, command="toolgate.applyReviewSuggestion", arguments=[arguments]
                ),
            )
        )
    return actions


# -- toolgate.applyReviewSuggestion ---------------------------------------------------------


async def _apply_suggestion(ls: ToolgateServer, args: ReviewSuggestionArguments) -> dict[str, Any]:
    from toolgate.agent.events import PROPOSAL_CREATED, EventBus
    from toolgate.records import ToolCall, new_id
    from toolgate.session import ConfigError, gated_calls

    root = ls.workspace_root()
    path = uri_to_path(args.uri)
    if path is None:
        raise JsonRpcInvalidParams("uri must be a file URI")
    try:
        rel = path.resolve().relative_to(root).as_posix()
    except (ValueError, OSError):
        raise JsonRpcInvalidParams("uri is outside the workspace") from None
    text = _text(ls, args.uri, path)
    lines = text.splitlines(keepends=True)
    if args.line >= len(lines) or lines[args.line].rstrip("\r\n") != args.original:
        raise JsonRpcInvalidParams(
            f"line {args.line + 1} of {rel} has changed since the review; review it again"
        )
    body = lines[args.line]
    ending = body[len(body.rstrip("\r\n")) :]  # "" on a last line without a newline
    separator = ending or ("\r\n" if "\r\n" in text else "\n")
    replacement = separator.join(args.suggestion.splitlines() or [""]) + ending
    proposed = "".join([*lines[: args.line], replacement, *lines[args.line + 1 :]])
    if proposed == text:
        raise JsonRpcInvalidParams("the suggestion is what the line already says")
    reviewer = ls.reviewer
    if reviewer is None:
        raise JsonRpcInvalidParams("no workspace folder is open")
    try:
        config = ls.config()
    except ConfigError as exc:
        raise JsonRpcInvalidParams(f"configuration error: {exc}") from None
    bus = EventBus()
    bus.subscribe(ls.forward)
    created: asyncio.Future[str] = asyncio.get_running_loop().create_future()

    def on_event(event: Any) -> None:
        if event.type == PROPOSAL_CREATED and not created.done():
            created.set_result(str(event.fields["proposal_id"]))

    bus.subscribe(on_event)
    run_id = new_id("fix")
    task = f"apply the review's suggestion to {rel}:{args.line + 1}"
    calls = gated_calls(root, config, reviewer, bus, run_id, task, trusted=ls.editor.trusted)
    calls.ctx.workspace.buffers = ls.buffers
    call = ToolCall(
        id=run_id,
        name="write_file",
        arguments={"path": rel, "content": proposed, "_reasoningForCall": task},
    )
    gated = asyncio.ensure_future(calls.gate.handle(call))
    _pending_fixes.add(gated)
    gated.add_done_callback(_pending_fixes.discard)
    # The proposal waits for the person; the command answers as soon as it exists (or the
    # gate decided without one: denied by policy, or applied at once under `auto`).
    waits: list[asyncio.Future[Any]] = [created, gated]
    await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    if created.done():
        return {"proposalId": created.result(), "path": rel, "runId": run_id}
    outcome = gated.result()
    return {
        "proposalId": None,
        "path": rel,
        "runId": run_id,
        "decision": outcome.decision,
        "success": outcome.result.success,
        "error": outcome.result.error,
    }


# -- toolgate.reviewLoop --------------------------------------------------------------------


async def _start_loop(ls: ToolgateServer, args: ReviewLoopArguments) -> dict[str, Any]:
    from toolgate.agent.events import EventBus
    from toolgate.session import ConfigError, ReviewLoop, SessionError

    if ls.run_task is not None and not ls.run_task.done():
        raise JsonRpcInvalidParams(
            f"a run is already active ({ls.active_run_id}); cancel it or wait for it"
        )
    root = ls.workspace_root()
    reviewer = ls.reviewer
    assert reviewer is not None
    try:
        config = ls.config()
        if args.session_id is not None:
            ls.service.store.open(args.session_id)  # an unknown session is this request's error
    except ConfigError as exc:
        raise JsonRpcInvalidParams(f"configuration error: {exc}") from None
    except SessionError as exc:
        raise JsonRpcInvalidParams(str(exc)) from None
    bus = EventBus()
    bus.subscribe(ls.forward)

    def on_turn(claim: Any) -> None:
        # The implementation in progress, which toolgate.cancel stops; None between turns
        # (reviewing, testing), when a cancel stops the loop's task itself.
        ls.turn = claim

    loop = ReviewLoop(
        ls.service,
        config,
        reviewer,
        bus,
        buffers=ls.buffers,
        trusted=ls.editor.trusted,
        on_test_run=ls.publish_test_failures,
        on_turn=on_turn,
        on_review=lambda review: _publish_loop_review(ls, review, root),
    )
    ls.turn = None
    ls.active_run_id = loop.loop_id
    ls.run_task = asyncio.ensure_future(_loop(ls, loop, args))
    return {"loopId": loop.loop_id}


def _publish_loop_review(ls: ToolgateServer, review: CodeReview, root: Path) -> None:
    publish_review(ls, review, root, None)


async def _loop(ls: ToolgateServer, loop: Any, args: ReviewLoopArguments) -> None:
    from toolgate.session import ConfigError, SessionError, SetupError

    payload: dict[str, Any]
    try:
        outcome = await loop.run(args.task, args.session_id)
        payload = outcome.to_dict()
    except (SetupError, ConfigError, SessionError) as exc:
        payload = {"loopId": loop.loop_id, "status": "failed", "reason": str(exc)}
    except asyncio.CancelledError:
        payload = {"loopId": loop.loop_id, "status": "cancelled", "reason": "cancelled"}
    except Exception as exc:  # never let the loop take the server down
        log.exception("review loop %s crashed", loop.loop_id)
        payload = {"loopId": loop.loop_id, "status": "failed", "reason": f"internal error: {exc}"}
    finally:
        if ls._reviewer is not None:
            ls._reviewer.cancel_all("the review loop ended")
    ls.notify(LOOP_FINISHED, payload)
