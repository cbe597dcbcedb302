"""Benchmark: what the framework bridges cost an agent, against the framework alone and
against the sink they record through.

Each framework runs one agent of N steps (a model call that asks for a tool, then the
tool), offline on its own fake model:

  LangChain      a hand-written tool loop in a `@chain`, GenericFakeChatModel, a `@tool`
  OpenAI Agents  `Runner.run_sync` on a fake `Model`, one function call per turn

three ways, round-robin, `--repeat` times, medians:

  (a) framework   the agent alone (LangChain: no callbacks; the SDK: no trace processor)
  (b) bridge      the agent with the bridge recording into a StateSink (fresh `git gasp
                  init` repo each time, durable appends with fsync; `--no-fsync`
                  leaves the fsync out, so the figures show CPU cost without the disk)
  (c) sink        the same N model and N tool calls made straight on a StateSink, no
                  framework (the cost of recording itself)

Printed per framework: absolute times and per-step times, (b)/(a) (what recording
costs the agent) and the bridge's own share, ((b) - (a) - (c)) / (c): the mapping and
redaction over the sink's cost. Never asserts.

    .venv/bin/python bench/bench_bridges.py [--quick] [--steps N] [--repeat R] [--no-fsync]
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("OPENAI_API_KEY", "sk-bench-dummy")  # nothing is sent anywhere

from git_gasp.runtime.sink import StateSink  # noqa: E402

GASP = [str(Path(sys.executable).with_name("git-gasp"))]


def fresh_repo(parent: Path, n: int) -> Path:
    repo = parent / f"agent{n}"
    subprocess.run([*GASP, "init", str(repo), "--agent-id", "bench"], check=True,
                   capture_output=True)
    return repo


# --- LangChain ---------------------------------------------------------------------------
def langchain_agent(steps: int):
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage, HumanMessage
    from langchain_core.runnables import chain
    from langchain_core.tools import tool

    @tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    replies = [AIMessage("", tool_calls=[{"name": "add", "args": {"a": i, "b": 1},
                                          "id": f"c{i}"}],
                         usage_metadata={"input_tokens": 20, "output_tokens": 5,
                                         "total_tokens": 25})
               for i in range(steps)]
    model = GenericFakeChatModel(messages=iter(replies))

    @chain
    def agent(question: str) -> int:
        messages, total = [HumanMessage(question)], 0
        for _ in range(steps):
            reply = model.invoke(messages[-4:])
            messages.append(reply)
            for call in reply.tool_calls:
                out = add.invoke(call)
                messages.append(out)
                total += int(out.content)
        return total

    return agent


FSYNC = {"fsync": True}  # set by main: with --no-fsync the appends skip fsync


def run_langchain(steps: int, repo: Path | None) -> float:
    agent = langchain_agent(steps)
    if repo is None:
        t0 = time.perf_counter()
        agent.invoke("add them up")
        return time.perf_counter() - t0
    from git_gasp.bridges.langchain import GaspCallbackHandler

    with StateSink.open(repo, worker_id="bench", **FSYNC) as sink:
        t0 = time.perf_counter()
        agent.invoke("add them up", config={"callbacks": [GaspCallbackHandler(sink)]})
        elapsed = time.perf_counter() - t0
    assert sink.errors == 0, sink.last_error
    return elapsed


# --- OpenAI Agents SDK -------------------------------------------------------------------
def openai_agent(steps: int):
    from agents import Agent, function_tool
    from agents.items import ModelResponse
    from agents.models.interface import Model
    from agents.tracing import generation_span
    from agents.usage import Usage
    from openai.types.responses import (
        ResponseFunctionToolCall,
        ResponseOutputMessage,
        ResponseOutputText,
    )

    @function_tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    class Fake(Model):
        def __init__(self) -> None:
            self.turn = 0

        async def get_response(self, system_instructions, input, model_settings, tools,
                               output_schema, handoffs, tracing, *, previous_response_id=None,
                               conversation_id=None, prompt=None):
            with generation_span(model="fake-model", disabled=tracing.is_disabled()) as span:
                self.turn += 1
                if self.turn > steps:
                    out = [ResponseOutputMessage(
                        id="m", type="message", role="assistant", status="completed",
                        content=[ResponseOutputText(type="output_text", text="done",
                                                    annotations=[])])]
                else:
                    out = [ResponseFunctionToolCall(
                        id=f"f{self.turn}", call_id=f"c{self.turn}", type="function_call",
                        name="add", arguments=f'{{"a":{self.turn},"b":1}}')]
                span.span_data.usage = {"input_tokens": 20, "output_tokens": 5}
                return ModelResponse(output=out, usage=Usage(requests=1, input_tokens=20,
                                                             output_tokens=5, total_tokens=25),
                                     response_id=None)

        def stream_response(self, *args, **kwargs):
            raise NotImplementedError

    return Agent(name="adder", tools=[add], model=Fake())


def run_openai(steps: int, repo: Path | None) -> float:
    from agents import Runner, set_trace_processors

    agent = openai_agent(steps)
    if repo is None:
        set_trace_processors([])
        t0 = time.perf_counter()
        Runner.run_sync(agent, "add them up", max_turns=steps + 5)
        return time.perf_counter() - t0
    from git_gasp.bridges.openai_agents import GaspTracingProcessor

    with StateSink.open(repo, worker_id="bench", **FSYNC) as sink:
        set_trace_processors([GaspTracingProcessor(sink)])
        t0 = time.perf_counter()
        Runner.run_sync(agent, "add them up", max_turns=steps + 5)
        elapsed = time.perf_counter() - t0
        set_trace_processors([])
    assert sink.errors == 0, sink.last_error
    return elapsed


# --- the sink alone ----------------------------------------------------------------------
def run_sink(steps: int, repo: Path) -> float:
    with StateSink.open(repo, worker_id="bench", **FSYNC) as sink:
        t0 = time.perf_counter()
        sink.on_run_started("add them up")
        for i in range(steps):
            m = sink.on_model_called("fake-model", input_summary="human: add them up")
            sink.on_model_finished(m, output_summary="tool calls: add",
                                   usage={"input_tokens": 20, "output_tokens": 5})
            t = sink.on_tool_called("add", input_summary=f'{{"a": {i}, "b": 1}}')
            sink.on_tool_finished(t, output_summary=str(i + 1))
        sink.on_run_finished("succeeded")
        elapsed = time.perf_counter() - t0
    assert sink.errors == 0, sink.last_error
    return elapsed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="20 steps, 3 repeats")
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--no-fsync", action="store_true",
                    help="appends without fsync: the CPU cost alone, without the disk's noise")
    args = ap.parse_args()
    steps, repeat = (20, 3) if args.quick else (args.steps, args.repeat)
    FSYNC["fsync"] = not args.no_fsync
    print(f"bench_bridges: {steps} steps (a model call and a tool call each), {repeat} "
          f"repeats, medians, {'fsync per append' if FSYNC['fsync'] else 'no fsync'}; "
          f"Python {platform.python_version()}, {os.cpu_count()} cores")
    frameworks = {"LangChain": run_langchain, "OpenAI Agents": run_openai}
    times: dict[tuple[str, str], list[float]] = {}
    scratch = Path(tempfile.mkdtemp(prefix="bench-bridges-"))
    try:
        n = 0
        for fn in frameworks.values():  # warm up: imports, first-call caches
            n += 1
            fn(2, None)
            fn(2, fresh_repo(scratch, n))
        for _ in range(repeat):
            for name, fn in frameworks.items():
                times.setdefault((name, "framework"), []).append(fn(steps, None))
                n += 1
                times.setdefault((name, "bridge"), []).append(fn(steps, fresh_repo(scratch, n)))
            n += 1
            times.setdefault(("sink", "sink"), []).append(run_sink(steps, fresh_repo(scratch, n)))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    sink = statistics.median(times[("sink", "sink")])
    print(f"  (c) sink alone         {sink * 1000:8.1f} ms  "
          f"{sink / steps * 1000:6.2f} ms/step")
    for name in frameworks:
        a = statistics.median(times[(name, "framework")])
        b = statistics.median(times[(name, "bridge")])
        share = (b - a - sink) / sink
        print(f"  {name}:")
        print(f"    (a) framework        {a * 1000:8.1f} ms  {a / steps * 1000:6.2f} ms/step")
        print(f"    (b) with the bridge  {b * 1000:8.1f} ms  {b / steps * 1000:6.2f} ms/step"
              f"   (b)/(a) = {b / a:5.2f}x   bridge over sink ((b)-(a)-(c))/(c) = "
              f"{share:+.2f}")


if __name__ == "__main__":
    main()
