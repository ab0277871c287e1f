"""`toolgate doctor` against the scripted model server, real git and real bubblewrap.

Each check says what it found; a failure names the command that fixes it; the exit status is
0 only when a run can start.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest
from tests.cli.helpers import toolgate
from tests.support.net import closed_port
from tests.support.scripted_model import ScriptedModel, tool_call

from toolgate.setup.local_servers import find_local_servers


def _checks(done: object) -> dict[str, dict[str, str]]:
    report = json.loads(done.stdout)  # type: ignore[attr-defined]
    return {check["name"]: check for check in report["checks"]}


def test_a_native_endpoint_lets_a_run_start(repo: Path, scripted: ScriptedModel) -> None:
    scripted.script = [tool_call("report_ready", ready=True)]
    done = toolgate("doctor", "--workspace", str(repo), "--base-url", scripted.base_url, "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    checks = _checks(done)
    assert checks["endpoint"]["status"] == "ok"
    assert (
        "model scripted-model answers; native tool calling works" in checks["endpoint"]["summary"]
    )
    assert checks["Python"]["status"] == "ok" and checks["git"]["status"] == "ok"
    assert checks["workspace trust"]["status"] == "ok"
    # One tiny request, offering one tool, with the model the server lists first.
    assert len(scripted.requests) == 1
    request = scripted.requests[0]
    assert request["model"] == "scripted-model"
    assert [tool["function"]["name"] for tool in request["tools"]] == ["report_ready"]
    assert json.loads(done.stdout)["text"].endswith("A run can start here.")


def test_an_endpoint_that_refuses_tools_gets_the_text_protocol(
    repo: Path, scripted: ScriptedModel
) -> None:
    scripted.reject_tools = True
    scripted.script = [{"content": "ready"}]
    done = toolgate("doctor", "--workspace", str(repo), "--base-url", scripted.base_url)
    assert done.returncode == 0, done.stdout + done.stderr
    line = next(row for row in done.stdout.splitlines() if "endpoint:" in row)
    assert line.lstrip().startswith("ok")
    assert "tools are called through Toolgate's text protocol" in line


def test_an_unreachable_endpoint_stops_a_run_and_says_how_to_fix_it(repo: Path) -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    done = toolgate("doctor", "--workspace", str(repo), "--base-url", url, "--model", "m")
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    at = next(i for i, row in enumerate(lines) if "endpoint:" in row)
    assert lines[at].lstrip().startswith("fail")
    assert f"cannot reach the model server at {url}: connection refused" in lines[at]
    assert lines[at + 1].strip().startswith("fix: start the model server")
    assert "--base-url URL" in lines[at + 1]
    assert lines[-1] == "A run cannot start until this is fixed: endpoint."


def test_a_refused_key_is_named_with_where_to_set_it(repo: Path, scripted: ScriptedModel) -> None:
    scripted.models_status = 401
    done = toolgate("doctor", "--workspace", str(repo), "--base-url", scripted.base_url, "--json")
    assert done.returncode == 1
    endpoint = _checks(done)["endpoint"]
    assert endpoint["status"] == "fail"
    assert "refused the API key (HTTP 401)" in endpoint["summary"]
    assert "OPENAI_API_KEY" in endpoint["fix"]


def test_a_model_the_server_does_not_serve_is_named_with_those_it_does(
    repo: Path, scripted: ScriptedModel
) -> None:
    scripted.script = [{"status": 404, "error": "model 'gpt-9' not found"}]
    done = toolgate(
        "doctor",
        "--workspace",
        str(repo),
        "--base-url",
        scripted.base_url,
        "--model",
        "gpt-9",
        "--json",
    )
    assert done.returncode == 1
    endpoint = _checks(done)["endpoint"]
    assert "it serves: scripted-model" in endpoint["summary"]
    assert endpoint["fix"].startswith("name a model the server serves")


def test_an_unconfirmed_workspace_base_url_gets_no_key_and_no_request(
    repo: Path, scripted: ScriptedModel
) -> None:
    (repo / ".toolgate").mkdir()
    (repo / ".toolgate" / "config.toml").write_text(
        f'[model]\nbase_url = "{scripted.base_url}"\n', encoding="utf-8"
    )
    done = toolgate(
        "doctor", "--workspace", str(repo), "--json", env={"OPENAI_API_KEY": "sk-doctor-secret"}
    )
    assert done.returncode == 1
    checks = _checks(done)
    assert checks["workspace trust"]["status"] == "fail"
    assert checks["workspace trust"]["fix"] == f"toolgate trust --workspace {repo}"
    assert checks["endpoint"]["summary"] == "not asked: its base URL is not confirmed"
    assert scripted.requests == []


def test_without_bubblewrap_a_run_still_starts_and_the_fix_is_named(
    repo: Path, scripted: ScriptedModel, tmp_path: Path
) -> None:
    scripted.script = [tool_call("report_ready", ready=True)]
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    git = shutil.which("git")
    assert git is not None
    (bin_dir / "git").symlink_to(git)
    done = toolgate(
        "doctor",
        "--workspace",
        str(repo),
        "--base-url",
        scripted.base_url,
        "--json",
        env={"PATH": str(bin_dir)},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    sandbox = _checks(done)["bubblewrap"]
    assert sandbox["status"] == "warn"
    assert sandbox["summary"].startswith("bubblewrap (bwrap) is not installed")
    assert sandbox["fix"] == "install bubblewrap with your system's package manager"


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")
def test_a_required_sandbox_without_bubblewrap_stops_a_run(
    repo: Path, scripted: ScriptedModel, tmp_path: Path
) -> None:
    (repo / ".toolgate").mkdir()
    (repo / ".toolgate" / "config.toml").write_text(
        '[sandbox]\nmode = "required"\n', encoding="utf-8"
    )
    scripted.script = [tool_call("report_ready", ready=True)]
    done = toolgate(
        "doctor",
        "--workspace",
        str(repo),
        "--base-url",
        scripted.base_url,
        "--json",
        env={"PATH": str(tmp_path)},
    )
    assert done.returncode == 1
    assert _checks(done)["bubblewrap"]["status"] == "fail"


def test_no_endpoint_and_no_embedded_model_names_both_ways_out(repo: Path) -> None:
    done = toolgate("doctor", "--workspace", str(repo), "--json", without_local_runtime=True)
    assert done.returncode == 1, done.stdout + done.stderr
    checks = _checks(done)
    assert checks["endpoint"]["status"] == "fail"
    assert "toolgate model install" in checks["endpoint"]["fix"]
    assert "--base-url URL" in checks["endpoint"]["fix"]
    assert checks["embedded model"]["status"] == "info"


def test_model_servers_on_their_ports_are_found_with_their_models(
    scripted: ScriptedModel,
) -> None:
    port = int(scripted.base_url.rsplit(":", 1)[1].split("/")[0])
    nothing = closed_port()
    found = asyncio.run(find_local_servers((("Nothing", nothing), ("LM Studio", port))))
    assert [server.to_dict() for server in found] == [
        {"name": "LM Studio", "baseUrl": scripted.base_url, "models": ["scripted-model"]}
    ]


def test_a_server_that_is_not_a_model_server_is_not_offered() -> None:
    from tests.support.net import canned_endpoint

    with canned_endpoint(200, "text/html", b"<html>a router</html>") as url:
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        assert asyncio.run(find_local_servers((("llama.cpp", port),))) == []


def test_doctor_help_is_listed() -> None:
    done = toolgate("--help")
    assert "doctor" in done.stdout and "model" in done.stdout
