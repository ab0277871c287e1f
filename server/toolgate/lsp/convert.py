"""Engine records ↔ lsprotocol: the one module that knows both sides."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.uris import from_fs_path, to_fs_path

from toolgate.agent import events
from toolgate.agent.events import Event

if TYPE_CHECKING:
    from toolgate.review.proposal import Proposal


def path_to_uri(path: Path) -> str:
    """A file URI for an absolute path."""
    uri: str | None = from_fs_path(str(path))
    assert uri is not None
    return uri


def uri_to_path(uri: str) -> Path | None:
    """The absolute path of a file URI (None for other schemes)."""
    if not uri.startswith("file:"):
        return None
    try:
        path = to_fs_path(uri)
    except Exception:  # a URI the parser cannot read names no file
        return None
    return Path(path) if path and "\0" not in path else None


def line_range(start: int, end: int) -> types.Range:
    """Whole lines [start, end) as an LSP range."""
    return types.Range(
        start=types.Position(line=start, character=0), end=types.Position(line=end, character=0)
    )


def _end_position(text: str) -> types.Position:
    lines = text.split("\n")
    return types.Position(line=len(lines) - 1, character=len(lines[-1]))


def whole_text_range(text: str) -> types.Range:
    """The range that covers all of `text`."""
    return types.Range(start=types.Position(line=0, character=0), end=_end_position(text))


def hunk_edits(proposal: Proposal, selected: set[int] | None, current: str) -> list[types.TextEdit]:
    """Minimal edits, one per selected hunk, against `current` (== the proposal's original)."""
    lines = current.splitlines(keepends=True)
    edits = []
    for hunk in proposal.hunks:
        if selected is not None and hunk.index not in selected:
            continue
        # A hunk ending at the last line of a file with no final newline ends mid-line.
        if hunk.end >= len(lines) and lines and not lines[-1].endswith("\n"):
            start = (
                types.Position(line=hunk.start, character=0)
                if hunk.start < len(lines)
                else _end_position(current)
            )
            rng = types.Range(start=start, end=_end_position(current))
        else:
            rng = line_range(hunk.start, hunk.end)
        edits.append(types.TextEdit(range=rng, new_text=hunk.new_text))
    return edits


def proposal_payload(proposal: Proposal, uri: str, version: int | None) -> dict[str, Any]:
    """The `toolgate/proposal` notification's parameters."""
    return {
        "id": proposal.id,
        "runId": proposal.run_id,
        "tool": proposal.tool,
        "uri": uri,
        "path": proposal.path,
        "diff": proposal.diff,
        "hunks": [
            {
                "index": h.index,
                "range": {
                    "start": {"line": h.start, "character": 0},
                    "end": {"line": h.end, "character": 0},
                },
                "oldText": h.old_text,
                "newText": h.new_text,
                "header": h.header,
            }
            for h in proposal.hunks
        ],
        "why": proposal.why,
        "status": proposal.status.value,
        "isNewFile": proposal.is_new_file,
        "proposedText": proposal.proposed,
        "version": version,
    }


def failure_diagnostic(failure: Any, root: Path, severity: int) -> types.Diagnostic:
    """A test failure as a diagnostic on its failing line, traceback frames related."""
    line = max(0, int(failure.line) - 1)
    related = []
    for frame in failure.frames:
        frame_path = Path(frame.file)
        if not frame_path.is_absolute():
            frame_path = root / frame_path
        if frame.file == failure.file and frame.line == failure.line:
            continue
        related.append(
            types.DiagnosticRelatedInformation(
                location=types.Location(
                    uri=path_to_uri(frame_path),
                    range=line_range(max(0, frame.line - 1), max(0, frame.line)),
                ),
                message=f"in {frame.name}" if frame.name else "traceback frame",
            )
        )
    message = f"{failure.test_id}: {failure.message}" if failure.message else failure.test_id
    return types.Diagnostic(
        range=types.Range(
            start=types.Position(line=line, character=0),
            end=types.Position(line=line + 1, character=0),
        ),
        severity=types.DiagnosticSeverity(severity),
        source="toolgate",
        code=failure.test_id,
        message=message,
        related_information=related or None,
        data={"testId": failure.test_id, "kind": getattr(failure, "kind", "failed")},
    )


def _call_payload(f: dict[str, Any], call_args: dict[str, Any]) -> dict[str, Any]:
    """A call decided: with the arguments its proposal showed."""
    return {
        "type": "tool_call",
        "callId": f["call_id"],
        "tool": f["tool_name"],
        "toolKind": f.get("tool_kind"),
        "arguments": call_args.get(f["call_id"]),
        "decision": f["decision"],
        "why": f.get("why"),
    }


def _result_payload(
    f: dict[str, Any], call_args: dict[str, Any], call_results: dict[str, str] | None
) -> dict[str, Any]:
    """A call carried out: its arguments are no longer kept, its shown result goes with it."""
    call_args.pop(f["call_id"], None)
    return {
        "type": "tool_result",
        "callId": f["call_id"],
        "tool": f["tool_name"],
        "toolKind": f.get("tool_kind"),
        "success": f["success"],
        "error": f.get("error"),
        "decision": f["decision"],
        # What the person reads in the call's row: an excerpt of its result, and its time.
        "result": (call_results or {}).pop(f["call_id"], None),
        "durationMs": f.get("latency_ms"),
    }


def _end_payload(f: dict[str, Any]) -> dict[str, Any]:
    """A run's end, with a workflow's final account or the run's account when there is one."""
    payload = {
        "type": "run_finished",
        "status": f["status"],
        "reason": f.get("reason"),
        "answer": f.get("answer"),
    }
    if "done" in f:  # a workflow's final account
        payload.update(done=f["done"], missing=f.get("missing", []))
    if "account" in f:  # what the run changed, ran and tested
        payload["account"] = f["account"]
    return payload


def event_payload(
    event: Event, call_args: dict[str, Any], call_results: dict[str, str] | None = None
) -> dict[str, Any] | None:
    """An engine event as the `toolgate/event` notification's params (None: not sent).

    `call_args` keeps each call's shown arguments from its proposal to its decision (the
    engine says them once; the notification repeats them with the decision). `call_results`
    holds the text each finished call shows, handed over by the turn before the call's event.
    """
    f = event.fields
    kind = event.type
    payload: dict[str, Any] | None = None
    if kind == events.RUN_STARTED:
        payload = {"type": "run_started", "task": f.get("task"), "rules": f.get("rules") or []}
    elif kind == events.RULES_USED:
        payload = {"type": "rules_used", "rules": f["rules"]}
    elif kind == events.ASSISTANT_TEXT:
        payload = {"type": "assistant_text", "text": f["text"]}
    elif kind == events.TOOL_CALL_PROPOSED:
        call_args[f["call_id"]] = f.get("raw_args")
    elif kind == events.TOOL_CALL_DECIDED:
        payload = _call_payload(f, call_args)
    elif kind == events.TOOL_CALL_EXECUTED:
        payload = _result_payload(f, call_args, call_results)
    elif kind == events.PROPOSAL_RESOLVED and f.get("problems"):
        # What the editor's other language servers report after the change, for its card.
        payload = {
            "type": "proposal_problems",
            "proposalId": f["proposal_id"],
            "problems": f["problems"],
        }
    elif kind == events.TOOL_CALL_PARSE_ERROR:
        payload = {
            "type": "parse_error",
            "error": f["error"],
            "rawExcerpt": f.get("raw_excerpt", ""),
        }
    elif kind == events.MODE_CHANGED:
        payload = {"type": "mode_changed", "mode": f["mode"], "reason": f.get("reason")}
    elif kind == events.TESTS_FINISHED:
        # notRun: why the tests did not run (no results, none collected, timed out), else null
        payload = {
            "type": "tests_finished",
            "summary": f.get("summary"),
            "notRun": f.get("not_run"),
        }
    elif kind == events.TOOL_PROGRESS:
        # A tool's stderr: the chat view shows it, and so does the run's progress.
        payload = {"type": "tool_progress", "tool": f["tool_name"], "line": f["line"]}
    elif kind == events.NOTICE:
        payload = {"type": "notice", "message": f["message"]}
        if "attached" in f:  # the context the message's `@` mentions attached
            payload["attached"] = f["attached"]
            payload["notAttached"] = f.get("not_attached", [])
    elif kind == events.CONTEXT_FITTED:
        payload = {
            "type": "context_fitted",
            "estimatedTokens": f.get("estimated_tokens"),
            "elided": f.get("elided", []),
        }
        if "summarised_through_turn" in f:
            payload["summarisedThroughTurn"] = f["summarised_through_turn"]
    elif kind == events.RUN_FINISHED:
        payload = _end_payload(f)
    if payload is not None:
        payload["runId"] = event.run_id
    return payload
