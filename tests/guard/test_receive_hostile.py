"""The server's guard against a hostile collaborator: a new branch or a tag carrying a
rewritten history, annotated tags, many refs in one push (one of them a rewind that
hides behind another ref's new commits), and forced updates across a moved log."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.guard.test_receive import LOG, commit, head_of, push, refused, serve
from tests.testing.events import goal_pair
from tests.testing.run import git

pytestmark = pytest.mark.slow  # real pushes


@pytest.fixture
def served(agent, tmp_path):
    return serve(agent, tmp_path)


def append(repo: Path, data: bytes, rel: str = LOG) -> None:
    with open(repo / rel, "ab") as fh:
        fh.write(data)


def rewrite(repo: Path) -> str:
    """A commit that edits the log in place."""
    log = repo / LOG
    log.write_bytes(log.read_bytes().replace(b"goal 1", b"goal X"))
    return commit(repo, "rewrite")


def test_a_new_branch_of_rewritten_history_cannot_replace_main(served):
    remote, rogue = served
    kept = head_of(remote)
    # an orphan branch whose first commit holds a rewritten log: no parent to break
    git(rogue, "checkout", "-q", "--orphan", "evil")
    rewrite(rogue)
    assert push(rogue, "origin", "evil").returncode == 0
    assert head_of(remote) == kept
    lines = refused(push(rogue, "-f", "origin", "evil:main"))
    assert any("forced update drops lines" in x for x in lines), lines
    assert head_of(remote) == kept
    # a new branch whose commit rewrites the log against its parent
    git(rogue, "checkout", "-q", "-B", "sneaky", "origin/main")
    bad = rewrite(rogue)
    lines = refused(push(rogue, "origin", "sneaky"))
    assert lines and bad[:12] in lines[0] and "modified in place" in lines[0], lines


def test_tags_are_checked_and_annotated_tags_peeled(served):
    remote, rogue = served
    append(rogue, goal_pair(3))
    good = commit(rogue, "three")
    git(rogue, "tag", "-a", "-m", "release", "v1", good)
    git(rogue, "tag", "-a", "-m", "of a tag", "v1b", "v1")
    git(rogue, "tag", "tree-tag", f"{good}^{{tree}}")
    proc = push(rogue, "origin", "v1", "v1b", "tree-tag")
    assert proc.returncode == 0, proc.stderr
    assert head_of(remote, "v1^{commit}") == good
    bad = rewrite(rogue)
    git(rogue, "tag", "-a", "-m", "bad", "v2", bad)
    lines = refused(push(rogue, "origin", "v2"))
    assert lines and bad[:12] in lines[0], lines
    assert git(remote, "tag", "-l", "v2").strip() == ""
    # a protected tag may not be moved off its commit onto a tree
    git(remote, "config", "--add", "gasp.protect", "refs/heads/*")
    git(remote, "config", "--add", "gasp.protect", "refs/tags/*")
    git(rogue, "tag", "-f", "v1", f"{good}^{{tree}}")
    lines = refused(push(rogue, "-f", "origin", "v1"))
    assert lines and "names no commit" in lines[0], lines
    assert head_of(remote, "v1^{commit}") == good


def test_many_refs_at_once(served):
    remote, rogue = served
    base = head_of(remote)
    specs = []
    for n in range(30):
        git(rogue, "checkout", "-q", "-B", f"b{n}", base)
        append(rogue, goal_pair(100 + n))
        commit(rogue, f"branch {n}")
        specs.append(f"b{n}")
    proc = push(rogue, "origin", *specs)
    assert proc.returncode == 0, proc.stderr
    git(rogue, "checkout", "-q", "-B", "b7", base)
    bad = rewrite(rogue)
    git(rogue, "checkout", "-q", "-B", "b8", "b8")
    append(rogue, goal_pair(200))
    commit(rogue, "fine")
    lines = refused(push(rogue, "-f", "origin", "b7", "b8"))
    assert lines and all("refs/heads/b7" in x for x in lines) and bad[:12] in lines[0]
    assert head_of(remote, "b8") != head_of(rogue, "b8")  # the whole push is refused


def test_a_rewind_is_refused_though_another_ref_builds_on_the_old_tip(served):
    """b9 rewound to an older commit while main gets a child of b9's old tip: the old
    tip is a boundary of the push, but not an ancestor of b9's new value."""
    remote, rogue = served
    git(rogue, "checkout", "-q", "-B", "work", "origin/main")
    append(rogue, goal_pair(3))
    tip = commit(rogue, "three")
    assert push(rogue, "origin", "work").returncode == 0
    append(rogue, goal_pair(4))
    commit(rogue, "four")
    lines = refused(push(rogue, "-f", "origin", "work:main", "HEAD~2:work"))
    assert any("refs/heads/work" in x and "forced update drops lines" in x for x in lines)
    assert head_of(remote, "work") == tip


MOVED = "data/log.jsonl"


def move_log(repo: Path) -> None:
    manifest = (repo / "AGENT.md").read_text()
    (repo / "AGENT.md").write_text(manifest.replace(
        "executor: .agent/config.toml", "executor: .agent/config.toml\n"
        "locations:\n  log: data/log.jsonl"))
    (repo / "data").mkdir()
    git(repo, "mv", LOG, MOVED)


def test_a_forced_update_that_moves_the_log_keeps_or_drops_its_lines(served):
    remote, rogue = served
    start = head_of(remote)
    append(rogue, goal_pair(3))
    commit(rogue, "three")
    assert push(rogue, "origin", "main").returncode == 0
    kept = head_of(remote)
    # rebuilt from the start, the moved log lacks goal 3: refused where it moved to
    git(rogue, "reset", "-q", "--hard", start)
    move_log(rogue)
    append(rogue, goal_pair(4), MOVED)
    commit(rogue, "move the log, four")
    lines = refused(push(rogue, "-f", "origin", "main"))
    assert any(MOVED in x and "forced update drops lines" in x for x in lines), lines
    assert head_of(remote) == kept
    # rebuilt again keeping every line main had (and more): accepted
    git(rogue, "reset", "-q", "--hard", start)
    move_log(rogue)
    append(rogue, goal_pair(3) + goal_pair(4), MOVED)
    good = commit(rogue, "move the log, three and four")
    proc = push(rogue, "-f", "origin", "main")
    assert proc.returncode == 0, proc.stderr
    assert head_of(remote) == good
