"""The guard's proved extensions, kept for check 4 (`conformance.proven`)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from git_gasp.conformance.history import proven
from git_gasp.conformance.history.proven import KEEP, load_extensions, record_extension


def blob(n: int, width: int = 40) -> bytes:
    return b"%0*x" % (width, n)


@pytest.fixture
def common(tmp_path: Path) -> str:
    (tmp_path / "objects").mkdir()  # a git dir: gasp/ does not exist yet
    return str(tmp_path)


def test_round_trip(common):
    assert load_extensions(common) == set()
    record_extension(common, blob(1), 10, blob(2))
    record_extension(common, blob(2), 25, blob(3))
    record_extension(common, blob(1), 10, blob(2))  # again: kept once
    assert load_extensions(common) == {(blob(1), blob(2)), (blob(2), blob(3))}
    record_extension(common, blob(7, 64), 5, blob(8, 64))  # sha256 ids
    assert (blob(7, 64), blob(8, 64)) in load_extensions(common)
    text = Path(proven.path_of(common)).read_bytes()
    assert text.count(b"\n") == 4 and text.startswith(b"gasp-proven-extensions 1 ")


@pytest.mark.parametrize("damage", ["garbage", "flipped", "truncated", "version", "empty",
                                    "bad line", "too big"])
def test_a_damaged_file_reads_as_nothing_and_is_replaced(common, damage):
    record_extension(common, blob(1), 10, blob(2))
    path = Path(proven.path_of(common))
    data = path.read_bytes()
    if damage == "garbage":
        data = b"\x00\xff garbage\n" * 20
    elif damage == "flipped":  # one byte of the body: the crc catches it
        data = data[:-5] + bytes([data[-5] ^ 1]) + data[-4:]
    elif damage == "truncated":
        data = data[:-7]
    elif damage == "version":
        data = data.replace(b"extensions 1 ", b"extensions 9 ", 1)
    elif damage == "empty":
        data = b""
    elif damage == "bad line":  # right crc, wrong content
        import zlib

        body = b"%s 10 %s\nnot a pair\n" % (blob(1), blob(2))
        data = b"gasp-proven-extensions 1 %08x\n" % zlib.crc32(body) + body
    else:
        data = data + b"x" * (proven._LIMIT + 1)
    path.write_bytes(data)
    assert load_extensions(common) == set()
    record_extension(common, blob(3), 1, blob(4))
    assert load_extensions(common) == {(blob(3), blob(4))}


def test_the_file_is_bounded_and_keeps_the_newest(common):
    for n in range(KEEP + 40):
        record_extension(common, blob(2 * n), n, blob(2 * n + 1))
    pairs = load_extensions(common)
    assert len(pairs) == KEEP
    assert (blob(0), blob(1)) not in pairs
    newest = KEEP + 39
    assert (blob(2 * newest), blob(2 * newest + 1)) in pairs
    assert os.path.getsize(proven.path_of(common)) <= proven._LIMIT
    long_ids = blob(1, 64), blob(2, 64)
    for _ in range(3):
        record_extension(common, long_ids[0], 2**62, long_ids[1])
    assert os.path.getsize(proven.path_of(common)) <= proven._LIMIT


def test_recording_never_raises(tmp_path, common):
    record_extension(common, b"not hex", 1, blob(2))  # refused quietly
    record_extension(common, blob(1), -1, blob(2))
    record_extension(common, blob(1), 1, blob(2, 64))  # mixed id lengths
    record_extension(common, "str", 1, None)  # type: ignore[arg-type]
    assert load_extensions(common) == set()
    as_file = tmp_path / "plain-file"
    as_file.write_text("x")
    record_extension(str(as_file), blob(1), 1, blob(2))  # no directory there
    assert load_extensions(str(as_file)) == set()
    gasp = Path(common) / "gasp"
    gasp.mkdir()
    elsewhere = tmp_path / "elsewhere"
    os.symlink(elsewhere, gasp / proven.NAME)  # a link where the file goes: not followed
    record_extension(common, blob(1), 1, blob(2))
    assert not elsewhere.exists()
