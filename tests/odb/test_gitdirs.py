"""`odb.gitdirs.locate` opens the repository git would, or defers (None): its work tree
top, git dir and common dir are git's, in a hook's environment too; a work tree that
config moves (``core.worktree``) or a bare repository is left to dulwich."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from git_gasp.odb.gitdirs import locate
from tests.testing.run import commit_all, git


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "sub").mkdir(parents=True)
    git(tmp_path, "init", "-q", str(root))
    (root / "sub" / "f").write_text("x\n")
    commit_all(root, "one")
    return root


def dirs(start: Path) -> tuple[str, str, str] | None:
    found = locate(str(start))
    return None if found is None else (found.path, found.controldir(), found.commondir())


def git_says(start: Path) -> tuple[str, str, str]:
    top, gd, common = git(start, "rev-parse", "--show-toplevel", "--absolute-git-dir",
                          "--path-format=absolute", "--git-common-dir").splitlines()
    return os.path.realpath(top), os.path.realpath(gd), os.path.realpath(common)


def test_a_work_tree_and_a_linked_worktree_as_git_finds_them(repo, tmp_path):
    assert dirs(repo / "sub") == git_says(repo / "sub")
    git(repo, "worktree", "add", "-q", str(tmp_path / "wt"))
    assert dirs(tmp_path / "wt" / "sub") == git_says(tmp_path / "wt" / "sub")
    assert dirs(repo / ".git") is None


def test_a_hook_environment_is_honoured(repo, tmp_path, monkeypatch):
    git(repo, "worktree", "add", "-q", str(tmp_path / "wt"))
    wt_git = git_says(tmp_path / "wt")[1]
    monkeypatch.chdir(tmp_path / "wt")
    monkeypatch.setenv("GIT_DIR", wt_git)  # as git sets it for a linked worktree's hooks
    assert dirs(tmp_path / "wt" / "sub") == git_says(tmp_path / "wt")  # git's cwd: the top
    assert dirs(repo) is None  # outside that work tree
    monkeypatch.setenv("GIT_OBJECT_DIRECTORY", str(repo / ".git" / "objects"))
    assert dirs(tmp_path / "wt") is None  # another object store: dulwich's to open


def test_config_that_moves_the_work_tree_or_makes_it_bare_is_left_to_dulwich(repo, tmp_path):
    git(repo, "config", "core.worktree", str(tmp_path))
    assert dirs(repo / "sub") is None
    git(repo, "config", "--unset", "core.worktree")
    assert dirs(repo / "sub") is not None
    git(repo, "config", "core.bare", "yes")
    assert dirs(repo / "sub") is None


def test_a_word_in_the_config_moves_nothing(repo):
    git(repo, "config", "branch.worktree-a.remote", "origin")
    git(repo, "config", "extensions.worktreeConfig", "true")
    assert dirs(repo / "sub") == git_says(repo / "sub")


def test_a_symlinked_dot_git(repo, tmp_path):
    (repo / ".git").rename(tmp_path / "moved.git")
    (repo / ".git").symlink_to(tmp_path / "moved.git")
    assert dirs(repo / "sub") == git_says(repo / "sub")


def test_a_config_git_wrote_is_not_asked_of_git_again(repo, monkeypatch):
    from git_gasp.odb import gitdirs

    def no_git(*args, **kw):
        raise AssertionError("git was run")

    monkeypatch.setattr(gitdirs.git, "run", no_git)
    assert dirs(repo / "sub") is not None
    git(repo, "config", "core.worktree", str(repo))
    with pytest.raises(AssertionError, match="git was run"):
        locate(str(repo / "sub"))
