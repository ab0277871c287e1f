"""`@` mentions: the context the person points at, read from a real workspace and real git.

The module alone first (its blocks, its cuts, its refusals), then whole turns against the
scripted model: the model's request carries what was attached, cut with a note when too big.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import git
from tests.support.scripted_model import ScriptedModel

from toolgate.agent.events import NOTICE, Event, EventBus
from toolgate.config import load_config
from toolgate.review.reviewer import AutoReviewer
from toolgate.session import Endpoint, SessionService
from toolgate.session.mentions import (
    IN_TERMINAL,
    Pointed,
    Problem,
    Resource,
    Selection,
    attach,
    completions,
    find_mentions,
)
from toolgate.workspace import Workspace


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, "utf-8")


def test_mentions_are_words_opening_with_at() -> None:
    text = 'look at @src/app.py, @"my notes.txt" and @diff:staged; mail me@example.com @diff'
    assert find_mentions(text) == ["src/app.py,", "my notes.txt", "diff:staged;", "diff"]


async def test_a_file_and_a_folder_are_attached_as_the_person_sees_them(repo: Path) -> None:
    write(repo / "src/app.py", "def main():\n    return 1\n")
    write(repo / "src/util.py", "X = 1\n")
    workspace = Workspace(repo)
    # The editor's unsaved text of app.py is what the person sees, not the disk's.
    workspace.buffers = lambda: {(repo / "src/app.py").resolve(): "def main():\n    return 2\n"}
    attached = await attach(workspace, "why does @src/app.py fail? see @src.", None, 100_000)

    assert "return 2" in attached.note and "return 1" not in attached.note
    assert 'unsaved="true"' in attached.note
    assert "src/util.py (6 bytes)" in attached.note  # the folder, listed
    assert [i["mention"] for i in attached.items] == ["@src/app.py", "@src"]
    assert [i["kind"] for i in attached.items] == ["file", "folder"]
    assert attached.refused == []


async def test_a_path_outside_the_workspace_is_refused_as_the_tools_refuse_it(
    repo: Path, tmp_path: Path
) -> None:
    write(tmp_path / "secret.txt", "the secret")
    (repo / "link").symlink_to(tmp_path / "secret.txt")
    attached = await attach(
        Workspace(repo), "read @../secret.txt and @/etc/passwd and @link", None, 100_000
    )
    assert "the secret" not in attached.note and "root:" not in attached.note
    assert attached.items == []
    assert attached.refused == [
        "@../secret.txt: '..' is not allowed in paths: '../secret.txt'",
        "@/etc/passwd: absolute paths are not allowed: '/etc/passwd'; use a path relative "
        "to the workspace",
        "@link: 'link' resolves outside the workspace (through a symlink)",
    ]
    assert "Not attached: @../secret.txt" in attached.note  # the model is told too
    assert "not attached: @../secret.txt" in attached.summary()


async def test_a_word_naming_nothing_is_left_as_the_persons_words(repo: Path) -> None:
    attached = await attach(Workspace(repo), "use @property here", None, 100_000)
    assert attached.note == "" and attached.items == [] and attached.refused == []


async def test_the_diff_comes_from_git_working_tree_or_staged(repo: Path) -> None:
    write(repo / "README.md", "# Tiny project\nchanged line\n")
    write(repo / "new.py", "print('new')\n")
    git(repo, "add", "new.py")
    workspace = Workspace(repo)

    tree = await attach(workspace, "review @diff", None, 100_000)
    assert "+changed line" in tree.note and "+print('new')" in tree.note
    assert tree.items[0]["label"] == "working tree changes, 2 files"

    staged = await attach(workspace, "review @diff:staged", None, 100_000)
    assert "+print('new')" in staged.note and "changed line" not in staged.note
    assert staged.items[0]["label"] == "staged changes, 1 file"


async def test_the_diff_outside_git_is_refused_with_the_reason(tmp_path: Path) -> None:
    attached = await attach(Workspace(tmp_path), "@diff", None, 100_000)
    assert attached.items == []
    assert (
        attached.refused[0].startswith("@diff: ")
        and "not in a git repository" in (attached.refused[0])
    )


async def test_selection_and_problems_come_from_the_editor_or_are_explained(repo: Path) -> None:
    write(repo / "a.py", "one\ntwo\nthree\nfour\n")
    workspace = Workspace(repo)
    pointed = Pointed(
        selection=Selection("a.py", 2, 3),
        problems=[Problem("a.py", 4, "unknown name", "error", "pyright")],
    )
    attached = await attach(workspace, "fix @selection given @problems", pointed, 100_000)
    assert "two\nthree\n" in attached.note and "one" not in attached.note
    assert "a.py:4: error [pyright]: unknown name" in attached.note
    assert [i["label"] for i in attached.items] == ["a.py, lines 2-3", "1 problem"]

    terminal = await attach(
        workspace, "fix @selection given @problems", Pointed(unavailable=IN_TERMINAL), 100_000
    )
    assert terminal.items == []
    assert terminal.refused == [
        f"@selection: no selection: {IN_TERMINAL}",
        f"@problems: no problems: {IN_TERMINAL}",
    ]


async def test_a_selection_outside_the_workspace_is_refused(repo: Path) -> None:
    pointed = Pointed(selection=Selection("/etc/passwd", 1, 2))
    attached = await attach(Workspace(repo), "@selection", pointed, 100_000)
    assert attached.items == [] and "absolute paths are not allowed" in attached.refused[0]


async def test_what_does_not_fit_is_cut_and_says_so(repo: Path) -> None:
    write(repo / "big.txt", "x" * 5_000)
    write(repo / "small.txt", "small text")
    attached = await attach(Workspace(repo), "@big.txt @small.txt", None, 1_000)
    assert "x" * 1_000 in attached.note and "x" * 1_001 not in attached.note
    assert "[cut here to fit the model's context window: 1000 of 5000 bytes kept" in (attached.note)
    assert "small text" not in attached.note
    assert "[left out to fit the model's context window: 10 bytes]" in attached.note
    assert attached.items[0]["cut"] == "1000 of 5000 bytes kept"
    assert "cut to fit" in attached.summary()


async def test_resources_embedded_and_linked(repo: Path, tmp_path: Path) -> None:
    write(repo / "doc.md", "linked text")
    write(tmp_path / "outside.md", "outside text")
    pointed = Pointed(
        resources=[
            Resource("file:///elsewhere/notes.md", "embedded text", "notes.md"),
            Resource((repo / "doc.md").as_uri(), None, "doc.md"),
            Resource((tmp_path / "outside.md").as_uri(), None, "outside.md"),
        ]
    )
    attached = await attach(Workspace(repo), "look", pointed, 100_000)
    assert "embedded text" in attached.note and "linked text" in attached.note
    assert "outside text" not in attached.note
    assert len(attached.refused) == 1 and "outside the workspace" in attached.refused[0]


def test_completions_offer_keywords_and_paths(repo: Path) -> None:
    write(repo / "src/app.py", "")
    write(repo / "src/api.py", "")
    workspace = Workspace(repo)
    assert completions(workspace, "@d") == ["@diff", "@diff:staged"]
    assert completions(workspace, "@sr") == ["@src/"]
    assert completions(workspace, "@src/ap") == ["@src/api.py", "@src/app.py"]
    assert completions(workspace, "@R") == ["@README.md"]
    assert completions(workspace, "@../") == []


# -- whole turns ---------------------------------------------------------------------------


def _user(body: dict[str, Any]) -> str:
    return [m["content"] for m in body["messages"] if m["role"] == "user"][-1]


async def _turn(
    repo: Path,
    scripted: ScriptedModel,
    text: str,
    pointed: Pointed | None = None,
    overrides: dict[str, Any] | None = None,
) -> list[Event]:
    settings = load_config(repo, overrides=overrides)
    service = SessionService(repo, lambda: settings)
    events: list[Event] = []
    bus = EventBus()
    bus.subscribe(events.append)
    outcome = await service.turn(
        service.claim(new=True),
        text,
        config=settings,
        reviewer=AutoReviewer(Workspace(repo)),
        bus=bus,
        endpoint=Endpoint(scripted.base_url, scripted.model),
        pointed=pointed,
    )
    assert outcome.status == "completed", outcome.reason
    return events


async def test_a_turn_sends_the_attached_file_before_the_persons_words(
    repo: Path, scripted: ScriptedModel
) -> None:
    write(repo / "src/app.py", "def main():\n    return 41\n")
    scripted.script = [{"content": "It returns 41."}]
    events = await _turn(repo, scripted, "what does @src/app.py return?")

    sent = _user(scripted.requests[0])
    assert sent.index("return 41") < sent.index("what does @src/app.py return?")
    assert sent.endswith("what does @src/app.py return?")  # the words as typed, last
    (shown,) = [e for e in events if e.type == NOTICE and "attached" in e.fields]
    assert shown.fields["message"] == "attached: @src/app.py (file, 2 lines)"
    run_log = json.loads(next((repo / ".toolgate/runs").glob("*.json")).read_text())
    assert run_log["attached"][0]["mention"] == "@src/app.py"
    assert run_log["task"] == "what does @src/app.py return?"


async def test_a_turn_cuts_a_file_too_big_for_the_window_and_says_so(
    repo: Path, scripted: ScriptedModel
) -> None:
    write(repo / "big.log", "line of the log\n" * 4_000)  # 64,000 bytes
    scripted.script = [{"content": "Seen."}]
    events = await _turn(
        repo, scripted, "summarise @big.log", overrides={"model": {"context_tokens": 8_192}}
    )

    sent = _user(scripted.requests[0])
    assert "[cut here to fit the model's context window:" in sent
    assert len(sent.encode()) < 6_144 * 3 // 3 + 1_000  # a third of what a request may hold
    (shown,) = [e for e in events if e.type == NOTICE and "attached" in e.fields]
    assert "cut to fit" in shown.fields["message"]


async def test_a_turn_refuses_an_outside_path_and_tells_the_model(
    repo: Path, scripted: ScriptedModel, tmp_path: Path
) -> None:
    write(tmp_path / "secret.txt", "the secret")
    scripted.script = [{"content": "I cannot see it."}]
    events = await _turn(repo, scripted, "read @../secret.txt")

    sent = _user(scripted.requests[0])
    assert "the secret" not in sent
    assert "Not attached: @../secret.txt: '..' is not allowed in paths" in sent
    (shown,) = [e for e in events if e.type == NOTICE and "attached" in e.fields]
    assert shown.fields["not_attached"] == [
        "@../secret.txt: '..' is not allowed in paths: '../secret.txt'"
    ]


async def test_tests_attaches_the_last_test_runs_failures(
    repo: Path, scripted: ScriptedModel, monkeypatch: Any
) -> None:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    write(repo / "test_calc.py", "def test_adds():\n    assert 1 + 1 == 3, 'bad sum'\n")
    settings = load_config(repo)
    service = SessionService(repo, lambda: settings)
    ran = await service.run_tests(
        "pytest -q", reviewer=AutoReviewer(Workspace(repo)), bus=EventBus()
    )
    assert ran.data["summary"]["failed"] == 1

    scripted.script = [{"content": "It adds wrong."}]
    await _turn(repo, scripted, "why do @tests fail?")
    sent = _user(scripted.requests[0])
    assert "test_calc.py::test_adds at test_calc.py:2" in sent
    assert "bad sum" in sent
