"""A digest of what a git workspace holds, to tell whether a call changed anything.

`git status --porcelain=v2` names HEAD's commit and, for every changed path, its object in HEAD
and in the index; of the working tree it only says that a file differs, so the digest also
takes each such file's bytes (or, past `HASHED_BYTES`, its size and modification time). Files
git ignores are left out, as git leaves them out.
"""

from __future__ import annotations

import asyncio
import hashlib
from pathlib import Path

from toolgate.agent.git_output import git_output

HASHED_BYTES = 1_000_000  # a changed file up to this size is digested by its bytes
HASHED_FILES = 200  # past this many changed files, the rest by size and modification time


async def workspace_state(root: Path) -> str | None:
    """The digest of `root`'s HEAD, index and changed files; None when git cannot say."""
    return await asyncio.to_thread(_state, root)


def _state(root: Path) -> str | None:
    status = git_output(root, "status", "--porcelain=v2", "-z", "--branch", "--untracked-files=all")
    if status is None:
        return None
    digest = hashlib.blake2b(status, digest_size=20)
    for number, path in enumerate(_worktree_paths(status)):
        digest.update(b"\0" + path.encode("utf-8", "surrogateescape") + b"\0")
        digest.update(_file_mark(root / path, by_bytes=number < HASHED_FILES))
    return digest.hexdigest()


def _worktree_paths(status: bytes) -> list[str]:
    """The paths whose working-tree side differs: changed, unmerged and untracked entries."""
    records = status.decode("utf-8", "surrogateescape").split("\0")
    paths: list[str] = []
    skip = False
    for record in records:
        if skip:  # a rename's second record is the path it came from
            skip = False
            continue
        kind = record[:2]
        if kind == "1 " and record[3] != ".":
            paths.append(record.split(" ", 8)[8])
        elif kind == "2 ":
            skip = True
            if record[3] != ".":
                paths.append(record.split(" ", 9)[9])
        elif kind == "u ":
            paths.append(record.split(" ", 10)[10])
        elif kind == "? ":
            paths.append(record[2:])
    return paths


def _file_mark(path: Path, *, by_bytes: bool) -> bytes:
    try:
        stat = path.lstat()
        if by_bytes and stat.st_size <= HASHED_BYTES and path.is_file() and not path.is_symlink():
            return hashlib.blake2b(path.read_bytes(), digest_size=20).digest()
        return f"{stat.st_size}:{stat.st_mtime_ns}".encode()
    except OSError:
        return b"-"  # gone, or unreadable: that too is a state
