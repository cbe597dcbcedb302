"""The server's refusal names the fix that works, and following it gets the push in
(issue #26 item 5): a `git revert` pushed on top is refused again, because the bad
commit stays in the pushed history; dropping the commits the remote lacks works."""

from __future__ import annotations

import re

import pytest

from tests.testing.events import goal_pair
from tests.testing.run import git
from tests.testing.syncload import LOG, make_remote, remote_ids

pytestmark = pytest.mark.slow  # a guarded bare remote and real pushes


def _push(repo):
    import subprocess

    return subprocess.run(["git", "push", "-q", "origin", "HEAD:main"], cwd=repo,
                          capture_output=True)


def test_following_the_servers_hint_gets_the_push_in(agent, tmp_path):
    remote = make_remote(tmp_path, agent)
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(remote), str(clone))
    log = clone / LOG
    with open(log, "ab") as fh:
        fh.write(goal_pair(1))
    git(clone, "commit", "-q", "--no-verify", "-am", "goal 1")
    assert _push(clone).returncode == 0
    old = git(clone, "rev-parse", "HEAD").strip()
    log.write_bytes(log.read_bytes().replace(b"goal 1", b"goal X"))  # a committed line rewritten
    git(clone, "commit", "-q", "--no-verify", "-am", "rewrite a committed line")
    refused = _push(clone)
    assert refused.returncode != 0
    err = refused.stderr.decode()
    assert "git gasp: refused refs/heads/main" in err and "revert" in err
    # what the hint warns about: a revert on top is refused again
    git(clone, "revert", "--no-edit", "HEAD")
    assert _push(clone).returncode != 0
    # what it says to do
    command = re.search(r"git reset --keep ([0-9a-f]{40})", err)
    assert command is not None, err
    assert command.group(1) == old
    git(clone, "reset", "--keep", command.group(1))
    with open(log, "ab") as fh:
        fh.write(goal_pair(5))  # the correction, appended as new lines
    git(clone, "commit", "-q", "--no-verify", "-am", "append instead")
    accepted = _push(clone)
    assert accepted.returncode == 0, accepted.stderr.decode()
    assert {"event_g5", "event_g5o"} <= set(remote_ids(remote))
