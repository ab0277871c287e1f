"""Reading and writing text files without surprises: encodings, newline styles, atomic writes."""

from __future__ import annotations

import codecs
import contextlib
import errno
import os
import secrets
import stat
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


# Named temporary files end in this; a start sweeps the ones whose writer is gone.
TEMP_MARK = ".toolgate.tmp"

# Folders the sweep never walks into: they hold no file Toolgate writes, and can be huge.
_SWEEP_SKIP = frozenset({".git", "node_modules", ".venv", "venv", "__pycache__", ".tox", ".nox"})


def _read_umask() -> int:
    # The umask can only be read by setting it: done once, at import, before any thread writes.
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_UMASK = _read_umask()


def _temp_name(path: Path) -> str:
    # The writer's pid is in the name, so a sweep can leave a live writer's file alone.
    return f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}{TEMP_MARK}"


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
    os.fsync(fd)


def _unnamed_file(folder: Path, mode: int) -> int | None:
    """An unnamed file in `folder` (Linux O_TMPFILE): it vanishes if the process dies."""
    flag = getattr(os, "O_TMPFILE", 0)
    if not flag or not os.path.isdir("/proc/self/fd"):
        return None
    try:
        return os.open(folder, flag | os.O_WRONLY | getattr(os, "O_CLOEXEC", 0), mode)
    except OSError:
        # The filesystem cannot (EOPNOTSUPP, EISDIR on old kernels): use a named file.
        return None


def _link_unnamed(fd: int, path: Path) -> None:
    """Give the unnamed file `fd` the name `path`, replacing what is there atomically."""
    source = f"/proc/self/fd/{fd}"
    folder = os.open(path.parent, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        # Passing a dir fd makes Python call linkat(2) with AT_SYMLINK_FOLLOW (without one it
        # calls link(2), which links the /proc symlink itself and fails with EXDEV).
        try:
            # A new file: linking is the whole write, and nothing else is ever named.
            os.link(source, path.name, dst_dir_fd=folder, follow_symlinks=True)
            return
        except FileExistsError:
            pass
        # link(2) cannot replace, rename(2) can: the named file lives only between the two calls.
        tmp = _temp_name(path)
        os.link(source, tmp, dst_dir_fd=folder, follow_symlinks=True)
        try:
            os.replace(path.parent / tmp, path)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp, dir_fd=folder)
            raise
    finally:
        os.close(folder)


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write `data` to `path` so that a reader (or a crash) sees the old file or the new one.

    On Linux the data goes to an unnamed file (O_TMPFILE) that is linked into place when
    complete, so a process killed while writing leaves nothing behind. Elsewhere, a named
    temporary file in the same folder is renamed over the target; `sweep_temporaries` removes
    such files left by a writer that died.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = 0o666 & ~_UMASK
    with contextlib.suppress(FileNotFoundError):
        mode = stat.S_IMODE(path.stat().st_mode)
    fd = _unnamed_file(path.parent, mode)
    if fd is not None:
        try:
            _write_all(fd, data)
            os.fchmod(fd, mode)
            _link_unnamed(fd, path)
            return
        except OSError as error:
            # Linking through /proc can be refused (no /proc, another mount namespace): the
            # named file below still replaces the target atomically.
            if error.errno in (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES):
                raise
        finally:
            os.close(fd)
    tmp = path.parent / _temp_name(path)
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), mode)
        try:
            _write_all(fd, data)
            os.fchmod(fd, mode)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _writer_alive(name: str) -> bool:
    parts = name[: -len(TEMP_MARK)].rsplit(".", 2)
    try:
        pid = int(parts[-2])
    except (IndexError, ValueError):
        return False
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def sweep_temporaries(root: Path) -> list[Path]:
    """Remove the named temporary files of writers that died under `root`; returns them."""
    removed: list[Path] = []
    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name not in _SWEEP_SKIP:
                        stack.append(Path(entry.path))
                elif entry.name.endswith(TEMP_MARK) and not _writer_alive(entry.name):
                    os.unlink(entry.path)
                    removed.append(Path(entry.path))
            except OSError:
                continue
    return removed


def atomic_write_text(path: Path, text: str, like: TextFile | None = None) -> None:
    """Atomically write text, keeping the newline style and encoding of `like`."""
    atomic_write_bytes(path, encode_text(text, like))


_STATE_IGNORE = (
    "# Toolgate's run logs and learned state stay local; config.toml is meant to be shared.\n"
    "runs/\nstate.json\n.gitignore\n"
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
