"""`@` mentions over real stdio: the selection and problems `toolgate.ask` sends, an unsaved
buffer read as the person sees it, and what was attached shown in the run's events."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.lsp.harness import Editor, uri_of
from tests.support.scripted_model import ScriptedModel


def _range(start: int, end: int) -> dict[str, Any]:
    return {"start": {"line": start, "character": 0}, "end": {"line": end, "character": 0}}


def _user(body: dict[str, Any]) -> str:
    return [m["content"] for m in body["messages"] if m["role"] == "user"][-1]


async def test_selection_and_problems_reach_the_model(
    editor: Editor, scripted: ScriptedModel, repo: Path
) -> None:
    (repo / "calc.py").write_text("def add(a, b):\n    return a - b\n\nprint(add(1, 2))\n")
    # The person has typed in the buffer without saving: that is the text they select.
    uri = editor.open(
        "calc.py", "def add(a, b):\n    return a - b  # unsaved\n\nprint(add(1, 2))\n"
    )
    scripted.script = [{"content": "It subtracts."}]
    context = {
        "uri": uri,
        "range": _range(1, 2),
        "diagnostics": [
            {
                "uri": uri,
                "range": _range(1, 1),
                "message": "add returns a difference",
                "severity": 2,
                "source": "pylint",
            }
        ],
    }
    started = await editor.command(
        "toolgate.ask", {"task": "fix @selection, see @problems", "context": context}
    )
    assert (await editor.finished())["status"] == "completed"

    sent = _user(scripted.requests[0])
    assert "    return a - b  # unsaved\n" in sent and "print(add" not in sent
    assert "calc.py:2: warning [pylint]: add returns a difference" in sent
    assert "Context: the person is looking at" not in sent  # said once, as the attachment
    (shown,) = [e for e in editor.events if e["type"] == "notice" and "attached" in e]
    assert [a["mention"] for a in shown["attached"]] == ["@selection", "@problems"]
    assert shown["attached"][0]["label"] == "calc.py, lines 2-2, unsaved"
    assert shown["notAttached"] == []
    # The session keeps it with the turn: a chat view loading it shows it there again.
    loaded = await editor.command("toolgate.loadSession", {"sessionId": started["sessionId"]})
    (turn,) = [e for e in loaded["transcript"] if e["kind"] == "user"]
    assert [a["mention"] for a in turn["attached"]] == ["@selection", "@problems"]
    assert turn["notAttached"] == []


async def test_without_the_editors_context_selection_is_explained_not_dropped(
    editor: Editor, scripted: ScriptedModel, repo: Path
) -> None:
    scripted.script = [{"content": "Nothing selected."}]
    await editor.command("toolgate.ask", {"task": "explain @selection and @../etc"})
    assert (await editor.finished())["status"] == "completed"

    sent = _user(scripted.requests[0])
    assert "@selection: no selection: the editor sent none with this message" in sent
    (shown,) = [e for e in editor.events if e["type"] == "notice" and "attached" in e]
    assert shown["attached"] == []
    assert shown["notAttached"][1] == "@../etc: '..' is not allowed in paths: '../etc'"


async def test_a_problem_outside_the_workspace_is_listed_only_by_its_path(
    editor: Editor, scripted: ScriptedModel, repo: Path, tmp_path: Path
) -> None:
    outside = uri_of(tmp_path / "elsewhere.py")
    scripted.script = [{"content": "Seen."}]
    context = {
        "diagnostics": [{"uri": outside, "range": _range(0, 0), "message": "m", "source": "s"}]
    }
    await editor.command("toolgate.ask", {"task": "@problems", "context": context})
    assert (await editor.finished())["status"] == "completed"
    sent = _user(scripted.requests[0])
    assert f"{(tmp_path / 'elsewhere.py').resolve()}:1: error [s]: m" in sent
