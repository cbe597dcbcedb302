"""The pre-commit guard runs check 6's identity rule on a commit that stages identity/
or AGENT.md: a commit that would break the identity hash is refused with the
`identity amend` hint, and `identity amend` (which commits the edit, the new hash and
the decision together) passes."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.testing.run import gasp, git, out

RULE = "check 6, identity hash"


def commit(repo: Path, *paths: str) -> subprocess.CompletedProcess:
    git(repo, "add", "--", *paths)
    return subprocess.run(["git", "commit", "-q", "-m", "c"], cwd=repo, capture_output=True)


def refused(proc: subprocess.CompletedProcess, *needles: str) -> str:
    text = out(proc)
    assert proc.returncode == 1, text
    assert "commit refused" in text and RULE in text and "identity amend" in text, text
    for needle in needles:
        assert needle in text, text
    return text


def test_an_identity_edit_without_its_hash_is_refused(agent):
    (agent / "identity" / "IDENTITY.md").write_text("I am someone else now.\n")
    refused(commit(agent, "identity/IDENTITY.md"), "AGENT.md", "hash to")
    assert gasp(agent, "check").returncode == 1  # what the guard keeps out of history


def test_a_new_identity_file_is_refused_too(agent):
    (agent / "identity" / "EXTRA.md").write_text("more rules\n")
    refused(commit(agent, "identity/EXTRA.md"))


def test_dropping_the_hash_from_agent_md_is_refused(agent):
    manifest = agent / "AGENT.md"
    manifest.write_text("".join(ln for ln in manifest.read_text().splitlines(keepends=True)
                                if "identity_hash" not in ln))
    refused(commit(agent, "AGENT.md"), "declares no identity_hash")


def test_identity_amend_commits_the_edit_and_passes(agent):
    new = agent.parent / "new-identity.md"
    new.write_text("A better constitution.\n")
    proc = gasp(agent, "identity", "amend", "--approved-by", "Jane", "--reason", "clearer",
                "--set", f"identity/IDENTITY.md={new}")
    assert proc.returncode == 0, out(proc)
    assert git(agent, "status", "--porcelain") == ""
    assert gasp(agent, "check").returncode == 0


def test_an_edit_with_the_right_hash_passes(agent):
    (agent / "identity" / "IDENTITY.md").write_text("Reworded.\n")
    digest = out(gasp(agent, "identity", "hash")).strip().split()[-1]
    manifest = agent / "AGENT.md"
    manifest.write_text("".join(f"identity_hash: {digest}\n" if ln.startswith("identity_hash")
                                else ln for ln in manifest.read_text().splitlines(keepends=True)))
    proc = commit(agent, "identity/IDENTITY.md", "AGENT.md")
    assert proc.returncode == 0, out(proc)
