"""Pins survive history rewrites (issue 47): a branch of agent commits, recorded through
the runtime as the other blame tests do, squash-merged or rebased onto a moved main,
gives `git gasp blame --json` the same agent lines as before; a person's lines stay
theirs; a pinned commit gc'd away is a note; a history nothing rewrote runs no patch id."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from git_gasp.attribution.blame import blame
from git_gasp.base import git as base_git
from git_gasp.runtime import AgentState
from tests.testing.blame_history import commit_paths, write
from tests.testing.json_shapes import keys_ok
from tests.testing.run import gasp, git, out

BASE = b"def one():\n    return 1\n"
FIRST = BASE + b"def two():\n    return 2\n"
SECOND = FIRST + b"def three():\n    return 3\n"
# a person in the branch edits the first agent commit's second line and adds one
HUMAN = SECOND.replace(b"    return 2\n", b"    return 2  # checked\n") + b"# human\n"


@dataclass
class Branch:
    repo: Path
    main: str  # the main branch's name
    first: str  # agent, in the patch's run (not pinned)
    second: str  # agent, pinned
    human: str  # a person's commit on the branch
    patch: str
    now: int


class Clock:
    """Commit dates after the run started, one second apart."""

    def __init__(self, monkeypatch, start: int) -> None:
        self.mp, self.at = monkeypatch, start

    def tick(self) -> int:
        self.at += 1
        for var in ("GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE"):
            self.mp.setenv(var, f"{self.at} +0000")
        return self.at


@pytest.fixture
def clock(monkeypatch) -> Clock:
    return Clock(monkeypatch, int(time.time()) + 2)


@pytest.fixture
def branch(agent, clock) -> Branch:
    """main: app.py; branch `feature`: two agent commits of one run (the second pinned)
    and a person's edit; then main moves (a line on top of app.py, the state)."""
    repo = agent
    main = git(repo, "rev-parse", "--abbrev-ref", "HEAD").strip()
    write(repo, "app.py", BASE)
    commit_paths(repo, "human: one", "app.py")
    git(repo, "checkout", "-q", "-b", "feature")
    with AgentState.open(repo, "agent-under-test") as st:
        goal = st.record_goal("more functions")
        run = st.start_run("two and three", goal=goal)
    clock.tick()
    write(repo, "app.py", FIRST)
    first = commit_paths(repo, "agent: two", "app.py")
    clock.tick()
    write(repo, "app.py", SECOND)
    second = commit_paths(repo, "agent: three", "app.py")
    with AgentState.open(repo, "agent-under-test") as st:
        patch = st.propose_patch("two and three", advances=goal, commit=second)
        st.finish_run("completed")
    assert run
    clock.tick()
    write(repo, "app.py", HUMAN)
    human = commit_paths(repo, "human: checked", "app.py")
    git(repo, "checkout", "-q", main)  # the uncommitted state comes along
    clock.tick()
    write(repo, "app.py", b"import os\n" + BASE)
    commit_paths(repo, "human: import os", "app.py")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-verify", "-m", "state: the agent's run")
    return Branch(repo, main, first, second, human, patch, clock.at)


def _blame(repo: Path, rev: str | None = None, path: str = "app.py") -> list[dict]:
    args = ["blame", "--json"] + ([rev] if rev else []) + [path]
    proc = gasp(repo, *args)
    assert proc.returncode == 0, out(proc)
    return [json.loads(line) for line in proc.stdout.decode().splitlines()]


def _content(repo: Path, rev: str) -> list[str]:
    return git(repo, "show", f"{rev}:app.py").splitlines()


def _agent_lines(repo: Path, rev: str | None, at: str) -> dict[str, tuple]:
    """Line text -> (patch, pinned) of every line a patch explains."""
    text = _content(repo, at)
    return {text[o["line"] - 1]: (o["patch"], o["pinned"]) for o in _blame(repo, rev)
            if o["patch"]}


def test_before_any_rewrite_the_branch_is_blamed_as_it_was(branch):
    b = branch
    objs = _blame(b.repo, "feature")
    assert all("rewritten" not in o for o in objs)
    assert _agent_lines(b.repo, "feature", "feature") == {
        "def two():": (b.patch, False), "def three():": (b.patch, True),
        "    return 3": (b.patch, True)}


@pytest.mark.slow  # over half a second: out of the fast loop
def test_a_squash_merge_keeps_the_agents_lines(branch, clock):
    b = branch
    before = _agent_lines(b.repo, "feature", "feature")
    git(b.repo, "merge", "--squash", "-q", "feature")
    clock.tick()
    git(b.repo, "commit", "-q", "--no-verify", "-m", "feature, squashed")
    squash = git(b.repo, "rev-parse", "HEAD").strip()
    git(b.repo, "branch", "-q", "-D", "feature")
    assert _agent_lines(b.repo, None, "HEAD") == before
    objs = _blame(b.repo)
    by_text = dict(zip(_content(b.repo, "HEAD"), objs, strict=True))
    assert by_text["def two():"]["rewritten"] == {"from": b.first, "by": "lines"}
    for o in objs:
        keys_ok("git gasp blame FILE --json", o)  # `rewritten` is documented
    assert by_text["def three():"]["rewritten"] == {"from": b.second, "by": "lines"}
    # the person's lines in the branch are the squash commit's, no patch's
    for text in ("    return 2  # checked", "# human"):
        assert by_text[text]["commit"] == squash and by_text[text]["patch"] is None
    assert by_text["import os"]["patch"] is None
    # the same answer for one line alone (-L): the match is over the whole commit
    line = [o["line"] for o in objs if "rewritten" in o]
    proc = gasp(b.repo, "blame", "--json", "-L", f"{line[-1]},{line[-1]}", "app.py")
    assert json.loads(proc.stdout)["patch"] == b.patch
    # and a person's edit after the squash stays theirs
    write(b.repo, "app.py", (b.repo / "app.py").read_bytes().replace(
        b"def three():\n", b"def three():  # renamed later\n"))
    clock.tick()
    commit_paths(b.repo, "human: a comment", "app.py")
    after = _agent_lines(b.repo, None, "HEAD")
    assert after == {k: v for k, v in before.items() if k != "def three():"}


@pytest.mark.slow  # over half a second: out of the fast loop
def test_a_rebase_onto_a_moved_main_keeps_the_agents_lines(branch, clock):
    b = branch
    before = _agent_lines(b.repo, "feature", "feature")
    clock.tick()
    git(b.repo, "rebase", "-q", b.main, "feature")
    git(b.repo, "checkout", "-q", b.main)
    rebased = git(b.repo, "rev-parse", "feature").strip()
    assert rebased != b.human  # rewritten: the pinned commit is no longer on feature
    assert not base_git.ok(b.repo, "merge-base", "--is-ancestor", b.second, "feature")
    assert _agent_lines(b.repo, "feature", "feature") == before
    objs = _blame(b.repo, "feature")
    by_text = dict(zip(_content(b.repo, "feature"), objs, strict=True))
    assert by_text["def three():"]["rewritten"] == {"from": b.second, "by": "patch-id"}
    assert by_text["def two():"]["rewritten"] == {"from": b.first, "by": "patch-id"}
    assert by_text["# human"]["patch"] is None and "rewritten" not in by_text["# human"]
    # the human column marks a followed line
    proc = gasp(b.repo, "blame", "feature", "app.py")
    line = proc.stdout.decode().splitlines()[_content(b.repo, "feature").index("def three():")]
    assert "patch_..." in line and "=" in line.split("(")[0]


def test_a_partially_squashed_branch(branch, clock):
    """Only the agent's two commits squashed (the person's left out), then the rest."""
    b = branch
    git(b.repo, "merge", "--squash", "-q", b.second)
    clock.tick()
    git(b.repo, "commit", "-q", "--no-verify", "-m", "the agent's part, squashed")
    git(b.repo, "branch", "-q", "-D", "feature")
    assert _agent_lines(b.repo, None, "HEAD") == {
        "def two():": (b.patch, False), "    return 2": (b.patch, False),
        "def three():": (b.patch, True), "    return 3": (b.patch, True)}
    # the person's commit, cherry-picked on top, is theirs
    clock.tick()
    git(b.repo, "cherry-pick", b.human)
    agent = _agent_lines(b.repo, None, "HEAD")
    assert "    return 2  # checked" not in agent and "# human" not in agent
    assert agent["def three():"] == (b.patch, True)


def test_a_pinned_commit_gc_d_away_is_a_note(branch, clock):
    b = branch
    git(b.repo, "merge", "--squash", "-q", "feature")
    clock.tick()
    git(b.repo, "commit", "-q", "--no-verify", "-m", "feature, squashed")
    git(b.repo, "branch", "-q", "-D", "feature")
    git(b.repo, "reflog", "expire", "--expire-unreachable=now", "--all")
    git(b.repo, "gc", "-q", "--prune=now")
    assert not base_git.ok(b.repo, "cat-file", "-e", b.second)
    proc = gasp(b.repo, "blame", "--json", "app.py")
    err = proc.stderr.decode()
    assert proc.returncode == 0 and "Traceback" not in err, out(proc)
    assert "note: 1 pinned commit(s) are not in this repository" in err
    assert b.second[:12] in err and b.patch in err
    assert all(json.loads(line)["patch"] is None for line in proc.stdout.splitlines())


def test_a_noted_commit_gc_d_away_does_not_stop_the_pins(branch, clock):
    """A Git AI note on a commit gone from the repository: the pins are followed."""
    b = branch
    dangling = git(b.repo, "commit-tree", "HEAD^{tree}", "-m", "gone").strip()
    git(b.repo, "notes", "--ref=ai", "add", "-m", "app.py\n  p 1\n---\n{}\n", dangling)
    git(b.repo, "merge", "--squash", "-q", "feature")
    clock.tick()
    git(b.repo, "commit", "-q", "--no-verify", "-m", "feature, squashed")
    git(b.repo, "branch", "-q", "-m", "feature", "kept")  # the agent's commits stay
    git(b.repo, "reflog", "expire", "--expire-unreachable=now", "--all")
    git(b.repo, "gc", "-q", "--prune=now")
    assert not base_git.ok(b.repo, "cat-file", "-e", dangling)
    assert dangling in git(b.repo, "notes", "--ref=ai", "list")
    rows = blame(str(b.repo), "app.py", AgentState.open(b.repo, "reader").graph)
    got = {r.src.content: (r.why.patch, r.pinned) for r in rows if r.why}
    assert got == {b"def two():": (b.patch, False), b"def three():": (b.patch, True),
                   b"    return 3": (b.patch, True)}


def test_reachable_pins_run_no_patch_id(branch, clock, monkeypatch):
    """Nothing rewritten: a pin the blame shows is not even resolved; one it does not
    show (another file's commit) costs a look-up and one `git log`, and no diff or patch
    id is computed."""
    b = branch
    git(b.repo, "merge", "-q", "--no-ff", "--no-edit", "feature")  # a true merge
    ran: list[tuple[str, ...]] = []
    real = base_git.run

    def spy(cwd, *args, **kw):
        ran.append(args)
        return real(cwd, *args, **kw)

    monkeypatch.setattr(base_git, "run", spy)
    notes: list[str] = []
    rows = blame(str(b.repo), "app.py", AgentState.open(b.repo, "reader").graph,
                 notes=notes)
    assert sum(1 for r in rows if r.why) == 3 and notes == []
    assert [a[0] for a in ran] == ["blame", "log"], ran  # the run's change, no more
    clock.tick()
    write(b.repo, "other.py", b"x = 1\n")
    other = commit_paths(b.repo, "agent: other", "other.py")
    with AgentState.open(b.repo, "agent-under-test") as st:
        st.start_run("other")
        st.propose_patch("other", commit=other)
        st.finish_run("completed")
    ran.clear()
    rows = blame(str(b.repo), "app.py", AgentState.open(b.repo, "reader").graph,
                 notes=notes)
    assert sum(1 for r in rows if r.why) == 3 and notes == []
    assert [a[0] for a in ran] == ["blame", "log", "cat-file", "log"], ran
    assert not any(a[0] in ("diff-tree", "patch-id") for a in ran)


def test_patch_ids_are_cached(branch, clock):
    b = branch
    clock.tick()
    git(b.repo, "rebase", "-q", b.main, "feature")
    git(b.repo, "checkout", "-q", b.main)
    first = _blame(b.repo, "feature")
    cache = Path(git(b.repo, "rev-parse", "--git-common-dir").strip())
    cache = (b.repo / cache if not cache.is_absolute() else cache) / "gasp" / "patch-ids"
    assert b.second.encode() in cache.read_bytes()
    assert _blame(b.repo, "feature") == first


@pytest.fixture
def recorded(agent, clock) -> Branch:
    """A branch of two commits no patch pins: the first carries a Git AI note, the
    second an imported Agent Trace record; then main moves."""
    repo = agent
    main = git(repo, "rev-parse", "--abbrev-ref", "HEAD").strip()
    write(repo, "app.py", BASE)
    commit_paths(repo, "human: one", "app.py")
    git(repo, "checkout", "-q", "-b", "feature")
    clock.tick()
    write(repo, "app.py", FIRST)
    first = commit_paths(repo, "cursor: two", "app.py")
    note = ("app.py\n  p1 3-4\n---\n"
            '{"schema_version": "authorship/3.0.0", "prompts": {"p1": {"agent_id": '
            '{"tool": "cursor", "id": "s-1", "model": "gpt-5"}}}}\n')
    git(repo, "notes", "--ref=ai", "add", "-m", note, first)
    clock.tick()
    write(repo, "app.py", SECOND)
    second = commit_paths(repo, "other tool: three", "app.py")
    record = {"version": "0.1.0", "id": "rec-1", "timestamp": "2026-12-01T00:00:00Z",
              "vcs": {"type": "git", "revision": second},
              "files": [{"path": "app.py", "conversations": [
                  {"contributor": {"type": "ai", "model_id": "model-x"},
                   "ranges": [{"start_line": 5, "end_line": 6}]}]}]}
    git(repo, "checkout", "-q", main)
    trace = repo.parent / "trace.jsonl"
    trace.write_text(json.dumps(record) + "\n")
    proc = gasp(repo, "import", "agent-trace", str(trace))  # into main's state
    assert proc.returncode == 0, out(proc)
    clock.tick()
    write(repo, "app.py", b"import os\n" + BASE)
    commit_paths(repo, "human: import os", "app.py")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-verify", "--allow-empty", "-m", "state: the import")
    return Branch(repo, main, first, second, "", "", clock.at)


def _said(repo: Path, rev: str | None, at: str) -> dict[str, tuple]:
    text = _content(repo, at)
    return {text[o["line"] - 1]: (o["ai"].get("model"), o.get("rewritten", {}).get("by"))
            for o in _blame(repo, rev) if "ai" in o}


@pytest.mark.slow  # over half a second: out of the fast loop
@pytest.mark.parametrize("how", ["rebase", "squash"])
def test_git_ai_notes_and_agent_trace_records_follow_a_rewrite(recorded, clock, how):
    b = recorded
    assert _said(b.repo, "feature", "feature") == {
        "def two():": ("gpt-5", None), "    return 2": ("gpt-5", None),
        "def three():": ("model-x", None), "    return 3": ("model-x", None)}
    clock.tick()
    if how == "rebase":  # no notes.rewriteRef: the note stays on the old commit
        git(b.repo, "rebase", "-q", b.main, "feature")
        git(b.repo, "checkout", "-q", b.main)
        assert not base_git.ok(b.repo, "notes", "--ref=ai", "show", "feature~1")
        rev, by = "feature", "patch-id"
    else:
        git(b.repo, "merge", "--squash", "-q", "feature")
        git(b.repo, "commit", "-q", "--no-verify", "-m", "squashed")
        git(b.repo, "branch", "-q", "-D", "feature")
        rev, by = None, "lines"
    assert _said(b.repo, rev, rev or "HEAD") == {
        "def two():": ("gpt-5", by), "    return 2": ("gpt-5", by),
        "def three():": ("model-x", by), "    return 3": ("model-x", by)}
