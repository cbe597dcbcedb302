"""Search the event log's text: the one engine behind `git gasp search` and the MCP tool
`gasp_search`, over the log's bytes (no I/O here: the caller hands them in, a bytes
object or a read-only mmap).

An event's text is its id, its kind and every string of its payload (nested ones too).
It matches when every word of the query occurs in it, case ignored (``str.lower``);
its score ranks it: 3 when one string holds the whole query as typed (its words in
order, one space apart), 2 when one string holds every word, 1 when they are spread
over several. Hits come best first, then newest first (the log's later line).

The log is read in chunks of whole lines, each lowered (ASCII) and searched for an
ASCII run of letters and digits of the query's words (the anchor: the rarest in the
log's last chunk); only the lines holding every word's run are parsed, so a search
costs about one pass over the log at C speed plus the lines it parses. With a limit,
lines are parsed newest first and the search stops once the limit is reached by hits
of the best score (first among the lines holding the whole query as typed). Limit of
the prefilter: a letter the log writes as a ``\\u`` escape, or the Kelvin sign or the
dotted capital I (whose lower case is ASCII), is not seen by it. A line that does not
parse as an event is skipped.

An ops event (``state.ops_applied``) is a hit of its own only when the domain event it
follows (its cause) is not: the two say the same thing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterator
from typing import Any

from git_gasp.base.errors import UsageError
from git_gasp.protocol.envelope import OPS_KIND, EnvelopeError, Event, parse_line
from git_gasp.protocol.idmatch import match_id
from git_gasp.protocol.vocab import ENTITY_CREATING

CHUNK = 1 << 18  # bytes lowered and searched at a time (kept in the CPU's cache)
_LOWER = bytes.maketrans(bytes(range(65, 91)), bytes(range(97, 123)))
_RUNS = re.compile(r"[A-Za-z0-9]+")
_PLAIN = re.compile(r"[a-z0-9 _.:-]+")  # a phrase no JSON writer escapes a byte of
_FAMILY_KIND = {"model": "model_call", "tool": "tool_call"}  # model.called -> model_call
_RUN_STARTED = b"run.started"
BEST = 3  # the score of a string holding the whole query as typed


class Hit:
    """One event that matched: where it is (`line`, 1-based), what it is about (`nodes`,
    their kind `kind`), the string that matched best (`text`) and its `score`."""

    __slots__ = ("event", "line", "nodes", "kind", "text", "score")

    def __init__(self, event: Event, line: int, nodes: tuple[str, ...], kind: str | None,
                 text: str, score: int) -> None:
        self.event, self.line, self.nodes, self.kind = event, line, nodes, kind
        self.text, self.score = text, score

    @property
    def run(self) -> str | None:
        """The run the event belongs to (its correlation id when that is a run's), or
        None."""
        cid = self.event.correlation_id
        return cid if cid is not None and cid.startswith("run_") else None

    def __repr__(self) -> str:
        return f"Hit({self.event.id!r}, line={self.line}, score={self.score})"


class RunInfo:
    """Who ran a run: the person and the agent its run.started metadata names."""

    __slots__ = ("person", "agent")

    def __init__(self, person: str | None, agent: str | None) -> None:
        self.person, self.agent = person, agent


def run_info(metadata: Any) -> RunInfo:
    """The person and agent of a run's metadata (``person``; ``source.agent``, else
    ``agent``), as `git gasp view` shows them."""
    if not isinstance(metadata, dict):
        return RunInfo(None, None)
    who = metadata.get("person")
    src = metadata.get("source")
    agent = src.get("agent") if isinstance(src, dict) else None
    if not isinstance(agent, str) or not agent:
        agent = metadata.get("agent")
    return RunInfo(who if isinstance(who, str) else None,
                   agent if isinstance(agent, str) and agent else None)


def query_words(query: object) -> list[str]:
    """The query's words, lowered; a UsageError when it holds none."""
    words = query.lower().split() if isinstance(query, str) else []
    if not words:
        raise UsageError("query must hold at least one word")
    return words


def check_kinds(kinds: Collection[str] | None, known: Collection[str] | None) -> None:
    """A UsageError naming the first of `kinds` that is no node kind of `known`."""
    if kinds is None or known is None:
        return
    unknown = sorted(set(kinds) - set(known))
    if unknown:
        raise UsageError(f"unknown node kind {unknown[0]!r} (known: "
                         f"{', '.join(sorted(known))})")


def search_log(data: Any, query: str, *, kinds: Collection[str] | None = None,
               run: str | None = None, agent: str | None = None, person: str | None = None,
               since_ms: int | None = None, known_kinds: Collection[str] | None = None,
               limit: int | None = None, keep: Callable[[Hit], bool] | None = None,
               key: Callable[[Hit], str] | None = None,
               known: tuple[int, int] | None = None) -> list[Hit]:
    """The events of the log `data` matching `query`, best first, narrowed to events
    about nodes of `kinds`, of the run `run` (an id or a unique prefix), of runs whose
    agent or person contains `agent` / `person` (case ignored), at or after `since_ms`,
    and that `keep` keeps.

    With `limit`, enough to give the first `limit` hits of distinct `key` (default: the
    event id) in that order: candidates are parsed newest first, and once `limit` keys
    hold a hit of the best score no older line can come before them, so the rest is
    left unparsed (a common word costs its newest hits, not all of them). `known`:
    (size, line count) of the first bytes of `data` to search, when the caller knows
    them (the MCP server's fold): the chunks are then read from the end, so a search
    that stops early never reads the start of the log."""
    words = query_words(query)
    check_kinds(kinds, known_kinds)
    runs = _runs(data) if run is not None or agent is not None or person is not None \
        else {}
    wanted_runs = _wanted_runs(runs, run, agent, person)
    phrase = " ".join(words)

    def hit_of(line: int, raw: bytes) -> Hit | None:
        try:
            event = parse_line(raw, line)
        except (EnvelopeError, RecursionError):
            return None
        if since_ms is not None and event.ts_ms < since_ms:
            return None
        if wanted_runs is not None and event.correlation_id not in wanted_runs:
            return None
        nodes, kind = subject(event)
        if kinds is not None and kind not in kinds:
            return None
        found = score(_strings(event), words, phrase)
        if found is None:
            return None
        hit = Hit(event, line, nodes, kind, found[1], found[0])
        return hit if keep is None or keep(hit) else None

    anchors, seen = _anchors(query, data)
    if limit is not None and len(words) > 1 and _PLAIN.fullmatch(phrase) and seen >= limit:
        # every anchor is common: the lines holding the phrase first; when `limit` keys
        # hold a best hit among them, those are the first hits (the rest come after)
        hits, enough = _collect(newest(data, [phrase.encode("ascii")], known), hit_of,
                                limit, key)
        if enough:
            return rank([h for h in hits if h.score == BEST])
    hits, _enough = _collect(newest(data, anchors, known), hit_of, limit, key)
    return rank(hits)


def _collect(candidates: Iterator[tuple[int, bytes]],
             hit_of: Callable[[int, bytes], Hit | None], limit: int | None,
             key: Callable[[Hit], str] | None) -> tuple[list[Hit], bool]:
    """The hits of `candidates` (newest first), up to where `limit` keys hold a hit of
    the best score; and whether they came to that."""
    hits: list[Hit] = []
    best: set[str] = set()  # keys holding a hit of the best score
    for line, raw in candidates:
        hit = hit_of(line, raw)
        if hit is None:
            continue
        hits.append(hit)
        if limit is not None and hit.score == BEST and hit.event.kind != OPS_KIND:
            best.add(key(hit) if key is not None else hit.event.id)
            if len(best) >= limit:
                return hits, True
    return hits, False


def rank(hits: list[Hit]) -> list[Hit]:
    """`hits` best first, then newest first; an ops event whose cause is a hit left out
    (the cause then is about the nodes the ops touch, when it named none itself)."""
    by_id = {h.event.id: h for h in hits}
    kept = []
    for h in hits:
        cause = by_id.get(h.event.causation_id or "") if h.event.kind == OPS_KIND else None
        if cause is None:
            kept.append(h)
        elif not cause.nodes:
            cause.nodes = h.nodes
    kept.sort(key=lambda h: (-h.score, -h.line))
    return kept


def subject(event: Event) -> tuple[tuple[str, ...], str | None]:
    """The nodes `event` is about and their kind (None when it names no kind)."""
    p = event.payload
    if isinstance(p, list):  # an ops event: the nodes its ops touch
        nodes, kind = [], None
        for op in p:
            body = next(iter(op.values()), None) if isinstance(op, dict) and op else None
            if isinstance(body, dict) and isinstance(body.get("id"), str):
                nodes.append(body["id"])
                if kind is None and isinstance(body.get("kind"), str):
                    kind = body["kind"]
        return tuple(dict.fromkeys(nodes)), kind
    node = None
    if isinstance(p, dict):
        node = p.get("id") if isinstance(p.get("id"), str) else p.get("run_id")
    family = event.kind.partition(".")[0]
    kind = ENTITY_CREATING.get(event.kind) or _FAMILY_KIND.get(family, family)
    return ((node,) if isinstance(node, str) and node else ()), kind


def score(strings: list[str], words: list[str], phrase: str) -> tuple[int, str] | None:
    """(score, the best string) of an event's `strings` for the query, or None."""
    lowered = [s.lower() for s in strings]
    best = None
    for s, low in zip(strings, lowered, strict=True):
        if phrase in low:
            return BEST, s
        if best is None and all(w in low for w in words):
            best = s
    if best is not None:
        return 2, best
    if all(any(w in low for low in lowered) for w in words):
        first = next(s for s, low in zip(strings, lowered, strict=True) if words[0] in low)
        return 1, first
    return None


def _strings(event: Event) -> list[str]:
    """The event's strings, its words first: the payload's (nested ones too, in order),
    then the ids (values of keys ending in ``id``), the event's id and its kind."""
    words: list[str] = []
    ids: list[str] = []
    stack: list[tuple[str, Any]] = [("", event.payload)]
    while stack:
        key, value = stack.pop()
        if isinstance(value, str):
            (ids if key.endswith("id") else words).append(value)
        elif isinstance(value, dict):
            stack.extend(reversed(list(value.items())))
        elif isinstance(value, list):
            stack.extend((key, v) for v in reversed(value))
    return [*words, *ids, event.id, event.kind]


def _anchors(query: str, data: Any) -> tuple[list[bytes], int]:
    """The longest ASCII run of letters and digits of each word that has one, lowered;
    the rarest first (in the log's last chunk; then the longest): it is searched for,
    the others only tested on its lines. And how often the first occurs in that chunk."""
    out = set()
    for word in query.split():
        runs = _RUNS.findall(word)
        if runs:
            out.add(max(runs, key=len).lower().encode("ascii"))
    if not out:
        return [], 0
    sample = data[-CHUNK:].translate(_LOWER)
    counted = sorted((sample.count(a), -len(a), a) for a in out)
    return [a for _n, _len, a in counted], counted[0][0]


def _chunks(data: Any) -> Iterator[tuple[int, bytes]]:
    """(offset, bytes) of `data` in pieces of whole lines (a last unterminated line
    included), each about CHUNK bytes."""
    pos, end = 0, len(data)
    while pos < end:
        stop = min(end, pos + CHUNK)
        if stop < end:
            nl = data.rfind(b"\n", pos, stop)
            if nl < 0:  # one line longer than a chunk: up to its end
                nl = data.find(b"\n", stop)
                nl = end - 1 if nl < 0 else nl
            stop = nl + 1
        yield pos, data[pos:stop]
        pos = stop


def _candidates(data: Any, anchors: list[bytes]) -> Iterator[tuple[int, bytes]]:
    """(line number, raw line) of each line holding every anchor (case ignored), in the
    log's order; every line when there is no anchor."""
    for start, stop, base in _holding(data, anchors):
        yield from _in_chunk(data[start:stop], base, anchors)


def _newest_first(data: Any, anchors: list[bytes]) -> Iterator[tuple[int, bytes]]:
    """`_candidates`, newest first: one pass finds the chunks holding the first anchor
    (and counts their lines), then each of those is searched again from the last, so a
    search that stops early looks at the lines of the last chunks only."""
    for start, stop, base in reversed(_holding(data, anchors)):
        yield from reversed(list(_in_chunk(data[start:stop], base, anchors)))


def newest(data: Any, anchors: list[bytes], known: tuple[int, int] | None
           ) -> Iterator[tuple[int, bytes]]:
    """The candidates newest first: read from the end when the size and line count of
    the part to search are `known`, else `_newest_first`."""
    if known is None:
        return _newest_first(data, anchors)
    return _from_end(data, anchors, *known)


def _from_end(data: Any, anchors: list[bytes], size: int,
              lines: int) -> Iterator[tuple[int, bytes]]:
    """The candidates of data[:size] (`lines` lines), newest first, chunk by chunk from
    the end (each chunk starts at a line's start)."""
    stop = min(size, len(data))
    while stop > 0:
        start = max(0, stop - CHUNK)
        if start:
            start = data.rfind(b"\n", 0, start) + 1
        chunk = data[start:stop]
        lines -= chunk.count(b"\n") + (not chunk.endswith(b"\n"))
        yield from reversed(list(_in_chunk(chunk, lines, anchors)))
        stop = start


def _holding(data: Any, anchors: list[bytes]) -> list[tuple[int, int, int]]:
    """(start, stop, lines before it) of each chunk holding the first anchor (every
    chunk when there is none)."""
    out = []
    base = 0
    for start, chunk in _chunks(data):
        low = chunk.translate(_LOWER) if anchors else chunk
        if not anchors or low.find(anchors[0]) >= 0:
            out.append((start, start + len(chunk), base))
        base += low.count(b"\n")
    return out


def _in_chunk(chunk: bytes, base: int, anchors: list[bytes]) -> Iterator[tuple[int, bytes]]:
    """The candidates of one chunk of whole lines (`base` lines before it)."""
    if not anchors:
        lines = chunk.split(b"\n")
        if not lines[-1]:
            lines.pop()
        yield from enumerate(lines, base + 1)
        return
    low = chunk.translate(_LOWER)
    first, rest = anchors[0], anchors[1:]
    i = low.find(first)
    counted, line = 0, base  # newlines counted up to `counted`; `line` lines before
    while i >= 0:
        start = low.rfind(b"\n", 0, i) + 1
        stop = low.find(b"\n", i)
        stop = len(low) if stop < 0 else stop
        line += low.count(b"\n", counted, start)
        counted = start
        if all(a in low[start:stop] for a in rest):
            yield line + 1, chunk[start:stop]
        i = low.find(first, stop)


def _runs(data: Any) -> dict[str, RunInfo]:
    """Every run the log starts (run.started), with who ran it."""
    out: dict[str, RunInfo] = {}
    for line, raw in _candidates(data, [_RUN_STARTED]):
        try:
            event = parse_line(raw, line)
        except (EnvelopeError, RecursionError):
            continue
        p = event.payload
        if event.kind == "run.started" and isinstance(p, dict) \
                and isinstance(p.get("run_id"), str):
            out[p["run_id"]] = run_info(p.get("metadata"))
    return out


def _wanted_runs(runs: dict[str, RunInfo], run: str | None, agent: str | None,
                 person: str | None) -> set[str] | None:
    """The run ids the run, agent and person filters leave (None: no such filter)."""
    if run is None and agent is None and person is None:
        return None
    ids = set(runs)
    if run is not None:
        full = match_id(runs, run, "run")
        if full not in runs:
            raise UsageError(f"no run {run!r} in the log")
        ids = {full}
    for want, field in ((agent, "agent"), (person, "person")):
        if want is not None:
            low = want.lower()
            ids = {r for r in ids if low in (getattr(runs[r], field) or "").lower()}
    return ids
