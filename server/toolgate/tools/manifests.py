"""Every manifest tool of a run, in both formats: `.agent/tools/*.toml` and `tool.yaml`."""

from __future__ import annotations

from pathlib import Path

from toolgate.tools.activity import Activity
from toolgate.tools.manifest import ManifestError, load_toml_manifests
from toolgate.tools.schema import Tool
from toolgate.tools.yaml_manifest import EntrypointActivity, load_tool_manifests


def load_manifests(root: Path) -> list[tuple[Tool, Activity]]:
    """Every manifest tool of a run: `.agent/tools/*.toml`, then every `tool.yaml`."""
    found: list[tuple[Tool, Activity]] = list(load_toml_manifests(root))
    names = {tool.name for tool, _ in found}
    for manifest in load_tool_manifests(root):
        if manifest.name in names:
            raise ManifestError(
                f"{manifest.path}: name: {manifest.name!r} is already a tool in .agent/tools/"
            )
        found.append((manifest.tool(), EntrypointActivity(manifest, root)))
    return found
