"""Checks 5 (causation) and 7 (pairing) for the events a commit appends to a log,
with the committed log's index as their context."""

from __future__ import annotations

from collections import ChainMap
from collections.abc import Callable

from git_gasp.conformance.rules import (
    causation_problems,
    entity_id,
    ops_cause_problem,
    pairing_problems,
    restatement_problems,
)
from git_gasp.guard.committed_log import CommittedLog
from git_gasp.guard.rejection import CHECK5, CHECK7
from git_gasp.protocol.envelope import OPS_KIND, Event
from git_gasp.protocol.vocab import ENTITY_CREATING

Reject = Callable[[bytes, "int | None", str, str], None]  # (path, line, rule, message)


class AppendedEvents:
    """Checks 5 and 7 for the `events` appended to the log at `path` after the committed
    log `old`; each problem goes to `reject`."""

    def __init__(self, reject: Reject, path: bytes, old: CommittedLog,
                 events: list[Event]) -> None:
        self.reject, self.path, self.old, self.events = reject, path, old, events
        self.new_first: dict[str, int] = {}
        self.new_by_id: dict[str, Event] = {}
        for e in events:
            self.new_first.setdefault(e.id, e.line)
            self.new_by_id.setdefault(e.id, e)

    def lookup(self, event_id: str) -> Event | None:
        if self.old.first_line(event_id) is not None:
            return self.old.event(event_id)
        return self.new_by_id.get(event_id)

    def check(self) -> None:
        """Run both checks."""
        self.causation()
        self.pairing()

    def causation(self) -> None:
        seen: dict[str, int] = {}
        view = ChainMap(self.old.first, seen)
        for e in self.events:
            for problem in causation_problems(e, view, self.new_first.get):
                self.reject(self.path, e.line, CHECK5, problem)
            seen.setdefault(e.id, e.line)

    def pairing(self) -> None:
        old, reject = self.old, self.reject
        entities = _Entities(old)
        for e in self.events:
            entity = entity_id(e.kind, e.payload)
            if entity is not None:
                entities.setdefault(entity, e.id)
                if old.ops_only_line(entity) is not None:
                    restater = old.ops_only_event(entity)
                    if restater is not None:
                        for problem in restatement_problems(restater, {entity: e.id}):
                            reject(self.path, e.line, CHECK7, problem)
        new_claims: dict[str, list[Event]] = {}
        for e in self.events:
            if e.kind != OPS_KIND:
                continue
            if e.causation_id is None:
                for problem in restatement_problems(e, entities):
                    reject(self.path, e.line, CHECK7, problem)
                continue
            problem = ops_cause_problem(e, self.lookup(e.causation_id))
            if problem:
                reject(self.path, e.line, CHECK7, problem)
            new_claims.setdefault(e.causation_id, []).append(e)
        domain = [e for e in self.events if e.kind in ENTITY_CREATING]
        appended_lines = {e.line for e in self.events}
        for cause_id in new_claims:
            if cause_id not in self.new_by_id and old.first_line(cause_id) is not None:
                event = old.event(cause_id)
                if event is not None and event.kind in ENTITY_CREATING:
                    domain.append(event)
        for e in domain:
            pairs = old.claim_events(e.id)
            pairs += new_claims.get(e.id, [])
            appended = e.line in appended_lines
            for line, problem in pairing_problems(e, pairs):
                if appended or line in appended_lines:
                    reject(self.path, line, CHECK7, problem)
                elif line == e.line:  # a committed domain event claimed again: blame the claim
                    reject(self.path, new_claims[e.id][0].line, CHECK7, problem)


class _Entities:
    """Entity id -> the domain event creating it first: the committed log's, then the
    appended events' (the mapping check 7's restatement rule takes)."""

    def __init__(self, old: CommittedLog) -> None:
        self.old = old
        self.new: dict[str, str] = {}

    def _get(self, entity: object) -> str | None:
        if type(entity) is not str:
            return None
        found = self.old.entity_creator(entity)
        return found if found is not None else self.new.get(entity)

    def setdefault(self, entity: str, event_id: str) -> None:
        if self._get(entity) is None:
            self.new[entity] = event_id

    def __contains__(self, entity: object) -> bool:
        return self._get(entity) is not None

    def __getitem__(self, entity: str) -> str:
        found = self._get(entity)
        if found is None:
            raise KeyError(entity)
        return found
