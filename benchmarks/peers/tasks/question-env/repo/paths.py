"""Where the application keeps its files."""

import os
from pathlib import Path


def home():
    """The application's own folder."""
    return Path(os.environ.get("QUILL_HOME", Path.home() / ".quill"))


def cache_dir():
    """Where downloaded files are kept between runs."""
    return Path(os.environ.get("QUILL_SPOOL", home() / "cache"))


def log_level():
    """How much the application writes to its log."""
    return os.environ.get("QUILL_VERBOSITY", "info")
