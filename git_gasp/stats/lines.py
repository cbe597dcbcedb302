"""Lines of a tree at a revision summed over blame's one engine: every file's `git
blame --porcelain` at REV, explained by one `Explainer` kept across files, each line
counted under its `Author` (`authorship`). The sum is the sum of `git gasp blame --json`
over the same files (a test holds it to that)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field

from git_gasp.attribution.blame import Explainer, blame
from git_gasp.base import git
from git_gasp.stats.authorship import Author, RunInfo, author_of

BY = ("agent", "model", "person", "goal")


def tree_files(cwd: str, rev: str) -> list[bytes]:
    """Every file (blob) of the tree at `rev`, from the top, as git names it."""
    data = git.run(cwd, "ls-tree", "-r", "-z", "--full-tree", rev).stdout
    out = []
    for entry in data.split(b"\0"):
        head, tab, path = entry.partition(b"\t")
        if tab and head.split(b" ")[1:2] == [b"blob"]:
            out.append(path)
    return out


@dataclass
class Tally:
    """Lines counted: in all, agent and human, and by agent, model, person, goal, run
    and source."""

    total: int = 0
    agent: int = 0
    human: int = 0
    files: int = 0
    by_agent: dict[str, int] = field(default_factory=dict)
    by_model: dict[str, int] = field(default_factory=dict)
    by_person: dict[str, dict[str, int]] = field(default_factory=dict)
    by_goal: dict[str, int] = field(default_factory=dict)
    by_run: dict[str, int] = field(default_factory=dict)
    by_source: dict[str, int] = field(default_factory=dict)

    def add(self, who: Author) -> None:
        """Count one line of `who`."""
        self.total += 1
        kind = "agent" if who.agent_line else "human"
        person = self.by_person.setdefault(who.person or "", {"agent": 0, "human": 0})
        person[kind] += 1
        if not who.agent_line:
            self.human += 1
            return
        self.agent += 1
        for table, key in ((self.by_agent, who.agent), (self.by_model, who.model),
                           (self.by_goal, who.goal), (self.by_run, who.run),
                           (self.by_source, who.source)):
            if key is not None:
                table[key] = table.get(key, 0) + 1

    def to_json(self) -> dict:
        """`{"total", "agent", "human"}` (docs/json.md, `git gasp stats --json`)."""
        return {"total": self.total, "agent": self.agent, "human": self.human}

    def breakdown(self, by: str) -> dict:
        """The agent lines by `by` (person: agent and human lines by person)."""
        return {"agent": self.by_agent, "model": self.by_model, "person": self.by_person,
                "goal": self.by_goal}[by]


def tally(cwd: str, rev: str, explainer: Explainer, runs: dict[str, RunInfo],
          files: Iterable[bytes], changed: set[str] | None = None
          ) -> tuple[Tally, Tally | None]:
    """The lines of `files` at `rev` (paths from the top of the work tree at `cwd`), and
    with `changed` (commit ids) those of them whose commit is one of these."""
    out, part = Tally(), (Tally() if changed is not None else None)
    for path in files:
        rows = blame(cwd, os.fsdecode(path), rev=rev, explainer=explainer)
        out.files += 1
        touched = False
        for row in rows:
            who = author_of(row, runs)
            out.add(who)
            if part is not None and row.src.commit in changed:
                part.add(who)
                touched = True
        if touched:
            part.files += 1
    return out, part
