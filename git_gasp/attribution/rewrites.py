"""Pins that survive history rewrites: a patch pinned commit X, a rebase, amend or squash
merge left X unreachable from the blamed revision, and the lines X added now sit in a
commit S that no patch pins. Followed here, for `blame` (docs/attribution.md):

1. *Which pins are gone from the history.* Only when some blamed commit is unexplained
   and young enough to be a rewrite (committed at or after the oldest run began; any
   age when some patch has no run, or notes or records are followed too): the pins not
   seen in the blame are resolved (one `git cat-file --batch-check`; a pin whose object
   is gone, gc'd or never fetched, is a note, not an error) and one
   ``git log ^REV PINS…`` lists the commits they reach that REV does not. Their patches
   explain them as blame does: the pinned commit, and the earlier commits of its run
   (`changes`). A pin the blame already shows costs nothing.
2. *A rebase* (or cherry-pick) keeps a commit's patch id: S explains like X when
   `git patch-id --stable` of S equals X's (`patchids`, cached per commit).
3. *A squash merge* (or an amend, or a rebase whose conflicts changed the patch) has a
   patch id of its own, so lines are matched instead, per file: S *takes in* an
   unreachable agent commit X made no later than S when at least half the lines X added
   (path and content) are among the lines S added. Then, newest X first, the longest
   runs of X's added lines in S's added lines of the same path (difflib's matching
   blocks, in order, over the lines of S not matched yet) are X's. A line S added that
   no such X added stays S's own: a person's edit in the squashed branch, or after it,
   stays theirs. The match is over S's whole diff, so `-L` gives the same answer.
4. *Notes and records.* A commit a Git AI note or an imported Agent Trace record names
   (`carried`) and the blamed revision does not reach is followed the same way; a
   line of S is then looked up in that commit's note or record at the line it had
   there (`Rewrite.path`, `.line`: the k-th added line of a path for a patch-id copy).

The unreachable commits are found by the ids the pins name: git keeps them until
`git gc` prunes them (reflog entries of unreachable commits expire after 30 days,
gc.reflogExpireUnreachable; loose objects after two weeks more, gc.pruneExpire), or
they come back with a fetch (a pull request's ref). git-gasp keeps no ref to them of its
own: a ref under refs/gasp/ would keep forever what a person rewrote away on purpose (a
secret, a large file), and it is not pushed, so no clone would gain from it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from difflib import SequenceMatcher

from git_gasp.attribution.changes import changes
from git_gasp.attribution.diffranges import diff_commits, parse_added_lines, resolve
from git_gasp.attribution.patchids import patch_ids
from git_gasp.attribution.pins import Pins, Why
from git_gasp.base import git


@dataclass
class Rewrite:
    """How a line's commit was tied to an unreachable agent commit."""

    source: str  # the unreachable commit whose patch (or record) explains the line
    by: str  # "patch-id" (the whole commit) or "lines" (matched line by line)
    path: bytes | None = None  # the line's path and number in `source`, where matched
    line: int | None = None  # line by line

    def to_json(self) -> dict:
        return {"from": self.source, "by": self.by}


Found = tuple[Why | None, bool, Rewrite]  # the patch (None: `source` has only a Git AI
# note or an Agent Trace record), whether it pinned `source`, how


@dataclass
class Followed:
    """What the rewrites explain: whole commits, single lines, and notes to print."""

    commits: dict[str, Found] = field(default_factory=dict)
    lines: dict[tuple[str, bytes, int], Found] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def of(self, commit: str, path: bytes, line: int) -> Found | None:
        """What explains `line` of `path` as numbered in `commit`, or None."""
        found = self.commits.get(commit)
        return found if found is not None else self.lines.get((commit, path, line))


def since(pins: Pins) -> int:
    """The earliest committer time (seconds) a rewrite of a pinned commit can have: the
    oldest run's start, or 0 when some patch has no run."""
    starts = [w.run_started_ms for w in pins.order]
    if not starts or any(s is None for s in starts):
        return 0
    return min(starts) // 1000


def _unreachable(cwd: str, rev: str | None, ids: list[str]) -> dict[str, int]:
    """The commits `ids` reach that `rev` (HEAD) does not -> committer time."""
    spec = rev if rev is not None else "HEAD"
    proc = git.run(cwd, "log", "--ignore-missing", "--format=%H %ct", "--stdin",
                   input=(f"^{spec}\n" + "\n".join(ids) + "\n").encode(), check=False)
    out: dict[str, int] = {}
    if proc.returncode != 0:
        return out
    for line in proc.stdout.decode("ascii", "replace").splitlines():
        sha, _, when = line.partition(" ")
        if when.isdigit():
            out[sha] = int(when)
    return out


def _gone_note(gone: list[tuple[str, Why]]) -> str:
    named = ", ".join(f"{w.patch} pins {pin[:12]}" for pin, w in gone[:3])
    more = f" and {len(gone) - 3} more" if len(gone) > 3 else ""
    return (f"{len(gone)} pinned commit(s) are not in this repository (gc'd or never "
            f"fetched): {named}{more}; lines a rebase or squash took from them cannot be "
            "followed")


def _agent_commits(cwd: str, pins: Pins, gone_from: dict[str, int], carried: set[str]
                   ) -> dict[str, tuple[Why | None, bool]]:
    """The unreachable commits a patch explains (the pinned ones and their runs'), then
    those only a note or record speaks of (`carried`, with no patch)."""
    out: dict[str, tuple[Why | None, bool]] = {}
    others = []
    for sha in gone_from:
        why = pins.of(sha)
        if why is not None:
            out[sha] = (why, True)
        else:
            others.append(sha)
    for sha, why in changes(cwd, pins, others).items():
        out[sha] = (why, False)
    for sha in carried:
        if sha in gone_from and sha not in out:
            out[sha] = (None, False)
    return out


def follow(cwd: str, pins: Pins, rev: str | None, candidates: dict[str, int],
           seen: set[str], carried: set[str] = frozenset()) -> Followed:
    """What the unreachable pinned commits explain among `candidates` (blamed commits
    no patch explains -> committer time); `seen`: the commits the blame shows;
    `carried`: commits a Git AI note or an imported Agent Trace record names (full
    ids), followed to the lines of theirs a rewrite took in as pins are."""
    found = Followed()
    wanted: dict[str, Why] = {}
    for why in pins.order:
        if why.pin not in seen and why.pin not in wanted and not (
                len(why.pin) < 40 and any(s.startswith(why.pin) for s in seen)):
            wanted[why.pin] = why
    extra = sorted(c for c in carried if c not in seen and c not in wanted)
    if not (wanted or extra) or not candidates:
        return found
    full = resolve(cwd, [*wanted, *extra])  # only objects still here go to `git log`
    gone = [(pin, wanted[pin]) for pin, sha in full.items() if sha is None and pin in wanted]
    if gone:
        found.notes.append(_gone_note(gone))
    ids = sorted({sha for sha in full.values() if sha is not None and sha not in seen})
    when = _unreachable(cwd, rev, ids) if ids else {}
    if not when:
        return found
    last = max(candidates.values())
    agents = {sha: v for sha, v in _agent_commits(cwd, pins, when, carried).items()
              if when[sha] <= last}
    if not agents:
        return found
    first = min(when[sha] for sha in agents)
    cands = {s: t for s, t in candidates.items() if t >= first}
    if not cands:
        return found
    when.update(cands)
    copies = _by_patch_id(cwd, agents, cands, when, found)
    used = {f[2].source for f in found.commits.values()} | set(copies.values())
    left_x = {s: v for s, v in agents.items() if s not in used}
    left_c = {s: t for s, t in cands.items() if s not in found.commits and s not in copies}
    if copies or (left_x and left_c):
        _by_lines(cwd, left_x, left_c, when, found, copies)
    return found


def _by_patch_id(cwd: str, agents: dict[str, tuple[Why | None, bool]],
                 cands: dict[str, int], when: dict[str, int], found: Followed
                 ) -> dict[str, str]:
    """Candidates whose patch id is an unreachable agent commit's (a rebase's copy): a
    patch's into `found`; the copies of a commit with no patch (candidate -> source)
    returned, to be matched line to line."""
    ids = patch_ids(cwd, sorted({*agents, *cands}))
    by_id: dict[str, str] = {}
    for sha in sorted(agents, key=lambda s: (agents[s][0] is not None, agents[s][1],
                                             when[s])):  # a patch's, pinned, newest win
        if ids.get(sha):
            by_id[ids[sha]] = sha
    copies: dict[str, str] = {}
    for sha in cands:
        source = by_id.get(ids.get(sha) or "")
        if source is None or when[source] > when[sha]:
            continue
        why, pinned = agents[source]
        if why is None:
            copies[sha] = source
        else:
            found.commits[sha] = (why, pinned, Rewrite(source, "patch-id"))
    return copies


def _takes_in(x_bag: Counter, s_bag: Counter) -> bool:
    """At least half the lines X added (path and content) are among those S added."""
    total = sum(x_bag.values())
    shared = sum(min(n, s_bag[k]) for k, n in x_bag.items())
    return total > 0 and 2 * shared >= total


def _by_lines(cwd: str, agents: dict[str, tuple[Why | None, bool]], cands: dict[str, int],
              when: dict[str, int], found: Followed, copies: dict[str, str]) -> None:
    """Lines of candidates matched to the lines unreachable agent commits added (a
    squash merge's; the rule is the module doc's); the lines of `copies` to their
    sources' in order (the same patch: the k-th added line of a path is the k-th)."""
    added = parse_added_lines(diff_commits(
        cwd, sorted({*agents, *cands, *copies, *copies.values()})))
    for sha, source in copies.items():
        theirs = added.get(source, {})
        for path, lines in added.get(sha, {}).items():
            for (n, _), (m, _) in zip(lines, theirs.get(path, ()), strict=False):
                found.lines[(sha, path, n)] = (None, False,
                                               Rewrite(source, "patch-id", path, m))
    bags = {sha: Counter((p, c) for p, lines in added.get(sha, {}).items() for _, c in lines)
            for sha in agents}
    for sha, at in cands.items():
        mine = added.get(sha, {})
        s_bag = Counter((p, c) for p, lines in mine.items() for _, c in lines)
        takers = sorted((x for x in agents if when[x] <= at and _takes_in(bags[x], s_bag)),
                        key=lambda x: when[x], reverse=True)
        for path, lines in mine.items():
            free = list(lines)
            for x in takers:
                theirs = [c for _, c in added.get(x, {}).get(path, ())]
                if not theirs or not free:
                    continue
                match = SequenceMatcher(None, theirs, [c for _, c in free], autojunk=False)
                taken: dict[int, int] = {}  # index in `free` -> line number in x
                x_lines = added[x][path]
                for a, b, size in match.get_matching_blocks():
                    taken.update((b + k, x_lines[a + k][0]) for k in range(size))
                why, pinned = agents[x]
                for k, m in taken.items():
                    found.lines[(sha, path, free[k][0])] = (why, pinned,
                                                            Rewrite(x, "lines", path, m))
                free = [ln for k, ln in enumerate(free) if k not in taken]
