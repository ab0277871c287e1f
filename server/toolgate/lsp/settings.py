"""Editor settings (initializationOptions / didChangeConfiguration) → engine configuration."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

SEVERITIES = {"error": 1, "warning": 2, "information": 3, "info": 3, "hint": 4}
_LIMIT_KEYS = {
    "maxSteps": "max_steps",
    "maxLlmCalls": "max_llm_calls",
    "maxRunSeconds": "max_run_seconds",
    "maxToolRetries": "max_tool_retries",
    "commandTimeoutSeconds": "command_timeout_seconds",
}


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


def parse_settings(raw: Any, previous: EditorSettings | None = None) -> EditorSettings:
    """Read the editor's settings; unknown keys are ignored, wrong types are errors."""
    doc = _expand_dotted(_section(raw))
    settings = (
        EditorSettings()
        if previous is None
        else EditorSettings(
            overrides={
                k: dict(v) if isinstance(v, dict) else v for k, v in previous.overrides.items()
            },
            api_key=previous.api_key,
            confirm_in_editor=previous.confirm_in_editor,
            failure_severity=previous.failure_severity,
            trusted=previous.trusted,
            reports_diagnostics=previous.reports_diagnostics,
        )
    )
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
        out = {}
        for key, value in limits.items():
            name = _LIMIT_KEYS.get(key, key)
            if not isinstance(value, (int, float)) or isinstance(value, bool) or value <= 0:
                raise SettingsError(f"setting 'limits.{key}' must be a positive number")
            out[name] = (
                int(value) if name in ("max_steps", "max_llm_calls", "max_tool_retries") else value
            )
        settings.overrides["limits"] = out
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
    if "trusted" in doc:
        settings.trusted = bool(doc["trusted"])
    if "reportsDiagnostics" in doc:
        settings.reports_diagnostics = bool(doc["reportsDiagnostics"])
    return settings
