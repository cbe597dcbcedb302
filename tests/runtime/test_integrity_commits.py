"""Every commit git-gasp makes itself obeys the guard (issue 10, defects 1 and 3):
commit-run, the live hook's boundary commit and fork apply the append-only rules and
checks 1/5/7 to what they commit, never commit the git dir, honour commit.gpgsign; fork
--at a domain event keeps its ops pair."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.runtime.helpers import assert_conformant, one_error_line, run_py
from tests.testing.run import gasp, git, out

pytestmark = pytest.mark.slow

LOG = "state/events.jsonl"


def finished_run(repo: Path) -> None:
    for args in (("run", "start", "--task", "t"), ("run", "finish", "--outcome", "success")):
        proc = gasp(repo, *args)
        assert proc.returncode == 0, out(proc)


def committed_run(repo: Path) -> None:
    finished_run(repo)
    proc = gasp(repo, "commit-run")
    assert proc.returncode == 0, out(proc)


def snapshot_state(repo: Path) -> tuple[str, str, str, bytes]:
    return (git(repo, "rev-parse", "HEAD"), git(repo, "diff", "--cached", "--name-status"),
            git(repo, "status", "--porcelain"), (repo / LOG).read_bytes())


def edit_first_line(repo: Path) -> None:
    """Rewrite a committed line in place (still a valid envelope)."""
    path = repo / LOG
    lines = path.read_bytes().splitlines(keepends=True)
    obj = json.loads(lines[0])
    obj["ts_ms"] += 1
    lines[0] = json.dumps(obj, separators=(",", ":")).encode() + b"\n"
    path.write_bytes(b"".join(lines))


def test_commit_run_refuses_an_in_place_edit_of_the_log(agent):
    committed_run(agent)
    finished_run(agent)
    edit_first_line(agent)
    before = snapshot_state(agent)
    line = one_error_line(gasp(agent, "commit-run", "--no-journal"))
    assert "append-only" in line and f"{LOG}:1" in line, line
    assert snapshot_state(agent) == before


def test_commit_run_refuses_an_appended_line_that_fails_check_7(agent):
    committed_run(agent)
    finished_run(agent)
    from tests.testing.events import line as event_line

    with open(agent / LOG, "ab") as fh:  # a goal.created with no ops pair
        fh.write(event_line("event_unpaired", "goal.created",
                            {"id": "goal_x", "title": "x", "status": "Open"}))
    before = snapshot_state(agent)
    line = one_error_line(gasp(agent, "commit-run", "--no-journal"))
    assert "check 7" in line, line
    assert snapshot_state(agent) == before


@pytest.mark.parametrize("named", [".git/config", ".git", "../outside.txt"])
def test_commit_run_refuses_paths_in_the_git_dir_or_outside(agent, named):
    (agent.parent / "outside.txt").write_text("x\n")
    finished_run(agent)
    before = snapshot_state(agent)
    line = one_error_line(gasp(agent, "commit-run", "--no-journal", named))
    assert "refusing to commit" in line, line
    assert snapshot_state(agent) == before
    assert ".git/config" not in git(agent, "ls-tree", "-r", "--name-only", "HEAD")


def test_commit_run_refuses_a_link_into_the_git_dir(agent):
    finished_run(agent)
    (agent / "cfg").symlink_to(".git/config")
    before = snapshot_state(agent)
    line = one_error_line(gasp(agent, "commit-run", "--no-journal", "cfg"))
    assert "git dir" in line, line
    assert snapshot_state(agent) == before


def test_commit_run_refuses_a_link_pointing_outside_the_work_tree(agent, tmp_path):
    secret = tmp_path / "secret"
    secret.write_text("x\n")
    finished_run(agent)
    (agent / "notes.md").symlink_to(secret)
    before = snapshot_state(agent)
    line = one_error_line(gasp(agent, "commit-run", "--no-journal", "notes.md"))
    assert "outside the work tree" in line, line
    assert snapshot_state(agent) == before


FAKE_GPG = """#!/bin/sh
# a stand-in for gpg: git passes --status-fd=2 -bsau KEY and the payload on stdin
cat >/dev/null
echo "[GNUPG:] SIG_CREATED D 1 8 00 1 FAKE" >&2
printf -- '-----BEGIN PGP SIGNATURE-----\\n\\nZmFrZQ==\\n-----END PGP SIGNATURE-----\\n'
"""


def test_commit_run_signs_when_commit_gpgsign_is_set(agent, tmp_path):
    gpg = tmp_path / "fake-gpg"
    gpg.write_text(FAKE_GPG)
    gpg.chmod(0o755)
    git(agent, "config", "commit.gpgsign", "true")
    git(agent, "config", "gpg.program", str(gpg))
    git(agent, "config", "user.signingkey", "FAKE")
    finished_run(agent)
    proc = gasp(agent, "commit-run")
    assert proc.returncode == 0, out(proc)
    raw = git(agent, "cat-file", "commit", "HEAD")
    assert "gpgsig -----BEGIN PGP SIGNATURE-----" in raw, raw
    assert "Run-Id: run_" in raw
    assert git(agent, "status", "--porcelain") == ""


def test_the_hook_boundary_commit_applies_the_guard(agent):
    """The live hook's SessionEnd commit goes through runtime.commit_run: an in-place
    edit of the log is refused there too, and nothing is committed."""
    committed_run(agent)
    finished_run(agent)
    edit_first_line(agent)
    before = snapshot_state(agent)
    code = ("import sys; from pathlib import Path\n"
            "from git_gasp.runtime import commit_run\n"
            "from git_gasp.base.errors import GaspError\n"
            "try:\n"
            "    commit_run(Path(sys.argv[1]), 'run_x', None, 'success', [])\n"
            "except GaspError as exc:\n"
            "    print(exc); sys.exit(1)\n")
    proc = run_py(code, str(agent))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "append-only" in proc.stdout, proc.stdout
    assert snapshot_state(agent) == before


def test_fork_at_a_domain_event_keeps_its_ops_pair(agent):
    proc = gasp(agent, "record", "goal", "--title", "first")
    assert proc.returncode == 0, out(proc)
    proc = gasp(agent, "record", "goal", "--title", "second")
    assert proc.returncode == 0, out(proc)
    git(agent, "add", LOG)
    git(agent, "commit", "-q", "-m", "goals")
    events = [json.loads(raw) for raw in (agent / LOG).read_bytes().splitlines()]
    first_goal = next(e for e in events if e["kind"] == "goal.created")
    proc = gasp(agent, "fork", "alt", "--at", first_goal["id"])
    assert proc.returncode == 0, out(proc)
    git(agent, "switch", "-q", "alt")
    forked = [json.loads(raw) for raw in (agent / LOG).read_bytes().splitlines()]
    ids = [e["id"] for e in forked]
    pair = next(e for e in events if e.get("causation_id") == first_goal["id"])
    assert first_goal["id"] in ids and pair["id"] in ids
    assert not any(e["payload"].get("title") == "second" for e in forked
                   if isinstance(e["payload"], dict))
    assert_conformant(agent)


def test_identity_amend_commit_goes_through_commit_paths(agent):
    """identity amend commits through the guard: with the log edited in place it is
    refused with one line before anything is written (no decision appended, AGENT.md
    untouched, nothing committed)."""
    committed_run(agent)
    edit_first_line(agent)
    ident = agent / "identity" / "IDENTITY.md"
    ident.write_text(ident.read_text() + "\nmore\n")
    before = snapshot_state(agent) + ((agent / "AGENT.md").read_bytes(),)
    line = one_error_line(gasp(agent, "identity", "amend", "--approved-by", "me",
                               "--reason", "why"))
    assert "append-only" in line, line
    assert snapshot_state(agent) + ((agent / "AGENT.md").read_bytes(),) == before


def test_commit_run_with_a_failing_signer_is_one_line_and_commits_nothing(agent, tmp_path):
    gpg = tmp_path / "broken-gpg"
    gpg.write_text("#!/bin/sh\ncat >/dev/null\necho 'no secret key' >&2\nexit 2\n")
    gpg.chmod(0o755)
    git(agent, "config", "commit.gpgsign", "true")
    git(agent, "config", "gpg.program", str(gpg))
    finished_run(agent)
    before = snapshot_state(agent)
    line = one_error_line(gpg_proc := gasp(agent, "commit-run", "--no-journal"))
    assert "cannot commit" in line, out(gpg_proc)
    assert snapshot_state(agent) == before
