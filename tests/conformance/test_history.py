"""Check 4 (append-only-in-git): the DAG walker, its cache, and the pure rules.

Every history here is built with real git in a temp dir.
"""

from __future__ import annotations

import hashlib
import os
import pathlib
import stat

import pytest
from hypothesis import given
from hypothesis import strategies as st

from git_gasp.base.errors import NotAGitRepo
from git_gasp.conformance.history.check import HistoryResult, check_history
from git_gasp.odb.blobid import extends_by_hash
from git_gasp.odb.repo import open_repo
from git_gasp.protocol.appendonly import (
    LOG_PATH,
    common_prefix_len,
    extension_error,
    is_append_only,
    merge_error,
)
from tests.testing.run import commit_all, git

LOG = LOG_PATH.decode()


# --------------------------------------------------------------------------- helpers


def ev(n: int) -> bytes:
    """A canonical-looking event line."""
    return (
        b'{"id":"event_%04d","schema_version":1,"ts_ms":%d,"actor":{"kind":"agent","id":"t"},'
        b'"kind":"observation.created","payload":{"n":%d},"causation_id":null,'
        b'"correlation_id":null}\n' % (n, 1739000000000 + n, n)
    )


def write(root: pathlib.Path, rel: str, data: bytes) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def append(root: pathlib.Path, rel: str, data: bytes) -> None:
    path = root / rel
    write(root, rel, (path.read_bytes() if path.exists() else b"") + data)


def new_repo(tmp_path: pathlib.Path, name: str = "agent") -> pathlib.Path:
    repo = tmp_path / name
    repo.mkdir()
    git(repo, "init", "-q")
    return repo


@pytest.fixture
def repo(tmp_path) -> pathlib.Path:
    """An agent repo whose first commit holds two events."""
    root = new_repo(tmp_path)
    write(root, LOG, ev(1) + ev(2))
    commit_all(root, "first events")
    return root


def check(root: pathlib.Path, **kw) -> HistoryResult:
    """check_history without the cache, so every test sees a cold walk."""
    kw.setdefault("use_cache", False)
    return check_history(root, **kw)


def failing_commits(result: HistoryResult) -> set[str | None]:
    return {f.commit for f in result.failures}


def merge_with(root: pathlib.Path, branches: list[str], rel: str, content: bytes) -> str:
    """Merge `branches` into the current branch, recording `content` as the result."""
    git(root, "merge", "-q", "--no-ff", "--no-commit", "-s", "ours", *branches)
    write(root, rel, content)
    return commit_all(root, "merge " + " ".join(branches))


def rev(root: pathlib.Path, name: str = "HEAD") -> str:
    return git(root, "rev-parse", name).strip()


# --------------------------------------------------------------------------- pure rules


def test_is_append_only_paths():
    assert is_append_only(b"state/events.jsonl")
    assert is_append_only(b"memory/facts.jsonl")
    assert is_append_only(b"a/b/c/facts.jsonl")
    assert is_append_only(b"JOURNAL.md")
    assert is_append_only(b"journal/JOURNAL.md")
    assert not is_append_only(b"memory/active_memory.md")
    assert not is_append_only(b"other/events.jsonl")
    assert is_append_only(b"notes/log.txt", frozenset({b"notes/log.txt"}))


@pytest.mark.parametrize(
    ("old", "new", "reason"),
    [
        (b"a\nb\n", b"a\nb\nc\n", None),
        (b"", b"anything", None),
        (b"a\nb", b"a\nb\nc\n", None),
        (b"a\nb", b"a\nb", None),
        (b"a\nb\nc\n", b"a\nB\nc\nd\n", "line 2 was modified in place"),
        (b"a\nb\nc\n", b"a\nb\n", "line 3 was deleted (file shrank)"),
        (b"a\nb\nc\n", b"a\nb\nc", "line 3 was truncated (file shrank)"),
        (b"a\nb\nc\nd", b"a\nb\nc\nde\n", "the unterminated last line 4 was extended"),
    ],
)
def test_extension_error(old, new, reason):
    assert extension_error(old, new) == reason


def test_merge_error():
    assert merge_error(b"a\nx\n", b"a\ny\nx\n") is None
    assert merge_error(b"a\nx", b"a\nx\ny\n") is None  # terminator is not compared
    assert merge_error(b"a\nx\nz\n", b"a\ny\nx\n") is not None
    assert merge_error(b"a\nx\ny\n", b"a\ny\nx\n") is None  # criss-cross order is fine
    assert "line 3" in merge_error(b"a\nx\nx\n", b"a\nx\ny\n")  # a copy was dropped


@given(st.binary(max_size=64), st.binary(max_size=64))
def test_hash_fast_path_agrees_with_the_rule(old, new):
    """The sha1-of-prefix proof accepts exactly what extension_error accepts."""
    old_id = hashlib.sha1(b"blob %d\x00" % len(old) + old).hexdigest().encode()
    assert extends_by_hash(old_id, len(old), new) == (extension_error(old, new) is None)
    assert extends_by_hash(old_id, len(old), old + b"\n" + new)


# --------------------------------------------------------------------------- one parent


def test_pure_append_passes(repo):
    for n in range(3, 8):
        append(repo, LOG, ev(n))
        commit_all(repo, f"event {n}")
    result = check(repo)
    assert result.failures == []
    assert result.commits_walked == 6


def test_in_place_edit_fails_naming_commit_path_and_line(repo):
    append(repo, LOG, ev(3))
    commit_all(repo, "append")
    write(repo, LOG, ev(1) + ev(2).replace(b'"n":2', b'"n":20') + ev(3))
    bad = commit_all(repo, "rewrite event 2")
    append(repo, LOG, ev(4))
    commit_all(repo, "append after the edit")
    [failure] = check(repo).failures
    assert failure.commit == bad
    assert failure.path == LOG
    assert failure.line == 2
    assert "modified in place" in failure.message


def test_deleted_line_fails(repo):
    write(repo, LOG, ev(1))
    bad = commit_all(repo, "drop event 2")
    [failure] = check(repo).failures
    assert (failure.commit, failure.line) == (bad, 2)
    assert "deleted" in failure.message


def test_log_deleted_in_history_fails(repo):
    (repo / LOG).unlink()
    bad = commit_all(repo, "delete the log")
    write(repo, LOG, ev(9))
    commit_all(repo, "start a new log")
    result = check(repo)
    assert [(f.commit, f.path) for f in result.failures] == [(bad, LOG)]
    assert "deleted" in result.failures[0].message


def test_facts_deleted_and_journal_rewritten_fail(repo):
    write(repo, "memory/facts.jsonl", b'{"id":"fact_1"}\n')
    write(repo, "journal/JOURNAL.md", b"# Journal\n\n## run 1\nok\n")
    commit_all(repo, "facts and journal")
    (repo / "memory/facts.jsonl").unlink()
    deleted = commit_all(repo, "drop facts")
    write(repo, "journal/JOURNAL.md", b"# Journal\n\n## run 1 (redone)\nok\n")
    rewritten = commit_all(repo, "rewrite journal")
    found = {(f.commit, f.path) for f in check(repo).failures}
    assert found == {(deleted, "memory/facts.jsonl"), (rewritten, "journal/JOURNAL.md")}


def test_extending_an_unterminated_last_line_fails(repo):
    append(repo, LOG, b'{"id":"event_x"')
    commit_all(repo, "torn line")
    append(repo, LOG, b',"more":1}\n')
    bad = commit_all(repo, "extend the torn line")
    [failure] = check(repo).failures
    assert (failure.commit, failure.line) == (bad, 3)
    assert "unterminated last line 3" in failure.message


def test_terminating_an_unterminated_line_then_appending_passes(repo):
    append(repo, LOG, b'{"id":"event_x"}')
    commit_all(repo, "unterminated line")
    append(repo, LOG, b"\n" + ev(4))
    commit_all(repo, "terminate and append")
    assert check(repo).failures == []


def test_adding_a_new_append_only_file_passes(repo):
    write(repo, "memory/facts.jsonl", b'{"id":"fact_1"}\n')
    commit_all(repo, "first fact")
    assert check(repo).failures == []


def test_declared_path_is_append_only(repo):
    write(repo, "notes/log.txt", b"one\ntwo\n")
    commit_all(repo, "notes")
    write(repo, "notes/log.txt", b"one\n")
    bad = commit_all(repo, "shrink notes")
    assert check(repo).failures == []
    [failure] = check(repo, declared=[b"notes/log.txt"]).failures
    assert (failure.commit, failure.path) == (bad, "notes/log.txt")


def test_symlinked_log_fails(repo):
    (repo / LOG).unlink()
    write(repo, "real.jsonl", ev(1) + ev(2))
    os.symlink("../real.jsonl", repo / LOG)
    bad = commit_all(repo, "log becomes a symlink")
    failures = check(repo).failures
    assert any(f.commit == bad and "symlink" in f.message for f in failures)


def test_submodule_entries_are_skipped(repo):
    head = rev(repo)
    git(repo, "update-index", "--add", "--cacheinfo", f"160000,{head},vendor/lib")
    git(repo, "commit", "-q", "-m", "add a gitlink")
    append(repo, LOG, ev(3))
    commit_all(repo, "append")
    assert check(repo).failures == []


# --------------------------------------------------------------------------- merges


def _branchy(repo: pathlib.Path) -> tuple[bytes, bytes, bytes]:
    """main appends A, side appends B (both from the same base); return the contents."""
    base = (repo / LOG).read_bytes()
    git(repo, "branch", "side")
    append(repo, LOG, ev(10))
    commit_all(repo, "main appends")
    git(repo, "checkout", "-q", "side")
    append(repo, LOG, ev(20))
    commit_all(repo, "side appends")
    git(repo, "checkout", "-q", "main")
    return base, ev(10), ev(20)


def test_union_merge_passes(repo):
    base, ours, theirs = _branchy(repo)
    merge_with(repo, ["side"], LOG, base + ours + theirs)
    result = check(repo)
    assert result.failures == []
    assert result.commits_walked == 4


def test_merge_dropping_a_line_of_the_second_parent_fails(repo):
    base, ours, _theirs = _branchy(repo)
    side = rev(repo, "side")
    bad = merge_with(repo, ["side"], LOG, base + ours)
    [failure] = check(repo).failures
    assert (failure.commit, failure.path, failure.line) == (bad, LOG, 3)
    assert side[:12] in failure.message


def test_merge_may_order_the_concurrent_suffixes_either_way(repo):
    # Was "must extend the first parent": the merge rule is by meaning now (a
    # criss-cross merge can resolve to the second parent's order without the driver).
    base, ours, theirs = _branchy(repo)
    merge_with(repo, ["side"], LOG, base + theirs + ours)
    assert check(repo).failures == []


def test_merge_editing_the_shared_lines_fails(repo):
    base, ours, theirs = _branchy(repo)
    bad = merge_with(repo, ["side"], LOG, base.replace(b'"n":1', b'"n":7') + ours + theirs)
    [failure] = check(repo).failures
    assert (failure.commit, failure.path, failure.line) == (bad, LOG, 1)
    assert "modified in place" in failure.message


def test_merge_missing_a_parent_file_fails(repo):
    git(repo, "checkout", "-q", "-b", "side")
    write(repo, "memory/facts.jsonl", b'{"id":"fact_1"}\n')
    commit_all(repo, "side adds facts")
    git(repo, "checkout", "-q", "main")
    append(repo, LOG, ev(3))
    commit_all(repo, "main appends")
    git(repo, "merge", "-q", "--no-ff", "-s", "ours", "-m", "merge, dropping facts", "side")
    bad = rev(repo)
    [failure] = check(repo).failures
    assert (failure.commit, failure.path) == (bad, "memory/facts.jsonl")
    assert "missing from the merge result" in failure.message


def test_in_place_edit_hidden_behind_a_merge_fails(repo):
    git(repo, "checkout", "-q", "-b", "side")
    write(repo, LOG, ev(1).replace(b'"n":1', b'"n":100') + ev(2))
    hidden = commit_all(repo, "side rewrites event 1")
    git(repo, "checkout", "-q", "main")
    append(repo, LOG, ev(3))
    commit_all(repo, "main appends")
    git(repo, "merge", "-q", "--no-ff", "-s", "ours", "-m", "merge keeping main", "side")
    result = check(repo)
    assert hidden in failing_commits(result)
    [edit] = [f for f in result.failures if f.commit == hidden]
    assert (edit.path, edit.line) == (LOG, 1)


def test_octopus_union_merge_passes(repo):
    base = (repo / LOG).read_bytes()
    for name, n in (("b1", 11), ("b2", 12), ("b3", 13)):
        git(repo, "checkout", "-q", "-b", name, "main")
        append(repo, LOG, ev(n))
        commit_all(repo, f"{name} appends")
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--ff-only", "b1")
    merge_with(repo, ["b2", "b3"], LOG, base + ev(11) + ev(12) + ev(13))
    parents = git(repo, "log", "-1", "--format=%P").split()
    assert len(parents) == 3
    assert check(repo).failures == []


def test_octopus_merge_dropping_a_third_parent_line_fails(repo):
    base = (repo / LOG).read_bytes()
    for name, n in (("b1", 11), ("b2", 12)):
        git(repo, "checkout", "-q", "-b", name, "main")
        append(repo, LOG, ev(n))
        commit_all(repo, f"{name} appends")
    git(repo, "checkout", "-q", "main")
    append(repo, LOG, ev(10))
    commit_all(repo, "main appends")
    bad = merge_with(repo, ["b1", "b2"], LOG, base + ev(10) + ev(11))
    [failure] = check(repo).failures
    assert failure.commit == bad
    assert rev(repo, "b2")[:12] in failure.message


# --------------------------------------------------------------------------- agent root


def test_agent_root_in_a_subdirectory(tmp_path):
    top = new_repo(tmp_path, "mono")
    write(top, "agent/" + LOG, ev(1) + ev(2))
    write(top, "other/memory/facts.jsonl", b"a\nb\n")
    commit_all(top, "start")
    write(top, "other/memory/facts.jsonl", b"rewritten\n")  # outside the agent root
    commit_all(top, "rewrite outside")
    agent = top / "agent"
    assert open_repo(agent)[1] == b"agent"
    assert check(agent).failures == []
    write(top, "agent/" + LOG, ev(1))
    bad = commit_all(top, "shrink the agent's log")
    [failure] = check(agent).failures
    assert (failure.commit, failure.path) == (bad, "agent/" + LOG)


def test_agent_root_in_a_linked_worktree(repo, tmp_path):
    linked = tmp_path / "linked"
    git(repo, "worktree", "add", "-q", "-b", "wt", str(linked))
    append(linked, LOG, ev(3))
    commit_all(linked, "append in the worktree")
    first = check_history(linked)
    assert first.failures == []
    assert first.commits_walked == 2
    assert check_history(repo).commits_walked == 0  # the cache is shared via the common dir


def test_not_a_git_repo_raises(tmp_path):
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(NotAGitRepo, match="is not inside a git work tree"):
        check_history(plain)


def test_git_dir_itself_is_not_a_work_tree(repo):
    with pytest.raises(NotAGitRepo):
        check_history(repo / ".git")


def test_log_not_committed_fails(tmp_path):
    root = new_repo(tmp_path)
    write(root, "README.md", b"hi\n")
    commit_all(root, "no log")
    write(root, LOG, ev(1))  # present, but only in the working tree
    [failure] = check(root).failures
    assert "not committed" in failure.message
    assert failure.path == LOG


# --------------------------------------------------------------------------- working tree


def test_working_tree_append_passes(repo):
    append(repo, LOG, ev(3))
    assert check(repo).failures == []


def test_working_tree_edit_fails(repo):
    write(repo, LOG, ev(1).replace(b'"n":1', b'"n":7') + ev(2) + ev(3))
    [failure] = check(repo).failures
    assert failure.commit is None
    assert (failure.path, failure.line) == (LOG, 1)
    assert "working tree" in failure.message


def test_working_tree_deletion_fails(repo):
    write(repo, "memory/facts.jsonl", b"x\n")
    commit_all(repo, "facts")
    (repo / "memory/facts.jsonl").unlink()
    [failure] = check(repo).failures
    assert (failure.commit, failure.path) == (None, "memory/facts.jsonl")
    assert "working tree" in failure.message


# --------------------------------------------------------------------------- fail closed


def test_unborn_head_fails(tmp_path):
    root = new_repo(tmp_path)
    write(root, LOG, ev(1))
    [failure] = check(root).failures
    assert failure.message == "no commits yet: the log is not committed"


def test_shallow_clone_reports_the_boundary(repo, tmp_path):
    for n in range(3, 6):
        append(repo, LOG, ev(n))
        commit_all(repo, f"event {n}")
    clone = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{repo}", str(clone))
    result = check_history(clone)
    [failure] = result.failures
    assert failure.commit == rev(repo)
    assert "git fetch --unshallow" in failure.message
    again = check_history(clone)  # a boundary commit is never cached
    assert again.commits_walked == 1 and len(again.failures) == 1
    linked = tmp_path / "linked"
    git(clone, "worktree", "add", "-q", "-b", "wt", str(linked))
    from_worktree = check_history(linked)
    assert [f.commit for f in from_worktree.failures] == [rev(repo)]


def _loose_path(root: pathlib.Path, sha: str) -> pathlib.Path:
    return root / ".git" / "objects" / sha[:2] / sha[2:]


def test_corrupt_blob_is_a_failure_not_an_exception(repo):
    append(repo, LOG, ev(3))
    commit_all(repo, "append")
    blob = git(repo, "rev-parse", f"HEAD:{LOG}").strip()
    append(repo, LOG, ev(4))
    commit_all(repo, "append again")
    path = _loose_path(repo, blob)
    path.chmod(stat.S_IWUSR | stat.S_IRUSR)
    path.write_bytes(b"garbage, not zlib")
    result = check_history(repo)
    assert result.failures
    assert any(blob in f.message for f in result.failures)
    assert all(f.commit for f in result.failures)


def test_missing_commit_object_is_a_failure(repo):
    first = rev(repo)
    append(repo, LOG, ev(3))
    commit_all(repo, "append")
    _loose_path(repo, first).unlink()
    result = check_history(repo)
    assert first in failing_commits(result)
    assert check_history(repo).commits_walked == 2  # nothing was cached


# --------------------------------------------------------------------------- cache


def test_cache_walks_only_new_commits(repo):
    for n in range(3, 6):
        append(repo, LOG, ev(n))
        commit_all(repo, f"event {n}")
    assert check_history(repo).commits_walked == 4
    again = check_history(repo)
    assert (again.commits_walked, again.failures) == (0, [])
    append(repo, LOG, ev(6))
    commit_all(repo, "one more")
    warm = check_history(repo)
    assert (warm.commits_walked, warm.commits_cached, warm.failures) == (1, 4, [])
    assert check_history(repo, use_cache=False).commits_walked == 5


def test_cache_lives_under_the_git_dir_and_is_keyed(repo):
    check_history(repo)
    caches = sorted((repo / ".git" / "gasp").glob("check4-*.cache"))
    assert len(caches) == 1
    check_history(repo, declared=[b"notes/log.txt"])
    assert len(list((repo / ".git" / "gasp").glob("check4-*.cache"))) == 2


def test_caches_of_older_checker_versions_are_pruned_and_current_ones_kept(repo):
    from git_gasp.conformance.history.cache import CHECKER_VERSION

    check_history(repo)
    check_history(repo, declared=[b"notes/log.txt"])  # another key, same version: kept
    gasp_dir = repo / ".git" / "gasp"
    current = sorted(p.name for p in gasp_dir.glob("check4-*.cache"))
    litter = ["check4-0123456789abcdef0123.cache",  # named before the version was
              f"check4-v{CHECKER_VERSION - 1}-0123456789abcdef0123.cache"]
    for name in litter:
        (gasp_dir / name).write_bytes(b"git-gasp check4 cache\nkey old 0 0 00000000\n")
    (gasp_dir / "other.cache").write_bytes(b"not ours")
    append(repo, LOG, ev(9))
    commit_all(repo, "one more")
    assert check_history(repo).failures == []  # the save prunes
    left = sorted(p.name for p in gasp_dir.iterdir())
    assert not set(litter) & set(left)
    assert set(current) <= set(left) and "other.cache" in left
    assert all(n.startswith(f"check4-v{CHECKER_VERSION}-")
               for n in left if n.startswith("check4-"))


def test_use_cache_false_neither_reads_nor_writes(repo):
    check_history(repo, use_cache=False)
    assert not (repo / ".git" / "gasp").exists()


def test_corrupt_cache_is_ignored(repo):
    check_history(repo)
    [cache] = (repo / ".git" / "gasp").glob("check4-*.cache")
    cache.write_bytes(b"\x00\xffnot a cache\n")
    result = check_history(repo)
    assert (result.commits_walked, result.failures) == (1, [])
    assert any("corrupt" in note for note in result.notes)
    assert check_history(repo).commits_walked == 0  # rewritten


def test_a_flipped_byte_in_the_cache_is_caught(repo):
    check_history(repo)
    [cache] = (repo / ".git" / "gasp").glob("check4-*.cache")
    data = bytearray(cache.read_bytes())
    data[-10] ^= 0x01  # inside the last id: still hex-shaped, but not what was written
    cache.write_bytes(bytes(data))
    result = check_history(repo)
    assert result.commits_walked == 1 and any("corrupt" in note for note in result.notes)


def test_wrong_cached_lengths_are_harmless(repo):
    check_history(repo)
    [cache] = (repo / ".git" / "gasp").glob("check4-*.cache")
    text = cache.read_bytes()
    lines = [ln[:43] + b"7" if ln.startswith(b"L ") else ln for ln in text.split(b"\n")]
    cache.write_bytes(b"\n".join(lines))
    write(repo, LOG, ev(1))
    bad = commit_all(repo, "shrink")
    assert failing_commits(check_history(repo)) == {bad}


def test_failing_commits_and_descendants_are_never_cached(repo):
    write(repo, LOG, ev(2))
    bad = commit_all(repo, "rewrite")
    append(repo, LOG, ev(3))
    commit_all(repo, "append after")
    for walked in (3, 2):  # only the good root gets cached
        result = check_history(repo)
        assert failing_commits(result) == {bad}
        assert result.commits_walked == walked


@given(st.binary(max_size=40), st.binary(max_size=40), st.binary(max_size=40))
def test_common_prefix_len(shared, a, b):
    expected = len(shared)
    while expected < min(len(shared + a), len(shared + b)) and \
            (shared + a)[expected] == (shared + b)[expected]:
        expected += 1
    assert common_prefix_len(shared + a, shared + b) == expected


def _naive_lines(data: bytes) -> list[bytes]:
    if not data:
        return []
    return data.split(b"\n")[:-1] if data.endswith(b"\n") else data.split(b"\n")


def _naive_merge_ok(parent: bytes, result: bytes) -> bool:
    have = _naive_lines(result)
    return all(have.count(line) >= _naive_lines(parent).count(line)
               for line in _naive_lines(parent))


_lines_st = st.lists(st.sampled_from([b"a", b"b", b"ab", b""]), max_size=8)


@given(_lines_st, _lines_st, st.booleans(), st.booleans())
def test_merge_error_matches_a_naive_containment_check(p, r, p_nl, r_nl):
    parent = b"\n".join(p) + (b"\n" if p and p_nl else b"")
    result = b"\n".join(r) + (b"\n" if r and r_nl else b"")
    assert (merge_error(parent, result) is None) == _naive_merge_ok(parent, result)


def test_working_tree_edit_hidden_from_mtime_and_size_still_fails(repo):
    """The index stat shortcut (used for big files) must not trust mtime + size alone."""
    write(repo, LOG, b"".join(ev(n) for n in range(1, 400)))
    commit_all(repo, "a log big enough for the index shortcut")
    assert check(repo).failures == []
    path = repo / LOG
    before = path.stat()
    data = path.read_bytes()
    path.write_bytes(data.replace(b'"n":1}', b'"n":9}', 1))  # same size
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    [failure] = check(repo).failures
    assert (failure.commit, failure.line) == (None, 1)
