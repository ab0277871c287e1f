"""`toolgate run --continue` / `--session ID` and `toolgate sessions`, in a subprocess."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.helpers import toolgate, toolgate_task
from tests.support.scripted_model import ScriptedModel, tool_call


def _run(repo: Path, scripted: ScriptedModel, task: str, *extra: str):  # type: ignore[no-untyped-def]
    return toolgate_task("run", task, repo, scripted, "--approve", "deny", *extra)


def _sessions(repo: Path) -> list[dict[str, object]]:
    done = toolgate("sessions", "--workspace", str(repo), "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def test_continue_and_session_carry_the_conversation(repo: Path, scripted: ScriptedModel) -> None:
    scripted.script = [
        tool_call("read_file", path="README.md"),
        {"content": "The title is Tiny project."},
        {"content": "It is called Tiny project, as I said."},
        {"content": "A fresh start."},
        {"content": "Still about the title."},
    ]
    first = _run(repo, scripted, "What is the title of the README?")
    assert first.returncode == 0, first.stderr
    second = _run(repo, scripted, "Say it again.", "--continue")
    assert second.returncode == 0, second.stderr
    request = scripted.requests[2]["messages"]
    said = [(m["role"], m.get("content")) for m in request if m["role"] != "system"]
    assert said[0] == ("user", "What is the title of the README?")
    assert ("assistant", "The title is Tiny project.") in said
    assert any(m["role"] == "tool" and "Tiny project" in m["content"] for m in request)
    assert said[-1] == ("user", "Say it again.")

    listed = _sessions(repo)
    assert len(listed) == 1 and listed[0]["turns"] == 2
    assert listed[0]["title"] == "What is the title of the README?"
    session_id = str(listed[0]["id"])
    assert f"session {session_id}" in second.stderr

    fresh = _run(repo, scripted, "Something else.")  # without a flag: a new session
    assert fresh.returncode == 0, fresh.stderr
    assert [m["role"] for m in scripted.requests[3]["messages"]] == ["system", "user"]
    again = _run(repo, scripted, "Back to the title.", "--session", session_id)
    assert again.returncode == 0, again.stderr
    assert "Say it again." in json.dumps(scripted.requests[4]["messages"])
    assert "Something else." not in json.dumps(scripted.requests[4]["messages"])
    assert {s["turns"] for s in _sessions(repo)} == {1, 3}


def test_a_long_first_message_is_titled_alike_in_the_list_and_the_session(
    repo: Path, scripted: ScriptedModel
) -> None:
    task = "Add a function mul(a, b) to calc.py that returns a * b, and a test in test_calc.py"
    scripted.script = [{"content": "Done."}]
    assert _run(repo, scripted, task).returncode == 0
    (listed,) = _sessions(repo)
    assert listed["title"] == "Add a function mul(a, b) to calc.py that returns a * b, a…"
    shown = toolgate("sessions", "show", str(listed["id"]), "--workspace", str(repo))
    assert shown.stdout.splitlines()[0] == f"session {listed['id']}: {listed['title']}"


def test_an_unknown_session_is_a_usage_error(repo: Path, scripted: ScriptedModel) -> None:
    done = _run(repo, scripted, "x", "--session", "s-does-not-exist")
    assert done.returncode == 2
    assert "unknown session 's-does-not-exist'" in done.stderr
    assert scripted.requests == []
    nothing = _run(repo, scripted, "x", "--continue")
    assert nothing.returncode == 2 and "no session to continue" in nothing.stderr


def test_sessions_list_show_and_delete(repo: Path, scripted: ScriptedModel) -> None:
    scripted.script = [
        tool_call("read_file", path="README.md"),
        {"content": "The title is Tiny project."},
        {"content": "Once more: Tiny project."},
    ]
    assert _run(repo, scripted, "What is the title?").returncode == 0
    one = toolgate("sessions", "list", "--workspace", str(repo))
    assert " 1 turn   What is the title?" in one.stdout
    assert _run(repo, scripted, "Again?", "--continue").returncode == 0
    listed = toolgate("sessions", "list", "--workspace", str(repo))
    assert listed.returncode == 0, listed.stderr
    (line,) = listed.stdout.splitlines()
    session_id = line.split()[0]
    assert "2 turns" in line and "What is the title?" in line

    shown = toolgate("sessions", "show", session_id, "--workspace", str(repo))
    assert shown.returncode == 0, shown.stderr
    said = shown.stdout.splitlines()
    assert said[0] == f"session {session_id}: What is the title?"
    order = [
        next(
            i
            for i, s in enumerate(said)
            if s.startswith("you (") and s.endswith("What is the title?")
        ),
        said.index("  → read_file [ok] — README.md"),
        said.index("assistant: The title is Tiny project."),
        next(i for i, s in enumerate(said) if s.endswith("Again?")),
        said.index("assistant: Once more: Tiny project."),
    ]
    assert order == sorted(order)

    unknown = toolgate("sessions", "show", "s-nope", "--workspace", str(repo))
    assert unknown.returncode == 1 and "unknown session 's-nope'" in unknown.stderr
    deleted = toolgate("sessions", "delete", session_id, "--workspace", str(repo))
    assert deleted.returncode == 0 and f"deleted session {session_id}" in deleted.stderr
    assert _sessions(repo) == []
    again = toolgate("sessions", "delete", session_id, "--workspace", str(repo))
    assert again.returncode == 1
