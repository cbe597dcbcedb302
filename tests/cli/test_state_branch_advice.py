"""Advice fits the layout: in a project whose state is on its own branch, no fix and no
hint puts a state file or a guard on the working branch or says `git commit`;
`commit-run` names what it commits; `status` shows the upstream after the first sync."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.testing.repos import shared_project
from tests.testing.run import gasp, git, out


@pytest.fixture
def shared(tmp_path: Path) -> tuple[Path, Path]:
    return shared_project(tmp_path)


def test_a_clone_that_has_not_joined_gets_no_harmful_fix(shared, tmp_path: Path) -> None:
    _alice, bare = shared
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(bare), str(clone))
    for args in (("doctor",), ("install-hooks",), ("status",)):
        proc = gasp(clone, *args)
        assert proc.returncode == 2, (args, out(proc))
        assert "git gasp init --branch" in out(proc), out(proc)
        for harmful in (".gitignore", "git checkout --", "commit .gitattributes"):
            assert harmful not in out(proc), (args, out(proc))
    assert git(clone, "status", "--porcelain", "--ignored") == ""
    assert not (clone / ".git" / "hooks" / "pre-commit").exists()


def test_install_hooks_guards_the_state_not_the_projects_own_files(shared) -> None:
    alice, _bare = shared
    proc = gasp(alice, "install-hooks")
    assert proc.returncode == 0, out(proc)
    assert git(alice, "status", "--porcelain") == ""  # no .gitattributes on main
    (alice / "state").mkdir()  # the project's own file of that name: not the agent's
    (alice / "state" / "events.jsonl").write_text("project data, not events\n")
    git(alice, "add", "state")
    git(alice, "commit", "-qm", "the project's own state/")
    (alice / "state" / "events.jsonl").write_text("rewritten\n")
    git(alice, "commit", "-qam", "rewritten: a project file may change")
    doctor = gasp(alice, "doctor")
    assert doctor.returncode == 0, out(doctor)
    assert "GASP pre-commit hook installed" in out(doctor)


def test_commit_run_names_outstanding_events_not_the_last_runs(shared) -> None:
    alice, _bare = shared
    for args in (("run", "start", "--task", "t"), ("run", "finish", "--outcome", "promoted"),
                 ("commit-run",), ("record", "goal", "--title", "outside a run")):
        assert gasp(alice, *args).returncode == 0, args
    proc = gasp(alice, "sync")
    assert proc.returncode == 5, out(proc)
    assert "git gasp commit-run" in out(proc) and "git commit" not in \
        out(proc).replace("git gasp commit-run", "")
    proc = gasp(alice, "commit-run")
    assert proc.returncode == 0, out(proc)
    subject = git(alice, "log", "-1", "--format=%s", "gasp/state").strip()
    assert subject == "gasp: 1 event (goal.created)", subject
    again = gasp(alice, "commit-run")
    assert again.returncode == 1 and "nothing to commit" in out(again), out(again)
    assert gasp(alice, "check").returncode == 0


def test_status_shows_the_upstream_after_the_first_sync(shared) -> None:
    alice, _bare = shared
    status = json.loads(gasp(alice, "status", "--json").stdout)
    assert status["branch"]["upstream"] == "origin/gasp/state"
    assert "up to date with origin/gasp/state" in out(gasp(alice, "status"))
