"""config.yml: Perstate's shape (grep-compatible), unknown keys kept, atomic writes."""

from __future__ import annotations

import re

import pytest

from git_gasp.base.errors import UsageError
from git_gasp.kg import config as cfgmod


def test_config_is_written_in_perstates_line_shape(home):
    with cfgmod.editing() as cfg:
        cfg.default_repo = "git@github.com:me/memory.git"
        cfg.default_branch = "main"
        cfg.sessions["0b5e-uuid"] = {"branch": "main"}
        cfg.sessions["123"] = {"branch": "yes"}
    text = (home / "config.yml").read_text()
    assert text == (
        "default_repo: git@github.com:me/memory.git\ndefault_branch: main\nsessions:\n"
        "  0b5e-uuid:\n    branch: main\n  123:\n    branch: yes\n"
    )
    # what Perstate's scripts do: grep -A1 "^  <sid>:" | grep branch: | sed
    lines = text.splitlines()
    i = lines.index("  123:")
    assert re.sub(r"^[^:]*: *", "", lines[i + 1]) == "yes"
    cfg = cfgmod.load()
    assert cfg.branch_of("123") == "yes"  # a string, not an int key or a bool


def test_a_config_written_by_perstate_loads_and_unknown_keys_survive(home):
    home.mkdir(parents=True)
    (home / "config.yml").write_text(
        "default_repo: /srv/memory\ndefault_branch: main\ntheme: dark\nsessions:\n"
        "  abc:\n    branch: agent-a\n    note: hi\n"
    )
    with cfgmod.editing() as cfg:
        assert cfg.sessions == {"abc": {"branch": "agent-a", "note": "hi"}}
        cfg.sessions["def"] = {"branch": "main"}
    text = (home / "config.yml").read_text()
    assert "theme: dark\n" in text and "    note: hi\n" in text
    assert "  def:\n    branch: main\n" in text


def test_empty_sessions_key_from_perstate_init_is_fine(home):
    home.mkdir(parents=True)
    (home / "config.yml").write_text("default_repo: /srv/m\ndefault_branch: main\nsessions:\n")
    cfg = cfgmod.load()
    assert cfg.exists and cfg.sessions == {} and cfg.default_repo == "/srv/m"


@pytest.mark.parametrize("bad", ["", "has space", "a:b:", "-lead", "x" * 300, "a\nb", "#c"])
def test_session_ids_that_would_break_the_file_are_refused(bad):
    with pytest.raises(UsageError):
        cfgmod.check_session_id(bad)


def test_a_new_config_is_private_and_a_linked_one_is_refused(home, tmp_path):
    from git_gasp.base.fileops import UnsafePath

    with cfgmod.editing() as cfg:
        cfg.default_repo = "/srv/memory"
    assert (home / "config.yml").stat().st_mode & 0o777 == 0o600
    elsewhere = tmp_path / "elsewhere.yml"
    elsewhere.write_text("default_repo: /x\n")
    (home / "config.yml").unlink()
    (home / "config.yml").symlink_to(elsewhere)
    with pytest.raises(UnsafePath), cfgmod.editing() as cfg:
        cfg.default_branch = "main"
    assert elsewhere.read_text() == "default_repo: /x\n"
