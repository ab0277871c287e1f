"""Rules files in the formats other agents keep, found in order, deduplicated, conditional."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolgate.customize.rules import ALWAYS, GLOBS, MANUAL, ON_REQUEST, find_rules


def write(root: Path, relative: str, text: str) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, "utf-8")
    return path


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


def test_every_format_is_found_in_the_documented_order(workspace: Path) -> None:
    write(workspace, "AGENTS.md", "agents")
    write(workspace, "CLAUDE.md", "claude")
    write(workspace, "GEMINI.md", "gemini")
    write(workspace, ".github/copilot-instructions.md", "copilot")
    write(workspace, ".clinerules/style.md", "cline")
    write(workspace, ".continue/rules/a.md", "continue")
    write(workspace, ".cursor/rules/always.mdc", "---\nalwaysApply: true\n---\ncursor")
    write(workspace, ".github/instructions/py.instructions.md", '---\napplyTo: "**"\n---\nall')
    write(workspace, "src/api/AGENTS.md", "api rules")
    found = find_rules(workspace, user=False)
    labels = [rule.label(workspace) for rule in found.rules]
    assert labels == [
        "AGENTS.md",
        "CLAUDE.md",
        "GEMINI.md",
        ".github/copilot-instructions.md",
        ".clinerules/style.md",
        ".continue/rules/a.md",
        ".cursor/rules/always.mdc",
        ".github/instructions/py.instructions.md",
        "src/api/AGENTS.md",
    ]
    assert [r.apply for r in found.rules][-1] == GLOBS
    assert [r.text.strip() for r in found.always()] == [
        "agents",
        "claude",
        "gemini",
        "copilot",
        "cline",
        "continue",
        "cursor",
        "all",
    ]


def test_identical_text_is_sent_once(workspace: Path) -> None:
    write(workspace, "AGENTS.md", "Use tabs.\n")
    write(workspace, "CLAUDE.md", "Use tabs.")
    found = find_rules(workspace, user=False)
    assert len(found.rules) == 2
    assert [rule.label(workspace) for rule in found.always()] == ["AGENTS.md"]


def test_user_rules_come_first(workspace: Path, tmp_path: Path, monkeypatch) -> None:
    config = tmp_path / "config"
    write(config, "toolgate/AGENTS.md", "mine")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    write(workspace, "AGENTS.md", "theirs")
    found = find_rules(workspace)
    assert [(r.source, r.text) for r in found.always()] == [
        ("user", "mine"),
        ("workspace", "theirs"),
    ]


def test_cursor_rules_by_their_fields(workspace: Path) -> None:
    write(workspace, ".cursor/rules/py.mdc", "---\nglobs: src/**/*.py, *.pyi\n---\npython")
    write(workspace, ".cursor/rules/db.mdc", "---\ndescription: When touching the schema\n---\ndb")
    write(workspace, ".cursor/rules/manual.mdc", "---\n---\nonly when asked")
    kinds = {r.path.name: r.apply for r in find_rules(workspace, user=False).rules}
    assert kinds == {"db.mdc": ON_REQUEST, "manual.mdc": MANUAL, "py.mdc": GLOBS}


def test_conditional_rules_follow_the_touched_paths_once(workspace: Path) -> None:
    write(workspace, ".github/instructions/ts.instructions.md", "---\napplyTo: '**/*.ts'\n---\nts")
    write(workspace, "pkg/sub/AGENTS.md", "sub rules")
    found = find_rules(workspace, user=False)
    sent: set[str] = set()
    assert found.for_paths(["README.md"], sent) == []
    hit = found.for_paths(["pkg/sub/deep/x.py", "web/app.ts"], sent)
    assert sorted(rule.text.strip() for rule in hit) == ["sub rules", "ts"]
    assert found.for_paths(["pkg/sub/y.py"], sent) == []  # already sent
    assert found.for_paths(["pkg/subway/x.py"], set()) == []  # not under the folder


def test_a_broken_front_matter_is_named_and_the_rest_still_load(workspace: Path) -> None:
    write(workspace, ".cursor/rules/bad.mdc", "---\nglobs: [unclosed\n---\nbody")
    write(workspace, "AGENTS.md", "fine")
    found = find_rules(workspace, user=False)
    assert [r.text for r in found.rules] == ["fine"]
    assert len(found.problems) == 1 and "bad.mdc" in found.problems[0]


def test_a_link_out_of_the_workspace_is_not_read(workspace: Path, tmp_path: Path) -> None:
    secret = write(tmp_path, "secret.txt", "do not send")
    (workspace / "AGENTS.md").symlink_to(secret)
    assert find_rules(workspace, user=False).rules == []


def test_always_rules_are_always(workspace: Path) -> None:
    write(workspace, ".clinerules", "one file")
    found = find_rules(workspace, user=False)
    assert [rule.apply for rule in found.rules] == [ALWAYS]
