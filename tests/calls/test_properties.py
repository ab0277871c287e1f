"""Property tests: chunking never changes the result, nothing crashes, arguments round-trip."""

from __future__ import annotations

import json
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolgate.calls import StreamingCallParser, parse_text

from .helpers import TOOLS, run_in_chunks
from .test_corpus import CORPUS, FAMILIES, tools_for

FRAGMENTS = [
    "Let me look at the file first.\n",
    "Some prose with a < sign and a [link](x) and {braces}.\n",
    "\n\n\n",
    "\r\n",
    "Ünïcödé ✓ 日本語 🙂\n",
    '<tool name="read_file" args>{"path": "src/a.py"}</tool>',
    '<tool name=\'write_file\'>{"path": "b.py", "content": "x = \'</tool>\'\\n"}</tool>\n',
    "<tool name=&quot;read_file&quot; args>{&quot;path&quot;: &quot;a&quot;}</tool>",
    '<tool name="git_status" args></tool>',
    '<tool name="read_file" args></tool>',
    '<tool name="read_file" args>{"path": "a"</tool>',
    '<tool name="read_file" args>{"path": "unterminated}</tool> tail',
    '<tool name="read_file" args><tool name="git_status" args>{}</tool></tool>',
    '<tool name="nope" args>{}</tool>',
    '<tool>{"name": "read_file", "arguments": {"path": "n"}}</tool>',
    '<tool:read_file>{"path": "short"}',
    "<tool:git_status></tool>",
    "\n>>> RUN COMMAND\npytest -q tests\n",
    "\n>>> RUN COMMAND\nls -la\r\n",
    "\n>>> WRITE FILE: pkg/mod.py\n```python\ndef f():\n    return '```'\n```\n",
    '<tool_call>\n{"name": "search_code", "arguments": {"pattern": "def "}}\n</tool_call>\n',
    "<tool_call>\n<function=write_file>\n<parameter=path>\nq.py\n</parameter>\n"
    "<parameter=content>\nprint(1)\n</parameter>\n</function>\n</tool_call>\n",
    "<function=list_directory><parameter=recursive>true</parameter></function>",
    '[TOOL_CALLS][{"name": "read_file", "arguments": {"path": "m"}}]',
    '[TOOL_CALLS]git_add[ARGS]{"files": ["a", "b"]}',
    '\n{"name": "read_file", "parameters": {"path": "llama"}}\n',
    '<|python_tag|>{"name": "git_status", "parameters": {}}',
    '\n[read_file(path="py"), git_commit(message="it\'s done")]\n',
    "<write_file><path>x.md</path><content>\n# Title\n</content></write_file>",
    '\n```json\n{"name": "read_file", "arguments": {"path": "fenced"}}\n```\n',
    '\n```tool\n{"name": "unknown_tool", "arguments": {}}\n```\n',
    '\n```xml\n<tool name="read_file" args>{"path": "example"}</tool>\n```\n',
    'Inline `<tool name="read_file" args>{}</tool>` example.\n',
    "~~~\n[TOOL_CALLS] in a tilde fence\n~~~\n",
    "\nsrc/a.py\n```python\n<<<<<<< SEARCH\nx = 1\n=======\nx = 2\n>>>>>>> REPLACE\n```\n",
    "```\nb.py\n<<<<<<< SEARCH\nold\n=======\n```\n",
    "c.py\n```\n<<<<<<< SEARCH\nold\n=======\n```\n",
    '\nfunctools[{"name": "read_file", "arguments": {"path": "phi"}}]\n',
    "\nfunctools[] and functools\nfun\n",
    "```\nunclosed fence",
    '<tool name="edit_file" args>{"path": "a", "search": "x",',
    "[TOOL_CALLS]",
    "<tool_call>",
    "`",
    "<",
    "[",
    "{",
    ">>>",
    # the families under toolgate.calls.syntaxes
    "<|tool_calls_section_begin|><|tool_call_begin|>functions.read_file:0"
    '<|tool_call_argument_begin|>{"path": "kimi"}<|tool_call_end|><|tool_calls_section_end|>',
    "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>read_file\n```json\n"
    '{"path": "ds"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
    "<|channel|>analysis<|message|>Think.<|end|><|start|>assistant<|channel|>commentary "
    'to=functions.read_file <|constrain|>json<|message|>{"path": "oss"}<|call|>',
    "<tool_call>read_file\n<arg_key>path</arg_key>\n<arg_value>glm</arg_value>\n</tool_call>",
    '<function=read_file>{"path": "functionary"}</function>',
    '<|tool_call_start|>[read_file(path="lfm")]<|tool_call_end|>',
    '<|tool_call|>[{"name": "read_file", "arguments": {"path": "granite"}}]<|/tool_call|>',
    '<tool_calls>[{"name": "read_file", "arguments": {"path": "jamba"}}]</tool_calls>',
    '<|action_start|><|plugin|>\n{"name": "git_status", "parameters": {}}<|action_end|>',
    '<|START_ACTION|>[{"tool_name": "read_file", "parameters": {"path": "c"}}]<|END_ACTION|>',
    '<function_calls>\nread_file(path="olmo")\n</function_calls>',
    "<start_function_call>call:read_file{path:<escape>g<escape>}<end_function_call>",
    '[TOOL_CALLS]read_file{"path": "devstral"}',
    '< tool name="read_file" args>{"path": "spaced"}</tool>',
    "a < tool name is prose < 3 ",
    "\n```tool\nTOOL_NAME: read_file\nBEGIN_ARG: path\ncontinue\nEND_ARG\n```\n",
    '<|tool_calls_section_begin|><|tool_call_begin|>functions.read_file:0{"path"',
    '<|tool_call|>[{"name": "read_file", "arguments": {"path": "unclosed',
    "<|tool_calls_sec",
    '<|tool_call>call:read_file{path:<|"|>gemma, {4}<|"|>}<tool_call|>',
    '<|tool_call>call:git_add{files:[<|"|>a<|"|>,<|"|>b]<|"|>]}<turn|>',
    '<|tool_call>call:read_file{path:<|"|>cut',
    '\ncall:read_file{path:<|"|>line}<|"|>}\n',
    "\ncall:read_fil",
    "<|channel>thought\nhm<channel|>call:git_status{}",
    '<｜DSML｜function_calls>\n<｜DSML｜invoke name="read_file">\n<｜DSML｜parameter name="path" '
    'string="true">ds</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>',
    '<｜DSML｜ calls>\n<｜DSML｜ invoke name="git_add">\n<｜DSML｜ parameter name="files" '
    'string="false">["a"]</｜DSML｜ parameter>\n</｜DSML｜ invoke>\n</｜DSML｜ calls>',
    '<｜DSML｜invoke name="git_status">\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>',
    '<｜DSML｜tool_calls>\n<｜DSML｜invoke name="read_file">\n<｜DSML｜parameter name="path"',
    "<｜DSML｜ nothing> <｜DS",
    '<｜DSML｜tool_calls>\n<｜DSML｜invoke name="git_status"/>\n</｜DSML｜tool_calls>',
    '<｜DSML｜invoke name="git_status"/>',
    '<｜DSML｜invoke name="git_status">\n</｜DSML｜invoke>',
    "\n```\nsrc/d.py\n```\n```\n<<<<<<< SEARCH\nold\n=======\nnew\n>>>>>>> REPLACE\n```\n",
    "\n```python\nsrc/c.py\n<<<<<<< SEARCH\nold\n=======\nnew\n>>>>>>> REPLACE\n...\n```\n",
    "<tool_call>read_file<arg_key>path</arg_key><arg_value>  spaced  </arg_value></tool_call>",
]

# Constructs whose completion involves no bracket or angle bracket: only their fence or line ends.
TIMING_FRAGMENTS = [
    "\n```tool\n\n```\n",
    "\n~~~tool_call\nnot json\n~~~\n",
    "\n```python\nx = 1\n```\n",
    "a `span` and `another one` here ",
    "\n>>> RUN COMMAND\npytest -q\n",
    '\n```json\n{"name": "git_status"}\n```\n',
    "\n>>> print('a prompt')\n",
    "\n~~~tool\n\n~~~\n",
    "<function=read_file " + "x" * 300,
    '`x` <tool name="git_status" args>{}</tool> `y` ',
    "Some `code` here, a [link](x) and {braces} > 2; " * 25,
    '<tool name="git_status" args="{}</tool> ',
    '<tool name="git_status" args="{}" then prose ',
    '<tool name="git_add" args="{"files": ["a"]}"></tool>',
    "\n```\u00a0tool\nnot json\n```\n",  # the language after a no-break space is still `tool`
    "\n````md\n```\n<tool:git_status>{}\n```\n````\n",  # a longer fence holds a shorter one
    "\n```py `x`\n<tool:git_status>{}\n",  # a backtick in the info: inline code, no fence
    "\n~~~\r\n<tool:git_status>{}\n  ~~~~  \r\n",
    "\n```" + "i" * 300 + "\n[TOOL_CALLS]\n```\n",  # an info line longer than the look-ahead
    "\n```\nsrc/a.py\nprint(1)\n```\n",  # a path-like first line with no SEARCH after it
    "\n```\nsrc/d.py\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n```\n",
    "\n```\n" + "p" * 300 + "\n```\n",  # a first line longer than the look-ahead
]


def _check_invariant(text: str, cuts: list[int]) -> None:
    whole = parse_text(text, TOOLS)
    items, content = run_in_chunks(text, cuts)
    assert items == [*whole.calls, *whole.errors] or sorted(map(repr, items)) == sorted(
        map(repr, [*whole.calls, *whole.errors])
    )
    assert content == whole.content
    assert run_in_chunks(text, cuts, take=False) == (items, content)
    # order of closing is the same however the text is cut
    one = run_in_chunks(text, list(range(len(text))))
    assert one[0] == items and one[1] == content


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=8),
    st.lists(st.integers(min_value=0, max_value=3000), max_size=12),
)
def test_any_chunking_gives_the_same_result(parts: list[str], cuts: list[int]) -> None:
    _check_invariant("".join(parts), cuts)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=6),
    st.integers(min_value=0, max_value=10_000),
    st.integers(min_value=1, max_value=6),
)
def test_fragments_cut_mid_way_never_crash(parts: list[str], seed: int, size: int) -> None:
    text = "".join(parts)
    # truncate anywhere: cut-off calls must become errors or prose, never calls that ran
    text = text[: seed % (len(text) + 1)]
    _check_invariant(text, list(range(0, len(text), size)))


ALPHABET = st.sampled_from(
    list("<>/=\"'{}[]()`~\n\r\t :,\\|_-.#&;")
    + [
        "tool",
        "tool_call",
        "function",
        "parameter",
        "name",
        "args",
        "read_file",
        "git_status",
        ">>> ",
        "RUN COMMAND",
        "WRITE FILE:",
        "```",
        "[TOOL_CALLS]",
        "[ARGS]",
        "<|python_tag|>",
        "<|tool_call>",
        "<tool_call|>",
        '<|"|>',
        "call:",
        "<｜DSML｜",
        "</｜DSML｜",
        "invoke",
        "<<<<<<< SEARCH",
        "&quot;",
        "é",
        "日",
        "\u2028",
        "x",
        "1",
    ]
)


@settings(max_examples=600, deadline=None)
@given(st.lists(ALPHABET, max_size=60), st.lists(st.integers(0, 400), max_size=8))
def test_arbitrary_text_never_raises_and_is_chunk_invariant(tokens: list[str], cuts: list[int]):
    _check_invariant("".join(tokens), cuts)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300), st.lists(st.integers(0, 300), max_size=6))
def test_arbitrary_unicode_text(text: str, cuts: list[int]) -> None:
    _check_invariant(text, cuts)


TRICKY = st.lists(
    st.sampled_from(
        list("ab \"'\\{}[]\n\r\t<>/`") + ["</tool>", "<tool ", "é", "日本", "🙂", "\u0000", "```"]
    ),
    max_size=40,
).map("".join)


@settings(max_examples=400, deadline=None)
@given(path=TRICKY, content=TRICKY, cuts=st.lists(st.integers(0, 300), max_size=6))
def test_canonical_tag_round_trips_any_string_arguments(path: str, content: str, cuts):
    args = {"path": path, "content": content}
    text = f'Before.\n<tool name="write_file" args>{json.dumps(args)}</tool>\nAfter.'
    items, visible = run_in_chunks(text, cuts)
    assert [(i.name, i.arguments, i.syntax) for i in items] == [("write_file", args, "tag")]
    assert visible == "Before.\n\nAfter."
    # non-ASCII written raw, not escaped, round-trips too
    raw = f'<tool name="write_file" args>{json.dumps(args, ensure_ascii=False)}</tool>'
    items, _ = run_in_chunks(raw, cuts)
    assert [i.arguments for i in items] == [args]


@settings(max_examples=200, deadline=None)
@given(value=TRICKY)
def test_round_trip_in_hermes_and_mistral(value: str) -> None:
    call = {"name": "git_commit", "arguments": {"message": value}}
    for text, syntax in [
        (f"<tool_call>{json.dumps(call)}</tool_call>", "hermes"),
        (f"[TOOL_CALLS][{json.dumps(call)}]", "mistral"),
        (f"[TOOL_CALLS]git_commit[ARGS]{json.dumps(call['arguments'])}", "mistral_v11"),
    ]:
        result = parse_text(text, TOOLS)
        assert [(c.arguments, c.syntax) for c in result.calls] == [(call["arguments"], syntax)]


def test_parsing_time_is_linear_on_hostile_input() -> None:
    # Many openings that never close, unbalanced quotes and brackets: must stay fast.
    hostile = [
        '<tool name="read_file" args>{"path": "' * 2000,
        "\n[read_file(" * 5000,
        '\n{"name": "read_file", "parameters": {' * 3000,
        "`" * 20000 + "\n",
        "<read_file><path>" * 3000,
        "<" * 50000,
        "[TOOL_CALLS]" * 5000,
        "\n```json\n" * 5000,
        "<tool_call>" * 5000,
        "<function=read_file><parameter=path>" * 3000,
        '<|tool_call>call:read_file{path:<|"|>' * 3000,
        "\ncall:read_file{" * 5000,
        '<｜DSML｜tool_calls><｜DSML｜invoke name="read_file">' * 3000,
        "\n```\na.py\n" * 5000,
    ]
    for text in hostile:
        start = time.perf_counter()
        parse_text(text, TOOLS)
        one_shot = time.perf_counter() - start
        assert one_shot < 5, (text[:40], one_shot)
        start = time.perf_counter()
        run_in_chunks(text, list(range(0, len(text), 16)))
        assert time.perf_counter() - start < 10, text[:40]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(FRAGMENTS + TIMING_FRAGMENTS), min_size=1, max_size=12),
    st.sampled_from([2, 3, 5, 16, 17, 64, 199, 200, 201]),
    st.booleans(),
)
def test_fixed_size_chunks_match_one_shot(parts: list[str], size: int, take: bool) -> None:
    # steady chunk sizes drive the batching and fast paths the way a real stream does
    text = "".join(parts)
    whole = parse_text(text, TOOLS)
    items, content = run_in_chunks(text, list(range(size, len(text), size)), take=take)
    assert items == [*whole.calls, *whole.errors] or sorted(map(repr, items)) == sorted(
        map(repr, [*whole.calls, *whole.errors])
    )
    assert content == whole.content


def test_benchmark_answer_streams_exactly_like_one_shot() -> None:
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    from bench_calls import build_answer

    text = build_answer()
    whole = parse_text(text, TOOLS)
    assert len(whole.calls) >= 100 and whole.errors == []
    for size in (16, 100, 4096):
        for take in (True, False):
            items, content = run_in_chunks(text, list(range(size, len(text), size)), take=take)
            assert items == whole.calls and content == whole.content, (size, take)


def _emitted_per_feed(text: str, size: int, take: bool = False) -> list[int]:
    """How many items the parser has emitted after each fixed-size feed."""
    parser = StreamingCallParser(TOOLS)
    counts: list[int] = []
    total = 0
    for start in range(0, len(text), size):
        total += len(parser.feed(text[start : start + size]))
        counts.append(total)
        if take:
            parser.take_content()  # works out the stored prose: must not hold an item back
    return counts


def _emitted_by_prefix(prefix: str) -> int:
    """What one feed of the whole prefix emits: everything its text already decides."""
    return len(StreamingCallParser(TOOLS).feed(prefix))


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.sampled_from(FRAGMENTS + TIMING_FRAGMENTS), min_size=1, max_size=8),
    st.sampled_from([1, 3, 7, 16, 40]),
)
def test_every_item_is_emitted_by_the_feed_that_completes_it(parts: list[str], size: int) -> None:
    # Batching small chunks must never hold back a call or error the text already decides.
    text = "".join(parts)
    counts = _emitted_per_feed(text, size)
    for i, count in enumerate(counts):
        assert count == _emitted_by_prefix(text[: (i + 1) * size]), (text, size, i)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.sampled_from(FRAGMENTS + TIMING_FRAGMENTS), min_size=1, max_size=8),
    st.sampled_from([1, 3, 7, 16, 40]),
)
def test_taking_the_content_between_feeds_changes_no_timing(parts: list[str], size: int) -> None:
    text = "".join(parts)
    assert _emitted_per_feed(text, size, take=True) == _emitted_per_feed(text, size)


def test_an_empty_tool_fence_is_reported_when_it_closes() -> None:
    parser = StreamingCallParser(TOOLS)
    assert parser.feed("Here:\n") == []
    assert parser.feed("```tool\n") == []
    assert parser.feed("\n") == []
    errors = parser.feed("```\n")
    assert len(errors) == 1 and "```tool" in errors[0].error


@pytest.mark.parametrize("space", ["\u00a0", "\f", "\u2003"])
def test_a_tool_fence_after_unicode_whitespace_is_reported_when_it_closes(space: str) -> None:
    # The language is the info's first word whatever whitespace precedes it; the batching
    # must see such a fence as something that may open a call.
    parser = StreamingCallParser(TOOLS)
    assert parser.feed("Here:\n") == []
    assert parser.feed(f"```{space}tool\n") == []
    assert parser.feed("not json\n") == []
    errors = parser.feed("```\n")
    assert len(errors) == 1 and "tool" in errors[0].error


@pytest.mark.parametrize(
    "text", [">>> RUN COMMAND\r\n\r\npytest -q\r\n", ">>> RUN COMMAND\n \r\n```\nls\n```\n"]
)
def test_a_blank_crlf_line_after_an_arrow_line_is_skipped_wherever_it_is_cut(text: str) -> None:
    whole = parse_text(text, TOOLS)
    assert len(whole.calls) == 1 and whole.errors == []
    for cut in range(1, len(text)):
        assert run_in_chunks(text, [cut]) == (whole.calls, whole.content), cut


@pytest.mark.parametrize("size", [1, 2, 4, 8, 16])
def test_backticks_after_a_call_on_its_line_open_no_fence_when_streamed(size: int) -> None:
    # Stored prose is skimmed from where the call ended: mid-line, so "```" is inline code there
    # and the call on the next line runs.
    text = '<tool name="git_status" args>{}</tool>```py\nthen <tool:read_file>{"path": "a"}\n'
    whole = parse_text(text, TOOLS)
    assert [c.name for c in whole.calls] == ["git_status", "read_file"]
    cuts = list(range(size, len(text), size))
    assert run_in_chunks(text, cuts, take=False) == (whole.calls, whole.content)


@pytest.mark.parametrize(
    "head", ['{"name": "read_file", "arguments": {"path": "a"}}', '[read_file(path="a")]']
)
@pytest.mark.parametrize("size", [1, 3, 7])
def test_a_call_after_a_line_call_on_the_same_line_is_emitted_when_it_closes(
    head: str, size: int
) -> None:
    # A JSON or pythonic call counts only alone on its line; once other text follows, that text
    # is prose, and a call in it completes at its own closing, not at the line's end.
    text = head + ' and <tool name="git_status" args>{}</tool> then more prose on the line'
    counts = _emitted_per_feed(text, size)
    assert counts[-1] == 1
    for i, count in enumerate(counts):
        assert count == _emitted_by_prefix(text[: (i + 1) * size]), i


def test_a_call_after_a_plain_fence_is_emitted_when_it_closes() -> None:
    parser = StreamingCallParser(TOOLS)
    parser.feed("Example:\n```python\n")
    parser.feed("x = 1\n")
    parser.feed("```\n")
    calls = parser.feed('<tool name="git_status" args>{}</tool>')
    assert [c.name for c in calls] == ["git_status"]


@settings(max_examples=300, deadline=None)
@given(st.lists(ALPHABET, max_size=60), st.sampled_from([1, 2, 5, 16]))
def test_no_item_is_held_back_on_arbitrary_text(tokens: list[str], size: int) -> None:
    text = "".join(tokens)
    counts = _emitted_per_feed(text, size)
    for i, count in enumerate(counts):
        assert count == _emitted_by_prefix(text[: (i + 1) * size]), (text, size, i)


@pytest.mark.parametrize("family", FAMILIES)
def test_every_corpus_case_is_read_alike_in_one_shot_and_in_16_byte_chunks(family: str) -> None:
    # each family, with the tools its cases are scored against: the same calls, errors, content
    for case in json.loads((CORPUS / f"{family}.json").read_text("utf-8")):
        text, tools = case["text"], case.get("tools") or tools_for(case["calls"])
        whole = parse_text(text, tools)
        items, content = run_in_chunks(text, list(range(16, len(text), 16)), tools)
        assert sorted(map(repr, items)) == sorted(map(repr, [*whole.calls, *whole.errors])), case
        assert content == whole.content, case["id"]
