"""An editor's buffer against a text: the same as editors report it, or where the person typed.

Editors do not report a buffer's text byte for byte as it was put there: Neovim and Vim add the
final newline a text lacks (`eol`), others drop it, and a buffer may hold CRLF line endings the
accepted text was compared without. None of that is an edit of the person's.
"""

from __future__ import annotations

from toolgate.workspace.files import normalise_newlines

_SHOWN = 60  # characters of a line quoted in a difference


def _lines(text: str) -> list[str]:
    text = normalise_newlines(text)
    return (text[:-1] if text.endswith("\n") else text).split("\n")


def same_text(buffer: str, text: str) -> bool:
    """Whether a buffer holds `text`, line endings and a final newline aside."""
    return _lines(buffer) == _lines(text)


def _quoted(line: str) -> str:
    return repr(line if len(line) <= _SHOWN else line[:_SHOWN] + "…")


def difference(buffer: str, text: str) -> str:
    """Where a buffer first differs from `text`, in words (empty when it does not)."""
    ours, theirs = _lines(buffer), _lines(text)
    for number, (mine, other) in enumerate(zip(ours, theirs, strict=False), 1):
        if mine != other:
            return f"line {number} is {_quoted(mine)} in the editor, {_quoted(other)} in the change"
    if len(ours) > len(theirs):
        extra = len(ours) - len(theirs)
        return (
            f"the editor has {extra} more line{'s' if extra > 1 else ''} after line "
            f"{len(theirs)}, from {_quoted(ours[len(theirs)])}"
        )
    if len(ours) < len(theirs):
        return (
            f"the editor has no line {len(ours) + 1} ({_quoted(theirs[len(ours)])} in the change)"
        )
    return ""
