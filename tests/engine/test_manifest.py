"""Tool manifests: a workspace-described program, gated like any command."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.support.reviewers import Approving
from tests.support.scripted_model import ScriptedModel, last_tool_result, tool_call

from toolgate.config import ConfigError, load_config
from toolgate.review.reviewer import AutoReviewer
from toolgate.session import Endpoint, RunSetup, create_run
from toolgate.workspace import Workspace

MANIFEST = """
name = "shout"
description = "Print a file's first line in capitals."
command = ["python", "shout.py", "{path}"]

[parameters]
type = "object"
required = ["path"]
[parameters.properties.path]
type = "string"
"""
SCRIPT = "import sys\nprint(open(sys.argv[1]).readline().upper())\n"


def _workspace(repo: Path) -> None:
    (repo / ".agent" / "tools").mkdir(parents=True)
    (repo / ".agent" / "tools" / "shout.toml").write_text(MANIFEST)
    (repo / "shout.py").write_text(SCRIPT)
    (repo / "words.txt").write_text("quiet words; ls > /tmp/x\n")


async def _run(
    repo: Path,
    scripted: ScriptedModel,
    reviewer: AutoReviewer,
    trusted: bool = True,
    status: str = "completed",
) -> dict:
    setup = RunSetup(root=repo, config=load_config(repo), reviewer=reviewer, trusted=trusted)
    run = await create_run(setup, "shout words.txt", Endpoint(scripted.base_url, scripted.model))
    outcome = await run.run()
    await run.model.close()
    assert outcome.status == status, outcome
    return last_tool_result(scripted.requests[-1])


async def test_manifest_tool_runs_after_explicit_yes(repo: Path, scripted: ScriptedModel) -> None:
    _workspace(repo)
    scripted.script = [tool_call("shout", path="words.txt"), {"content": "done"}]
    reviewer = Approving(Workspace(repo))
    result = await _run(repo, scripted, reviewer)
    assert result["success"] is True
    assert result["data"]["output"].strip() == "QUIET WORDS; LS > /TMP/X"
    assert result["data"]["argv"] == ["python", "shout.py", "words.txt"]
    assert [r.summary for r in reviewer.asked] == ["python shout.py words.txt"]
    assert reviewer.asked[0].off_allow_list is True
    offered = [t["function"]["name"] for t in scripted.requests[0]["tools"]]
    assert "shout" in offered


async def test_manifest_tool_not_covered_by_auto_approval(
    repo: Path, scripted: ScriptedModel
) -> None:
    _workspace(repo)
    scripted.script = [tool_call("shout", path="words.txt"), {"content": "done"}]
    # The refused command ends the run "incomplete": nothing it asked for ran.
    result = await _run(repo, scripted, AutoReviewer(Workspace(repo)), status="incomplete")
    assert result["success"] is False
    assert "allow-list" in result["error"]


async def test_manifest_tool_refused_in_untrusted_workspace(
    repo: Path, scripted: ScriptedModel
) -> None:
    _workspace(repo)
    scripted.script = [tool_call("shout", path="words.txt"), {"content": "done"}]
    reviewer = Approving(Workspace(repo))
    result = await _run(repo, scripted, reviewer, trusted=False)
    assert result["success"] is False and "not trusted" in result["error"]
    assert reviewer.asked == []


async def test_bad_manifest_is_a_clear_error(repo: Path, scripted: ScriptedModel) -> None:
    (repo / ".agent" / "tools").mkdir(parents=True)
    (repo / ".agent" / "tools" / "bad.toml").write_text('name = "bad"\ncommand = "rm -rf /"\n')
    setup = RunSetup(root=repo, config=load_config(repo), reviewer=AutoReviewer(Workspace(repo)))
    with pytest.raises(ConfigError, match=r"bad.toml: 'command' must be a non-empty list"):
        await create_run(setup, "x", Endpoint(scripted.base_url, scripted.model))
    assert json.dumps(scripted.requests) == "[]"
