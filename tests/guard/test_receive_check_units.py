"""The pieces of pre-receive --check that need no push: where a line sits in a log,
and findings compared across logs with their line numbers set aside."""

from __future__ import annotations

from git_gasp.conformance.rules import reused_id, unseen_cause
from git_gasp.guard.push import Refusal
from git_gasp.guard.receive_check import _line_at, _norm


def test_line_at_finds_whole_lines_only():
    data = b"ab\nabc\nb\n"
    assert _line_at(data, b"ab") == 0
    assert _line_at(data, b"abc") == 3
    assert _line_at(data, b"b") == 7
    assert _line_at(data, b"bc") is None
    assert _line_at(b"x\ntail", b"tail") == 2  # an unterminated last line
    assert _line_at(b"", b"x") is None


def test_norm_sets_line_numbers_and_unseen_causes_aside():
    assert _norm(reused_id("e", 3)) == _norm(reused_id("e", 40))
    assert _norm(unseen_cause("e", "c", None)) == _norm(unseen_cause("e", "c", 12))
    assert _norm(unseen_cause("e", "c", None)) != _norm(unseen_cause("e", "d", None))
    assert _norm("claimed by 2 ops events (lines 3, 17)") == \
        _norm("claimed by 2 ops events (lines 5, 9)")
    assert _norm("claimed by 2 ops events (lines 3, 17)") != \
        _norm("claimed by 3 ops events (lines 3, 17, 20)")


def test_refusal_line_names_ref_commit_path_and_line():
    r = Refusal("refs/heads/main", "why", "a" * 40, "state/events.jsonl", 7)
    assert r.line() == ("git gasp: refused refs/heads/main: commit aaaaaaaaaaaa "
                        "state/events.jsonl:7: why")
    assert Refusal("refs/heads/x", "gone").line() == "git gasp: refused refs/heads/x: gone"
