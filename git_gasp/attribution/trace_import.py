"""`git gasp import agent-trace FILE`: Agent Trace records from other tools become
observations on the commits they name.

Each record whose ``vcs`` is git and names a commit of the project becomes one
observation (``source: agent-trace``; id ``observation_`` + the first 32 hex digits of
sha256 over the record id and the commit, so importing the same file twice adds
nothing). Its metadata keeps, redacted, the record's id, version, timestamp, tool and
files (each conversation's contributor, url, related and ranges as ``[start, end]``
pairs), the commit (full id) and our own ids when the record came from
``export agent-trace`` (``metadata["dev.git-gasp"]``); the observation ``observes``
the patch that pins the commit here, if one does. `Imported` reads them back for blame.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from git_gasp.attribution.agent_trace import VENDOR
from git_gasp.attribution.diffranges import resolve
from git_gasp.attribution.first_match import FirstMatch
from git_gasp.attribution.pins import Pins
from git_gasp.redact.redactor import Redactor
from git_gasp.runtime.ops import create_node, relate
from git_gasp.runtime.state import AgentState

SOURCE = "agent-trace"
MAX_RANGES = 10_000  # per record: a bigger one is cut (and says so)



@dataclass
class ImportResult:
    added: list[str] = field(default_factory=list)
    already: list[str] = field(default_factory=list)
    skipped: list[tuple[int, str]] = field(default_factory=list)  # (line, reason)


def _ranges(conv: dict) -> list[list[int]] | None:
    out = []
    for r in conv.get("ranges") or []:
        if not isinstance(r, dict):
            return None
        s, e = r.get("start_line"), r.get("end_line")
        if type(s) is not int or type(e) is not int or s < 1 or e < s:
            return None
        out.append([s, e])
    return out


def shape_problem(rec: Any) -> str | None:
    """Why `rec` is not a record this import can use (None when it is)."""
    if not isinstance(rec, dict):
        return "not a JSON object"
    if not isinstance(rec.get("id"), str) or not rec["id"]:
        return "no id"
    vcs = rec.get("vcs")
    if not isinstance(vcs, dict) or vcs.get("type") != "git" or not isinstance(
            vcs.get("revision"), str):
        return "no git revision (vcs)"
    files = rec.get("files")
    if not isinstance(files, list):
        return "no files"
    for f in files:
        if not isinstance(f, dict) or not isinstance(f.get("path"), str) or not isinstance(
                f.get("conversations"), list):
            return "a file without path or conversations"
        for conv in f["conversations"]:
            if not isinstance(conv, dict) or _ranges(conv) is None:
                return "a conversation with bad ranges"
    return None


def read_records(data: bytes) -> list[tuple[int, Any]]:
    """(line number, parsed value or the parse error) of each non-blank line."""
    out: list[tuple[int, Any]] = []
    for n, line in enumerate(data.split(b"\n"), 1):
        if not line.strip():
            continue
        try:
            out.append((n, json.loads(line)))
        except (ValueError, RecursionError) as exc:
            out.append((n, ValueError(f"not JSON ({exc})")))
    return out


def observation_id(record_id: str, commit: str) -> str:
    digest = hashlib.sha256(f"{SOURCE}\0{record_id}\0{commit}".encode()).hexdigest()
    return f"observation_{digest[:32]}"


def _kept(rec: dict, commit: str, redactor: Any) -> dict:
    """What the observation keeps of `rec` (redacted; ranges as pairs)."""
    files, count = [], 0
    for f in rec["files"]:
        convs = []
        for conv in f["conversations"]:
            ranges = _ranges(conv) or []
            ranges = ranges[: max(0, MAX_RANGES - count)]
            count += len(ranges)
            kept = {k: conv[k] for k in ("contributor", "url", "related") if k in conv}
            convs.append({**kept, "ranges": ranges})
        files.append({"path": f["path"], "conversations": convs})
    out = {k: rec[k] for k in ("version", "timestamp", "tool") if k in rec}
    out["files"] = files
    meta = rec.get("metadata")
    if isinstance(meta, dict) and isinstance(meta.get(VENDOR), dict):
        out["gasp"] = meta[VENDOR]
    kept = redactor.value(out)
    kept["record_id"] = redactor.field("record_id", rec["id"])
    kept["commit"] = commit  # our own git's answer, not outside text
    if count >= MAX_RANGES:
        kept["ranges_cut_at"] = MAX_RANGES
    return kept


def import_records(state: AgentState, cwd: str, data: bytes) -> ImportResult:
    """Record each usable record of JSONL `data` as an observation of `state` (which
    holds the lease); commits are resolved in the repository at `cwd`."""
    result = ImportResult()
    usable: list[tuple[int, dict]] = []
    for n, rec in read_records(data):
        problem = str(rec) if isinstance(rec, Exception) else shape_problem(rec)
        if problem:
            result.skipped.append((n, problem))
        else:
            usable.append((n, rec))
    commits = resolve(cwd, sorted({r["vcs"]["revision"] for _n, r in usable}))
    pins = Pins(state.graph)
    redactor = Redactor()
    for n, rec in usable:
        commit = commits.get(rec["vcs"]["revision"])
        if commit is None:
            result.skipped.append((n, f"commit {rec['vcs']['revision'][:40]} is not in "
                                      "this repository"))
            continue
        oid = observation_id(rec["id"], commit)
        if state.graph.has_node(oid):
            result.already.append(oid)
            continue
        meta = {"agent_trace": _kept(rec, commit, redactor)}
        tool = meta["agent_trace"].get("tool")
        name = tool.get("name") if isinstance(tool, dict) else None
        lines = sum(e - s + 1 for f in meta["agent_trace"]["files"]
                    for c in f["conversations"] for s, e in c["ranges"])
        summary = (f"Agent Trace record of {name or 'another tool'}: {lines} line(s) in "
                   f"{len(rec['files'])} file(s) of commit {commit[:12]}")
        payload = {"id": oid, "summary": summary, "source": SOURCE, "metadata": meta}
        ops = [create_node(oid, "observation", {"summary": summary, "source": SOURCE,
                                                "metadata": meta})]
        why = pins.of(commit)
        if why is not None:
            ops.append(relate(oid, "observes", why.patch))
        state.emit("observation.created", payload, ops,
                   links=(why.patch,) if why is not None else ())
        result.added.append(oid)
    return result


class Imported:
    """The imported records of a fold, by commit, for blame: each (commit, path)'s
    ranges indexed once (`FirstMatch`), at its first line asked."""

    def __init__(self, graph: Any) -> None:
        self.by_commit: dict[str, list[tuple[str, dict]]] = {}
        for node in graph.iter_nodes():
            props = node.get("props") or {}
            if node.get("kind") != "observation" or props.get("source") != SOURCE:
                continue
            kept = (props.get("metadata") or {}).get("agent_trace")
            if isinstance(kept, dict) and isinstance(kept.get("commit"), str):
                self.by_commit.setdefault(kept["commit"], []).append((node["id"], kept))
        self._index: dict[tuple[str, str], FirstMatch] = {}

    def who(self, commit: str, path: bytes, line: int) -> dict | None:
        """What an imported record says of `line` of `path` in `commit`, or None (the
        first record, file and conversation in order whose ranges hold it)."""
        key = (commit, path.decode("utf-8", "replace"))
        index = self._index.get(key)
        if index is None:
            index = self._index[key] = FirstMatch(self._ranges(*key))
        found = index(line)
        return None if found is None else _describe(*found)

    def _ranges(self, commit: str, name: str) -> Iterator[tuple[int, int, tuple]]:
        for oid, kept in self.by_commit.get(commit, ()):
            for f in kept.get("files") or ():
                if not isinstance(f, dict) or f.get("path") != name:
                    continue
                for conv in f.get("conversations") or ():
                    if not isinstance(conv, dict):
                        continue
                    found = (oid, kept, conv)
                    for pair in conv.get("ranges") or ():
                        if type(pair) is list and len(pair) == 2:
                            start, end = pair
                            if type(start) is int and type(end) is int:
                                yield start, end, found


def _describe(oid: str, kept: dict, conv: dict) -> dict:
    out: dict = {"source": SOURCE, "observation": oid, "record": kept.get("record_id")}
    who = conv.get("contributor")
    if isinstance(who, dict):
        if isinstance(who.get("type"), str):
            out["type"] = who["type"]
        if isinstance(who.get("model_id"), str):
            out["model"] = who["model_id"]
    tool = kept.get("tool")
    if isinstance(tool, dict) and isinstance(tool.get("name"), str):
        out["tool"] = tool["name"]
    return out
