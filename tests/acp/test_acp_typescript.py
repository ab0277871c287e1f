"""`toolgate acp` driven by the official TypeScript SDK (`@agentclientprotocol/sdk`) from Node."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.acp.client import agent_env
from tests.acp.conftest import CALC
from tests.support.scripted_model import ScriptedModel, last_tool_result, tool_call

TS = Path(__file__).parent / "ts"

pytestmark = pytest.mark.skipif(
    shutil.which("node") is None or not (TS / "node_modules" / "@agentclientprotocol").is_dir(),
    reason="needs node and `npm install` in tests/acp/ts (scripts/test.sh installs them)",
)


def run_client(scripted: ScriptedModel, script: str, repo: Path, *answers: str) -> Any:
    """Run one of the TypeScript client's scripts against `toolgate acp` in `repo`.

    The script prints what it saw as JSON on its last line; that is returned.
    """
    done = subprocess.run(
        ["node", script, str(repo), sys.executable, *answers],
        cwd=TS,
        env={**os.environ, **agent_env(scripted.base_url)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_typescript_client_edits_runs_tests_and_is_refused(
    repo: Path, scripted: ScriptedModel
) -> None:
    (repo / "calc.py").write_text(CALC)
    (repo / "test_calc.py").write_text(
        "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
    )
    scripted.script = [
        tool_call("read_file", path="calc.py"),
        tool_call("edit_file", path="calc.py", search="return a - b", replace="return a + b"),
        tool_call("run_tests"),
        {"content": "Fixed."},
        tool_call("edit_file", path="calc.py", search="a + b", replace="b + a"),
        {"content": "Left as it is."},
        tool_call("write_file", path="../outside.txt", content="gone\n"),
        {"content": "Refused."},
        tool_call("edit_file", path="calc.py", search="a + b", replace="a+b"),
        {"content": "never asked"},
    ]
    outside = repo.parent / "outside.txt"
    outside.write_text("keep\n")
    seen = run_client(scripted, "client.mjs", repo, "allow_once", "reject_once", "cancel")
    assert seen["protocolVersion"] == 1 and seen["authMethods"] == ["openai-api-key"]
    assert seen["stopReasons"] == ["end_turn", "end_turn", "end_turn", "cancelled"]
    assert seen["unknownSessionError"] == -32602
    kinds = [(u["sessionUpdate"], u.get("kind")) for u in seen["updates"]]
    assert ("tool_call", "read") in kinds and ("tool_call", "execute") in kinds
    diff = seen["permissions"][0]["toolCall"]["content"][0]
    assert diff == {
        "type": "diff",
        "path": str(repo / "calc.py"),
        "oldText": CALC,
        "newText": CALC.replace("a - b", "a + b"),
    }
    assert seen["writes"] == [{"path": str(repo / "calc.py"), "content": diff["newText"]}]
    assert (repo / "calc.py").read_text() == diff["newText"]  # the rejected edit never landed
    results = [
        u["content"][0]["content"]["text"]
        for u in seen["updates"]
        if u["sessionUpdate"] == "tool_call_update" and u.get("content")
    ]
    assert any("1 passed, 0 failed" in text for text in results), results
    told = last_tool_result(scripted.requests[5])
    assert told["success"] is False and "reject" in json.dumps(told).lower()
    # the escape was refused before any request reached the client
    assert outside.read_text() == "keep\n" and len(seen["permissions"]) == 3
    assert last_tool_result(scripted.requests[7])["success"] is False
    # the cancelled turn asked the model nothing more
    assert len(scripted.requests) == 9
    # session/load replays the four prompts, answers and calls
    replayed = [
        u["content"]["text"] for u in seen["replayed"] if u["sessionUpdate"] == "user_message_chunk"
    ]
    assert replayed == ["fix add", "make it nicer", "write outside", "once more"]
    assert any(u["sessionUpdate"] == "tool_call" for u in seen["replayed"])


def test_typescript_client_sees_modes_plan_thoughts_results_and_commands(
    repo: Path, scripted: ScriptedModel
) -> None:
    (repo / "calc.py").write_text(CALC)
    (repo / "test_calc.py").write_text(
        "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
    )
    steps = [{"step": "Fix add", "status": "in_progress"}, {"step": "Test", "status": "pending"}]
    scripted.script = [
        {**tool_call("update_plan", plan=steps), "reasoning": "Plan first."},
        tool_call("run_tests"),
        tool_call("edit_file", path="calc.py", search="return a - b", replace="return a + b"),
        tool_call("read_file", path="calc.py"),
        tool_call("run_tests"),
        {
            "content": "<think>All green.</think>Fixed, and the answer was cu",
            "finish_reason": "length",
            "usage": {"prompt_tokens": 700, "completion_tokens": 30, "total_tokens": 730},
        },
        {"content": "I cannot say", "finish_reason": "content_filter"},
    ]
    seen = run_client(scripted, "features.mjs", repo)
    assert seen["modes"]["currentModeId"] == "ask"
    assert [m["id"] for m in seen["modes"]["availableModes"]] == ["ask", "auto-edits", "read-only"]
    assert seen["approvalAfter"] == "ask"
    assert seen["stopReasons"] == ["max_tokens", "end_turn", "end_turn", "refusal"]
    updates = seen["updates"]

    def of(kind: str) -> list[dict[str, Any]]:
        return [u for u in updates if u["sessionUpdate"] == kind]

    assert of("config_option_update") and of("current_mode_update")[-1]["currentModeId"] == "ask"
    assert [e["content"] for e in of("plan")[0]["entries"]] == ["Fix add", "Test"]
    thought = "".join(u["content"]["text"] for u in of("agent_thought_chunk"))
    assert thought == "Plan first.All green."
    message = "".join(u["content"]["text"] for u in of("agent_message_chunk"))
    assert "Fixed, and the answer was cu" in message and "think>" not in message
    contents = [c for u in of("tool_call_update") for c in u.get("content") or []]
    shown = [c["content"]["text"] for c in contents if c["type"] == "content"]
    assert any("return a + b" in text for text in shown)  # the read's text
    assert any("1 passed, 0 failed" in text for text in shown)  # the tests' summary
    failing = [u for u in of("tool_call_update") if u.get("locations")]
    assert failing[0]["locations"] == [{"path": str(repo / "test_calc.py"), "line": 5}]
    assert any("test_calc.py:5: test_calc.py::test_add" in text for text in shown)
    ids = [u["toolCallId"] for u in of("tool_call")]
    # four calls and the undo, unique, though the model server names every call call_0
    assert len(ids) == len(set(ids)) == 5
    assert of("usage_update")[0]["used"] == 730
    assert any(c["type"] == "diff" and c["newText"] == CALC.replace("-", "+") for c in contents)
    # the edit was applied without a question (auto-edits); /undo asked, with its diff
    assert len(seen["permissions"]) == 1
    undo = seen["permissions"][0]["toolCall"]["content"][0]
    assert undo["oldText"] == CALC.replace("-", "+") and undo["newText"] == CALC
    assert (repo / "calc.py").read_text() == CALC
    commands = [
        [c["name"] for c in u["availableCommands"]] for u in of("available_commands_update")
    ]
    assert commands[0] == ["tests", "review", "new", "rewind"] and "undo" in commands[1]
    assert "set aside" in message or "no longer sees" in message
    # after /new the model saw only the new prompt
    assert "plan and fix add" not in json.dumps(scripted.requests[-1]["messages"])
