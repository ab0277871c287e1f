"""Writes through a real run: atomic, newline style and encoding kept, nothing half-written."""

from __future__ import annotations

import codecs
import os
import stat
from pathlib import Path

import pytest
from tests.engine.helpers import answer, calls, drive, results_read
from tests.support.scripted_model import ScriptedModel

from toolgate.workspace import Workspace


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


async def test_conventions_are_kept(repo: Path, scripted: ScriptedModel) -> None:
    (repo / "crlf.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    (repo / "crlf_whole.txt").write_bytes(b"a\r\nb\r\n")
    (repo / "latin.py").write_bytes("name = 'café'\nvalue = 1\n".encode("latin-1"))
    (repo / "bom.txt").write_bytes(codecs.BOM_UTF8 + "héllo\nworld\n".encode())
    (repo / "tool.sh").write_bytes(b"#!/bin/sh\necho hi\n")
    (repo / "tool.sh").chmod(0o755)
    scripted.script = [
        calls(
            ("edit_file", {"path": "crlf.txt", "search": "two", "replace": "2\nand a half"}),
            ("write_file", {"path": "crlf_whole.txt", "content": "x\ny\nz\n"}),
            ("edit_file", {"path": "latin.py", "search": "value = 1", "replace": "value = 2"}),
            ("edit_file", {"path": "bom.txt", "search": "world", "replace": "wörld"}),
            ("edit_file", {"path": "tool.sh", "search": "hi", "replace": "hello"}),
            ("write_file", {"path": "new/deep/file.txt", "content": "fresh\n"}),
        ),
        answer(),
    ]
    driven = await drive(repo, scripted)
    assert driven.outcome.status == "completed"
    assert all(r["success"] for r in results_read(scripted)), results_read(scripted)
    assert (repo / "crlf.txt").read_bytes() == b"one\r\n2\r\nand a half\r\nthree\r\n"
    assert (repo / "crlf_whole.txt").read_bytes() == b"x\r\ny\r\nz\r\n"
    assert (repo / "latin.py").read_bytes() == "name = 'café'\nvalue = 2\n".encode("latin-1")
    assert (repo / "bom.txt").read_bytes() == codecs.BOM_UTF8 + "héllo\nwörld\n".encode()
    assert (repo / "tool.sh").read_bytes() == b"#!/bin/sh\necho hello\n"
    assert stat.S_IMODE((repo / "tool.sh").stat().st_mode) == 0o755
    assert (repo / "new" / "deep" / "file.txt").read_bytes() == b"fresh\n"
    for folder in (repo, repo / "new" / "deep"):
        assert _leftovers(folder) == []


async def test_read_file_shows_normalised_text(repo: Path, scripted: ScriptedModel) -> None:
    (repo / "crlf.txt").write_bytes(b"one\r\ntwo\r\n")
    (repo / "latin.txt").write_bytes("café\n".encode("latin-1"))
    scripted.script = [
        calls(("read_file", {"path": "crlf.txt"}), ("read_file", {"path": "latin.txt"})),
        answer(),
    ]
    await drive(repo, scripted)
    first, second = results_read(scripted)
    assert first["data"]["content"] == "one\ntwo\n"
    assert second["data"]["content"] == "café\n"


async def test_failed_rename_leaves_old_file_and_no_temp(
    repo: Path, scripted: ScriptedModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = repo / "keep.txt"
    target.write_text("old content\n")
    real_replace = os.replace

    def replace(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
        if Path(dst).name == "keep.txt":
            raise OSError(28, "No space left on device")
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    scripted.script = [
        calls(
            ("write_file", {"path": "keep.txt", "content": "new content\n"}),
            ("edit_file", {"path": "keep.txt", "search": "old", "replace": "new"}),
        ),
        answer(),
    ]
    driven = await drive(repo, scripted)
    results = results_read(scripted)
    assert [r["success"] for r in results] == [False, False]
    for result in results:
        assert "No space left on device" in result["error"], result
    assert target.read_text() == "old content\n"
    assert _leftovers(repo) == []
    assert driven.outcome.status == "incomplete"  # nothing it proposed landed


def test_failed_write_of_a_new_file_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = Workspace(tmp_path)

    def fsync(fd: int) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "fsync", fsync)
    with pytest.raises(OSError, match="Input/output error"):
        workspace.write("fresh.txt", "content\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == []
