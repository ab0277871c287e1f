"""The editor's setup commands over real stdio: the doctor's report, the endpoint check, the
model servers on this machine's ports."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.lsp.conftest import start_editor
from tests.lsp.harness import Editor
from tests.support.net import closed_port
from tests.support.scripted_model import ScriptedModel, tool_call


async def test_check_endpoint_says_how_the_model_calls_tools(
    editor: Editor, scripted: ScriptedModel
) -> None:
    scripted.script = [tool_call("report_ready", ready=True)]
    found = await editor.command("toolgate.checkEndpoint")
    assert found["ok"] is True
    assert found["toolCalling"] == "native"
    assert found["model"] == "scripted-model" and found["models"] == ["scripted-model"]
    assert len(scripted.requests) == 1


async def test_check_endpoint_of_a_url_nothing_serves(editor: Editor) -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    found = await editor.command("toolgate.checkEndpoint", {"baseUrl": url, "model": "m"})
    assert found["ok"] is False
    assert found["problem"] == f"cannot reach the model server at {url}: connection refused"
    assert found["fix"].startswith("start the model server")


async def test_check_endpoint_of_something_that_is_not_a_url(editor: Editor) -> None:
    found = await editor.command("toolgate.checkEndpoint", {"baseUrl": "localhost:8080"})
    assert found["ok"] is False
    assert found["problem"] == "'localhost:8080' is not an http:// or https:// URL"
    assert "http://127.0.0.1:8080/v1" in found["fix"]


async def test_the_doctor_in_a_restricted_workspace(
    repo: Path, options: dict[str, Any], scripted: ScriptedModel
) -> None:
    scripted.script = [tool_call("report_ready", ready=True)]
    editor = await start_editor(repo, {**options, "trusted": False}, "visual-studio-code")
    try:
        report = await editor.command("toolgate.doctor")
        servers = await editor.command("toolgate.findModelServers")
    finally:
        await editor.close()
    checks = {check["name"]: check for check in report["checks"]}
    assert report["ok"] is True, report["text"]
    assert checks["endpoint"]["status"] == "ok"
    assert checks["workspace trust"]["status"] == "warn"
    assert "Restricted Mode" in checks["workspace trust"]["summary"]
    assert report["text"].splitlines()[0] == f"toolgate {report['version']} doctor — {repo}"
    assert isinstance(servers, list)
