"""The workspace digest that tells the agent loop whether a call changed anything."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import git

from toolgate.agent.workspace_state import workspace_state


async def test_the_digest_moves_with_every_change_git_can_see_and_only_then(
    repo: Path,
) -> None:
    seen = [await workspace_state(repo)]

    async def changed() -> bool:
        seen.append(await workspace_state(repo))
        return seen[-1] != seen[-2]

    assert not await changed()  # nothing happened
    (repo / "README.md").write_text("# Tiny project!\n")
    assert await changed()  # a tracked file differs
    (repo / "README.md").write_text("# Tiny project?\n")
    assert await changed()  # it differs again: same size, same status, other bytes
    git(repo, "add", "README.md")
    assert await changed()  # staged
    git(repo, "add", "README.md")
    assert not await changed()  # staged again: nothing new
    (repo / "notes.txt").write_text("new\n")
    assert await changed()  # an untracked file
    (repo / ".gitignore").write_text("build/\n")
    assert await changed()
    (repo / "build").mkdir()
    (repo / "build" / "out.txt").write_text("ignored\n")
    assert not await changed()  # git ignores it, so does the digest
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "more")
    assert await changed()  # a commit
    (repo / "a name with spaces.txt").write_text("1\n")
    assert await changed()
    (repo / "a name with spaces.txt").write_text("2\n")
    assert await changed()
    assert None not in seen


async def test_outside_git_there_is_no_digest(tmp_path: Path) -> None:
    assert await workspace_state(tmp_path) is None
