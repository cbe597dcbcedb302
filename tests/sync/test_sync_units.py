"""The pieces of `git gasp sync` that need no remote: the backoff, the recovery ref's
name, the outcome's report and exit codes, the refusals and the clean-up record."""

from __future__ import annotations

import json
import random
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from git_gasp.sync import recovery
from git_gasp.sync.backoff import STEP_CAP_S, Backoff
from git_gasp.sync.sync import EXIT, Options, Outcome, sync
from tests.testing.json_shapes import keys_ok
from tests.testing.run import git


def test_waits_are_jittered_below_a_doubling_ceiling_and_stay_in_the_budget():
    b = Backoff(max_wait_s=1000, rng=random.Random(1))
    ceilings = [b.ceiling(k) for k in range(1, 8)]
    assert ceilings == [0.25, 0.5, 1.0, 2.0, 4.0, STEP_CAP_S, STEP_CAP_S]
    for k in range(1, 8):
        ceiling = b.ceiling(k)
        wait = b.next_wait()
        assert 0 <= wait <= ceiling
    assert len(b.waits) == 7 and len(set(b.waits)) == 7  # jittered, not in step


def test_the_budget_bounds_the_sum_of_the_waits():
    b = Backoff(max_wait_s=1.0, rng=random.Random(2))
    waits = []
    while (w := b.next_wait(attempt_s=0.9)) is not None and len(waits) < 100:
        waits.append(w)
    assert sum(waits) <= 1.0 + 1e-9 and len(waits) < 100


def test_the_unit_is_the_failed_attempts_duration():
    b = Backoff(max_wait_s=100, rng=random.Random(3))
    b.attempt_s = 2.0
    assert b.ceiling(1) == 2.0 and b.ceiling(2) == 4.0


def test_no_budget_retries_at_once():
    b = Backoff(max_wait_s=0)
    assert [b.next_wait() for _ in range(5)] == [0.0] * 5


def test_recovery_ref_parts_are_valid_ref_names(tmp_path):
    stamp = recovery.utc_stamp(1796173564.25)
    assert stamp == "20261202T010604.250000Z"
    for raw in ("run_x1", "a b/c..d", "x.lock", "..", "-lead", "ünï"):
        part = recovery.ref_part(raw)
        assert "/" not in part and part
        assert subprocess.run(["git", "check-ref-format", f"refs/gasp/recovery/{part}/x"]
                              ).returncode == 0, part


def test_every_outcome_has_its_exit_code_and_one_line():
    assert EXIT["pushed"] == EXIT["up-to-date"] == EXIT["fast-forwarded"] == 0
    failing = [EXIT[s] for s in ("refused", "gave-up", "cannot-start", "stranded")]
    assert failing == [1, 4, 5, 6]
    for status in EXIT:
        o = Outcome(status=status, remote="origin", branch="main", local_branch="main",
                    attempts=3, waits=[0.1, 0.2], reason="why", recovery_ref="refs/gasp/x")
        line = o.line()
        assert "\n" not in line and line
        if status in ("gave-up", "stranded"):
            assert "3 attempts, 2 retries" in line


def test_the_json_report_is_the_documented_shape():
    o = Outcome(status="pushed", attempts=2, waits=[0.5])
    data = o.to_json()
    keys_ok("git gasp sync --json", data)
    assert data["retries"] == 1 and data["waited_s"] == 0.5 and data["exit_code"] == 0
    json.dumps(data)


def test_a_detached_head_cannot_start(agent):
    git(agent, "checkout", "-q", "--detach")
    outcome = sync(agent, Options(remote=str(agent)))
    assert outcome.status == "cannot-start" and "detached" in outcome.reason
    assert outcome.exit_code == 5 and outcome.attempts == 0


def test_an_unreadable_pack_index_is_named_not_taken_for_an_unborn_branch(agent):
    git(agent, "gc", "-q")
    [idx] = (agent / ".git" / "objects" / "pack").glob("*.idx")
    idx.chmod(0o644)
    data = bytearray(idx.read_bytes())
    data[8:16] = b"garbage!"  # the fan-out table stops being monotonic
    idx.write_bytes(bytes(data))
    outcome = sync(agent, Options(remote=str(agent)))
    assert outcome.status == "cannot-start" and outcome.exit_code == 5
    assert "cannot be read" in outcome.reason and "git fsck" in outcome.reason
    assert "no commit yet" not in outcome.reason


def test_an_unborn_branch_still_says_commit_first(tmp_path):
    git(tmp_path, "init", "-q", "-b", "main")
    outcome = sync(tmp_path, Options(remote=str(tmp_path)))
    assert outcome.status == "cannot-start" and "no commit yet" in outcome.reason


def test_a_merge_the_sync_did_not_record_is_never_aborted(agent):
    (agent / "x.txt").write_text("a\n")
    git(agent, "add", "x.txt")
    git(agent, "commit", "-q", "--no-verify", "-m", "x")
    git(agent, "checkout", "-q", "-b", "side", "HEAD~1")
    (agent / "x.txt").write_text("b\n")
    git(agent, "add", "x.txt")
    git(agent, "commit", "-q", "--no-verify", "-m", "side x")
    git(agent, "checkout", "-q", "main")
    git(agent, "merge", "-q", "side", check=False)
    outcome = sync(agent, Options(remote=str(agent)))
    assert outcome.status == "cannot-start" and "merge is in progress" in outcome.reason
    assert (agent / ".git" / "MERGE_HEAD").exists()  # the user's merge, untouched


@pytest.mark.parametrize("attempts,max_wait", [(0, 1.0), (1, -1.0)])
def test_bad_options_are_usage_errors(agent, attempts, max_wait):
    from git_gasp.base.errors import UsageError

    with pytest.raises(UsageError):
        sync(agent, Options(attempts=attempts, max_wait=max_wait))


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=60) | st.sampled_from(["app.lock.lock", "a.lock..lock", ".lock",
                                                "x.lock-.lock", "@{u}", "a" * 196 + ".lock"]))
def test_a_recovery_ref_made_from_any_agent_or_run_id_is_a_valid_ref_name(raw):
    part = recovery.ref_part(raw)
    ref = f"refs/gasp/recovery/{part}/{part}"
    assert subprocess.run(["git", "check-ref-format", ref]).returncode == 0, ref


def test_remote_moved_tells_a_lost_race_before_the_push(agent, tmp_path):
    """The check before a push: the remote branch still at the fetched commit (push), moved
    (a lost race: retry without running the remote's hook), or unreachable (push: it
    says why)."""
    from git_gasp.sync import integrate
    from git_gasp.sync import state as sync_state

    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    git(agent, "push", "-q", str(bare), "main")
    fetched = git(agent, "rev-parse", "HEAD").strip()
    with sync_state.session(agent) as s:
        assert not integrate.remote_moved(s, str(bare), "main", fetched, None)
        git(agent, "commit", "-q", "--allow-empty", "--no-verify", "-m", "moved")
        git(agent, "push", "-q", str(bare), "main")
        assert integrate.remote_moved(s, str(bare), "main", fetched, None)
        assert integrate.remote_moved(s, str(bare), "gone", fetched, None)  # deleted
        assert not integrate.remote_moved(s, str(bare), "gone", None, None)  # never was
        assert not integrate.remote_moved(s, str(tmp_path / "nowhere"), "main", fetched, None)
