"""`git blame` joined to the fold: each line's commit, the patch that pinned it (or
pinned a later commit of the same change), that patch's run, goal, eval and decision,
and for a line no patch explains, what a Git AI note or an imported Agent Trace record
says of it.

*The same change*: a patch pinning commit C also explains the commits its run made
before C on C's first-parent line: walking C's first parents, every commit made at or
after the run started (to the millisecond: a commit of the second the run started in is
before it), up to (not including) the first merge, commit pinned by another
patch, or commit older than the run. A patch without a run explains its commit alone.

Cost: one ``git blame --porcelain`` of the file; one ``git log`` over the patches' tips
only when a line's commit is young enough to be in some run's change; one ``git log``
for the notes only when ``refs/notes/ai`` exists and a line is still unexplained. An
`Explainer` kept across files (`git gasp stats`) pays the last two once, not per file.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

from git_gasp.attribution.gitai import Note, read_notes
from git_gasp.attribution.pins import Pins, Why
from git_gasp.attribution.porcelain import BlameLine, CommitInfo, PorcelainError, parse_porcelain
from git_gasp.base import git
from git_gasp.base.errors import GaspError
from git_gasp.odb.gitdirs import locate
from git_gasp.protocol.graph import Graph


class BlameError(GaspError):
    """A blame git refused (no such path, bad -L, unknown revision): one line, exit 1."""


@dataclass
class Row:
    """One blamed line and what explains it."""

    src: BlameLine
    info: CommitInfo
    why: Why | None = None
    pinned: bool = False  # the line's commit is the one the patch pinned
    ai: dict | None = None  # a Git AI note's or Agent Trace record's word on the line

    @property
    def commit(self) -> str | None:
        return None if self.info.uncommitted else self.src.commit

    def to_json(self) -> dict:
        """The line as `git gasp blame --json` prints it (docs/json.md)."""
        ids = self.why.ids() if self.why else dict.fromkeys(
            ("patch", "goal", "run", "eval", "decision"))
        out = {"line": self.src.line, "commit": self.commit,
               "path": self.src.orig_path.decode("utf-8", "replace"),
               "orig_line": self.src.orig_line, **ids,
               "person": self.why.person if self.why else None}
        if self.why is not None:
            out["pinned"] = self.pinned
        if self.ai is not None:
            out["ai"] = self.ai
        return out


def _git_message(exc: git.GitError) -> str:
    lines = [ln for ln in exc.stderr.strip().splitlines() if ln.strip()]
    text = lines[-1] if lines else f"git blame exited with status {exc.returncode}"
    for prefix in ("fatal: ", "error: "):
        if text.startswith(prefix):
            text = text[len(prefix):]
    return text


def run_blame(cwd: str, path: str, *, ranges: Sequence[str] = (), rev: str | None = None
              ) -> bytes:
    """`git blame --porcelain [-L R]… [REV] -- PATH` in `cwd` (git's defaults: whole-file
    renames followed, no -M/-C), its stdout; BlameError with git's reason."""
    if rev is not None and (not rev or rev.startswith("-")):
        raise BlameError(f"{rev!r} is not a revision")
    args = ["blame", "--porcelain"]
    for r in ranges:
        args += ["-L", r]
    if rev is not None:
        args.append(rev)
    try:
        return git.run(cwd, *args, "--", path).stdout
    except git.GitError as exc:
        raise BlameError(f"blame {path}: {_git_message(exc)}") from None


def top_relative(cwd: str, path: str) -> bytes | None:
    """`path` (from `cwd`) from the top of its work tree, as git names it; None when the
    repository's layout is not a plain one (`odb.gitdirs.locate`)."""
    try:
        dirs = locate(cwd)
    except (OSError, ValueError):
        return None
    if dirs is None:
        return None
    full = os.path.normpath(os.path.join(os.path.realpath(cwd), path))
    rel = os.path.relpath(full, os.path.realpath(dirs.path))
    return None if rel.startswith("..") else os.fsencode(rel).replace(os.sep.encode(), b"/")


def _changes(cwd: str, pins: Pins) -> dict[str, Why]:
    """Every commit a patch's change holds (see the module doc), to its patch."""
    runs = [w for w in pins.order if w.run_started_ms is not None]
    if not runs:
        return {}
    since = min(w.run_started_ms for w in runs) // 1000
    tips = sorted({w.pin for w in runs})
    proc = git.run(cwd, "log", "--first-parent", "--format=%H %ct %P", f"--max-age={since}",
                   "--stdin", input=("\n".join(tips) + "\n").encode(), check=False)
    if proc.returncode != 0:
        return {}
    graph: dict[str, tuple[int, list[str]]] = {}
    for raw in proc.stdout.decode("ascii", "replace").splitlines():
        parts = raw.split()
        if len(parts) >= 2 and parts[1].isdigit():
            graph[parts[0]] = (int(parts[1]), parts[2:])
    found: dict[str, Why] = {}
    for why in runs:
        tip = why.pin if why.pin in graph else next(
            (c for c in graph if c.startswith(why.pin)), None)
        if tip is None:
            continue
        parents = graph[tip][1]
        while len(parents) == 1 and parents[0] in graph:
            sha = parents[0]
            when, parents = graph[sha]
            if when * 1000 < why.run_started_ms or len(parents) > 1 or pins.of(sha) is not None:
                break
            found.setdefault(sha, why)
    return found


class Explainer:
    """What explains commits, for any number of files of one repository: the fold's
    pins, the commits of each run's change (one `git log`, at the first commit young
    enough to be in one) and the Git AI notes, each read once and kept.
    `traces`: imported Agent Trace records (`trace_import.Imported`)."""

    def __init__(self, cwd: str, graph: Graph, traces=None) -> None:
        self.cwd = cwd
        self.pins = Pins(graph)
        self.traces = traces
        started = [w.run_started_ms for w in self.pins.order if w.run_started_ms is not None]
        self._oldest = min(started) // 1000 if started else None
        self._changes: dict[str, Why] | None = None
        self._why: dict[str, tuple[Why, bool] | None] = {}
        self._notes: dict[str, Note | None] = {}

    def whys(self, commits: dict[str, CommitInfo]) -> dict[str, tuple[Why, bool]]:
        """The patch explaining each of `commits` that one does, and whether it pinned
        that very commit (else an earlier commit of its run)."""
        out: dict[str, tuple[Why, bool]] = {}
        for sha, info in commits.items():
            if info.uncommitted:
                continue
            if sha not in self._why:
                self._why[sha] = self._explain(sha, info)
            found = self._why[sha]
            if found is not None:
                out[sha] = found
        return out

    def _explain(self, sha: str, info: CommitInfo) -> tuple[Why, bool] | None:
        if not self.pins:
            return None
        pinned = self.pins.of(sha)
        if pinned is not None:
            return pinned, True
        if self._oldest is None or info.int_field(b"committer-time") < self._oldest:
            return None
        if self._changes is None:
            self._changes = _changes(self.cwd, self.pins)
        found = self._changes.get(sha)
        return None if found is None else (found, False)

    def notes(self, commits: list[str]) -> dict[str, Note]:
        """The Git AI notes of `commits` (those not asked before read in one git log)."""
        new = [c for c in commits if c not in self._notes]
        if new:
            read = read_notes(self.cwd, new)
            for sha in new:
                self._notes[sha] = read.get(sha)
        return {c: n for c in commits if (n := self._notes.get(c)) is not None}

    def rows(self, lines: list[BlameLine], commits: dict[str, CommitInfo]) -> list[Row]:
        """Each blamed line of one file with what explains it."""
        why = self.whys(commits)
        rest = [s for s, i in commits.items() if s not in why and not i.uncommitted]
        notes = self.notes(rest) if rest else {}
        rows = []
        for src in lines:
            row = Row(src, commits[src.commit])
            found = why.get(src.commit)
            if found is not None:
                row.why, row.pinned = found
            else:
                note = notes.get(src.commit)
                row.ai = note.who(src.orig_path, src.orig_line) if note is not None else None
                if row.ai is None and self.traces is not None:
                    row.ai = self.traces.who(src.commit, src.orig_path, src.orig_line)
            rows.append(row)
        return rows


def blame(cwd: str, path: str, graph: Graph | None = None, *, ranges: Sequence[str] = (),
          rev: str | None = None, traces=None, explainer: Explainer | None = None
          ) -> list[Row]:
    """Every line of `path` (or of `ranges`) at `rev` (default: the work tree), each with
    what explains it. `traces`: imported Agent Trace records (`trace_import.Imported`);
    `explainer`: one kept across files (then `graph` and `traces` are its own)."""
    data = run_blame(cwd, path, ranges=ranges, rev=rev)
    try:
        lines, commits = parse_porcelain(data)
    except PorcelainError as exc:
        raise BlameError(f"blame {path}: {exc}") from None
    if explainer is None:
        if graph is None:
            raise TypeError("blame needs a graph or an explainer")
        explainer = Explainer(cwd, graph, traces)
    return explainer.rows(lines, commits)
