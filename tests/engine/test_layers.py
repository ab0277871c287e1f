"""The engine never imports an editor library: front ends are adapters over it."""

from __future__ import annotations

import subprocess
import sys

PROBE = """
import importlib, pkgutil, sys
import toolgate
for info in pkgutil.walk_packages(toolgate.__path__, "toolgate."):
    if info.name.startswith(("toolgate.lsp", "toolgate.cli", "toolgate.__main__")):
        continue
    if info.name.startswith("toolgate.model.local"):
        continue  # optional runtime; imports nothing of the editor either way
    importlib.import_module(info.name)
leaked = sorted(m for m in sys.modules if m.split(".")[0] in ("pygls", "lsprotocol"))
print(",".join(leaked))
"""


def test_engine_does_not_import_pygls_or_lsprotocol() -> None:
    out = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert out == "", f"engine modules imported: {out}"


def test_probe_can_fail() -> None:
    # The same probe notices a leak when one is there.
    leak = PROBE.replace("leaked =", "import lsprotocol.types\nleaked =")
    out = subprocess.run(
        [sys.executable, "-c", leak], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert "lsprotocol" in out
