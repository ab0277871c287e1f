"""`toolgate tools export|list` and `toolgate calls parse` in a subprocess."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.cli.helpers import toolgate

BUILTINS = {
    "read_file",
    "write_file",
    "edit_file",
    "list_directory",
    "search_code",
    "git_status",
    "git_add",
    "git_commit",
    "run_tests",
}


def test_tools_export_writes_composed_schemas(repo: Path) -> None:
    done = toolgate("tools", "export", "--workspace", str(repo))
    assert done.returncode == 0, done.stderr
    doc = json.loads((repo / ".agent" / "tools" / "schemas.json").read_text())
    tools = {t["_tool"]: t for t in doc["tools"]}
    assert BUILTINS <= set(tools)
    for name, tool in tools.items():
        assert tool["_activity"] == name  # every built-in has its code
        assert "_output" in tool
        assert tool["parameters"]["properties"]["_reasoningForCall"]["type"] == "string"
    assert tools["read_file"]["_output"]["properties"]["content"] == {"type": "string"}
    assert tools["run_tests"]["parameters"]["properties"]["command"]["default"] == (
        "pytest -q --tb=short"
    )
    assert tools["git_add"]["parameters"]["required"] == ["files"]


def test_tools_list_shows_gate_defaults() -> None:
    done = toolgate("tools", "list")
    assert done.returncode == 0, done.stderr
    rows = {line.split()[0]: line.split()[1] for line in done.stdout.splitlines() if line.strip()}
    assert BUILTINS <= set(rows)
    for name in ("read_file", "list_directory", "search_code", "git_status", "run_tests"):
        assert rows[name] == "auto", name
    for name in ("write_file", "edit_file", "git_add", "git_commit"):
        assert rows[name] == "ask", name


TEXT = (
    "First I read it.\n"
    '<tool name="read_file" args>{"path": "a.py"}</tool>\n'
    "Then the short form: <tool:git_status>{}</tool>\n"
    '<tool name="write_file" args>{"path": "b.py", </tool>\n'
    "Done.\n"
)


@pytest.mark.parametrize("allow", [False, True])
def test_calls_parse_prints_the_documented_shape(allow: bool) -> None:
    flag = "--allow-deprecated" if allow else "--no-allow-deprecated"
    done = toolgate("calls", "parse", flag, stdin=TEXT)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert set(out) == {"calls", "content", "errors"}
    first = out["calls"][0]
    assert {"name", "arguments", "syntax", "deprecated_syntax"} <= set(first)
    assert (first["name"], first["arguments"]) == ("read_file", {"path": "a.py"})
    assert first["syntax"] == "tag" and first["deprecated_syntax"] is False
    short = [c for c in out["calls"] if c["name"] == "git_status"]
    if allow:
        assert short and short[0]["deprecated_syntax"] is True
    else:
        assert short == []
        assert any("deprecated" in e["error"] or "tool:" in e["raw_excerpt"] for e in out["errors"])
    broken = [e for e in out["errors"] if "write_file" in e["raw_excerpt"]]
    assert broken and all({"error", "raw_excerpt"} <= set(e) for e in out["errors"])
    assert "First I read it." in out["content"] and "Done." in out["content"]
    assert "<tool" not in out["content"]


def test_calls_parse_with_a_tools_file(tmp_path: Path, repo: Path) -> None:
    assert toolgate("tools", "export", "--workspace", str(repo)).returncode == 0
    schemas = repo / ".agent" / "tools" / "schemas.json"
    doc = json.loads(schemas.read_text())
    doc["tools"].append(
        {
            "_tool": "deploy",
            "_activity": "",
            "_output": None,
            "name": "deploy",
            "description": "Deploy.",
            "parameters": {
                "type": "object",
                "properties": {"env": {"type": "string"}},
                "required": ["env"],
            },
        }
    )
    custom = tmp_path / "tools.json"
    custom.write_text(json.dumps(doc))
    text = '<tool name="deploy" args>{"env": "staging"}</tool>'
    out = json.loads(toolgate("calls", "parse", "--tools", str(custom), stdin=text).stdout)
    assert [(c["name"], c["arguments"]) for c in out["calls"]] == [("deploy", {"env": "staging"})]
    # with the built-in tools only, the same text is an unknown tool
    out = json.loads(toolgate("calls", "parse", stdin=text).stdout)
    assert out["calls"] == [] and out["errors"]
    bad = toolgate("calls", "parse", "--tools", str(tmp_path / "missing.json"), stdin=text)
    assert bad.returncode == 2


def test_tools_list_and_export_read_the_workspace(repo: Path) -> None:
    from tests.engine.test_manifest import _workspace

    _workspace(repo)
    (repo / ".toolgate").mkdir()
    (repo / ".toolgate" / "config.toml").write_text(
        '[policy]\napprovals = { git_commit = "deny" }\n'
    )
    done = toolgate("tools", "list", "--workspace", str(repo))
    assert done.returncode == 0, done.stderr
    rows = {line.split()[0]: line.split()[1] for line in done.stdout.splitlines() if line.strip()}
    assert rows["git_commit"] == "deny" and "shout" in rows
    done = toolgate("tools", "export", "--workspace", str(repo))
    assert done.returncode == 0, done.stderr
    doc = json.loads((repo / ".agent" / "tools" / "schemas.json").read_text())
    assert "shout" in {t["_tool"] for t in doc["tools"]}


@pytest.mark.parametrize(
    "command",
    [
        ["run", "Fix the test"],
        ["chat"],
        ["review"],
        ["undo"],
        ["trust", "--yes"],
        ["mcp"],
        ["sessions"],
        ["sessions", "list"],
        ["runs"],
        ["calls", "parse"],
        ["plan", "publish the README"],
        ["workflow", "list"],
        ["workflow", "run", "docs"],
        ["tools", "export"],
        ["tools", "list"],
        ["tools", "validate"],
        ["tools", "resolve", "fs.read"],
        ["tools", "new", "docs_render", "--capability", "docs.render"],
        ["tools", "trust", "--yes"],
    ],
    ids=" ".join,
)
def test_a_workspace_that_is_not_a_folder_is_a_usage_error_and_is_not_made(
    tmp_path: Path, command: list[str]
) -> None:
    missing = tmp_path / "no-such-project"
    done = toolgate(*command, "--workspace", str(missing), timeout=60)
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"workspace '{missing}' is not a folder" in done.stderr
    assert not missing.exists()
