"""`git gasp log` and `check` output as git's: one line per event whatever the text,
`--format`, dates in --since/--until, a pager and colour only on a terminal (git's pager
settings, NO_COLOR, color.ui), never on a pipe."""

from __future__ import annotations

import os
import subprocess
from datetime import datetime
from pathlib import Path

import pytest

from git_gasp.base.errors import UsageError
from git_gasp.cli.dates import parse_date
from git_gasp.cli.logformat import short_ids, template_of
from tests.testing.run import gasp, git_gasp_exe, out
from tests.testing.tty import on_a_tty as run_on_a_tty

pytestmark = pytest.mark.slow  # keeps the fast loop under a minute


def ok(repo: Path, *args: str) -> str:
    proc = gasp(repo, *args)
    assert proc.returncode == 0, out(proc)
    return proc.stdout.decode()


def on_a_tty(repo: Path, *args: str, env: dict | None = None) -> bytes:
    """What `git-gasp ARGS` writes on a terminal (it must exit 0)."""
    code, shown = run_on_a_tty(repo, *args, env=env)
    assert code == 0, shown
    return shown


def test_one_line_per_event_even_for_multi_line_text(agent):
    ok(agent, "record", "goal", "--title", "first line\nsecond line\n\nthird")
    lines = ok(agent, "log").splitlines()
    assert len(lines) == 1
    assert "first line ⏎ second line ⏎ third" in lines[0]
    block = ok(agent, "log", "--format", "medium")
    assert "    first line\n    second line\n" in block


def test_format_templates_and_refusals(agent):
    goal = ok(agent, "record", "goal", "--title", "t").strip()
    shown = ok(agent, "log", "--format", "format:%k|%s|%m|%%").strip()
    assert shown == f"goal.created|{goal}|t|%"
    event = ok(agent, "log", "--format", "format:%i").strip()
    short = ok(agent, "log", "--format", "format:%h").strip()
    assert event.startswith(short) and len(short) < len(event)
    for bad in ("format:%q", "fancy"):
        proc = gasp(agent, "log", "--format", bad)
        assert proc.returncode == 2 and proc.stderr.decode().startswith("git gasp: error:")


def test_since_and_until_take_dates(agent):
    ok(agent, "record", "goal", "--title", "t")
    assert ok(agent, "log", "--since", "1 hour ago").strip()
    assert ok(agent, "log", "--since", "2.days.ago", "--until", "now").strip()
    assert ok(agent, "log", "--until", "2020-01-01") == ""
    assert ok(agent, "log", "--since", "@4102444800") == ""  # 2100-01-01
    proc = gasp(agent, "log", "--since", "the day after")
    assert proc.returncode == 2 and "neither an event id, a date" in proc.stderr.decode()


def test_a_pipe_gets_no_pager_and_no_colour(agent):
    ok(agent, "record", "goal", "--title", "t")
    env_out = subprocess.run([*git_gasp_exe(), "log"], cwd=agent, capture_output=True,
                             env={**os.environ, "GIT_PAGER": "sed s/^/PAGED:/"})
    assert b"PAGED:" not in env_out.stdout and b"\x1b[" not in env_out.stdout


def test_a_terminal_pages_through_gits_pager_in_colour(agent):
    ok(agent, "record", "goal", "--title", "t")
    shown = on_a_tty(agent, "log", env={"GIT_PAGER": "sed s/^/PAGED:/"})
    assert b"PAGED:" in shown and b"\x1b[" in shown
    assert b"PAGED:" not in on_a_tty(agent, "log", "--no-pager",
                                     env={"GIT_PAGER": "sed s/^/PAGED:/"})


@pytest.mark.parametrize("env", [{"NO_COLOR": "1"},
                                 {"GIT_CONFIG_PARAMETERS": "'color.ui'='never'"},
                                 {"GIT_CONFIG_PARAMETERS": "'color.gasp'='false'"}])
def test_colour_is_off_as_the_user_says(agent, env):
    ok(agent, "record", "goal", "--title", "t")
    shown = on_a_tty(agent, "log", "--no-pager", env=env)
    assert b"goal.created" in shown and b"\x1b[" not in shown
    assert b"\x1b[" not in on_a_tty(agent, "check", env=env)


def test_check_colours_its_marks_on_a_terminal_only(agent):
    assert b"\x1b[32mok\x1b[m" in on_a_tty(agent, "check")
    assert b"\x1b[" not in gasp(agent, "check").stdout


def test_dates_as_git_reads_them():
    now = datetime(2026, 12, 1, 12, 0).astimezone()
    day = 86_400_000
    assert parse_date("now", now) == int(now.timestamp() * 1000)
    assert parse_date("3 days ago", now) == parse_date("3.days.ago", now)
    assert parse_date("now", now) - parse_date("1 week ago", now) == 7 * day
    assert parse_date("2026-12-01T00:00:00Z") == 1796083200000
    assert parse_date("@1796083200") == 1796083200000
    assert parse_date("yesterday", now) < parse_date("today", now)
    assert parse_date("someday") is None and parse_date("2026-13-01") is None


def test_short_ids_are_unique_prefixes():
    ids = ["event_0190aaaa-1", "event_0190aaab-2", "event_0191ffff-3"]
    short = short_ids(ids)
    assert short["event_0190aaaa-1"] == "event_0190aaaa"
    assert short["event_0191ffff-3"] == "event_0191"
    for full, s in short.items():
        assert full.startswith(s) and sum(x.startswith(s) for x in ids) == 1


def test_unknown_format_is_a_usage_error():
    with pytest.raises(UsageError):
        template_of("format:%z")
