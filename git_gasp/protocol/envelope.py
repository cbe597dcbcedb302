"""The event envelope: strict parsing with line numbers, canonical serialization.

Canonical bytes (DESIGN §3): envelope keys in a fixed order, `actor` as
{"kind","id"}, `payload` key-sorted recursively, compact separators, raw UTF-8,
one event per line terminated by b"\\n".
"""

from __future__ import annotations

import json
import re
from typing import Any

from git_gasp.base.errors import FormatError
from git_gasp.base.record import Record
from git_gasp.protocol.gcpause import gc_paused
from git_gasp.protocol.jsonstrict import (
    MAX_DEPTH,
    JsonError,
    dumps_canonical,
    loads_strict,
    orjson_module,
    unwritable,
)
from git_gasp.protocol.vocab import payload_problem

ENVELOPE_KEYS = (
    "id",
    "schema_version",
    "ts_ms",
    "actor",
    "kind",
    "payload",
    "causation_id",
    "correlation_id",
)
_KEYSET = frozenset(ENVELOPE_KEYS)
_ACTOR_ORDER = ("kind", "id")
OPS_KIND = "state.ops_applied"
I64_MIN, I64_MAX = -(2**63), 2**63 - 1


class EnvelopeError(FormatError):
    """A line is not a valid event envelope; the message says why."""


class Event:
    """One parsed event envelope and the physical line it came from."""

    __slots__ = (
        "id",
        "schema_version",
        "ts_ms",
        "actor_kind",
        "actor_id",
        "kind",
        "payload",
        "causation_id",
        "correlation_id",
        "line",
    )

    def __init__(
        self,
        id: str,
        schema_version: int,
        ts_ms: int,
        actor_kind: str,
        actor_id: str,
        kind: str,
        payload: Any,
        causation_id: str | None,
        correlation_id: str | None,
        line: int = 0,
    ) -> None:
        self.id = id
        self.schema_version = schema_version
        self.ts_ms = ts_ms
        self.actor_kind = actor_kind
        self.actor_id = actor_id
        self.kind = kind
        self.payload = payload
        self.causation_id = causation_id
        self.correlation_id = correlation_id
        self.line = line

    def to_dict(self) -> dict:
        """The envelope as a JSON object in canonical key order."""
        return {
            "id": self.id,
            "schema_version": self.schema_version,
            "ts_ms": self.ts_ms,
            "actor": {"kind": self.actor_kind, "id": self.actor_id},
            "kind": self.kind,
            "payload": self.payload,
            "causation_id": self.causation_id,
            "correlation_id": self.correlation_id,
        }

    def __repr__(self) -> str:
        return f"Event({self.id!r}, {self.kind!r}, line={self.line})"


def _is_int(value: Any) -> bool:
    return type(value) is int


def _opt_str(value: Any) -> bool:
    return value is None or type(value) is str


def event_from_json(obj: Any, line: int = 0) -> Event:
    """Validate a parsed JSON value as an envelope (raises EnvelopeError)."""
    if type(obj) is not dict:
        raise EnvelopeError(f"expected a JSON object, found {_json_type(obj)}")
    if obj.keys() != _KEYSET:
        missing = [k for k in ENVELOPE_KEYS if k not in obj]
        unknown = sorted(k for k in obj if k not in _KEYSET)
        parts = []
        if missing:
            parts.append("missing field" + "s" * (len(missing) > 1) + " " + ", ".join(missing))
        if unknown:
            parts.append("unknown field" + "s" * (len(unknown) > 1) + " " + ", ".join(unknown))
        raise EnvelopeError("; ".join(parts))
    eid = obj["id"]
    if type(eid) is not str or not eid:
        raise EnvelopeError("`id` must be a non-empty string")
    sv = obj["schema_version"]
    if not _is_int(sv) or sv < 1 or sv > I64_MAX:
        raise EnvelopeError("`schema_version` must be an integer >= 1")
    ts = obj["ts_ms"]
    if not _is_int(ts) or not I64_MIN <= ts <= I64_MAX:
        raise EnvelopeError("`ts_ms` must be a 64-bit integer (unix epoch milliseconds)")
    actor = obj["actor"]
    if type(actor) is not dict or actor.keys() != {"kind", "id"}:
        raise EnvelopeError('`actor` must be an object with exactly "kind" and "id"')
    if type(actor["kind"]) is not str or type(actor["id"]) is not str:
        raise EnvelopeError("`actor.kind` and `actor.id` must be strings")
    kind = obj["kind"]
    if type(kind) is not str or not kind:
        raise EnvelopeError("`kind` must be a non-empty string")
    if not _opt_str(obj["causation_id"]):
        raise EnvelopeError("`causation_id` must be a string or null")
    if not _opt_str(obj["correlation_id"]):
        raise EnvelopeError("`correlation_id` must be a string or null")
    return Event(
        eid,
        sv,
        ts,
        actor["kind"],
        actor["id"],
        kind,
        obj["payload"],
        obj["causation_id"],
        obj["correlation_id"],
        line,
    )


def _json_type(value: Any) -> str:
    return {
        dict: "an object",
        list: "an array",
        str: "a string",
        bool: "a boolean",
        int: "a number",
        float: "a number",
        type(None): "null",
    }.get(type(value), type(value).__name__)


def parse_line(raw: bytes, line: int = 0) -> Event:
    """Parse one physical line (without its b"\\n") into an Event.

    Raises EnvelopeError with a reason; the caller adds the line number.
    """
    if raw.endswith(b"\r"):
        raise EnvelopeError("line ends with CRLF; events end with a bare LF")
    if not raw.strip():
        raise EnvelopeError("blank line")
    try:
        obj = loads_strict(raw)
    except JsonError as exc:
        raise EnvelopeError(str(exc)) from None
    return event_from_json(obj, line)


def parse_canonical(raw: bytes, line: int = 0) -> tuple[Event, bool]:
    """`parse_line(raw, line)` (raising what it raises), and whether `raw` is known to
    be byte for byte what `serialize` writes for the event, newline aside (False: not
    known; then ask ``rules.roundtrip_problem``).

    One orjson parse serves both. The fast case: orjson reads a valid envelope (the
    tests of `event_from_json`, in one expression) whose keys, and the actor's, are in
    canonical order, `raw` is orjson's compact encoding of it — exactly `loads_strict`'s
    fast path: no duplicate key, no non-canonical number, no CRLF, no BOM, not blank —
    and the nesting is within MAX_DEPTH (the envelope and its actor are two levels; the
    payload's brackets bound the rest). Then `raw` is canonical when the payload's
    bytes are key-sorted at every level and ``float_differs`` finds no number that
    serialize writes otherwise. The payload's bytes start after the first
    ``,"payload":``: before it come only the envelope's keys, two integers and strings,
    and in compact JSON a quote right after a comma is never inside a string (there it
    is escaped) and a closing quote is never followed by a letter. Anything else takes
    `parse_line` itself."""
    fast = orjson_module()  # None for a process's first lines: `parse_line` decides
    if fast is not None:
        _odumps, _SORT_KEYS = fast.dumps, fast.OPT_SORT_KEYS
        try:
            obj = fast.loads(raw)
        except Exception:  # noqa: BLE001 - not the fast case: parse_line says why
            obj = None
        if type(obj) is dict and tuple(obj) == ENVELOPE_KEYS:
            eid, sv, ts, actor, kind, payload, cause, corr = obj.values()
            if (type(eid) is str and eid and type(sv) is int and 1 <= sv <= I64_MAX
                    and type(ts) is int and I64_MIN <= ts <= I64_MAX
                    and type(actor) is dict and tuple(actor) == _ACTOR_ORDER
                    and type(actor["kind"]) is str and type(actor["id"]) is str
                    and type(kind) is str and kind
                    and (cause is None or type(cause) is str)
                    and (corr is None or type(corr) is str)):
                try:
                    body = _odumps(payload, option=_SORT_KEYS) if _odumps(obj) == raw else None
                except (TypeError, ValueError, RecursionError):
                    body = None
                # a bracket pair takes two bytes: a short payload needs no count
                if body is not None and (len(body) <= 2 * (MAX_DEPTH - 2) or body.count(b"[")
                                         + body.count(b"{") <= MAX_DEPTH - 2):
                    at = raw.find(b',"payload":') + 11
                    return (Event(eid, sv, ts, actor["kind"], actor["id"], kind, payload,
                                  cause, corr, line),
                            raw[at:at + len(body)] == body
                            and not ((b"." in body and b"0.0000" in body)  # float_differs
                                     or (b"e-" in body and _E_MINUS.search(body) is not None)))
    event = parse_line(raw, line)
    return event, canonical_layout(event, raw) and not float_differs(raw)


def canonical_layout(event: Event, raw: bytes) -> bool:
    """True when `raw` is the envelope of `event` in canonical key order, its payload
    key-sorted at every level, all as orjson writes compact JSON (``float_differs``
    says where that may differ from the json module's bytes)."""
    fast = orjson_module()
    if fast is None:
        return False  # "not known": the caller compares with `serialize`
    _odumps, _SORT_KEYS = fast.dumps, fast.OPT_SORT_KEYS
    try:
        head = _odumps({"id": event.id, "schema_version": event.schema_version,
                        "ts_ms": event.ts_ms,
                        "actor": {"kind": event.actor_kind, "id": event.actor_id},
                        "kind": event.kind})
        tail = _odumps({"causation_id": event.causation_id,
                        "correlation_id": event.correlation_id})
        body = _odumps(event.payload, option=_SORT_KEYS)
    except (TypeError, ValueError, RecursionError):  # orjson.JSONEncodeError: a TypeError
        return False
    h = len(head)
    return (len(raw) == h + 10 + len(body) + len(tail)
            and raw.startswith(head[:-1]) and raw.endswith(b"," + tail[1:])
            and raw[h - 1:h + 10] == b',"payload":' and raw[h + 10:h + 10 + len(body)] == body)


# An exponent "e-" of a number in compact JSON: its digits end the number, so a ",",
# "}", "]" or the end follows them (in a UUID a hex digit, "-" or '"' follows, mostly).
_E_MINUS = re.compile(rb"e-[0-9]+(?:[,}\]]|\Z)")


def float_differs(raw: bytes) -> bool:
    """Whether the compact JSON `raw` may hold a number that orjson and the json module
    write differently: one whose bytes hold ``e-`` or ``0.0000`` (the only such floats;
    tests/conformance/test_rules_canonical.py pins it). Never False when it does; a
    string that looks like one gives a false alarm (safe: "not known")."""
    return ((b"." in raw and b"0.0000" in raw)
            or (b"e-" in raw and _E_MINUS.search(raw) is not None))


def writable_problem(event: Event) -> str | None:
    """Why the writer must refuse `event`, naming the field; None when it may append it.

    Everything `serialize` refuses (a line check 1 could not read back), and a known
    payload field of the wrong type (`title` not a string, …)."""
    return _json_problem(event) or payload_problem(event.kind, event.payload)


def _json_problem(event: Event) -> str | None:
    try:
        event_from_json(event.to_dict())
    except EnvelopeError as exc:
        return str(exc)
    for name, value in (("id", event.id), ("actor.kind", event.actor_kind),
                        ("actor.id", event.actor_id), ("kind", event.kind),
                        ("causation_id", event.causation_id),
                        ("correlation_id", event.correlation_id)):
        problem = unwritable(value, name, 1)
        if problem:
            return problem
    return unwritable(event.payload, "payload", 2)


def serialize(event: Event) -> bytes:
    """Canonical bytes of one event, including the terminating b"\\n".

    Raises EnvelopeError naming the field when the line could not be read back
    strictly (a NaN, an integer beyond 64 bits, a lone surrogate, too deep, …).
    """
    problem = _json_problem(event)
    if problem:
        raise EnvelopeError(problem)
    head = json.dumps(
        {
            "id": event.id,
            "schema_version": event.schema_version,
            "ts_ms": event.ts_ms,
            "actor": {"kind": event.actor_kind, "id": event.actor_id},
            "kind": event.kind,
        },
        separators=(",", ":"),
        ensure_ascii=False,
    )
    tail = json.dumps(
        {"causation_id": event.causation_id, "correlation_id": event.correlation_id},
        separators=(",", ":"),
        ensure_ascii=False,
    )
    payload = dumps_canonical(event.payload)
    return head[:-1].encode() + b',"payload":' + payload + b"," + tail[1:].encode() + b"\n"


class LineError(Record):
    """A physical line that is not a valid envelope."""

    FIELDS = ("line", "message")

    def __init__(self, line: int, message: str) -> None:
        self.line, self.message = line, message


class ParsedLog(Record):
    """The result of parsing a whole log: events in line order plus bad lines;
    `terminated` is False when the last line lacks its b"\\n"."""

    FIELDS = ("events", "errors", "line_count", "terminated")

    def __init__(self, events: list[Event] | None = None,
                 errors: list[LineError] | None = None, line_count: int = 0,
                 terminated: bool = True) -> None:
        self.events = [] if events is None else events
        self.errors = [] if errors is None else errors
        self.line_count, self.terminated = line_count, terminated


def split_lines(data: bytes) -> tuple[list[bytes], bool]:
    """Split log bytes into physical lines (without b"\\n"); say if the last is terminated."""
    if not data:
        return [], True
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
        return lines, True
    return lines, False


def parse_log(data: bytes, rel: str = "state/events.jsonl") -> ParsedLog:
    """Parse every line of a log (`rel`, named in repair advice); never raises on bad content.

    The cyclic garbage collector is paused while parsing: the parsed events are
    acyclic, and rescanning the growing heap was most of the cost on large logs.
    """
    with gc_paused():
        return _parse_lines(data, rel)


def _parse_lines(data: bytes, rel: str) -> ParsedLog:
    lines, terminated = split_lines(data)
    out = ParsedLog(line_count=len(lines), terminated=terminated)
    append = out.events.append
    for number, raw in enumerate(lines, 1):
        try:
            append(parse_line(raw, number))
        except EnvelopeError as exc:
            out.errors.append(LineError(number, str(exc)))
        except RecursionError:
            out.errors.append(LineError(number, "JSON nested too deeply"))
    if not terminated and lines:
        last = len(lines)
        torn = bool(out.errors) and out.errors[-1].line == last
        message = unterminated_message(torn, len(data) - len(lines[-1]), len(data), rel)
        out.errors.append(LineError(last, message))
    return out


def unterminated_message(torn: bool, start: int, size: int, rel: str) -> str:
    """The error for a last line without its newline, starting at byte `start` of a log
    of `size` bytes: `torn` when it does not parse (never a whole event)."""
    if torn:
        return ("last line has no terminating newline and does not parse (a torn "
                f"write); if it is not committed yet, remove the partial line (bytes "
                f"{start}-{size - 1}); if it is, the history needs repair")
    # complete: only the newline is missing, and removing it loses an event
    return ("last line has no terminating newline but is a complete event; "
            f"append the newline: `printf '\\n' >> {rel}`")
