"""The workspace sandbox: every path the agent names is checked here before disk is touched."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath, PureWindowsPath

from toolgate.workspace.files import (
    BinaryFileError,
    TextFile,
    atomic_write_text,
    conventions_of,
    decode_text,
    normalise_newlines,
)

DEFAULT_MAX_FILE_BYTES = 2 * 1024 * 1024

# Folders the agent may never write into: version-control internals and Toolgate's own records.
_PROTECTED_WRITE = (".toolgate",)


class PathRefused(ValueError):
    """A path the sandbox will not let the agent use; the message is meant for the model."""


Buffers = Callable[[], Mapping[Path, str]]
"""Returns the open editor buffers: real absolute path → the text the person sees."""


def _no_buffers() -> Mapping[Path, str]:
    return {}


@dataclass
class Workspace:
    """A root folder and the rules for touching anything below it."""

    root: Path
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    buffers: Buffers = field(default=_no_buffers)

    def __post_init__(self) -> None:
        self.root = Path(os.path.realpath(self.root))

    def resolve(self, path: str, *, for_write: bool = False) -> Path:
        """Turn a workspace-relative path into a real absolute path inside the root, or refuse."""
        if not isinstance(path, str) or not path.strip():
            raise PathRefused("empty path; give a path relative to the workspace root")
        if "\x00" in path:
            raise PathRefused("path contains a NUL byte")
        if (
            path.startswith(("/", "\\", "~"))
            or PureWindowsPath(path).drive
            or PurePosixPath(path).is_absolute()
        ):
            raise PathRefused(
                f"absolute paths are not allowed: {path!r}; use a path relative to the workspace"
            )
        parts = PurePosixPath(path.replace("\\", "/")).parts
        if ".." in parts:
            raise PathRefused(f"'..' is not allowed in paths: {path!r}")
        if any(part.lower() == ".git" for part in parts):
            raise PathRefused(f"paths inside .git/ are not allowed: {path!r}")
        if for_write and parts and parts[0] in _PROTECTED_WRITE:
            raise PathRefused(f"{parts[0]}/ holds Toolgate's own records and is not writable")
        candidate = self.root.joinpath(*parts) if parts else self.root
        real = Path(os.path.realpath(candidate))
        if not self.contains(real):
            raise PathRefused(f"{path!r} resolves outside the workspace (through a symlink)")
        rel_parts = real.relative_to(self.root).parts
        if any(part.lower() == ".git" for part in rel_parts):
            raise PathRefused(f"{path!r} resolves inside .git/, which is not allowed")
        return real

    def contains(self, real: Path) -> bool:
        """Whether a real path lies inside the root (resolved paths, never string prefixes)."""
        try:
            return os.path.commonpath([str(self.root), str(real)]) == str(self.root)
        except ValueError:
            return False

    def relative(self, real: Path) -> str:
        """The workspace-relative POSIX form of a real path inside the root."""
        return Path(os.path.realpath(real)).relative_to(self.root).as_posix()

    def read(self, path: str) -> tuple[Path, TextFile]:
        """Read a text file as the person sees it: the open buffer when there is one, else disk."""
        real = self.resolve(path)
        buffered = self.buffers().get(real)
        if buffered is not None:
            if len(buffered.encode("utf-8")) > self.max_file_bytes:
                raise PathRefused(f"{path!r} is over the limit of {self.max_file_bytes} bytes")
            on_disk = self._disk_conventions(real)
            return real, TextFile(
                text=normalise_newlines(buffered),
                encoding=on_disk.encoding if on_disk else "utf-8",
                newline=on_disk.newline if on_disk else "\n",
                final_newline=buffered.endswith("\n"),
            )
        if not real.exists():
            raise FileNotFoundError(f"no such file: {path!r}")
        if real.is_dir():
            raise IsADirectoryError(f"{path!r} is a directory; use list_directory")
        size = real.stat().st_size
        if size > self.max_file_bytes:
            raise PathRefused(f"{path!r} is {size} bytes, over the limit of {self.max_file_bytes}")
        try:
            return real, decode_text(real.read_bytes())
        except BinaryFileError as exc:
            raise PathRefused(f"{path!r} is a {exc}") from exc

    def read_or_none(self, path: str) -> tuple[Path, TextFile | None]:
        """Like read(), but a missing file is (path, None) rather than an error."""
        real = self.resolve(path, for_write=True)
        if real not in self.buffers() and not real.exists():
            return real, None
        return self.read(path)

    def check_size(self, path: str, text: str) -> None:
        """Refuse content over the file size limit before anything is written."""
        size = len(text.encode("utf-8"))
        if size > self.max_file_bytes:
            raise PathRefused(
                f"content for {path!r} is {size} bytes, over the limit of {self.max_file_bytes}"
            )

    def write(self, path: str, text: str, like: TextFile | None = None) -> Path:
        """Atomically write a file inside the workspace after every check has passed."""
        real = self.resolve(path, for_write=True)
        self.check_size(path, text)
        if real.is_dir():
            raise PathRefused(f"{path!r} is a directory")
        if like is None and real.exists():
            like = self._disk_conventions(real)
        atomic_write_text(real, text, like)
        return real

    def _disk_conventions(self, real: Path) -> TextFile | None:
        try:
            raw = real.read_bytes()
        except OSError:
            return None
        try:
            return conventions_of(raw)
        except BinaryFileError:
            return None
