"""A plain `git gasp check [PATH] [FLAGS]` runs before click is imported
(`cli.main.check_main`): the fast path and the click command give the same output and
exit code, and the fast path takes exactly the click command's flags."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from git_gasp.cli.commands.check import check
from git_gasp.cli.commands.check_run import FLAGS, VALUED, fast_args
from tests.testing.run import git

FAST = [sys.executable, "-P", "-m", "git_gasp.cli.main"]
CLICK = [sys.executable, "-P", "-c",
         "import sys; from git_gasp.cli.main import click_main; click_main(sys.argv[1:])"]


def both(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    fast = subprocess.run([*FAST, *args], cwd=cwd, capture_output=True)
    slow = subprocess.run([*CLICK, *args], cwd=cwd, capture_output=True)
    assert (fast.returncode, fast.stdout, fast.stderr) == \
        (slow.returncode, slow.stdout, slow.stderr)
    return fast


def test_fast_flags_are_the_click_commands_flags():
    flags, valued = {}, {}
    for param in check.params:
        for opt in getattr(param, "opts", []):
            if opt.startswith("--"):
                (flags if getattr(param, "is_flag", False) else valued)[opt] = param.name
    assert flags == FLAGS and valued == VALUED


@pytest.mark.parametrize("argv, expected", [
    (["check"], {"path": None}),
    (["check", "repo", "--json", "--no-cache"], {"path": "repo", "as_json": True,
                                                  "no_cache": True}),
    (["check", "--strict", "--fixture", "x"], {"path": "x", "strict": True, "fixture": True}),
    (["check", "--since", "v1", "x"], {"path": "x", "since": "v1"}),
    (["check", "--since=HEAD~3"], {"path": None, "since": "HEAD~3"}),
])
def test_fast_args_reads_plain_invocations(argv, expected):
    assert fast_args(argv) == expected


@pytest.mark.parametrize("argv", [
    ["check", "-h"], ["check", "--help"], ["check", "--js"], ["check", "a", "b"],
    ["check", "--", "x"], ["check", ""], ["fold"], [], ["check", "--json=1"],
    ["check", "--since"], ["check", "--since", "--json"], ["check", "--since="],
    ["check", "--since", "a", "--since", "b"],
])
def test_anything_else_goes_to_click(argv):
    assert fast_args(argv) is None


@pytest.mark.slow
def test_same_output_both_ways(agent, tmp_path):
    proc = both(agent, "check", "--json", "--no-cache")
    assert proc.returncode == 0 and b'"conformant": true' in proc.stdout
    log = agent / "state" / "events.jsonl"
    log.write_bytes(log.read_bytes() + b"not json\n")
    proc = both(agent, "check", "--no-cache")
    assert proc.returncode == 1 and b"line" in proc.stdout
    git(agent, "add", "-A")
    proc = both(tmp_path, "check", str(tmp_path / "missing"))
    assert proc.returncode == 2 and proc.stderr.startswith(b"git gasp: error:")
    proc = both(agent, "check", "--bogus")
    assert proc.returncode == 2


def test_version_without_click_prints_what_click_prints():
    """`--version` alone never imports click; its text is click's version_option's."""
    from click.testing import CliRunner

    from git_gasp.cli.group import cli

    fast = subprocess.run([sys.executable, "-c", "import sys\nfrom git_gasp.cli.main import "
                           "main\ntry:\n    main(['--version'])\nexcept SystemExit as e:\n"
                           "    assert e.code == 0\nassert 'click' not in sys.modules"],
                          capture_output=True, check=True)
    slow = CliRunner().invoke(cli, ["--version"])
    assert slow.exit_code == 0
    assert fast.stdout.decode() == slow.output and slow.output.startswith("git-gasp, version ")
