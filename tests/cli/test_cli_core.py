"""`git gasp init / fold / snapshot` end to end, as a user runs them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.testing.events import goal_pair, ops, update
from tests.testing.run import gasp, git, out

pytestmark = pytest.mark.slow  # the CLI end to end

LOG = "state/events.jsonl"


def test_init_creates_a_conformant_committed_layout(tmp_path):
    proc = gasp(tmp_path, "init", "bot", "--agent-id", "bot-1")
    assert proc.returncode == 0, out(proc)
    repo = tmp_path / "bot"
    for rel in ("AGENT.md", "identity/IDENTITY.md", "state/events.jsonl", "memory/facts.jsonl",
                "journal/JOURNAL.md", ".agent/config.toml", ".gitignore", "skills"):
        assert (repo / rel).exists(), rel
    assert "agent_id: \"bot-1\"" in (repo / "AGENT.md").read_text()
    assert ".agent/lease" in (repo / ".gitignore").read_text()
    assert git(repo, "status", "--porcelain") == ""
    assert "initialise agent bot-1" in git(repo, "log", "--format=%s")
    check = gasp(repo, "check")
    assert check.returncode == 0, out(check)


def test_init_refuses_to_clobber_and_changes_nothing(tmp_path):
    assert gasp(tmp_path, "init", "a").returncode == 0
    before = git(tmp_path / "a", "rev-parse", "HEAD")
    proc = gasp(tmp_path, "init", "a")
    assert proc.returncode == 1 and "already an agent repo" in out(proc)
    assert out(proc).count("\n") == 1 and "Traceback" not in out(proc)
    assert git(tmp_path / "a", "rev-parse", "HEAD") == before


def test_init_in_existing_repo_commits_only_its_files(tmp_path):
    repo = tmp_path / "proj"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "code.py").write_text("print(1)\n")
    (repo / ".gitignore").write_text("*.pyc")
    git(repo, "add", "code.py")
    git(repo, "commit", "-qm", "code")
    (repo / "notes.txt").write_text("untracked, must stay untracked\n")
    proc = gasp(repo, "init", "agent")
    assert proc.returncode == 0, out(proc)
    files = git(repo, "show", "--name-only", "--format=", "HEAD").split()
    assert "notes.txt" not in files and "agent/AGENT.md" in files
    assert git(repo, "status", "--porcelain").strip() == "?? .gitignore\n?? notes.txt".strip() or \
        "notes.txt" in git(repo, "status", "--porcelain")
    assert gasp(repo / "agent", "check").returncode == 0


def test_init_refuses_when_changes_are_staged(tmp_path):
    repo = tmp_path / "proj"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "a.txt").write_text("a\n")
    git(repo, "add", "a.txt")
    proc = gasp(repo, "init")
    assert proc.returncode == 1 and "staged" in out(proc)
    assert not (repo / "AGENT.md").exists() and not (repo / "state").exists()


def test_init_rejects_a_bad_agent_id(tmp_path):
    proc = gasp(tmp_path, "init", "x", "--agent-id", "../evil")
    assert proc.returncode == 2 and "agent id" in out(proc)
    assert not (tmp_path / "x").exists()


def _agent_with_goals(tmp_path: Path) -> Path:
    assert gasp(tmp_path, "init", "a").returncode == 0
    repo = tmp_path / "a"
    with open(repo / LOG, "ab") as fh:
        fh.write(goal_pair(1) + goal_pair(2))
        fh.write(ops("o3", "event_g2", update("goal_2", status="Done")))
    return repo


def test_fold_summary_json_and_at(tmp_path):
    repo = _agent_with_goals(tmp_path)
    proc = gasp(repo, "fold")
    text = out(proc)
    assert proc.returncode == 0 and "2 nodes" in text and "goal 2" in text
    assert "goal_1" in text and "goal_2  [" not in text  # goal_2 is Done, not open
    graph = json.loads(gasp(repo, "fold", "--json").stdout)
    assert graph["version"] == 3 and graph["nodes"]["goal_2"]["props"]["status"] == "Done"
    early = json.loads(gasp(repo, "fold", "--json", "--at", "event_g1o").stdout)
    assert list(early["nodes"]) == ["goal_1"]
    proc = gasp(repo, "fold", "--at", "missing")
    assert proc.returncode == 2 and "no event 'missing'" in out(proc)


def test_fold_lenient_reports_skipped_ops_strict_fails(tmp_path):
    repo = _agent_with_goals(tmp_path)
    with open(repo / LOG, "ab") as fh:
        fh.write(ops("o4", None, update("ghost", x=1)))
    proc = gasp(repo, "fold")
    assert proc.returncode == 0 and "skipped ops (1)" in out(proc) and "o4" in out(proc)
    proc = gasp(repo, "fold", "--strict")
    assert proc.returncode == 1 and "o4" in out(proc) and ":6:" in out(proc)


def test_snapshot_seeds_fold_and_mismatch_falls_back_with_note(tmp_path):
    repo = _agent_with_goals(tmp_path)
    proc = gasp(repo, "snapshot", "--at", "event_g2o")
    assert proc.returncode == 0 and "snapshots/event_g2o/graph.json" in out(proc)
    full = json.loads(gasp(repo, "fold", "--json").stdout)
    proc = gasp(repo, "fold")
    assert "seeded from snapshots/event_g2o/graph.json" in out(proc)
    # A snapshot whose integrity no longer matches is ignored, with a note.
    snap = repo / "snapshots/event_g2o/graph.json"
    doc = json.loads(snap.read_text())
    doc["integrity"]["sha256"] = "f" * 64
    snap.write_text(json.dumps(doc))
    proc = gasp(repo, "fold", "--json")
    assert json.loads(proc.stdout) == full
    assert "integrity does not match" in proc.stderr.decode()


def test_snapshot_never_overwrites_a_different_snapshot(tmp_path):
    repo = _agent_with_goals(tmp_path)
    assert gasp(repo, "snapshot").returncode == 0
    again = gasp(repo, "snapshot")
    assert again.returncode == 0 and "unchanged" in out(again)
    snap = repo / "snapshots/o3/graph.json"
    snap.write_text(snap.read_text().replace("goal 1", "goal one"))
    proc = gasp(repo, "snapshot")
    assert proc.returncode == 1 and "not overwritten" in out(proc)
    assert "goal one" in snap.read_text()


def test_snapshot_on_empty_log_is_a_clear_error(tmp_path):
    assert gasp(tmp_path, "init", "a").returncode == 0
    proc = gasp(tmp_path / "a", "snapshot")
    assert proc.returncode == 1 and "no events" in out(proc)


def test_help_and_version(tmp_path):
    assert "check" in out(gasp(tmp_path, "-h"))
    assert "0." in out(gasp(tmp_path, "--version"))
    assert "--fixture" in out(gasp(tmp_path, "check", "-h"))


# --- the one error handler (git_gasp/cli/main.py) -----------------------------------


def _main_exit(argv: list[str]) -> int:
    from git_gasp.cli.main import main

    try:
        main(argv)
    except SystemExit as exc:
        return exc.code
    raise AssertionError("main() always exits")


def _lease_status_raises(monkeypatch, exc: BaseException) -> None:
    import git_gasp.cli.commands.lease as lease_cmd

    def boom():
        raise exc

    monkeypatch.setattr(lease_cmd, "agent_root", boom)


def test_known_errors_are_one_line_with_their_exit_code(monkeypatch, capsys):
    from git_gasp.base.errors import GaspError, UsageError

    monkeypatch.delenv("GASP_DEBUG", raising=False)
    _lease_status_raises(monkeypatch, GaspError("no agent here"))
    assert _main_exit(["lease", "status"]) == 1
    assert capsys.readouterr().err == "git gasp: error: no agent here\n"
    _lease_status_raises(monkeypatch, UsageError("bad flag"))
    assert _main_exit(["lease", "status"]) == 2
    assert capsys.readouterr().err == "git gasp: error: bad flag\n"


def test_an_unexpected_error_is_one_line_and_exit_3(monkeypatch, capsys):
    monkeypatch.delenv("GASP_DEBUG", raising=False)
    _lease_status_raises(monkeypatch, RuntimeError("boom"))
    assert _main_exit(["lease", "status"]) == 3
    assert capsys.readouterr().err == (
        "git gasp: internal error: RuntimeError: boom (set GASP_DEBUG=1 for details)\n")
    monkeypatch.setenv("GASP_DEBUG", "1")
    try:
        _main_exit(["lease", "status"])
    except RuntimeError as exc:
        assert str(exc) == "boom"
    else:
        raise AssertionError("GASP_DEBUG=1 lets the exception through")


def test_errors_are_turned_into_messages_only_in_main():
    """No command module catches GaspError or prints the error line itself."""
    cli_dir = Path(__file__).resolve().parents[1] / "git_gasp" / "cli"
    offenders = []
    for path in sorted(cli_dir.rglob("*.py")):
        if path.name == "main.py" and path.parent == cli_dir:
            continue
        text = path.read_text()
        if any(s in text for s in ("except GaspError", "gasp: error", "internal error")):
            offenders.append(str(path.relative_to(cli_dir)))
    assert not offenders, offenders
