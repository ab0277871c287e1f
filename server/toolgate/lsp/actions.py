"""Code actions: how any client's code-action menu reviews proposals and fixes failures.

Clients that read no `toolgate/*` notification (Neovim, Emacs, Helix, Kate) review through
code actions alone, so every pending proposal must be reachable from there: on its target's
buffer (also before the file exists on disk: the buffer of a new file matches by path), and
from any other buffer through the "Review pending proposals (N)" entries.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types

from toolgate.lsp.convert import uri_to_path

if TYPE_CHECKING:
    from toolgate.review.proposal import Proposal

REVIEW = "Review pending proposals"


def _real(path: Path) -> Path | None:
    try:
        return path.resolve()
    except (OSError, RuntimeError, ValueError):
        return None


def _command_action(title: str, name: str, arguments: list[object]) -> types.CodeAction:
    return types.CodeAction(
        title=title,
        kind=types.CodeActionKind.Refactor,
        command=types.Command(title=title, command=name, arguments=arguments),
    )


def proposal_actions(
    proposals: Iterable[Proposal], root: Path, uri: str, lines: types.Range
) -> list[types.CodeAction]:
    """Accept / reject (and per hunk) for this buffer's proposals; review entries for the rest."""
    path = uri_to_path(uri)
    here = _real(path) if path is not None else None
    own: list[types.CodeAction] = []
    elsewhere: list[Proposal] = []
    for proposal in proposals:
        if here is None or _real(root / proposal.path) != here:
            elsewhere.append(proposal)
            continue
        label = f"{proposal.tool} proposal: {proposal.path}"
        own.append(_command_action(f"Accept {label}", "toolgate.acceptProposal", [proposal.id]))
        own.append(_command_action(f"Reject {label}", "toolgate.rejectProposal", [proposal.id]))
        if len(proposal.hunks) > 1:
            for hunk in proposal.hunks:
                if hunk.start <= lines.end.line and lines.start.line <= hunk.end:
                    own.append(
                        _command_action(
                            f"Accept hunk {hunk.index + 1} of {label}",
                            "toolgate.acceptProposal",
                            [proposal.id, [hunk.index]],
                        )
                    )
    review: list[types.CodeAction] = []
    for proposal in elsewhere:
        prefix = f"{REVIEW} ({len(elsewhere)}):"
        label = f"{proposal.tool} proposal: {proposal.path}"
        review.append(
            _command_action(f"{prefix} accept {label}", "toolgate.acceptProposal", [proposal.id])
        )
        review.append(
            _command_action(f"{prefix} reject {label}", "toolgate.rejectProposal", [proposal.id])
        )
    return own + review


def _plain(selected: types.Range) -> dict[str, dict[str, int]]:
    start, end = selected.start, selected.end
    return {
        "start": {"line": start.line, "character": start.character},
        "end": {"line": end.line, "character": end.character},
    }


def selection_action(uri: str, selected: types.Range) -> list[types.CodeAction]:
    """The code action *Toolgate: Edit selection…* on a range that selects something.

    The command carries the file and the range; the client adds the person's instruction
    (VS Code asks in an input box, docs/EDITORS.md shows Neovim's and Emacs' ways).
    """
    if selected.start == selected.end:
        return []
    return [
        types.CodeAction(
            title="Toolgate: Edit selection…",
            kind=types.CodeActionKind.RefactorRewrite,
            command=types.Command(
                title="Edit selection",
                command="toolgate.editSelection",
                arguments=[{"uri": uri, "range": _plain(selected)}],
            ),
        )
    ]


def failure_actions(uri: str, diagnostics: Iterable[types.Diagnostic]) -> list[types.CodeAction]:
    """The "Ask agent to fix …" quick fix for each of Toolgate's test-failure diagnostics."""
    actions = []
    for diagnostic in diagnostics:
        if diagnostic.source != "toolgate":
            continue
        test_id = str(diagnostic.code or "the failing test")
        actions.append(
            types.CodeAction(
                title=f"Ask agent to fix {test_id}",
                kind=types.CodeActionKind.QuickFix,
                diagnostics=[diagnostic],
                command=types.Command(
                    title="Ask agent to fix",
                    command="toolgate.fixFailure",
                    arguments=[
                        {
                            "uri": uri,
                            "line": diagnostic.range.start.line,
                            "message": diagnostic.message,
                            "testId": test_id,
                        }
                    ],
                ),
            )
        )
    return actions
