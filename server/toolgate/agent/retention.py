"""What of a tool's output the model gets: capped, keeping head and tail."""

from __future__ import annotations

import copy
import json
from typing import Any

from toolgate.records import ToolResult
from toolgate.runner.output import cap_output


def _strings(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[tuple[Any, ...], str]]:
    if isinstance(value, str):
        return [(path, value)]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in _strings(v, (*path, k))]
    if isinstance(value, list):
        return [s for i, v in enumerate(value) for s in _strings(v, (*path, i))]
    return []


def _set(root: Any, path: tuple[Any, ...], text: str) -> Any:
    if not path:
        return text
    target = root
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = text
    return root


def result_json(result: ToolResult) -> str:
    """The compact JSON a model reads."""
    return json.dumps(result.to_dict(), ensure_ascii=False, default=str)


def fit_result(result: ToolResult, max_bytes: int) -> ToolResult:
    """A copy of the result whose JSON fits in max_bytes, by capping its longest strings."""
    size = len(result_json(result).encode("utf-8"))
    if size <= max_bytes:
        return result
    fitted = copy.deepcopy(result)
    fitted.output_size_bytes = max(fitted.output_size_bytes, size)
    for _ in range(8):
        over = len(result_json(fitted).encode("utf-8")) - max_bytes
        if over <= 0:
            break
        strings = sorted(_strings(fitted.data), key=lambda s: len(s[1]), reverse=True)
        if not strings:
            break
        path, text = strings[0]
        budget = max(256, len(text.encode("utf-8")) - over - 64)
        capped, _, _ = cap_output(text, budget)
        fitted.data = _set(fitted.data, path, capped)
        fitted.output_truncated = True
        if len(capped) >= len(text):
            break
    return fitted
