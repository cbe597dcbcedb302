"""The one git runner (git_gasp.base.git)."""

from __future__ import annotations

import subprocess

import pytest

from git_gasp.base import git
from git_gasp.base.errors import NotAGitRepo


@pytest.fixture
def repo(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path / "r")], check=True)
    return tmp_path / "r"


def test_an_inherited_git_dir_does_not_redirect_the_command(repo, tmp_path, monkeypatch):
    other = tmp_path / "other"
    subprocess.run(["git", "init", "-q", str(other)], check=True)
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    monkeypatch.setenv("GIT_INDEX_FILE", str(other / ".git" / "index"))
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", "'user.name'='Injected'")
    assert git.git_dir(repo) == repo / ".git"
    assert git.config_get(repo, "user.name") != "Injected"
    assert git.out(repo, "rev-parse", "--absolute-git-dir", inherit_git_env=True) == str(
        other / ".git")


def test_a_failure_names_the_command_and_gits_message(repo):
    with pytest.raises(git.GitError) as info:
        git.run(repo, "rev-parse", "--verify", "no-such-ref")
    err = info.value
    assert err.argv == ["rev-parse", "--verify", "no-such-ref"]
    assert err.returncode != 0 and "fatal" in err.stderr
    assert str(err).startswith("git rev-parse --verify no-such-ref failed: fatal:")
    assert "\n" not in str(err)


def test_helpers(repo, tmp_path):
    assert git.work_tree_top(repo / ".git" / "..") == repo
    assert git.common_dir(repo) == repo / ".git"
    assert git.git_path(repo, "hooks") == repo / ".git" / "hooks"
    git.config_set_local(repo, "gasp.test", "1")
    assert git.config_get(repo, "gasp.test") == "1"
    assert git.config_origin(repo, "gasp.test").startswith("file:")
    git.config_unset_local(repo, "gasp.test")
    assert git.config_get(repo, "gasp.test") is None
    assert git.resolve_commit(repo, "HEAD") is None
    assert git.resolve_commit(repo, "--output=/tmp/x") is None
    git.run(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q",
            "--allow-empty", "-m", "m")
    assert len(git.resolve_commit(repo, "HEAD")) == 40
    with pytest.raises(NotAGitRepo):
        git.work_tree_top(tmp_path)


def test_git_dir_and_common_dir_of_a_linked_worktree_or_none(repo, tmp_path):
    sub = repo / "a" / "b"
    sub.mkdir(parents=True)
    assert git.git_dir(sub) == git.common_dir(sub) == (repo / ".git").resolve()
    git.run(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q",
            "--allow-empty", "-m", "m")
    git.run(repo, "worktree", "add", "-q", str(tmp_path / "wt"))
    assert git.git_dir(tmp_path / "wt") == (repo / ".git" / "worktrees" / "wt").resolve()
    assert git.common_dir(tmp_path / "wt") == (repo / ".git").resolve()
    (tmp_path / "nowhere").mkdir()
    with pytest.raises(NotAGitRepo):
        git.git_dir(tmp_path / "nowhere")
