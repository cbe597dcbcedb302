"""`init --branch --worktree NAME` with a name git would read as syntax: a trailing
space (git writes the config value quoted, and it must be read back with it), glob
characters and a backslash (the `info/exclude` line must match that directory and
nothing else), a leading `#` or `!`. The state is found again, and the worktree stays
out of the project's `git status` and `git add -A`."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from git_gasp.base.ignore import pattern
from git_gasp.store.location import configured
from tests.testing.run import gasp, git, out

NAMES = ["st ", "agent[state]", "back\\slash", "star*", "q?", "#hash", "!bang", " lead",
         "two  spaces  "]


@pytest.fixture
def project(tmp_path):
    repo = tmp_path / "project"
    repo.mkdir()
    git(repo, "init", "-q")
    git(repo, "commit", "-q", "--allow-empty", "-m", "start")
    return repo


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_a_state_worktree_of_any_name_is_found_and_kept_out(project, name):
    proc = gasp(project, "init", "--branch", "--worktree", name)
    assert proc.returncode == 0, out(proc)
    assert (project / name / "AGENT.md").is_file()
    assert git(project, "status", "--porcelain", "--untracked-files=all") == ""
    assert git(project, "add", "-A", "--dry-run") == ""
    status = gasp(project, "status", "--json")
    assert status.returncode == 0, out(status)
    assert os.path.samefile(json.loads(status.stdout)["root"], project / name)
    goal = gasp(project, "record", "goal", "--title", "found")
    assert goal.returncode == 0, out(goal)
    assert b"found" in (project / name / "state/events.jsonl").read_bytes()


@pytest.mark.parametrize("value", ["../st ", " both ", 'q"uote', "back\\slash", "a\tb",
                                   "semi;colon", "hash#mark", "two  spaces"])
def test_config_values_read_back_exactly_as_git_reads_them(project, value):
    git(project, "config", "gasp.state", value)
    said = subprocess.run(["git", "config", "--get", "gasp.state"], cwd=project,
                          capture_output=True).stdout[:-1]
    assert said == value.encode()
    conf = configured(project)
    assert conf is not None and conf.path == os.path.normpath(os.path.join(conf.common, value))


@pytest.mark.parametrize("name", NAMES + ["ünï", "dir/sub[1]"])
def test_an_exclude_pattern_matches_that_path_and_nothing_else(project, name):
    siblings = {name, name + "x", name.strip() + "_", "agents", "a", "other"}
    for n in siblings:
        (project / n).parent.mkdir(parents=True, exist_ok=True)
        (project / n).write_text("x")
    exclude = project / ".git/info/exclude"
    exclude.parent.mkdir(exist_ok=True)  # no sample files here (hermetic)
    exclude.write_bytes(pattern(name) + b"\n")
    ignored = subprocess.run(["git", "check-ignore", "--stdin", "-z"], cwd=project,
                             input="\0".join(sorted(siblings)).encode() + b"\0",
                             capture_output=True).stdout.split(b"\0")
    assert [p for p in ignored if p] == [name.encode()]
