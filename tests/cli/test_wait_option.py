"""`--wait[=SECONDS]` on the writers: the value only ever attached with `=` (a bare
`--wait` is the default and never swallows the next word), on every command that takes
the lease, and nowhere else."""

from __future__ import annotations

import click
import pytest

from git_gasp.cli.group import cli
from git_gasp.cli.options import DEFAULT_WAIT_S, WaitOption, bare_wait

WRITERS = {("record", s) for s in ("goal", "task", "observation", "failure", "hypothesis",
                                   "patch", "eval", "decision", "frame", "tool-call",
                                   "model-call", "status")} | {
    ("run", "start"), ("run", "finish"), ("memory", "add"), ("memory", "supersede"),
    ("identity", "amend"), ("journal",), ("commit-run",), ("sync",), ("recovery", "apply"),
    ("import",), ("memory", "synthesize"), ("snapshot",)}
DEFAULT = f"--wait={DEFAULT_WAIT_S:g}"


def _leaves(cmd: click.Command, path: tuple[str, ...] = ()):
    if isinstance(cmd, click.Group):
        for name in cmd.list_commands(click.Context(cmd)):
            yield from _leaves(cmd.get_command(click.Context(cmd), name), (*path, name))
    else:
        yield path, cmd


def _command(*path: str) -> click.Command:
    cmd = cli
    for name in path:
        cmd = cmd.get_command(click.Context(cmd), name)
    return cmd


def test_exactly_the_commands_that_take_the_lease_have_it():
    have = {path for path, cmd in _leaves(cli)
            if any(isinstance(p, WaitOption) for p in cmd.params)}
    assert have == WRITERS


@pytest.mark.parametrize(("args", "expected"), [
    (["--wait"], [DEFAULT]),
    (["--wait=5"], ["--wait=5"]),
    (["--wait", "origin", "main"], [DEFAULT, "origin", "main"]),  # never the value
    (["--since", "--wait", "--wait"], ["--since", "--wait", DEFAULT]),  # another's value
    (["--", "--wait"], ["--", "--wait"]),
    (["--json", "--wait", "--rebase"], ["--json", DEFAULT, "--rebase"]),
])
def test_a_bare_wait_is_the_default_and_takes_no_word(args, expected):
    assert bare_wait(_command("sync"), args) == expected


def test_parsed_as_git_parses_an_optional_value():
    sync = _command("sync")
    ctx = sync.make_context("sync", ["--wait", "origin"])
    assert ctx.params["wait"] == DEFAULT_WAIT_S and ctx.params["remote"] == "origin"
    ctx = sync.make_context("sync", ["--wait=2.5"])
    assert ctx.params["wait"] == 2.5
    assert sync.make_context("sync", []).params["wait"] is None
    goal = _command("record", "goal")
    ctx = goal.make_context("goal", ["--title", "--wait"])
    assert ctx.params["title"] == "--wait" and ctx.params["wait"] is None
    with pytest.raises(click.BadParameter):
        sync.make_context("sync", ["--wait=-1"])


def test_help_shows_the_optional_value():
    text = _command("record", "goal").get_help(click.Context(_command("record", "goal")))
    assert "--wait[=SECONDS]" in text
