"""Native tool calls put together from stream chunks as servers really split them.

Each chunk is the JSON a server sends after `data: `, read by the openai package's own chunk
type the way its stream reads it, so the deltas have the attributes (and the missing ones)
that `OpenAIChatModel.stream` sees.
"""

from __future__ import annotations

import json
from typing import Any

from openai.types.chat import ChatCompletionChunk

from toolgate.model.tool_deltas import NativeCall, ToolCallDeltas


def chunk(*tool_calls: dict[str, Any], finish: str | None = None) -> str:
    """One `chat.completion.chunk` as a server writes it, with these tool-call deltas."""
    delta: dict[str, Any] = {"tool_calls": list(tool_calls)} if tool_calls else {}
    return json.dumps(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
    )


def assemble(*chunks: str) -> list[NativeCall]:
    calls = ToolCallDeltas()
    for raw in chunks:
        parsed = ChatCompletionChunk.construct(**json.loads(raw))
        for delta in parsed.choices[0].delta.tool_calls or []:
            calls.add(delta)
    return calls.calls()


def test_arguments_split_across_chunks_are_joined_in_order() -> None:
    # OpenAI's own shape: id, type and name first, then the arguments in pieces, cut anywhere
    # (inside a key, inside an escape), each piece under the call's index.
    pieces = ['{"pa', 'th": "a\\u00e9', '.txt", "con', 'tent": "x\\n"', "}"]
    calls = assemble(
        chunk(
            {
                "index": 0,
                "id": "call_abc",
                "type": "function",
                "function": {"name": "write_file", "arguments": ""},
            }
        ),
        *[chunk({"index": 0, "function": {"arguments": p}}) for p in pieces],
        chunk(finish="tool_calls"),
    )
    assert [(c.id, c.name) for c in calls] == [("call_abc", "write_file")]
    assert json.loads(calls[0].arguments) == {"path": "aé.txt", "content": "x\n"}


def test_a_name_repeated_in_every_delta_is_set_never_appended() -> None:
    calls = assemble(
        chunk({"index": 0, "id": "c1", "function": {"name": "read_file", "arguments": '{"path"'}}),
        chunk({"index": 0, "function": {"name": "read_file", "arguments": ': "a.txt"'}}),
        chunk({"index": 0, "function": {"name": "read_file", "arguments": "}"}}),
    )
    assert [(c.name, c.arguments) for c in calls] == [("read_file", '{"path": "a.txt"}')]


def test_several_calls_keep_their_index_order_even_interleaved() -> None:
    calls = assemble(
        chunk({"index": 1, "id": "b", "function": {"name": "read_file", "arguments": '{"path":'}}),
        chunk({"index": 0, "id": "a", "function": {"name": "list_files", "arguments": "{"}}),
        chunk({"index": 1, "function": {"arguments": ' "b.txt"}'}}),
        chunk({"index": 0, "function": {"arguments": "}"}}),
    )
    assert [(c.id, c.name, c.arguments) for c in calls] == [
        ("a", "list_files", "{}"),
        ("b", "read_file", '{"path": "b.txt"}'),
    ]


def test_deltas_without_an_index_are_each_a_call_of_their_own() -> None:
    # Servers that send each call whole, with no index: one delta, one call.
    calls = assemble(
        chunk({"id": "x1", "function": {"name": "read_file", "arguments": '{"path": "a"}'}}),
        chunk({"function": {"name": "read_file", "arguments": '{"path": "b"}'}}),
    )
    assert [(c.id, c.arguments) for c in calls] == [
        ("x1", '{"path": "a"}'),
        ("call_1", '{"path": "b"}'),
    ]


def test_an_id_arriving_late_is_kept_and_a_missing_one_is_made_up() -> None:
    calls = assemble(
        chunk({"index": 0, "function": {"name": "read_file", "arguments": '{"path": "a"}'}}),
        chunk({"index": 1, "function": {"name": "list_files", "arguments": "{}"}}),
        chunk({"index": 0, "id": "late-0", "type": "function"}),  # no function at all
    )
    assert [(c.id, c.name) for c in calls] == [("late-0", "read_file"), ("call_1", "list_files")]


def test_empty_and_null_pieces_change_nothing() -> None:
    calls = assemble(
        chunk({"index": 0, "id": "c", "function": {"name": "list_files", "arguments": None}}),
        chunk({"index": 0, "id": "", "function": {"name": "", "arguments": ""}}),
        chunk({"index": 0, "function": {"name": None, "arguments": "{}"}}),
    )
    assert [(c.id, c.name, c.arguments) for c in calls] == [("c", "list_files", "{}")]


def test_calls_given_whole_take_their_place_and_nothing_begun_is_false() -> None:
    calls = ToolCallDeltas()
    assert not calls and calls.calls() == []
    calls.add_whole(1, NativeCall("second", "read_file", '{"path": "b"}'))
    calls.add_whole(0, NativeCall("first", "list_files"))
    assert calls
    assert [c.id for c in calls.calls()] == ["first", "second"]
