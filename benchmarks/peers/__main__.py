"""Run the peer benchmark end to end: install, serve, run, judge, write results and chart.

    .venv/bin/python -m benchmarks.peers                      the embedded model, every agent
    .venv/bin/python -m benchmarks.peers --base-url URL [--model M]   any OpenAI-compatible URL
    .venv/bin/python -m benchmarks.peers --install-only --agents mini-swe-agent

See benchmarks/README.md ("Peers") for what is measured and how.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.peers import endpoint as endpoints
from benchmarks.peers.agents import AGENTS, DEFAULT_AGENTS, Agent
from benchmarks.peers.proxy import RecordingProxy, TokenCounter
from benchmarks.peers.report import (
    load,
    markdown,
    summarize,
    task_table,
    update_readme,
    write_chart,
)
from benchmarks.peers.run import Plan, run_plan
from benchmarks.peers.tasks import WORDINGS, load_tasks

RESULTS = Path(__file__).resolve().parents[1] / "results"
README = Path(__file__).resolve().parents[1] / "README.md"
# Chosen so a full run on the embedded model fits in about an hour on 2 cores (README): one
# task of each kind in its natural wording, at most 4 minutes a run, an hour shared evenly.
HOUR_SET = (
    "fix-greeting",
    "add-is-even",
    "rename-function",
    "config-upload-limit",
    "question-price",
    "multi-file-priority",
    "refuse-secret",
)
DEFAULT_TIMEOUT = 240.0
DEFAULT_BUDGET_MINUTES = 60.0
DEFAULT_MAX_STEPS = 10


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.peers", description=__doc__)
    parser.add_argument("--agents", nargs="+", choices=list(AGENTS), default=list(DEFAULT_AGENTS))
    parser.add_argument(
        "--tasks",
        nargs="+",
        default=list(HOUR_SET),
        help="task names, or 'all' (default: one task of each kind)",
    )
    parser.add_argument(
        "--wording", choices=[*WORDINGS, "both"], default="natural", help="default: natural"
    )
    parser.add_argument("--base-url", help="an OpenAI-compatible URL instead of the embedded model")
    parser.add_argument("--model", help="the model at --base-url (default: its first listed)")
    parser.add_argument("--n-ctx", type=int, default=endpoints.DEFAULT_N_CTX)
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="seconds per run")
    parser.add_argument("--max-steps", type=int, default=DEFAULT_MAX_STEPS)
    parser.add_argument(
        "--budget-minutes",
        type=float,
        default=DEFAULT_BUDGET_MINUTES,
        help="start no new task after this long (0: no budget)",
    )
    parser.add_argument("--no-sandbox", action="store_true", help="run agents without bwrap")
    parser.add_argument("--no-warm-up", action="store_true", help="no untimed first run per agent")
    parser.add_argument("--install-only", action="store_true")
    parser.add_argument(
        "--report", type=Path, metavar="RESULTS", help="only the table and chart of a results file"
    )
    parser.add_argument("--out", type=Path, help="results file (default: results/peers-….json)")
    parser.add_argument(
        "--add-to",
        type=Path,
        metavar="RESULTS",
        help="run --agents on the tasks and wordings of an earlier results file and add them "
        "to it (its endpoint must be the one used now)",
    )
    parser.add_argument("--no-chart", action="store_true")
    parser.add_argument(
        "--readme", action="store_true", help="write the table into benchmarks/README.md"
    )
    return parser.parse_args(argv)


def install(agents: list[Agent]) -> dict[str, str]:
    """Install every agent; the ones that failed, with why."""
    failed = {}
    for agent in agents:
        try:
            agent.install()
        except (OSError, RuntimeError) as exc:
            failed[agent.name] = f"cannot install: {exc}"[:500]
            print(failed[agent.name], file=sys.stderr)
    return failed


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    if args.report:
        publish(args.report, chart=not args.no_chart, readme=args.readme)
        return 0
    agents = [AGENTS[name] for name in args.agents]
    failed = install(agents)
    if args.install_only:
        return 1 if failed else 0
    known = load_tasks()
    unknown = set(args.tasks) - {t.name for t in known} - {"all"}
    if unknown:
        raise SystemExit(f"no such task: {', '.join(sorted(unknown))}")
    tasks = [t for t in known if "all" in args.tasks or t.name in args.tasks]
    wordings = list(WORDINGS) if args.wording == "both" else [args.wording]
    earlier = load(args.add_to) if args.add_to else None
    if earlier is not None:
        tasks = [t for t in known if t.name in earlier["plan"]["tasks"]]
        wordings = list(earlier["plan"]["wordings"])
    if args.base_url:
        point = endpoints.remote(args.base_url, args.model)
    else:
        print("starting the embedded model…", flush=True)
        point = endpoints.embedded(n_ctx=args.n_ctx)
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    kind = "embedded" if not args.base_url else "url"
    out = args.add_to or args.out or RESULTS / f"peers-{started[:10]}-{kind}.json"
    if earlier is not None and earlier["endpoint"]["model"] != point.model:
        if point.stop is not None:
            point.stop()
        raise SystemExit(f"{args.add_to} was measured on {earlier['endpoint']['model']}")
    workdir = Path(tempfile.mkdtemp(prefix="toolgate-peers-"))
    plan = Plan(
        tasks=tasks,
        wordings=wordings,
        agents=[a for a in agents if a.name not in failed],
        timeout=args.timeout,
        max_steps=args.max_steps,
        budget_seconds=args.budget_minutes * 60 if args.budget_minutes else None,
        sandbox=not args.no_sandbox,
        workdir=workdir,
        warm_up=not args.no_warm_up,
    )
    about: dict[str, dict[str, Any]] = {
        a.name: {
            "package": a.package,
            "version": a.installed_version() if a.name not in failed else a.version,
            "pinned": a.version,
            "mode": a.mode,
            "install_error": failed.get(a.name, ""),
        }
        for a in agents
    }
    doc: dict[str, Any] = {
        "started_at": started,
        "machine": {
            "cores": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(),
            "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
        },
        "endpoint": {"model": point.model, **point.info},
        "plan": {
            "tasks": [t.name for t in tasks],
            "wordings": wordings,
            "agents": [a.name for a in agents],
            "timeout_seconds": args.timeout,
            "max_steps": args.max_steps,
            "budget_minutes": args.budget_minutes,
            "sandbox": plan.sandbox,
            "warm_up": plan.warm_up,
        },
        "agents": about,
        "records": [],
    }
    if earlier is not None:
        # The agents run now replace what the file held of them; the rest stays as measured.
        names = {a.name for a in agents}
        earlier["records"] = [r for r in earlier["records"] if r["agent"] not in names]
        merged = {**earlier["agents"], **about}
        earlier["agents"] = {n: merged[n] for n in AGENTS if n in merged}  # the usual order
        earlier["plan"]["agents"] = list(earlier["agents"])
        earlier.setdefault("additions", []).append(
            {
                "agents": sorted(names),
                "started_at": started,
                "load_average_at_start": doc["machine"]["load_average_at_start"],
                "budget_minutes": args.budget_minutes,
            }
        )
        doc, about = earlier, earlier["agents"]
    records: list[dict[str, Any]] = doc["records"]

    def save(record: dict[str, Any] | None = None) -> None:
        if record is not None:
            records.append(record)
        doc["finished_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        doc["summary"] = summarize(records, about)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")

    try:
        with RecordingProxy(
            point.base_url, os.environ.get("OPENAI_API_KEY", "") if args.base_url else ""
        ) as proxy:
            run_plan(plan, proxy, TokenCounter(point.base_url), point.model, save)
    finally:
        if point.stop is not None:
            point.stop()
    save()
    publish(out, chart=not args.no_chart, readme=args.readme)
    return 0


def publish(out: Path, *, chart: bool, readme: bool) -> None:
    """Print the table of a results file, draw its chart, and put both in the README."""
    out = out.resolve()
    doc = load(out)
    wordings = doc["plan"]["wordings"]
    table = markdown(doc["summary"], wordings)
    print(table)
    print(f"results: {out}")
    png = out.with_suffix(".png")
    if chart:
        problem = write_chart(out, png)
        print(problem or f"chart: {png}")
    if readme:
        link = f"results/{out.name}" if out.parent == RESULTS else str(out)
        block = "\n\n".join(
            [
                f"From `{link}`" + (f", chart `{png.name}` beside it:" if png.exists() else ":"),
                *(
                    [f"![peers](results/{png.name})"]
                    if png.exists() and out.parent == RESULTS
                    else []
                ),
                table,
                task_table(doc["records"], doc["plan"]["agents"]),
            ]
        )
        update_readme(README, block)


if __name__ == "__main__":
    sys.exit(main())
