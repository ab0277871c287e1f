"""The peer benchmark's recording proxy: the real openai client through it to the scripted model."""

from __future__ import annotations

import threading
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import openai
import pytest
from benchmarks.peers.proxy import RecordingProxy, TokenCounter, count_tokens, prompt_text
from tests.support.net import canned_endpoint
from tests.support.scripted_model import ScriptedModel

USAGE = {"prompt_tokens": 42, "completion_tokens": 7, "total_tokens": 49}
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "read_file",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
        },
    }
]


@pytest.fixture
def proxy(scripted: ScriptedModel) -> Iterator[RecordingProxy]:
    with RecordingProxy(scripted.base_url) as running:
        yield running


def _client(proxy: RecordingProxy) -> openai.OpenAI:
    return openai.OpenAI(base_url=proxy.base_url, api_key="local", max_retries=0)


def test_a_plain_answer_passes_through_and_is_recorded(
    scripted: ScriptedModel, proxy: RecordingProxy
) -> None:
    scripted.script = [{"content": "Hello there.", "usage": USAGE}]
    proxy.label = "t/a"
    reply = _client(proxy).chat.completions.create(
        model="scripted-model", messages=[{"role": "user", "content": "Say hello."}]
    )
    assert reply.choices[0].message.content == "Hello there."
    [exchange] = proxy.take("t/a")
    assert exchange.is_chat and exchange.status == 200 and not exchange.stream
    assert exchange.text == "Hello there." and exchange.usage == USAGE
    assert exchange.request_bytes > 0 and exchange.response_bytes > 0
    assert proxy.take("t/a") == []  # taken once
    assert scripted.requests[0]["messages"][0]["content"] == "Say hello."


def test_a_streamed_answer_is_relayed_chunk_by_chunk_with_its_tool_calls(
    scripted: ScriptedModel, proxy: RecordingProxy
) -> None:
    scripted.script = [
        {
            "content": "Reading it.",
            "tool_calls": [{"name": "read_file", "arguments": {"path": "a.py"}}],
            "usage": USAGE,
        }
    ]
    proxy.label = "t/b"
    stream = _client(proxy).chat.completions.create(
        model="scripted-model",
        messages=[{"role": "user", "content": "Read a.py."}],
        tools=TOOLS,  # type: ignore[arg-type]
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)
    assert len(chunks) > 3  # the answer came in pieces, as the endpoint sent it
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "Reading it."
    [exchange] = proxy.take("t/b")
    assert exchange.stream and exchange.tools == 1
    assert exchange.text == "Reading it."
    assert exchange.tool_calls == [{"name": "read_file", "arguments": '{"path": "a.py"}'}]
    assert exchange.finish_reason == "tool_calls" and exchange.usage == USAGE


def test_errors_and_other_paths_are_forwarded_as_they_are(
    scripted: ScriptedModel, proxy: RecordingProxy
) -> None:
    scripted.script = [{"status": 400, "error": "tools not supported"}]
    proxy.label = "t/c"
    with pytest.raises(openai.BadRequestError, match="tools not supported"):
        _client(proxy).chat.completions.create(
            model="scripted-model", messages=[{"role": "user", "content": "x"}]
        )
    with pytest.raises(openai.NotFoundError):
        _client(proxy).responses.create(model="scripted-model", input="x")
    models = _client(proxy).models.list()
    assert [m.id for m in models.data] == ["scripted-model"]
    exchanges = proxy.take("t/c")
    assert [(e.path, e.status) for e in exchanges] == [
        ("/v1/chat/completions", 400),
        ("/v1/responses", 404),
        ("/v1/models", 200),
    ]
    assert exchanges[0].error == "tools not supported"


def test_tokens_come_from_usage_else_from_the_bytes(
    scripted: ScriptedModel, proxy: RecordingProxy
) -> None:
    scripted.script = [{"content": "one", "usage": USAGE}, {"content": "x" * 40}]
    proxy.label = "t/d"
    client = _client(proxy)
    for _ in range(2):
        client.chat.completions.create(
            model="scripted-model", messages=[{"role": "user", "content": "y" * 400}]
        )
    reported, counted = proxy.take("t/d")
    # The scripted server has no tokenizer route, so unreported tokens are counted from bytes.
    count_tokens([reported, counted], TokenCounter(scripted.base_url))
    assert (reported.prompt_tokens, reported.completion_tokens) == (42, 7)
    assert reported.token_source == "usage"
    assert counted.token_source == "bytes"
    assert counted.prompt_tokens == 100 and counted.completion_tokens == 10
    assert reported.body is None and counted.body is None  # the bodies are let go


def test_the_endpoint_tokenizer_counts_when_it_has_one() -> None:
    # llama-cpp-python's /extras/tokenize/count answers {"count": N} on the server's root.
    with canned_endpoint(200, "application/json", b'{"count": 3}') as url:
        counter = TokenCounter(url)
        assert counter.count("three words here") == 3
        assert counter.source == "tokenizer"


def test_the_prompt_text_is_the_messages_and_the_tool_schemas() -> None:
    body = {
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": [{"type": "text", "text": "Read a.py"}]},
        ],
        "tools": TOOLS,
    }
    text = prompt_text(body)
    assert "Be brief." in text and "Read a.py" in text and '"read_file"' in text


def test_a_real_key_replaces_what_the_agents_send() -> None:
    seen: list[str] = []

    class Echo(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 — the standard library's name
            seen.append(self.headers.get("Authorization", ""))
            data = b'{"object": "list", "data": []}'
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Echo)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        upstream = f"http://127.0.0.1:{server.server_address[1]}/v1"
        with RecordingProxy(upstream, api_key="sk-real") as proxy:
            request = urllib.request.Request(
                proxy.base_url + "/models", headers={"Authorization": "Bearer local"}
            )
            with urllib.request.urlopen(request, timeout=10) as reply:
                assert reply.status == 200
        assert seen == ["Bearer sk-real"]
    finally:
        server.shutdown()
        server.server_close()
