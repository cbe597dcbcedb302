"""LangChain onto the sink: a `langchain-core` callback handler.

    from git_gasp.bridges.langchain import GaspCallbackHandler, StateSink
    with StateSink.open("my-agent") as sink:
        chain.invoke(question, config={"callbacks": [GaspCallbackHandler(sink)]})

The outermost unit the handler sees (a chain, or a model or tool call made outside
any chain) is a run: it starts the run and its end finishes it ("failed" with its
error). Nested chains are not runs. Chat model and LLM calls become model calls
(model name, provider, output text, token usage), tool calls tool calls; an error,
or a ToolMessage with status "error", makes the call failed. Calls are keyed by
LangChain's run ids, so concurrent calls pair correctly. Every text is redacted
before it reaches the sink. Needs the extra: pip install 'git-gasp[langchain]'.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from uuid import UUID

from git_gasp.bridges.common import (
    RunScope,
    as_text,
    error_text,
    guarded,
    metadata_of,
    missing_extra,
    name,
    summary,
)
from git_gasp.runtime.sink import AgentSink, StateSink

try:
    from langchain_core.callbacks import BaseCallbackHandler
except ImportError as _exc:  # the extra is not installed
    raise missing_extra(__name__, "langchain", "langchain-core", _exc) from None

__all__ = ["GaspCallbackHandler", "StateSink"]  # StateSink too: one import line

# the metadata keys LangChain adds for LangSmith, left out of the call's metadata
_LS_PREFIXES = ("ls_", "lc_")


class GaspCallbackHandler(BaseCallbackHandler):
    """Records a LangChain agent's runs, model calls and tool calls into an AgentSink.

    `task` names the runs (default: the outermost chain's name and input); `goal` (a
    goal id or the title of a new goal) is what they serve. When the sink already has
    a run open (you started it), calls record into that run and it stays open.
    `errors` counts failures inside the handler itself (logged, never raised).
    """

    raise_error = False
    run_inline = True  # in async code, in order on the event loop, not on a thread pool

    def __init__(self, sink: AgentSink, *, task: str | None = None,
                 goal: str | None = None) -> None:
        self.sink = sink
        self.errors = 0
        self._scope = RunScope(sink, task=task, goal=goal)
        self._lock = self._scope.lock
        self._open: set[UUID] = set()  # every LangChain run seen starting, not yet ended
        self._calls: dict[UUID, str | None] = {}  # LangChain run id -> our call id

    # --- roots and runs ------------------------------------------------------------------
    def _start(self, run_id: UUID, parent_run_id: UUID | None, task: Callable[[], str],
               metadata: dict) -> None:
        """Note a LangChain run; a root (its parent unseen) enters the run scope."""
        self._open.add(run_id)
        if parent_run_id is None or parent_run_id not in self._open:
            self._scope.enter(run_id, task(), metadata)

    def _end(self, run_id: UUID, *, error: str | None = None,
             metadata: dict | None = None) -> None:
        self._open.discard(run_id)
        self._scope.leave(run_id, error=error, metadata=metadata)

    @guarded
    def on_chain_start(self, serialized: dict[str, Any] | None, inputs: Any, *, run_id: UUID,
                       parent_run_id: UUID | None = None, tags: list[str] | None = None,
                       metadata: dict[str, Any] | None = None, **kwargs: Any) -> None:
        name = _name(serialized, kwargs) or "chain"

        def task() -> str:  # only a root's: a graph's state can be big
            text = _io_text(inputs)
            return f"{name}: {text}" if text else name

        with self._lock:
            self._start(run_id, parent_run_id, task,
                        {"langchain_run_id": str(run_id), "chain": name, **_user(metadata)})

    @guarded
    def on_chain_end(self, outputs: Any, *, run_id: UUID, parent_run_id: UUID | None = None,
                     **kwargs: Any) -> None:
        with self._lock:
            root = self._scope.is_root(run_id)
            self._end(run_id, metadata={"output": summary(_io_text(outputs))} if root else None)

    @guarded
    def on_chain_error(self, error: BaseException, *, run_id: UUID,
                       parent_run_id: UUID | None = None, **kwargs: Any) -> None:
        with self._lock:
            if _is_interrupt(error):  # LangGraph's interrupt(): the run waits, it did not fail
                self._scope.note("interrupted")
                self._end(run_id)
            else:
                self._end(run_id, error=error_text(error))

    # --- model calls ---------------------------------------------------------------------
    @guarded
    def on_chat_model_start(self, serialized: dict[str, Any] | None,
                            messages: list[list[Any]], *, run_id: UUID,
                            parent_run_id: UUID | None = None, tags: list[str] | None = None,
                            metadata: dict[str, Any] | None = None, **kwargs: Any) -> None:
        last = messages[0][-1] if messages and messages[0] else None
        prompt = f"{getattr(last, 'type', 'message')}: {_content(last)}" if last else ""
        self._model_start(serialized, prompt, run_id, parent_run_id, metadata, kwargs)

    @guarded
    def on_llm_start(self, serialized: dict[str, Any] | None, prompts: list[str], *,
                     run_id: UUID, parent_run_id: UUID | None = None,
                     tags: list[str] | None = None, metadata: dict[str, Any] | None = None,
                     **kwargs: Any) -> None:
        self._model_start(serialized, prompts[-1] if prompts else "", run_id, parent_run_id,
                          metadata, kwargs)

    def _model_start(self, serialized: dict | None, prompt: str, run_id: UUID,
                     parent_run_id: UUID | None, metadata: dict | None, kwargs: dict) -> None:
        meta = metadata or {}
        model = _model_name(serialized, meta, kwargs)
        info = {"langchain_run_id": str(run_id), **_user(meta)}
        with self._lock:
            self._start(run_id, parent_run_id, lambda: f"{model}: {prompt}", info)
            provider = name("provider", _str(meta.get("ls_provider")))
            cid = self.sink.on_model_called(name("model", model) or "unknown", provider=provider,
                                            input_summary=summary(prompt),
                                            metadata=metadata_of(info))
            self._calls[run_id] = cid

    @guarded
    def on_llm_end(self, response: Any, *, run_id: UUID, parent_run_id: UUID | None = None,
                   **kwargs: Any) -> None:
        with self._lock:
            cid = self._calls.pop(run_id, None)
            if cid is not None:  # None: not seen starting, or its start failed (counted)
                output, usage = _generation(response)
                self.sink.on_model_finished(cid, output_summary=summary(output),
                                            usage=metadata_of(usage))
            self._end(run_id)

    @guarded
    def on_llm_error(self, error: BaseException, *, run_id: UUID,
                     parent_run_id: UUID | None = None, **kwargs: Any) -> None:
        with self._lock:
            cid = self._calls.pop(run_id, None)
            if cid is not None:  # None: not seen starting, or its start failed (counted)
                self.sink.on_model_finished(cid, error=error_text(error))
            self._end(run_id, error=error_text(error))

    # --- tool calls ----------------------------------------------------------------------
    @guarded
    def on_tool_start(self, serialized: dict[str, Any] | None, input_str: str, *,
                      run_id: UUID, parent_run_id: UUID | None = None,
                      tags: list[str] | None = None, metadata: dict[str, Any] | None = None,
                      inputs: dict[str, Any] | None = None, **kwargs: Any) -> None:
        tool = _name(serialized, kwargs) or "tool"
        info = {"langchain_run_id": str(run_id), **_user(metadata)}
        if kwargs.get("tool_call_id"):
            info["tool_call_id"] = str(kwargs["tool_call_id"])
        args = inputs if inputs is not None else input_str
        with self._lock:
            self._start(run_id, parent_run_id, lambda: f"{tool}: {as_text(args)}", info)
            cid = self.sink.on_tool_called(name("tool", tool) or "tool",
                                           input_summary=summary(args),
                                           metadata=metadata_of(info))
            self._calls[run_id] = cid

    @guarded
    def on_tool_end(self, output: Any, *, run_id: UUID, parent_run_id: UUID | None = None,
                    **kwargs: Any) -> None:
        text = _content(output) if hasattr(output, "content") else output
        failed = getattr(output, "status", None) == "error"  # a handled tool error
        with self._lock:
            cid = self._calls.pop(run_id, None)
            if cid is not None:  # None: not seen starting, or its start failed (counted)
                self.sink.on_tool_finished(cid, output_summary=summary(text),
                                           error=error_text(text or "error") if failed else None)
            self._end(run_id)

    @guarded
    def on_tool_error(self, error: BaseException, *, run_id: UUID,
                      parent_run_id: UUID | None = None, **kwargs: Any) -> None:
        with self._lock:
            cid = self._calls.pop(run_id, None)
            if cid is not None:  # None: not seen starting, or its start failed (counted)
                self.sink.on_tool_finished(cid, error=error_text(error))
            self._end(run_id, error=error_text(error))


# --- what LangChain hands over, as text --------------------------------------------------
def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _is_interrupt(error: BaseException) -> bool:
    """LangGraph's GraphInterrupt (interrupt(), NodeInterrupt), known by name: a graph
    pausing for input, not failing."""
    return any(cls.__name__ == "GraphInterrupt" for cls in type(error).__mro__)


def _name(serialized: dict | None, kwargs: dict) -> str | None:
    """The name LangChain gives a run: the `name` keyword (run_name), else the
    serialized object's name or class."""
    if _str(kwargs.get("name")):
        return kwargs["name"]
    if isinstance(serialized, dict):
        if _str(serialized.get("name")):
            return serialized["name"]
        ident = serialized.get("id")
        if isinstance(ident, list) and ident and _str(ident[-1]):
            return ident[-1]
    return None


def _model_name(serialized: dict | None, metadata: dict, kwargs: dict) -> str:
    params = kwargs.get("invocation_params") or {}
    for value in (params.get("model"), params.get("model_name"),
                  metadata.get("ls_model_name"), params.get("_type")):
        if _str(value):
            return value
    return _name(serialized, kwargs) or "unknown"


def _user(metadata: dict | None) -> dict:
    """The caller's metadata on a call, without the keys LangChain adds for LangSmith."""
    return {k: v for k, v in (metadata or {}).items() if not str(k).startswith(_LS_PREFIXES)}


def _content(message: Any) -> str:
    """A message's text: its string content, or its text blocks joined."""
    content = getattr(message, "content", message)
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [b if isinstance(b, str) else b.get("text", "") for b in content
                 if isinstance(b, str) or (isinstance(b, dict) and b.get("type") == "text")]
        return "".join(p for p in parts if isinstance(p, str))
    return as_text(content)


def _io_text(value: Any) -> str:
    """A chain's input or output as text: a string; the one value of a one-key dict or
    a graph state's `messages`; the last message of a message list; else JSON."""
    if isinstance(value, dict) and (len(value) == 1 or "messages" in value):
        value = value["messages"] if "messages" in value else next(iter(value.values()))
    if isinstance(value, list) and value and hasattr(value[-1], "content"):
        value = value[-1]
    if hasattr(value, "content"):
        value = _content(value)
    return as_text(value)


def _generation(response: Any) -> tuple[str, dict | None]:
    """The first generation's text (with the tools it calls) and the token usage."""
    gens = getattr(response, "generations", None) or [[]]
    gen = gens[0][0] if gens[0] else None
    message = getattr(gen, "message", None)
    text = _content(message) if message is not None else getattr(gen, "text", "") or ""
    calls = [c.get("name") for c in getattr(message, "tool_calls", None) or []
             if isinstance(c, dict)]
    if calls:
        text = (text + "\n" if text else "") + "tool calls: " + ", ".join(map(str, calls))
    usage = getattr(message, "usage_metadata", None)
    if not usage:
        out = getattr(response, "llm_output", None) or {}
        usage = out.get("token_usage") or out.get("usage")
    return text, _usage(usage)


def _usage(usage: Any) -> dict | None:
    """Token counts as input_tokens / output_tokens / total_tokens (OpenAI's prompt_ /
    completion_tokens renamed); other counts kept as given."""
    if not isinstance(usage, dict) or not usage:
        return None
    names = {"prompt_tokens": "input_tokens", "completion_tokens": "output_tokens"}
    return {names.get(k, k): v for k, v in usage.items()
            if isinstance(v, (int, float, dict)) and not isinstance(v, bool)}
