"""A tool's facts live on the tool: no table keyed by tool names may drift from the registry.

Adding a built-in tool is its `Tool` record and activity in `tools/builtins.py`; everything that
once kept a name table (the gate's defaults, the repeat guard, the capability registry, ACP's
kinds, the approval modes, the account) reads the record instead. These tests scan the server's
and the VS Code extension's sources for any table of tool names left, and fail when one names a
tool nobody has — as the chat view's list did with `apply_patch` and `delete_file`.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, get_args

import pytest
from acp.schema import ToolKind

from toolgate.agent.done_words import done_words
from toolgate.agent.loop import FINAL_ANSWER
from toolgate.agent.policy import AUTO_EDITS, READ_ONLY, Decision, policy_for
from toolgate.agent.prompt import builtin_profiles
from toolgate.agent_tools.specs import SPECS
from toolgate.code_review.tool import REVIEW_CODE
from toolgate.config import Config
from toolgate.python_source import parse_python
from toolgate.tools import builtins
from toolgate.tools.capabilities import builtin_providers
from toolgate.tools.registry import ToolRegistry
from toolgate.tools.schema import CHANGE, KINDS, REPEATS, Tool

ROOT = Path(__file__).resolve().parents[2]
SERVER = ROOT / "server" / "toolgate"
EXTENSION = ROOT / "client-vscode"
# A name as tools are named: lower-case words joined by underscores (read_file, git_commit).
TOOL_LIKE = re.compile(r"^[a-z][a-z0-9]*(?:_[a-z0-9]+)+$")


def known_tools() -> set[str]:
    """Every tool Toolgate has: the built-ins, its own latent and ACP tools, the agent tools."""
    from toolgate.acp.plan import UPDATE_PLAN

    names = set(builtins.builtin_registry().names())
    names |= {UPDATE_PLAN.name, REVIEW_CODE.name, FINAL_ANSWER.name}
    return names | {spec.name for spec in SPECS}


def _strings(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Dict):
        items = [k for k in node.keys if k is not None]
    elif isinstance(node, (ast.Set, ast.List, ast.Tuple)):
        items = list(node.elts)
    else:
        return []
    return [i.value for i in items if isinstance(i, ast.Constant) and isinstance(i.value, str)]


def python_tables(source: str) -> Iterator[list[str]]:
    """The string elements (a dict's keys) of every collection literal in Python source."""
    for node in ast.walk(parse_python(source)):
        found = _strings(node)
        if found:
            yield found


def typescript_tables(source: str) -> Iterator[list[str]]:
    """The quoted strings of every array literal, and the keys of every object, in TypeScript."""
    for body in re.findall(r"\[([^\[\]]*)\]", source):
        yield re.findall(r"'([^'\\]*)'", body)
    for body in re.findall(r"\{([^{}]*)\}", source):
        yield re.findall(r"(?:^|[,{\s])'?([a-z][a-z0-9_]*)'?\s*:", body)


def json_tables(doc: Any) -> Iterator[list[str]]:
    """The keys of every object in a JSON document (VS Code's settings defaults among them)."""
    if isinstance(doc, dict):
        yield list(doc)
        for value in doc.values():
            yield from json_tables(value)
    elif isinstance(doc, list):
        for value in doc:
            yield from json_tables(value)


def unknown_in_tables(tables: Iterator[list[str]], known: set[str]) -> set[str]:
    """The tool-like names in each table of tools (one that names a known tool) nobody has."""
    unknown: set[str] = set()
    for table in tables:
        names = [s for s in table if TOOL_LIKE.match(s)]
        if any(name in known for name in names):
            unknown |= {name for name in names if name not in known}
    return unknown


def _sources() -> Iterator[tuple[Path, Iterator[list[str]]]]:
    for path in sorted(SERVER.rglob("*.py")):
        yield path, python_tables(path.read_text("utf-8"))
    for path in sorted((EXTENSION / "src").rglob("*.ts")):
        yield path, typescript_tables(path.read_text("utf-8"))
    package = EXTENSION / "package.json"
    yield package, json_tables(json.loads(package.read_text("utf-8")))


def test_no_table_names_a_tool_the_registry_does_not_have() -> None:
    known = known_tools()
    drifted = {
        str(path.relative_to(ROOT)): sorted(found)
        for path, tables in _sources()
        if (found := unknown_in_tables(tables, known))
    }
    assert drifted == {}, f"tables naming tools that do not exist: {drifted}"


def test_the_scan_finds_a_planted_table() -> None:
    known = known_tools()
    planted_py = 'GATED = {"write_file", "edit_file", "apply_patch"}\nOK = ("run_tests",)\n'
    assert unknown_in_tables(python_tables(planted_py), known) == {"apply_patch"}
    planted_ts = "const PROPOSAL_TOOLS = new Set(['write_file', 'edit_file', 'delete_file']);"
    assert unknown_in_tables(typescript_tables(planted_ts), known) == {"delete_file"}
    planted_json = {"default": {"write_file": "ask", "run_test": "auto"}}
    assert unknown_in_tables(json_tables(planted_json), known) == {"run_test"}
    # A table of other things that happen to be snake_case is no table of tools.
    assert unknown_in_tables(python_tables('X = ("tool_calls", "call_id")'), known) == set()


@pytest.mark.parametrize("tool", builtins.builtin_tools(), ids=lambda t: t.name)
def test_every_builtin_says_its_facts(tool: Tool) -> None:
    assert tool.kind in KINDS and tool.repeats_as in REPEATS
    assert tool.capabilities and tool.outputs and tool.label
    assert tool.acp in get_args(ToolKind)
    assert not tool.did({}).startswith("used ")  # its own words, not the fallback


def test_adding_a_builtin_is_one_record(monkeypatch: pytest.MonkeyPatch) -> None:
    """A new tool's record alone puts it into every derived table."""
    from toolgate import config as config_module
    from toolgate.acp.convert import tool_kind

    delete = Tool(
        name="delete_file",
        description="Delete a file.",
        kind=CHANGE,
        asks=True,
        capabilities=("fs.delete",),
        outputs=("path",),
        label="deleted {path}",
    )
    real = builtins.builtin_registry

    def with_delete() -> ToolRegistry:
        registry = real()
        registry.add(delete)
        return registry

    monkeypatch.setattr(builtins, "builtin_registry", with_delete)
    config_module._asked_by_default.cache_clear()
    try:
        assert "delete_file" in config_module._asked_by_default()
    finally:
        config_module._asked_by_default.cache_clear()
    assert any(
        p.name == "delete_file" and "fs.delete" in p.capabilities for p in builtin_providers()
    )
    assert "delete_file" not in (builtin_profiles()["reviewer"].tools or [])
    assert tool_kind(delete) == "edit"
    assert policy_for(Config(), READ_ONLY).decide(delete) == Decision.DENY
    assert policy_for(Config(), AUTO_EDITS).decide(delete) == Decision.AUTO
    steps = [
        {
            "calls": [
                {"name": "delete_file", "arguments": {"path": "a.py"}, "result": {"success": True}}
            ]
        }
    ]
    assert done_words([], steps, with_delete()) == ["deleted a.py"]
