"""Seeded, deterministic builder of realistic *packed* agent repositories for the benchmarks.

    .venv/bin/python bench/repos.py --out /work/benchrepos [--only NAME] [--quick]

or, as a module, ``build(name, dest)``. Each repo starts from the files ``git gasp
init`` writes (with a written identity and its identity_hash), then gets a history
made by ONE ``git fast-import`` process: every commit appends a few runtime-shaped
events to state/events.jsonl (each domain event followed by its state.ops_applied
pair: CreateNode of the matching kind and status, CreateRelation, UpdateNode on
existing nodes; causation chains back to run.started / goal.created), and sometimes
facts to memory/facts.jsonl and memory/archive/facts.jsonl (with active_memory.md
regenerated) and a run's entry to journal/JOURNAL.md. Merges join concurrent
branches with the merge driver's own result (git_gasp.merge). Then ``git gc
--aggressive`` and ``git clone --no-local``: the clone, with a work tree, is the
repository the benchmarks use (everything packed, old versions deltas of newer ones).

``big`` is packed differently, to the same shape: ``git gc --aggressive`` of its
2,000 versions of a log growing to 110 MB was measured infeasible here (over 55 minutes
without finishing: every delta attempt of its window of 250 compares tens of MB). What
gc makes of such a file is known, so ``logpack.py`` writes it directly: one pack of
the log's versions in recency order, the NEWEST whole and every older one a backward
OFS_DELTA of a newer version made of copy instructions of its prefix (at most 0xFFFFFF
bytes per copy), delta chains at most 50 deep (every 50th version against the newest,
the others against the next newer one in their block). Its .idx is written by
logpack too (each version hashed with hashlib, ~3 min for the ~110 GB that the 2,000
versions sum to): ``git index-pack`` hashes with git's collision-detecting sha1 and
ran 17 CPU-minutes (38 min wall, under load) without finishing; ``--git-index`` still
asks for it. fast-import then writes everything else, naming the log's blobs by id
(``M 100644 <id> state/events.jsonl``); ``git repack -a -d`` (without ``-f``: the log's
deltas are reused as written, the other files get git's own) makes one pack; ``git
fsck --connectivity-only`` and some versions read back by ``git cat-file`` (prefixes of
HEAD's log, their ids re-hashed by ``git hash-object``) spot-check it. The clone is
``--no-hardlinks`` (a copy of that one pack, which pack-objects already wrote), not
``--no-local``, whose index-pack would re-hash every version once more (``--no-local``
asks for it). The payload scale stays that of the others (~550 B/event). Built here
in 8 minutes under load.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from logpack import write_versions  # noqa: E402

from git_gasp.merge.driver import merge_bytes, rule_for  # noqa: E402
from git_gasp.protocol.envelope import OPS_KIND, Event, serialize  # noqa: E402
from git_gasp.protocol.identity import identity_hash  # noqa: E402
from git_gasp.store.layout import manifest_text  # noqa: E402

LOG = "state/events.jsonl"
FACTS = ("memory/facts.jsonl", "memory/archive/facts.jsonl")
ACTIVE = "memory/active_memory.md"
JOURNAL = "journal/JOURNAL.md"
WHEN = 1767225600  # 2026-01-01T00:00:00Z, the first commit
AGENT_ID = "evolve"
NAMES = ("mid", "merges", "big")

_WORDS = (
    "retry counter timeout state persist backoff jitter flaky network socket test cargo "
    "build cache lock lease fold graph node relation snapshot integrity commit branch "
    "merge append-only durable fsync rename worker agent skill patch eval decision goal "
    "regression latency budget token prompt summary handler parser envelope schema "
    "résumé naïve café — ✓"
).split()


@dataclass(frozen=True)
class Spec:
    """What one benchmark repository holds."""

    commits: int  # including the layout commit (merges and side commits count)
    events: int
    facts: tuple[int, int]  # memory/facts.jsonl, memory/archive/facts.jsonl
    journal_lines: int
    text: float  # scale of free-text lengths (tunes bytes per event to ~500)
    seed: int
    merge_rounds: int = 0  # >0: main and side each commit, then a merge, per round
    log_pack: bool = False  # write the log's versions as a gc-shaped pack (logpack.py)


SPECS = {
    "mid": Spec(650, 7_800, (480, 200), 6_500, 0.6, 11_01),
    "merges": Spec(401, 6_000, (300, 100), 4_000, 0.6, 11_02, merge_rounds=100),
    "big": Spec(2_000, 200_000, (1_500, 500), 40_000, 0.6, 11_03, log_pack=True),
}


def spec_for(name: str, quick: bool = False) -> Spec:
    """The Spec of `name`, scaled down tenfold with `quick`."""
    s = SPECS[name]
    if not quick:
        return s
    return Spec(max(s.commits // 10, 11), s.events // 10, (s.facts[0] // 10, s.facts[1] // 10),
                s.journal_lines // 10, s.text, s.seed, s.merge_rounds // 10, s.log_pack)


# --- events ---------------------------------------------------------------------------


class Gen:
    """Runtime-shaped events from one seeded RNG: units of (domain event, its ops event)."""

    def __init__(self, seed: int, text_scale: float = 1.0) -> None:
        self.rng = random.Random(seed)
        self.scale = text_scale
        self.ts = 1_767_225_600_000 + seed
        self.goals: list[tuple[str, str]] = []  # (goal id, creating event id)
        self.me = {"kind": "agent", "id": AGENT_ID}

    def uid(self, prefix: str) -> str:
        return f"{prefix}_{uuid.UUID(int=self.rng.getrandbits(128), version=4)}"

    def text(self, lo: int, hi: int) -> str:
        rng = self.rng
        target = int(rng.randint(lo, hi) * self.scale)
        out: list[str] = []
        size = 0
        while size < target:
            w = rng.choice(_WORDS)
            out.append(w)
            size += len(w) + 1
        return " ".join(out)

    def _event(self, kind: str, payload: object, cause: str | None, corr: str,
               actor: tuple[str, str] = ("agent", AGENT_ID)) -> Event:
        self.ts += self.rng.randint(1, 2_000)
        return Event(self.uid("event"), 1, self.ts, actor[0], actor[1], kind, payload, cause,
                     corr)

    def unit(self, kind: str, payload: dict, ops: list, cause: str | None, corr: str,
             actor: tuple[str, str] = ("agent", AGENT_ID)) -> list[Event]:
        """A domain event and the state.ops_applied event that pairs with it."""
        dom = self._event(kind, payload, cause, corr, actor)
        self.ts += 1
        return [dom, Event(self.uid("event"), 1, self.ts, actor[0], actor[1], OPS_KIND, ops,
                           dom.id, corr)]

    def run(self) -> Iterator[tuple[list[Event], dict | None]]:
        """One run's units; the run.finished unit carries the run's journal facts."""
        rng, me = self.rng, self.me
        if not self.goals or rng.random() < 0.3:
            goal = self.uid("goal")
            title = self.text(20, 50)
            u = self.unit("goal.created",
                          {"id": goal, "title": title, "summary": self.text(60, 160),
                           "status": "Open", "owner": me,
                           "metadata": {"priority": rng.randint(1, 5)}},
                          [{"CreateNode": {"id": goal, "kind": "goal",
                                           "props": {"title": title, "status": "Open"}}}],
                          None, goal)
            self.goals.append((goal, u[0].id))
            yield u, None
        goal, goal_event = rng.choice(self.goals[-8:])
        rid = self.uid("run")
        task = self.text(30, 90)
        started = self.unit(
            "run.started", {"run_id": rid, "task": task, "goal_id": goal, "metadata": {}},
            [{"CreateNode": {"id": rid, "kind": "run",
                             "props": {"task": task, "status": "running", "goal_id": goal}}},
             {"CreateRelation": {"from": rid, "rel": "serves", "to": goal, "props": {}}}],
            goal_event, rid)
        yield started, None
        start = started[0].id
        made: list[tuple[str, str, str]] = []  # (kind, id, status) for the journal
        calls = 0
        for _ in range(rng.randint(1, 3)):
            last = start
            for _ in range(rng.randint(1, 2)):
                for what, tool in (("model", "claude-sonnet-4"), ("tool", "cargo test")):
                    cid = self.uid(f"{what}_call")
                    calls += 1
                    key = "model" if what == "model" else "tool"
                    summary = self.text(30, 90)
                    actor = ("agent", AGENT_ID) if what == "model" else ("tool", "cargo")
                    u = self.unit(f"{what}.called",
                                  {"id": cid, "run_id": rid, key: tool, "input_summary": summary,
                                   "metadata": {}},
                                  [{"CreateNode": {"id": cid, "kind": f"{what}_call",
                                                   "props": {key: tool, "input_summary": summary,
                                                             "run_id": rid, "status": "running"}}},
                                   {"CreateRelation": {"from": cid, "rel": "produced_by",
                                                       "to": rid, "props": {}}}],
                                  last, rid, actor)
                    yield u, None
                    ok = rng.random() < 0.85
                    out = self.text(30, 110)
                    meta = ({"input_tokens": rng.randint(500, 90_000),
                             "output_tokens": rng.randint(50, 4_000)} if what == "model"
                            else {"exit_code": 0 if ok else 101})
                    u = self.unit(f"{what}.finished",
                                  {"id": cid, "run_id": rid, "output_summary": out, "success": ok,
                                   "metadata": meta},
                                  [{"UpdateNode": {"id": cid, "props": {
                                      "status": "succeeded" if ok else "failed", "success": ok,
                                      "output_summary": out}}}],
                                  u[0].id, rid, actor)
                    yield u, None
                    last = u[0].id
            if rng.random() < 0.25:
                obs = self.uid("observation")
                summary = self.text(40, 120)
                u = self.unit("observation.created",
                              {"id": obs, "summary": summary, "metadata": {}},
                              [{"CreateNode": {"id": obs, "kind": "observation",
                                               "props": {"summary": summary}}},
                               {"CreateRelation": {"from": obs, "rel": "produced_by", "to": rid,
                                                   "props": {}}}],
                              last, rid)
                yield u, None
                made.append(("observation", obs, ""))
            patch = self.uid("patch")
            ptitle = self.text(20, 60)
            commit = f"{rng.getrandbits(160):040x}"
            pu = self.unit("patch.proposed",
                           {"id": patch, "title": ptitle, "status": "Proposed", "created_by": me,
                            "summary": self.text(60, 160), "metadata": {"commit": commit}},
                           [{"CreateNode": {"id": patch, "kind": "patch", "props": {
                               "title": ptitle, "status": "Proposed",
                               "references_commit": commit[:7]}}},
                            {"CreateRelation": {"from": patch, "rel": "advances", "to": goal,
                                                "props": {}}},
                            {"CreateRelation": {"from": patch, "rel": "produced_by", "to": rid,
                                                "props": {}}}],
                           last, rid)
            yield pu, None
            ev = self.uid("eval")
            passed = rng.random() < 0.6
            status = "Passed" if passed else "Failed"
            score = round(rng.random(), 3)
            cmd = "cargo test " + self.text(5, 30)
            eu = self.unit("eval.finished",
                           {"id": ev, "command": cmd, "status": status, "score": score,
                            "metadata": {"duration_ms": rng.randint(100, 600_000)}},
                           [{"CreateNode": {"id": ev, "kind": "eval", "props": {
                               "command": cmd, "status": status, "score": score}}},
                            {"CreateRelation": {"from": patch, "rel": "validated_by", "to": ev,
                                                "props": {}}}],
                           pu[0].id, rid)
            yield eu, None
            dec = self.uid("decision")
            dstatus = "Approved" if passed else "Rejected"
            promoted = "Promoted" if passed else "Rejected"
            yield self.unit(
                "decision.created",
                {"id": dec, "status": dstatus, "reason": self.text(40, 140), "decided_by": me,
                 "metadata": {}},
                [{"CreateNode": {"id": dec, "kind": "decision", "props": {"status": dstatus}}},
                 {"CreateRelation": {"from": patch, "rel": "approved_by" if passed
                                     else "rejected_by", "to": dec, "props": {}}},
                 {"UpdateNode": {"id": patch, "props": {"status": promoted,
                                                        "review": {"decision": dec,
                                                                   "score": score}}}}],
                eu[0].id, rid), None
            made += [("patch", patch, promoted), ("eval", ev, status), ("decision", dec, dstatus)]
        outcome = "success" if rng.random() < 0.7 else "failure"
        fin = self.unit("run.finished", {"run_id": rid, "outcome": outcome, "metadata": {}},
                        [{"UpdateNode": {"id": rid, "props": {"status": "finished",
                                                              "outcome": outcome}}}],
                        start, rid)
        yield fin, {"run": rid, "task": task, "outcome": outcome, "goal": goal,
                    "t0": started[0].ts_ms, "t1": fin[0].ts_ms, "made": made, "calls": calls}


class Stream:
    """Units on demand from endless runs of one Gen."""

    def __init__(self, gen: Gen) -> None:
        self.gen = gen
        self._it = self._units()

    def _units(self) -> Iterator[tuple[list[Event], dict | None]]:
        while True:
            yield from self.gen.run()

    def take(self, n_events: int) -> tuple[list[Event], list[dict]]:
        """At least `n_events` events (whole units) and the runs they finish."""
        events: list[Event] = []
        runs: list[dict] = []
        while len(events) < n_events:
            unit, run = next(self._it)
            events += unit
            if run is not None:
                runs.append(run)
        return events, runs


# --- the files ------------------------------------------------------------------------


def _when(ms: int) -> str:
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(ms / 1000))


def journal_entry(run: dict, gen: Gen, due: int) -> bytes:
    """A run's JOURNAL.md block, shaped like git_gasp.runtime.journal's, padded with the
    agent's notes to about `due` lines (so the journal keeps pace with its target)."""
    lines = ["", f"## {run['run']}", "", f"- task: {run['task']}",
             f"- outcome: {run['outcome']}", f"- when: {_when(run['t0'])} to {_when(run['t1'])}",
             f"- goal: {run['goal']}"]
    lines += [f"- {kind} {nid}" + (f" [{status}]" if status else "")
              for kind, nid, status in run["made"]]
    lines.append(f"- calls: {run['calls']} model/tool call(s)")
    notes = due - len(lines) - 2
    if notes > 0:
        lines += ["", "Notes:"] + [f"  {gen.text(40, 100)}" for _ in range(notes)]
    return ("\n".join(lines) + "\n").encode()


def fact_line(gen: Gen, derived: str, supersedes: str | None) -> tuple[str, bytes]:
    fid = gen.uid("fact")
    obj = {"id": fid, "ts_ms": gen.ts, "text": gen.text(40, 160), "derived_from": [derived],
           "supersedes": supersedes}
    return fid, (json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


def active_memory(facts: bytes) -> bytes:
    """memory/active_memory.md: the live facts (latest of each supersede chain)."""
    rows = [json.loads(line) for line in facts.splitlines()]
    gone = {r["supersedes"] for r in rows if r["supersedes"]}
    live = [r for r in rows if r["id"] not in gone]
    if not live:
        return b"# Active memory\n\nNo facts yet.\n"
    body = "".join(f"- {r['text']} ({r['id']})\n" for r in live)
    return f"# Active memory\n\n{body}".encode()


IDENTITY = (
    "# Identity\n\nI am {agent}, a coding agent that keeps a Rust service's test suite green.\n\n"
    "## Purpose\n\nFind flaky and failing tests, propose small patches, and promote only "
    "patches whose evals pass.\n\n## Hard rules\n\n- Never rewrite history or the log.\n"
    "- Never promote a patch without a passing eval.\n- Identity changes need a human's "
    "approval recorded in the log.\n"
)


def layout_files() -> dict[str, bytes]:
    """What `git gasp init` commits (read from a real init), with a written identity."""
    with tempfile.TemporaryDirectory(prefix="gasp-init-") as tmp:
        repo = Path(tmp) / AGENT_ID
        repo.mkdir()
        _git(repo, "init", "-q", "-b", "main")
        exe = Path(sys.executable).with_name("git-gasp")
        cmd = [str(exe)] if exe.exists() else ["git", "gasp"]
        subprocess.run([*cmd, "init", "--agent-id", AGENT_ID], cwd=repo, check=True,
                       capture_output=True)
        names = _git(repo, "ls-tree", "-r", "-z", "--name-only", "HEAD").split(b"\0")
        files = {n.decode(): (repo / n.decode()).read_bytes() for n in names if n}
    ident = IDENTITY.format(agent=AGENT_ID).encode()
    files["identity/IDENTITY.md"] = ident
    files["AGENT.md"] = manifest_text(AGENT_ID, identity_hash([(b"identity/IDENTITY.md", ident)]))
    return files


class Tree:
    """The files of one branch tip: their bytes, the recorded version each one grew from,
    and what changed since the last commit."""

    def __init__(self, files: dict[str, bytes]) -> None:
        self.files = {k: bytearray(v) for k, v in files.items()}
        self.dirty: set[str] = set(files)
        self.at: dict[str, tuple[int, int]] = {}  # path -> (its version, that version's size)
        self.rewritten: set[str] = set()  # dirty paths that are not an append to `at`

    def append(self, path: str, data: bytes) -> None:
        if data:
            self.files.setdefault(path, bytearray()).extend(data)
            self.dirty.add(path)

    def put(self, path: str, data: bytes) -> None:
        old = self.files.get(path, bytearray())
        if old == data:
            return
        if data.startswith(old):
            self.append(path, data[len(old):])
            return
        self.files[path] = bytearray(data)
        self.dirty.add(path)
        self.rewritten.add(path)

    def copy(self) -> Tree:
        t = Tree({})
        t.files = {k: bytearray(v) for k, v in self.files.items()}
        t.at = dict(self.at)
        return t


class Importer:
    """Records commits, then feeds ONE `git fast-import` every blob and commit.

    fast-import deltas a blob against the blob written just before it, so the blobs go
    first, path by path, each version after the one it grew from (a commit-by-commit
    stream would delta the log against a facts file and store every version whole).
    Versions are kept as (base version, appended bytes): memory ~ the final sizes."""

    def __init__(self) -> None:
        self.versions: dict[str, list[tuple[int | None, bytes]]] = {}
        self.commits: list[tuple[str, list[int], str, list[tuple[str, int]]]] = []

    def commit(self, tree: Tree, parents: list[int], msg: str, branch: str = "main") -> int:
        """Record a commit of `tree`'s changes; return its number (a parent for later)."""
        changes = []
        for path in sorted(tree.dirty):
            data = tree.files[path]
            versions = self.versions.setdefault(path, [])
            if path in tree.at and path not in tree.rewritten:
                base, size = tree.at[path]
                versions.append((base, bytes(data[size:])))
            else:
                versions.append((None, bytes(data)))
            tree.at[path] = (len(versions) - 1, len(data))
            changes.append((path, len(versions) - 1))
        tree.dirty.clear()
        tree.rewritten.clear()
        self.commits.append((branch, parents, msg, changes))
        return len(self.commits) - 1

    def _content(self, path: str, vid: int, cache: dict[int, bytes]) -> bytes:
        """Version `vid` of `path`, rebuilt from the nearest cached (or whole) ancestor."""
        versions = self.versions[path]
        chain: list[int] = []
        v: int | None = vid
        while v is not None and v not in cache:
            chain.append(v)
            v = versions[v][0]
        data = cache[v] if v is not None else b""
        for c in reversed(chain):
            data = data + versions[c][1]  # a whole version has no base: data is b"" here
            cache[c] = data
            while len(cache) > 4:
                del cache[next(iter(cache))]
        return data

    def linear_versions(self, path: str) -> tuple[bytes, list[int]]:
        """The final content of `path` and its versions' lengths, when every version
        appends to the one before it (else ValueError)."""
        versions = self.versions[path]
        parts, lengths, size = [], [], 0
        for vid, (base, data) in enumerate(versions):
            if base != (vid - 1 if vid else None):
                raise ValueError(f"{path}: version {vid} does not append to {vid - 1}")
            parts.append(data)
            size += len(data)
            lengths.append(size)
        return b"".join(parts), lengths

    def write(self, repo: Path, given: dict[str, list[str]] | None = None) -> None:
        """Run fast-import in `repo` on everything recorded; the versions of a path in
        `given` are the blob ids listed there, already in the repository."""
        given = given or {}
        proc = subprocess.Popen(["git", "fast-import", "--quiet", "--done"], cwd=repo,
                                stdin=subprocess.PIPE)
        w = proc.stdin.write
        marks: dict[tuple[str, int], int] = {}
        for path in sorted(set(self.versions) - set(given)):
            cache: dict[int, bytes] = {}
            for vid in range(len(self.versions[path])):
                data = self._content(path, vid, cache)
                marks[path, vid] = len(marks) + 1
                w(b"blob\nmark :%d\ndata %d\n" % (len(marks), len(data)))
                w(data)
                w(b"\n")
        first = len(marks) + 1
        for n, (branch, parents, msg, changes) in enumerate(self.commits):
            when = WHEN + (n + 1) * 577
            w(b"commit refs/heads/%s\nmark :%d\n" % (branch.encode(), first + n))
            w(b"author Evolve Agent <evolve@agents.example> %d +0000\n" % when)
            w(b"committer Evolve Agent <evolve@agents.example> %d +0000\n" % when)
            raw = msg.encode()
            w(b"data %d\n%s\n" % (len(raw), raw))
            if parents:
                w(b"from :%d\n" % (first + parents[0]))
            for extra in parents[1:]:
                w(b"merge :%d\n" % (first + extra))
            for path, vid in changes:
                ref = given[path][vid].encode() if path in given else b":%d" % marks[path, vid]
                w(b"M 100644 %s %s\n" % (ref, path.encode()))
            w(b"\n")
        w(b"done\n")
        proc.stdin.close()
        if proc.wait():
            raise SystemExit("git fast-import failed")


class Agent:
    """One line of work (a branch): its events, facts and journal, spread evenly over its
    commits (running totals, so the final counts are the targets)."""

    def __init__(self, spec: Spec, seed: int, share: float, commits: int) -> None:
        self.gen = Gen(seed, spec.text)
        self.stream = Stream(self.gen)
        self.commits = max(commits, 1)
        self.events = spec.events * share
        self.facts = [f * share for f in spec.facts]
        self.journal = spec.journal_lines * share
        self.fact_ids: list[list[str]] = [[], []]
        self.step_no = 0
        self.emitted = 0
        self.lines = 0

    def step(self, tree: Tree) -> str:
        """Append one commit's worth to `tree`; return the commit message."""
        self.step_no += 1
        part = self.step_no / self.commits
        events, runs = self.stream.take(max(round(self.events * part) - self.emitted, 1))
        self.emitted += len(events)
        tree.append(LOG, b"".join(serialize(e) for e in events))
        rng = self.gen.rng
        for i, total in enumerate(self.facts):
            ids = self.fact_ids[i]
            for _ in range(round(total * part) - len(ids)):
                old = ids[-rng.randint(1, len(ids))] if ids and rng.random() < 0.1 else None
                fid, line = fact_line(self.gen, rng.choice(events).id, old)
                ids.append(fid)
                tree.append(FACTS[i], line)
                if i == 0:
                    tree.put(ACTIVE, active_memory(bytes(tree.files[FACTS[0]])))
        for run in runs:
            due = round(self.journal * min(self.emitted / self.events, 1.0)) - self.lines
            entry = journal_entry(run, self.gen, due)
            self.lines += entry.count(b"\n")
            tree.append(JOURNAL, entry)
        kinds = sorted({e.kind for e in events if e.kind != OPS_KIND})
        return f"gasp: {len(events)} events ({', '.join(kinds[:4])})\n"


def generate(spec: Spec, repo: Path, index: str = "self") -> None:
    """The whole history of `spec` into the (empty) git repo at `repo`: with
    `spec.log_pack`, the log's versions as one gc-shaped pack (logpack.py), then
    everything else by fast-import; else all of it by fast-import."""
    imp = record(spec)
    if not spec.log_pack:
        imp.write(repo)
        return
    content, lengths = imp.linear_versions(LOG)
    del imp.versions[LOG]
    ids = write_versions(repo / "objects" / "pack", content, lengths, index=index)
    del content
    imp.write(repo, given={LOG: ids})


def record(spec: Spec) -> Importer:
    """The whole history of `spec`, recorded (nothing written yet)."""
    imp = Importer()
    tree = Tree(layout_files())
    tip = imp.commit(tree, [], f"gasp: initialise agent {AGENT_ID}\n")
    if not spec.merge_rounds:
        agent = Agent(spec, spec.seed, 1.0, spec.commits - 1)
        for _ in range(spec.commits - 1):
            tip = imp.commit(tree, [tip], agent.step(tree))
        return imp
    # Rounds of: side branch commits, main commits, then main merges side; commits not
    # used by the rounds are linear main commits first.
    per_round = (spec.commits - 1) // spec.merge_rounds  # >= 3
    side_n = max((per_round - 1) // 2, 1)
    main_n = per_round - 1 - side_n
    linear = spec.commits - 1 - per_round * spec.merge_rounds
    work = linear + spec.merge_rounds * (side_n + main_n)
    main_commits = linear + spec.merge_rounds * main_n
    main = Agent(spec, spec.seed, main_commits / work, main_commits)
    side = Agent(spec, spec.seed + 1, spec.merge_rounds * side_n / work,
                 spec.merge_rounds * side_n)
    for _ in range(linear):
        tip = imp.commit(tree, [tip], main.step(tree))
    for r in range(spec.merge_rounds):
        base = tree.copy()
        theirs = tree.copy()
        stip = tip
        for _ in range(side_n):
            stip = imp.commit(theirs, [stip], side.step(theirs), branch="side")
        for _ in range(main_n):
            tip = imp.commit(tree, [tip], main.step(tree))
        for path in sorted(set(tree.files) | set(theirs.files)):
            ours = bytes(tree.files.get(path, b""))
            other = bytes(theirs.files.get(path, b""))
            if ours == other:
                continue
            old = bytes(base.files.get(path, b""))
            if path == ACTIVE:
                continue  # regenerated below from the merged facts
            result = merge_bytes(rule_for(path), old, ours, other, 7)
            if not result.clean:
                raise SystemExit(f"merge of {path} in round {r} conflicts: {result.conflicts}")
            tree.put(path, result.data)
        tree.put(ACTIVE, active_memory(bytes(tree.files[FACTS[0]])))
        tip = imp.commit(tree, [tip, stip], "Merge branch 'side'\n")
    return imp


# --- build ----------------------------------------------------------------------------


def _git(cwd: Path, *args: str) -> bytes:
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True)
    if proc.returncode:
        raise SystemExit(f"git {' '.join(args)} failed in {cwd}: "
                         f"{proc.stderr.decode(errors='replace')}")
    return proc.stdout


def git_env() -> dict[str, str]:
    """The environment for the builder's git: no user or system config."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("GIT_") or k in ("GIT_EXEC_PATH",)}
    env.update({"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
                "GIT_AUTHOR_NAME": "Evolve Agent", "GIT_AUTHOR_EMAIL": "evolve@agents.example",
                "GIT_COMMITTER_NAME": "Evolve Agent",
                "GIT_COMMITTER_EMAIL": "evolve@agents.example"})
    return env


def build(name: str, dest: Path | str, *, quick: bool = False, git_index: bool = False,
          no_local: bool | None = None) -> dict:
    """Build repository `name` at `dest` (replaced if it exists); return its figures.

    For a `log_pack` spec (big): `git_index` lets `git index-pack` hash the log's
    versions (else logpack does), `no_local` clones with --no-local (default: only
    the repos not of `log_pack`, whose clone would re-hash every version once more)."""
    spec = spec_for(name, quick)
    dest = Path(dest).resolve()
    dest.parent.mkdir(parents=True, exist_ok=True)
    old_env = dict(os.environ)
    os.environ.clear()
    os.environ.update(git_env())
    t0 = time.perf_counter()
    work = Path(tempfile.mkdtemp(prefix=f".{name}-build-", dir=dest.parent))
    try:
        src = work / "src.git"
        _git(work, "init", "-q", "--bare", "-b", "main", str(src))
        generate(spec, src, "git" if git_index else "self")
        t_gen = time.perf_counter() - t0
        # A big history of one growing file: bound the delta window's memory.
        _git(src, "config", "pack.windowMemory", "1g")
        if spec.log_pack:
            # The log's deltas are written already, as gc makes them: reuse them (no -f),
            # delta only the rest; then fsck the links and spot-check some versions.
            _git(src, "repack", "-q", "-a", "-d")
            _git(src, "fsck", "--connectivity-only", "--no-dangling")
            spot_check_log(src)
        else:
            _git(src, "gc", "-q", "--aggressive", "--prune=now")
        t_gc = time.perf_counter() - t0 - t_gen
        clone = work / "clone"
        if no_local is None:
            no_local = not spec.log_pack
        how = "--no-local" if no_local else "--no-hardlinks"
        _git(work, "clone", "-q", how, str(src), str(clone))
        _git(clone, "remote", "remove", "origin")
        _git(clone, "config", "user.name", "Evolve Agent")
        _git(clone, "config", "user.email", "evolve@agents.example")
        old = work / "old"
        if dest.exists():
            dest.rename(old)  # the new repository replaces the old in one rename
        clone.rename(dest)
    finally:
        shutil.rmtree(work, ignore_errors=True)
        os.environ.clear()
        os.environ.update(old_env)
    seconds = time.perf_counter() - t0
    return describe(name, dest) | {"build_s": round(seconds, 1), "generate_s": round(t_gen, 1),
                                   "gc_s": round(t_gc, 1), "quick": quick,
                                   "packed_by": "log pack written, repack -a -d" if spec.log_pack
                                   else "gc --aggressive",
                                   "clone": how}


def spot_check_log(repo: Path) -> None:
    """Some commits' logs, read back by git, are prefixes of HEAD's, and git's own
    `hash-object` gives them the ids they are stored under (the written pack reads as
    the versions it was made of, under their right ids)."""
    commits = int(_git(repo, "rev-list", "--count", "HEAD"))
    head = _git(repo, "cat-file", "blob", f"HEAD:{LOG}")
    for back in (0, 1, 2, 49, 50, 51, commits // 2, commits - 2):
        if not 0 <= back < commits - 1:
            continue
        rev = f"HEAD~{back}:{LOG}"
        old = _git(repo, "cat-file", "blob", rev)
        if not head.startswith(old):
            raise SystemExit(f"{rev} is not a prefix of HEAD's log")
        hashed = subprocess.run(["git", "hash-object", "--stdin"], cwd=repo, input=old,
                                capture_output=True, check=True).stdout.strip()
        if hashed != _git(repo, "rev-parse", rev).strip():
            raise SystemExit(f"{rev} is stored under an id that is not its hash")


def describe(name: str, repo: Path) -> dict:
    """Counts and sizes of a built repository."""
    env = git_env()

    def g(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=repo, capture_output=True, env=env,
                              check=True, text=True).stdout

    counts = dict(line.split(": ") for line in g("count-objects", "-v").splitlines())
    log = (repo / LOG).read_bytes()
    return {
        "name": name, "path": str(repo),
        "commits": int(g("rev-list", "--count", "HEAD")),
        "merges": int(g("rev-list", "--count", "--merges", "HEAD")),
        "events": log.count(b"\n"), "log_bytes": len(log),
        "facts": [(repo / f).read_bytes().count(b"\n") for f in FACTS],
        "journal_lines": (repo / JOURNAL).read_bytes().count(b"\n"),
        "loose_objects": int(counts["count"]), "packs": int(counts["packs"]),
        "pack_kib": int(counts["size-pack"]),
    }


def write_readme(out: Path, rows: dict[str, dict], building: str | None = None) -> None:
    """/work/benchrepos/README: what exists, sizes, commit counts, build seconds."""
    lines = [
        "Benchmark agent repositories, built by bench/repos.py:",
        "  .venv/bin/python bench/repos.py --out DIR [--only NAME] [--quick]",
        "Each is a `git clone --no-local` of a fast-import history after `git gc "
        "--aggressive`",
        "(big: its log versions written as a pack of gc's shape, then `git repack -a -d`;"
        " see bench/repos.py)",
        "(all packed, work tree checked out, no remote); `git gasp check` passes all seven "
        "checks.",
        "Treat them as read-only: copy one (cp -a) before committing into it.",
        "",
    ]
    for name in NAMES:
        r = rows.get(name)
        if name == building:
            lines.append(f"{name}: being built (started {time.strftime('%H:%M UTC', time.gmtime())}"
                         + ("; the one before it is still in place below)" if r else ")"))
        if r is None:
            if name != building:
                lines.append(f"{name}: not built yet")
            continue
        lines.append(
            f"{name}{' (--quick)' if r['quick'] else ''}: {r['path']}\n"
            f"  {r['commits']} commits ({r['merges']} merges), {r['events']:,} events, log "
            f"{r['log_bytes'] / 1e6:.1f} MB ({r['log_bytes'] / max(r['events'], 1):.0f} B/event),"
            f"\n  facts {r['facts'][0]} + {r['facts'][1]} ({FACTS[0]}, {FACTS[1]}), "
            f"{JOURNAL} {r['journal_lines']:,} lines\n"
            f"  packs {r['packs']} ({r['pack_kib'] / 1024:.1f} MiB), loose objects "
            f"{r['loose_objects']}\n"
            f"  built in {r['build_s']} s (generate {r['generate_s']} s, "
            f"{r.get('packed_by', 'gc --aggressive')} {r['gc_s']} s)")
    atomic = out / ".README.tmp"
    atomic.write_text("\n".join(lines) + "\n")
    atomic.rename(out / "README")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("/work/benchrepos"))
    ap.add_argument("--only", choices=NAMES, action="append", help="build only NAME")
    ap.add_argument("--quick", action="store_true", help="a tenth of the size")
    ap.add_argument("--git-index", action="store_true",
                    help="big: `git index-pack` hashes the written log pack (slow)")
    ap.add_argument("--no-local", action="store_true",
                    help="big: clone with --no-local too (re-hashes every version)")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    state = args.out / "repos.json"
    rows = json.loads(state.read_text()) if state.exists() else {}
    for name in args.only or NAMES:
        print(f"building {name} …", flush=True)
        write_readme(args.out, rows, building=name)
        rows[name] = build(name, args.out / name, quick=args.quick, git_index=args.git_index,
                           no_local=True if args.no_local else None)
        print(json.dumps(rows[name]), flush=True)
        tmp = args.out / ".repos.json.tmp"
        tmp.write_text(json.dumps(rows, indent=1) + "\n")
        tmp.rename(state)
        write_readme(args.out, rows)


if __name__ == "__main__":
    main()
