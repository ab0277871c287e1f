"""The import graph of `server/toolgate`, read from the source: every import counts.

Imports inside functions and under `TYPE_CHECKING` are edges too: a lazy import is still a
dependency, and a type-only one still ties the two modules' meanings together.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

from toolgate.python_source import parse_python


def module_name(path: Path, base: Path) -> str:
    """`toolgate.agent.loop` for `base/toolgate/agent/loop.py` (a package is its __init__)."""
    parts = path.relative_to(base).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules(base: Path) -> dict[str, Path]:
    """Every module under `base/toolgate`, by name."""
    return {module_name(p, base): p for p in sorted((base / "toolgate").rglob("*.py"))}


def _resolve(known: set[str], name: str) -> str | None:
    """The known module an imported name lands in (`a.b.c` → `a.b` when c is a symbol)."""
    while name:
        if name in known:
            return name
        name = name.rpartition(".")[0]
    return None


def imports_of(path: Path, module: str, known: set[str]) -> set[str]:
    """The toolgate modules one file imports, wherever the import statement stands."""
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(parse_python(path.read_text("utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = module.split(".")
                anchor = parts if is_package else parts[:-1]
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join(anchor + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            # `from pkg import mod` depends on the module; `from mod import name` on the module.
            names = [
                f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base
                for alias in node.names
            ]
        for name in names:
            if name.split(".")[0] != "toolgate":
                continue
            target = _resolve(known, name)
            if target is not None and target != module:
                found.add(target)
    return found


def graph(base: Path) -> dict[str, set[str]]:
    """Module → the toolgate modules it imports."""
    found = modules(base)
    known = set(found)
    return {name: imports_of(path, name, known) for name, path in found.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0

    def visit(start: str) -> None:
        nonlocal counter
        work: list[tuple[str, Iterable[str]]] = [(start, iter(sorted(edges.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return sorted(found)
