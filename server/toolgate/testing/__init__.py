"""Test runs with structured results: counts, and failures located at their lines."""

from toolgate.testing.results import Frame, TestFailure, TestRun, TestSummary
from toolgate.testing.runner import run_pytest

__all__ = ["Frame", "TestFailure", "TestRun", "TestSummary", "run_pytest"]
