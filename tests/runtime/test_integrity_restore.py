"""restore writes TOML with a TOML library, is all-or-nothing, and sets the restored
clone up as `git gasp init` does (issue 10, defect 3)."""

from __future__ import annotations

from pathlib import Path

import pytest

from git_gasp.base.toml import tomllib
from tests.runtime.helpers import assert_conformant, one_error_line
from tests.testing.run import gasp, git, out

pytestmark = pytest.mark.slow



def restored(cwd: Path, *args: str) -> str:
    proc = gasp(cwd, "restore", *args)
    assert proc.returncode == 0, out(proc)
    return out(proc)


@pytest.mark.parametrize("model", ["modèle", 'a "quoted" \\ model', "x\\u00e8"])
def test_restore_binds_any_model_name_as_valid_toml(agent, tmp_path, model):
    config = agent / ".agent" / "config.toml"
    config.parent.mkdir(exist_ok=True)
    config.write_text('[policy]\nmax_runs = 3\n\n[executor]\nmodel = "old"\nother = 1\n')
    git(agent, "add", "-f", ".agent/config.toml")
    git(agent, "commit", "-q", "-m", "config")
    dest = tmp_path / "restored"
    text = restored(tmp_path, str(agent), str(dest), "--model", model)
    assert f"model: {model}" in text
    data = tomllib.loads((dest / ".agent/config.toml").read_text(encoding="utf-8"))
    assert data["executor"] == {"model": model, "other": 1}
    assert data["policy"] == {"max_runs": 3}


def test_restore_installs_the_hooks_and_merge_driver_like_init(agent, tmp_path):
    dest = tmp_path / "restored"
    restored(tmp_path, str(agent), str(dest))
    for hook in ("pre-commit", "pre-merge-commit"):
        theirs = (agent / ".git" / "hooks" / hook).read_bytes()
        ours = dest / ".git" / "hooks" / hook
        assert ours.read_bytes() == theirs, hook
        assert ours.stat().st_mode & 0o111
    for key in ("merge.gasp.driver", "merge.gasp.name"):
        assert git(dest, "config", "--get", key) == git(agent, "config", "--get", key), key
    assert_conformant(dest)
    # the guard is live in the restored clone: an in-place edit of the log is refused
    proc = gasp(dest, "record", "goal", "--title", "g")
    assert proc.returncode == 0, out(proc)
    git(dest, "add", "state/events.jsonl")
    git(dest, "commit", "-q", "-m", "goal")
    log = dest / "state/events.jsonl"
    log.write_bytes(log.read_bytes().replace(b'"title":"g"', b'"title":"h"', 1))
    git(dest, "add", "state/events.jsonl")
    proc = git(dest, "commit", "-q", "-m", "edit", check=False)
    assert git(dest, "status", "--porcelain").startswith("M "), proc


def leftovers(parent: Path, dest: Path) -> list[str]:
    return sorted(p.name for p in parent.iterdir() if p.name.startswith(f".{dest.name}"))


def test_a_failed_restore_leaves_nothing(agent, tmp_path):
    (agent / "identity/IDENTITY.md").write_text("tampered\n")
    git(agent, "commit", "-q", "--no-verify", "-am", "tamper")
    where = tmp_path / "out"
    where.mkdir()
    dest = where / "b"
    line = one_error_line(gasp(where, "restore", str(agent), str(dest)))
    assert "identity_hash" in line
    assert not dest.exists()
    assert leftovers(where, dest) == []


def test_a_restore_whose_model_cannot_be_bound_leaves_nothing(agent, tmp_path):
    config = agent / ".agent" / "config.toml"
    config.parent.mkdir(exist_ok=True)
    config.write_text("executor = 'not a table'\n")
    git(agent, "add", "-f", ".agent/config.toml")
    git(agent, "commit", "-q", "--no-verify", "-m", "config")
    where = tmp_path / "out"
    where.mkdir()
    dest = where / "c"
    line = one_error_line(gasp(where, "restore", str(agent), str(dest), "--model", "m"))
    assert "executor" in line, line
    assert not dest.exists()
    assert leftovers(where, dest) == []


def test_restore_into_an_existing_empty_directory(agent, tmp_path):
    dest = tmp_path / "empty"
    dest.mkdir()
    restored(tmp_path, str(agent), str(dest), "--model", "modèle")
    assert (dest / "AGENT.md").is_file()
    assert leftovers(tmp_path, dest) == []
