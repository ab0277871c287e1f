"""Problems a change caused: what the editor's other language servers report after it lands.

Editors run type checkers and linters the agent knows nothing of. A client reports their
diagnostics of a file before and after a change lands; the problems in the second report that
the first did not have are the change's. They are told to the model in one line
("new problems after this change: a.ts:3 ts Cannot find name 'x'.") and named on the change's
card in every front end.

A problem is matched by its source and message, never by its line: a change moves the lines
below it, and a problem that only moved is not new.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

SHOWN = 10  # problems named to the model; the rest are counted
LEAD = "new problems after this change: "


@dataclass(frozen=True)
class Problem:
    """One problem another language server reports in a file."""

    path: str  # workspace-relative POSIX path
    line: int  # 1-based
    message: str
    source: str = ""  # the reporting server's name ("ts", "Pylance"); may be empty
    severity: str = "error"  # error, warning, information or hint

    def words(self) -> str:
        """`file:line source message`, as the model and the person read it."""
        source = f" {self.source}" if self.source else ""
        return f"{self.path}:{self.line}{source} {' '.join(self.message.split())}"

    def to_json(self) -> dict[str, Any]:
        """The problem as events, tool results and the editor's card carry it."""
        return {
            "path": self.path,
            "line": self.line,
            "source": self.source,
            "message": self.message,
            "severity": self.severity,
        }


def from_json(items: Any) -> list[Problem]:
    """Problems read back from an event or a run log; anything malformed is left out."""
    found = []
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            continue
        path, line, message = item.get("path"), item.get("line"), item.get("message")
        if isinstance(path, str) and isinstance(line, int) and isinstance(message, str):
            found.append(
                Problem(
                    path,
                    line,
                    message,
                    str(item.get("source") or ""),
                    str(item.get("severity") or "error"),
                )
            )
    return found


def new_problems(before: Iterable[Problem] | None, after: Iterable[Problem]) -> list[Problem]:
    """The problems of `after` that `before` did not have (all of them without a `before`).

    Counted, so a second copy of a problem the file already had is new.
    """
    seen = Counter((p.source, p.message) for p in before or [])
    found = []
    for problem in after:
        key = (problem.source, problem.message)
        if seen[key]:
            seen[key] -= 1
        else:
            found.append(problem)
    return found


def problems_note(problems: list[Problem], lead: str = LEAD) -> str | None:
    """The line the model reads: `new problems after this change: file:line source message; …`."""
    if not problems:
        return None
    named = "; ".join(p.words() for p in problems[:SHOWN])
    more = f"; and {len(problems) - SHOWN} more" if len(problems) > SHOWN else ""
    return f"{lead}{named}{more}"
