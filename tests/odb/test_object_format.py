"""A sha256 repository is refused with its reason, never half read.

The readers, saved indexes and short ids are sha1's: `init` refuses before it
writes, check 4 fails with one line naming the format, and the server hook refuses
the push saying why (it used to say "object … is unreadable").
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.testing.run import gasp, git

REASON = "git-gasp reads sha1 repositories only"


def _sha256_repo(path: Path, *, bare: bool = False) -> Path:
    subprocess.run(["git", "init", "-q", "--object-format=sha256", *(["--bare"] if bare else []),
                    str(path)], check=True)
    return path


def test_init_in_a_sha256_repository_refuses_and_writes_nothing(tmp_path):
    repo = _sha256_repo(tmp_path / "r")
    proc = gasp(repo, "init", ".")
    err = proc.stderr.decode()
    assert proc.returncode == 1, err
    assert REASON in err and "sha256" in err and len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in err
    assert sorted(p.name for p in repo.iterdir()) == [".git"]
    assert git(repo, "status", "--porcelain") == ""


def test_check_of_a_sha256_repository_fails_check_4_with_the_reason(tmp_path):
    repo = _sha256_repo(tmp_path / "r")
    (repo / "state").mkdir()
    (repo / "state" / "events.jsonl").write_bytes(b"")
    (repo / "AGENT.md").write_bytes(b"---\nspec_version: 0.1.0\n---\n")
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x")
    proc = gasp(repo, "check")
    out = proc.stdout.decode()
    assert proc.returncode == 1, out
    block = out.split("FAIL 4", 1)[1].split("\nok ", 1)[0]
    assert REASON in block and "sha256" in block, block
    assert "unreadable" not in block, block


def test_the_server_hook_refuses_a_sha256_push_saying_why(tmp_path):
    server = _sha256_repo(tmp_path / "srv.git", bare=True)
    assert gasp(tmp_path, "install-hooks", "--server", "--check", str(server)).returncode == 0
    client = _sha256_repo(tmp_path / "c")
    (client / "state").mkdir()
    (client / "state" / "events.jsonl").write_bytes(b"")
    git(client, "add", "-A")
    git(client, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x")
    proc = subprocess.run(["git", "push", str(server), "HEAD:refs/heads/main"], cwd=client,
                          capture_output=True)
    err = proc.stderr.decode()
    assert proc.returncode != 0, err
    assert REASON in err and "pre-receive hook declined" in err, err
    assert subprocess.run(["git", "rev-parse", "--verify", "-q", "refs/heads/main"], cwd=server,
                          capture_output=True).returncode != 0
