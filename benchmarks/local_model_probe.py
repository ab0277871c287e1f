"""Probe the embedded local model: which tool-calling mode gives parseable, correct calls.

Starts the real embedded server (toolgate.model.local.LocalModelServer) once per chat format and
sends the same small prompts with a four-tool set through the real openai client:

- native:   --chat_format chatml-function-calling, `tools` + tool_choice "auto", streamed and not;
- text:     the GGUF's own template, tools described in the system prompt as
            <tool name="NAME">{JSON}</tool> blocks, no `tools` parameter;
- template: the GGUF's own template with `tools` passed, so Qwen's template describes them itself
            and the model answers with <tool_call>{…}</tool_call> text that the server leaves
            unparsed (a mix: the model's trained format, parsed on our side).

For each answer it records the raw output, whether a call parses, whether it is the right call
with the right arguments, and the time; after a correct call it sends back a tool result and
records whether the model then ends with plain text. It also measures generation speed and the
server's memory. Results go to benchmarks/results/local_model_probe.json and a summary to stdout.

Run:  .venv/bin/python benchmarks/local_model_probe.py [--reps 2]
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import openai

from toolgate.model.local import LocalModelServer

RESULTS = Path(__file__).parent / "results" / "local_model_probe.json"

TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "write_file",
            "description": "Create or overwrite a file in the project with the given content.",
            "parameters": {
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "Path relative to the project."},
                    "content": {"type": "string", "description": "The whole new file content."},
                },
                "required": ["path", "content"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "Read a file of the project.",
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string"}},
                "required": ["path"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "run_tests",
            "description": "Run the project's tests with a command such as 'pytest -q'.",
            "parameters": {
                "type": "object",
                "properties": {"command": {"type": "string"}},
                "required": ["command"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "git_commit",
            "description": "Commit all current changes with a message.",
            "parameters": {
                "type": "object",
                "properties": {"message": {"type": "string"}},
                "required": ["message"],
            },
        },
    },
]

Check = Callable[[str, dict[str, Any]], bool]

# (prompt, expected tool or None for a plain answer, argument check, the tool result to send back)
CASES: list[tuple[str, str | None, Check | None, str]] = [
    (
        "Create hello.py that prints hello",
        "write_file",
        lambda n, a: a.get("path") == "hello.py" and "print" in str(a.get("content", "")),
        '{"success": true, "data": "wrote hello.py (1 line)"}',
    ),
    (
        "Read README.md",
        "read_file",
        lambda n, a: a.get("path") in ("README.md", "./README.md"),
        '{"success": true, "data": "# Demo\\nA tiny project. Run the tests with pytest."}',
    ),
    (
        "Run the tests",
        "run_tests",
        lambda n, a: "pytest" in str(a.get("command", "")) or "test" in str(a.get("command", "")),
        '{"success": true, "data": "3 passed in 0.02s"}',
    ),
    (
        "Commit the changes with the message 'Add hello.py'",
        "git_commit",
        lambda n, a: "hello" in str(a.get("message", "")).lower(),
        '{"success": true, "data": "committed 1a2b3c4 Add hello.py"}',
    ),
    (
        "What does the Python expression len('abc') return? Answer in one short sentence.",
        None,
        None,
        "",
    ),
]

NATIVE_SYSTEM = (
    "You are a coding agent working in a small Python project. Use the tools to act on the "
    "project. When the task is done, or when no tool is needed, answer in plain text."
)

TEXT_SYSTEM = """You are a coding agent working in a small Python project.
You can use these tools:
- write_file(path, content): create or overwrite a file with the whole new content
- read_file(path): read a file
- run_tests(command): run the tests, for example "pytest -q"
- git_commit(message): commit all current changes

To use a tool, reply with one block and nothing after it. Examples:
<tool name="write_file">{"path": "src/app.py", "content": "x = 1\n"}</tool>
<tool name="read_file">{"path": "setup.cfg"}</tool>
<tool name="run_tests">{"command": "pytest -q"}</tool>
<tool name="git_commit">{"message": "Fix the parser"}</tool>
Paths are relative to the project folder. You then get the result in a <result> block.
When the task is done, or when no tool is needed, answer in plain text without any tool block."""

_TAG = re.compile(r'<tool\s+name="([\w.-]+)"[^>]*>\s*(.*?)\s*</tool>', re.S)
_HERMES = re.compile(r"<tool_call>\s*(\{.*?\})\s*</tool_call>", re.S)
_FENCED = re.compile(r"```(?:json)?\s*(\{.*?\})\s*```", re.S)
_BARE = re.compile(r"^\s*(\{.*\})\s*$", re.S)


def parse_text_call(text: str) -> tuple[str, str, dict[str, Any]] | None:
    """(syntax, name, arguments) of the first call in the text, or None."""
    if m := _TAG.search(text):
        try:
            args = json.loads(m.group(2))
        except ValueError:
            return ("tag-badjson", m.group(1), {})
        return ("tag", m.group(1), args if isinstance(args, dict) else {})
    for syntax, pattern in (("hermes", _HERMES), ("fenced", _FENCED), ("bare-json", _BARE)):
        if m := pattern.search(text):
            try:
                obj = json.loads(m.group(1))
            except ValueError:
                continue
            if isinstance(obj, dict) and isinstance(obj.get("name"), str):
                args = obj.get("arguments", obj.get("parameters", {}))
                if isinstance(args, str):
                    try:
                        args = json.loads(args)
                    except ValueError:
                        args = {}
                return (syntax, obj["name"], args if isinstance(args, dict) else {})
    return None


def rss_mb(pid: int) -> tuple[float, float]:
    """(current RSS, peak RSS) of a process in MB, from /proc."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        fields[key] = value.strip()
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024


def ask_native(
    client: openai.OpenAI, model: str, messages: list[dict[str, Any]], stream: bool
) -> dict[str, Any]:
    """One native-tools turn; returns text, calls and timing."""
    start = time.monotonic()
    if not stream:
        reply = client.chat.completions.create(
            model=model,
            messages=messages,  # type: ignore[arg-type]
            tools=TOOLS,  # type: ignore[arg-type]
            tool_choice="auto",
            temperature=0.2,
            max_tokens=400,
        )
        msg = reply.choices[0].message
        calls = [
            {"id": c.id, "name": c.function.name, "arguments": c.function.arguments}
            for c in (msg.tool_calls or [])
        ]
        return {
            "text": msg.content or "",
            "calls": calls,
            "seconds": time.monotonic() - start,
            "completion_tokens": reply.usage.completion_tokens if reply.usage else None,
        }
    text = ""
    calls: dict[int, dict[str, str]] = {}
    first_token: float | None = None
    for chunk in client.chat.completions.create(
        model=model,
        messages=messages,  # type: ignore[arg-type]
        tools=TOOLS,  # type: ignore[arg-type]
        tool_choice="auto",
        temperature=0.2,
        max_tokens=400,
        stream=True,
    ):
        if not chunk.choices:
            continue
        delta = chunk.choices[0].delta
        if first_token is None and (delta.content or delta.tool_calls):
            first_token = time.monotonic() - start
        text += delta.content or ""
        for tc in delta.tool_calls or []:
            slot = calls.setdefault(tc.index, {"id": "", "name": "", "arguments": ""})
            slot["id"] = tc.id or slot["id"]
            if tc.function:
                slot["name"] += tc.function.name or ""
                slot["arguments"] += tc.function.arguments or ""
    return {
        "text": text,
        "calls": [calls[i] for i in sorted(calls)],
        "seconds": time.monotonic() - start,
        "first_token_seconds": first_token,
    }


def ask_text(
    client: openai.OpenAI,
    model: str,
    messages: list[dict[str, Any]],
    stream: bool,
    tools: list[dict[str, Any]] | None,
) -> dict[str, Any]:
    """One text-protocol turn (optionally with `tools` for the GGUF's template to render)."""
    start = time.monotonic()
    extra: dict[str, Any] = {"tools": tools} if tools else {}
    if not stream:
        reply = client.chat.completions.create(
            model=model,
            messages=messages,  # type: ignore[arg-type]
            temperature=0.2,
            max_tokens=400,
            **extra,
        )
        msg = reply.choices[0].message
        return {
            "text": msg.content or "",
            "server_calls": [c.function.name for c in (msg.tool_calls or [])],
            "seconds": time.monotonic() - start,
            "completion_tokens": reply.usage.completion_tokens if reply.usage else None,
        }
    text = ""
    first_token: float | None = None
    for chunk in client.chat.completions.create(
        model=model,
        messages=messages,  # type: ignore[arg-type]
        temperature=0.2,
        max_tokens=400,
        stream=True,
        **extra,
    ):
        if chunk.choices and chunk.choices[0].delta.content:
            if first_token is None:
                first_token = time.monotonic() - start
            text += chunk.choices[0].delta.content
    return {"text": text, "seconds": time.monotonic() - start, "first_token_seconds": first_token}


def judge(
    expected: str | None, check: Check | None, name: str | None, args: dict[str, Any] | None
) -> dict[str, bool]:
    """Whether a turn parsed, and whether it is the right call (or a plain answer)."""
    if expected is None:
        return {"parsed": True, "correct": name is None, "lenient": name is None}
    parsed = name is not None and args is not None
    correct = bool(parsed and name == expected and check is not None and check(name, args or {}))
    # The same check with paths cut to their last part: /home/user/hello.py counts as hello.py.
    loose = {
        k: v.rsplit("/", 1)[-1] if k == "path" and isinstance(v, str) else v
        for k, v in (args or {}).items()
    }
    lenient = bool(parsed and name == expected and check is not None and check(name, loose))
    return {"parsed": parsed, "correct": correct, "lenient": lenient}


def run_native(server: LocalModelServer, reps: int, system: bool) -> list[dict[str, Any]]:
    """All cases in native mode, streamed and not, with a follow-up turn after correct calls.

    system False puts the instructions at the top of the user message instead of a system
    message (chatml-function-calling writes its own system message).
    """
    mode = "native" if system else "native-nosys"
    client = openai.OpenAI(base_url=server.base_url, api_key=server.api_key, timeout=120)
    rows = []
    for stream in (False, True):
        for prompt, expected, check, result in CASES:
            for rep in range(reps):
                messages: list[dict[str, Any]] = (
                    [
                        {"role": "system", "content": NATIVE_SYSTEM},
                        {"role": "user", "content": prompt},
                    ]
                    if system
                    else [{"role": "user", "content": f"{NATIVE_SYSTEM}\n\n{prompt}"}]
                )
                turn = ask_native(client, server.model, messages, stream)
                name, args = None, None
                if turn["calls"]:
                    name = turn["calls"][0]["name"]
                    try:
                        args = json.loads(turn["calls"][0]["arguments"] or "{}")
                    except ValueError:
                        args = None
                row = {
                    "mode": mode,
                    "stream": stream,
                    "prompt": prompt,
                    "rep": rep,
                    **turn,
                    **judge(expected, check, name, args),
                }
                if row["lenient"] and expected is not None:
                    call = turn["calls"][0]
                    messages += [
                        {
                            "role": "assistant",
                            # llama_cpp.server answers 500 to "content": null here.
                            "content": "",
                            "tool_calls": [
                                {
                                    "id": call["id"] or "call_0",
                                    "type": "function",
                                    "function": {
                                        "name": call["name"],
                                        "arguments": call["arguments"],
                                    },
                                }
                            ],
                        },
                        {"role": "tool", "tool_call_id": call["id"] or "call_0", "content": result},
                    ]
                    try:
                        follow = ask_native(client, server.model, messages, False)
                    except openai.APIError as exc:
                        follow = {"error": str(exc)[:500], "calls": [], "text": ""}
                    row["follow_up"] = follow
                    row["ends_with_text"] = not follow["calls"] and bool(follow["text"].strip())
                rows.append(row)
                print(_line(row), flush=True)
    return rows


def run_text(server: LocalModelServer, reps: int, mode: str) -> list[dict[str, Any]]:
    """All cases in a text mode ('text' or 'template'), with a follow-up after correct calls."""
    client = openai.OpenAI(base_url=server.base_url, api_key=server.api_key, timeout=120)
    tools = TOOLS if mode == "template" else None
    system = NATIVE_SYSTEM if mode == "template" else TEXT_SYSTEM
    rows = []
    for stream in (False, True):
        for prompt, expected, check, result in CASES:
            for rep in range(reps if not stream else 1):
                messages: list[dict[str, Any]] = [
                    {"role": "system", "content": system},
                    {"role": "user", "content": prompt},
                ]
                turn = ask_text(client, server.model, messages, stream, tools)
                parsed = parse_text_call(turn["text"])
                name, args = (parsed[1], parsed[2]) if parsed else (None, None)
                row = {
                    "mode": mode,
                    "stream": stream,
                    "prompt": prompt,
                    "rep": rep,
                    "syntax": parsed[0] if parsed else None,
                    **turn,
                    **judge(expected, check, name, args),
                }
                if row["lenient"] and expected is not None:
                    if mode == "template":
                        feedback = f"<tool_response>\n{result}\n</tool_response>"
                        messages += [
                            {"role": "assistant", "content": turn["text"]},
                            {"role": "user", "content": feedback},
                        ]
                    else:
                        feedback = f'<result name="{name}">{result}</result>'
                        messages += [
                            {"role": "assistant", "content": turn["text"]},
                            {"role": "user", "content": feedback},
                        ]
                    follow = ask_text(client, server.model, messages, False, tools)
                    row["follow_up"] = follow
                    row["ends_with_text"] = parse_text_call(follow["text"]) is None and bool(
                        follow["text"].strip()
                    )
                rows.append(row)
                print(_line(row), flush=True)
    return rows


def speed(server: LocalModelServer) -> dict[str, float]:
    """Generation speed on a longer answer (tokens per second, non-streamed)."""
    client = openai.OpenAI(base_url=server.base_url, api_key=server.api_key, timeout=300)
    start = time.monotonic()
    reply = client.chat.completions.create(
        model=server.model,
        messages=[
            {
                "role": "user",
                "content": "Write a Python module with three small functions and docstrings.",
            }
        ],
        temperature=0.2,
        max_tokens=300,
    )
    seconds = time.monotonic() - start
    tokens = reply.usage.completion_tokens if reply.usage else 0
    return {"completion_tokens": tokens, "seconds": seconds, "tokens_per_second": tokens / seconds}


def _line(row: dict[str, Any]) -> str:
    """One progress line per turn."""
    flags = f"parsed={row['parsed']!s:5} correct={row['correct']!s:5} lenient={row['lenient']!s:5}"
    if "ends_with_text" in row:
        flags += f" ends_with_text={row['ends_with_text']}"
    stream = "stream" if row["stream"] else "plain "
    return f"{row['mode']:8} {stream} {row['seconds']:5.1f}s {flags}  {row['prompt'][:40]}"


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Counts per (mode, stream)."""
    out: dict[str, Any] = {}
    for row in rows:
        key = f"{row['mode']}/{'stream' if row['stream'] else 'plain'}"
        s = out.setdefault(
            key,
            {
                "turns": 0,
                "parsed": 0,
                "correct": 0,
                "lenient": 0,
                "follow_ups": 0,
                "ends_with_text": 0,
                "s": [],
            },
        )
        s["turns"] += 1
        s["parsed"] += row["parsed"]
        s["correct"] += row["correct"]
        s["lenient"] += row["lenient"]
        s["s"].append(row["seconds"])
        if "ends_with_text" in row:
            s["follow_ups"] += 1
            s["ends_with_text"] += row["ends_with_text"]
    for s in out.values():
        times = sorted(s.pop("s"))
        s["median_seconds"] = round(times[len(times) // 2], 2)
        s["max_seconds"] = round(times[-1], 2)
    return out


def main() -> None:
    """Run every mode and write the results."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=2, help="repetitions of each prompt")
    parser.add_argument("--n-threads", type=int, default=None)
    args = parser.parse_args()

    report: dict[str, Any] = {"machine": platform.platform(), "cpus": None, "servers": {}}
    rows: list[dict[str, Any]] = []
    for mode, chat_format in (
        ("native", "chatml-function-calling"),
        ("text", None),
    ):
        server = LocalModelServer(chat_format=chat_format, n_threads=args.n_threads)
        server.start_sync()
        try:
            assert server.pid is not None
            info: dict[str, Any] = {
                "chat_format": chat_format,
                "n_threads": server.n_threads,
                "startup_seconds": round(server.startup_seconds or 0, 2),
                "rss_mb_after_start": round(rss_mb(server.pid)[0]),
            }
            report["cpus"] = server.n_threads
            if mode == "native":
                rows += run_native(server, args.reps, system=True)
                rows += run_native(server, args.reps, system=False)
            else:
                info["speed"] = speed(server)
                rows += run_text(server, args.reps, "text")
                rows += run_text(server, args.reps, "template")
            now, peak = rss_mb(server.pid)
            info["rss_mb_end"], info["rss_mb_peak"] = round(now), round(peak)
            report["servers"][mode] = info
            print(json.dumps(info), flush=True)
        finally:
            server.stop_sync()
    report["summary"] = summarize(rows)
    report["rows"] = rows
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=1), encoding="utf-8")
    print(json.dumps(report["summary"], indent=1))


if __name__ == "__main__":
    main()
