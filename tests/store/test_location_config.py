"""The repository's config as `store.location.configured` reads it is git's (includes
followed, quoting, names' case, subsections, the worktree scope; the global scope not
the repository's), never a guess from the config file's words."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from git_gasp.base.gitdir import discover
from git_gasp.store import location
from git_gasp.store.location import _may_set, configured
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


_PIECES = ["[gasp]\n", "\tstate = ../s\n", "\tState=x\n", "[GASP] STATE = y\n", "[gasp]state\n",
           '[gasp "x"]\n', "\tstateBranch = b\n", "\tname = agent state\n", "\tstatex = 1\n",
           "# state = z\n", "\tother = a \\\n", "state = w\n", "\r\n", "[core]\n\tbare = false\n",
           '[merge "gasp"]\n\tname = GASP union merge for append-only agent state\n']


@settings(max_examples=120, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@pytest.mark.slow  # over half a second: out of the fast loop
@given(st.lists(st.sampled_from(_PIECES), max_size=6))
def test_git_is_skipped_only_when_it_would_find_no_value(repo, pieces):
    """Whatever value git reads for gasp.state or gasp.stateBranch, `_may_set` sends the
    reading to git; a config with neither key starts no git."""
    text = "".join(pieces).encode()
    (repo / ".git" / "config").write_bytes(text)
    proc = subprocess.run(["git", "config", "-f", str(repo / ".git" / "config"),
                           "--get-regexp", r"^gasp\.(state|statebranch)$"],
                          capture_output=True, check=False)
    found = discover(repo)
    if proc.returncode != 1:  # set, or git refuses the file
        assert found is None or _may_set(found, ("state", "stateBranch"))


def test_a_config_without_the_keys_starts_no_git(repo, monkeypatch):
    git(repo, "config", "merge.gasp.name", "GASP union merge for append-only agent state")

    def no_git(*args, **kw):
        raise AssertionError("git was run")

    monkeypatch.setattr(location.git, "run", no_git)
    assert configured(repo) is None
