"""After an accept, the editor's own diagnostics of the file reach the model, without a wait.

A client such as the VS Code extension reports the file's diagnostics when it hears that the
proposal landed (`toolgate/proposalResolved`); the server must send that first, and then wait
for the report, instead of waiting for a report the client has not been asked for yet.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from tests.lsp.harness import Editor, uri_of
from tests.support.scripted_model import ScriptedModel, last_tool_result, tool_call

ORIGINAL = "".join(f"line {i}\n" for i in range(10))


def _report(uri: str, message: str) -> dict[str, Any]:
    span = {"start": {"line": 2, "character": 0}, "end": {"line": 2, "character": 6}}
    return {
        "uri": uri,
        "diagnostics": [{"range": span, "message": message, "severity": 1, "source": "pyright"}],
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
    assert "line 3: undefined name 'lien' (pyright)" in told["data"]["note"]
    # the resolution was not held back for the 2 s a report may take
    assert heard < 1.5, heard
