"""`git gasp sync` end to end, through the installed CLI: a bare remote that refuses
non-fast-forward updates and logs every accepted one, the agent clone, and another
clone that moves the remote under it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.merge.test_merge_git import goal_titled
from tests.testing.events import goal_pair
from tests.testing.json_shapes import keys_ok
from tests.testing.run import gasp, git, out
from tests.testing.syncload import POST_RECEIVE, only_extended, remote_ids

pytestmark = pytest.mark.slow  # real clones, fetches and pushes

LOG = "state/events.jsonl"


def sync(repo: Path, *args: str) -> tuple[int, dict, str]:
    proc = gasp(repo, "sync", "--json", "--max-wait", "0.2", *args)
    return proc.returncode, json.loads(proc.stdout), proc.stderr.decode()


def append(repo: Path, *numbers: int, message: str = "goals") -> str:
    with open(repo / LOG, "ab") as fh:
        for n in numbers:
            fh.write(goal_pair(n))
    git(repo, "add", LOG)
    git(repo, "commit", "-q", "--no-verify", "-m", message)
    return git(repo, "rev-parse", "HEAD").strip()


def head(repo: Path, ref: str = "HEAD") -> str:
    return git(repo, "rev-parse", ref).strip()


def clean(repo: Path) -> bool:
    return git(repo, "status", "--porcelain", "--untracked-files=no") == "" and not any(
        (repo / ".git" / name).exists() for name in ("MERGE_HEAD", "rebase-merge"))


def ids_of(*numbers: int) -> list[str]:
    return [e for n in numbers for e in (f"event_g{n}", f"event_g{n}o")]


@pytest.fixture
def remote(agent, tmp_path) -> Path:
    """The bare remote `origin` of `agent`, holding its history."""
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    git(bare, "config", "receive.denyNonFastForwards", "true")
    hook = bare / "hooks" / "post-receive"
    hook.write_text(POST_RECEIVE)
    hook.chmod(0o755)
    git(agent, "remote", "add", "origin", str(bare))
    git(agent, "push", "-q", "-u", "origin", "main")
    return bare


@pytest.fixture
def other(remote, tmp_path) -> Path:
    """A second clone of the remote, with the driver (it pulls what the agent pushed)."""
    clone = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(remote), str(clone))
    proc = gasp(clone, "install-hooks")
    assert proc.returncode == 0, out(proc)
    return clone


def test_nothing_to_do_and_a_rerun_after_success_does_nothing(agent, remote):
    code, report, _ = sync(agent)
    assert code == 0 and report["status"] == "up-to-date" and report["attempts"] == 1
    append(agent, 1)
    code, report, _ = sync(agent)
    assert code == 0 and report["status"] == "pushed" and report["pushed"] == head(agent)
    assert head(remote, "main") == head(agent)
    code, report, _ = sync(agent)
    assert code == 0 and report["status"] == "up-to-date" and report["pushed"] is None
    assert only_extended(remote) == []


def test_first_push_creates_the_remote_branch(agent, tmp_path):
    bare = tmp_path / "empty.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    code, report, err = sync(agent, str(bare), "work")
    assert code == 0, err
    assert report["remote_head"] is None and head(bare, "work") == head(agent)


def test_behind_fast_forwards(agent, remote, other):
    append(other, 1)
    git(other, "push", "-q")
    code, report, _ = sync(agent)
    assert code == 0 and report["status"] == "fast-forwarded"
    assert head(agent) == head(remote, "main") and clean(agent)


def test_diverged_merges_through_the_driver_and_keeps_every_event_once(agent, remote, other):
    append(other, 1)
    git(other, "push", "-q")
    mine = append(agent, 2)
    code, report, err = sync(agent)
    assert code == 0, err
    assert report["status"] == "pushed" and report["mode"] == "merge"
    tip = head(remote, "main")
    assert tip == head(agent) == report["pushed"] and clean(agent)
    assert git(agent, "rev-list", "--parents", "-n1", tip).split()[1:] == [
        mine, report["remote_head"]]
    ids = remote_ids(remote)
    assert sorted(ids) == sorted(set(ids)) and set(ids_of(1, 2)) <= set(ids)
    check = gasp(agent, "check")
    assert check.returncode == 0, out(check)


def test_rebase_replays_local_commits_onto_the_remote(agent, remote, other):
    append(other, 1)
    append(other, 2)
    git(other, "push", "-q")
    append(agent, 3)
    append(agent, 4)
    code, report, err = sync(agent, "--rebase")
    assert code == 0, err
    assert report["mode"] == "rebase"
    assert git(agent, "rev-list", "--merges", "HEAD") == ""
    assert head(agent, "HEAD~2") == report["remote_head"]
    ids = remote_ids(remote)
    assert len(ids) == len(set(ids)) and ids[-8:] == ids_of(1, 2, 3, 4)
    assert gasp(agent, "check").returncode == 0
    assert only_extended(remote) == []


def test_a_clone_without_driver_config_or_attributes_still_merges(agent, remote, other):
    git(agent, "config", "--unset", "merge.gasp.driver")
    attrs = agent / ".gitattributes"
    attrs.write_text("".join(x + "\n" for x in attrs.read_text().splitlines()
                             if "merge=" not in x))
    git(agent, "commit", "-q", "--no-verify", "-am", "no merge attributes")
    append(other, 1)
    git(other, "push", "-q")
    append(agent, 2)
    code, report, err = sync(agent)
    assert code == 0, err
    assert set(ids_of(1, 2)) <= set(remote_ids(remote))
    assert git(agent, "config", "--get", "merge.gasp.driver", check=False) == ""


def _mover(agent: Path, other: Path, tmp_path: Path, times: int) -> Path:
    """A pre-push hook in `agent` that pushes a new commit of `other` first, the first
    `times` times: the agent's push then loses the race for the remote's ref."""
    for n in range(times):
        (tmp_path / f"ev{n}").write_bytes(goal_pair(100 + n))
    count = tmp_path / "moved"
    hook = agent / ".git" / "hooks" / "pre-push"
    hook.write_text(f"""#!/bin/sh
unset GIT_DIR GIT_INDEX_FILE GIT_WORK_TREE GIT_PREFIX
n=$(cat {count} 2>/dev/null || echo 0)
if [ "$n" -lt {times} ]; then
  echo $((n + 1)) > {count}
  cd {other} && git pull -q --no-rebase && cat {tmp_path}/ev$n >> {LOG} &&
    git commit -q --no-verify -am "moved $n" && git push -q >/dev/null 2>&1
fi
exit 0
""")
    hook.chmod(0o755)
    return count


def test_a_rejected_push_is_fetched_merged_and_pushed_again(agent, remote, other, tmp_path):
    _mover(agent, other, tmp_path, 2)
    append(agent, 1)
    # a budget two floored waits fit in (each wait is at least 50 ms: 0.2 s may not hold two)
    code, report, err = sync(agent, "--attempts", "5", "--max-wait", "10")
    assert code == 0, err
    assert report["attempts"] == 3 and report["retries"] == 2 and len(report["waits"]) == 2
    assert 0.1 <= sum(report["waits"]) <= 10
    ids = remote_ids(remote)
    assert len(ids) == len(set(ids)) and set(ids_of(1, 100, 101)) <= set(ids)
    assert head(agent) == head(remote, "main") and clean(agent)
    assert only_extended(remote) == []


def test_giving_up_pushes_the_local_work_to_a_recovery_ref(agent, remote, other, tmp_path):
    _mover(agent, other, tmp_path, 50)
    mine = append(agent, 1)
    code, report, err = sync(agent, "--attempts", "2")
    assert code == 4, err
    assert report["status"] == "gave-up" and report["attempts"] == 2
    ref = report["recovery_ref"]
    assert ref.startswith("refs/gasp/recovery/tester/")
    assert head(remote, ref) == mine
    assert "recovery" in err and ref in err
    assert head(agent) == mine and clean(agent)  # the branch as it was
    assert only_extended(remote) == []


def test_recovery_ref_is_named_after_the_run(agent, remote, other, tmp_path):
    _mover(agent, other, tmp_path, 50)
    with open(agent / LOG, "ab") as fh:
        fh.write(goal_pair(1))
    git(agent, "add", LOG)
    git(agent, "commit", "-q", "--no-verify", "-m", "run run_x1: ok\n\nRun-Id: run_x1")
    code, report, _ = sync(agent, "--attempts", "1")
    assert code == 4 and report["recovery_ref"] == "refs/gasp/recovery/tester/run_x1"


def test_a_non_conformant_result_is_refused_and_nothing_is_pushed(agent, remote):
    before = head(remote, "main")
    append(agent, 1)
    log = agent / LOG
    log.write_bytes(log.read_bytes().replace(b"goal 1", b"goal X"))
    git(agent, "commit", "-q", "--no-verify", "-am", "rewrite")
    mine = head(agent)
    code, report, err = sync(agent)
    assert code == 1 and report["status"] == "refused"
    assert mine[:12] in report["reason"] and LOG in report["reason"]
    assert len(err.strip().splitlines()) == 1
    assert head(remote, "main") == before and head(agent) == mine


def _dirty(agent):
    with open(agent / LOG, "ab") as fh:
        fh.write(goal_pair(9))
    return "uncommitted changes"


def _detached(agent):
    git(agent, "checkout", "-q", "--detach")
    return "detached"


def _merging(agent):
    git(agent, "checkout", "-q", "-b", "side")
    (agent / "notes.txt").write_text("side\n")
    git(agent, "add", "notes.txt")
    git(agent, "commit", "-q", "--no-verify", "-m", "side")
    git(agent, "checkout", "-q", "main")
    (agent / "notes.txt").write_text("main\n")
    git(agent, "add", "notes.txt")
    git(agent, "commit", "-q", "--no-verify", "-m", "main")
    git(agent, "merge", "-q", "side", check=False)
    assert (agent / ".git" / "MERGE_HEAD").exists()
    return "a merge is in progress"


def _leased(agent):
    proc = subprocess.run(["git", "gasp", "run", "start", "--task", "t"], cwd=agent,
                          capture_output=True, env={**__import__("os").environ,
                                                    "GASP_WORKER_ID": "someone-else"})
    assert proc.returncode == 0, proc.stderr
    git(agent, "add", "-A")
    git(agent, "commit", "-q", "--no-verify", "-m", "run started")
    return "lease"


@pytest.mark.parametrize("make", [_dirty, _detached, _merging, _leased],
                         ids=["dirty", "detached", "merging", "lease"])
def test_refuses_to_start_and_changes_nothing(agent, remote, other, make):
    append(other, 1)
    git(other, "push", "-q")
    append(agent, 2)
    why = make(agent)
    before = (head(agent), git(agent, "status", "--porcelain"), head(remote, "main"))
    code, report, err = sync(agent)
    assert code == 5 and report["status"] == "cannot-start", err
    assert why in report["reason"] and len(err.strip().splitlines()) == 1
    assert (head(agent), git(agent, "status", "--porcelain"), head(remote, "main")) == before


def test_a_merge_a_killed_sync_left_is_aborted_and_the_sync_goes_on(agent, remote, other):
    append(other, 1)
    git(other, "push", "-q")
    mine = append(agent, 2)
    git(agent, "fetch", "-q")
    onto = head(agent, "origin/main")
    # what a sync killed in the middle of its merge leaves: the merge, and its record
    git(agent, "-c", "merge.gasp.driver=false", "merge", "--no-ff", "-q", onto, check=False)
    assert (agent / ".git" / "MERGE_HEAD").exists()
    (agent / ".git" / "gasp").mkdir(exist_ok=True)
    (agent / ".git" / "gasp" / "sync.json").write_text(json.dumps(
        {"op": "merge", "branch": "refs/heads/main", "orig": mine, "onto": onto, "pid": 1,
         "started_ms": 0}))
    code, report, err = sync(agent)
    assert code == 0, err
    assert report["cleaned"] and "aborted the merge" in report["cleaned"][0]
    assert set(ids_of(1, 2)) <= set(remote_ids(remote)) and clean(agent)
    assert not (agent / ".git" / "gasp" / "sync.json").exists()


def test_usage_errors(agent):
    proc = gasp(agent, "sync")
    assert proc.returncode == 2 and "no remote named 'origin'" in proc.stderr.decode()
    proc = gasp(agent, "sync", "--attempts", "0")
    assert proc.returncode == 2


def test_json_shape(agent, remote, other):
    append(other, 1)
    git(other, "push", "-q")
    append(agent, 2)
    code, report, _ = sync(agent)
    assert code == 0
    keys_ok("git gasp sync --json", report)


def test_never_forces(agent, remote, other, tmp_path):
    """Every update the remote accepted extends what it had; and sync never asks git to
    force (no --force, no +refspec) in any of the runs above."""
    source = Path(__file__).resolve().parents[2] / "git_gasp" / "sync" / "integrate.py"
    text = source.read_text()
    assert "--force" not in text and '"+' not in text and "f\"+" not in text
    append(other, 1)
    git(other, "push", "-q")
    append(agent, 2)
    assert sync(agent)[0] == 0
    append(other, 3)
    git(other, "pull", "-q", "--no-rebase")
    git(other, "push", "-q")
    append(agent, 4)
    assert sync(agent, "--rebase")[0] == 0
    assert only_extended(remote) == [] and len(open(remote / "accepted.log").readlines()) >= 4


# --- a conflict is not a race; a fast-forward is validated (issue #26 items 2, 3)

def _commit_file(repo, name: str, text: str) -> str:
    (repo / name).write_text(text)
    git(repo, "add", name)
    git(repo, "commit", "-q", "--no-verify", "-m", f"edit {name}")
    return head(repo)


def _conflicting_notes(agent, other) -> str:
    """An ordinary file both sides changed differently; the agent's own commit."""
    _commit_file(agent, "NOTES.md", "base\n")
    git(agent, "push", "-q")
    git(other, "pull", "-q", "--no-rebase")
    _commit_file(other, "NOTES.md", "theirs\n")
    append(other, 1)
    git(other, "push", "-q")
    append(agent, 2)
    return _commit_file(agent, "NOTES.md", "ours\n")


def test_a_conflict_stops_at_once_names_the_file_and_pushes_nothing(agent, remote, other):
    mine = _conflicting_notes(agent, other)
    before = head(remote, "main")
    refs_before = git(remote, "for-each-ref")
    code, report, err = sync(agent)
    assert code == 1, err
    assert report["status"] == "conflict" and report["attempts"] == 1
    assert report["conflicts"] == ["NOTES.md"] and report["recovery_ref"] is None
    assert "NOTES.md" in err and "git commit" in err and "git gasp sync --abort" in err
    assert len(err.strip().splitlines()) == 1
    assert head(remote, "main") == before and git(remote, "for-each-ref") == refs_before
    assert (agent / ".git" / "MERGE_HEAD").exists() and head(agent) == mine
    # the next sync says what is in progress instead of aborting it
    code, report, err = sync(agent)
    assert code == 5 and "conflicted git gasp sync" in err
    assert (agent / ".git" / "MERGE_HEAD").exists()
    # git's own commands finish it; the sync after pushes every event once
    (agent / "NOTES.md").write_text("ours and theirs\n")
    git(agent, "add", "NOTES.md")
    git(agent, "commit", "-q", "--no-edit", "--no-verify")
    code, report, err = sync(agent)
    assert code == 0 and report["status"] == "pushed", err
    ids = remote_ids(remote)
    assert len(ids) == len(set(ids)) and set(ids_of(1, 2)) <= set(ids)
    assert git(remote, "show", "main:NOTES.md") == "ours and theirs\n"


def test_sync_abort_puts_the_branch_back(agent, remote, other):
    mine = _conflicting_notes(agent, other)
    code, _, err = sync(agent)
    assert code == 1, err
    proc = gasp(agent, "sync", "--abort")
    assert proc.returncode == 0, out(proc)
    assert "aborted the merge" in proc.stdout.decode()
    assert not (agent / ".git" / "MERGE_HEAD").exists() and head(agent) == mine
    assert git(agent, "status", "--porcelain", "--untracked-files=no") == ""
    again = gasp(agent, "sync", "--abort")
    assert again.returncode == 5 and "nothing to abort" in again.stderr.decode()


def test_abort_leaves_a_merge_it_did_not_start(agent, remote, other):
    _conflicting_notes(agent, other)
    git(agent, "fetch", "-q")
    proc = git(agent, "merge", "--no-edit", "origin/main", check=False)
    assert (agent / ".git" / "MERGE_HEAD").exists(), proc
    refused = gasp(agent, "sync", "--abort")
    assert refused.returncode == 5 and "not left by git gasp sync" in refused.stderr.decode()
    assert (agent / ".git" / "MERGE_HEAD").exists()


def test_a_rebase_conflict_is_left_for_git_rebase_continue(agent, remote, other):
    mine = _conflicting_notes(agent, other)
    code, report, err = sync(agent, "--rebase")
    assert code == 1 and report["status"] == "conflict", err
    assert "git rebase --continue" in err and report["conflicts"] == ["NOTES.md"]
    assert (agent / ".git" / "rebase-merge").is_dir()
    proc = gasp(agent, "sync", "--abort")
    assert proc.returncode == 0, out(proc)
    assert not (agent / ".git" / "rebase-merge").exists() and head(agent) == mine


def test_a_log_conflict_the_driver_cannot_resolve_stops_too(agent, remote, other):
    with open(other / LOG, "ab") as fh:
        fh.write(goal_titled(7, "theirs"))
    git(other, "commit", "-q", "--no-verify", "-am", "theirs")
    git(other, "push", "-q")
    with open(agent / LOG, "ab") as fh:
        fh.write(goal_titled(7, "ours"))
    git(agent, "commit", "-q", "--no-verify", "-am", "ours")
    code, report, err = sync(agent)
    assert code == 1 and report["status"] == "conflict", err
    assert report["conflicts"] == [LOG] and LOG in err


def test_the_agent_hook_sync_never_leaves_a_merge(agent, remote, other):
    from git_gasp.sync.sync import Options
    from git_gasp.sync.sync import sync as run_sync

    mine = _conflicting_notes(agent, other)
    outcome = run_sync(agent, Options(max_wait=0.2, keep_conflict=False))
    assert outcome.status == "conflict" and outcome.exit_code == 1
    assert "NOTES.md" in outcome.reason and "as it was" in outcome.reason
    assert not (agent / ".git" / "MERGE_HEAD").exists() and head(agent) == mine


def test_a_fast_forward_onto_a_rewritten_remote_is_refused(agent, remote, other):
    append(agent, 1)
    git(agent, "push", "-q")
    git(other, "pull", "-q", "--no-rebase")
    log = other / LOG
    log.write_bytes(log.read_bytes().replace(b"goal 1", b"goal X"))
    git(other, "commit", "-q", "--no-verify", "-am", "rewrite a committed line")
    bad = head(other)
    git(other, "push", "-q")  # the remote has no hook: it takes it
    mine = head(agent)
    code, report, err = sync(agent)
    assert code == 1 and report["status"] == "refused", err
    assert bad[:12] in report["reason"] and "did not move" in report["reason"]
    assert len(err.strip().splitlines()) == 1
    assert head(agent) == mine
    assert git(agent, "status", "--porcelain", "--untracked-files=no") == ""


def test_quiet_prints_nothing_on_success_and_one_line_on_failure(agent, remote, other):
    append(agent, 1)
    proc = gasp(agent, "sync", "-q")
    assert proc.returncode == 0 and proc.stdout == b"" and proc.stderr == b"", out(proc)
    assert head(remote, "main") == head(agent)
    _conflicting_notes(agent, other)
    proc = gasp(agent, "sync", "--quiet")
    assert proc.returncode == 1 and proc.stdout == b""
    assert len(proc.stderr.decode().strip().splitlines()) == 1 and b"NOTES.md" in proc.stderr


def test_no_wait_budget_and_no_count_makes_one_attempt(agent, remote, other, tmp_path):
    _mover(agent, other, tmp_path, 50)  # the race is lost every time
    append(agent, 1)
    proc = gasp(agent, "sync", "--json", "--max-wait", "0")
    report = json.loads(proc.stdout)
    assert proc.returncode == 4 and report["attempts"] == 1, proc.stderr.decode()


def _counted_driver(repo: Path, tmp_path: Path) -> Path:
    """Make `repo`'s merge driver the real one behind a line in a file per start."""
    from git_gasp.store.attributes import driver_command

    runs = tmp_path / "driver-runs"
    git(repo, "config", "merge.gasp.driver", f"echo ran >> {runs}; {driver_command()}")
    return runs


def test_a_clean_merge_of_the_log_starts_no_driver_process(agent, remote, other, tmp_path):
    """The sync merges the append-only files itself: the same merge commit and log as
    through the driver, without the interpreter start it costs."""
    runs = _counted_driver(agent, tmp_path)
    append(other, 1)
    git(other, "push", "-q")
    mine = append(agent, 2)
    code, report, err = sync(agent)
    assert code == 0 and report["status"] == "pushed", err
    assert not runs.exists()
    merged = head(agent)
    assert git(agent, "rev-list", "--parents", "-n", "1", merged).split()[1:] == [
        mine, head(other)]
    assert git(agent, "log", "-1", "--format=%s", merged).strip() == \
        "Merge origin/main into main (git gasp sync)"
    log = (agent / LOG).read_bytes()
    assert log.count(b'"id":"event_g1"') == 1 and log.count(b'"id":"event_g2"') == 1
    assert log.index(b'"id":"event_g2"') < log.index(b'"id":"event_g1"')  # ours first
    assert clean(agent) and gasp(agent, "check").returncode == 0
    assert head(remote, "main") == merged


def test_a_merge_it_cannot_finish_itself_goes_through_the_driver(agent, remote, other,
                                                                 tmp_path):
    """Another file conflicting beside the log: merged again with the driver, so the log
    is the driver's and only the ordinary file is left in conflict."""
    mine = _conflicting_notes(agent, other)
    runs = _counted_driver(agent, tmp_path)
    code, report, _ = sync(agent)
    assert code == 1 and report["conflicts"] == ["NOTES.md"]
    assert runs.read_text().count("ran") == 1
    assert git(agent, "diff", "--name-only", "--diff-filter=U").split() == ["NOTES.md"]
    log = (agent / LOG).read_bytes()
    assert b"<<<<<<<" not in log and b"event_g1" in log and b"event_g2" in log
    assert head(agent) == mine
