"""Which sessions in the agents' stores belong to a project (`import --all`)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from git_gasp.adapters.sessions import belongs, find_sessions, normal, recorded_cwd
from tests.adapters.samples import CLAUDE_TRANSCRIPT, CODEX_ROLLOUT, read_jsonl, write_jsonl


@pytest.fixture(autouse=True)
def _stores(monkeypatch):
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("CODEX_HOME", raising=False)


def _mangle(path: Path) -> str:
    return re.sub(r"[^A-Za-z0-9]", "-", str(path))


def claude_session(home: Path, cwd: Path, name: str, *, folder: str | None = None) -> Path:
    """A copy of the real transcript recorded in `cwd`, stored where Claude Code puts it
    (or in `folder`, as a lossy or stale directory name would)."""
    rows = read_jsonl(CLAUDE_TRANSCRIPT)
    for row in rows:
        if "cwd" in row:
            row["cwd"] = str(cwd)
        if "sessionId" in row:
            row["sessionId"] = name
    where = home / ".claude" / "projects" / (folder or _mangle(cwd))
    where.mkdir(parents=True, exist_ok=True)
    return write_jsonl(where / f"{name}.jsonl", rows)


def codex_session(home: Path, cwd: Path, name: str, day: str = "2026/11/29") -> Path:
    rows = read_jsonl(CODEX_ROLLOUT)
    rows[0]["payload"]["cwd"] = str(cwd)
    rows[0]["payload"]["id"] = rows[0]["payload"]["session_id"] = name
    where = home / ".codex" / "sessions" / day
    where.mkdir(parents=True, exist_ok=True)
    return write_jsonl(where / f"rollout-2026-11-29T15-33-37-{name}.jsonl", rows)


def test_belongs_is_an_exact_path_match_never_a_name_prefix(tmp_path):
    top = normal(tmp_path / "sib")
    assert belongs(top, top) and belongs(top + "/src/x", top) and belongs(top + "/", top)
    assert belongs(top + "/./src/../lib", top)
    assert not belongs(top + "-other", top) and not belongs(top + "other/x", top)
    assert not belongs(top + "/../sib-other", top)
    assert not belongs(None, top) and not belongs("", top) and not belongs("sib", top)


def test_claude_sessions_of_a_sibling_with_a_prefix_name_are_not_ours(hermetic, tmp_path):
    sib, other, sub = tmp_path / "sib", tmp_path / "sib-other", tmp_path / "sib" / "pkg"
    for d in (sib, other, sub):
        d.mkdir(parents=True, exist_ok=True)
    mine = claude_session(hermetic, sib, "s-mine")
    inner = claude_session(hermetic, sub, "s-sub")
    claude_session(hermetic, other, "s-other")
    claude_session(hermetic, tmp_path / "sib.old", "s-dot")  # mangles like sib-old
    # a name that mangles like ours but records another directory: the cwd decides
    claude_session(hermetic, other, "s-liar", folder=_mangle(sib))
    assert find_sessions("claude-code", sib) == sorted([mine, inner])
    assert find_sessions("claude-code", other) == [
        hermetic / ".claude/projects" / _mangle(other) / "s-other.jsonl"]
    assert find_sessions("claude-code", tmp_path / "nothing-here") == []


def test_claude_sessions_recorded_through_a_link_are_found(hermetic, tmp_path):
    real = tmp_path / "real" / "proj"
    real.mkdir(parents=True)
    link = tmp_path / "link"
    link.symlink_to(real)
    viewed = claude_session(hermetic, link, "s-link", folder=_mangle(real))
    assert recorded_cwd("claude-code", viewed) == str(link)
    assert find_sessions("claude-code", link) == [viewed]
    assert find_sessions("claude-code", real) == [viewed]


def test_claude_config_dir_is_the_store_when_set(hermetic, tmp_path, monkeypatch):
    proj = tmp_path / "p"
    proj.mkdir()
    path = claude_session(hermetic / "alt", proj, "s1")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(hermetic / "alt" / ".claude"))
    assert find_sessions("claude-code", proj) == [path]


def test_codex_rollouts_are_matched_by_session_meta_cwd(hermetic, tmp_path):
    sib, other = tmp_path / "sib", tmp_path / "sib-other"
    sib.mkdir()
    other.mkdir()
    mine = codex_session(hermetic, sib, "c-mine")
    deep = codex_session(hermetic, sib / "a" / "b", "c-deep", day="2026/11/30")
    codex_session(hermetic, other, "c-other")
    assert find_sessions("codex", sib) == sorted([mine, deep])
    assert recorded_cwd("codex", mine) == str(sib)


def test_files_without_a_recorded_cwd_are_not_ours(hermetic, tmp_path):
    proj = tmp_path / "p"
    proj.mkdir()
    where = hermetic / ".claude" / "projects" / _mangle(proj)
    where.mkdir(parents=True)
    (where / "empty.jsonl").write_bytes(b"")
    (where / "junk.jsonl").write_bytes(b'not json "cwd"\n{"cwd": 3}\n')
    sessions = hermetic / ".codex" / "sessions" / "2026"
    sessions.mkdir(parents=True)
    line = json.dumps({"type": "event_msg", "cwd": str(proj)})
    (sessions / "rollout-x.jsonl").write_text(line + "\n")
    (sessions / "rollout-y.jsonl.zst").write_bytes(b"\x28\xb5\x2f\xfd broken")
    assert find_sessions("claude-code", proj) == []
    assert find_sessions("codex", proj) == []
    assert os.listdir(where)  # nothing was touched
