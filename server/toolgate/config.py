"""Configuration: defaults, user file, workspace files, environment, flags — and trust.

Workspace files come from whoever wrote the repository. Settings from them may tighten the
policy freely, but anything that widens it, and any base URL that would receive the person's
API key, takes effect only after the person confirms it once (see `toolgate.trust`).
"""

from __future__ import annotations

import difflib
import functools
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

from toolgate.calls.writing import PROMPT_SYNTAXES
from toolgate.customize.hooks import Hook, HookError, parse_hooks, settings_hooks
from toolgate.customize.mcp_json import read_mcp_file, workspace_mcp_files
from toolgate.customize.places import user_config_dir
from toolgate.runner.sandbox import MODES as SANDBOX_MODES
from toolgate.runner.sandbox import SandboxSettings

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

DEFAULT_ALLOWED_COMMANDS = ["pytest", "python -m pytest", "python3 -m pytest", "py.test"]
# A plan's step under this coverage confidence is a gap (toolgate.planning), fail-closed.
DEFAULT_MIN_CONFIDENCE = 0.6


class ConfigError(ValueError):
    """A configuration file or value that cannot be used; names the file and key."""


_DECISION = {"enum": ["auto", "ask", "deny"]}
_STRINGS = {"type": "array", "items": {"type": "string"}}
_POSITIVE = {"type": "integer", "minimum": 1}
# A server is a program (`command`, spoken to over stdio) or a URL (`url`, over Streamable
# HTTP or the older SSE transport); strings may name the environment as ${env:NAME}.
_MCP_SERVER = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "command": {"type": "array", "items": {"type": "string"}, "minItems": 1},
        "env": {"type": "object", "additionalProperties": {"type": "string"}},
        "approval": _DECISION,
        "url": {"type": "string", "pattern": "^https?://[^/]"},
        "type": {"enum": ["stdio", "http", "sse"]},
        "headers": {"type": "object", "additionalProperties": {"type": "string"}},
        "oauth": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "enabled": {"type": "boolean"},
                "client_id": {"type": "string"},
                "client_secret": {"type": "string"},
                "client_metadata_url": {"type": "string", "pattern": "^https://[^/]+/."},
                "scope": {"type": "string"},
                "redirect_port": {"type": "integer", "minimum": 0, "maximum": 65535},
            },
        },
    },
}


def _mcp_server_problem(table: dict[str, Any]) -> str | None:
    """What is wrong with a `[mcp.servers.NAME]` table the schema let through, if anything."""
    if ("command" in table) == ("url" in table):
        return "give either command (a program to start) or url (a remote server)"
    kind = table.get("type", "http" if "url" in table else "stdio")
    if (kind == "stdio") != ("command" in table):
        return f'type = "{kind}" does not go with ' + ("url" if "url" in table else "command")
    remote_only = sorted({"headers", "oauth"} & set(table)) if "command" in table else []
    if remote_only:
        return f"{remote_only[0]} is for a server given by url"
    if "env" in table and "url" in table:
        return "env is for a server given by command (a remote server gets headers)"
    return None


# The agent's own jobs served over MCP (`toolgate mcp --agent-tools`, toolgate.agent_tools).
AGENT_TOOLS = (
    "implement_code",
    "review_code",
    "run_tests",
    "refactor_code",
    "generate_documentation",
)
_AGENT_TOOL = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "enabled": {"type": "boolean"},
        "timeout_seconds": {"type": "number", "exclusiveMinimum": 0},
        "retry_count": {"type": "integer", "minimum": 0, "maximum": 10},
    },
}

SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "profile": {"type": "string"},
        "model": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "name": {"type": "string"},
                "base_url": {"type": "string"},
                "api_key_env": {"type": "string"},
                "tool_choice": {"type": "string"},
                "stream": {"type": "boolean"},
                "temperature": {"type": "number"},
                "max_tokens": _POSITIVE,
                "timeout_seconds": {"type": "number", "exclusiveMinimum": 0},
                "context_tokens": {"type": "integer", "minimum": 1024},
            },
        },
        "policy": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "approvals": {"type": "object", "additionalProperties": _DECISION},
                "allow_tools": _STRINGS,
                "deny_tools": _STRINGS,
                "allowed_commands": _STRINGS,
            },
        },
        "limits": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "max_steps": _POSITIVE,
                "max_llm_calls": _POSITIVE,
                "max_run_seconds": {"type": "number", "exclusiveMinimum": 0},
                "max_tool_retries": {"type": "integer", "minimum": 0},
                "command_timeout_seconds": {"type": "number", "exclusiveMinimum": 0},
                "max_file_bytes": _POSITIVE,
            },
        },
        # Checked by toolgate.customize.hooks (the shape other agents' settings files share).
        "hooks": {"type": "object"},
        "mcp": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "servers": {
                    "type": "object",
                    "propertyNames": {"pattern": "^[A-Za-z0-9-]+(_[A-Za-z0-9-]+)*$"},
                    "additionalProperties": _MCP_SERVER,
                },
            },
        },
        "agent_tools": {
            "type": "object",
            "additionalProperties": False,
            "properties": {name: _AGENT_TOOL for name in AGENT_TOOLS},
        },
        "planning": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "min_confidence": {"type": "number", "minimum": 0, "maximum": 1},
                "allow_capabilities": _STRINGS,
                "deny_capabilities": _STRINGS,
            },
        },
        "review": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "max_rounds": {"type": "integer", "minimum": 1, "maximum": 10},
                "focus": _STRINGS,
                "coding_standards": {"type": "string"},
                "test_command": {"type": "string", "minLength": 1},
            },
        },
        "sandbox": {
            # `sandbox = "required"` is short for `[sandbox] mode = "required"`.
            "oneOf": [
                {"enum": list(SANDBOX_MODES)},
                {
                    "type": "object",
                    "additionalProperties": False,
                    "properties": {
                        "mode": {"enum": list(SANDBOX_MODES)},
                        "network": {"type": "boolean"},
                    },
                },
            ]
        },
        "tool_calling": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "enabled": {"type": "boolean"},
                "mode": {"enum": ["auto", "native", "text"]},
                "max_depth": _POSITIVE,
                "max_argument_depth": _POSITIVE,
                "latent_tools": _STRINGS,
                "allow_deprecated_syntax": {"type": "boolean"},
                "final_answer_tool": {"type": "boolean"},
                "compact_prompt": {"type": "boolean"},
                "grammar": {"type": "boolean"},
                "text_syntax": {"enum": list(PROMPT_SYNTAXES)},
                "syntax_modules": {"type": "array", "items": {"type": "string", "minLength": 1}},
                "retention": {
                    "type": "object",
                    "additionalProperties": False,
                    "properties": {
                        "store_raw_tool_output": {"type": "boolean"},
                        "max_output_bytes": _POSITIVE,
                    },
                },
            },
        },
    },
}
_VALIDATOR = Draft202012Validator(SCHEMA)


@dataclass
class Limits:
    """When a run must stop (the agent loop reads the first four, the tools the rest)."""

    max_steps: int = 30
    max_llm_calls: int = 40
    max_run_seconds: float = 900.0
    max_tool_retries: int = 3
    command_timeout_seconds: float = 300.0
    max_file_bytes: int = 2 * 1024 * 1024


@dataclass
class Retention:
    """What is kept of a tool's output (`[tool_calling.retention]`)."""

    store_raw_tool_output: bool = False  # the whole output in the run log, not what the model read
    max_output_bytes: int = 16_000  # what the model reads of one result


@dataclass
class ToolCalling:
    """How tools are offered to the model and how its calls are read."""

    enabled: bool = True
    mode: str = "auto"
    # How many latent answers deep a run may go: a review the model asked for (1), and one
    # latent call from inside that answer (2). Each level is a nested model request.
    max_depth: int = 2
    # The deepest JSON nesting accepted in a call's arguments and in a structured answer
    # (a review's comments are 3 levels deep).
    max_argument_depth: int = 32
    # Latent tools offered in every run, answered by a nested model request (a profile that
    # names one in its `tools` offers it too); none by default, to keep prompts short.
    latent_tools: list[str] = field(default_factory=list)
    allow_deprecated_syntax: bool = True
    final_answer_tool: bool = True
    # The compact prompt: short tool descriptions, bare schemas, a short role (text mode: a
    # signature and an example per tool). None: on for windows of at most COMPACT_WINDOW
    # tokens and for the embedded model (`agent.prompt.wants_compact`); true or false forces it.
    compact_prompt: bool | None = None
    # Text-mode answers held to a grammar of the offered tools' calls (llama.cpp's `grammar`
    # request field). None: for the embedded model only; true: for any endpoint, a llama.cpp or
    # llama-cpp-python server the person runs; false: never.
    grammar: bool | None = None
    text_syntax: str = "tag"  # the call format the text-mode prompt asks for
    syntax_modules: list[str] = field(default_factory=list)  # syntaxes from outside, by module
    retention: Retention = field(default_factory=lambda: Retention())


@dataclass
class AgentToolSettings:
    """One agent tool's `[agent_tools.<name>]` table."""

    enabled: bool = True
    timeout_seconds: float = 900.0  # the whole job: its run, and its test runs
    retry_count: int = 0  # further attempts after a run that failed or timed out


@dataclass
class TrustItem:
    """A setting from workspace files that needs the person's confirmation before it counts."""

    kind: str  # "widening" or "base_url"
    key: str
    value: Any
    source: str

    @property
    def fingerprint(self) -> str:
        """A stable identity for remembering the confirmation."""
        return f"{self.kind}:{self.key}={self.value!r}"

    def describe(self) -> str:
        """One line for the person."""
        if self.kind == "base_url":
            return f"{self.source} sends requests (with your API key) to {self.value}"
        if self.key.startswith("mcp.servers.") and "url" in self.value:
            return (
                f"{self.source} connects to the MCP server {self.key[12:]!r} at {self.value['url']}"
            )
        if self.key.startswith("mcp.servers."):
            argv = " ".join(self.value.get("command", []))
            return f"{self.source} starts the MCP server {self.key[12:]!r}: {argv}"
        if self.key == "tool_calling.syntax_modules":
            return f"{self.source} imports the Python module {self.value!r} to read tool calls"
        if self.key.startswith("hooks."):
            matcher = f" for {self.value['matcher']}" if self.value.get("matcher") else ""
            return (
                f"{self.source} runs a command on {self.key[6:]}{matcher}: {self.value['command']}"
            )
        return f"{self.source} widens the policy: {self.key} = {self.value!r}"


@dataclass
class ModelConfig:
    """Which model, where it is served, and how it is asked (`[model]`)."""

    name: str | None = None  # None: the endpoint's first listed model
    base_url: str | None = None
    tool_choice: str = "auto"
    stream: bool = True
    temperature: float | None = None
    max_tokens: int | None = None
    timeout_seconds: float = 600.0
    context_tokens: int | None = None  # the model's window; None: ask the endpoint


@dataclass
class PolicyConfig:
    """What the gate decides on its own and which commands it lets run (`[policy]`)."""

    approvals: dict[str, str] = field(default_factory=dict)
    allow_tools: list[str] | None = None
    deny_tools: list[str] = field(default_factory=list)
    allowed_commands: list[str] = field(default_factory=lambda: list(DEFAULT_ALLOWED_COMMANDS))


@dataclass
class McpConfig:
    """Other MCP servers whose tools runs may call (`[mcp]`)."""

    servers: dict[str, dict[str, Any]] = field(default_factory=dict)  # name → its table
    sources: dict[str, str] = field(default_factory=dict)  # name → the file it came from


@dataclass
class Config:
    """Everything a run needs to know, already merged and validated.

    One field per table of the files, named as the table, each a record whose fields are the
    table's keys (`[planning]` and `[review]` are kept as read, `[hooks]` as the hooks it names).
    """

    profile: str = "developer"
    model: ModelConfig = field(default_factory=ModelConfig)
    # The key itself is no key of any file: OPENAI_API_KEY, the variable the person's own
    # `model.api_key_env` names, or the editor's secret storage.
    api_key: str | None = field(default=None, repr=False)
    policy: PolicyConfig = field(default_factory=PolicyConfig)
    limits: Limits = field(default_factory=Limits)
    tool_calling: ToolCalling = field(default_factory=ToolCalling)
    mcp: McpConfig = field(default_factory=McpConfig)
    # Hooks that run: the person's own, and a workspace's once confirmed (docs/CUSTOMIZE.md).
    hooks: list[Hook] = field(default_factory=list)
    sandbox: SandboxSettings = field(default_factory=SandboxSettings)
    # [planning]: min_confidence, allow_capabilities, deny_capabilities (toolgate.planning).
    planning: dict[str, Any] = field(default_factory=dict)
    # [review]: max_rounds, focus, coding_standards, test_command (toolgate.code_review).
    review: dict[str, Any] = field(default_factory=dict)
    agent_tools: dict[str, AgentToolSettings] = field(
        default_factory=lambda: {name: AgentToolSettings() for name in AGENT_TOOLS}
    )
    # What a customization file held that could not be used, one line each, for the person.
    notes: list[str] = field(default_factory=list)
    pending_trust: list[TrustItem] = field(default_factory=list)


def _check(doc: dict[str, Any], source: str) -> None:
    errors = sorted(_VALIDATOR.iter_errors(doc), key=lambda e: list(e.absolute_path))
    if not errors:
        return
    error = errors[0]
    where = ".".join(str(p) for p in error.absolute_path)
    if error.validator == "additionalProperties":
        known = list(error.schema.get("properties", {}))
        extra = sorted(set(error.instance) - set(known))
        key = ".".join(filter(None, [where, extra[0] if extra else ""]))
        raise ConfigError(f"{source}: unknown key '{key}'" + _hint(extra[:1], known, where))
    raise ConfigError(f"{source}: '{where or '(top)'}': {error.message}")


def _hint(extra: list[str], known: list[str], where: str) -> str:
    """A pointer to what was meant: the close key name, or the file's own table layout."""
    if not extra:
        return ""
    if extra[0] == "tool" and not where:
        return (
            " — this file takes the tables at its top level ([model], [limits], …); "
            "[tool.toolgate…] is pyproject.toml's form"
        )
    close = difflib.get_close_matches(extra[0], known, n=1)
    return f" — did you mean '{close[0]}'?" if close else ""


def _read_toml(path: Path, table: tuple[str, ...] = ()) -> dict[str, Any] | None:
    try:
        with path.open("rb") as handle:
            doc = tomllib.load(handle)
    except FileNotFoundError:
        return None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    for name in table:
        inner = doc.get(name)
        if not isinstance(inner, dict):
            return None
        doc = inner
    return doc


def user_config_path() -> Path:
    """The person's own config file (trusted)."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "toolgate" / "config.toml"


def workspace_config_files(root: Path) -> list[tuple[Path, dict[str, Any]]]:
    """The workspace's config documents, lowest precedence first."""
    found = []
    pyproject = _read_toml(root / "pyproject.toml", ("tool", "toolgate"))
    if pyproject is not None:
        found.append((root / "pyproject.toml", pyproject))
    own = _read_toml(root / ".toolgate" / "config.toml")
    if own is not None:
        found.append((root / ".toolgate" / "config.toml", own))
    return found


@dataclass
class _Source:
    """The document being merged: where it comes from, and whether the person wrote it."""

    name: str
    trusted: bool
    config: Config

    def hold(self, key: str, value: Any, kind: str = "widening") -> None:
        """Keep a setting back until the person confirms it."""
        self.config.pending_trust.append(TrustItem(kind, key, value, self.name))


def _apply(config: Config, doc: dict[str, Any], source: str, *, trusted: bool) -> None:
    """Merge one validated document into the config, holding back what needs trust."""
    origin = _Source(source, trusted, config)
    if "profile" in doc:
        config.profile = doc["profile"]
    for name, apply in _TABLES:
        if name in doc:
            apply(config, doc[name], origin)


def _apply_model(config: Config, model: dict[str, Any], origin: _Source) -> None:
    if "base_url" in model and not origin.trusted:
        origin.hold("model.base_url", model["base_url"], kind="base_url")
    if "api_key_env" in model and origin.trusted:
        config.api_key = os.environ.get(model["api_key_env"]) or config.api_key
    _set(config.model, {k: v for k, v in model.items() if k != "api_key_env"})


def _apply_policy(config: Config, table: dict[str, Any], origin: _Source) -> None:
    policy = config.policy
    for tool, decision in table.get("approvals", {}).items():
        widening = _widens(policy.approvals.get(tool), tool, decision)
        if widening and not origin.trusted:
            origin.hold(f"policy.approvals.{tool}", decision)
        else:
            policy.approvals[tool] = decision
    if "deny_tools" in table:
        policy.deny_tools = sorted(set(policy.deny_tools) | set(table["deny_tools"]))
    if "allow_tools" in table:
        wanted = list(table["allow_tools"])
        if policy.allow_tools is not None and not origin.trusted:
            wanted = [t for t in wanted if t in policy.allow_tools]  # can only narrow
        policy.allow_tools = wanted
    if "allowed_commands" in table:
        _apply_allowed_commands(policy, table["allowed_commands"], origin)


def _apply_allowed_commands(policy: PolicyConfig, commands: list[str], origin: _Source) -> None:
    if origin.trusted:
        policy.allowed_commands = list(commands)
        return
    # Narrowing is immediate; each new command waits for the person.
    new = [c for c in commands if c not in policy.allowed_commands]
    policy.allowed_commands = [c for c in commands if c in policy.allowed_commands]
    for command in new:
        origin.hold("policy.allowed_commands", command)


def _apply_mcp(config: Config, mcp: dict[str, Any], origin: _Source) -> None:
    for name, server in mcp.get("servers", {}).items():
        problem = _mcp_server_problem(server)
        if problem is not None:
            raise ConfigError(f"{origin.name}: 'mcp.servers.{name}': {problem}")
        # Starting a server runs a program, and a remote one gets the workspace's data: a
        # workspace's own servers wait for the person.
        if origin.trusted:
            config.mcp.servers[name] = dict(server)
            config.mcp.sources[name] = origin.name
        else:
            origin.hold(f"mcp.servers.{name}", dict(server))


def _apply_hooks(config: Config, table: dict[str, Any], origin: _Source) -> None:
    try:
        hooks = parse_hooks(table, origin.name)
    except HookError as exc:
        raise ConfigError(str(exc)) from None
    for hook in hooks:
        # A hook runs a command line: a workspace's own waits for the person, by its text.
        if origin.trusted:
            config.hooks.append(hook)
        else:
            origin.hold(f"hooks.{hook.event}", hook.table())


# How much each sandbox mode confines: a workspace file may only raise it without a confirmation.
_SANDBOX_STRENGTH = {"off": 0, "auto": 1, "required": 2}


def _apply_sandbox(config: Config, table: Any, origin: _Source) -> None:
    if isinstance(table, str):
        table = {"mode": table}
    mode = table.get("mode", config.sandbox.mode)
    network = table.get("network", config.sandbox.network)
    if not origin.trusted and _SANDBOX_STRENGTH[mode] < _SANDBOX_STRENGTH[config.sandbox.mode]:
        origin.hold("sandbox.mode", mode)
        mode = config.sandbox.mode
    if not origin.trusted and network and not config.sandbox.network:
        origin.hold("sandbox.network", True)
        network = False
    config.sandbox = SandboxSettings(mode=mode, network=network)


def _apply_limits(config: Config, limits: dict[str, Any], origin: _Source) -> None:
    _set(config.limits, limits)


def _apply_planning(config: Config, planning: dict[str, Any], origin: _Source) -> None:
    now = config.planning
    if "deny_capabilities" in planning:
        denied = set(now.get("deny_capabilities", [])) | set(planning["deny_capabilities"])
        now["deny_capabilities"] = sorted(denied)
    if "min_confidence" in planning:
        # A workspace may ask for more confidence, never for less.
        current = now.get("min_confidence", DEFAULT_MIN_CONFIDENCE)
        if origin.trusted or planning["min_confidence"] > current:
            now["min_confidence"] = planning["min_confidence"]
    if "allow_capabilities" in planning:
        wanted = list(planning["allow_capabilities"])
        allowed = now.get("allow_capabilities")
        if allowed is not None and not origin.trusted:
            wanted = [c for c in wanted if c in allowed]  # can only narrow
        now["allow_capabilities"] = wanted


def _apply_review(config: Config, review: dict[str, Any], origin: _Source) -> None:
    config.review.update(review)


def _apply_agent_tools(config: Config, agent_tools: dict[str, Any], origin: _Source) -> None:
    for name, table in agent_tools.items():
        settings = config.agent_tools[name]
        for key, value in table.items():
            # A workspace may switch a tool off, never back on once the person switched it off.
            if key == "enabled" and value and not settings.enabled and not origin.trusted:
                continue
            setattr(settings, key, value)


def _apply_tool_calling(config: Config, calling: dict[str, Any], origin: _Source) -> None:
    for key, value in calling.items():
        if key == "retention":
            _set(config.tool_calling.retention, value)
        elif key == "syntax_modules" and not origin.trusted:
            # Importing a module runs its code: a workspace's own modules wait for the person.
            known = config.tool_calling.syntax_modules
            config.tool_calling.syntax_modules = [m for m in value if m in known]
            for module in value:
                if module not in known:
                    origin.hold("tool_calling.syntax_modules", module)
        else:
            setattr(config.tool_calling, key, value)


def _set(record: Any, table: dict[str, Any]) -> None:
    """Set a record's fields from its table: the keys are the field names."""
    for key, value in table.items():
        setattr(record, key, value)


# Each table of a document and the function that merges it, in the order they are merged (the
# order in which what waits for the person is listed).
_TABLES: tuple[tuple[str, Callable[[Config, Any, _Source], None]], ...] = (
    ("model", _apply_model),
    ("policy", _apply_policy),
    ("mcp", _apply_mcp),
    ("hooks", _apply_hooks),
    ("sandbox", _apply_sandbox),
    ("limits", _apply_limits),
    ("planning", _apply_planning),
    ("review", _apply_review),
    ("agent_tools", _apply_agent_tools),
    ("tool_calling", _apply_tool_calling),
)


@functools.cache
def _asked_by_default() -> frozenset[str]:
    """The built-in tools the gate asks about by default (each `Tool` says so itself)."""
    from toolgate.tools.builtins import builtin_tools  # only when a workspace sets approvals

    return frozenset(tool.name for tool in builtin_tools() if tool.asks)


def _widens(current: str | None, tool: str, decision: str) -> bool:
    order = {"deny": 0, "ask": 1, "auto": 2}
    # "server__tool" names are MCP tools, which ask unless the person's own config says not.
    gated = tool in _asked_by_default() or "__" in tool
    baseline = current or ("ask" if gated else "auto")
    return order[decision] > order[baseline]


def apply_trust(config: Config, confirmed: set[str]) -> list[TrustItem]:
    """Let the confirmed items take effect; returns the ones still unconfirmed."""
    still: list[TrustItem] = []
    for item in config.pending_trust:
        if item.fingerprint not in confirmed:
            still.append(item)
            continue
        if item.kind == "widening" and item.key.startswith("policy.approvals."):
            config.policy.approvals[item.key.rsplit(".", 1)[1]] = item.value
        elif item.kind == "widening" and item.key == "policy.allowed_commands":
            config.policy.allowed_commands.append(item.value)
        elif item.kind == "widening" and item.key.startswith("mcp.servers."):
            config.mcp.servers[item.key[12:]] = dict(item.value)
            config.mcp.sources[item.key[12:]] = item.source
        elif item.kind == "widening" and item.key.startswith("hooks."):
            config.hooks.append(
                Hook(
                    item.key[6:],
                    item.value["command"],
                    item.value.get("matcher", ""),
                    float(item.value.get("timeout", 60)),
                    item.source,
                )
            )
        elif item.kind == "widening" and item.key == "sandbox.mode":
            config.sandbox = SandboxSettings(mode=item.value, network=config.sandbox.network)
        elif item.kind == "widening" and item.key == "tool_calling.syntax_modules":
            config.tool_calling.syntax_modules.append(item.value)
        elif item.kind == "widening" and item.key == "sandbox.network":
            config.sandbox = SandboxSettings(mode=config.sandbox.mode, network=bool(item.value))
    config.pending_trust = still
    return still


def _apply_mcp_json(
    config: Config, path: Path, root: Path, env: dict[str, str], *, trusted: bool
) -> None:
    """The servers of an MCP JSON file other agents read, merged as `[mcp.servers]` is."""
    if not path.is_file():
        return
    found = read_mcp_file(path, root, env)
    if found.problem is not None:
        config.notes.append(f"{found.problem}; its MCP servers are not used")
        return
    for name, why in found.skipped.items():
        config.notes.append(f"{path}: MCP server {name!r} is not used: {why}")
    for name, server in found.servers.items():
        problem = _mcp_server_problem(server)
        if problem is not None:
            config.notes.append(f"{path}: MCP server {name!r} is not used: {problem}")
            continue
        _apply(config, {"mcp": {"servers": {name: server}}}, str(path), trusted=trusted)


def _apply_settings_hooks(config: Config, path: Path) -> None:
    """The hooks of a workspace's `.claude/settings.json`: they wait for the person too."""
    if not path.is_file():
        return
    try:
        hooks = settings_hooks(path)
    except HookError as exc:
        config.notes.append(f"{exc}; its hooks are not used")
        return
    origin = _Source(str(path), False, config)
    for hook in hooks:
        origin.hold(f"hooks.{hook.event}", hook.table())


def load_config(
    root: Path, *, overrides: dict[str, Any] | None = None, env: dict[str, str] | None = None
) -> Config:
    """Merge defaults, user file, workspace files, environment and `overrides` (flags)."""
    env = dict(os.environ if env is None else env)
    config = Config()
    _apply_mcp_json(config, user_config_dir() / "mcp.json", root, env, trusted=True)
    user = user_config_path()
    user_doc = _read_toml(user)
    if user_doc is not None:
        _check(user_doc, str(user))
        _apply(config, user_doc, str(user), trusted=True)
    for path in workspace_mcp_files(root):
        _apply_mcp_json(config, path, root, env, trusted=False)
    _apply_settings_hooks(config, root / ".claude" / "settings.json")
    for path, doc in workspace_config_files(root):
        _check(doc, str(path))
        _apply(config, doc, str(path), trusted=False)
    if env.get("OPENAI_BASE_URL"):
        config.model.base_url = env["OPENAI_BASE_URL"]
        config.pending_trust = [t for t in config.pending_trust if t.kind != "base_url"]
    if env.get("OPENAI_API_KEY"):
        config.api_key = env["OPENAI_API_KEY"]
    if env.get("TOOLGATE_MODEL"):
        config.model.name = env["TOOLGATE_MODEL"]
    if overrides:
        _check(overrides, "command-line flags")
        base_url_before = config.model.base_url
        _apply(config, overrides, "command-line flags", trusted=True)
        if config.model.base_url != base_url_before or "base_url" in overrides.get("model", {}):
            config.pending_trust = [t for t in config.pending_trust if t.kind != "base_url"]
    return config
