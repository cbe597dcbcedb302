"""`kg fork`, `kg switch`, `kg prune`, `kg install-skill`."""

from __future__ import annotations

import os
import time

import pytest

from tests.kg.helpers import kg, kg_json
from tests.testing.run import git, out

pytestmark = pytest.mark.slow  # real git and a bare remote per test

ONE = "entities:\n  - {{id: {}, type: concept}}\n"


def _age(path, days):
    t = time.time() - days * 86400
    os.utime(path, (t, t))


def test_fork_copies_the_branch_and_rebinds(graph, remote, home):
    cwd, _ = graph
    kg(cwd, "save", "-", "--session-id", "s1", input=ONE.format("base-fact"))
    proc = kg(cwd, "fork", "experiment", "--session-id", "s1")
    assert "session s1 -> experiment" in out(proc)
    assert git(remote, "rev-parse", "experiment") == git(remote, "rev-parse", "main")
    assert kg_json(cwd, "status", "--session-id", "s1")["bound_branch"] == "experiment"
    kg(cwd, "save", "-", "--session-id", "s1", input=ONE.format("only-in-experiment"))
    assert "only-in-experiment" in git(remote, "ls-tree", "-r", "--name-only", "experiment")
    assert "only-in-experiment" not in git(remote, "ls-tree", "-r", "--name-only", "main")
    assert (home / "worktrees/memory/experiment/entities/base-fact/entity.md").exists()
    again = kg(cwd, "fork", "experiment", "--session-id", "s1", ok=False)
    assert again.returncode == 1 and "already exists" in out(again)


def test_switch_to_existing_branch_only(graph, remote):
    cwd, _ = graph
    kg(cwd, "fork", "agent-a", "--session-id", "s1")
    proc = kg(cwd, "switch", "main", "--session-id", "s1")
    assert "agent-a -> main" in out(proc)
    bad = kg(cwd, "switch", "nope", "--session-id", "s1", ok=False)
    assert bad.returncode == 2 and "does not exist" in out(bad)
    bad = kg(cwd, "switch", "../x", "--session-id", "s1", ok=False)
    assert bad.returncode == 2 and "invalid branch" in out(bad)
    # a new session binds by switching
    kg(cwd, "switch", "agent-a", "--session-id", "fresh")
    assert kg_json(cwd, "status", "--session-id", "fresh")["bound_branch"] == "agent-a"


def test_prune_previews_then_removes_only_safe_things(graph, remote, home):
    cwd, _ = graph
    wts = home / "worktrees" / "memory"
    bare = home / "memory.git"
    kg(cwd, "fork", "old-idle", "--session-id", "old")
    kg(cwd, "fork", "old-dirty", "--session-id", "dirty")
    kg(cwd, "fork", "merged-gone", "--session-id", "mg")
    kg(cwd, "fork", "unmerged-gone", "--session-id", "ug")
    kg(cwd, "save", "-", "--session-id", "ug", input=ONE.format("unmerged-work"))
    kg(cwd, "fork", "wt-gone", "--session-id", "wg")
    kg(cwd, "save", "-", "--session-id", "wg", input=ONE.format("more-work"))
    (wts / "old-dirty" / "scratch.txt").write_text("unsaved")
    for b in ("old-idle", "old-dirty", "merged-gone", "unmerged-gone", "wt-gone"):
        _age(wts / b, 40)
    for b in ("merged-gone", "unmerged-gone", "wt-gone"):
        git(remote, "branch", "-D", b)
    git(bare, "worktree", "remove", "--force", str(wts / "wt-gone"))  # work only in a branch

    preview = out(kg(cwd, "prune", "30d", "--session-id", "s1"))
    assert "session old (branch old-idle, idle 40 days)" in preview
    assert "old-dirty kept: uncommitted changes" in preview
    assert "unmerged-gone kept: 1 commit(s) on no remote branch" in preview
    assert "branch unmerged-gone: remote gone, kept" in preview
    assert "branch merged-gone (its remote branch is gone)" in preview
    assert "branch wt-gone (its remote branch is gone)" in preview
    assert "--execute" in preview
    cfg = (home / "config.yml").read_text()
    assert "  old:\n" in cfg and (wts / "old-idle").exists()  # preview changed nothing

    done = out(kg(cwd, "prune", "30d", "--execute", "--session-id", "s1"))
    cfg = (home / "config.yml").read_text()
    assert "  old:\n" not in cfg and "  s1:\n" in cfg
    assert not (wts / "old-idle").exists() and not (wts / "merged-gone").exists()
    assert (wts / "old-dirty" / "scratch.txt").exists()  # never deletes unsaved work
    assert (wts / "unmerged-gone" / "entities" / "unmerged-work").exists()
    assert "deleted branch merged-gone" in done
    assert "kept branch wt-gone: it has commits no other branch holds" in done
    heads = git(bare, "for-each-ref", "--format=%(refname:short)", "refs/heads/").split()
    assert "merged-gone" not in heads and {"wt-gone", "unmerged-gone", "main"} <= set(heads)
    assert (wts / "main").exists()


def test_prune_refuses_zero_days(graph):
    cwd, _ = graph
    proc = kg(cwd, "prune", "0d", ok=False)
    assert proc.returncode == 2 and "minimum is 1d" in out(proc)


def test_install_skill(tmp_path, hermetic):
    proc = kg(tmp_path, "install-skill")
    dest = hermetic / ".claude" / "skills" / "perstate" / "SKILL.md"
    assert str(dest) in out(proc)
    text = dest.read_text()
    assert text.startswith("---\nname: perstate\ndescription: ")
    assert "git gasp kg save" in text and "--session-id" in text
    kg(tmp_path, "install-skill")  # same content: fine
    dest.write_text("local edits")
    proc = kg(tmp_path, "install-skill", ok=False)
    assert "--force" in out(proc)
    kg(tmp_path, "install-skill", "--force")
    assert dest.read_text() == text
    other = tmp_path / "agents"
    kg(tmp_path, "install-skill", "--dir", str(other))
    assert (other / "perstate" / "SKILL.md").read_text() == text
