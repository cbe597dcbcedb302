"""*The same change*: a patch pinning commit C also explains the commits its run made
before C on C's first-parent line: walking C's first parents, every commit made at or
after the run started (to the millisecond: a commit of the second the run started in is
before it), up to (not including) the first merge, commit pinned by another patch, or
commit older than the run. A patch without a run explains its commit alone."""

from __future__ import annotations

from git_gasp.attribution.pins import Pins, Why
from git_gasp.base import git


def changes(cwd: str, pins: Pins, young: list[str] | None) -> dict[str, Why]:
    """The commits of `young` (None: every commit) that a patch's change holds (see the
    module doc): one `git log` over the tips of the patches that have a run."""
    runs = [w for w in pins.order if w.run_started_ms is not None]
    if not runs or young is not None and not young:
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
    wanted, found = None if young is None else set(young), {}
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
            if wanted is None or sha in wanted:
                found.setdefault(sha, why)
    return found
