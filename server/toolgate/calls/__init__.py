"""Text protocol: tool calls written as text, for models without native tool calling."""

from toolgate.calls.parser import StreamingCallParser, parse_text
from toolgate.calls.prompt import (
    corrective_message,
    format_tool_result,
    text_mode_instructions,
    tools_section,
)
from toolgate.calls.records import CallParseError, ParsedCall, ParseResult
from toolgate.calls.syntaxes.content_ended import SYNTAXES

__all__ = [
    "SYNTAXES",
    "CallParseError",
    "ParseResult",
    "ParsedCall",
    "StreamingCallParser",
    "corrective_message",
    "format_tool_result",
    "parse_text",
    "text_mode_instructions",
    "tools_section",
]
