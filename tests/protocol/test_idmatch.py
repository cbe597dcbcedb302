"""protocol/idmatch: a unique prefix names an id, as git takes abbreviated revisions."""

from __future__ import annotations

import pytest

from git_gasp.protocol.idmatch import AmbiguousId, completions, match_id

IDS = ["goal_0190aa-1", "goal_0190ab-2", "patch_0190ac-3", "run_77ff"]


@pytest.mark.parametrize("text, full", [
    ("goal_0190aa-1", "goal_0190aa-1"),  # exact
    ("goal_0190aa", "goal_0190aa-1"),  # unique prefix
    ("patch", "patch_0190ac-3"),
    ("0190ac", "patch_0190ac-3"),  # the part after the kind
    ("77f", "run_77ff"),
    ("nothing", "nothing"),  # no match: unchanged, for the caller's own error
    ("", ""),
])
def test_unique_prefix_names_the_id(text, full):
    assert match_id(IDS, text) == full


def test_ambiguous_prefix_lists_every_candidate():
    with pytest.raises(AmbiguousId) as err:
        match_id(IDS, "goal_0190a", "goal")
    assert err.value.candidates == ["goal_0190aa-1", "goal_0190ab-2"]
    assert "goal 'goal_0190a' is ambiguous: 2 match (goal_0190aa-1, goal_0190ab-2)" in str(
        err.value)
    assert err.value.exit_code == 2


def test_kindless_prefix_across_kinds_is_ambiguous_unless_narrowed():
    with pytest.raises(AmbiguousId):
        match_id(IDS, "0190a")
    assert match_id(IDS, "0190a", keep=lambda c: c.startswith("patch_")) == "patch_0190ac-3"


def test_an_exact_id_wins_over_longer_ids_it_prefixes():
    assert match_id(["goal_1", "goal_12", "goal_123"], "goal_1") == "goal_1"


def test_many_candidates_are_cut_in_the_message():
    ids = [f"event_{n:03d}" for n in range(20)]
    with pytest.raises(AmbiguousId, match=r"20 match \(event_000, .*, and 12 more\)"):
        match_id(ids, "event_0")


def test_completions_are_sorted_prefixes():
    assert completions(IDS, "goal_") == ["goal_0190aa-1", "goal_0190ab-2"]
    assert completions(IDS, "x") == []
