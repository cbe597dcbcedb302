"""A `LogState`'s findings in the order a whole-log pass reports them, and its saved
form (the records ``logstate_cache`` stores beside the keys and offsets)."""

from __future__ import annotations

import marshal

from git_gasp.base.record import Record
from git_gasp.conformance.logstate import Line, LogState
from git_gasp.conformance.rules import (
    chained_ops,
    unseen_cause,
    vocabulary_problems,
    vocabulary_view,
)
from git_gasp.protocol.envelope import OPS_KIND, EnvelopeError, parse_line, unterminated_message
from git_gasp.protocol.ops import OpError, parse_op

RECORDS_FORMAT = 1


class Findings(Record):
    """Each check's per-line failures, in report order: `errors` (check 1: lines that
    are not valid events, then an unterminated one), `roundtrip` (check 1), `skips`
    (check 2: line, names a missing node?, message), `vocabulary` (3), `causation` (5),
    `pairing` (7)."""

    FIELDS = ("line_count", "errors", "roundtrip", "skips", "vocabulary", "causation",
              "pairing")

    def __init__(self, line_count: int, errors: list[Line], roundtrip: list[Line],
                 skips: list[tuple[int, bool, str]], vocabulary: list[Line],
                 causation: list[Line], pairing: list[Line]) -> None:
        self.line_count, self.errors, self.roundtrip = line_count, errors, roundtrip
        self.skips, self.vocabulary, self.causation = skips, vocabulary, causation
        self.pairing = pairing

    @property
    def first_error(self) -> int | None:
        return self.errors[0][0] if self.errors else None


def findings(state: LogState, rel: str) -> Findings:
    """Render `state` (the open findings decided with everything fed so far); `rel`
    names the log in repair advice."""
    errors = list(state.errors)
    if state.last_line is not None:
        line, start, parsed = state.last_line
        errors.append((line, unterminated_message(not parsed, start, state.source.size, rel)))
    causation = [(line, msg if msg is not None else
                  unseen_cause(eid, cause, state.first_line(cause)))
                 for line, _seq, msg, eid, cause in state.causation]
    pairing = [(line, msg) for line, msg in _chained(state) if msg is not None]
    pairing += [(line, msg) for line, _position, msg in sorted(state.restated)]
    for _line, items in sorted(state.pairing_findings().items()):
        pairing += items
    return Findings(state.line_count, errors, list(state.roundtrip), list(state.skips),
                    list(state.vocab_failures), causation, pairing)


def _chained(state: LogState) -> list[tuple[int, str | None]]:
    out = []
    for line, msg, eid, cause in state.chained:
        if msg is None:
            first = state.first_line(cause)
            if first is not None and state.first_is_ops(cause, first):
                msg = chained_ops(eid, cause)
        out.append((line, msg))
    return out


# ---- the saved records

def dump_records(state: LogState) -> bytes:
    """What the saved state keeps besides keys and offsets: the findings so far (the
    open ones resolved where the lines fed decide them) and check 3's vocabulary view."""
    causation = []
    for line, seq, msg, eid, cause in state.causation:
        if msg is None and state.first_line(cause) is not None:
            msg, eid, cause = unseen_cause(eid, cause, state.first_line(cause)), None, None
        causation.append((line, seq, msg, eid, cause))
    chained = []
    for (line, msg), (_, _, eid, cause) in zip(_chained(state), state.chained, strict=True):
        if msg is None and state.first_line(cause) is None:
            chained.append((line, None, eid, cause))  # still open
        elif msg is not None:
            chained.append((line, msg, None, None))
    records = {
        "format": RECORDS_FORMAT,
        "errors": state.errors, "roundtrip": state.roundtrip, "skips": state.skips,
        "vocab": state.vocab_failures, "kinds": sorted(state.kinds), "rels": sorted(state.rels),
        "view": vocabulary_view(state.vocab, state.kinds, state.rels),
        "causation": causation, "chained": chained, "restated": sorted(state.restated),
        "pairing": sorted(state.pairing_findings().items()), "snapshots": state.snapshots,
    }
    return marshal.dumps(records)


def load_records(state: LogState, raw: bytes) -> None:
    """Restore the records `dump_records` wrote into a state whose keys and offsets are
    loaded; check 3's findings are recomputed when the vocabulary now reads the node
    kinds or relations the log uses differently. Raises ValueError on a bad record."""
    try:
        records = marshal.loads(raw)
    except (EOFError, TypeError, ValueError) as exc:
        raise ValueError(f"records do not load: {exc}") from None
    if type(records) is not dict or records.get("format") != RECORDS_FORMAT:
        raise ValueError("records of another format")
    try:
        state.errors = list(records["errors"])
        state.roundtrip = list(records["roundtrip"])
        state.skips = list(records["skips"])
        state.vocab_failures = list(records["vocab"])
        state.kinds, state.rels = set(records["kinds"]), set(records["rels"])
        state.causation = list(records["causation"])
        state.chained = list(records["chained"])
        state.restated = list(records["restated"])
        state.pairing = dict(records["pairing"])
        state.snapshots = list(records["snapshots"])
        view = records["view"]
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"records are malformed: {exc}") from None
    if view != vocabulary_view(state.vocab, state.kinds, state.rels):
        recheck_vocabulary(state)


def recheck_vocabulary(state: LogState) -> None:
    """Check 3 again over the saved lines (the packs changed what they decide)."""
    failures = []
    data = state.source.read(0, state.length)
    for number, raw in enumerate(data.split(b"\n")[:state.old_lines], 1):
        try:
            event = parse_line(raw, number)
        except (EnvelopeError, RecursionError):
            continue
        if event.kind != OPS_KIND or type(event.payload) is not list:
            continue
        for i, op in enumerate(event.payload, 1):
            try:
                tag, body = parse_op(op)
            except OpError:
                continue
            failures += [(number, p) for p in vocabulary_problems(event.id, i, tag, body,
                                                                   state.vocab)]
    state.vocab_failures = failures
