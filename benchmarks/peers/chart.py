"""Draw the peers chart from a results file (run by the chart's own venv, with matplotlib).

    python chart.py RESULTS.json OUT.png

Left: tasks solved per agent, one bar per wording. Right: tokens per solved task (log scale);
an agent that solved nothing has no bar and says so.
"""

from __future__ import annotations

import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(results: str, out: str) -> None:
    doc = json.loads(open(results, encoding="utf-8").read())
    rows = doc["summary"]
    wordings = doc["plan"]["wordings"]
    names = [r["agent"] for r in rows]
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.8))
    width = 0.8 / max(1, len(wordings))
    for i, wording in enumerate(wordings):
        xs = [x + (i - (len(wordings) - 1) / 2) * width for x in range(len(rows))]
        solved = [r["solved_by_wording"].get(wording, 0) for r in rows]
        bars = left.bar(xs, solved, width, label=wording)
        left.bar_label(bars, fontsize=8)
    runs = max((max(r["runs_by_wording"].values(), default=0) for r in rows), default=0)
    left.set_ylim(0, max(1, runs) * 1.15)
    left.set_ylabel(f"tasks solved (of {runs} per wording)")
    left.set_title("Solved tasks")
    left.set_xticks(range(len(rows)), names, rotation=30, ha="right")
    left.legend()
    values = [r["tokens_per_solved"] for r in rows]
    bars = right.bar(range(len(rows)), [v or 0 for v in values], 0.6, color="tab:orange")
    for x, (bar, value, row) in enumerate(zip(bars, values, rows, strict=True)):
        label = f"{value:,}" if value else ("cannot run" if row["unable"] else "none solved")
        right.annotate(
            label, (x, bar.get_height()), ha="center", va="bottom", fontsize=8, rotation=90
        )
    if any(values):
        right.set_yscale("log")
    else:
        right.set_ylim(0, 1)
        right.set_yticks([])
    right.set_ylabel("tokens per solved task (all runs' tokens / tasks solved)")
    right.set_title("Tokens per solved task (lower is better)")
    right.set_xticks(range(len(rows)), names, rotation=30, ha="right")
    endpoint = doc["endpoint"]
    fig.suptitle(
        f"Same tasks, same endpoint: {endpoint.get('model_title') or endpoint.get('model')} "
        f"({doc['started_at'][:10]})",
        fontsize=11,
    )
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
