"""Usage errors (click's) come out in the tool's one voice: one line
`git gasp: error: CMD: what`, naming the option, exit 2 -- never click's three lines."""

from __future__ import annotations

import pytest

from tests.testing.run import gasp

pytestmark = pytest.mark.slow  # runs the CLI once per case

CASES = [
    (["memory", "add", "a fact"], "memory add: missing option '--from'"),
    (["memory", "add"], "memory add: missing argument 'TEXT'"),
    (["identity", "amend"], "identity amend: missing option '--approved-by'"),
    (["check", "--bogus"], "check: no such option '--bogus'"),
    (["check", ".", "extra"], "check: got unexpected extra argument (extra)"),
    (["log", "--since"], "log: option '--since' requires an argument"),
    (["log", "--bogus"], "log: no such option '--bogus'"),
    (["kg", "init", "--bogus"], "kg init: no such option '--bogus'"),
    (["kg", "search", "--limit", "many", "q"], "kg search: invalid value for '--limit'"),
    (["kg", "nosuch"], "kg: no such command 'nosuch'"),
    (["lease", "release", "extra"], "lease release: got unexpected extra argument (extra)"),
    (["record", "goal", "--title"], "record goal: option '--title' requires an argument"),
    (["install-hooks", "--forc"],
     "install-hooks: no such option '--forc'; did you mean '--force'?"),
    (["hook", "nope"], "hook: invalid value for"),
    (["nosuch"], "no such command 'nosuch'"),
    (["--bogus"], "no such option '--bogus'"),
]


@pytest.mark.parametrize("argv, says", CASES, ids=[" ".join(c[0]) for c in CASES])
def test_usage_error_is_one_line_naming_the_option(agent, argv, says):
    proc = gasp(agent, *argv)
    err = proc.stderr.decode()
    assert proc.returncode == 2, err
    assert proc.stdout == b""
    assert err.count("\n") == 1 and err.startswith("git gasp: error: "), err
    assert says in err, err
    assert "Usage:" not in err and "Error:" not in err and "Traceback" not in err
    command = " ".join(w for w in argv[:2] if not w.startswith("-") and w != "nosuch")
    if argv[0] in ("memory", "identity", "kg", "lease", "record"):
        assert f"(see 'git gasp {command} -h')" in err, err


def test_a_bad_value_the_command_checks_itself_is_the_same_voice(agent):
    proc = gasp(agent, "log", "--since", "zzz")
    err = proc.stderr.decode()
    assert proc.returncode == 2 and err.count("\n") == 1, err
    assert err.startswith("git gasp: error: ") and "--since" in err


def test_help_and_version_still_exit_0(agent):
    for argv in (["-h"], ["memory", "add", "-h"], ["--version"]):
        proc = gasp(agent, *argv)
        assert proc.returncode == 0 and proc.stdout, argv


def test_a_group_without_its_subcommand_still_shows_its_help(agent):
    for argv in ([], ["lease"], ["memory"]):
        proc = gasp(agent, *argv)
        err = proc.stderr.decode()
        assert proc.returncode == 2 and err.startswith("Usage: git gasp"), (argv, err)
        assert "Commands:" in err
