"""The checks of GASP Part VI as they were before the incremental log state: every
check re-reads the whole parsed log. The reference the property tests hold the
incremental checks (cold and resumed) to; messages are kept verbatim."""

from __future__ import annotations

import os
from pathlib import Path

from git_gasp.conformance.checks import load_vocabulary
from git_gasp.conformance.report import CheckResult
from git_gasp.conformance.rules import (
    causation_problems,
    entity_id,
    ops_cause_problem,
    pairing_problems,
    restatement_problems,
    roundtrip_problem,
)
from git_gasp.protocol.envelope import OPS_KIND, Event
from git_gasp.protocol.fold import fold
from git_gasp.protocol.graph import Graph
from git_gasp.protocol.jsonstrict import JsonError, loads_slow
from git_gasp.protocol.ops import OpError, parse_op
from git_gasp.protocol.vocab import ENTITY_CREATING
from git_gasp.store.agent import AgentRepo
from git_gasp.store.agentfs import AgentFileError, read_regular

NAMES = {1: "envelope round-trip", 2: "replay", 3: "vocabulary", 5: "causation integrity",
         7: "domain/ops consistency"}


def _result(number: int) -> CheckResult:
    return CheckResult(number, NAMES[number])


def _log_unusable(repo: AgentRepo, res: CheckResult) -> bool:
    """Record why the log cannot be examined; True when the check must stop here."""
    if repo.log_error is not None:
        res.fail(repo.log_error, path=repo.log_rel)
        return True
    bad = len(repo.parsed.errors)
    if bad:
        res.fail(
            f"{bad} line{'s' * (bad != 1)} of the log are not valid events (see check 1); "
            "this check cannot be verified on the rest",
            path=repo.log_rel,
            line=repo.parsed.errors[0].line,
        )
    return False


# --- 1 -----------------------------------------------------------------------
def check_envelope(repo: AgentRepo) -> CheckResult:
    """Every line parses to the envelope and re-serializes structurally equal."""
    res = _result(1)
    if repo.log_error is not None:
        res.fail(repo.log_error, path=repo.log_rel)
        return res
    for err in repo.parsed.errors:
        res.fail(err.message, path=repo.log_rel, line=err.line)
    for event in repo.parsed.events:
        problem = roundtrip_problem(event)
        if problem:
            res.fail(problem, path=repo.log_rel, line=event.line)
    if not repo.parsed.line_count:
        res.notes.append("the log is empty")
    return res


# --- 2 -----------------------------------------------------------------------
def _snapshots(repo: AgentRepo, res: CheckResult) -> list[tuple[str, Graph, object]]:
    """Load every snapshots/<id>/graph.json; malformed ones become failures."""
    from git_gasp.protocol.snapshot import SnapshotError, parse_snapshot

    base = repo.root / "snapshots"
    if not base.exists():
        return []
    if base.is_symlink() or not base.is_dir():
        res.fail("snapshots is not a directory", path="snapshots")
        return []
    found = []
    for name in sorted(os.listdir(base)):
        rel = f"snapshots/{name}/graph.json"
        if not (base / name).is_dir():
            continue
        if not os.path.lexists(base / name / "graph.json"):
            # An interrupted snapshot: nothing to verify (the reference checker notes it).
            res.soft_fail("snapshot directory without graph.json; ignored",
                          path=f"snapshots/{name}")
            continue
        try:
            doc = loads_slow(read_regular(repo.root, rel))
            graph, integrity = parse_snapshot(doc)
        except (AgentFileError, JsonError, SnapshotError) as exc:
            res.fail(f"snapshot unreadable: {exc}", path=rel)
            continue
        if integrity.event_id != name:
            res.fail(f"snapshot directory is {name!r} but its integrity names "
                     f"{integrity.event_id!r}", path=rel)
            continue
        found.append((rel, graph, integrity))
    return found


def check_replay(repo: AgentRepo) -> CheckResult:
    """The log folds without a malformed op, and every snapshot equals its prefix fold.

    An op naming a missing node is a note (a failure under --strict)."""
    from git_gasp.protocol.snapshot import verify_integrity

    res = _result(2)
    if _log_unusable(repo, res):
        return res
    for skip in repo.folded.skipped:
        where = f"op #{skip.index}: " if skip.index else ""
        # An op naming a node never created is skipped and noted, as the reference
        # checker does (a failure only under --strict); a malformed op is a failure.
        record = res.soft_fail if skip.missing_node else res.fail
        record(f"event {skip.event_id}: {where}{skip.reason}"
               + ("; the fold skips it" if skip.missing_node else ""),
               path=repo.log_rel, line=skip.line)
    snaps = _snapshots(repo, res)
    if not snaps:
        return res
    by_line = {e.line: e for e in repo.parsed.events}
    bad_lines = {err.line for err in repo.parsed.errors}
    checkpoints = []
    for rel, graph, rec in snaps:
        last = by_line.get(rec.line_count)
        reason = verify_integrity(repo.log_bytes or b"", rec, last.id if last else None)
        if reason:
            res.fail(f"snapshot integrity: {reason}", path=rel)
        elif any(n <= rec.line_count for n in bad_lines):
            res.fail("snapshot covers lines that do not parse (see check 1)", path=rel)
        else:
            checkpoints.append((rec.line_count, rel, graph))
    checkpoints.sort(key=lambda c: c[0])
    running = Graph()
    events = repo.parsed.events
    pos = 0
    for line_count, rel, graph in checkpoints:
        chunk = []
        while pos < len(events) and events[pos].line <= line_count:
            chunk.append(events[pos])
            pos += 1
        fold(chunk, graph=running)
        if not running.same_as(graph):
            res.fail(f"snapshot graph differs from the fold of the first {line_count} lines",
                     path=rel)
    res.notes.append(f"{len(snaps)} snapshot{'s' * (len(snaps) != 1)} examined")
    return res


# --- 3 -----------------------------------------------------------------------
def check_vocabulary(repo: AgentRepo, vocab_root: Path | None = None) -> CheckResult:
    """Every CreateNode.kind and CreateRelation.rel is baseline or declared by a pack."""
    res = _result(3)
    vocab = load_vocabulary(vocab_root or repo.root, res)
    if _log_unusable(repo, res):
        return res
    for event in repo.parsed.events:
        if event.kind != OPS_KIND or type(event.payload) is not list:
            continue
        for i, op in enumerate(event.payload, 1):
            try:
                tag, body = parse_op(op)
            except OpError:
                continue  # shape errors are check 2's
            if tag == "CreateNode":
                kind = body["kind"]
                if kind not in vocab.node_kinds:
                    res.fail(f"event {event.id} op #{i}: node kind {kind!r} is not in the "
                             "baseline vocabulary or a pack in .agent/packs/",
                             path=repo.log_rel, line=event.line)
                missing = [p for p in vocab.required_props.get(kind, ()) if p not in body["props"]]
                if missing:
                    res.fail(f"event {event.id} op #{i}: {kind} node {body['id']!r} lacks "
                             f"required prop{'s' * (len(missing) > 1)} {', '.join(missing)} "
                             "(declared by a pack)", path=repo.log_rel, line=event.line)
            elif tag == "CreateRelation" and body["rel"] not in vocab.relations:
                res.fail(f"event {event.id} op #{i}: relation {body['rel']!r} is not in the "
                         "baseline vocabulary or a pack in .agent/packs/",
                         path=repo.log_rel, line=event.line)
    return res


# --- 5 -----------------------------------------------------------------------
def check_causation(repo: AgentRepo) -> CheckResult:
    """Unique ids; causation names an earlier event; roots are *.created / *.started / ops."""
    res = _result(5)
    if _log_unusable(repo, res):
        return res
    seen: dict[str, int] = {}
    first_line: dict[str, int] = {}
    for event in repo.parsed.events:
        first_line.setdefault(event.id, event.line)
    for event in repo.parsed.events:
        for problem in causation_problems(event, seen, first_line.get):
            res.fail(problem, path=repo.log_rel, line=event.line)
        seen.setdefault(event.id, event.line)
    return res


# --- 7 -----------------------------------------------------------------------
def check_pairing(repo: AgentRepo) -> CheckResult:
    """Each entity-creating event has exactly one matching ops pair; ops never chain to ops."""
    res = _result(7)
    if _log_unusable(repo, res):
        return res
    events = repo.parsed.events
    by_id: dict[str, Event] = {}
    for e in events:
        by_id.setdefault(e.id, e)
    claimants: dict[str, list[Event]] = {}
    entity_ids: dict[str, str] = {}
    for e in events:
        entity = entity_id(e.kind, e.payload)
        if entity is not None:
            entity_ids.setdefault(entity, e.id)
        if e.kind != OPS_KIND:
            continue
        cause = by_id.get(e.causation_id) if e.causation_id is not None else None
        problem = ops_cause_problem(e, cause)
        if problem:
            res.fail(problem, path=repo.log_rel, line=e.line)
        if e.causation_id is not None:
            claimants.setdefault(e.causation_id, []).append(e)
    for e in events:
        if e.kind == OPS_KIND and e.causation_id is None:
            for problem in restatement_problems(e, entity_ids):
                res.fail(problem, path=repo.log_rel, line=e.line)
    for e in events:
        if e.kind in ENTITY_CREATING:
            for line, problem in pairing_problems(e, claimants.get(e.id, ())):
                res.fail(problem, path=repo.log_rel, line=line)
    return res




def skipped_count(repo: AgentRepo) -> int:
    """Check 6's count of ops the fold skips."""
    return len(repo.folded.skipped) if repo.log_error is None and repo.log_bytes is not None \
        else 0


def fold_graph(repo: AgentRepo) -> Graph:
    return repo.folded.graph
