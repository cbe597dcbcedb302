"""`local_config_sets` reads a clone's own config without git: whenever it says a key is
set, git agrees; on the forms git itself writes, it sees the key."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from git_gasp.odb.gitdirs import _odd_config, config_entries, local_config_sets
from tests.testing.run import git

CASES = [
    # (config text appended to the repo's config, what git config --get says is set)
    ('[merge "gasp"]\n\tdriver = git-gasp merge-driver %O %A %B\n', True),
    ('[merge "gasp"]\n\tname = x\n', False),
    ('[Merge "gasp"]\n\tDriver = x\n', True),  # section and key names ignore case
    ('[merge "GASP"]\n\tdriver = x\n', False),  # a subsection's name does not
    ('[merge "gasp"] driver = x\n', True),
    ('[merge.gasp]\n\tdriver = x\n', True),  # the old form (lower-cased subsection)
    ('[merge "gasp"]\n\t# driver = x\n\t; driver = y\n', False),
    ('[merge "gasp"]\n\tdriverx = x\n', False),
    ('[merge "other"]\n\tdriver = x\n[merge]\n\tdriver = y\n', False),
    ('[merge "gasp"]\n\tdriver\n', True),  # a bare key is set (to true)
    ('[merge "ga\\"sp"]\n\tdriver = x\n', False),
]


@pytest.mark.parametrize(("text", "git_says"), CASES)
def test_it_sees_what_git_sees_and_never_more(tmp_path: Path, text: str, git_says: bool) -> None:
    git(tmp_path, "init", "-q")
    with open(tmp_path / ".git" / "config", "a") as f:
        f.write(text)
    proc_value = git(tmp_path, "config", "--get", "merge.gasp.driver", check=False)
    assert (proc_value != "") == git_says
    assert local_config_sets(str(tmp_path), "merge", "gasp", "driver") is git_says


def test_what_git_config_writes_is_seen_also_from_a_subdirectory(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    (tmp_path / "agent").mkdir()
    assert not local_config_sets(str(tmp_path / "agent"), "merge", "gasp", "driver")
    git(tmp_path, "config", "merge.gasp.driver", "x y z")
    assert local_config_sets(str(tmp_path / "agent"), "merge", "gasp", "driver")


def test_a_key_set_only_in_the_global_config_is_left_to_git(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    git(tmp_path, "config", "--global", "merge.gasp.driver", "x")
    assert git(tmp_path, "config", "--get", "merge.gasp.driver").strip() == "x"
    assert not local_config_sets(str(tmp_path), "merge", "gasp", "driver")


def test_outside_a_repository_nothing_is_set(tmp_path: Path) -> None:
    assert not local_config_sets(str(tmp_path), "merge", "gasp", "driver")


_PIECES = [b"[core]\n", b"\tbare = false\n", b"\tBare = TRUE\n", b"bare=1\n",
           b"  bare\n=\non\n", b"\tworktree = ../w\n", b"WorkTree\n", b"[x]\n\tbarely = yes\n",
           b"\tbare = yesno\n", b"# bare = true\n", b"\r\n", b" ", b"bare = off\n",
           b"\tfilemode = true\n", b'[branch "worktree-a"]\n', b"[extensions]\n",
           b"\tworktreeConfig = true\n", b"[include]\n\tpath = other\n", b"\tbare\n"]


def _git_sees_odd(tmp_path: Path, text: bytes) -> bool | None:
    """What git reads from `text` as a config file: True when it sets core.worktree or a
    true core.bare; None when git refuses the file."""
    cfg = tmp_path / "cfg"
    cfg.write_bytes(text)
    proc = subprocess.run(["git", "config", "-f", str(cfg), "--includes", "--list"],
                          capture_output=True, cwd=tmp_path)
    if proc.returncode != 0:
        return None
    keys = dict(line.split("=", 1) if "=" in line else (line, "true")
                for line in proc.stdout.decode().splitlines())
    bare = keys.get("core.bare", "false").lower() in ("true", "yes", "on", "1")
    return "core.worktree" in keys or bare


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(_PIECES), max_size=6))
def test_odd_configs_are_never_missed(tmp_path: Path, pieces: list[bytes]) -> None:
    """Whatever git reads as a work tree or a bare repository, `_odd_config` sees (or
    defers to git); a plain config git reads as neither is not odd for a word in it."""
    text = b"".join(pieces)
    git_says = _git_sees_odd(tmp_path, text)
    if git_says is None or git_says:
        assert _odd_config(text)


def test_a_plain_config_is_not_odd():
    assert not _odd_config(b"[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n"
                           b"\tbare = false\n\tlogallrefupdates = true\n")
    assert _odd_config(b"[core]\n\tbare = true\n")
    assert _odd_config(b"[core]\n\tworktree = ../w\n")


@pytest.mark.parametrize("text", [
    b'[branch "worktree-x"]\n\tremote = origin\n',  # a branch named worktree-*
    b"[extensions]\n\tworktreeConfig = true\n",  # git sparse-checkout sets it
    b'[gasp]\n\tstate = ../worktrees/x\n',  # init --branch --worktree ~/worktrees/x
])
def test_the_word_worktree_is_not_a_work_tree(text: bytes) -> None:
    assert not _odd_config(b"[core]\n\tbare = false\n" + text)


def test_an_include_is_left_to_git() -> None:
    assert config_entries(b"[include]\n\tpath = x\n") is None
    assert config_entries(b'[includeIf "gitdir:~/"]\n\tpath = x\n') is None
    assert config_entries(b'[gasp]\n\tstate = "a b"  # c\n') == [(b"gasp", None, b"state",
                                                                     b"a b")]
