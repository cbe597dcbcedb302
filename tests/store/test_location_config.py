"""The repository's config as `store.location.configured` reads it is git's (includes
followed, quoting, names' case, subsections, the worktree scope; the global scope not
the repository's), never a guess from the config file's words."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from git_gasp.store.location import configured
from tests.testing.run import git


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    git(tmp_path, "init", "-q", str(root))
    return root


def state(repo: Path) -> str | None:
    conf = configured(repo)
    return None if conf is None else os.path.relpath(conf.path, repo / ".git")


@pytest.mark.parametrize(("text", "expected"), [
    ('[gasp]\n\tstate = "../a b"  # a comment\n', "../a b"),
    ('[GASP]\n\tSTATE = ../upper\n', "../upper"),
    ('[gasp]\n\tstate = ../one\n[gasp]\n\tstate = ../two\n', "../two"),  # the last wins
    ('[gasp "sub"]\n\tstate = ../no\n', None),  # a subsection is another section
    ('[gasp.state]\n\tx = y\n', None),
    ('[gasp]\n\tstate = ../cont\\\ninued\n', "../continued"),
    ('[gasp]\n\tstate = "../t\\tab"\n', "../t\tab"),
])
def test_values_as_git_reads_them(repo, text, expected):
    with open(repo / ".git" / "config", "a") as f:
        f.write(text)
    assert state(repo) == expected


def test_includes_are_followed_as_git_follows_them(repo, tmp_path):
    (tmp_path / "inc").write_text("[gasp]\n\tstate = ../included\n")
    git(repo, "config", "include.path", str(tmp_path / "inc"))
    assert state(repo) == "../included"
    (tmp_path / "inc2").write_text("[gasp]\n\tstate = ../conditional\n")
    git(repo, "config", f"includeIf.gitdir:{repo}/.git.path", str(tmp_path / "inc2"))
    assert state(repo) == "../conditional"


def test_the_worktree_scope_counts_and_the_global_one_does_not(repo, tmp_path):
    git(repo, "config", "--global", "gasp.state", "../global")
    assert state(repo) is None
    git(repo, "config", "extensions.worktreeConfig", "true")
    git(repo, "config", "--worktree", "gasp.state", "../per-worktree")
    assert state(repo) == "../per-worktree"


def test_outside_a_repository_there_is_none(tmp_path):
    assert configured(tmp_path) is None
