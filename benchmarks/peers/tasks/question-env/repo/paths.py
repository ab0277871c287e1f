"""Where the application keeps its files."""

import os
from pathlib import Path


def home():
    """The application's own folder."""
    return Path(os.environ.get("APP_HOME", Path.home() / ".app"))


def cache_dir():
    """Where downloaded files are kept between runs."""
    return Path(os.environ.get("APP_CACHE_DIR", home() / "cache"))


def log_level():
    """How much the application writes to its log."""
    return os.environ.get("APP_LOG_LEVEL", "info")
