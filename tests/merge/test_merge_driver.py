"""The union merge driver on bytes and on temp files (no repository needed).

`tests/merge/test_merge_git.py` drives the same driver through real merges, rebases,
cherry-picks and stash pops.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from git_gasp.merge.driver import disabled, rule_for
from git_gasp.merge.journal import merge_journal
from git_gasp.merge.jsonl import line_key, merge_jsonl
from git_gasp.merge.lines import split
from tests.testing.events import goal_pair, line
from tests.testing.run import out

LOG = "state/events.jsonl"


def ev(eid: str, body: str = "x") -> bytes:
    """A small event-like JSONL line with an id, newline included."""
    return line(eid, "note.created", {"text": body})


def fact(fid: str, text: str) -> bytes:
    return json.dumps(
        {"id": fid, "ts_ms": 1, "text": text, "derived_from": [], "supersedes": None},
        separators=(",", ":"),
    ).encode() + b"\n"


def ids(data: bytes) -> list[str]:
    return [json.loads(raw)["id"] for raw in split(data)]


# --- JSONL: clean merges ------------------------------------------------------------------


def test_both_append_gives_base_then_ours_then_theirs():
    base = ev("e1") + ev("e2")
    res = merge_jsonl(base, base + ev("o1") + ev("o2"), base + ev("t1") + ev("t2"))
    assert res.clean and not res.conflicts and not res.notes
    assert res.data == base + ev("o1") + ev("o2") + ev("t1") + ev("t2")


def test_line_appended_by_both_sides_is_written_once():
    base = ev("e1")
    res = merge_jsonl(base, base + ev("s") + ev("o"), base + ev("s") + ev("t"))
    assert res.clean and ids(res.data) == ["e1", "s", "o", "t"]
    assert not res.notes  # theirs' order (s, t) survives in the result


def test_shared_lines_in_another_order_merge_once():
    """A cherry-picked event then the whole branch: ours' order wins, each event once."""
    base = ev("e1")
    res = merge_jsonl(base, base + ev("b"), base + ev("a") + ev("b"))
    assert res.clean and ids(res.data) == ["e1", "b", "a"] and not res.notes


def test_one_side_unchanged_and_empty_files():
    base = ev("e1")
    assert merge_jsonl(base, base, base + ev("t")).data == base + ev("t")
    assert merge_jsonl(base, base + ev("o"), base).data == base + ev("o")
    assert merge_jsonl(b"", b"", b"").data == b""
    assert merge_jsonl(b"", ev("o"), ev("t")).data == ev("o") + ev("t")


@pytest.mark.parametrize("cut", ["base", "ours", "theirs"])
def test_unterminated_last_line_is_terminated_never_glued(cut):
    base, ours, theirs = ev("e1"), ev("e1") + ev("o"), ev("e1") + ev("t")
    if cut == "base":
        base = base[:-1]
    elif cut == "ours":
        ours = ours[:-1]
    else:
        theirs = theirs[:-1]
    res = merge_jsonl(base, ours, theirs)
    assert res.clean, res.conflicts
    assert res.data == ev("e1") + ev("o") + ev("t")


def test_unterminated_base_line_that_a_side_extended_is_a_rewrite():
    res = merge_jsonl(b"[1]", b"[1]\n[3]\n", b"[1][2]\n")
    assert not res.clean
    assert res.conflicts == ["theirs rewrote the common base: base line 1 (line '[1]') is missing"]


def test_lines_without_an_id_are_identified_by_their_bytes():
    base = b"not json\n"
    res = merge_jsonl(
        base,
        base + b"[1,2]\n" + b'{"id":7}\n' + b"\n",
        base + b"[1,2]\n" + b'{"id":7}\n' + b"[1, 2]\n" + b"\n" + b"{bad\n",
    )
    assert res.clean
    assert res.data == base + b"[1,2]\n" + b'{"id":7}\n' + b"\n" + b"[1, 2]\n" + b"{bad\n"


def test_line_key():
    assert line_key(ev("e9")[:-1]) == "e9"
    assert line_key(b'{"id":"a\\u00e9"}') == "a\u00e9"
    assert line_key(b'{"id":1}') == b'{"id":1}'
    assert line_key(b"[]") == b"[]"
    assert line_key(b"{") == b"{"
    assert line_key(b'{"id":"x"} \r') == "x"


def test_facts_merge_by_id():
    base = fact("fact_1", "sky is blue")
    theirs = base + fact("fact_3", "b") + fact("fact_2", "a")
    res = merge_jsonl(base, base + fact("fact_2", "a"), theirs)
    assert res.clean and ids(res.data) == ["fact_1", "fact_2", "fact_3"]


def test_canonical_event_pairs_merge():
    base = goal_pair(1)
    res = merge_jsonl(base, base + goal_pair(2), base + goal_pair(3))
    assert res.clean and res.data == base + goal_pair(2) + goal_pair(3)


def test_side_reordering_base_without_losing_a_line_is_clean():
    """A criss-cross merge's virtual base holds both merge bases' lines in one order."""
    base = ev("r") + ev("a") + ev("b")
    ours = ev("r") + ev("a") + ev("b") + ev("o")
    theirs = ev("r") + ev("b") + ev("a") + ev("t")
    res = merge_jsonl(base, ours, theirs)
    assert res.clean and ids(res.data) == ["r", "a", "b", "o", "t"] and not res.notes


# --- JSONL: conflicts ----------------------------------------------------------------------


def _all_lines_kept(result: bytes, *sides: bytes) -> None:
    have = set(split(result))
    for side in sides:
        for raw in split(side):
            assert raw in have, raw


def test_same_id_two_bodies_is_a_conflict_naming_the_id():
    base = ev("e1")
    ours, theirs = base + ev("dup", "ours"), base + ev("t") + ev("dup", "theirs")
    res = merge_jsonl(base, ours, theirs, marker_size=9)
    assert not res.clean
    assert res.conflicts == ["id dup has two different bodies (ours line 2, theirs line 3)"]
    assert res.data.startswith(base + b"<" * 9 + b" ours\n" + ev("dup", "ours"))
    assert b"\n" + b"=" * 9 + b"\n" in res.data and res.data.endswith(b">" * 9 + b" theirs\n")
    _all_lines_kept(res.data, ours, theirs)


def test_many_id_clashes_are_summarised():
    base = ev("e1")
    ours = base + b"".join(ev(f"d{i}", "o") for i in range(15))
    theirs = base + b"".join(ev(f"d{i}", "t") for i in range(15))
    res = merge_jsonl(base, ours, theirs)
    assert not res.clean and len(res.conflicts) == 11
    assert res.conflicts[-1] == "and 5 more ids like these"


@pytest.mark.parametrize("side", ["ours", "theirs"])
def test_side_that_rewrote_a_base_line_is_a_conflict(side):
    base = ev("e1") + ev("e2") + ev("e3")
    edited = ev("e1") + ev("e2", "edited") + ev("e3") + ev("new")
    other = base + ev("other")
    ours, theirs = (edited, other) if side == "ours" else (other, edited)
    res = merge_jsonl(base, ours, theirs)
    assert not res.clean
    assert res.conflicts == [f"{side} rewrote the common base: base line 2 (id e2) was changed"]
    _all_lines_kept(res.data, ours, theirs)
    assert res.data.startswith(ev("e1") + b"<<<<<<< ours\n")


def test_theirs_deleting_a_base_line_is_a_conflict():
    base = ev("e1") + ev("e2") + ev("e3")
    res = merge_jsonl(base, base + ev("o"), ev("e1") + ev("e3") + ev("t"))
    assert res.conflicts == ["theirs rewrote the common base: base line 2 (id e2) is missing"]
    res = merge_jsonl(base, base + ev("o"), b"")
    assert res.conflicts == ["theirs rewrote the common base: base line 1 (id e1) is missing"]
    _all_lines_kept(res.data, base + ev("o"))
    res = merge_jsonl(b"alpha\nbeta\n", b"alpha\nbeta\ngamma\n", b"alpha\n")
    assert res.conflicts == ["theirs rewrote the common base: base line 2 (line 'beta') is missing"]


def test_ours_lacking_base_lines_is_a_cherry_pick_not_a_conflict():
    """Cherry-picking B's second commit: its base (B's first commit) was never in ours."""
    base = ev("r") + ev("b1")
    res = merge_jsonl(base, ev("r") + ev("o"), base + ev("b2"))
    assert res.clean and res.data == ev("r") + ev("o") + ev("b2")  # b1 is not picked too
    assert not res.notes


def test_ours_and_theirs_rewriting_together_name_both():
    base = ev("e1")
    res = merge_jsonl(base, ev("e1", "o"), ev("e1", "t"))
    assert res.conflicts == [
        "ours rewrote the common base: base line 1 (id e1) was changed",
        "theirs rewrote the common base: base line 1 (id e1) was changed",
    ]


# --- JOURNAL.md ----------------------------------------------------------------------------


J = b"# Journal\n\n"


def test_journal_blocks_base_ours_theirs():
    ours, theirs = J + b"## ours\n\ntext\n\n", J + b"## theirs\n\ntext\n\n"
    res = merge_journal(J, ours, theirs)
    assert res.clean and res.data == J + b"## ours\n\ntext\n\n" + b"## theirs\n\ntext\n\n"


def test_journal_identical_or_contained_blocks_are_not_duplicated():
    block = b"## same\n\nentry\n"
    assert merge_journal(J, J + block, J + block).data == J + block
    longer = block + b"more\n"
    assert merge_journal(J, J + longer, J + block).data == J + longer
    assert merge_journal(J, J + block, J + longer).data == J + longer
    assert merge_journal(J, J + b"x\n" + block, J + block).data == J + b"x\n" + block
    # a block that only shares part of a line is not "contained"
    assert merge_journal(J, J + b"ab\n", J + b"b\n").data == J + b"ab\nb\n"


def test_journal_unterminated_sides_are_terminated():
    res = merge_journal(b"# Journal", b"# Journal\no", b"# Journal\nt")
    assert res.clean and res.data == b"# Journal\no\nt\n"


def test_journal_rewrite_by_theirs_is_a_conflict():
    base = J + b"line one\n"
    res = merge_journal(base, base + b"o\n", J + b"line 1\n")
    assert not res.clean
    assert res.conflicts == ["theirs rewrote the common base: base line 3 was changed or deleted"]
    _all_lines_kept(res.data, J + b"line 1\n", base + b"o\n")
    res = merge_journal(base, base + b"o\n", J)
    assert res.conflicts == [
        "theirs rewrote the common base: base line 3 and every line after it are missing"
    ]


def test_journal_cherry_pick_keeps_ours_and_adds_only_theirs_block():
    base = J + b"## one\n"
    res = merge_journal(base, J + b"## mine\n", base + b"## two\n")
    assert res.clean and res.data == J + b"## mine\n## two\n"


# --- rules by path, the off switch --------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "rule"),
    [
        ("state/events.jsonl", "jsonl"),
        ("agent/state/events.jsonl", "jsonl"),
        ("memory/facts.jsonl", "jsonl"),
        ("facts.jsonl", "jsonl"),
        ("other/log.jsonl", "jsonl"),
        ("JOURNAL.md", "journal"),
        ("journal/JOURNAL.md", "journal"),
        ("journal/journal.md", "text"),
        ("README.md", "text"),
        ("events.jsonl.bak", "text"),
    ],
)
def test_rule_for_path(path, rule):
    assert rule_for(path) == rule


def test_disabled_values():
    assert not disabled({})
    assert not disabled({"GASP_NO_MERGE_DRIVER": ""})
    assert not disabled({"GASP_NO_MERGE_DRIVER": "0"})
    assert disabled({"GASP_NO_MERGE_DRIVER": "1"})
    assert disabled({"GASP_NO_MERGE_DRIVER": "yes"})


# --- the command on temp files -------------------------------------------------------------


def drive(
    tmp: Path, base: bytes, ours: bytes, theirs: bytes, path: str = LOG,
    marker_size: str = "7", env: dict | None = None,
) -> tuple[subprocess.CompletedProcess, bytes]:
    """Run `git gasp merge-driver` as git would; return the process and the %A bytes."""
    files: dict[str, Path] = {}
    for name, data in (("O", base), ("A", ours), ("B", theirs)):
        files[name] = tmp / f".merge_file_{name}"
        files[name].write_bytes(data)
    proc = subprocess.run(
        ["git", "gasp", "merge-driver", "--ancestor", str(files["O"]), "--current",
         str(files["A"]), "--other", str(files["B"]), "--marker-size", marker_size,
         "--path", path],
        cwd=tmp, capture_output=True, env={**os.environ, **(env or {})},
    )
    return proc, files["A"].read_bytes()


def test_command_clean_merge_exit_0_and_silent(tmp_path):
    base = ev("e1")
    proc, result = drive(tmp_path, base, base + ev("o"), base + ev("t"))
    assert proc.returncode == 0 and proc.stderr == b"" and proc.stdout == b""
    assert result == base + ev("o") + ev("t")


def test_command_conflict_exit_1_markers_and_one_line_reasons(tmp_path):
    base = ev("e1")
    proc, result = drive(tmp_path, base, base + ev("d", "1"), base + ev("d", "2"),
                         marker_size="11")
    assert proc.returncode == 1, out(proc)
    err = proc.stderr.decode()
    assert "state/events.jsonl: conflict: id d has two different bodies" in err
    assert "GASP_NO_MERGE_DRIVER=1" in err and "Traceback" not in err
    assert b"<" * 11 + b" ours\n" in result and b">" * 11 + b" theirs\n" in result


def test_command_journal_path(tmp_path):
    proc, result = drive(tmp_path, J, J + b"o\n", J + b"t\n", path="journal/JOURNAL.md")
    assert proc.returncode == 0 and result == J + b"o\nt\n"


def test_command_other_path_is_a_plain_text_merge(tmp_path):
    proc, result = drive(tmp_path, b"a\nb\nc\n", b"A\nb\nc\n", b"a\nb\nC\n", path="notes.txt")
    assert proc.returncode == 0 and result == b"A\nb\nC\n"
    proc, result = drive(tmp_path, b"a\n", b"o\n", b"t\n", path="notes.txt", marker_size="4")
    assert proc.returncode == 1
    assert result == b"<<<< ours\no\n====\nt\n>>>> theirs\n"


def test_off_switch_falls_back_to_git_text_merge(tmp_path):
    base = ev("e1")
    env = {"GASP_NO_MERGE_DRIVER": "1"}
    proc, result = drive(tmp_path, base, base + ev("o"), base + ev("t"), env=env)
    assert proc.returncode == 1  # git's text merge: both appended at the end
    assert result == (base + b"<<<<<<< ours\n" + ev("o") + b"=======\n" + ev("t")
                      + b">>>>>>> theirs\n")
    proc, result = drive(tmp_path, base, base + ev("o"), base, env=env)
    assert proc.returncode == 0 and result == base + ev("o")


def test_help_documents_the_off_switch(tmp_path):
    proc = subprocess.run(["git", "gasp", "merge-driver", "-h"], cwd=tmp_path,
                          capture_output=True, text=True)
    assert proc.returncode == 0
    assert "GASP_NO_MERGE_DRIVER=1" in proc.stdout
    assert "--marker-size %L --path %P" in proc.stdout


def test_command_bad_input_is_one_line_never_a_traceback(tmp_path):
    proc = subprocess.run(
        ["git", "gasp", "merge-driver", "--ancestor", "nope", "--current", "nope2",
         "--other", "nope3", "--path", LOG],
        cwd=tmp_path, capture_output=True, text=True,
    )
    assert proc.returncode != 0
    assert proc.stderr.startswith("git gasp: error: cannot read the base version nope")
    assert proc.stderr.count("\n") == 1
    proc, _ = drive(tmp_path, b"", b"", b"", marker_size="0")
    assert proc.returncode == 2 and b"--marker-size must be at least 1" in proc.stderr
    assert b"Traceback" not in proc.stderr


# --- properties ----------------------------------------------------------------------------

# A pool of ids whose body is fixed per id, so both sides appending an id append the
# identical line; a few id-less lines too (identity by bytes).
POOL = [ev(f"p{i}", f"body {i}")[:-1] for i in range(24)] + [b"[%d]" % i for i in range(6)]
_subset = st.lists(st.sampled_from(POOL), unique=True, max_size=12)


@st.composite
def three_versions(draw):
    """base, ours' new lines, theirs' new lines: unique within a side, overlapping across."""
    base = draw(_subset)
    rest = [raw for raw in POOL if raw not in base]
    o_new = draw(st.lists(st.sampled_from(rest), unique=True, max_size=10)) if rest else []
    t_new = draw(st.lists(st.sampled_from(rest), unique=True, max_size=10)) if rest else []
    return base, o_new, t_new


def _bytes(lines: list[bytes], cut: bool) -> bytes:
    data = b"".join(raw + b"\n" for raw in lines)
    return data[:-1] if cut and data else data


@pytest.mark.slow  # over half a second: out of the fast loop
@settings(max_examples=300, deadline=None)
@given(three_versions(), st.booleans(), st.booleans(), st.booleans())
def test_property_union_loses_nothing_duplicates_nothing_keeps_orders(
    versions, cut_base, cut_ours, cut_theirs
):
    base, o_new, t_new = versions
    b, o = _bytes(base, cut_base), _bytes(base + o_new, cut_ours)
    t = _bytes(base + t_new, cut_theirs)
    res = merge_jsonl(b, o, t)
    assert res.clean and not res.conflicts  # nobody rewrote base, no id clash
    lines = split(res.data)
    assert res.data == b"" or res.data.endswith(b"\n")
    assert len(lines) == len(set(lines))  # nothing duplicated
    assert set(lines) == set(base) | set(o_new) | set(t_new)  # nothing lost, nothing invented
    assert lines[: len(base) + len(o_new)] == base + o_new  # base order, then ours' order
    theirs_only = [raw for raw in t_new if raw not in set(base) | set(o_new)]
    assert lines[len(base) + len(o_new):] == theirs_only  # theirs' order
    assert merge_jsonl(b, o, t) == res  # deterministic
    # the same content whichever side is ours
    assert set(split(merge_jsonl(b, t, o).data)) == set(lines)


@settings(max_examples=200, deadline=None)
@given(three_versions(), st.data())
def test_property_id_clash_or_rewrite_conflicts_and_keeps_every_line(versions, data):
    base, o_new, t_new = versions
    with_ids = [i for i, raw in enumerate(base) if raw.startswith(b"{")]
    modes = ["clash"] + ["theirs"] * bool(base) + ["ours"] * bool(with_ids)
    mode = data.draw(st.sampled_from(modes))
    ours, theirs = base + o_new, base + t_new
    if mode == "clash":
        theirs = theirs + [ev("clash", "theirs")[:-1]]
        ours = ours + [ev("clash", "ours")[:-1]]
        expected = "id clash has two different bodies"
    elif mode == "theirs":  # any edit or removal of a base line
        victim = data.draw(st.integers(0, len(base) - 1))
        edit = data.draw(st.sampled_from([[theirs[victim] + b" "], []]))
        theirs = theirs[:victim] + edit + theirs[victim + 1:]
        expected = f"theirs rewrote the common base: base line {victim + 1} "
    else:  # ours may lack base lines (a cherry-pick), but not change a base id's body
        victim = data.draw(st.sampled_from(with_ids))
        ours = ours[:victim] + [ours[victim] + b" "] + ours[victim + 1:]
        expected = f"ours rewrote the common base: base line {victim + 1} "
    o, t = _bytes(ours, False), _bytes(theirs, False)
    res = merge_jsonl(_bytes(base, False), o, t)
    assert not res.clean and res.conflicts[0].startswith(expected), res.conflicts
    _all_lines_kept(res.data, o, t)
    assert merge_jsonl(_bytes(base, False), o, t) == res


def test_result_replaces_current_whole_through_a_tmp_file(tmp_path, monkeypatch):
    """%A is replaced by rename, never rewritten in place: a kill mid-write leaves it whole."""
    from git_gasp.merge import driver

    base = ev("e1")
    current = tmp_path / "A"
    current.write_bytes(base + ev("o"))
    before = os.stat(current).st_ino
    seen: list[tuple[str, str]] = []
    real = os.replace
    monkeypatch.setattr(driver.os, "replace", lambda a, b: (seen.append((str(a), str(b))),
                                                            real(a, b))[1])
    for name, data in (("O", base), ("B", base + ev("t"))):
        (tmp_path / name).write_bytes(data)
    code = driver.run(str(tmp_path / "O"), str(current), str(tmp_path / "B"), 7, LOG,
                      lambda _msg: None)
    assert code == 0 and current.read_bytes() == base + ev("o") + ev("t")
    assert seen and seen[0][1] == str(current) and os.stat(current).st_ino != before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["A", "B", "O"]
