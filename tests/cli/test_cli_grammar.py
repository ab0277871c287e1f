"""`tool_calling.grammar`: text-mode requests to an endpoint the person runs carry the tool
grammar (llama.cpp's `grammar` field) when the configuration asks for it, and only then."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.cli.helpers import toolgate_task
from tests.support.scripted_model import ScriptedModel

READ = '<tool name="read_file" args>{"path": "README.md"}</tool>'


def _configure(repo: Path, lines: str) -> None:
    config = repo / ".toolgate" / "config.toml"
    config.parent.mkdir(exist_ok=True)
    config.write_text(f"[tool_calling]\n{lines}\n")


@pytest.mark.parametrize(
    ("lines", "mode", "expected"),
    [
        ("grammar = true", "text", True),
        ("", "text", False),  # unset: the embedded model's alone
        ("grammar = true", "native", False),  # native calls need no grammar
        ('grammar = true\ntext_syntax = "hermes"', "text", False),  # it spells tag blocks only
    ],
    ids=["on", "unset", "native", "other-syntax"],
)
def test_text_requests_carry_the_tool_grammar_when_configured(
    repo: Path, scripted: ScriptedModel, lines: str, mode: str, expected: bool
) -> None:
    pytest.importorskip("llama_cpp", reason="the grammar's converter is llama-cpp-python's")
    _configure(repo, lines)
    scripted.script = [{"content": "Nothing to do."}]
    done = toolgate_task("run", "say hi", repo, scripted, "--tool-calling", mode, "--json")
    assert done.returncode == 0, done.stderr
    (request,) = scripted.requests
    grammar = request.get("grammar")
    if not expected:
        assert grammar is None
        return
    # One alternative per offered tool, each a tag block of the text protocol.
    assert isinstance(grammar, str) and grammar.startswith("root ::=")
    for tool in ("read_file", "write_file", "edit_file"):
        assert f'"<tool name=\\"{tool}\\" args>"' in grammar, tool


def test_a_grammar_without_its_converter_is_a_clear_setup_error(
    repo: Path, scripted: ScriptedModel
) -> None:
    """Without llama-cpp-python the grammar cannot be built: the run says so, sends nothing."""
    _configure(repo, "grammar = true")
    done = toolgate_task(
        "run", "say hi", repo, scripted, "--tool-calling", "text", without_local_runtime=True
    )
    assert done.returncode != 0
    assert "tool_calling.grammar is on, but llama-cpp-python is not installed" in done.stderr
    assert "Traceback" not in done.stderr
    assert scripted.requests == []
