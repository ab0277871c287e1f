"""Where the person's own customization lives, outside any workspace."""

from __future__ import annotations

import os
from pathlib import Path


def user_config_dir() -> Path:
    """Toolgate's folder in the person's configuration (`$XDG_CONFIG_HOME/toolgate`)."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "toolgate"


def home() -> Path:
    """The person's home folder, where other agents keep their user-level files."""
    return Path(os.environ.get("HOME") or Path.home())


def inside(root: Path, path: Path) -> bool:
    """A regular file whose real path is inside `root` (a link out of it is not followed)."""
    real_root, real = os.path.realpath(root), os.path.realpath(path)
    return os.path.isfile(real) and os.path.commonpath([real_root, real]) == real_root


def read_text(path: Path, limit: int = 64_000) -> str:
    """A customization file's text, cut at `limit` characters (undecodable bytes replaced)."""
    return path.read_text("utf-8", errors="replace")[:limit]
