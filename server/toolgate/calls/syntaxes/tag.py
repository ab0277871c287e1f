"""The canonical tag: `<tool name="NAME" args>{JSON}</tool>`, the syntax Toolgate's prompt teaches.

    <tool name="read_file" args>{"path": "src/app.py"}</tool>

Also read: the name in single quotes or as `&quot;`, no `args` word, a nameless `<tool>` holding
`{"name": …, "arguments": …}`, and the arguments as the attribute's value (`args={…}` or
`args="{…}"`, with the closing quote or `>` left out, as small models write it). The JSON is
scanned string-aware, so `</tool>` inside a string does not close the call; a call opened
inside another is one error for both. Written by any model that follows the prompt.
"""

from __future__ import annotations

import re

from toolgate.calls.arguments import (
    EXPECTED,
    BadCall,
    is_json,
    load_json,
    name_and_arguments,
    strip_fence,
)
from toolgate.calls.cursor import (
    CLOSE_TAG,
    WINDOW,
    WS,
    Construct,
    Cursor,
    json_scanner,
    skip,
    waits_for,
)
from toolgate.calls.openings import AfterLt
from toolgate.calls.syntaxes.base import Syntax

NAME = "tag"
DESCRIPTION = '<tool name="NAME" args>{JSON}</tool> (also without args, single quotes, &quot;)'
_TAG_NAME = re.compile(
    r"""\bname\s*=\s*(?:"([^"]*)"|'([^']*)'|&quot;(.*?)&quot;|&\#34;(.*?)&\#34;|([^\s"'>]+))"""
)
_ARGS_ATTR = re.compile(
    r"""<tool\s+name\s*=\s*(?:"([^"<>]*)"|'([^'<>]*)')\s+args\s*=\s*(?=['"]?\{)"""
)
SCAN_TAG = json_scanner("</tool>", "<tool")
NESTED_TAG = re.compile(r"</tool>|<tool[\s:>]")
# `args="{…}`: what follows the object decides
CLOSE_TAG_OR_JSON = re.compile(r"[>}\])]")


def open_tag(p: Cursor) -> bool:
    """At `<tool` followed by a blank or `>`: the tag's opening, or prose."""
    buf, pos, n = p.buf, p.pos, len(p.buf)
    attr_args = _ARGS_ATTR.match(buf, pos)
    if attr_args is not None:
        # `<tool name="X" args={…}</tool>`: the arguments written as the attribute's value.
        # Decided before looking for `>`: such a tag may have none, and one cut off by the
        # end of the output must still be reported as a cut-off call.
        name = next(g for g in attr_args.groups()[:2] if g is not None)
        k = p.start(f'<tool name="{name}">' if name else "<tool>", st_tag)
        k.name, k.attr_args = name, True
        k.syntax, k.on_close, k.cand_re = NAME, resolve_tag, NESTED_TAG
        k.out_re, k.in_re = SCAN_TAG
        k.close, k.hold, k.depth_mode = "</tool>", 6, False
        end = attr_args.end()
        if buf[end] == '"':
            # `args="{…}"`: the quote is the attribute's, not a JSON string's. The object
            # is read to its end; the closing quote and `>` may then be missing.
            end += 1
            k.quote, k.depth_mode = '"', True
        p.take(end)
        k.open_len = p.acc_n
        return True
    gt = buf.find(">", pos, pos + WINDOW)
    if gt < 0:
        if n - pos < WINDOW and not p.eof:
            return False
        p.prose_to(pos + 1)
        return True
    if buf.find("<", pos + 1, gt) >= 0:
        p.prose_to(pos + 1)
        return True
    attrs = buf[pos + 5 : gt]
    nm = _TAG_NAME.search(attrs)
    name = next((g for g in nm.groups() if g is not None), "").strip() if nm else None
    if name is None:
        if attrs.strip() not in ("", "args", "/"):
            p.prose_to(pos + 1)
            return True
        # A tag without a name counts only when a {"name": …} object follows.
        ws = skip(WS, buf, gt + 1)
        if ws >= n and not p.eof:
            return False
        if ws >= n or buf[ws] != "{":
            p.prose_to(pos + 1)
            return True
    k = p.start(f'<tool name="{name}">' if name else "<tool>", st_tag)
    k.name = name
    k.syntax, k.on_close, k.cand_re = NAME, resolve_tag, NESTED_TAG
    k.out_re, k.in_re = SCAN_TAG
    k.close, k.hold, k.depth_mode = "</tool>", 6, False
    p.take(gt + 1)
    k.open_len = p.acc_n
    return True


@waits_for(lambda k: CLOSE_TAG_OR_JSON if k.depth_mode else CLOSE_TAG)
def st_tag(p: Cursor) -> bool:
    """The JSON body of a tag, up to its closing tag outside strings."""
    k = p.k
    ev = p.scan_json(k)
    if ev is None:
        return False
    kind, i, j = ev
    if kind == "cut":
        return True
    if kind == "end":  # the JSON object of `args="{…}` is complete
        k.value_end = p.acc_n
        p.state = st_attr_after
        return True
    if kind == "close":
        if not p.take(i):
            return True
        body_end = p.acc_n
        if not p.take(j):
            return True
        text = p.done()
        assert k.on_close is not None
        k.on_close(p, k, text[k.open_len : body_end], text, True)
        return True
    if kind == "nested":
        if not p.take(j):
            return True
        k.depth = 2
        p.state = st_nested
        return True
    text = p.done()
    if k.fallback >= 0:
        p.error(
            f"broken JSON in {k.what}: a string is never closed; "
            f"expected {EXPECTED} with valid JSON",
            text[: k.fallback],
        )
        p.pushback(text[k.fallback :], text[k.fallback - 1])
        return True
    p.error(
        f"unclosed {k.what}: the output ended before {k.close}; nothing was run; "
        f"expected {EXPECTED}",
        text,
    )
    return True


def st_attr_after(p: Cursor) -> bool:
    """After `args="{…}`: the attribute's closing quote and `>` are optional; `</tool>` is not.

    Small models drop the end of the attribute (`args="{}</tool>`); a person still reads
    the call. Anything else after the object is an error, and nothing is run.
    """
    buf, n, k = p.buf, len(p.buf), p.k
    end = p.pos
    while True:  # what was seen is kept in `k.after`, so no text is read twice
        end = skip(WS, buf, end)
        if end < n and buf[end] == '"' and not k.after:
            k.after = '"'
        elif end < n and buf[end] == ">" and ">" not in k.after:
            k.after += ">"
        else:
            break
        end += 1
    if not p.take(end):
        return True
    if buf.startswith("</tool>", end):
        if not p.take(end + 7):
            return True
        text = p.done()
        try:
            args = load_json(text[k.open_len : k.value_end], k.name or "")
        except BadCall as exc:
            p.error(str(exc), text)
            return True
        p.call(k.name or "", args, k.syntax, text)
        return True
    if not p.eof and (end >= n or "</tool>".startswith(buf[end:])):
        return False
    cause = "the output ended" if end >= n else "other text follows"
    p.error(
        f"unclosed {k.what}: {cause} after its arguments instead of </tool>; nothing was "
        f"run; expected {EXPECTED}",
        p.done(),
    )
    return True


@waits_for(CLOSE_TAG)
def st_nested(p: Cursor) -> bool:
    """Skip to the close matching a call opened inside another; the whole is one error."""
    k = p.k
    rx = k.cand_re
    assert rx is not None  # set by the opening: its own tag, open or closed
    buf, n = p.buf, len(p.buf)
    while True:
        pos = p.pos
        m = rx.search(buf, pos)
        if m is None:
            if not p.eof:
                return not p.take(max(pos, n - 11))
            if not p.take(n):
                return True
            break
        k.depth += -1 if m.group().startswith("</") else 1
        if not p.take(m.end()):
            return True
        if k.depth <= 0:
            break
    p.error(
        f"nested tag: a call opened inside {k.what} before it was closed; nothing was run; "
        f"write one call per tag: {EXPECTED}",
        p.done(),
    )
    return True


def resolve_tag(p: Cursor, k: Construct, body: str, raw: str, closed: bool) -> None:
    """The arguments of a closed tag; a nameless tag holds `{"name": …, "arguments": …}`."""
    text = strip_fence(body.strip())
    if k.attr_args:
        text = text.removesuffix(">").strip()
        if k.quote:
            text = text.removesuffix(k.quote).strip()
            if '\\"' in text and not is_json(text):
                # Quotes escaped for the attribute: `args="{\"path\": \"a.py\"}"`.
                text = text.replace('\\"', '"')
        elif len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
            text = text[1:-1]
    try:
        if k.name is None:
            name, args = name_and_arguments(load_json(text, "tool_call"), k.what)
        else:
            name = k.name
            args = load_json(text, name) if text else {}
            if (
                isinstance(args, dict)
                and args.get("name") == name
                and set(args) in ({"name", "arguments"}, {"name", "parameters"})
                and "name" not in p.schema_props(name)
            ):
                args = args.get("arguments", args.get("parameters"))
    except BadCall as exc:
        p.error(str(exc), raw)
        return
    p.call(name, args, k.syntax, raw)


class Tag(Syntax):
    """`<tool name="NAME" args>{JSON}</tool>`: it ends at a `</tool>` outside JSON strings."""

    name = NAME
    example = EXPECTED
    models = "any model that follows Toolgate's prompt"
    forms = ((NAME, DESCRIPTION),)
    openings = (AfterLt(r"tool(?=[>\s])", ("<tool",), lambda p, m: open_tag(p)),)
