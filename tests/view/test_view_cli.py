"""`git gasp view` as a user runs it: `-o` writes the file, no `-o` writes under the git
dir, a browser opens only when asked and available, and bad input is one line."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from tests.testing.run import gasp, git, out
from tests.view.history import record

pytestmark = pytest.mark.slow  # runs the installed CLI many times


@pytest.fixture
def hist(agent):
    return record(agent)


def _ok(cwd: Path, *args: str) -> str:
    proc = gasp(cwd, "view", *args)
    assert proc.returncode == 0, out(proc)
    assert not proc.stderr, out(proc)
    return proc.stdout.decode()


def _one_line_error(cwd: Path, *args: str, code: int = 2) -> str:
    proc = gasp(cwd, "view", *args)
    err = proc.stderr.decode()
    assert proc.returncode == code, out(proc)
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert err.startswith("git gasp: error: "), err
    return err


def test_output_file_is_written(agent, hist, tmp_path):
    target = tmp_path / "sub" / "page.html"
    text = _ok(agent, "-o", str(target), "--no-open")
    assert re.fullmatch(rf"wrote {re.escape(str(target))}: \d+ events \(\d+ domain, \d+ ops\), "
                        r"13 nodes, last event_\S+ \(line \d+, ops\); 2 runs, the page lists 11 "
                        r"nodes and \d+ events and counts the other 2 nodes \(tool and model "
                        r"calls\) and \d+ events in their runs; 0\.\d MB\n", text), text
    assert target.read_bytes().startswith(b"<!DOCTYPE html>")


def test_without_output_it_writes_under_the_git_dir(agent, hist, monkeypatch, tmp_path):
    marker = tmp_path / "opened"
    browser = tmp_path / "browser.sh"
    browser.write_text(f"#!/bin/sh\necho \"$@\" >> {marker}\n")
    browser.chmod(0o755)
    monkeypatch.setenv("BROWSER", str(browser))
    text = _ok(agent / "state", "--no-open")  # from a folder of the agent, too
    page = Path(git(agent, "rev-parse", "--absolute-git-dir").strip()) / "gasp" / "view.html"
    assert text.startswith(f"wrote {page}: ") and page.is_file()
    assert not marker.exists()  # --no-open never opens
    text = _ok(agent)
    assert marker.read_text().strip() == page.as_uri()  # BROWSER names one: it is opened
    assert "open the file yourself" not in text


def test_without_a_display_no_console_browser_starts(agent, hist, monkeypatch):
    for var in ("DISPLAY", "WAYLAND_DISPLAY", "BROWSER"):
        monkeypatch.delenv(var, raising=False)
    assert "(no graphical browser here; open the file yourself)" in _ok(agent)


def test_a_run_by_its_short_id_or_prefix(agent, hist, tmp_path):
    log = gasp(agent, "log").stdout.decode()
    short = re.search(r"\s(run_\.\.\.\w+)\s+fix retry skill", log).group(1)
    for given in (short, hist.run, hist.run[:-3]):
        assert "in scope: 1 run, the page lists 8 nodes and" in _ok(
            agent, "--run", given, "-o", str(tmp_path / "r.html"), "--no-open")


def test_since_a_date_an_event_or_milliseconds(agent, hist, tmp_path):
    page = str(tmp_path / "s.html")
    assert "in scope: 0 runs, the page lists 0 nodes and 0 events;" in _ok(
        agent, "--since", "now", "-o", page, "--no-open")
    for since in ("2000-01-01", "1000"):
        assert "in scope: 2 runs, the page lists 11 nodes and" in _ok(
            agent, "--since", since, "-o", page, "--no-open")
    log = gasp(agent, "log", "--reverse").stdout.decode().splitlines()
    goal_line = next(ln for ln in log if "goal.created" in ln and "onerror" in ln)
    event = goal_line.split()[0]  # the short id log prints
    text = _ok(agent, "--since", event, "-o", page, "--no-open")
    assert "in scope: 1 run," in text  # after the hostile goal: its run only


def test_bad_input_is_one_line(agent, hist, tmp_path):
    assert "--run 'nope': no such run in state/events.jsonl" in _one_line_error(
        agent, "--run", "nope", "--no-open")
    assert "is ambiguous: 2 match" in _one_line_error(agent, "--run", "run_", "--no-open")
    assert "--since someday: neither an event id, a date" in _one_line_error(
        agent, "--since", "someday", "--no-open")
    assert "is ambiguous" in _one_line_error(agent, "--since", "event_", "--no-open")
    (tmp_path / "dir").mkdir()
    assert "is a directory" in _one_line_error(agent, "-o", str(tmp_path / "dir"), "--no-open")
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert f"cannot write {blocker}/x.html" in _one_line_error(
        agent, "-o", str(blocker / "x.html"), "--no-open", code=1)


def test_outside_an_agent_repository(tmp_path):
    plain = tmp_path / "plain"
    plain.mkdir()
    git(plain, "init", "-q")
    err = _one_line_error(plain, "--no-open")
    assert "not an agent repository" in err
    assert not (plain / ".git" / "gasp").exists()


def test_the_default_page_is_not_left_in_the_work_tree(agent, hist):
    before = git(agent, "status", "--porcelain", "--untracked-files=all")
    _ok(agent, "--no-open")
    assert git(agent, "status", "--porcelain", "--untracked-files=all") == before
    assert not [p for p in os.listdir(agent) if p.endswith(".html")]
