"""`toolgate runs list|show` and the run log they read: names, times, tokens, older logs."""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path

from tests.cli.helpers import toolgate, toolgate_task
from tests.support.scripted_model import ScriptedModel, tool_call

USAGE = [
    {"prompt_tokens": 120, "completion_tokens": 15, "total_tokens": 135},
    {"prompt_tokens": 160, "completion_tokens": 9, "total_tokens": 169},
]


def _one_log(repo: Path) -> dict[str, object]:
    (path,) = (repo / ".toolgate" / "runs").glob("*.json")
    return json.loads(path.read_text())  # type: ignore[no-any-return]


def test_a_run_log_has_one_naming_style_iso_times_and_the_tokens_used(
    repo: Path, scripted: ScriptedModel
) -> None:
    scripted.script = [
        {**tool_call("write_file", path="notes.txt", content="a\n"), "usage": USAGE[0]},
        {"content": "Wrote the notes.", "usage": USAGE[1]},
    ]
    done = toolgate_task("run", "Write notes.", repo, scripted, "--approve", "auto")
    assert done.returncode == 0, done.stderr
    assert all(r["stream_options"] == {"include_usage": True} for r in scripted.requests)
    assert "tokens used: 304 (280 prompt, 24 completion)" in done.stderr
    log = _one_log(repo)
    events = log["events"]
    assert isinstance(events, list)
    for event in events:
        assert re.fullmatch(r"[a-z]+(_[a-z]+)*", event["type"]), event["type"]
        assert datetime.fromisoformat(event["time"]).utcoffset() is not None
    used = [e for e in events if e["type"] == "llm_usage"]
    assert [e["total_tokens"] for e in used] == [135, 169]
    assert log["account"]["tokens"] == {"prompt": 280, "completion": 24, "total": 304}  # type: ignore[index]


def test_no_usage_from_the_endpoint_means_no_token_line(
    repo: Path, scripted: ScriptedModel
) -> None:
    scripted.script = [{"content": "Hello."}]
    done = toolgate_task("run", "Hi.", repo, scripted, "--approve", "deny")
    assert done.returncode == 0, done.stderr
    assert "tokens used" not in done.stderr
    assert _one_log(repo)["account"]["tokens"] is None  # type: ignore[index]


def test_runs_list_and_show_read_a_run_as_a_person_does(
    repo: Path, scripted: ScriptedModel
) -> None:
    scripted.script = [
        tool_call("read_file", path="README.md"),
        {**tool_call("write_file", path="notes.txt", content="a\nb\n"), "usage": USAGE[0]},
        tool_call("git_commit", message="Add notes"),
        {"content": "Wrote the notes; the commit was refused."},
    ]
    done = toolgate_task("run", "Write notes and commit.", repo, scripted, "--approve", "deny")
    assert done.returncode == 1, done.stderr
    run_id = str(_one_log(repo)["run_id"])

    listed = toolgate("runs", "list", "--workspace", str(repo))
    assert listed.returncode == 0, listed.stderr
    assert run_id in listed.stdout and "incomplete" in listed.stdout
    assert " 4 steps " in listed.stdout
    assert "Write notes and commit." in listed.stdout
    bare = toolgate("runs", "--workspace", str(repo))
    assert bare.returncode == 0 and bare.stdout == listed.stdout

    shown = toolgate("runs", "show", run_id, "--workspace", str(repo))
    assert shown.returncode == 0, shown.stderr
    text = shown.stdout
    assert "task: Write notes and commit." in text
    assert f"model: {scripted.model} at {scripted.base_url} (native tool calling)" in text
    steps = [line for line in text.splitlines() if line.startswith("step ")]
    assert steps == ["step 1", "step 2 · 135 tokens", "step 3", "step 4"]
    assert '→ read_file path="README.md"' in text and "✓ auto" in text
    assert '→ write_file path="notes.txt" content=[2 lines]' in text
    assert "✗ rejected — the change to notes.txt was refused by --approve deny" in text
    assert "✗ rejected — refused by --approve deny, nobody was asked" in text
    assert "the person rejected" not in text
    assert "Wrote the notes; the commit was refused." in text
    assert "proposals: 0 accepted, 0 partly accepted, 1 rejected" in text
    assert "tokens used: 135" in text
    assert text.rstrip().splitlines()[-1].startswith("status: incomplete — ")

    as_json = toolgate("runs", "show", run_id, "--workspace", str(repo), "--json")
    assert json.loads(as_json.stdout)["run_id"] == run_id


def test_runs_show_reads_a_log_older_toolgates_wrote(repo: Path) -> None:
    # CamelCase event names, epoch-second times and no account: how logs were once written.
    old = {
        "run_id": "r-20250101-000000-abcdef",
        "task": "Fix it",
        "profile": "developer",
        "model": "m",
        "base_url": "http://127.0.0.1:1/v1",
        "tool_calling_mode": "native",
        "status": "completed",
        "reason": None,
        "started_at": "2025-01-01T00:00:00.000+00:00",
        "finished_at": "2025-01-01T00:00:05.000+00:00",
        "answer": "Fixed.",
        "steps": [
            {
                "step": 1,
                "assistant_text": "",
                "calls": [
                    {
                        "id": "c1",
                        "name": "write_file",
                        "arguments": {"path": "a.py", "content": "x = 1\n"},
                        "decision": "approved",
                        "result": {"success": True, "data": {"message": "applied"}},
                    }
                ],
            },
            {"step": 2, "assistant_text": "Fixed.", "calls": []},
        ],
        "events": [
            {"type": "run_started", "run_id": "r-20250101-000000-abcdef", "time": 1735689600.0},
            {
                "type": "ProposalCreated",
                "time": 1735689601.5,
                "proposal_id": "p-1",
                "path": "a.py",
                "diff": "--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x = 0\n+x = 1\n",
            },
            {
                "type": "ProposalResolved",
                "time": 1735689602.0,
                "proposal_id": "p-1",
                "status": "accepted",
                "hunks_applied": [0],
            },
        ],
    }
    runs = repo / ".toolgate" / "runs"
    runs.mkdir(parents=True)
    (runs / "r-20250101-000000-abcdef.json").write_text(json.dumps(old))
    (runs / "r-broken.json").write_text("{not json")

    listed = toolgate("runs", "list", "--workspace", str(repo))
    assert listed.returncode == 0 and "r-20250101-000000-abcdef" in listed.stdout
    shown = toolgate("runs", "show", "r-20250101-000000-abcdef", "--workspace", str(repo))
    assert shown.returncode == 0, shown.stderr
    assert "changed: a.py +1 -1" in shown.stdout
    assert "proposals: 1 accepted" in shown.stdout
    assert "✓ approved — applied" in shown.stdout
    as_json = json.loads(
        toolgate(
            "runs", "show", "r-20250101-000000-abcdef", "--workspace", str(repo), "--json"
        ).stdout
    )
    assert [e["type"] for e in as_json["events"]] == [
        "run_started",
        "proposal_created",
        "proposal_resolved",
    ]
    assert as_json["events"][1]["time"] == "2025-01-01T00:00:01.500+00:00"

    broken = toolgate("runs", "show", "r-broken", "--workspace", str(repo))
    assert broken.returncode == 1 and "cannot be read" in broken.stderr
    missing = toolgate("runs", "show", "r-nope", "--workspace", str(repo))
    assert missing.returncode == 1 and "no run r-nope" in missing.stderr
