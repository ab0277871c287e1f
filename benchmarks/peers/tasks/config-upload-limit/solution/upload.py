"""Checking uploads before they are stored."""

from settings import ALLOWED_TYPES, MAX_UPLOAD_MB


def check(size_mb, kind="png"):
    """True when the upload may be stored; ValueError saying why not otherwise."""
    if kind not in ALLOWED_TYPES:
        raise ValueError(f"{kind} files are refused")
    if size_mb > MAX_UPLOAD_MB:
        raise ValueError(f"files over {MAX_UPLOAD_MB} MB are refused")
    return True
