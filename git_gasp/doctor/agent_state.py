"""doctor's look at the agent's state: the lease, the log (would check 1 pass?), the
agent hook queue and the boundary commits that failed, each a cheap read.

The queue's files are read through their owner, ``adapters/agent_hook/queue_files.py`` (where
the entries wait, where one set aside goes with its ``.why`` line, what an entry's name
says), an older git-gasp's ``.json`` entry through ``adapters/agent_hook_queue.entry_payload``,
and the failed commits' note through ``adapters/session_sweep.py``, which writes it.
"""

from __future__ import annotations

import json
from pathlib import Path

from git_gasp.adapters.agent_hook.queue_files import (
    LOG_NAME,
    WHY_SUFFIX,
    entry_agent,
    entry_time_ns,
    failed_dir,
    queue_dir,
    queued,
    set_aside_entries,
)
from git_gasp.adapters.agent_hook_queue import entry_payload
from git_gasp.adapters.session_sweep import FAILED_COMMITS
from git_gasp.base.errors import GaspError
from git_gasp.base.fileops import read_regular_file
from git_gasp.base.files import SMALL_FILE, read_file
from git_gasp.base.git import git_dir, run
from git_gasp.doctor.finding import ERROR, OK, WARN, Finding
from git_gasp.protocol.envelope import parse_log
from git_gasp.store.agent import load_agent
from git_gasp.store.append import torn_error
from git_gasp.store.lease import LEASE_REL, LeaseCorrupt, parse_lease, span, when

LOG_SCAN_BYTES = 1 << 20  # a longer log: only its last MiB is parsed (check does all)
QUEUE_STUCK_MS = 10 * 60 * 1000  # a hook drains the queue in seconds; older is stuck
SET_ASIDE_SHOWN = 5  # entries set aside named one by one; the rest are counted
WHY_MAX_BYTES = 4096


def lease(root: Path, now_ms: int, read: bytes | None) -> list[Finding]:
    """The lease, as a writer would judge it (the store's parser and holder verdict)."""
    if read is None:
        return []
    try:
        rec = parse_lease(read)
    except LeaseCorrupt:
        return [Finding(ERROR, f"{LEASE_REL} is corrupt (not a {{worker_id, pid, expires_at_ms"
                        "[, host, started, pidns]}} record): no worker can take or renew it",
                        "if no worker is running: `git gasp lease release --force`", "lease")]
    who = rec.describe(now_ms)
    if rec.dead():
        return [Finding(WARN, f"{LEASE_REL} of worker {who}: stale, its holder is gone",
                        "nothing to do: the next writer takes it over (or `git gasp lease "
                        "release`); an unfinished run is resumed by the next open", "lease")]
    if rec.expired(now_ms):
        return [Finding(WARN, f"{LEASE_REL} of worker {who}: stale",
                        "nothing to do: the next writer takes it over (or `git gasp lease "
                        "release`)", "lease")]
    return [Finding(OK, f"{LEASE_REL} held by worker {who}", topic="lease")]


def log(root: Path) -> list[Finding]:
    """Would `git gasp check` fail check 1? Parses the log's lines (the last
    LOG_SCAN_BYTES of a longer one) with the checks' own parser."""
    repo = load_agent(root)
    rel = repo.log_rel
    data = repo.log_bytes
    if data is None:
        return [Finding(ERROR, f"{rel} cannot be read: {repo.log_error}",
                        f"restore it (`git checkout -- {rel}`); `git gasp check` says more",
                        "log", path=rel)]
    start = 0
    if len(data) > LOG_SCAN_BYTES:
        start = data.find(b"\n", len(data) - LOG_SCAN_BYTES) + 1
    skipped = data.count(b"\n", 0, start)
    parsed = parse_log(data[start:], rel)
    scope = f"the last {parsed.line_count} lines" if start else f"all {parsed.line_count} lines"
    if not parsed.errors:
        what = f"{rel}: {scope} are valid events" if parsed.line_count else f"{rel}: empty"
        return [Finding(OK, what, topic="log", path=rel)]
    first = parsed.errors[0]
    line, more = first.line + skipped, len(parsed.errors) - 1
    extra = f" (and {more} more bad line{'s' * (more != 1)})" if more else ""
    if not parsed.terminated and all(e.line == parsed.line_count for e in parsed.errors):
        torn = torn_error(rel, data, root)
        if torn.complete:
            fix = f"append the newline: `printf '\\n' >> {rel}`"
        elif torn.cut is not None:
            fix = f"`truncate -s {torn.cut} {rel}` removes the interrupted write"
        else:
            fix = "the torn line is committed: `git gasp check` says how to repair it"
        what = f"{rel}:{line}: the last line is unterminated (an interrupted write)"
    else:
        fix = f"repair line {line} (every bad line: `git gasp check`)"
        what = f"{rel}:{line}: not a valid event: {first.message}{extra}"
    return [Finding(ERROR, f"{what}; `git gasp check` fails and nothing can be appended",
                    fix, "log", path=rel, line=line)]


def _agent_of(entry: Path) -> str | None:
    agent = entry_agent(str(entry))
    if agent is not None or not entry.name.endswith(".json"):
        return agent
    try:  # an older git-gasp's {agent, payload} record
        return entry_payload(entry.name, read_file(entry, limit=SMALL_FILE))[0]
    except (OSError, GaspError):
        return None


def _why(entry: Path) -> str:
    """The ``.why`` line the drain wrote beside a set-aside entry."""
    try:
        data = read_regular_file(f"{entry}{WHY_SUFFIX}", limit=WHY_MAX_BYTES)
    except Exception:  # noqa: BLE001 - NotARegularFile: unsafe to read, so unknown
        data = None
    text = " ".join(data.decode("utf-8", "replace").split()) if data else ""
    return text or "why is not recorded"


def _set_aside(failed: Path, names: list[str], log_path: Path) -> list[Finding]:
    """One finding per entry set aside (the first SET_ASIDE_SHOWN), naming it and why."""
    fix = (f"nothing of it is recorded: read it, then remove it, or move it back into "
           f"{failed.parent} once its cause is fixed (the next hook records it); more in "
           f"{log_path}")
    found = [Finding(WARN, f"agent hook event set aside: {failed / name}: {_why(failed / name)}",
                     fix, "queue", path=str(failed / name))
             for name in names[:SET_ASIDE_SHOWN]]
    if len(names) > SET_ASIDE_SHOWN:
        more = len(names) - SET_ASIDE_SHOWN
        found.append(Finding(WARN, f"{more} more agent hook event{'s' * (more != 1)} set aside "
                             f"in {failed}, each with its .why", fix, "queue", path=str(failed)))
    return found


def queue(root: Path, now_ms: int, project: Path | None = None) -> list[Finding]:
    """The agent hook queues of the state at `root`: its git dir's and, for a state beside
    the project (``init --branch``), the git dir's of `project`, where the project's agent
    hooks queue: entries waiting longer than a drain takes, or set aside."""
    gdirs: list[Path] = []
    for where in (root, project):
        try:
            gdir = git_dir(where) / "gasp" if where is not None else None
        except Exception:  # noqa: BLE001 - no git dir: no queue (the hooks say why)
            gdir = None
        if gdir is not None and gdir not in gdirs:
            gdirs.append(gdir)
    return [f for gdir in gdirs for f in _queue(gdir, now_ms)]


def _queue(gdir: Path, now_ms: int) -> list[Finding]:
    qdir = Path(queue_dir(str(gdir)))
    if not qdir.is_dir():
        return []
    found: list[Finding] = []
    log_path = gdir / LOG_NAME
    waiting = queued(str(gdir))
    if waiting:
        queued_ns = entry_time_ns(waiting[0])
        oldest_ms = queued_ns // 1_000_000 if queued_ns is not None else now_ms
        age = now_ms - oldest_ms
        if age >= QUEUE_STUCK_MS:
            agent = _agent_of(Path(waiting[0])) or "claude-code"
            found.append(Finding(
                ERROR, f"{len(waiting)} agent hook event{'s' * (len(waiting) != 1)} stuck in "
                f"{qdir}, the oldest since {when(oldest_ms)} ({span(age)} ago): not recorded",
                f"`git gasp adapt {agent} reconcile` drains it; why it stuck is in {log_path}",
                "queue", path=str(qdir)))
        else:
            found.append(Finding(OK, f"{len(waiting)} agent hook event(s) queued, being "
                                 "recorded", topic="queue", path=str(qdir)))
    aside = [Path(entry).name for entry in set_aside_entries(str(gdir))]
    found += _set_aside(Path(failed_dir(str(gdir))), aside, log_path)
    return found



def failed_commits(root: Path) -> list[Finding]:
    """Session runs whose boundary commit failed (the live hook's note) and that no
    commit on the branch has committed since (no ``Run-Id:`` trailer naming them)."""
    try:
        path = git_dir(root) / "gasp" / FAILED_COMMITS
        failures = json.loads(read_file(path, limit=SMALL_FILE)) if path.exists() else []
    except Exception:  # noqa: BLE001 - no git dir, an unreadable note: nothing to say
        return []
    found = []
    for f in failures if isinstance(failures, list) else ():
        if not isinstance(f, dict) or not isinstance(f.get("run_id"), str):
            continue
        run_id, outcome = f["run_id"], str(f.get("outcome") or "?")
        done = run(root, "log", "-1", "--format=%H", "--fixed-strings",
                   f"--grep=Run-Id: {run_id}", "HEAD", check=False)
        if done.returncode == 0 and done.stdout.strip():
            continue  # committed since (commit-run, the next session's commit)
        reason = str(f.get("reason") or "no reason recorded")
        first = "set your git identity first (git config user.name / user.email), then " \
            if "identity" in reason or "email" in reason else ""
        try:
            at = f" at {when(f['ts_ms'])}" if isinstance(f.get("ts_ms"), int) else ""
        except (OverflowError, ValueError, OSError):
            at = ""
        found.append(Finding(
            ERROR, f"the boundary commit of {run_id} (finished {outcome}{at}) failed: "
            f"{reason}; its events are in the log but not committed",
            f"{first}`git gasp commit-run --run {run_id} --outcome {outcome}`", "log",
            path=str(path)))
    return found
