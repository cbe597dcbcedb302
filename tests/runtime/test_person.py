"""Who did it: each run records the person who ran the agent (git's author identity's
name by default, as git resolves it: here the hermetic GIT_AUTHOR_NAME; `gasp.person`
names someone else or, empty, no one; the e-mail only with `gasp.personEmail`), and
log, status and view show it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.testing.repos import init_branch, make_project
from tests.testing.run import gasp, git, out


@pytest.fixture
def project(tmp_path: Path) -> Path:
    project = make_project(tmp_path / "app")
    init_branch(project)
    return project


def _started(project: Path) -> dict:
    events = [json.loads(line) for line in gasp(project, "log", "--json").stdout.splitlines()]
    return [e for e in events if e["kind"] == "run.started"][0]


@pytest.mark.slow  # over half a second: out of the fast loop
def test_a_run_names_its_person_in_log_status_and_view(project: Path, tmp_path: Path) -> None:
    assert gasp(project, "run", "start", "--task", "fix it").returncode == 0
    assert "(by Test Author)" in out(gasp(project, "status"))
    status = json.loads(gasp(project, "status", "--json").stdout)
    assert status["run"]["person"] == "Test Author"
    assert _started(project)["payload"]["metadata"] == {"person": "Test Author"}
    assert "author@example.com" not in (Path(status["root"]) / "state" / "events.jsonl").read_text()
    assert gasp(project, "run", "finish", "--outcome", "promoted").returncode == 0
    log = out(gasp(project, "log"))
    assert "fix it  (by Test Author)" in log, log
    who = gasp(project, "log", "--format=%k %p").stdout.decode().splitlines()
    assert "run.finished Test Author" in who and "run.started Test Author" in who
    page = tmp_path / "view.html"
    assert gasp(project, "view", "-o", str(page), "--no-open").returncode == 0
    assert '"person": "Test Author"' in page.read_text() or \
        '"person":"Test Author"' in page.read_text()


@pytest.mark.parametrize(("config", "expect"), [
    ({"gasp.person": "ada-bot"}, "ada-bot"),
    ({"gasp.personEmail": "true"}, "Test Author <author@example.com>"),
    ({"gasp.person": ""}, None),
])
@pytest.mark.slow  # over half a second: out of the fast loop
def test_the_person_is_configurable(project: Path, config: dict, expect: str | None) -> None:
    for key, value in config.items():
        git(project, "config", key, value)
    assert gasp(project, "run", "start", "--task", "t").returncode == 0
    assert _started(project)["payload"]["metadata"].get("person") == expect


def test_a_token_in_the_name_field_is_redacted(tmp_path, monkeypatch):
    """A GitHub token pasted into gasp.person never reaches the log as it was."""
    from git_gasp.store.person import person
    from tests.testing.run import git

    git(tmp_path, "init", "-q")
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    git(tmp_path, "config", "gasp.person", f"Mallory {token}")
    who = person(tmp_path)
    assert who is not None and who.startswith("Mallory ") and token not in who
    assert "[REDACTED:" in who
