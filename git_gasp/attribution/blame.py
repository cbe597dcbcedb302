"""`git blame` joined to the fold: each line's commit, the patch that pinned it (or
pinned a later commit of the same change), that patch's run, goal, eval and decision,
and for a line no patch explains, what a Git AI note or an imported Agent Trace record
says of it.

A patch also explains the earlier commits of its run (*the same change*, `changes`),
and, when a rebase or squash merge left its commit unreachable, the commit or the lines
that took its change in (`rewrites`).

Cost: one ``git blame --porcelain`` of the file; one ``git log`` over the patches' tips
only when a line's commit is young enough to be in some run's change; when such a
commit is still unexplained and some pin is not in the blame, one ``git cat-file`` and
one ``git log`` to find the pins gone from the history (and, only when there are some,
their patch ids and diffs: `rewrites`); one ``git log`` for the notes only when
``refs/notes/ai`` exists and a line is still unexplained. An `Explainer` kept across
files (`git gasp stats`) pays the run changes and the notes once, not per file.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

from git_gasp.attribution.changes import changes
from git_gasp.attribution.gitai import Note, may_have_notes, noted_commits, read_notes
from git_gasp.attribution.pins import Pins, Why
from git_gasp.attribution.porcelain import BlameLine, CommitInfo, PorcelainError, parse_porcelain
from git_gasp.attribution.rewrites import Followed, Rewrite, follow, since
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
    rewritten: Rewrite | None = None  # the patch's commit was rebased or squashed into this

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
        if self.rewritten is not None:
            out["rewritten"] = self.rewritten.to_json()
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


class Explainer:
    """What explains commits, for any number of files of one repository: the fold's
    pins, the commits of each run's change (one `git log`, at the first commit young
    enough to be in one), the pins a rebase or squash left unreachable (`rewrites`) and
    the Git AI notes, each read once and kept. `traces`: imported Agent Trace records
    (`trace_import.Imported`); `notes` gets what the user should hear (a pinned commit
    gone from the repository, said once); `rewrites=False` does not follow rewrites."""

    def __init__(self, cwd: str, graph: Graph, traces=None, *, rewrites: bool = True,
                 notes: list[str] | None = None) -> None:
        self.cwd = cwd
        self.pins = Pins(graph)
        self.traces = traces
        self.rewrites = rewrites
        self.said = notes
        started = [w.run_started_ms for w in self.pins.order if w.run_started_ms is not None]
        self._oldest = min(started) // 1000 if started else None
        self._changes: dict[str, Why] | None = None
        self._why: dict[str, tuple[Why, bool] | None] = {}
        self._notes: dict[str, Note | None] = {}
        self._carried: set[str] | None = None
        self._records: bool | None = None

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
            self._changes = changes(self.cwd, self.pins, None)
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

    def _follow(self, commits: dict[str, CommitInfo], why: dict[str, tuple[Why, bool]],
                rev: str | None) -> Followed:
        """What the pins a rewrite left unreachable explain among `commits` (`rewrites`)."""
        if self._records is None:
            self._records = ((self.traces is not None and bool(self.traces.by_commit))
                             or may_have_notes(self.cwd))
        if not self.rewrites or not (self.pins or self._records):
            return Followed()
        oldest = since(self.pins) if self.pins and not self._records else 0  # records: no run
        candidates = {s: t for s, i in commits.items() if s not in why and not i.uncommitted
                      and (t := i.int_field(b"committer-time")) >= oldest}
        if not candidates:
            return Followed()
        if self._carried is None:
            self._carried = set(self.traces.by_commit) if self.traces is not None else set()
            self._carried |= noted_commits(self.cwd)
        followed = follow(self.cwd, self.pins, rev, candidates, set(commits), self._carried)
        if self.said is not None:
            self.said.extend(n for n in followed.notes if n not in self.said)
        return followed

    def rows(self, lines: list[BlameLine], commits: dict[str, CommitInfo],
             rev: str | None = None) -> list[Row]:
        """Each blamed line of one file (blamed at `rev`) with what explains it."""
        why = self.whys(commits)
        followed = self._follow(commits, why, rev)
        rest = [s for s, i in commits.items()
                if s not in why and s not in followed.commits and not i.uncommitted]
        sources = sorted({f[2].source for f in followed.lines.values() if f[0] is None})
        ai_notes = self.notes(rest + sources) if rest or sources else {}
        rows = []
        for src in lines:
            row = Row(src, commits[src.commit])
            found = why.get(src.commit)
            if found is not None:
                row.why, row.pinned = found
            elif (moved := followed.of(src.commit, src.orig_path, src.orig_line)
                  ) is not None and moved[0] is not None:
                row.why, row.pinned, row.rewritten = moved
            else:
                row.ai = self._said(ai_notes, src.commit, src.orig_path, src.orig_line)
                if row.ai is None and moved is not None:  # a record of the commit it copies
                    rw = moved[2]
                    row.ai = self._said(ai_notes, rw.source, rw.path, rw.line)
                    row.rewritten = rw if row.ai is not None else None
            rows.append(row)
        return rows

    def _said(self, ai_notes: dict, commit: str, path: bytes, line: int) -> dict | None:
        """What a Git AI note, else an imported Agent Trace record, says of `line` of
        `path` as numbered in `commit`."""
        note = ai_notes.get(commit)
        said = note.who(path, line) if note is not None else None
        if said is None and self.traces is not None:
            said = self.traces.who(commit, path, line)
        return said


def blame(cwd: str, path: str, graph: Graph | None = None, *, ranges: Sequence[str] = (),
          rev: str | None = None, traces=None, notes: list[str] | None = None,
          rewrites: bool = True, explainer: Explainer | None = None) -> list[Row]:
    """Every line of `path` (or of `ranges`) at `rev` (default: the work tree), each with
    what explains it. `traces`: imported Agent Trace records (`trace_import.Imported`);
    `notes` gets what the user should hear (a pinned commit gone from the repository);
    `rewrites=False` does not follow pins a rebase or squash rewrote (`rewrites`);
    `explainer`: one kept across files (then `graph`, `traces`, `notes` and `rewrites`
    are its own)."""
    data = run_blame(cwd, path, ranges=ranges, rev=rev)
    try:
        lines, commits = parse_porcelain(data)
    except PorcelainError as exc:
        raise BlameError(f"blame {path}: {exc}") from None
    if explainer is None:
        if graph is None:
            raise TypeError("blame needs a graph or an explainer")
        explainer = Explainer(cwd, graph, traces, rewrites=rewrites, notes=notes)
    return explainer.rows(lines, commits, rev)
