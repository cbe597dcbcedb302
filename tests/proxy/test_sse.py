"""The server-sent events reader: events whatever the chunking, in bounded memory."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from git_gasp.proxy.sse import SSEParser

STREAM = (b": ping\r\n\r\nevent: a\r\ndata: {\"x\": 1}\r\n\r\n"
          b"data: line one\ndata: line two\n\nevent: b\rdata:[DONE]\r\r")
EVENTS = [("a", '{"x": 1}'), (None, "line one\nline two"), ("b", "[DONE]")]


def test_events_of_a_whole_stream():
    p = SSEParser()
    assert p.feed(STREAM) + p.close() == EVENTS


@given(st.lists(st.integers(min_value=0, max_value=len(STREAM)), max_size=12))
def test_any_chunking_gives_the_same_events(cuts):
    p, out, last = SSEParser(), [], 0
    for cut in sorted(cuts) + [len(STREAM)]:
        out += p.feed(STREAM[last:cut])
        last = cut
    assert out + p.close() == EVENTS


def test_an_unterminated_last_event_is_read_at_close():
    p = SSEParser()
    assert p.feed(b"data: tail") == []
    assert p.close() == [(None, "tail")]


def test_a_line_past_the_bound_is_dropped_and_counted():
    p = SSEParser(line_max=10)
    out = p.feed(b"data: " + b"z" * 50)
    out += p.feed(b"z" * 50 + b"\n\ndata: ok\n\n")
    assert out == [(None, "ok")] and p.overflowed == 1
