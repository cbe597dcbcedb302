"""`git gasp doctor`: each finding with its fix, exit 1 when something is broken."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from git_gasp.githooks import install as inst
from tests.testing.run import gasp, git, out

pytestmark = pytest.mark.slow  # keeps the fast loop under a minute

HOOK = Path(".git/hooks/pre-commit")


def doctor(agent: Path) -> tuple[int, str]:
    proc = gasp(agent, "doctor")
    return proc.returncode, out(proc)


def test_a_clean_repo_passes(agent):
    code, text = doctor(agent)
    assert code == 0, text
    assert "healthy" in text and "error" not in text


def test_missing_hook(agent):
    (agent / HOOK).unlink()
    code, text = doctor(agent)
    assert code == 1 and "no pre-commit hook" in text and "git gasp install-hooks" in text


def test_hook_not_executable(agent):
    os.chmod(agent / HOOK, 0o644)
    code, text = doctor(agent)
    assert code == 1 and "not executable" in text and "chmod +x" in text


def test_old_hook_version_is_a_warning(agent):
    hook = agent / HOOK
    hook.write_bytes(hook.read_bytes().replace(inst.template_version().encode(), b"0ld"))
    code, text = doctor(agent)
    assert code == 0 and "older GASP hook" in text and "upgrade" in text


def test_foreign_hook_without_the_guard(agent):
    (agent / HOOK).write_bytes(b"#!/bin/sh\nexit 0\n")
    code, text = doctor(agent)
    assert code == 1 and "does not run the guard" in text


def test_missing_merge_driver(agent):
    git(agent, "config", "--remove-section", "merge.gasp")
    code, text = doctor(agent)
    assert code == 1 and "no merge.gasp.driver" in text
    proc = gasp(agent, "check")
    assert proc.returncode == 0 and b"no merge.gasp.driver" in proc.stderr


def test_driver_pointing_at_nothing(agent, tmp_path):
    git(agent, "config", "merge.gasp.driver", f"{tmp_path}/gone/git-gasp merge-driver")
    code, text = doctor(agent)
    assert code == 1 and "does not exist" in text


def test_core_hooks_path_surprise(agent, tmp_path):
    git(agent, "config", "core.hooksPath", str(tmp_path / "elsewhere"))
    code, text = doctor(agent)
    assert code == 1
    assert "core.hooksPath" in text and "is never run" in text


def test_corrupt_lease(agent):
    (agent / ".agent" / "lease").write_text("{not json")
    code, text = doctor(agent)
    assert code == 1 and "corrupt" in text and "`git gasp lease release --force`" in text
    (agent / ".agent" / "lease").write_text(json.dumps({"worker_id": "w"}))
    code, text = doctor(agent)
    assert code == 1 and "corrupt" in text


def test_stale_lease_is_a_warning_and_a_live_one_is_fine(agent):
    lease = agent / ".agent" / "lease"
    lease.write_text(json.dumps({"worker_id": "w1", "pid": 42, "expires_at_ms": 1000}))
    code, text = doctor(agent)
    assert code == 0 and "stale" in text
    lease.write_text(json.dumps({"worker_id": "w1", "pid": 42, "expires_at_ms": 2**62}))
    code, text = doctor(agent)
    assert code == 0 and "held by worker w1" in text


def test_lease_and_head_must_be_gitignored(agent):
    (agent / ".gitignore").write_text("")
    code, text = doctor(agent)
    assert code == 1
    assert ".agent/lease is not gitignored" in text and ".agent/HEAD is not gitignored" in text


def test_outside_a_git_repo_is_one_line_error(tmp_path):
    proc = gasp(tmp_path, "doctor")
    assert proc.returncode != 0 and "Traceback" not in out(proc)


def test_missing_pre_merge_commit_hook(agent):
    (agent / ".git/hooks/pre-merge-commit").unlink()
    code, text = doctor(agent)
    assert code == 1 and "no pre-merge-commit hook" in text and "without a conflict" in text
    assert "git gasp install-hooks" in text
    assert gasp(agent, "install-hooks").returncode == 0
    assert doctor(agent)[0] == 0


def test_husky_without_the_merge_guard_is_a_warning(agent):
    husky = agent / ".husky"
    (husky / "_").mkdir(parents=True)
    (husky / "pre-commit").write_text("git gasp hook pre-commit\n")
    git(agent, "config", "core.hooksPath", ".husky/_")
    code, text = doctor(agent)
    assert "husky runs the GASP guard" in text
    assert "does not run the GASP guard as pre-merge-commit" in text
    assert ".husky/pre-merge-commit" in text
