"""`base.gitdir.discover` against real git: for each layout, from several starting
directories, the git dir and common dir it finds are the ones ``git rev-parse
--absolute-git-dir --git-common-dir`` prints (or both say there is none)."""

from __future__ import annotations

import contextlib
import os
import subprocess
from pathlib import Path
from unittest import mock

import pytest

from git_gasp.base.gitdir import discover
from tests.testing.run import commit_all, git


def rev_parse(start: Path, env: dict[str, str] | None = None) -> tuple[str, str, str | None] | None:
    """(git dir, common dir, top or None) as real git says from `start`, links resolved."""
    full = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    full.update(env or {})
    proc = subprocess.run(["git", "rev-parse", "--absolute-git-dir", "--git-common-dir",
                           "--is-bare-repository", "--is-inside-git-dir"],
                          cwd=start, env=full, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        return None
    gd, common, bare, inside = proc.stdout.splitlines()
    top = None
    if bare == "false" and inside == "false":
        top = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=start, env=full,
                             capture_output=True, text=True, check=True).stdout.strip()
        top = os.path.realpath(top)
    return (os.path.realpath(gd), os.path.realpath(os.path.join(start, common)), top)


def found(start: Path, env: dict[str, str] | None = None) -> tuple[str, str, str | None] | None:
    # the environment is a process's, its cwd counts
    with contextlib.chdir(start), mock.patch.dict(os.environ, env or {}):
        d = discover(start, inherit_git_env=env is not None)
    return None if d is None else (d.path, d.common, d.top)


def same(start: Path, env: dict[str, str] | None = None) -> tuple[str, str, str | None] | None:
    expected = rev_parse(start, env)
    assert found(start, env) == expected, start
    return expected


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "a" / "b").mkdir(parents=True)
    git(tmp_path, "init", "-q", str(root))
    (root / "a" / "f").write_text("x\n")
    commit_all(root, "one")
    return root


def test_work_tree_from_its_top_a_subdirectory_and_inside_the_git_dir(repo):
    assert same(repo)[2] == str(repo.resolve())
    assert same(repo / "a" / "b")[0] == str((repo / ".git").resolve())
    assert same(repo / ".git")[2] is None
    assert same(repo / ".git" / "objects")[2] is None


def test_linked_worktree_has_its_own_git_dir_and_the_shared_common_dir(repo, tmp_path):
    git(repo, "worktree", "add", "-q", str(tmp_path / "wt"))
    (tmp_path / "wt" / "a" / "c").mkdir()
    gd, common, top = same(tmp_path / "wt" / "a" / "c")
    assert gd != common == str((repo / ".git").resolve())
    assert top == str((tmp_path / "wt").resolve())
    same(Path(gd))


def test_submodule_style_gitfile_relative_to_the_file(repo, tmp_path):
    outer = tmp_path / "outer"
    git(tmp_path, "init", "-q", str(outer))
    git(outer, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(repo), "sub")
    assert (outer / "sub" / ".git").is_file()
    gd, common, top = same(outer / "sub" / "a")
    assert gd == common == str((outer / ".git" / "modules" / "sub").resolve())
    assert top == str((outer / "sub").resolve())


def test_bare_repository_and_a_start_below_it(repo, tmp_path):
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(tmp_path / "bare.git"))
    assert same(tmp_path / "bare.git")[2] is None
    same(tmp_path / "bare.git" / "refs")


def test_git_dir_from_the_environment_with_and_without_a_work_tree(repo, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    gd = str(repo / ".git")
    assert same(elsewhere, {"GIT_DIR": gd})[2] == str(elsewhere.resolve())
    assert same(elsewhere, {"GIT_DIR": gd, "GIT_WORK_TREE": str(repo)})[2] == \
        str(repo.resolve())
    assert same(repo / "a", {"GIT_DIR": "../.git"})[0] == str((repo / ".git").resolve())
    assert same(elsewhere, {"GIT_DIR": str(elsewhere)}) is None  # not a git dir
    with mock.patch.dict(os.environ, {"GIT_DIR": gd}):
        assert discover(elsewhere) is None  # not inherited: GIT_DIR is not read


def test_symlinked_dot_git(repo, tmp_path):
    moved = tmp_path / "store.git"
    (repo / ".git").rename(moved)
    (repo / ".git").symlink_to(moved)
    gd, _, top = same(repo / "a")
    assert gd == str(moved.resolve()) and top == str(repo.resolve())


def test_not_a_repository_a_bad_gitfile_and_a_ceiling(repo, tmp_path):
    plain = tmp_path / "plain" / "x"
    plain.mkdir(parents=True)
    assert same(plain) is None
    broken = tmp_path / "broken"
    (broken / "d").mkdir(parents=True)
    (broken / ".git").write_text("gitdir: nowhere\n")
    assert same(broken / "d") is None
    (broken / ".git").write_text("not a gitfile\n")
    assert same(broken / "d") is None
    assert same(repo / "a", {"GIT_CEILING_DIRECTORIES": str(repo)}) is None
    assert same(repo / "a" / "b", {"GIT_CEILING_DIRECTORIES": str(repo / "a")}) is None
    assert same(repo, {"GIT_CEILING_DIRECTORIES": str(repo)}) is not None


def test_an_invalid_head_is_not_a_git_dir(repo):
    (repo / ".git" / "HEAD").write_text("garbage\n")
    assert same(repo / "a") is None
