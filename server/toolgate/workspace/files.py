"""Reading and writing text files without surprises: encodings, newline styles, atomic writes."""

from __future__ import annotations

import codecs
import contextlib
import os
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path


class BinaryFileError(ValueError):
    """The file is not text."""


@dataclass(frozen=True)
class TextFile:
    """A text file's content with the conventions it was written in."""

    text: str  # newlines normalised to "\n"
    encoding: str = "utf-8"
    newline: str = "\n"
    final_newline: bool = True


_BOMS = (
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


def normalise_newlines(text: str) -> str:
    """CRLF as LF: the one form texts are compared, diffed and matched in."""
    return text.replace("\r\n", "\n")


def detect_newline(text: str) -> str:
    """The newline style a text mostly uses (CRLF or LF)."""
    crlf = text.count("\r\n")
    lf = text.count("\n") - crlf
    return "\r\n" if crlf > lf else "\n"


def _encoding_of(raw: bytes) -> str:
    """The encoding a byte-order mark names, else UTF-8; NUL bytes without one mean binary."""
    for bom, name in _BOMS:
        if raw.startswith(bom):
            return name
    if b"\x00" in raw[:8192]:
        raise BinaryFileError("binary file (contains NUL bytes)")
    return "utf-8"


def decode_text(raw: bytes) -> TextFile:
    """Decode bytes read from disk, remembering encoding and newline style."""
    encoding = _encoding_of(raw)
    try:
        text = raw.decode(encoding)
    except UnicodeDecodeError:
        # Legacy single-byte files still deserve to be read and edited losslessly.
        encoding = "latin-1"
        text = raw.decode(encoding)
    newline = detect_newline(text)
    return TextFile(
        text=normalise_newlines(text),
        encoding=encoding,
        newline=newline,
        final_newline=text.endswith("\n"),
    )


def conventions_of(raw: bytes) -> TextFile:
    """Encoding and newline style of bytes read from disk, without keeping their text.

    The same answer as `decode_text`, cheaper: for UTF-8 (and its latin-1 fallback) the
    newlines are counted in the bytes themselves.
    """
    encoding = _encoding_of(raw)
    if encoding not in ("utf-8", "utf-8-sig"):
        decoded = decode_text(raw)
        encoding, newline, final = decoded.encoding, decoded.newline, decoded.final_newline
        return TextFile(text="", encoding=encoding, newline=newline, final_newline=final)
    try:
        raw.decode(encoding)
    except UnicodeDecodeError:
        encoding = "latin-1"
    crlf = raw.count(b"\r\n")
    newline = "\r\n" if crlf > raw.count(b"\n") - crlf else "\n"
    return TextFile(text="", encoding=encoding, newline=newline, final_newline=raw.endswith(b"\n"))


def encode_text(text: str, like: TextFile | None) -> bytes:
    """Encode new content in the conventions of the file it replaces."""
    normalised = normalise_newlines(text)
    newline = like.newline if like else "\n"
    encoding = like.encoding if like else "utf-8"
    if newline != "\n":
        normalised = normalised.replace("\n", newline)
    try:
        return normalised.encode(encoding)
    except UnicodeEncodeError:
        # Content the old encoding cannot hold: UTF-8 loses nothing.
        return normalised.encode("utf-8")


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write a temporary file in the same folder, then rename: no reader sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    mode: int | None = None
    with contextlib.suppress(FileNotFoundError):
        mode = stat.S_IMODE(path.stat().st_mode)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def atomic_write_text(path: Path, text: str, like: TextFile | None = None) -> None:
    """Atomically write text, keeping the newline style and encoding of `like`."""
    atomic_write_bytes(path, encode_text(text, like))


_STATE_IGNORE = (
    "# Toolgate's run logs and learned state stay local; config.toml is meant to be shared.\n"
    "runs/\nsessions/\nstate.json\n.gitignore\n"
)


def toolgate_dir(root: Path) -> Path:
    """The workspace's .toolgate folder, created with a .gitignore for its local records."""
    folder = root / ".toolgate"
    ignore = folder / ".gitignore"
    if not ignore.exists():
        folder.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(OSError):
            atomic_write_bytes(ignore, _STATE_IGNORE.encode())
    return folder
