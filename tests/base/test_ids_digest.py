"""`base.ids` ids are UUIDv7 text without the uuid module."""

from __future__ import annotations

import time
import uuid

from git_gasp.base.ids import new_id, new_uuid, valid_id


def test_new_uuid_is_a_version_7_uuid_in_uuid_text_form_and_sorts_by_time():
    before = time.time_ns() // 1_000_000
    ids = [new_uuid() for _ in range(2000)]
    after = time.time_ns() // 1_000_000
    for text in ids:
        parsed = uuid.UUID(text)
        assert str(parsed) == text and parsed.version == 7 and parsed.variant == uuid.RFC_4122
        assert before <= parsed.int >> 80 <= after
    assert len(set(ids)) == len(ids)
    stamps = [uuid.UUID(t).int >> 80 for t in ids]
    assert stamps == sorted(stamps)
    made = new_id("goal")
    assert made.startswith("goal_") and valid_id(made) and uuid.UUID(made[5:]).version == 7
