"""The two registries in a real run: latent tools, swapped activities, `_reasoningForCall`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.engine.helpers import answer, drive, results_read
from tests.support.scripted_model import ScriptedModel, tool_call

from toolgate.records import ToolResult
from toolgate.tools.activity import ActivityContext
from toolgate.tools.builtins import builtin_registry
from toolgate.tools.schema import Tool

SUMMARISE = Tool(
    name="summarise_diff",
    description="Summarise a diff in one sentence.",
    parameters={
        "type": "object",
        "properties": {"diff": {"type": "string"}},
        "required": ["diff"],
        "additionalProperties": False,
    },
)


class ShoutingRead:
    """Another activity for read_file: same interface, different code."""

    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []

    async def run(self, ctx: ActivityContext, args: dict[str, Any]) -> ToolResult:
        self.seen.append(dict(args))
        _, text = ctx.workspace.read(args["path"])
        return ToolResult.ok({"path": args["path"], "content": text.text.upper()})


async def test_latent_tool_is_answered_by_the_model(repo: Path, scripted: ScriptedModel) -> None:
    registry = builtin_registry()
    registry.add(SUMMARISE)
    scripted.script = [tool_call("summarise_diff", diff="-a\n+b\n"), answer("a became b")]
    driven = await drive(repo, scripted, registry=registry)
    offered = {t["function"]["name"]: t for t in scripted.requests[0]["tools"]}
    assert "summarise_diff" in offered
    (result,) = results_read(scripted)
    assert result["success"] is False
    assert "latent tool" in result["error"] and "answer it yourself" in result["error"]
    assert driven.outcome.answer == "a became b"
    composed = {d["_tool"]: d for d in registry.composed_schemas()}
    assert composed["summarise_diff"]["_activity"] == ""
    assert composed["read_file"]["_activity"] == "read_file"


async def test_swapped_activity_keeps_the_interface(repo: Path, scripted: ScriptedModel) -> None:
    before = builtin_registry().openai_tools()
    registry = builtin_registry()
    shouting = ShoutingRead()
    registry.set_activity("read_file", shouting)
    scripted.script = [
        tool_call("read_file", path="README.md", _reasoningForCall="to see the title"),
        answer(),
    ]
    driven = await drive(repo, scripted, registry=registry)
    assert registry.openai_tools() == before
    sent = [t for t in scripted.requests[0]["tools"] if t["function"]["name"] != "final_answer"]
    assert sent == before
    (result,) = results_read(scripted)
    assert result["data"]["content"] == "# TINY PROJECT\n"
    # the reasoning is stripped before the activity runs, and kept in the run log
    assert shouting.seen == [{"path": "README.md"}]
    (call,) = driven.calls()
    assert call["reasoning"] == "to see the title"
    assert call["arguments"] == {"path": "README.md"}
    (proposed,) = driven.of_type("tool_call_proposed")
    assert proposed["reasoning"] == "to see the title"
    assert "_reasoningForCall" not in proposed["raw_args"]


async def test_every_tool_offers_reasoning_for_call(repo: Path, scripted: ScriptedModel) -> None:
    scripted.script = [answer()]
    await drive(repo, scripted)
    for tool in scripted.requests[0]["tools"]:
        if tool["function"]["name"] == "final_answer":
            continue
        params = tool["function"]["parameters"]
        assert params["properties"]["_reasoningForCall"]["type"] == "string", tool
        assert "_reasoningForCall" not in params.get("required", [])
