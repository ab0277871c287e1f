"""The agent tools' engine-side parts on their own: the documentation rule and the reviewer.

No MCP here: these are the decisions `toolgate mcp --agent-tools` relies on, checked against
real files on disk.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from toolgate.agent_tools.approvals import Answer, Ask, HostReviewer
from toolgate.agent_tools.documentation import docs_only, is_doc_file
from toolgate.review.proposal import Proposal, ProposalStatus, make_proposal
from toolgate.review.reviewer import ApprovalRequest
from toolgate.workspace import Workspace

CODE = (
    "def outer(x):\n"
    "    def inner(y):\n"
    "        return y * 2\n"
    "    return inner(x) + 1\n"
    "\n"
    "class Box:\n"
    "    size = 3\n"
)


def _proposal(path: str, original: str | None, proposed: str) -> Proposal:
    return make_proposal(
        run_id="r", call_id="c", tool="write_file", path=path, original=original, proposed=proposed
    )


@pytest.mark.parametrize(
    "proposed",
    [
        CODE.replace("def outer(x):\n", 'def outer(x):\n    """Twice x, plus one."""\n'),
        CODE.replace("        return y", '        """Double."""\n        return y'),
        CODE.replace("class Box:\n", 'class Box:\n    """A box."""\n    # why: a fixed size\n'),
        CODE.replace("    return inner", "    # inner does the work\n    return inner"),
    ],
)
def test_docstrings_and_comments_may_change(proposed: str) -> None:
    check = docs_only(["calc.py"], "docstrings")
    assert check(_proposal("calc.py", CODE, proposed)) is None


@pytest.mark.parametrize(
    ("path", "proposed", "says"),
    [
        ("calc.py", CODE.replace("y * 2", "y * 3"), "alters its code"),
        ("calc.py", CODE.replace("size = 3", 'size = "3"'), "alters its code"),
        ("calc.py", CODE.replace("def outer(x):", "def outer(x)"), "unparsable"),
        ("other.py", CODE, "neither a documentation file"),
        ("calc.js", "// docs\n", "neither a documentation file"),
    ],
)
def test_anything_else_is_refused(path: str, proposed: str, says: str) -> None:
    check = docs_only(["calc.py"], "docstrings")
    reason = check(_proposal(path, CODE, proposed))
    assert reason is not None and says in reason


def test_readme_runs_may_not_touch_the_code_at_all() -> None:
    check = docs_only(["calc.py"], "readme")
    assert check(_proposal("README.md", None, "# calc\n")) is None
    docstring = CODE.replace("def outer(x):\n", 'def outer(x):\n    """Doc."""\n')
    assert check(_proposal("calc.py", CODE, docstring)) is not None
    assert is_doc_file("docs/api/calc.html") and is_doc_file("GUIDE.rst")
    assert not is_doc_file("setup.py")


async def test_the_person_may_tick_some_hunks_of_a_change(tmp_path: Path) -> None:
    old = "".join(f"line {n}\n" for n in range(1, 21))
    new = old.replace("line 2\n", "line two\n").replace("line 19\n", "line nineteen\n")
    (tmp_path / "a.txt").write_text(old)
    offered: list[Sequence[str]] = []

    def ticking(chosen: frozenset[int] | None, reason: str | None = None) -> Ask:
        async def ask(title: str, details: str, parts: Sequence[str] = ()) -> Answer:
            offered.append(parts)
            return Answer(True, reason, chosen)

        return ask

    change = _proposal("a.txt", old, new)
    person = HostReviewer(Workspace(tmp_path), ask=ticking(frozenset({1}), "keep the top"))
    resolution = await person.review_change(change)
    assert resolution.status == ProposalStatus.PARTIALLY_ACCEPTED
    assert (tmp_path / "a.txt").read_text() == old.replace("line 19\n", "line nineteen\n")
    (first, second) = offered[0]
    assert first.startswith("@@ -1,") and "-line 2\n+line two" in first
    assert "+line nineteen" in second
    assert person.suggestions() == ["hunk 1 of the change to a.txt was refused: keep the top"]

    (tmp_path / "a.txt").write_text(old)
    nothing = HostReviewer(Workspace(tmp_path), ask=ticking(frozenset()))
    resolution = await nothing.review_change(change)
    assert resolution.status == ProposalStatus.REJECTED
    assert resolution.reason == "no hunk was ticked"
    assert (tmp_path / "a.txt").read_text() == old


async def test_the_reviewer_asks_the_person_and_otherwise_follows_the_rule(
    tmp_path: Path,
) -> None:
    (tmp_path / "a.txt").write_bytes(b"one\r\n")
    asked: list[tuple[str, str]] = []

    async def no(title: str, details: str, parts: Sequence[str] = ()) -> Answer:
        asked.append((title, details))
        assert parts == []  # one hunk: nothing to tick apart
        return Answer(False, "not today")

    change = _proposal("a.txt", "one\n", "two\n")
    person = HostReviewer(Workspace(tmp_path), ask=no, approve="auto")
    resolution = await person.review_change(change)
    assert resolution.status == ProposalStatus.REJECTED and resolution.reason == "not today"
    assert asked == [("Toolgate: Change a.txt?", change.diff)]
    assert person.suggestions() == ["change to a.txt was refused: not today"]

    denying = HostReviewer(Workspace(tmp_path))
    resolution = await denying.review_change(change)
    assert resolution.status == ProposalStatus.REJECTED
    assert "--approve deny" in " ".join(denying.suggestions())
    assert (tmp_path / "a.txt").read_bytes() == b"one\r\n"

    auto = HostReviewer(Workspace(tmp_path), approve="auto")
    resolution = await auto.review_change(change)
    assert resolution.status == ProposalStatus.ACCEPTED
    assert (tmp_path / "a.txt").read_bytes() == b"two\r\n"  # the file's newlines kept
    command = ApprovalRequest("r", "c", "run_command", "make deploy", off_allow_list=True)
    assert (await auto.confirm(command)).approved is False
    with pytest.raises(ValueError, match="approve must be one of"):
        HostReviewer(Workspace(tmp_path), approve="ask")
