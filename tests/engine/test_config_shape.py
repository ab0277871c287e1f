"""The Config record has the files' shape: a table is a record, a key is a field of that name."""

from __future__ import annotations

from dataclasses import fields, is_dataclass
from typing import Any

from toolgate.config import SCHEMA, Config, load_config

# Keys that are no field, and fields that are no key, each for a reason.
NOT_FIELDS = {"model.api_key_env"}  # names the variable the key is read from, into api_key
# The key itself; what waits for the person; what a file held that could not be used; the
# file each MCP server came from.
NOT_KEYS = {"api_key", "pending_trust", "notes", "mcp.sources"}


def _table(schema: dict[str, Any]) -> dict[str, Any] | None:
    """The object form of a table's schema (`sandbox` may also be a bare string)."""
    if "properties" in schema:
        return schema
    return next((s for s in schema.get("oneOf", []) if "properties" in s), None)


def _mismatches(schema: dict[str, Any], record: Any, path: tuple[str, ...]) -> list[str]:
    found = []
    keys = set(schema["properties"])
    names = {f.name for f in fields(record)}
    for key in sorted(keys - names):
        if ".".join((*path, key)) not in NOT_FIELDS:
            found.append(f"key {'.'.join((*path, key))} has no field")
    for name in sorted(names - keys):
        if ".".join((*path, name)) not in NOT_KEYS:
            found.append(f"field {'.'.join((*path, name))} is no key")
    for key in sorted(keys & names):
        value, table = getattr(record, key), _table(schema["properties"][key])
        if table is None:
            continue
        if is_dataclass(value):
            found += _mismatches(table, value, (*path, key))
        elif isinstance(value, dict):  # a table of tables: [agent_tools.NAME]
            for inner, record_ in value.items():
                if is_dataclass(record_) and inner in table["properties"]:
                    found += _mismatches(table["properties"][inner], record_, (*path, key, inner))
    return found


def test_every_table_is_a_record_whose_fields_are_its_keys() -> None:
    assert _mismatches(SCHEMA, Config(), ()) == []


def test_every_key_lands_on_the_field_of_its_name(tmp_path: Any) -> None:
    config = load_config(
        tmp_path,
        env={},
        overrides={
            "model": {"name": "m", "timeout_seconds": 7, "context_tokens": 2048},
            "policy": {"deny_tools": ["git_commit"]},
            "tool_calling": {"retention": {"max_output_bytes": 1234}},
            "mcp": {"servers": {"one": {"command": ["srv"]}}},
        },
    )
    assert (config.model.name, config.model.timeout_seconds) == ("m", 7)
    assert config.model.context_tokens == 2048
    assert config.policy.deny_tools == ["git_commit"]
    assert config.tool_calling.retention.max_output_bytes == 1234
    assert config.mcp.servers == {"one": {"command": ["srv"]}}
