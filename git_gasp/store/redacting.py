"""Every event the runtime stores passes the redactor first (issue 49).

The one choke point of the write path: `EventStore.append` redacts each event of a
batch (the domain event and its ops pair alike) before it is serialized, so a token
typed into `git gasp record`, passed to the library, an MCP write tool, the sink or a
bridge never reaches the log. Redaction is deterministic (`redact.redactor.token_for`)
and idempotent, so what an adapter redacted already comes out unchanged, and the
same secret gives the same token in the domain event and in its ops event.
"""

from __future__ import annotations

from collections.abc import Iterable

from git_gasp.protocol.envelope import Event
from git_gasp.redact.redactor import Redactor


class _BatchRedactor(Redactor):
    """A Redactor that redacts each distinct string of a batch once: the ops event
    repeats its domain event's strings, and every payload its keys."""

    def __init__(self) -> None:
        super().__init__()
        self._done: dict[tuple[str, bool | None], str] = {}

    def text(self, text: str, *, entropy: bool | None = None) -> str:
        key = (text, entropy)
        out = self._done.get(key)
        if out is None:
            out = self._done[key] = super().text(text, entropy=entropy)
        return out


def redact_events(batch: Iterable[Event]) -> None:
    """Redact, in place, every string an event of `batch` stores: its payload (keys
    and values, by the rules of `Redactor.value`), its actor id and its correlation id
    (ids: the explicit patterns only). The caller then holds what is written."""
    redactor = _BatchRedactor()
    for event in batch:
        event.payload = redactor.value(event.payload)
        if event.actor_id:
            event.actor_id = redactor.field("actor_id", event.actor_id)
        if event.correlation_id:
            event.correlation_id = redactor.field("correlation_id", event.correlation_id)
