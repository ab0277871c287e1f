"""A tiny real MCP server over stdio, for the client-side tests.

Each start appends `start <pid> <cwd>` to the file named by ECHO_STARTS (when set), and each tool
call `call <pid> <tool>`, so a test can count starts and calls and check that the process is gone
afterwards.
"""

from __future__ import annotations

import os
import time

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

TOOLS = [
    types.Tool(
        name="echo",
        description="Say the text back.",
        input_schema={
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
        },
    ),
    types.Tool(
        name="env",
        description="The value of one environment variable, or (unset).",
        input_schema={
            "type": "object",
            "properties": {"variable": {"type": "string"}},
            "required": ["variable"],
        },
    ),
    types.Tool(
        name="slow_read",
        description="Waits a while, then says the key back; declared to change nothing.",
        input_schema={
            "type": "object",
            "properties": {"key": {"type": "string"}, "seconds": {"type": "number"}},
            "required": ["key"],
        },
        annotations=types.ToolAnnotations(read_only_hint=True),
    ),
    types.Tool(
        name="die",
        description="Ends the server process at once.",
        input_schema={"type": "object", "properties": {}},
    ),
    types.Tool(
        name="fail",
        description="Always fails.",
        input_schema={"type": "object", "properties": {}},
    ),
]


async def list_tools(ctx: object, params: object) -> types.ListToolsResult:
    return types.ListToolsResult(tools=TOOLS)


def _note(line: str) -> None:
    marker = os.environ.get("ECHO_STARTS")
    if marker:
        with open(marker, "a", encoding="utf-8") as handle:
            handle.write(f"{line}\n")


async def call_tool(ctx: object, params: types.CallToolRequestParams) -> types.CallToolResult:
    _note(f"call {os.getpid()} {params.name}")
    args = params.arguments or {}
    if params.name == "echo":
        text = f"echo: {args['text']} (cwd {os.getcwd()})"
        return types.CallToolResult(content=[types.TextContent(text=text)])
    if params.name == "env":
        value = os.environ.get(args["variable"], "(unset)")
        return types.CallToolResult(content=[types.TextContent(text=value)])
    if params.name == "slow_read":
        # Begin and end are noted with the time, so a test can see calls overlap.
        _note(f"begin {time.time()} {args['key']}")
        await anyio.sleep(float(args.get("seconds", 1.0)))
        _note(f"end {time.time()} {args['key']}")
        return types.CallToolResult(content=[types.TextContent(text=f"read {args['key']}")])
    if params.name == "die":
        os._exit(7)
    return types.CallToolResult(
        content=[types.TextContent(text="it broke on purpose")], is_error=True
    )


async def main() -> None:
    _note(f"start {os.getpid()} {os.getcwd()}")
    server = Server("echo", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
