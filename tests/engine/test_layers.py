"""The engine never imports an editor library: front ends are adapters over it."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from toolgate.python_source import parse_python

# Import every engine module, then say which editor libraries came with them.
WALK = """
import importlib, pkgutil
import toolgate
for info in pkgutil.walk_packages(toolgate.__path__, "toolgate."):
    if info.name.startswith(("toolgate.lsp", "toolgate.cli", "toolgate.__main__")):
        continue
    if info.name.startswith("toolgate.model.local"):
        continue  # optional runtime; imports nothing of the editor either way
    importlib.import_module(info.name)
"""
CHECK = """
import sys
leaked = sorted(m for m in sys.modules if m.split(".")[0] in ("pygls", "lsprotocol"))
print(",".join(leaked))
"""
PROBE = WALK + CHECK


def test_engine_does_not_import_pygls_or_lsprotocol() -> None:
    out = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert out == "", f"engine modules imported: {out}"


def test_probe_can_fail() -> None:
    # The probe's check notices a leak when one is there. The walk is left out: importing
    # more modules can only add to what the check sees, and the walk takes seconds.
    leak = "import lsprotocol.types\n" + CHECK
    out = subprocess.run(
        [sys.executable, "-c", leak], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert "lsprotocol" in out


# Imports go one way: front ends → session service → engine. Each layer below may import
# nothing above it, lazily inside a function either.
SERVER = Path(__file__).resolve().parents[2] / "server"
FRONT_ENDS = (
    "toolgate.lsp",
    "toolgate.cli",
    "toolgate.mcp.server",
    "toolgate.mcp.agent_tools",
    "toolgate.__main__",
)
ABOVE = {
    # the engine: agent, conversations, model, review, tools, calls, testing, runner, workspace
    "engine": (*FRONT_ENDS, "toolgate.session"),
    # the session service serves every front end and knows none of them
    "toolgate.session": FRONT_ENDS,
    # the agent tools are jobs over the session service, for any front end to offer
    "toolgate.agent_tools": FRONT_ENDS,
    # setting up (doctor, model install, finding model servers) serves every front end
    "toolgate.setup": FRONT_ENDS,
    # configuration is read by the agent, never the other way round
    "toolgate.config": (*FRONT_ENDS, "toolgate.session", "toolgate.agent"),
    # the server uses the reviewer; the reviewer knows only the editor-client protocol
    "toolgate.lsp.reviewer": ("toolgate.lsp.server",),
    "toolgate.lsp.client": ("toolgate.lsp.server", "toolgate.lsp.reviewer"),
    "toolgate.lsp.convert": ("toolgate.lsp.server", "toolgate.lsp.reviewer"),
}
ENGINE = (
    "toolgate.agent",
    "toolgate.conversation",
    "toolgate.model",
    "toolgate.review",
    "toolgate.tools",
    "toolgate.calls",
    "toolgate.testing",
    "toolgate.runner",
    "toolgate.workspace",
    "toolgate.records",
    "toolgate.python_source",
    "toolgate.trust",
    "toolgate.mcp.client",
)


def _module(path: Path, base: Path) -> str:
    parts = path.relative_to(base).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(parse_python(path.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def _within(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def upward_imports(base: Path) -> list[str]:
    """Every import of a layer above in the tree under `base`, as `module -> imported`."""
    wrong = []
    for path in sorted((base / "toolgate").rglob("*.py")):
        module = _module(path, base)
        if _within(module, ENGINE):
            banned = ABOVE["engine"]
        elif _within(module, ("toolgate.session",)):
            banned = ABOVE["toolgate.session"]
        elif _within(module, ("toolgate.agent_tools",)):
            banned = ABOVE["toolgate.agent_tools"]
        elif _within(module, ("toolgate.setup",)):
            banned = ABOVE["toolgate.setup"]
        elif module in ABOVE:
            banned = ABOVE[module]
        else:
            continue
        wrong += [f"{module} -> {name}" for name in _imports(path) if _within(name, banned)]
    return sorted(wrong)


def test_imports_go_one_way() -> None:
    assert len(list((SERVER / "toolgate").rglob("*.py"))) > 40
    assert upward_imports(SERVER) == []


def test_the_direction_rule_can_fail(tmp_path: Path) -> None:
    (tmp_path / "toolgate" / "agent").mkdir(parents=True)
    (tmp_path / "toolgate" / "agent" / "loop.py").write_text(
        "def run() -> None:\n    from toolgate.session.service import SessionService\n"
    )
    (tmp_path / "toolgate" / "config.py").write_text("from toolgate.agent.policy import Policy\n")
    (tmp_path / "toolgate" / "session.py").write_text("import toolgate.lsp.server\n")
    (tmp_path / "toolgate" / "lsp").mkdir()
    (tmp_path / "toolgate" / "lsp" / "server.py").write_text("from toolgate.session import x\n")
    (tmp_path / "toolgate" / "lsp" / "reviewer.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
        "    from toolgate.lsp.server import ToolgateServer\n"
    )
    assert upward_imports(tmp_path) == [
        "toolgate.agent.loop -> toolgate.session.service",
        "toolgate.config -> toolgate.agent.policy",
        "toolgate.lsp.reviewer -> toolgate.lsp.server",
        "toolgate.session -> toolgate.lsp.server",
    ]
