"""`git gasp export agent-trace`: one Agent Trace record (cursor/agent-trace 0.1.0,
``schemas/trace-record.json``) per patch that pins a commit.

- ``vcs``: ``{"type": "git", "revision": <the commit, full id>}``
- ``files[].conversations[].ranges``: the lines that commit added (its diff), numbered
  as in the commit; ``contributor``: ``{"type": "ai"}`` with ``model_id`` (models.dev's
  ``provider/model``) from the last model call of the patch's run, where one was recorded
- ``related``: ``[{"type": "run", "url": "gasp:run/<run id>"}]`` when the patch has a run
- ``metadata["dev.git-gasp"]``: the agent id and the patch, goal, run, eval, decision ids
  and the patch's status
- ``id``: a UUID (version 5) of the agent, patch and commit; ``timestamp``: the time of
  the event that proposed the patch. So the same log always exports the same bytes:
  records in the fold's order of the patches, keys sorted, compact, one per line.

``version`` is ``"0.1"``: the schema's pattern takes major.minor only (``0.1.0`` would
fail it, though the specification's own examples write that).
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta, timezone
from typing import Any
from urllib.parse import quote

from git_gasp import __version__
from git_gasp.attribution.diffranges import added_ranges, resolve
from git_gasp.attribution.pins import Pins, Why
from git_gasp.base import git
from git_gasp.base.errors import GaspError
from git_gasp.protocol.jsonstrict import dumps_canonical
from git_gasp.runtime.state import AgentState

VERSION = "0.1"
VENDOR = "dev.git-gasp"  # our key under `metadata` (the spec's reverse-domain advice)
NAMESPACE = uuid.UUID("5b1d3a7e-2c4f-5e6a-9b8c-0d1e2f3a4b5c")
MODEL_ID_MAX = 250



# what RFC 3339 (four-digit years) can say: 0001-01-01T00:00:00.000Z to 9999-12-31T23:59:59.999Z
FIRST_MS = -62_135_596_800_000
LAST_MS = 253_402_300_799_999


def timestamp(ms: int) -> str:
    """RFC 3339 in UTC with milliseconds, as the schema's pattern takes it. A conformant
    `ts_ms` past what four-digit years can say (2**63 - 1, say) is the nearest
    instant they can; `in_range` tells the caller it was moved."""
    ms = min(max(ms, FIRST_MS), LAST_MS)
    when = datetime(1970, 1, 1, tzinfo=timezone.utc) + timedelta(milliseconds=ms)
    return f"{when.year:04d}" + when.strftime("-%m-%dT%H:%M:%S") + f".{ms % 1000:03d}Z"


def in_range(ms: int) -> bool:
    """Whether `timestamp(ms)` says `ms` itself."""
    return FIRST_MS <= ms <= LAST_MS


def record_id(agent_id: str, patch: str, commit: str) -> str:
    return str(uuid.uuid5(NAMESPACE, f"{agent_id}\0{patch}\0{commit}"))


def gasp_url(kind: str, node_id: str) -> str:
    return f"gasp:{kind}/{quote(node_id, safe='')}"


def _models(state: AgentState) -> dict[str, str]:
    """run id -> the model id of its last model call (provider/model where known)."""
    graph = state.graph
    out: dict[str, str] = {}
    for rel in graph.relations:
        if rel["rel"] != "produced_by":
            continue
        node = graph.node(rel["from"])
        if node is None or node["kind"] != "model_call":
            continue
        model, provider = node["props"].get("model"), node["props"].get("provider")
        if isinstance(model, str) and model:
            if "/" not in model and isinstance(provider, str) and provider:
                model = f"{provider}/{model}"
            out[rel["to"]] = model[:MODEL_ID_MAX]
    return out


def since_filter(cwd: str, since: str, commits: list[str]) -> set[str]:
    """The commits of `commits` that `since` cannot reach (made after it)."""
    if not since or since.startswith("-") or resolve(cwd, [since]).get(since) is None:
        raise GaspError(f"--since {since}: not a commit in this repository")
    if not commits:
        return set()
    proc = git.run(cwd, "rev-list", "--stdin",
                   input=("\n".join([*commits, "^" + since]) + "\n").encode())
    listed = set(proc.stdout.decode("ascii", "replace").split())
    return {c for c in commits if c in listed}


def build_records(state: AgentState, cwd: str, *, since: str | None = None) -> list[dict]:
    """The records of every patch of `state` that pins a commit of the repository at
    `cwd` (pins naming no commit there are left out), in the fold's order."""
    pins = Pins(state.graph)
    fulls = resolve(cwd, sorted({w.pin for w in pins.order}))
    chosen: list[tuple[Why, str]] = []
    seen: set[tuple[str, str]] = set()
    for why in pins.order:
        full = fulls.get(why.pin)
        if full is not None and (why.patch, full) not in seen:
            seen.add((why.patch, full))
            chosen.append((why, full))
    if since is not None:
        keep = since_filter(cwd, since, sorted({c for _w, c in chosen}))
        chosen = [(w, c) for w, c in chosen if c in keep]
    if not chosen:
        return []
    diffs = added_ranges(cwd, sorted({c for _w, c in chosen}))
    models = _models(state)
    times = _creation_times(state, {w.patch for w, _c in chosen})
    agent_id = state.agent_id or ""
    records = []
    for why, commit in chosen:
        contributor: dict[str, Any] = {"type": "ai"}
        model = models.get(why.run) if why.run else None
        if model:
            contributor["model_id"] = model
        conversation: dict[str, Any] = {"contributor": contributor}
        if why.run:
            conversation["related"] = [{"type": "run", "url": gasp_url("run", why.run)}]
        files = []
        for path, ranges in sorted(diffs.get(commit, {}).items()):
            files.append({"path": path.decode("utf-8", "replace"), "conversations": [
                dict(conversation, ranges=[{"start_line": s, "end_line": e}
                                           for s, e in ranges])]})
        meta = {"agent_id": agent_id, **why.ids(), "status": why.status}
        ts_ms = times.get(why.patch, 0)
        if not in_range(ts_ms):
            meta["ts_ms"] = ts_ms  # the event's own time, which `timestamp` cannot say
        records.append({
            "version": VERSION,
            "id": record_id(agent_id, why.patch, commit),
            "timestamp": timestamp(ts_ms),
            "vcs": {"type": "git", "revision": commit},
            "tool": {"name": "git-gasp", "version": _version()},
            "files": files,
            "metadata": {VENDOR: meta},
        })
    return records


def _version() -> str:
    return __version__


def _creation_times(state: AgentState, patches: set[str]) -> dict[str, int]:
    """patch id -> ts_ms of the event that created it."""
    creators = {state.creator_of(p): p for p in patches}
    out: dict[str, int] = {}
    for event in state.events():
        patch = creators.get(event.id)
        if patch is not None:
            out[patch] = event.ts_ms
    return out


def dumps(records: list[dict]) -> bytes:
    """The records as ``.agent-trace/traces.jsonl`` holds them: one per line."""
    return b"".join(dumps_canonical(r) + b"\n" for r in records)
