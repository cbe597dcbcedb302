"""The server's secret rule (issue 49): a push whose commits add a secret to a state
file is refused naming the commit, file, line, detector and fingerprint (never the
secret); the allowlist committed in the state lets a fingerprint through."""

from __future__ import annotations

from pathlib import Path

import pytest

from git_gasp.redact.scan import fingerprint
from tests.guard.test_receive import commit, head_of, push, serve
from tests.testing.events import goal_pair
from tests.testing.planting import family_tokens
from tests.testing.run import git

pytestmark = pytest.mark.slow  # real pushes

TOKENS = family_tokens("receive")
FACT = '{{"id":"fact_1","text":"the token is {}"}}\n'


def test_a_crafted_push_adding_secrets_is_refused(agent: Path, tmp_path: Path):
    remote, rogue = serve(agent, tmp_path)
    before = head_of(remote)
    with open(rogue / "state/events.jsonl", "ab") as fh:
        fh.write(goal_pair(3))
    commit(rogue, "clean")
    (rogue / "memory").mkdir(exist_ok=True)
    with open(rogue / "memory/facts.jsonl", "a") as fh:
        fh.write(FACT.format(TOKENS["github_token"]))
    (rogue / "skills/k").mkdir(parents=True)
    (rogue / "skills/k/SKILL.md").write_text("x\n" + TOKENS["private_key"] + "\n")
    sha = commit(rogue, "leaky")
    proc = push(rogue, "origin", "main")
    err = proc.stderr.decode()
    assert proc.returncode != 0
    fp = fingerprint("github_token", TOKENS["github_token"])
    assert f"commit {sha[:12]} memory/facts.jsonl:1: github_token secret (fingerprint {fp})" \
        in err, err
    assert "skills/k/SKILL.md:2: private_key secret" in err
    assert TOKENS["github_token"] not in err and TOKENS["private_key"].split("\n")[1] not in err
    assert head_of(remote) == before
    allow = rogue / ".agent" / "secrets-allow"
    allow.write_text(f"{fp}  # a demo token\n")
    pem = fingerprint("private_key", TOKENS["private_key"])
    allow.write_text(allow.read_text() + f"{pem}\n")
    commit(rogue, "allow them")
    assert push(rogue, "origin", "main").returncode != 0  # the leaky commit allowed nothing
    git(rogue, "reset", "-q", "--hard", "HEAD~2")  # the allowlist in the commit itself
    (rogue / "memory").mkdir(exist_ok=True)
    (rogue / "memory/facts.jsonl").write_text(
        FACT.format(TOKENS["github_token"]))
    (rogue / ".agent" / "secrets-allow").write_text(f"{fp}  # a demo token\n")
    commit(rogue, "leaky but allowed")
    proc = push(rogue, "origin", "main")
    assert proc.returncode == 0, proc.stderr
