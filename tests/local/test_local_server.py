"""The embedded model for real: assembled, served by llama_cpp.server, answering, and stopped."""

from __future__ import annotations

import asyncio
import hashlib
import importlib.util
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import openai
import pytest
from tests.support.calc_review import DIFF
from tests.support.processes import alive

from toolgate.code_review import ReviewRequest, review_changes
from toolgate.model.client import ModelSettings
from toolgate.model.local import LocalModelServer
from toolgate.model.local_assets import (
    MODEL_NAME,
    MODEL_SHA256,
    MODEL_SIZE,
    LocalModelError,
    ensure_model_file,
)

pytestmark = [
    pytest.mark.local_model,
    pytest.mark.skipif(
        importlib.util.find_spec("llama_cpp") is None,
        reason='the local runtime is not installed (pip install "toolgate[local]", or run '
        "toolgate model install)",
    ),
]


def _models_status(base_url: str) -> int:
    with urllib.request.urlopen(f"{base_url}/models", timeout=10) as reply:
        return int(reply.status)


def _group_gone(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return True
    return False


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalModelServer]:
    logs = tmp_path_factory.mktemp("logs")
    with LocalModelServer(log_dir=logs) as running:
        yield running


def test_model_file_is_the_pinned_one() -> None:
    path = ensure_model_file()
    assert path.stat().st_size == MODEL_SIZE
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(4 * 1024 * 1024):
            digest.update(chunk)
    assert digest.hexdigest() == MODEL_SHA256


def test_server_answers_models(server: LocalModelServer) -> None:
    assert server.base_url.startswith("http://127.0.0.1:")
    assert f":{server.port}" in server.description
    assert "small model" in server.description
    with urllib.request.urlopen(f"{server.base_url}/models", timeout=10) as reply:
        assert reply.status == 200
        body = json.load(reply)
    assert [m["id"] for m in body["data"]] == [MODEL_NAME]


def test_chat_completion_returns_text(server: LocalModelServer) -> None:
    client = openai.OpenAI(base_url=server.base_url, api_key=server.api_key)
    reply = client.chat.completions.create(
        model=server.model,
        messages=[{"role": "user", "content": "Say hello in one short sentence."}],
        max_tokens=32,
        temperature=0,
    )
    text = reply.choices[0].message.content
    assert isinstance(text, str) and text.strip()


def test_server_keeps_only_the_last_tokens_logits(server: LocalModelServer) -> None:
    # Every prompt token's logits would be an n_ctx x vocabulary array, 5 GB at 8192 tokens;
    # llama.cpp refuses logprobs exactly when it keeps only the last token's.
    client = openai.OpenAI(base_url=server.base_url, api_key=server.api_key, max_retries=0)
    with pytest.raises(openai.APIError) as refused:
        client.chat.completions.create(
            model=server.model,
            messages=[{"role": "user", "content": "Say hello."}],
            max_tokens=4,
            logprobs=True,
            top_logprobs=1,
        )
    assert "logits_all=False" in str(refused.value.body or refused.value)


async def test_a_review_gets_the_schema_in_the_form_the_server_takes(
    server: LocalModelServer,
) -> None:
    # llama_cpp.server answers `json_schema` with HTTP 500; its `json_object` form holds the
    # model to the review's schema, so even this model's answer reads as a review.
    notices: list[str] = []
    settings = ModelSettings(
        model=server.model,
        base_url=server.base_url,
        api_key=server.api_key,
        temperature=0,
        max_tokens=512,
    )
    review = await review_changes(ReviewRequest(diff=DIFF), settings, notice=notices.append)
    assert review.metrics["output"] == "structured"
    assert review.metrics["llm_calls"] == 2, notices
    [refused] = notices
    assert "json_schema" in refused and "HTTP 500" in refused and "trying json_object" in refused


async def test_async_start_and_stop_leave_nothing_behind(tmp_path: Path) -> None:
    local = LocalModelServer(log_dir=tmp_path, n_ctx=2048)
    await local.start()
    pid = local.pid
    assert pid is not None and local.running
    assert await asyncio.to_thread(_models_status, local.base_url) == 200

    await local.stop()
    await local.stop()  # a second stop is harmless

    assert not local.running
    assert not alive(pid)
    assert _group_gone(pid)
    assert local.log_path is not None and local.log_path.read_bytes()


def test_server_ends_when_its_parent_is_killed(tmp_path: Path) -> None:
    # A parent that starts the server, prints its pid, then waits; SIGKILL skips its atexit.
    code = textwrap.dedent(
        f"""
        import time
        from pathlib import Path
        from toolgate.model.local import LocalModelServer
        s = LocalModelServer(log_dir=Path({str(tmp_path)!r}), n_ctx=2048)
        s.start_sync()
        print(s.pid, flush=True)
        time.sleep(600)
        """
    )
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout is not None
        pid = int(parent.stdout.readline())
        assert alive(pid)
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        deadline = time.monotonic() + 15
        while alive(pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not alive(pid)
    finally:
        parent.kill()
        parent.wait()


def test_bad_model_file_fails_with_the_log(tmp_path: Path) -> None:
    bogus = tmp_path / "bogus.gguf"
    bogus.write_bytes(b"not a gguf file" * 100)
    local = LocalModelServer(model_path=bogus, log_dir=tmp_path, startup_timeout=60)
    with pytest.raises(LocalModelError, match="exited during start") as info:
        local.start_sync()
    assert str(local.log_path) in str(info.value)
    assert not local.running


async def test_cancelled_start_leaves_no_process(tmp_path: Path) -> None:
    local = LocalModelServer(log_dir=tmp_path, n_ctx=2048)
    task = asyncio.create_task(local.start())
    for _ in range(3000):  # until the process exists (the model file is already assembled)
        if local.pid is not None:
            break
        await asyncio.sleep(0.01)
    pid = local.pid
    assert pid is not None
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert local.pid is None
    assert not alive(pid)
