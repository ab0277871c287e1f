"""After an accept, the editor's own diagnostics of the file reach the model, without a wait.

A client such as the VS Code extension reports the file's diagnostics when it hears that the
proposal landed (`toolgate/proposalResolved`); the server must send that first, and then wait
for the report, instead of waiting for a report the client has not been asked for yet.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.lsp.harness import Editor, uri_of
from tests.support.scripted_model import ScriptedModel, last_tool_result, tool_call

ORIGINAL = "".join(f"line {i}\n" for i in range(10))


def _report(uri: str, *messages: str, line: int = 2) -> dict[str, Any]:
    span = {"start": {"line": line, "character": 0}, "end": {"line": line, "character": 6}}
    return {
        "uri": uri,
        "diagnostics": [
            {"range": span, "message": m, "severity": 1, "source": "pyright"} for m in messages
        ],
    }


async def test_the_report_sent_after_proposal_resolved_reaches_the_model_at_once(
    editor: Editor, scripted: ScriptedModel, repo: Path
) -> None:
    (repo / "a.py").write_text(ORIGINAL)
    uri = uri_of(repo / "a.py")
    await editor.command("toolgate.reportDiagnostics", _report(uri, "nothing yet"))
    scripted.script = [
        tool_call("edit_file", path="a.py", search="line 2\n", replace="lien 2\n"),
        {"content": "Changed."},
    ]
    await editor.command("toolgate.ask", {"task": "change line 2"})
    proposal = await editor.proposal()
    loop = asyncio.get_running_loop()
    started = loop.time()
    accepting = asyncio.ensure_future(editor.command("toolgate.acceptProposal", proposal["id"]))
    await editor.until(lambda: any(r["id"] == proposal["id"] for r in editor.resolved), 10)
    heard = loop.time() - started
    # as the extension does: report the file's diagnostics once the proposal landed
    await editor.command("toolgate.reportDiagnostics", _report(uri, "undefined name 'lien'"))
    await accepting
    assert (await editor.finished())["status"] == "completed"
    told = last_tool_result(scripted.requests[-1])
    assert told["success"] is True
    # "nothing yet" was there before the change: only the new problem is the change's
    assert told["data"]["note"] == (
        "new problems after this change: a.py:3 pyright undefined name 'lien'"
    )
    # the resolution was not held back for the 2 s a report may take
    assert heard < 1.5, heard
    # the chat view's card and the run's account name it too
    caused = [e for e in editor.events if e["type"] == "proposal_problems"]
    assert [{k: v for k, v in e.items() if k not in ("runId", "sessionId")} for e in caused] == [
        {
            "type": "proposal_problems",
            "proposalId": proposal["id"],
            "problems": [
                {
                    "path": "a.py",
                    "line": 3,
                    "source": "pyright",
                    "message": "undefined name 'lien'",
                    "severity": "error",
                }
            ],
        }
    ]
    account = (await editor.finished())["account"]
    assert account["problems"] == caused[0]["problems"]
    # and the terminal's account of the run, read from its log
    shown = await asyncio.to_thread(_runs_show, repo, proposal["runId"])
    assert "new problems after its changes: a.py:3 pyright undefined name 'lien'" in shown


async def test_a_problem_the_file_had_before_the_change_is_not_new(
    editor: Editor, scripted: ScriptedModel, repo: Path
) -> None:
    (repo / "a.py").write_text(ORIGINAL)
    uri = uri_of(repo / "a.py")
    await editor.command("toolgate.reportDiagnostics", _report(uri, "old trouble"))
    scripted.script = [
        # one line more above the old problem: it moves, and stays the same problem
        tool_call("edit_file", path="a.py", search="line 0\n", replace="line 0\nline 0b\n"),
        {"content": "Changed."},
    ]
    await editor.command("toolgate.ask", {"task": "add a line"})
    proposal = await editor.proposal()
    accepting = asyncio.ensure_future(editor.command("toolgate.acceptProposal", proposal["id"]))
    await editor.until(lambda: any(r["id"] == proposal["id"] for r in editor.resolved), 10)
    await editor.command("toolgate.reportDiagnostics", _report(uri, "old trouble", line=3))
    await accepting
    assert (await editor.finished())["status"] == "completed"
    told = last_tool_result(scripted.requests[-1])
    assert "note" not in told["data"], told
    assert not [e for e in editor.events if e["type"] == "proposal_problems"]


def _runs_show(repo: Path, run_id: str) -> str:
    """`toolgate runs show RUN` in the workspace: the terminal's account of a run."""
    command = [sys.executable, "-m", "toolgate", "runs", "show", run_id, "--workspace", str(repo)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=True)
    return done.stdout
