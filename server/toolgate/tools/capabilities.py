"""The capability registry: which tool does `domain.action`, by contract, stability, priority.

Built from the built-in tools (each `Tool` declares its capabilities and output fields), the
`.agent/tools/*.toml` manifests and every `tool.yaml`, and cached in
`.toolgate/registry-cache.json`: a manifest whose modification time and size are unchanged is
not read again, and one whose time changed but whose hash did not is not parsed again.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from toolgate.tools.manifest import ManifestError, load_manifest
from toolgate.tools.registry import ToolRegistry
from toolgate.tools.yaml_manifest import manifest_paths, read_manifest
from toolgate.workspace.files import atomic_write_text, toolgate_dir

CACHE_FILE = "registry-cache.json"
_CACHE_VERSION = 1
CAPABILITY = re.compile(r"^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$")

BUILTIN_PRIORITY = 60

# Resolution fails with one of these reasons (the gap report's `reason`).
NO_MATCH = "no_capability_match"
INCOMPATIBLE = "schema_incompatible"
LOW_CONFIDENCE = "low_confidence"
INVALID = "invalid_capability"


@dataclass(frozen=True)
class Provider:
    """One tool as the registry sees it: what it does and the contract it keeps."""

    name: str
    capabilities: tuple[str, ...]
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None
    stability: str
    priority: int
    source: str  # builtin | user | workspace | toml
    version: str = ""
    gate: str = ""
    path: str | None = None
    description: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (cache, `--json` output)."""
        return {**asdict(self), "capabilities": list(self.capabilities)}

    @classmethod
    def from_dict(cls, doc: dict[str, Any]) -> Provider:
        """Read back the JSON form."""
        return cls(**{**doc, "capabilities": tuple(doc["capabilities"])})


@dataclass(frozen=True)
class Contract:
    """What a step gives a tool and needs from it."""

    inputs: tuple[str, ...] = ()
    outputs: tuple[str, ...] = ()


@dataclass
class Resolution:
    """The tool chosen for a capability, or why there is none."""

    capability: str
    provider: Provider | None
    reason: str | None = None
    message: str = ""
    details: dict[str, Any] = field(default_factory=dict)
    candidates: list[Provider] = field(default_factory=list)


def contract_problems(provider: Provider, contract: Contract) -> list[str]:
    """Why a tool cannot keep a step's contract (empty when it can)."""
    problems: list[str] = []
    schema = provider.input_schema or {}
    props = schema.get("properties", {}) or {}
    closed = schema.get("additionalProperties") is False
    given = set(contract.inputs)
    for name in contract.inputs:
        if closed and name not in props:
            problems.append(f"its input_schema does not accept the input {name!r}")
    for name in schema.get("required", []) or []:
        if name not in given:
            problems.append(f"it requires the input {name!r}, which the step does not give")
    out_props = (provider.output_schema or {}).get("properties", {}) or {}
    for name in contract.outputs:
        if name not in out_props:
            problems.append(f"its output_schema does not provide {name!r}")
    return problems


def _rank(provider: Provider) -> tuple[int, int, str]:
    return (0 if provider.stability == "stable" else 1, -provider.priority, provider.name)


class CapabilityRegistry:
    """Tools by capability."""

    def __init__(self, providers: list[Provider]) -> None:
        self.providers = list(providers)

    def capabilities(self) -> list[str]:
        """Every capability some tool provides, sorted."""
        return sorted({c for p in self.providers for c in p.capabilities})

    def get(self, name: str) -> Provider | None:
        """The provider of that tool name."""
        return next((p for p in self.providers if p.name == name), None)

    def resolve(self, capability: str, contract: Contract | None = None) -> Resolution:
        """The best tool for a capability: compatible contract, then stable, then priority.

        Without a contract, any tool that provides the capability is compatible.
        """
        if not CAPABILITY.match(capability):
            return Resolution(
                capability,
                None,
                INVALID,
                f"{capability!r} is not a capability name (domain.action, e.g. docs.render)",
            )
        candidates = sorted((p for p in self.providers if capability in p.capabilities), key=_rank)
        if not candidates:
            domain = capability.split(".", 1)[0] + "."
            near = [c for c in self.capabilities() if c.startswith(domain)]
            return Resolution(
                capability,
                None,
                NO_MATCH,
                f"no tool provides {capability}",
                {"known_in_domain": near},
            )
        problems = {
            p.name: contract_problems(p, contract) if contract is not None else []
            for p in candidates
        }
        compatible = [p for p in candidates if not problems[p.name]]
        if not compatible:
            return Resolution(
                capability,
                None,
                INCOMPATIBLE,
                f"{len(candidates)} tool(s) provide {capability} but none keeps the step's "
                "contract",
                {"candidates": {name: found for name, found in problems.items()}},
                candidates,
            )
        return Resolution(capability, compatible[0], candidates=candidates)


def builtin_providers() -> list[Provider]:
    """The built-in tools as providers."""
    from toolgate.tools.builtins import builtin_registry

    providers = []
    registry = builtin_registry()
    for tool in (t for t in map(registry.get, registry.names()) if t is not None):
        if not tool.capabilities:
            continue
        output = tool.output or {"type": "object", "properties": {f: {} for f in tool.outputs}}
        providers.append(
            Provider(
                name=tool.name,
                capabilities=tool.capabilities,
                input_schema=tool.parameters,
                output_schema=output,
                stability="stable",
                priority=BUILTIN_PRIORITY,
                source="builtin",
                description=tool.summary,
            )
        )
    return providers


def _hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _read_provider(path: Path, source: str) -> Provider:
    if path.suffix == ".toml":
        tool, _ = load_manifest(path)
        return Provider(
            name=tool.name,
            capabilities=tool.capabilities,
            input_schema=tool.parameters,
            output_schema=tool.output,
            stability="stable",
            priority=50,
            source="toml",
            gate="ask",
            path=str(path),
            description=tool.summary,
        )
    manifest = read_manifest(path, source)
    return Provider(
        name=manifest.name,
        capabilities=manifest.capabilities,
        input_schema=manifest.input_schema,
        output_schema=manifest.output_schema,
        stability=manifest.stability,
        priority=manifest.priority,
        source=source,
        version=manifest.version,
        gate=manifest.gate,
        path=str(path),
        description=manifest.description.strip().splitlines()[0],
    )


def manifest_files(root: Path) -> list[tuple[Path, str]]:
    """Every manifest file the registry reads, with its source."""
    toml = sorted((root / ".agent" / "tools").glob("*.toml"))
    return [(p, "toml") for p in toml] + manifest_paths(root)


def build_registry(
    root: Path, *, use_cache: bool = True, write_cache: bool = True
) -> CapabilityRegistry:
    """Scan the manifests (through the cache) and add the built-ins.

    `write_cache=False` leaves the disk as it is (a dry run writes nothing).

    Raises ManifestError for the first manifest that cannot be used.
    """
    cache_path = root / ".toolgate" / CACHE_FILE
    cached: dict[str, Any] = {}
    if use_cache:
        try:
            doc = json.loads(cache_path.read_text("utf-8"))
            if isinstance(doc, dict) and doc.get("version") == _CACHE_VERSION:
                cached = doc.get("manifests", {})
        except (OSError, ValueError):
            cached = {}
    entries: dict[str, Any] = {}
    providers = builtin_providers()
    for path, source in manifest_files(root):
        stat = path.stat()
        key = str(path)
        entry = cached.get(key)
        provider: Provider | None = None
        digest: str | None = None
        if entry and entry.get("source") == source:
            if (entry.get("mtime_ns"), entry.get("size")) == (stat.st_mtime_ns, stat.st_size):
                provider, digest = Provider.from_dict(entry["provider"]), entry["sha256"]
            else:
                digest = _hash(path)
                if digest == entry.get("sha256"):
                    provider = Provider.from_dict(entry["provider"])
        if provider is None:
            provider = _read_provider(path, source)
            digest = digest or _hash(path)
        if any(p.name == provider.name for p in providers):
            raise ManifestError(f"{path}: name: {provider.name!r} is already a tool's name")
        providers.append(provider)
        entries[key] = {
            "source": source,
            "mtime_ns": stat.st_mtime_ns,
            "size": stat.st_size,
            "sha256": digest,
            "provider": provider.to_dict(),
        }
    if use_cache and write_cache and entries != cached:
        doc = {"version": _CACHE_VERSION, "manifests": entries}
        try:
            toolgate_dir(root)
            atomic_write_text(cache_path, json.dumps(doc, indent=2, sort_keys=True) + "\n")
        except OSError:
            pass  # a read-only workspace only loses the cache
    return CapabilityRegistry(providers)


def operations_done(steps: list[dict[str, Any]], tools: ToolRegistry) -> list[str]:
    """`call_id capability` for every call of a run's log that succeeded (its final account)."""
    done: list[str] = []
    for step in steps:
        for call in step.get("calls", []):
            if not (call.get("result") or {}).get("success"):
                continue
            tool = tools.get(call.get("name", ""))
            caps = tool.capabilities if tool is not None else ()
            done.append(f"{call.get('id')} {caps[0] if caps else call.get('name')}")
    return done
