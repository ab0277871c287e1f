"""The change under review: the working tree's diff (or the staged one), and how the model sees it.

A model reading a bare unified diff has to count lines from the hunk headers to say which line
a comment is about, and small models count badly. The diff is shown to it with each line of
the changed file numbered, so `line` in a comment can be copied rather than computed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from unidiff.errors import UnidiffParseError
from unidiff.patch import PatchSet

from toolgate.review.diff import unified_diff
from toolgate.runner.process import run_process

_MAX_DIFF_BYTES = 2 * 1024 * 1024
_GIT_ENV = {"GIT_TERMINAL_PROMPT": "0", "GIT_PAGER": "cat", "PAGER": "cat", "LC_ALL": "C"}


@dataclass
class Changes:
    """A unified diff and the workspace-relative paths it touches."""

    diff: str
    files: list[str]


def changed_files(diff: str) -> list[str]:
    """The paths a unified diff touches (the new name of a renamed file), in its order."""
    try:
        patch = PatchSet(diff)
    except UnidiffParseError:
        return []
    return [_path(f.path) for f in patch if not f.is_removed_file]


def _path(name: str) -> str:
    return name[2:] if name.startswith(("a/", "b/")) else name


def numbered(diff: str) -> str:
    """The diff with each line of the changed files numbered as in the file after the change.

    Added and context lines carry their line number; removed lines a blank margin. A diff
    that does not parse is given back as it is.
    """
    try:
        patch = PatchSet(diff)
    except UnidiffParseError:
        return diff
    if not len(patch):
        return diff
    out: list[str] = []
    for patched in patch:
        out.append(f"=== {_path(patched.path)}" + (" (new file)" if patched.is_added_file else ""))
        if patched.is_removed_file:
            out.append("(file deleted)")
            continue
        if patched.is_binary_file:
            out.append("(binary file)")
            continue
        for hunk in patched:
            out.append(
                f"@@ -{hunk.source_start},{hunk.source_length} "
                f"+{hunk.target_start},{hunk.target_length} @@ {hunk.section_header}".rstrip()
            )
            for line in hunk:
                text = line.value.rstrip("\n")
                if line.is_added:
                    out.append(f"{line.target_line_no:>5} + {text}")
                elif line.is_removed:
                    out.append(f"{'':>5} - {text}")
                elif line.is_context:
                    out.append(f"{line.target_line_no:>5}   {text}")
    return "\n".join(out) + "\n"


async def working_tree_changes(root: Path, *, staged: bool = False) -> Changes:
    """The working tree's changes against HEAD (new untracked files included), or the staged ones.

    Raises ReviewSetupError when `root` is not in a git repository or git fails.
    """
    from toolgate.code_review.records import ReviewSetupError

    inside, _ = await _git(root, "rev-parse", "--is-inside-work-tree")
    if inside != 0:
        # Said plainly: git's own words here are a page of `git diff --no-index` usage.
        raise ReviewSetupError(
            f"{root} is not in a git repository: the changes to review are read from git"
        )
    argv = ["diff", "--no-color", "--no-ext-diff", "--relative"]
    if staged:
        argv.append("--staged")
    else:
        head = await _git(root, "rev-parse", "--verify", "--quiet", "HEAD")
        # A repository without commits has no HEAD: compare with the index instead.
        if head[0] == 0:
            argv.append("HEAD")
    code, out = await _git(root, *argv)
    if code != 0:
        first = next((line for line in out.splitlines() if line.strip()), "no output")
        raise ReviewSetupError(f"git diff failed in {root}: {first.strip()[:300]}")
    parts = [out]
    if not staged:
        code, listed = await _git(root, "ls-files", "--others", "--exclude-standard", "-z")
        if code == 0:
            for rel in sorted(p for p in listed.split("\0") if p):
                if rel.startswith(".toolgate/"):
                    continue
                try:
                    text = (root / rel).read_text("utf-8")
                except (OSError, UnicodeDecodeError):
                    continue  # binary or unreadable: nothing a reviewer could comment on
                parts.append(unified_diff("", text, rel, new_file=True))
    diff = "".join(p if p.endswith("\n") or not p else p + "\n" for p in parts)
    return Changes(diff, changed_files(diff))


async def _git(root: Path, *argv: str) -> tuple[int | None, str]:
    outcome = await run_process(
        ["git", *argv],
        root,
        timeout_seconds=60,
        max_output_bytes=_MAX_DIFF_BYTES,
        env=_GIT_ENV,
    )
    return outcome.exit_code, outcome.output


def runs_changes(root: Path, run_ids: list[str]) -> Changes:
    """What the runs changed together: each file from before the first of them to now.

    Read from the runs' checkpoints, so only the runs' own changes are reviewed (not other
    edits in the working tree) and no git repository is needed.
    """
    from toolgate.agent.checkpoints import Checkpoint, CheckpointError

    before: dict[str, str | None] = {}
    for run_id in run_ids:
        try:
            checkpoint = Checkpoint.load(root, run_id)
        except CheckpointError:
            continue  # the run changed nothing
        for path, record in checkpoint.files.items():
            if path in before or not record.landed:
                continue
            try:
                raw = checkpoint.before_bytes(record)
            except CheckpointError:
                continue
            before[path] = None if raw is None else raw.decode("utf-8", errors="replace")
    parts = []
    for path in sorted(before):
        try:
            now = (root / path).read_text("utf-8", errors="replace")
        except OSError:
            now = None
        old = before[path]
        if now is None:
            if old is not None:
                parts.append(f"--- a/{path}\n+++ /dev/null\n" + _removed(old))
            continue
        parts.append(unified_diff(old or "", now, path, new_file=old is None))
    diff = "".join(parts)
    return Changes(diff, changed_files(diff))


def _removed(text: str) -> str:
    lines = text.splitlines()
    body = "".join(f"-{line}\n" for line in lines)
    return f"@@ -1,{len(lines)} +0,0 @@\n{body}"
