"""The results: a summary per agent, a Markdown table, and the chart.

"Tokens per solved task" is every token an agent spent over all its runs (prompt and
completion, the failed runs included) divided by the tasks it solved: what one solution cost.
"""

from __future__ import annotations

import json
import re
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

from benchmarks.peers.agents import CACHE

CHART_REQUIREMENT = "matplotlib==3.10.7"
CHART_SCRIPT = Path(__file__).with_name("chart.py")
README_START = "<!-- peers:start -->"
README_END = "<!-- peers:end -->"


def summarize(
    records: list[dict[str, Any]], agents: dict[str, dict[str, Any]]
) -> list[dict[str, Any]]:
    """One line per agent, in the order the agents were given."""
    rows = []
    for name, about in agents.items():
        warm = [r for r in records if r["agent"] == name and r.get("warmup")]
        mine = [r for r in records if r["agent"] == name and not r.get("warmup")]
        ran = [r for r in mine if not r.get("not_run")]
        solved = [r for r in mine if r["solved"]]
        tokens = sum(r["prompt_tokens"] + r["completion_tokens"] for r in mine)
        reasons = sorted({r["unable"] for r in mine + warm if r.get("unable")})
        rows.append(
            {
                "agent": name,
                "version": about.get("version", ""),
                "mode": about.get("mode", ""),
                "runs": len(mine),
                "ran": len(ran),
                "solved": len(solved),
                "solved_by_wording": {
                    w: sum(1 for r in solved if r["wording"] == w)
                    for w in sorted({r["wording"] for r in mine})
                },
                "runs_by_wording": {
                    w: sum(1 for r in mine if r["wording"] == w)
                    for w in sorted({r["wording"] for r in mine})
                },
                "reached_model": sum(1 for r in mine if r["reached_model"]),
                "timed_out": sum(1 for r in mine if r["timed_out"]),
                "median_seconds": round(statistics.median([r["wall_seconds"] for r in ran]), 1)
                if ran
                else None,
                "total_seconds": round(sum(r["wall_seconds"] for r in mine), 1),
                "requests": sum(r["requests"] for r in mine),
                "prompt_tokens": sum(r["prompt_tokens"] for r in mine),
                "completion_tokens": sum(r["completion_tokens"] for r in mine),
                "tokens_per_solved": round(tokens / len(solved)) if solved else None,
                "bytes_sent": sum(r["bytes_sent"] for r in mine),
                "token_sources": sorted({s for r in mine for s in r.get("token_sources", [])}),
                "unable": reasons[0]
                if reasons and not any(r["reached_model"] for r in mine)
                else "",
                "install_error": about.get("install_error", ""),
                "warm_up_seconds": round(sum(r["wall_seconds"] for r in warm), 1),
            }
        )
    return rows


def _n(value: int | None) -> str:
    return "—" if value is None else f"{value:,}"


def markdown(rows: list[dict[str, Any]], wordings: list[str]) -> str:
    """The table for benchmarks/README.md."""
    head = ["agent", "version"]
    head += [f"solved ({w})" for w in wordings]
    head += ["median s/run", "requests", "prompt tokens", "completion tokens"]
    head += ["tokens per solved task", "KB sent", "note"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in rows:
        note = row["install_error"] or (
            f"cannot run with this endpoint: {row['unable']}" if row["unable"] else ""
        )
        if row["timed_out"]:
            note = (
                note + "; " if note else ""
            ) + f"{row['timed_out']} of {row['ran']} runs timed out"
        note = " ".join(note.split())
        note = note if len(note) <= 200 else note[:199] + "…"
        cells = [f"**{row['agent']}**", row["version"]]
        cells += [
            f"{row['solved_by_wording'].get(w, 0)}/{row['runs_by_wording'].get(w, 0)}"
            for w in wordings
        ]
        cells += [
            "—" if row["median_seconds"] is None else f"{row['median_seconds']:.0f}",
            _n(row["requests"]),
            _n(row["prompt_tokens"]),
            _n(row["completion_tokens"]),
            _n(row["tokens_per_solved"]),
            f"{row['bytes_sent'] / 1e3:,.0f}",
            note.replace("|", "/"),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def task_table(records: list[dict[str, Any]], agents: list[str]) -> str:
    """Which agent solved which task, one row per task and wording."""
    records = [r for r in records if not r.get("warmup")]
    keys = sorted({(r["task"], r["wording"]) for r in records})
    lines = ["| task | wording | " + " | ".join(agents) + " |", "|---|---|" + "---|" * len(agents)]
    for task, wording in keys:
        cells = []
        for agent in agents:
            r = next(
                (
                    x
                    for x in records
                    if (x["task"], x["wording"], x["agent"]) == (task, wording, agent)
                ),
                None,
            )
            cells.append(
                "" if r is None else "✓" if r["solved"] else "·" if r.get("not_run") else "✗"
            )
        lines.append(f"| {task} | {wording} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def write_chart(results: Path, png: Path, log: Any = print) -> str:
    """Draw the chart with matplotlib from a venv of the benchmark's own; '' or why not."""
    venv = CACHE / "chart" / "venv"
    python = venv / "bin" / "python"
    try:
        if not python.exists():
            log(f"installing {CHART_REQUIREMENT} for the chart into {venv}")
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=600)
        probe = subprocess.run([str(python), "-c", "import matplotlib"], capture_output=True)
        if probe.returncode != 0:
            subprocess.run(
                [
                    str(python),
                    "-m",
                    "pip",
                    "install",
                    "-q",
                    "--disable-pip-version-check",
                    CHART_REQUIREMENT,
                ],
                check=True,
                timeout=1200,
                capture_output=True,
            )
        done = subprocess.run(
            [str(python), str(CHART_SCRIPT), str(results), str(png)],
            capture_output=True,
            text=True,
            timeout=300,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return f"no chart: {exc}"
    return "" if done.returncode == 0 else f"no chart: {done.stderr.strip()[-500:]}"


def update_readme(readme: Path, block: str) -> None:
    """Replace the peers block of the README (between its markers) with the new one."""
    text = readme.read_text(encoding="utf-8")
    new = f"{README_START}\n{block}\n{README_END}"
    pattern = re.compile(re.escape(README_START) + r".*?" + re.escape(README_END), re.S)
    if pattern.search(text):
        text = pattern.sub(lambda _: new, text)
    else:
        text = text.rstrip("\n") + "\n\n" + new + "\n"
    readme.write_text(text, encoding="utf-8")


def load(results: Path) -> dict[str, Any]:
    """A results file."""
    return json.loads(results.read_text(encoding="utf-8"))
