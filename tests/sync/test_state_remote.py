"""`gasp.remote` and the state's remote: sync pushes and fetches the state branch there
only, a relative remote URL means what it means in the project, and a non-bare peer
with the branch checked out gets one line naming the fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.testing.repos import init_branch, make_project, record_run
from tests.testing.run import gasp, git, out

pytestmark = pytest.mark.slow  # real syncs to remotes through the CLI


def test_a_relative_remote_url_resolves_against_the_project(tmp_path: Path) -> None:
    project = make_project(tmp_path / "app")
    git(tmp_path, "init", "-q", "--bare", "shared.git")
    git(project, "remote", "add", "origin", "../shared.git")
    init_branch(project)
    record_run(project, "one")
    proc = gasp(project, "sync")
    assert proc.returncode == 0, out(proc)
    assert git(tmp_path / "shared.git", "rev-parse", "gasp/state") == \
        git(project, "rev-parse", "gasp/state")


def test_gasp_remote_gets_the_state_and_origin_never_does(tmp_path: Path) -> None:
    project = make_project(tmp_path / "app")
    for name in ("origin.git", "state.git"):
        git(tmp_path, "init", "-q", "--bare", name)
    git(project, "remote", "add", "origin", str(tmp_path / "origin.git"))
    git(project, "remote", "add", "private", str(tmp_path / "state.git"))
    git(project, "config", "gasp.remote", "private")
    init_branch(project)
    record_run(project, "one")
    proc = gasp(project, "sync")
    assert proc.returncode == 0, out(proc)
    assert "private/gasp/state" in out(proc)
    assert git(tmp_path / "state.git", "branch", "--list").split() == ["gasp/state"]
    assert git(tmp_path / "origin.git", "branch", "--list") == ""
    # the private remote gone: sync fails, it never falls back to origin
    git(project, "remote", "set-url", "private", str(tmp_path / "gone.git"))
    record_run(project, "two")
    proc = gasp(project, "sync", "--max-wait", "0")
    assert proc.returncode != 0, out(proc)
    assert git(tmp_path / "origin.git", "branch", "--list") == ""
    assert git(tmp_path / "origin.git", "for-each-ref") == ""


def test_a_non_bare_peer_with_the_branch_checked_out_gets_one_line(tmp_path: Path) -> None:
    alice = make_project(tmp_path / "alice")
    init_branch(alice)
    peer = tmp_path / "peer"
    git(tmp_path, "clone", "-q", str(alice), str(peer))
    git(peer, "checkout", "-q", "-b", "gasp/state", "origin/gasp/state")
    git(alice, "remote", "add", "peer", str(peer))
    git(alice, "fetch", "-q", "peer")
    record_run(alice, "one")
    proc = gasp(alice, "sync", "peer", "--max-wait", "0")
    assert proc.returncode == 1, out(proc)
    err = proc.stderr.decode()
    assert len(err.strip().splitlines()) == 1, err
    assert "non-bare repository" in err and "git clone --bare" in err
