"""`git gasp install-hooks`: hook file, chaining, idempotence, upgrades, hook managers, init."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
import yaml

from git_gasp.githooks import install as inst
from tests.testing.events import goal_pair
from tests.testing.paths import REPO_ROOT
from tests.testing.run import gasp, git, out

pytestmark = pytest.mark.slow  # the CLI and real commits per hook set-up

LOG = "state/events.jsonl"
FOREIGN = b"#!/bin/sh\necho foreign-ran >> \"$(git rev-parse --git-dir)/foreign.log\"\n"


@pytest.fixture
def repo(tmp_path) -> Path:
    """A plain repo with one commit and no hooks of ours."""
    r = tmp_path / "r"
    r.mkdir()
    git(r, "init", "-q")
    (r / "README").write_text("hi\n")
    git(r, "add", "README")
    git(r, "commit", "-q", "-m", "readme")
    return r


def hook_of(r: Path) -> Path:
    return r / ".git" / "hooks" / "pre-commit"


def ok(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode == 0, out(proc)
    return out(proc)


def try_commit(r: Path, msg: str = "c") -> subprocess.CompletedProcess:
    return subprocess.run(["git", "commit", "-q", "--allow-empty", "-m", msg], cwd=r,
                          capture_output=True)


def test_hook_file_is_sh_lf_executable_and_versioned(repo):
    ok(gasp(repo, "install-hooks"))
    data = hook_of(repo).read_bytes()
    assert data.startswith(b"#!/bin/sh\n")
    assert b"\r" not in data
    assert os.stat(hook_of(repo)).st_mode & 0o111 == 0o111
    assert inst.hook_version(data) == inst.template_version()
    assert b"-m git_gasp.cli.main hook pre-commit" in data
    assert git(repo, "config", "--get", "merge.gasp.driver").strip().endswith(
        "merge-driver --ancestor %O --current %A --other %B --marker-size %L --path %P")
    assert git(repo, "config", "--get", "merge.gasp.name").strip()
    ok(try_commit(repo))  # our hook runs (no agent here: nothing to guard)


def test_gitattributes_lines_match_the_append_only_paths(repo):
    ok(gasp(repo, "install-hooks"))
    attrs = (repo / ".gitattributes").read_text()
    assert "state/events.jsonl merge=gasp" in attrs
    assert "**/facts.jsonl merge=gasp" in attrs and "**/JOURNAL.md merge=gasp" in attrs
    for path in (LOG, "facts.jsonl", "memory/facts.jsonl", "JOURNAL.md", "journal/JOURNAL.md"):
        assert git(repo, "check-attr", "merge", "--", path).strip().endswith("merge: gasp"), path
    for path in ("x/state/events.jsonl", "state/other.jsonl", "README"):
        assert "merge: gasp" not in git(repo, "check-attr", "merge", "--", path), path


def test_install_twice_is_idempotent(repo):
    ok(gasp(repo, "install-hooks"))
    first = (hook_of(repo).read_bytes(), (repo / ".gitattributes").read_bytes(),
             (repo / ".git" / "config").read_bytes())
    again = ok(gasp(repo, "install-hooks"))
    assert "already installed" in again
    assert first == (hook_of(repo).read_bytes(), (repo / ".gitattributes").read_bytes(),
                     (repo / ".git" / "config").read_bytes())
    assert not (hook_of(repo).parent / "pre-commit.legacy").exists()


def test_foreign_hook_is_chained_and_restored(repo):
    hook_of(repo).parent.mkdir(exist_ok=True)
    hook_of(repo).write_bytes(FOREIGN)
    os.chmod(hook_of(repo), 0o755)
    text = ok(gasp(repo, "install-hooks"))
    assert "pre-commit.legacy" in text
    assert (hook_of(repo).parent / "pre-commit.legacy").read_bytes() == FOREIGN
    ok(try_commit(repo))
    assert (repo / ".git" / "foreign.log").read_text() == "foreign-ran\n"
    ok(gasp(repo, "install-hooks"))  # idempotent with a legacy hook too
    ok(try_commit(repo))
    assert (repo / ".git" / "foreign.log").read_text().count("foreign-ran") == 2
    ok(gasp(repo, "install-hooks", "--uninstall"))
    assert hook_of(repo).read_bytes() == FOREIGN
    assert os.access(hook_of(repo), os.X_OK)
    assert not (hook_of(repo).parent / "pre-commit.legacy").exists()
    assert git(repo, "config", "--get", "merge.gasp.driver", check=False) == ""


def test_a_failing_foreign_hook_still_stops_the_commit(repo):
    hook_of(repo).parent.mkdir(exist_ok=True)
    hook_of(repo).write_bytes(b"#!/bin/sh\necho nope >&2\nexit 3\n")
    os.chmod(hook_of(repo), 0o755)
    ok(gasp(repo, "install-hooks"))
    proc = try_commit(repo)
    assert proc.returncode != 0 and "nope" in out(proc)


def test_refuses_when_a_foreign_hook_and_a_legacy_both_exist(repo):
    hooks = hook_of(repo).parent
    hooks.mkdir(exist_ok=True)
    hook_of(repo).write_bytes(FOREIGN)
    (hooks / "pre-commit.legacy").write_bytes(b"#!/bin/sh\n")
    proc = gasp(repo, "install-hooks")
    assert proc.returncode == 1 and "nothing was changed" in out(proc)
    assert hook_of(repo).read_bytes() == FOREIGN


def test_upgrade_replaces_an_older_version(repo):
    ok(gasp(repo, "install-hooks"))
    old = hook_of(repo).read_bytes().replace(inst.template_version().encode(), b"0ld0ld")
    hook_of(repo).write_bytes(old)
    assert "upgraded" in ok(gasp(repo, "install-hooks"))
    assert inst.hook_version(hook_of(repo).read_bytes()) == inst.template_version()
    assert not (hook_of(repo).parent / "pre-commit.legacy").exists()


def test_hook_fails_loudly_when_neither_interpreter_nor_git_gasp_exists(repo, tmp_path):
    ok(gasp(repo, "install-hooks"))
    hook_of(repo).write_bytes(inst.render(python=str(tmp_path / "gone" / "python")))
    env = dict(os.environ, PATH="/usr/bin:/bin")
    assert subprocess.run(["sh", "-c", "command -v git-gasp"], env=env).returncode != 0
    proc = subprocess.run(["git", "commit", "-q", "--allow-empty", "-m", "x"], cwd=repo,
                          capture_output=True, env=env)
    assert proc.returncode == 1
    assert "cannot run the GASP guard" in out(proc) and "hint:" in out(proc)


def test_hook_falls_back_to_git_gasp_on_path(repo, tmp_path):
    ok(gasp(repo, "install-hooks"))
    hook_of(repo).write_bytes(inst.render(python=str(tmp_path / "gone" / "python")))
    ok(try_commit(repo))  # the hermetic PATH has the venv's git-gasp


def test_husky_repo_gets_the_line_and_nothing_overwritten(repo):
    husky = repo / ".husky"
    (husky / "_").mkdir(parents=True)
    (husky / "pre-commit").write_bytes(b"npm test\n")
    (husky / "_" / "pre-commit").write_bytes(b"#!/bin/sh\n. \"$(dirname \"$0\")/h\"\n")
    git(repo, "config", "core.hooksPath", ".husky/_")
    text = ok(gasp(repo, "install-hooks"))
    assert "husky" in text and ".husky/pre-commit" in text and "git gasp hook pre-commit" in text
    assert (husky / "pre-commit").read_bytes() == b"npm test\n"
    assert (husky / "_" / "pre-commit").read_bytes().startswith(b"#!/bin/sh\n. ")
    assert not (husky / "_" / "pre-commit.legacy").exists()
    assert git(repo, "config", "--get", "merge.gasp.driver").strip()  # the driver still is ours


def test_pre_commit_framework_repo_gets_a_snippet_and_nothing_overwritten(repo):
    (repo / ".pre-commit-config.yaml").write_text("repos: []\n")
    generated = b"#!/usr/bin/env bash\n# File generated by pre-commit: https://pre-commit.com\n"
    hook_of(repo).parent.mkdir(exist_ok=True)
    hook_of(repo).write_bytes(generated)
    text = ok(gasp(repo, "install-hooks"))
    assert "pre-commit manages" in text and "id: gasp-guard" in text
    assert hook_of(repo).read_bytes() == generated
    snippet = text.split("Add the GASP guard to .pre-commit-config.yaml:", 1)[1]
    config = yaml.safe_load(snippet.split("\n\n")[1])
    assert config["default_install_hook_types"] == ["pre-commit", "pre-merge-commit"]
    assert [(h["id"], h["entry"]) for h in config["repos"][0]["hooks"]] == [
        ("gasp-guard", "git-gasp hook pre-commit"),
        ("gasp-merge-guard", "git-gasp hook pre-merge-commit")]
    # --force installs anyway, chaining the framework's hook.
    ok(gasp(repo, "install-hooks", "--force"))
    assert (hook_of(repo).parent / "pre-commit.legacy").read_bytes() == generated


def test_lefthook_repo_gets_a_snippet(repo):
    (repo / "lefthook.yml").write_text("pre-push:\n  commands: {}\n")
    text = ok(gasp(repo, "install-hooks"))
    assert "lefthook" in text and "gasp-guard" in text and "run: git gasp hook pre-commit" in text
    assert not hook_of(repo).exists()


def test_shipped_pre_commit_hooks_yaml():
    hooks = yaml.safe_load((REPO_ROOT / ".pre-commit-hooks.yaml").read_text())
    (guard,) = [h for h in hooks if h["id"] == "gasp-guard"]
    assert guard["entry"] == "git-gasp hook pre-commit"
    assert guard["pass_filenames"] is False and guard["always_run"] is True


def test_python_dash_m_runs_the_cli(tmp_path):
    import sys

    proc = subprocess.run([sys.executable, "-m", "git_gasp.cli.main", "--version"],
                          capture_output=True, cwd=tmp_path)
    assert proc.returncode == 0 and b"git-gasp" in proc.stdout


def test_init_installs_hooks_and_driver_and_commits_gitattributes(tmp_path):
    ok(gasp(tmp_path, "init", "agent", "--agent-id", "tester"))
    agent = tmp_path / "agent"
    assert inst.hook_version(hook_of(agent).read_bytes()) == inst.template_version()
    assert git(agent, "config", "--get", "merge.gasp.driver").strip()
    assert ".gitattributes" in git(agent, "show", "--name-only", "--format=", "HEAD").split()
    assert git(agent, "status", "--porcelain") == ""
    ok(gasp(agent, "check"))
    ok(gasp(agent, "doctor"))
    with open(agent / LOG, "ab") as f:
        f.write(goal_pair(1))
    git(agent, "add", LOG)
    ok(try_commit(agent))


def test_init_rolls_back_hooks_and_config_when_it_fails(tmp_path):
    r = tmp_path / "r"
    r.mkdir()
    git(r, "init", "-q")
    hooks = r / ".git" / "hooks"
    hooks.mkdir(exist_ok=True)
    (hooks / "pre-commit").write_bytes(FOREIGN)
    (hooks / "pre-commit.legacy").write_bytes(FOREIGN)
    proc = gasp(r, "init", ".", "--agent-id", "x")
    assert proc.returncode == 1 and "nothing was changed" in out(proc)
    assert not (r / "AGENT.md").exists() and not (r / ".gitattributes").exists()
    assert (hooks / "pre-commit").read_bytes() == FOREIGN
    assert git(r, "config", "--get", "merge.gasp.driver", check=False) == ""


def merge_hook_of(r: Path) -> Path:
    return r / ".git" / "hooks" / "pre-merge-commit"


def test_pre_merge_commit_hook_is_installed_like_pre_commit(repo):
    ok(gasp(repo, "install-hooks"))
    data = merge_hook_of(repo).read_bytes()
    assert data.startswith(b"#!/bin/sh\n") and b"\r" not in data
    assert os.stat(merge_hook_of(repo)).st_mode & 0o111 == 0o111
    assert inst.hook_version(data) == inst.template_version()
    assert b"-m git_gasp.cli.main hook pre-merge-commit" in data
    assert b"pre-merge-commit.legacy" in data and b"pre-commit.legacy" not in data.replace(
        b"pre-merge-commit.legacy", b"")
    assert "already installed" in ok(gasp(repo, "install-hooks"))
    assert merge_hook_of(repo).read_bytes() == data


def test_foreign_pre_merge_commit_hook_is_chained_and_restored(repo):
    merge_hook_of(repo).parent.mkdir(exist_ok=True)
    foreign = FOREIGN.replace(b"foreign-ran", b"foreign-merge-ran")
    merge_hook_of(repo).write_bytes(foreign)
    os.chmod(merge_hook_of(repo), 0o755)
    text = ok(gasp(repo, "install-hooks"))
    assert "pre-merge-commit.legacy" in text
    legacy = merge_hook_of(repo).parent / "pre-merge-commit.legacy"
    assert legacy.read_bytes() == foreign
    git(repo, "checkout", "-q", "-b", "side")
    ok(try_commit(repo, "side"))
    git(repo, "checkout", "-q", "-")
    ok(try_commit(repo, "main"))
    ok(subprocess.run(["git", "merge", "-q", "--no-edit", "side"], cwd=repo,
                      capture_output=True))
    assert (repo / ".git" / "foreign.log").read_text() == "foreign-merge-ran\n"
    ok(gasp(repo, "install-hooks", "--uninstall"))
    assert merge_hook_of(repo).read_bytes() == foreign and not legacy.exists()
    assert not hook_of(repo).exists()


def test_upgrade_replaces_an_old_pre_commit_only_install(repo):
    ok(gasp(repo, "install-hooks"))
    merge_hook_of(repo).unlink()  # as installed before the merge hook existed
    old = hook_of(repo).read_bytes().replace(inst.template_version().encode(), b"0ld0ld")
    hook_of(repo).write_bytes(old)
    text = ok(gasp(repo, "install-hooks"))
    assert "pre-commit hook upgraded" in text and "installed the pre-merge-commit hook" in text
    for hook in (hook_of(repo), merge_hook_of(repo)):
        assert inst.hook_version(hook.read_bytes()) == inst.template_version()


def test_gitattributes_is_replaced_atomically_keeping_its_mode(repo, monkeypatch):
    """Written to a temporary file then renamed: a failed write leaves the old file whole."""
    attrs = repo / ".gitattributes"
    attrs.write_bytes(b"*.png binary\n")
    os.chmod(attrs, 0o640)
    writes = []
    real_replace = os.replace
    monkeypatch.setattr(Path, "write_bytes", lambda self, data: writes.append(self))

    def failing_replace(src, dst):
        if Path(dst).name == ".gitattributes":
            raise OSError(28, "No space left on device")
        real_replace(src, dst)

    monkeypatch.setattr(inst.os, "replace", failing_replace)
    with pytest.raises(inst.GaspError, match="cannot write"):
        inst.install(repo)
    assert writes == []  # never written in place
    assert attrs.read_bytes() == b"*.png binary\n"
    assert sorted(p.name for p in repo.iterdir()) == [".git", ".gitattributes", "README"]
    monkeypatch.setattr(inst.os, "replace", real_replace)
    inst.install(repo)
    assert attrs.read_bytes().startswith(b"*.png binary\n") and b"merge=gasp" in attrs.read_bytes()
    assert os.stat(attrs).st_mode & 0o777 == 0o640


def test_manager_snippets_spell_the_hook_command_from_one_place():
    from git_gasp.githooks import managers

    assert managers.GUARD_COMMAND == managers.guard_command("pre-commit")
    assert managers.MERGE_GUARD_COMMAND == managers.guard_command("pre-merge-commit")
