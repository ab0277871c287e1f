"""Context the person points at: `@path`, `@selection`, `@problems`, `@diff`, `@tests`.

The person's message names what the model should see; each mention becomes a block of context
put before the message (the words stay as typed). What a front end knows beyond the text (the
editor's selection and problems, ACP's resources) comes in a `Pointed`. Every block is read
through the workspace, as the tools read (a path outside it is refused with the sandbox's own
words, an unsaved buffer is read as the person sees it), and all of them together fit a share
of the model's window: what does not fit is cut, and the block says so.
"""

from __future__ import annotations

import html
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from toolgate.agent.runlog import run_logs
from toolgate.code_review.changes import working_tree_changes
from toolgate.code_review.records import ReviewSetupError
from toolgate.workspace.sandbox import PathRefused, Workspace

SELECTION = "selection"
PROBLEMS = "problems"
DIFF = "diff"
DIFF_STAGED = "diff:staged"
TESTS = "tests"
KEYWORDS = (SELECTION, PROBLEMS, DIFF, DIFF_STAGED, TESTS)

# `@` opening a word: an e-mail address or a decorator inside a word is no mention.
_MENTION = re.compile(r'(?<!\S)@(?:"([^"\n]+)"|(\S+))')
_TRAILING = ".,;:!?)]}'\""
_SKIPPED_FOLDERS = frozenset({".git", ".toolgate", "node_modules", "__pycache__", ".venv"})
# Why `@selection` and `@problems` give nothing where no editor is behind the front end.
NO_EDITOR = "there is no editor behind this front end to take it from"
IN_TERMINAL = (
    "the terminal has no editor selection or problems list; name the file with @path "
    "(or paste the text) instead"
)
MAX_FOLDER_ENTRIES = 400
MAX_FAILURE_TEXT = 2_000


@dataclass(frozen=True)
class Selection:
    """The editor's selection: a file (workspace-relative), 1-based lines, and its text if sent."""

    path: str
    start_line: int
    end_line: int
    text: str | None = None


@dataclass(frozen=True)
class Problem:
    """One diagnostic the editor shows: where, how bad, who says so, what."""

    path: str
    line: int  # 1-based
    message: str
    severity: str = "error"
    source: str | None = None


@dataclass(frozen=True)
class Resource:
    """A resource a client attached beside the words (ACP): its text, or a link to read."""

    uri: str
    text: str | None = None  # None: a link, read from the workspace
    name: str = ""


@dataclass
class Pointed:
    """What the front end knows that the words cannot carry.

    `selection` and `problems` are None when the front end has nothing to give: `unavailable`
    then says why, for the person and the model (the terminal has no editor).
    """

    selection: Selection | None = None
    problems: list[Problem] | None = None
    resources: list[Resource] = field(default_factory=list)
    unavailable: str = "the editor sent none with this message"


@dataclass
class Block:
    """One piece of attached context, before it is fitted."""

    mention: str
    kind: str
    label: str
    body: str
    unsaved: bool = False


@dataclass
class Attached:
    """The blocks as the model reads them, and what the person is told."""

    note: str = ""  # put before the person's words in the model's message
    items: list[dict[str, Any]] = field(default_factory=list)  # for the run log and front ends
    refused: list[str] = field(default_factory=list)

    def summary(self) -> str:
        """One line for the turn: what was attached, what was cut, what was refused."""
        parts = []
        for item in self.items:
            words = f"{item['mention']} ({item['label']})"
            if item.get("cut"):
                words += f" — cut to fit: {item['cut']}"
            parts.append(words)
        line = "attached: " + "; ".join(parts) if parts else ""
        if self.refused:
            line += ("; " if line else "") + "not attached: " + "; ".join(self.refused)
        return line


def find_mentions(text: str) -> list[str]:
    """The mentions in `text`, in order, each once (`@"a b.txt"` for a name with spaces)."""
    found: list[str] = []
    for match in _MENTION.finditer(text):
        target = match.group(1) or match.group(2)
        if target and target not in found:
            found.append(target)
    return found


def keywords_in(text: str) -> set[str]:
    """The keywords (`selection`, `diff`, …) `text` mentions."""
    return {word for word in map(_keyword, find_mentions(text)) if word is not None}


def _keyword(target: str) -> str | None:
    stripped = target.rstrip(_TRAILING)
    return stripped if stripped in KEYWORDS else None


def _exists(workspace: Workspace, real: Path) -> bool:
    return real.exists() or real in workspace.buffers()


def _path_of(workspace: Workspace, target: str) -> tuple[str, Path] | None:
    """The workspace path a mention names (trailing punctuation dropped), None: none exists.

    Raises PathRefused for a path the sandbox refuses (absolute, `..`, outside, `.git`).
    """
    candidates = [target]
    stripped = target.rstrip(_TRAILING)
    if stripped and stripped != target:
        candidates.append(stripped)
    refused: PathRefused | None = None
    for candidate in candidates:
        try:
            real = workspace.resolve(candidate.rstrip("/") or ".")
        except PathRefused as exc:
            refused = refused or exc
            continue
        if _exists(workspace, real):
            return candidate.rstrip("/") or ".", real
    if refused is not None:
        raise refused
    return None


def _file_block(workspace: Workspace, mention: str, rel: str, real: Path) -> Block:
    _, text_file = workspace.read(rel)
    lines = text_file.text.count("\n") + (0 if text_file.text.endswith("\n") else 1)
    unsaved = real in workspace.buffers()
    label = f"file, {lines} lines" + (", unsaved" if unsaved else "")
    return Block(mention, "file", label, text_file.text, unsaved)


def _folder_block(workspace: Workspace, mention: str, real: Path) -> Block:
    entries: list[str] = []
    more = False
    for dirpath, dirnames, filenames in os.walk(real):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIPPED_FOLDERS)
        for name in sorted(filenames):
            if len(entries) >= MAX_FOLDER_ENTRIES:
                more = True
                break
            path = Path(dirpath) / name
            try:
                size = path.stat().st_size
            except OSError:
                continue
            entries.append(f"{workspace.relative(path)} ({size} bytes)")
        if more:
            break
    body = "\n".join(entries) or "(no files)"
    if more:
        body += f"\n… more files (the first {MAX_FOLDER_ENTRIES} are listed)"
    label = f"folder, {len(entries)}{'+' if more else ''} files listed"
    return Block(mention, "folder", label, body)


def _selection_block(workspace: Workspace, mention: str, selection: Selection) -> Block:
    rel = selection.path
    real = workspace.resolve(rel)
    text = selection.text
    if text is None:
        _, text_file = workspace.read(rel)
        lines = text_file.text.splitlines(keepends=True)
        text = "".join(lines[selection.start_line - 1 : selection.end_line])
    where = f"{workspace.relative(real)}, lines {selection.start_line}-{selection.end_line}"
    unsaved = real in workspace.buffers()
    return Block(mention, "selection", where + (", unsaved" if unsaved else ""), text, unsaved)


def _problems_block(mention: str, problems: list[Problem]) -> Block:
    lines = [
        f"{p.path}:{p.line}: {p.severity}"
        + (f" [{p.source}]" if p.source else "")
        + f": {p.message}"
        for p in problems
    ]
    label = f"{len(problems)} problem{'s' if len(problems) != 1 else ''}"
    return Block(mention, "problems", label, "\n".join(lines) or "(no problems)")


async def _diff_block(root: Path, mention: str, staged: bool) -> Block:
    changes = await working_tree_changes(root, staged=staged)
    what = "staged changes" if staged else "working tree changes"
    if not changes.diff.strip():
        return Block(mention, "diff", f"no {what}", f"(no {what})")
    count = len(changes.files)
    return Block(mention, "diff", f"{what}, {count} file{'s' if count != 1 else ''}", changes.diff)


def last_test_run(root: Path) -> tuple[str, dict[str, Any]] | None:
    """The latest `run_tests` result the run logs keep: (its run id, its data), or None."""
    for doc in reversed(run_logs(root)):
        for step in reversed(doc.get("steps") or []):
            for call in reversed(step.get("calls") or []):
                if not isinstance(call, dict) or call.get("name") != "run_tests":
                    continue
                data = (call.get("result") or {}).get("data")
                if isinstance(data, dict) and isinstance(data.get("summary"), dict):
                    return str(doc.get("run_id")), data
    return None


def _tests_block(root: Path, mention: str) -> Block:
    found = last_test_run(root)
    if found is None:
        raise LookupError("no test run is kept in this workspace's run logs yet")
    run_id, data = found
    summary = data["summary"]
    failures = [f for f in data.get("failures") or [] if isinstance(f, dict)]
    head = (
        f"The last test run (run {run_id}): {summary.get('passed', 0)} passed, "
        f"{summary.get('failed', 0)} failed, {summary.get('errors', 0)} errors"
    )
    parts = [head]
    for failure in failures:
        parts.append(
            f"\n{failure.get('test_id')} at {failure.get('file')}:{failure.get('line')}: "
            f"{failure.get('message', '')}"
        )
        longrepr = str(failure.get("longrepr") or "")
        if longrepr:
            parts.append(longrepr[:MAX_FAILURE_TEXT])
    label = f"last test run, {len(failures)} failure{'s' if len(failures) != 1 else ''}"
    return Block(mention, "tests", label, "\n".join(parts))


def _resource_block(workspace: Workspace, resource: Resource) -> Block:
    name = resource.name or resource.uri
    if resource.text is not None:
        return Block(resource.uri, "resource", f"embedded by the client: {name}", resource.text)
    parsed = urlparse(resource.uri)
    if parsed.scheme != "file":
        raise PathRefused(f"{resource.uri!r} is not a file of the workspace")
    real = Path(os.path.realpath(unquote(parsed.path)))
    if not workspace.contains(real):
        raise PathRefused(
            f"{str(real)!r} is outside the workspace; use a path relative to the workspace"
        )
    rel = workspace.relative(real)
    workspace.resolve(rel)  # `.git` and the other refusals, in the sandbox's words
    if real.is_dir():
        return _folder_block(workspace, resource.uri, real)
    block = _file_block(workspace, resource.uri, rel, real)
    block.kind = "resource"
    return block


async def gather(
    workspace: Workspace, text: str, pointed: Pointed | None
) -> tuple[list[Block], list[str]]:
    """The blocks `text` and `pointed` ask for, and a line for each mention refused."""
    pointed = pointed or Pointed(unavailable=NO_EDITOR)
    blocks: list[Block] = []
    refused: list[str] = []
    for target in find_mentions(text):
        keyword = _keyword(target)
        mention = f"@{keyword or target}"
        try:
            if keyword == SELECTION:
                if pointed.selection is None:
                    raise LookupError(f"no selection: {pointed.unavailable}")
                blocks.append(_selection_block(workspace, mention, pointed.selection))
            elif keyword == PROBLEMS:
                if pointed.problems is None:
                    raise LookupError(f"no problems: {pointed.unavailable}")
                blocks.append(_problems_block(mention, pointed.problems))
            elif keyword in (DIFF, DIFF_STAGED):
                blocks.append(await _diff_block(workspace.root, mention, keyword == DIFF_STAGED))
            elif keyword == TESTS:
                blocks.append(_tests_block(workspace.root, mention))
            else:
                found = _path_of(workspace, target)
                if found is None:
                    continue  # no such file or folder: the word is the person's own (@property)
                rel, real = found
                if real.is_dir():
                    blocks.append(_folder_block(workspace, f"@{rel}", real))
                else:
                    blocks.append(_file_block(workspace, f"@{rel}", rel, real))
        except (PathRefused, OSError, LookupError, ReviewSetupError) as exc:
            refused.append(f"{mention}: {exc}")
    for resource in pointed.resources:
        try:
            blocks.append(_resource_block(workspace, resource))
        except (PathRefused, OSError) as exc:
            refused.append(f"{resource.name or resource.uri}: {exc}")
    return blocks, refused


def fit_blocks(blocks: list[Block], refused: list[str], room: int) -> Attached:
    """The blocks as the model reads them, cut to `room` bytes in all, in the order named.

    A block that does not fit whole keeps its head and says how much was cut; one after the
    room is spent is left out, and says so.
    """
    attached = Attached(refused=list(refused))
    parts: list[str] = []
    left = room
    for block in blocks:
        size = len(block.body.encode("utf-8"))
        body, cut = block.body, None
        if size > left:
            kept = block.body.encode("utf-8")[: max(left, 0)].decode("utf-8", "ignore")
            cut = f"{len(kept.encode('utf-8'))} of {size} bytes kept"
            if kept:
                body = (
                    kept + f"\n[cut here to fit the model's context window: {cut}; the rest is not "
                    "shown, read it with the tools if it matters]"
                )
            else:
                cut = f"left out, {size} bytes (no room left in the context window)"
                body = f"[left out to fit the model's context window: {size} bytes]"
        left -= len(body.encode("utf-8"))
        unsaved = ' unsaved="true"' if block.unsaved else ""
        mention, label = html.escape(block.mention), html.escape(block.label)
        parts.append(
            f'<context mention="{mention}" kind="{block.kind}" label="{label}"{unsaved}>\n'
            f"{body}\n</context>"
        )
        item: dict[str, Any] = {
            "mention": block.mention,
            "kind": block.kind,
            "label": block.label,
            "bytes": size,
        }
        if cut:
            item["cut"] = cut
        attached.items.append(item)
    if parts or refused:
        lines = ["The person attached this context to the message below."]
        lines.extend(parts)
        if refused:
            lines.append("Not attached: " + "; ".join(refused))
        attached.note = "\n\n".join(lines)
    return attached


async def attach(workspace: Workspace, text: str, pointed: Pointed | None, room: int) -> Attached:
    """The context `text`'s mentions and `pointed` ask for, within `room` bytes."""
    blocks, refused = await gather(workspace, text, pointed)
    return fit_blocks(blocks, refused, room)


def completions(workspace: Workspace, prefix: str) -> list[str]:
    """What `@prefix` may become: the keywords and the workspace's paths (folders end in `/`)."""
    if not prefix.startswith("@"):
        return []
    typed = prefix[1:]
    found = [f"@{word}" for word in KEYWORDS if word.startswith(typed)]
    folder, _, start = typed.rpartition("/")
    try:
        real = workspace.resolve(folder or ".")
        children = sorted(real.iterdir(), key=lambda p: p.name)
    except (PathRefused, OSError):
        return found
    for child in children:
        if child.name in _SKIPPED_FOLDERS or not child.name.startswith(start):
            continue
        if child.name.startswith(".") and not start.startswith("."):
            continue
        rel = f"{folder}/{child.name}" if folder else child.name
        found.append(f"@{rel}/" if child.is_dir() else f"@{rel}")
    return found
