"""The workspace's tools as a front end shows them: listed, checked, resolved, made, trusted.

A run sees the built-in tools, the workspace's `.agent/tools/*.toml` and its `tool.yaml` tools;
the terminal's `toolgate tools …` and the editor's "Scaffold missing tool" see the same ones
through here, with the gate's decision each would get and whether the person trusts it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolgate.agent.policy import policy_for
from toolgate.config import Config
from toolgate.planning.workflow import WorkflowError, load_workflow, workflow_paths
from toolgate.tools.activity import CommandActivity
from toolgate.tools.builtins import builtin_registry
from toolgate.tools.capabilities import Contract, Resolution, manifest_files
from toolgate.tools.capabilities import build_registry as capability_registry
from toolgate.tools.manifest import ManifestError, load_manifest
from toolgate.tools.manifests import load_manifests
from toolgate.tools.registry import ToolRegistry
from toolgate.tools.scaffold import ScaffoldError, scaffold
from toolgate.tools.yaml_manifest import (
    EntrypointActivity,
    ToolManifest,
    is_trusted,
    load_tool_manifests,
    read_manifest,
)
from toolgate.trust import TrustStore

__all__ = [
    "Checked",
    "ScaffoldError",
    "Scaffolded",
    "ToolManifest",
    "check_tools",
    "export_schemas",
    "resolve_capability",
    "scaffold_tool",
    "tool_rows",
    "trust_tools",
    "untrusted_tools",
]


def _registry(root: Path) -> tuple[ToolRegistry, dict[str, str], dict[str, bool]]:
    """The tools a run has, where each comes from, and whether each tool.yaml one is trusted."""
    registry = builtin_registry()
    sources = {name: "built-in" for name in registry.names()}
    trusted: dict[str, bool] = {}
    for tool, activity in load_manifests(root):  # the workspace's own tools, as a run has
        registry.add(tool, activity)
        if isinstance(activity, EntrypointActivity):
            sources[tool.name] = activity.manifest.source
            trusted[tool.name] = is_trusted(activity.manifest, root)
        else:
            sources[tool.name] = ".agent/tools"
    return registry, sources, trusted


def export_schemas(root: Path, target: Path) -> int:
    """Write every tool's schema a run would offer to `target`; the number written.

    Raises ManifestError for a workspace manifest that cannot be read.
    """
    registry, _, _ = _registry(root)
    registry.export(target)
    return len(registry.names())


def tool_rows(root: Path, config: Callable[[], Config]) -> list[dict[str, Any]]:
    """Each tool: its gate decision, source, capabilities, trust and summary.

    `config` loads the workspace's configuration (its approvals decide the gate column), once
    the tools are read. Raises ManifestError for a workspace manifest that cannot be read, and
    whatever `config` raises.
    """
    registry, sources, trusted = _registry(root)
    policy = policy_for(config())
    rows: list[dict[str, Any]] = []
    for tool in (t for t in map(registry.get, registry.names()) if t is not None):
        # A program checked against the allow-list: what it does on it (off it, it is asked).
        argv = isinstance(registry.activity(tool.name), CommandActivity)
        decision = policy.decide(tool, command_allowed=True if argv else None)
        rows.append(
            {
                "name": tool.name,
                "gate": decision.value,
                "source": sources.get(tool.name, ""),
                "capabilities": list(tool.capabilities),
                "trusted": trusted.get(tool.name, True),
                "summary": tool.summary,
                "argv_template": argv and tool.name not in trusted,
            }
        )
    return rows


@dataclass(frozen=True)
class Checked:
    """One manifest or workflow checked: its name when it reads, else the error."""

    path: Path
    name: str | None
    error: str | None = None
    workflow: bool = False


def check_tools(root: Path, paths: Iterable[Path] = ()) -> list[Checked]:
    """Check the given tool manifests, else every manifest and workflow of the workspace."""
    given = [(Path(p).resolve(), "workspace") for p in paths]
    checked: list[Checked] = []
    for path, source in given or manifest_files(root):
        try:
            if path.suffix == ".toml":
                tool, _ = load_manifest(path)
                name = tool.name
            else:
                name = read_manifest(path, "user" if source == "user" else "workspace").name
        except ManifestError as exc:
            checked.append(Checked(path, None, str(exc)))
            continue
        checked.append(Checked(path, name))
    if not given:
        for path in workflow_paths(root):
            try:
                load_workflow(path)
            except WorkflowError as exc:
                checked.append(Checked(path, None, str(exc), workflow=True))
                continue
            checked.append(Checked(path, path.stem, workflow=True))
    return checked


def resolve_capability(
    root: Path, capability: str, inputs: Iterable[str] = (), outputs: Iterable[str] = ()
) -> Resolution:
    """Which tool provides a capability (for these inputs and outputs, when given).

    Raises ManifestError for a manifest that cannot be read.
    """
    contract = Contract(tuple(inputs), tuple(outputs))
    registry = capability_registry(root)
    return registry.resolve(capability, contract if contract.inputs or contract.outputs else None)


@dataclass(frozen=True)
class Scaffolded:
    """A tool made just now: its files (the manifest first) and its manifest."""

    files: list[Path]
    manifest: ToolManifest

    def folder(self, root: Path) -> str:
        """The tool's folder, relative to the workspace when it is inside it."""
        try:
            return self.files[0].parent.resolve().relative_to(root.resolve()).as_posix()
        except ValueError:  # the person's own tools folder, outside the workspace
            return str(self.files[0].parent)


def scaffold_tool(
    root: Path,
    name: str,
    capability: str,
    *,
    language: str = "python",
    inputs: Iterable[str] = (),
    outputs: Iterable[str] = (),
    description: str | None = None,
) -> Scaffolded:
    """Write tools/NAME (manifest, entrypoint, test) and trust this exact version of it.

    The person asked for it just now, so it is theirs; an edit changes its fingerprint and asks
    again. Raises ScaffoldError when the tool cannot be made.
    """
    files = scaffold(
        root,
        name,
        capability,
        language=language,
        inputs=list(inputs),
        outputs=list(outputs),
        description=description,
    )
    manifest = read_manifest(files[0])
    TrustStore().confirm(root, [manifest.fingerprint])
    return Scaffolded(files, manifest)


def untrusted_tools(root: Path, names: Iterable[str] = ()) -> list[ToolManifest]:
    """The workspace's tool.yaml tools (those named, else all) the person has not trusted.

    Raises ManifestError for a manifest that cannot be read, KeyError naming a tool that is not
    there.
    """
    wanted = set(names)
    manifests = load_tool_manifests(root, user=False)
    unknown = wanted - {m.name for m in manifests}
    if unknown:
        raise KeyError(sorted(unknown)[0])
    store = TrustStore()
    return [
        m for m in manifests if (not wanted or m.name in wanted) and not is_trusted(m, root, store)
    ]


def trust_tools(root: Path, manifests: Iterable[ToolManifest]) -> None:
    """Trust these versions of the tools: their fingerprints, remembered for the workspace."""
    TrustStore().confirm(root, [m.fingerprint for m in manifests])
