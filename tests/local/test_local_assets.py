"""Assembling a model file from parts: streamed, checked, cached, refused when it differs."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from toolgate.model.local_assets import (
    MODEL_FILE_NAME,
    LocalModelError,
    default_cache_dir,
    ensure_assembled,
)


def _make_parts(folder: Path, sizes: list[int]) -> tuple[list[Path], bytes]:
    folder.mkdir(parents=True, exist_ok=True)
    parts: list[Path] = []
    whole = b""
    for index, size in enumerate(sizes, start=1):
        data = os.urandom(size)
        path = folder / f"part{index:02d}.bin"
        path.write_bytes(data)
        parts.append(path)
        whole += data
    return parts, whole


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".part"))


def test_parts_are_concatenated_in_order_and_verified(tmp_path: Path) -> None:
    parts, whole = _make_parts(tmp_path / "parts", [5_000_000, 3, 4_200_001])
    target = tmp_path / "cache" / "m.gguf"
    lines: list[str] = []

    got = ensure_assembled(
        target,
        parts,
        size=len(whole),
        sha256=hashlib.sha256(whole).hexdigest(),
        title="Fake",
        progress=lines.append,
    )

    assert got == target
    assert target.read_bytes() == whole
    assert any("assembling the local model Fake" in line for line in lines)
    assert any("part 3 of 3" in line for line in lines)
    assert _leftovers(target.parent) == []


def test_wrong_hash_is_refused_and_leaves_no_file(tmp_path: Path) -> None:
    parts, whole = _make_parts(tmp_path / "parts", [1000, 2000])
    target = tmp_path / "cache" / "m.gguf"

    with pytest.raises(LocalModelError, match="Refusing the assembled local model.*sha256"):
        ensure_assembled(target, parts, size=len(whole), sha256="0" * 64)

    assert not target.exists()
    assert _leftovers(target.parent) == []


def test_wrong_total_size_is_refused_before_writing(tmp_path: Path) -> None:
    parts, whole = _make_parts(tmp_path / "parts", [1000, 2000])
    target = tmp_path / "cache" / "m.gguf"

    with pytest.raises(LocalModelError, match="add up to 3000 bytes, expected 3001"):
        ensure_assembled(
            target, parts, size=len(whole) + 1, sha256=hashlib.sha256(whole).hexdigest()
        )

    assert not target.exists()


def test_missing_part_is_named(tmp_path: Path) -> None:
    parts, whole = _make_parts(tmp_path / "parts", [10, 20])
    parts[1].unlink()

    with pytest.raises(LocalModelError, match="part02.bin"):
        ensure_assembled(tmp_path / "m.gguf", parts, size=30, sha256="0" * 64)


def test_verified_file_is_reused_without_the_parts(tmp_path: Path) -> None:
    parts, whole = _make_parts(tmp_path / "parts", [100, 200])
    target = tmp_path / "cache" / "m.gguf"
    sha = hashlib.sha256(whole).hexdigest()
    ensure_assembled(target, parts, size=len(whole), sha256=sha)
    mtime = target.stat().st_mtime_ns

    def parts_gone() -> list[Path]:
        raise AssertionError("the parts were looked up although the cached file is verified")

    lines: list[str] = []
    got = ensure_assembled(target, parts_gone, size=len(whole), sha256=sha, progress=lines.append)

    assert got == target
    assert target.stat().st_mtime_ns == mtime
    assert lines == []  # the sidecar spared even the re-hash


def test_cached_file_without_sidecar_is_rehashed_once(tmp_path: Path) -> None:
    parts, whole = _make_parts(tmp_path / "parts", [100, 200])
    target = tmp_path / "m.gguf"
    target.write_bytes(whole)
    sha = hashlib.sha256(whole).hexdigest()

    lines: list[str] = []
    ensure_assembled(target, [], size=len(whole), sha256=sha, progress=lines.append)
    assert any("checking the cached local model" in line for line in lines)

    lines.clear()
    ensure_assembled(target, [], size=len(whole), sha256=sha, progress=lines.append)
    assert lines == []


def test_damaged_cached_file_is_assembled_again(tmp_path: Path) -> None:
    parts, whole = _make_parts(tmp_path / "parts", [100, 200])
    target = tmp_path / "m.gguf"
    sha = hashlib.sha256(whole).hexdigest()
    ensure_assembled(target, parts, size=len(whole), sha256=sha)
    # Same size, one byte flipped, and a new mtime: the sidecar no longer vouches for it.
    damaged = bytearray(whole)
    damaged[150] ^= 0xFF
    target.write_bytes(bytes(damaged))
    os.utime(target, ns=(target.stat().st_atime_ns, target.stat().st_mtime_ns + 1_000_000))

    lines: list[str] = []
    ensure_assembled(target, parts, size=len(whole), sha256=sha, progress=lines.append)

    assert target.read_bytes() == whole
    assert any("damaged" in line for line in lines)


def test_default_cache_dir_follows_xdg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert default_cache_dir() == tmp_path / "toolgate" / "models"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert default_cache_dir() == Path.home() / ".cache" / "toolgate" / "models"


def test_missing_runtime_gives_one_line_with_both_ways_out(tmp_path: Path) -> None:
    # A fresh interpreter in which llama_cpp cannot be imported, as on a machine without the
    # extra, and an empty cache folder.
    code = textwrap.dedent(
        """
        import sys
        sys.modules["llama_cpp"] = None  # what Python does for a module that cannot be imported
        from toolgate.model.local_assets import local_runtime_available
        print(local_runtime_available())
        """
    )
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    ).stdout

    assert out.count("\n") == 1
    assert "toolgate model install" in out
    assert "--base-url" in out and "OPENAI_BASE_URL" in out
    assert "llama_cpp" in out
    assert MODEL_FILE_NAME not in out
