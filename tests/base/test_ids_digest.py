"""`base.ids` ids are UUIDv7 text without the uuid module, and `base.digest.sha256` is
SHA-256 whether the built-in module or OpenSSL computes it."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import git_gasp
from git_gasp.base import digest
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


def test_sha256_is_sha256_on_short_long_and_empty_input():
    for data in (b"", b"a", b"x" * 55, b"y" * 64, os.urandom(1000), b"z" * (1 << 16),
                 b"w" * ((1 << 16) + 1), os.urandom(1 << 20)):
        assert digest.sha256(data).hexdigest() == hashlib.sha256(data).hexdigest()
        h = digest.sha256(data)
        h.update(b"more")
        assert h.hexdigest() == hashlib.sha256(data + b"more").hexdigest()


def test_a_short_digest_does_not_load_hashlib():
    code = ("import sys\nfrom git_gasp.base.digest import sha256\n"
            "assert sha256(b'abc').hexdigest().startswith('ba7816bf')\n"
            "assert 'hashlib' not in sys.modules, 'hashlib loaded'\n")
    env = dict(os.environ, PYTHONPATH=str(Path(git_gasp.__file__).parents[1]))
    subprocess.run([sys.executable, "-S", "-c", code], check=True, env=env)
