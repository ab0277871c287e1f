"""The repeat guard: a call the model already made is refused while nothing has changed since.

Small models go round the same few calls until the run's step limit; each round costs a
request, and on the embedded model a request can cost minutes. What "nothing has changed"
means depends on the call, as its tool says (`Tool.repeats_as`):

- a file change (`write_file`, `edit_file`) or any tool that may change anything (`FRESH`)
  always changes something once it succeeds (it may wait in an editor's buffer, where git
  cannot see it);
- a tool whose every effect shows in git's view (`SEEN_BY_GIT`: `git_add`, `git_commit`,
  `run_tests`, `run_command`) changes something only if that view of the workspace moved
  (`workspace_state`): staging what is staged, or a test run, does not;
- a look at the workspace (`LOOK`: `read_file`, `list_directory`, …) is run again out of sight
  when repeated, and refused only if it answers the same: the person may have edited the file,
  saved or not, since the model looked;
- any other read (`SAME`: code_review asks a model, a latent tool is answered by one) is
  refused when repeated, never run twice to find out.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from toolgate.agent.workspace_state import workspace_state
from toolgate.records import ToolCall, ToolResult
from toolgate.tools.activity import ActivityContext
from toolgate.tools.registry import ToolRegistry, strip_meta
from toolgate.tools.schema import FRESH, LOOK, SEEN_BY_GIT

REPEATED = (
    "you already made this exact call and nothing has changed since; its result is above. "
    "Do the next step, or, if the task is done, answer in plain text without a tool call."
)


def call_key(call: ToolCall) -> tuple[Any, ...]:
    """What makes two calls the same call, without serialising the arguments.

    A whole file's content is an argument of `write_file`: encoding it as JSON here cost as
    much as the rest of planning the proposal; a tuple holding the same strings hashes them once.
    """
    args = {k: v for k, v in call.arguments.items() if k != "_reasoningForCall"}
    return (call.name, _frozen(args))


def _frozen(value: Any) -> Any:
    # the type is part of the key: True == 1 in Python, but not as JSON arguments
    if isinstance(value, dict):
        return ("dict", tuple(sorted((str(k), _frozen(v)) for k, v in value.items())))
    if isinstance(value, (list, tuple)):
        return ("list", tuple(_frozen(v) for v in value))
    if isinstance(value, (str, int, float, bool)) or value is None:
        return (type(value).__name__, value)
    return ("other", repr(value))


def answer_digest(result: ToolResult) -> str:
    """A digest of what a call answered, to tell a look that sees something new."""
    text = json.dumps(
        [result.success, result.data, result.error, result.output_truncated],
        sort_keys=True,
        ensure_ascii=False,
        default=str,
    )
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=20).hexdigest()


class RepeatGuard:
    """The calls made since the workspace last changed, and what the looks among them saw."""

    def __init__(self, registry: ToolRegistry, ctx: ActivityContext) -> None:
        self.registry = registry
        self.ctx = ctx
        self.repeats = 0  # calls refused as repeats in this run
        self._seen: dict[tuple[Any, ...], str | None] = {}
        self._state: str | None = None  # the workspace's digest since then, once taken

    async def is_repeat(self, call: ToolCall) -> bool:
        """Whether `call` was made before and would tell the model nothing new."""
        key = call_key(call)
        if key not in self._seen:
            return False
        seen = self._seen[key]
        if seen is None:
            return True
        activity = self.registry.activity(call.name)
        if activity is None:
            return True
        try:
            again = await activity.run(self.ctx, strip_meta(call.arguments)[0])
        except Exception:  # the gate runs it for real and reports what went wrong
            return False
        return answer_digest(again) == seen

    def _repeats_as(self, call: ToolCall) -> str | None:
        tool = self.registry.get(call.name)
        return tool.repeats_as if tool is not None else None

    async def before(self, call: ToolCall) -> None:
        """Take the workspace's digest before a call that git can judge, if not yet taken."""
        if self._repeats_as(call) == SEEN_BY_GIT and self._state is None:
            self._state = await workspace_state(self.ctx.workspace.root)

    async def after(self, call: ToolCall, result: ToolResult) -> None:
        """Remember a call that went through the gate, and forget the rest if it changed things."""
        repeats_as = self._repeats_as(call)
        if repeats_as in (FRESH, SEEN_BY_GIT) and result.success:
            # The same call may now mean something new, unless git sees the workspace as it was.
            digested = repeats_as == SEEN_BY_GIT
            after = await workspace_state(self.ctx.workspace.root) if digested else None
            if after is None or after != self._state:
                self._seen.clear()
            self._state = after
        if result.success:  # a failed or refused call may fairly be tried again
            look = repeats_as == LOOK and self.registry.activity(call.name) is not None
            self._seen[call_key(call)] = answer_digest(result) if look else None
