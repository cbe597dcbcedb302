"""pre-receive ``--check``: checks 1 (envelope), 5 (causation) and 7 (pairing) on the
log lines a push appends, for each ref update check 4 accepted.

The log is the one NEW's manifest names (``state/events.jsonl`` by default). The lines
already in the repository are those of the logs of the commits the pushed ones grow
from (their parents already here, each read at its own manifest's log path): the
longest of those logs that NEW's log starts with is the *base*, whose lines keep their
numbers; the other ones' lines past what they share with NEW's log (a merge puts the
remote's lines after the pusher's) are old too, wherever NEW's log has them.

The rules run over NEW's log the way the checks run them (``logstate``): the state of
the base is resumed from the checks' saved states (``logstate_cache``, under the bare
repository's git dir) when one is saved for its blob, else the base is fed first (and
its state saved, so a refused push retried finds it); then the new lines are fed. A
finding on a new line refuses the push. A finding on an old line refuses it only when
the old log did not have it (with line numbers set aside): a failure that predates
the rules never refuses a push, but a new claim that doubles an old entity's pairing,
or a new event reusing the id of an old line placed after it, does. Each refusal names
the pushed commit that appended the line, the path and that commit's line number.
Once an update passes, the state at NEW's log blob is saved: the next push onto it
resumes there and feeds only its own lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from git_gasp.base import git
from git_gasp.conformance.history.walk import Walker
from git_gasp.conformance.history.worktree import log_blob
from git_gasp.conformance.logfindings import Findings, dump_records, findings
from git_gasp.conformance.logsource import LogSource
from git_gasp.conformance.logstate import LogState
from git_gasp.conformance.saved.logstate_cache import LogStateCache, entry_of, restore
from git_gasp.guard.push import Refusal, Settings, Update, object_store, reach
from git_gasp.guard.rejection import CHECK1, CHECK5, CHECK7
from git_gasp.odb.objects import ObjectError
from git_gasp.protocol.appendonly import common_prefix_len
from git_gasp.protocol.vocab import Vocabulary

MAX_PER_REF = 20  # refusal lines per ref update, then a count
MAX_BLAME_READS = 32  # pushed commits' logs read to find the one that appended a line
# Saved states kept: concurrent pushes each save one for their new log, but only the
# push that wins the ref makes its log the next push's base.
KEEP = 8
_UNSEEN = re.compile(r"names (?:a later event \(line \d+\)|no event in the log)")
_LINES = re.compile(r"\blines? \d+(?:, \d+)*")

Key = tuple[str, bytes, str]  # (rule, the line's bytes, the message without line numbers)


def check_appended(git_dir: Path, walker, updates: list[Update],
                   pushed: set[bytes]) -> list[Refusal]:
    """Checks 1, 5 and 7 on the lines each update that check 4 accepted appends."""
    common = str(git.common_dir(git_dir))
    caches: dict[bytes, LogStateCache] = {}
    out: list[Refusal] = []
    for update in updates:
        if update.refused or update.head is None:
            continue
        order, base = reach(walker, update.head, pushed)
        if not order:
            continue  # no commit of its own: nothing appended
        try:
            out += _Judge(common, walker, update, order, base, caches).refusals()
        except ObjectError as exc:
            out.append(Refusal(update.ref, f"cannot read the log the push appends to: {exc}",
                               update.new))
    return out


def save_tip_states(git_dir: Path, commits: list[str]) -> int:
    """Save the checks' state of the log at each of `commits` (branch tips), so the
    first ``--check`` push onto one resumes instead of reading the whole log; the
    number of states saved (not counting those saved before)."""
    settings = Settings.read(git_dir)
    walker = Walker(object_store(git_dir), settings.root, frozenset())
    logs = _Logs(str(git.common_dir(git_dir)), walker, {})
    done: set[bytes] = set()
    saved = 0
    for sha in commits[:KEEP]:
        try:
            log = logs.log_of(sha.encode())
            if log is None or log.blob in done:
                continue
            done.add(log.blob)
            cache = logs.cache(log.rel)
            if cache.files.load(log.blob) is None:
                data = logs.blob(log.blob)
                state = LogState(LogSource.of_bytes(data), logs.vocab)
                state.feed(data, 0)
                logs.save(cache, log.blob, state)
                saved += cache.files.load(log.blob) is not None
        except ObjectError:
            continue
    return saved


def _norm(message: str) -> str:
    return _LINES.sub("line #", _UNSEEN.sub("names no earlier event", message))


def _items(f: Findings) -> list[tuple[str, int, str]]:
    out = [(CHECK1, line, msg) for line, msg in f.errors + f.roundtrip]
    out += [(CHECK5, line, msg) for line, msg in f.causation]
    out += [(CHECK7, line, msg) for line, msg in f.pairing]
    return out


def _keys(state: LogState, f: Findings) -> set[Key]:
    return {(rule, state.raw_line(line), _norm(msg)) for rule, line, msg in _items(f)}


@dataclass
class _Log:
    """A commit's log: its path (relative to the agent root) and blob id."""

    rel: bytes
    blob: bytes


class _Logs:
    """The commits' logs, their bytes and their saved states, over one walk's objects."""

    def __init__(self, common: str, walker, caches: dict[bytes, LogStateCache]) -> None:
        self.common, self.walker, self.caches = common, walker, caches
        self.objects = walker.objects
        self.vocab = Vocabulary()
        self._blobs: dict[bytes, bytes] = {}

    def log_of(self, sha: bytes) -> _Log | None:
        """Commit `sha`'s log, by its own manifest (None: it has no log file)."""
        found = log_blob(self.walker, sha)
        return None if found is None else _Log(*found)

    def blob(self, sha: bytes) -> bytes:
        data = self._blobs.get(sha)
        if data is None:
            data = self.objects.recent_blob(sha)  # read by the walk
            if data is None:
                data = self.objects.blob(sha)
            self._blobs[sha] = data
        return data

    def cache(self, rel: bytes) -> LogStateCache:
        """The saved states of the log at `rel` (one per path and push)."""
        cache = self.caches.get(rel)
        if cache is None:
            cache = self.caches[rel] = LogStateCache(
                self.common, self.walker.prefix, rel.decode("utf-8", "surrogateescape"))
            cache.files.keep = KEEP
        return cache

    def save(self, cache: LogStateCache, blob: bytes, state: LogState) -> None:
        """Save `state` as the state of `blob` (all its lines terminated; best effort)."""
        if state.last_line is not None or not state.line_count:
            return
        entry = entry_of(state)
        entry.extras = [dump_records(state)]
        try:
            cache.save(blob, entry)
        except OSError:
            pass  # the next push feeds the log again


class _Judge(_Logs):
    """The verdict on one ref update's appended lines."""

    def __init__(self, common: str, walker, update: Update, order: list[bytes],
                 base: set[bytes], caches: dict[bytes, LogStateCache]) -> None:
        super().__init__(common, walker, caches)
        self.update, self.order, self.base = update, order, base

    def refusals(self) -> list[Refusal]:
        tip = self.log_of(self.update.head)
        if tip is None:
            return []
        olds: dict[bytes, bytes] = {}  # blob -> rel, of the logs already here
        for sha in sorted(self.base):
            log = self.log_of(sha)
            if log is not None:
                olds.setdefault(log.blob, log.rel)
        if tip.blob in olds:
            return []
        data = self.blob(tip.blob)
        prefixes = [(len(self.blob(b)), b) for b in olds if data.startswith(self.blob(b))]
        length, base = max(prefixes) if prefixes else (0, None)
        # lines of the other old logs, wherever NEW's log has them
        moved: dict[bytes, bytes] = {}  # line -> the old log blob it comes from
        for blob in olds:
            if blob == base:
                continue
            old = self.blob(blob)
            start = old.rfind(b"\n", 0, common_prefix_len(old, data)) + 1
            for raw in old[start:].split(b"\n"):
                moved.setdefault(raw, blob)
        moved.pop(b"", None)
        state, old_keys, old_lines, partial = self._base_state(
            data, base, olds.get(base, tip.rel), length)
        state.feed(data[state.length:], state.length)
        found = findings(state, self.walker.full_path(tip.rel))
        judged = self._judged(state, found, old_keys, old_lines, partial, moved, olds)
        if not judged:
            self.save(self.cache(tip.rel), tip.blob, state)
            return []
        return self._blamed(tip, state, judged)

    def _base_state(self, data: bytes, base: bytes | None, rel: bytes,
                    length: int) -> tuple[LogState, set[Key], int, bool]:
        """The state of NEW's log fed up to the base's last whole line, the base's
        finding keys, its line count and whether its last line is unterminated."""
        source = LogSource.of_bytes(data)
        whole = data.rfind(b"\n", 0, length) + 1
        lines = data.count(b"\n", 0, length) + (whole < length)
        cache = self.cache(rel)
        state = self._saved(cache, source, base, length) if base is not None and \
            whole == length else None
        if state is None:
            state = LogState(source, self.vocab)
            state.feed(data[:whole], 0, final=False)
            if base is not None and whole == length:
                self.save(cache, base, state)
        return state, _keys(state, findings(state, "")), lines, whole < length

    def _judged(self, state: LogState, found: Findings, old_keys: set[Key],
                old_lines: int, partial: bool, moved: dict[bytes, bytes],
                olds: dict[bytes, bytes]) -> list[tuple[str, int, str, bool]]:
        """(rule, line, message, whether the line is new) of each finding to refuse."""
        out = []
        other_keys: dict[bytes, set[Key]] = {}
        for rule, line, msg in _items(found):
            raw = state.raw_line(line)
            if line > old_lines and raw not in moved:
                out.append((rule, line, msg, True))
                continue
            if partial and line == old_lines and rule == CHECK1:
                continue  # the old unterminated line, now terminated
            key = (rule, raw, _norm(msg))
            if key in old_keys:
                continue
            source = moved.get(raw) if line > old_lines else None
            if source is not None:
                if source not in other_keys:
                    other_keys[source] = self._old_keys(source, olds[source])
                if key in other_keys[source]:
                    continue
            out.append((rule, line, msg, False))
        return out

    def _saved(self, cache, source: LogSource, blob: bytes, length: int) -> LogState | None:
        """The saved state of log blob `blob` if it covers exactly `length` bytes."""
        entry = cache.files.load(blob, max_length=source.size)
        if entry is None or entry.length != length:
            return None
        try:
            return restore(source, self.vocab, entry)
        except ValueError:
            return None

    def _old_keys(self, blob: bytes, rel: bytes) -> set[Key]:
        """The finding keys of an old log (its saved state, else fed whole)."""
        data = self.blob(blob)
        source = LogSource.of_bytes(data)
        cache = self.cache(rel)
        state = self._saved(cache, source, blob, len(data))
        if state is None:
            state = LogState(source, self.vocab)
            state.feed(data, 0)
            if state.last_line is None:
                self.save(cache, blob, state)
        return _keys(state, findings(state, ""))

    def _blamed(self, tip: _Log, state: LogState,
                judged: list[tuple[str, int, str, bool]]) -> list[Refusal]:
        """One refusal per judged finding, naming the pushed commit that appended its
        line (and that commit's line number); a newly failing old line names NEW."""
        update, walker = self.update, self.walker
        new_lines = {state.raw_line(line) for _r, line, _m, is_new in judged if is_new}
        where = self._appended_by(new_lines)
        out = []
        for rule, line, msg, is_new in sorted(judged, key=lambda j: (j[1], j[0]))[:MAX_PER_REF]:
            found = where.get(state.raw_line(line)) if is_new else None
            if found is None:
                commit, rel, number = update.head, tip.rel, line
            else:
                commit, rel, number = found
            why = f"[{rule}] {msg}"
            if not is_new:
                why += " (a line this push appends makes this old line fail)"
            out.append(Refusal(update.ref, why, commit.decode(), walker.full_path(rel),
                               number))
        more = len(judged) - MAX_PER_REF
        if more > 0:
            out.append(Refusal(update.ref, f"... and {more} more problem{'s' * (more != 1)} "
                               "in the appended lines", update.new))
        return out

    def _appended_by(self, lines: set[bytes]) -> dict[bytes, tuple[bytes, bytes, int]]:
        """Line -> (the first pushed commit whose log has it, that log's path, its line
        number there), reading at most MAX_BLAME_READS logs."""
        out: dict[bytes, tuple[bytes, bytes, int]] = {}
        reads = 0
        for sha in self.order:
            if len(out) == len(lines) or reads >= MAX_BLAME_READS:
                break
            try:
                log = self.log_of(sha)
                if log is None:
                    continue
                fresh = log.blob not in self._blobs
                data = self.blob(log.blob)
            except ObjectError:
                continue
            reads += fresh
            for raw in lines - out.keys():
                at = _line_at(data, raw)
                if at is not None:
                    out[raw] = (sha, log.rel, data.count(b"\n", 0, at) + 1)
        return out


def _line_at(data: bytes, raw: bytes) -> int | None:
    """The offset of the first whole line of `data` equal to `raw`, or None."""
    if data.startswith(raw) and data[len(raw):len(raw) + 1] in (b"\n", b""):
        return 0
    at = data.find(b"\n" + raw + b"\n")
    if at < 0 and data.endswith(b"\n" + raw):
        at = len(data) - len(raw) - 1
    return None if at < 0 else at + 1
