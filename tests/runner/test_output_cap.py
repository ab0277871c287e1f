import re

from hypothesis import given
from hypothesis import strategies as st

from toolgate.runner.output import TAIL_SHARE, OutputCapture, cap_output

MARKER = re.compile(r"\n… \[(\d+) bytes omitted\] …\n")


def test_short_text_is_kept_whole():
    assert cap_output("hello\nworld\n", 100) == ("hello\nworld\n", False, 12)


def test_long_text_keeps_head_and_a_generous_tail():
    lines = [f"line {i:05d}" for i in range(10_000)]
    text = "\n".join(lines) + "\n"
    capped, truncated, size = cap_output(text, 2_000)

    assert truncated
    assert size == len(text.encode())
    assert len(capped.encode()) <= 2_000
    head, tail = MARKER.split(capped)[0], MARKER.split(capped)[2]
    omitted = int(MARKER.search(capped).group(1))
    assert len(head.encode()) + len(tail.encode()) + omitted == size
    assert capped.startswith("line 00000\n")
    assert capped.endswith("line 09999\n")
    # The summary of a test run is at the end: the tail gets the bigger share.
    assert len(tail.encode()) >= 0.6 * (2_000 - len(MARKER.search(capped).group(0).encode()))
    assert len(tail) > len(head)
    # Cuts land on line starts when a line break is near.
    assert head.endswith("\n")
    assert tail.startswith("line ")


def test_multibyte_characters_are_never_split():
    text = "é" * 5_000 + "€" * 5_000 + "😀" * 5_000
    for limit in range(60, 200):
        capped, truncated, size = cap_output(text, limit)
        assert truncated
        assert "\ufffd" not in capped
        assert len(capped.encode()) <= limit


def test_budget_too_small_for_the_marker_keeps_only_the_tail():
    capped, truncated, _ = cap_output("a" * 50 + "END", 10)
    assert truncated
    assert capped.endswith("END")
    assert len(capped.encode()) <= 10


@given(st.text(min_size=0, max_size=3_000), st.integers(min_value=40, max_value=2_500))
def test_cap_is_bounded_and_lossless_when_it_fits(text, limit):
    capped, truncated, size = cap_output(text, limit)
    assert size == len(text.encode("utf-8", errors="replace"))
    if size <= limit:
        assert (capped, truncated) == (text, False)
    else:
        assert truncated
        assert len(capped.encode()) <= limit
        match = MARKER.search(capped)
        assert match is not None
        kept = len(capped.encode()) - len(match.group(0).encode())
        assert kept + int(match.group(1)) == size


@given(
    st.text(max_size=4_000),
    st.integers(min_value=40, max_value=3_000),
    st.lists(st.integers(min_value=1, max_value=700), min_size=1, max_size=20),
)
def test_streaming_capture_matches_cap_output(text, limit, sizes):
    data = text.encode()
    capture = OutputCapture(limit)
    position, index = 0, 0
    while position < len(data):
        step = sizes[index % len(sizes)]
        capture.feed(data[position : position + step])
        position += step
        index += 1
    assert capture.total == len(data)
    assert capture.text() == cap_output(text, limit)[0]
    assert capture.truncated == (len(data) > limit)


def test_streaming_capture_holds_bounded_memory():
    capture = OutputCapture(1_000)
    for _ in range(10_000):
        capture.feed(b"x" * 1_000)
    assert capture.total == 10_000_000
    assert len(capture._head) <= 1_000 and len(capture._tail) <= 1_000
    assert len(capture.text().encode()) <= 1_000


def test_tail_share_is_generous():
    assert TAIL_SHARE >= 0.6
