"""The built-in tools: files, search, git and tests."""

from __future__ import annotations

import asyncio
import fnmatch
import json
import os
import re
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolgate.records import ToolResult
from toolgate.review.proposal import make_proposal
from toolgate.review.reviewer import DiskReviewer
from toolgate.runner.allowlist import CommandRefused, is_allowed, split_command
from toolgate.runner.process import resolve_executable, run_process
from toolgate.tools.activity import ActivityContext, FileChange
from toolgate.tools.registry import ToolRegistry
from toolgate.tools.schema import (
    CHANGE,
    GIT,
    LOOK,
    RUN,
    SEEN_BY_GIT,
    Tool,
    object_schema,
)
from toolgate.workspace import PathRefused, normalise_newlines

_SKIP_DIRS = {
    ".git",
    "node_modules",
    ".venv",
    "venv",
    "__pycache__",
    ".toolgate",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    ".tox",
    "dist",
    "build",
}
_MAX_LIST_ENTRIES = 2000
_MAX_MATCHES = 200

_PATH = {"type": "string", "description": "Path relative to the workspace root."}


_LINE = {"type": "integer", "minimum": 1}

READ_FILE = Tool(
    name="read_file",
    description=(
        "Read a text file of the workspace (the editor's unsaved text when it is open); "
        "start_line and end_line (1-based, inclusive) read a part of a long file."
    ),
    parameters=object_schema(
        {
            "path": _PATH,
            "start_line": {**_LINE, "description": "First line to read (default 1)."},
            "end_line": {**_LINE, "description": "Last line to read (default: the end)."},
        },
        ["path"],
    ),
    output={
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "content": {"type": "string"},
            "lines": {"type": "string"},
        },
    },
    when_cut=(
        "The file was cut to fit the model's window: read the part you need with start_line "
        "and end_line, or search_code for what you look for."
    ),
    capabilities=("fs.read",),
    outputs=("path", "content"),
    repeat=LOOK,
    label="read {path}",
    compact="Read a file; start_line and end_line read a part of it.",
)
WRITE_FILE = Tool(
    name="write_file",
    description="Create a file or replace its whole content. The person reviews the diff first.",
    parameters=object_schema({"path": _PATH, "content": {"type": "string"}}, ["path", "content"]),
    kind=CHANGE,
    asks=True,
    capabilities=("fs.write",),
    outputs=("path", "status", "hunks_applied", "hunks_total", "message"),
    label="wrote {path}",
    compact="Create a file or replace all of it.",
)
EDIT_FILE = Tool(
    name="edit_file",
    description=(
        "Replace one exact, unique occurrence of `search` in a file with `replace`. "
        "Prefer it to write_file for small changes to big files. The person reviews the diff first."
    ),
    parameters=object_schema(
        {
            "path": _PATH,
            "search": {
                "type": "string",
                "minLength": 1,
                "description": "Exact text to find; must occur exactly once.",
            },
            "replace": {"type": "string", "description": "Text to put in its place."},
        },
        ["path", "search", "replace"],
    ),
    kind=CHANGE,
    asks=True,
    capabilities=("fs.edit",),
    outputs=("path", "status", "hunks_applied", "hunks_total", "message"),
    label="edited {path}",
    compact="Replace the one exact occurrence of `search` in a file by `replace`.",
)
LIST_DIRECTORY = Tool(
    name="list_directory",
    description="List the files and folders of a workspace folder.",
    parameters=object_schema(
        {"path": {**_PATH, "default": "."}, "recursive": {"type": "boolean", "default": False}},
        [],
    ),
    capabilities=("fs.list",),
    outputs=("path", "entries"),
    repeat=LOOK,
    label="listed {path}",
    compact="List a folder (default: the root).",
)
SEARCH_CODE = Tool(
    name="search_code",
    description="Search the workspace's files for a regular expression; returns path, line, text.",
    parameters=object_schema(
        {
            "pattern": {
                "type": "string",
                "minLength": 1,
                "description": "Regular expression (Python/ripgrep syntax).",
            },
            "path": {**_PATH, "default": "."},
            "glob": {"type": "string", "description": "Only files matching this glob, e.g. *.py"},
        },
        ["pattern"],
    ),
    capabilities=("code.search",),
    outputs=("pattern", "engine", "matches"),
    repeat=LOOK,
    label="searched for {pattern}",
    acp_kind="search",
    compact="Search the files for a regular expression.",
    when_cut=(
        "The matches were cut to fit the model's window: search again with a narrower "
        "pattern, a path or a glob."
    ),
)
GIT_STATUS = Tool(
    name="git_status",
    description="Show the git branch, staged, unstaged and untracked files.",
    parameters=object_schema({}, []),
    executes=True,
    capabilities=("git.status",),
    outputs=("branch", "staged", "unstaged", "untracked", "clean"),
    repeat=LOOK,
    label="looked at git status",
    compact="Show the changed and untracked files.",
)
GIT_ADD = Tool(
    name="git_add",
    description="Stage files for the next commit. The person approves it first.",
    parameters=object_schema(
        {"files": {"type": "array", "items": {"type": "string"}, "minItems": 1}}, ["files"]
    ),
    kind=GIT,
    asks=True,
    executes=True,
    capabilities=("git.stage",),
    outputs=("staged",),
    repeat=SEEN_BY_GIT,
    label="staged {files}",
    compact="Stage files for a commit.",
)
GIT_COMMIT = Tool(
    name="git_commit",
    description="Commit the staged changes with a message. The person approves it first.",
    parameters=object_schema({"message": {"type": "string", "minLength": 1}}, ["message"]),
    kind=GIT,
    asks=True,
    executes=True,
    capabilities=("git.commit",),
    outputs=("commit", "message", "output"),
    repeat=SEEN_BY_GIT,
    label="committed “{message}”",
    compact="Commit the staged files.",
)
RUN_TESTS = Tool(
    name="run_tests",
    description=(
        "Run the test suite (pytest by default) and get a summary and each failure with its "
        "file and line. Runs without a shell; commands off the allow-list need the person's yes."
    ),
    parameters=object_schema(
        {
            "command": {"type": "string", "default": "pytest -q --tb=short"},
            "cwd": {**_PATH, "default": "."},
        },
        [],
    ),
    kind=RUN,
    executes=True,
    capabilities=("tests.run",),
    outputs=("summary", "failures", "output", "exit_code", "passed", "timed_out"),
    repeat=SEEN_BY_GIT,
    label="ran the tests",
    compact="Run the tests (pytest by default): each failure with its file and line.",
)
RUN_COMMAND = Tool(
    name="run_command",
    description=(
        "Run one program (no shell: no pipes, redirects or globbing). Commands off the "
        "allow-list run only when the person says yes to that exact command."
    ),
    parameters=object_schema(
        {"command": {"type": "string", "minLength": 1}, "cwd": {**_PATH, "default": "."}},
        ["command"],
    ),
    kind=RUN,
    asks=True,
    executes=True,
    capabilities=("shell.run",),
    outputs=("argv", "exit_code", "output", "timed_out"),
    repeat=SEEN_BY_GIT,
    label="ran {command}",
    compact="Run one program (no shell).",
)


def _refusal(exc: Exception) -> ToolResult:
    return ToolResult.fail(str(exc))


def _timed(start: float, result: ToolResult) -> ToolResult:
    result.duration_seconds = round(time.perf_counter() - start, 6)
    return result


class ReadFile:
    """read_file: the text as the person sees it."""

    async def run(self, ctx: ActivityContext, args: dict[str, Any]) -> ToolResult:
        """Read the file."""
        start = time.perf_counter()
        await ctx.before_read(args["path"])
        try:
            _, text_file = ctx.workspace.read(args["path"])
        except (PathRefused, OSError) as exc:
            return _timed(start, ToolResult.fail(str(exc), suggestions=_missing_hint(exc)))
        text = text_file.text
        data: dict[str, Any] = {"path": args["path"], "content": text}
        if "start_line" in args or "end_line" in args:
            lines = text.splitlines(keepends=True)
            first = int(args.get("start_line", 1))
            last = min(int(args.get("end_line", len(lines))), len(lines))
            if first > max(len(lines), 1) or last < first:
                return _timed(
                    start,
                    ToolResult.fail(
                        f"{args['path']} has {len(lines)} lines; lines {first}-{last} "
                        "are not a part of it"
                    ),
                )
            data["content"] = "".join(lines[first - 1 : last])
            data["lines"] = f"{first}-{last} of {len(lines)}"
        size = len(data["content"].encode("utf-8"))
        return _timed(start, ToolResult.ok(data, output_size_bytes=size))


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _missing_hint(exc: Exception) -> list[str]:
    if isinstance(exc, FileNotFoundError):
        return ["Use list_directory or search_code to find the right path."]
    return []


class WriteFile:
    """write_file: a whole-file change, proposed as a diff."""

    async def plan(self, ctx: ActivityContext, args: dict[str, Any]) -> FileChange | ToolResult:
        """Work out the diff against the current text."""
        if not _encodable(args["content"]):
            return ToolResult.fail(
                "content holds characters that cannot be written as UTF-8 (lone surrogates)"
            )
        await ctx.before_read(args["path"])
        try:
            _, current = ctx.workspace.read_or_none(args["path"])
            ctx.workspace.check_size(args["path"], args["content"])
        except (PathRefused, OSError) as exc:
            return _refusal(exc)
        original = current.text if current else None
        proposed = normalise_newlines(args["content"])
        if original == proposed:
            return ToolResult.ok(
                {
                    "path": args["path"],
                    "changed": False,
                    "message": "the file already has exactly this content",
                }
            )
        return FileChange(
            path=ctx.workspace.relative(ctx.workspace.resolve(args["path"])),
            original=original,
            proposed=proposed,
        )

    async def run(self, ctx: ActivityContext, args: dict[str, Any]) -> ToolResult:
        """Write without review (only used where the person allowed it)."""
        return await _write_planned(self, ctx, args)


class EditFile:
    """edit_file: replace one exact, unique occurrence."""

    async def plan(self, ctx: ActivityContext, args: dict[str, Any]) -> FileChange | ToolResult:
        """Find the unique occurrence and work out the diff."""
        await ctx.before_read(args["path"])
        try:
            _, current = ctx.workspace.read(args["path"])
        except (PathRefused, OSError) as exc:
            return ToolResult.fail(str(exc), suggestions=_missing_hint(exc))
        search = normalise_newlines(args["search"])
        replacement = normalise_newlines(args["replace"])
        if not _encodable(replacement):
            return ToolResult.fail(
                "`replace` holds characters that cannot be written as UTF-8 (lone surrogates)"
            )
        count = current.text.count(search)
        if count == 0:
            return ToolResult.fail(
                f"`search` text not found in {args['path']}",
                suggestions=[
                    "read_file the file again and copy the exact text, whitespace included."
                ],
            )
        if count > 1:
            return ToolResult.fail(
                f"`search` text occurs {count} times in {args['path']}; it must be unique",
                suggestions=["Include more surrounding lines in `search` so it matches once."],
            )
        proposed = current.text.replace(search, replacement, 1)
        try:
            ctx.workspace.check_size(args["path"], proposed)
        except PathRefused as exc:
            return _refusal(exc)
        return FileChange(
            path=ctx.workspace.relative(ctx.workspace.resolve(args["path"])),
            original=current.text,
            proposed=proposed,
        )

    async def run(self, ctx: ActivityContext, args: dict[str, Any]) -> ToolResult:
        """Edit without review (only used where the person allowed it)."""
        return await _write_planned(self, ctx, args)


async def _write_planned(
    activity: WriteFile | EditFile, ctx: ActivityContext, args: dict[str, Any]
) -> ToolResult:
    """Plan the change and land it as an approved proposal lands: the same hunks, one write."""
    start = time.perf_counter()
    planned = await activity.plan(ctx, args)
    if isinstance(planned, ToolResult):
        return _timed(start, planned)
    proposal = make_proposal(
        run_id="",
        call_id="",
        tool="write_file" if isinstance(activity, WriteFile) else "edit_file",
        path=planned.path,
        original=planned.original,
        proposed=planned.proposed,
    )
    resolution = await DiskReviewer(ctx.workspace).apply_change(proposal)
    if not resolution.landed:
        return _timed(
            start, ToolResult.fail(resolution.error or resolution.reason or "not written")
        )
    return _timed(start, ToolResult.ok({"path": planned.path, "changed": True}))


class ListDirectory:
    """list_directory: names, kinds and sizes."""

    async def run(self, ctx: ActivityContext, args: dict[str, Any]) -> ToolResult:
        """List the folder."""
        start = time.perf_counter()
        rel = args.get("path", ".") or "."
        try:
            folder = ctx.workspace.resolve(rel)
        except PathRefused as exc:
            return _timed(start, _refusal(exc))
        if not folder.is_dir():
            return _timed(start, ToolResult.fail(f"{rel!r} is not a folder"))
        entries: list[dict[str, Any]] = []
        truncated = False
        for path in _walk(folder, bool(args.get("recursive", False))):
            if len(entries) >= _MAX_LIST_ENTRIES:
                truncated = True
                break
            try:
                is_dir = path.is_dir() and not path.is_symlink()
                entry: dict[str, Any] = {
                    "path": path.relative_to(ctx.workspace.root).as_posix(),
                    "type": "dir" if is_dir else ("symlink" if path.is_symlink() else "file"),
                }
                if not is_dir and not path.is_symlink():
                    entry["size"] = path.stat().st_size
            except OSError:
                continue
            entries.append(entry)
        return _timed(
            start, ToolResult.ok({"path": rel, "entries": entries}, output_truncated=truncated)
        )


def _walk(folder: Path, recursive: bool) -> Iterator[Path]:
    try:
        children = sorted(folder.iterdir(), key=lambda p: p.name)
    except OSError:
        return
    for child in children:
        if child.name == ".git":
            continue
        yield child
        if recursive and child.is_dir() and not child.is_symlink() and child.name not in _SKIP_DIRS:
            yield from _walk(child, recursive)


class SearchCode:
    """search_code: ripgrep when on PATH, a Python fallback otherwise; open buffers win."""

    async def run(self, ctx: ActivityContext, args: dict[str, Any]) -> ToolResult:
        """Search the workspace."""
        start = time.perf_counter()
        pattern = args["pattern"]
        try:
            regex = re.compile(pattern)
        except re.error as exc:
            return _timed(start, ToolResult.fail(f"invalid regular expression: {exc}"))
        try:
            base = ctx.workspace.resolve(args.get("path", ".") or ".")
        except PathRefused as exc:
            return _timed(start, _refusal(exc))
        glob = args.get("glob")
        buffers = {p: t for p, t in ctx.workspace.buffers().items() if ctx.workspace.contains(p)}
        rg = shutil.which("rg")
        if rg:
            matches = await _ripgrep(rg, pattern, base, glob, ctx)
        else:
            matches = await asyncio.to_thread(_python_search, regex, base, glob, ctx, set())
        if buffers:
            # Unsaved editor text replaces what disk holds for those files.
            buffer_rel = {
                ctx.workspace.relative(p): (p, t)
                for p, t in buffers.items()
                if _under(p, base) and _glob_ok(p, glob)
            }
            matches = [m for m in matches if m["path"] not in buffer_rel]
            for rel, (_, text) in sorted(buffer_rel.items()):
                matches.extend(_search_text(regex, rel, text))
            matches.sort(key=lambda m: (m["path"], m["line"]))
        truncated = len(matches) > _MAX_MATCHES
        return _timed(
            start,
            ToolResult.ok(
                {
                    "pattern": pattern,
                    "matches": matches[:_MAX_MATCHES],
                    "engine": "ripgrep" if rg else "python",
                },
                output_truncated=truncated,
            ),
        )


def _under(path: Path, base: Path) -> bool:
    return os.path.commonpath([str(base), str(path)]) == str(base)


def _glob_ok(path: Path, glob: str | None) -> bool:
    return not glob or fnmatch.fnmatch(path.name, glob) or fnmatch.fnmatch(path.as_posix(), glob)


def _search_text(regex: re.Pattern[str], rel: str, text: str) -> list[dict[str, Any]]:
    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        if regex.search(line):
            found.append({"path": rel, "line": number, "text": line[:300]})
    return found


def _python_search(
    regex: re.Pattern[str], base: Path, glob: str | None, ctx: ActivityContext, skip: set[str]
) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS)
        for name in sorted(filenames):
            path = Path(dirpath) / name
            if path.is_symlink() or not _glob_ok(path, glob):
                continue
            rel = path.relative_to(ctx.workspace.root).as_posix()
            if rel in skip:
                continue
            try:
                if path.stat().st_size > ctx.workspace.max_file_bytes:
                    continue
                raw = path.read_bytes()
            except OSError:
                continue
            if b"\x00" in raw[:8192]:
                continue
            found.extend(_search_text(regex, rel, raw.decode("utf-8", errors="replace")))
            if len(found) > _MAX_MATCHES:
                return found
    return found


async def _ripgrep(
    rg: str, pattern: str, base: Path, glob: str | None, ctx: ActivityContext
) -> list[dict[str, Any]]:
    argv = [
        rg,
        "--line-number",
        "--no-heading",
        "--color=never",
        "--max-columns=300",
        "--max-filesize",
        str(ctx.workspace.max_file_bytes),
        "-e",
        pattern,
    ]
    if glob:
        argv += ["--glob", glob]
    argv.append(".")
    outcome = await run_process(argv, base, timeout_seconds=60, max_output_bytes=2_000_000)
    found: list[dict[str, Any]] = []
    for line in outcome.output.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3 or not parts[1].isdigit():
            continue
        rel = (base / parts[0]).resolve().relative_to(ctx.workspace.root).as_posix()
        found.append({"path": rel, "line": int(parts[1]), "text": parts[2]})
    found.sort(key=lambda m: (m["path"], m["line"]))
    return found


@dataclass
class _Git:
    """Runs git without a shell, with prompts and pagers off."""

    async def __call__(self, ctx: ActivityContext, *argv: str) -> tuple[int | None, str]:
        env = dict(os.environ)
        env.update({"GIT_TERMINAL_PROMPT": "0", "GIT_PAGER": "cat", "PAGER": "cat", "LC_ALL": "C"})
        outcome = await run_process(
            ["git", *argv],
            ctx.workspace.root,
            timeout_seconds=60,
            max_output_bytes=ctx.settings.max_output_bytes,
            env=env,
        )
        return outcome.exit_code, outcome.output


_git = _Git()


class GitStatus:
    """git_status: branch and file states, parsed from porcelain output."""

    async def run(self, ctx: ActivityContext, args: dict[str, Any]) -> ToolResult:
        """Show the status."""
        start = time.perf_counter()
        code, out = await _git(ctx, "status", "--porcelain=v1", "--branch", "--untracked-files=all")
        if code != 0:
            return _timed(start, ToolResult.fail(f"git status failed: {out.strip()[:500]}"))
        data: dict[str, Any] = {"branch": None, "staged": [], "unstaged": [], "untracked": []}
        for line in out.splitlines():
            if line.startswith("## "):
                data["branch"] = line[3:].split("...")[0].replace("No commits yet on ", "")
                continue
            if len(line) < 4:
                continue
            x, y, path = line[0], line[1], line[3:]
            if x == "?":
                data["untracked"].append(path)
                continue
            if x not in (" ", "?"):
                data["staged"].append({"path": path, "status": x})
            if y not in (" ", "?"):
                data["unstaged"].append({"path": path, "status": y})
        data["clean"] = not (data["staged"] or data["unstaged"] or data["untracked"])
        return _timed(start, ToolResult.ok(data))


class GitAdd:
    """git_add: stage files, each path checked by the sandbox."""

    def describe(self, args: dict[str, Any]) -> str:
        """What the person is asked to allow."""
        return "git add -- " + " ".join(args.get("files", []))

    async def run(self, ctx: ActivityContext, args: dict[str, Any]) -> ToolResult:
        """Stage the files."""
        start = time.perf_counter()
        rels: list[str] = []
        for name in args["files"]:
            try:
                real = ctx.workspace.resolve(name)
            except PathRefused as exc:
                return _timed(start, _refusal(exc))
            rels.append(ctx.workspace.relative(real) or ".")
        await ctx.before_tests()  # accepted edits still in editor buffers must be staged too
        code, out = await _git(ctx, "add", "--", *rels)
        if code != 0:
            return _timed(start, ToolResult.fail(f"git add failed: {out.strip()[:500]}"))
        return _timed(start, ToolResult.ok({"staged": rels}))


class GitCommit:
    """git_commit: commit what is staged."""

    def describe(self, args: dict[str, Any]) -> str:
        """What the person is asked to allow."""
        return f"git commit -m {json.dumps(args.get('message', ''))}"

    async def run(self, ctx: ActivityContext, args: dict[str, Any]) -> ToolResult:
        """Make the commit."""
        start = time.perf_counter()
        code, out = await _git(ctx, "commit", "-m", args["message"])
        if code != 0:
            hint = []
            if "working tree clean" in out:
                # said apart: a small model told to stage stages its unchanged file, again and again
                hint = [
                    "Nothing changed since the last commit, so there is nothing to commit: "
                    "change the files first, or, if the work is done, say so."
                ]
            elif "nothing to commit" in out or "no changes added" in out or "nothing added" in out:
                hint = ["Stage files with git_add first."]
            if "Please tell me who you are" in out or "user.email" in out:
                hint = ["git has no author identity configured in this repository."]
            return _timed(
                start, ToolResult.fail(f"git commit failed: {out.strip()[:500]}", suggestions=hint)
            )
        code, head = await _git(ctx, "rev-parse", "HEAD")
        return _timed(
            start,
            ToolResult.ok(
                {"commit": head.strip(), "message": args["message"], "output": out.strip()[:2000]}
            ),
        )


class RunCommand:
    """run_command: one program, no shell, gated by the allow-list."""

    default_command = ""

    def argv(self, ctx: ActivityContext, args: dict[str, Any]) -> list[str]:
        """Split the command line into argv (no shell); refuse pytest paths outside the root."""
        from toolgate.testing.options import check_pytest_paths
        from toolgate.testing.runner import pytest_head_length

        argv = split_command(args.get("command") or self.default_command)
        head = pytest_head_length(argv)
        if head:
            try:
                cwd = self._cwd(ctx, args)
            except PathRefused:
                cwd = ctx.workspace.root  # the cwd itself is refused when the call runs
            check_pytest_paths(argv, head=head, root=ctx.workspace.root, cwd=cwd)
        return argv

    def _cwd(self, ctx: ActivityContext, args: dict[str, Any]) -> Path:
        cwd = ctx.workspace.resolve(args.get("cwd", ".") or ".")
        if not cwd.is_dir():
            raise PathRefused(f"cwd {args.get('cwd')!r} is not a folder")
        return cwd

    def _prepare(self, ctx: ActivityContext, args: dict[str, Any]) -> tuple[list[str], Path]:
        """The argv and folder of this call; raises CommandRefused, PathRefused or Untrusted."""
        if not ctx.settings.trusted:
            raise _Untrusted
        cwd = self._cwd(ctx, args)
        return self.argv(ctx, args), cwd

    async def run(self, ctx: ActivityContext, args: dict[str, Any]) -> ToolResult:
        """Check the call (trust, folder, allow-list paths), then execute it, timed."""
        start = time.perf_counter()
        try:
            argv, cwd = self._prepare(ctx, args)
        except (CommandRefused, PathRefused, _Untrusted) as exc:
            return _timed(start, _refusal(exc))
        return _timed(start, await self._execute(ctx, argv, cwd))

    async def _execute(self, ctx: ActivityContext, argv: list[str], cwd: Path) -> ToolResult:
        """Run the program and report its exit code and (capped) output."""
        outcome = await run_process(
            resolve_executable(argv, cwd, root=ctx.workspace.root),
            cwd,
            timeout_seconds=ctx.settings.command_timeout_seconds,
            max_output_bytes=ctx.settings.max_output_bytes,
            sandbox=ctx.settings.sandbox,
            root=ctx.workspace.root,
        )
        data: dict[str, Any] = {
            "argv": argv,
            "exit_code": outcome.exit_code,
            "output": outcome.output,
            "timed_out": outcome.timed_out,
            "sandboxed": outcome.sandboxed,
        }
        if outcome.sandbox_note:
            data["notes"] = [outcome.sandbox_note]
        return ToolResult(
            success=outcome.exit_code == 0,
            data=data,
            error=None if outcome.exit_code == 0 else _exit_error(outcome),
            output_truncated=outcome.output_truncated,
            output_size_bytes=outcome.output_size_bytes,
        )


class _Untrusted(Exception):
    def __str__(self) -> str:
        return (
            "this workspace is not trusted, so nothing may execute here (tests, git, commands); "
            "the person can trust the workspace in the editor to allow it"
        )


def _exit_error(outcome: Any) -> str:
    if outcome.timed_out:
        return f"timed out after {outcome.duration_seconds:.0f}s; the process group was killed"
    if outcome.exit_code is None:
        return outcome.output.strip()[:500] or "the command could not be started"
    return f"exited with status {outcome.exit_code}"


class RunTests(RunCommand):
    """run_tests: pytest with structured results."""

    default_command = "pytest -q --tb=short"

    async def _execute(self, ctx: ActivityContext, argv: list[str], cwd: Path) -> ToolResult:
        """Run the tests and summarise them (another allowed command runs as run_command)."""
        from toolgate.testing.runner import run_pytest
        from toolgate.testing.verdict import not_run_reason

        notes = await ctx.before_tests()
        if not is_pytest(argv):
            result = await super()._execute(ctx, argv, cwd)
            if notes and isinstance(result.data, dict):
                result.data["notes"] = notes + result.data.get("notes", [])
            return result
        test_run = await run_pytest(
            ctx.workspace.root,
            resolve_executable(argv, cwd, root=ctx.workspace.root),
            cwd=cwd,
            timeout_seconds=ctx.settings.command_timeout_seconds,
            max_output_bytes=ctx.settings.max_output_bytes,
            sandbox=ctx.settings.sandbox,
        )
        if test_run.sandbox_note:
            notes = [*notes, test_run.sandbox_note]
        if ctx.on_test_run is not None:
            ctx.on_test_run(test_run)
        data = test_run.to_data()
        data["argv"] = argv
        # A run that did not run its tests failed as a call: the model must not read a pass.
        not_run = not_run_reason(test_run)
        data["passed"] = not_run is None and test_run.exit_code == 0
        if not_run is not None:
            data["not_run"] = not_run
        if notes:
            data["notes"] = notes
        error = None if not_run is None else f"tests did not run: {not_run}"
        return ToolResult(
            success=error is None,
            data=data,
            error=error,
            output_truncated=test_run.output_truncated,
            output_size_bytes=test_run.output_size_bytes,
        )


def is_pytest(argv: list[str]) -> bool:
    """Whether argv runs pytest (so its results can be read structurally)."""
    if not argv:
        return False
    program = Path(argv[0]).name
    if program in ("pytest", "py.test"):
        return True
    return program.startswith("python") and argv[1:3] == ["-m", "pytest"]


def command_allowed(ctx: ActivityContext, argv: list[str]) -> bool:
    """Whether argv is on the workspace's allow-list."""
    return is_allowed(argv, ctx.settings.allowed_commands)


def builtin_registry() -> ToolRegistry:
    """A registry holding every built-in tool with its activity."""
    registry = ToolRegistry()
    registry.add(READ_FILE, ReadFile())
    registry.add(WRITE_FILE, WriteFile())
    registry.add(EDIT_FILE, EditFile())
    registry.add(LIST_DIRECTORY, ListDirectory())
    registry.add(SEARCH_CODE, SearchCode())
    registry.add(GIT_STATUS, GitStatus())
    registry.add(GIT_ADD, GitAdd())
    registry.add(GIT_COMMIT, GitCommit())
    registry.add(RUN_TESTS, RunTests())
    registry.add(RUN_COMMAND, RunCommand())
    return registry


def builtin_tools() -> list[Tool]:
    """Every built-in tool's record, in registry order."""
    registry = builtin_registry()
    return [tool for tool in map(registry.get, registry.names()) if tool is not None]
