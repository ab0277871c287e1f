"""MCP tool results ↔ Toolgate's ToolResult."""

from __future__ import annotations

import json
from typing import Any

from toolgate.agent.retention import fit_result
from toolgate.records import ToolResult


def _block(block: Any) -> dict[str, Any]:
    """A non-text content block, described without its (possibly large, binary) payload."""
    kind = getattr(block, "type", "unknown")
    shown: dict[str, Any] = {"type": kind}
    for attr in ("mime_type", "uri", "name"):
        value = getattr(block, attr, None)
        if value is not None:
            shown[attr] = str(value)
    resource = getattr(block, "resource", None)
    if resource is not None:
        shown["uri"] = str(getattr(resource, "uri", ""))
        text = getattr(resource, "text", None)
        if isinstance(text, str):
            shown["text"] = text
    return shown


def from_mcp(result: Any, *, server: str, tool: str, duration: float) -> ToolResult:
    """An MCP CallToolResult as the result the model reads.

    Text blocks are joined into `data.text`; other blocks are listed in `data.content`
    without their payload; `isError` makes the call a failure whose error is the text.
    """
    texts = [b.text for b in result.content if getattr(b, "type", None) == "text"]
    others = [_block(b) for b in result.content if getattr(b, "type", None) != "text"]
    text = "\n".join(texts)
    data: dict[str, Any] = {"server": server, "tool": tool, "text": text}
    if others:
        data["content"] = others
    if result.structured_content is not None:
        data["structured"] = result.structured_content
    size = len(json.dumps(data, ensure_ascii=False, default=str).encode("utf-8"))
    if result.is_error:
        return ToolResult.fail(
            f"the MCP tool {tool} of server {server!r} failed: {text or 'no message'}",
            data=data,
            duration_seconds=duration,
            output_size_bytes=size,
        )
    return ToolResult.ok(data, duration_seconds=duration, output_size_bytes=size)


def to_mcp(result: ToolResult, max_bytes: int) -> Any:
    """A ToolResult as an MCP CallToolResult: its JSON as one text block, isError on failure."""
    import mcp_types as types

    fitted = fit_result(result, max_bytes)
    text = json.dumps(fitted.to_dict(), ensure_ascii=False, default=str)
    return types.CallToolResult(content=[types.TextContent(text=text)], is_error=not fitted.success)
