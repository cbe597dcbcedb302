"""An AgentSink that only records what it is told: the bridges against the protocol
alone, with no StateSink behind it."""

from __future__ import annotations

import itertools


class RecordingSink:
    """Every callback appended to `calls` as (name, first argument, keywords); each
    returns a fresh id. Callbacks named in `fail` raise (a third-party sink that breaks
    the protocol's never-raise rule)."""

    def __init__(self, fail: tuple[str, ...] = ()) -> None:
        self.calls: list[tuple[str, object, dict]] = []
        self.fail = fail
        self._ids = itertools.count(1)

    def _record(self, name: str, first: object, kw: dict) -> str:
        self.calls.append((name, first, kw))
        if name in self.fail:
            raise RuntimeError(f"{name} broke")
        return f"{name.split('_')[1]}_{next(self._ids)}"

    def names(self) -> list[str]:
        return [name for name, _, _ in self.calls]

    def on_run_started(self, task, *, goal=None, metadata=None, run_id=None):
        return self._record("on_run_started", task, {"goal": goal, "metadata": metadata})

    def on_run_finished(self, outcome="succeeded", *, error=None, metadata=None):
        return self._record("on_run_finished", outcome, {"error": error, "metadata": metadata})

    def on_model_called(self, model, *, provider=None, input_summary="", metadata=None):
        return self._record("on_model_called", model, {"provider": provider,
                                                       "input_summary": input_summary})

    def on_model_finished(self, call_id, *, output_summary="", error=None, usage=None,
                          metadata=None):
        return self._record("on_model_finished", call_id, {
            "output_summary": output_summary, "error": error, "usage": usage})

    def on_tool_called(self, tool, *, input_summary="", metadata=None):
        return self._record("on_tool_called", tool, {"input_summary": input_summary})

    def on_tool_finished(self, call_id, *, output_summary="", error=None, metadata=None):
        return self._record("on_tool_finished", call_id, {"output_summary": output_summary,
                                                          "error": error})

    def on_eval(self, command, status, *, score=None, patch=None, metadata=None):
        return self._record("on_eval", command, {"status": status})

    def on_patch(self, title, *, metadata=None, **links):
        return self._record("on_patch", title, links)

    def on_decision(self, status, reason, *, patch=None, metadata=None):
        return self._record("on_decision", status, {"reason": reason, "patch": patch})
