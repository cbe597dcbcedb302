"""The OpenTelemetry GenAI semantic conventions the export writes and the import reads.

Checked against open-telemetry/semantic-conventions-genai **v0.1.0**, the first release
of the GenAI conventions in their own repository (on semantic-conventions 1.45.0; the
main repository deprecated its ``gen_ai.*`` pages in 1.42.0): the spans of
``docs/gen-ai/gen-ai-spans.md`` and ``gen-ai-agent-spans.md`` and the v0.1.0 changelog.
The export was checked against semantic-conventions 1.41.1 before.

What changed for us since 1.41.1:

- new ``gen_ai.operation.name`` values: ``create_agent``, ``plan``, ``invoke_workflow``
  (its span merged into the internal ``invoke_agent`` span) and the memory operations
  (``create_memory_store``, ``create_memory``, ``search_memory``, ``update_memory``,
  ``upsert_memory``, ``delete_memory``, ``delete_memory_store``);
- ``gen_ai.agent.id`` is no longer an attribute of the internal ``invoke_agent`` span
  (the span a GASP run exports as): the export leaves it out;
- ``gen_ai.conversation.id`` carries the session (conversation, thread): the export
  writes the session a run recorded, the import keeps it;
- ``gen_ai.workflow.name`` is replaced by ``gen_ai.agent.name`` (still read).

``OTEL_SEMCONV_STABILITY_OPT_IN``: v0.1.0's transition plan binds the instrumentations
that emitted v1.36.0 of the conventions or earlier — they keep that by default and emit
the latest only under ``gen_ai_latest_experimental`` (a value of the comma-separated
list), never both. The export never emitted a v1.36-or-earlier name (it wrote
``gen_ai.provider.name``, not ``gen_ai.system``), so under every setting it writes the
latest version, v0.1.0, and none of the old names: exactly what
``gen_ai_latest_experimental`` asks for, and what the plan's default ("keep emitting
what you emitted") means for an exporter already past 1.36. The import reads every
version whatever the variable says.
"""

from __future__ import annotations

CONVENTIONS = "semantic-conventions-genai v0.1.0"

INVOKE_AGENT = "invoke_agent"
AGENT_OPS = frozenset({INVOKE_AGENT, "invoke_workflow"})
MODEL_OPS = frozenset({"chat", "text_completion", "generate_content"})
EXECUTE_TOOL = "execute_tool"
# an agent's memory operations: each recorded as a tool call named by its operation
MEMORY_OPS = frozenset({"create_memory_store", "create_memory", "search_memory",
                        "update_memory", "upsert_memory", "delete_memory",
                        "delete_memory_store"})
# recognised, and neither a run nor a call: creating an agent is not running it, and a
# plan span is a phase of the run that holds it
OTHER_OPS = frozenset({"create_agent", "plan", "embeddings", "retrieval"})

# attributes read, the current name first, then the older and the other conventions'
AGENT_NAMES = ("gen_ai.agent.name", "gen_ai.workflow.name", "agent.name",
               "traceloop.entity.name")
MODEL_NAMES = ("gen_ai.request.model", "gen_ai.response.model", "llm.model_name")
PROVIDER_NAMES = ("gen_ai.provider.name", "gen_ai.system", "llm.provider", "llm.system")
TOOL_NAMES = ("gen_ai.tool.name", "tool.name", "traceloop.entity.name")
CONVERSATION_IDS = ("gen_ai.conversation.id", "session.id")
INPUT_TOKENS = ("gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens",
                "llm.token_count.prompt", "llm.usage.prompt_tokens")
OUTPUT_TOKENS = ("gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens",
                 "llm.token_count.completion", "llm.usage.completion_tokens")
