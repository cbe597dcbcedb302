"""`git gasp log` and `check` output as git's: one line per event whatever the text,
`--format`, dates in --since/--until, a pager and colour only on a terminal (git's pager
settings, NO_COLOR, color.ui), never on a pipe."""

from __future__ import annotations

import os
import re
import subprocess
from datetime import datetime
from pathlib import Path

import pytest

from git_gasp.base.errors import UsageError
from git_gasp.cli.dates import parse_date
from git_gasp.cli.logformat import template_of
from git_gasp.protocol.idmatch import abbreviations, match_id
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
    goal = ok(agent, "record", "goal", "--title", "t\nmore").strip()
    shown = ok(agent, "log", "--format", "format:%k|%N|%s|%m|%an|%%|%z|%q").strip()
    assert shown == f"goal.created|{goal}|t|t ⏎ more|agent tester|%|%z|%q"  # git: literal
    event = ok(agent, "log", "--format", "format:%H").strip()
    short = ok(agent, "log", "--format", "%h").strip()  # a bare template, as git takes it
    kind, _, tail = short.partition("...")
    assert event.startswith(kind) and event.endswith(tail) and len(short) < len(event)
    assert ok(agent, "log", "--format", "%ad|%at|%ar").strip().endswith(
        ("seconds ago", "1 second ago"))  # "1 second ago" when the clock just ticked
    for bad in ("fancy",):
        proc = gasp(agent, "log", "--format", bad)
        assert proc.returncode == 2 and proc.stderr.decode().startswith("git gasp: error:")


def test_newest_first_and_gits_count_and_order_options(agent):
    titles = [f"g{i}" for i in range(5)]
    for t in titles:
        ok(agent, "record", "goal", "--title", t)
    assert ok(agent, "log", "--format", "%s").split() == titles[::-1]
    assert ok(agent, "log", "-n", "2", "--format", "%s").split() == ["g4", "g3"]
    assert ok(agent, "log", "-n", "2", "--reverse", "--format", "%s").split() == ["g3", "g4"]
    assert ok(agent, "log", "--max-count=1", "--format=%s").split() == ["g4"]
    assert ok(agent, "log", "--reverse", "--oneline").splitlines()[0].endswith("g0")
    assert b"\x1b[" in gasp(agent, "log", "--color", "-n", "1").stdout  # forced on a pipe
    assert b"\x1b[" not in gasp(agent, "log", "--color=never", "-n", "1").stdout
    assert b"\x1b[" not in gasp(agent, "log", "--no-color", "-n", "1").stdout


def test_every_short_id_log_prints_resolves(agent):
    """Ids minted in the same second share their start; the short ids end in their
    random tail and each one names its event or node again."""
    for i in range(12):
        ok(agent, "record", "goal", "--title", f"g{i}")
    rows = [line.split("|") for line in ok(agent, "log", "--ops", "--format",
                                            "%h|%H|%S|%N").splitlines()]
    assert len({h for h, *_ in rows}) == len(rows)
    for short, full, short_node, node in rows:
        assert "..." in short and len(short) < len(full)
        folded = ok(agent, "fold", "--at", short, "--json")
        assert folded == ok(agent, "fold", "--at", full, "--json")
        if node.startswith("goal_"):
            assert ok(agent, "lineage", short_node).splitlines()[0] == \
                ok(agent, "lineage", node).splitlines()[0]
    assert ok(agent, "log", "--abbrev", "10", "--format", "%h").split()[0].count("...") == 1
    assert len(ok(agent, "log", "--abbrev", "10", "-n1", "--format", "%h").strip()
               .partition("...")[2]) >= 10


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


def test_short_ids_end_in_the_shortest_tail_no_other_id_ends_with():
    ids = ["event_0190aaaa-1a2b3c", "event_0190aaab-9a2b3c", "event_0191ffff-777777",
           "goal_0191ffff-777778", "x"]
    short = abbreviations(ids)
    assert short["event_0191ffff-777777"] == "event_...777777"
    assert short["event_0190aaaa-1a2b3c"] == "event_...1a2b3c"  # 9a2b3c shares 5
    assert short["x"] == "x"  # nothing shorter
    for full, s in short.items():
        assert match_id(ids, s) == full and match_id(ids, s.replace("...", "…")) == full


def test_a_format_that_is_no_template_is_a_usage_error():
    with pytest.raises(UsageError):
        template_of("fancy")
    assert template_of("format:%z") == "%z" and template_of("%h %s") == "%h %s"


def test_a_timestamp_past_any_calendar_is_shown_not_a_crash(agent):
    """ts_ms is any 64-bit integer in a conformant log: log prints it, never exit 3."""
    ok(agent, "record", "goal", "--title", "t")
    log = agent / "state" / "events.jsonl"
    lines = log.read_bytes().splitlines(keepends=True)
    lines[-2] = re.sub(rb'"ts_ms":\d+', b'"ts_ms":4611686018427387904', lines[-2])
    log.write_bytes(b"".join(lines))
    assert gasp(agent, "check").returncode == 0
    shown = ok(agent, "log", "--format", "%ad|%ar|%at", "--ops")
    assert "@4611686018427387904 ms|0 seconds ago|4611686018427387" in shown


def test_a_number_no_time_can_be_is_one_line_not_a_crash(tmp_path):
    """A 5,000-digit --since (past Python's int-string limit), '@' seconds as long, and
    years ago past datetime's range: one usage line (exit 2), for log and view alike."""
    from tests.testing.run import gasp

    assert gasp(tmp_path, "init", "bot").returncode == 0
    repo = tmp_path / "bot"
    huge = "9" * 5000
    for args in (["log", "--since", huge], ["log", "--until", "@" + huge],
                 ["log", "--since", "999999999999 years ago"],
                 ["view", "--no-open", "-o", str(tmp_path / "v.html"), "--since", huge]):
        proc = gasp(repo, *args)
        err = proc.stderr.decode()
        assert proc.returncode == 2, (args, err)
        assert len(err.splitlines()) == 1 and "neither an event id" in err, (args, err)
        assert huge not in err  # cut, not echoed whole
