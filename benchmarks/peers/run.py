"""Run agents over tasks against one endpoint, through the recording proxy, and judge each run.

Runs go agent by agent, each agent through every task and wording in the same order. Each run
gets the project at the same path (a fresh repository each time) and a fresh home folder,
under a bubblewrap sandbox when one is available: the whole system read-only but the run's
folder and the agent's own, the loopback network shared (the proxy is there), so an agent
that approves everything cannot reach beyond its task.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.peers.agents import Agent, RunContext
from benchmarks.peers.proxy import Exchange, RecordingProxy, TokenCounter, count_tokens
from benchmarks.peers.tasks import Task, check, make_repo

WARM_UP_PROMPT = "Say hello in one short sentence. Do not change any file."
KILL_GRACE = 5.0
SETUP_TIMEOUT = 180.0
# How long the next run waits for the endpoint to finish an answer its agent left behind.
IDLE_WAIT = 600.0
_TAIL = 1500


@dataclass
class Plan:
    """What one benchmark run does."""

    tasks: list[Task]
    wordings: list[str]
    agents: list[Agent]
    timeout: float
    max_steps: int
    budget_seconds: float | None = None
    sandbox: bool = True
    # One untimed run per agent before its tasks, so that the endpoint has read the agent's
    # fixed prompt once (llama.cpp reuses a prompt's beginning) and no task pays for it.
    warm_up: bool = False
    workdir: Path = field(default_factory=lambda: Path("/tmp/toolgate-peers"))


def sandbox_argv(workdir: Path, agent_dir: Path) -> list[str]:
    """bubblewrap around a run: read-only system, writable run folder and agent folder."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return []
    argv = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    argv += ["--bind", str(workdir), str(workdir)]
    if agent_dir.is_dir():
        argv += ["--bind", str(agent_dir), str(agent_dir)]
    return [*argv, "--unshare-pid", "--die-with-parent", "--chdir", str(workdir / "project")]


def agent_env(home: Path, extra: dict[str, str]) -> dict[str, str]:
    """The environment of a run: ours, less any model settings, with a home of its own."""
    drop = ("OPENAI_", "ANTHROPIC_", "TOOLGATE_", "AIDER_", "MSWEA_", "OPENCODE_", "QWEN_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    env.pop("VIRTUAL_ENV", None)
    for sub in ("config", "data", "state", "cache"):
        (home / sub).mkdir(parents=True, exist_ok=True)
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / "config"),
        XDG_DATA_HOME=str(home / "data"),
        XDG_STATE_HOME=str(home / "state"),
        XDG_CACHE_HOME=str(home / "cache"),
        # `python` and `pytest` in the agents' shells: an interpreter with pytest, the same
        # for every agent.
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        NO_COLOR="1",
        TERM="dumb",
        PYTHONDONTWRITEBYTECODE="1",
        PYTEST_DISABLE_PLUGIN_AUTOLOAD="1",
        GIT_CONFIG_NOSYSTEM="1",
    )
    env.update(extra)
    return env


def run_one(
    agent: Agent,
    task: Task,
    wording: str,
    proxy: RecordingProxy,
    counter: TokenCounter,
    model: str,
    plan: Plan,
    prompt: str | None = None,
) -> dict[str, Any]:
    """One agent on one task in one wording (or with another prompt); what happened."""
    repo = plan.workdir / "project"
    home = plan.workdir / "home"
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)
    before = make_repo(task, repo)
    ctx = RunContext(
        repo=repo,
        prompt=prompt or task.prompt(wording),
        base_url=proxy.base_url,
        model=model,
        home=home,
        install_dir=agent.install_dir,
        max_steps=plan.max_steps,
    )
    launch = agent.launch(ctx)
    wrap = sandbox_argv(plan.workdir, agent.install_dir) if plan.sandbox else []
    label = f"{task.name}/{wording}/{agent.name}"
    proxy.label = label
    env = agent_env(home, launch.env)
    setup_err = ""
    for step in launch.prepare:
        code, _, _, step_err = _execute([*wrap, *step], repo, env, SETUP_TIMEOUT)
        if code != 0:
            setup_err = f"setup {' '.join(step[1:3])} failed ({code}): {step_err[-300:]}"
    started = time.monotonic()
    exit_code, timed_out, out, err = _execute([*wrap, *launch.argv], repo, env, plan.timeout)
    err = (setup_err + "\n" + err) if setup_err else err
    wall = time.monotonic() - started
    proxy.label = ""
    settled = proxy.wait_idle(IDLE_WAIT)
    exchanges = proxy.take(label)
    count_tokens(exchanges, counter)
    verdict = check(task, repo, before, words(exchanges))
    chats = [e for e in exchanges if e.is_chat]
    return {
        "task": task.name,
        "kind": task.kind,
        "wording": wording,
        "agent": agent.name,
        "prompt": ctx.prompt,
        "solved": verdict.solved,
        "detail": verdict.detail,
        "changed": verdict.changed,
        "wall_seconds": round(wall, 1),
        "timed_out": timed_out,
        "exit_code": exit_code,
        "requests": len(chats),
        "failed_requests": sum(1 for e in exchanges if not 200 <= e.status < 300),
        "other_requests": len(exchanges) - len(chats),
        "prompt_tokens": sum(e.prompt_tokens for e in exchanges),
        "completion_tokens": sum(e.completion_tokens for e in exchanges),
        "token_sources": sorted({e.token_source for e in exchanges if e.token_source}),
        "bytes_sent": sum(e.request_bytes for e in exchanges),
        "bytes_received": sum(e.response_bytes for e in exchanges),
        "reached_model": any(e.is_chat and 200 <= e.status < 300 for e in exchanges),
        "endpoint_settled": settled,
        "unable": unable_reason(exchanges, exit_code, timed_out, err),
        "stdout_tail": out[-_TAIL:],
        "stderr_tail": err[-_TAIL:],
        "exchanges": [e.summary() for e in exchanges],
    }


def words(exchanges: list[Exchange]) -> str:
    """What the model said in the run (its text, not its tool calls)."""
    return "\n".join(e.text for e in exchanges if e.is_chat and 200 <= e.status < 300)


def unable_reason(
    exchanges: list[Exchange], exit_code: int | None, timed_out: bool, err: str
) -> str:
    """Why an agent cannot work with this endpoint at all, or '' when it got answers.

    An agent cannot run when none of its requests was answered and it did not just run out of
    time waiting: every request was refused, or it ended before asking anything.
    """
    if any(200 <= e.status < 300 and e.is_chat for e in exchanges):
        return ""
    refused = [e for e in exchanges if e.status >= 400 or e.status == 0 and e.error]
    if refused:
        last = refused[-1]
        message = f": {' '.join(last.error.split())[:200]}" if last.error else ""
        return f"{last.method} {last.path} answered {last.status} ({len(refused)}×){message}"
    if timed_out:
        return ""
    tail = [line for line in err.strip().splitlines() if line.strip()][-3:]
    return f"ended with exit code {exit_code} before asking the model: {' | '.join(tail)[:300]}"


def _execute(
    argv: list[str], cwd: Path, env: dict[str, str], timeout: float
) -> tuple[int | None, bool, str, str]:
    """Run a command in its own process group; end the group on timeout."""
    logs = cwd.parent / "logs"
    logs.mkdir(exist_ok=True)
    out_path, err_path = logs / "stdout.txt", logs / "stderr.txt"
    with out_path.open("wb") as out, err_path.open("wb") as err:
        process = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            start_new_session=True,
        )
        timed_out = False
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            _end_group(process)
    read = lambda p: p.read_bytes().decode("utf-8", errors="replace")  # noqa: E731
    return (None if timed_out else process.returncode), timed_out, read(out_path), read(err_path)


def _end_group(process: subprocess.Popen[bytes]) -> None:
    for sig, wait in ((signal.SIGTERM, KILL_GRACE), (signal.SIGKILL, 30.0)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def run_plan(
    plan: Plan,
    proxy: RecordingProxy,
    counter: TokenCounter,
    model: str,
    on_record: Callable[[dict[str, Any]], None],
    log: Callable[[str], None] = print,
) -> list[dict[str, Any]]:
    """Every run of the plan, agent by agent; agents that cannot run are reported, not run.

    Agent by agent, so that each agent's runs follow one another and the endpoint's prompt
    cache (llama.cpp keeps the last prompt) serves every agent alike. With a budget, each
    agent gets an equal share of what is left when its turn comes; runs past it are recorded
    as not run.
    """
    records: list[dict[str, Any]] = []
    began = time.monotonic()
    runs = [(task, wording) for task in plan.tasks for wording in plan.wordings]
    for index, agent in enumerate(plan.agents):
        share = None
        if plan.budget_seconds is not None:
            left = plan.budget_seconds - (time.monotonic() - began)
            share = max(0.0, left) / (len(plan.agents) - index)
        agent_began = time.monotonic()
        unable = ""
        if plan.warm_up and runs:
            task, wording = runs[0]
            record = run_one(agent, task, wording, proxy, counter, model, plan, WARM_UP_PROMPT)
            record.update(warmup=True, solved=False, detail="warm-up run (not counted)")
            unable = record["unable"]
            records.append(record)
            on_record(record)
            log(f"{agent.name:<15} warm-up {record['wall_seconds']:>6} s {unable}")
        for task, wording in runs:
            if unable:
                record = _not_run(agent, task, wording, unable)
            elif share is not None and time.monotonic() - agent_began > share:
                record = _not_run(
                    agent,
                    task,
                    wording,
                    "",
                    f"its share of the time budget ({share / 60:.0f} min) was used",
                )
            else:
                record = run_one(agent, task, wording, proxy, counter, model, plan)
                mine = [r for r in records if r["agent"] == agent.name and not r.get("warmup")]
                if record["unable"] and not any(r["reached_model"] for r in mine):
                    unable = record["unable"]
            records.append(record)
            on_record(record)
            log(
                f"{agent.name:<15} {task.name:<22} {wording:<8} "
                f"{'solved' if record['solved'] else 'no':<6} {record['wall_seconds']:>6} s "
                f"{record['requests']:>3} req  {record['detail'][:90]}"
            )
    return records


def _not_run(agent: Agent, task: Task, wording: str, unable: str, why: str = "") -> dict[str, Any]:
    """The record of a run that was not made: the agent cannot run, or its time was up."""
    why = why or f"the agent cannot run with this endpoint ({unable})"
    return {
        "task": task.name,
        "kind": task.kind,
        "wording": wording,
        "agent": agent.name,
        "prompt": task.prompt(wording),
        "solved": False,
        "detail": f"not run: {why}",
        "not_run": True,
        "unable": unable,
        "changed": [],
        "wall_seconds": 0.0,
        "timed_out": False,
        "exit_code": None,
        "requests": 0,
        "failed_requests": 0,
        "other_requests": 0,
        "prompt_tokens": 0,
        "completion_tokens": 0,
        "token_sources": [],
        "bytes_sent": 0,
        "bytes_received": 0,
        "reached_model": False,
        "exchanges": [],
    }
