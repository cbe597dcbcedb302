"""`GASP_ODB` picks the object readers once per process; a bad value is one line."""

from __future__ import annotations

import pytest

from git_gasp.odb import policy
from tests.testing.run import gasp, out


@pytest.fixture
def fresh(monkeypatch):
    """The policy as a new process finds it: not read yet."""
    monkeypatch.setattr(policy, "_chosen", None)
    return monkeypatch


def test_the_default_and_each_choice(fresh):
    fresh.delenv("GASP_ODB", raising=False)
    assert policy.implementation() == policy.DEFAULT == policy.DULWICH
    for value, want in (("dulwich", policy.DULWICH), (" Native ", policy.NATIVE)):
        fresh.setattr(policy, "_chosen", None)
        fresh.setenv("GASP_ODB", value)
        assert policy.implementation() == want
        assert policy.native() is (want == policy.NATIVE)


def test_it_is_read_once_per_process(fresh):
    fresh.setenv("GASP_ODB", "dulwich")
    assert policy.implementation() == policy.DULWICH
    fresh.setenv("GASP_ODB", "native")
    assert policy.implementation() == policy.DULWICH


def test_an_unknown_value_is_refused(fresh):
    fresh.setenv("GASP_ODB", "pure")
    with pytest.raises(policy.PolicyError, match="GASP_ODB='pure': expected one of native"):
        policy.implementation()


def test_the_command_says_so_in_one_line(agent, monkeypatch):
    monkeypatch.setenv("GASP_ODB", "fast")
    proc = gasp(agent, "check")
    assert proc.returncode == 2
    assert proc.stdout == b""
    assert out(proc).splitlines() == [
        "git gasp: error: GASP_ODB='fast': expected one of native, dulwich"]
