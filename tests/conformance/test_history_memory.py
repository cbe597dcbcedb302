"""Check 4's commit rules over commit graphs held in memory (no git, no work tree)."""

from __future__ import annotations

from dulwich.object_store import MemoryObjectStore
from dulwich.objects import Blob, Commit, Tree

from git_gasp.conformance.history import walk as history_walk
from git_gasp.conformance.history.check import HistoryResult, check_store
from git_gasp.conformance.history.walk import Walker

LOG = "state/events.jsonl"
REG, LINK = 0o100644, 0o120000


class Graph:
    """Blobs, trees and commits made by hand in a MemoryObjectStore."""

    def __init__(self) -> None:
        self.store = MemoryObjectStore()
        self.time = 1_700_000_000

    def blob(self, data: bytes) -> bytes:
        blob = Blob.from_string(data)
        self.store.add_object(blob)
        return blob.id

    def tree(self, files: dict[str, bytes | tuple[int, bytes]]) -> bytes:
        """A tree of `files` (path -> content, or (mode, blob id) for a given entry)."""
        subdirs: dict[str, dict] = {}
        tree = Tree()
        for path, value in files.items():
            head, _, rest = path.partition("/")
            if rest:
                subdirs.setdefault(head, {})[rest] = value
            elif isinstance(value, tuple):
                tree.add(head.encode(), value[0], value[1])
            else:
                tree.add(head.encode(), REG, self.blob(value))
        for name, sub in subdirs.items():
            tree.add(name.encode(), 0o040000, self.tree(sub))
        self.store.add_object(tree)
        return tree.id

    def commit(self, files: dict[str, bytes | tuple[int, bytes]], *parents: bytes,
               store: bool = True) -> bytes:
        """A commit of `files` on `parents` (not put in the store unless `store`)."""
        commit = Commit()
        commit.tree = self.tree(files)
        commit.parents = list(parents)
        commit.author = commit.committer = b"Test <test@example.com>"
        self.time += 1
        commit.author_time = commit.commit_time = self.time
        commit.author_timezone = commit.commit_timezone = 0
        commit.message = b"test\n"
        if store:
            self.store.add_object(commit)
        return commit.id


def check(graph: Graph, head: bytes, **options) -> HistoryResult:
    return check_store(graph.store, head, **options)


def test_one_parent_append_passes():
    g = Graph()
    c1 = g.commit({LOG: b"a\n", "AGENT.md": b"x"})
    c2 = g.commit({LOG: b"a\nb\n", "AGENT.md": b"edited"}, c1)
    c3 = g.commit({LOG: b"a\nb\nc\n", "AGENT.md": b"edited"}, c2)
    result = check(g, c3)
    assert result.failures == []
    assert result.commits_walked == 3


def test_in_place_edit_fails_naming_the_commit_and_path():
    g = Graph()
    c1 = g.commit({LOG: b"a\nb\n"})
    c2 = g.commit({LOG: b"a\nB\n"}, c1)
    c3 = g.commit({LOG: b"a\nB\nc\n"}, c2)
    [failure] = check(g, c3).failures
    assert failure.commit == c2.decode()
    assert failure.path == LOG
    assert failure.line == 2
    assert "modified in place" in failure.message


def test_the_agent_root_prefix_names_the_full_path():
    g = Graph()
    c1 = g.commit({"agents/one/" + LOG: b"a\n"})
    c2 = g.commit({"agents/one/" + LOG: b"b\n"}, c1)
    [failure] = check(g, c2, prefix=b"agents/one").failures
    assert failure.path == "agents/one/" + LOG
    assert check(g, c2, prefix=b"agents/other").failures == []


def test_deletion_fails():
    g = Graph()
    c1 = g.commit({LOG: b"a\n", "memory/facts.jsonl": b"f\n"})
    c2 = g.commit({LOG: b"a\n"}, c1)
    [failure] = check(g, c2).failures
    assert failure.commit == c2.decode()
    assert failure.path == "memory/facts.jsonl"
    assert "deleted" in failure.message


def test_truncation_fails():
    g = Graph()
    c1 = g.commit({LOG: b"a\nb\n"})
    c2 = g.commit({LOG: b"a\n"}, c1)
    [failure] = check(g, c2).failures
    assert failure.commit == c2.decode() and "shrank" in failure.message


def test_extending_an_unterminated_last_line_fails():
    g = Graph()
    c1 = g.commit({LOG: b"a\nb"})
    c2 = g.commit({LOG: b"a\nbc\n"}, c1)
    [failure] = check(g, c2).failures
    assert failure.commit == c2.decode()
    assert "unterminated last line 2 was extended" in failure.message


def test_terminating_an_unterminated_last_line_passes():
    g = Graph()
    c1 = g.commit({LOG: b"a\nb"})
    c2 = g.commit({LOG: b"a\nb\nc\n"}, c1)
    assert check(g, c2).failures == []


def test_a_declared_path_is_append_only():
    g = Graph()
    c1 = g.commit({"notes/log.txt": b"a\n"})
    c2 = g.commit({"notes/log.txt": b"b\n"}, c1)
    assert check(g, c2).failures == []
    [failure] = check(g, c2, declared=[b"notes/log.txt"]).failures
    assert failure.path == "notes/log.txt"


def test_merge_keeping_every_line_of_both_parents_in_any_order_passes():
    g = Graph()
    base = g.commit({LOG: b"a\n"})
    ours = g.commit({LOG: b"a\nb\n"}, base)
    theirs = g.commit({LOG: b"a\nc\nd\n"}, base)
    merge = g.commit({LOG: b"a\nb\nd\nc\n"}, ours, theirs)
    result = check(g, merge)
    assert result.failures == []
    assert result.commits_walked == 4


def test_merge_dropping_a_line_fails():
    g = Graph()
    base = g.commit({LOG: b"a\n"})
    ours = g.commit({LOG: b"a\nb\n"}, base)
    theirs = g.commit({LOG: b"a\nc\nd\n"}, base)
    merge = g.commit({LOG: b"a\nb\nc\n"}, ours, theirs)
    [failure] = check(g, merge).failures
    assert failure.commit == merge.decode()
    assert failure.path == LOG
    assert f"merge loses lines of parent {theirs.decode()[:12]}" in failure.message


def test_merge_dropping_the_file_of_a_parent_fails():
    g = Graph()
    base = g.commit({LOG: b"a\n"})
    ours = g.commit({LOG: b"a\nb\n"}, base)
    theirs = g.commit({LOG: b"a\n", "memory/facts.jsonl": b"f\n"}, base)
    merge = g.commit({LOG: b"a\nb\n"}, ours, theirs)
    [failure] = check(g, merge).failures
    assert failure.commit == merge.decode() and failure.path == "memory/facts.jsonl"
    assert "missing from the merge result" in failure.message


def test_root_commit_may_hold_anything():
    g = Graph()
    root = g.commit({LOG: b"not json\x00{\nunterminated", "memory/facts.jsonl": b""})
    result = check(g, root)
    assert result.failures == []
    assert result.commits_walked == 1


def test_an_append_only_path_committed_as_a_symlink_fails():
    g = Graph()
    root = g.commit({LOG: (LINK, g.blob(b"../elsewhere"))})
    [failure] = check(g, root).failures
    assert failure.path == LOG and "symlink" in failure.message


def test_a_missing_parent_fails_closed():
    g = Graph()
    c1 = g.commit({LOG: b"a\n"}, store=False)
    c2 = g.commit({LOG: b"a\nb\n"}, c1)
    failures = check(g, c2).failures
    assert failures and any(f.commit == c1.decode() and "missing" in f.message
                            for f in failures)


def test_a_missing_blob_fails_closed():
    g = Graph()
    gone = Blob.from_string(b"a\n").id  # never added to the store
    c1 = g.commit({LOG: (REG, gone)})
    c2 = g.commit({LOG: b"a\nb\n"}, c1)
    [failure] = check(g, c2).failures
    assert failure.commit == c2.decode() and failure.path == LOG
    assert "missing" in failure.message


def test_a_missing_head_fails_closed():
    g = Graph()
    [failure] = check(g, b"0" * 40).failures
    assert "cannot be read" in failure.message


def test_shallow_boundary_is_reported():
    g = Graph()
    c1 = g.commit({LOG: b"a\n"})
    c2 = g.commit({LOG: b"a\nb\n"}, c1)
    [failure] = check(g, c2, shallow=[c2]).failures
    assert failure.commit == c2.decode() and "shallow" in failure.message


def _edited_history(g: Graph) -> tuple[bytes, bytes, bytes, bytes]:
    """Three commits whose second edits the log in place: (head, blob ids 1 and 2)."""
    c1 = g.commit({LOG: b"a\nb\n"})
    c2 = g.commit({LOG: b"a\nB\nc\n"}, c1)
    c3 = g.commit({LOG: b"a\nB\nc\nd\n"}, c2)
    return c3, c2, g.blob(b"a\nb\n"), g.blob(b"a\nB\nc\n")


def test_walker_proven_pairs_are_trusted_without_reading_content():
    g = Graph()
    head, _bad, old, new = _edited_history(g)
    walker = Walker(g.store, b"", frozenset())
    walker.walk(head, set())
    assert len(walker.result.failures) == 1 and walker.result.stats.read == 2
    walker = Walker(g.store, b"", frozenset())
    walker.proven.add((old, new))  # e.g. a record the guard wrote: never re-read
    walker.walk(head, set())
    assert walker.result.failures == []
    assert (walker.result.stats.proven_known, walker.result.stats.read) == (1, 1)


def test_stats_do_not_take_part_in_equality():
    a, b = HistoryResult(), HistoryResult()
    b.stats.read = 5
    assert a == b


def test_progress_reports_walked_and_total(monkeypatch):
    monkeypatch.setattr(history_walk, "_PROGRESS_EVERY", 0.0)
    g = Graph()
    head = g.commit({LOG: b"a\n"})
    for n in range(5):
        head = g.commit({LOG: b"a\n" + b"b\n" * (n + 1)}, head)
    calls: list[tuple[int, int]] = []
    walker = Walker(g.store, b"", frozenset(), progress=lambda done, total: calls.append(
        (done, total)))
    walker.walk(head, set())
    assert calls == [(1, 6), (2, 6), (3, 6), (4, 6), (5, 6), (6, 6)]


def test_progress_is_not_called_for_a_quick_walk():
    g = Graph()
    head = g.commit({LOG: b"a\n"})
    calls: list[tuple[int, int]] = []
    walker = Walker(g.store, b"", frozenset(), progress=lambda *a: calls.append(a))
    walker.walk(g.commit({LOG: b"a\nb\n"}, head), set())
    assert calls == []
