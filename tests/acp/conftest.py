"""The tiny project the ACP tests fix: `add` subtracts, and its test says so."""

from __future__ import annotations

from pathlib import Path

import pytest

CALC = "def add(a, b):\n    return a - b\n"
FIXED = CALC.replace("a - b", "a + b")
TEST = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"


@pytest.fixture
def project(repo: Path) -> Path:
    """The tiny project with a failing test."""
    (repo / "calc.py").write_text(CALC)
    (repo / "test_calc.py").write_text(TEST)
    return repo
