"""`abbreviate_some` (what `git gasp blame` prints for its patches and goals) gives each
id exactly the short form `ShortIds` (log, lineage, fold) gives it, without sorting all."""

from __future__ import annotations

import random
import uuid

import pytest

from git_gasp.cli.shortids import ShortIds, abbreviate_some


@pytest.mark.parametrize("abbrev", [None, 1, 3, 6, 9, 40])
def test_the_same_short_forms_as_shortids(abbrev):
    rng = random.Random(29)
    ids = [f"{kind}_{uuid.UUID(int=rng.getrandbits(128))}"
           for kind in ("goal", "patch", "run") for _ in range(800)]
    ids += ["patch_xababab", "goal_yyababab", "ababab", "run_" + ids[0][-12:]]
    wanted = rng.sample(ids, 100) + ids[-4:]
    full = ShortIds(ids, abbrev=abbrev)
    assert abbreviate_some(ids, wanted, abbrev) == {w: full.node(w) for w in wanted}


def test_an_id_outside_the_set_is_shortened_among_them():
    ids = ["patch_aaa111222", "patch_bbb111222"]
    got = abbreviate_some(ids, ["goal_ccc333444"])
    assert got == {"goal_ccc333444": ShortIds([*ids, "goal_ccc333444"]).node("goal_ccc333444")}
