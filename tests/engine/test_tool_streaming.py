"""A server that streams nothing for a request with tools, but answers it without streaming.

Seen with llama-cpp-python 0.3.36 and `--chat_format chatml-function-calling`: the streamed
answer is empty, or only `functions.NAME:`; the same request without streaming holds the calls.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.engine.helpers import answer, drive
from tests.support.scripted_model import ScriptedModel, tool_call


def remembered(repo: Path) -> dict[str, Any]:
    """What .toolgate/state.json remembers about tool streaming."""
    return json.loads((repo / ".toolgate" / "state.json").read_text())["tools_no_streaming"]


@pytest.mark.parametrize("quirk", [True, "functions.write_file:"], ids=["empty", "stub"])
async def test_an_empty_streamed_answer_is_asked_again_without_streaming(
    repo: Path, scripted: ScriptedModel, quirk: bool | str
) -> None:
    scripted.empty_tool_stream = quirk
    scripted.script = [
        tool_call("write_file", path="note.txt", content="hello\n"),
        answer("Written."),
    ]
    driven = await drive(repo, scripted)
    assert driven.outcome.status == "completed", driven.outcome
    assert driven.outcome.answer == "Written."
    assert (repo / "note.txt").read_text() == "hello\n"
    # the first streamed request got nothing; it was asked once more without streaming, and
    # from then on requests with tools are not streamed
    assert [bool(b.get("stream")) for b in scripted.requests] == [True, False, False]
    assert all(b.get("tools") for b in scripted.requests)
    key = f"{scripted.base_url}|scripted-model"
    assert "without streaming is answered" in remembered(repo)[key]["reason"]
    assert "functions.write_file" not in json.dumps(driven.log["steps"])

    # the next run remembers: no streamed request with tools at all
    scripted.requests.clear()
    scripted.script = [answer("Nothing to do.")]
    driven = await drive(repo, scripted)
    assert driven.outcome.answer == "Nothing to do."
    assert [bool(b.get("stream")) for b in scripted.requests] == [False]


async def test_a_streamed_answer_with_text_is_not_asked_again(
    repo: Path, scripted: ScriptedModel
) -> None:
    scripted.script = [answer("functions are fine here.")]
    driven = await drive(repo, scripted)
    assert driven.outcome.answer == "functions are fine here."
    assert [bool(b.get("stream")) for b in scripted.requests] == [True]
    assert (
        not (repo / ".toolgate" / "state.json").exists()
        or "tools_no_streaming" not in (repo / ".toolgate" / "state.json").read_text()
    )
