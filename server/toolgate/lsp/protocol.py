"""The JSON-RPC rules pygls leaves open: every request gets an answer, whatever it holds.

pygls drops a request whose params fail to structure (it raises out of the JSON decoder, where
the id is lost), answers nothing after `shutdown`, takes a second `initialize`, and cancels
in-flight requests while iterating the dict their callbacks change. `ToolgateProtocol` reads
each framed message itself (`receive`), turns anything it cannot handle into a `Refusal`
answered with the right error (-32602 for params, -32600 for a malformed request, -32601 for
an unknown method, -32002 before `initialize`), and reads command arguments strictly
(`toolgate.lsp.arguments`).
"""

from __future__ import annotations

import functools
import inspect
import itertools
import json
import logging
import re
import typing
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass
from typing import Any

import attrs
import cattrs
from cattrs.cols import is_sequence, list_structure_factory
from lsprotocol import types
from pygls.exceptions import (
    JsonRpcException,
    JsonRpcInvalidParams,
    JsonRpcInvalidRequest,
    JsonRpcParseError,
    JsonRpcServerNotInitialized,
)
from pygls.protocol import LanguageServerProtocol, default_converter, lsp_method
from pygls.protocol.json_rpc import (
    JsonRPCNotification,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
    MsgId,
    RPCNotification,
    RPCRequest,
)

from toolgate.lsp.arguments import ArgumentError, NoArguments, read_arguments
from toolgate.lsp.framing import Frame

log = logging.getLogger(__name__)

# LSP messages nest a dozen levels; settings and `data` fields a few more.
MAX_DEPTH = 100
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_STEP = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}
# What makes a JSON object a message at all: a request or notification, or a response.
_MESSAGE_FIELDS = frozenset({"method", "id", "result", "error"})
_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{}:,]|-?\d+|[^\s\[\]{}:,"]+', re.DOTALL)


def toolgate_converter() -> cattrs.Converter:
    """The lsprotocol converter, made to stop at the first error and to want arrays as arrays.

    By default cattrs reads a string where an array is due as an array of its characters, and
    collects every error of every item: a 7 MB string in `context.diagnostics` became seven
    million failed diagnostics and 1.7 GB of exceptions.
    """
    converter: cattrs.Converter = default_converter()  # type: ignore[no-untyped-call]  # lsprotocol leaves it unannotated
    # Read by the structure functions cattrs generates on first use: set before any.
    converter.detailed_validation = False

    def is_array(cls: Any) -> bool:
        return is_sequence(cls) and typing.get_origin(cls) is not tuple

    def array_hook(cls: Any) -> Callable[[Any, Any], Any]:
        inner = list_structure_factory(cls, converter)

        def structure(value: Any, _cls: Any) -> Any:
            if not isinstance(value, list):
                raise TypeError(f"expected an array, not {type(value).__name__}")
            return inner(value, cls)

        return structure

    converter.register_structure_hook_factory(is_array, array_hook)
    return converter


@dataclass
class Refusal:
    """A message that cannot be handled; a request among them is answered with `error`."""

    msg_id: MsgId | None
    is_request: bool
    error: JsonRpcException
    method: str | None = None


def nesting_depth(body: bytes) -> int:
    """How deep the arrays and objects of a JSON text nest, without parsing it."""
    if body.count(b"[") + body.count(b"{") <= MAX_DEPTH:
        return 0  # cannot be deeper than it has brackets: skip the scan
    brackets = _STRING.sub(b"", body).translate(None, _NOT_BRACKETS)
    return max(itertools.accumulate(_STEP[b] for b in brackets), default=0)


def top_level_fields(head: bytes) -> dict[str, Any]:
    """The scalar fields (`id`, `method`, …) of the outer object in the first bytes of a text."""
    fields: dict[str, Any] = {}
    depth = 0
    key: bytes | None = None
    expect_value = False
    for match in _TOKEN.finditer(head):
        token = match.group()
        if token in (b"[", b"{"):
            depth += 1
            expect_value = False
        elif token in (b"]", b"}"):
            depth -= 1
            if depth <= 0:
                break
        elif depth == 1 and token == b":":
            expect_value = key is not None
        elif depth == 1 and token == b",":
            key, expect_value = None, False
        elif depth == 1 and expect_value and key is not None:
            try:
                fields[json.loads(key)] = json.loads(token)
            except ValueError:
                pass
            key, expect_value = None, False
        elif depth == 1 and token.startswith(b'"'):
            key = token
    return fields


def _valid_id(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _describe(exc: BaseException) -> str:
    """A short account of why lsprotocol could not read params (cattrs nests its errors)."""
    try:
        from cattrs import transform_error

        lines = transform_error(exc, path="params")
    except Exception:
        lines = []
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    return "; ".join(lines[:5]) or type(exc).__name__


class ToolgateProtocol(LanguageServerProtocol):
    """pygls' language-server protocol, answering every request it is sent."""

    def __init__(self, server: Any, converter: Any) -> None:
        super().__init__(server, converter)
        self.initialize_seen = False

    # -- receiving ------------------------------------------------------------------------------

    def receive(self, frame: Frame) -> None:
        """Handle one framed message, refusing what is too large, too deep or not JSON-RPC."""
        if frame.body is None:
            fields = top_level_fields(frame.head)
            self._refuse_raw(
                fields,
                JsonRpcInvalidParams(
                    f"the message is {frame.length} bytes, over the limit of "
                    f"{self._server.max_message_bytes} bytes"  # type: ignore[attr-defined]  # our server class
                ),
            )
            return
        body = frame.body
        if nesting_depth(body) > MAX_DEPTH:
            self._refuse_raw(
                top_level_fields(body[:65536]),
                JsonRpcInvalidParams(f"the message nests deeper than {MAX_DEPTH} levels"),
            )
            return
        try:
            data = json.loads(body)
        except RecursionError:
            self._refuse_raw(top_level_fields(body[:65536]), JsonRpcInvalidParams("too deep"))
            return
        except ValueError as exc:
            log.warning("a message that is not JSON was refused: %s", exc)
            error = JsonRpcParseError(f"not JSON: {exc}").to_response_error()
            self._send_response(None, error=error)
            return
        if not isinstance(data, dict):
            self._send_response(
                None,
                error=JsonRpcInvalidRequest("a message must be a JSON object").to_response_error(),
            )
            return
        if not _MESSAGE_FIELDS & data.keys():
            # Neither a request, a notification nor a response: nothing to hand on, nobody to
            # answer but with a null id.
            self._send_response(
                None,
                error=JsonRpcInvalidRequest(
                    "a message needs a method (a request or a notification) or an id (a response)"
                ).to_response_error(),
            )
            return
        if data.get("jsonrpc") != "2.0":
            msg_id = data.get("id")
            self._refuse(
                Refusal(
                    msg_id if _valid_id(msg_id) else None,
                    "id" in data,
                    JsonRpcInvalidRequest('not a JSON-RPC 2.0 message ("jsonrpc": "2.0")'),
                )
            )
            return
        self.handle_message(self.structure_message(data))

    def _refuse_raw(self, fields: dict[str, Any], error: JsonRpcException) -> None:
        msg_id = fields.get("id")
        method = fields.get("method")
        is_request = _valid_id(msg_id) and isinstance(method, str)
        self._refuse(Refusal(msg_id if is_request else None, is_request, error, method))

    def structure_message(self, data: dict[str, Any]) -> Any:
        """The message as lsprotocol's type for its method, or a `Refusal` saying why not."""
        if "jsonrpc" not in data:
            return data  # an inner object, when pygls' reader calls this for each one
        has_id = "id" in data
        msg_id = data.get("id")
        method = data.get("method")
        is_request = has_id and "method" in data
        if has_id and not _valid_id(msg_id):
            return Refusal(None, True, JsonRpcInvalidRequest("the id must be a string or number"))
        if "method" in data:
            if not isinstance(method, str):
                return Refusal(msg_id, has_id, JsonRpcInvalidRequest("method must be a string"))
            return self._structure_call(data, method, msg_id if is_request else None)
        return self._structure_response(data, msg_id)

    def _handled(self, method: str) -> bool:
        return (
            method == types.CANCEL_REQUEST
            or method in self.fm.builtin_features
            or method in self.fm.features
        )

    def _structure_call(self, data: dict[str, Any], method: str, msg_id: MsgId | None) -> Any:
        is_request = msg_id is not None
        if not self._handled(method):
            # No handler: pygls answers a request -32601 and ignores a notification; params
            # are never read.
            if msg_id is not None:
                return JsonRPCRequestMessage(id=msg_id, method=method, jsonrpc="2.0", params=None)
            return JsonRPCNotification(method=method, jsonrpc="2.0", params=None)
        message_type = self.get_message_type(method)
        if message_type is not None:
            takes_id = "id" in attrs.fields_dict(message_type)
            if takes_id != is_request:
                kind = "a request" if takes_id else "a notification"
                return Refusal(msg_id, is_request, JsonRpcInvalidRequest(f"{method} is {kind}"))
        try:
            return self._converter.structure(
                data, message_type or (JsonRPCRequestMessage if is_request else JsonRPCNotification)
            )
        except Exception as exc:
            return Refusal(
                msg_id,
                is_request,
                JsonRpcInvalidParams(f"invalid params for {method}: {_describe(exc)}"),
                method,
            )

    def _structure_response(self, data: dict[str, Any], msg_id: Any) -> Any:
        try:
            if "error" in data:
                return self._converter.structure(data, types.ResponseErrorMessage)
            response_type = self._result_types.pop(msg_id, None) or JsonRPCResponseMessage
            return self._converter.structure(data, response_type)
        except Exception as exc:
            # The server waits for this answer: fail the wait rather than leave it hanging.
            future = self._request_futures.pop(msg_id, None)
            if future is not None and not future.done():
                future.set_exception(
                    JsonRpcInvalidParams(f"the client's answer is malformed: {_describe(exc)}")
                )
            log.warning("a malformed response to %r was refused", msg_id)
            return None

    # -- dispatching ----------------------------------------------------------------------------

    def handle_message(self, message: Any) -> None:
        """Answer what pygls would drop; hand the rest to pygls."""
        if message is None:
            return
        if isinstance(message, Refusal):
            self._refuse(message)
            return
        method = getattr(message, "method", None)
        if isinstance(message, RPCRequest):
            if self._shutdown and method != types.EXIT:
                self._refuse(
                    Refusal(message.id, True, JsonRpcInvalidRequest("the server is shutting down"))
                )
                return
            if not self.initialize_seen and method != types.INITIALIZE:
                self._refuse(
                    Refusal(
                        message.id,
                        True,
                        JsonRpcServerNotInitialized("the server is not initialized yet"),
                    )
                )
                return
        elif isinstance(message, RPCNotification):
            if not self.initialize_seen and method != types.EXIT:
                log.warning("notification %r before initialize was ignored", method)
                return
        super().handle_message(message)

    def _refuse(self, refusal: Refusal) -> None:
        if refusal.is_request and refusal.msg_id is not None:
            log.warning("refused request %r: %s", refusal.msg_id, refusal.error.message)
            self._send_response(refusal.msg_id, error=refusal.error.to_response_error())
        elif refusal.is_request:
            self._send_response(None, error=refusal.error.to_response_error())
        else:
            log.warning("refused notification %r: %s", refusal.method, refusal.error.message)

    def _send_response(
        self,
        msg_id: MsgId | None,
        result: Any | None = None,
        error: types.ResponseError | None = None,
    ) -> None:
        """As pygls does; an error for a request whose id could not be read says `"id": null`.

        lsprotocol's converter leaves out every field that is None, and a response without an
        id is no JSON-RPC 2.0 response (section 5): strict clients drop it or hang up.
        """
        if msg_id is not None:
            super()._send_response(msg_id, result, error)
        elif error is not None:  # a result without its request's id would answer nothing
            self._send_data(
                {"jsonrpc": "2.0", "id": None, "error": self._converter.unstructure(error)}
            )

    def _execute_handler(
        self,
        msg_id: MsgId,
        handler: Any,
        callback: Any,
        args: tuple[Any, ...] | None = None,
        kwargs: dict[str, Any] | None = None,
    ) -> None:
        """As pygls does, and a request's cancellation reaches the coroutine doing its work.

        pygls runs each step a generator handler yields (a command's coroutine, for one) as a
        task of its own, under a fresh id it never removes, and `$/cancelRequest` or `shutdown`
        cancelled only the request's own future: the client was told "cancelled" while the
        work went on (a review kept waiting for the model, then published its comments).
        """
        super()._execute_handler(msg_id, handler, callback, args, kwargs)
        request = getattr(callback, "keywords", {}).get("result_future")
        if request is None:
            return  # a request or notification itself, not a step of a generator handler
        step = self._request_futures.pop(msg_id, None)
        if step is not None and not step.done():
            request.add_done_callback(lambda done: step.cancel() if done.cancelled() else None)

    def _send_handler_result(self, future: Any, *, msg_id: MsgId) -> None:
        """As pygls does, but an error the client caused is logged without a traceback."""
        if not future.cancelled() and isinstance(future.exception(), JsonRpcException):
            self._request_futures.pop(msg_id, None)
            error = future.exception()
            log.warning("request %r answered %s: %s", msg_id, error.code, error.message)
            self._send_response(msg_id, error=error.to_response_error())
            return
        super()._send_handler_result(future, msg_id=msg_id)

    # -- lifecycle ------------------------------------------------------------------------------

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(
        self, params: types.InitializeParams
    ) -> Generator[Any, Any, types.InitializeResult]:
        """Initialize once: the workspace root is fixed for the server's lifetime."""
        if self.initialize_seen:
            raise JsonRpcInvalidRequest(
                "the server is already initialized; its workspace is fixed for its lifetime"
            )
        self.initialize_seen = True
        return (yield from super().lsp_initialize(params))

    @lsp_method(types.SHUTDOWN)
    def lsp_shutdown(self, *args: Any) -> Generator[Any, Any, None]:
        """Stop the run, cancel what is in flight (each is answered), refuse what follows."""
        if (user_handler := self.fm.features.get(types.SHUTDOWN)) is not None:
            yield user_handler, args, None
        current_id = self.msg_id
        # Cancelling a future runs callbacks that remove it from the dict: iterate a copy.
        for msg_id, future in list(self._request_futures.items()):
            if msg_id != current_id and not future.done():
                future.cancel()
        self._shutdown = True
        return None

    # -- commands -------------------------------------------------------------------------------

    @lsp_method(types.WORKSPACE_EXECUTE_COMMAND)
    def lsp_workspace__execute_command(
        self, params: types.ExecuteCommandParams
    ) -> Generator[Any, Any, Any]:
        """Run a command with its arguments read into the class its handler names."""
        handler = self.fm.commands.get(params.command)
        if handler is None:
            raise JsonRpcInvalidParams(f"Command name {params.command!r} is not defined")
        try:
            args = command_arguments(handler, params.arguments, params.command)
        except ArgumentError as exc:
            raise JsonRpcInvalidParams(str(exc)) from None
        result = yield handler, args, None
        return result


@functools.cache
def _arguments_class(func: Callable[..., Any]) -> type[Any] | None:
    parameters = list(inspect.signature(func).parameters.values())[1:]  # after the server
    if not parameters:
        return None
    return typing.get_type_hints(func)[parameters[0].name]  # type: ignore[no-any-return]  # hints are Any


def command_arguments(
    handler: Callable[..., Any], arguments: Sequence[Any] | None, command: str
) -> tuple[Any, ...]:
    """The positional arguments for a command handler: none, or its arguments' object."""
    cls = _arguments_class(getattr(handler, "func", handler))
    if cls is None:
        read_arguments(NoArguments, arguments, command)
        return ()
    return (read_arguments(cls, arguments, command),)
