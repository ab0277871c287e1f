"""MCP both ways: other MCP servers' tools inside runs, and Toolgate's gated tools as a server."""
