"""`local_config_sets` reads a clone's own config without git: whenever it says a key is
set, git agrees; on the forms git itself writes, it sees the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from git_gasp.store.gitdirs import local_config_sets
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
