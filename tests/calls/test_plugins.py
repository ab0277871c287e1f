"""A syntax from outside: an installed `toolgate.syntaxes` entry point, or module:Class."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from toolgate.calls import StreamingCallParser, parse_text
from toolgate.calls.parser import read_whole
from toolgate.calls.reading import parser_for
from toolgate.calls.syntaxes import load_syntax, load_syntaxes, registered
from toolgate.config import ToolCalling, apply_trust, load_config

from .helpers import TOOLS

PLUGIN = textwrap.dedent(
    '''
    """A made-up syntax: @@call NAME {JSON} @@end."""

    from toolgate.calls.syntaxes import Found, Syntax


    class AtAt(Syntax):
        name = "atat"
        opens = ("<@@call",)
        closes = ("@@end>",)
        example = '<@@call NAME {"argument": "value"} @@end>'
        models = "none (a test)"

        def read(self, opening, body, tools):
            name, _, args = body.strip().partition(" ")
            return [Found(name, args)]


    class NotASyntax:
        pass
    '''
)


def _install(site: Path) -> None:
    """Write the package and its dist-info, as pip would install it, into `site`."""
    (site / "atat_syntax").mkdir()
    (site / "atat_syntax" / "__init__.py").write_text(PLUGIN)
    info = site / "atat_syntax-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: atat-syntax\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[toolgate.syntaxes]\natat = atat_syntax:AtAt\n")
    (info / "RECORD").write_text("")


def test_an_installed_entry_point_adds_a_syntax(tmp_path: Path) -> None:
    _install(tmp_path)
    script = textwrap.dedent(
        """
        import json, sys
        from toolgate.calls import parse_text
        from toolgate.cli.calls import default_tool_schemas
        r = parse_text(sys.stdin.read(), default_tool_schemas())
        print(json.dumps(r.to_json()))
        """
    )
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    text = 'Reading. <@@call read_file {"path": "a.py"} @@end> Done.'
    out = subprocess.run(
        [sys.executable, "-c", script], input=text, capture_output=True, text=True, env=env
    )
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert got["calls"] == [
        {
            "name": "read_file",
            "arguments": {"path": "a.py"},
            "syntax": "atat",
            "deprecated_syntax": False,
        }
    ]
    assert got["content"] == "Reading.  Done."


def test_a_module_path_adds_a_syntax(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "atat_local.py").write_text(PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    parser = StreamingCallParser(TOOLS, syntaxes=registered(["atat_local:AtAt"]))
    text = '<@@call read_file {"path": "a.py"} @@end>'
    items = [item for ch in text for item in parser.feed(ch)] + parser.finish()
    assert [(i.name, i.arguments, i.syntax) for i in items] == [
        ("read_file", {"path": "a.py"}, "atat")
    ]
    # without it, the same text is prose
    assert parse_text(text, TOOLS).calls == []


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("atat_local", "write it as module:Class"),
        ("no_such_module_here:X", "cannot import no_such_module_here"),
        ("atat_local:NotASyntax", "NotASyntax is not a Syntax subclass"),
    ],
)
def test_a_bad_module_path_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spec: str, message: str
) -> None:
    (tmp_path / "atat_local.py").write_text(PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ValueError, match=message):
        load_syntax(spec)


def test_a_syntax_that_raises_is_an_error_for_the_model_not_a_crash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "boom_syntax.py").write_text(
        PLUGIN.replace("name, _, args = body", "raise RuntimeError('boom')  #")
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    parser = StreamingCallParser(TOOLS, syntaxes=registered(["boom_syntax:AtAt"]))
    items = parser.feed("<@@call read_file {} @@end>") + parser.finish()
    assert len(items) == 1
    assert items[0].error == "atat: could not read the call (RuntimeError('boom'))"


def test_a_module_in_the_config_adds_its_syntaxes_to_what_a_run_reads(tmp_path: Path) -> None:
    """`tool_calling.syntax_modules` in the person's config, read by `toolgate calls parse`."""
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "atat_config.py").write_text(PLUGIN)
    (tmp_path / "home" / "toolgate").mkdir(parents=True)
    (tmp_path / "home" / "toolgate" / "config.toml").write_text(
        '[tool_calling]\nsyntax_modules = ["atat_config"]\n'
    )
    (tmp_path / "ws").mkdir()
    env = {
        **os.environ,
        "PYTHONPATH": str(tmp_path / "lib"),
        "HOME": str(tmp_path / "home"),
        "XDG_CONFIG_HOME": str(tmp_path / "home"),
    }
    text = 'Reading. <@@call read_file {"path": "a.py"} @@end> Done.'
    out = subprocess.run(
        [sys.executable, "-m", "toolgate", "calls", "parse", "--workspace", str(tmp_path / "ws")],
        input=text,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert [(c["name"], c["arguments"], c["syntax"]) for c in got["calls"]] == [
        ("read_file", {"path": "a.py"}, "atat")
    ]
    assert got["content"] == "Reading.  Done."


def test_a_workspace_syntax_module_waits_for_the_person(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "atat_ws.py").write_text(PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "no-user-config"))
    (tmp_path / ".toolgate").mkdir()
    (tmp_path / ".toolgate" / "config.toml").write_text(
        '[tool_calling]\nsyntax_modules = ["atat_ws"]\n'
    )
    text = '<@@call read_file {"path": "a.py"} @@end>'
    config = load_config(tmp_path, env={})
    # importing a module runs its code: not before the person confirms it
    assert config.tool_calling.syntax_modules == []
    [item] = config.pending_trust
    assert item.describe().endswith("imports the Python module 'atat_ws' to read tool calls")
    assert read_whole(parser_for(TOOLS, config.tool_calling), text).calls == []
    apply_trust(config, {item.fingerprint})
    calls = read_whole(parser_for(TOOLS, config.tool_calling), text).calls
    assert [(c.name, c.syntax) for c in calls] == [("read_file", "atat")]


def test_calls_parse_reads_a_confirmed_workspace_module_as_a_run_does(tmp_path: Path) -> None:
    """`toolgate calls parse` applies the confirmations a run applies: one place decides."""
    ws = tmp_path / "ws"
    (ws / ".toolgate").mkdir(parents=True)
    (ws / "atat_trusted.py").write_text(PLUGIN)
    (ws / ".toolgate" / "config.toml").write_text(
        '[tool_calling]\nsyntax_modules = ["atat_trusted"]\n'
    )
    env = {
        **os.environ,
        "PYTHONPATH": str(ws),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
    }
    text = 'Reading. <@@call read_file {"path": "a.py"} @@end> Done.'

    def parse() -> tuple[list[str], str]:
        argv = [sys.executable, "-m", "toolgate", "calls", "parse", "--workspace", str(ws)]
        out = subprocess.run(argv, input=text, capture_output=True, text=True, env=env, timeout=60)
        assert out.returncode == 0, out.stderr
        return [c["syntax"] for c in json.loads(out.stdout)["calls"]], out.stderr

    syntaxes, said = parse()
    assert syntaxes == [] and "atat_trusted" in said  # held back, and the person is told why
    confirm = [sys.executable, "-m", "toolgate", "trust", "--workspace", str(ws), "--yes"]
    done = subprocess.run(confirm, capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    assert parse()[0] == ["atat"]


def test_a_module_that_cannot_be_loaded_is_left_out_with_a_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "no_syntax_here.py").write_text("X = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    calling = ToolCalling(syntax_modules=["no_syntax_here", "missing_mod_xyz"])
    got = read_whole(parser_for(TOOLS, calling), '<tool name="read_file" args>{"path": "a"}</tool>')
    assert [c.name for c in got.calls] == ["read_file"]  # the other syntaxes are still read
    err = capsys.readouterr().err
    assert "'no_syntax_here': it defines no Syntax subclass" in err
    assert "'missing_mod_xyz': cannot import it" in err
    with pytest.raises(ValueError, match="defines no Syntax subclass"):
        load_syntaxes("no_syntax_here")
    # a module path gives every syntax its module defines; module:Class gives that one
    (tmp_path / "atat_two.py").write_text(PLUGIN)
    assert [c.__name__ for c in load_syntaxes("atat_two")] == ["AtAt"]
    assert [c.__name__ for c in load_syntaxes("atat_two:AtAt")] == ["AtAt"]
