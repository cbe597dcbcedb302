"""The OTLP/JSON trace shape both OpenTelemetry bridges share.

The OpenTelemetry Collector's file exporter writes one ``ExportTraceServiceRequest``
per line: ``{"resourceSpans": [{"resource": {...}, "scopeSpans": [{"scope": {...},
"spans": [...]}]}]}``, ids as lowercase hex (trace 32, span 16 digits), times as
decimal strings of Unix nanoseconds, 64-bit integers as strings, enums (span kind,
status code) as integers and attributes as ``{"key", "value": {"stringValue" | …}}``.
Here: encoding and decoding attribute values, deterministic ids, and reading such a
file back into flat `Span` records (`read_spans`).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from git_gasp.base.errors import FormatError

# span kinds and status codes as the OTLP proto numbers them (JSON carries the numbers)
KIND_INTERNAL = 1
KIND_CLIENT = 3
STATUS_UNSET = 0
STATUS_OK = 1
STATUS_ERROR = 2


def trace_id(seed: str) -> str:
    """32 hex digits derived from `seed` (the same seed, the same id)."""
    return hashlib.sha256(b"gasp-otel-trace:" + seed.encode()).hexdigest()[:32]


def span_id(seed: str) -> str:
    """16 hex digits derived from `seed`."""
    return hashlib.sha256(b"gasp-otel-span:" + seed.encode()).hexdigest()[:16]


def any_value(value: Any) -> dict:
    """A Python value as an OTLP ``AnyValue`` (a dict or other value becomes its JSON text)."""
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, str):
        return {"stringValue": value}
    if isinstance(value, (list, tuple)):
        return {"arrayValue": {"values": [any_value(v) for v in value]}}
    return {"stringValue": json.dumps(value, sort_keys=True, ensure_ascii=False)}


def attributes(pairs: dict[str, Any]) -> list[dict]:
    """OTLP key/value attributes, in the dict's order, leaving out None values."""
    return [{"key": k, "value": any_value(v)} for k, v in pairs.items() if v is not None]


def from_any_value(value: Any) -> Any:
    """An OTLP ``AnyValue`` (JSON form) as a Python value; None for an empty one."""
    if not isinstance(value, dict):
        raise ValueError("an attribute value is not an object")
    if "stringValue" in value:
        return str(value["stringValue"])
    if "boolValue" in value:
        return bool(value["boolValue"])
    if "intValue" in value:
        return int(value["intValue"])
    if "doubleValue" in value:
        return float(value["doubleValue"])
    if "arrayValue" in value:
        return [from_any_value(v) for v in (value["arrayValue"] or {}).get("values") or []]
    if "kvlistValue" in value:
        return decode_attributes((value["kvlistValue"] or {}).get("values") or [])
    if "bytesValue" in value:
        return str(value["bytesValue"])
    return None


def decode_attributes(items: Any) -> dict[str, Any]:
    """OTLP attributes as a dict (the last of repeated keys wins)."""
    if not isinstance(items, list):
        raise ValueError("attributes is not an array")
    out: dict[str, Any] = {}
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("key"), str):
            raise ValueError("an attribute has no string key")
        out[item["key"]] = from_any_value(item.get("value") or {})
    return out


@dataclass
class Span:
    """One span read from an OTLP/JSON file, with where it came from."""

    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    kind: int
    start_ns: int
    end_ns: int
    attrs: dict[str, Any]
    status_code: int = STATUS_UNSET
    status_message: str = ""
    events: list[dict] = field(default_factory=list)
    resource: dict[str, Any] = field(default_factory=dict)
    scope: str = ""
    line: int = 0
    order: int = 0  # position in the file

    @property
    def start_ms(self) -> int:
        return self.start_ns // 1_000_000

    @property
    def end_ms(self) -> int:
        return max(self.end_ns, self.start_ns) // 1_000_000


def _hex_id(value: Any, digits: int, what: str) -> str:
    """A hex id (or the base64 the generic protobuf JSON mapping writes) as lowercase hex."""
    if not isinstance(value, str) or not value:
        raise ValueError(f"{what} is missing")
    text = value.lower()
    if len(text) == digits and all(c in "0123456789abcdef" for c in text):
        return text
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raw = b""
    if len(raw) * 2 == digits:
        return raw.hex()
    raise ValueError(f"{what} {value!r} is not {digits} hex digits")


def _int(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ValueError(f"{what} is not an integer")
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"{what} {value!r} is not an integer") from None


def _time(value: Any, what: str) -> int:
    ns = _int(value, what)
    if not 0 <= ns < 2**63:
        raise ValueError(f"{what} {value!r} is out of range")
    return ns


_KIND_NAMES = {"SPAN_KIND_UNSPECIFIED": 0, "SPAN_KIND_INTERNAL": 1, "SPAN_KIND_SERVER": 2,
               "SPAN_KIND_CLIENT": 3, "SPAN_KIND_PRODUCER": 4, "SPAN_KIND_CONSUMER": 5}
_STATUS_NAMES = {"STATUS_CODE_UNSET": 0, "STATUS_CODE_OK": 1, "STATUS_CODE_ERROR": 2}


def _enum(value: Any, names: dict[str, int], what: str) -> int:
    if value is None:
        return 0
    if isinstance(value, str) and value in names:
        return names[value]
    return _int(value, what)


def _span(raw: Any, resource: dict, scope: str, line: int, order: int) -> Span:
    if not isinstance(raw, dict):
        raise ValueError("a span is not an object")
    parent = raw.get("parentSpanId") or None
    status = raw.get("status") or {}
    if not isinstance(status, dict):
        raise ValueError("status is not an object")
    events = raw.get("events") or []
    if not isinstance(events, list):
        raise ValueError("events is not an array")
    start = _time(raw.get("startTimeUnixNano", 0), "startTimeUnixNano")
    name = raw.get("name", "")
    if not isinstance(name, str):
        raise ValueError("a span name is not a string")
    return Span(
        trace_id=_hex_id(raw.get("traceId"), 32, "traceId"),
        span_id=_hex_id(raw.get("spanId"), 16, "spanId"),
        parent_id=_hex_id(parent, 16, "parentSpanId") if parent else None,
        name=name, kind=_enum(raw.get("kind"), _KIND_NAMES, "kind"),
        start_ns=start, end_ns=_time(raw.get("endTimeUnixNano", start), "endTimeUnixNano"),
        attrs=decode_attributes(raw.get("attributes") or []),
        status_code=_enum(status.get("code"), _STATUS_NAMES, "status.code"),
        status_message=str(status.get("message") or ""),
        events=[{"name": str(e.get("name") or ""),
                 "attrs": decode_attributes(e.get("attributes") or [])}
                for e in events if isinstance(e, dict)],
        resource=resource, scope=scope, line=line, order=order)


def spans_of_request(request: Any, line: int, first: int = 0) -> list[Span]:
    """The spans of one ``ExportTraceServiceRequest`` object; ValueError on a bad shape."""
    if not isinstance(request, dict) or not isinstance(request.get("resourceSpans", []), list):
        raise ValueError("not an ExportTraceServiceRequest (no resourceSpans array)")
    out: list[Span] = []
    for rs in request.get("resourceSpans", []):
        if not isinstance(rs, dict):
            raise ValueError("a resourceSpans entry is not an object")
        resource = decode_attributes(_object(rs.get("resource"), "resource").get("attributes")
                                     or [])
        scopes = rs.get("scopeSpans", rs.get("instrumentationLibrarySpans", []))
        if not isinstance(scopes, list):
            raise ValueError("scopeSpans is not an array")
        for ss in scopes:
            if not isinstance(ss, dict):
                raise ValueError("a scopeSpans entry is not an object")
            scope = _object(ss.get("scope", ss.get("instrumentationLibrary")), "scope")
            spans = ss.get("spans") or []
            if not isinstance(spans, list):
                raise ValueError("spans is not an array")
            for raw in spans:
                out.append(_span(raw, resource, str(scope.get("name") or ""), line,
                                 first + len(out)))
    return out


def _object(value: Any, what: str) -> dict:
    """`value` when it is an object, {} when absent; ValueError for any other shape."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ValueError(f"{what} is not an object")
    return value


# what a hostile request can make the decoders raise: a wrong shape, a number past what
# int() or float() takes (Infinity as an intValue: OverflowError), nesting past the stack
_BAD_REQUEST = (ValueError, TypeError, AttributeError, OverflowError)


def read_spans(data: bytes, name: str = "FILE") -> list[Span]:
    """Every span of an OTLP/JSON file: one request per line (the Collector's file
    exporter), or a ``.json`` file holding one request. FormatError naming the line."""
    text = data.decode("utf-8", "replace")
    if name.endswith(".json"):
        try:
            whole = json.loads(text)
        except (ValueError, RecursionError):
            whole = None
        if isinstance(whole, dict):
            try:
                return spans_of_request(whole, 1)
            except _BAD_REQUEST as exc:
                raise FormatError(f"{name}: {exc}") from None
            except RecursionError:
                raise FormatError(f"{name}: nested too deeply") from None
    spans: list[Span] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            spans += spans_of_request(json.loads(line), number, len(spans))
        except json.JSONDecodeError as exc:
            raise FormatError(f"{name}:{number}: not JSON ({exc.msg})") from None
        except RecursionError:
            raise FormatError(f"{name}:{number}: nested too deeply") from None
        except _BAD_REQUEST as exc:
            raise FormatError(f"{name}:{number}: {exc}") from None
    return spans
