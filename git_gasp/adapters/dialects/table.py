"""The hook dialects: one table per agent, mapped onto the one recording path.

Every agent git-gasp records live runs the same program, ``git-gasp-hook AGENT``, from
its own hook settings; the payload is queued as it came and the drainer reads it
(``payloads.parse_hook_payload``) into one neutral :class:`payloads.HookEvent` whose
events are Claude Code's names (``SessionStart``, ``UserPromptSubmit``, ``PreToolUse``,
``PostToolUse``, ``PostToolUseFailure``, ``Stop``, ``SessionEnd``) plus the model events
``ModelRequest`` / ``ModelResponse``. A :class:`Dialect` says, for one agent, where its
settings live per scope, which of its events are installed and what each one means,
how a hook's message reaches the person, what the agent keeps on disk, and where its
instructions (``prime``) and its MCP servers are written. Adding an agent is an entry
here, a payload mapping in ``payloads.py`` when its fields differ, and tests.

Measured against the installed versions (``tested``): Claude Code 2.1.328 and Codex
0.171.0 (``payloads.py``), Gemini CLI 0.61.0 (its ``docs/hooks/reference.md``) and
Qwen Code 0.24.4 (its ``docs/features/hooks.md``), each with a live session
(``tests/e2e/test_dialect_sessions.py``; payloads in ``tests/adapters/data/``).
"""

from __future__ import annotations

from dataclasses import dataclass

MODEL_EVENTS = ("ModelRequest", "ModelResponse")  # neutral names of model-call events


@dataclass(frozen=True)
class Dialect:
    """What one agent speaks; see the module's docstring."""

    agent: str  # the name on `git-gasp-hook AGENT` and `git gasp adapt AGENT`
    title: str  # the agent's own name, for people
    package: str  # its npm package ("": none), for README and `adapt list`
    rung: int  # 1: native hooks, 2: a transcript on disk, 3: a model proxy
    settings: dict[str, str]  # scope -> settings file (~ = the home directory)
    events: dict[str, str]  # the agent's event -> the neutral event it records as
    tool_events: tuple[str, ...] = ()  # events whose entry takes a matcher ("*")
    async_events: tuple[str, ...] = ()  # run in the background, not waited for
    timeout_ms: bool = False  # the hook's timeout is in milliseconds, not seconds
    named: bool = False  # the hook entry carries a "name" (the agent lists hooks by it)
    instructions: str = "AGENTS.md"  # the file `prime` writes onto
    mcp: tuple[str, str] | None = None  # (settings file, key of its server table)
    message: str = ""  # how a hook's message reaches the person
    keeps: str = ""  # what the agent keeps on disk
    records: tuple[str, ...] = ()  # what a session records
    tested: str = ""  # how it is tested


_CLAUDE_EVENTS = ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse",
                  "PostToolUseFailure", "Stop", "SessionEnd")
_RAW = ("prompts", "tool calls", "tool results")
_LIFTED = ("goal", "eval", "failure", "patch", "decision")

DIALECTS: dict[str, Dialect] = {d.agent: d for d in (
    Dialect(
        agent="claude-code", title="Claude Code", package="@anthropic-ai/claude-code", rung=1,
        settings={"project": ".claude/settings.json", "local": ".claude/settings.local.json",
                  "user": "~/.claude/settings.json"},
        events={e: e for e in _CLAUDE_EVENTS},
        tool_events=("PreToolUse", "PostToolUse", "PostToolUseFailure"),
        async_events=("PreToolUse",), instructions="CLAUDE.md", mcp=(".mcp.json", "mcpServers"),
        message="stderr of a hook (SessionStart: its stdout, added to the context)",
        keeps="~/.claude/projects/<project>/<session>.jsonl (archived at the run's end)",
        records=(*_RAW, *_LIFTED),
        tested="live, 2.1.328 (tests/e2e/test_live_sessions.py)"),
    Dialect(
        agent="codex", title="Codex", package="@openai/codex", rung=1,
        settings={"project": ".codex/hooks.json"},
        events={e: e for e in _CLAUDE_EVENTS if e != "PostToolUseFailure"},
        tool_events=("PreToolUse", "PostToolUse"), instructions="AGENTS.md",
        mcp=(".codex/config.toml", "mcp_servers"),
        message="stderr of a hook",
        keeps="~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl (exit codes; archived)",
        records=(*_RAW, *_LIFTED),
        tested="live, 0.171.0 (tests/e2e/test_live_sessions.py)"),
    Dialect(
        agent="gemini", title="Gemini CLI", package="@google/gemini-cli", rung=1,
        settings={"project": ".gemini/settings.json", "user": "~/.gemini/settings.json"},
        events={"SessionStart": "SessionStart", "BeforeAgent": "UserPromptSubmit",
                "BeforeModel": "ModelRequest", "AfterModel": "ModelResponse",
                "BeforeTool": "PreToolUse", "AfterTool": "PostToolUse",
                "AfterAgent": "Stop", "SessionEnd": "SessionEnd"},
        tool_events=("BeforeTool", "AfterTool"), timeout_ms=True, named=True,
        instructions="GEMINI.md", mcp=(".gemini/settings.json", "mcpServers"),
        message="a JSON systemMessage on stdout (the held-state notice at SessionStart); "
                "a hook's stderr is not shown when it exits 0",
        keeps="~/.gemini/tmp/<project>/chats/session-*.jsonl (archived at the run's end)",
        records=(*_RAW, "model calls (BeforeModel/AfterModel, with the model)", *_LIFTED),
        tested="live, 0.61.0 (tests/e2e/test_dialect_sessions.py)"),
    Dialect(
        agent="qwen-code", title="Qwen Code", package="@qwen-code/qwen-code", rung=1,
        settings={"project": ".qwen/settings.json", "user": "~/.qwen/settings.json"},
        events={e: e for e in _CLAUDE_EVENTS}, tool_events=_CLAUDE_EVENTS[2:5], named=True,
        instructions="QWEN.md", mcp=(".qwen/settings.json", "mcpServers"),
        message="a JSON systemMessage on stdout (plain text there would reach the model "
                "at SessionStart); stderr only in debug mode",
        keeps="~/.qwen/projects/<project>/chats/<session>.jsonl (model calls; archived)",
        records=(*_RAW, "model calls (from its transcript at Stop, with the model)",
                 *_LIFTED),
        tested="live, 0.24.4 (tests/e2e/test_dialect_sessions.py)"),
    Dialect(
        agent="copilot", title="GitHub Copilot CLI", package="@github/copilot", rung=1,
        settings={"project": ".github/hooks/git-gasp.json"},
        events={e: e for e in _CLAUDE_EVENTS},  # PascalCase: snake_case payloads
        instructions=".github/copilot-instructions.md",
        message="none: a command hook's output is not shown (its stderr is logged)",
        keeps="~/.copilot/session-state/ (the session's events)",
        records=(*_RAW, *_LIFTED),
        tested="payloads from GitHub's CLI hooks reference replayed "
               "(tests/adapters/test_copilot_payloads.py); live needs a GitHub sign-in"),
    Dialect(
        agent="cursor", title="Cursor", package="", rung=1,
        settings={"project": ".cursor/hooks.json", "user": "~/.cursor/hooks.json"},
        events={"sessionStart": "SessionStart", "beforeSubmitPrompt": "UserPromptSubmit",
                "afterShellExecution": "PostToolUse", "afterFileEdit": "PostToolUse",
                "afterMCPExecution": "PostToolUse", "stop": "Stop",
                "sessionEnd": "SessionEnd"},
        instructions=".cursor/rules/git-gasp.mdc", mcp=(".cursor/mcp.json", "mcpServers"),
        message="none for these events (their output is read as JSON, and git-gasp's "
                "hook writes none)",
        keeps="its chats in the editor's own database (not read)",
        records=(*_RAW, *_LIFTED),
        tested="payloads from Cursor's hooks schema replayed "
               "(tests/adapters/test_cursor_payloads.py); Cursor is an editor, no CLI here"),
    Dialect(
        agent="droid", title="Factory Droid", package="@factory/cli", rung=1,
        settings={"project": ".factory/settings.json",
                  "local": ".factory/settings.local.json", "user": "~/.factory/settings.json"},
        events={e: e for e in _CLAUDE_EVENTS if e != "PostToolUseFailure"},
        tool_events=("PreToolUse", "PostToolUse"), instructions="AGENTS.md",
        mcp=(".factory/mcp.json", "mcpServers"),
        message="stderr of a hook, as Claude Code's",
        keeps="~/.factory/sessions/ (the session's JSONL; not read)",
        records=(*_RAW, *_LIFTED),
        tested="payloads from Factory's hooks reference replayed "
               "(tests/adapters/test_droid_payloads.py); Droid needs a Factory sign-in"),
    Dialect(
        agent="opencode", title="OpenCode", package="opencode-ai", rung=1,
        settings={"project": ".opencode/plugins/git-gasp.js"}, mcp=("opencode.json", "mcp"),
        events={"session.created": "SessionStart", "chat.message": "UserPromptSubmit",
                "tool.execute.before": "PreToolUse", "tool.execute.after": "PostToolUse",
                "session.idle": "Stop", "session.deleted": "SessionEnd",
                "message.updated": "ModelResponse"},
        instructions="AGENTS.md",
        message="none: the plugin discards the hook's output",
        keeps="~/.local/share/opencode/storage/ (sessions, messages, parts; not read)",
        records=(*_RAW, "model calls (each finished assistant message, with the model "
                 "and its tokens)", *_LIFTED),
        tested="live, 1.18.33 (tests/e2e/test_opencode_session.py), and its plugin's "
               "events replayed"),
)}


def dialect(agent: str) -> Dialect:
    """The dialect of `agent` (one of ``base.agentnames.AGENTS``)."""
    return DIALECTS[agent]


def neutral_event(agent: str | None, event: str) -> str | None:
    """The neutral event the `agent`'s `event` records as (None: one it does not)."""
    d = DIALECTS.get(agent or "")
    if d is None:
        return event
    return d.events.get(event)
