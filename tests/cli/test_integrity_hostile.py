"""Hostile input: control characters from the log never reach a terminal raw, and a
hostile .agent/config.toml gets one line, not a hang or an internal error."""

from __future__ import annotations

import os

import pytest

from tests.testing.events import create, line, ops, update
from tests.testing.run import gasp, out

pytestmark = pytest.mark.slow
EVIL = "a\x1b[31mred\x1b]0;pwned\x07\rb\x9b2J"


def _append(agent, data: bytes) -> None:
    with open(agent / "state/events.jsonl", "ab") as fh:
        fh.write(data)


def _raw_controls(data: bytes) -> list[str]:
    text = data.decode("utf-8", "replace")
    return [c for c in text if (ord(c) < 0x20 and c != "\n") or 0x7F <= ord(c) < 0xA0]


def test_control_characters_from_the_log_are_escaped(agent):
    _append(agent, line("event_g1", "goal.created", {"id": "goal_1", "title": EVIL,
                                                     "status": "Open"})
            + ops("event_g1o", "event_g1", create("goal_1", "goal", title=EVIL, status="Open"))
            + ops("o_" + "x", None, update("ghost" + EVIL, status="x")))
    for args in (["fold"], ["log"], ["check"], ["lineage", "goal_1"]):
        proc = gasp(agent, *args)
        assert "Traceback" not in out(proc), args
        assert _raw_controls(proc.stdout) == [], (args, proc.stdout)
        assert _raw_controls(proc.stderr) == [], (args, proc.stderr)
    proc = gasp(agent, "fold")
    assert "\\x1b[31mred\\x1b]0;pwned\\x07\\x0db\\x9b2J" in out(proc)


@pytest.mark.parametrize("config", [
    "symlink-dev-zero",
    "[policy.promotion]\nmin_pass_rate = nan\n",
    "[policy.promotion]\nmin_score = inf\n",
    "[policy]\nnodes = \"deny\"\n",
    "[policy.promotion]\nrequire_approval = \"yes\"\n",
    "[executor]\nmodel = 5\n",
    "policy = 3\n",
])
def test_hostile_config_is_one_line(agent, config):
    path = agent / ".agent" / "config.toml"
    path.unlink()
    if config == "symlink-dev-zero":
        os.symlink("/dev/zero", path)
    else:
        path.write_text(config)
    proc = gasp(agent, "log")  # opens the state: the policy thresholds are read
    text = out(proc)
    assert proc.returncode == 1, text
    assert "internal error" not in text and "Traceback" not in text
    assert text.startswith("git gasp: error: .agent/config.toml"), text
    assert len(text.strip().splitlines()) == 1, text
