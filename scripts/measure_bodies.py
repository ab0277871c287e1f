"""The longest functions and the largest modules of a package, so their size can be re-read.

    python scripts/measure_bodies.py [PATH] [--top N]

A function's length is its lines from `def` (decorators left out) to its last line, nested
functions included where they stand (a closure counts on its own too); a module's size is its
line count. PATH defaults to server/toolgate.
"""

from __future__ import annotations

import argparse
import ast
from pathlib import Path


def functions(path: Path, root: Path) -> list[tuple[int, str]]:
    """Every function of one module as (lines, "module:line qualified.name")."""
    tree = ast.parse(path.read_text("utf-8"), filename=str(path))
    found: list[tuple[int, str]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = f"{prefix}{child.name}"
                lines = (child.end_lineno or child.lineno) - child.lineno + 1
                where = f"{path.relative_to(root).as_posix()}:{child.lineno}"
                found.append((lines, f"{where} {name}"))
                visit(child, f"{name}.")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            else:
                visit(child, prefix)

    visit(tree, "")
    return found


def main() -> None:
    """Print the longest functions and the largest modules."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", default="server/toolgate")
    parser.add_argument("--top", type=int, default=5)
    args = parser.parse_args()
    base = Path(args.path)
    root = base.parent
    sources = [base] if base.is_file() else sorted(base.rglob("*.py"))
    funcs = sorted((f for p in sources for f in functions(p, root)), reverse=True)
    modules = sorted(
        ((len(p.read_text("utf-8").splitlines()), p.relative_to(root).as_posix()) for p in sources),
        reverse=True,
    )
    print(f"longest functions in {base}:")
    for lines, what in funcs[: args.top]:
        print(f"  {lines:5d}  {what}")
    print(f"largest modules in {base}:")
    for lines, what in modules[: args.top]:
        print(f"  {lines:5d}  {what}")


if __name__ == "__main__":
    main()
