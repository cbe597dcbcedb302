"""`git gasp forget` (issue 49): a secret committed in 10 of 50 commits is rewritten out
of every version of the state branch (`git log -p --all` holds no trace), check passes
(check 4 on the rewritten history), the forget is recorded by a maintenance event
naming the fingerprint, never the secret; the server accepts the forced push only with
`gasp.allowForget` and the forget event; a clone that fetches is told what to do; unsafe
states are refused unless --force."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from git_gasp.redact.scan import fingerprint
from git_gasp.store.forget import forgotten_fingerprints, variants
from tests.testing.events import create, goal_pair, line, ops
from tests.testing.planting import family_tokens, repo_texts
from tests.testing.run import gasp, git, out

pytestmark = pytest.mark.slow  # 50 commits, a rewrite, pushes and a clone

LOG = "state/events.jsonl"
TOKENS = family_tokens("forget")
AWS = TOKENS["aws_access_key"]
FP = fingerprint("aws_access_key", AWS)


def _commit(repo: Path, message: str) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-verify", "-m", message)


def _history(agent: Path) -> None:
    """50 commits; 10 of them add the AWS key (to the log, a skill, a fact, a message)."""
    for n in range(1, 51):
        leak = n % 5 == 0
        title = f"goal {n}" + (f" with {AWS}" if leak else "")
        with open(agent / LOG, "ab") as fh:
            fh.write(line(f"event_f{n}", "goal.created",
                          {"id": f"goal_f{n}", "title": title, "status": "Open"})
                     + ops(f"event_f{n}o", f"event_f{n}",
                           create(f"goal_f{n}", "goal", title=title, status="Open")))
        if n == 10:
            (agent / "skills/leak").mkdir(parents=True)
            (agent / "skills/leak/SKILL.md").write_text(
                f"---\nname: leak\ndescription: d\n---\nuse {AWS}\n")
        _commit(agent, f"commit {n}" + (f" {AWS}" if n == 25 else ""))


def _texts(repo: Path) -> bytes:
    return b"\n".join(data for _where, data in repo_texts(repo))


def _served(agent: Path, tmp_path: Path) -> Path:
    """A bare remote holding the history (pushed before its guard was installed)."""
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    git(agent, "remote", "add", "origin", str(remote))
    git(agent, "push", "-q", "--no-verify", "-u", "origin", "main")
    assert gasp(remote, "install-hooks", "--server").returncode == 0
    return remote


def test_forget_rewrites_every_version_and_the_server_allows_only_that(agent: Path,
                                                                       tmp_path: Path):
    git(agent, "branch", "-M", "main")
    _history(agent)
    remote = _served(agent, tmp_path)
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(remote), str(clone))
    assert AWS.encode() in _texts(agent)
    check = gasp(agent, "check")
    assert f"fingerprint {FP}" in out(check)

    proc = gasp(agent, "forget", "--fingerprint", FP)
    said = out(proc)
    assert proc.returncode == 0, said
    assert "git push --force origin main" in said and "gasp.allowForget" in said
    assert AWS not in said
    everything = _texts(agent)
    assert AWS.encode() not in everything
    assert f"[REDACTED:{FP}]".encode() in everything
    assert git(agent, "rev-list", "--count", "HEAD").strip() == "52"  # init + 50 + forget
    assert git(agent, "status", "--porcelain").strip() == ""
    check = gasp(agent, "check", "--strict")
    assert check.returncode == 0, out(check)
    log = (agent / LOG).read_bytes()
    assert forgotten_fingerprints(log) == {FP}
    last = json.loads(log.splitlines()[-1])
    assert last["kind"] == "state.ops_applied" and last["causation_id"] is None

    refused = subprocess.run(["git", "push", "-q", "--force", "origin", "main"], cwd=agent,
                             capture_output=True)
    assert refused.returncode != 0
    assert "gasp.allowForget" in refused.stderr.decode()
    git(remote, "config", "gasp.allowForget", "true")
    pushed = subprocess.run(["git", "push", "-q", "--force", "origin", "main"], cwd=agent,
                            capture_output=True)
    assert pushed.returncode == 0, pushed.stderr.decode()
    assert AWS.encode() not in subprocess.run(["git", "log", "-p", "--all"], cwd=remote,
                                              capture_output=True).stdout

    git(clone, "fetch", "-q", "origin")
    told = out(gasp(clone, "check"))
    assert f"origin/main was rewritten by `git gasp forget` ({FP})" in told, told
    assert "git reset --hard origin/main" in told
    git(clone, "reset", "-q", "--hard", "origin/main")
    assert "rewritten by" not in out(gasp(clone, "check"))


def test_a_rewrite_that_drops_a_line_is_refused_even_when_forget_is_allowed(
        agent: Path, tmp_path: Path):
    git(agent, "branch", "-M", "main")
    with open(agent / LOG, "ab") as fh:
        fh.write(goal_pair(1) + goal_pair(2))
    _commit(agent, "two goals")
    remote = _served(agent, tmp_path)
    git(remote, "config", "gasp.allowForget", "true")
    data = (agent / LOG).read_bytes().splitlines(keepends=True)
    (agent / LOG).write_bytes(b"".join(data[:-2]))
    _commit(agent, "drop")
    git(agent, "reset", "-q", "--soft", "HEAD~2")
    _commit(agent, "rewritten without the goal")
    assert gasp(agent, "forget", "--fingerprint", FP).returncode != 0  # nothing to forget
    proc = subprocess.run(["git", "push", "-q", "--force", "origin", "main"], cwd=agent,
                          capture_output=True)
    assert proc.returncode != 0


def test_unsafe_states_are_refused_without_force(agent: Path):
    with open(agent / LOG, "ab") as fh:
        fh.write(goal_pair(1))
    _commit(agent, f"leak {AWS}")
    with open(agent / LOG, "ab") as fh:
        fh.write(goal_pair(2))
    proc = gasp(agent, "forget", AWS)
    assert proc.returncode != 0 and "uncommitted changes" in out(proc)
    assert AWS.encode() in _texts(agent)
    proc = gasp(agent, "forget", "--force", AWS)
    assert proc.returncode == 0, out(proc)
    assert AWS.encode() not in _texts(agent)
    assert gasp(agent, "forget").returncode != 0  # nothing named
    assert "kind:hash8" in out(gasp(agent, "forget", "--fingerprint", "nope"))


def test_variants_cover_the_json_escaped_forms():
    pem = TOKENS["private_key"]
    assert pem.encode() in variants(pem) and json.dumps(pem)[1:-1].encode() in variants(pem)


def test_forget_beside_a_project_rewrites_the_state_branch_only(tmp_path: Path):
    from tests.testing.repos import init_branch, make_project

    project = make_project(tmp_path / "app")
    state = init_branch(project)
    main_before = git(project, "rev-parse", "HEAD").strip()
    with open(state / LOG, "ab") as fh:
        fh.write(line("event_b1", "goal.created",
                      {"id": "goal_b1", "title": f"key {AWS}", "status": "Open"})
                 + ops("event_b1o", "event_b1", create("goal_b1", "goal", status="Open")))
    git(state, "add", "-A")
    git(state, "commit", "-q", "--no-verify", "-m", "leak")
    proc = gasp(project, "forget", AWS)
    assert proc.returncode == 0, out(proc)
    assert AWS.encode() not in _texts(project)
    assert git(project, "rev-parse", "HEAD").strip() == main_before  # the project untouched
    assert git(state, "status", "--porcelain").strip() == ""
    assert gasp(project, "check").returncode == 0
