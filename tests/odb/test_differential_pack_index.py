"""odb against git on pack indexes that lie: a packed agent repository (``git gc``) whose
``.idx`` is corrupted one way at a time is read by git (``git rev-list --objects``, which
opens every pack index as ``load_idx`` validates it) and checked by the installed `git
gasp check`: where git refuses the index, check 4 fails naming the ``.idx`` (never an
internal error, never "conformant"); where git reads it, the verdict is unchanged."""

from __future__ import annotations

import json
import os
import struct
import subprocess
from pathlib import Path

import pytest

from git_gasp.odb.packs import PackFiles
from tests.testing.hermetic import isolate
from tests.testing.repos import copy_repo
from tests.testing.run import commit_all, gasp, git, out

_FANOUT = 8  # the fan-out table's offset in a version-2 index


def _fanout(data: bytearray) -> list[int]:
    return list(struct.unpack_from(">256I", data, _FANOUT))


def _set_fanout(data: bytearray, fanout: list[int]) -> None:
    struct.pack_into(">256I", data, _FANOUT, *fanout)


def _non_monotonic(data: bytearray) -> None:
    fanout = _fanout(data)
    fanout[0] = fanout[255]  # the first count past every later one (git: "bad object HEAD")
    _set_fanout(data, fanout)


def _count_plus_one(data: bytearray) -> None:
    fanout = _fanout(data)
    fanout[255] += 1  # more objects than the file has room for
    _set_fanout(data, fanout)


def _count_minus_one(data: bytearray) -> None:
    fanout = _fanout(data)
    n = fanout[255] - 1  # fits the file (the large-offset table's slack), not the pack
    _set_fanout(data, [min(c, n) for c in fanout])


def _cut_short(data: bytearray) -> None:
    del data[-30:]


def _version_three(data: bytearray) -> None:
    data[4:8] = struct.pack(">I", 3)


def _own_checksum(data: bytearray) -> None:
    data[-1] ^= 0xFF  # what `git verify-pack` checks; git reads such an index


def _untouched(data: bytearray) -> None:
    pass  # the control


CASES = {"non-monotonic fanout": (_non_monotonic, True),
         "object count one more": (_count_plus_one, True),
         "object count one less": (_count_minus_one, True),
         "cut short": (_cut_short, True),
         "version 3": (_version_three, True),
         "index checksum wrong": (_own_checksum, False),
         "untouched": (_untouched, False)}


@pytest.fixture(scope="module")
def packed(tmp_path_factory, agent_template) -> Path:
    """The agent template with a few recorded commits, packed by ``git gc``."""
    repo = copy_repo(agent_template, tmp_path_factory.mktemp("packed") / "agent")
    with pytest.MonkeyPatch.context() as mp:
        isolate(mp, tmp_path_factory.mktemp("packed-home"))
        for i in range(8):
            assert gasp(repo, "record", "goal", "--title", f"goal {i}").returncode == 0
            commit_all(repo, f"goal {i}")
        git(repo, "gc", "-q")
    return repo


def _git_refuses(repo: Path) -> bool:
    proc = subprocess.run(["git", "rev-list", "--objects", "HEAD"], cwd=repo,
                          capture_output=True)
    return proc.returncode != 0 or b".idx" in proc.stderr or b"pack" in proc.stderr


@pytest.mark.slow  # over half a second: out of the fast loop
@pytest.mark.parametrize("case", sorted(CASES))
def test_check_4_fails_naming_an_index_git_refuses(packed, tmp_path, case):
    corrupt, refused_by_git = CASES[case]
    repo = copy_repo(packed, tmp_path / "agent")
    (idx,) = (repo / ".git" / "objects" / "pack").glob("pack-*.idx")
    data = bytearray(idx.read_bytes())
    corrupt(data)
    idx.chmod(0o644)
    idx.write_bytes(bytes(data))
    assert _git_refuses(repo) is refused_by_git, case  # the cases mean what they say
    files = PackFiles.for_objects_dir(str(repo / ".git" / "objects"))
    try:
        assert bool(files.refused) is refused_by_git, files.refused
    finally:
        files.close()
    for args in (("check", "--no-cache"), ("check",)):  # with the cache written, too
        proc = gasp(repo, *args)
        text = out(proc)
        assert "internal error" not in text and "Traceback" not in text, text
        if refused_by_git:
            assert proc.returncode == 1, text
            assert "FAIL 4 append-only in git" in text, text
            assert f"{idx}: pack index refused" in text, text
        else:
            assert proc.returncode == 0, text


def test_an_index_refused_after_the_cache_was_written_still_fails(packed, tmp_path):
    """A warm check-4 cache walks no commit, so reads no object: the index is still
    validated on every check."""
    repo = copy_repo(packed, tmp_path / "agent")
    assert gasp(repo, "check").returncode == 0
    (idx,) = (repo / ".git" / "objects" / "pack").glob("pack-*.idx")
    data = bytearray(idx.read_bytes())
    _non_monotonic(data)
    idx.chmod(0o644)
    idx.write_bytes(bytes(data))
    proc = gasp(repo, "check", "--json")
    assert proc.returncode == 1, out(proc)
    check4 = json.loads(proc.stdout)["checks"][3]
    assert [f["path"] for f in check4["failures"]] == [str(idx)]
    assert "non-monotonic index" in check4["failures"][0]["message"]


@pytest.mark.parametrize("kind", ["link", "fifo"])
def test_an_index_that_is_a_link_or_a_fifo_fails_check_4_and_hangs_nothing(packed, tmp_path,
                                                                            kind):
    """Where git follows a link (and waits on a FIFO), check 4 reads no index through a
    link and never waits: the index fails, named (a deliberate difference from git)."""
    repo = copy_repo(packed, tmp_path / "agent")
    (idx,) = (repo / ".git" / "objects" / "pack").glob("pack-*.idx")
    moved = tmp_path / "elsewhere.idx"
    idx.rename(moved)
    if kind == "link":
        idx.symlink_to(moved)
    else:
        os.mkfifo(idx)
    proc = subprocess.run(["git", "gasp", "check", "--no-cache"], cwd=repo,
                          capture_output=True, timeout=120)
    text = out(proc)
    assert proc.returncode == 1 and "internal error" not in text, text
    assert f"{idx}: pack index refused: a symbolic link or not a regular file" in text, text
