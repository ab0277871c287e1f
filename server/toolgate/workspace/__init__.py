"""The workspace: sandboxed paths, editor buffers, atomic writes and git."""

from toolgate.workspace.files import (
    TextFile,
    atomic_write_text,
    decode_text,
    normalise_newlines,
)
from toolgate.workspace.sandbox import PathRefused, Workspace

__all__ = [
    "PathRefused",
    "TextFile",
    "Workspace",
    "atomic_write_text",
    "decode_text",
    "normalise_newlines",
]
