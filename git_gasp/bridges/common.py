"""What the framework bridges (bridges/langchain.py, bridges/openai_agents.py) share:
the run a bridge opens around the outermost work it sees, redacted summaries and names
(every string a framework hands over is redacted before it reaches the sink), and the
guard that keeps a bridge's own failure out of the agent.

A bridge is a thin adapter onto an AgentSink: it maps a framework's callbacks to the
sink's and keys the framework's ids to the call ids the sink returns. Nothing here
imports a framework.
"""

from __future__ import annotations

import functools
import json
import logging
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from git_gasp.redact.redactor import redact, redact_field, redact_text
from git_gasp.runtime.sink import AgentSink, describe, jsonable, one_line

log = logging.getLogger("git_gasp.sink")

SUMMARY_LIMIT = 500  # an input or output summary on a call node
TASK_LIMIT = 200  # a run's task line
_REDACT_LIMIT = 20_000  # text redacted before it is cut (redaction is linear)

F = TypeVar("F", bound=Callable[..., Any])


def missing_extra(module: str, extra: str, package: str, exc: ImportError) -> ImportError:
    """The one-line ImportError a bridge raises when its framework is not installed."""
    err = ImportError(f"{module} needs {package}: pip install 'git-gasp[{extra}]'"
                      f" ({one_line(exc, 200)})", name=getattr(exc, "name", None))
    err.__cause__ = exc
    return err


def as_text(value: Any) -> str:
    """`value` as text: a string as is, anything else as compact JSON (or str())."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    except (TypeError, ValueError):
        return str(value)


def summary(value: Any, limit: int = SUMMARY_LIMIT) -> str:
    """`value` as redacted text of at most `limit` characters (redacted before the cut,
    so a secret is never split into an unrecognisable half)."""
    text = redact_text(as_text(value)[:_REDACT_LIMIT]).strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def name(key: str, value: Any) -> str | None:
    """A name or id the framework hands over (a model, provider, tool or agent name),
    redacted as field `key` (``Redactor.field``); None for no name."""
    if value is None or value == "":
        return None
    return redact_field(key, value if isinstance(value, str) else as_text(value))


def task_line(value: Any, limit: int = TASK_LIMIT) -> str:
    """A run's task: `value` redacted, on one line."""
    return one_line(summary(value, 4 * limit), limit)


def metadata_of(value: dict | None) -> dict | None:
    """Metadata for the sink: JSON (what JSON cannot hold as text), every string
    redacted (ids are not taken for high-entropy secrets)."""
    return redact(jsonable(value)) if value else None


def error_text(error: Any) -> str | None:
    """An error (an exception or its text) as one redacted line; None for no error."""
    if error is None:
        return None
    text = describe(error) if isinstance(error, BaseException) else as_text(error)
    return one_line(redact_text(text[:_REDACT_LIMIT]), 2000) or "error"


def guarded(fn: F) -> F:
    """A bridge callback that never raises into the framework: a failure is logged on
    the `git_gasp.sink` logger and counted in the bridge's `errors`."""
    @functools.wraps(fn)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(self, *args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - the agent must go on
            self.errors += 1
            log.warning("%s.%s failed: %s", type(self).__name__, fn.__name__, describe(exc),
                        exc_info=log.isEnabledFor(logging.DEBUG))
            return None
    return wrapper  # type: ignore[return-value]


def caller_run_open(sink: AgentSink) -> bool:
    """True when the sink has a run open that its caller started (the bridge then records
    into it). A run an earlier process left open does not count: StateSink finishes it
    as abandoned when the bridge starts its own."""
    run = getattr(getattr(sink, "state", None), "run", None)
    if run is None:
        return False
    started = getattr(sink, "started", None)  # StateSink: did it start this run itself
    return not callable(started) or bool(started(run.run_id))


def _goal_of(sink: AgentSink, run_id: str | None) -> str | None:
    """The goal id a StateSink's run serves (so a goal given by title is created once,
    not once per run)."""
    graph = getattr(getattr(sink, "state", None), "graph", None)
    node = graph.node(run_id) if graph is not None and run_id else None
    return node["props"].get("goal_id") if node else None


class RunScope:
    """The run a bridge opens for its roots (the outermost framework units it sees).

    The first root starts a run; roots that start while it is open (a batch, parallel
    traces) join it, and the last to end finishes it, "failed" with the first error
    any root ended with. When the sink already has a run open that the bridge did not
    start, the roots record into that run and the bridge leaves it open.
    """

    def __init__(self, sink: AgentSink, *, task: str | None = None,
                 goal: str | None = None) -> None:
        self.sink = sink
        self.task = task
        self.goal = goal
        self.run_id: str | None = None  # the run this scope started, while open
        self._roots: set[Any] = set()
        self._error: str | None = None
        self._outcome: str | None = None
        self._info: dict = {}
        self.lock = threading.RLock()  # the bridge's lock; taken before the sink's

    def is_root(self, key: Any) -> bool:
        return key in self._roots

    def enter(self, key: Any, task: str, metadata: dict | None = None) -> None:
        """A root started: start the run unless one is open already."""
        with self.lock:
            first = not self._roots
            self._roots.add(key)
            if not first:
                return
            self._error = self._outcome = None
            self._info = {}
            if caller_run_open(self.sink):
                self.run_id = None
                return
            self.run_id = self.sink.on_run_started(self.task or task_line(task) or "run",
                                                   goal=self.goal, metadata=metadata_of(metadata))
            self.goal = _goal_of(self.sink, self.run_id) or self.goal

    def note(self, outcome: str) -> None:
        """The open run's outcome, unless a root's error names another (an interrupt)."""
        with self.lock:
            if self._roots and self._outcome is None:
                self._outcome = outcome

    def leave(self, key: Any, *, error: str | None = None, outcome: str | None = None,
              metadata: dict | None = None) -> None:
        """A root ended (with `error` when it failed): the last one finishes the run."""
        with self.lock:
            if key not in self._roots:
                return
            self._roots.discard(key)
            if error is not None and self._error is None:
                self._error, self._outcome = error, outcome or self._outcome
            self._info.update(metadata or {})
            if self._roots or self.run_id is None:
                return
            self.run_id = None
            failed = self._error is not None
            self.sink.on_run_finished(self._outcome or ("failed" if failed else "succeeded"),
                                      error=self._error, metadata=metadata_of(self._info))

    def abandon(self, reason: str) -> None:
        """End every open root (the framework shut down mid-run)."""
        with self.lock:
            for key in list(self._roots):
                self.leave(key, error=reason, outcome="abandoned")
