"""The saved-index format's deltas: an entry grown from a loaded one is saved as what its
new lines add, loading resolves the chain to exactly what a whole entry holds, chains
are bounded, pruning keeps every base a kept entry needs, and any damage to any file
of a chain makes it no entry."""

from __future__ import annotations

import os
import random
import time
from array import array

import pytest

from git_gasp.conformance.saved import index_files
from git_gasp.conformance.saved.index_files import Entry, IndexFiles
from git_gasp.conformance.saved.lineindex import (
    LINE_MASK,
    Keys,
    Offsets,
    candidates,
    copy_offsets,
    flat,
    key,
    merged,
    offset_words,
)

TEXTS = [f"id-{i}" for i in range(40)]


def _files(tmp_path, keep: int = 4) -> IndexFiles:
    return IndexFiles(str(tmp_path), magic=b"gasp-test", prefix="t", suffix="idx",
                      rules="abc123", fmt=7, keep=keep, extras=1)


def _blob(n: int) -> bytes:
    return b"%040x" % (0xB10B0000 + n)


def _new_keys(rng: random.Random, first: int, last: int) -> list[int]:
    """Keys of lines first..last: one or two facts per line."""
    out = []
    for line in range(first, last + 1):
        for _ in range(rng.randint(1, 2)):
            out.append(key(rng.randint(1, 6), rng.choice(TEXTS)) | line)
    return out


def _grown(entry: Entry, rng: random.Random, lines: int, extra: bytes) -> Entry:
    """`entry` with `lines` more lines (10 bytes each), as an index grows."""
    first = entry.line_count + 1
    offsets = array("Q", entry.offsets)
    offsets.extend(range(entry.length, entry.length + 10 * lines, 10))
    keys = merged(entry.keys, _new_keys(rng, first, entry.line_count + lines))
    return Entry(entry.length + 10 * lines, entry.line_count + lines, keys, offsets, [extra])


def _same(a: Entry, b: Entry) -> None:
    assert (a.length, a.line_count, list(a.offsets), a.extras) == \
        (b.length, b.line_count, list(b.offsets), b.extras)
    assert flat(a.keys) == flat(b.keys)
    for table in range(1, 7):
        for text in TEXTS:
            assert list(candidates(a.keys, table, text)) == list(candidates(b.keys, table, text))


def _header(path) -> list[bytes]:
    return open(path, "rb").readline().split()


def _chain(tmp_path, steps: int, *, lines: int = 3, seed: int = 1, keep: int = 4,
           start: int = 2000):
    """A whole entry then `steps` saves, each loaded and grown: (files, expected entries)."""
    rng = random.Random(seed)
    files = _files(tmp_path, keep)
    entry = _grown(Entry(0, 0, array("Q"), array("Q"), [b""]), rng, start, b"r0")
    assert files.save(_blob(0), entry)
    expected = [entry]
    for n in range(1, steps + 1):
        loaded = files.load(_blob(n - 1))
        assert loaded is not None
        _same(loaded, expected[-1])
        entry = _grown(loaded, rng, lines, b"records %d" % n)
        assert files.save(_blob(n), entry)
        expected.append(entry)
    return files, expected


def test_candidates_over_runs_are_those_of_the_merged_array():
    rng = random.Random(5)
    runs, keys = [], []
    for first, last in ((1, 100), (101, 130), (131, 131), (132, 170)):
        new = _new_keys(rng, first, last)
        keys += new
        runs.append(array("Q", sorted(new)))
    whole = array("Q", sorted(keys))
    split = Keys(runs)
    assert flat(split) == whole and len(split) == len(whole) and split == whole
    for table in range(1, 7):
        for text in TEXTS:
            found = list(candidates(split, table, text))
            assert found == list(candidates(whole, table, text)) == sorted(found)
    assert not Keys([array("Q")]) and list(candidates(Keys([]), 1, "x")) == []
    assert all(k & LINE_MASK for k in flat(merged(whole, [key(1, "x") | 200])))


def test_a_grown_entry_is_saved_as_a_delta_and_loads_as_the_whole(tmp_path):
    files, expected = _chain(tmp_path, 5)
    whole = os.path.getsize(files.path(_blob(0)))
    for n in range(1, 6):
        head = _header(files.path(_blob(n)))
        assert head[-5] == _blob(n - 1) and int(head[-2]) == n  # base, depth
        assert os.path.getsize(files.path(_blob(n))) < whole / 4
        _same(files.load(_blob(n)), expected[n])
    rebuilt = Entry(expected[-1].length, expected[-1].line_count, flat(expected[-1].keys),
                    expected[-1].offsets, expected[-1].extras)
    _same(files.load(_blob(5)), rebuilt)
    assert files.problem is None


def test_the_chain_is_compacted_when_deep(tmp_path, monkeypatch):
    monkeypatch.setattr(index_files, "MAX_DEPTH", 3)
    files, expected = _chain(tmp_path, 8, keep=20)
    depths = [int(_header(files.path(_blob(n)))[-2]) for n in range(9)]
    assert depths == [0, 1, 2, 3, 0, 1, 2, 3, 0]
    for n in range(9):
        _same(files.load(_blob(n)), expected[n])


def test_the_chain_is_compacted_when_its_deltas_grow_large(tmp_path):
    files, expected = _chain(tmp_path, 4, lines=8, start=150)
    heads = [_header(files.path(_blob(n))) for n in range(5)]
    assert heads[1][-5] == _blob(0) and b"-" in [h[-5] for h in heads[2:]]
    for n in range(5):
        _same(files.load(_blob(n)), expected[n])


def test_saving_a_blob_again_writes_it_against_its_own_base(tmp_path):
    files, expected = _chain(tmp_path, 2)
    loaded = files.load(_blob(2))
    again = Entry(loaded.length, loaded.line_count, merged(loaded.keys, []),
                  loaded.offsets, [b"new verdicts"])
    assert files.save(_blob(2), again)
    assert _header(files.path(_blob(2)))[-5] == _blob(1)
    _same(files.load(_blob(2)), again)


def test_a_base_saved_again_since_makes_its_deltas_no_entry(tmp_path):
    files, expected = _chain(tmp_path, 2)
    loaded = files.load(_blob(1))
    assert files.save(_blob(1), Entry(loaded.length, loaded.line_count, loaded.keys,
                                      loaded.offsets, [b"other records"]))
    assert files.load(_blob(2)) is None and files.problem is None  # superseded, not damaged


def test_pruning_keeps_every_base_a_kept_entry_needs(tmp_path):
    files, expected = _chain(tmp_path, 6, keep=2)
    names = {n for n in os.listdir(files.dir) if not n.endswith(index_files.CHECKED)}
    assert {os.path.basename(files.path(_blob(n))) for n in range(7)} == names
    for n in range(7):
        _same(files.load(_blob(n)), expected[n])
    # a whole entry of another chain: the old chain's files go once nothing kept needs them
    other = Entry(5, 1, array("Q", [key(1, "x") | 1]), array("Q", [0]), [b"x"])
    for n in (100, 101):
        files.save(_blob(n), other)
        os.utime(files.path(_blob(n)), ns=(2**62, 2**62 + n))
    files.saved.clear()
    files.prune()
    assert set(os.listdir(files.dir)) == {os.path.basename(files.path(_blob(n)))
                                          for n in (100, 101)}


# the base is big: its variant flips thousands of bytes, so it runs in the full suite only
@pytest.mark.parametrize("which", [pytest.param("base", marks=pytest.mark.slow), "middle", "delta"])
def test_any_flipped_byte_of_any_file_of_a_chain_is_no_entry(tmp_path, which):
    files, _expected = _chain(tmp_path, 2, lines=1)
    path = files.path(_blob({"base": 0, "middle": 1, "delta": 2}[which]))
    data = open(path, "rb").read()
    step = 1 if which != "base" else 7  # the base is big: every 7th byte (and the header)
    cut = data.index(b"\n") + 1
    for at in sorted(set(range(cut + 1)) | set(range(0, len(data), step))):
        for flip in (0x01, 0x80):
            with open(path, "wb") as f:
                f.write(data[:at] + bytes([data[at] ^ flip]) + data[at + 1:])
            files.problem = None
            assert files.load(_blob(2)) is None, (at, flip)
            assert files.problem == "corrupt", (at, flip)
    with open(path, "wb") as f:
        f.write(data)
    assert files.load(_blob(2)) is not None


@pytest.mark.parametrize("which", [0, 1, 2])
def test_a_truncated_or_missing_file_of_a_chain_is_no_entry(tmp_path, which):
    files, _expected = _chain(tmp_path, 2, lines=1)
    path = files.path(_blob(which))
    data = open(path, "rb").read()
    for size in sorted({0, 1, 10, len(data) // 2, len(data) - 1}):
        with open(path, "wb") as f:
            f.write(data[:size])
        files.problem = None
        assert files.load(_blob(2)) is None and files.problem == "corrupt"
    os.unlink(path)
    files.problem = None
    assert files.load(_blob(2)) is None
    assert files.problem == (None if which == 2 else "corrupt")


def test_old_format_files_are_ignored(tmp_path):
    files = _files(tmp_path)
    os.makedirs(files.dir)
    old = (b"gasp-test 6 abc123 %s 10 1 1 3 123 little\n" % _blob(0)) + bytes(19)
    with open(files.path(_blob(0)), "wb") as f:
        f.write(old)
    assert files.load(_blob(0)) is None and files.header(_blob(0)) is None


def _sums(monkeypatch) -> list[int]:
    """The lengths index_files sums (crc32) from now on."""
    sums: list[int] = []
    real = index_files.zlib.crc32
    monkeypatch.setattr(index_files.zlib, "crc32",
                        lambda data, start=0: sums.append(len(data)) or real(data, start))
    return sums


def test_an_unchanged_whole_entry_is_not_summed_again(tmp_path, monkeypatch):
    real = index_files._time_ns
    monkeypatch.setattr(index_files, "_time_ns", lambda: real() + 10 * 10**9)  # not recent
    files, expected = _chain(tmp_path, 3)
    whole = os.path.getsize(files.path(_blob(0)))
    # the whole entry is vouched for by its note when loaded as the head: both stamped
    assert _header(files.path(_blob(1)))[-1] != b"-"
    assert _header(files.path(_blob(2)))[-1] != b"-"
    sums = _sums(monkeypatch)
    _same(files.load(_blob(3)), expected[3])
    assert max(sums) < whole / 4  # only the deltas were summed
    # any write to the whole entry changes its stamp: summed again, damage found
    path = files.path(_blob(0))
    data = open(path, "rb").read()
    for changed in (data, data[:-9] + bytes([data[-9] ^ 1]) + data[-8:]):
        time.sleep(0.03)  # past the clock's granularity (the stamp's margin, in real use)
        with open(path, "wb") as f:
            f.write(changed)
        sums.clear()
        loaded = files.load(_blob(3))
        assert max(sums) > whole / 2
        if changed == data:
            _same(loaded, expected[3])
        else:
            assert loaded is None and files.problem == "corrupt"


def test_a_whole_entry_loaded_as_the_head_is_summed_once(tmp_path, monkeypatch):
    real = index_files._time_ns
    monkeypatch.setattr(index_files, "_time_ns", lambda: real() + 10 * 10**9)  # not recent
    files, expected = _chain(tmp_path, 0)
    path = files.path(_blob(0))
    whole = os.path.getsize(path)
    sums = _sums(monkeypatch)
    for _ in range(3):
        sums.clear()
        _same(files.load(_blob(0)), expected[0])
        assert os.path.exists(path + index_files.CHECKED)
    assert max(sums, default=0) < whole / 4  # the note vouched for it: not summed again
    data = open(path, "rb").read()
    time.sleep(0.03)
    with open(path, "wb") as f:  # any write changes its stamp: summed, the damage found
        f.write(data[:-9] + bytes([data[-9] ^ 1]) + data[-8:])
    sums.clear()
    assert files.load(_blob(0)) is None and files.problem == "corrupt"
    assert max(sums) > whole / 2
    with open(path + index_files.CHECKED, "wb") as f:  # a forged note names another stamp
        f.write(b"1.2.3.4")
    sums.clear()
    assert files.load(_blob(0)) is None and max(sums) > whole / 2


def test_a_pruned_entry_takes_its_note_with_it(tmp_path, monkeypatch):
    real = index_files._time_ns
    monkeypatch.setattr(index_files, "_time_ns", lambda: real() + 10 * 10**9)
    files, _ = _chain(tmp_path, 0)
    files.load(_blob(0))
    note = files.path(_blob(0)) + index_files.CHECKED
    assert os.path.exists(note)
    time.sleep(0.03)
    later = _files(tmp_path, 1)  # another run, keeping one entry: a whole one of its own
    other = _grown(Entry(0, 0, array("Q"), array("Q"), [b""]), random.Random(2), 50, b"o")
    assert later.save(_blob(9), other)
    assert not os.path.exists(files.path(_blob(0))) and not os.path.exists(note)


def test_a_recently_changed_whole_entry_is_always_summed(tmp_path, monkeypatch):
    files, expected = _chain(tmp_path, 3)
    assert {_header(files.path(_blob(n)))[-1] for n in range(4)} == {b"-"}
    sums = _sums(monkeypatch)
    _same(files.load(_blob(3)), expected[3])
    assert max(sums) > os.path.getsize(files.path(_blob(0))) / 2


def test_a_loaded_chain_is_two_runs_however_long(tmp_path):
    files, expected = _chain(tmp_path, 6)
    loaded = files.load(_blob(6))
    assert len(loaded.keys.runs) == 2
    _same(loaded, expected[6])
    for n in range(6, 2, -1):  # saved again over a middle delta: its keys picked by line
        again = files.load(_blob(n))
        fresh = Entry(again.length, again.line_count, merged(again.keys, []), again.offsets,
                      [b"again %d" % n])
        assert files.save(_blob(n), fresh)
        assert _header(files.path(_blob(n)))[-5] == _blob(n - 1)
        _same(files.load(_blob(n)), fresh)


def test_a_whole_entry_read_as_the_head_is_never_touched(tmp_path):
    """Loads touch its note, not the file: the file ages, and soon a stamp vouches for it,
    however often it is read."""
    files, expected = _chain(tmp_path, 0)
    path = files.path(_blob(0))
    before = os.stat(path)
    for _ in range(3):
        time.sleep(0.01)
        _same(files.load(_blob(0)), expected[0])
    after = os.stat(path)
    assert (after.st_mtime_ns, after.st_ctime_ns) == (before.st_mtime_ns, before.st_ctime_ns)
    assert os.path.getmtime(path + index_files.CHECKED) >= after.st_mtime


def test_mapped_files_read_as_read_ones(tmp_path, monkeypatch):
    """Every file mapped (as big ones are): chains, compaction over the mapped run and a
    flipped byte give what reading them gives."""
    monkeypatch.setattr(index_files, "_MAP_FROM", 0)
    files, expected = _chain(tmp_path, index_files.MAX_DEPTH + 2)  # past one compaction
    for n, entry in enumerate(expected):
        loaded = files.load(_blob(n))
        if loaded is not None:  # pruned ones are gone
            _same(loaded, entry)
            assert flat(loaded.keys) == flat(entry.keys)
    path = files.path(_blob(len(expected) - 1))
    data = bytearray(open(path, "rb").read())
    data[-3] ^= 0x10
    with open(path, "wb") as f:
        f.write(bytes(data))
    assert files.load(_blob(len(expected) - 1)) is None and files.problem == "corrupt"


def test_offsets_read_in_place_act_as_an_array():
    words = array("Q", [0, 10, 25, 40])
    offsets = Offsets(memoryview(words.tobytes()).cast("Q"))
    plain = array("Q", words)
    for more in ([], [55], [60, 71]):
        offsets.extend(more)
        plain.extend(more)
        assert len(offsets) == len(plain) and list(offsets) == list(plain)
        assert [offsets[i] for i in range(-len(plain), len(plain))] == \
            [plain[i] for i in range(-len(plain), len(plain))]
        for start in range(len(plain) + 1):
            assert offset_words(offsets, start).tolist() == plain[start:].tolist()
    kept = copy_offsets(offsets)
    offsets.append(99)
    assert list(kept) == list(plain) and offsets[-1] == 99
    for bad in (len(offsets), -len(offsets) - 1):
        try:
            offsets[bad]
        except IndexError:
            continue
        raise AssertionError(f"index {bad} was accepted")
