"""Which engine modules the front ends import, beside the session service, records and events.

`.venv/bin/python benchmarks/frontend_imports.py [SERVER_FOLDER] [--list]` counts the
(front-end module, engine module) pairs: every import in a front-end module, at the top, inside
a function or under `TYPE_CHECKING`, of a module that is neither a front end nor
`toolgate.session…`, `toolgate.records` or `toolgate.agent.events`. `from package import name`
counts the submodule `name` when there is one, else the package. `--list` prints the pairs,
grouped by the engine module imported, most imported first.

Of those pairs, the ones whose engine module is a port (`PORTS`: the types a front end draws or
implements — the configuration it loads and passes along, the workspace it writes through, the
Reviewer port with its proposals, approvals and questions, the `Tool` record whose kind it
draws, the `Activity` port a front end's own tool implements) are counted apart: a front end
cannot be thinner than the types it implements. The rest reach past the service;
`tests/structure/test_front_ends.py` keeps their list, which may only shrink.
"""

from __future__ import annotations

import ast
import sys
from collections import Counter
from pathlib import Path

FRONT_ENDS = (
    "toolgate.lsp",
    "toolgate.acp",
    "toolgate.cli",
    "toolgate.chat",
    "toolgate.terminal",
    "toolgate.demo",
    "toolgate.answer_view",
    "toolgate.mcp.server",
    "toolgate.mcp.agent_tools",
    "toolgate.mcp.http_server",
    "toolgate.mcp.event_store",
    "toolgate.mcp.options",
    "toolgate.mcp.logs",
    "toolgate.mcp.fixtures",
    "toolgate.planning.cli",
    "toolgate.calls.cli",
    "toolgate.__main__",
)
THE_WAY_IN = ("toolgate.session", "toolgate.records", "toolgate.agent.events")
PORTS = (
    "toolgate.config",
    "toolgate.workspace",
    "toolgate.review.proposal",
    "toolgate.review.reviewer",
    "toolgate.review.questions",
    "toolgate.review.apply",
    "toolgate.tools.schema",
    "toolgate.tools.activity",
)


def _within(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(
        name == p or name.startswith(p + ".") or (p == "toolgate.cli" and name.startswith(p + "_"))
        for p in prefixes
    )


def _module(path: Path, base: Path) -> str:
    parts = path.relative_to(base).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def pairs(base: Path) -> set[tuple[str, str]]:
    """Every (front-end module, engine module) import pair under `base` (a `server` folder)."""
    modules = {_module(path, base) for path in (base / "toolgate").rglob("*.py")}
    found: set[tuple[str, str]] = set()
    for path in sorted((base / "toolgate").rglob("*.py")):
        importer = _module(path, base)
        if not _within(importer, FRONT_ENDS):
            continue
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            imported: set[str] = set()
            if isinstance(node, ast.Import):
                imported = {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:
                    sub = f"{node.module}.{alias.name}"
                    imported.add(sub if sub in modules else node.module)
            for name in imported:
                if not name.startswith("toolgate.") or _within(name, FRONT_ENDS + THE_WAY_IN):
                    continue
                found.add((importer, name))
    return found


def main(argv: list[str]) -> int:
    """Print the count (and with --list the pairs) for the given server folder."""
    listing = "--list" in argv
    folders = [a for a in argv if not a.startswith("--")]
    base = Path(folders[0]) if folders else Path(__file__).resolve().parents[1] / "server"
    found = pairs(base.resolve())
    if listing:
        by_engine = Counter(engine for _, engine in found)
        for engine, count in by_engine.most_common():
            importers = sorted(front for front, imported in found if imported == engine)
            print(f"{count:3}  {engine}: {', '.join(importers)}")
    print(f"{len(found)} (front-end module, engine module) pairs outside {', '.join(THE_WAY_IN)}")
    ports = sum(1 for _, engine in found if engine in PORTS)
    print(f"  {ports} of them draw or implement a port ({', '.join(PORTS)})")
    print(f"  {len(found) - ports} reach past the service")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
