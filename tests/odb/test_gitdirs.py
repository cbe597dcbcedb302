"""`odb.gitdirs.locate` opens the repository git would: its work tree top, git dir and
common dir are git's, in a hook's environment too, and where config moves the work
tree (``core.worktree``) or makes it bare."""

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


def test_config_that_moves_the_work_tree_or_makes_it_bare_is_read_by_git(repo, tmp_path):
    git(repo, "config", "core.worktree", str(tmp_path))
    assert dirs(repo / "sub") == git_says(repo / "sub")
    assert dirs(repo / "sub")[0] == str(tmp_path.resolve())
    git(repo, "config", "core.worktree", str(tmp_path / "elsewhere"))
    assert dirs(repo / "sub") is None  # git: outside the work tree
    git(repo, "config", "--unset", "core.worktree")
    assert dirs(repo / "sub") == git_says(repo / "sub")
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


def test_open_repo_gives_the_one_type_for_every_layout(repo, tmp_path, monkeypatch):
    from git_gasp.base.errors import NotAGitRepo
    from git_gasp.odb.gitdirs import GitDirs
    from git_gasp.odb.repo import open_repo

    plain, prefix = open_repo(repo / "sub")
    assert isinstance(plain, GitDirs) and prefix == b"sub"
    assert (plain.path, plain.controldir(), plain.commondir()) == git_says(repo / "sub")
    assert plain.head_commit() == git(repo, "rev-parse", "HEAD").strip().encode()
    assert b"sub/f" in plain.open_index()
    plain.close()
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(tmp_path / "bare.git"))
    with pytest.raises(NotAGitRepo):
        open_repo(tmp_path / "bare.git")
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "deep").mkdir(parents=True)
    git(repo, "config", "core.worktree", str(elsewhere))  # config moves the work tree
    with pytest.raises(NotAGitRepo):
        open_repo(repo / "sub")  # no longer in the work tree, as git says
    git(repo, "config", "core.worktree", str(tmp_path))
    wide, prefix = open_repo(repo / "sub")
    assert wide.path == str(tmp_path.resolve()) and prefix == b"repo/sub"
    wide.close()
    git(repo, "config", "core.worktree", str(elsewhere))
    monkeypatch.chdir(elsewhere)
    monkeypatch.setenv("GIT_DIR", str(repo / ".git"))
    moved, prefix = open_repo(elsewhere / "deep")
    assert isinstance(moved, GitDirs) and prefix == b"deep"
    assert moved.path == str(elsewhere.resolve()) == git_says(elsewhere / "deep")[0]
    moved.close()
