"""Concurrent saves: different branches, one branch shared, and two machines."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from tests.kg.helpers import kg
from tests.testing.run import git

pytestmark = pytest.mark.slow  # concurrent processes and remotes


def _spawn(cwd, env, session, eid, body="x"):
    doc = f"entities:\n  - {{id: {eid}, type: concept, body: {body}}}\n"
    return subprocess.Popen(
        ["git", "gasp", "kg", "save", "-", "--session-id", session], cwd=cwd, env=env,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    ), doc


def _run_all(procs):
    for p, doc in procs:
        p.stdin.write(doc.encode())
        p.stdin.close()
    results = [(p.wait(), p.stdout.read() + p.stderr.read()) for p, _ in procs]
    for code, text in results:
        assert code == 0, text.decode(errors="replace")


def _tree(remote, branch):
    return set(git(remote, "ls-tree", "-r", "--name-only", branch).split())


def test_sessions_on_different_branches_save_concurrently_without_losing_writes(graph, remote):
    cwd, _ = graph
    kg(cwd, "fork", "agent-b", "--session-id", "s2")
    env = dict(os.environ)
    procs = []
    for i in range(4):
        procs.append(_spawn(cwd, env, "s1", f"main-{i}"))
        procs.append(_spawn(cwd, env, "s2", f"agent-b-{i}"))
    _run_all(procs)
    main, agent = _tree(remote, "main"), _tree(remote, "agent-b")
    for i in range(4):
        assert f"entities/main-{i}/entity.md" in main
        assert f"entities/agent-b-{i}/entity.md" in agent
        assert f"entities/agent-b-{i}/entity.md" not in main
        assert f"entities/main-{i}/entity.md" not in agent
    subjects = git(remote, "log", "--format=%s", "main").splitlines()
    assert sum(s.startswith("perstate: create 1 entity") for s in subjects) == 4


def test_two_machines_on_one_branch_retry_with_rebase_and_keep_both(tmp_path, remote, home):
    homes = [tmp_path / "machine-a", tmp_path / "machine-b"]
    envs = []
    for h in homes:
        env = dict(os.environ, PERSTATE_HOME=str(h))
        envs.append(env)
        proc = subprocess.run(
            ["git", "gasp", "kg", "init", "--repo", str(remote), "--yes", "--session-id", "s"],
            cwd=tmp_path, env=env, capture_output=True,
        )
        assert proc.returncode == 0, proc.stderr
    # a shared entity both machines will merge into at once
    seed = "date: 2026-01-01\nentities:\n  - {id: shared, type: concept, body: seed}\n"
    subprocess.run(["git", "gasp", "kg", "save", "-", "--session-id", "s"], cwd=tmp_path,
                   env=envs[0], input=seed.encode(), check=True, capture_output=True)
    procs = []
    for n, env in enumerate(envs):
        for i in range(3):
            procs.append(_spawn(tmp_path, env, "s", f"m{n}-{i}"))
        procs.append(_spawn(tmp_path, env, "s", "shared", body=f"insight-from-machine-{n}"))
    _run_all(procs)
    tree = _tree(remote, "main")
    for n in range(2):
        for i in range(3):
            assert f"entities/m{n}-{i}/entity.md" in tree
    shared = git(remote, "show", "main:entities/shared/entity.md")
    assert "insight-from-machine-0" in shared and "insight-from-machine-1" in shared
    assert "seed" in shared


def test_non_fast_forward_push_is_rebased_or_reapplied(graph, remote, tmp_path):
    """Deterministic version of the race: two plain clones (`--worktree`, no pre-pull)."""
    cwd, _ = graph
    kg(cwd, "save", "-", "--session-id", "s1",
       input="date: 2026-01-01\nentities:\n  - {id: shared, type: concept, body: seed}\n")
    a, b = tmp_path / "clone-a", tmp_path / "clone-b"
    git(tmp_path, "clone", "-q", str(remote), str(a))
    git(tmp_path, "clone", "-q", str(remote), str(b))
    kg(cwd, "save", "-", "--worktree", str(a),
       input="entities:\n  - {id: from-a, type: concept}\n  - {id: shared, body: note-a}\n")
    # b is behind: its push is rejected; the rebase conflicts on shared/entity.md, so the
    # document is re-applied on top of a's commit
    res = kg(cwd, "save", "-", "--worktree", str(b), "--json",
             input="entities:\n  - {id: from-b, type: concept}\n  - {id: shared, body: note-b}\n")
    data = json.loads(res.stdout)
    assert data["pushed"] and any("re-applied" in n for n in data["notes"])
    tree = _tree(remote, "main")
    assert {"entities/from-a/entity.md", "entities/from-b/entity.md"} <= tree
    shared = git(remote, "show", "main:entities/shared/entity.md")
    assert "note-a" in shared and "note-b" in shared
    # a non-conflicting race is a plain rebase
    def one(eid):
        return f"entities:\n  - {{id: {eid}, type: concept}}\n"

    kg(cwd, "save", "-", "--worktree", str(a), input=one("late-a"))
    kg(cwd, "save", "-", "--worktree", str(a), input=one("late-a2"))
    git(b, "fetch", "-q")
    res = kg(cwd, "save", "-", "--worktree", str(b), input=one("late-b"))
    assert "after 2 attempts" in res.stdout.decode()
    assert {"entities/late-a2/entity.md", "entities/late-b/entity.md"} <= _tree(remote, "main")
