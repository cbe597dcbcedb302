"""Check 4 proves appends from pack deltas: the verdicts are exactly the content
comparison's, on random histories packed every way git packs them.

Histories are written with `git fast-import`, then packed by `git gc --aggressive`,
`git repack -adf --depth=250 --window=250`, left as loose objects, split over several
packs (fetched and repacked in stages without -a), or received as a thin pack that
`git fetch` completes. Each is checked with the pack prover and without it (every
pair from content); an independent oracle reads every version through
`git cat-file --batch`.
"""

from __future__ import annotations

import hashlib
import pathlib
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from git_gasp.conformance.history.check import HistoryResult, check_history
from tests.testing.run import git

pytestmark = pytest.mark.slow  # keeps the fast loop under a minute

LOG = b"state/events.jsonl"
FACTS = b"memory/facts.jsonl"
JOURNAL = b"JOURNAL.md"
ROLES = (LOG, FACTS, JOURNAL)  # index 0 is the log, wherever the manifest moves it


# --------------------------------------------------------------------------- histories


def line(n: int, width: int = 0) -> bytes:
    """A distinct line of 60-120 bytes (distinct bytes keep git's deltas honest)."""
    pad = hashlib.sha256(b"%d" % n).hexdigest()[: 20 + (n * 7 + width) % 60]
    return b'{"n":%d,"pad":"%s"}\n' % (n, pad.encode())


def manifest(log: bytes) -> bytes:
    text = b"# agent\n\n```yaml\nspec_version: 1\nagent_id: pack\n"
    if log != LOG:
        text += b"locations:\n  log: " + log + b"\n"
    return text + b"```\n"


@dataclass
class State:
    """One branch tip being built: its files and where the manifest puts the log."""

    files: dict[bytes, bytes] = field(default_factory=dict)
    log: bytes = LOG
    mark: int | None = None
    committed: dict[bytes, bytes] = field(default_factory=dict)  # the tip's files

    def path(self, role: int) -> bytes:
        return self.log if role == 0 else ROLES[role]

    def copy(self) -> State:
        return State(dict(self.files), self.log, self.mark, dict(self.committed))


class Builder:
    """Turns steps into a fast-import stream, one commit per step (merges: three)."""

    def __init__(self) -> None:
        self.out: list[bytes] = []
        self.marks = 0
        self.n = 0
        self.moves = 0

    def lines(self, count: int) -> bytes:
        text = b""
        for _ in range(count):
            self.n += 1
            text += line(self.n)
        return text

    def commit(self, state: State, parents: list[int], branch: bytes = b"main") -> int:
        self.marks += 1
        w = self.out.append
        w(b"commit refs/heads/%s\nmark :%d\n" % (branch, self.marks))
        w(b"committer T <t@example.com> %d +0000\ndata 2\nc\n" % (1767225600 + self.marks))
        if parents:
            w(b"from :%d\n" % parents[0])
        for extra in parents[1:]:
            w(b"merge :%d\n" % extra)
        files = dict(state.files)
        files[b"AGENT.md"] = manifest(state.log)
        for path in sorted(state.committed.keys() - files.keys()):
            w(b"D %s\n" % path)
        for path, data in sorted(files.items()):  # as fast-import deltas: changes only
            if state.committed.get(path) != data:
                w(b"M 100644 inline %s\ndata %d\n%s\n" % (path, len(data), data))
        state.mark, state.committed = self.marks, files
        return self.marks

    def append(self, state: State, role: int, count: int, terminated: bool,
               fresh_line: bool) -> None:
        path = state.path(role)
        old = state.files.get(path, b"")
        text = self.lines(count)
        if old and not old.endswith(b"\n") and fresh_line:
            text = b"\n" + text
        if not terminated:
            text = text[:-1]
        state.files[path] = old + text

    def step(self, state: State, step: tuple[int, int, int, int]) -> None:
        kind, role, a, b = step
        path = state.path(role)
        old = state.files.get(path)
        if kind <= 5 or old is None:  # appends are the common case
            self.append(state, role, 1 + a % 6, b % 5 != 0, b % 3 != 0)
        elif kind == 6:  # an in-place edit
            if old:
                at = a * len(old) // 100
                state.files[path] = old[:at] + bytes([old[at] ^ 1]) + old[at + 1:]
            else:
                state.files[path] = b"x\n"
        elif kind == 7:  # a truncation
            state.files[path] = old[: a * len(old) // 100]
        elif kind == 8:  # a deletion
            del state.files[path]
        elif kind == 9:  # the manifest moves the log (keeping its bytes, or not)
            self.moves += 1
            new = b"state/log%d.jsonl" % self.moves
            kept = state.files.pop(state.log, b"")
            state.files[new] = (kept if b % 2 else b"") + self.lines(1 + a % 3)
            state.log = new
        self.commit(state, [state.mark] if state.mark else [])

    def merge(self, state: State, role: int, ours: int, theirs: int, good: bool,
              apart: bool, shape: str = "union") -> None:
        """Fork, append on both sides (to one file, or `apart`: to two), merge: the
        union, or one side's line dropped (not `good`), or one of the `SHAPES`."""
        if not good:
            shape = "drop"
        path = state.path(role)
        side_path = state.path((role + 1) % 3) if apart else path
        side = state.copy()
        base = state.files.get(path, b"")
        if base and not base.endswith(b"\n"):
            base += b"\n"
        side_base = side.files.get(side_path, b"") if apart else base
        if side_base and not side_base.endswith(b"\n"):
            side_base += b"\n"
        side_text, main_text = self.lines(theirs), self.lines(ours)
        if shape == "crlf_kept":
            side_text = side_text.replace(b"\n", b"\r\n")
        elif shape in ("unterminated", "unterminated_fixed"):
            side_text = side_text[:-1]
        elif shape == "main_open":
            main_text = main_text[:-1]
        side.files[side_path] = side_base + side_text
        self.commit(side, [state.mark], b"side")  # type: ignore[list-item]
        parents = [side.mark]
        if shape == "octopus":
            other = state.copy()
            other_text = self.lines(2)
            other.files[path] = base + other_text
            self.commit(other, [state.mark], b"other")  # type: ignore[list-item]
            parents.append(other.mark)
        state.files[path] = base + main_text
        self.commit(state, [state.mark])  # type: ignore[list-item]
        if apart:
            if shape == "drop":
                side_text = side_text.split(b"\n", 1)[1]
            state.files[side_path] = side_base + side_text
        else:
            state.files[path] = merged(shape, base, main_text, side_text,
                                       other_text if shape == "octopus" else b"")
        self.commit(state, [state.mark, *parents])  # type: ignore[list-item]


# How a merge result may be made from the base, ours' and theirs' new lines: the merge
# driver's union, results the rule accepts in other shapes, and hostile ones.
SHAPES = ("union", "drop", "theirs_first", "dup", "dup_inside", "reorder", "crlf",
          "crlf_kept", "unterminated", "unterminated_fixed", "main_open", "glued",
          "interleave", "octopus", "tail_partial", "dropped_last")


def merged(shape: str, base: bytes, ours: bytes, theirs: bytes, third: bytes) -> bytes:
    """The merge result of `shape` (see `SHAPES`)."""
    first, _, rest = theirs.partition(b"\n")
    if shape == "drop":  # theirs' first line dropped (a failure)
        return base + ours + rest
    if shape == "theirs_first":  # the result extends the second parent
        return base + theirs + ours
    if shape == "dup":  # a line of theirs duplicated at the end (accepted)
        return base + ours + theirs + first + b"\n"
    if shape == "dup_inside":  # ...or before theirs' lines (accepted, and proven)
        return base + ours + first + b"\n" + theirs
    if shape == "reorder":  # the shared prefix reordered (a failure when it has 2 lines)
        lines = base.splitlines(keepends=True)
        return b"".join(lines[1:2] + lines[:1] + lines[2:]) + ours + theirs
    if shape == "crlf":  # theirs' lines re-terminated with CRLF (a failure)
        return base + ours + theirs.replace(b"\n", b"\r\n")
    if shape == "unterminated_fixed":  # theirs' unterminated last line terminated
        return base + ours + theirs + b"\n"
    if shape == "main_open":  # ours' unterminated last line, terminated by the merge
        return base + ours + b"\n" + theirs
    if shape == "glued":  # theirs' first line glued to a stray byte (a failure)
        return base + ours + b"x" + theirs
    if shape == "interleave":  # theirs' lines around ours' (accepted, from content)
        return base + first + b"\n" + ours + rest
    if shape == "octopus":  # a third parent's lines too
        return base + ours + theirs + third
    if shape == "tail_partial":  # theirs' first line cut short (a failure)
        return base + ours + theirs[len(first) // 2:]
    if shape == "dropped_last":  # theirs' last line dropped (a failure)
        return base + ours + theirs[:theirs.rstrip(b"\n").rfind(b"\n") + 1]
    return base + ours + theirs  # union, crlf_kept, unterminated


def build(root: pathlib.Path, steps: list[tuple[int, int, int, int]]) -> list[str]:
    """A repository at `root` whose history follows `steps`; returns stage commits
    (a third, two thirds and all of the history) for the staged packings."""
    builder = Builder()
    state = State()
    builder.commit(state, [])
    for step in steps:
        kind, role, a, b = step
        if kind == 10:
            builder.merge(state, role, 1 + a % 3, 1 + b % 3, a % 4 != 0, b % 2 == 1)
        elif kind == 11:
            builder.merge(state, role, 1 + a % 3, 1 + b % 3, True, False,
                          SHAPES[(a + b) % len(SHAPES)])
        else:
            builder.step(state, step)
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    git(root, "fast-import", "--quiet", input=b"".join(builder.out))
    git(root, "reset", "-q", "--hard", "main")
    commits = git(root, "rev-list", "--first-parent", "--reverse", "main").split()
    return [commits[len(commits) // 3], commits[2 * len(commits) // 3], commits[-1]]


# --------------------------------------------------------------------------- packings


def _fetch(dest: pathlib.Path, src: pathlib.Path, sha: str, keep_pack: bool) -> None:
    git(src, "update-ref", "refs/stage/tip", sha)
    limit = "1" if keep_pack else "100000"
    git(dest, "-c", f"transfer.unpackLimit={limit}", "fetch", "-q", "--update-head-ok", str(src),
        "+refs/stage/tip:refs/heads/main")


def packed(src: pathlib.Path, stages: list[str], how: str) -> pathlib.Path:
    """A copy of `src` with its objects stored the way `how` says."""
    dest = src.with_name(f"{src.name}-{how}")
    if how in ("staged", "thin"):
        dest.mkdir()
        git(dest, "init", "-q", "-b", "main")
        if how == "staged":  # repacked in stages without -a, the last stage left loose
            for i, sha in enumerate(stages):
                _fetch(dest, src, sha, keep_pack=False)
                if i < len(stages) - 1:
                    git(dest, "repack", "-d", "-q")
        else:  # from a packed host: a full pack, then a thin one (--fix-thin completes it)
            host = src.with_name(f"{src.name}-host")
            shutil.copytree(src, host, symlinks=True)
            git(host, "repack", "-adfq")
            _fetch(dest, host, stages[0], keep_pack=True)
            _fetch(dest, host, stages[-1], keep_pack=True)
            shutil.rmtree(host)
        git(dest, "reset", "-q", "--hard", "main")
        return dest
    shutil.copytree(src, dest, symlinks=True)
    if how == "loose":
        pack_dir = dest / ".git" / "objects" / "pack"
        for pack in sorted(pack_dir.glob("*.pack")):
            data = pack.read_bytes()
            pack.unlink()
            pack.with_suffix(".idx").unlink()
            git(dest, "unpack-objects", "-q", input=data)
    elif how == "gc":
        git(dest, "gc", "-q", "--aggressive", "--prune=now")
    elif how == "repack250":
        git(dest, "repack", "-adfq", "--depth=250", "--window=250")
    elif how != "fastimport":
        raise AssertionError(how)
    return dest


# --------------------------------------------------------------------------- the oracle


def _rule_line(old: bytes, new: bytes) -> int | None:
    """The one-parent rule, written again from the spec: the line of a violation."""
    if new[: len(old)] == old:
        if old and not old.endswith(b"\n") and len(new) > len(old) and new[len(old)] != 10:
            return old.count(b"\n") + 1
        return None
    i = 0
    while i < len(old) and i < len(new) and old[i] == new[i]:
        i += 1
    return old.count(b"\n", 0, i) + 1


def oracle(root: pathlib.Path) -> set[tuple[str, str, int | None]]:
    """(commit, path, line) of every one-parent violation, from `git cat-file` alone
    (commits that change AGENT.md, i.e. move the log, are left out)."""
    revs = [r.split() for r in git(root, "rev-list", "--parents", "HEAD").splitlines()]
    proc = subprocess.Popen(["git", "cat-file", "--batch"], cwd=root,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None

    def read(spec: str) -> bytes | None:
        proc.stdin.write(spec.encode() + b"\n")  # type: ignore[union-attr]
        proc.stdin.flush()  # type: ignore[union-attr]
        head = proc.stdout.readline()  # type: ignore[union-attr]
        if head.endswith(b"missing\n"):
            return None
        data = proc.stdout.read(int(head.split()[2]))  # type: ignore[union-attr]
        proc.stdout.read(1)  # type: ignore[union-attr]
        return data

    found: set[tuple[str, str, int | None]] = set()
    try:
        for commit, *parents in revs:
            if len(parents) != 1 or read(f"{commit}:AGENT.md") != read(f"{parents[0]}:AGENT.md"):
                continue
            log = read(f"{commit}:AGENT.md") or b""
            paths = [log.split(b"log: ")[1].split(b"\n")[0] if b"log: " in log else LOG,
                     FACTS, JOURNAL]
            for path in paths:
                old = read(f"{parents[0]}:{path.decode()}")
                if old is None:
                    continue
                new = read(f"{commit}:{path.decode()}")
                line_no = None if new is None else _rule_line(old, new)
                if new is None or line_no is not None:
                    found.add((commit, path.decode(), line_no))
    finally:
        proc.stdin.close()
        proc.wait()
    return found


# --------------------------------------------------------------------------- comparing


def verdict(result: HistoryResult) -> tuple:
    return result.failures, result.notes, result.commits_walked, result.commits_cached


def one_parent_failures(result: HistoryResult, root: pathlib.Path
                        ) -> set[tuple[str, str, int | None]]:
    """The failures of one-parent commits that keep the manifest, as the oracle has them."""
    out = set()
    for f in result.failures:
        if f.commit is None or f.path is None:
            continue
        parents = git(root, "rev-list", "--parents", "-n1", f.commit).split()[1:]
        if len(parents) != 1:
            continue
        if git(root, "rev-parse", f"{f.commit}:AGENT.md") != git(
                root, "rev-parse", f"{parents[0]}:AGENT.md"):
            continue
        out.add((f.commit, f.path, f.line))
    return out


def compare(root: pathlib.Path, steps: list, hows: tuple[str, ...], *,
            with_oracle: bool = False) -> dict[str, HistoryResult]:
    """Check every packing with and without the prover: one verdict for all."""
    stages = build(root, steps)
    reference = check_history(root, use_cache=False, use_packs=False)
    if with_oracle:
        assert one_parent_failures(reference, root) == oracle(root)
    results = {}
    for how in hows:
        repo = packed(root, stages, how)
        assert git(repo, "rev-parse", "HEAD") == git(root, "rev-parse", "HEAD")
        content = check_history(repo, use_cache=False, use_packs=False)
        proven = check_history(repo, use_cache=False)
        assert verdict(content) == verdict(reference), how
        assert verdict(proven) == verdict(reference), how
        results[how] = proven
        shutil.rmtree(repo)
    return results


def appends_only(count: int) -> list[tuple[int, int, int, int]]:
    return [(0, i % 3, i, 1) for i in range(count)]  # terminated appends: all pass


# --------------------------------------------------------------------------- the tests


FIXED = appends_only(24) + [
    (6, 0, 40, 0),  # an in-place edit of the log
    (0, 0, 2, 5),  # an append leaving the last line unterminated
    (0, 0, 1, 1),  # extended in place (a failure)
    (0, 1, 3, 5),  # unterminated facts...
    (0, 1, 2, 3),  # ...terminated first, then appended to (fine)
    (7, 2, 50, 0),  # a truncated journal
    (10, 0, 1, 2),  # a good merge
    (10, 0, 4, 2),  # a merge dropping a line of the second parent
    (10, 1, 1, 3),  # a merge of appends to two files: each result extends both parents
    (10, 2, 8, 1),  # the same, dropping a line of the second parent's file
    (9, 0, 1, 1),  # the log moved, keeping its bytes
    (8, 1, 0, 0),  # facts deleted
] + appends_only(12)


def test_the_prover_proves_packed_appends_with_the_content_verdicts(tmp_path):
    results = compare(tmp_path / "fixed", FIXED, ("gc", "thin", "loose"), with_oracle=True)
    failures = results["gc"].failures
    assert len(failures) >= 5, failures
    for how in ("gc", "thin"):
        stats = results[how].stats
        assert stats.proven_packs >= 0.7 * (stats.proven_packs + stats.read), (how, stats)
    assert results["loose"].stats.proven_packs == 0
    assert results["gc"].stats.merges_proven >= 2, results["gc"].stats


SHAPED = appends_only(6) + [(11, i % 3, (i - 2) % len(SHAPES), 2)
                             for i in range(len(SHAPES))] + appends_only(3)
PROVEN_SHAPES = {"union", "theirs_first", "dup_inside", "crlf_kept", "unterminated",
                 "unterminated_fixed", "main_open", "octopus"}
FAILING_SHAPES = {"drop", "reorder", "crlf", "glued", "tail_partial", "dropped_last"}


def test_merges_of_every_shape_get_the_content_verdicts(tmp_path):
    results = compare(tmp_path / "shapes", SHAPED, ("gc", "repack250", "thin"))
    for how, result in results.items():
        merge_failures = {f.commit for f in result.failures
                          if f.message.startswith("merge loses lines")}
        assert len(merge_failures) == len(FAILING_SHAPES), (how, result.failures)
        assert len(result.failures) == len(FAILING_SHAPES), (how, result.failures)
        stats = result.stats  # (git may choose a delta base that proves less)
        assert stats.merge_tails >= len(PROVEN_SHAPES) - 1, (how, stats)
        assert stats.merges_read >= len(SHAPES) - len(PROVEN_SHAPES), (how, stats)


@pytest.mark.parametrize(("how", "kept"), [("gc", "bytes"), ("repack250", "bytes"),
                                           ("gc", "newlines")])
def test_byte_ranges_resolved_through_deltas_are_the_content(tmp_path, monkeypatch, how,
                                                             kept):
    import random

    from dulwich.repo import Repo

    from git_gasp.conformance.history import deltachains
    from git_gasp.conformance.history.prover import PackProver
    from git_gasp.odb.packs import PackFiles
    from git_gasp.protocol.appendonly import common_prefix_len

    if kept == "newlines":  # full objects kept as their newlines, read back streamed
        monkeypatch.setattr(deltachains, "_KEEP_CONTENT", 0)
        monkeypatch.setattr(deltachains, "_KEEP_TAIL", 200)

    root = tmp_path / "r"
    stages = build(root, SHAPED)
    repo = packed(root, stages, how)
    rng = random.Random(how)
    blobs = [row.split()[0] for row in git(repo, "rev-list", "--objects", "--all").splitlines()
             if git(repo, "cat-file", "-t", row.split()[0]).strip() == "blob"]
    with Repo(str(repo)) as dul:
        files = PackFiles.for_store(dul.object_store)
        assert files is not None
        prover = PackProver(files)
        deltas = 0
        for sha in blobs:
            data = dul.object_store[sha.encode()].as_raw_string()
            found = prover._node_of(sha.encode())
            assert found is not None, sha
            loc, node = found
            deltas += node.base is not None
            assert node.length == len(data)
            for _ in range(8):
                lo = rng.randrange(len(data) + 1)
                hi = rng.randrange(lo, len(data) + 1)
                assert prover._range(loc, lo, hi) == data[lo:hi], (sha, lo, hi)
                line_start = data.rfind(b"\n", 0, lo) + 1
                assert prover._line_start(loc, lo) == line_start, (sha, lo)
            assert prover._range(loc, 0, len(data)) == data
        for _ in range(40):  # the shared start of two versions: proven, then compared
            a, b = rng.choice(blobs).encode(), rng.choice(blobs).encode()
            da, db = (dul.object_store[x].as_raw_string() for x in (a, b))
            (aloc, _), (bloc, _) = prover._node_of(a), prover._node_of(b)  # type: ignore[misc]
            shared = prover._common_start(aloc, bloc, min(len(da), len(db)))
            assert shared == common_prefix_len(da, db), (a, b)
        files.close()
    assert deltas > len(blobs) // 2


@pytest.mark.slow
def test_appends_in_several_packs_are_proven(tmp_path):
    results = compare(tmp_path / "staged", appends_only(45), ("staged", "repack250"))
    for how, result in results.items():
        assert result.failures == [], how
        stats = result.stats
        share = 0.4 if how == "staged" else 0.8  # staged: its last third stays loose
        assert stats.proven_packs >= share * (stats.proven_packs + stats.read), (how, stats)


STEP = st.tuples(st.integers(0, 11), st.integers(0, 2), st.integers(0, 99),
                 st.integers(0, 99))
ALL_PACKINGS = ("gc", "repack250", "loose", "staged", "thin", "fastimport")


@pytest.mark.slow
@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.function_scoped_fixture])
@given(steps=st.lists(STEP, min_size=1, max_size=40))
def test_random_histories_get_the_content_verdicts_however_packed(steps):
    with tempfile.TemporaryDirectory(prefix="gasp-pack-") as tmp:
        results = compare(pathlib.Path(tmp) / "h", steps, ALL_PACKINGS, with_oracle=True)
    stats = results["gc"].stats
    decided = stats.proven_packs + stats.read
    failing = {(f.commit, f.path) for f in results["gc"].failures}
    if decided >= 20 and len(failing) <= decided // 10:
        assert stats.proven_packs >= decided // 2, stats


MERGE_STEP = st.tuples(st.sampled_from([0, 0, 6, 10, 11, 11, 11]), st.integers(0, 2),
                       st.integers(0, 99), st.integers(0, 99))


@pytest.mark.slow
@settings(max_examples=12, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.function_scoped_fixture])
@given(steps=st.lists(MERGE_STEP, min_size=1, max_size=20))
def test_random_merges_of_every_shape_get_the_content_verdicts(steps):
    with tempfile.TemporaryDirectory(prefix="gasp-merge-") as tmp:
        results = compare(pathlib.Path(tmp) / "m", steps, ("gc", "staged", "thin"))
    merges = sum(kind in (10, 11) for kind, *_ in steps)
    stats = results["gc"].stats
    assert stats.merges_proven + stats.merges_read <= 3 * merges, stats


# --------------------------------------------------------------------------- corrupt packs


def _blob_entries(repo: pathlib.Path) -> list[tuple[int, int, bool]]:
    """(offset, size in the pack, is a delta) of every blob entry, from verify-pack."""
    [idx] = (repo / ".git" / "objects" / "pack").glob("*.idx")
    out = []
    for row in git(repo, "verify-pack", "-v", str(idx)).splitlines():
        parts = row.split()
        if len(parts) >= 5 and parts[1] == "blob":
            out.append((int(parts[4]), int(parts[3]), len(parts) > 5))
    return out


def test_a_corrupt_pack_gets_the_content_verdicts(tmp_path):
    root = tmp_path / "c"
    build(root, appends_only(30))
    repo = packed(root, [], "gc")
    entries = _blob_entries(repo)
    roots = [e for e in entries if not e[2]]
    deltas = [e for e in entries if e[2]]
    [pack] = (repo / ".git" / "objects" / "pack").glob("*.pack")
    for n, (offset, size, _delta) in enumerate(roots[:2] + deltas[:: max(1, len(deltas) // 4)]):
        copy = tmp_path / f"corrupt{n}"
        shutil.copytree(repo, copy, symlinks=True)
        [target] = (copy / ".git" / "objects" / "pack").glob("*.pack")
        target.chmod(0o644)
        data = bytearray(pack.read_bytes())
        data[offset + size // 2] ^= 0x55
        target.write_bytes(bytes(data))
        content = check_history(copy, use_cache=False, use_packs=False)
        proven = check_history(copy, use_cache=False)
        assert content.failures, (n, offset)  # the corruption is seen...
        assert _where(proven) == _where(content), (n, offset)  # ...the same way
        # (in the reader's words: odb refuses the lying entry, dulwich finds it unreadable)


def _where(result: HistoryResult) -> tuple:
    """A verdict with the reason an object is unreadable left out."""
    return ([(f.message.split(":", 1)[0], f.commit, f.path, f.line) for f in result.failures],
            result.notes, result.commits_walked, result.commits_cached)


# --------------------------------------------------------------------------- delta parsing


def _copy(off: int, length: int) -> bytes:
    op, args = 0x80, b""
    for i in range(4):
        if (off >> 8 * i) & 0xFF:
            op |= 1 << i
            args += bytes([(off >> 8 * i) & 0xFF])
    for i in range(3):
        if (length >> 8 * i) & 0xFF:
            op |= 0x10 << i
            args += bytes([(length >> 8 * i) & 0xFF])
    return bytes([op]) + args


def _varint(n: int) -> bytes:
    out = b""
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out += bytes([byte | 0x80])
        else:
            return out + bytes([byte])


def _delta(base_size: int, target_size: int, *ops: bytes) -> bytes:
    return _varint(base_size) + _varint(target_size) + b"".join(ops)


def test_parse_delta_finds_the_copied_prefix():
    from git_gasp.odb.deltas import parse_delta

    # An old version as a prefix copy of a newer one, split into 64 KiB pieces.
    size = 0x10000 * 2 + 10
    d = parse_delta(_delta(size + 5, size, _copy(0, 0x10000), _copy(0x10000, 0x10000),
                           _copy(0x20000, 10)))
    assert (d.prefix, d.target_size, d.starts) == (size, size, [])
    # A new version as the old one plus an insert: the prefix is the old length.
    d = parse_delta(_delta(100, 103, _copy(0, 100), b"\x03ab\n"))
    assert d.prefix == 100 and d.source(102) == (-1, 0x0A) and d.source(100) == (-1, 0x61)
    # A literal first (git's 16-byte start) proves nothing; a later copy maps back.
    d = parse_delta(_delta(100, 20, b"\x04abcd", _copy(4, 16)))
    assert d.prefix == 0 and d.source(2) == (-1, 0x63) and d.source(10) == (10, -1)
    # A copy from elsewhere ends the prefix.
    d = parse_delta(_delta(100, 30, _copy(0, 10), _copy(50, 20)))
    assert d.prefix == 10 and d.source(15) == (55, -1)


@pytest.mark.parametrize("raw", [
    _delta(10, 20, _copy(0, 10)),  # builds less than it declares
    _delta(10, 5, _copy(8, 5)),  # copies past the end of the base
    _delta(10, 5, b"\x00"),  # opcode 0
    _delta(10, 5, b"\x05ab"),  # a truncated insert
    b"\x80",  # a truncated header
])
def test_parse_delta_rejects_malformed_deltas(raw):
    from git_gasp.odb.deltas import PackFormatError, parse_delta

    with pytest.raises(PackFormatError):
        parse_delta(raw)


def test_pack_entries_read_through_dulwich_give_sizes_and_bases(tmp_path):
    from dulwich.repo import Repo

    from git_gasp.odb.deltas import OFS_DELTA, delta_sizes
    from git_gasp.odb.packs import PackFiles

    root = tmp_path / "h"
    build(root, appends_only(20))
    repo = packed(root, [], "gc")
    seen = set()
    with Repo(str(repo)) as dul:
        files = PackFiles.for_store(dul.object_store)
        assert files is not None
        for offset, _size, is_delta in _blob_entries(repo):
            entry = files.entry((0, offset))
            body = b"".join(entry.decomp_chunks)
            assert len(body) == entry.decomp_len
            if is_delta:
                seen.add("delta")
                assert entry.pack_type_num == OFS_DELTA
                base_size, _target = delta_sizes(body)
                base = files.entry(files.base_of((0, offset), entry))
                assert base.pack_type_num in (3, OFS_DELTA)
                assert base_size > 0
            else:
                seen.add("full")
                assert entry.pack_type_num == 3
        files.close()
    assert seen == {"delta", "full"}


# --------------------------------------------------------------------------- unfixed thin packs


@pytest.mark.parametrize("bases", ["loose", "packed"])
def test_a_thin_pack_with_bases_outside_it_gets_the_content_verdicts(tmp_path, bases):
    """A pack whose REF_DELTAs name bases it lacks (loose, or in another pack): git
    never keeps one (index-pack --fix-thin appends the bases), and dulwich reads those
    objects as missing; the prover must not prove from them either."""
    from dulwich.object_format import SHA1
    from dulwich.pack import PackData
    from dulwich.repo import Repo

    src = tmp_path / "src"
    stages = build(src, appends_only(40))
    git(src, "repack", "-adfq")
    dest = tmp_path / "dest"
    dest.mkdir()
    git(dest, "init", "-q", "-b", "main")
    _fetch(dest, src, stages[0], keep_pack=False)
    git(dest, "reset", "-q", "--hard", "main")
    if bases == "packed":
        git(dest, "repack", "-adq")
    # one delta-search thread: several make pack-objects' choice of bases vary by timing
    thin = subprocess.run(["git", "-c", "pack.threads=1", "pack-objects", "--thin", "--stdout",
                           "--revs", "-q"],
                          cwd=src, input=f"main\n^{stages[0]}\n".encode(),
                          capture_output=True, check=True).stdout
    pack_dir = dest / ".git" / "objects" / "pack"
    pack_dir.mkdir(exist_ok=True)
    path = pack_dir / f"pack-{hashlib.sha1(thin).hexdigest()}.pack"
    path.write_bytes(thin)
    with Repo(str(dest)) as repo, PackData(str(path), object_format=SHA1) as data:
        data.create_index_v2(str(path.with_suffix(".idx")),
                             resolve_ext_ref=repo.object_store.get_raw)
    (dest / ".git" / "refs" / "heads" / "main").write_text(stages[-1] + "\n")
    for rel in (LOG, FACTS, JOURNAL):  # the work tree of the new HEAD
        (dest / rel.decode()).write_bytes((src / rel.decode()).read_bytes())
    # Every blob delta on a base outside its pack is a node of nothing.
    from git_gasp.conformance.history.prover import PackProver
    from git_gasp.odb.deltas import REF_DELTA
    from git_gasp.odb.packs import PackFiles

    with Repo(str(dest)) as repo:
        files = PackFiles.for_store(repo.object_store)
        assert files is not None
        prover = PackProver(files)
        outside = 0
        for row in git(src, "rev-list", "--objects", "main", f"^{stages[0]}").splitlines():
            sha = row.split()[0]
            loc = files.locate(sha.encode())
            if loc is None or loc[0] < 0 or files.entry(loc).pack_type_num != REF_DELTA:
                continue
            if files.base_of(loc, files.entry(loc)) is None:
                outside += 1
                assert prover.length(sha.encode()) is None
        files.close()
    if outside == 0:  # the premise is git's choice of delta bases, not ours to make
        pytest.skip("git pack-objects --thin chose no base outside the pack this time")
    content = check_history(dest, use_cache=False, use_packs=False)
    proven = check_history(dest, use_cache=False)
    assert any("missing" in f.message for f in content.failures), (outside, content.failures)
    assert verdict(proven) == verdict(content)


def test_check_history_reports_progress(tmp_path, monkeypatch):
    from git_gasp.conformance.history import walk as history_walk

    monkeypatch.setattr(history_walk, "_PROGRESS_EVERY", 0.0)
    root = tmp_path / "p"
    build(root, appends_only(5))
    calls: list[tuple[int, int]] = []
    result = check_history(root, use_cache=False, progress=lambda *a: calls.append(a))
    assert result.failures == [] and result.commits_walked == 6
    assert calls == [(n, 6) for n in range(1, 7)]
