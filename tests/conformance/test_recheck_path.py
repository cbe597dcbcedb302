"""A re-check stays in one process: the cache probe that decides it, and the answers
it gives with and without the fork."""

from __future__ import annotations

from pathlib import Path

import pytest

from git_gasp.conformance.history.cache import walk_is_short
from git_gasp.odb.gitdirs import locate
from tests.testing.events import goal_pair
from tests.testing.repos import init_agent
from tests.testing.run import gasp, git, out

pytestmark = pytest.mark.slow  # keeps the fast loop under a minute


def _probe(root: Path) -> bool:
    dirs = locate(str(root))
    assert dirs is not None
    head = dirs.head()
    assert isinstance(head, bytes)
    return walk_is_short(dirs.commondir(), dirs.objects_dir(), head)


def _append_commit(root: Path, n: int) -> None:
    with open(root / "state" / "events.jsonl", "ab") as f:
        f.write(goal_pair(n))
    git(root, "add", "state/events.jsonl")
    git(root, "commit", "-q", "--no-verify", "-m", f"goal {n}")


def test_the_probe_says_short_only_for_a_checked_head_or_one_commit_past_it(
        tmp_path: Path) -> None:
    root = init_agent(tmp_path)
    assert not _probe(root)  # no cache yet
    assert gasp(root, "check").returncode == 0
    assert _probe(root)  # HEAD itself is verified
    _append_commit(root, 1)
    assert _probe(root)  # its parent is
    _append_commit(root, 2)
    assert not _probe(root)  # two commits to walk
    git(root, "gc", "-q")  # HEAD packed: its parents are not read, the guess is "long"
    assert not _probe(root)


def test_a_corrupt_cache_or_head_object_makes_the_probe_say_long(tmp_path: Path) -> None:
    root = init_agent(tmp_path)
    assert gasp(root, "check").returncode == 0
    _append_commit(root, 1)
    head = git(root, "rev-parse", "HEAD").strip()
    obj = root / ".git" / "objects" / head[:2] / head[2:]
    obj.chmod(0o644)
    obj.write_bytes(b"not zlib")
    assert not _probe(root)


def test_a_re_check_gives_the_same_report_in_one_process_or_two(tmp_path: Path) -> None:
    root = init_agent(tmp_path)
    assert gasp(root, "check").returncode == 0
    _append_commit(root, 1)
    git(root, "branch", "keep")
    one = gasp(root, "check")  # the walk is short: no fork
    git(root, "reset", "-q", "--hard", "HEAD~1")
    assert gasp(root, "check").returncode == 0
    git(root, "reset", "-q", "--hard", "keep")
    for cache in (root / ".git" / "gasp").glob("check4-*.cache"):
        cache.unlink()  # now the walk is long: forked
    two = gasp(root, "check")
    assert one.returncode == two.returncode == 0, out(one) + out(two)

    def lines(proc) -> list[bytes]:  # all but check 4's note on how much it walked
        return [ln for ln in proc.stdout.splitlines() if b"walked" not in ln]
    assert lines(one) == lines(two) and len(lines(one)) == 8
    assert b"1 commit walked" in one.stdout and b"verified before" not in two.stdout


def test_the_walk_forks_only_when_the_cache_does_not_cover_head(tmp_path: Path,
                                                               monkeypatch) -> None:
    from git_gasp.conformance import checks, forked
    from git_gasp.conformance.checks import run_all
    from git_gasp.store.agent import load_agent

    asked: list[bool] = []
    real = forked.Forked

    class Spy(real):
        def __init__(self, fn, *, fork: bool = True) -> None:
            asked.append(fork)
            super().__init__(fn, fork=fork)

    monkeypatch.setattr(checks, "Forked", Spy)  # where check 4 looks it up
    root = init_agent(tmp_path)
    monkeypatch.chdir(root)
    for expect in (True, False):  # cold (no cache), then a re-check
        results = run_all(load_agent(root))
        assert all(r.passed for r in results), [r for r in results if not r.passed]
        assert asked[-1] is expect
    assert run_all(load_agent(root), use_cache=False) and asked[-1] is True


def test_a_broken_config_fails_every_check_and_a_repaired_one_passes(tmp_path: Path) -> None:
    root = init_agent(tmp_path)
    config = root / ".agent" / "config.toml"
    good = config.read_bytes()
    assert gasp(root, "check").returncode == 0
    config.write_bytes(good + b"\n[broken\n")
    for _ in range(2):
        bad = gasp(root, "check")
        assert bad.returncode == 1
        assert b"executor binding does not parse" in bad.stdout
        assert b".agent/config.toml" in bad.stdout
    config.write_bytes(good + b"\n[mcp]\nwrite = 'yes'\n")
    bad = gasp(root, "check")
    assert bad.returncode == 1 and b"mcp.write = 'yes' is not true or false" in bad.stdout
    config.write_bytes(good)
    assert gasp(root, "check").returncode == 0
