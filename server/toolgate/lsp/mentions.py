"""What `toolgate.ask`'s `context` gives a message's `@selection` and `@problems`."""

from __future__ import annotations

from pathlib import Path

from toolgate.lsp.arguments import AskContext
from toolgate.lsp.convert import uri_to_path
from toolgate.session.mentions import Pointed, Problem, Selection

SEVERITIES = {1: "error", 2: "warning", 3: "information", 4: "hint"}

UNSENT = (
    "the editor sent none with this message (toolgate.ask's context.range or context.diagnostics)"
)


def _path(root: Path, uri: str) -> str | None:
    """The workspace-relative path of a file URI; an absolute path outside (then refused)."""
    path = uri_to_path(uri)
    if path is None:
        return None
    real = Path(path).resolve()
    try:
        return real.relative_to(root).as_posix()
    except ValueError:
        return str(real)  # the engine refuses it in the sandbox's own words


def pointed_of(root: Path, context: AskContext | None) -> Pointed:
    """The selection and problems of a `toolgate.ask` context, for the engine's mentions."""
    pointed = Pointed(unavailable=UNSENT)
    if context is None:
        return pointed
    if context.uri is not None and context.range is not None:
        path = _path(root, context.uri)
        if path is not None:
            start, end = context.range.start, context.range.end
            # A selection ending at column 0 of a line does not take that line.
            last = end.line if end.character > 0 or end.line == start.line else end.line - 1
            pointed.selection = Selection(path, start.line + 1, last + 1, context.text)
    if context.diagnostics is not None:
        problems = []
        for diagnostic in context.diagnostics:
            path = _path(root, diagnostic.uri)
            if path is None:
                continue  # not a file: nothing the model could open
            problems.append(
                Problem(
                    path,
                    diagnostic.range.start.line + 1,
                    diagnostic.message,
                    SEVERITIES.get(diagnostic.severity or 1, "error"),
                    diagnostic.source,
                )
            )
        pointed.problems = problems
    return pointed
