"""`kg save`: apply a document of entity/relation changes, commit, push.

The document (YAML or JSON):

    summary: what this save records          # commit message: `perstate: <summary>`
    date: 2026-07-15                         # optional; defaults to today (UTC)
    entities:
      - id: llm-evaluation                   # optional when label is given
        label: LLM Evaluation
        type: domain                         # required to create
        aliases: [model benchmarking]
        sources: ["arxiv:2505.20416"]
        body: "Markdown …"                   # new: the body; merge: a dated ### subsection
        fields: {confidence: high}           # any other front-matter fields
        action: upsert                       # upsert (default) | supersede | delete
        dedupe: true                         # false: match by id only
    relations:
      - {from: llm-evaluation, type: depends-on, to: harness, body: "…", sources: [...]}
      - {from: a, type: enables, to: b, action: supersede}   # valid_until: <date>

Dedupe: an upserted entity matches existing ones by id, and by its label, aliases
and id against their ids, labels and aliases (case-insensitive). One match:
merge (updated_at, aliases union, sources appended, `### <date>` subsection).
Several: refuse and list them. Relation endpoints may be ids, labels or aliases.

Everything is planned in memory and validated before a byte is written; files
are written by tmp+rename; any failure up to a successful push resets the
worktree to where it was, so a save is all or nothing. A push rejected as
non-fast-forward is retried: `git rebase` onto the new remote head, and if that
conflicts, the document is re-applied on top of it (merges compose).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import os
import random
import re
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from git_gasp.base import git
from git_gasp.base.errors import GaspError, UsageError
from git_gasp.kg import ids, index, model
from git_gasp.kg.frontmatter import load_yaml, parse_document, render_document
from git_gasp.kg.workspace import Workspace, fetch_branch, locked, mark_synced

ENTITY_ITEM_KEYS = {"id", "label", "type", "aliases", "sources", "body", "fields", "action",
                    "dedupe", "valid_until"}
RELATION_ITEM_KEYS = {"from", "to", "type", "sources", "body", "fields", "action",
                      "valid_until"}
ACTIONS = {"upsert", "supersede", "delete"}
MAX_PUSH_ATTEMPTS = 10
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


# ---------------------------------------------------------------- the document

def load_document(text: str) -> dict[str, Any]:
    """Parse and validate a save document (YAML or JSON)."""
    stripped = text.lstrip()
    if not stripped:
        raise UsageError("the save document is empty")
    if stripped.startswith(("{", "[")):
        import orjson

        try:
            doc = orjson.loads(text)
        except orjson.JSONDecodeError as exc:
            raise UsageError(f"invalid JSON document: {exc}") from None
    else:
        try:
            doc = load_yaml(text)
        except GaspError as exc:
            raise UsageError(str(exc)) from None
    if not isinstance(doc, dict):
        raise UsageError("the save document must be a mapping with `entities` and/or `relations`")
    unknown = set(doc) - {"summary", "date", "entities", "relations"}
    if unknown:
        raise UsageError(f"unknown top-level key(s) in the document: {', '.join(sorted(unknown))}")
    for key, allowed in (("entities", ENTITY_ITEM_KEYS), ("relations", RELATION_ITEM_KEYS)):
        items = doc.get(key) or []
        if not isinstance(items, list):
            raise UsageError(f"`{key}` must be a list")
        for n, item in enumerate(items, 1):
            if not isinstance(item, dict):
                raise UsageError(f"{key}[{n}] must be a mapping")
            bad = set(item) - allowed
            if bad:
                raise UsageError(
                    f"{key}[{n}]: unknown key(s) {', '.join(sorted(map(str, bad)))} "
                    "(put custom front-matter fields under `fields:`)"
                )
            action = item.get("action", "upsert")
            if action not in ACTIONS:
                raise UsageError(f"{key}[{n}]: action must be one of upsert, supersede, delete")
            if "fields" in item and not isinstance(item["fields"], dict):
                raise UsageError(f"{key}[{n}]: `fields` must be a mapping")
            reserved = {"id", "from", "to", "created_at", "updated_at"}
            if set(item.get("fields") or {}) & reserved:
                raise UsageError(f"{key}[{n}]: `fields` may not set {', '.join(sorted(reserved))}")
    if not doc.get("entities") and not doc.get("relations"):
        raise UsageError("the document has no `entities` or `relations`")
    date = doc.get("date")
    if date is not None and not (isinstance(date, str) and _DATE.match(date)):
        raise UsageError("`date` must be YYYY-MM-DD")
    summary = doc.get("summary")
    if summary is not None and not isinstance(summary, str):
        raise UsageError("`summary` must be a string")
    return doc


def today_utc() -> str:
    return _dt.datetime.now(_dt.timezone.utc).date().isoformat()


def _norm(name: str) -> str:
    return " ".join(str(name).split()).lower()


# ---------------------------------------------------------------- planning

@dataclass
class Plan:
    root: Path
    today: str
    idx: index.Graph
    writes: dict[str, str | None] = field(default_factory=dict)  # rel -> text | None (delete)
    notes: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    _names: dict[str, set[str]] = field(default_factory=dict)  # pending name -> ids
    _gone: set[str] = field(default_factory=set)  # entity ids deleted in this plan
    bulk: bool = False
    _map: dict[str, list[tuple[int, int]]] | None = None

    def bump(self, what: str) -> None:
        self.counts[what] = self.counts.get(what, 0) + 1

    # -- reading through the pending writes
    def read(self, rel: str) -> str | None:
        if rel in self.writes:
            return self.writes[rel]
        return model.read_text(self.root, rel)

    def entity_exists(self, eid: str) -> bool:
        if eid in self._gone:
            return False
        return self.read(model.entity_rel(eid)) is not None

    def lookup(self, name: str) -> set[str]:
        """Ids of entities whose id, label or an alias equals `name` (case-insensitive)."""
        key = _norm(name)
        if not key or "\x1f" in key or "\n" in key:
            return set()
        if self.bulk:  # many items: one map beats a scan per name
            if self._map is None:
                self._map = self.idx.name_map()
            keys: Any = self._map.get(key, ())
        else:
            keys = self.idx.named(key)
        found = {self.idx.doc(*k)[0].split("/")[1] for k in keys}
        found |= self._names.get(key, set())
        return {e for e in found if e not in self._gone}

    def remember_names(self, eid: str, names: list[str]) -> None:
        for n in names:
            self._names.setdefault(_norm(n), set()).add(eid)

    def incoming(self, eid: str) -> list[str]:
        """Relation paths pointing at `eid` (index + pending writes, minus deletions)."""
        out = {self.idx.doc(*k)[0] for k in self.idx.incoming(eid)}
        for rel, text in self.writes.items():
            parts = rel.split("/")
            if len(parts) == 4 and parts[3] == f"{eid}.md" and text is not None:
                out.add(rel)
        return sorted(r for r in out if self.read(r) is not None)


def _outgoing(plan: Plan, eid: str) -> list[str]:
    out: set[str] = set()
    base = plan.root / "entities" / eid
    if base.is_dir():
        for d in base.iterdir():
            if d.is_dir() and not d.name.startswith("."):
                out.update(f"entities/{eid}/{d.name}/{f.name}" for f in d.iterdir()
                           if f.name.endswith(".md") and not f.name.startswith("."))
    prefix = f"entities/{eid}/"
    out.update(r for r, t in plan.writes.items() if r.startswith(prefix) and t is not None
               and r.count("/") == 3)
    return sorted(r for r in out if plan.read(r) is not None)


def _strs(item: dict, key: str, where: str) -> list[str]:
    v = item.get(key)
    if v is None:
        return []
    if isinstance(v, str):
        return [v]
    if isinstance(v, list) and all(isinstance(x, (str, int, float)) for x in v):
        return [str(x) for x in v]
    raise UsageError(f"{where}: `{key}` must be a string or a list of strings")


def _text(item: dict, key: str, where: str) -> str:
    v = item.get(key)
    if v is None:
        return ""
    if not isinstance(v, (str, int, float)):
        raise UsageError(f"{where}: `{key}` must be a string")
    return str(v)


def _date_or(item: dict, today: str, where: str) -> str:
    v = item.get("valid_until")
    if v is None:
        return today
    if not (isinstance(v, str) and _DATE.match(v)):
        raise UsageError(f"{where}: `valid_until` must be YYYY-MM-DD")
    return v


def _supersede_file(plan: Plan, rel: str, until: str) -> bool:
    text = plan.read(rel)
    if text is None:
        return False
    fm, body = parse_document(text)
    if fm.get("valid_until") not in (None, "", "null"):
        return False
    fm.set("valid_until", until, after="updated_at")
    fm.set("updated_at", plan.today)
    plan.writes[rel] = render_document(fm, body)
    return True


def _delete_entity(plan: Plan, eid: str) -> None:
    base = plan.root / "entities" / eid
    rels: set[str] = set()
    if base.is_dir():
        for dirpath, _dirs, files in os.walk(base):
            for f in files:
                rels.add(os.path.relpath(os.path.join(dirpath, f), plan.root).replace(os.sep, "/"))
    prefix = f"entities/{eid}/"
    rels.update(r for r in plan.writes if r.startswith(prefix))
    rels.update(plan.incoming(eid))
    for r in rels:
        plan.writes[r] = None
    plan._gone.add(eid)


def _plan_entity(plan: Plan, item: dict, n: int) -> None:
    where = f"entities[{n}]"
    action = item.get("action", "upsert")
    eid = item.get("id")
    if eid is not None and not isinstance(eid, str):
        raise UsageError(f"{where}: `id` must be a string")
    label = _text(item, "label", where).strip()
    if action in ("supersede", "delete"):
        if not eid:
            matches = plan.lookup(label) if label else set()
            if len(matches) != 1:
                raise GaspError(f"{where}: {action} needs the `id` of an existing entity")
            eid = next(iter(matches))
        ids.check_existing_id(eid)
        if not plan.entity_exists(eid):
            raise GaspError(f"{where}: entity {eid!r} does not exist")
        if action == "delete":
            _delete_entity(plan, eid)
            plan.bump("deleted")
            return
        until = _date_or(item, plan.today, where)
        changed = _supersede_file(plan, model.entity_rel(eid), until)
        for rel in _outgoing(plan, eid) + plan.incoming(eid):
            changed = _supersede_file(plan, rel, until) or changed
        plan.bump("superseded" if changed else "unchanged")
        return

    aliases = [a.strip() for a in _strs(item, "aliases", where) if a.strip()]
    sources = _strs(item, "sources", where)
    body = _text(item, "body", where)
    fields = dict(item.get("fields") or {})
    etype = _text(item, "type", where).strip()
    if not eid and not label:
        raise UsageError(f"{where}: give an `id` or a `label`")
    if eid:
        ids.check_existing_id(eid)
    candidates: set[str] = set()
    if eid and plan.entity_exists(eid):
        candidates.add(eid)
    if item.get("dedupe", True):
        for name in [label, *aliases, eid or ""]:
            if name:
                candidates |= plan.lookup(name)
    if len(candidates) > 1:
        listing = ", ".join(sorted(candidates))
        raise GaspError(
            f"{where} ({eid or label!r}) matches several entities: {listing}; "
            "give the `id` of one and `dedupe: false`, or merge them first"
        )
    if not candidates:
        new_id = eid or ids.slugify(label)
        ids.check_new_id(new_id)
        if not etype:
            raise UsageError(f"{where}: `type` is required to create entity {new_id!r}")
        if model.inside(plan.root, f"entities/{new_id}") is None:
            raise GaspError(f"{where}: entities/{new_id} is a symlink; refusing to write there")
        if (plan.root / "entities" / new_id).exists() and not plan.entity_exists(new_id):
            if new_id not in plan._gone:
                raise GaspError(
                    f"{where}: entities/{new_id}/ exists without entity.md; fix it first"
                )
        label = label or new_id
        aliases = [a for a in model.union([], aliases, fold_case=True)
                   if a.casefold() != label.casefold()]
        plan.writes[model.entity_rel(new_id)] = model.new_entity(
            new_id, label, etype, aliases, sources, plan.today, body, fields
        )
        plan._gone.discard(new_id)
        plan.remember_names(new_id, [new_id, label, *aliases])
        plan.bump("created")
        return

    target = next(iter(candidates))
    if eid and eid != target:
        plan.notes.append(f"{eid or label} matched existing entity {target}; merged into it")
    rel = model.entity_rel(target)
    text = plan.read(rel)
    assert text is not None
    fm, old_body = parse_document(text)
    before = render_document(fm, old_body)
    old_label = str(fm.get("label") or target)
    new_aliases = list(aliases)
    if label and label.casefold() != old_label.casefold():
        new_aliases.insert(0, label)
    old_aliases = model.as_list(fm.get("aliases"))
    # never drop an existing alias (Perstate's own example repeats the label's words)
    merged = model.union(old_aliases, [a for a in new_aliases
                                       if a.casefold() != old_label.casefold()], fold_case=True)
    if merged != old_aliases:
        fm.set("aliases", merged, after="type")
    old_sources = model.as_list(fm.get("sources"))
    added_sources = [s for s in sources if s not in old_sources]
    if added_sources:
        fm.set("sources", old_sources + added_sources, quote=True, after="updated_at")
    if etype and etype != fm.get("type"):
        fm.set("type", etype, after="label")
    for k, v in fields.items():
        if fm.get(k) != v or k not in fm:
            fm.set(str(k), v)
    if "valid_until" in fm and fm.get("valid_until") not in (None, "", "null"):
        fm.set("valid_until", None)  # an upsert revives a superseded entity
    new_body = old_body
    if (body.strip() and body.strip() not in old_body) or added_sources:
        new_body = model.append_subsection(
            old_body, plan.today, body if body.strip() not in old_body else "", added_sources
        )
    if render_document(fm, new_body) == before:
        plan.bump("unchanged")
        return
    fm.set("updated_at", plan.today, after="created_at")
    plan.writes[rel] = render_document(fm, new_body)
    plan.remember_names(target, [target, old_label, *merged])
    plan.bump("merged")


def _resolve_endpoint(plan: Plan, name: object, where: str, key: str) -> str:
    if not isinstance(name, str) or not name.strip():
        raise UsageError(f"{where}: `{key}` must name an entity")
    if ids.is_safe_component(name) and plan.entity_exists(name):
        return name
    matches = plan.lookup(name)
    if len(matches) == 1:
        return next(iter(matches))
    if len(matches) > 1:
        raise GaspError(f"{where}: `{key}: {name}` matches several entities: "
                        f"{', '.join(sorted(matches))}; use an id")
    raise GaspError(f"{where}: `{key}: {name}` is not an entity (create it in `entities:`)")


def _plan_relation(plan: Plan, item: dict, n: int) -> None:
    where = f"relations[{n}]"
    action = item.get("action", "upsert")
    src = _resolve_endpoint(plan, item.get("from"), where, "from")
    dst = _resolve_endpoint(plan, item.get("to"), where, "to")
    rtype = item.get("type")
    if not isinstance(rtype, str) or not rtype:
        raise UsageError(f"{where}: `type` (the relation type, e.g. depends-on) is required")
    rel = model.relation_rel(src, rtype, dst)
    exists = plan.read(rel) is not None if ids.is_safe_component(rtype) else False
    desc = f"{src} --{rtype}--> {dst}"
    if action in ("supersede", "delete"):
        ids.check_existing_id(rtype, "relation type")
        if not exists:
            raise GaspError(f"{where}: relation {desc} does not exist")
        if action == "delete":
            plan.writes[rel] = None
            plan.bump("deleted")
        else:
            changed = _supersede_file(plan, rel, _date_or(item, plan.today, where))
            plan.bump("superseded" if changed else "unchanged")
        return
    sources = _strs(item, "sources", where)
    body = _text(item, "body", where)
    fields = dict(item.get("fields") or {})
    if not exists:
        ids.check_new_id(rtype, "relation type")
        plan.writes[rel] = model.new_relation(src, dst, rtype, sources, plan.today, body, fields)
        plan.bump("related")
        return
    text = plan.read(rel)
    assert text is not None
    fm, old_body = parse_document(text)
    before = render_document(fm, old_body)
    old_sources = model.as_list(fm.get("sources"))
    added = [s for s in sources if s not in old_sources]
    if added:
        fm.set("sources", old_sources + added, quote=True, after="valid_until")
    for k, v in fields.items():
        if fm.get(k) != v or k not in fm:
            fm.set(str(k), v)
    if fm.get("valid_until") not in (None, "", "null"):
        fm.set("valid_until", None)  # re-asserting a superseded relation revives it
    new_body = old_body
    if body.strip() and body.strip() not in old_body:
        new_body = model.append_subsection(old_body, plan.today, body, [])
    if render_document(fm, new_body) == before:
        plan.bump("unchanged")
        return
    fm.set("updated_at", plan.today, after="created_at")
    plan.writes[rel] = render_document(fm, new_body)
    plan.bump("merged")


def make_plan(root: Path, doc: dict[str, Any], today: str) -> Plan:
    plan = Plan(root, today, index.load(root))
    plan.bulk = len(doc.get("entities") or []) + len(doc.get("relations") or []) > 32
    for n, item in enumerate(doc.get("entities") or [], 1):
        _plan_entity(plan, item, n)
    for n, item in enumerate(doc.get("relations") or [], 1):
        _plan_relation(plan, item, n)
    # drop no-op writes (a file rewritten to what it already holds)
    for rel in list(plan.writes):
        text = plan.writes[rel]
        if text == model.read_text(root, rel):
            del plan.writes[rel]
    return plan


def summarise(plan: Plan) -> str:
    words = {"created": "create {} entit{}", "merged": "merge {} item{}",
             "related": "add {} relation{}", "superseded": "supersede {} item{}",
             "deleted": "delete {} item{}"}
    parts = []
    for key, fmt in words.items():
        c = plan.counts.get(key, 0)
        if c:
            suffix = ("y" if c == 1 else "ies") if key == "created" else ("" if c == 1 else "s")
            parts.append(fmt.format(c, suffix))
    return ", ".join(parts) or "update knowledge graph"


# ---------------------------------------------------------------- writing

def _write_file(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".perstate-", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def apply_plan(plan: Plan) -> None:
    for rel in plan.writes:
        model.writable(plan.root, rel)  # check every path before changing any
    for rel, text in sorted(plan.writes.items()):
        path = plan.root / rel
        if text is None:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
            parent = path.parent
            ent = plan.root / "entities"
            while parent != ent and ent in parent.parents:
                try:
                    parent.rmdir()
                except OSError:
                    break
                parent = parent.parent
        else:
            _write_file(path, text)


def _identity_args(root: Path) -> list[str]:
    if os.environ.get("GIT_AUTHOR_EMAIL") or git.out(root, "config", "user.email", check=False):
        return []
    return ["-c", "user.name=perstate", "-c", "user.email=perstate@localhost"]


def _spec(paths: list[str]) -> bytes:
    return "\0".join(paths).encode("utf-8") + b"\0"


def _with_paths(root: Path, paths: list[str], *args: str, check: bool = True):
    return git.run(root, *args, "--pathspec-from-file=-", "--pathspec-file-nul",
                      input=_spec(paths), check=check)


def commit(root: Path, paths: list[str], message: str) -> str:
    """Commit exactly `paths` (plumbing: no scan of the whole worktree); the new id.

    `update-ref` with the old value makes it a compare-and-swap on the branch.
    """
    parent = index.head_commit(root)
    _with_paths(root, paths, "add", "-A")
    tree = git.out(root, "write-tree")
    args = ["commit-tree", tree, "-m", message] + (["-p", parent] if parent else [])
    sha = git.out(root, *_identity_args(root), *args)
    git.run(root, "update-ref", "-m", f"commit: {message}", "HEAD", sha, parent or "")
    return sha


def _dirty_paths(root: Path, paths: list[str]) -> list[str]:
    """Which of `paths` differ from HEAD in the worktree (modified, deleted, untracked)."""
    if not paths:
        return []
    proc = _with_paths(root, paths, "add", "--dry-run", "-A", "--ignore-missing")
    out = []
    for line in proc.stdout.decode("utf-8", "replace").splitlines():
        verb, _, rest = line.partition(" ")
        if verb in ("add", "remove") and rest.startswith("'") and rest.endswith("'"):
            out.append(rest[1:-1])
    return out


def _restore(root: Path, head: str, paths: list[str]) -> None:
    """Put `paths` (index and files) back as they are at `head`; nothing else is touched."""
    if not paths:
        return
    _with_paths(root, paths, "reset", "-q", head or "HEAD", check=False)
    tracked = set(git.run(root, "ls-tree", "-r", "-z", "--name-only", head, "--",
                             "entities", check=False).stdout.decode("utf-8", "replace")
                  .split("\0")) if head else set()
    back = [p for p in paths if p in tracked]
    if back:
        _with_paths(root, back, "checkout", head, check=False)
    ent = root / "entities"
    for p in paths:
        if p in tracked:
            continue
        path = model.inside(root, p)
        if path is None:
            continue
        with contextlib.suppress(FileNotFoundError, IsADirectoryError):
            path.unlink()
        parent = path.parent
        while parent != ent and ent in parent.parents:
            try:
                parent.rmdir()
            except OSError:
                break
            parent = parent.parent


def _rollback(root: Path, head: str, paths: list[str]) -> None:
    """Undo a save: HEAD back to `head` (keeping others' local edits), our paths restored."""
    if (Path(index.git_dir(root)) / "rebase-merge").exists() or \
            (Path(index.git_dir(root)) / "rebase-apply").exists():
        git.run(root, "rebase", "--abort", check=False)
    if head and index.head_commit(root) != head:
        if git.run(root, "reset", "-q", "--keep", head, check=False).returncode != 0:
            git.run(root, "update-ref", "HEAD", head, check=False)
    _restore(root, head, paths)


def _check_index_clean(root: Path) -> None:
    if not git.ok(root, "diff", "--cached", "--quiet"):
        raise GaspError(f"the worktree {root} has staged changes; commit or unstage them first")


@dataclass
class Result:
    commit: str = ""
    pushed: bool = False
    attempts: int = 0
    summary: str = ""
    counts: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)


def _has_origin(root: Path) -> bool:
    return bool(git.out(root, "config", "--get", "remote.origin.url", check=False))


def _push(ws: Workspace) -> tuple[bool, str]:
    proc = git.run(ws.path, "push", "--quiet", "--porcelain", "origin",
                      f"HEAD:refs/heads/{ws.branch}", check=False)
    text = (proc.stdout + proc.stderr).decode(errors="replace")
    return proc.returncode == 0, text


def _rejected_nonff(text: str) -> bool:
    t = text.lower()
    return any(s in t for s in ("non-fast-forward", "fetch first", "[rejected]", "stale info",
                                "[remote rejected]") ) and "hook declined" not in t


def save(ws: Workspace, doc: dict[str, Any], *, push: bool = True,
         dry_run: bool = False) -> Result:
    """Apply `doc` to the workspace: all of it, committed and pushed, or nothing."""
    today = doc.get("date") or today_utc()
    res = Result()
    with locked(ws):
        if ws.bare is not None and push:
            from git_gasp.kg.workspace import _pull_ff

            _pull_ff(ws)
        root = ws.path
        _check_index_clean(root)
        pre_head = index.head_commit(root)
        plan = make_plan(root, doc, today)
        res.counts, res.notes = dict(plan.counts), list(plan.notes)
        res.files = sorted(plan.writes)
        summary = " ".join(str(doc.get("summary") or "").split()) or summarise(plan)
        res.summary = summary
        if not plan.writes or dry_run:
            return res
        dirty = _dirty_paths(root, res.files)
        if dirty:
            raise GaspError(
                f"{len(dirty)} file(s) this save would change have uncommitted edits "
                f"(e.g. {', '.join(dirty[:3])}); commit or discard them first"
            )
        message = f"perstate: {summary}"
        touched = list(res.files)
        try:
            apply_plan(plan)
            commit(root, res.files, message)
            if push and _has_origin(root):
                _push_with_retry(ws, doc, today, message, res, touched)
        except BaseException:
            _rollback(root, pre_head, sorted(set(touched)))
            raise
        res.commit = index.head_commit(root)
        if res.pushed and ws.bare is not None:
            mark_synced(ws.repo, ws.branch)
        return res


def _push_with_retry(ws: Workspace, doc: dict, today: str, message: str, res: Result,
                     touched: list[str]) -> None:
    root = ws.path
    remote_ref = f"refs/remotes/origin/{ws.branch}"
    last = ""
    for attempt in range(1, MAX_PUSH_ATTEMPTS + 1):
        res.attempts = attempt
        ok, last = _push(ws)
        if ok:
            res.pushed = True
            git.run(root, "update-ref", remote_ref, "HEAD", check=False)
            return
        if not _rejected_nonff(last):
            tail = last.strip().splitlines()[-1] if last.strip() else "git push failed"
            raise GaspError(f"push to origin failed, nothing saved: {tail}")
        # someone else pushed first: move our commit onto theirs
        if ws.bare is not None:
            fetch_branch(ws.bare, ws.branch)
        else:
            git.run(root, "fetch", "--quiet", "--no-tags", "origin",
                       f"+refs/heads/{ws.branch}:{remote_ref}", check=False)
        if git.run(root, "rebase", "--quiet", remote_ref, check=False).returncode != 0:
            git.run(root, "rebase", "--abort", check=False)
            # a conflict (both sides edited one file): re-apply the document on their head
            moved = git.run(root, "reset", "-q", "--keep", remote_ref, check=False)
            if moved.returncode != 0:
                raise GaspError("cannot rebase onto the remote: the worktree has local edits "
                                "in the way; nothing saved")
            plan = make_plan(root, doc, today)
            if not plan.writes:
                return
            touched.extend(plan.writes)
            dirty = _dirty_paths(root, sorted(plan.writes))
            if dirty:
                raise GaspError(f"uncommitted edits in {', '.join(dirty[:3])}; nothing saved")
            apply_plan(plan)
            commit(root, sorted(plan.writes), message)
            res.notes.append("re-applied on top of a concurrent change to the same files")
        time.sleep(random.uniform(0.05, 0.2) * attempt)
    raise GaspError(
        f"push still rejected after {MAX_PUSH_ATTEMPTS} attempts, nothing saved: "
        f"{last.strip().splitlines()[-1] if last.strip() else 'rejected'}"
    )


def warn(msg: str) -> None:
    print(f"git gasp: warning: {msg}", file=sys.stderr)
