"""Toolgate: a coding agent whose every tool call passes a gate the person controls."""

__version__ = "0.1.0"
