"""Fork: a real git branch whose log is the current log through an event.

The branch starts from the newest first-parent commit whose committed log is a
prefix of that log, and its first commit appends the missing events plus a fork
marker (frame.created + its ops pair), so the branch extends its parent
append-only and passes check. The working tree and HEAD are not touched.
"""

from __future__ import annotations

from pathlib import Path

import orjson

from git_gasp.base import git
from git_gasp.base.errors import GaspError, UsageError
from git_gasp.base.ids import new_id, now_ms
from git_gasp.guard.api import check_tree, refusal_line
from git_gasp.odb.database import ObjectDatabase
from git_gasp.odb.repo import open_repo
from git_gasp.odb.write import add_blob, write_tree
from git_gasp.protocol.envelope import OPS_KIND, Event, parse_line, serialize, split_lines
from git_gasp.protocol.idmatch import match_id
from git_gasp.protocol.manifest import parse_manifest
from git_gasp.protocol.vocab import ENTITY_CREATING
from git_gasp.runtime.commit import make_commit
from git_gasp.runtime.queries import read_at_revision
from git_gasp.runtime.state import create_node


def _fields(raw: bytes) -> tuple[object, object, object]:
    """(id, kind, causation_id) of a committed line, leniently (Nones when not JSON)."""
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None, None, None
    if type(obj) is not dict:
        return None, None, None
    return obj.get("id"), obj.get("kind"), obj.get("causation_id")


def _keep_pairs(lines: list[bytes], count: int) -> int:
    """How many lines the fork keeps when cut after line `count`: the cut is moved past
    the state.ops_applied event pairing each entity-creating event it keeps (check 7),
    so `--at` may name a domain event as `git gasp log` shows it."""
    fields = [_fields(raw) for raw in lines]
    claimed: dict[object, int] = {}  # domain event id -> line index of its first ops claim
    for i, (_eid, kind, cause) in enumerate(fields):
        if kind == OPS_KIND and type(cause) is str:
            claimed.setdefault(cause, i)
    while True:
        need = [claimed[eid] for eid, kind, _c in fields[:count]
                if kind in ENTITY_CREATING and claimed.get(eid, -1) >= count]
        if not need:
            return count
        count = max(need) + 1


def fork(root: Path, name: str, at: str | None = None, *, actor=("agent", "gasp")) -> bytes:
    """Create branch `name` forked at event `at` (default: the last committed event)."""
    root = Path(root)
    if name.startswith("-") or not git.ok(root, "check-ref-format", "--branch", name):
        raise UsageError(f"{name!r} is not a valid branch name")
    if git.ok(root, "rev-parse", "--verify", "--quiet", f"refs/heads/{name}"):
        raise GaspError(f"branch {name} already exists")
    manifest = parse_manifest(read_at_revision(root, "HEAD", "AGENT.md"))
    rel = manifest.locations["log"]
    log = read_at_revision(root, "HEAD", rel)
    lines, terminated = split_lines(log)
    if not terminated:
        raise GaspError(f"{rel} at HEAD ends in a torn line; repair it first")
    count = len(lines)
    at_id = None
    if at is not None:
        numbered: dict[str, int] = {}  # event id -> its first line
        for n, raw in enumerate(lines, 1):
            if raw.startswith(b'{"id":"'):
                numbered.setdefault(parse_line(raw, n).id, n)
        at_id = match_id(numbered, at, "event")  # the id, or the one it is a prefix of
        if at_id not in numbered:
            raise UsageError(f"no event {at!r} in the committed {rel} (commit it first)")
        count = _keep_pairs(lines, numbered[at_id])
    elif lines:
        at_id = parse_line(lines[-1], len(lines)).id
    end = sum(len(raw) + 1 for raw in lines[:count])
    prefix = log[:end]
    # newest first-parent commit whose log is a prefix of `prefix`
    base = None
    for sha in git.out(root, "rev-list", "--first-parent", "HEAD").split():
        try:
            old = read_at_revision(root, sha, rel)
        except GaspError:
            old = b""
        if len(old) <= len(prefix) and prefix.startswith(old):
            base = sha
            break
    if base is None:
        raise GaspError(f"no commit has a log that {at or 'HEAD'} extends")
    ts = now_ms()
    frame = new_id("frame")
    payload = {"id": frame, "title": f"fork {name}", "summary": f"forked at {at_id}",
               "status": "Open", "metadata": {"fork": name, "at": at_id}}
    domain = Event(new_id("event"), 1, ts, actor[0], actor[1], "frame.created", payload,
                   None, frame)
    ops = Event(new_id("event"), 1, ts, actor[0], actor[1], OPS_KIND,
                [create_node(frame, "frame", {"title": f"fork {name}", "status": "Open",
                                              "forked_at": at_id, "fork": name})],
                domain.id, frame)
    new_log = prefix + serialize(domain) + serialize(ops)
    repo, pfx = open_repo(root)
    with repo:
        blob_id = add_blob(repo.object_store, new_log)
        base_id = base.encode()
        odb = ObjectDatabase(repo.object_store)
        entries = odb.files(odb.commit(base_id).tree)
        path = (pfx + b"/" if pfx else b"") + rel.encode()
        entries[path] = (0o100644, blob_id)
        tree = write_tree(repo.object_store, entries)
        rejections = check_tree(repo, entries, base_id)
        if rejections:
            raise GaspError(refusal_line(rejections))
        message = f"fork {name} at {at_id}\n\nForked-From: {base}\n".encode()
        return make_commit(root, tree, base_id, message,
                           ref=f"refs/heads/{name}", old=None)
