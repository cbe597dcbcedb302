"""The formats attribution reads, without git: blame porcelain, C-quoted paths, Git AI
v3 notes, Agent Trace record shapes; and the layout git blame prints."""

from __future__ import annotations

import pytest

from git_gasp.attribution.blame import Row
from git_gasp.attribution.gitai import parse_note
from git_gasp.attribution.porcelain import PorcelainError, parse_porcelain, unquote_path
from git_gasp.attribution.render import render
from git_gasp.attribution.trace_import import shape_problem

A, B = "a" * 40, "b" * 40
PORCELAIN = (
    f"{A} 1 1 2\nauthor Ada\nauthor-mail <ada@x>\nauthor-time 1767225600\n"
    "author-tz +0100\ncommitter Ada\ncommitter-time 1767225600\nsummary first\nboundary\n"
    f"filename \"old\\tname.py\"\n\tline one\n{A} 2 2\n\t\tindented\n"
    f"{B} 1 3 1\nauthor Bob Longname\nauthor-time 1767229200\nauthor-tz -0230\n"
    "summary second\nprevious " + A + " old\nfilename new.py\n\tline three\n"
).encode()


def test_porcelain_lines_commits_and_paths():
    lines, commits = parse_porcelain(PORCELAIN)
    assert [(x.line, x.commit, x.orig_line, x.orig_path, x.content) for x in lines] == [
        (1, A, 1, b"old\tname.py", b"line one"), (2, A, 2, b"old\tname.py", b"\tindented"),
        (3, B, 1, b"new.py", b"line three")]
    assert commits[A].boundary and not commits[B].boundary
    assert commits[B].get(b"author") == b"Bob Longname"
    with pytest.raises(PorcelainError):
        parse_porcelain(b"not porcelain\n")
    with pytest.raises(PorcelainError):
        parse_porcelain(f"{A} 1 1 1\nauthor x\n".encode())


def test_render_is_git_blames_layout():
    lines, commits = parse_porcelain(PORCELAIN)
    rows = [Row(x, commits[x.commit]) for x in lines]
    out = render(rows, b"new.py", str)
    assert out[0] == (b"^aaaaaaa old\tname.py (Ada          2026-01-01 01:00:00 +0100 1) "
                      b"line one")
    assert out[2] == (b"bbbbbbbb new.py      (Bob Longname 2025-12-31 22:30:00 -0230 3) "
                      b"line three")


@pytest.mark.parametrize(("raw", "want"), [
    (b"plain/path.py", b"plain/path.py"),
    (b'"a\\tb"', b"a\tb"), (b'"q\\"uote\\\\"', b'q"uote\\'),
    (b'"\\303\\251t\\303\\251"', "été".encode()), (b'"', b'"'),
])
def test_unquote_path(raw, want):
    assert unquote_path(raw) == want


def test_git_ai_note_parsing():
    note = parse_note(b'src/a.rs\n  abcd1234abcd1234 1-3,7\n"with space.rs"\n'
                      b'  abcd1234abcd1234 2\n  bad 1-x\n---\n{"schema_version": '
                      b'"authorship/3.0.0", "prompts": {"abcd1234abcd1234": {"agent_id": '
                      b'{"tool": "claude", "model": "opus"}}}}\n')
    assert note.files == {b"src/a.rs": [(1, 3, "abcd1234abcd1234"), (7, 7, "abcd1234abcd1234")],
                          b"with space.rs": [(2, 2, "abcd1234abcd1234")]}
    assert note.who(b"src/a.rs", 7)["model"] == "opus"
    assert note.who(b"src/a.rs", 4) is None
    assert parse_note(b"no divider here\n") is None
    # git-ai 1.4's sessions and trace ids, mixed with the old keys in one note
    mixed = parse_note(b'a.py\n  s_c9883b05a2487d::t_9f8e7d6c5b4a32 1-2\n'
                       b'  h_a1b2c3d4e5f678::t_0 3\n  c9883b05a2487d6d 4\n---\n'
                       b'{"schema_version": "authorship/3.0.0", "prompts": {"c9883b05a2487d6d":'
                       b' {"agent_id": {"tool": "cursor", "model": "gpt-4"}}}, "sessions": '
                       b'{"s_c9883b05a2487d": {"agent_id": {"tool": "claude", "id": "s1", '
                       b'"model": "opus"}}}, "humans": {"h_a1b2c3d4e5f678": {"author": "Al"}}}')
    assert (mixed.who(b"a.py", 2)["tool"], mixed.who(b"a.py", 2)["session"]) == ("claude", "s1")
    assert mixed.who(b"a.py", 3) == {"source": "git-ai", "id": "h_a1b2c3d4e5f678::t_0",
                                     "schema": "authorship/3.0.0", "type": "human",
                                     "author": "Al"}
    assert mixed.who(b"a.py", 4)["model"] == "gpt-4"
    assert parse_note(b"a.py\n  x 1\n---\nnot json\n").who(b"a.py", 1)["type"] == "ai"


@pytest.mark.parametrize(("rec", "problem"), [
    ([], "not a JSON object"), ({"files": []}, "no id"),
    ({"id": "x", "files": []}, "no git revision"),
    ({"id": "x", "vcs": {"type": "jj", "revision": "k"}, "files": []}, "no git revision"),
    ({"id": "x", "vcs": {"type": "git", "revision": "k"}}, "no files"),
    ({"id": "x", "vcs": {"type": "git", "revision": "k"}, "files": [{"path": "a"}]},
     "without path or conversations"),
    ({"id": "x", "vcs": {"type": "git", "revision": "k"}, "files": [
        {"path": "a", "conversations": [{"ranges": [{"start_line": 3, "end_line": 2}]}]}]},
     "bad ranges"),
])
def test_record_shapes_refused(rec, problem):
    assert problem in shape_problem(rec)
