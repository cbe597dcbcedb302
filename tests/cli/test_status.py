"""`git gasp status`: where the state lives and how it stands, on one screen or as JSON."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.testing.run import gasp, git, out


def _status(cwd: Path) -> tuple[str, dict]:
    text = gasp(cwd, "status")
    assert text.returncode == 0, out(text)
    data = gasp(cwd, "status", "--json")
    assert data.returncode == 0, out(data)
    return text.stdout.decode(), json.loads(data.stdout)


def test_outside_an_agent_repository_one_line(tmp_path):
    git(tmp_path, "init", "-q", "plain")
    proc = gasp(tmp_path / "plain", "status")
    err = proc.stderr.decode()
    assert proc.returncode == 2 and len(err.strip().splitlines()) == 1, out(proc)
    assert err.startswith("git gasp: error: not an agent repository")


@pytest.mark.slow  # over half a second: out of the fast loop
def test_beside_a_project_it_names_the_branch_and_tracks_events_and_checks(tmp_path):
    project = tmp_path / "app"
    git(tmp_path, "init", "-q", "app")
    (project / "a.txt").write_text("a\n")
    git(project, "add", "a.txt")
    git(project, "commit", "-qm", "a")
    assert gasp(project, "init", "--branch").returncode == 0
    text, data = _status(project)
    assert data["location"]["kind"] == "branch" and data["location"]["branch"] == "gasp/state"
    assert "on branch gasp/state, checked out at" in text
    assert data["uncommitted"]["events"] == 0 and data["last_check"] is None
    assert "last check: none recorded here" in text
    assert "no upstream" in text and data["branch"]["upstream"] is None
    assert gasp(project, "record", "goal", "--title", "g").returncode == 0
    assert gasp(project, "check").returncode == 0
    text, data = _status(project)
    assert data["uncommitted"]["events"] == 2  # goal.created and its ops pair
    assert "2 line(s) of state/events.jsonl not committed" in text
    assert data["last_check"]["conformant"] and data["last_check"]["at_head"]
    assert "last check: conformant at HEAD" in text
    state = Path(data["root"])
    git(state, "add", "-A")
    git(state, "commit", "-qm", "goal", "--no-verify")
    text, data = _status(project)
    assert data["uncommitted"]["events"] == 0 and not data["last_check"]["at_head"]
    assert "HEAD has moved since" in text
    hooks = [w for w in data["wiring"] if w["topic"] == "hooks"]
    assert hooks and all(w["level"] == "warn" for w in hooks), hooks


@pytest.mark.slow  # over half a second: out of the fast loop
def test_an_agent_repository_shows_its_upstream_run_and_lease(tmp_path):
    assert gasp(tmp_path, "init", "bot").returncode == 0
    bot = tmp_path / "bot"
    bare = tmp_path / "remote.git"
    git(tmp_path, "clone", "-q", "--bare", str(bot), str(bare))
    git(bot, "remote", "add", "origin", str(bare))
    git(bot, "fetch", "-q", "origin")
    git(bot, "branch", "-q", "--set-upstream-to=origin/main")
    text, data = _status(bot)
    assert data["location"]["kind"] == "root"
    assert "up to date with origin/main" in text
    assert data["run"] is None and "run: none open" in text
    assert gasp(bot, "run", "start", "--task", "tidy up").returncode == 0
    git(bot, "commit", "-qam", "wip", "--no-verify")
    text, data = _status(bot)
    assert data["branch"]["ahead"] == 1 and data["branch"]["behind"] == 0
    assert "1 ahead, 0 behind origin/main" in text
    assert data["run"]["task"] == "tidy up" and "tidy up" in text
    assert data["lease"]["held"] is True and text.count("lease: held") == 1
    assert [w["level"] for w in data["wiring"] if w["topic"] == "driver"] == ["ok"]


@pytest.mark.slow  # over half a second: out of the fast loop
def test_committed_lines_dropped_from_the_work_tree_are_not_fully_committed(agent):
    """Four committed log lines dropped from the work tree: status said "fully
    committed" and "last check: conformant at HEAD"; it compares with HEAD's log and
    says the verdict is older than the tree."""
    for n in range(2):
        assert gasp(agent, "record", "goal", "--title", f"goal {n}").returncode == 0
    git(agent, "add", "-A")
    git(agent, "commit", "-q", "--no-verify", "-m", "goals")
    assert gasp(agent, "check").returncode == 0
    time.sleep(0.01)  # the file changes after the check, as it would by hand
    log = agent / "state/events.jsonl"
    lines = log.read_bytes().splitlines(keepends=True)
    log.write_bytes(b"".join(lines[:-4]))
    proc = gasp(agent, "status")
    text = proc.stdout.decode()
    assert proc.returncode == 0, out(proc)
    assert "fully committed" not in text, text
    assert "4 committed line(s) missing from the working tree" in text, text
    assert "but the working tree changed since (state/events.jsonl" in text, text
    info = json.loads(gasp(agent, "status", "--json").stdout)
    assert info["uncommitted"]["missing"] == 4 and info["uncommitted"]["events"] == 0
    assert info["last_check"]["changed_since"] == "state/events.jsonl"
    # a line changed in place (same size) is caught too; restored, all is well again
    log.write_bytes(b"".join(lines[:-1]) + lines[-1].replace(b"goal", b"gaol"))
    assert json.loads(gasp(agent, "status", "--json").stdout)["uncommitted"]["missing"] == 1
    log.write_bytes(b"".join(lines))
    assert gasp(agent, "check").returncode == 0
    info = json.loads(gasp(agent, "status", "--json").stdout)
    assert info["uncommitted"] == {"log": "state/events.jsonl", "events": 0, "missing": 0}
    assert "fully committed" in gasp(agent, "status").stdout.decode()
