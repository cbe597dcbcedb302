"""A checkout whose line endings git converted (core.autocrlf=true, Git for Windows'
default): check / fold / restore say so in one line with the fix, and a repo made by
`git gasp init` pins its GASP files so such a clone stays byte-exact."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.testing.events import goal_pair
from tests.testing.run import commit_all, gasp, git, out

pytestmark = pytest.mark.slow


def _autocrlf_clone(src: Path, dest: Path) -> Path:
    git(src.parent, "clone", "-q", "-c", "core.autocrlf=true", str(src), str(dest))
    return dest


def test_converted_clone_gets_one_line_with_the_fix(fixture_repo, tmp_path):
    assert not (fixture_repo / ".gitattributes").exists()  # no eol pins
    clone = _autocrlf_clone(fixture_repo, tmp_path / "win")
    assert b"\r\n" in (clone / "state/events.jsonl").read_bytes()  # git converted it

    proc = gasp(clone, "check")
    text = out(proc)
    assert proc.returncode == 1, text
    assert "FAIL" not in text and "not valid events" not in text
    assert "CRLF" in text and "git gasp install-hooks" in text
    assert "core.autocrlf=false checkout --" in text and "state/events.jsonl" in text
    assert len(text.strip().splitlines()) == 1, text

    proc = gasp(clone, "fold")
    text = out(proc)
    assert proc.returncode == 1, text
    assert "(empty log)" not in text
    assert "CRLF" in text and len(text.strip().splitlines()) == 1, text

    # the fix the line gives works
    named = text.split("checkout -- ", 1)[1].split("` (this", 1)[0].split()
    assert {"state/events.jsonl", "AGENT.md"} <= set(named)
    assert gasp(clone, "install-hooks").returncode == 0
    git(clone, "-c", "core.autocrlf=false", "checkout", "--", *named)
    proc = gasp(clone, "check")
    assert "CRLF" not in out(proc)


def test_repo_made_by_init_stays_exact_in_an_autocrlf_clone(agent, tmp_path):
    attrs = (agent / ".gitattributes").read_text()
    for pattern in ("state/events.jsonl", "/AGENT.md", "/identity/**", "/snapshots/**",
                    "/.agent/config.toml", "**/facts.jsonl", "**/JOURNAL.md"):
        assert f"{pattern} -text" in attrs, attrs
    assert "state/events.jsonl merge=gasp" in attrs  # the merge driver stays
    with open(agent / "state/events.jsonl", "ab") as fh:
        fh.write(goal_pair(1) + goal_pair(2))
    assert gasp(agent, "snapshot").returncode == 0
    commit_all(agent, "a goal and a snapshot")
    assert gasp(agent, "check").returncode == 0

    clone = _autocrlf_clone(agent, tmp_path / "win")
    assert b"\r\n" not in (clone / "state/events.jsonl").read_bytes()
    proc = gasp(clone, "check")
    assert proc.returncode == 0, out(proc)
    proc = gasp(clone, "fold")
    assert proc.returncode == 0 and "events (2 domain, 2 ops), last " in out(proc), out(proc)


def test_restore_of_a_converted_clone_says_so(fixture_repo, tmp_path):
    home_cfg = tmp_path / "autocrlf"
    home_cfg.mkdir()
    git(fixture_repo, "config", "--global", "core.autocrlf", "true")
    proc = gasp(tmp_path, "restore", str(fixture_repo), str(tmp_path / "restored"))
    text = out(proc)
    assert proc.returncode == 1, text
    assert "CRLF" in text and "Traceback" not in text
    assert len(text.strip().splitlines()) == 1, text
