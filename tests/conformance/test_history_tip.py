"""The check-4 cache keeps the small objects read at the verified tip (``.tip``): a
re-check after one commit on a packed history compares it with its parent from them,
reading no pack (dulwich's pack reader is not imported), with the same verdicts; a tip
file whose objects do not hash to their ids is not used."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from git_gasp.conformance.history.cache import VerifiedCache
from git_gasp.conformance.history.check import check_history
from tests.testing.run import commit_all, git

LOG = Path("state/events.jsonl")
RECHECK = """
import sys
from git_gasp.conformance.history.check import check_history
r = check_history(sys.argv[1])
print(r.commits_walked, len(r.failures), "dulwich.pack" in sys.modules)
"""


def _packed_history(root: Path, commits: int = 6) -> None:
    git(root, "init", "-q", "-b", "main")
    (root / "state").mkdir()
    for i in range(commits):
        with open(root / LOG, "ab") as f:
            f.write(b'{"n":%d}\n' % i)
        commit_all(root, f"c{i}")
    git(root, "gc", "-q", "--aggressive")
    assert not check_history(root).failures  # the cache and its tip written


def _recheck(root: Path) -> list[str]:
    proc = subprocess.run([sys.executable, "-c", RECHECK, str(root)], capture_output=True,
                          text=True)
    return proc.stdout.split() or [proc.stderr]


def _tip_file(root: Path) -> Path:
    (tip,) = (root / ".git" / "gasp").glob("check4-*.tip")
    return tip


def test_a_recheck_after_one_commit_reads_no_pack(tmp_path: Path) -> None:
    _packed_history(tmp_path)
    with open(tmp_path / LOG, "ab") as f:
        f.write(b'{"n":99}\n')
    commit_all(tmp_path, "one more")
    assert _recheck(tmp_path) == ["1", "0", "False"]


def test_a_rewritten_log_is_still_caught_from_the_tip_objects(tmp_path: Path) -> None:
    _packed_history(tmp_path)
    (tmp_path / LOG).write_bytes(b'{"n":0}\n{"n":"rewritten"}\n')
    commit_all(tmp_path, "rewrite")
    walked, failures, _packs = _recheck(tmp_path)
    assert (walked, failures) == ("1", "1")


def test_tip_objects_that_do_not_hash_to_their_ids_are_not_used(tmp_path: Path) -> None:
    _packed_history(tmp_path)
    tip = _tip_file(tmp_path)
    data = tip.read_bytes()
    assert data.count(b" 2 ") >= 2  # the root tree and state/ (type 2) are kept
    tip.write_bytes(data.replace(b"events.jsonl", b"events.jsonX"))
    cache = VerifiedCache(str(tmp_path / ".git"), b"", frozenset())
    cache.load()
    assert cache.commits and cache.tip_objects == {}
    with open(tmp_path / LOG, "ab") as f:
        f.write(b'{"n":99}\n')
    commit_all(tmp_path, "one more")
    assert _recheck(tmp_path) == ["1", "0", "True"]  # read from the packs instead


def test_a_commit_on_an_earlier_tip_after_a_reset_reads_no_pack(tmp_path: Path) -> None:
    _packed_history(tmp_path)
    for n in (99, 100):  # the second commit is made on the first one's parent
        with open(tmp_path / LOG, "ab") as f:
            f.write(b'{"n":%d}\n' % n)
        commit_all(tmp_path, f"one more {n}")
        assert _recheck(tmp_path) == ["1", "0", "False"]
        git(tmp_path, "reset", "-q", "--hard", "HEAD~1")
