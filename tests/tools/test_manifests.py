"""`tool.yaml` manifests: the schema's errors, the entrypoint's protocol, trust by hash."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.support.scripted_model import ScriptedModel, last_tool_result, tool_call
from tests.tools.helpers import manifest, write_tool

from toolgate.agent.events import TOOL_PROGRESS
from toolgate.config import load_config
from toolgate.review.reviewer import AutoReviewer
from toolgate.session import Endpoint, RunSetup, create_run
from toolgate.tools.activity import ActivityContext, ActivitySettings
from toolgate.tools.manifest import ManifestError
from toolgate.tools.yaml_manifest import EntrypointActivity, read_manifest
from toolgate.trust import TrustStore
from toolgate.workspace import Workspace


def _trust(root: Path, path: Path) -> None:
    TrustStore().confirm(root, [read_manifest(path).fingerprint])


@pytest.mark.parametrize(
    ("change", "field", "expected"),
    [
        ({"version": None}, "version", "a required field, missing"),
        ({"capabilities": ["Render"]}, "capabilities.0", "does not match"),
        ({"capabilities": []}, "capabilities", "should be non-empty"),
        ({"gate": "sometimes"}, "gate", "'sometimes' is not one of"),
        ({"colour": "blue"}, "colour", "no such field (unknown key)"),
        ({"priority": 500}, "priority", "greater than the maximum"),
        ({"entrypoint": []}, "entrypoint", "should be non-empty"),
        ({"output_schema": {"type": "banana"}}, "output_schema.type", "a valid JSON Schema"),
    ],
)
def test_schema_violations_name_file_field_and_expectation(
    tmp_path: Path, change: dict, field: str, expected: str
) -> None:
    path = write_tool(tmp_path, manifest(**change))
    with pytest.raises(ManifestError) as caught:
        read_manifest(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: {field}: "), message
    assert expected in message


@pytest.mark.parametrize(
    ("entrypoint", "why"),
    [
        (["python3", "../outside.py"], "leads outside the tool's folder"),
        (["python3", "/etc/passwd"], "is an absolute path"),
        (["./missing.sh"], "is not a file in the tool's folder"),
    ],
)
def test_entrypoint_outside_its_folder_is_refused(
    tmp_path: Path, entrypoint: list[str], why: str
) -> None:
    (tmp_path / "tools" / "outside.py").parent.mkdir(parents=True)
    (tmp_path / "tools" / "outside.py").write_text("print('{}')\n")
    path = write_tool(tmp_path, manifest(entrypoint=entrypoint))
    with pytest.raises(ManifestError, match=why) as caught:
        read_manifest(path)
    assert str(caught.value).startswith(f"{path}: entrypoint[")


def test_entrypoint_through_a_symlink_out_of_the_folder_is_refused(tmp_path: Path) -> None:
    (tmp_path / "elsewhere.py").write_text("print('{}')\n")
    path = write_tool(tmp_path, manifest(entrypoint=["python3", "link.py"]))
    (path.parent / "link.py").symlink_to(tmp_path / "elsewhere.py")
    with pytest.raises(ManifestError, match="leads outside"):
        read_manifest(path)


async def _call(root: Path, code: str, args: dict, **fields: object) -> tuple[dict, list[str]]:
    path = write_tool(root, manifest(**fields), code)
    _trust(root, path)
    progress: list[str] = []
    ctx = ActivityContext(
        workspace=Workspace(root),
        settings=ActivitySettings(max_output_bytes=2000),
        on_progress=lambda tool, line: progress.append(f"{tool}: {line}"),
    )
    result = await EntrypointActivity(read_manifest(path), root).run(ctx, args)
    return result.to_dict(), progress


async def test_protocol_json_in_json_out_stderr_as_progress(tmp_path: Path) -> None:
    from tests.tools.helpers import ECHO

    result, progress = await _call(tmp_path, ECHO, {"text": "quiet; rm -rf /"})
    assert result["success"] is True, result
    assert result["data"] == {"text": "QUIET; RM -RF /", "length": 15}
    assert progress == ["shout: echo: got ['text']"]


@pytest.mark.parametrize(
    ("code", "fields", "expected"),
    [
        ("print('hello, not json')", {}, "not one JSON value on stdout"),
        ("import json; print(json.dumps({'text': 3}))", {}, "does not match its output_schema"),
        ("import sys; print('boom', file=sys.stderr); sys.exit(3)", {}, "exited with status 3"),
        ("import time; time.sleep(30)", {"timeout_seconds": 1}, "timed out after 1 s"),
        ("print('x' * 5000)", {}, "more than the 2000-byte cap"),
        ("import sys", {"entrypoint": ["no-such-program-xyz"]}, "command not found"),
    ],
)
async def test_tool_failures_are_clear_error_results(
    tmp_path: Path, code: str, fields: dict, expected: str
) -> None:
    result, _ = await _call(tmp_path, code, {"text": "a"}, **fields)
    assert result["success"] is False
    assert expected in result["error"], result["error"]


async def test_timeout_ends_the_whole_process_group(tmp_path: Path) -> None:
    marker = tmp_path / "child-alive"
    child = f"import time; time.sleep(3); open({str(marker)!r}, 'w').close()"
    code = (
        "import subprocess, sys, time\n"
        f"subprocess.Popen([sys.executable, '-c', {child!r}])\n"
        "time.sleep(30)\n"
    )
    result, _ = await _call(tmp_path, code, {"text": "a"}, timeout_seconds=1)
    assert "timed out" in result["error"]
    import asyncio

    await asyncio.sleep(3.5)
    assert not marker.exists()


async def test_untrusted_and_changed_manifests_run_nothing(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    code = f"open({str(marker)!r}, 'w').close(); print('{{}}')"
    path = write_tool(tmp_path, manifest(output_schema={"type": "object"}), code)
    ctx = ActivityContext(workspace=Workspace(tmp_path), settings=ActivitySettings())
    result = await EntrypointActivity(read_manifest(path), tmp_path).run(ctx, {"text": "a"})
    assert result.success is False and "toolgate tools trust shout" in (result.error or "")
    assert not marker.exists()
    _trust(tmp_path, path)
    assert (await EntrypointActivity(read_manifest(path), tmp_path).run(ctx, {"text": "a"})).success
    marker.unlink()
    # A changed entrypoint is a different tool: it asks again.
    (path.parent / "main.py").write_text(code + "\n# changed\n")
    result = await EntrypointActivity(read_manifest(path), tmp_path).run(ctx, {"text": "a"})
    assert result.success is False and not marker.exists()


async def test_manifest_tool_called_by_the_model_end_to_end(
    repo: Path, scripted: ScriptedModel
) -> None:
    path = write_tool(repo, manifest())
    _trust(repo, path)
    scripted.script = [tool_call("shout", text="hello"), {"content": "done"}]
    setup = RunSetup(root=repo, config=load_config(repo), reviewer=AutoReviewer(Workspace(repo)))
    events: list[str] = []
    setup.bus.subscribe(
        lambda e: events.append(e.fields.get("line", "")) if e.type == TOOL_PROGRESS else None
    )
    run = await create_run(setup, "shout hello", Endpoint(scripted.base_url, scripted.model))
    offered = (
        {t["function"]["name"]: t["function"] for t in scripted.requests[0]["tools"]}
        if scripted.requests
        else {}
    )
    outcome = await run.run()
    await run.model.close()
    assert outcome.status == "completed", outcome
    offered = {t["function"]["name"] for t in scripted.requests[0]["tools"]}
    assert "shout" in offered
    result = last_tool_result(scripted.requests[-1])
    assert result["success"] is True, result
    assert result["data"] == {"text": "HELLO", "length": 5}
    assert events == ["echo: got ['text']"]
    log = json.loads(Path(outcome.log_path or "").read_text())
    assert any(e["type"] == TOOL_PROGRESS for e in log["events"])
    # The final account names each operation done by its call and capability.
    call_id = log["steps"][0]["calls"][0]["id"]
    assert log["account"]["done"] == [f"{call_id} text.shout"]
    (finished,) = [e for e in log["events"] if e["type"] == "run_finished"]
    assert finished["done"] == [f"{call_id} text.shout"]


async def test_a_manifest_with_gate_ask_asks_the_person(
    repo: Path, scripted: ScriptedModel
) -> None:
    from toolgate.review.reviewer import DenyReviewer

    path = write_tool(repo, manifest(gate="ask"))
    _trust(repo, path)
    scripted.script = [tool_call("shout", text="hello"), {"content": "done"}]
    setup = RunSetup(root=repo, config=load_config(repo), reviewer=DenyReviewer(Workspace(repo)))
    run = await create_run(setup, "shout hello", Endpoint(scripted.base_url, scripted.model))
    await run.run()
    await run.model.close()
    result = last_tool_result(scripted.requests[-1])
    assert result["success"] is False and "refused by --approve deny" in result["error"]
