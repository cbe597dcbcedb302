"""Fold an agent's log up to an event, seeding from a verified snapshot when one fits."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from git_gasp.base.errors import GaspError, UsageError
from git_gasp.protocol.envelope import parse_log
from git_gasp.protocol.fold import FoldError, FoldResult, fold
from git_gasp.protocol.idmatch import match_id
from git_gasp.protocol.snapshot import prefix_bytes
from git_gasp.store.agent import AgentRepo, load_agent
from git_gasp.store.attributes import lineendings_error
from git_gasp.store.snapshots import find_seed


def event_index(events: list, at: str) -> int | None:
    """The index in `events` of the event `at` names: its id or a unique prefix of one
    (`protocol.idmatch`; several matches raise AmbiguousId); None when none matches."""
    full = match_id((e.id for e in events), at, "event")
    return next((i for i, e in enumerate(events) if e.id == full), None)


@dataclass
class FoldView:
    """The fold of a log prefix and how it was obtained."""

    repo: AgentRepo
    result: FoldResult
    upto_line: int
    last_event_id: str | None
    seeded_from: str | None = None
    notes: list[str] = field(default_factory=list)


def fold_agent(root: Path, *, at: str | None = None, strict: bool = False,
               use_snapshots: bool = True) -> FoldView:
    """Fold the log at `root` through event `at` (default: the whole log).

    With a verified snapshot at or before the target, only the lines after it are
    parsed (their line numbers stay those of the whole log).
    """
    repo = load_agent(root)
    if repo.log_error is not None:
        raise GaspError(repo.log_error)
    converted = lineendings_error(root)
    if converted:  # one line with the fix, not every line of the log as invalid
        raise GaspError(converted)
    log = repo.log_bytes or b""
    notes: list[str] = []
    seed = None
    if use_snapshots and at is None:
        seed, notes = find_seed(root, log)
    if seed is not None:
        offset = seed.integrity.line_count
        parsed = parse_log(log[len(prefix_bytes(log, offset) or b""):])
        for event in parsed.events:
            event.line += offset
        for err in parsed.errors:
            err.line += offset
        parsed.line_count += offset
    else:
        parsed = repo.parsed
    if parsed.errors:
        first = parsed.errors[0]
        if strict:
            raise GaspError(f"{repo.log_rel}:{first.line}: {first.message}")
        notes.append(f"{len(parsed.errors)} line(s) are not valid events and were skipped "
                     f"(first: line {first.line}: {first.message})")
    events = parsed.events
    if at is not None:
        idx = event_index(events, at)
        if idx is None:
            raise UsageError(f"no event {at!r} in {repo.log_rel}")
        events = events[: idx + 1]
        upto = events[-1].line
        if use_snapshots:
            seed, notes_at = find_seed(root, log, upto)
            notes += notes_at
            if seed is not None:
                events = [e for e in events if e.line > seed.integrity.line_count]
    else:
        upto = events[-1].line if events else (seed.integrity.line_count if seed else 0)
    try:
        result = fold(events, strict=strict, graph=seed.graph if seed else None)
    except FoldError as exc:
        raise GaspError(f"{repo.log_rel}:{exc.skipped.line}: {exc}") from None
    result.last_event_id = events[-1].id if events else (seed.integrity.event_id if seed else None)
    return FoldView(repo, result, upto, result.last_event_id, seed.path if seed else None, notes)
