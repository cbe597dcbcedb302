"""Every command that needs an agent's state gives the same one line outside one
(exit 2, as git does outside a repository) and writes nothing there; a mistyped
command gets git's "did you mean"."""

from __future__ import annotations

import pytest

from tests.testing.run import gasp, git

pytestmark = pytest.mark.slow  # one CLI run per command

NEEDS_STATE = [
    ("check",), ("fold",), ("log",), ("status",), ("snapshot",), ("sync",),
    ("lineage", "goal_x"), ("diff", "a", "b"), ("memory", "list"), ("journal",),
    ("run", "status"), ("record", "goal", "--title", "x"), ("lease", "status"),
    ("lease", "release"), ("identity", "verify"), ("commit-run",), ("recovery", "list"),
    ("export", "otel", "--all"), ("fork", "goal_x"), ("mcp",), ("stats",),
    ("report", "HEAD~1..HEAD"),
]  # not install-hooks and doctor: hooks belong to any git work tree
MESSAGE = "git gasp: error: not an agent repository: no AGENT.md in "


@pytest.mark.parametrize("where", ["plain directory", "git repository", "subdirectory"])
def test_one_line_outside_an_agent_repository_and_nothing_written(tmp_path, where):
    place = tmp_path / "place"
    place.mkdir()
    if where != "plain directory":
        git(place, "init", "-q")
    if where == "subdirectory":
        place = place / "src" / "deep"
        place.mkdir(parents=True)
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    for args in NEEDS_STATE:
        proc = gasp(place, *args)
        err = proc.stderr.decode()
        assert proc.returncode == 2, (args, err)
        assert err.startswith(MESSAGE) and err.count("\n") == 1, (args, err)
        assert "git gasp init --branch" in err and proc.stdout == b"", args
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before


def test_a_path_names_the_agent_it_is_in_or_is_refused(agent, tmp_path):
    (agent / "src").mkdir()
    inside = gasp(agent / "src", "check", ".")
    assert inside.returncode == 0, inside.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    proc = gasp(agent, "check", str(empty))
    assert proc.returncode == 2 and proc.stderr.decode().startswith(MESSAGE)


@pytest.mark.parametrize(("typed", "meant"), [("chek", "check"), ("sycn", "sync"),
                                              ("stauts", "status"), ("recvoery", "recovery"),
                                              ("stat", "stats"), ("statsu", "status")])
def test_a_mistyped_command_gets_did_you_mean(tmp_path, typed, meant):
    proc = gasp(tmp_path, typed)
    err = proc.stderr.decode()
    assert proc.returncode == 2 and err.count("\n") == 1
    assert f"no such command '{typed}'; did you mean '{meant}'?" in err


def test_typos_rank_as_gits_and_ties_are_all_named():
    from git_gasp.cli.group import similar

    assert similar("stauts", ["stats", "status"]) == ["status"]  # a swap costs nothing
    assert similar("lgo", ["log", "lfs"]) == ["log"]
    assert similar("tset", ["test", "tsez"]) == ["test"]
    assert similar("pul", ["pull", "push"]) == ["pull"]
    assert similar("pus", ["pull", "push"]) == ["push"]
    assert similar("sink", ["sync", "link"]) == ["link"]
    assert similar("ab", ["abc", "abd"]) == ["abc", "abd"]  # as close: both named


def test_a_word_like_no_command_gets_no_guess(tmp_path):
    proc = gasp(tmp_path, "xyzzy")
    err = proc.stderr.decode()
    assert proc.returncode == 2 and "no such command 'xyzzy'" in err and "did you" not in err
