"""`git gasp blame` on real git histories: exactly the agent's surviving lines are tied
to its patch (and its run, goal, eval, decision), through a later human edit and a
rename; -L and REV as git takes them; Git AI notes for lines no patch explains; a later
commit of the same run explains its run's earlier commits; bad input is one line."""

from __future__ import annotations

import json
import os

import pytest

from git_gasp.attribution.blame import BlameError, blame
from git_gasp.runtime import AgentState
from tests.testing.blame_history import History, build, write
from tests.testing.json_shapes import keys_ok
from tests.testing.run import commit_all, gasp, git, out

NONE = dict.fromkeys(("patch", "goal", "run", "eval", "decision"))


@pytest.fixture
def history(agent) -> History:
    return build(agent)


def _graph(repo):
    return AgentState.open(repo, "reader").graph


def _ids(h: History) -> dict:
    return {"patch": h.patch, "goal": h.goal, "run": h.run, "eval": h.eval,
            "decision": h.decision}


def test_exactly_the_agents_surviving_lines_are_its_patchs(history):
    h = history
    rows = blame(str(h.repo), "lib/app.py", _graph(h.repo))
    got = [(r.src.line, r.commit, r.why.patch if r.why else None) for r in rows]
    assert got == [
        (1, h.human, None), (2, h.human, None), (3, h.human, None),
        (4, h.agent, h.patch),  # def retry(n):
        (5, h.edit, None),  # the human's rewrite of the agent's line
        (6, h.agent, h.patch),  # # retried
        (7, h.human, None), (8, h.human, None), (9, h.human, None),
    ]
    # git followed the rename: old lines carry the old path, in its own numbering
    assert {r.src.orig_path for r in rows} == {b"app.py"}
    agent_lines = [r for r in rows if r.why]
    assert [r.src.orig_line for r in agent_lines] == [4, 6]
    for r in agent_lines:
        assert r.why.ids() == _ids(h) and r.pinned
    # no git-ai note, no imported trace: plain blame for the others
    assert all(r.ai is None for r in rows)


def test_json_one_object_per_line_with_null_where_none(history):
    h = history
    proc = gasp(h.repo / "lib", "blame", "--json", "app.py")
    assert proc.returncode == 0, out(proc)
    objs = [json.loads(line) for line in proc.stdout.decode().splitlines()]
    assert [o["line"] for o in objs] == list(range(1, 10))
    for o in objs:
        keys_ok("git gasp blame FILE --json", o)
    assert {k: objs[3][k] for k in NONE} == _ids(h) and objs[3]["commit"] == h.agent
    assert objs[3]["pinned"] is True and objs[3]["path"] == "app.py"
    assert {k: objs[4][k] for k in NONE} == NONE and objs[4]["commit"] == h.edit
    # who ran the run the patch came from (the git identity's name), null with no patch
    assert objs[3]["person"] == "Test Author"  # git's author identity (tests/testing/hermetic)
    assert objs[4]["person"] is None


def test_human_output_is_git_blames_with_a_patch_and_goal_column(history):
    h = history
    proc = gasp(h.repo, "blame", "lib/app.py")
    assert proc.returncode == 0, out(proc)
    ours = proc.stdout.splitlines()
    theirs = git(h.repo, "blame", "lib/app.py").encode().splitlines()
    assert len(ours) == len(theirs) == 9
    log = gasp(h.repo, "log").stdout.decode()
    for n, (mine, git_line) in enumerate(zip(ours, theirs, strict=True), 1):
        head, _, rest = git_line.partition(b" (")
        assert mine.startswith(head.split(b" ")[0]) and mine.endswith(b" (" + rest)
        column = mine[len(head):mine.index(b" (")].strip()
        if n in (4, 6):
            patch, goal = column.decode().split()
            assert patch.startswith("patch_...") and h.patch.endswith(patch[9:])
            assert goal.startswith("goal_...") and h.goal.endswith(goal[8:])
            assert goal in log  # the short id `git gasp log` prints
        else:
            assert column == b""


def test_ranges_and_rev_as_git_takes_them(history):
    h = history
    graph = _graph(h.repo)
    rows = blame(str(h.repo), "lib/app.py", graph, ranges=["4,5"])
    assert [(r.src.line, bool(r.why)) for r in rows] == [(4, True), (5, False)]
    rows = blame(str(h.repo), "lib/app.py", graph, ranges=["1,1", "6,+1"])
    assert [(r.src.line, bool(r.why)) for r in rows] == [(1, False), (6, True)]
    # at the agent's commit all three of its lines are its patch's
    rows = blame(str(h.repo), "app.py", graph, rev=h.agent)
    assert [r.src.line for r in rows if r.why] == [4, 5, 6]
    proc = gasp(h.repo, "blame", "--json", "-L", "5,5", h.agent, "app.py")
    assert proc.returncode == 0, out(proc)
    assert json.loads(proc.stdout)["patch"] == h.patch
    proc = gasp(h.repo, "blame", "--json", h.agent, "--", "app.py")
    assert proc.returncode == 0 and len(proc.stdout.splitlines()) == 9
    # git's older order, FILE REV, taken when the last word names a commit
    legacy = gasp(h.repo, "blame", "--json", "app.py", h.agent)
    assert legacy.returncode == 0 and legacy.stdout == proc.stdout, out(legacy)


def test_uncommitted_lines_have_no_commit(history):
    h = history
    write(h.repo, "lib/app.py", (h.repo / "lib/app.py").read_bytes() + b"# wip\n")
    rows = blame(str(h.repo), "lib/app.py", _graph(h.repo))
    assert rows[-1].commit is None and rows[-1].why is None
    assert rows[-1].to_json()["commit"] is None


@pytest.mark.slow  # the installed command, seven times
@pytest.mark.parametrize(("args", "expect"), [
    (["nope.py"], "no such path 'nope.py'"),
    (["-L", "x,y", "lib/app.py"], "lib/app.py"),
    (["-L", "40,50", "lib/app.py"], "has only 9 lines"),
    (["no-such-rev", "lib/app.py"], "no-such-rev"),
    (["HEAD", "lib/app.py", "app.py"], "one file"),
    (["-x", "lib/app.py"], "-x"),
    ([], "FILE"),
])
def test_bad_input_is_one_line_and_nonzero(history, args, expect):
    proc = gasp(history.repo, "blame", *args)
    err = proc.stderr.decode()
    assert proc.returncode != 0 and proc.stdout == b""
    assert len(err.strip().splitlines()) == 1 and expect in err, err
    assert "Traceback" not in err


def test_untracked_file_is_refused(history):
    write(history.repo, "scratch.py", b"x\n")
    with pytest.raises(BlameError, match="scratch.py"):
        blame(str(history.repo), "scratch.py", _graph(history.repo))
    proc = gasp(history.repo, "blame", "scratch.py")
    assert proc.returncode == 1 and b"scratch.py" in proc.stderr


def test_outside_an_agent_repository_is_the_one_error(tmp_path):
    repo = tmp_path / "plain"
    repo.mkdir()
    git(repo, "init", "-q")
    write(repo, "a.py", b"a\n")
    commit_all(repo, "a")
    proc = gasp(repo, "blame", "a.py")
    assert proc.returncode == 2 and b"not an agent repository" in proc.stderr


def _at(monkeypatch, seconds: int) -> None:
    for var in ("GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE"):
        monkeypatch.setenv(var, f"{seconds} +0000")


def test_a_later_commit_of_the_run_explains_its_earlier_ones(agent, monkeypatch):
    import time

    write(agent, "m.py", b"human\n")
    human = commit_all(agent, "human")  # the pinned 2026-01-01: before the run
    with AgentState.open(agent, "agent-under-test") as st:
        run = st.start_run("two commits, one patch")
    now = int(time.time()) + 2
    _at(monkeypatch, now)
    write(agent, "m.py", b"human\nfirst\n")
    first = commit_all(agent, "agent: first step")
    _at(monkeypatch, now + 1)
    write(agent, "m.py", b"human\nfirst\nsecond\n")
    second = commit_all(agent, "agent: second step")
    with AgentState.open(agent, "agent-under-test") as st:
        patch = st.propose_patch("both steps", commit=second)
        st.finish_run("completed")
    rows = blame(str(agent), "m.py", _graph(agent))
    got = [(r.commit, r.why.patch if r.why else None, r.pinned) for r in rows]
    assert got == [(human, None, False), (first, patch, False), (second, patch, True)]
    assert rows[1].why.run == run
    # another patch pinning the first step bounds the change
    with AgentState.open(agent, "agent-under-test") as st:
        other = st.propose_patch("first step", commit=first[:10], cause=st.creator_of(patch))
    rows = blame(str(agent), "m.py", _graph(agent))
    assert [r.why.patch if r.why else None for r in rows] == [None, other, patch]


NOTE = """app.py
  d9978a8723e02b52 2-3
  "h_0123456789abcd" 5
---
{"schema_version": "authorship/3.0.0", "base_commit_sha": "%s",
 "prompts": {"d9978a8723e02b52": {"agent_id": {"tool": "cursor", "id": "s-1",
   "model": "claude-4.5-opus"}, "human_author": "Dev <dev@example.com>", "messages": [],
   "total_additions": 2, "total_deletions": 0, "accepted_lines": 2, "overriden_lines": 0}},
 "humans": {"h_0123456789abcd": {"author": "Dev <dev@example.com>"}}}
"""


def test_git_ai_notes_speak_for_lines_no_patch_explains(agent):
    write(agent, "app.py", b"a\nb\nc\nd\ne\n")
    base = commit_all(agent, "with git-ai")
    git(agent, "notes", "--ref=ai", "add", "-m", NOTE % base, base)
    rows = blame(str(agent), "app.py", _graph(agent))
    ai = [r.ai for r in rows]
    assert ai[0] is None and ai[3] is None
    assert ai[1] == ai[2] == {"source": "git-ai", "id": "d9978a8723e02b52",
                              "schema": "authorship/3.0.0", "type": "ai", "tool": "cursor",
                              "model": "claude-4.5-opus", "session": "s-1",
                              "author": "Dev <dev@example.com>"}
    # an entry the metadata does not name is still an AI line (the attestation section
    # lists AI-authored lines), with nothing more known of it
    assert ai[4] == {"source": "git-ai", "id": '"h_0123456789abcd"',
                     "schema": "authorship/3.0.0", "type": "ai"}
    proc = gasp(agent, "blame", "app.py")
    lines = proc.stdout.decode().splitlines()
    assert "git-ai:cursor/claude-4.5-opus" in lines[1] and "git-ai" not in lines[0]
    # a patch pinning the commit wins over the note
    with AgentState.open(agent, "agent-under-test") as st:
        patch = st.propose_patch("the same commit", commit=base,
                                 advances=st.record_goal("notes and patches"))
    rows = blame(str(agent), "app.py", _graph(agent))
    assert all(r.why.patch == patch and r.ai is None for r in rows)


def test_git_ai_human_entries_and_the_file_of_a_later_commit(agent):
    write(agent, "app.py", b"a\nb\n")
    first = commit_all(agent, "one")
    note = NOTE.replace('  "h_0123456789abcd" 5', "  h_0123456789abcd 1") % first
    git(agent, "notes", "--ref=ai", "add", "-m", note, first)
    write(agent, "app.py", b"a\nb\nc\n")
    commit_all(agent, "two")  # no note: line 3 plain; lines 1-2 still from `first`
    rows = blame(str(agent), "app.py", _graph(agent))
    assert rows[0].ai["type"] == "human" and rows[0].ai["author"] == "Dev <dev@example.com>"
    assert rows[1].ai["type"] == "ai" and rows[2].ai is None
    assert os.path.exists(agent / ".git" / "refs" / "notes" / "ai")
