"""Imports go one way, and every module of `server/toolgate` has a place in the layers.

The layers, top to bottom, as docs/ARCHITECTURE.md draws them. A module may import its own
layer and those below; an import that runs upward fails the test, lazy (inside a function) or
type-only (`TYPE_CHECKING`) alike. A module no layer names fails too: a new package must be
placed before it lands.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.structure.imports import cycles, graph

SERVER = Path(__file__).resolve().parents[2] / "server"

# Top first. A module belongs to the layer of the longest name that is it or a package above it.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "front ends",
        (
            "toolgate.__main__",
            "toolgate.cli",
            "toolgate.lsp",
            "toolgate.acp",
            "toolgate.mcp",  # the server side; the client side is placed below
        ),
    ),
    (
        "jobs over the session service",
        (
            "toolgate.agent_tools",
            "toolgate.setup",
        ),
    ),
    ("session service", ("toolgate.session",)),
    (
        "agent",
        (
            "toolgate.agent",
            "toolgate.planning",
            "toolgate.code_review",
            "toolgate.mcp.client",
            "toolgate.mcp.convert",
        ),
    ),
    (
        "model, review, tools, conversation, configuration",
        (
            "toolgate.model",
            "toolgate.review",
            "toolgate.tools",
            "toolgate.conversation",
            "toolgate.calls",
            "toolgate.config",
            "toolgate.mcp.elicitation",
            "toolgate.mcp.oauth",
            "toolgate.mcp.remote",
            "toolgate.mcp.sdk",
        ),
    ),
    (
        "testing, workspace, runner, customization files",
        (
            "toolgate.testing",
            "toolgate.workspace",
            "toolgate.runner",
            "toolgate.trust",
            "toolgate.customize",
            "toolgate.schemas",
        ),
    ),
    (
        "records and the standard library's own",
        ("toolgate", "toolgate.records", "toolgate.python_source"),
    ),
)


def layer_of(module: str) -> int | None:
    """The index of a module's layer (0 is the top), or None when no layer names it."""
    best: tuple[int, int] | None = None  # (length of the matching name, layer)
    for level, (_, names) in enumerate(LAYERS):
        for name in names:
            # The root package is its `__init__` alone, not everything below it.
            below = name != "toolgate" and module.startswith(name + ".")
            if module == name or below:
                if best is None or len(name) > best[0]:
                    best = (len(name), level)
    return None if best is None else best[1]


def problems(base: Path) -> list[str]:
    """Every module without a layer and every upward import under `base`."""
    found: list[str] = []
    edges = graph(base)
    for module in sorted(edges):
        level = layer_of(module)
        if level is None:
            found.append(f"{module}: in no layer (place it in LAYERS)")
            continue
        for imported in sorted(edges[module]):
            target = layer_of(imported)
            if target is not None and target < level:
                found.append(
                    f"{module} ({LAYERS[level][0]}) imports {imported} ({LAYERS[target][0]})"
                )
    return found


def test_imports_go_one_way_and_every_module_has_a_layer() -> None:
    assert len(graph(SERVER)) > 150
    assert problems(SERVER) == []


def test_no_import_circles() -> None:
    assert cycles(graph(SERVER)) == []


def _plant(base: Path, files: dict[str, str]) -> None:
    for relative, text in files.items():
        path = base / "toolgate" / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "utf-8")


@pytest.mark.parametrize(
    "front",
    [
        "toolgate.lsp.server",
        "toolgate.acp.server",
        "toolgate.mcp.server",
        "toolgate.cli.chat",
        "toolgate.cli.undo",
        "toolgate.cli.command",
    ],
)
def test_an_upward_import_from_the_engine_to_a_front_end_fails(tmp_path: Path, front: str) -> None:
    relative = front.removeprefix("toolgate.").replace(".", "/") + ".py"
    _plant(
        tmp_path,
        {
            "__init__.py": "",
            relative: "",
            "agent/__init__.py": "",
            # Lazy and type-only imports count as much as the plain ones.
            "agent/loop.py": (
                "from typing import TYPE_CHECKING\n"
                "if TYPE_CHECKING:\n"
                f"    import {front}\n"
                "def run() -> None:\n"
                f"    from {front} import x\n"
            ),
        },
    )
    for folder in {p.parent for p in (tmp_path / "toolgate").rglob("*.py")}:
        (folder / "__init__.py").touch()
    found = problems(tmp_path)
    assert [p for p in found if p.startswith("toolgate.agent.loop")] == [
        f"toolgate.agent.loop (agent) imports {front} (front ends)"
    ]


def test_a_module_in_no_layer_fails(tmp_path: Path) -> None:
    _plant(tmp_path, {"__init__.py": "", "gadgets/__init__.py": "", "gadgets/thing.py": ""})
    assert problems(tmp_path) == [
        "toolgate.gadgets: in no layer (place it in LAYERS)",
        "toolgate.gadgets.thing: in no layer (place it in LAYERS)",
    ]


def test_a_circle_is_found(tmp_path: Path) -> None:
    _plant(
        tmp_path,
        {
            "__init__.py": "",
            "tools/__init__.py": "",
            "tools/a.py": "def f() -> None:\n    from toolgate.tools import b\n",
            "tools/b.py": "from toolgate.tools.a import f\n",
        },
    )
    assert cycles(graph(tmp_path)) == [["toolgate.tools.a", "toolgate.tools.b"]]
