"""`toolgate calls parse`: the JSON surface, through a real subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from toolgate.calls.parser import read_whole
from toolgate.calls.reading import parser_for
from toolgate.cli.calls import calls_parse_main, default_tool_schemas
from toolgate.config import ToolCalling, load_config

TEXT = 'Reading.\n<tool name="read_file" args>{"path": "a.py"}</tool>\n<tool:git_status></tool>'


def run_cli(*args: str, stdin: str, home: Path | None = None) -> tuple[dict, int]:
    env = dict(os.environ)
    if home is not None:  # no user config from the machine running the tests
        env["HOME"] = env["XDG_CONFIG_HOME"] = str(home)
    proc = subprocess.run(
        [sys.executable, "-m", "toolgate", "calls", "parse", *args],
        input=stdin.encode(),
        capture_output=True,
        timeout=60,
        env=env,
    )
    return json.loads(proc.stdout.decode()), proc.returncode


def test_cli_parses_stdin_with_builtin_tools(tmp_path: Path) -> None:
    # with the default config, as a run reads it: the deprecated short form is accepted
    out, code = run_cli("--workspace", str(tmp_path), stdin=TEXT, home=tmp_path)
    assert code == 0 and out["errors"] == []
    assert out["calls"] == [
        {
            "name": "read_file",
            "arguments": {"path": "a.py"},
            "syntax": "tag",
            "deprecated_syntax": False,
        },
        {"name": "git_status", "arguments": {}, "syntax": "short_tag", "deprecated_syntax": True},
    ]
    assert out["content"] == "Reading."


def test_cli_reads_as_a_run_with_the_workspace_config(tmp_path: Path) -> None:
    (tmp_path / ".toolgate").mkdir()
    (tmp_path / ".toolgate" / "config.toml").write_text(
        "[tool_calling]\nallow_deprecated_syntax = false\n"
    )
    out, code = run_cli("--workspace", str(tmp_path), stdin=TEXT, home=tmp_path)
    assert code == 0
    assert [c["name"] for c in out["calls"]] == ["read_file"]
    assert len(out["errors"]) == 1 and "deprecated" in out["errors"][0]["error"]
    # and a run with that config reads the same
    config = load_config(tmp_path, env={})
    parser = parser_for(default_tool_schemas(), config.tool_calling)
    assert read_whole(parser, TEXT).to_json() == out
    # a flag overrides the config
    out, code = run_cli(
        "--workspace", str(tmp_path), "--allow-deprecated", stdin=TEXT, home=tmp_path
    )
    assert code == 0 and out["errors"] == []


def test_cli_no_allow_deprecated(tmp_path: Path) -> None:
    out, code = run_cli("--no-allow-deprecated", stdin=TEXT, home=tmp_path)
    assert code == 0
    assert len(out["errors"]) == 1 and "deprecated" in out["errors"][0]["error"]


def test_cli_tools_file_openai_list_and_wrapped(tmp_path: Path) -> None:
    tools = [
        {
            "type": "function",
            "function": {
                "name": "deploy",
                "parameters": {
                    "type": "object",
                    "properties": {"env": {"type": "string"}},
                    "required": ["env"],
                },
            },
        }
    ]
    listed = tmp_path / "list.json"
    listed.write_text(json.dumps(tools))
    wrapped = tmp_path / "schemas.json"
    wrapped.write_text(json.dumps({"tools": [t["function"] for t in tools]}))
    text = '<tool name="deploy" args>{"env": "prod"}</tool><tool name="read_file">{}</tool>'
    for path in (listed, wrapped):
        out, code = run_cli("--tools", str(path), stdin=text)
        assert code == 0
        assert out["calls"][0]["arguments"] == {"env": "prod"}
        assert out["errors"][0]["error"] == "unknown tool 'read_file'; available: deploy"


def test_cli_bad_tools_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    payload, code = calls_parse_main("x", str(bad), ToolCalling())
    assert code == 2 and "cannot read tools file" in payload["error"]


def test_cli_utf8_and_crlf_on_stdin() -> None:
    out, code = run_cli(stdin='Ça va\r\n<tool name="read_file" args>{"path": "é.txt"}</tool>\r\n')
    assert code == 0
    assert out["calls"][0]["arguments"] == {"path": "é.txt"} and out["content"] == "Ça va"


def test_default_schemas_cover_the_builtin_tools() -> None:
    names = set(default_tool_schemas())
    assert {
        "run_tests",
        "read_file",
        "write_file",
        "list_directory",
        "git_status",
        "git_add",
        "git_commit",
        "search_code",
        "edit_file",
        "run_command",
    } <= names
