"""The arguments of each `toolgate.*` command, one attrs class per command, read strictly.

pygls structures command arguments with lsprotocol's converter, which makes a string of
anything (`5` → `"5"`, `null` → `"None"`) and cannot give a positional argument a default.
Here every command names its arguments' class; `read_arguments` builds it from the JSON
`arguments` array with a converter that refuses a value of the wrong type, and turns every
failure into one message that names the field, so the protocol can answer -32602 with it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar, cast

import attrs
import cattrs
from cattrs.errors import (
    AttributeValidationNote,
    ClassValidationError,
    IterableValidationError,
    IterableValidationNote,
)
from cattrs.gen import make_dict_structure_fn, override

T = TypeVar("T")

# Set on a class whose fields are the `arguments` array's items in order (`["p-1", [0]]`);
# other classes are the array's single object (`[{"task": "…"}]`).
_POSITIONAL = "__toolgate_positional__"


class ArgumentError(ValueError):
    """An argument that cannot be used; the message is complete and shown as it is."""


class WrongType(TypeError):
    """A value of the wrong JSON type; the message is completed with where it was."""


def positional(cls: type[T]) -> type[T]:
    """Mark an arguments class as read from the array's items in order."""
    setattr(cls, _POSITIONAL, True)
    return cls


def _message(text: str) -> dict[str, str]:
    # The message shown when the field is wrong in any way (type or value).
    return {"invalid": text}


def _non_blank(message: str) -> Callable[[Any, attrs.Attribute[Any], str], None]:
    def check(_instance: Any, _attribute: attrs.Attribute[Any], value: str) -> None:
        if not value.strip():
            raise ArgumentError(message)

    return check


def _at_most(limit: int) -> Callable[[Any, attrs.Attribute[Any], str | None], None]:
    # A task or command line that long is no request a person typed; refusing it keeps
    # megabytes out of prompts, run logs and the command-line parser.
    def check(_instance: Any, attribute: attrs.Attribute[Any], value: str | None) -> None:
        if value is not None and len(value) > limit:
            raise ArgumentError(
                f"{_camel(attribute.name)} is {len(value)} characters long; at most {limit}"
            )

    return check


def _session_id() -> Any:
    """The optional `sessionId` field: the session a request belongs to."""
    return attrs.field(
        default=None, validator=_at_most(200), metadata=_message("sessionId must be a string")
    )


def _task(needs: str) -> Any:
    """The `task` field of a request: a string, not blank, not over `MAX_TASK_CHARS`."""
    return attrs.field(
        default="",
        validator=[_non_blank(needs), _at_most(MAX_TASK_CHARS)],
        metadata=_message(needs),
    )


def _not_negative(_instance: Any, attribute: attrs.Attribute[Any], value: int) -> None:
    if value < 0:
        raise ArgumentError(f"{_camel(attribute.name)} must not be negative")


# -- shared shapes ----------------------------------------------------------------------------


@attrs.frozen
class Position:
    """A 0-based line and character."""

    line: int = attrs.field(validator=_not_negative)
    character: int = attrs.field(default=0, validator=_not_negative)


@attrs.frozen
class Range:
    """Start and end positions, as LSP writes them."""

    start: Position
    end: Position


# -- one class per command --------------------------------------------------------------------

ASK_NEEDS_TASK = 'toolgate.ask needs [{"task": "…"}]'
MAX_TASK_CHARS = 100_000
MAX_COMMAND_CHARS = 4_096


@attrs.frozen
class ContextDiagnostic:
    """A problem the editor shows, sent for `@problems` (LSP's diagnostic, with its file)."""

    uri: str
    range: Range
    message: str
    severity: int | None = None
    source: str | None = None


@attrs.frozen
class AskContext:
    """What the person is looking at: a file, perhaps lines of it and the selected text.

    `diagnostics` are the problems the editor shows (of the open file or the workspace), for
    a task that mentions `@problems`.
    """

    uri: str | None = None
    range: Range | None = None
    text: str | None = None
    diagnostics: list[ContextDiagnostic] | None = None


@attrs.frozen
class AskArguments:
    """`toolgate.ask`: `[{"task": "…", "context"?: {…}}]`."""

    task: str = _task(ASK_NEEDS_TASK)
    context: AskContext | None = None
    session_id: str | None = _session_id()
    new_session: bool = attrs.field(
        default=False, metadata=_message("newSession must be a boolean")
    )


EDIT_SELECTION_NEEDS = 'toolgate.editSelection needs [{"uri": …, "range": …, "instruction": "…"}]'


@attrs.frozen
class EditSelectionArguments:
    """`toolgate.editSelection`: `[{"uri": "…", "range": {…}, "instruction": "…"}]`."""

    uri: str = attrs.field(
        default="",
        validator=_non_blank(EDIT_SELECTION_NEEDS),
        metadata=_message("uri must be a string"),
    )
    range: Range | None = None
    instruction: str = _task(EDIT_SELECTION_NEEDS)
    session_id: str | None = _session_id()


SESSION_ID = 'needs [{"sessionId": "…"}] with a non-empty session id'


@attrs.frozen
class NewSessionArguments:
    """`toolgate.newSession`: `[{"title"?: "…"}]`."""

    title: str | None = attrs.field(default=None, metadata=_message("title must be a string"))


@attrs.frozen
class ListSessionsArguments:
    """`toolgate.listSessions`: `[]` or `[{}]`."""


@attrs.frozen
class RunCommandArguments:
    """`toolgate.runCommand`: `[{"name": "…", "arguments"?: "…", "sessionId"?, "newSession"?}]`."""

    name: str = attrs.field(metadata=_message('needs [{"name": "…"}]: a prompt command name'))
    arguments: str = attrs.field(default="", metadata=_message("arguments must be a string"))
    session_id: str | None = _session_id()
    new_session: bool = attrs.field(
        default=False, metadata=_message("newSession must be a boolean")
    )


@attrs.frozen
class SessionArguments:
    """`toolgate.loadSession`, `toolgate.deleteSession`: `[{"sessionId": "…"}]`."""

    session_id: str = attrs.field(
        default="", validator=_non_blank(SESSION_ID), metadata=_message(SESSION_ID)
    )


RENAME_NEEDS = 'toolgate.renameSession needs [{"sessionId": "…", "title": "…"}]'


@attrs.frozen
class RenameSessionArguments:
    """`toolgate.renameSession`: `[{"sessionId": "…", "title": "…"}]`."""

    session_id: str = attrs.field(
        default="", validator=_non_blank(RENAME_NEEDS), metadata=_message(RENAME_NEEDS)
    )
    title: str = attrs.field(
        default="", validator=_non_blank(RENAME_NEEDS), metadata=_message(RENAME_NEEDS)
    )


@attrs.frozen
class FixFailureArguments:
    """`toolgate.fixFailure`: the failing test as its quick fix sends it."""

    uri: str = ""
    line: int | None = None
    message: str = ""
    test_id: str = ""


PROPOSAL_ID = "proposal id must be a non-empty string"


@positional
@attrs.frozen
class AcceptArguments:
    """`toolgate.acceptProposal`: `[id]` or `[id, [hunk indexes]]`."""

    proposal_id: str = attrs.field(
        default="", validator=_non_blank(PROPOSAL_ID), metadata=_message(PROPOSAL_ID)
    )
    hunks: list[int] | None = attrs.field(
        default=None, metadata=_message("hunk indexes must be a list of integers")
    )


@positional
@attrs.frozen
class RejectArguments:
    """`toolgate.rejectProposal`: `[id, reason?]`."""

    proposal_id: str = attrs.field(
        default="", validator=_non_blank(PROPOSAL_ID), metadata=_message(PROPOSAL_ID)
    )
    reason: str | None = attrs.field(default=None, metadata=_message("the reason must be a string"))


@positional
@attrs.frozen
class CancelArguments:
    """`toolgate.cancel`: `[runId?]`."""

    run_id: str | None = attrs.field(default=None, metadata=_message("the run id must be a string"))


@attrs.frozen
class RunTestsArguments:
    """`toolgate.runTests`: `[{"command"?: "…"}]`."""

    command: str | None = attrs.field(
        default=None,
        validator=_at_most(MAX_COMMAND_CHARS),
        metadata=_message("command must be a string"),
    )


@attrs.frozen
class ApprovalModeArguments:
    """`toolgate.setApprovalMode`: `[{"mode"?: "read-only" | "ask" | "auto-edits"}]`."""

    mode: str | None = attrs.field(
        default=None, validator=_at_most(40), metadata=_message("mode must be a string")
    )


@attrs.frozen
class ReportedDiagnostic:
    """Another language server's diagnostic, as the client reports it (LSP shape)."""

    range: Range
    message: str
    severity: int | None = None
    source: str | None = None


REPORT_NEEDS = 'toolgate.reportDiagnostics needs [{"uri", "diagnostics": []}]'


@attrs.frozen
class ReportDiagnosticsArguments:
    """`toolgate.reportDiagnostics`: `[{"uri", "diagnostics": [...]}]`."""

    uri: str = attrs.field(metadata=_message(REPORT_NEEDS))
    diagnostics: list[ReportedDiagnostic]


PLAN_NEEDS = 'toolgate.plan needs [{"task": "…"}]'


@attrs.frozen
class PlanArguments:
    """`toolgate.plan`: `[{"task": "…", "sessionId"?: "…", "context"?: {…}}]`.

    The session keeps the plan; `context` is `toolgate.ask`'s, for the task's `@` mentions.
    """

    task: str = _task(PLAN_NEEDS)
    session_id: str | None = _session_id()
    context: AskContext | None = None


RUN_PLAN_NEEDS = 'toolgate.runPlan needs [{"planId": "…"}]'


@attrs.frozen
class RunPlanArguments:
    """`toolgate.runPlan`: `[{"planId": "…", "sessionId"?: "…"}]`."""

    plan_id: str = attrs.field(
        default="", validator=_non_blank(RUN_PLAN_NEEDS), metadata=_message(RUN_PLAN_NEEDS)
    )
    session_id: str | None = _session_id()


DROP_PLAN_NEEDS = 'toolgate.dropPlan needs [{"planId": "…"}]'


@attrs.frozen
class DropPlanArguments:
    """`toolgate.dropPlan`: `[{"planId": "…", "sessionId"?: "…"}]`."""

    plan_id: str = attrs.field(
        default="", validator=_non_blank(DROP_PLAN_NEEDS), metadata=_message(DROP_PLAN_NEEDS)
    )
    session_id: str | None = _session_id()


RUN_WORKFLOW_NEEDS = 'toolgate.runWorkflow needs [{"name": "…", "inputs"?: {…}}]'


@attrs.frozen
class RunWorkflowArguments:
    """`toolgate.runWorkflow`: `[{"name": "…", "inputs"?: {…}}]`."""

    name: str = attrs.field(
        default="", validator=_non_blank(RUN_WORKFLOW_NEEDS), metadata=_message(RUN_WORKFLOW_NEEDS)
    )
    inputs: dict[str, Any] = attrs.field(
        factory=dict, metadata=_message("inputs must be an object")
    )


SCAFFOLD_NEEDS = 'toolgate.scaffoldTool needs [{"capability": "…"}]'


def _one_of(*allowed: str) -> Callable[[Any, attrs.Attribute[Any], str], None]:
    def check(_instance: Any, attribute: attrs.Attribute[Any], value: str) -> None:
        if value not in allowed:
            raise ArgumentError(f"{_camel(attribute.name)} must be one of {', '.join(allowed)}")

    return check


@attrs.frozen
class ScaffoldToolArguments:
    """`toolgate.scaffoldTool`: `[{"capability", "name"?, "inputs"?, "outputs"?, "language"?}]`."""

    capability: str = attrs.field(
        default="", validator=_non_blank(SCAFFOLD_NEEDS), metadata=_message(SCAFFOLD_NEEDS)
    )
    name: str | None = attrs.field(default=None, metadata=_message("name must be a string"))
    inputs: list[str] = attrs.field(
        factory=list, metadata=_message("inputs must be a list of strings")
    )
    outputs: list[str] = attrs.field(
        factory=list, metadata=_message("outputs must be a list of strings")
    )
    language: str = attrs.field(
        default="python",
        validator=_one_of("python", "shell"),
        metadata=_message("language must be python or shell"),
    )
    # The gap this fills, when the person scaffolds from a plan's card: the session keeps it.
    plan_id: str | None = attrs.field(
        default=None, validator=_at_most(200), metadata=_message("planId must be a string")
    )
    step_id: str | None = attrs.field(
        default=None, validator=_at_most(200), metadata=_message("stepId must be a string")
    )
    session_id: str | None = _session_id()


@attrs.frozen
class UndoRunArguments:
    """`toolgate.undoRun`: `[{"runId"?, "dryRun"?: bool, "force"?: bool, "sessionId"?}]` or `[]`."""

    run_id: str | None = attrs.field(
        default=None, validator=_at_most(200), metadata=_message("runId must be a string")
    )
    dry_run: bool = attrs.field(default=False, metadata=_message("dryRun must be true or false"))
    force: bool = attrs.field(default=False, metadata=_message("force must be true or false"))
    session_id: str | None = _session_id()


REWIND_NEEDS = 'toolgate.rewind needs [{"turn": N, "what"?: "both" | "code" | "conversation"}]'


def _a_turn(_instance: Any, _attribute: attrs.Attribute[Any], value: int) -> None:
    if value == -1:  # not given: the default
        raise ArgumentError(REWIND_NEEDS)
    if value < 0:
        raise ArgumentError("turn must not be negative (0 is before the first turn)")


@attrs.frozen
class RewindArguments:
    """`toolgate.rewind`: `[{"turn": N, "what"?: "both"|"code"|"conversation", "sessionId"?}]`."""

    turn: int = attrs.field(
        default=-1, validator=_a_turn, metadata=_message("turn must be an integer")
    )
    what: str = attrs.field(
        default="both",
        validator=_one_of("both", "code", "conversation"),
        metadata=_message("what must be both, code or conversation"),
    )
    session_id: str | None = _session_id()


@attrs.frozen
class UndoRewindArguments:
    """`toolgate.undoRewind`: `[{"rewindId"?, "sessionId"?}]` or `[]` (the latest rewind)."""

    rewind_id: str | None = attrs.field(
        default=None, validator=_at_most(200), metadata=_message("rewindId must be a string")
    )
    session_id: str | None = _session_id()


@attrs.frozen
class ReviewArguments:
    """`toolgate.review`: `[{"staged"?: bool, "proposalId"?: "…", "focus"?: ["…"]}]` or `[]`."""

    staged: bool = attrs.field(default=False, metadata=_message("staged must be true or false"))
    proposal_id: str | None = attrs.field(
        default=None, validator=_at_most(200), metadata=_message("proposalId must be a string")
    )
    focus: list[str] = attrs.field(
        factory=list, metadata=_message("focus must be a list of strings")
    )


SUGGESTION_NEEDS = (
    'toolgate.applyReviewSuggestion needs [{"uri", "line", "original", "suggestion"}]'
)


@attrs.frozen
class ReviewSuggestionArguments:
    """`toolgate.applyReviewSuggestion`: a review comment's suggestion, as its quick fix sends it.

    `line` is 0-based; `original` is the line's text when it was reviewed (the suggestion is
    refused when the line reads differently now); `suggestion` replaces that line.
    """

    uri: str = attrs.field(
        default="", validator=_non_blank(SUGGESTION_NEEDS), metadata=_message(SUGGESTION_NEEDS)
    )
    line: int = attrs.field(
        default=0, validator=_not_negative, metadata=_message("line must be an integer")
    )
    original: str = attrs.field(
        default="",
        validator=_at_most(MAX_TASK_CHARS),
        metadata=_message("original must be a string"),
    )
    suggestion: str = attrs.field(
        default="",
        validator=_at_most(MAX_TASK_CHARS),
        metadata=_message("suggestion must be a string"),
    )


REVIEW_LOOP_NEEDS = 'toolgate.reviewLoop needs [{"task": "…"}]'


@attrs.frozen
class ReviewLoopArguments:
    """`toolgate.reviewLoop`: `[{"task": "…", "sessionId"?: "…"}]`."""

    task: str = _task(REVIEW_LOOP_NEEDS)
    session_id: str | None = _session_id()


@attrs.frozen
class CheckEndpointArguments:
    """`toolgate.checkEndpoint`: `[]`, or `[{"baseUrl"?: "…", "model"?: "…"}]`."""

    base_url: str | None = attrs.field(
        default=None, validator=_at_most(2_000), metadata=_message("baseUrl must be a string")
    )
    model: str | None = attrs.field(
        default=None, validator=_at_most(500), metadata=_message("model must be a string")
    )


@positional
@attrs.frozen
class NoArguments:
    """Commands that take nothing (`toolgate.acceptAll`, `toolgate.listProposals`, …)."""


# -- reading ----------------------------------------------------------------------------------


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, (list, tuple)):
        return "an array"
    return "an object"


def _strict(kind: type[Any], name: str) -> Callable[[Any, Any], Any]:
    def structure(value: Any, _type: Any) -> Any:
        # bool is an int in Python, never in JSON.
        if isinstance(value, kind) and not (kind is not bool and isinstance(value, bool)):
            return value
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            return float(value)
        raise WrongType(f"must be {name}, not {_json_type(value)}")

    return structure


def _make_converter() -> cattrs.Converter:
    converter = cattrs.Converter()
    converter.register_structure_hook(str, _strict(str, "a string"))
    converter.register_structure_hook(int, _strict(int, "an integer"))
    converter.register_structure_hook(float, _strict(float, "a number"))
    converter.register_structure_hook(bool, _strict(bool, "a boolean"))

    def list_hook(cls: Any) -> Callable[[Any, Any], Any]:
        inner = converter.get_structure_hook(cls.__args__[0]) if cls.__args__ else None
        item_type = cls.__args__[0] if cls.__args__ else Any

        def structure(value: Any, _type: Any) -> list[Any]:
            if not isinstance(value, list):
                raise WrongType(f"must be an array, not {_json_type(value)}")
            if inner is None:
                return list(value)
            out = []
            for index, item in enumerate(value):
                try:
                    out.append(inner(item, item_type))
                except Exception as exc:
                    # The first bad item is reported: an array of millions of bad items must
                    # not become millions of exceptions.
                    exc.__notes__ = [IterableValidationNote(f"@ index {index}", index, item_type)]
                    raise IterableValidationError("invalid item", [exc], cls) from None
            return out

        return structure

    converter.register_structure_hook_factory(
        lambda cls: getattr(cls, "__origin__", None) is list, list_hook
    )

    def attrs_hook(cls: type[Any]) -> Callable[[Any, Any], Any]:
        fields = attrs.fields(cls)
        inner = make_dict_structure_fn(
            cls,
            converter,
            **{f.name: override(rename=_camel(f.name)) for f in fields},  # type: ignore[arg-type]  # cattrs types **kwargs narrowly
        )

        def structure(value: Any, _type: Any) -> Any:
            if value == []:
                # Lua has one empty table for `{}` and `[]`, and Neovim sends it as `[]`.
                value = {}
            if not isinstance(value, dict):
                raise WrongType(f"must be an object, not {_json_type(value)}")
            return inner(value, cls)

        return structure

    converter.register_structure_hook_factory(attrs.has, attrs_hook)
    return converter


_converter = _make_converter()


def read_arguments(cls: type[T], arguments: Sequence[Any] | None, command: str) -> T:
    """The command's arguments as `cls`; `ArgumentError` says what is wrong with them."""
    items = list(arguments or [])
    if getattr(cls, _POSITIONAL, False):
        names = [f.name for f in attrs.fields(cast(Any, cls))]
        if len(items) > len(names):
            raise ArgumentError(
                f"{command} takes no arguments"
                if not names
                else f"{command} takes at most {len(names)} argument{'s' * (len(names) > 1)}"
            )
        raw: Any = {_camel(name): value for name, value in zip(names, items, strict=False)}
    else:
        first = items[0] if items else None
        if len(items) > 1 or not (first is None or first == [] or isinstance(first, dict)):
            raise ArgumentError(f"{command} takes one object argument")
        raw = first or {}
    try:
        return _converter.structure(raw, cls)
    except ArgumentError:
        raise
    except Exception as exc:
        messages = list(dict.fromkeys(_messages(exc, "", cls)))
        raise ArgumentError("; ".join(messages) or f"invalid arguments for {command}") from None


def _field_note(exc: BaseException) -> AttributeValidationNote | None:
    for note in getattr(exc, "__notes__", ()):
        if isinstance(note, AttributeValidationNote):
            return note
    return None


def _messages(exc: BaseException, path: str, cls: Any) -> Iterator[str]:
    """One readable line per leaf error, with its path (`context.range.start.line`)."""
    if isinstance(exc, ClassValidationError):
        for inner in exc.exceptions:
            note = _field_note(inner)
            if note is None:
                yield from _messages(inner, path, exc.cl)
                continue
            field = attrs.fields_dict(exc.cl).get(note.name) if attrs.has(exc.cl) else None
            if field is not None and "invalid" in field.metadata:
                yield field.metadata["invalid"]
                continue
            sub = f"{path}.{_camel(note.name)}" if path else _camel(note.name)
            yield from _messages(inner, sub, note.type)
    elif isinstance(exc, IterableValidationError):
        for inner in exc.exceptions:
            index = next(
                (n.index for n in getattr(inner, "__notes__", ()) if hasattr(n, "index")), "?"
            )
            yield from _messages(inner, f"{path}[{index}]", None)
    elif isinstance(exc, ArgumentError):
        yield str(exc)
    elif isinstance(exc, KeyError):
        yield f"{path or 'the argument'} is missing"
    elif isinstance(exc, WrongType):
        yield f"{path or 'the argument'} {exc}"
    elif isinstance(exc, RecursionError):
        yield f"{path or 'the argument'} is nested too deeply"
    else:
        yield f"{path or 'the argument'} is invalid ({type(exc).__name__})"
