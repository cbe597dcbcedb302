"""The local cache entry codec (`protocol/savedentry.py`): what one encodes decodes back;
another kind, another Python, a cut or altered entry decodes to None."""

from __future__ import annotations

import zlib

import pytest

from git_gasp.protocol import savedentry

MAGIC = b"gasp-test/1"
LOG = b'{"a":1}\n{"b":2}\n'


def _entry() -> bytes:
    return savedentry.encode(MAGIC, zlib.crc32(LOG), len(LOG), 2, ("log", [1, 2], {"x": None}))


def test_an_entry_decodes_to_what_was_encoded():
    entry = savedentry.decode(_entry(), MAGIC, 3)
    assert entry is not None
    assert (entry.prefix_crc, entry.size, entry.lines, entry.payload) == (
        zlib.crc32(LOG), len(LOG), 2, ("log", [1, 2], {"x": None}))
    assert savedentry.prefix_crc(LOG + b"more\n", entry.size) == entry.prefix_crc
    assert savedentry.prefix_crc(LOG[:-1], entry.size) is None


@pytest.mark.parametrize("damage", [
    lambda b: b[:-1],  # cut
    lambda b: b[:-2] + bytes([b[-2] ^ 1]) + b[-1:],  # a payload byte changed
    lambda b: b.replace(b"gasp-test/1", b"gasp-else/1", 1),  # another kind of entry
    lambda b: b.replace(b" py", b" pz", 1),  # another Python wrote it
    lambda b: b"",
])
def test_a_damaged_or_foreign_entry_is_none(damage):
    assert savedentry.decode(damage(_entry()), MAGIC, 3) is None


def test_a_payload_of_another_shape_is_none():
    assert savedentry.decode(_entry(), MAGIC, 4) is None
    with pytest.raises(ValueError):
        savedentry.encode(MAGIC, 0, 0, 0, (object(),))
