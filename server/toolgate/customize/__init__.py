"""What a workspace and its person bring to customize the agent, read as other agents read it.

Rules files, Agent Skills, prompt files that become slash commands, hooks around tool calls,
and MCP server lists in JSON. Each format has its own module; `catalog.py` gathers what was
found, with where it came from, for the session service and for `toolgate config show`.
"""
