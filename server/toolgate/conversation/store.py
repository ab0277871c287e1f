"""Session files: `.toolgate/sessions/<id>.jsonl`, one complete JSON record per line.

The first line is a header (format version, id, workspace, creation time, title); every later
line is one record, appended and flushed to disk before the next is written, so a crash loses
at most the line being written. A torn last line is ignored on load (with a notice) and cut off
before the next append; anything else that cannot be read refuses the whole file, which is then
left exactly as it was.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from toolgate.records import new_id
from toolgate.workspace.files import toolgate_dir

FORMAT = "toolgate-session"
VERSION = 1
_ID = re.compile(r"^s-[0-9A-Za-z-]{1,64}$")


class SessionError(Exception):
    """A session that cannot be used; the message names the session or its file."""


class SessionBusy(SessionError):
    """Another run, in this process or another, is continuing the session."""


def now_iso() -> str:
    """The current time as ISO-8601 UTC, to the millisecond."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass
class SessionInfo:
    """What a list of sessions shows."""

    id: str
    title: str
    created: str
    last_activity: str
    turns: int
    rewound: int = 0  # of those, the turns a rewind took out of the conversation

    def to_dict(self) -> dict[str, Any]:
        """The protocol's camelCase form."""
        return {
            "id": self.id,
            "title": self.title,
            "created": self.created,
            "lastActivity": self.last_activity,
            "turns": self.turns,
            "rewound": self.rewound,
        }


@dataclass
class Loaded:
    """A session file read back: its header, its records and what was noticed on the way."""

    header: dict[str, Any]
    records: list[dict[str, Any]]
    notices: list[str] = field(default_factory=list)


class SessionFile:
    """One session's file: appends complete lines, reads them back."""

    def __init__(
        self, path: Path, on_write: Callable[[tuple[int, int]], None] | None = None
    ) -> None:
        self.path = path
        self._tail_checked = False
        # Size and modification time of the file as this object last wrote or read it: a
        # different stamp on disk means someone else changed it since.
        self.stamp: tuple[int, int] | None = None
        self._on_write = on_write  # told the stamp after each write

    def _wrote(self, fd: int) -> None:
        self.stamp = _fstamp(fd)
        if self._on_write is not None:
            self._on_write(self.stamp)

    def create(self, header: dict[str, Any]) -> None:
        """Write the header of a new session; refuses to replace an existing file."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        line = _line(header)
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(line)
            handle.flush()
            os.fsync(handle.fileno())
            self._wrote(handle.fileno())
        self._tail_checked = True

    def append(self, record: dict[str, Any]) -> None:
        """Append one record as one complete line, on disk before this returns."""
        self.append_many([record])

    def append_many(self, records: list[dict[str, Any]]) -> None:
        """Append records, each a complete line, flushed and synced once for all of them."""
        if not records:
            return
        data = b"".join(_line(r) for r in records)
        with open(self.path, "r+b") as handle:
            if not self._tail_checked:
                self._cut_torn_tail(handle)
                self._tail_checked = True
            handle.seek(0, os.SEEK_END)
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
            self._wrote(handle.fileno())

    @staticmethod
    def _cut_torn_tail(handle: Any) -> None:
        # A crash mid-append leaves a line without its newline: it holds no complete record,
        # and the next record must start on a line of its own.
        size = handle.seek(0, os.SEEK_END)
        if size == 0:
            return
        handle.seek(size - 1)
        if handle.read(1) == b"\n":
            return
        handle.seek(0)
        data = handle.read()
        handle.truncate(data.rfind(b"\n") + 1)

    def load(self, root: Path | None = None) -> Loaded:
        """Read the file; raises SessionError naming the file when it cannot be used."""
        try:
            with open(self.path, "rb") as handle:
                stamp = _fstamp(handle.fileno())
                data = handle.read()
        except FileNotFoundError:
            raise SessionError(f"session file {self.path} does not exist") from None
        except OSError as exc:
            raise SessionError(f"cannot read session file {self.path}: {exc.strerror}") from None
        lines = data.split(b"\n")
        notices: list[str] = []
        torn = lines.pop()  # after the last newline: empty unless a write was cut short
        if torn.strip():
            notices.append(
                f"{self.path}: ignored an incomplete last line ({len(torn)} bytes), "
                "left by an interrupted write"
            )
        if not lines:
            raise SessionError(f"session file {self.path} is empty or has no complete header")
        records: list[dict[str, Any]] = []
        for number, raw in enumerate(lines, 1):
            try:
                record = json.loads(raw)
            except ValueError:
                raise SessionError(
                    f"session file {self.path} is corrupt: line {number} is not valid JSON; "
                    "the file was left as it is"
                ) from None
            if not isinstance(record, dict):
                raise SessionError(
                    f"session file {self.path} is corrupt: line {number} is not a JSON object"
                )
            records.append(record)
        header = records.pop(0)
        _check_header(self.path, header, root)
        self.stamp = stamp
        return Loaded(header, records, notices)


def file_stamp(path: Path) -> tuple[int, int] | None:
    """A file's size and modification time (None when it cannot be read)."""
    try:
        stat = path.stat()
    except OSError:
        return None
    return (stat.st_size, stat.st_mtime_ns)


def _fstamp(fd: int) -> tuple[int, int]:
    stat = os.fstat(fd)
    return (stat.st_size, stat.st_mtime_ns)


def _line(record: dict[str, Any]) -> bytes:
    text = json.dumps(record, ensure_ascii=False, separators=(",", ":"), default=str)
    # A model can send lone surrogates; escaped, they keep the line valid UTF-8 JSON.
    return text.encode("utf-8", "backslashreplace") + b"\n"


def _check_header(path: Path, header: dict[str, Any], root: Path | None) -> None:
    if header.get("format") != FORMAT:
        raise SessionError(f"{path} is not a Toolgate session file (its first line has no header)")
    version = header.get("version")
    if not isinstance(version, int) or version > VERSION:
        raise SessionError(
            f"session file {path} is from a newer Toolgate (format version {version}; this one "
            f"reads up to {VERSION}); it was left as it is"
        )
    if root is not None and header.get("workspace") not in (None, str(root)):
        raise SessionError(
            f"session file {path} belongs to another workspace ({header.get('workspace')}); "
            "it was left as it is"
        )


class SessionStore:
    """The sessions of one workspace."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.folder = root / ".toolgate" / "sessions"
        # Each session file's stamp as this store last wrote it (None: deleted it), or as
        # `changed_elsewhere` last reported it: what differs was changed by someone else.
        self._known: dict[str, tuple[int, int] | None] = {}

    def _file(self, session_id: str) -> SessionFile:
        def wrote(stamp: tuple[int, int]) -> None:
            self._known[session_id] = stamp

        return SessionFile(self.path(session_id), wrote)

    def is_known(self, session_id: str) -> bool:
        """Whether a session's file is as this store last wrote it or reported it changed."""
        stamp = file_stamp(self.path(session_id))
        return session_id in self._known and self._known[session_id] == stamp

    def changed_elsewhere(self, paths: Iterable[Path]) -> list[tuple[str, bool]]:
        """The sessions among `paths` that another process changed, and whether each is gone.

        A change this store made itself is left out; so is one already reported, so each
        outside change is reported once, however many times its file is named.
        """
        changed = []
        for path in dict.fromkeys(paths):
            if path.parent != self.folder or path.suffix != ".jsonl" or not _ID.match(path.stem):
                continue
            if self.is_known(path.stem):
                continue
            stamp = file_stamp(path)
            self._known[path.stem] = stamp
            changed.append((path.stem, stamp is None))
        return changed

    def path(self, session_id: str) -> Path:
        """The file of a session id; refuses ids that are not ours (no path tricks)."""
        if not _ID.match(session_id):
            raise SessionError(f"unknown session {session_id[:80]!r}: not a session id")
        return self.folder / f"{session_id}.jsonl"

    def create(self, title: str = "", session_id: str | None = None) -> tuple[str, SessionFile]:
        """A new, empty session on disk."""
        toolgate_dir(self.root)  # its .gitignore keeps sessions out of the repository
        session_id = session_id or new_id("session")
        file = self._file(session_id)
        header = {
            "format": FORMAT,
            "version": VERSION,
            "id": session_id,
            "workspace": str(self.root),
            "created": now_iso(),
            "title": title,
        }
        try:
            file.create(header)
        except FileExistsError:
            raise SessionError(f"session {session_id} already exists") from None
        return session_id, file

    def open(self, session_id: str) -> SessionFile:
        """The file of an existing session; a clear error for an unknown id."""
        path = self.path(session_id)
        if not path.is_file():
            raise SessionError(f"unknown session {session_id!r} (no {path})")
        return self._file(session_id)

    def ids(self) -> Iterator[str]:
        """Every session id stored here."""
        if not self.folder.is_dir():
            return
        for path in self.folder.glob("s-*.jsonl"):
            yield path.stem

    def delete(self, session_id: str) -> None:
        """Remove a session's file."""
        path = self.open(session_id).path
        path.unlink()
        self._known[session_id] = None
        with contextlib.suppress(FileNotFoundError):
            self.lock_path(session_id).unlink()

    def lock_path(self, session_id: str) -> Path:
        """The file that says a process is continuing this session."""
        return self.path(session_id).with_suffix(".lock")


class SessionLock:
    """Held while a run continues a session, across processes too (`<id>.lock`, O_EXCL)."""

    def __init__(self, path: Path, session_id: str) -> None:
        self.path = path
        self.session_id = session_id
        self._held = False

    def acquire(self) -> None:
        """Take the lock or raise SessionBusy; a lock left by a process that died is taken over."""
        for _ in range(2):
            try:
                fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            except FileExistsError:
                if self._stale():
                    with contextlib.suppress(FileNotFoundError):
                        self.path.unlink()
                    continue
                raise SessionBusy(
                    f"session {self.session_id} is busy: another run is continuing it "
                    f"({self._holder()}); wait for it to end or start a new session"
                ) from None
            with os.fdopen(fd, "w") as handle:
                handle.write(str(os.getpid()))
            self._held = True
            return
        raise SessionBusy(f"session {self.session_id} is busy")

    def release(self) -> None:
        """Give the lock back."""
        if self._held:
            self._held = False
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()

    def _holder(self) -> str:
        try:
            return f"process {int(self.path.read_text().strip())}"
        except (OSError, ValueError):
            return "another process"

    def _stale(self) -> bool:
        try:
            pid = int(self.path.read_text().strip())
        except FileNotFoundError:
            return True
        except (OSError, ValueError):
            return False
        if pid == os.getpid():
            return False  # ours: another run of this process holds it
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        except PermissionError:
            return False
        return False
