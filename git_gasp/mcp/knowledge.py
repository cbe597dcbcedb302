"""`kg_search` and `kg_read`: the Perstate knowledge graph `git gasp kg` keeps, read
through the same code (`kg.workspace.resolve`, `kg.search.run`); offered only when one
is configured (~/.perstate/config.yml names a default repository)."""

from __future__ import annotations

from typing import Any

from git_gasp.base.errors import GaspError, UsageError
from git_gasp.kg import search
from git_gasp.kg.config import load
from git_gasp.kg.ids import check_existing_id
from git_gasp.kg.model import entity_rel, read_text
from git_gasp.kg.workspace import resolve
from git_gasp.mcp.search import check_limit


def configured() -> bool:
    """Whether a knowledge graph is configured for this user."""
    try:
        cfg = load()
    except GaspError:
        return False
    return cfg.exists and bool(cfg.default_repo)


def _workspace():
    return resolve(None, None)


def kg_search(query: str, limit: int | None = None) -> dict[str, Any]:
    """The ranked entities and relations matching `query` (as `kg search --json`)."""
    if not isinstance(query, str) or not query.strip():
        raise UsageError("query must hold at least one word")
    ws = _workspace()
    res = search.run(ws.path, query, limit=check_limit(limit))
    return {"query": query, "results": res.hits, "more": res.more, "branch": ws.branch}


def kg_read(entity_id: str) -> dict[str, Any]:
    """An entity's file (front matter and body) and its outgoing relations."""
    if not isinstance(entity_id, str) or not entity_id.strip():
        raise UsageError("id must be an entity id")
    eid = check_existing_id(entity_id.strip())
    ws = _workspace()
    text = read_text(ws.path, entity_rel(eid))
    if text is None:
        raise UsageError(f"no entity {eid!r} in the knowledge graph ({ws.branch})")
    relations = [{"type": rtype, "to": dst}
                 for rtype, dst in search.outgoing(ws.path, eid, None, False)]
    return {"id": eid, "path": entity_rel(eid), "text": text, "relations": relations}
