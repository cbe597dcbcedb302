"""`git gasp check --since REV` adopts the rules from REV on: a rewrite or a bad line in
REV's history is a note, the same after REV a failure."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.testing.events import goal_pair
from tests.testing.run import commit_all, gasp, git, out

pytestmark = pytest.mark.slow  # real git, several checks

LOG = "state/events.jsonl"


def append(repo: Path, data: bytes) -> None:
    with open(repo / LOG, "ab") as fh:
        fh.write(data)


def unguarded(repo: Path, message: str) -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-verify", "-m", message)
    return git(repo, "rev-parse", "HEAD").strip()


def report(repo: Path, *args: str) -> tuple[int, dict]:
    proc = gasp(repo, "check", "--json", *args)
    assert "Traceback" not in out(proc)
    return proc.returncode, json.loads(proc.stdout)


def test_history_before_rev_is_noted_and_after_it_must_pass(agent):
    append(agent, goal_pair(1))
    commit_all(agent, "run 1")
    log = agent / LOG
    log.write_bytes(log.read_bytes().replace(b"goal 1", b"goal X"))  # an in-place edit
    bad = unguarded(agent, "rewrite")
    append(agent, b'{"not": "an event"}\n')  # a line check 1 fails
    old = unguarded(agent, "junk")
    append(agent, goal_pair(2))
    commit_all(agent, "run 2")

    code, plain = report(agent)
    assert code == 1 and not plain["conformant"]
    code, adopted = report(agent, "--since", old)
    assert code == 0 and adopted["conformant"], adopted
    notes = " ".join(n for c in adopted["checks"] for n in c["notes"])
    assert f"before --since {old}" in notes and bad[:12] in notes and "line" in notes

    append(agent, b'{"also": "not an event"}\n')  # after REV: a failure
    unguarded(agent, "late junk")
    code, late = report(agent, "--since", old)
    assert code == 1 and [c["number"] for c in late["checks"] if not c["passed"]] == [1]
    text = gasp(agent, "check", "--since", old)
    assert text.returncode == 1 and b"late junk" not in text.stdout


def test_since_a_clean_head_and_bad_revs(agent):
    append(agent, goal_pair(1))
    commit_all(agent, "run 1")
    assert gasp(agent, "check", "--since", "HEAD").returncode == 0
    assert gasp(agent, "check", "--since=HEAD", "--strict").returncode == 0
    proc = gasp(agent, "check", "--since", "no-such-rev")
    assert proc.returncode == 2
    assert proc.stderr.decode().startswith("git gasp: error: --since no-such-rev: not a commit")


def test_since_never_forgives_an_edit_of_a_committed_line_in_the_work_tree(agent):
    append(agent, goal_pair(1))
    commit_all(agent, "run 1")
    log = agent / LOG
    log.write_bytes(log.read_bytes().replace(b"goal 1", b"goal X"))  # not committed
    code, plain = report(agent)
    assert code == 1 and 4 in [c["number"] for c in plain["checks"] if not c["passed"]]
    code, since = report(agent, "--since", "HEAD")
    failed = {c["number"]: c["failures"] for c in since["checks"] if not c["passed"]}
    assert code == 1 and not since["conformant"]
    assert any("working tree does not extend HEAD" in f["message"] for f in failed[4])


def test_since_does_not_forgive_old_line_numbers_once_the_old_lines_changed(agent):
    append(agent, b'{"not": "an event"}\n')  # bad before REV
    old = unguarded(agent, "junk")
    assert report(agent, "--since", old)[0] == 0  # forgiven: the line is REV's
    log = agent / LOG
    log.write_bytes(log.read_bytes().replace(b'{"not": "an event"}', b'{"not": "an evenT"}'))
    code, since = report(agent, "--since", old)
    failed = {c["number"] for c in since["checks"] if not c["passed"]}
    assert code == 1 and {1, 4} <= failed  # the edited line is not REV's line any more
