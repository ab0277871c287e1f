"""`toolgate.review` over real stdio: comments as diagnostics, quick fixes, the review loop."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams, JsonRpcRequestCancelled
from tests.conftest import git
from tests.lsp.harness import Editor, _plain, uri_of
from tests.support.scripted_model import ScriptedModel, tool_call

CALC = "def add(a, b):\n    return a + b\n"
CHANGED = CALC + "\n\ndef half(x):\n    return x / 0\n"  # lines 3 to 6 (1-based) are new
HALF_LINE, DIV_LINE = 5, 6

COMMENTS = [
    {
        "path": "calc.py",
        "line": DIV_LINE,
        "severity": "error",
        "message": "Division by zero.",
        "suggestion": "    return x / 2",
    },
    {"path": "calc.py", "line": HALF_LINE, "severity": "hint", "message": "Add a docstring."},
    {"path": "../elsewhere.py", "line": 1, "severity": "warning", "message": "Not ours."},
]


def _verdict(approved: bool, comments: list[dict[str, Any]]) -> str:
    return json.dumps({"approved": approved, "comments": comments, "metrics": {"risk": "high"}})


def _project(repo: Path) -> str:
    (repo / "calc.py").write_text(CALC)
    git(repo, "add", "calc.py")
    git(repo, "commit", "-q", "-m", "calc")
    return uri_of(repo / "calc.py")


def _review_lines(editor: Editor, uri: str) -> dict[int, types.Diagnostic]:
    return {
        d.range.start.line: d
        for d in editor.client.diagnostics.get(uri, [])
        if d.source == "toolgate-review"
    }


async def test_comments_arrive_as_diagnostics_and_a_suggestion_becomes_a_proposal(
    editor: Editor, scripted: ScriptedModel, repo: Path
) -> None:
    uri = _project(repo)
    (repo / "calc.py").write_text(CHANGED)
    scripted.script = [{"content": _verdict(False, COMMENTS)}]
    result = await editor.command("toolgate.review")
    # The comment on a path outside the workspace is not placed.
    assert result["approved"] is False and result["diagnostics"] == 2
    assert result["summary"] == "not approved: 1 error, 1 warning, 1 hint"
    await editor.until(
        lambda: len(_review_lines(editor, uri)) == 2, on="textDocument/publishDiagnostics"
    )
    found = _review_lines(editor, uri)
    assert sorted(found) == [HALF_LINE - 1, DIV_LINE - 1]
    error, hint = found[DIV_LINE - 1], found[HALF_LINE - 1]
    assert error.severity == types.DiagnosticSeverity.Error
    assert hint.severity == types.DiagnosticSeverity.Hint
    assert error.message.startswith("Division by zero.") and "return x / 2" in error.message
    # The request asked for structured output and showed the model numbered lines.
    [request] = scripted.requests
    assert request["response_format"]["type"] == "json_schema"
    assert "    6 +     return x / 0" in request["messages"][1]["content"]

    # The suggestion is a quick fix on its line, and none is offered where there is none.
    assert not [
        a for a in await editor.code_actions(uri, HALF_LINE - 1) if "suggestion" in a["title"]
    ]
    actions = [
        a for a in await editor.code_actions(uri, DIV_LINE - 1) if "suggestion" in a["title"]
    ]
    [fix] = actions
    assert fix["kind"] == "quickfix"
    assert fix["diagnostics"][0]["source"] == "toolgate-review"
    command = fix["command"]
    made = await editor.command(command["command"], *command["arguments"])
    proposal = await editor.proposal()
    assert proposal["id"] == made["proposalId"]
    assert "-    return x / 0\n+    return x / 2" in proposal["diff"]
    accepted = await editor.command("toolgate.acceptProposal", proposal["id"])
    assert accepted["status"] == "accepted"
    assert (repo / "calc.py").read_text() == CHANGED.replace("x / 0", "x / 2")

    # The same fix again is refused: the line no longer reads as it did at the review.
    with pytest.raises(JsonRpcInvalidParams, match="changed since the review"):
        await editor.command(command["command"], *command["arguments"])

    # A new review that approves clears the comments.
    scripted.script = [{"content": _verdict(True, [])}]
    again = await editor.command("toolgate.review")
    assert again["approved"] is True
    await editor.until(lambda: not _review_lines(editor, uri), on="textDocument/publishDiagnostics")


async def test_a_model_without_structured_output_answers_as_text(
    editor: Editor, scripted: ScriptedModel, repo: Path
) -> None:
    uri = _project(repo)
    (repo / "calc.py").write_text(CHANGED)

    def no_structured_output(body: dict[str, Any]) -> dict[str, Any]:
        if "response_format" in body:
            return {"status": 400, "error": "this model does not support response_format"}
        return {"content": "Review follows.\n```json\n" + _verdict(False, COMMENTS[:1]) + "\n```\n"}

    scripted.script = [no_structured_output] * 3
    result = await editor.command("toolgate.review", {"focus": ["correctness"]})
    assert result["approved"] is False and result["metrics"]["output"] == "text"
    await editor.until(lambda: _review_lines(editor, uri), on="textDocument/publishDiagnostics")
    assert sorted(_review_lines(editor, uri)) == [DIV_LINE - 1]
    *refused, text = scripted.requests
    assert [r["response_format"]["type"] for r in refused] == ["json_schema", "json_object"]
    assert "response_format" not in text
    assert "Focus on: correctness" in text["messages"][1]["content"]


async def test_a_pending_proposal_is_reviewed_before_it_is_accepted(
    editor: Editor, scripted: ScriptedModel, repo: Path
) -> None:
    uri = _project(repo)
    scripted.script = [tool_call("write_file", path="calc.py", content=CHANGED)]
    await editor.command("toolgate.ask", {"task": "add half()"})
    proposal = await editor.proposal()
    scripted.script = [{"content": _verdict(False, COMMENTS[:1])}]
    result = await editor.command("toolgate.review", {"proposalId": proposal["id"]})
    assert result["proposalId"] == proposal["id"] and result["approved"] is False
    review_request = scripted.requests[-1]
    assert "    6 +     return x / 0" in review_request["messages"][1]["content"]
    # Line 5 of the proposed text does not exist yet: the comment sits where the change goes
    # in (after the file's last line now), with no quick fix that would replace a wrong line.
    await editor.until(lambda: _review_lines(editor, uri), on="textDocument/publishDiagnostics")
    [(line, diagnostic)] = _review_lines(editor, uri).items()
    assert line == 1 and diagnostic.data.get("suggestion") is None
    assert (repo / "calc.py").read_text() == CALC  # nothing was accepted
    with pytest.raises(JsonRpcInvalidParams, match="no pending proposal"):
        await editor.command("toolgate.review", {"proposalId": "p-nope"})
    await editor.command("toolgate.cancel")


def _loop_ends(editor: Editor) -> list[Any]:
    """The `toolgate/reviewLoop` notifications (one per loop that ended), as they come."""
    finished: list[Any] = []

    @editor.client.feature("toolgate/reviewLoop")
    def _finished(params: Any) -> None:
        finished.append(params)

    return finished


async def test_the_review_loop_from_the_editor(
    editor: Editor, scripted: ScriptedModel, repo: Path
) -> None:
    _project(repo)
    (repo / "test_calc.py").write_text(
        "from calc import half\n\n\ndef test_half():\n    assert half(4) == 2\n"
    )
    finished = _loop_ends(editor)

    scripted.script = [
        tool_call("write_file", path="calc.py", content=CHANGED),
        {"content": "Added half()."},
        {"content": _verdict(False, COMMENTS[:1])},
        tool_call("write_file", path="calc.py", content=CHANGED.replace("x / 0", "x / 2")),
        {"content": "Fixed."},
        {"content": _verdict(True, [])},
    ]
    started = await editor.command("toolgate.reviewLoop", {"task": "add half()"})
    assert started["loopId"].startswith("loop-")
    for n in (1, 2):
        proposal = await editor.proposal(n)
        await editor.command("toolgate.acceptProposal", proposal["id"])
    await editor.until(lambda: finished, timeout=60, on="toolgate/reviewLoop")
    account = _plain(finished[0])
    assert account["status"] == "completed", account
    assert [r["review"]["approved"] for r in account["rounds"]] == [False, True]
    assert account["tests"]["passed"] is True
    assert (repo / "calc.py").read_text() == CHANGED.replace("x / 0", "x / 2")
    assert len([r for r in scripted.requests if "response_format" in r]) == 2


async def test_review_comments_and_test_failures_on_one_file_are_published_together(
    editor: Editor, scripted: ScriptedModel, repo: Path
) -> None:
    _project(repo)
    test_file = repo / "test_calc.py"
    test_file.write_text("from calc import add\n\n\ndef test_add():\n    assert add(2, 2) == 5\n")
    uri = uri_of(test_file)
    comment = {"path": "test_calc.py", "line": 5, "severity": "warning", "message": "2 + 2 is 4."}
    scripted.script = [{"content": _verdict(False, [comment])}]
    await editor.command("toolgate.review")
    await editor.until(lambda: _review_lines(editor, uri), on="textDocument/publishDiagnostics")
    await editor.command("toolgate.runTests", {"command": "pytest -q"})

    def sources() -> list[tuple[str | None, int]]:
        return sorted((d.source, d.range.start.line) for d in editor.client.diagnostics[uri])

    await editor.until(
        lambda: len(sources()) == 2, on="textDocument/publishDiagnostics", timeout=60
    )
    assert sources() == [("toolgate", 4), ("toolgate-review", 4)]
    # A review that approves clears its comments and leaves the failure.
    scripted.script = [{"content": _verdict(True, [])}]
    await editor.command("toolgate.review")
    await editor.until(lambda: len(sources()) == 1, on="textDocument/publishDiagnostics")
    assert sources() == [("toolgate", 4)]


async def test_a_suggestion_of_several_lines_keeps_a_missing_final_newline(
    editor: Editor, scripted: ScriptedModel, repo: Path
) -> None:
    uri = _project(repo)
    (repo / "calc.py").write_text(CALC + "\n\ndef one():\n    return 1")  # no final newline
    comment = {
        "path": "calc.py",
        "line": 6,
        "severity": "info",
        "message": "Name the value.",
        "suggestion": "    value = 1\n    return value",
    }
    scripted.script = [{"content": _verdict(False, [comment])}]
    await editor.command("toolgate.review")
    [fix] = [a for a in await editor.code_actions(uri, 5) if "suggestion" in a["title"]]
    assert fix["title"] == "Apply the review's suggestion: value = 1"
    made = await editor.command(fix["command"]["command"], *fix["command"]["arguments"])
    await editor.proposal()
    await editor.command("toolgate.acceptProposal", made["proposalId"])
    expected = CALC + "\n\ndef one():\n    value = 1\n    return value"
    assert (repo / "calc.py").read_text() == expected


async def test_cancel_while_the_loop_reviews_ends_the_loop(
    editor: Editor, scripted: ScriptedModel, repo: Path
) -> None:
    _project(repo)
    finished = _loop_ends(editor)

    scripted.script = [
        tool_call("write_file", path="calc.py", content=CHANGED),
        {"content": "Added half()."},
        {"content": _verdict(True, []), "sleep": 30},  # a review that takes its time
    ]
    started = await editor.command("toolgate.reviewLoop", {"task": "add half()"})
    proposal = await editor.proposal()
    await editor.command("toolgate.acceptProposal", proposal["id"])
    await editor.until(lambda: len(scripted.requests) == 3, timeout=60)
    assert "response_format" in scripted.requests[2]  # the review is in flight
    cancelled = await editor.command("toolgate.cancel")
    assert cancelled["cancelled"] is True
    await editor.until(lambda: finished, timeout=20, on="toolgate/reviewLoop")
    assert _plain(finished[0])["status"] == "cancelled"
    log = json.loads((repo / ".toolgate" / "runs" / f"{started['loopId']}.json").read_text())
    assert log["status"] == "cancelled" and len(log["rounds"]) == 1


async def test_a_cancelled_review_stops_and_publishes_nothing(
    editor: Editor, scripted: ScriptedModel, repo: Path
) -> None:
    """`$/cancelRequest` stops the review itself, not only its answer (as VS Code's Cancel)."""
    uri = _project(repo)
    (repo / "calc.py").write_text(CHANGED)
    answer_delay = 2.0
    scripted.script = [{"content": _verdict(False, COMMENTS), "sleep": answer_delay}]
    protocol = editor.client.protocol
    params = types.ExecuteCommandParams(command="toolgate.review", arguments=[])
    answer = asyncio.wrap_future(
        protocol.send_request(types.WORKSPACE_EXECUTE_COMMAND, params, msg_id="review-1")
    )
    await editor.until(lambda: scripted.requests, timeout=30)  # the model is asked
    protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="review-1"))
    with pytest.raises(JsonRpcRequestCancelled):
        await answer
    # Had the review gone on, its comments would be published once the model answered.
    await asyncio.sleep(answer_delay + 1.5)
    assert not _review_lines(editor, uri)

    # The next review is answered as usual.
    scripted.script = [{"content": _verdict(False, COMMENTS[:1])}]
    result = await editor.command("toolgate.review")
    assert result["diagnostics"] == 1
    await editor.until(lambda: _review_lines(editor, uri), on="textDocument/publishDiagnostics")
