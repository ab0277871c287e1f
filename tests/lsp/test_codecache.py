"""The start-up cache for attrs-generated code: reused across starts, harmless when broken."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import attrs
import pytest

from toolgate.lsp.codecache import attrs_code_cache

SCRIPT = """
import json, sys
from pathlib import Path
import attrs
from toolgate.lsp.codecache import attrs_code_cache

with attrs_code_cache(Path(sys.argv[1])) as stats:
    @attrs.define
    class Point:
        x: int
        y: int = 0

    @attrs.define(order=True)
    class Label:
        text: str

p = Point(1, 2)
checks = [repr(p) == "Point(x=1, y=2)", p == Point(1, 2), p != Point(2, 2),
          Label("a") < Label("b"), Label("a").text == "a"]
print(json.dumps({**stats, "ok": all(checks)}))
"""


def _start(cache: Path) -> dict[str, int]:
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(cache)], check=True, capture_output=True, text=True
    ).stdout
    return json.loads(out)


def test_second_start_reuses_the_compiled_code(tmp_path: Path) -> None:
    cache = tmp_path / "code" / "attrs.marshal"
    first = _start(cache)
    assert first["ok"] and first["hits"] == 0 and first["misses"] > 0
    assert cache.is_file()
    second = _start(cache)
    assert second["ok"] and second["misses"] == 0 and second["hits"] == first["misses"]


def test_a_damaged_cache_file_is_ignored_and_replaced(tmp_path: Path) -> None:
    cache = tmp_path / "attrs.marshal"
    cache.write_bytes(b"\x00not marshal data at all")
    first = _start(cache)
    assert first["ok"] and first["hits"] == 0 and first["misses"] > 0
    assert _start(cache)["hits"] == first["misses"]


def test_an_unwritable_cache_directory_only_costs_speed(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("a file where the cache directory would be")
    result = _start(blocker / "attrs.marshal")
    assert result["ok"] and result["misses"] > 0


def test_the_language_server_module_loads_lsprotocol_through_the_cache(tmp_path: Path) -> None:
    env_code = (
        "import json, os, sys, time\n"
        "import toolgate.lsp.server\n"
        "from toolgate.lsp.codecache import cache_file\n"
        "print(json.dumps(sorted(p.name for p in cache_file().parent.glob('attrs-*'))))\n"
    )
    env = {"XDG_CACHE_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    out = subprocess.run(
        [sys.executable, "-c", env_code], check=True, capture_output=True, text=True, env=env
    ).stdout
    assert len(json.loads(out)) == 1


def test_no_home_directory_means_no_cache_not_a_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_home(cls: type) -> Path:
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setattr(Path, "home", classmethod(no_home))
    with attrs_code_cache() as stats:

        @attrs.define
        class Spot:
            x: int

    assert Spot(1).x == 1 and stats == {"hits": 0, "misses": 0}
