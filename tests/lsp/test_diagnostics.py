"""Test failures become diagnostics on the failing lines, and go away once fixed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lsprotocol import types
from tests.lsp.conftest import start_editor
from tests.lsp.harness import Editor, uri_of
from tests.support.scripted_model import ScriptedModel, last_tool_result, tool_call

CALC = """\
def add(a, b):
    return a - b


def div(a, b):
    return a / b
"""
TESTS = """\
from calc import add, div


def test_add():
    assert add(2, 2) == 4, "two and two"


def test_div():
    value = div(1, 0)
    assert value == 0


def test_fine():
    assert True
"""
ADD_LINE = 4  # 0-based line of the failing assert in test_add
DIV_LINE = 8  # 0-based line of the call that raises in test_div
CALC_DIV_LINE = 5  # 0-based line that raises inside calc.div


def _project(repo: Path) -> str:
    (repo / "calc.py").write_text(CALC)
    (repo / "test_calc.py").write_text(TESTS)
    return uri_of(repo / "test_calc.py")


def _by_line(diagnostics: Any) -> dict[int, types.Diagnostic]:
    return {d.range.start.line: d for d in diagnostics}


def _check_failures(diagnostics: Any, repo: Path, severity: types.DiagnosticSeverity) -> None:
    found = _by_line(diagnostics)
    assert sorted(found) == [ADD_LINE, DIV_LINE]
    add, div = found[ADD_LINE], found[DIV_LINE]
    for d in (add, div):
        assert d.source == "toolgate"
        assert d.severity == severity
        assert d.range.start.character == 0
    assert add.code == "test_calc.py::test_add"
    assert "two and two" in add.message
    assert "ZeroDivisionError" in div.message
    related = div.related_information or []
    assert [(r.location.uri, r.location.range.start.line) for r in related] == [
        (uri_of(repo / "calc.py"), CALC_DIV_LINE)
    ]


async def test_agent_test_run_publishes_and_fix_clears(
    editor: Editor, scripted: ScriptedModel, repo: Path
) -> None:
    test_uri = _project(repo)
    fixed = CALC.replace("a - b", "a + b").replace("return a / b", "return a / b if b else 0")
    scripted.script = [
        tool_call("run_tests"),
        tool_call("write_file", path="calc.py", content=fixed),
        tool_call("run_tests"),
        {"content": "fixed"},
    ]
    await editor.command("toolgate.ask", {"task": "make the tests pass"})
    proposal = await editor.proposal()
    # The first run's failures are on the failing lines, while the fix waits for review.
    _check_failures(editor.client.diagnostics[test_uri], repo, types.DiagnosticSeverity.Error)
    told = last_tool_result(scripted.requests[-1])
    assert told["data"]["summary"]["failed"] == 2
    await editor.command("toolgate.acceptProposal", proposal["id"])
    assert (await editor.finished())["status"] == "completed"
    assert list(editor.client.diagnostics[test_uri]) == []
    told = last_tool_result(scripted.requests[-1])
    assert told["data"]["summary"]["failed"] == 0
    assert told["data"]["summary"]["passed"] == 3


async def test_run_tests_command_honours_severity_and_fix_clears(
    repo: Path, options: dict[str, Any]
) -> None:
    test_uri = _project(repo)
    options = {**options, "diagnostics": {"testFailureSeverity": "warning"}}
    editor = await start_editor(repo, options, "visual-studio-code")
    try:
        result = await editor.command("toolgate.runTests", {})
        assert result["summary"]["failed"] == 2
        assert {f["test_id"] for f in result["failures"]} == {
            "test_calc.py::test_add",
            "test_calc.py::test_div",
        }
        _check_failures(editor.client.diagnostics[test_uri], repo, types.DiagnosticSeverity.Warning)
        (repo / "calc.py").write_text(CALC.replace("a - b", "a + b"))
        result = await editor.command("toolgate.runTests", {"command": "pytest -q"})
        assert result["summary"]["failed"] == 1
        assert sorted(_by_line(editor.client.diagnostics[test_uri])) == [DIV_LINE]
        (repo / "test_calc.py").write_text(TESTS.replace("div(1, 0)", "div(1, 1) - 1"))
        result = await editor.command("toolgate.runTests")
        assert result["summary"] == {**result["summary"], "failed": 0, "passed": 3}
        assert list(editor.client.diagnostics[test_uri]) == []
    finally:
        await editor.close()


async def test_fix_code_action_starts_a_run(
    editor: Editor, scripted: ScriptedModel, repo: Path
) -> None:
    test_uri = _project(repo)
    await editor.command("toolgate.runTests", {})
    add = _by_line(editor.client.diagnostics[test_uri])[ADD_LINE]
    actions = await editor.code_actions(test_uri, ADD_LINE, ADD_LINE + 1, diagnostics=[add])
    fixes = [a for a in actions if a["title"].startswith("Ask agent to fix")]
    assert len(fixes) == 1
    fix = fixes[0]
    assert fix["title"] == "Ask agent to fix test_calc.py::test_add"
    assert fix["kind"] == "quickfix"
    assert fix["diagnostics"][0]["range"]["start"]["line"] == ADD_LINE
    assert fix["command"]["command"] == "toolgate.fixFailure"
    scripted.script = [{"content": "Looking at it."}]
    reply = await editor.command(fix["command"]["command"], *fix["command"]["arguments"])
    run_id = reply["runId"]
    finished = await editor.finished()
    assert finished["runId"] == run_id and finished["status"] == "completed"
    task = scripted.requests[0]["messages"][-1]["content"]
    assert "test_calc.py::test_add" in task
    assert f"test_calc.py:{ADD_LINE + 1}" in task
    assert "two and two" in task


async def test_tests_that_did_not_run_are_said_so_to_the_editor(
    editor: Editor, scripted: ScriptedModel, repo: Path
) -> None:
    (repo / "calc.py").write_text(CALC)  # no test file at all: pytest collects nothing
    result = await editor.command("toolgate.runTests", {})
    assert result["exitCode"] == 5
    assert "no test was collected (pytest looked in ." in result["notRun"], result
    # The person is told as well: no diagnostics here is no sign of passing tests.
    shown = [m.message for m in editor.client.messages]
    assert any(m.startswith("Toolgate: tests did not run: no test was collected") for m in shown)
    scripted.script = [tool_call("run_tests"), {"content": "Tests are green."}]
    await editor.command("toolgate.ask", {"task": "run the tests"})
    finished = await editor.finished()
    (tests,) = [e for e in editor.events if e["type"] == "tests_finished"]
    assert "no test was collected" in tests["notRun"], tests
    assert finished["status"] == "incomplete", finished
    assert finished["account"]["tests"]["outcome"] == "not_run", finished["account"]
