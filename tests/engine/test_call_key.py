"""What counts as the same call for the loop's repeat guard."""

from __future__ import annotations

from toolgate.agent.repeats import call_key
from toolgate.records import ToolCall


def _key(name: str, **arguments: object) -> object:
    return call_key(ToolCall(id="c", name=name, arguments=dict(arguments)))


def test_the_same_arguments_in_any_order_and_reasoning_are_the_same_call() -> None:
    a = _key("write_file", path="a.py", content="x = 1\n", _reasoningForCall="first")
    b = _key("write_file", content="x = 1\n", _reasoningForCall="again", path="a.py")
    assert a == b and hash(a) == hash(b)


def test_different_values_names_or_types_are_different_calls() -> None:
    base = _key("read_file", path="a.py")
    assert base != _key("read_file", path="b.py")
    assert base != _key("list_directory", path="a.py")
    assert _key("t", flag=True) != _key("t", flag=1)
    assert _key("t", n=1) != _key("t", n="1")
    assert _key("t", items=["a", "b"]) != _key("t", items=["b", "a"])
    assert _key("t", nested={"a": [1, {"b": None}]}) == _key("t", nested={"a": [1, {"b": None}]})
