"""Tests run against what was accepted: accepted buffers are on disk before run_tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.conftest import git
from tests.lsp.conftest import start_editor
from tests.lsp.harness import Editor
from tests.support.scripted_model import ScriptedModel, last_tool_result, tool_call

CALC = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    return a + b\n"
TESTS = "from calc import add\n\n\ndef test_add():\n    assert add(2, 2) == 4\n"


def _project(repo: Path) -> None:
    (repo / "calc.py").write_text(CALC)
    (repo / "test_calc.py").write_text(TESTS)


def _script(scripted: ScriptedModel) -> None:
    scripted.script = [
        tool_call("edit_file", path="calc.py", search="a - b", replace="a + b"),
        tool_call("run_tests"),
        {"content": "fixed"},
    ]


async def _accept_and_test(editor: Editor) -> None:
    await editor.command("toolgate.ask", {"task": "fix add"})
    proposal = await editor.proposal()
    await editor.command("toolgate.acceptProposal", proposal["id"])
    assert (await editor.finished())["status"] == "completed"


async def test_client_saves_accepted_buffers_before_tests(
    editor: Editor, scripted: ScriptedModel, repo: Path
) -> None:
    _project(repo)
    uri = editor.open("calc.py")
    _script(scripted)
    await _accept_and_test(editor)
    assert editor.save_requests == [[uri]]
    assert (repo / "calc.py").read_text() == FIXED
    told = last_tool_result(scripted.requests[-1])
    assert told["data"]["summary"]["passed"] == 1 and told["data"]["summary"]["failed"] == 0
    assert "notes" not in told["data"]


async def test_server_writes_accepted_buffer_when_client_cannot_save(
    editor: Editor, scripted: ScriptedModel, repo: Path
) -> None:
    _project(repo)
    editor.open("calc.py")
    editor.save_supported = False
    _script(scripted)
    await _accept_and_test(editor)
    # asked after the acceptance and again before the tests, refused both times: the server
    # wrote the accepted text itself, since the buffer held nothing else unsaved
    assert len(editor.save_requests) == 2
    assert (repo / "calc.py").read_text() == FIXED
    told = last_tool_result(scripted.requests[-1])
    assert told["data"]["summary"]["passed"] == 1
    assert "notes" not in told["data"]


async def test_other_unsaved_edits_are_named_in_the_result(
    repo: Path, scripted: ScriptedModel, options: dict[str, Any]
) -> None:
    _project(repo)
    # Ask before the test run so the person can type in the buffer after the acceptance.
    options = {**options, "approval": {"run_tests": "ask"}}
    editor = await start_editor(repo, options, "visual-studio-code")
    try:
        uri = editor.open("calc.py")
        editor.save_supported = False

        def person_types(message: str) -> None:
            editor.change(uri, "# a note of my own\n" + editor.text(uri))

        editor.on_question = person_types
        _script(scripted)
        await _accept_and_test(editor)
        assert editor.questions and "run_tests" in editor.questions[0]
        assert (repo / "calc.py").read_text() == CALC  # not the person's unsaved text
        told = last_tool_result(scripted.requests[-1])
        assert told["data"]["notes"] == [
            "calc.py was not saved: the person changed it in the editor after accepting the "
            "change (line 1 is '# a note of my own' in the editor, 'def add(a, b):' in the "
            "change); on disk it stays as it was, and that is what tests, commands and git read"
        ]
        assert told["data"]["summary"]["failed"] == 1
    finally:
        await editor.close()


async def test_a_buffer_reported_as_editors_report_it_is_the_accepted_text(
    repo: Path, scripted: ScriptedModel, options: dict[str, Any]
) -> None:
    """CRLF line endings and no final newline in what the editor reports are no edit."""
    _project(repo)
    options = {**options, "approval": {"run_tests": "ask"}}
    editor = await start_editor(repo, options, "visual-studio-code")
    try:
        uri = editor.open("calc.py")
        editor.save_supported = False

        def editor_reports(message: str) -> None:
            editor.change(uri, editor.text(uri).rstrip("\n").replace("\n", "\r\n"))

        editor.on_question = editor_reports
        _script(scripted)
        await _accept_and_test(editor)
        assert editor.text(uri) == FIXED.rstrip("\n").replace("\n", "\r\n")
        assert (repo / "calc.py").read_text() == FIXED  # written by the server, as accepted
        told = last_tool_result(scripted.requests[-1])
        assert told["data"]["summary"]["passed"] == 1, told
        assert "notes" not in told["data"]
    finally:
        await editor.close()


async def test_an_edit_the_editor_reports_late_is_the_accepted_text(
    editor: Editor, scripted: ScriptedModel, repo: Path
) -> None:
    """The editor answers the edit at once and reports the change a moment later."""
    _project(repo)
    editor.open("calc.py")
    editor.save_supported = False
    editor.report_delay = 1.0
    _script(scripted)
    await _accept_and_test(editor)
    assert (repo / "calc.py").read_text() == FIXED
    told = last_tool_result(scripted.requests[-1])
    assert told["data"]["summary"]["passed"] == 1, told
    assert "notes" not in told["data"]


async def test_git_and_commands_read_the_accepted_change_from_disk(
    editor: Editor, scripted: ScriptedModel, repo: Path
) -> None:
    _project(repo)
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "calc")
    editor.open("calc.py")
    editor.save_supported = False
    scripted.script = [
        tool_call("edit_file", path="calc.py", search="a - b", replace="a + b"),
        tool_call("git_status"),
        {"content": "changed"},
    ]
    await _accept_and_test(editor)
    told = last_tool_result(scripted.requests[-1])
    assert told["data"]["unstaged"] == [{"path": "calc.py", "status": "M"}], told
    assert (repo / "calc.py").read_text() == FIXED
