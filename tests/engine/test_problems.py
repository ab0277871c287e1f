"""Problems a change caused: which are new, how the model reads them, and where the person does.

The editor's report reaches these through the language server (tests/lsp/
test_review_diagnostics.py, tests/editors, tests/vscode); here the same records are told by the
terminal's printer and shown on ACP's tool-call card.
"""

from __future__ import annotations

import io
from pathlib import Path

from toolgate.acp.results import shown
from toolgate.agent.events import PROPOSAL_RESOLVED, TOOL_CALL_EXECUTED, Event
from toolgate.cli.terminal import Printer
from toolgate.records import ToolResult
from toolgate.review.problems import Problem, from_json, new_problems, problems_note

TYPO = Problem("a.ts", 3, "Cannot find name 'lenght'.", "ts")
OLD = Problem("a.ts", 9, "'x' is declared but its value is never read.", "ts", "hint")


def test_a_problem_that_only_moved_is_not_new() -> None:
    moved = Problem(OLD.path, OLD.line + 1, OLD.message, OLD.source, OLD.severity)
    assert new_problems([OLD], [moved, TYPO]) == [TYPO]


def test_a_second_copy_of_an_old_problem_is_new_and_without_a_report_before_all_are() -> None:
    assert new_problems([OLD], [OLD, OLD]) == [OLD]
    assert new_problems(None, [OLD, TYPO]) == [OLD, TYPO]


def test_the_model_reads_file_line_source_message() -> None:
    assert problems_note([TYPO, Problem("b.py", 1, "bad\n  spacing")]) == (
        "new problems after this change: a.ts:3 ts Cannot find name 'lenght'.; b.py:1 bad spacing"
    )
    assert problems_note([]) is None
    many = problems_note([TYPO] * 12) or ""
    assert many.count("a.ts:3") == 10 and many.endswith("; and 2 more")


def test_problems_read_back_leave_out_what_is_malformed() -> None:
    assert from_json([TYPO.to_json(), {"path": "a.ts"}, "x", {"line": "3"}]) == [TYPO]
    assert from_json(None) == []


def test_the_terminal_names_the_problems_under_the_change() -> None:
    err = io.StringIO()
    printer = Printer(err=err, out=io.StringIO(), colour=False, model=False)
    printer(
        Event(
            PROPOSAL_RESOLVED,
            "r-1",
            {"proposal_id": "p-1", "status": "accepted", "problems": [TYPO.to_json()]},
        )
    )
    printer(_executed())
    printer(Event(PROPOSAL_RESOLVED, "r-1", {"proposal_id": "p-2", "status": "accepted"}))
    printer(_executed())
    assert err.getvalue().splitlines() == [
        "  ✓ edit_file [approved] 12 ms",
        "    new problems after this change: a.ts:3 ts Cannot find name 'lenght'.",
        "  ✓ edit_file [approved] 12 ms",
    ]


def _executed() -> Event:
    fields = {"tool_name": "edit_file", "success": True, "decision": "approved", "latency_ms": 12}
    return Event(TOOL_CALL_EXECUTED, "r-1", fields)


def test_acp_shows_the_change_with_what_the_model_was_told(tmp_path: Path) -> None:
    note = problems_note([TYPO])
    result = ToolResult.ok(
        {"path": "a.ts", "message": "the change to a.ts was accepted and applied", "note": note}
    )
    card = shown(result, tmp_path)
    assert card is not None
    assert card.text == (
        "the change to a.ts was accepted and applied\n"
        "new problems after this change: a.ts:3 ts Cannot find name 'lenght'."
    )
