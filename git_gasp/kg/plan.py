"""Planning a `kg save`: what to write and delete, from the document and the files.

Dedupe: an upserted entity matches existing ones by id, and by its label, aliases
and id against their ids, labels and aliases (case-insensitive). One match:
merge (updated_at, aliases union, sources appended, `### <date>` subsection).
Several: refuse and list them. Relation endpoints may be ids, labels or aliases.

Everything is planned in memory and validated before a byte is written. This
module only reads: the worktree's files and the index given to it; no git, no
writes (`save` applies, commits and pushes the plan).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from git_gasp.base.errors import GaspError, UsageError
from git_gasp.kg import ids, model
from git_gasp.kg.document import DATE_RE
from git_gasp.kg.frontmatter import parse_document, render_document
from git_gasp.kg.packed import Graph


def _norm(name: str) -> str:
    return " ".join(str(name).split()).lower()


@dataclass
class Plan:
    root: Path
    today: str
    idx: Graph
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
    if not (isinstance(v, str) and DATE_RE.match(v)):
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


def make_plan(root: Path, doc: dict[str, Any], today: str, graph: Graph) -> Plan:
    """What applying `doc` to the files under `root` (indexed as `graph`) would write.

    Validates every item against the current files; raises before anything is
    written. No git, no writes.
    """
    plan = Plan(root, today, graph)
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
    """A commit summary from the plan's counts (when the document gives none)."""
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
