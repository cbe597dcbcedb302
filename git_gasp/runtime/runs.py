"""Runs in AgentState: start and finish a run, the model and tool calls inside it, and
recovering the unfinished run of an opened log."""

from __future__ import annotations

from git_gasp.base.ids import new_id, now_ms, valid_id
from git_gasp.base.record import Record as Value
from git_gasp.protocol.envelope import OPS_KIND, Event
from git_gasp.runtime.ops import clean, create_node, relate, update_node
from git_gasp.runtime.writepath import AUTO, StateError
from git_gasp.store.person import person


def is_unfinished_run(node: dict) -> bool:
    """A run node an open would resume (`AgentState._recover_run`)."""
    return (node["kind"] == "run" and node["props"].get("status") == "running"
            and not node["tombstoned"])


class OpenRun(Value):

    FIELDS = ("run_id", "event_id", "goal_id", "task_id")

    def __init__(self, run_id: str, event_id: str, goal_id: str | None = None,
                 task_id: str | None = None) -> None:
        self.run_id = run_id
        self.event_id = event_id  # the run.started event
        self.goal_id = goal_id
        self.task_id = task_id


class RunLifecycle:
    """The run lifecycle (a mixin of AgentState)."""

    def _unfinished_runs(self) -> list[dict]:
        """Run nodes an open resumes, in node order.

        On a graph still lazily loaded from the snapshot cache, only the runs unfinished
        in the snapshot (kept in the cache entry) and the nodes loaded or created since
        can be unfinished: every other node is untouched since the snapshot."""
        graph = self.graph
        if self._running_hint is None or not graph.is_lazy:
            return [n for n in graph.iter_nodes() if is_unfinished_run(n)]
        ids = set(self._running_hint)
        ids.update(graph.touched())
        found = {}
        for nid in ids:
            node = graph.node(nid)
            if node is not None and is_unfinished_run(node):
                found[nid] = node
        if len(found) < 2:
            return list(found.values())
        return [found[nid] for nid in graph.node_ids() if nid in found]

    def _recover_run(self) -> None:
        running = self._unfinished_runs()
        if not running:
            return
        node = running[-1]
        props = node["props"]
        started = props.get("started_event") or self.creator_of(node["id"])
        if not isinstance(started, str):
            self.notes.append(f"run {node['id']} is unfinished but its run.started event is "
                              "unknown; it cannot be resumed")
            return
        self.run = OpenRun(node["id"], started, props.get("goal_id"), props.get("task_id"))
        if len(running) > 1:
            self.notes.append(f"{len(running)} runs are unfinished; resuming the latest, "
                              f"{node['id']}")

    # --- runs (raw layer, paired) ------------------------------------------------------
    def start_run(self, task: str, *, goal: str | None = None, task_id: str | None = None,
                  metadata: dict | None = None, run_id: str | None = None,
                  derived_from: str | None = None) -> str:
        """run.started + CreateNode run (running); later events chain to it.

        `derived_from`: the run this one continues (a hand-off, `git gasp resume`): the
        run node relates to it (``derived_from``) and its payload names it."""
        self._begin()
        if self.run is not None:
            raise StateError(f"run {self.run.run_id} is still open; finish it first "
                             "(`git gasp run finish --outcome …`)")
        self._need(goal, "goal", "goal")
        self._need(task_id, "task", "task")
        self._need(derived_from, "run", "run")
        rid = run_id or new_id("run")
        if not valid_id(rid) or self.graph.has_node(rid):
            raise StateError(f"run id {rid!r} is not usable (invalid or taken)")
        metadata = dict(metadata or {})
        if "person" not in metadata:
            who = person(self.root)
            if who is not None:
                metadata["person"] = who
        payload = clean({"run_id": rid, "task": task, "goal_id": goal, "task_id": task_id,
                         "derived_from": derived_from})
        payload["metadata"] = metadata
        # the ops need the domain event id (started_event): build by hand
        cause = self.creator_of(task_id) if task_id else (self.creator_of(goal) if goal else None)
        props = clean({"task": task, "status": "running", "goal_id": goal, "task_id": task_id,
                        "started_ts_ms": now_ms(), "metadata": metadata or {},
                        "derived_from": derived_from})
        ops = [create_node(rid, "run", props)]
        ops += [relate(rid, "derived_from", derived_from)] if derived_from else []
        ops += [relate(rid, "serves", task_id)] if task_id else []
        ops += [relate(rid, "serves", goal)] if goal else []
        self._validate(ops)
        akind, aid = self.actor
        ts = now_ms()
        domain = Event(new_id("event"), 1, ts, akind, aid, "run.started", payload, cause, rid)
        props["started_event"] = domain.id
        ops_event = Event(new_id("event"), 1, ts, akind, aid, OPS_KIND, ops, domain.id, rid)
        self._append([domain, ops_event])
        self.run = OpenRun(rid, domain.id, goal, task_id)
        self.started_run = rid
        self._dispatch(domain)
        return rid

    def finish_run(self, outcome: str, *, run_id: str | None = None, error: str | None = None,
                   duration_ms: int | None = None, metadata: dict | None = None) -> str:
        """run.finished + UpdateNode run (finished, outcome); closes the open run.

        `error` is kept on the run node and the event; `duration_ms` defaults to the time
        since the run node's `started_ts_ms`."""
        self._begin()
        if "\n" in outcome:
            raise StateError("an outcome is one line (it becomes a commit trailer)")
        if self.run is None:
            node = self.graph.node(run_id or "")
            if node is not None and node["props"].get("status") == "finished":
                raise StateError(f"run {run_id} already finished "
                                 f"({node['props'].get('outcome')})")
            raise StateError("no run is open")
        if run_id is not None and run_id != self.run.run_id:
            raise StateError(f"run {run_id} is not the open run ({self.run.run_id})")
        run = self.run
        finished = now_ms()
        node = self.graph.node(run.run_id)
        if duration_ms is None and node is not None:
            duration_ms = _since(node["props"].get("started_ts_ms"), finished)
        payload = clean({"run_id": run.run_id, "outcome": outcome, "error": error,
                          "duration_ms": duration_ms})
        payload["metadata"] = metadata or {}
        props = clean({"status": "finished", "outcome": outcome, "finished_ts_ms": finished,
                        "error": error, "duration_ms": duration_ms, "metadata": metadata or {}})
        self._emit("run.finished", payload, [update_node(run.run_id, props)],
                   cause=run.event_id, correlation=run.run_id)
        self.run = None
        return run.run_id

    def _need_run(self, what: str) -> OpenRun:
        if self.run is None:
            raise StateError(f"{what} needs an open run (`git gasp run start`)")
        return self.run

    def record_model_call(self, model: str, *, provider: str | None = None,
                          input_summary: str = "", metadata: dict | None = None,
                          call_id: str | None = None, cause: object = AUTO,
                          started_ts_ms: int | None = None) -> str:
        """model.called + CreateNode model_call (running) produced_by the run.

        The first call of a model not yet the run's also sets the run node's ``model``
        (the one in use) and ``models`` (every one, in order of first use) in the same
        ops pair, so a model swap shows in the log alone. `call_id` gives the node a
        stable id (an adapter's, so a step recorded twice is one node); `started_ts_ms`
        the time the call began where the caller knows it (default now)."""
        run = self._need_run("a model call")
        mid = call_id or new_id("model_call")
        payload = clean({"id": mid, "run_id": run.run_id, "model": model, "provider": provider,
                          "input_summary": input_summary})
        payload["metadata"] = metadata or {}
        props = {"model": model, "provider": provider, "input_summary": input_summary or None,
                 "run_id": run.run_id, "status": "running",
                 "started_ts_ms": now_ms() if started_ts_ms is None else started_ts_ms,
                 "metadata": metadata or {}}
        ops = [create_node(mid, "model_call", clean(props)), *self._in_run(mid)]
        node = self.graph.node(run.run_id)
        models = list(node["props"].get("models") or []) if node is not None else []
        if node is not None and (model not in models or node["props"].get("model") != model):
            ops.append(update_node(run.run_id, {"model": model, "models": list(
                dict.fromkeys([*models, model]))}))
        self.emit("model.called", payload, ops, cause=cause)
        return mid

    def finish_model_call(self, call_id: str, *, output_summary: str = "",
                          success: bool = True, error: str | None = None,
                          usage: dict | None = None, duration_ms: int | None = None,
                          metadata: dict | None = None, stop_reason: str | None = None,
                          finished_ts_ms: int | None = None, cause: object = AUTO) -> str:
        """model.finished + UpdateNode on the model_call's outcome props.

        `error` marks the call failed and is kept on the node; `usage` (token counts)
        and `stop_reason` (why the model stopped, as its API says) are kept on the node;
        `duration_ms` defaults to the time from the call's start to `finished_ts_ms`
        (default now)."""
        return self._finish_call("model", call_id, output_summary, success, metadata,
                                 error=error, usage=usage, duration_ms=duration_ms,
                                 stop_reason=stop_reason, finished=finished_ts_ms,
                                 cause=cause)

    def record_tool_call(self, tool: str, *, input_summary: str = "",
                         metadata: dict | None = None) -> str:
        """tool.called + CreateNode tool_call (running) produced_by the run."""
        run = self._need_run("a tool call")
        tid = new_id("tool_call")
        payload = {"id": tid, "run_id": run.run_id, "tool": tool, "input_summary": input_summary,
                   "metadata": metadata or {}}
        props = {"tool": tool, "input_summary": input_summary or None, "run_id": run.run_id,
                 "status": "running", "started_ts_ms": now_ms(), "metadata": metadata or {}}
        self.emit("tool.called", payload,
                  [create_node(tid, "tool_call", clean(props)), *self._in_run(tid)])
        return tid

    def finish_tool_call(self, call_id: str, *, output_summary: str = "",
                         success: bool = True, error: str | None = None,
                         duration_ms: int | None = None, metadata: dict | None = None) -> str:
        """tool.finished + UpdateNode on the tool_call's outcome props (`error`,
        `duration_ms` as for finish_model_call)."""
        return self._finish_call("tool", call_id, output_summary, success, metadata,
                                 error=error, duration_ms=duration_ms)

    def _finish_call(self, what: str, call_id: str, output: str, success: bool,
                     metadata: dict | None, *, error: str | None = None,
                     usage: dict | None = None, duration_ms: int | None = None,
                     stop_reason: str | None = None, finished: int | None = None,
                     cause: object = AUTO) -> str:
        self._need(call_id, f"{what}_call", f"{what} call")
        node = self.graph.node(call_id)
        if node["props"].get("status") != "running":
            raise StateError(f"{what} call {call_id} already finished")
        success = bool(success) and error is None
        finished = now_ms() if finished is None else finished
        if duration_ms is None:
            duration_ms = _since(node["props"].get("started_ts_ms"), finished)
        run_id = node["props"].get("run_id") or (self.run.run_id if self.run else None)
        extra = {"error": error, "duration_ms": duration_ms, "usage": usage,
                 "stop_reason": stop_reason}
        payload = clean({"id": call_id, "run_id": run_id, "output_summary": output,
                          "success": success, **extra})
        payload["metadata"] = metadata or {}
        props = clean({"status": "succeeded" if success else "failed", "success": success,
                        "output_summary": output or None, "finished_ts_ms": finished, **extra,
                        "outcome_metadata": metadata or None})
        correlation: object = AUTO
        if run_id and (self.run is None or self.run.run_id != run_id):
            # the call's run is over (or another run is open): chain to the call itself
            correlation = run_id
            if cause is AUTO:
                cause = self.creator_of(call_id) or AUTO
        self.emit(f"{what}.finished", payload, [update_node(call_id, props)], cause=cause,
                  correlation=correlation, links=(call_id,))
        return call_id


def _since(started: object, now: int) -> int | None:
    """Milliseconds from a recorded `started_ts_ms` to `now` (None when it is unknown)."""
    if type(started) is not int:
        return None
    return max(0, now - started)
