"""One id scheme: every id names its kind by a prefix of its own, and only records.py mints them."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import get_args

from toolgate.python_source import parse_python
from toolgate.records import ID_PREFIXES, IdKind, new_id
from toolgate.review.proposal import make_proposal

SERVER = Path(__file__).resolve().parents[2] / "server" / "toolgate"
SHAPE = re.compile(r"^(?P<prefix>[a-z]+)-\d{8}-\d{6}-[0-9a-f]{6}$")


def test_each_kind_has_a_prefix_no_other_kind_shares() -> None:
    assert set(ID_PREFIXES) == set(get_args(IdKind))
    prefixes = list(ID_PREFIXES.values())
    assert len(set(prefixes)) == len(prefixes)
    for kind in ID_PREFIXES:
        found = SHAPE.match(new_id(kind))
        assert found is not None
        # The prefix read back names one kind: `p-…` is a plan, never a proposal.
        assert [k for k, p in ID_PREFIXES.items() if p == found["prefix"]] == [kind]


def test_ids_differ_and_a_proposal_is_not_a_plan() -> None:
    assert len({new_id("run") for _ in range(50)}) == 50
    proposal = make_proposal(
        run_id="r-1", call_id="c-1", tool="write_file", path="a.py", original="x\n", proposed="y\n"
    )
    assert proposal.id.startswith("prop-") and not proposal.id.startswith("p-")


def _mints_an_id(node: ast.AST) -> bool:
    """`uuid.uuid4()` or `secrets.token_hex(…)`: the makings of a home-made id."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        owner = node.func.value
        return isinstance(owner, ast.Name) and (owner.id, node.func.attr) in (
            ("uuid", "uuid4"),
            ("secrets", "token_hex"),
        )
    return False


def test_no_module_but_records_mints_ids() -> None:
    # Known other uses of randomness that are not ids of runs, plans, proposals or undos.
    allowed = {
        "records.py",  # the one place ids are made
        "workspace/files.py",  # a temporary file's name beside the file it replaces
        "model/llm_log.py",  # one HTTP exchange in the LLM log, when the client sent no id
        "mcp/agent_tools.py",  # an elicitation's opaque state token
        "acp/reviewer.py",  # an ACP elicitation's id, which the protocol leaves opaque
    }
    minting = sorted(
        path.relative_to(SERVER).as_posix()
        for path in SERVER.rglob("*.py")
        if path.relative_to(SERVER).as_posix() not in allowed
        and any(_mints_an_id(node) for node in ast.walk(parse_python(path.read_text("utf-8"))))
    )
    assert minting == []
