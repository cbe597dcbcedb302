"""`gasp_recall` and the memory resource: the live facts of memory/facts.jsonl (the
latest of each supersede chain), with what each was derived from."""

from __future__ import annotations

from typing import Any

from git_gasp.base.files import read_file
from git_gasp.mcp.search import check_limit
from git_gasp.runtime.memory import Facts

DEFAULT_LIMIT = 20


def recall(state, query: str, limit: int | None = None) -> dict[str, Any]:
    """The live facts holding every word of `query` (ignoring case; an empty query:
    all of them), newest first."""
    limit = check_limit(limit, DEFAULT_LIMIT)
    words = query.lower().split() if isinstance(query, str) else []
    hits: list[dict[str, Any]] = []
    more = False
    for fact in reversed(Facts(state).live()):
        text = str(fact["text"]).lower()
        if all(w in text for w in words):
            if len(hits) == limit:
                more = True
                break
            hits.append({"id": fact["id"], "text": fact["text"],
                         "derived_from": fact["derived_from"],
                         "supersedes": fact["supersedes"], "ts_ms": fact["ts_ms"]})
    return {"query": query, "facts": hits, "more": more}


def active_memory(state) -> bytes:
    """memory/active_memory.md as its bytes, or when it was never written, what
    `git gasp memory synthesize` would write (nothing is written here)."""
    facts = Facts(state)
    try:
        return read_file(facts.active_path, root=facts.root)
    except FileNotFoundError:
        pass
    lines = ["# Active memory", "", "Not synthesized yet; the live facts:", ""]
    live = facts.live()
    lines += [f"- {f['text']}  <!-- {f['id']} -->" for f in live] or ["No facts yet."]
    return ("\n".join(lines) + "\n").encode()
