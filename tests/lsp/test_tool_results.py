"""A finished call's `tool_result` event carries what the person reads: an excerpt and a time."""

from __future__ import annotations

from pathlib import Path

from tests.lsp.harness import Editor
from tests.support.scripted_model import ScriptedModel, tool_call


async def test_a_result_carries_its_excerpt_and_duration_and_a_failure_only_its_error(
    editor: Editor, repo: Path, scripted: ScriptedModel
) -> None:
    (repo / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    scripted.script = [
        tool_call("read_file", path="calc.py"),
        tool_call("read_file", path="missing.py"),
        {"content": "read"},
    ]
    await editor.command("toolgate.ask", {"task": "read calc.py"})
    assert (await editor.finished())["status"] == "completed"
    read, missing = [e for e in editor.events if e["type"] == "tool_result"]
    assert read["success"] is True
    assert "def add(a, b):" in read["result"]
    assert isinstance(read["durationMs"], (int, float)) and read["durationMs"] >= 0
    assert missing["success"] is False
    assert missing["result"] is None and missing["error"]
