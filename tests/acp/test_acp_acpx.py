"""`toolgate acp` driven by acpx, a real headless ACP client from npm, against the scripted model.

acpx speaks for an editor: it advertises `fs` and answers permission requests by its policy
(`--approve-all`, `--deny-all`). Its `--format json` output is every JSON-RPC message of the
session, both ways.
"""

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
ACPX = TS / "node_modules" / ".bin" / "acpx"
TEST = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"

pytestmark = pytest.mark.skipif(
    shutil.which("node") is None or not ACPX.exists(),
    reason="needs node and `npm install` in tests/acp/ts (scripts/test.sh installs them)",
)


PERMISSION_DENIED = 5  # acpx's exit status for a turn in which it denied a permission


def acpx(
    repo: Path, base_url: str, home: Path, policy: str, text: str, status: int = 0
) -> list[dict[str, Any]]:
    """Run one `acpx exec` turn against `toolgate acp`; the messages it saw."""
    agent = f"{sys.executable} -m toolgate acp"
    done = subprocess.run(
        [str(ACPX), "--cwd", str(repo), policy, "--format", "json", "--timeout", "240"]
        + ["--agent", agent, "exec", text],
        env={**os.environ, **agent_env(base_url), "HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == status, done.stderr[-3000:]
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def updates(messages: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [
        m["params"]["update"]
        for m in messages
        if m.get("method") == "session/update" and m["params"]["update"]["sessionUpdate"] == kind
    ]


def test_acpx_approves_an_edit_that_lands_through_its_fs(
    repo: Path, scripted: ScriptedModel, tmp_path: Path
) -> None:
    (repo / "calc.py").write_text(CALC)
    (repo / "test_calc.py").write_text(TEST)
    scripted.script = [
        tool_call("read_file", path="calc.py"),
        tool_call("edit_file", path="calc.py", search="return a - b", replace="return a + b"),
        tool_call("run_tests"),
        {"content": "Fixed add."},
    ]
    seen = acpx(repo, scripted.base_url, tmp_path, "--approve-all", "fix add")
    assert (repo / "calc.py").read_text() == CALC.replace("a - b", "a + b")
    asked = [m for m in seen if m.get("method") == "session/request_permission"]
    assert len(asked) == 1 and asked[0]["params"]["toolCall"]["content"][0]["type"] == "diff"
    writes = [m for m in seen if m.get("method") == "fs/write_text_file"]
    assert [w["params"]["path"] for w in writes] == [str(repo / "calc.py")]
    shown = [
        c["content"]["text"]
        for u in updates(seen, "tool_call_update")
        for c in u.get("content") or []
        if c["type"] == "content"
    ]
    assert any("return a - b" in text for text in shown)  # the read
    assert any("1 passed, 0 failed" in text for text in shown)  # the tests
    answers = [m["result"] for m in seen if "result" in m and "stopReason" in (m["result"] or {})]
    assert answers == [{"stopReason": "end_turn"}]


def test_acpx_denying_the_edit_is_told_to_the_model(
    repo: Path, scripted: ScriptedModel, tmp_path: Path
) -> None:
    (repo / "calc.py").write_text(CALC)
    scripted.script = [
        tool_call("edit_file", path="calc.py", search="return a - b", replace="return a + b"),
        {"content": "Left as it is."},
    ]
    seen = acpx(repo, scripted.base_url, tmp_path, "--deny-all", "fix add", PERMISSION_DENIED)
    assert (repo / "calc.py").read_text() == CALC
    assert [m for m in seen if m.get("method") == "fs/write_text_file"] == []
    assert len([m for m in seen if m.get("method") == "session/request_permission"]) == 1
    told = last_tool_result(scripted.requests[1])
    assert told["success"] is False and "reject" in json.dumps(told).lower()
