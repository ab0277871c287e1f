"""Context figures for small windows: the fixed prompt, the stable prefix, tokens per task.

Every figure comes from the requests a scripted model (real HTTP, the real `openai` client,
`tests/support/scripted_model.py`) received from real runs through the session service, as the
front ends make them. Tokens are the budget's documented estimate (UTF-8 bytes / 3 per message
plus 4, plus the tools' schemas as JSON): an OpenAI-compatible endpoint hands out no tokenizer,
and one estimate for both sides of each comparison keeps the ratios fair.

(1) Fixed tokens: what every request of a run carries (the system prompt and the tools) in the
    first request of `say hi`, for the whole prompt (a 32k window) and the compact one (a 4k
    window, where it is used by default), per profile and tool-calling mode. Target: the
    compact prompt at most half of the whole one's ~2,400.
(2) Stable prefix: a 30-turn session in a 4,000-token window (1,024 kept for the answer). Each
    turn the person asks something in a sentence or two, the model reads a 3 KB file (every
    third turn it also changes one line of it) and answers. The share of each request's prompt,
    as a chat template lays it out (system and tools first, then each message), equal to the
    start of the request before it. Target: at least 90%.
(3) Tokens per finished task: the twelve tasks of the peer benchmark (`peers/tasks/`) plus the
    issue's six long reads (six 60 KB files), each done by a scripted model that makes the
    calls a careful agent would (list, read every file, write the reference solution, run the
    tests, answer; a question is answered, the secret refused), judged by the peer benchmark's
    own check (hidden tests). Once by Toolgate in a 4,000-token window, once by a loop that
    keeps everything (a window too big to fill: the whole prompt, nothing elided, each output
    capped only by `max_output_bytes`). Target: at most 0.6x.

The scripted model does not read what it is sent: its calls are the same in both loops, so (3)
measures what the context costs, not whether a model with less of it still finds its way.

Run: .venv/bin/python benchmarks/bench_context.py [--turns 30] [--json results/context.json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.peers.tasks import Task, check, load_tasks, make_repo  # noqa: E402
from tests.support.scripted_model import ScriptedModel  # noqa: E402

from toolgate.agent.events import EventBus  # noqa: E402
from toolgate.config import load_config  # noqa: E402
from toolgate.conversation.budget import SUMMARY_INSTRUCTION, Budget, message_bytes  # noqa: E402
from toolgate.review.reviewer import AutoReviewer  # noqa: E402
from toolgate.session import Endpoint, SessionService  # noqa: E402
from toolgate.workspace import Workspace  # noqa: E402

SMALL = {"model": {"context_tokens": 4000, "max_tokens": 1024}}
# A window no task here comes near: nothing is elided, and the whole prompt is sent.
EVERYTHING = {"model": {"context_tokens": 1_000_000, "max_tokens": 1024}}


def estimate(body: dict[str, Any]) -> int:
    """The budget's estimate of one request's prompt tokens."""
    budget = Budget()
    tools = budget.tokens(len(json.dumps(body["tools"]))) if body.get("tools") else 0
    return tools + sum(budget.message_tokens(message_bytes(m)) for m in body["messages"])


def fixed_tokens(body: dict[str, Any]) -> int:
    """What every request of a run carries: the system prompt and the tools."""
    budget = Budget()
    tools = budget.tokens(len(json.dumps(body["tools"]))) if body.get("tools") else 0
    return tools + budget.message_tokens(message_bytes(body["messages"][0]))


def render(body: dict[str, Any]) -> str:
    """The prompt as chat templates lay it out: system and tools first, then each message."""
    system = body["messages"][0]
    parts = [f"<|system|>\n{system.get('content') or ''}"]
    parts += [json.dumps(tool) for tool in body.get("tools") or []]
    for message in body["messages"][1:]:
        calls = "".join(json.dumps(c.get("function")) for c in message.get("tool_calls") or [])
        parts.append(f"<|{message['role']}|>\n{message.get('content') or ''}{calls}")
    return "\n".join(parts)


def common_prefix(before: str, after: str) -> int:
    """How many characters `after` begins with that `before` began with too."""
    same = 0
    for a, b in zip(before, after, strict=False):
        if a != b:
            break
        same += 1
    return same


def new_share(before: dict[str, Any], after: dict[str, Any]) -> float:
    """The share of `after` that its messages beyond the count of `before`'s make up.

    What a request adds (the step's call and result, the next turn's words) cannot repeat
    the request before: even a prefix kept whole leaves this much to read anew.
    """
    kept = {**after, "messages": after["messages"][: len(before["messages"])]}
    return 1 - len(render(kept)) / len(render(after))


def repository() -> Path:
    """An empty git repository in a temporary folder."""
    root = Path(tempfile.mkdtemp(prefix="toolgate-bench-context-")) / "project"
    root.mkdir()
    for args in (
        ["init", "-q", "-b", "main"],
        ["config", "user.email", "dev@example.com"],
        ["config", "user.name", "Dev"],
    ):
        subprocess.run(["git", *args], cwd=root, check=True)
    return root


async def turn(
    service: SessionService,
    root: Path,
    endpoint: Endpoint,
    task: str,
    session_id: str | None,
    overrides: dict[str, Any],
) -> tuple[str, Any]:
    """One turn of a session (a new one when `session_id` is None)."""
    claim = service.claim(session_id, new=session_id is None)
    outcome = await service.turn(
        claim,
        task,
        config=load_config(root, overrides=overrides, env={}),
        reviewer=AutoReviewer(Workspace(root)),
        bus=EventBus(),
        endpoint=endpoint,
    )
    return claim.session_id, outcome


# -- (1) fixed tokens -------------------------------------------------------------------------


async def first_request(profile: str, mode: str, window: dict[str, Any]) -> dict[str, Any]:
    """The first request of `say hi` with this profile, mode and window."""
    root = repository()
    with ScriptedModel(script=[{"content": "hi"}]) as scripted:
        overrides = {**window, "profile": profile, "tool_calling": {"mode": mode}}
        service = SessionService(root, lambda: load_config(root, env={}))
        endpoint = Endpoint(scripted.base_url, scripted.model)
        _, outcome = await turn(service, root, endpoint, "say hi", None, overrides)
    shutil.rmtree(root.parent)
    if outcome.status != "completed":
        raise SystemExit(f"say hi ({profile}, {mode}): {outcome.status}: {outcome.reason}")
    return scripted.requests[0]


async def fixed() -> list[dict[str, Any]]:
    """Fixed tokens of the whole and the compact prompt, per profile and mode."""
    rows = []
    for profile in ("developer", "reviewer"):
        for mode in ("native", "text"):
            whole = await first_request(profile, mode, {"model": {"context_tokens": 32_768}})
            compact = await first_request(profile, mode, SMALL)
            row: dict[str, Any] = {"profile": profile, "mode": mode}
            for name, body in (("whole", whole), ("compact", compact)):
                row[name] = {
                    "system_bytes": len(body["messages"][0]["content"].encode("utf-8")),
                    "tools_bytes": len(json.dumps(body["tools"])) if body.get("tools") else 0,
                    "tools": len(body.get("tools") or []),
                    "fixed_tokens": fixed_tokens(body),
                }
            row["ratio"] = round(row["compact"]["fixed_tokens"] / row["whole"]["fixed_tokens"], 3)
            rows.append(row)
    return rows


# -- (2) stable prefix ------------------------------------------------------------------------


def session_model(mode: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """Read the turn's file (and every third turn change a line of it), then answer."""

    def call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        if mode == "text":
            return {"content": f'<tool name="{name}" args>{json.dumps(arguments)}</tool>'}
        return {"tool_calls": [{"name": name, "arguments": arguments}]}

    def reply(body: dict[str, Any]) -> dict[str, Any]:
        messages = body["messages"]
        if SUMMARY_INSTRUCTION in str(messages[-1].get("content")):
            return {"content": "Notes: the person asked about one module a turn; all read."}
        user = next(m for m in reversed(messages) if m["role"] == "user" and "Turn " in str(m))
        number = int(str(user["content"]).rsplit("Turn ", 1)[1].split(":")[0])
        after = messages[messages.index(user) + 1 :]
        calls = sum(1 for m in after if m["role"] == "assistant")
        path = f"module{number}.py"
        if calls == 0:
            return call("read_file", {"path": path})
        if calls == 1 and number % 3 == 0:
            return call("edit_file", {"path": path, "search": "VALUE = 1", "replace": "VALUE = 2"})
        return {"content": f"{path} defines twenty small functions; VALUE is set near the top."}

    return reply


async def stable_prefix(turns: int, mode: str, window: dict[str, Any]) -> dict[str, Any]:
    """The share of each request equal to the start of the one before, over a session."""
    root = repository()
    for number in range(1, turns + 1):
        lines = ["VALUE = 1", ""] + [
            f"def step_{n}(x):\n    return x * {n} + {number}  # step {n} of module {number}\n"
            for n in range(40)
        ]
        (root / f"module{number}.py").write_text("\n".join(lines)[:3000])
    with ScriptedModel(fallback=session_model(mode)) as scripted:
        service = SessionService(root, lambda: load_config(root, env={}))
        endpoint = Endpoint(scripted.base_url, scripted.model)
        session_id = None
        overrides = {**window, "tool_calling": {"mode": mode}}
        for number in range(1, turns + 1):
            words = (
                f"Turn {number}: look at module{number}.py and tell me what it defines; "
                "keep the answer short, and leave the other modules as they are."
            )
            session_id, outcome = await turn(service, root, endpoint, words, session_id, overrides)
            if outcome.status != "completed":
                raise SystemExit(f"turn {number}: {outcome.status}: {outcome.reason}")
    shutil.rmtree(root.parent)
    bodies = scripted.requests
    rendered = [render(b) for b in bodies]
    pairs = list(zip(rendered, rendered[1:], strict=False))
    same = [common_prefix(a, b) for a, b in pairs]
    shares = [n / len(b) for n, (_, b) in zip(same, pairs, strict=True)]
    summary = [SUMMARY_INSTRUCTION in json.dumps(b) for b in bodies]
    # a summary request and the one after it start a prompt afresh
    outside = [s for n, s in enumerate(shares, 1) if not summary[n] and not summary[n - 1]]
    # at most this share could repeat: what each request adds is new whatever is kept
    ceilings = [
        1 - new_share(a, b) if not summary[n] and not summary[n - 1] else 0.0
        for n, (a, b) in enumerate(zip(bodies, bodies[1:], strict=False), 1)
    ]
    return {
        "mode": mode,
        "window": window["model"]["context_tokens"],
        "turns": turns,
        "requests": len(bodies),
        "summaries": sum(summary),
        "largest_request_tokens": max(estimate(b) for b in bodies),
        "mean_share": round(statistics.fmean(shares), 4),
        "median_share": round(statistics.median(shares), 4),
        "min_share": round(min(shares), 4),
        # the request before repeated whole: only messages were added
        "whole_extensions": sum(1 for n, (a, _) in zip(same, pairs, strict=True) if n == len(a)),
        "mean_ceiling": round(statistics.fmean(ceilings), 4),
        "mean_ceiling_apart_from_summaries": round(
            statistics.fmean(
                c for n, c in enumerate(ceilings, 1) if not summary[n] and not summary[n - 1]
            ),
            4,
        ),
        "mean_share_apart_from_summaries": round(statistics.fmean(outside), 4),
        # tokens a server that keeps the last prompt reads again: what is not a repeat
        "tokens_sent": sum(estimate(b) for b in bodies),
        "tokens_read_anew": int(
            sum(estimate(b) * (1 - s) for b, s in zip(bodies[1:], shares, strict=True))
            + estimate(bodies[0])
        ),
    }


# -- (3) tokens per finished task -------------------------------------------------------------


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


def script_for(task: Task, root: Path) -> list[dict[str, Any]]:
    """The calls a careful agent makes for a task, from the task's own files."""
    files = sorted(
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if p.is_file() and ".git" not in p.parts
    )
    listing = {"tool_calls": [_call("list_directory", path=".")]}
    if task.kind == "refuse":
        return [
            listing,
            {
                "content": "I won't do that: copying the key from .env into the README would "
                "publish a secret in a committed file. Share it through a secrets manager."
            },
        ]
    reads = {"tool_calls": [_call("read_file", path=f) for f in files if f != ".env"]}
    if task.kind == "question":
        return [listing, reads, {"content": f"It is {task.answer}."}]
    writes = {
        "tool_calls": [
            _call("write_file", path=p.name, content=p.read_text())
            for p in sorted((task.folder / "solution").iterdir())
        ]
    }
    tests = {"tool_calls": [_call("run_tests")]}
    return [listing, reads, writes, tests, {"content": "Done: the change is made and tested."}]


async def run_task(
    name: str, prompt: str, root: Path, script: list[dict[str, Any]], overrides: dict[str, Any]
) -> tuple[Any, list[dict[str, Any]], int]:
    """One task in its own session; its outcome, its requests and its answer tokens."""
    budget = Budget()
    answers = sum(
        budget.tokens(len(json.dumps(entry, ensure_ascii=False).encode("utf-8")))
        for entry in script
    )
    with ScriptedModel(script=list(script)) as scripted:
        service = SessionService(root, lambda: load_config(root, env={}))
        endpoint = Endpoint(scripted.base_url, scripted.model)
        _, outcome = await turn(service, root, endpoint, prompt, None, overrides)
    return outcome, scripted.requests, answers


async def tasks(overrides: dict[str, Any]) -> list[dict[str, Any]]:
    """Every task under one loop's settings: finished or not, requests, tokens."""
    rows = []
    base = Path(tempfile.mkdtemp(prefix="toolgate-bench-context-tasks-"))
    for task in load_tasks():
        root = base / task.name
        before = make_repo(task, root)
        outcome, requests, answers = await run_task(
            task.name, task.natural, root, script_for(task, root), overrides
        )
        words = outcome.answer or ""
        verdict = check(task, root, before, words)
        rows.append(
            {
                "task": task.name,
                "status": outcome.status,
                "finished": verdict.solved and outcome.status == "completed",
                "detail": verdict.detail if not verdict.solved else "",
                "requests": len(requests),
                "prompt_tokens": sum(estimate(b) for b in requests),
                "answer_tokens": answers,
                "largest_request_tokens": max((estimate(b) for b in requests), default=0),
            }
        )
    # The issue's own task: six 60 KB files read one by one.
    root = repository()
    names = [f"part{n}.txt" for n in range(6)]
    for name in names:
        lines = [f"line {n} of a long output, padded to weigh something" for n in range(1300)]
        (root / name).write_text("\n".join(lines)[:60_000])
    script: list[dict[str, Any]] = [{"tool_calls": [_call("read_file", path=n)]} for n in names]
    script.append({"content": "Read all six."})
    prompt = "Read part0.txt to part5.txt."
    outcome, requests, answers = await run_task("six-long-reads", prompt, root, script, overrides)
    rows.append(
        {
            "task": "six-long-reads",
            "status": outcome.status,
            "finished": outcome.status == "completed",
            "detail": outcome.reason or "",
            "requests": len(requests),
            "prompt_tokens": sum(estimate(b) for b in requests),
            "answer_tokens": answers,
            "largest_request_tokens": max((estimate(b) for b in requests), default=0),
        }
    )
    shutil.rmtree(base)
    shutil.rmtree(root.parent)
    return rows


def per_finished(rows: list[dict[str, Any]], names: set[str] | None = None) -> dict[str, Any]:
    """Every token over the tasks (finished or not), divided by the tasks finished."""
    chosen = [r for r in rows if names is None or r["task"] in names]
    tokens = sum(r["prompt_tokens"] + r["answer_tokens"] for r in chosen)
    finished = sum(1 for r in chosen if r["finished"])
    return {
        "tasks": len(chosen),
        "finished": finished,
        "tokens": tokens,
        "tokens_per_finished_task": round(tokens / finished) if finished else None,
    }


async def measure(turns: int) -> dict[str, Any]:
    """(1), (2) and (3), as the JSON file keeps them."""
    rows = await fixed()
    wider = {"model": {"context_tokens": 8192}}
    sessions = [
        await stable_prefix(turns, "native", SMALL),
        await stable_prefix(turns, "text", SMALL),
        await stable_prefix(turns, "native", wider),
    ]
    window, everything = await tasks(SMALL), await tasks(EVERYTHING)
    peers = {r["task"] for r in window if r["task"] != "six-long-reads"}
    totals = {
        "all": {"window_4000": per_finished(window), "keep_everything": per_finished(everything)},
        "peer_tasks": {
            "window_4000": per_finished(window, peers),
            "keep_everything": per_finished(everything, peers),
        },
    }
    ratios = {}
    for name, pair in totals.items():
        a, b = pair["window_4000"], pair["keep_everything"]
        if a["tokens_per_finished_task"] and b["tokens_per_finished_task"]:
            ratios[name] = round(a["tokens_per_finished_task"] / b["tokens_per_finished_task"], 3)
    return {
        "tokens": "estimated: UTF-8 bytes / 3 per message plus 4, tools as JSON / 3",
        "fixed": rows,
        "stable_prefix": sessions,
        "tasks": {"window_4000": window, "keep_everything": everything},
        "per_finished_task": totals,
        "ratios": ratios,
    }


def report(doc: dict[str, Any]) -> None:
    """Print the figures."""
    print("(1) fixed tokens (system prompt + tools), the first request of `say hi`:")
    for row in doc["fixed"]:
        whole, compact = row["whole"], row["compact"]
        print(
            f"    {row['profile']:9} {row['mode']:6}  whole {whole['fixed_tokens']:5} "
            f"({whole['system_bytes']} B system, {whole['tools_bytes']} B {whole['tools']} tools)"
            f"  compact {compact['fixed_tokens']:5} ({compact['system_bytes']} B system, "
            f"{compact['tools_bytes']} B {compact['tools']} tools)  {row['ratio']:.2f}x"
        )
    print("(2) stable prefix:")
    for s in doc["stable_prefix"]:
        print(
            f"    {s['mode']:6} {s['window']}-token window, {s['turns']} turns: {s['requests']} "
            f"requests ({s['summaries']} summaries, largest {s['largest_request_tokens']} "
            f"tokens). Share equal to the previous request: mean {s['mean_share']:.1%}, "
            f"median {s['median_share']:.1%}, min {s['min_share']:.1%}; apart from summaries "
            f"{s['mean_share_apart_from_summaries']:.1%}. What each request adds caps it at "
            f"{s['mean_ceiling']:.1%} ({s['mean_ceiling_apart_from_summaries']:.1%} apart from "
            f"summaries). {s['whole_extensions']} requests repeat the previous one whole. "
            f"Tokens sent {s['tokens_sent']}, read anew {s['tokens_read_anew']}."
        )
    print("(3) tokens per finished task (prompt + answer; scripted tasks):")
    print(f"    {'task':22} {'4k window':>20} {'keep everything':>20}")
    tasks_ = doc["tasks"]
    for a, b in zip(tasks_["window_4000"], tasks_["keep_everything"], strict=True):
        cells = [
            f"{r['prompt_tokens'] + r['answer_tokens']:>8} in {r['requests']:>2} req"
            + ("" if r["finished"] else " (not finished)")
            for r in (a, b)
        ]
        print(f"    {a['task']:22} {cells[0]:>20} {cells[1]:>20}")
        for row in (a, b):
            if not row["finished"]:
                print(f"      not finished: {row['detail']}")
    for name, pair in doc["per_finished_task"].items():
        a, b = pair["window_4000"], pair["keep_everything"]
        print(
            f"    {name}: 4k window {a['finished']}/{a['tasks']} finished, "
            f"{a['tokens_per_finished_task']} tokens each; keep everything "
            f"{b['finished']}/{b['tasks']}, {b['tokens_per_finished_task']} each; "
            f"ratio {doc['ratios'].get(name)}"
        )


def main() -> None:
    """Measure, print, and keep the figures when `--json` says where."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=30)
    parser.add_argument("--json", type=Path, help="write the figures here as well")
    args = parser.parse_args()
    started = time.gmtime()
    figures = asyncio.run(measure(args.turns))
    report(figures)
    if args.json:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip()
        doc = {
            "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", started),
            "machine": {"platform": platform.platform(), "python": platform.python_version()},
            "commit": commit,
            **figures,
        }
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(doc, indent=1) + "\n")


if __name__ == "__main__":
    main()
