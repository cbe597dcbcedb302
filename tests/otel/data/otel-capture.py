"""How the otel-openai-agents-*.jsonl and otel-langchain-*.jsonl files beside this
script were made.

A real OpenAI Agents SDK agent (openai-agents 0.24.0) runs on a scripted model (one turn
calling two tools, one of which raises, then a final answer), instrumented by a real
OpenTelemetry instrumentation: OpenInference's (openinference-instrumentation-openai-agents
2.6.0) or OpenLLMetry's (opentelemetry-instrumentation-openai-agents 0.62.4). The
LangChain one is the same loop by hand over langchain-core 1.8.3's fake chat model,
instrumented by openinference-instrumentation-langchain 0.1.80. The spans are written as
OTLP/JSON, as the Collector's file exporter writes them (hex ids, integer enums). Not
part of the test run: run it in a scratch venv holding those packages plus
opentelemetry-sdk and opentelemetry-exporter-otlp-proto-common:

    python otel-capture.py openinference|openllmetry|langchain OUT.jsonl
"""

import asyncio
import base64
import json
import sys

import agents
from agents import Agent, Runner, function_tool
from agents.items import ModelResponse
from agents.models.interface import Model
from agents.tracing import generation_span
from agents.usage import Usage
from google.protobuf import json_format
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter


@function_tool
def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


@function_tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    raise RuntimeError("weather service timed out")


class ScriptedModel(Model):
    """Answers from a script, inside the SDK's own generation span (as its models do)."""

    def __init__(self) -> None:
        self.turn = 0

    async def get_response(self, system_instructions, input, model_settings, tools,
                           output_schema, handoffs, tracing, *, previous_response_id=None,
                           conversation_id=None, prompt=None):
        self.turn += 1
        if self.turn == 1:
            output = [
                ResponseFunctionToolCall(id="fc_1", call_id="call_mul_1", name="multiply",
                                         arguments='{"a": 6, "b": 7}', type="function_call",
                                         status="completed"),
                ResponseFunctionToolCall(id="fc_2", call_id="call_wx_1", name="get_weather",
                                         arguments='{"city": "Paris"}', type="function_call",
                                         status="completed")]
            usage = Usage(requests=1, input_tokens=120, output_tokens=30, total_tokens=150)
        else:
            text = ResponseOutputText(text="6 times 7 is 42; the weather is unknown.",
                                      type="output_text", annotations=[])
            output = [ResponseOutputMessage(id="msg_1", role="assistant", status="completed",
                                            type="message", content=[text])]
            usage = Usage(requests=1, input_tokens=180, output_tokens=12, total_tokens=192)
        asked = [{"role": "user", "content": str(input)[:200]}]
        with generation_span(model="scripted-gpt", input=asked, model_config={}) as span:
            span.span_data.output = [o.model_dump() for o in output]
            span.span_data.usage = {"input_tokens": usage.input_tokens,
                                    "output_tokens": usage.output_tokens}
        return ModelResponse(output=output, usage=usage, response_id=None)

    def stream_response(self, *args, **kwargs):
        raise NotImplementedError


def run_langchain(provider: TracerProvider) -> None:
    """A tool-calling loop over LangChain's fake chat model, one of two tools raising."""
    from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
    from langchain_core.runnables import RunnableLambda
    from langchain_core.tools import tool
    from openinference.instrumentation.langchain import LangChainInstrumentor

    LangChainInstrumentor().instrument(tracer_provider=provider)

    @tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @tool
    def lookup(term: str) -> str:
        """Look a term up."""
        raise RuntimeError("lookup backend unavailable")

    calls = [{"name": "add", "args": {"a": 2, "b": 3}, "id": "call_add_1"},
             {"name": "lookup", "args": {"term": "five"}, "id": "call_lookup_1"}]
    model = FakeMessagesListChatModel(responses=[
        AIMessage(content="", tool_calls=calls,
                  usage_metadata={"input_tokens": 40, "output_tokens": 9, "total_tokens": 49}),
        AIMessage(content="2 + 3 = 5.",
                  usage_metadata={"input_tokens": 70, "output_tokens": 6, "total_tokens": 76}),
    ])
    tools = {"add": add, "lookup": lookup}

    def loop(question: str) -> str:
        messages = [HumanMessage(question)]
        reply = model.invoke(messages)
        messages.append(reply)
        for call in reply.tool_calls:
            try:
                result = tools[call["name"]].invoke(call["args"])
            except RuntimeError as exc:
                result = f"error: {exc}"
            messages.append(ToolMessage(str(result), tool_call_id=call["id"]))
        return model.invoke(messages).content

    RunnableLambda(loop).with_config(run_name="calculator_agent").invoke("What is 2 + 3?")


def main(which: str, out_path: str) -> None:
    provider = TracerProvider(resource=Resource.create({"service.name": f"agents-{which}"}))
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    if which == "langchain":
        run_langchain(provider)
    else:
        run_agent(which, provider)
    provider.force_flush()
    request = json_format.MessageToDict(encode_spans(exporter.get_finished_spans()),
                                        use_integers_for_enums=True)
    for rs in request["resourceSpans"]:
        for ss in rs["scopeSpans"]:
            for span in ss["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in span:  # proto3 JSON has base64; OTLP/JSON has hex
                        span[key] = base64.b64decode(span[key]).hex()
    with open(out_path, "w") as fh:
        fh.write(json.dumps(request, separators=(",", ":")) + "\n")


def run_agent(which: str, provider: TracerProvider) -> None:
    """The OpenAI Agents SDK agent on the scripted model, under `which` instrumentation."""
    agents.set_trace_processors([])  # nothing goes to the OpenAI backend
    if which == "openinference":
        from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor
    else:
        from opentelemetry.instrumentation.openai_agents import OpenAIAgentsInstrumentor
    OpenAIAgentsInstrumentor().instrument(tracer_provider=provider)
    agent = Agent(name="Assistant", instructions="Use the tools.", model=ScriptedModel(),
                  tools=[multiply, get_weather])
    asyncio.run(Runner.run(agent, "What is 6 times 7, and the weather in Paris?"))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
