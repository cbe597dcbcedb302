"""`git gasp recovery list | show | apply | drop` end to end, through the installed CLI:
the agent clone, a bare remote, and a second clone whose work sits on a recovery ref
(pushed there as a sync that gave up pushes it)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.sync.test_sync import append, head
from tests.testing.json_shapes import keys_ok
from tests.testing.run import gasp, git, out
from tests.testing.syncload import remote_ids

pytestmark = pytest.mark.slow  # real clones, fetches and pushes

LOG = "state/events.jsonl"
REF = "refs/gasp/recovery/tester/run_b1"


def run(repo: Path, *args: str) -> tuple[int, str, str]:
    proc = gasp(repo, "recovery", *args)
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


@pytest.fixture
def remote(agent, tmp_path) -> Path:
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    git(agent, "remote", "add", "origin", str(bare))
    git(agent, "push", "-q", "-u", "origin", "main")
    return bare


@pytest.fixture
def stranded(remote, tmp_path) -> tuple[Path, str]:
    """A second clone whose commit (goals 7) is only on the recovery ref REF."""
    clone = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(remote), str(clone))
    sha = append(clone, 7, message="run run_b1: ok\n\nRun-Id: run_b1")
    git(clone, "push", "-q", "origin", f"HEAD:{REF}")
    git(clone, "reset", "-q", "--hard", "origin/main")
    return clone, sha


def test_list_show_apply_sync_and_drop(agent, remote, stranded):
    _clone, theirs = stranded
    mine = append(agent, 1)
    code, listed, err = run(agent, "list")
    assert code == 0, err
    assert "tester/run_b1" in listed and theirs[:12] in listed and "origin" in listed
    assert "not fetched" in listed  # its commit is not in this clone yet
    code, shown, err = run(agent, "show", "run_b1")
    assert code == 0, err
    assert f"{REF} at {theirs[:12]}: 1 commit(s) and 2 line(s)" in shown
    assert "goal.created  event_g7" in shown and "recovery apply tester/run_b1" in shown
    code, text, err = run(agent, "list", "--json")
    listing = json.loads(text)
    keys_ok("git gasp recovery list --json", listing)
    (item,) = listing["refs"]
    keys_ok("git gasp recovery ref", item)
    assert item["name"] == REF and item["commit"] == theirs and item["local"] is True
    assert item["remote"] is True and item["commits_not_on_branch"] == 1
    # dropping it now would lose the work
    code, _, err = run(agent, "drop", "run_b1")
    assert code == 1 and "holds 1 commit(s) the current branch does not have" in err
    assert head(remote, REF) == theirs
    code, text, err = run(agent, "apply", "run_b1", "--json")
    assert code == 0, err
    report = json.loads(text)
    keys_ok("git gasp recovery apply --json", report)
    assert report["status"] == "applied" and report["commit"] == theirs
    assert git(agent, "rev-list", "--parents", "-n", "1", "HEAD").split()[1:] == [mine, theirs]
    assert b"event_g7" in (agent / LOG).read_bytes() and b"event_g1" in (agent / LOG).read_bytes()
    check = gasp(agent, "check")
    assert check.returncode == 0, out(check)
    code, text, _ = run(agent, "show", "run_b1", "--json")
    shown = json.loads(text)
    keys_ok("git gasp recovery show --json", shown)
    assert shown["commits"] == [] and shown["events"] == [] and shown["log"] == LOG
    code, text, _ = run(agent, "apply", "tester/run_b1")
    assert code == 0 and "already on main" in text
    synced = gasp(agent, "sync", "-q")
    assert synced.returncode == 0, out(synced)
    ids = remote_ids(remote)
    assert len(ids) == len(set(ids)) and {"event_g1", "event_g7"} <= set(ids)
    code, text, err = run(agent, "drop", REF)
    assert code == 0, err
    assert f"deleted {REF} on origin" in text and f"deleted {REF} here" in text
    assert git(remote, "for-each-ref", "refs/gasp/") == ""
    code, text, _ = run(agent, "list")
    assert code == 0 and "no recovery refs" in text


def test_a_stale_copy_here_never_hides_the_remote_value(agent, remote, stranded, tmp_path):
    """The clone fetched an older value of the ref; the remote's moved on. List shows the
    remote's commit, and drop judges that one (deleting the remote's only if it still
    holds what was judged), never the stale copy the branch already has."""
    clone, _old = stranded
    code, _, err = run(agent, "show", "run_b1")  # fetches it here
    assert code == 0, err
    code, _, err = run(agent, "apply", "run_b1")
    assert code == 0, err
    git(clone, "fetch", "-q", "origin", f"{REF}:{REF}")
    git(clone, "checkout", "-q", REF)
    newer = append(clone, 8)
    git(clone, "push", "-q", "origin", f"HEAD:{REF}")
    code, text, _ = run(agent, "list", "--json")
    (item,) = json.loads(text)["refs"]
    assert item["commit"] == newer and item["commits_not_on_branch"] is None
    code, listed, _ = run(agent, "list")
    assert "here (older)" in listed
    code, _, err = run(agent, "drop", "run_b1")
    assert code == 1 and "holds 1 commit(s)" in err
    assert head(remote, REF) == newer


def test_apply_refuses_a_history_that_drops_a_committed_line(agent, remote, tmp_path):
    clone = tmp_path / "bad"
    git(tmp_path, "clone", "-q", str(remote), str(clone))
    append(clone, 3)
    log = clone / LOG
    log.write_bytes(b"".join(log.read_bytes().splitlines(keepends=True)[:-1]))
    git(clone, "commit", "-q", "--no-verify", "-am", "drop a line")
    bad = head(clone)
    git(clone, "push", "-q", "origin", f"HEAD:{REF}")
    before = head(agent)
    code, _, err = run(agent, "apply", "run_b1")
    assert code == 1, err
    assert "breaks the rules" in err and "the branch did not move" in err
    assert head(agent) == before and not (agent / ".git" / "MERGE_HEAD").exists()
    assert git(agent, "status", "--porcelain", "--untracked-files=no") == ""
    assert bad[:12] in err, err  # names the commit


def test_apply_cannot_start_on_a_dirty_tree(agent, remote, stranded):
    before = head(agent)
    (agent / "AGENT.md").write_text((agent / "AGENT.md").read_text() + "\nedited\n")
    code, _, err = run(agent, "apply", "run_b1")
    assert code == 5 and "uncommitted changes" in err and "AGENT.md" in err
    assert head(agent) == before


def test_a_conflict_stops_with_the_merge_in_progress_and_sync_aborts_it(agent, remote,
                                                                        tmp_path):
    clone = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(remote), str(clone))
    (clone / "NOTES.md").write_text("theirs\n")
    git(clone, "add", "NOTES.md")
    git(clone, "commit", "-q", "--no-verify", "-m", "notes, theirs")
    git(clone, "push", "-q", "origin", f"HEAD:{REF}")
    (agent / "NOTES.md").write_text("mine\n")
    git(agent, "add", "NOTES.md")
    git(agent, "commit", "-q", "--no-verify", "-m", "notes, mine")
    mine = head(agent)
    code, _, err = run(agent, "apply", "run_b1")
    assert code == 1 and "merge conflict" in err and "NOTES.md" in err
    assert "git gasp sync --abort" in err
    assert (agent / ".git" / "MERGE_HEAD").exists()
    aborted = gasp(agent, "sync", "--abort")
    assert aborted.returncode == 0, out(aborted)
    assert head(agent) == mine and not (agent / ".git" / "MERGE_HEAD").exists()


def test_drop_says_why_when_the_remote_refuses_the_deletion(agent, remote, stranded):
    """A host may refuse deletions (git's receive.denyDeletes covers only branches, so
    it is a hook here): drop names the remote's reason in one line and keeps it there;
    --local deletes only this clone's copy."""
    clone, theirs = stranded
    git(agent, "fetch", "-q", "origin", f"{REF}:{REF}")
    git(agent, "merge", "-q", "--no-edit", REF)  # the work is on the branch now
    hook = remote / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\nwhile read old new ref; do\n"
                    "  case $new in 0000000000000000000000000000000000000000)\n"
                    "    echo \"deleting $ref is not allowed here\" >&2; exit 1;; esac\n"
                    "done\n")
    hook.chmod(0o755)
    code, _, err = run(agent, "drop", "run_b1")
    assert code == 1 and err.count("\n") == 1, err
    assert f"deleting {REF} is not allowed here" in err and "it is kept there" in err
    assert head(remote, REF) == theirs
    code, text, err = run(agent, "drop", "run_b1", "--local")
    assert code == 0 and text.strip() == f"deleted {REF} here", err
    assert git(agent, "for-each-ref", "refs/gasp/") == "" and head(remote, REF) == theirs


def test_names_that_match_none_or_several_and_no_repository(agent, remote, stranded,
                                                             tmp_path):
    clone, _ = stranded
    git(clone, "push", "-q", "origin", f"{stranded[1]}:refs/gasp/recovery/other-agent/run_b1")
    code, _, err = run(agent, "show", "run_b1")
    assert code == 1 and "names 2 recovery refs" in err and "give more of the name" in err
    code, _, err = run(agent, "show", "other-agent/run_b1")
    assert code == 0, err
    code, _, err = run(agent, "apply", "run_zz")
    assert code == 1 and "no recovery ref named 'run_zz'" in err
    outside = tmp_path / "plain"
    outside.mkdir()
    code, _, err = run(outside, "list")
    assert code == 2 and err.startswith("git gasp: error: not an agent repository")


def test_a_remotes_text_reaches_the_terminal_escaped(agent, remote, tmp_path):
    """A recovery ref is someone else's commits: its subjects and log lines are shown
    with their control characters escaped (no terminal escape runs)."""
    clone = tmp_path / "hostile"
    git(tmp_path, "clone", "-q", str(remote), str(clone))
    append(clone, 9, message="title \x1b]0;pwned\x07 here")
    git(clone, "push", "-q", "origin", f"HEAD:{REF}")
    for args in (("show", "run_b1"), ("list",)):
        code, text, err = run(agent, *args)
        assert code == 0, err
        assert "\x1b" not in text and "\x07" not in text and "\\x1b" in text, (args, text)
