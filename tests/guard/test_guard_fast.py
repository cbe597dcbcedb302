"""The guard's fast paths prove what they skip: the repository found without dulwich
(`gitdirs`), a staged file's bytes vouched for by the index's stat data (`indexstat`)
and the work begun before the rules load (`warm`) — each falls back to the slow,
certain way whenever its proof does not hold."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from git_gasp.guard.commit_guard import run_guard
from git_gasp.guard.warm import Warm
from git_gasp.odb import gitdirs, indexstat
from git_gasp.odb.blobid import blob_id
from tests.testing.events import goal_pair
from tests.testing.run import git

LOG = "state/events.jsonl"


def append(repo: Path, data: bytes) -> None:
    with open(repo / LOG, "ab") as f:
        f.write(data)


def rules(found) -> list[str]:
    return [r.rule for r in found]


@pytest.fixture
def committed(agent: Path) -> Path:
    append(agent, goal_pair(1))
    git(agent, "add", LOG)
    git(agent, "commit", "-q", "--no-verify", "-m", "one")
    return agent


# ---- gitdirs ------------------------------------------------------------------------

def test_locate_finds_the_plain_layouts_and_defers_the_rest(committed, tmp_path, monkeypatch):
    found = gitdirs.locate(str(committed / "state"))
    assert found is not None
    assert (found.path, found.controldir(), found.commondir()) == (
        str(committed), str(committed / ".git"), str(committed / ".git"))
    assert found.head() == git(committed, "rev-parse", "HEAD").strip().encode()
    git(committed, "pack-refs", "--all")
    assert gitdirs.locate(str(committed)).head() == \
        git(committed, "rev-parse", "HEAD").strip().encode()
    wt = tmp_path / "wt"
    git(committed, "worktree", "add", "-q", "-b", "side", str(wt))
    linked = gitdirs.locate(str(wt))
    assert linked is not None and linked.commondir() == str(committed / ".git")
    assert linked.controldir() == os.path.realpath(committed / ".git" / "worktrees" / "wt")
    assert linked.head() == git(wt, "rev-parse", "HEAD").strip().encode()
    assert gitdirs.locate(str(committed / ".git")) is None  # inside the git dir
    bare = tmp_path / "bare.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    assert gitdirs.locate(str(bare)) is None
    assert gitdirs.locate(str(tmp_path)) is None
    monkeypatch.chdir(wt)
    monkeypatch.setenv("GIT_DIR", str(linked.controldir()))  # as git runs a worktree's hooks
    from_env = gitdirs.locate(str(wt))
    assert (from_env.path, from_env.controldir(), from_env.commondir()) == \
        (linked.path, linked.controldir(), linked.commondir())
    assert from_env.dulwich().path == linked.path
    assert gitdirs.locate(str(committed)) is None  # outside that work tree: dulwich decides
    monkeypatch.setenv("GIT_COMMON_DIR", str(committed / ".git"))  # honoured, as git does
    assert gitdirs.locate(str(wt)).commondir() == linked.commondir()
    monkeypatch.setenv("GIT_OBJECT_DIRECTORY", str(committed / ".git" / "objects"))
    assert gitdirs.locate(str(wt)) is None


def test_an_unborn_branch_has_no_head(tmp_path):
    git(tmp_path, "init", "-q")
    assert gitdirs.locate(str(tmp_path)).head() is None


# ---- indexstat ----------------------------------------------------------------------

def settled(repo: Path) -> None:
    """Date the log a minute back, so the index git writes next is not racily clean
    for it (written in the same clock tick as the file: git would not trust it)."""
    past = os.stat(repo / LOG).st_mtime_ns - 60 * 10**9
    os.utime(repo / LOG, ns=(past, past))


def test_the_index_vouches_for_a_file_git_just_hashed(committed):
    append(committed, goal_pair(2))
    settled(committed)
    git(committed, "add", LOG)
    sha = git(committed, "rev-parse", f":{LOG}").strip().encode()
    entry = indexstat.index_entry_stat(str(committed / ".git/index"), LOG.encode(), sha)
    assert entry is not None
    assert indexstat.stat_proves(entry, os.stat(committed / LOG))
    assert indexstat.index_entry_stat(str(committed / ".git/index"), LOG.encode(),
                                      b"0" * 40) is None  # another blob
    assert indexstat.index_entry_stat(str(committed / ".git/index"), b"state/nope",
                                      sha) is None
    # recorded in the same instant as the index was written: racily clean, not proved
    stats, _mtime = entry
    assert not indexstat.stat_proves((stats, os.stat(committed / LOG).st_mtime_ns),
                                     os.stat(committed / LOG))


def test_a_file_changed_after_git_add_is_not_vouched_for(committed):
    append(committed, goal_pair(2))
    git(committed, "add", LOG)
    sha = git(committed, "rev-parse", f":{LOG}").strip().encode()
    entry = indexstat.index_entry_stat(str(committed / ".git/index"), LOG.encode(), sha)
    before = os.stat(committed / LOG)
    data = (committed / LOG).read_bytes()
    (committed / LOG).write_bytes(data.replace(b"goal 1", b"goal X"))  # same size
    os.utime(committed / LOG, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert not indexstat.stat_proves(entry, os.stat(committed / LOG))  # its ctime moved


def test_index_version_4_proves_nothing(committed):
    git(committed, "update-index", "--index-version", "4")
    append(committed, goal_pair(2))
    git(committed, "add", LOG)
    sha = git(committed, "rev-parse", f":{LOG}").strip().encode()
    assert indexstat.index_entry_stat(str(committed / ".git/index"), LOG.encode(), sha) is None


# ---- the guard never takes the work tree for the staged blob unproved ----------------

def test_a_bad_staged_log_is_refused_whatever_the_work_tree_holds(committed, monkeypatch):
    monkeypatch.chdir(committed)
    good = (committed / LOG).read_bytes() + goal_pair(2)
    (committed / LOG).write_bytes(good.replace(b"goal 1", b"goal X"))
    git(committed, "add", LOG)
    (committed / LOG).write_bytes(good)  # the work tree is fine, the staged blob is not
    assert rules(run_guard(committed)) == ["append-only, one-parent rule"]
    assert rules(run_guard(committed, warm=Warm.start(str(committed)))) == \
        ["append-only, one-parent rule"]


def test_a_good_staged_log_passes_though_the_work_tree_was_edited_in_place(committed,
                                                                           monkeypatch):
    monkeypatch.chdir(committed)
    append(committed, goal_pair(2))
    git(committed, "add", LOG)
    before = os.stat(committed / LOG)
    data = (committed / LOG).read_bytes()
    (committed / LOG).write_bytes(data.replace(b"goal 1", b"goal X"))  # same size and mtime
    os.utime(committed / LOG, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert run_guard(committed) == []  # the staged blob, read from the object store
    assert run_guard(committed, warm=Warm.start(str(committed))) == []


def test_an_unchanged_staged_log_gives_the_same_verdicts_warm_or_not(committed, monkeypatch):
    monkeypatch.chdir(committed)
    append(committed, goal_pair(2))
    git(committed, "add", LOG)
    subprocess.run(["git", "commit", "-q", "-m", "two"], cwd=committed, check=True)  # cached
    append(committed, goal_pair(3))
    git(committed, "add", LOG)
    warm = Warm.start(str(committed))
    head_log = git(committed, "rev-parse", f"HEAD:{LOG}").strip().encode()
    data, _after, length, prefix = warm.log(LOG.encode(), str(committed))
    assert length == len(git(committed, "show", f"HEAD:{LOG}").encode())
    assert prefix == head_log == blob_id(data[:length])
    assert warm.diff(str(committed / ".git/index"), "0" * 40) is None  # another target
    assert run_guard(committed, warm=warm) == []
    append(committed, b'{"not": "an event"}\n')
    git(committed, "add", LOG)
    assert rules(run_guard(committed, warm=Warm.start(str(committed)))) == \
        rules(run_guard(committed)) == ["check 1, envelope"]
