"""`.agent/config.toml` parsed once per exact bytes (`runtime/policy._parse_remembered`):
the memo never changes what a config means."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from git_gasp.base.errors import GaspError
from git_gasp.runtime import policy
from git_gasp.runtime.policy import PolicySet, Verdict, load_config


@pytest.fixture
def repo(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / ".agent").mkdir()
    return tmp_path


def _write(repo, text: str) -> None:
    (repo / ".agent" / "config.toml").write_text(text)


def test_the_memo_follows_every_edit(repo):
    _write(repo, '[policy.nodes]\nframe = "deny"\n')
    assert PolicySet.load(repo).check_node("frame").verdict is Verdict.DENY
    assert Path(policy._memo_path(repo)).is_file()
    assert PolicySet.load(repo).check_node("frame").verdict is Verdict.DENY  # remembered
    _write(repo, '[policy.nodes]\nframe = "allow"\n')
    assert PolicySet.load(repo).check_node("frame").verdict is Verdict.ALLOW


def test_a_remembered_config_loads_without_tomllib(repo):
    _write(repo, '[executor]\nmodel = "m"\n')
    load_config(repo)
    code = ("import sys; from git_gasp.runtime.policy import load_config; "
            f"c = load_config({str(repo)!r}); assert c['executor']['model'] == 'm', c; "
            "assert 'tomllib' not in sys.modules and 'tomli' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_damaged_memo_is_parsed_again(repo):
    _write(repo, '[executor]\nmodel = "m"\n')
    load_config(repo)
    Path(policy._memo_path(repo)).write_bytes(b"\x00garbage")
    assert load_config(repo)["executor"]["model"] == "m"


def test_a_config_marshal_cannot_hold_is_parsed_every_time(repo):
    _write(repo, "[executor]\nmodel = \"m\"\nwhen = 1979-05-27\n")
    assert str(load_config(repo)["executor"]["when"]) == "1979-05-27"
    assert not Path(policy._memo_path(repo)).exists()
    assert str(load_config(repo)["executor"]["when"]) == "1979-05-27"


def test_a_bad_config_fails_every_time(repo):
    _write(repo, "[executor\n")
    for _ in range(2):
        with pytest.raises(GaspError, match="does not parse"):
            load_config(repo)
