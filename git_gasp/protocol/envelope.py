"""The event envelope: strict parsing with line numbers, canonical serialization.

Canonical bytes (DESIGN §3): envelope keys in a fixed order, `actor` as
{"kind","id"}, `payload` key-sorted recursively, compact separators, raw UTF-8,
one event per line terminated by b"\\n".
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from git_gasp.base.errors import FormatError
from git_gasp.protocol.gcpause import gc_paused
from git_gasp.protocol.jsonstrict import JsonError, dumps_canonical, loads_strict, unwritable
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


@dataclass
class LineError:
    """A physical line that is not a valid envelope."""

    line: int
    message: str


@dataclass
class ParsedLog:
    """The result of parsing a whole log: events in line order plus bad lines."""

    events: list[Event] = field(default_factory=list)
    errors: list[LineError] = field(default_factory=list)
    line_count: int = 0
    terminated: bool = True  # False when the last line lacks its b"\\n"


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
