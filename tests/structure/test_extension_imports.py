"""No import circles in the VS Code extension's sources either (type-only imports count)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.structure.imports import cycles

SRC = Path(__file__).resolve().parents[2] / "client-vscode" / "src"
# `import … from './x'`, `import type … from '../y'`, `export … from './z'`
RELATIVE = re.compile(r"""^\s*(?:import|export)\b[^;]*?\bfrom\s+['"](\.[^'"]+)['"]""", re.M | re.S)


def extension_graph(src: Path) -> dict[str, set[str]]:
    """Each source file (relative to `src`) and the source files it imports."""
    edges: dict[str, set[str]] = {}
    for path in sorted(src.rglob("*.ts")):
        found = set()
        for target in RELATIVE.findall(path.read_text("utf-8")):
            base = (path.parent / target).resolve()
            for candidate in (base.with_suffix(".ts"), base / "index.ts"):
                if candidate.exists():
                    found.add(candidate.relative_to(src).as_posix())
                    break
        edges[path.relative_to(src).as_posix()] = found
    return edges


def test_the_extension_has_no_import_circles() -> None:
    edges = extension_graph(SRC)
    assert len(edges) > 20 and sum(map(len, edges.values())) > 40  # it reads the imports
    assert cycles(edges) == []


def test_a_planted_circle_is_found(tmp_path: Path) -> None:
    (tmp_path / "a.ts").write_text("import type { B } from './b';\nexport const A = 1;\n")
    (tmp_path / "b.ts").write_text("import { A } from './a';\nexport type B = typeof A;\n")
    (tmp_path / "c.ts").write_text("import { A } from './a';\n")
    assert [sorted(c) for c in cycles(extension_graph(tmp_path))] == [["a.ts", "b.ts"]]
