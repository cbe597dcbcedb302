"""The MCP server: the tools and resources of `git gasp mcp`, on the official `mcp` SDK
(`mcp.server.mcpserver.MCPServer`, stdio transport). The only module that imports it.

Every tool answers with structured content (a JSON object holding full ids) and the
same object as text. A refusal the tool foresaw (an unknown or ambiguous id, a bad
argument, a write that is turned off, a lease another writer holds) is a GaspError,
answered as a tool error (``isError``) of one line; the SDK answers an argument of the
wrong type the same way, and any other failure as a tool error too, so the server
keeps serving.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any
from urllib.parse import quote

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from pydantic import Field, ValidationError

from git_gasp import __version__
from git_gasp.base.agentconfig import read_config
from git_gasp.base.errors import GaspError
from git_gasp.mcp import files, knowledge, ready, recall, search, writes
from git_gasp.mcp.service import Service

NAME = "gasp"
INSTRUCTIONS = (
    "The agent's own typed history (git-gasp): goals, tasks, runs, patches, evals, "
    "decisions, failures, observations and memory facts. Search it before repeating "
    "work; ids may be given as unique prefixes.")

Limit = Annotated[int | None, Field(description="At most this many results (1-200).")]


class GaspServer(MCPServer):
    """MCPServer that answers a call to a write tool it does not list with why."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context=None):
        if name in writes.WRITE_TOOLS and self._tool_manager.get_tool(name) is None:
            raise ToolError(str(writes.disabled(name)))
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):  # pydantic's many lines: one
                raise ToolError(f"{name}: {bad_arguments(exc.__cause__)}") from exc.__cause__
            raise


def bad_arguments(exc: ValidationError) -> str:
    """A refusal of the arguments as one line: each bad field and why."""
    said = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err.get("loc", ())) or "arguments"
        said.append(f"{where}: {err.get('msg', 'invalid')}")
    return "bad arguments: " + "; ".join(said)


def _answer(fn, *args) -> dict[str, Any]:
    """`fn(*args)`, a GaspError as the tool error it is (its one line)."""
    try:
        return fn(*args)
    except GaspError as exc:
        raise ToolError(" ".join(str(exc).split())) from None


def build(service: Service) -> MCPServer:
    """The server over `service`, its write tools listed when ``[mcp] write = true``."""
    config = read_config(service.root).mcp
    server = GaspServer(NAME, version=__version__, instructions=INSTRUCTIONS,
                        log_level="WARNING")
    _read_tools(server, service)
    if knowledge.configured():
        _kg_tools(server)
    if config.write:
        _write_tools(server, service)
    _resources(server, service)
    return server


def _read_tools(server: MCPServer, service: Service) -> None:
    def locked(fn):
        """`fn(state)` over the fold brought up to date, one call at a time."""
        with service.lock:
            return _answer(lambda: fn(service.state()))

    @server.tool()
    def gasp_search(
        query: Annotated[str, Field(description="Words that must all occur (any case).")],
        kinds: Annotated[list[str] | None, Field(
            description="Node kinds to search (default: goal, task, run, patch, eval, "
                        "decision, failure, observation, hypothesis).")] = None,
        status: Annotated[str | None, Field(description="Only nodes of this status.")] = None,
        limit: Limit = None,
        run: Annotated[str | None, Field(description="Only events of this run (an id or a "
                                                     "unique prefix).")] = None,
        agent: Annotated[str | None, Field(description="Only runs whose agent contains "
                                                       "this (any case).")] = None,
        person: Annotated[str | None, Field(description="Only runs whose person contains "
                                                        "this (any case).")] = None,
        since_ms: Annotated[int | None, Field(description="Only events at or after this "
                                                          "time (epoch ms).")] = None,
    ) -> dict[str, Any]:
        """Search the agent's history: nodes whose events match, best first, with ids and
        the event, log line and run of each."""
        return locked(lambda st: search.search(st, query, kinds, status, limit, run=run,
                                               agent=agent, person=person,
                                               since_ms=since_ms))

    @server.tool()
    def gasp_lineage(
        id: Annotated[str, Field(description="A node id or a unique prefix of one.")],  # noqa: A002
        depth: Annotated[int, Field(ge=0, le=6, description="Hops to follow.")] = 2,
    ) -> dict[str, Any]:
        """A node's causal neighbourhood: what it serves or advances, what validated,
        approved or rejected it, its run; nodes and relations within `depth` hops."""
        return locked(lambda st: service.lineage(service.node_id(id), depth))

    @server.tool()
    def gasp_recall(
        query: Annotated[str, Field(description="Words that must all occur; empty: all.")] = "",
        limit: Limit = None,
    ) -> dict[str, Any]:
        """Memory facts (the latest of each supersede chain), newest first, each with the
        events or nodes it was derived from."""
        return locked(lambda st: recall.recall(st, query, limit))

    @server.tool()
    def gasp_ready(limit: Limit = None) -> dict[str, Any]:
        """Open goals and tasks that nothing blocks and no promoted patch has closed
        (oldest first), and those held back with what holds them."""
        return locked(lambda st: ready.ready(st.graph, limit, service.adjacency))


def _kg_tools(server: MCPServer) -> None:
    @server.tool()
    def kg_search(
        query: Annotated[str, Field(description="Keywords or a regex (as `git gasp kg "
                                                "search`).")],
        limit: Limit = None,
    ) -> dict[str, Any]:
        """Search the knowledge graph: ranked entities and relations."""
        return _answer(knowledge.kg_search, query, limit)

    @server.tool()
    def kg_read(
        id: Annotated[str, Field(description="An entity id (kebab-case).")],  # noqa: A002
    ) -> dict[str, Any]:
        """Read one knowledge-graph entity: its file and its outgoing relations."""
        return _answer(knowledge.kg_read, id)


def _write_tools(server: MCPServer, service: Service) -> None:
    @server.tool()
    def gasp_remember(
        text: Annotated[str, Field(description="The fact, in words.")],
        derived_from: Annotated[list[str], Field(
            min_length=1, description="Event or node ids (or prefixes) it was learned "
                                      "from.")],
    ) -> dict[str, Any]:
        """Append a memory fact (memory/facts.jsonl); returns its id."""
        return _answer(writes.remember, service, text, derived_from)

    @server.tool()
    def gasp_observe(
        summary: Annotated[str, Field(description="What was observed.")],
        about: Annotated[str | None, Field(description="The node observed (id or "
                                                       "prefix).")] = None,
        source: Annotated[str | None, Field(description="Where it came from.")] = None,
    ) -> dict[str, Any]:
        """Record an observation.created event; returns the observation's id."""
        return _answer(writes.observe, service, summary, about, source)

    @server.tool()
    def gasp_decide(
        status: Annotated[str, Field(description="Approved or Rejected.")],
        reason: Annotated[str, Field(description="Why.")],
        patch: Annotated[str | None, Field(description="The patch decided on (Approved "
                                                       "promotes it, policy permitting).")]
        = None,
    ) -> dict[str, Any]:
        """Record a decision.created event; returns the decision's id."""
        return _answer(writes.decide, service, status, reason, patch)


def _resources(server: MCPServer, service: Service) -> None:
    root = Path(service.root)

    @server.resource("gasp://memory/active_memory.md", name="active_memory.md",
                     mime_type="text/markdown",
                     description="The agent's active memory (the live facts).")
    def active_memory() -> str | bytes:
        with service.lock:
            return files.as_content(recall.active_memory(service.state()))

    for rel in files.identity_files(root):
        name = rel.split("/", 1)[1]
        _identity_resource(server, root, name)


def identity_uri(name: str) -> str:
    """The resource URI of identity/`name`: the name percent-encoded (its bytes, as the
    file system gave them), so no character of it is read as URI syntax or as a template
    (`notes{x}.md` is a file, not a parameter)."""
    return "gasp://identity/" + quote(name.encode("utf-8", "surrogateescape"), safe="/")


def _identity_resource(server: MCPServer, root: Path, name: str) -> None:
    shown = name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")

    @server.resource(identity_uri(name), name=f"identity/{shown}",
                     mime_type="text/markdown" if name.endswith(".md") else None,
                     description=f"The agent's identity file {shown}.")
    def identity() -> str | bytes:
        try:
            return files.as_content(files.read_identity(root, name))
        except GaspError as exc:
            raise ResourceError(str(exc)) from None


def serve(root: str | Path, start: str | Path | None = None) -> None:
    """Fold the agent at `root` once and serve MCP over stdin/stdout until EOF (the hooks'
    queue of `start`, the directory it was started in, recorded before each answer)."""
    build(Service(root, start=start)).run("stdio")
