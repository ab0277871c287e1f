"""Real model outputs from other projects' parser tests, read as those tests expect.

Each file in `corpus/` holds the cases of one family: the text a model wrote, the calls the
source's test expects, and the source (project and file). A case whose source types the values by
its tool's schema carries that schema as `tools`; the others get tools typed like the expected
calls. A family Toolgate claims in
docs/TEXT_PROTOCOL.md must read at least 95% of its cases; the report lists each miss and why.
Run `python -m tests.calls.test_corpus` to print the scores.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolgate.calls import parse_text

CORPUS = Path(__file__).parent / "corpus"
CLAIMED = 0.95
# Families below the mark: read, reported, and not claimed in docs/TEXT_PROTOCOL.md.
# pythonic, llama_json: a list or object inside a line of prose, or several on one line joined
# by `;`, is prose here (an ambiguous syntax must stand alone on its line);
# hermes, granite: a call whose </tool_call> never came is not run (nothing cut off is ever run);
# hermes also: llama.cpp reads call objects in plain and ```xml fences and <function name="…">,
# which are examples or prose here; pythonic also: bare NAME(a=1) lines (Granite) are prose;
# xlam: a JSON list right after `</think>` on its line is prose, as other text before it would be.
# harmony: vLLM passes a non-JSON message ("foo") on as the arguments; here arguments must be
# a JSON object, so that call is an error for the model; an answer that starts with the role
# header's ` to=functions.NAME<|channel|>…` (the prompt ended with `<|start|>assistant`) has no
# opening literal, so it is prose.
# mistral: text before the list after [TOOL_CALLS] (`[TOOL_CALLS] junk [...]`) is an error here,
# where vLLM searches past it.
# aider: an empty SEARCH (a new file, or text added to one) is an error that asks for write_file.
UNCLAIMED = {
    "aider",
    "granite",
    "harmony",
    "hermes",
    "llama_json",
    "mistral",
    "pythonic",
    "xlam",
}
_TYPES = {bool: "boolean", int: "integer", float: "number", str: "string", list: "array"}


def tools_for(calls: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Schemas for the expected calls' tools, typed as the source's tools were."""
    tools: dict[str, dict[str, Any]] = {}
    for call in calls:
        props = tools.setdefault(call["name"], {"type": "object", "properties": {}})["properties"]
        if isinstance(call["arguments"], dict):  # some sources expect non-object arguments
            for key, value in call["arguments"].items():
                props[key] = {"type": _TYPES.get(type(value), "object")}
    return tools


def read(case: dict[str, Any]) -> str | None:
    """None when the case is read as its source expects, else why not."""
    result = parse_text(case["text"], case.get("tools") or tools_for(case["calls"]))
    got = [{"name": c.name, "arguments": c.arguments} for c in result.calls]
    if got == case["calls"]:
        return None
    errors = "; ".join(e.error[:160] for e in result.errors)
    why = f"errors: {errors}" if errors else "read as prose"
    return f"expected {case['calls']}, got {got} ({why})"


def score(family: str) -> tuple[int, int, list[str]]:
    """Cases, cases read as expected, and the misses with why."""
    cases = json.loads((CORPUS / f"{family}.json").read_text("utf-8"))
    misses = [f"{c['id']} ({c['source']}): {why}" for c in cases if (why := read(c))]
    return len(cases), len(cases) - len(misses), misses


FAMILIES = sorted(p.stem for p in CORPUS.glob("*.json"))


@pytest.mark.parametrize("family", FAMILIES)
def test_every_corpus_case_names_its_source_and_expected_calls(family: str) -> None:
    for case in json.loads((CORPUS / f"{family}.json").read_text("utf-8")):
        assert case["source"].count("/") >= 2 and " " in case["source"], case["id"]
        assert isinstance(case["calls"], list) and isinstance(case["text"], str)
        assert isinstance(case.get("tools", {}), dict), case["id"]


@pytest.mark.parametrize("family", FAMILIES)
def test_each_claimed_family_reads_its_corpus(family: str) -> None:
    total, good, misses = score(family)
    report = f"{family}: {good}/{total} read as expected\n" + "\n".join(misses)
    print(report)
    if family in UNCLAIMED:
        assert good < CLAIMED * total, f"{report}\nnow above the mark: claim it in the docs"
    else:
        assert good >= CLAIMED * total, report


if __name__ == "__main__":
    for name in FAMILIES:
        n, ok, missed = score(name)
        print(f"{name}: {ok}/{n} = {100 * ok / n:.0f}%")
        for miss in missed:
            print(f"  miss: {miss}")
