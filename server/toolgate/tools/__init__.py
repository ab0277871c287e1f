"""Tools (interfaces the model sees) and activities (the code that runs them)."""

from toolgate.tools.registry import ToolRegistry
from toolgate.tools.schema import REASONING_FIELD, Tool

__all__ = ["REASONING_FIELD", "Tool", "ToolRegistry"]
