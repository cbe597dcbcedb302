"""Issue 10: torn-line advice never deletes committed events.

A complete last line that only lacks its newline is not torn: the advice is to append
the newline. `truncate -s` is advised only for a last line that does not parse, cuts
exactly at its start, and never into the log HEAD has committed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.runtime.helpers import one_error_line
from tests.testing.events import line
from tests.testing.run import gasp, git, out

pytestmark = pytest.mark.slow

LOG = "state/events.jsonl"


def commit_log(agent: Path, data: bytes, message: str) -> None:
    (agent / LOG).write_bytes(data)
    git(agent, "add", LOG)
    git(agent, "commit", "-q", "--no-verify", "-m", message)


def recorded(agent: Path) -> bytes:
    """Record two goals (four events) through the CLI and return the log."""
    for title in ("one", "two"):
        proc = gasp(agent, "record", "goal", "--title", title)
        assert proc.returncode == 0, out(proc)
    return (agent / LOG).read_bytes()


def check_1_messages(agent: Path) -> list[str]:
    proc = gasp(agent, "check")
    assert proc.returncode != 0
    lines = out(proc).splitlines()
    start = next(i for i, ln in enumerate(lines) if "1 envelope round-trip" in ln)
    found = []
    for ln in lines[start + 1:]:
        if ln.startswith(("FAIL ", "ok ")):
            break
        if ln.strip().startswith(LOG):
            found.append(ln.strip())
    return found


def test_complete_unterminated_line_is_told_to_get_its_newline(agent):
    data = recorded(agent)
    commit_log(agent, data[:-1], "log without its final newline")
    before = (agent / LOG).read_bytes()

    msg = one_error_line(gasp(agent, "record", "goal", "--title", "x"))
    last = data.count(b"\n")
    assert f"{LOG}:{last}:" in msg
    assert f"printf '\\n' >> {LOG}" in msg and "truncate" not in msg
    assert (agent / LOG).read_bytes() == before

    messages = check_1_messages(agent)
    assert len(messages) == 1, messages
    assert "complete event" in messages[0] and f"printf '\\n' >> {LOG}" in messages[0]
    assert "truncate" not in messages[0] and "remove" not in messages[0]

    # following the advice keeps every committed event and repairs the log
    with open(agent / LOG, "ab") as fh:
        fh.write(b"\n")
    assert gasp(agent, "check").returncode == 0, out(gasp(agent, "check"))
    assert gasp(agent, "record", "goal", "--title", "x").returncode == 0
    assert gasp(agent, "check").returncode == 0


def test_partial_line_not_in_head_keeps_its_truncate_hint(agent):
    data = recorded(agent)
    commit_log(agent, data, "four events")
    (agent / LOG).write_bytes(data + b'{"id":"event_torn","sche')

    msg = one_error_line(gasp(agent, "record", "goal", "--title", "x"))
    assert "torn final line" in msg
    assert f"`truncate -s {len(data)} {LOG}` (keeps lines 1-4)" in msg
    messages = check_1_messages(agent)
    assert any("does not parse" in m and "truncate" not in m for m in messages), messages

    os.truncate(agent / LOG, len(data))  # the hint removes only the partial line
    assert (agent / LOG).read_bytes() == data
    assert gasp(agent, "check").returncode == 0


def test_partial_line_committed_in_head_gets_no_truncate(agent):
    data = recorded(agent)
    commit_log(agent, data + b'{"id":"event_torn","sche', "a torn line, committed")

    msg = one_error_line(gasp(agent, "record", "goal", "--title", "x"))
    assert "torn final line" in msg and "committed in HEAD" in msg
    assert "truncate" not in msg


def test_a_committed_domain_event_is_never_cut_with_its_lost_pair(agent):
    """The interrupted batch's domain line is in HEAD: the cut is the partial line only."""
    data = recorded(agent)
    domain = line("event_lone", "goal.created", {"id": "goal_lone", "title": "t"})
    commit_log(agent, data + domain, "a domain event whose pair never came")
    pair = line("event_lone_ops", "state.ops_applied", [], cause="event_lone")
    (agent / LOG).write_bytes(data + domain + pair[:40])

    msg = one_error_line(gasp(agent, "record", "goal", "--title", "x"))
    assert "lost its ops pair" in msg and "committed in HEAD, so it stays" in msg
    assert f"`truncate -s {len(data + domain)} {LOG}` (keeps lines 1-5)" in msg
