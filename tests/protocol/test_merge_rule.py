"""Check 4's merge rule, by meaning (protocol.appendonly.merge_result_problem)."""

from __future__ import annotations

from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from git_gasp.protocol.appendonly import merge_result_problem, shared_line_prefix_len


def lines(*names: str) -> bytes:
    return b"".join(n.encode() + b"\n" for n in names)


def test_either_order_of_concurrent_suffixes_passes():
    ours, theirs = lines("a", "x"), lines("a", "y")
    assert merge_result_problem([ours, theirs], lines("a", "x", "y")) is None
    assert merge_result_problem([ours, theirs], lines("a", "y", "x")) is None


def test_criss_cross_where_git_took_the_other_sides_order():
    # M1 = merge(A, B) = a x y; M2 = merge(B, A) = a y x; merging M1 and M2 can
    # resolve to M2's bytes without the merge driver: it starts with neither order.
    m1, m2 = lines("a", "x", "y"), lines("a", "y", "x")
    assert merge_result_problem([m1, m2], m2) is None
    assert merge_result_problem([m1, m2], m1) is None


def test_the_result_may_append_lines_of_its_own():
    assert merge_result_problem([lines("a", "x"), lines("a")], lines("a", "x", "z")) is None


def test_a_dropped_line_of_any_parent_fails_naming_parent_and_line():
    assert merge_result_problem([lines("a", "x"), lines("a", "y")], lines("a", "x")) == (
        1, 2, "line 2 of parent 2 is missing from the result")
    assert merge_result_problem([lines("a", "x"), lines("a", "y")], lines("a", "y")) == (
        0, 2, "line 2 of parent 1 is missing from the result")


def test_an_edit_of_the_shared_prefix_fails_even_if_lines_reappear_later():
    assert merge_result_problem([lines("a", "b", "x"), lines("a", "b")],
                                lines("a", "B", "x", "b")) == (0, 2, "line 2 was modified in place")


def test_a_line_kept_fewer_times_than_a_parent_has_it_fails():
    problem = merge_result_problem([lines("a", "x", "x"), lines("a")], lines("a", "x"))
    assert problem is not None and "occurs fewer times" in problem[2]


def test_an_unterminated_last_line_extended_by_the_merge_fails():
    problem = merge_result_problem([b"a\nx", lines("a", "y")], lines("a", "xz", "y"))
    assert problem == (0, 2, "line 2 of parent 1 is missing from the result "
                             "(its unterminated last line was extended?)")


def test_shared_line_prefix_counts_whole_lines_only():
    assert shared_line_prefix_len([b"a\nbc\n", b"a\nbd\n"]) == 2
    assert shared_line_prefix_len([b"a\nb", b"a\nb"]) == 2
    assert shared_line_prefix_len([b"x\n", b""]) == 0


_names = st.lists(st.sampled_from(["p", "q", "r", "s", "t", "u"]), max_size=5)


def _naive_ok(parents: list[list[str]], result: list[str]) -> bool:
    """Whole-line model: the shared line prefix stays; every parent line is kept."""
    shared = 0
    while all(len(p) > shared for p in parents) and len({p[shared] for p in parents}) == 1:
        shared += 1
    if result[:shared] != parents[0][:shared]:
        return False
    have = Counter(result[shared:])
    return all(not (Counter(p[shared:]) - have) for p in parents)


@given(base=_names, suffixes=st.lists(_names, min_size=2, max_size=3), data=st.data())
def test_matches_the_naive_model(base, suffixes, data):
    parents = [base + s for s in suffixes]
    pool = [line for s in suffixes for line in s] + data.draw(_names)
    result = base[: data.draw(st.integers(0, len(base)))] + data.draw(st.permutations(pool))
    if data.draw(st.booleans()):
        result = base + data.draw(st.permutations(pool))
    got = merge_result_problem([lines(*p) for p in parents], lines(*result))
    assert (got is None) == _naive_ok(parents, result)


@given(base=_names, suffixes=st.lists(_names, min_size=2, max_size=3), data=st.data())
def test_any_interleaving_of_the_suffixes_passes(base, suffixes, data):
    parents = [base + s for s in suffixes]
    shared = 0
    while all(len(p) > shared for p in parents) and len({p[shared] for p in parents}) == 1:
        shared += 1
    pool = [line for p in parents for line in p[shared:]]
    result = parents[0][:shared] + data.draw(st.permutations(pool))
    assert merge_result_problem([lines(*p) for p in parents], lines(*result)) is None
