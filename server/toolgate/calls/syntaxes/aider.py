"""Aider's SEARCH/REPLACE edit blocks: the file's path, then a fence holding the edit.

    mathweb/flask/app.py
    ```python
    <<<<<<< SEARCH
    from flask import Flask
    =======
    import math
    from flask import Flask
    >>>>>>> REPLACE
    ```

Aider's `diff-fenced` form names the file inside the fence, on the line before the head:

    ```python
    mathweb/flask/app.py
    <<<<<<< SEARCH
    …
    >>>>>>> REPLACE
    ```

Each block is an `edit_file` call: `search` and `replace` are the sections' lines, line ends
included. A fence may hold several blocks, with a path line before a block to change the
file; a block with no path of its own edits the file of the block before it, and other lines
between blocks are passed over, as Aider passes over them. A path alone in a fence of its own
right before the edit's fence names the file too (DeepSeek Coder V2 writes it so). Written by
models prompted by Aider's `diff` and `diff-fenced` edit formats (Claude, GPT-4o, DeepSeek,
Gemini, Qwen and most models people use with Aider).

It opens with a path line and a fence, not a literal: its opening is a fence's (`AtFence`).
"""

from __future__ import annotations

import re

from toolgate.calls.cursor import WINDOW, Construct, Cursor
from toolgate.calls.openings import AtFence
from toolgate.calls.prose import open_fence, st_fence, unclosed_fence
from toolgate.calls.syntaxes.base import Failed, Found, Syntax

NAME = "aider"
DESCRIPTION = "path line, then a fence of <<<<<<< SEARCH … ======= … >>>>>>> REPLACE (edit_file)"
EXAMPLE = (
    "path/to/file.py\n```python\n<<<<<<< SEARCH\nold lines\n=======\nnew lines\n"
    ">>>>>>> REPLACE\n```"
)
_HEAD = re.compile(r"<{5,9} SEARCH>?[ \t]*\r?\n?")
_DIVIDER = re.compile(r"={5,9}[ \t]*\r?\n?")
_UPDATED = re.compile(r">{5,9} REPLACE[ \t]*\r?\n?")
# A fence is an edit when its first body line is the head, or a path with the head after it.
_OPENING = re.compile(r"<{5,9} SEARCH>?[ \t]*\r?\n")
_HEAD_PREFIX = re.compile(r"<{0,9}(?: (?:S(?:E(?:A(?:R(?:C(?:H>?[ \t]*\r?)?)?)?)?)?)?)?")
# A first line that may be a path (no blank inside it), whole or still growing.
_PATH_LINE = re.compile(r"[ \t]*([^\s`]+)[ \t]*\r?\n")
_PATH_START = re.compile(r"[ \t]*[^\s`]*[ \t]*\r?")


def opens_edit(seg: str, final: bool) -> bool | None:
    """Whether a fence whose body starts with `seg` is an edit block; None while undecided.

    `final`: no more text will come, or `seg` is as long as the look-ahead.
    """
    if _OPENING.match(seg):
        return True
    path = _PATH_LINE.match(seg)
    if path is not None and clean_path(path.group(1)):  # the `diff-fenced` form
        rest = seg[path.end() :]
        if _OPENING.match(rest):
            return True
        grows = not final and "\n" not in rest and _HEAD_PREFIX.fullmatch(rest)
        return None if grows else False
    if final or "\n" in seg:
        return False
    return None if _HEAD_PREFIX.fullmatch(seg) or _PATH_START.fullmatch(seg) else False


def clean_path(line: str) -> str:
    """A path as Aider's models write it on its own line: without `#`, `*`, backticks or `:`."""
    path = line.strip().rstrip(":").lstrip("#").strip().strip("`*").strip()
    return "" if not path or any(c.isspace() for c in path) else path


def path_before(lines: list[str]) -> str:
    """The path named by the lines before a fence: the last line, or a fence of its own.

    DeepSeek Coder V2 writes the path as the only line of a fence before the edit's fence,
    and Aider reads it there; any other fence before the edit names no file.
    """
    if not lines:
        return ""
    if not lines[-1].strip().startswith("```"):
        return clean_path(lines[-1])
    if len(lines) == 3 and lines[0].strip().startswith("```") and lines[-1].strip() == "```":
        return clean_path(lines[1])
    return ""


def read_edits(body: str, path: str) -> list[Found | Failed]:
    """The `edit_file` calls in a fence's body; `path` is the file named before the fence."""
    lines = body.splitlines(keepends=True)
    out: list[Found | Failed] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        if not _HEAD.fullmatch(line):
            if i + 1 < len(lines) and _HEAD.fullmatch(lines[i + 1]) and clean_path(line):
                path = clean_path(line)
                i += 1
                continue
            i += 1  # words between blocks (`...`, a remark): Aider reads past them too
            continue
        j = i + 1
        while j < len(lines) and not _DIVIDER.fullmatch(lines[j]):
            j += 1
        k = j + 1
        while k < len(lines) and not _UPDATED.fullmatch(lines[k]):
            k += 1
        if k >= len(lines):
            missing = "=======" if j >= len(lines) else ">>>>>>> REPLACE"
            out.append(_failure(f"the fence closed before {missing}; nothing was run"))
            return out
        search, replace = "".join(lines[i + 1 : j]), "".join(lines[j + 1 : k])
        if not path:
            out.append(_failure("no file path on the line before the fence"))
        elif not search:
            out.append(
                _failure(f"an empty SEARCH section for {path}; write a new file with write_file")
            )
        else:
            out.append(Found("edit_file", {"path": path, "search": search, "replace": replace}))
        i = k + 1
    return out


def _failure(message: str) -> Failed:
    return Failed(f"{NAME}: {message}; expected {EXAMPLE}")


def read_edit_fence(p: Cursor, k: Construct, body: str, text: str, closed: bool) -> None:
    """The `edit_file` calls of a closed fence; `k.name` is the file named before it."""
    if not closed:
        unclosed_fence(p, k, text)
        return
    for found in read_edits(body, k.name or ""):
        if isinstance(found, Failed):
            p.error(found.message, text)
            continue
        p.edit_path = found.arguments["path"]
        p.call(found.name, found.arguments, NAME, text)


def at_fence(p: Cursor, m: re.Match[str], nl: int, lang: str) -> bool | None:
    """A fence that starts with a SEARCH/REPLACE head, or a path and the head (`edit_file`)."""
    if nl < 0 or "edit_file" not in p.tools:
        return None
    seg = p.buf[nl + 1 : nl + 1 + WINDOW]
    edit = opens_edit(seg, p.eof or len(seg) >= WINDOW)
    if edit is None:
        return False
    if not edit:
        return None
    # constructs start after the indentation, however the indentation arrived
    p.prose_to(m.start(1))
    p.say()  # Aider names the file on the line before the fence
    k = p.start("SEARCH/REPLACE block", st_fence)
    k.name = path_before(p.sink.last_lines(3)) or p.edit_path
    k.mode = "edit"
    return open_fence(p, k, m, nl, lang, read_edit_fence)


class Aider(Syntax):
    """A path line, then a fence of SEARCH/REPLACE blocks: it ends where the fence closes."""

    name = NAME
    example = EXAMPLE
    models = "models prompted by Aider's diff edit format"
    forms = ((NAME, DESCRIPTION),)
    openings = (AtFence(at_fence),)
