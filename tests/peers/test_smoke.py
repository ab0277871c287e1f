"""A two-task run of the peer benchmark: Toolgate and mini-swe-agent against the scripted model.

The real benchmark path end to end: fresh repositories, each agent in its own process under the
sandbox, the recording proxy over real HTTP, hidden tests copied in to judge, the summary and
the table. mini-swe-agent is installed by `scripts/test.sh` (not with --quick); only a --quick
run skips this test when it is missing.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from benchmarks.peers.agents import AGENTS
from benchmarks.peers.proxy import RecordingProxy, TokenCounter
from benchmarks.peers.report import markdown, summarize
from benchmarks.peers.run import Plan, run_plan
from benchmarks.peers.tasks import load_tasks
from tests.support.scripted_model import ScriptedModel

PEER = AGENTS["mini-swe-agent"]
USAGE = {"prompt_tokens": 500, "completion_tokens": 20, "total_tokens": 520}
DONE = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"


def _require_peer() -> None:
    if PEER.installed():
        return
    how = "python -m benchmarks.peers --install-only --agents mini-swe-agent"
    if os.environ.get("TOOLGATE_TESTS_QUICK") == "1":
        pytest.skip(f"mini-swe-agent is not installed in --quick runs (`{how}` installs it)")
    pytest.fail(f"mini-swe-agent {PEER.version} is not installed: `{how}` (scripts/test.sh does)")


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


def _answer(body: dict[str, Any]) -> dict[str, Any]:
    """What a capable model would answer each agent, one step at a time."""
    messages = body.get("messages", [])
    asked = " ".join(str(m.get("content")) for m in messages if m.get("role") == "user")
    tools = {t["function"]["name"] for t in body.get("tools") or []}
    done_steps = sum(1 for m in messages if m.get("role") == "tool")
    greeting = "greeting is missing its comma" in asked
    if "bash" in tools:  # mini-swe-agent: shell commands, then its submit command
        if greeting and done_steps == 0:
            sed = "sed -i 's/Hello {name}!/Hello, {name}!/' greet.py"
            return {"tool_calls": [_call("bash", command=sed)], "usage": USAGE}
        words = "Done." if greeting else "money_label formats prices for customers."
        return {"content": words, "tool_calls": [_call("bash", command=DONE)], "usage": USAGE}
    if greeting and done_steps == 0:  # Toolgate
        edit = _call("edit_file", path="greet.py", search="Hello {name}!", replace="Hello, {name}!")
        return {"tool_calls": [edit], "usage": USAGE}
    words = "Added the comma." if greeting else "money_label formats prices for customers."
    return {"content": words, "usage": USAGE}


def _plan(tmp_path: Path, names: list[str], warm_up: bool = False) -> Plan:
    tasks = [t for t in load_tasks() if t.name in ("fix-greeting", "question-price")]
    return Plan(
        tasks=tasks,
        wordings=["natural"],
        agents=[AGENTS[n] for n in names],
        timeout=300,
        max_steps=6,
        workdir=tmp_path / "work",
        warm_up=warm_up,
    )


def test_two_tasks_with_toolgate_and_a_peer_through_the_proxy(tmp_path: Path) -> None:
    _require_peer()
    records: list[dict[str, Any]] = []
    with ScriptedModel(fallback=_answer) as model, RecordingProxy(model.base_url) as proxy:
        run_plan(
            _plan(tmp_path, ["toolgate", "mini-swe-agent"]),
            proxy,
            TokenCounter(model.base_url),
            model.model,
            records.append,
            log=lambda line: None,
        )
    assert [(r["agent"], r["task"]) for r in records] == [
        ("toolgate", "fix-greeting"),
        ("toolgate", "question-price"),
        ("mini-swe-agent", "fix-greeting"),
        ("mini-swe-agent", "question-price"),
    ]
    for r in records:
        why = f"{r['agent']} on {r['task']}: {r['detail']}\n{r['stderr_tail']}"
        assert r["solved"], why
        assert r["reached_model"] and not r["unable"] and not r["timed_out"], why
        assert r["requests"] >= 1 and r["bytes_sent"] > 0
        assert r["token_sources"] == ["usage"]
        assert r["prompt_tokens"] == 500 * r["requests"]
    fixes = [r for r in records if r["task"] == "fix-greeting"]
    assert all(r["changed"] == ["greet.py"] for r in fixes)
    assert all(r["changed"] == [] for r in records if r["task"] == "question-price")
    about = {name: {"version": "x"} for name in ("toolgate", "mini-swe-agent")}
    rows = summarize(records, about)
    assert [(row["agent"], row["solved"]) for row in rows] == [
        ("toolgate", 2),
        ("mini-swe-agent", 2),
    ]
    table = markdown(rows, ["natural"])
    assert "| **mini-swe-agent** | x | 2/2 |" in table


def test_an_agent_the_endpoint_refuses_is_reported_not_dropped(tmp_path: Path) -> None:
    records: list[dict[str, Any]] = []
    refusing = {"status": 404, "error": "no chat here"}
    with ScriptedModel(fallback=refusing) as model, RecordingProxy(model.base_url) as proxy:
        run_plan(
            _plan(tmp_path, ["toolgate"], warm_up=True),
            proxy,
            TokenCounter(model.base_url),
            model.model,
            records.append,
            log=lambda line: None,
        )
    # The untimed warm-up run already finds that the endpoint refuses every request.
    warm_up, first, second = records
    assert warm_up["warmup"] and not warm_up["reached_model"]
    assert warm_up["unable"].startswith("POST /v1/chat/completions answered 404")
    assert "no chat here" in warm_up["unable"]
    for record in (first, second):
        assert record["not_run"] and not record["solved"]
        assert record["unable"] == warm_up["unable"]
        assert "cannot run with this endpoint" in record["detail"]
    [row] = summarize(records, {"toolgate": {"version": "x"}})
    assert (row["solved"], row["runs"]) == (0, 2)  # the warm-up is not counted
    assert row["unable"] == warm_up["unable"]
    assert "cannot run with this endpoint: POST /v1/chat/completions" in markdown(
        [row], ["natural"]
    )


def test_an_agent_added_to_earlier_results_runs_the_same_tasks_and_joins_the_table(
    tmp_path: Path,
) -> None:
    """`--add-to`: a later run of one agent joins an earlier results file, on its tasks; here
    Toolgate with the tool grammar, whose requests carry it through the proxy."""
    pytest.importorskip("llama_cpp", reason="the tool grammar's converter is llama-cpp-python's")
    from benchmarks.peers.__main__ import main
    from benchmarks.peers.report import load

    results = tmp_path / "peers.json"
    common = ["--no-chart", "--no-warm-up", "--budget-minutes", "0", "--timeout", "120"]
    with ScriptedModel(fallback=_answer) as model:
        point = ["--base-url", model.base_url, "--model", model.model]
        first = ["--agents", "toolgate", "--tasks", "question-price", "--out", str(results)]
        assert main([*point, *first, *common]) == 0
        assert not any("grammar" in body for body in model.requests)
        added = ["--agents", "toolgate-grammar", "--add-to", str(results)]
        assert main([*point, *added, *common]) == 0
        grammars = [body.get("grammar") for body in model.requests[-1:]]
    doc = load(results)
    assert [(r["agent"], r["task"], r["solved"]) for r in doc["records"]] == [
        ("toolgate", "question-price", True),
        ("toolgate-grammar", "question-price", True),
    ]
    assert [row["agent"] for row in doc["summary"]] == ["toolgate", "toolgate-grammar"]
    assert doc["plan"]["agents"] == ["toolgate", "toolgate-grammar"]
    assert doc["additions"][0]["agents"] == ["toolgate-grammar"]
    assert isinstance(grammars[0], str) and '"<tool name=\\"read_file\\" args>"' in grammars[0]
