"""The guard's secret rule (issue 49): a commit adding a secret to any state file (the
log, memory, journal, identity, skills, snapshots) is refused naming the file, the
line, the detector and the fingerprint — never the secret — with the fix; a
fingerprint in `.agent/secrets-allow` lets it through; a file outside the state, and
a secret committed before, are not the commit's business."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from git_gasp.guard.commit_guard import run_guard
from git_gasp.guard.secrets_rule import added_lines
from git_gasp.redact.scan import fingerprint
from tests.testing.events import create, goal_pair, line, ops
from tests.testing.planting import family_tokens, secret_part
from tests.testing.run import git

LOG = "state/events.jsonl"
TOKENS = family_tokens("guard")
AWS = TOKENS["aws_access_key"]
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "EXAMPLEKEY"


def commit(repo: Path) -> subprocess.CompletedProcess:
    git(repo, "add", "-A")
    return subprocess.run(["git", "commit", "-q", "-m", "x"], cwd=repo, capture_output=True)


def pair_with(n: int, summary: str) -> bytes:
    gid = f"goal_s{n}"
    return line(f"event_s{n}", "goal.created", {"id": gid, "title": summary, "status": "Open"}) \
        + ops(f"event_s{n}o", f"event_s{n}", create(gid, "goal", title=summary, status="Open"))


def test_a_hand_appended_aws_key_pair_is_refused_by_file_line_and_detector(agent: Path):
    with open(agent / LOG, "ab") as fh:
        fh.write(goal_pair(1) + pair_with(2, f"deploy with {AWS} and {AWS_SECRET}"))
    lines = (agent / LOG).read_bytes().count(b"\n")
    proc = commit(agent)
    err = proc.stderr.decode()
    assert proc.returncode != 0
    fp = fingerprint("aws_access_key", AWS)
    assert f"{LOG}:{lines - 1}: [secret] aws_access_key secret (fingerprint {fp})" in err, err
    assert f"git gasp forget --fingerprint {fp}" in err and ".agent/secrets-allow" in err
    assert AWS not in err and AWS_SECRET not in err and AWS[4:12] not in err
    assert "high_entropy" in err  # the secret access key, by the entropy detector


@pytest.mark.parametrize("rel", ["memory/facts.jsonl", "journal/JOURNAL.md",
                                 "identity/IDENTITY.md", "skills/deploy/SKILL.md",
                                 "snapshots/event_1/graph.json"])
@pytest.mark.parametrize("family", sorted(TOKENS))
def test_every_family_in_every_state_file_is_refused(agent: Path, rel: str, family: str):
    path = agent / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    old = path.read_bytes() if path.exists() else b""
    path.write_bytes(old + f"note\nthe key is {TOKENS[family]}\n".encode())
    found = [r for r in _staged(agent) if r.rule == "secret"]
    assert found and found[0].path == rel, found
    assert found[0].line == old.count(b"\n") + 2
    assert secret_part(family, TOKENS[family]) not in found[0].message + found[0].fix


def _staged(repo: Path):
    git(repo, "add", "-A")
    return run_guard(repo)


def test_the_allowlist_lets_a_fingerprint_through_and_only_it(agent: Path):
    (agent / "skills" / "x").mkdir(parents=True)
    gh = TOKENS["github_token"]
    (agent / "skills/x/SKILL.md").write_text(f"example: {gh}\nother: {AWS}\n")
    allow = agent / ".agent" / "secrets-allow"
    allow.write_text(f"{fingerprint('github_token', gh)}  # a revoked demo token\n")
    found = [r for r in _staged(agent) if r.rule == "secret"]
    assert [r.line for r in found] == [2]  # the AWS key still refused
    allow.write_text(allow.read_text() + fingerprint("aws_access_key", AWS) + "\n")
    assert commit(agent).returncode == 0


def test_files_outside_the_state_and_secrets_committed_before_are_not_scanned(agent: Path):
    (agent / "README.txt").write_text(f"key {AWS}\n")
    (agent / "skills" / "y").mkdir(parents=True)
    (agent / "skills/y/SKILL.md").write_text(f"key {AWS}\n")
    git(agent, "add", "-A")
    git(agent, "commit", "-q", "--no-verify", "-m", "before the guard knew")
    with open(agent / "skills/y/SKILL.md", "a") as fh:
        fh.write("a clean line\n")
    assert commit(agent).returncode == 0


def test_lines_the_runtime_wrote_are_clean(agent: Path):
    from git_gasp.runtime.state import AgentState
    with AgentState.open(agent, "w") as st:
        st.record_goal(" ".join(TOKENS.values()))
    assert [r for r in _staged(agent) if r.rule == "secret"] == []


def test_added_lines_are_the_tail_or_the_lines_no_parent_has():
    assert added_lines([b"a\nb\n"], b"a\nb\nc\n") == (3, b"c\n")
    assert added_lines([b"a\nb\n"], b"b\nz\na\n") == [(2, b"z")]
    assert added_lines([], b"x\n") == (1, b"x\n")


def test_the_guard_and_the_scanner_name_one_allowlist():
    from git_gasp.guard import secrets_rule
    from git_gasp.redact.scan import ALLOWLIST_REL
    assert secrets_rule._ALLOW == ALLOWLIST_REL.encode()
