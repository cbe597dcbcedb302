"""The sink: an agent's loop callbacks as a typed interface, and StateSink, its
implementation over AgentState.

A callback-driven agent (or a framework bridge) tells the sink what happened — a run
started, a model or tool was called and finished, an eval ran, a patch was proposed, a
decision made — and the sink records it through AgentState's paired helpers, so
correlation (the open run) and causation (run.started) are automatic. A callback
never raises into the agent: a failure is logged on the `git_gasp.sink` logger,
counted in `.errors` and kept in `.last_error`, and the callback returns None.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from git_gasp.base.ids import valid_id
from git_gasp.runtime.state import AgentState
from git_gasp.runtime.writepath import StateError

log = logging.getLogger("git_gasp.sink")

OUTCOME_LIMIT = 200  # an outcome becomes a commit trailer: one short line
ERROR_LIMIT = 2000
SUMMARY_LIMIT = 4000
_TEXT_LIMIT = 1000  # an object's text when metadata holds a value JSON cannot
_MAX_PENDING = 4096  # start times kept for calls not finished yet


@runtime_checkable
class AgentSink(Protocol):
    """The moments of an agent's loop, as callbacks. Each returns the id it created."""

    def on_run_started(self, task: str, *, goal: str | None = None,
                       metadata: dict | None = None, run_id: str | None = None) -> str | None:
        ...

    def on_run_finished(self, outcome: str = "succeeded", *, error: str | None = None,
                        metadata: dict | None = None) -> str | None:
        ...

    def on_model_called(self, model: str, *, provider: str | None = None,
                        input_summary: str = "", metadata: dict | None = None) -> str | None:
        ...

    def on_model_finished(self, call_id: str | None, *, output_summary: str = "",
                          error: str | None = None, usage: dict | None = None,
                          metadata: dict | None = None) -> str | None:
        ...

    def on_tool_called(self, tool: str, *, input_summary: str = "",
                       metadata: dict | None = None) -> str | None:
        ...

    def on_tool_finished(self, call_id: str | None, *, output_summary: str = "",
                         error: str | None = None, metadata: dict | None = None) -> str | None:
        ...

    def on_eval(self, command: str, status: str, *, score: float | None = None,
                patch: str | None = None, metadata: dict | None = None) -> str | None:
        ...

    def on_patch(self, title: str, *, metadata: dict | None = None, **links: Any) -> str | None:
        ...

    def on_decision(self, status: str, reason: str, *, patch: str | None = None,
                    metadata: dict | None = None) -> str | None:
        ...


ErrorHandler = Callable[[Exception, str], object]


class StateSink:
    """AgentSink over an AgentState, safe to call from several threads.

    `StateSink(state)` records into a state you opened (and close); `StateSink.open(path,
    **open_kw)` opens one and owns it. As a context manager, leaving the outermost `with`
    finishes a run still open ("failed" with the exception's one-line text when leaving
    on an exception, else "succeeded") and closes an owned state, releasing the lease.
    `on_error(exc, callback_name)` is told of every callback that failed.
    """

    def __init__(self, state: AgentState, *, on_error: ErrorHandler | None = None,
                 owns_state: bool = False) -> None:
        self.state = state
        self.on_error = on_error
        self.owns_state = owns_state
        self.errors = 0
        self.last_error: BaseException | None = None
        self.closed = False
        self._lock = threading.RLock()
        self._started: dict[str, int] = {}  # call or run id -> time.monotonic_ns() at start
        self._depth = 0
        self._runs: set[str] = set()  # runs this sink started

    @classmethod
    def open(cls, path: str | Path, *, on_error: ErrorHandler | None = None,
             **open_kw: Any) -> StateSink:
        """Open the agent repo at `path` (AgentState.open's keywords) into a sink that owns
        the state. Raises GaspError when the repo cannot be opened."""
        return cls(AgentState.open(path, **open_kw), on_error=on_error, owns_state=True)

    # --- the guard every callback goes through ------------------------------------
    def started(self, run_id: str) -> bool:
        """Whether this sink started run `run_id` (not a run an earlier process left open,
        which the next `on_run_started` finishes as abandoned)."""
        return run_id in self._runs

    def _call(self, name: str, fn: Callable[[], str | None]) -> str | None:
        try:
            with self._lock:
                if self.closed:
                    raise StateError("the sink is closed")
                return fn()
        except Exception as exc:  # noqa: BLE001 - a callback never breaks the agent
            self._failed(name, exc)
            return None

    def _failed(self, name: str, exc: Exception) -> None:
        with self._lock:
            self.errors += 1
            self.last_error = exc
        log.warning("sink %s failed: %s", name, one_line(describe(exc), ERROR_LIMIT),
                    exc_info=log.isEnabledFor(logging.DEBUG))
        if self.on_error is not None:
            try:
                self.on_error(exc, name)
            except Exception as again:  # noqa: BLE001
                log.warning("sink on_error handler failed: %s", describe(again))

    def _mark(self, ident: str) -> str:
        if len(self._started) >= _MAX_PENDING:  # calls never finished: forget the oldest
            del self._started[next(iter(self._started))]
        self._started[ident] = time.monotonic_ns()
        return ident

    def _elapsed(self, ident: str) -> int | None:
        start = self._started.pop(ident, None)
        return None if start is None else (time.monotonic_ns() - start) // 1_000_000

    # --- runs ------------------------------------------------------------------------
    def on_run_started(self, task: str, *, goal: str | None = None,
                       metadata: dict | None = None, run_id: str | None = None) -> str | None:
        """Start a run. `goal` is an existing goal's id, or the title of a new goal.

        A run this sink started must be finished first; a run left open by an earlier
        process (resumed when the state was opened) is finished as "abandoned"."""
        def go() -> str:
            task_line = one_line(task, SUMMARY_LIMIT) or "run"
            open_run = self.state.run
            if open_run is not None and open_run.run_id in self._runs:
                raise StateError(f"run {open_run.run_id} is still open; finish it first")
            if run_id is not None and (not valid_id(run_id) or self.state.graph.has_node(run_id)):
                raise StateError(f"run id {run_id!r} is not usable (invalid or taken)")
            goal_id = self._goal(goal)
            if open_run is not None:
                log.warning("sink: finishing run %s, left open by an earlier process, as "
                            "abandoned", open_run.run_id)
                self.state.finish_run("abandoned", error="left open; a new run started")
            rid = self.state.start_run(task_line, goal=goal_id, metadata=_meta(metadata),
                                       run_id=run_id)
            self._runs.add(rid)
            return self._mark(rid)
        return self._call("on_run_started", go)

    def _goal(self, goal: str | None) -> str | None:
        if not goal:
            return None
        node = self.state.graph.node(goal)
        if node is not None and node["kind"] == "goal":
            return goal
        if node is not None:
            raise StateError(f"goal {goal} is a {node['kind']}, not a goal")
        return self.state.record_goal(one_line(goal, SUMMARY_LIMIT))

    def on_run_finished(self, outcome: str = "succeeded", *, error: str | None = None,
                        metadata: dict | None = None) -> str | None:
        """Finish the open run; with `error` a "succeeded" outcome becomes "failed"."""
        return self._call("on_run_finished",
                          lambda: self._finish_run(outcome, error, metadata))

    def _finish_run(self, outcome: str, error: str | None, metadata: dict | None) -> str:
        run = self.state.run
        if run is None:
            raise StateError("no run is open")
        error = _error(error)
        error = one_line(error, ERROR_LIMIT) if error is not None else None
        line = one_line(outcome, OUTCOME_LIMIT)
        if error is not None and line in ("", "succeeded"):
            line = "failed"
        return self.state.finish_run(line or "succeeded", error=error,
                                     duration_ms=self._elapsed(run.run_id),
                                     metadata=_meta(metadata))

    # --- model and tool calls ----------------------------------------------------------
    def on_model_called(self, model: str, *, provider: str | None = None,
                        input_summary: str = "", metadata: dict | None = None) -> str | None:
        return self._call("on_model_called", lambda: self._mark(self.state.record_model_call(
            str(model), provider=_opt_str(provider),
            input_summary=text(input_summary, SUMMARY_LIMIT), metadata=_meta(metadata))))

    def on_model_finished(self, call_id: str | None, *, output_summary: str = "",
                          error: str | None = None, usage: dict | None = None,
                          metadata: dict | None = None) -> str | None:
        def go() -> str:
            cid = self._call_id(call_id, "model")
            return self.state.finish_model_call(
                cid, output_summary=text(output_summary, SUMMARY_LIMIT),
                error=_error(error), usage=_meta(usage),
                duration_ms=self._elapsed(cid), metadata=_meta(metadata))
        return self._call("on_model_finished", go)

    def on_tool_called(self, tool: str, *, input_summary: str = "",
                       metadata: dict | None = None) -> str | None:
        return self._call("on_tool_called", lambda: self._mark(self.state.record_tool_call(
            str(tool), input_summary=text(input_summary, SUMMARY_LIMIT),
            metadata=_meta(metadata))))

    def on_tool_finished(self, call_id: str | None, *, output_summary: str = "",
                         error: str | None = None, metadata: dict | None = None) -> str | None:
        def go() -> str:
            cid = self._call_id(call_id, "tool")
            return self.state.finish_tool_call(
                cid, output_summary=text(output_summary, SUMMARY_LIMIT), error=_error(error),
                duration_ms=self._elapsed(cid), metadata=_meta(metadata))
        return self._call("on_tool_finished", go)

    @staticmethod
    def _call_id(call_id: str | None, what: str) -> str:
        if not call_id:
            raise StateError(f"on_{what}_finished got no call id (its on_{what}_called failed?)")
        return call_id

    # --- the lineage spine ---------------------------------------------------------------
    def on_eval(self, command: str, status: str, *, score: float | None = None,
                patch: str | None = None, metadata: dict | None = None) -> str | None:
        """An eval (Passed / Failed / …); `patch` is validated_by it."""
        return self._call("on_eval", lambda: self.state.record_eval(
            str(command), status, score=None if score is None else float(score),
            validates=patch, metadata=_meta(metadata)))

    def on_patch(self, title: str, *, metadata: dict | None = None, **links: Any) -> str | None:
        """A proposed patch; `links` are propose_patch's keywords (advances, addresses,
        hypothesis, commit, skill, summary)."""
        return self._call("on_patch", lambda: self.state.propose_patch(
            one_line(title, SUMMARY_LIMIT), metadata=_meta(metadata), **links))

    def on_decision(self, status: str, reason: str, *, patch: str | None = None,
                    metadata: dict | None = None) -> str | None:
        """A decision (Approved promotes `patch`, Rejected rejects it)."""
        return self._call("on_decision", lambda: self.state.record_decision(
            status, str(reason), patch=patch, metadata=_meta(metadata)))

    # --- closing ---------------------------------------------------------------------
    def close(self, exc: BaseException | None = None) -> None:
        """Finish a run still open (failed with `exc`'s text when given), close an owned
        state (releasing the lease); later callbacks fail. Idempotent, never raises."""
        with self._lock:
            if self.closed:
                return
            self.closed = True
            try:
                self._close_run(exc)
            finally:
                self._close_state()

    def _close_run(self, exc: BaseException | None) -> None:
        if self.state.run is None:
            return
        held = self.owns_state or _holds_lease(self.state)
        try:
            if exc is None:
                self._finish_run("succeeded", None, None)
            else:
                self._finish_run("failed", describe(exc), None)
        except Exception as err:  # noqa: BLE001
            self._failed("close", err)
        if not held:  # leave a state we do not own as we found it: without the lease
            self._release()

    def _close_state(self) -> None:
        if self.owns_state:
            self._release()

    def _release(self) -> None:
        try:
            self.state.close()
        except Exception as err:  # noqa: BLE001
            self._failed("close", err)

    def __enter__(self) -> StateSink:
        with self._lock:
            if self.closed:
                raise StateError("this sink is closed; open a new one")
            self._depth += 1
        return self

    def __exit__(self, exc_type: object, exc: BaseException | None, tb: object) -> bool:
        with self._lock:
            if self._depth == 0:
                return False
            self._depth -= 1
            if self._depth == 0:
                self.close(exc)
        return False


# --- text and JSON shaping -----------------------------------------------------------------
def one_line(value: object, limit: int) -> str:
    """`value` as one line of at most `limit` characters (whitespace runs collapsed)."""
    line = " ".join(str(value).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def text(value: object, limit: int) -> str:
    """`value` as text of at most `limit` characters (None is empty)."""
    out = "" if value is None else str(value)
    return out if len(out) <= limit else out[: limit - 1] + "…"


def _opt_str(value: object) -> str | None:
    return None if value is None else str(value)


def _error(error: object) -> str | None:
    if error is None:
        return None
    if isinstance(error, BaseException):
        error = describe(error)
    return text(error, ERROR_LIMIT).strip() or "error"


def describe(exc: BaseException) -> str:
    """`Type: message` of an exception, on one line."""
    message = one_line(exc, ERROR_LIMIT)
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


def _meta(metadata: object) -> dict | None:
    if metadata is None:
        return None
    value = jsonable(metadata)
    return value if type(value) is dict else {"value": value}


def jsonable(value: Any, depth: int = 0) -> Any:
    """`value` with everything strict JSON cannot hold turned into text (objects a
    framework put into metadata, non-finite floats, non-string keys)."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if depth < 16 and isinstance(value, dict):
        return {str(k): jsonable(v, depth + 1) for k, v in value.items()}
    if depth < 16 and isinstance(value, (list, tuple)):
        return [jsonable(v, depth + 1) for v in value]
    return text(value, _TEXT_LIMIT)


def _holds_lease(state: AgentState) -> bool:
    try:
        rec = state.store.lease.read()
    except Exception:  # noqa: BLE001 - a corrupt lease is not ours
        return False
    return rec is not None and rec.worker_id == state.store.lease.worker_id and not rec.expired()
