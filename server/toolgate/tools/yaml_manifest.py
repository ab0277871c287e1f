"""`tool.yaml` manifests: a tool described by its contract, found in a folder of its own.

A tool lives in `tools/<name>/tool.yaml` in the workspace, or in the person's own tools folder
(`$XDG_CONFIG_HOME/toolgate/tools/<name>/tool.yaml`). The manifest is checked against the
published schema (`schemas/tool-manifest.schema.json`); errors name the file, the field and
what was expected. The entrypoint runs from the tool's folder with the call's arguments as JSON
on stdin and prints one JSON value on stdout, which must match `output_schema`; what it writes
to stderr is progress. A workspace's manifest runs nothing until the person trusts it, which is
remembered by a hash of the manifest and its entrypoint files: a changed tool asks again.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from toolgate.records import ToolResult
from toolgate.runner.process import resolve_executable
from toolgate.schemas import TOOL_MANIFEST, first_error
from toolgate.tools.activity import ActivityContext
from toolgate.tools.entrypoint import run_entrypoint
from toolgate.tools.manifest import ManifestError
from toolgate.tools.schema import FRESH, OTHER, Tool
from toolgate.trust import TrustStore

TOOL_FILE = "tool.yaml"
WORKSPACE_TOOLS = "tools"
DEFAULT_TIMEOUT_SECONDS = 60.0


def user_tools_dir() -> Path:
    """The person's own tools folder (trusted like their config)."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "toolgate" / "tools"


@dataclass(frozen=True)
class ToolManifest:
    """One validated `tool.yaml`."""

    name: str
    version: str
    description: str
    capabilities: tuple[str, ...]
    input_schema: dict[str, Any]
    output_schema: dict[str, Any]
    entrypoint: tuple[str, ...]
    path: Path
    source: str  # "workspace" or "user"
    digest: str
    dependencies: tuple[str, ...] = ()
    idempotency: str = "non_idempotent"
    stability: str = "experimental"
    priority: int = 50
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
    gate: str = "ask"
    kind: str = OTHER  # what it does (toolgate.tools.schema.KINDS); unsaid: it may change anything
    data: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def folder(self) -> Path:
        """The tool's folder: the entrypoint's working directory."""
        return self.path.parent

    @property
    def fingerprint(self) -> str:
        """What the trust store remembers for this exact version of the tool."""
        return f"tool:{self.name}:{self.digest}"

    def tool(self) -> Tool:
        """The tool as the model and the gate see it."""
        return Tool(
            name=self.name,
            description=self.description,
            parameters=dict(self.input_schema),
            output=dict(self.output_schema),
            kind=self.kind,
            asks=True,
            executes=True,
            gate=self.gate,
            capabilities=self.capabilities,
            repeat=FRESH,  # a program's answer may change with anything
        )


def _fail(path: Path, where: str, expected: str) -> ManifestError:
    return ManifestError(f"{path}: {where}: {expected}")


def _inside(folder: Path, candidate: Path) -> bool:
    real_folder = os.path.realpath(folder)
    real = os.path.realpath(candidate)
    return os.path.commonpath([real_folder, real]) == real_folder


def check_entrypoint(path: Path, entrypoint: list[str]) -> list[Path]:
    """Refuse an entrypoint that reaches outside the tool's folder; returns the files it names.

    The first argument is a program looked up on PATH (`python3`, `sh`) or a path inside the
    folder; any later argument that looks like a path must stay inside the folder too.
    """
    folder = path.parent
    files: list[Path] = []
    for index, arg in enumerate(entrypoint):
        names_file = index > 0 and (folder / arg).exists()
        if not ("/" in arg or arg.startswith(".") or names_file):
            continue
        if os.path.isabs(arg):
            raise _fail(
                path,
                f"entrypoint[{index}]",
                f"{arg!r} is an absolute path; expected a path inside the tool's folder",
            )
        target = folder / arg
        if not _inside(folder, target):
            raise _fail(
                path,
                f"entrypoint[{index}]",
                f"{arg!r} leads outside the tool's folder {folder}",
            )
        if index == 0 and not target.is_file():
            raise _fail(path, "entrypoint[0]", f"{arg!r} is not a file in the tool's folder")
        if target.is_file():
            files.append(target)
    return files


def _digest(path: Path, raw: bytes, files: list[Path]) -> str:
    hasher = hashlib.sha256(raw)
    for file in sorted(set(files)):
        hasher.update(b"\0" + str(file.relative_to(path.parent)).encode() + b"\0")
        try:
            hasher.update(file.read_bytes())
        except OSError:
            hasher.update(b"<unreadable>")
    return hasher.hexdigest()[:32]


def read_manifest(path: Path, source: str = "workspace") -> ToolManifest:
    """Read and check one `tool.yaml`; a ManifestError names the file, the field and the rule."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ManifestError(f"{path}: cannot be read: {exc.strerror or exc}") from None
    try:
        doc = yaml.safe_load(raw.decode("utf-8"))
    except (UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ManifestError(f"{path}: not valid YAML: {exc}") from None
    if not isinstance(doc, dict):
        raise _fail(path, "(top)", "a mapping of fields (name, version, …)")
    problem = first_error(TOOL_MANIFEST, doc)
    if problem is not None:
        raise _fail(path, *problem)
    for key in ("input_schema", "output_schema"):
        try:
            Draft202012Validator.check_schema(doc[key])
        except SchemaError as exc:
            where = ".".join([key, *(str(p) for p in exc.path)])
            raise _fail(path, where, f"a valid JSON Schema ({exc.message})") from None
    files = check_entrypoint(path, list(doc["entrypoint"]))
    return ToolManifest(
        name=doc["name"],
        version=str(doc["version"]),
        description=doc["description"],
        capabilities=tuple(doc["capabilities"]),
        input_schema=doc["input_schema"],
        output_schema=doc["output_schema"],
        entrypoint=tuple(doc["entrypoint"]),
        path=path,
        source=source,
        digest=_digest(path, raw, files),
        dependencies=tuple(doc.get("dependencies", ())),
        idempotency=doc.get("idempotency", "non_idempotent"),
        stability=doc.get("stability", "experimental"),
        priority=int(doc.get("priority", 50)),
        timeout_seconds=float(doc.get("timeout_seconds", DEFAULT_TIMEOUT_SECONDS)),
        gate=doc.get("gate", "ask"),
        kind=doc.get("kind", OTHER),
        data=doc,
    )


def manifest_paths(root: Path, *, user: bool = True) -> list[tuple[Path, str]]:
    """Every `tool.yaml` to read, with its source: the person's own first, then the workspace's."""
    found: list[tuple[Path, str]] = []
    folders = [(user_tools_dir(), "user")] if user else []
    folders.append((root / WORKSPACE_TOOLS, "workspace"))
    for folder, source in folders:
        if folder.is_dir():
            found.extend((p, source) for p in sorted(folder.glob(f"*/{TOOL_FILE}")))
    return found


def is_trusted(manifest: ToolManifest, root: Path, store: TrustStore | None = None) -> bool:
    """A person's own tool is trusted; a workspace's once its exact hash was confirmed."""
    if manifest.source == "user":
        return True
    return manifest.fingerprint in (store or TrustStore()).confirmed(root)


class EntrypointActivity:
    """Runs a manifest's entrypoint under the JSON protocol and checks what it prints."""

    def __init__(self, manifest: ToolManifest, root: Path) -> None:
        self.manifest = manifest
        self.root = root
        self._output = Draft202012Validator(manifest.output_schema)

    def command_line(self) -> list[str]:
        """The argv that runs, `python`/`python3` resolved as for any command.

        (Not named `argv`: that would make it a CommandActivity, checked against the command
        allow-list; a manifest tool's entrypoint is trusted by the manifest's hash instead.)
        """
        entry = list(self.manifest.entrypoint)
        folder = self.manifest.folder
        if "/" in entry[0]:
            entry[0] = str((folder / entry[0]).resolve())
        return resolve_executable(entry, folder, root=folder)

    async def run(self, ctx: ActivityContext, args: dict[str, Any]) -> ToolResult:
        """Run the tool once."""
        manifest = self.manifest
        start = time.perf_counter()
        if not ctx.settings.trusted:
            return ToolResult.fail("this workspace is not trusted, so manifest tools may not run")
        if not is_trusted(manifest, self.root):
            return ToolResult.fail(
                f"the tool {manifest.name!r} ({manifest.path}) has not been trusted in this "
                "version: the person must review it and run `toolgate tools trust "
                f"{manifest.name}` first",
                suggestions=["Do the task without this tool, or say what the person must do."],
                data={"refused": "untrusted_manifest"},
            )
        try:
            payload = json.dumps(args, ensure_ascii=False).encode("utf-8")
        except (TypeError, ValueError) as exc:
            return ToolResult.fail(f"arguments cannot be sent as JSON: {exc}")

        def progress(line: str) -> None:
            if ctx.on_progress is not None:
                ctx.on_progress(manifest.name, line)

        outcome = await run_entrypoint(
            self.command_line(),
            manifest.folder,
            payload,
            timeout_seconds=manifest.timeout_seconds,
            max_output_bytes=ctx.settings.max_output_bytes,
            on_stderr=progress,
        )
        duration = round(time.perf_counter() - start, 6)
        common: dict[str, Any] = {
            "duration_seconds": duration,
            "output_truncated": outcome.stdout_truncated,
            "output_size_bytes": outcome.stdout_size_bytes,
        }
        details = {"stderr_tail": outcome.stderr_tail[-1000:]} if outcome.stderr_tail else None
        name = manifest.name
        if outcome.start_error:
            return ToolResult.fail(f"{name}: {outcome.start_error}", **common)
        if outcome.timed_out:
            return ToolResult.fail(
                f"{name} timed out after {manifest.timeout_seconds:g} s; its process group was "
                "ended",
                data=details,
                **common,
            )
        if outcome.exit_code != 0:
            return ToolResult.fail(
                f"{name} exited with status {outcome.exit_code}", data=details, **common
            )
        if outcome.stdout_truncated:
            return ToolResult.fail(
                f"{name} printed {outcome.stdout_size_bytes} bytes, more than the "
                f"{ctx.settings.max_output_bytes}-byte cap for one result",
                **common,
            )
        text = outcome.stdout.decode("utf-8", "replace").strip()
        try:
            value = json.loads(text)
        except ValueError:
            return ToolResult.fail(
                f"{name} printed something that is not one JSON value on stdout: {text[:200]!r}",
                suggestions=[
                    "A tool prints exactly one JSON value on stdout; progress goes to stderr."
                ],
                data=details,
                **common,
            )
        errors = sorted(self._output.iter_errors(value), key=lambda e: list(e.absolute_path))
        if errors:
            where = "/".join(str(p) for p in errors[0].absolute_path) or "(result)"
            return ToolResult.fail(
                f"{name} printed a result that does not match its output_schema: {where}: "
                f"{errors[0].message}",
                data={"output": value},
                **common,
            )
        return ToolResult.ok(value, **common)


def load_tool_manifests(root: Path, *, user: bool = True) -> list[ToolManifest]:
    """Every `tool.yaml` of the person and of the workspace; the first error stops the load."""
    manifests: list[ToolManifest] = []
    seen: dict[str, Path] = {}
    for path, source in manifest_paths(root, user=user):
        manifest = read_manifest(path, source)
        if manifest.name in seen:
            raise ManifestError(
                f"{path}: name: {manifest.name!r} is already the name of the tool in "
                f"{seen[manifest.name]}"
            )
        seen[manifest.name] = path
        manifests.append(manifest)
    return manifests
