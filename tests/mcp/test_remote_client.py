"""Remote MCP servers in runs: a URL in the configuration, Streamable HTTP, OAuth, elicitation.

The remote server is `tests/mcp/remote_server.py`, a real SDK server over HTTP (with the SDK's
authorization server routes for OAuth) in a process of its own; the runs are `toolgate run` as
a person starts it, against the scripted model. The browser is played by a script named in
$BROWSER, which follows the authorization URL as a browser would, back to Toolgate's loopback
redirect.
"""

from __future__ import annotations

import json
import os
import signal
import stat
from pathlib import Path
from typing import Any

import pytest
from tests.cli.helpers import toolgate_task
from tests.support.mcp_remote import browser, events, remote_server
from tests.support.net import closed_port
from tests.support.scripted_model import ScriptedModel, tool_call

from toolgate.config import ConfigError, load_config, user_config_path

pytest.importorskip("mcp", reason='needs the mcp SDK: pip install "toolgate[mcp]"')


def _user_config(text: str) -> None:
    path = user_config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _results(scripted: ScriptedModel) -> list[dict[str, Any]]:
    """The tool results the model read, in order (from its last request)."""
    last = scripted.requests[-1]
    return [json.loads(m["content"]) for m in last["messages"] if m.get("role") == "tool"]


def test_a_remote_tool_in_a_run_with_oauth_refresh_and_a_dropped_stream(
    repo: Path, scripted: ScriptedModel, tmp_path: Path
) -> None:
    log = tmp_path / "remote.jsonl"
    env, visits = browser(tmp_path)
    with remote_server(log, "--oauth", "--token-seconds", "5") as (url, _):
        _user_config(f'[mcp.servers.remote]\nurl = "{url}"\napproval = "auto"\n')
        scripted.script = [
            tool_call("remote__echo", text="hi"),
            # The access token lives 5 s: the next call must refresh it first.
            {**tool_call("remote__echo", text="again"), "sleep": 6},
            tool_call("remote__drop_stream"),
            {"content": "done"},
        ]
        done = toolgate_task("run", "Use the remote server.", repo, scripted, env=env)
    assert done.returncode == 0, done.stderr
    assert "sign in to the MCP server 'remote' in your browser: http://127.0.0.1:" in done.stderr

    results = _results(scripted)
    assert [r["data"]["text"] for r in results] == ["echo: hi", "echo: again", "after the drop"]
    # One sign-in through the browser; then a refresh, never a second sign-in.
    assert len(visits.read_text().splitlines()) == 1
    assert [e["event"] for e in events(log) if e["event"] != "call"] == [
        "listening", "register", "authorize", "token", "refresh",
    ]  # fmt: skip
    calls = events(log, "call")
    assert [c["tool"] for c in calls] == ["echo", "echo", "drop_stream"]
    assert calls[0]["authorization"] != calls[1]["authorization"]  # the refreshed token
    assert len({c["session"] for c in calls}) == 1

    # The tokens are the user's alone, and nowhere else: not the run log, not the model.
    (token_file,) = (Path(os.environ["XDG_STATE_HOME"]) / "toolgate" / "mcp-oauth").glob("*")
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(token_file.parent.stat().st_mode) == 0o700
    stored = json.loads(token_file.read_text())["tokens"]
    secrets = [stored["access_token"], stored["refresh_token"]]
    secrets += [c["authorization"].split()[1] for c in calls]
    (run_log,) = (repo / ".toolgate" / "runs").glob("*.json")
    seen = run_log.read_text() + json.dumps(scripted.requests) + done.stdout + done.stderr
    assert not [s for s in secrets if s in seen]


def test_the_next_run_uses_the_stored_token_without_a_browser(
    repo: Path, scripted: ScriptedModel, tmp_path: Path
) -> None:
    log = tmp_path / "remote.jsonl"
    env, visits = browser(tmp_path)
    with remote_server(log, "--oauth") as (url, _):
        _user_config(f'[mcp.servers.remote]\nurl = "{url}"\napproval = "auto"\n')
        for _ in range(2):
            scripted.script = [tool_call("remote__echo", text="hi"), {"content": "done"}]
            done = toolgate_task("run", "Use the remote server.", repo, scripted, env=env)
            assert done.returncode == 0, done.stderr
    assert len(visits.read_text().splitlines()) == 1
    assert len(events(log, "token")) == 1


def test_headers_from_the_environment_and_elicitation_answered_by_default(
    repo: Path, scripted: ScriptedModel, tmp_path: Path
) -> None:
    log = tmp_path / "remote.jsonl"
    with remote_server(log) as (url, _):
        _user_config(
            f'[mcp.servers.remote]\nurl = "{url}"\napproval = "auto"\n'
            '[mcp.servers.remote.headers]\nAuthorization = "Bearer ${env:REMOTE_TOKEN}"\n'
        )
        scripted.script = [tool_call("remote__ask"), {"content": "done"}]
        done = toolgate_task(
            "run", "Ask.", repo, scripted, "--approve", "auto",
            env={"REMOTE_TOKEN": "tok-from-env-123"},
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        # --approve auto: the form's defaults are the answer.
        assert _results(scripted)[0]["data"]["text"] == 'accept: {"colour": "blue", "sure": true}'

        scripted.script = [tool_call("remote__ask"), {"content": "done"}]
        done = toolgate_task(
            "run", "Ask.", repo, scripted, "--approve", "deny",
            env={"REMOTE_TOKEN": "tok-from-env-123"},
        )  # fmt: skip
        # --approve deny: declined (and the call itself, approval = "auto", ran).
        assert _results(scripted)[0]["data"]["text"] == "decline: {}"
    calls = events(log, "call")
    assert {c["authorization"] for c in calls} == {"Bearer tok-from-env-123"}
    (run_log, *_) = (repo / ".toolgate" / "runs").glob("*.json")
    assert "tok-from-env-123" not in run_log.read_text()


def test_a_missing_variable_and_an_unreachable_server_are_named(
    repo: Path, scripted: ScriptedModel
) -> None:
    url = f"http://127.0.0.1:{closed_port()}/mcp"
    _user_config(
        f'[mcp.servers.gone]\nurl = "{url}"\n'
        '[mcp.servers.gone.headers]\nX-Key = "${env:NOT_SET_ANYWHERE}"\n'
    )
    scripted.script = [{"content": "never"}]
    done = toolgate_task("run", "Go.", repo, scripted)
    assert done.returncode == 2
    assert "MCP server 'gone'" in done.stderr
    assert "${env:NOT_SET_ANYWHERE}, which is not set" in done.stderr

    _user_config(f'[mcp.servers.gone]\nurl = "{url}"\n')
    done = toolgate_task("run", "Go.", repo, scripted)
    assert done.returncode == 2
    assert f"MCP server 'gone' ({url}) could not be reached" in done.stderr


def test_a_server_that_drops_is_reconnected_by_the_next_call(
    repo: Path, scripted: ScriptedModel, tmp_path: Path
) -> None:
    log = tmp_path / "remote.jsonl"
    port = closed_port()
    restarted = tmp_path / "restarted"

    with remote_server(log, port=port) as (url, process):
        _user_config(f'[mcp.servers.remote]\nurl = "{url}"\napproval = "auto"\n')

        def stop(body: dict[str, Any]) -> dict[str, Any]:
            process.send_signal(signal.SIGINT)
            process.wait(15)
            return tool_call("remote__echo", text="while away")

        def start(body: dict[str, Any]) -> dict[str, Any]:
            restarted.write_text("")
            server = remote_server(log, port=port)
            server.__enter__()
            servers.append(server)
            return tool_call("remote__echo", text="second")

        servers: list[Any] = []
        scripted.script = [
            tool_call("remote__echo", text="first"),
            stop,
            tool_call("remote__echo", text="still away"),
            start,
            {"content": "ok"},
        ]
        try:
            done = toolgate_task("run", "Go.", repo, scripted)
        finally:
            for server in servers:
                server.__exit__(None, None, None)
    assert done.returncode == 0, done.stderr
    first, away, still_away, second = _results(scripted)
    assert first["data"]["text"] == "echo: first"
    # The call in flight fails; the next one tries to connect again, and says it cannot.
    assert not away["success"] and "server 'remote'" in away["error"]
    assert not still_away["success"]
    assert f"MCP server 'remote' ({url}) could not be reached" in still_away["error"]
    assert second["data"]["text"] == "echo: second"
    assert restarted.exists()


def test_a_table_with_both_command_and_url_is_refused(repo: Path) -> None:
    _user_config('[mcp.servers.x]\nurl = "https://example.com/mcp"\ncommand = ["x"]\n')
    with pytest.raises(ConfigError, match="give either command .* or url"):
        load_config(repo)
    _user_config('[mcp.servers.x]\nurl = "https://example.com/mcp"\ntype = "stdio"\n')
    with pytest.raises(ConfigError, match='type = "stdio" does not go with url'):
        load_config(repo)
    _user_config('[mcp.servers.x]\ncommand = ["x"]\n[mcp.servers.x.headers]\nA = "b"\n')
    with pytest.raises(ConfigError, match="headers is for a server given by url"):
        load_config(repo)
    _user_config('[mcp.servers.x]\nurl = "ftp://example.com"\n')
    with pytest.raises(ConfigError, match="mcp.servers.x.url"):
        load_config(repo)
