"""Reading only a file's conventions gives what decoding the whole file would."""

from __future__ import annotations

import codecs

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolgate.workspace.files import BinaryFileError, conventions_of, decode_text

PIECES = st.sampled_from(["a", "é", "日", "\n", "\r\n", "\r", "\t", " ", "x\n", "\x00", "€"])
ENCODINGS = st.sampled_from(["utf-8", "utf-8-sig", "latin-1", "utf-16", "utf-32", "cp1252"])


def _expected(raw: bytes) -> tuple[str, str, bool] | None:
    try:
        decoded = decode_text(raw)
    except BinaryFileError:
        return None
    return decoded.encoding, decoded.newline, decoded.final_newline


def _got(raw: bytes) -> tuple[str, str, bool] | None:
    try:
        got = conventions_of(raw)
    except BinaryFileError:
        return None
    assert got.text == ""
    return got.encoding, got.newline, got.final_newline


@settings(max_examples=400, deadline=None)
@given(st.lists(PIECES, max_size=40), ENCODINGS)
def test_conventions_match_a_full_decode(pieces: list[str], encoding: str) -> None:
    text = "".join(pieces)
    try:
        raw = text.encode(encoding)
    except UnicodeEncodeError:
        raw = text.encode("utf-8")
    assert _got(raw) == _expected(raw)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200))
def test_conventions_match_on_arbitrary_bytes(raw: bytes) -> None:
    assert _got(raw) == _expected(raw)


@pytest.mark.parametrize(
    "raw",
    [b"", codecs.BOM_UTF8 + b"a\r\nb\r\n", b"a\r\nb\nc\r\n", b"caf\xe9\n", b"\x00\x01"],
)
def test_conventions_match_on_chosen_files(raw: bytes) -> None:
    assert _got(raw) == _expected(raw)
