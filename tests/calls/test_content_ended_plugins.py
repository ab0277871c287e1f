"""A syntax whose end depends on its content, from outside: read without a change to the driver."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from toolgate.calls import StreamingCallParser, parse_text
from toolgate.calls.parser import read_whole
from toolgate.calls.reading import parser_for
from toolgate.calls.syntaxes import registered
from toolgate.config import ToolCalling

from .helpers import TOOLS

# A line form: `!call NAME {JSON}` at a line start, read whole once its line ends.
BANG = textwrap.dedent(
    '''
    """A made-up syntax: `!call NAME {JSON}` alone on its line."""

    from toolgate.calls.cursor import CLOSE_LINE, Cursor, waits_for
    from toolgate.calls.openings import AfterLt, AtLineStart
    from toolgate.calls.syntaxes import Syntax


    def at_bang(p: Cursor, s: int) -> bool | None:
        p.prose_to(s)
        k = p.start("!call line", st_bang_line)
        k.syntax = "bang"
        return True


    @waits_for(CLOSE_LINE)
    def st_bang_line(p: Cursor) -> bool:
        end = p.buf.find("\\n", p.pos)
        if end < 0:
            if not p.eof:
                return not p.take(len(p.buf))
            end = len(p.buf)
        if not p.take(end):
            return True
        text = p.done()
        name, _, args = text.removeprefix("!call ").partition(" ")
        p.call(name, args, "bang", text)
        return True


    def at_hash(p: Cursor, m) -> bool:
        """`<#NAME#>`: a call without arguments, decided at once."""
        p.start("<#…#>", p.idle)
        p.take(m.end())
        p.call(m.group(1), {}, "hash", p.done())
        return True


    class Bang(Syntax):
        name = "bang"
        example = '!call NAME {"argument": "value"}'
        models = "none (a test)"
        openings = (AtLineStart(("!call ",), at_bang),)


    class Hash(Syntax):
        name = "hash"
        example = "<#NAME#>"
        models = "none (a test)"
        openings = (AfterLt(r"#(\\w+)#>", ("<#",), at_hash),)
    '''
)

TEXT = (
    'Reading.\n!call read_file {"path": "a.py"}\nThen <#list_directory#> and !call x {} as prose.\n'
)
CALLS = [
    ("read_file", {"path": "a.py"}, "bang"),
    ("list_directory", {}, "hash"),
]


def _items(parser: StreamingCallParser, text: str, size: int) -> tuple[list[Any], str]:
    items = [i for at in range(0, len(text), size) for i in parser.feed(text[at : at + size])]
    items += parser.finish()
    return [(i.name, i.arguments, i.syntax) for i in items], parser.content


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    (tmp_path / "bang_local.py").write_text(BANG)
    monkeypatch.syspath_prepend(str(tmp_path))
    return "bang_local"


@pytest.mark.parametrize("size", [1, 2, 3, 7, 16, len(TEXT)])
def test_a_content_ended_syntax_from_a_module_is_read_in_any_chunking(
    plugin: str, size: int
) -> None:
    syntaxes = registered([f"{plugin}:Bang", f"{plugin}:Hash"])
    calls, content = _items(StreamingCallParser(TOOLS, syntaxes=syntaxes), TEXT, size)
    assert calls == CALLS
    assert content == "Reading.\n\nThen  and !call x {} as prose.\n"


def test_a_module_in_the_config_adds_its_content_ended_syntaxes(plugin: str) -> None:
    got = read_whole(parser_for(TOOLS, ToolCalling(syntax_modules=[plugin])), TEXT)
    assert [(c.name, c.arguments, c.syntax) for c in got.calls] == CALLS
    assert got.errors == []
    # without it, the same text is prose
    assert parse_text(TEXT, TOOLS).calls == []


def test_the_built_in_syntaxes_keep_their_openings_before_one_from_outside(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A syntax from outside opening where a built-in one opens does not take its text."""
    shadow = BANG.replace('r"#(\\w+)#>", ("<#",)', 'r"(tool)(?=[>\\s])", ("<tool",)')
    assert shadow != BANG
    (tmp_path / "shadow_local.py").write_text(shadow)
    monkeypatch.syspath_prepend(str(tmp_path))
    parser = StreamingCallParser(TOOLS, syntaxes=registered(["shadow_local:Hash"]))
    got = read_whole(parser, '<tool name="read_file" args>{"path": "a.py"}</tool>')
    assert [(c.name, c.syntax) for c in got.calls] == [("read_file", "tag")]
