"""Hostile messages for every server command and every handled LSP method, and a tally of answers.

Each case is one framed message. A request case says which error codes may answer it (besides a
result); -32603 (internal error) and silence are never allowed. The values put in every place
are the classics of a hostile client: wrong JSON types, `null`, missing and extra fields, a
10 MB string and 10,000 levels of nesting.
"""

from __future__ import annotations

import asyncio
import copy
import itertools
import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tests.lsp.rawclient import RawClient, nested

if TYPE_CHECKING:
    from tests.support.scripted_model import ScriptedModel

INVALID_PARAMS = -32602
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INTERNAL_ERROR = -32603

HUGE_BYTES = 10 * 1000 * 1000
DEEP_LEVELS = 10_000


def file_writer(counter: itertools.count[int]) -> Any:
    """A scripted answer proposing a new file every turn: a proposal is nearly always pending."""

    def answer(_body: dict[str, Any]) -> dict[str, Any]:
        n = next(counter)
        arguments = {"path": f"made/f{n}.py", "content": f"n = {n}\n"}
        return {"tool_calls": [{"name": "write_file", "arguments": arguments}]}

    return answer


def initialize_params(root_uri: str, model: ScriptedModel, api_key: str) -> dict[str, Any]:
    """`initialize` for a client that applies edits, talking to the scripted model."""
    return {
        "processId": None,
        "rootUri": root_uri,
        "workspaceFolders": [{"uri": root_uri, "name": "project"}],
        "capabilities": {"workspace": {"applyEdit": True}},
        "initializationOptions": {
            "baseUrl": model.base_url,
            "model": model.model,
            "apiKey": api_key,
            "toolCalling": {"mode": "native"},
            "limits": {"maxSteps": 1000},
        },
    }


class Raw(str):
    """JSON text put into a message as it is (nesting that no Python object should hold)."""


HUGE = "x" * HUGE_BYTES
# Just under the server's 8 MiB limit: read, parsed and refused (or used) like any string.
LARGE = "y" * (7 * 1000 * 1000)
DEEP = Raw(nested(DEEP_LEVELS))
# Wrong types and odd values, for every place of every message.
VALUES: list[Any] = [None, True, 0, -1, 1.5, "", "x", [], {}, [None], {"a": None}]
EXTRA_VALUES: list[Any] = [None, "x", {"a": [1]}]


@dataclass
class Case:
    """One message: a request (answered with a result or one of `allowed`) or a notification."""

    label: str
    method: str
    params: Any
    request: bool = True
    allowed: frozenset[int] = frozenset({INVALID_PARAMS})
    omit_params: bool = False


def _dumps(value: Any) -> str:
    if isinstance(value, Raw):
        return str(value)
    if isinstance(value, dict):
        return "{" + ",".join(f"{json.dumps(k)}:{_dumps(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(_dumps(v) for v in value) + "]"
    return json.dumps(value)


def body(case: Case, msg_id: int | None) -> bytes:
    """The message's JSON text: `jsonrpc`, `id` and `method` first, as editors write them."""
    head = {"jsonrpc": "2.0"}
    if msg_id is not None:
        head["id"] = msg_id  # type: ignore[assignment]
    head["method"] = case.method
    text = _dumps(head)[:-1]
    if not case.omit_params:
        text += f',"params":{_dumps(case.params)}'
    return (text + "}").encode()


def _paths(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield path
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from _paths(inner, (*path, key))
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            yield from _paths(inner, (*path, index))


def _replace(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    out = copy.deepcopy(value)
    target = out
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = new
    return out


def _delete(value: Any, path: tuple[Any, ...]) -> Any:
    out = copy.deepcopy(value)
    target = out
    for key in path[:-1]:
        target = target[key]
    del target[path[-1]]
    return out


def _extra(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    out = copy.deepcopy(value)
    target = out
    for key in path:
        target = target[key]
    if isinstance(target, dict):
        target["unexpected"] = new
    elif isinstance(target, list):
        target.append(new)
    return out


def mutations(base: Any, *, big_depth: int = 1) -> Iterator[tuple[str, Any]]:
    """Every place of `base` with every hostile value, missing, and with an extra field."""
    for path in _paths(base):
        where = "/".join(map(str, path)) or "."
        for value in VALUES:
            yield f"{where}={json.dumps(value)}", _replace(base, path, value)
        if len(path) <= big_depth:
            yield f"{where}=10MB", _replace(base, path, HUGE)
            yield f"{where}=7MB", _replace(base, path, LARGE)
            yield f"{where}=deep", _replace(base, path, DEEP)
        if path:
            yield f"{where} missing", _delete(base, path)
        for value in EXTRA_VALUES:
            container = _walk(base, path)
            if isinstance(container, (dict, list)):
                yield f"{where}+extra={json.dumps(value)}", _extra(base, path, value)


def _walk(value: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        value = value[key]
    return value


def _range(line: int = 0) -> dict[str, Any]:
    return {"start": {"line": line, "character": 0}, "end": {"line": line + 1, "character": 0}}


def command_bases(file_uri: str) -> dict[str, list[Any]]:
    """Well-formed arguments of each command; the cases spoil them one place at a time."""
    return {
        "toolgate.ask": [
            {
                "task": "say hi about @selection and @problems",
                "context": {
                    "uri": file_uri,
                    "range": _range(1),
                    "text": "x",
                    "diagnostics": [
                        {
                            "uri": file_uri,
                            "range": _range(),
                            "message": "m",
                            "severity": 1,
                            "source": "s",
                        }
                    ],
                },
            }
        ],
        "toolgate.acceptProposal": ["p-nope", [0]],
        "toolgate.rejectProposal": ["p-nope", "no"],
        "toolgate.acceptAll": [],
        "toolgate.listProposals": [],
        "toolgate.cancel": ["r-nope"],
        "toolgate.runTests": [{"command": "pytest -q"}],
        "toolgate.setApprovalMode": [{"mode": "ask"}],
        "toolgate.fixFailure": [{"uri": file_uri, "line": 1, "message": "m", "testId": "t"}],
        "toolgate.editSelection": [{"uri": file_uri, "range": _range(), "instruction": "x"}],
        "toolgate.reportDiagnostics": [
            {
                "uri": file_uri,
                "diagnostics": [{"range": _range(), "message": "m", "severity": 1, "source": "s"}],
            }
        ],
        "toolgate.newSession": [{"title": "t"}],
        "toolgate.listSessions": [{}],
        "toolgate.loadSession": [{"sessionId": "s-nope"}],
        "toolgate.renameSession": [{"sessionId": "s-nope", "title": "t"}],
        "toolgate.deleteSession": [{"sessionId": "s-nope"}],
        "toolgate.doctor": [],
        "toolgate.customization": [],
        "toolgate.runCommand": [{"name": "nope", "arguments": "x", "sessionId": "s-nope"}],
        "toolgate.findModelServers": [],
        # Port 9 (discard): nothing listens, so a well-formed check fails at once.
        "toolgate.checkEndpoint": [{"baseUrl": "http://127.0.0.1:9/v1", "model": "m"}],
        "toolgate.undoRun": [{"runId": "r-nope", "dryRun": True, "force": False}],
        # Turn 999 and rw-nope name nothing: with the session spoilt or not, nothing is rewound.
        "toolgate.rewind": [{"turn": 999, "what": "both", "sessionId": "s-nope"}],
        "toolgate.undoRewind": [{"rewindId": "rw-nope", "sessionId": "s-nope"}],
        "toolgate.review": [{"staged": False, "proposalId": "p-nope", "focus": ["security"]}],
        "toolgate.applyReviewSuggestion": [
            {"uri": file_uri, "line": 0, "original": "nope", "suggestion": "x = 1"}
        ],
        "toolgate.reviewLoop": [{"task": "say hi", "sessionId": "s-nope"}],
        "toolgate.plan": [{"task": "render the docs"}],
        "toolgate.runPlan": [{"planId": "p-nope"}],
        "toolgate.dropPlan": [{"planId": "p-nope", "sessionId": "s-nope"}],
        "toolgate.runWorkflow": [{"name": "nope", "inputs": {"a": "b"}}],
        "toolgate.scaffoldTool": [
            {"capability": "docs.render", "name": "render", "inputs": ["a"], "outputs": ["b"]}
        ],
    }


def command_cases(file_uri: str) -> Iterator[Case]:
    """`workspace/executeCommand` for every command, its params and arguments spoilt."""
    method = "workspace/executeCommand"
    for label, params in mutations({"command": "toolgate.listProposals", "arguments": []}):
        yield Case(f"executeCommand {label}", method, params)
    yield Case("executeCommand without params", method, None, omit_params=True)
    for command, arguments in command_bases(file_uri).items():
        for label, spoilt in mutations(arguments, big_depth=2):
            yield Case(f"{command} {label}", method, {"command": command, "arguments": spoilt})


def code_action_cases(file_uri: str) -> Iterator[Case]:
    """`textDocument/codeAction` with its document, range and context spoilt."""
    diagnostic = {
        "range": _range(2),
        "message": "t fails",
        "severity": 1,
        "source": "toolgate",
        "code": "test_a.py::test_a",
    }
    base = {
        "textDocument": {"uri": file_uri},
        "range": _range(),
        "context": {"diagnostics": [diagnostic], "only": ["quickfix"], "triggerKind": 1},
    }
    for label, params in mutations(base, big_depth=2):
        yield Case(f"codeAction {label}", "textDocument/codeAction", params)
    yield Case("codeAction without params", "textDocument/codeAction", None, omit_params=True)


def protocol_cases(root_uri: str) -> Iterator[Case]:
    """Requests the protocol must refuse: a second initialize, notifications sent as requests,
    unknown methods."""
    again = {"processId": None, "rootUri": root_uri, "capabilities": {}}
    yield Case("second initialize", "initialize", again, allowed=frozenset({INVALID_REQUEST}))
    for label, params in mutations(again, big_depth=1):
        yield Case(
            f"second initialize {label}",
            "initialize",
            params,
            allowed=frozenset({INVALID_REQUEST, INVALID_PARAMS}),
        )
    for method in ("initialized", "textDocument/didOpen", "exit", "$/cancelRequest"):
        yield Case(
            f"{method} as a request",
            method,
            {},
            allowed=frozenset({INVALID_REQUEST, INVALID_PARAMS}),
        )
    for method in ("toolgate/nope", "textDocument/hover", "$/nope", "", "x" * 1000):
        for value in (None, {}, [1], DEEP):
            yield Case(
                f"unknown {method[:20]!r} {str(value)[:10]}",
                method,
                value,
                allowed=frozenset({METHOD_NOT_FOUND, INVALID_PARAMS}),
            )


def notification_cases(file_uri: str, root_uri: str) -> Iterator[Case]:
    """Every handled notification with its params spoilt (never answered; must not crash)."""
    bases: dict[str, Any] = {
        "textDocument/didOpen": {
            "textDocument": {"uri": file_uri, "languageId": "python", "version": 1, "text": "a\n"}
        },
        "textDocument/didChange": {
            "textDocument": {"uri": file_uri, "version": 2},
            "contentChanges": [{"range": _range(), "text": "b\n"}],
        },
        "textDocument/didClose": {"textDocument": {"uri": file_uri}},
        "workspace/didChangeConfiguration": {"settings": {"toolgate": {"model": "m"}}},
        "workspace/didChangeWorkspaceFolders": {
            "event": {"added": [{"uri": root_uri, "name": "x"}], "removed": []}
        },
        "window/workDoneProgress/cancel": {"token": "toolgate-r-nope"},
        "$/cancelRequest": {"id": 999_999},
        "$/setTrace": {"value": "off"},
        "initialized": {},
    }
    for method, base in bases.items():
        for label, params in mutations(base, big_depth=1):
            yield Case(f"{method} {label}", method, params, request=False)


@dataclass
class Tally:
    """What came back."""

    tried: int = 0
    answered: int = 0
    results: int = 0
    errors: Counter[int] = field(default_factory=Counter)
    silent: list[str] = field(default_factory=list)
    unexpected: list[str] = field(default_factory=list)
    notifications: int = 0

    @property
    def internal_errors(self) -> int:
        """Answers with -32603."""
        return self.errors[INTERNAL_ERROR]

    def line(self) -> str:
        """One line for the test's output and the benchmark's figures."""
        codes = ", ".join(f"{n} × {code}" for code, n in sorted(self.errors.items()))
        return (
            f"{self.tried} requests tried, {self.answered} answered ({self.results} results; "
            f"errors: {codes or 'none'}), {self.internal_errors} internal errors, "
            f"{len(self.silent)} unanswered; {self.notifications} notifications sent"
        )


async def send(client: RawClient, case: Case, tally: Tally, timeout: float = 120.0) -> None:
    """Send one case and record how it was answered."""
    if not case.request:
        tally.notifications += 1
        await client.write(_framed(body(case, None)))
        return
    tally.tried += 1
    msg_id = client.new_id()
    try:
        response = await client.send_for(msg_id, body(case, msg_id), timeout=timeout)
    except asyncio.TimeoutError:
        tally.silent.append(case.label)
        return
    tally.answered += 1
    if "error" in response:
        code = response["error"]["code"]
        tally.errors[code] += 1
        if code not in case.allowed:
            message = str(response["error"].get("message", ""))[:200]
            tally.unexpected.append(f"{case.label}: {code} {message}")
    else:
        tally.results += 1


def _framed(data: bytes) -> bytes:
    return f"Content-Length: {len(data)}\r\n\r\n".encode() + data
