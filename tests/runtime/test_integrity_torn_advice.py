"""Issue 10: the torn-line advice, as pure functions (no git): a complete unterminated
line is told to get its newline; only a line that does not parse gets `truncate -s`."""

from __future__ import annotations

from git_gasp.protocol.envelope import parse_log
from git_gasp.store.append import torn_error
from tests.testing.events import goal_pair

LOG = "state/events.jsonl"


def test_complete_last_line_is_not_torn():
    data = goal_pair(1) + goal_pair(2)
    err = torn_error(LOG, data[:-1])
    assert err.complete and err.cut is None and err.line == 4
    assert f"printf '\\n' >> {LOG}" in str(err) and "truncate" not in str(err)
    parsed = parse_log(data[:-1])
    assert len(parsed.events) == 4  # the line is an event; only its newline is missing
    (only,) = parsed.errors
    assert only.line == 4 and "complete event" in only.message
    assert f"printf '\\n' >> {LOG}" in only.message and "remove" not in only.message


def test_partial_last_line_cuts_exactly_at_its_start():
    data = goal_pair(1) + goal_pair(2)
    err = torn_error(LOG, data + b'{"id":"event_x","sch')
    assert not err.complete and err.cut == err.offset == len(data)
    assert f"truncate -s {len(data)} {LOG}` (keeps lines 1-4)" in str(err)
    messages = [e.message for e in parse_log(data + b'{"id":"event_x","sch').errors]
    assert any("does not parse" in m and "truncate" not in m for m in messages)


def test_the_log_name_in_check_1_advice_follows_the_manifest():
    parsed = parse_log(goal_pair(1)[:-1], "logs/agent.jsonl")
    assert "printf '\\n' >> logs/agent.jsonl" in parsed.errors[-1].message
