"""OTLP/JSON files from outside: hostile atoms in every hole of a request give one
FormatError naming the file, never another exception (an internal error, exit 3)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from git_gasp.base.errors import FormatError
from git_gasp.otel.otlp import read_spans

pytestmark = pytest.mark.slow  # hypothesis

ATOMS = ["Infinity", "-Infinity", "NaN", "9" * 5000, "1e999", "[]", "{}", "null", "true",
         '"x"', '"' + "a" * 32 + '"', '"' + "b" * 16 + '"', "[" * 3000 + "]" * 3000, "-1",
         '{"intValue": Infinity}', '{"doubleValue": "x"}', '{"arrayValue": 5}',
         '{"kvlistValue": {"values": [1]}}', '[{"key": 1}]', '"\\ud800"', "0"]
atom = st.one_of(st.sampled_from(ATOMS), st.integers().map(str),
                 st.text(max_size=20).map(lambda s: '"' + s.replace("\\", "").replace('"', "")
                                          + '"'))
TEMPLATE = ('{{"resourceSpans":[{{"resource":{0},"scopeSpans":[{{"scope":{1},"spans":[{{'
            '"traceId":{2},"spanId":{3},"parentSpanId":{4},"name":{5},'
            '"startTimeUnixNano":{6},"endTimeUnixNano":{7},"kind":{8},"status":{9},'
            '"attributes":[{{"key":"gen_ai.operation.name","value":{10}}}]}}]}}]}}]}}')


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(atom, min_size=11, max_size=11), st.sampled_from(["t.json", "t.jsonl"]))
def test_any_request_reads_or_is_one_format_error(holes, name):
    data = TEMPLATE.format(*holes).encode("utf-8", "surrogatepass")
    try:
        read_spans(data, name)
    except FormatError as exc:
        assert str(exc).startswith(name)
    except Exception as exc:  # noqa: BLE001 - the point of the test
        pytest.fail(f"read_spans raised {type(exc).__name__}: {str(exc)[:200]}")
