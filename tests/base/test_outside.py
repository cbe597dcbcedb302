"""TOML from outside fails as one `FormatError` line, however the parser fails; JSON an
agent wrote is read whatever its bytes, as text the log can hold."""

from __future__ import annotations

import pytest

from git_gasp.base.errors import FormatError
from git_gasp.base.outside import load_json, valid_text
from git_gasp.base.toml import load_toml

HUGE = "9" * 5000


@pytest.mark.parametrize("text", ["a = " + HUGE, "a = " + "[" * 5000 + "]" * 5000,
                                  "a = 1\na = 2", "\udcff"])
def test_toml_from_outside_fails_as_one_format_error(text):
    with pytest.raises(FormatError, match="^config does not parse: "):
        load_toml(text.encode("utf-8", "surrogateescape"), "config")


@pytest.mark.parametrize(("data", "value"), [
    # Node's JSON.stringify of a string cut mid-emoji: a lone high surrogate escape
    (b'{"m": "cut \\ud83d"}', {"m": "cut \ufffd"}),
    (b'{"m": "\\ude00 and a pair \\ud83d\\ude00"}', {"m": "\ufffd and a pair \U0001f600"}),
    (b'{"\\udc00k": 1}', {"\ufffdk": 1}),  # keys too
    (b'{"m": "bad \xff\xfe\xc3 bytes"}', {"m": "bad \ufffd\ufffd\ufffd bytes"}),
    (b'{"m": "\xed\xa0\xbd"}', {"m": "\ufffd\ufffd\ufffd"}),  # an encoded surrogate
    (b'\xef\xbb\xbf{"m": "bom"}\r\n', {"m": "bom"}),
    ('{"m": "sixteen \u00e9"}'.encode("utf-16"), {"m": "sixteen \u00e9"}),
    (b'{"m": "raw\ttab\r\nline"}', {"m": "raw\ttab\r\nline"}),
    (b'[NaN, Infinity, -Infinity, 1e999, -1e400, 1.5]', [None, None, None, None, None, 1.5]),
    (b"[18446744073709551615, -9223372036854775808, 18446744073709551616]",
     [2**64 - 1, -(2**63), float(2**64)]),
    (b"[" + HUGE.encode() + b"]", [None]),
])
def test_json_from_an_agent_reads_as_valid_text(data, value):
    got = load_json(data, "payload")
    assert got == value
    import json

    json.dumps(got, ensure_ascii=False, allow_nan=False).encode("utf-8")  # the log can hold it


@pytest.mark.parametrize("data", [b"", b"not json", b"[" * 5000, b'{"a": 1', b"\xff\xfe"])
def test_what_is_not_json_is_one_format_error(data):
    with pytest.raises(FormatError, match="^hook payload is not JSON: "):
        load_json(data, "hook payload")


def test_valid_text_keeps_valid_text_as_it_is():
    text = "caf\u00e9 \U0001f600"
    assert valid_text(text) is text and valid_text("\ud83d\ud83d") == "\ufffd\ufffd"
