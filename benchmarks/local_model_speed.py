"""Generation speed of the embedded model with the installed llama-cpp-python build.

Starts the real server (LocalModelServer, 1 thread by default as Toolgate uses it on 2 cores),
streams a fixed completion a few times at temperature 0 and reports prompt time (to the first
token) and generation speed (tokens after the first, per second). Each streamed chunk is one token.
Which CPU features the build uses is read from llama.cpp's own system info, in a child process.

With --long, also a long prompt (5,281 tokens, as a conversation near the window sends):
its time to the first token, the same prompt again with only its last line changed (what the
server reuses of the previous prompt), and the server's peak memory (VmHWM).

    .venv/bin/python benchmarks/local_model_speed.py --key portable --long
    PYTHONPATH=/path/to/other/build .venv/bin/python benchmarks/local_model_speed.py --key native
    .venv/bin/python benchmarks/local_model_speed.py --key logits-all --long \
        --server-arg=--logits_all --server-arg=true     # the server's own default, to compare
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import openai

from toolgate.model.local import LocalModelServer

RESULTS = Path(__file__).resolve().parent / "results" / "local_model_speed.json"
PROMPT = "Write a Python module with five small functions on lists, each with a docstring."


def system_info() -> dict[str, str]:
    """llama.cpp's report of the build (e.g. AVX2 = 1), and where the package was loaded from."""
    code = (
        "import llama_cpp, json\n"
        "print(json.dumps({'system_info': llama_cpp.llama_print_system_info().decode(),"
        " 'package': llama_cpp.__file__, 'version': llama_cpp.__version__}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def one_completion(client: openai.OpenAI, model: str, max_tokens: int) -> dict[str, float]:
    """Stream one answer; time to the first token and tokens per second after it."""
    start = time.monotonic()
    first: float | None = None
    tokens = 0
    stream = client.chat.completions.create(
        model=model,
        messages=[{"role": "user", "content": PROMPT}],
        temperature=0.0,
        max_tokens=max_tokens,
        stream=True,
    )
    for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            tokens += 1
            if first is None:
                first = time.monotonic()
    end = time.monotonic()
    assert first is not None, "the model wrote nothing"
    return {
        "first_token_seconds": round(first - start, 2),
        "tokens": tokens,
        "generation_tokens_per_second": round((tokens - 1) / max(end - first, 1e-9), 2),
    }


def long_prompt(client: openai.OpenAI, model: str) -> dict[str, float]:
    """A long prompt, then the same with its last line changed: seconds to the first token."""
    code = "".join(
        f'def function_{i}(values):\n    """Return the sum of values times {i}."""\n'
        f"    return sum(v * {i} for v in values)\n\n"
        for i in range(160)
    )
    figures = {}
    for key, question in (
        ("long_prompt_first_token_seconds", "Which function multiplies by 7? One line."),
        ("same_prefix_first_token_seconds", "Which function multiplies by 9? One line."),
    ):
        start = time.monotonic()
        stream = client.chat.completions.create(
            model=model,
            messages=[{"role": "user", "content": code + question}],
            temperature=0.0,
            max_tokens=1,
            stream=True,
        )
        for _ in stream:
            pass
        figures[key] = round(time.monotonic() - start, 2)
    return figures


def peak_rss_mb(pid: int) -> float:
    """The process's peak resident memory, from /proc."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return round(int(line.split()[1]) / 1024, 1)
    return float("nan")


def main(argv: list[str] | None = None) -> int:
    """Measure, print, and store the figures under --key."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--key", required=True, help="what build this is, e.g. portable")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--max-tokens", type=int, default=128)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--long", action="store_true", help="also measure a long prompt")
    parser.add_argument("--server-arg", action="append", default=[], help="passed to the server")
    args = parser.parse_args(argv)
    info = system_info()
    runs: list[dict[str, float]] = []
    load_before = os.getloadavg()
    long: dict[str, float] = {}
    with LocalModelServer(n_threads=args.threads, extra_args=args.server_arg) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key=server.api_key, timeout=900)
        one_completion(client, server.model, 8)  # warm-up: the first prompt is slow
        for _ in range(args.repeat):
            runs.append(one_completion(client, server.model, args.max_tokens))
            print(runs[-1], flush=True)
        if args.long:
            long = long_prompt(client, server.model)
            assert server.pid is not None
            long["server_peak_rss_mb"] = peak_rss_mb(server.pid)
            print(long, flush=True)
        threads = server.n_threads
    record: dict[str, Any] = {
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": {"cores": os.cpu_count(), "platform": platform.platform()},
        "threads": threads,
        "server_args": args.server_arg,
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        **info,
        "runs": runs,
        "median_generation_tokens_per_second": statistics.median(
            r["generation_tokens_per_second"] for r in runs
        ),
        "median_first_token_seconds": statistics.median(r["first_token_seconds"] for r in runs),
        **long,
    }
    earlier = json.loads(args.out.read_text(encoding="utf-8")) if args.out.is_file() else {}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({**earlier, args.key: record}, indent=1) + "\n", "utf-8")
    print(
        f"{args.key}: median {record['median_generation_tokens_per_second']} tokens/s, "
        f"first token {record['median_first_token_seconds']} s ({threads} thread(s))"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
