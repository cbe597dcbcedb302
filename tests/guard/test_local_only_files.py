"""A committed ``.agent/lease`` or ``.agent/HEAD`` (the spec makes both machine-local and
gitignored): `git gasp check` fails check 4 naming the path and the commit that added it,
the pre-commit guard refuses to stage it, and pre-receive (``--check`` or not) refuses a
push of it. A lease committed as a link to /dev/zero reads nothing: every answer is one
line or a failure, never exit 3."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.guard.test_receive import push, refused
from tests.guard.test_receive_check import bare
from tests.testing.run import commit_all, gasp, git, out


def _plant(repo: Path, name: str, kind: str) -> None:
    path = repo / ".agent" / name
    path.unlink(missing_ok=True)
    if kind == "zero":
        path.symlink_to("/dev/zero")
    else:
        path.write_bytes(b'{"worker_id": "someone else"}\n')


@pytest.mark.parametrize("name", ["lease", "HEAD"])
@pytest.mark.parametrize("kind", ["zero", "file"])
def test_check_fails_naming_the_committed_local_only_file_and_its_commit(agent, name, kind):
    _plant(agent, name, kind)
    git(agent, "add", "-f", f".agent/{name}")
    sha = commit_all(agent, f"commit the {name}")
    (agent / "notes.txt").write_text("later\n")
    commit_all(agent, "a later commit")
    for args in (("check", "--json"), ("check", "--json")):  # the second with the cache
        proc = gasp(agent, *args)
        assert proc.returncode == 1, out(proc)
        check4 = json.loads(proc.stdout)["checks"][3]
        assert [(f["path"], f["commit"]) for f in check4["failures"]] == \
            [(f".agent/{name}", sha)], check4
        assert "local-only" in check4["failures"][0]["message"]


def test_a_removed_local_only_file_still_fails_where_it_was_added(agent):
    _plant(agent, "lease", "file")
    git(agent, "add", "-f", ".agent/lease")
    sha = commit_all(agent, "commit the lease")
    git(agent, "rm", "-q", "--cached", ".agent/lease")
    commit_all(agent, "drop it again")
    text = out(gasp(agent, "check"))
    assert f".agent/lease commit {sha[:12]}" in text, text


@pytest.mark.parametrize("name", ["lease", "HEAD"])
def test_the_guard_refuses_staging_a_local_only_file(agent, name):
    _plant(agent, name, "zero")
    git(agent, "add", "-f", f".agent/{name}")
    proc = git_commit(agent)
    text = out(proc)
    assert proc.returncode != 0, text
    assert f".agent/{name}: [local-only file]" in text, text
    assert f"git rm --cached .agent/{name}" in text, text
    assert "internal error" not in text and "Traceback" not in text


def git_commit(repo: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "commit", "-q", "-m", "lease"], cwd=repo,
                          capture_output=True)


@pytest.mark.slow
@pytest.mark.parametrize("options", [("--check",), ()])
def test_pre_receive_refuses_a_push_of_a_local_only_file(agent, tmp_path, options):
    remote = bare(tmp_path, "served.git", *options)
    assert push(agent, str(remote), "main").returncode == 0
    _plant(agent, "lease", "zero")
    git(agent, "add", "-f", ".agent/lease")
    git(agent, "commit", "-q", "--no-verify", "-m", "the lease")
    sha = git(agent, "rev-parse", "HEAD").strip()
    lines = refused(push(agent, str(remote), "main"))
    assert len(lines) == 1, lines
    assert f"commit {sha[:12]} .agent/lease" in lines[0] and "local-only" in lines[0], lines
