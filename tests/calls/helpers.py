"""Shared helpers for the text protocol tests."""

from __future__ import annotations

from typing import Any

from toolgate.calls import StreamingCallParser
from toolgate.cli.calls import default_tool_schemas

# The built-in tools' argument schemas, as the parser sees them in the product.
TOOLS: dict[str, dict[str, Any]] = default_tool_schemas()


def run_in_chunks(
    text: str,
    cuts: list[int],
    tools: dict[str, Any] | None = None,
    *,
    take: bool = True,
    **kw: Any,
) -> tuple[list[Any], str]:
    """Feed `text` split at `cuts`; return the items and the content.

    With `take`, the content is taken after every feed (and checked against the whole);
    without, the parser works out its stored prose only when a call may complete, and at the end.
    """
    parser = StreamingCallParser(TOOLS if tools is None else tools, **kw)
    items: list[Any] = []
    taken: list[str] = []
    last = 0
    for cut in sorted(set(c for c in cuts if 0 < c < len(text))) + [len(text)]:
        items += parser.feed(text[last:cut])
        if take:
            taken.append(parser.take_content())
        last = cut
    items += parser.finish()
    if take:
        taken.append(parser.take_content())
        assert "".join(taken) == parser.content
    return items, parser.content
