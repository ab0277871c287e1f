"""run_tests and run_command share their checks; run_tests runs another command as run_command."""

from __future__ import annotations

import sys
from pathlib import Path

from toolgate.tools.activity import ActivityContext, ActivitySettings
from toolgate.tools.builtins import RunCommand, RunTests
from toolgate.workspace import Workspace


async def test_run_tests_with_another_command_runs_it_as_run_command(tmp_path: Path) -> None:
    """The checks are shared: a refused folder is refused; a plain program gives its status."""
    ctx = ActivityContext(workspace=Workspace(tmp_path), settings=ActivitySettings())
    refused = await RunTests().run(ctx, {"command": "pytest", "cwd": "../"})
    assert not refused.success and "not allowed" in (refused.error or "")
    ran = await RunTests().run(ctx, {"command": f"{sys.executable} -c 'import sys; sys.exit(3)'"})
    assert not ran.success
    assert (
        isinstance(ran.data, dict)
        and ran.data["exit_code"] == 3
        and ran.error == "exited with status 3"
    )


async def test_an_untrusted_workspace_runs_nothing(tmp_path: Path) -> None:
    ctx = ActivityContext(workspace=Workspace(tmp_path), settings=ActivitySettings(trusted=False))
    for activity in (RunTests(), RunCommand()):
        refused = await activity.run(ctx, {"command": "touch x"})
        assert not refused.success and "not trusted" in (refused.error or "")
    assert not (tmp_path / "x").exists()
