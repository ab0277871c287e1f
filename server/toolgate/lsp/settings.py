"""Editor settings (initializationOptions / didChangeConfiguration) → engine configuration."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

SEVERITIES = {"error": 1, "warning": 2, "information": 3, "info": 3, "hint": 4}

# Editor setting (below `toolgate.`) → the configuration key it overrides. Its type and bounds
# are those of `config.SCHEMA` at that key; the editors' own schemas (the VS Code extension's
# package.json) are checked against this table and that schema by the test suite.
CONFIG_KEYS: dict[str, tuple[str, ...]] = {
    "model": ("model", "name"),
    "baseUrl": ("model", "base_url"),
    "toolCalling.mode": ("tool_calling", "mode"),
    "approval": ("policy", "approvals"),
    "limits.maxSteps": ("limits", "max_steps"),
    "limits.maxLlmCalls": ("limits", "max_llm_calls"),
    "limits.maxRunSeconds": ("limits", "max_run_seconds"),
    "limits.maxToolRetries": ("limits", "max_tool_retries"),
    "limits.commandTimeoutSeconds": ("limits", "command_timeout_seconds"),
}
# Editor settings the server itself holds (they are no configuration key).
SERVER_KEYS = ("review.confirmInEditor", "diagnostics.testFailureSeverity", "approvalMode")

_LIMIT_KEYS = {
    key.removeprefix("limits."): path[1] for key, path in CONFIG_KEYS.items() if path[0] == "limits"
}


def config_schema(path: tuple[str, ...]) -> dict[str, Any]:
    """The part of `config.SCHEMA` that describes the configuration key at `path`."""
    # Imported here: the server starts without the engine's configuration (start-up time).
    from toolgate.config import SCHEMA

    node: dict[str, Any] = SCHEMA
    for part in path:
        node = node["properties"][part]
    return node


def _limit_rule(schema: dict[str, Any]) -> str:
    if schema.get("type") == "integer" and schema.get("minimum", 1) < 1:
        return f"a whole number, {schema['minimum']} or more"
    return "a positive number"


class SettingsError(ValueError):
    """A setting of the wrong shape; the message names it."""


@dataclass
class EditorSettings:
    """What the editor told the server; the API key is held apart and never echoed."""

    overrides: dict[str, Any] = field(default_factory=dict)
    api_key: str | None = field(default=None, repr=False)
    confirm_in_editor: bool = False
    failure_severity: int = 1
    trusted: bool = True
    reports_diagnostics: bool = False
    approval_mode: str = "ask"  # the session service's approval mode (toolgate.session.modes)


def _section(raw: Any) -> dict[str, Any]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise SettingsError("settings must be an object")
    inner = raw.get("toolgate", raw)
    if not isinstance(inner, dict):
        raise SettingsError("'toolgate' settings must be an object")
    return inner


def _expand_dotted(doc: dict[str, Any]) -> dict[str, Any]:
    # VS Code may send "toolCalling.mode": "text" as flat dotted keys.
    out: dict[str, Any] = {}
    for key, value in doc.items():
        target = out
        parts = key.split(".")
        for part in parts[:-1]:
            target = target.setdefault(part, {})
        if isinstance(value, dict) and isinstance(target.get(parts[-1]), dict):
            target[parts[-1]].update(value)
        else:
            target[parts[-1]] = value
    return out


def _copy(previous: EditorSettings) -> EditorSettings:
    """The settings so far, for a change to start from (the overrides' tables copied)."""
    return EditorSettings(
        overrides={k: dict(v) if isinstance(v, dict) else v for k, v in previous.overrides.items()},
        api_key=previous.api_key,
        confirm_in_editor=previous.confirm_in_editor,
        failure_severity=previous.failure_severity,
        trusted=previous.trusted,
        reports_diagnostics=previous.reports_diagnostics,
        approval_mode=previous.approval_mode,
    )


def _read_model(doc: dict[str, Any], settings: EditorSettings) -> None:
    """`model` and `baseUrl`: set, or taken back by an empty value."""
    model = settings.overrides.setdefault("model", {})
    for key, target in (("model", "name"), ("baseUrl", "base_url")):
        if key in doc:
            value = doc[key]
            if value in (None, ""):
                model.pop(target, None)
            elif not isinstance(value, str):
                raise SettingsError(f"setting '{key}' must be a string")
            else:
                model[target] = value
    if not model:
        settings.overrides.pop("model")


def _read_limits(limits: dict[str, Any]) -> dict[str, Any]:
    """The `limits` the engine's schema knows, each checked against it."""
    from jsonschema import Draft202012Validator

    out: dict[str, Any] = {}
    for key, value in limits.items():
        name = _LIMIT_KEYS.get(str(key), str(key))
        if name not in config_schema(("limits",))["properties"]:
            continue  # unknown keys are ignored, as everywhere in the settings
        schema = config_schema(("limits", name))
        if schema.get("type") == "integer" and isinstance(value, float) and value.is_integer():
            value = int(value)  # JSON gives no integer type: 3.0 is 3
        if isinstance(value, bool) or not Draft202012Validator(schema).is_valid(value):
            raise SettingsError(f"setting 'limits.{key}' must be {_limit_rule(schema)}")
        out[name] = value
    return out


def parse_settings(raw: Any, previous: EditorSettings | None = None) -> EditorSettings:
    """Read the editor's settings; unknown keys are ignored, wrong types are errors."""
    doc = _expand_dotted(_section(raw))
    settings = EditorSettings() if previous is None else _copy(previous)
    _read_model(doc, settings)
    if "apiKey" in doc:
        value = doc["apiKey"]
        if value is not None and not isinstance(value, str):
            raise SettingsError("setting 'apiKey' must be a string")
        settings.api_key = value or None
    calling = doc.get("toolCalling")
    if isinstance(calling, dict) and "mode" in calling:
        if calling["mode"] not in ("auto", "native", "text"):
            raise SettingsError("setting 'toolCalling.mode' must be auto, native or text")
        settings.overrides.setdefault("tool_calling", {})["mode"] = calling["mode"]
    approval = doc.get("approval")
    if isinstance(approval, dict):
        clean = {}
        for tool, decision in approval.items():
            if decision not in ("auto", "ask", "deny"):
                raise SettingsError(f"setting 'approval.{tool}' must be auto, ask or deny")
            clean[tool] = decision
        settings.overrides.setdefault("policy", {})["approvals"] = clean
    limits = doc.get("limits")
    if isinstance(limits, dict):
        settings.overrides["limits"] = _read_limits(limits)
    review = doc.get("review")
    if isinstance(review, dict) and "confirmInEditor" in review:
        settings.confirm_in_editor = bool(review["confirmInEditor"])
    diagnostics = doc.get("diagnostics")
    if isinstance(diagnostics, dict) and "testFailureSeverity" in diagnostics:
        name = str(diagnostics["testFailureSeverity"]).lower()
        if name not in SEVERITIES:
            raise SettingsError(
                "setting 'diagnostics.testFailureSeverity' must be error, "
                "warning, information or hint"
            )
        settings.failure_severity = SEVERITIES[name]
    if "approvalMode" in doc:
        from toolgate.session.modes import mode_problem

        problem = mode_problem(doc["approvalMode"])
        if problem is not None:
            raise SettingsError(f"setting 'approvalMode': {problem}")
        settings.approval_mode = doc["approvalMode"]
    if "trusted" in doc:
        settings.trusted = bool(doc["trusted"])
    if "reportsDiagnostics" in doc:
        settings.reports_diagnostics = bool(doc["reportsDiagnostics"])
    return settings
