"""The editor settings are written once per side, and every side agrees with the engine's schema.

`config.SCHEMA` says what a configuration key may hold; `lsp/settings.py`'s `CONFIG_KEYS` says
which editor setting overrides which key; the VS Code extension declares its settings in
package.json and reads them in settings.ts. These tests read all of them and fail on any drift.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from toolgate.config import SCHEMA, Limits, ToolCalling
from toolgate.lsp.settings import CONFIG_KEYS, SERVER_KEYS, config_schema, parse_settings

EXTENSION = Path(__file__).resolve().parents[2] / "client-vscode"
# Settings only the extension reads: how it starts the server, how it shows proposals, tracing.
CLIENT_ONLY = {"pythonPath", "serverCommand", "review.openDiff", "trace.server"}
ENGINE_DEFAULTS: dict[tuple[str, ...], Any] = {
    ("tool_calling", "mode"): ToolCalling().mode,
    **{("limits", name): getattr(Limits(), name) for name in vars(Limits())},
}


def _declared() -> dict[str, dict[str, Any]]:
    doc = json.loads((EXTENSION / "package.json").read_text("utf-8"))
    props: dict[str, dict[str, Any]] = doc["contributes"]["configuration"]["properties"]
    return {key.removeprefix("toolgate."): value for key, value in props.items()}


def _settings_ts() -> str:
    return (EXTENSION / "src" / "settings.ts").read_text("utf-8")


def _least(schema: dict[str, Any]) -> float | None:
    """The smallest value a numeric schema accepts (an exclusive bound just above it)."""
    if "minimum" in schema:
        return float(schema["minimum"])
    if "exclusiveMinimum" in schema:
        return float(schema["exclusiveMinimum"]) + 1e-9
    return None


def test_every_declared_setting_is_read_by_the_server_or_the_extension() -> None:
    declared = set(_declared())
    served = set(CONFIG_KEYS) | set(SERVER_KEYS)
    assert declared - CLIENT_ONLY == served, "package.json and lsp/settings.py name other keys"


@pytest.mark.parametrize("key", sorted(CONFIG_KEYS))
def test_declared_setting_is_no_wider_than_the_engine_schema(key: str) -> None:
    ours = _declared()[key]
    engine = config_schema(CONFIG_KEYS[key])
    accepts = Draft202012Validator(engine).is_valid
    if "additionalProperties" in ours:  # approval: a decision per tool
        assert ours["additionalProperties"]["enum"] == engine["additionalProperties"]["enum"]
        assert all(accepts({tool: d}) for tool, d in ours["default"].items())
        return
    assert accepts(ours["default"]), f"{key}: default {ours['default']!r} is refused by the engine"
    if "enum" in ours or "enum" in engine:
        assert ours["enum"] == engine["enum"]
    if ours["type"] in ("integer", "number"):
        # an integer setting may feed a number key, never the other way round
        assert ours["type"] == engine["type"] or engine["type"] == "number"
        least, engine_least = _least(ours), _least(engine)
        assert least is not None and engine_least is not None and least >= engine_least
        if ours["type"] == "integer" and engine["type"] == "integer":
            assert least == engine_least, f"{key}: the editor refuses what the engine allows"
    if CONFIG_KEYS[key] in ENGINE_DEFAULTS:
        assert ours["default"] == ENGINE_DEFAULTS[CONFIG_KEYS[key]], f"{key}: other default"


@pytest.mark.parametrize("key", sorted(CONFIG_KEYS))
def test_the_server_puts_each_setting_where_the_engine_reads_it(key: str) -> None:
    default = _declared()[key]["default"]
    settings = parse_settings({"toolgate": {key: default}})
    node: Any = settings.overrides
    for part in CONFIG_KEYS[key]:
        node = node[part]
    assert node == default
    Draft202012Validator(SCHEMA).validate(settings.overrides)


def test_the_extension_reads_the_limits_as_declared() -> None:
    block = re.search(r"export const LIMITS = \{(.*?)\} as const;", _settings_ts(), re.S)
    assert block is not None, "settings.ts has no LIMITS table"
    rows = re.findall(
        r"(\w+): \{ fallback: ([\d.]+), integer: (true|false), above: (-?[\d.]+) \}",
        block.group(1),
    )
    declared = {k.removeprefix("limits."): v for k, v in _declared().items() if "limits." in k}
    assert {name for name, *_ in rows} == set(declared)
    for name, fallback, integer, above in rows:
        ours = declared[name]
        assert float(fallback) == ours["default"], name
        assert (integer == "true") == (ours["type"] == "integer"), name
        if "minimum" in ours:
            assert float(above) == ours["minimum"] - 1, name
        else:
            assert float(above) == ours["exclusiveMinimum"], name


def test_the_extension_reads_every_other_setting_with_the_declared_choices() -> None:
    source = _settings_ts()
    declared = _declared()
    for key in set(declared) - {"trace.server"}:  # the language client reads that one
        if key.startswith("limits."):
            continue
        assert f"get('{key}')" in source, f"settings.ts never reads {key}"
    for key, choices, fallback in re.findall(
        r"oneOf\(\s*get\('([\w.]+)'\),\s*\[([^\]]*)\](?: as const)?,\s*'([\w-]+)'", source
    ):
        assert re.findall(r"'([\w-]+)'", choices) == declared[key]["enum"], key
        assert fallback == declared[key]["default"], key


def test_a_key_pushed_later_is_kept_and_a_null_key_removes_it() -> None:
    # The extension sends the whole options on each change, with `apiKey: null` once the
    # person removed the key; settings that say nothing of the key keep it.
    first = parse_settings({"toolgate": {"apiKey": "sk-1"}})
    assert parse_settings({"toolgate": {"model": "m"}}, first).api_key == "sk-1"
    assert parse_settings({"toolgate": {"apiKey": None}}, first).api_key is None
